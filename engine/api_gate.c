/* The door in front of the API's HTTP server (api_gate.h).
 *
 * libmicrohttpd gives every accepted connection one of its slots until the connection times
 * out, so a few hundred silent connections used to fill them and shut everyone out; and it
 * answers a malformed head with its own HTML page. Here a connection waits for its head with
 * MSG_PEEK (edge-triggered: each new segment wakes us once), so what the server later reads is
 * untouched. Waiting connections have a deadline and a cap, per listener and per peer, and the
 * oldest is evicted to admit a new one: a client that sends its request at once always gets
 * in. Over TCP a head without credentials gets its 401 and the connection closes (api.c), so
 * only authenticated clients (and the unix socket's) ever hold the server's slots for long. */
#include "engine/api_gate.h"

#include "common/hash.h"
#include "engine/base/loop.h"
#include "engine/base/util.h"

#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define GATE_ACCEPT_BATCH 64
#define GATE_SWEEP_MS 250
#define GATE_DRAIN_MAX (256 * 1024)

struct gate_conn {
    struct api_gate *g;
    int fd;
    uint64_t peer;
    double since;
    struct sockaddr_storage addr;
    socklen_t alen;
    struct gate_conn *prev, *next;
};

struct api_gate {
    struct loop *loop;
    int lfd;
    bool listening; /* the listener is watched (not while out of descriptors) */
    struct MHD_Daemon *mhd;
    bool tls; /* the server speaks TLS: heads are encrypted */
    void (*handed)(void *ud);
    void *ud;
    struct api_gate_limits lim;
    struct gate_conn *first, *last; /* waiting for a head, oldest first */
    int npending;
    /* The peer of each descriptor handed to the server, 0 when none: counted by a scan, so a
     * close the server never reports heals when the number is reused. */
    uint64_t *handed_peer;
    int handed_cap;
    struct loop_timer *timer;
    char head[API_GATE_HEAD_MAX + 1];
};

static long gate_env_ms(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end = NULL;
    double s = v ? strtod(v, &end) : 0;
    if (!v || !*v || *end || s <= 0 || s > 86400)
        return dflt;
    return (long)(s * 1000);
}

void api_gate_limits_get(struct api_gate_limits *l)
{
    *l = (struct api_gate_limits){
        .head_ms = gate_env_ms("PADDOCK_HEADER_TIMEOUT", 10000),
        .body_idle_ms = gate_env_ms("PADDOCK_BODY_TIMEOUT", 30000),
        .pending_max = 512,
        .peer_pending = 128,
        .peer_active = 256,
        .active_max = 1024,
    };
}

void api_gate_write_error(int fd, enum err_code e, const char *msg)
{
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", err_name(e), "message", msg);
    char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    unsigned st = err_status(e);
    const char *reason = MHD_get_reason_phrase_for(st);
    char *txt = body ? util_strdupf("HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
                                    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                                    st, reason && *reason ? reason : "Error", strlen(body), body)
                     : NULL;
    /* A reply this small fits an empty socket buffer; one that does not is not waited for. */
    if (txt)
        (void)!send(fd, txt, strlen(txt), MSG_NOSIGNAL | MSG_DONTWAIT);
    free(txt);
    free(body);
}

/* ---- waiting connections ---- */

static void gate_unlink(struct gate_conn *c)
{
    struct api_gate *g = c->g;
    if (c->prev)
        c->prev->next = c->next;
    else
        g->first = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        g->last = c->prev;
    c->prev = c->next = NULL;
    g->npending--;
    loop_del_fd(g->loop, c->fd);
}

/* Close after an optional error reply. What the client sent is read away first, so the
 * close is a FIN and not a reset that could destroy the reply before the client reads it. */
static void gate_drop(struct gate_conn *c, enum err_code e, const char *msg)
{
    gate_unlink(c);
    if (e != ERR_NONE) {
        api_gate_write_error(c->fd, e, msg);
        shutdown(c->fd, SHUT_WR);
        char sink[4096];
        for (size_t total = 0; total < GATE_DRAIN_MAX;) {
            ssize_t n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
            if (n <= 0)
                break;
            total += (size_t)n;
        }
    }
    close(c->fd);
    free(c);
}

static bool gate_tchar(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* One line of the head [p, end) without its CR LF. */
struct gate_line {
    const char *p;
    size_t n;
};

static bool gate_next_line(const char **cur, const char *end, struct gate_line *l)
{
    const char *nl = memchr(*cur, '\n', (size_t)(end - *cur));
    if (!nl)
        return false;
    l->p = *cur;
    l->n = (size_t)(nl - *cur);
    if (l->n && l->p[l->n - 1] == '\r')
        l->n--;
    *cur = nl + 1;
    return true;
}

static bool gate_name_is(const struct gate_line *l, size_t colon, const char *name)
{
    return colon == strlen(name) && strncasecmp(l->p, name, colon) == 0;
}

enum err_code api_gate_check_head(const char *p, size_t n, char *msg, size_t size)
{
    const char *cur = p, *end = p + n;
    struct gate_line l;
    /* Empty lines before the request line are allowed (RFC 9112 2.2). */
    do
        if (!gate_next_line(&cur, end, &l))
            return ERR_NONE; /* cannot happen: the caller found the end */
    while (l.n == 0);
    size_t i = 0;
    while (i < l.n && i <= 32 && gate_tchar((unsigned char)l.p[i]))
        i++;
    if (i == 0 || i > 32 || i >= l.n || l.p[i] != ' ') {
        snprintf(msg, size, "the request line is malformed: it must be METHOD /path HTTP/1.1");
        return ERR_BAD_REQUEST;
    }
    size_t t0 = ++i;
    while (i < l.n && l.p[i] != ' ') {
        unsigned char ch = (unsigned char)l.p[i];
        if (ch <= 0x20 || ch == 0x7f) {
            snprintf(msg, size, "the request target holds a control character");
            return ERR_BAD_REQUEST;
        }
        i++;
    }
    if (i == t0 || l.p[t0] != '/' || i >= l.n) {
        snprintf(msg, size, "the request line is malformed: it must be METHOD /path HTTP/1.1");
        return ERR_BAD_REQUEST;
    }
    for (size_t k = t0; k + 2 < i; k++)
        if (l.p[k] == '%' && l.p[k + 1] == '0' && l.p[k + 2] == '0') {
            snprintf(msg, size, "the request target holds an encoded NUL byte (%%00)");
            return ERR_BAD_REQUEST;
        }
    const char *ver = l.p + i + 1;
    size_t vn = l.n - i - 1;
    bool http11 = vn == 8 && memcmp(ver, "HTTP/1.1", 8) == 0;
    if (!http11 && !(vn == 8 && memcmp(ver, "HTTP/1.0", 8) == 0)) {
        if (vn >= 5 && memcmp(ver, "HTTP/", 5) == 0) {
            snprintf(msg, size, "HTTP version \"%.*s\" is not supported: use HTTP/1.1",
                     (int)(vn > 16 ? 16 : vn), ver);
            return ERR_HTTP_VERSION;
        }
        snprintf(msg, size, "the request line is malformed: it must be METHOD /path HTTP/1.1");
        return ERR_BAD_REQUEST;
    }
    bool host = false, chunked = false;
    const char *cl = NULL;
    size_t cl_n = 0;
    while (gate_next_line(&cur, end, &l) && l.n) {
        const char *colon = memchr(l.p, ':', l.n);
        size_t cn = colon ? (size_t)(colon - l.p) : 0;
        bool name_ok = cn > 0;
        for (size_t k = 0; k < cn && name_ok; k++)
            name_ok = gate_tchar((unsigned char)l.p[k]);
        if (!name_ok) {
            snprintf(msg, size,
                     "a header line is malformed: each must be \"Name: value\" on one "
                     "line");
            return ERR_BAD_REQUEST;
        }
        const char *v = colon + 1, *ve = l.p + l.n;
        for (const char *q = v; q < ve; q++)
            if (((unsigned char)*q < 0x20 && *q != '\t') || *q == 0x7f) {
                snprintf(msg, size, "header %.*s holds a control character", (int)cn, l.p);
                return ERR_BAD_REQUEST;
            }
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        size_t vlen = (size_t)(ve - v);
        if (gate_name_is(&l, cn, "Host")) {
            host = true;
        } else if (gate_name_is(&l, cn, "Content-Length")) {
            bool digits = vlen > 0 && vlen <= 18;
            for (size_t k = 0; k < vlen && digits; k++)
                digits = v[k] >= '0' && v[k] <= '9';
            if (!digits || (cl && (cl_n != vlen || memcmp(cl, v, vlen) != 0))) {
                snprintf(msg, size, "Content-Length must be one decimal number of bytes");
                return ERR_BAD_REQUEST;
            }
            cl = v;
            cl_n = vlen;
        } else if (gate_name_is(&l, cn, "Transfer-Encoding")) {
            if (vlen != 7 || strncasecmp(v, "chunked", 7) != 0 || chunked) {
                snprintf(msg, size, "Transfer-Encoding may only be \"chunked\"");
                return ERR_BAD_REQUEST;
            }
            chunked = true;
        }
    }
    if (chunked && cl) {
        snprintf(msg, size, "a request has Content-Length or Transfer-Encoding, not both");
        return ERR_BAD_REQUEST;
    }
    if (http11 && !host) {
        snprintf(msg, size, "an HTTP/1.1 request needs a Host header");
        return ERR_BAD_REQUEST;
    }
    return ERR_NONE;
}

static int gate_handed_count(struct api_gate *g, uint64_t peer, int *all)
{
    int mine = 0;
    *all = 0;
    for (int fd = 0; fd < g->handed_cap; fd++)
        if (g->handed_peer[fd]) {
            (*all)++;
            mine += g->handed_peer[fd] == peer;
        }
    return mine;
}

static int gate_handed_set(struct api_gate *g, int fd, uint64_t peer)
{
    if (fd >= g->handed_cap) {
        int n = fd + 256;
        uint64_t *p = realloc(g->handed_peer, (size_t)n * sizeof(*p));
        if (!p)
            return -1;
        memset(p + g->handed_cap, 0, (size_t)(n - g->handed_cap) * sizeof(*p));
        g->handed_peer = p;
        g->handed_cap = n;
    }
    g->handed_peer[fd] = peer;
    return 0;
}

/* Looks at what the connection sent so far: true while it still waits for its head (c stays);
 * false once it was handed to the server or dropped (c is gone). */
static bool gate_look(struct gate_conn *c, uint32_t events)
{
    struct api_gate *g = c->g;
    ssize_t n = recv(c->fd, g->head, sizeof(g->head), MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        gate_drop(c, ERR_NONE, NULL);
        return false;
    }
    if (n < 0)
        return true;
    /* A TLS record of type handshake (22) opens every TLS connection. */
    bool handshake = g->tls && (unsigned char)g->head[0] == 0x16;
    size_t len = handshake ? 0 : (size_t)n, end = handshake ? 1 : 0;
    for (size_t i = 0; i + 1 < len && !end; i++)
        if (g->head[i] == '\n' && i > 0) {
            if (g->head[i + 1] == '\n')
                end = i + 2;
            else if (i + 2 < len && g->head[i + 1] == '\r' && g->head[i + 2] == '\n')
                end = i + 3;
        }
    if (!end) {
        if (len > API_GATE_HEAD_MAX) {
            char *m =
                util_strdupf("the request line and headers exceed %d bytes", API_GATE_HEAD_MAX);
            gate_drop(c, ERR_HEADERS_TOO_LARGE, m ? m : "headers too large");
            free(m);
            return false;
        } else if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
            gate_drop(c, ERR_NONE, NULL); /* it closed before its head ended */
            return false;
        }
        return true;
    }
    char msg[200];
    enum err_code e = handshake ? ERR_NONE : api_gate_check_head(g->head, end, msg, sizeof(msg));
    if (e == ERR_NONE && g->tls && !handshake) {
        e = ERR_BAD_REQUEST;
        snprintf(msg, sizeof(msg),
                 "this port speaks TLS: use https:// (with the engine's CA), not http://");
    }
    int all = 0;
    if (e == ERR_NONE && gate_handed_count(g, c->peer, &all) >= g->lim.peer_active) {
        e = ERR_BUSY;
        snprintf(msg, sizeof(msg),
                 "this peer has %d connections open to the engine; close some and retry",
                 g->lim.peer_active);
    } else if (e == ERR_NONE && all >= g->lim.active_max) {
        e = ERR_BUSY;
        snprintf(msg, sizeof(msg), "the engine serves %d connections; retry shortly", all);
    }
    if (e != ERR_NONE) {
        gate_drop(c, e, msg);
        return false;
    }
    gate_unlink(c);
    int cfd = c->fd;
    uint64_t peer = c->peer;
    /* MHD closes the socket itself when it cannot take it. */
    if (MHD_add_connection(g->mhd, cfd, (struct sockaddr *)&c->addr, c->alen) == MHD_YES) {
        /* Out of memory leaves it uncounted: the caps bound, they are no ledger. */
        (void)gate_handed_set(g, cfd, peer);
        g->handed(g->ud);
    }
    free(c);
    return false;
}

static void gate_on_read(int fd, uint32_t events, void *ud)
{
    (void)fd;
    gate_look(ud, events);
}

/* A number per peer: the address over TCP, the process (else the user) on the unix socket. */
static uint64_t gate_peer_key(int fd, const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (1ull << 60) | ((const struct sockaddr_in *)ss)->sin_addr.s_addr;
    if (ss->ss_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
        return (2ull << 60) | (hash_fnv1a(a, 16) >> 4);
    }
    struct ucred cr;
    socklen_t len = sizeof(cr);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
        return cr.pid > 0 ? (3ull << 60) | (uint32_t)cr.pid : (4ull << 60) | cr.uid;
    return 5ull << 60;
}

static void gate_on_accept(int fd, uint32_t events, void *ud);

static void gate_listen(struct api_gate *g, bool on)
{
    if (on == g->listening)
        return;
    if (on)
        g->listening = loop_add_fd(g->loop, g->lfd, EPOLLIN, gate_on_accept, g) == 0;
    else {
        loop_del_fd(g->loop, g->lfd);
        g->listening = false;
    }
}

static void gate_on_accept(int fd, uint32_t events, void *ud)
{
    struct api_gate *g = ud;
    (void)fd;
    (void)events;
    for (int k = 0; k < GATE_ACCEPT_BATCH; k++) {
        struct sockaddr_storage ss;
        socklen_t alen = sizeof(ss);
        int cfd = accept4(g->lfd, (struct sockaddr *)&ss, &alen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* Out of descriptors: the oldest waiting connection makes room, else stop
                 * accepting until the sweep finds some free again (no busy loop). */
                if (g->first) {
                    gate_drop(g->first, ERR_BUSY, "too many connections wait to be read");
                    continue;
                }
                gate_listen(g, false);
            }
            return;
        }
        if (cfd < g->handed_cap)
            g->handed_peer[cfd] = 0; /* a number reused: whatever held it is closed */
        struct gate_conn *c = calloc(1, sizeof(*c));
        if (!c) {
            close(cfd);
            continue;
        }
        c->g = g;
        c->fd = cfd;
        c->addr = ss;
        c->alen = alen;
        c->since = loop_now_ms();
        c->peer = gate_peer_key(cfd, &ss);
        /* Room: the peer's oldest waiting connection first, else the listener's oldest. */
        int mine = 0;
        struct gate_conn *oldest_mine = NULL;
        for (struct gate_conn *o = g->first; o; o = o->next)
            if (o->peer == c->peer && mine++ == 0)
                oldest_mine = o;
        if (oldest_mine && mine >= g->lim.peer_pending)
            gate_drop(oldest_mine, ERR_BUSY,
                      "this peer has too many connections that sent no request");
        else if (g->first && g->npending >= g->lim.pending_max)
            gate_drop(g->first, ERR_BUSY, "too many connections wait to send a request");
        c->prev = g->last;
        if (g->last)
            g->last->next = c;
        else
            g->first = c;
        g->last = c;
        g->npending++;
        /* A client sends its request right after connecting: the head is usually here by now,
         * and is checked at once, without a watch added and removed for it. Otherwise it is
         * watched (edge-triggered, and what arrived meanwhile is reported when it is added). */
        if (gate_look(c, 0) &&
            loop_add_fd(g->loop, cfd, EPOLLIN | EPOLLRDHUP | EPOLLET, gate_on_read, c) < 0)
            gate_drop(c, ERR_NONE, NULL);
    }
}

static void gate_on_sweep(void *ud)
{
    struct api_gate *g = ud;
    double now = loop_now_ms();
    while (g->first && now - g->first->since >= (double)g->lim.head_ms) {
        char *m = util_strdupf("no complete request head within %g s (PADDOCK_HEADER_TIMEOUT)",
                               (double)g->lim.head_ms / 1000);
        gate_drop(g->first, ERR_REQUEST_TIMEOUT, m ? m : "request head timeout");
        free(m);
    }
    gate_listen(g, true);
    g->timer = loop_timer_add(g->loop, GATE_SWEEP_MS, gate_on_sweep, g);
}

struct api_gate *api_gate_new(struct loop *loop, int listen_fd, struct MHD_Daemon *mhd, bool tls,
                              void (*handed)(void *ud), void *ud, char **err)
{
    struct api_gate *g = calloc(1, sizeof(*g));
    if (!g) {
        *err = strdup("out of memory");
        return NULL;
    }
    g->loop = loop;
    g->lfd = listen_fd;
    g->mhd = mhd;
    g->tls = tls;
    g->handed = handed;
    g->ud = ud;
    api_gate_limits_get(&g->lim);
    gate_listen(g, true);
    if (!g->listening) {
        *err = strdup("cannot watch the API's listening socket");
        free(g);
        return NULL;
    }
    g->timer = loop_timer_add(loop, GATE_SWEEP_MS, gate_on_sweep, g);
    return g;
}

void api_gate_closed(struct api_gate *g, int fd)
{
    if (g && fd >= 0 && fd < g->handed_cap)
        g->handed_peer[fd] = 0;
}

void api_gate_free(struct api_gate *g)
{
    if (!g)
        return;
    if (g->timer)
        loop_timer_cancel(g->loop, g->timer);
    gate_listen(g, false);
    while (g->first)
        gate_drop(g->first, ERR_NONE, NULL);
    close(g->lfd);
    free(g->handed_peer);
    free(g);
}
