/* Mediated egress (egress.h, docs/egress.md). A connection goes through these phases, each a
 * callback on the engine's loop:
 *   handoff  the executor's unix connection: its peer checked, the client's descriptor received
 *   head     the proxy request's head read (10 s, 16 KiB)
 *   ask      waiting for the operator (an "egress" action), only for a destination nobody knows
 *   resolve  getent in a child (no thread, no blocking call on the loop), literal addresses as is
 *   connect  non-blocking connect to the checked address (10 s)
 *   relay    bytes both ways, untouched, with back-pressure and the idle timeout; a tunnel's
 *            first bytes from the client are held until its TLS server name is checked
 * The record's row is written when the decision is made, before anything is sent for it, and
 * its end (bytes, address, why) when the connection closes. */
#include "engine/egress.h"

#include "common/buf.h"
#include "common/sanitize.h"
#include "engine/action.h"
#include "engine/api.h"
#include "engine/base/child.h"
#include "engine/base/loop.h"
#include "engine/base/netif.h"
#include "engine/base/proc.h"
#include "engine/base/session_state.h"
#include "engine/base/tls_hello.h"
#include "engine/base/unix_peer.h"
#include "engine/base/util.h"
#include "engine/docker/http.h"
#include "engine/engine.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/risk/egress_policy.h"
#include "engine/session_config.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define EGRESS_HEAD_MAX (16 * 1024)
#define EGRESS_HEAD_TIMEOUT_MS 10000
#define EGRESS_CONNECT_TIMEOUT_MS 10000
#define EGRESS_RESOLVE_TIMEOUT_MS 10000
#define EGRESS_BUF_SIZE (1024 * 1024) /* a buffer per direction: pages touched as bytes come */
#define EGRESS_MAX_ADDRS 8
/* A relayed connection holds two descriptors (both sockets; the executor's hand-off connection
 * is closed once it handed over the client's, before the destination's opens); the engine keeps
 * this many of its RLIMIT_NOFILE for everything else (the API's listeners and their connections,
 * Docker, the store), so that sessions' egress together cannot take the operator's socket. */
#define EGRESS_FDS_PER_CONN 2
#define EGRESS_FDS_RESERVED 8192 /* half the limit when it is below twice this */
#define EGRESS_LIST_DEFAULT 200

enum egress_phase { EP_HANDOFF, EP_HEAD, EP_ASK, EP_RESOLVE, EP_CONNECT, EP_RELAY };

/* One direction of the relay. The bytes move socket → buffer → socket with recv and send: a
 * copy in and out costs the engine less than splice's moved pages cost the client, whose
 * socket then holds many small fragments instead of full ones (bench/egress_bench.sh, where
 * the reader is the sandbox's client). The first bytes the engine wrote itself (a plain
 * request's rewritten head, a tunnel's 200) are in data. A tunnel's first bytes from the client
 * wait in buf (inbuf of them) while its ClientHello is read: released, they go first, as read. */
struct egress_pipe {
    char *data; /* the first bytes, malloc'd; NULL: none */
    size_t len, off;
    char *buf;    /* EGRESS_BUF_SIZE bytes, malloc'd when the relay starts */
    size_t bpos;  /* where the bytes not yet written start in buf */
    size_t inbuf; /* bytes read from the source, not yet written to the sink */
    size_t hold;  /* of them, the last ones not to be sent yet: a ClientHello being read */
    bool eof;     /* its source read to the end */
    bool shut;    /* its sink was told (shutdown SHUT_WR) */
};

struct egress_site;

struct egress_conn {
    struct egress_conn *next;
    struct egress_site *site;
    enum egress_phase phase;
    int hfd;           /* the executor's hand-off connection (handoff only) */
    int cfd, sfd;      /* the sandbox's client, the destination */
    uint32_t cev, sev; /* what the loop watches on each, to change it only when it changes */
    struct buf head;   /* what the client sent before the decision */
    size_t head_len;   /* the head's bytes, through its blank line */
    char method[16];
    char host[EGRESS_HOST_MAX + 1];
    int port;
    bool tunnel; /* CONNECT */
    /* A tunnel's first client bytes are held in up.buf until they are known to be no TLS, or a
     * ClientHello whose server name fits the CONNECT host (egress_hello_check). */
    bool hello;
    bool hello_line;   /* ... no TLS: its first line is awaited (egress_tunnel_check) */
    size_t hello_need; /* up.inbuf before the ClientHello is read again */
    struct loop_timer *hello_timer; /* the hello's deadline, from its first byte */
    /* After a tunnel's first ClientHello passed, the client's plaintext handshake is read as it
     * is relayed, so that a second hello (after a HelloRetryRequest) is checked too; NULL once
     * the handshake's encrypted part began, or when the tunnel carries no TLS. */
    struct tls_scan *scan;
    const char *scan_rule; /* the scan's refusal: the row's rule and why */
    char scan_why[700];
    char *upstream; /* a plain request's head as the destination gets it (origin-form) */
    /* A plain request's body bytes not yet taken from the client (its Content-Length). The
     * relay takes no byte past them: a second request on the connection (pipelined, or
     * smuggled after the body) would reach the destination unchecked. */
    int64_t body_left;
    bool cut;              /* the client sent bytes past its first request: not forwarded */
    int64_t rec;           /* the record's row */
    int64_t action;        /* the question waiting in the queue, 0: none */
    bool approved_literal; /* the operator approved exactly this address */
    char command[512];     /* the sandbox's process that asked (sanitized), "" unknown */
    struct sockaddr_storage addrs[EGRESS_MAX_ADDRS];
    socklen_t alens[EGRESS_MAX_ADDRS];
    int naddrs, iaddr;
    char address[INET6_ADDRSTRLEN + 8]; /* the one connected to */
    struct egress_pipe up, down;        /* client → destination, destination → client */
    bool hup_c, hup_s;
    int64_t bytes_up, bytes_down;
    double last; /* the last byte moved (loop_now_ms) */
    struct loop_timer *timer;
    bool resolving; /* a child is resolving: freed when it answers */
    bool ended;
};

/* One egress session: its listener and its connections. */
struct egress_site {
    struct egress_site *next;
    struct engine *eng;
    char session_id[40];
    int lfd;
    json_t *allow, *deny;
    bool ask;
    int max_connections;
    double idle_timeout;
    /* egress.max_bytes (0: none) and the bytes its connections took in so far from either
     * side (a restarted engine starts from the rows' counts). */
    int64_t max_bytes, bytes;
    struct egress_conn *conns;
    int n_conns;
};

struct egress {
    struct egress_site *sites;
    int n_conns; /* of every session: they share the engine's descriptors */
};

static struct egress_site *egress_site_find(struct engine *eng, const char *id)
{
    struct egress *eg = eng->egress;
    for (struct egress_site *x = eg ? eg->sites : NULL; x; x = x->next)
        if (strcmp(x->session_id, id) == 0)
            return x;
    return NULL;
}

static void egress_publish(struct egress_conn *c, const char *what)
{
    struct engine *eng = c->site->eng;
    json_t *e = json_pack("{s:s,s:s,s:I,s:s,s:i,s:s,s:I,s:I,s:b}", "event", what, "session",
                          c->site->session_id, "id", (json_int_t)c->rec, "host", c->host, "port",
                          c->port, "method", c->method, "bytes_up", (json_int_t)c->bytes_up,
                          "bytes_down", (json_int_t)c->bytes_down, "open", !c->ended);
    if (e)
        events_publish(eng->events, "egress", e);
    json_decref(e);
}

/* ---- the end ---- */

static void egress_conn_free(struct egress_conn *c)
{
    buf_free(&c->head);
    free(c->upstream);
    free(c->scan);
    struct egress_pipe *ps[] = {&c->up, &c->down};
    for (size_t i = 0; i < 2; i++) {
        free(ps[i]->data);
        free(ps[i]->buf);
    }
    free(c);
}

static void egress_fd_close(struct engine *eng, int *fd, uint32_t *ev)
{
    if (*fd < 0)
        return;
    if (*ev != UINT32_MAX)
        loop_del_fd(eng->loop, *fd);
    close(*fd);
    *fd = -1;
    *ev = UINT32_MAX;
}

/* Ends the connection: its descriptors closed, its question withdrawn, its row closed with why
 * (NULL: no row to close). The struct goes now, or when its resolving child answers. */
static void egress_conn_end(struct egress_conn *c, const char *why)
{
    if (c->ended)
        return;
    c->ended = true;
    struct egress_site *site = c->site;
    struct engine *eng = site->eng;
    if (c->timer) {
        loop_timer_cancel(eng->loop, c->timer);
        c->timer = NULL;
    }
    if (c->hello_timer) {
        loop_timer_cancel(eng->loop, c->hello_timer);
        c->hello_timer = NULL;
    }
    if (c->action > 0) {
        int64_t id = c->action;
        c->action = 0;
        action_ask_cancel(eng, id, why ? why : "the connection closed");
    }
    if (c->hfd >= 0) {
        loop_del_fd(eng->loop, c->hfd);
        close(c->hfd);
        c->hfd = -1;
    }
    egress_fd_close(eng, &c->cfd, &c->cev);
    egress_fd_close(eng, &c->sfd, &c->sev);
    if (c->rec > 0) {
        char cut[1400];
        if (c->cut && why) {
            snprintf(cut, sizeof(cut),
                     "%s; cut: the client sent bytes after its first request, not forwarded "
                     "(one request per connection)",
                     why);
            why = cut;
        }
        store_egress_end(eng->store, c->rec, c->address[0] ? c->address : NULL, c->bytes_up,
                         c->bytes_down, util_now(), why, NULL);
        egress_publish(c, "end");
    }
    for (struct egress_conn **pp = &site->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    site->n_conns--;
    eng->egress->n_conns--;
    if (!c->resolving)
        egress_conn_free(c);
}

/* A short reply to the client (403, 502, 504 ...), then the end. */
static void egress_conn_reply(struct egress_conn *c, int status, const char *reason,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void egress_conn_reply(struct egress_conn *c, int status, const char *reason,
                              const char *fmt, ...)
{
    char body[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(body, sizeof(body) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof(body) - 2)
        n = (int)sizeof(body) - 2;
    body[n++] = '\n';
    body[n] = '\0';
    char head[256];
    int hn = snprintf(head, sizeof(head),
                      "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      "Content-Length: %d\r\nConnection: close\r\nX-Paddock-Egress: %d\r\n\r\n",
                      status, reason, n, status);
    if (c->cfd >= 0) {
        /* Best effort: a fresh reply fits the socket's send buffer at once. */
        struct iovec iov[2] = {{.iov_base = head, .iov_len = (size_t)hn},
                               {.iov_base = body, .iov_len = (size_t)n}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
        (void)sendmsg(c->cfd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        shutdown(c->cfd, SHUT_WR);
    }
    body[n - 1] = '\0';
    char why[1100];
    snprintf(why, sizeof(why), "%d: %s", status, body);
    egress_conn_end(c, why);
}

/* A row for a decision made at once (denied, refused): written and closed. */
static void egress_record_now(struct egress_conn *c, const char *decision, const char *rule,
                              const char *by)
{
    struct engine *eng = c->site->eng;
    struct store_egress_new row = {.session_id = c->site->session_id,
                                   .host = c->host,
                                   .method = c->method,
                                   .port = c->port,
                                   .decision = decision,
                                   .rule = rule,
                                   .decided_by = by,
                                   .now = util_now()};
    c->rec = store_egress_add(eng->store, &row, NULL);
    if (c->rec > 0)
        egress_publish(c, "start");
}

/* ---- watching descriptors ---- */

static void egress_on_client(int fd, uint32_t events, void *ud);
static void egress_on_server(int fd, uint32_t events, void *ud);

static void egress_watch(struct egress_conn *c, int fd, uint32_t *cur, uint32_t want, loop_fd_fn fn)
{
    struct engine *eng = c->site->eng;
    if (*cur == want)
        return;
    if (*cur == UINT32_MAX)
        loop_add_fd(eng->loop, fd, want, fn, c);
    else
        loop_mod_fd(eng->loop, fd, want);
    *cur = want;
}

/* ---- relay ---- */

static void egress_idle_arm(struct egress_conn *c);

static void egress_on_idle(void *ud)
{
    struct egress_conn *c = ud;
    c->timer = NULL;
    double idle_ms = c->site->idle_timeout * 1e3;
    double left = c->last + idle_ms - loop_now_ms();
    if (left > 0) {
        c->timer = loop_timer_add(c->site->eng->loop, (long)left + 1, egress_on_idle, c);
        return;
    }
    char why[128];
    snprintf(why, sizeof(why), "idle for %.0f s (egress.idle_timeout)", c->site->idle_timeout);
    egress_conn_end(c, why);
}

static void egress_idle_arm(struct egress_conn *c)
{
    if (c->timer)
        loop_timer_cancel(c->site->eng->loop, c->timer);
    c->last = loop_now_ms();
    c->timer =
        loop_timer_add(c->site->eng->loop, (long)(c->site->idle_timeout * 1e3), egress_on_idle, c);
}

static int egress_scan_feed(struct egress_conn *c, const char *bytes, size_t n);

/* Moves what it can one way: write what waits, read more when nothing does. -1 on an error of
 * either side (the connection ends). A bounded number of rounds, so one fast stream cannot hold
 * the loop: what is left is still readable, and the loop comes back. With scan (the client's
 * side while its handshake is read) the bytes read are scanned first: -2 when they are refused
 * (scan->scan_rule and scan_why say why), and those held are not sent. */
static int egress_pipe_pump(struct egress_pipe *p, int from, int to, int64_t *count, bool *moved,
                            int64_t *left, struct egress_conn *scan)
{
    for (int round = 0; round < 16; round++) {
        ssize_t n;
        if (p->off < p->len) {
            n = send(to, p->data + p->off, p->len - p->off, MSG_NOSIGNAL);
            if (n > 0) {
                p->off += (size_t)n;
                *count += n;
                *moved = true;
                continue;
            }
            return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        }
        if (p->inbuf > p->hold) {
            n = send(to, p->buf + p->bpos, p->inbuf - p->hold, MSG_NOSIGNAL);
            if (n > 0) {
                p->bpos += (size_t)n;
                p->inbuf -= (size_t)n;
                *count += n;
                *moved = true;
                continue;
            }
            return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        }
        if (p->eof) {
            if (!p->shut && !p->hold) {
                shutdown(to, SHUT_WR);
                p->shut = true;
            }
            return 0;
        }
        /* what may still come in under egress.max_bytes: nothing past it enters the engine */
        if (*left <= 0)
            return 0;
        /* Held bytes (a ClientHello's start, at most TLS_HELLO_RECORDS_MAX) go to the front. */
        if (p->hold)
            memmove(p->buf, p->buf + p->bpos, p->hold);
        p->bpos = 0;
        size_t room = EGRESS_BUF_SIZE - p->hold;
        n = recv(from, p->buf + p->hold, *left < (int64_t)room ? (size_t)*left : room, 0);
        if (n > 0) {
            *left -= n;
            p->inbuf = p->hold + (size_t)n;
            *moved = true;
            if (scan && scan->scan && egress_scan_feed(scan, p->buf + p->hold, (size_t)n) < 0)
                return -2;
            continue;
        }
        if (n == 0) {
            p->eof = true;
            continue;
        }
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    }
    return 0;
}

/* egress.max_bytes reached: every connection of the session ends, the relayed ones closed
 * (their bytes cannot be interrupted by a reply), the others told with a 403. */
static void egress_site_spent(struct egress_site *site)
{
    char why[160];
    snprintf(why, sizeof(why),
             "closed: the session's egress byte limit of %lld bytes is reached (egress.max_bytes)",
             (long long)site->max_bytes);
    while (site->conns) {
        struct egress_conn *c = site->conns;
        if (c->phase == EP_RELAY)
            egress_conn_end(c, why);
        else
            egress_conn_reply(c, 403, "Forbidden",
                              "paddock egress: the session's byte limit of %lld bytes is reached "
                              "(egress.max_bytes)",
                              (long long)site->max_bytes);
    }
}

static void egress_hello_refuse(struct egress_conn *c, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void egress_relay(struct egress_conn *c)
{
    struct egress_site *site = c->site;
    bool moved = false;
    int64_t sent_down = 0;
    int64_t left = site->max_bytes ? site->max_bytes - site->bytes : INT64_MAX, was = left;
    /* A plain request's client gives no byte past its body (a tunnel's copying is untouched). */
    int64_t room = c->tunnel || c->body_left > left ? left : c->body_left, room_was = room;
    /* While the ClientHello is read, the client's bytes wait (the destination's still flow:
     * a protocol where the server speaks first is no TLS, and must not stall). */
    int rc =
        c->hello ? 0 : egress_pipe_pump(&c->up, c->cfd, c->sfd, &c->bytes_up, &moved, &room, c);
    left -= room_was - room;
    if (!c->tunnel)
        c->body_left -= room_was - room;
    if (rc == 0)
        rc = egress_pipe_pump(&c->down, c->sfd, c->cfd, &sent_down, &moved, &left, NULL);
    c->bytes_down += sent_down;
    site->bytes += was - left;
    if (rc == -2) {
        egress_hello_refuse(c, c->scan_rule, "%s", c->scan_why);
        return;
    }
    if (c->up.eof && c->up.hold) {
        egress_conn_end(c, "closed: the client ended the tunnel inside a TLS ClientHello, which "
                           "was not sent on");
        return;
    }
    if (rc < 0) {
        egress_conn_end(c, "closed: a side reset the connection");
        return;
    }
    if (site->max_bytes && site->bytes >= site->max_bytes) {
        egress_site_spent(site);
        return;
    }
    if (moved)
        c->last = loop_now_ms();
    bool up_pending = !c->hello && (c->up.off < c->up.len || c->up.inbuf > c->up.hold),
         down_pending = c->down.off < c->down.len || c->down.inbuf;
    /* A plain request sent whole: the client has nothing more to say to this destination. */
    bool up_done = !c->tunnel && c->body_left == 0 && !up_pending;
    if (up_done && c->cut && !c->up.shut) {
        /* Bytes past the request wait in the client's socket, unread; the destination hears
         * the end, so one that ignores Connection: close ends after its response too. */
        shutdown(c->sfd, SHUT_WR);
        c->up.shut = true;
    }
    if ((c->up.eof && c->up.shut && c->down.eof && c->down.shut) ||
        (c->hup_c && c->up.eof && !up_pending) || (c->hup_s && c->down.eof && !down_pending) ||
        (up_done && c->down.eof && c->down.shut)) {
        egress_conn_end(c, "closed");
        return;
    }
    uint32_t cw = (!up_pending && !c->up.eof && !(up_done && c->cut) ? EPOLLIN : 0) |
                  (down_pending ? EPOLLOUT : 0);
    uint32_t sw = (!down_pending && !c->down.eof ? EPOLLIN : 0) | (up_pending ? EPOLLOUT : 0);
    egress_watch(c, c->cfd, &c->cev, cw, egress_on_client);
    egress_watch(c, c->sfd, &c->sev, sw, egress_on_server);
}

/* ---- the tunnel's TLS server name ---- */

/* The tunnel ends before the refused bytes are sent on (a first hello: none of the tunnel's).
 * The client heard 200 already, and what it takes for TLS from here can carry no HTTP answer:
 * closing is the answer, the row says why. */
static void egress_hello_refuse(struct egress_conn *c, const char *rule, const char *fmt, ...)
{
    char why[700], end[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    store_egress_decide(c->site->eng->store, c->rec, "denied", rule, "engine", NULL);
    snprintf(end, sizeof(end), "closed: %s; %s", why,
             c->bytes_up ? "cut before it reached the destination"
                         : "nothing of the tunnel reached the destination");
    egress_conn_end(c, end);
}

static void egress_on_hello_timeout(void *ud)
{
    struct egress_conn *c = ud;
    c->hello_timer = NULL;
    const char *what = c->hello_line ? "first line" : "TLS ClientHello";
    egress_hello_refuse(c, c->hello_line ? "tunnel's first line" : "TLS ClientHello",
                        "no complete %s within %d s of its first byte", what,
                        EGRESS_HEAD_TIMEOUT_MS / 1000);
}

/* A tunnel's first bytes that are no TLS: plain HTTP is refused (egress_tunnel_first_line),
 * anything else released; a first line still coming is waited for, as a hello is. 0: released,
 * 1: waiting, -1: the connection ended. */
static int egress_tunnel_check(struct egress_conn *c)
{
    switch (egress_tunnel_first_line((const unsigned char *)c->up.buf, c->up.inbuf)) {
    case EGRESS_TUNNEL_MORE:
        c->hello_need = c->up.inbuf + 1;
        c->hello_line = true;
        if (!c->hello_timer)
            c->hello_timer = loop_timer_add(c->site->eng->loop, EGRESS_HEAD_TIMEOUT_MS,
                                            egress_on_hello_timeout, c);
        return 1;
    case EGRESS_TUNNEL_HTTP:
        egress_hello_refuse(c, "tunnel's first line",
                            "plain HTTP inside a CONNECT tunnel (a request's Host is read for "
                            "http:// through the proxy, not inside a tunnel)");
        return -1;
    case EGRESS_TUNNEL_OTHER:
        break;
    }
    return 0;
}

/* Reads the held bytes as a ClientHello once there are enough to tell more than last time:
 * no TLS, or a hello whose server name fits the CONNECT host, releases them (the relay sends
 * them first, as they came); a hello that is malformed or names another host ends the tunnel;
 * else it waits for more, at most the head's timeout from the first byte. 0, or -1 when the
 * connection ended. */
static int egress_hello_check(struct egress_conn *c)
{
    if (c->up.inbuf < c->hello_need)
        return 0;
    struct tls_hello h;
    char why[600];
    switch (tls_hello_parse((const unsigned char *)c->up.buf, c->up.inbuf, &h)) {
    case TLS_HELLO_MORE:
        c->hello_need = h.need;
        if (c->up.inbuf && !c->hello_timer)
            c->hello_timer = loop_timer_add(c->site->eng->loop, EGRESS_HEAD_TIMEOUT_MS,
                                            egress_on_hello_timeout, c);
        return 0;
    case TLS_HELLO_BAD:
        egress_hello_refuse(c, "TLS ClientHello", "a malformed TLS ClientHello: %s", h.why);
        return -1;
    case TLS_HELLO_DONE:
        if (egress_server_name_check(c->host, h.has_name ? h.name : NULL, why, sizeof(why)) < 0) {
            egress_hello_refuse(c, "TLS server name", "%s", why);
            return -1;
        }
        if (!(c->scan = malloc(sizeof(*c->scan)))) {
            egress_conn_end(c, "closed: out of memory");
            return -1;
        }
        tls_scan_start(c->scan, h.early_data);
        c->hello = false;
        if (egress_scan_feed(c, c->up.buf + h.used, c->up.inbuf - h.used) < 0) {
            egress_hello_refuse(c, c->scan_rule, "%s", c->scan_why);
            return -1;
        }
        return 0;
    case TLS_HELLO_NOT_TLS: {
        int rc = egress_tunnel_check(c);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        break;
    }
    }
    c->hello = false;
    if (c->hello_timer) {
        loop_timer_cancel(c->site->eng->loop, c->hello_timer);
        c->hello_timer = NULL;
    }
    return 0;
}

/* Reads n more of the client's bytes (the last n of up's inbuf) after its first ClientHello:
 * a later hello's server name is checked as the first's; the bytes of a hello not yet whole are
 * held (up.hold), under the first hello's deadline from the first byte held. 0, or -1 with
 * scan_rule and scan_why set (the caller refuses). */
static int egress_scan_feed(struct egress_conn *c, const char *bytes, size_t n)
{
    struct tls_scan *s = c->scan;
    char why[600];
    size_t off = 0, used;
    for (;;) {
        enum tls_scan_status st =
            tls_scan_feed(s, (const unsigned char *)bytes + off, n - off, &used);
        off += used;
        if (st == TLS_SCAN_MORE)
            break;
        if (st == TLS_SCAN_BAD) {
            c->scan_rule = "TLS ClientHello";
            snprintf(c->scan_why, sizeof(c->scan_why),
                     "a malformed TLS handshake after the first ClientHello: %s", s->why);
            return -1;
        }
        if (st == TLS_SCAN_DONE) {
            /* The encrypted part began: from here the relay only copies. */
            free(c->scan);
            c->scan = NULL;
            c->up.hold = 0;
            break;
        }
        if (egress_server_name_check(c->host, s->hello.has_name ? s->hello.name : NULL, why,
                                     sizeof(why)) < 0) {
            c->scan_rule = "TLS server name";
            snprintf(c->scan_why, sizeof(c->scan_why), "%s (in a second ClientHello)", why);
            return -1;
        }
    }
    if (c->scan)
        c->up.hold = (size_t)(s->fed - s->passed);
    if (c->up.hold && !c->hello_timer)
        c->hello_timer =
            loop_timer_add(c->site->eng->loop, EGRESS_HEAD_TIMEOUT_MS, egress_on_hello_timeout, c);
    else if (!c->up.hold && c->hello_timer) {
        loop_timer_cancel(c->site->eng->loop, c->hello_timer);
        c->hello_timer = NULL;
    }
    return 0;
}

/* The client's bytes while its ClientHello is read: into up.buf after those held, at most
 * what a hello's records may take and what egress.max_bytes leaves. 0, or -1 when the
 * connection ended. */
static int egress_hello_read(struct egress_conn *c)
{
    struct egress_site *site = c->site;
    while (c->hello) {
        int64_t left = site->max_bytes ? site->max_bytes - site->bytes : INT64_MAX;
        if (left <= 0) {
            egress_site_spent(site);
            return -1;
        }
        /* Waiting means up.inbuf < hello_need <= TLS_HELLO_RECORDS_MAX: room for one byte. */
        size_t room = TLS_HELLO_RECORDS_MAX - c->up.inbuf;
        if ((int64_t)room > left)
            room = (size_t)left;
        ssize_t n = recv(c->cfd, c->up.buf + c->up.inbuf, room, 0);
        if (n > 0) {
            c->up.inbuf += (size_t)n;
            site->bytes += n;
            c->last = loop_now_ms();
            if (site->max_bytes && site->bytes >= site->max_bytes) {
                egress_site_spent(site);
                return -1;
            }
            if (egress_hello_check(c) < 0)
                return -1;
            continue;
        }
        if (n == 0 && !c->up.inbuf) {
            /* It said nothing and ended: nothing to check, its end is passed on. */
            c->hello = false;
            c->up.eof = true;
            return 0;
        }
        if (n == 0) {
            egress_conn_end(c, c->hello_line
                                   ? "closed: the client ended the tunnel inside its first "
                                     "line, which was not sent on"
                                   : "closed: the client ended the tunnel inside its TLS "
                                     "ClientHello, which was not sent on");
            return -1;
        }
        if (errno == EAGAIN || errno == EINTR)
            return 0;
        egress_conn_end(c, "closed: the client's connection failed");
        return -1;
    }
    return 0;
}

static void egress_relay_start(struct egress_conn *c)
{
    c->phase = EP_RELAY;
    struct egress_pipe *ps[] = {&c->up, &c->down};
    for (size_t i = 0; i < 2; i++) {
        if (!(ps[i]->buf = malloc(EGRESS_BUF_SIZE))) {
            egress_conn_reply(c, 503, "Service Unavailable", "paddock egress: out of memory");
            return;
        }
    }
    /* What the destination gets first: a plain request's rewritten head, then whatever the
     * client sent after its head; a tunnel's client hears 200 first. */
    struct buf first = BUF_INIT;
    size_t rest = c->head.len - c->head_len;
    if (c->upstream) {
        buf_append(&first, c->upstream, strlen(c->upstream));
        if ((int64_t)rest > c->body_left) {
            rest = (size_t)c->body_left;
            c->cut = true;
        }
        c->body_left -= (int64_t)rest;
    }
    if (c->tunnel) {
        /* Bytes sent after CONNECT's head, before its 200, start what the client speaks in
         * the tunnel: held with those that follow until they are checked (the head is at most
         * a few times 16 KiB, the buffer 1 MiB). */
        memcpy(c->up.buf, c->head.data + c->head_len, rest);
        c->up.inbuf = rest;
        c->hello = true;
    } else if (rest)
        buf_append(&first, c->head.data + c->head_len, rest);
    c->up.data = first.data;
    c->up.len = first.len;
    if (c->tunnel) {
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        c->down.data = strdup(ok);
        c->down.len = c->down.data ? sizeof ok - 1 : 0;
    }
    egress_idle_arm(c);
    if (c->hello && egress_hello_check(c) < 0)
        return;
    egress_relay(c);
}

static void egress_on_client(int fd, uint32_t events, void *ud)
{
    (void)fd;
    struct egress_conn *c = ud;
    if (c->phase != EP_RELAY) {
        /* Waiting (ask, resolve, connect): only its going away is watched. */
        if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            egress_conn_end(c, "the client closed the connection before it was connected");
        return;
    }
    if (events & EPOLLERR) {
        egress_conn_end(c, "closed: the client's connection failed");
        return;
    }
    if (events & EPOLLHUP)
        c->hup_c = true;
    if (c->hello && (events & (EPOLLIN | EPOLLHUP)) && egress_hello_read(c) < 0)
        return;
    if ((events & EPOLLIN) && !c->tunnel && c->body_left == 0 && !c->up.eof && !c->cut) {
        /* The request is taken whole: more bytes are a second request, not relayed (its
         * end, though, is the client's half-close, passed on as before). */
        char b;
        ssize_t n = recv(c->cfd, &b, 1, MSG_PEEK);
        if (n > 0)
            c->cut = true;
        else if (n == 0)
            c->up.eof = true;
    }
    egress_relay(c);
}

/* ---- connect ---- */

static void egress_connect_next(struct egress_conn *c, const char *last_error);

static void egress_on_connect_timeout(void *ud)
{
    struct egress_conn *c = ud;
    c->timer = NULL;
    egress_fd_close(c->site->eng, &c->sfd, &c->sev);
    egress_connect_next(c, "no answer within 10 s");
}

static void egress_on_server(int fd, uint32_t events, void *ud)
{
    struct egress_conn *c = ud;
    if (c->phase == EP_CONNECT) {
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
            soerr = errno;
        if (c->timer) {
            loop_timer_cancel(c->site->eng->loop, c->timer);
            c->timer = NULL;
        }
        if (soerr) {
            egress_fd_close(c->site->eng, &c->sfd, &c->sev);
            egress_connect_next(c, strerror(soerr));
            return;
        }
        egress_relay_start(c);
        return;
    }
    if (events & EPOLLERR) {
        egress_conn_end(c, "closed: the destination's connection failed");
        return;
    }
    if (events & EPOLLHUP)
        c->hup_s = true;
    egress_relay(c);
}

static void egress_connect_next(struct egress_conn *c, const char *last_error)
{
    struct engine *eng = c->site->eng;
    while (c->iaddr < c->naddrs) {
        int i = c->iaddr++;
        const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
        char text[INET6_ADDRSTRLEN];
        const void *raw =
            sa->sa_family == AF_INET
                ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
                : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        inet_ntop(sa->sa_family, raw, text, sizeof(text));
        snprintf(c->address, sizeof(c->address), sa->sa_family == AF_INET6 ? "[%s]:%d" : "%s:%d",
                 text, c->port);
        int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last_error = strerror(errno);
            continue;
        }
        if (connect(fd, sa, c->alens[i]) < 0 && errno != EINPROGRESS) {
            last_error = strerror(errno);
            close(fd);
            continue;
        }
        c->sfd = fd;
        c->sev = UINT32_MAX;
        c->phase = EP_CONNECT;
        egress_watch(c, fd, &c->sev, EPOLLOUT, egress_on_server);
        c->timer =
            loop_timer_add(eng->loop, EGRESS_CONNECT_TIMEOUT_MS, egress_on_connect_timeout, c);
        return;
    }
    egress_conn_reply(c, 502, "Bad Gateway", "paddock egress: cannot connect to %s:%d (%s): %s",
                      c->host, c->port, c->address[0] ? c->address : "no address",
                      last_error ? last_error : "no address");
}

/* ---- resolve and check the addresses ---- */

/* The patterns that may name an address literally: the session's allow list and the
 * operators' rules. */
static json_t *egress_allow_all(struct egress_site *site)
{
    json_t *all = json_copy(site->allow);
    json_t *rules = store_egress_rules(site->eng->store, site->session_id);
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        json_array_append(all, json_object_get(r, "pattern"));
    }
    json_decref(rules);
    return all;
}

/* Keeps the addresses that may be reached: public ones, and others an allow entry names
 * literally (or the operator approved as this very address). Then connects. */
static void egress_check_addresses(struct egress_conn *c)
{
    json_t *allow = egress_allow_all(c->site);
    int kept = 0;
    char refused[300] = "";
    const char *denied = NULL;
    for (int i = 0; i < c->naddrs; i++) {
        const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
        enum egress_addr_class cls = egress_addr_classify(sa);
        if (cls == EGRESS_ADDR_PUBLIC && netif_addr_is_host(sa))
            cls = EGRESS_ADDR_HOST; /* the host's public address is still the host */
        char text[INET6_ADDRSTRLEN];
        const void *raw =
            sa->sa_family == AF_INET
                ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
                : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        inet_ntop(sa->sa_family, raw, text, sizeof(text));
        /* A deny entry naming an address holds for every name that reaches it ("localhost",
         * "2130706433", a wildcard DNS service), not only for the address as written. */
        const char *deny = egress_patterns_match(c->site->deny, text, c->port);
        if (deny) {
            if (!denied)
                snprintf(refused, sizeof(refused), "%s", text);
            denied = denied ? denied : deny;
            continue;
        }
        /* 0.0.0.0 and :: are no destination: connecting there reaches this host's own
         * services, under a name an operator would not read as loopback. Never kept, even
         * named literally (127.0.0.1 or [::1] say what is meant). Multicast is no TCP peer. */
        bool ok =
            cls != EGRESS_ADDR_UNSPECIFIED &&
            (cls == EGRESS_ADDR_PUBLIC || egress_patterns_name_address(allow, text, c->port) ||
             (c->approved_literal && egress_addr_equal(c->host, text)));
        if (!ok) {
            if (!refused[0] && !denied)
                snprintf(refused, sizeof(refused), "%s, %s %s address%s", text,
                         cls == EGRESS_ADDR_UNSPECIFIED ? "an" : "a", egress_addr_class_name(cls),
                         cls == EGRESS_ADDR_UNSPECIFIED ? " (no destination: it reaches this "
                                                          "host, whatever allows it)"
                                                        : "");
            continue;
        }
        if (kept != i) {
            c->addrs[kept] = c->addrs[i];
            c->alens[kept] = c->alens[i];
        }
        kept++;
    }
    json_decref(allow);
    c->naddrs = kept;
    if (!kept && denied) {
        store_egress_decide(c->site->eng->store, c->rec, "denied", denied, "config", NULL);
        egress_conn_reply(c, 403, "Forbidden",
                          "paddock egress: %s %s:%d resolves to %s, denied by the rule \"%s\" "
                          "(egress.deny)",
                          c->method, c->host, c->port, refused, denied);
        return;
    }
    if (!kept) {
        store_egress_decide(c->site->eng->store, c->rec, "refused", "private address", "engine",
                            NULL);
        egress_conn_reply(c, 403, "Forbidden",
                          "paddock egress: %s:%d resolves to %s: refused (the host's own, "
                          "loopback, link-local and private addresses need an allow entry naming "
                          "the address literally)",
                          c->host, c->port, refused);
        return;
    }
    c->iaddr = 0;
    egress_connect_next(c, NULL);
}

static void egress_on_resolved(int status, const char *output, void *ud)
{
    struct egress_conn *c = ud;
    c->resolving = false;
    if (c->ended) {
        egress_conn_free(c);
        return;
    }
    if (c->timer) {
        loop_timer_cancel(c->site->eng->loop, c->timer);
        c->timer = NULL;
    }
    /* getent ahosts: "ADDRESS STREAM name" lines, one per address and socket type. */
    c->naddrs = 0;
    const char *line = output;
    while (status == 0 && line && *line && c->naddrs < EGRESS_MAX_ADDRS) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char buf[256];
        if (n < sizeof(buf)) {
            memcpy(buf, line, n);
            buf[n] = '\0';
            char addr[INET6_ADDRSTRLEN + 1], kind[16];
            if (sscanf(buf, "%46s %15s", addr, kind) == 2 && strcmp(kind, "STREAM") == 0) {
                struct sockaddr_storage ss = {0};
                socklen_t len = 0;
                struct sockaddr_in *in = (struct sockaddr_in *)&ss;
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
                if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
                    in->sin_family = AF_INET;
                    in->sin_port = htons((uint16_t)c->port);
                    len = sizeof(*in);
                } else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
                    in6->sin6_family = AF_INET6;
                    in6->sin6_port = htons((uint16_t)c->port);
                    len = sizeof(*in6);
                }
                if (len) {
                    c->addrs[c->naddrs] = ss;
                    c->alens[c->naddrs++] = len;
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!c->naddrs) {
        egress_conn_reply(c, 502, "Bad Gateway", "paddock egress: %s does not resolve%s", c->host,
                          status < 0 ? " (the resolver did not answer within 10 s)" : "");
        return;
    }
    egress_check_addresses(c);
}

/* Once the destination is allowed: its addresses (a literal is its own; a name is resolved
 * once, by getent in a child, and only the addresses it gave are ever connected to). */
static void egress_resolve(struct egress_conn *c)
{
    c->phase = EP_RESOLVE;
    struct sockaddr_in *in = (struct sockaddr_in *)&c->addrs[0];
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&c->addrs[0];
    memset(&c->addrs[0], 0, sizeof(c->addrs[0]));
    if (inet_pton(AF_INET, c->host, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)c->port);
        c->alens[0] = sizeof(*in);
        c->naddrs = 1;
        egress_check_addresses(c);
        return;
    }
    if (inet_pton(AF_INET6, c->host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)c->port);
        c->alens[0] = sizeof(*in6);
        c->naddrs = 1;
        egress_check_addresses(c);
        return;
    }
    /* The host passed egress_target_parse: a DNS name that cannot start with '-'. */
    const char *argv[] = {"getent", "ahosts", c->host, NULL};
    const char *envp[] = {"PATH=/usr/bin:/bin:/usr/sbin:/sbin", NULL};
    struct child_spec spec = {.argv = argv, .envp = envp, .timeout_ms = EGRESS_RESOLVE_TIMEOUT_MS};
    char *err = NULL;
    if (child_spawn(c->site->eng->loop, &spec, egress_on_resolved, c, &err) < 0) {
        egress_conn_reply(c, 502, "Bad Gateway", "paddock egress: cannot resolve %s: %s", c->host,
                          err ? err : "no resolver");
        free(err);
        return;
    }
    c->resolving = true;
}

/* ---- decide ---- */

/* The operator's answer to the question (action_ask): approved → on to resolving (with a rule
 * for the session or the engine when the approval's scope says so); rejected or expired → 403
 * saying who and why, read back from the action's row. */
static void egress_on_decided(bool approved, const char *why, void *ud)
{
    struct egress_conn *c = ud;
    struct engine *eng = c->site->eng;
    int64_t id = c->action;
    c->action = 0;
    if (!approved) {
        json_t *row = store_action_get(eng->store, id);
        const char *approval = json_string_value(json_object_get(row, "approval"));
        const char *by = json_string_value(json_object_get(row, "decided_by"));
        const char *reason = json_string_value(json_object_get(row, "decision_reason"));
        bool expired = approval && strcmp(approval, "expired") == 0;
        store_egress_decide(eng->store, c->rec, expired ? "expired" : "rejected", NULL,
                            by ? by : "engine", NULL);
        if (expired)
            egress_conn_reply(c, 403, "Forbidden",
                              "paddock egress: %s %s:%d waited for the operator and the approval "
                              "timed out",
                              c->method, c->host, c->port);
        else if (by)
            egress_conn_reply(c, 403, "Forbidden", "paddock egress: %s %s:%d rejected by %s%s%s",
                              c->method, c->host, c->port, by, reason ? ": " : "",
                              reason ? reason : "");
        else
            egress_conn_reply(c, 403, "Forbidden", "paddock egress: %s %s:%d not approved: %s",
                              c->method, c->host, c->port, why ? why : "no decision");
        json_decref(row);
        return;
    }
    const char *by = why && *why ? why : "operator";
    enum action_scope scope = action_decision_scope(eng);
    /* The question is answered: its row ends here, the connection's row goes on. */
    action_end(eng, id, ACTION_DONE, STORE_NO_EXIT_CODE, NULL, NULL);
    char pattern[EGRESS_HOST_MAX + 16];
    snprintf(pattern, sizeof(pattern), strchr(c->host, ':') ? "[%s]:%d" : "%s:%d", c->host,
             c->port);
    const char *rule = NULL;
    if (scope != ACTION_SCOPE_ONCE &&
        store_egress_rule_add(eng->store, scope == ACTION_SCOPE_ENGINE ? NULL : c->site->session_id,
                              pattern, by, util_now(), NULL) > 0)
        rule = pattern;
    store_egress_decide(eng->store, c->rec, "approved", rule, by, NULL);
    c->approved_literal = true;
    egress_resolve(c);
}

/* The command line of the sandbox's process that opened the connection, into c->command; ""
 * when it cannot be told (it exited, or the socket was handed on). Only for a question: the
 * scan of the host's /proc costs more than a decision by rule. */
static void egress_find_command(struct egress_conn *c, struct session *s)
{
    struct sockaddr_storage peer, self;
    socklen_t pl = sizeof(peer), sl = sizeof(self);
    c->command[0] = '\0';
    if (getpeername(c->cfd, (struct sockaddr *)&peer, &pl) < 0 ||
        getsockname(c->cfd, (struct sockaddr *)&self, &sl) < 0 || peer.ss_family != AF_INET ||
        self.ss_family != AF_INET || s->exec_init_pid <= 0)
        return;
    int pport = ntohs(((struct sockaddr_in *)&peer)->sin_port);
    int sport = ntohs(((struct sockaddr_in *)&self)->sin_port);
    char raw[sizeof(c->command)];
    if (proc_socket_owner((pid_t)s->exec_init_pid, pport, sport, raw, sizeof(raw)) == 0)
        sanitize_text(raw, strlen(raw), c->command, sizeof(c->command));
}

static void egress_ask(struct egress_conn *c, struct session *s)
{
    struct engine *eng = c->site->eng;
    char dest[EGRESS_HOST_MAX + 16];
    snprintf(dest, sizeof(dest), strchr(c->host, ':') ? "[%s]:%d" : "%s:%d", c->host, c->port);
    egress_find_command(c, s);
    json_t *action =
        json_pack("{s:s,s:{s:s,s:s,s:i,s:s}}", "action", "egress", "args", "destination", dest,
                  "host", c->host, "port", c->port, "method", c->method);
    if (c->command[0])
        json_object_set_new(json_object_get(action, "args"), "command", json_string(c->command));
    char *err = NULL;
    char why[128];
    snprintf(why, sizeof(why), "a network destination the session does not know (%s)",
             c->tunnel ? "CONNECT" : c->method);
    c->phase = EP_ASK;
    json_t *cfg = store_session_config(eng->store, s->id);
    json_t *t = json_object_get(json_object_get(cfg, "options"), "approval_timeout");
    struct action_request q = {.session_id = s->id,
                               .action = action,
                               .summary = dest,
                               .risk = RISK_MEDIUM,
                               .risk_reason = why,
                               .pending = true,
                               .timeout = json_is_number(t) ? json_number_value(t)
                                                            : eng->approval_timeout};
    int64_t id = action_ask(eng, &q, egress_on_decided, c, &err);
    json_decref(cfg);
    json_decref(action);
    if (id < 0) {
        egress_conn_reply(c, 503, "Service Unavailable",
                          "paddock egress: the question could not be recorded: %s",
                          err ? err : "store error");
        free(err);
        return;
    }
    c->action = id;
    struct store_egress_new row = {.session_id = c->site->session_id,
                                   .host = c->host,
                                   .method = c->method,
                                   .port = c->port,
                                   .decision = "pending",
                                   .action_id = id,
                                   .command = c->command[0] ? c->command : NULL,
                                   .now = util_now()};
    c->rec = store_egress_add(eng->store, &row, &err);
    if (c->rec < 0) {
        c->rec = 0;
        egress_conn_reply(c, 503, "Service Unavailable",
                          "paddock egress: the connection could not be recorded: %s",
                          err ? err : "store error");
        free(err);
        return;
    }
    egress_publish(c, "start");
}

static void egress_decide(struct egress_conn *c)
{
    struct egress_site *site = c->site;
    struct engine *eng = site->eng;
    struct session *s = session_find(eng, site->session_id);
    const char *rule;
    if (site->max_bytes && site->bytes >= site->max_bytes) {
        egress_record_now(c, "refused", NULL, "config");
        egress_conn_reply(c, 403, "Forbidden",
                          "paddock egress: %s %s:%d refused: the session's byte limit of %lld "
                          "bytes is reached (egress.max_bytes)",
                          c->method, c->host, c->port, (long long)site->max_bytes);
        return;
    }
    if ((rule = egress_patterns_match(site->deny, c->host, c->port))) {
        egress_record_now(c, "denied", rule, "config");
        egress_conn_reply(c, 403, "Forbidden",
                          "paddock egress: %s %s:%d denied by the rule \"%s\" (egress.deny)",
                          c->method, c->host, c->port, rule);
        return;
    }
    const char *by = "config";
    rule = egress_patterns_match(site->allow, c->host, c->port);
    json_t *rules = rule ? NULL : store_egress_rules(eng->store, site->session_id);
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        const char *p = json_string_value(json_object_get(r, "pattern"));
        if (p && egress_pattern_match(p, c->host, c->port)) {
            rule = p;
            by = json_string_value(json_object_get(r, "created_by"));
            break;
        }
    }
    if (rule) {
        char *err = NULL;
        struct store_egress_new row = {.session_id = site->session_id,
                                       .host = c->host,
                                       .method = c->method,
                                       .port = c->port,
                                       .decision = "allowed",
                                       .rule = rule,
                                       .decided_by = by ? by : "operator",
                                       .now = util_now()};
        /* Intent first: nothing is sent for a connection the record does not hold. */
        c->rec = store_egress_add(eng->store, &row, &err);
        json_decref(rules);
        if (c->rec < 0) {
            c->rec = 0;
            egress_conn_reply(c, 503, "Service Unavailable",
                              "paddock egress: the connection could not be recorded: %s",
                              err ? err : "store error");
            free(err);
            return;
        }
        egress_publish(c, "start");
        egress_resolve(c);
        return;
    }
    json_decref(rules);
    if (site->ask && s && s->state == SESSION_READY) {
        egress_ask(c, s);
        return;
    }
    egress_record_now(c, "denied", NULL, "config");
    egress_conn_reply(
        c, 403, "Forbidden", "paddock egress: %s %s:%d is not in the session's allow list%s",
        c->method, c->host, c->port,
        site->ask ? " and the session is not ready to ask" : " (egress.ask is false)");
}

/* ---- the request head ---- */

static bool egress_header_dropped(const char *name, size_t n)
{
    /* Host too: the destination hears the host that was decided (below), not another name a
     * shared front end would route to. */
    static const char *const hop[] = {"proxy-connection", "proxy-authorization", "connection",
                                      "keep-alive", "host"};
    for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
        if (strlen(hop[i]) == n && strncasecmp(name, hop[i], n) == 0)
            return true;
    return false;
}

/* A header's name is a token: "Host :" or a folded line (" Host: x") is one some servers read
 * as a header the proxy would have dropped or rewritten. */
static bool egress_header_name_valid(const char *name, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!name[i] || (!isalnum((unsigned char)name[i]) && !strchr("!#$%&'*+-.^_`|~", name[i])))
            return false;
    return true;
}

/* The request's body framing from one header line (name, value through e): 0, or -1 after
 * replying. Only Content-Length frames a body: a chunked one is refused (411) rather than
 * parsed, and a head that frames its body two ways, or names two lengths, is refused (400):
 * the destination could read a different end than the engine, and the bytes after it as a
 * request nobody checked. */
static int egress_head_framing(struct egress_conn *c, const char *name, size_t n, const char *v,
                               const char *e, bool *has_cl, bool *has_te)
{
    bool cl = n == 14 && strncasecmp(name, "content-length", n) == 0;
    bool te = n == 17 && strncasecmp(name, "transfer-encoding", n) == 0;
    if (!cl && !te)
        return 0;
    if (te)
        *has_te = true;
    if (cl) {
        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        int64_t len = 0;
        bool ok = v < e && e - v <= 15;
        for (const char *q = v; ok && q < e; q++) {
            ok = isdigit((unsigned char)*q);
            len = len * 10 + (*q - '0');
        }
        if (*has_cl || !ok) {
            egress_conn_reply(c, 400, "Bad Request",
                              "paddock egress: %s Content-Length (request smuggling)",
                              *has_cl ? "more than one" : "a bad");
            return -1;
        }
        *has_cl = true;
        c->body_left = len;
    }
    if (*has_te && *has_cl) {
        egress_conn_reply(c, 400, "Bad Request",
                          "paddock egress: both Content-Length and Transfer-Encoding "
                          "(request smuggling)");
        return -1;
    }
    return 0;
}

/* Parses the head: 0, or -1 after replying. */
static int egress_head_parse(struct egress_conn *c)
{
    char *h = c->head.data;
    char *eol = strstr(h, "\r\n");
    if (!eol)
        return -1;
    /* Lines end in CRLF and nowhere else: a bare LF or CR inside a line is a line end to some
     * servers, which would read a header (a second Host) the checks below never saw. */
    for (size_t i = 0; i < c->head_len; i++)
        if ((h[i] == '\n' && (i == 0 || h[i - 1] != '\r')) || (h[i] == '\r' && h[i + 1] != '\n')) {
            egress_conn_reply(c, 400, "Bad Request",
                              "paddock egress: a bare CR or LF in the request head");
            return -1;
        }
    char line[EGRESS_HEAD_MAX];
    size_t ln = (size_t)(eol - h);
    memcpy(line, h, ln);
    line[ln] = '\0';
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
        (size_t)(sp1 - line) >= sizeof(c->method)) {
        egress_conn_reply(c, 400, "Bad Request", "paddock egress: not an HTTP/1.x proxy request");
        return -1;
    }
    *sp1 = *sp2 = '\0';
    for (char *m = line; *m; m++)
        if (!isupper((unsigned char)*m)) {
            egress_conn_reply(c, 400, "Bad Request", "paddock egress: not an HTTP method");
            return -1;
        }
    memcpy(c->method, line, (size_t)(sp1 - line) + 1);
    const char *target = sp1 + 1, *version = sp2 + 1;
    if (strcmp(c->method, "CONNECT") == 0) {
        c->tunnel = true;
        if (egress_target_parse(target, -1, c->host, &c->port) < 0) {
            egress_conn_reply(c, 400, "Bad Request",
                              "paddock egress: CONNECT needs host:port, not \"%.200s\"", target);
            return -1;
        }
        return 0;
    }
    if (strncasecmp(target, "http://", 7) != 0) {
        egress_conn_reply(c, 400, "Bad Request",
                          "paddock egress: a plain request names its destination as "
                          "http://host/path (https goes through CONNECT): \"%.200s\"",
                          target);
        return -1;
    }
    const char *auth = target + 7;
    size_t an = strcspn(auth, "/?#");
    char authority[EGRESS_HOST_MAX + 16];
    if (an == 0 || an >= sizeof(authority) || memchr(auth, '@', an)) {
        egress_conn_reply(c, 400, "Bad Request", "paddock egress: bad destination \"%.200s\"",
                          target);
        return -1;
    }
    memcpy(authority, auth, an);
    authority[an] = '\0';
    if (egress_target_parse(authority, 80, c->host, &c->port) < 0) {
        egress_conn_reply(c, 400, "Bad Request", "paddock egress: bad destination \"%.200s\"",
                          authority);
        return -1;
    }
    const char *path = auth + an;
    /* The destination gets the origin form, its headers less the proxy's hop-by-hop ones, and
     * Connection: close (one request per connection: the decision was for this one). */
    struct buf up = BUF_INIT;
    buf_printf(&up, "%s %s%s %s\r\n", c->method, *path == '/' ? "" : "/", path, version);
    bool v6 = strchr(c->host, ':') != NULL;
    buf_printf(&up, v6 ? "Host: [%s]" : "Host: %s", c->host);
    if (c->port != 80)
        buf_printf(&up, ":%d", c->port);
    buf_printf(&up, "\r\n");
    bool has_cl = false, has_te = false;
    for (char *p = eol + 2; p < h + c->head_len - 2;) {
        char *e = strstr(p, "\r\n");
        if (!e)
            break;
        char *colon = memchr(p, ':', (size_t)(e - p));
        if (!colon || !egress_header_name_valid(p, (size_t)(colon - p))) {
            buf_free(&up);
            egress_conn_reply(c, 400, "Bad Request",
                              "paddock egress: a header line that is no \"name: value\"");
            return -1;
        }
        if (egress_head_framing(c, p, (size_t)(colon - p), colon + 1, e, &has_cl, &has_te) < 0) {
            buf_free(&up);
            return -1;
        }
        if (!egress_header_dropped(p, (size_t)(colon - p)))
            buf_append(&up, p, (size_t)(e - p) + 2);
        p = e + 2;
    }
    if (has_te) {
        buf_free(&up);
        egress_conn_reply(c, 411, "Length Required",
                          "paddock egress: a request body must have a Content-Length "
                          "(Transfer-Encoding is not relayed)");
        return -1;
    }
    buf_printf(&up, "Connection: close\r\n\r\n");
    c->upstream = up.data;
    return 0;
}

static void egress_on_head_timeout(void *ud)
{
    struct egress_conn *c = ud;
    c->timer = NULL;
    egress_conn_reply(c, 408, "Request Timeout",
                      "paddock egress: no complete request head within 10 s");
}

static void egress_on_head(int fd, uint32_t events, void *ud)
{
    struct egress_conn *c = ud;
    if (c->phase != EP_HEAD) {
        egress_on_client(fd, events, ud);
        return;
    }
    char tmp[4096];
    for (;;) {
        ssize_t n = recv(fd, tmp, sizeof(tmp), 0);
        if (n > 0) {
            buf_append(&c->head, tmp, (size_t)n);
            if (c->head.len > EGRESS_HEAD_MAX + sizeof(tmp))
                break;
            continue;
        }
        if (n == 0) {
            egress_conn_end(c, NULL);
            return;
        }
        if (errno == EAGAIN || errno == EINTR)
            break;
        egress_conn_end(c, NULL);
        return;
    }
    buf_append(&c->head, "", 1); /* a NUL after the bytes, not counted */
    c->head.len--;
    char *end = strstr(c->head.data, "\r\n\r\n");
    if (!end || (size_t)(end - c->head.data) + 4 > EGRESS_HEAD_MAX) {
        if (c->head.len > EGRESS_HEAD_MAX || memchr(c->head.data, '\0', c->head.len))
            egress_conn_reply(c, 431, "Request Header Fields Too Large",
                              "paddock egress: the request head exceeds 16 KiB or holds NUL");
        return;
    }
    c->head_len = (size_t)(end - c->head.data) + 4;
    if (c->timer) {
        loop_timer_cancel(c->site->eng->loop, c->timer);
        c->timer = NULL;
    }
    if (egress_head_parse(c) < 0)
        return;
    /* From now on only the client's going away matters until the relay starts. */
    egress_watch(c, c->cfd, &c->cev, EPOLLRDHUP, egress_on_head);
    c->phase = EP_ASK; /* decided below: at once, or after the operator */
    egress_decide(c);
}

/* ---- the hand-off from the executor ---- */

/* The descriptor that came with the byte: a connected TCP socket, or nothing. */
static int egress_take_fd(int hfd)
{
    char one;
    struct iovec iov = {.iov_base = &one, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(hfd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN ? -2 : -1;
    int got = -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            if (got < 0)
                got = fd;
            else
                close(fd); /* one connection per hand-off */
        }
    }
    if (got < 0 || (mh.msg_flags & MSG_CTRUNC)) {
        if (got >= 0)
            close(got);
        return -1;
    }
    /* Whatever came from the sandbox is only used as a TCP socket: anything else is closed. */
    struct stat st;
    int type = 0, domain = 0;
    socklen_t len = sizeof(int);
    if (fstat(got, &st) < 0 || !S_ISSOCK(st.st_mode) ||
        getsockopt(got, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM ||
        getsockopt(got, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
        (domain != AF_INET && domain != AF_INET6)) {
        close(got);
        return -1;
    }
    int fl = fcntl(got, F_GETFL);
    if (fl < 0 || fcntl(got, F_SETFL, fl | O_NONBLOCK) < 0) {
        close(got);
        return -1;
    }
    return got;
}

/* The connections all sessions may hold at once: what the descriptor limit leaves after the
 * engine's own share (read each time: an operator may change the limit with prlimit), or
 * PADDOCK_EGRESS_MAX_TOTAL when that is lower (tests, an operator's own bound). */
static int egress_engine_budget(void)
{
    long budget = INT_MAX;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        rlim_t reserve =
            rl.rlim_cur < 2 * EGRESS_FDS_RESERVED ? rl.rlim_cur / 2 : EGRESS_FDS_RESERVED;
        rlim_t n = (rl.rlim_cur - reserve) / EGRESS_FDS_PER_CONN;
        budget = n < (rlim_t)INT_MAX ? (long)n : INT_MAX;
    }
    const char *env = getenv("PADDOCK_EGRESS_MAX_TOTAL");
    char *end = NULL;
    long v = env && *env ? strtol(env, &end, 10) : -1;
    if (end && !*end && v >= 0 && v < budget)
        budget = v;
    return (int)budget;
}

static void egress_on_handoff(int fd, uint32_t events, void *ud)
{
    (void)events;
    struct egress_conn *c = ud;
    int got = egress_take_fd(fd);
    if (got == -2)
        return;
    loop_del_fd(c->site->eng->loop, c->hfd);
    close(c->hfd);
    c->hfd = -1;
    if (got < 0) {
        egress_conn_end(c, NULL);
        return;
    }
    c->cfd = got;
    c->cev = UINT32_MAX;
    c->phase = EP_HEAD;
    if (c->site->n_conns > c->site->max_connections) {
        egress_conn_reply(c, 503, "Service Unavailable",
                          "paddock egress: the session has %d connections open "
                          "(egress.max_connections)",
                          c->site->max_connections);
        return;
    }
    int budget = egress_engine_budget();
    if (c->site->eng->egress->n_conns > budget) {
        egress_conn_reply(c, 503, "Service Unavailable",
                          "paddock egress: the engine has %d connections open for all sessions, "
                          "as many as its descriptors allow (RLIMIT_NOFILE)",
                          budget);
        return;
    }
    c->timer =
        loop_timer_add(c->site->eng->loop, EGRESS_HEAD_TIMEOUT_MS, egress_on_head_timeout, c);
    egress_watch(c, c->cfd, &c->cev, EPOLLIN, egress_on_head);
}

/* Who connected: the executor binary, in the session's container (as the executor channel
 * checks its server, docs/architecture.md). 0, or -1. */
static int egress_peer_ok(struct egress_site *site, int fd)
{
    struct engine *eng = site->eng;
    struct session *s = session_find(eng, site->session_id);
    if (!s || s->exec_init_pid <= 0 || !eng->executor_path)
        return -1;
    char why[400];
    return unix_peer_check(fd, eng->executor_path, (pid_t)s->exec_init_pid, why, sizeof(why)) == 0
               ? 0
               : -1;
}

static void egress_on_accept(int fd, uint32_t events, void *ud)
{
    (void)events;
    struct egress_site *site = ud;
    for (;;) {
        int h = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (h < 0)
            return;
        if (egress_peer_ok(site, h) < 0) {
            close(h); /* not the session's executor: nothing is read from it */
            continue;
        }
        struct egress_conn *c = calloc(1, sizeof(*c));
        if (!c) {
            close(h);
            continue;
        }
        *c = (struct egress_conn){.site = site,
                                  .phase = EP_HANDOFF,
                                  .hfd = h,
                                  .cfd = -1,
                                  .sfd = -1,
                                  .cev = UINT32_MAX,
                                  .sev = UINT32_MAX};
        c->next = site->conns;
        site->conns = c;
        site->n_conns++;
        site->eng->egress->n_conns++;
        if (loop_add_fd(site->eng->loop, h, EPOLLIN, egress_on_handoff, c) < 0) {
            c->hfd = -1;
            close(h);
            egress_conn_end(c, NULL);
        }
    }
}

/* ---- the sites ---- */

/* The session's socket dir, opened without following a link (the sandbox can write into it,
 * not replace it: it is <state>/run/<id>, made by the engine). */
static int egress_dir_open(struct engine *eng, const char *id)
{
    char *run = util_strdupf("%s/run", eng->state_dir);
    int rfd = run ? open(run, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    free(run);
    if (rfd < 0)
        return -1;
    int dfd = openat(rfd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(rfd);
    return dfd;
}

/* Binds <sock dir>/egress.sock through the directory's descriptor: whatever the sandbox put at
 * that name is unlinked by name (never followed), and bind makes a new socket there. */
static int egress_listen(struct engine *eng, const char *id)
{
    int dfd = egress_dir_open(eng, id);
    if (dfd < 0)
        return -1;
    if (unlinkat(dfd, SESSION_EGRESS_SOCKET_NAME, 0) < 0 && errno == EISDIR)
        unlinkat(dfd, SESSION_EGRESS_SOCKET_NAME, AT_REMOVEDIR);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd,
             SESSION_EGRESS_SOCKET_NAME);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
        if (fd >= 0)
            close(fd);
        close(dfd);
        return -1;
    }
    /* Container root (uid 0, the executor) connects; the agent (uid 1000) may not. */
    fchmodat(dfd, SESSION_EGRESS_SOCKET_NAME, 0600, 0);
    close(dfd);
    return fd;
}

static void egress_site_close(struct egress_site *site, const char *why)
{
    struct engine *eng = site->eng;
    while (site->conns)
        egress_conn_end(site->conns, why);
    if (site->lfd >= 0) {
        loop_del_fd(eng->loop, site->lfd);
        close(site->lfd);
    }
    struct egress *eg = eng->egress;
    for (struct egress_site **pp = &eg->sites; *pp; pp = &(*pp)->next)
        if (*pp == site) {
            *pp = site->next;
            break;
        }
    json_decref(site->allow);
    json_decref(site->deny);
    free(site);
}

static struct egress_site *egress_site_open(struct engine *eng, const char *id, json_t *opt)
{
    struct egress_site *site = calloc(1, sizeof(*site));
    if (!site)
        return NULL;
    site->eng = eng;
    snprintf(site->session_id, sizeof(site->session_id), "%s", id);
    json_t *a = json_object_get(opt, "allow"), *d = json_object_get(opt, "deny");
    site->allow = json_is_array(a) ? json_incref(a) : json_array();
    site->deny = json_is_array(d) ? json_incref(d) : json_array();
    site->ask = !json_is_false(json_object_get(opt, "ask"));
    json_t *mc = json_object_get(opt, "max_connections");
    site->max_connections = json_is_integer(mc) ? (int)json_integer_value(mc) : 64;
    json_t *it = json_object_get(opt, "idle_timeout");
    site->idle_timeout = json_is_number(it) ? json_number_value(it) : 300.0;
    json_t *mb = json_object_get(opt, "max_bytes");
    site->max_bytes = json_is_integer(mb) ? json_integer_value(mb) : 0;
    /* a restarted engine counts what the session moved before */
    site->bytes = site->max_bytes ? store_egress_bytes(eng->store, id) : 0;
    site->lfd = egress_listen(eng, id);
    if (site->lfd < 0 || loop_add_fd(eng->loop, site->lfd, EPOLLIN, egress_on_accept, site) < 0) {
        if (site->lfd >= 0)
            close(site->lfd);
        json_decref(site->allow);
        json_decref(site->deny);
        free(site);
        return NULL;
    }
    struct egress *eg = eng->egress;
    site->next = eg->sites;
    eg->sites = site;
    return site;
}

void egress_session_sync(struct session *s)
{
    struct engine *eng = s->eng;
    if (!eng->egress)
        return;
    struct egress_site *site = egress_site_find(eng, s->id);
    bool live = session_st_is_live(s->state);
    if (site && !live) {
        egress_site_close(site, "the session stopped");
        return;
    }
    if (site || !live)
        return;
    json_t *cfg = store_session_config(eng->store, s->id);
    json_t *opt = json_object_get(cfg, "options");
    const char *net = json_string_value(json_object_get(opt, "network"));
    if (net && strcmp(net, session_net_name(SESSION_NET_EGRESS)) == 0)
        egress_site_open(eng, s->id, json_object_get(opt, "egress"));
    json_decref(cfg);
}

static json_t *egress_config_list(const char *const *list, const char *section, const char *key,
                                  char **err)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && list && list[i]; i++) {
        char low[EGRESS_HOST_MAX + 16];
        snprintf(low, sizeof(low), "%s", list[i]);
        for (char *p = low; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (strlen(list[i]) >= sizeof(low) || !egress_pattern_valid(low)) {
            *err = util_strdupf("the config file's [%s] %s: \"%.80s\" is not a pattern (a host, "
                                "*.domain, *, an address, optionally :port; docs/egress.md)",
                                section, key, list[i]);
            json_decref(arr);
            return NULL;
        }
        json_array_append_new(arr, json_string(low));
    }
    return arr;
}

int egress_load_config(struct engine *eng, const struct engine_options *opt, char **err)
{
    if (!(eng->egress_allow = egress_config_list(opt->egress_allow, "egress", "allow", err)) ||
        !(eng->egress_deny = egress_config_list(opt->egress_deny, "egress", "deny", err)) ||
        !(eng->egress_presets = json_object()))
        goto fail;
    for (size_t i = 0; i < opt->negress_presets; i++) {
        char section[128];
        snprintf(section, sizeof(section), "egress.presets.%.100s", opt->egress_presets[i].name);
        json_t *list = egress_config_list(opt->egress_presets[i].allow, section, "allow", err);
        if (!list || json_object_set_new(eng->egress_presets, opt->egress_presets[i].name, list))
            goto fail;
    }
    eng->egress_ask = opt->egress_ask < 0 ? 1 : opt->egress_ask;
    return 0;
fail:
    if (!*err)
        *err = strdup("out of memory");
    return -1;
}

int egress_init(struct engine *eng)
{
    eng->egress = calloc(1, sizeof(*eng->egress));
    if (!eng->egress)
        return -1;
    store_egress_interrupt(eng->store, util_now(), NULL);
    for (struct session *s = eng->sessions; s; s = s->next)
        egress_session_sync(s);
    return 0;
}

void egress_shutdown(struct engine *eng)
{
    struct egress *eg = eng->egress;
    if (!eg)
        return;
    while (eg->sites)
        egress_site_close(eg->sites, "the engine stopped");
    free(eg);
    eng->egress = NULL;
}

/* ---- the API ---- */

void egress_route_list(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    if (!api_session_known(r))
        return;
    double limit;
    if (api_query_number(r, "limit", 1, 10000, EGRESS_LIST_DEFAULT, &limit) < 0)
        return;
    const char *id = api_req_param(r, 0);
    struct session *s = session_find_ref(eng, id);
    const char *sid = s ? s->id : id;
    json_t *o = store_egress_list(eng->store, sid, (int)limit);
    struct egress_site *site = egress_site_find(eng, sid);
    json_object_set_new(o, "session", json_string(sid));
    json_object_set_new(o, "open", json_integer(site ? site->n_conns : 0));
    json_object_set_new(o, "rules", store_egress_rules(eng->store, sid));
    api_reply_json(r, 200, o);
}
