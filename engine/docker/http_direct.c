/* The executor channel's requests without libcurl: HTTP/1.1 on a sandbox's unix socket, with
 * kept connections, straight on the engine loop.
 *
 * Every action is two or three of these requests, and libcurl's general machinery (its
 * connection cache checks, a poll before each request, socket callbacks that add and remove
 * the socket from epoll, clock reads by the dozen) was a seventh of the engine's CPU an
 * action. Here a kept connection stays in epoll, level-triggered, for EPOLLIN: while idle
 * that means the executor closed it (or sent what no request asked for), and it is dropped;
 * while a request runs, the reply. A request is one send; a reply is read as it comes.
 *
 * The peer is hostile (root in the sandbox can serve anything at that socket): every length
 * is bounded, a malformed reply fails its request with a clear error and its connection is
 * closed, and nothing it sends is kept beyond the request. New connections are opened as
 * libcurl's were: the socket found without following links (unix_peer_open), connected through
 * its O_PATH fd, and checked (peer_check) before anything is sent. */
#include "engine/base/loop.h"
#include "engine/base/unix_peer.h"
#include "engine/docker/http_internal.h"

#include "common/hash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A reply's head, and one chunk-size or trailer line, may be this long. */
#define HD_HEAD_MAX (64 * 1024)
#define HD_LINE_MAX 1024
/* Kept idle connections: per socket, and in all (libcurl kept 1,024). */
#define HD_IDLE_PER_SOCKET 8
#define HD_IDLE_MAX 1024
/* Deadlines are checked this often while requests are in flight. */
#define HD_SWEEP_MS 100
#define HD_BUCKETS 256

enum hd_state {
    HD_HEAD,       /* the status line and headers */
    HD_LEN,        /* a Content-Length body */
    HD_CHUNK_SIZE, /* a chunk's size line */
    HD_CHUNK_DATA,
    HD_CHUNK_END, /* the CRLF after a chunk's data */
    HD_TRAILER,   /* trailer lines, up to the empty one */
    HD_UNTIL_EOF, /* no length: the body ends with the connection */
    HD_DONE,
};

struct hd_pool;

struct hd_conn {
    struct http_direct *d;
    struct hd_pool *pool;
    struct hd_conn *next_idle;
    struct http_call *call; /* the request on it; NULL while idle */
    int fd;
    bool out_watched; /* EPOLLOUT asked for: the request did not go in one send */
    bool served;      /* answered a request before: a failure before any reply byte is retried */
};

/* The kept connections to one socket path. */
struct hd_pool {
    struct hd_pool *next;
    char *path;
    struct hd_conn *idle;
    size_t nidle;
    size_t nconns; /* idle or busy: the pool goes with its last one (sessions come and go) */
};

/* A header value handed out by http_direct_header, kept until the call is freed. */
struct hd_value {
    struct hd_value *next;
    char s[];
};

struct hd_call {
    struct http_direct *d;
    struct hd_conn *conn;
    char *path, *peer_arg;
    int (*peer_check)(int fd, const char *arg, char *err, size_t errlen);
    bool fresh, close_after, head_only, retried;
    /* While http_direct_start runs, a failure is not reported at once (the caller has no handle
     * yet): it waits for the loop's next turn (early). */
    bool starting;
    struct loop_timer *early;
    char *early_why;
    bool early_connect, early_refused;
    struct hd_value *values;
    size_t head_scan; /* bytes of raw already searched for the head's end */
    struct buf out;   /* the request */
    size_t sent;
    struct buf raw; /* reply bytes read and not yet parsed */
    struct buf head;
    enum hd_state state;
    long status;
    unsigned long long left; /* of the Content-Length body or the chunk */
    bool keep, streaming, got_any;
    double started, last_byte;
    long timeout_ms, idle_ms;
};

struct http_direct {
    struct loop *loop;
    struct hd_pool *pools[HD_BUCKETS];
    struct http_call *calls; /* in flight */
    size_t nidle;
    struct loop_timer *sweep;
};

bool http_direct_takes(const struct http_request *req)
{
    return req->unix_socket && req->peer_check && !req->tls && strncmp(req->url, "http://", 7) == 0;
}

struct http_direct *http_direct_new(struct loop *l)
{
    struct http_direct *d = calloc(1, sizeof(*d));
    if (d)
        d->loop = l;
    return d;
}

/* ---- connections ---- */

static struct hd_pool **hd_bucket(struct http_direct *d, const char *path)
{
    return &d->pools[hash_fnv1a(path, strlen(path)) % HD_BUCKETS];
}

/* A pool without connections is dropped. */
static void hd_pool_drop_empty(struct http_direct *d, struct hd_pool *pool)
{
    if (pool->nconns)
        return;
    for (struct hd_pool **pp = hd_bucket(d, pool->path); *pp; pp = &(*pp)->next)
        if (*pp == pool) {
            *pp = pool->next;
            break;
        }
    free(pool->path);
    free(pool);
}

static void hd_conn_close(struct hd_conn *c)
{
    loop_del_fd(c->d->loop, c->fd);
    close(c->fd);
    c->pool->nconns--;
    hd_pool_drop_empty(c->d, c->pool);
    free(c);
}

static struct hd_pool *hd_pool_find(struct http_direct *d, const char *path, bool make)
{
    struct hd_pool **bucket = hd_bucket(d, path);
    for (struct hd_pool *p = *bucket; p; p = p->next)
        if (strcmp(p->path, path) == 0)
            return p;
    if (!make)
        return NULL;
    struct hd_pool *p = calloc(1, sizeof(*p));
    if (!p || !(p->path = strdup(path))) {
        free(p);
        return NULL;
    }
    p->next = *bucket;
    *bucket = p;
    return p;
}

/* Takes c out of its pool's idle list. */
static void hd_idle_remove(struct hd_conn *c)
{
    struct hd_pool *p = c->pool;
    for (struct hd_conn **pp = &p->idle; *pp; pp = &(*pp)->next_idle)
        if (*pp == c) {
            *pp = c->next_idle;
            c->next_idle = NULL;
            p->nidle--;
            c->d->nidle--;
            return;
        }
}

static void hd_on_fd(int fd, uint32_t events, void *ud);

/* A finished request's connection: kept for the next one to its socket, or closed. */
static void hd_conn_release(struct hd_conn *c, bool keep)
{
    struct http_direct *d = c->d;
    c->call = NULL;
    if (c->out_watched) {
        keep = keep && loop_mod_fd(d->loop, c->fd, EPOLLIN) == 0;
        c->out_watched = false;
    }
    if (!keep || c->pool->nidle >= HD_IDLE_PER_SOCKET || d->nidle >= HD_IDLE_MAX) {
        hd_conn_close(c);
        return;
    }
    c->served = true;
    c->next_idle = c->pool->idle;
    c->pool->idle = c;
    c->pool->nidle++;
    d->nidle++;
}

/* A new connection to the call's socket, checked; NULL with why in err (*refused: the peer
 * check or the path refused it). */
static struct hd_conn *hd_connect(struct hd_call *k, struct hd_pool *pool, bool *refused, char *err,
                                  size_t errlen)
{
    *refused = false;
    int pfd = unix_peer_open(k->path, refused, err, errlen);
    if (pfd < 0)
        return NULL;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        close(pfd);
        return NULL;
    }
    /* A unix socket connects at once or not at all (EAGAIN: its backlog is full). */
    int rc = connect(fd, (struct sockaddr *)&sa,
                     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1));
    int e = errno;
    close(pfd);
    if (rc < 0) {
        snprintf(err, errlen, "cannot connect to %s: %s", k->path,
                 e == EAGAIN ? "the listener's backlog is full" : strerror(e));
        close(fd);
        return NULL;
    }
    int pc = k->peer_check(fd, k->peer_arg, err, errlen);
    if (pc < 0) {
        *refused = pc == -1;
        close(fd);
        return NULL;
    }
    struct hd_conn *c = calloc(1, sizeof(*c));
    if (!c || loop_add_fd(k->d->loop, fd, EPOLLIN, hd_on_fd, c) < 0) {
        snprintf(err, errlen, "out of memory");
        free(c);
        close(fd);
        return NULL;
    }
    c->d = k->d;
    c->pool = pool;
    c->fd = fd;
    pool->nconns++;
    return c;
}

/* ---- requests ---- */

static void hd_sweep_arm(struct http_direct *d);

static void hd_call_free(struct http_call *call)
{
    struct hd_call *k = call->direct;
    if (k->early)
        loop_timer_cancel(k->d->loop, k->early);
    free(k->early_why);
    while (k->values) {
        struct hd_value *v = k->values;
        k->values = v->next;
        free(v);
    }
    free(k->path);
    free(k->peer_arg);
    buf_free(&k->out);
    buf_free(&k->raw);
    buf_free(&k->head);
    free(k);
    buf_free(&call->in);
    free(call);
}

/* Ends the call: its connection kept (a whole reply and nothing after it) or closed, then the
 * callback with r, then the call freed. */
static void hd_finish(struct http_call *call, struct http_result *r, bool keep)
{
    struct hd_call *k = call->direct;
    http_call_unlink(&k->d->calls, call);
    if (k->conn)
        hd_conn_release(k->conn, keep && k->keep && !k->close_after && k->state == HD_DONE &&
                                     k->raw.len == 0 && k->sent == k->out.len);
    k->conn = NULL;
    call->fn(r, call->ud);
    hd_call_free(call);
}

static void hd_on_early(void *ud);

static void hd_fail(struct http_call *call, const char *why, bool connect_failed, bool peer_refused,
                    bool timed_out)
{
    struct hd_call *k = call->direct;
    if (k->starting) {
        if (k->conn)
            hd_conn_close(k->conn);
        k->conn = NULL;
        free(k->early_why);
        k->early_why = strdup(why);
        k->early_connect = connect_failed;
        k->early_refused = peer_refused;
        return;
    }
    struct http_result r = {.status = -1,
                            .body = call->in.data ? call->in.data : "",
                            .len = call->in.len,
                            .error = why,
                            .connect_failed = connect_failed,
                            .peer_refused = peer_refused,
                            .timed_out = timed_out};
    hd_finish(call, &r, false);
}

static void hd_failf(struct http_call *call, const char *fmt, const char *arg)
{
    char why[600];
    snprintf(why, sizeof(why), fmt, arg);
    hd_fail(call, why, false, false, false);
}

static void hd_succeed(struct http_call *call)
{
    struct hd_call *k = call->direct;
    struct http_result r = {.status = k->status,
                            .body = call->in.data ? call->in.data : "",
                            .len = call->in.len,
                            .priv = k,
                            .head = k->head.data ? k->head.data : ""};
    hd_finish(call, &r, true);
}

static int hd_send(struct http_call *call);

/* Puts the call on a connection (a kept one unless it wants a fresh one) and sends it. 0, or
 * -1 when it already failed (the callback ran). */
static int hd_attach(struct http_call *call)
{
    struct hd_call *k = call->direct;
    struct hd_pool *pool = hd_pool_find(k->d, k->path, true);
    if (!pool) {
        hd_fail(call, "out of memory", false, false, false);
        return -1;
    }
    struct hd_conn *c = k->fresh ? NULL : pool->idle;
    if (c) {
        hd_idle_remove(c);
    } else {
        char err[512] = "";
        bool refused = false;
        if (!(c = hd_connect(k, pool, &refused, err, sizeof(err)))) {
            hd_pool_drop_empty(k->d, pool);
            hd_fail(call, err, true, refused, false);
            return -1;
        }
    }
    c->call = call;
    k->conn = c;
    k->sent = 0;
    return hd_send(call);
}

/* The request died on a connection that had served one before, before any byte of a reply:
 * the executor closed it meanwhile (its idle timeout), so the request never ran. Once, on a new
 * connection, as libcurl did. 1 when retried (or failed in the retry), 0 when it may not. */
static int hd_retry(struct http_call *call)
{
    struct hd_call *k = call->direct;
    if (k->retried || k->got_any || !k->conn || !k->conn->served)
        return 0;
    k->retried = true;
    hd_conn_close(k->conn);
    k->conn = NULL;
    k->fresh = true;
    hd_attach(call); /* may end the call: k is not touched after it */
    return 1;
}

static int hd_send(struct http_call *call)
{
    struct hd_call *k = call->direct;
    struct hd_conn *c = k->conn;
    while (k->sent < k->out.len) {
        ssize_t n =
            send(c->fd, k->out.data + k->sent, k->out.len - k->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            k->sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->out_watched && loop_mod_fd(k->d->loop, c->fd, EPOLLIN | EPOLLOUT) < 0) {
                hd_fail(call, "cannot watch the executor's connection", false, false, false);
                return -1;
            }
            c->out_watched = true;
            return 0;
        }
        if (hd_retry(call))
            return -1;
        hd_failf(call, "cannot send to the executor: %s", strerror(errno));
        return -1;
    }
    if (c->out_watched) {
        loop_mod_fd(k->d->loop, c->fd, EPOLLIN);
        c->out_watched = false;
    }
    return 0;
}

/* ---- the reply ---- */

/* The value of header name in head (lines after the status line), or NULL; *len its length. */
static const char *hd_header_find(const char *head, size_t head_len, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    const char *p = memchr(head, '\n', head_len), *end = head + head_len;
    while (p && ++p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = eol ? eol : end;
        if (line_end > p && line_end[-1] == '\r')
            line_end--;
        if ((size_t)(line_end - p) > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl + 1;
            while (v < line_end && (*v == ' ' || *v == '\t'))
                v++;
            const char *ve = line_end;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            *len = (size_t)(ve - v);
            return v;
        }
        p = eol;
    }
    return NULL;
}

const char *http_direct_header(const struct http_result *r, const char *name)
{
    /* Each value is a copy of its own, kept with the call (for the callback's length). */
    struct hd_call *k = (struct hd_call *)r->priv;
    size_t len;
    const char *v = hd_header_find(r->head, strlen(r->head), name, &len);
    struct hd_value *val = v && k ? malloc(sizeof(*val) + len + 1) : NULL;
    if (!val)
        return NULL;
    memcpy(val->s, v, len);
    val->s[len] = '\0';
    val->next = k->values;
    k->values = val;
    return val->s;
}

static bool hd_value_is(const char *v, size_t len, const char *want)
{
    return len == strlen(want) && strncasecmp(v, want, len) == 0;
}

/* Digits only, no overflow: a Content-Length or a chunk size (base 10 or 16). */
static int hd_parse_number(const char *s, size_t len, int base, unsigned long long *out)
{
    unsigned long long v = 0;
    if (len == 0 || len > 16)
        return -1;
    for (size_t i = 0; i < len; i++) {
        int dgt;
        char ch = s[i];
        if (ch >= '0' && ch <= '9')
            dgt = ch - '0';
        else if (base == 16 && ch >= 'a' && ch <= 'f')
            dgt = ch - 'a' + 10;
        else if (base == 16 && ch >= 'A' && ch <= 'F')
            dgt = ch - 'A' + 10;
        else
            return -1;
        v = v * (unsigned)base + (unsigned)dgt;
    }
    *out = v;
    return 0;
}

/* The head in k->head: status and how the body is framed. NULL, or why it is refused. */
static const char *hd_parse_head(struct hd_call *k)
{
    const char *h = k->head.data;
    size_t hl = k->head.len;
    if (hl < 12 || strncmp(h, "HTTP/1.", 7) != 0 || (h[7] != '0' && h[7] != '1') || h[8] != ' ' ||
        h[9] < '1' || h[9] > '5' || h[10] < '0' || h[10] > '9' || h[11] < '0' || h[11] > '9' ||
        (hl > 12 && h[12] != ' ' && h[12] != '\r'))
        return "the executor's reply has no HTTP/1 status line";
    k->status = (h[9] - '0') * 100 + (h[10] - '0') * 10 + (h[11] - '0');
    k->keep = h[7] == '1';
    size_t len, te_len, cl_len;
    const char *v = hd_header_find(h, hl, "Connection", &len);
    if (v && hd_value_is(v, len, "close"))
        k->keep = false;
    else if (v && hd_value_is(v, len, "keep-alive"))
        k->keep = true;
    const char *te = hd_header_find(h, hl, "Transfer-Encoding", &te_len);
    const char *cl = hd_header_find(h, hl, "Content-Length", &cl_len);
    if (te) {
        if (!hd_value_is(te, te_len, "chunked"))
            return "the executor's reply has a transfer coding other than chunked";
        k->state = HD_CHUNK_SIZE;
    } else if (cl) {
        unsigned long long n;
        if (hd_parse_number(cl, cl_len, 10, &n) < 0)
            return "the executor's reply has a bad Content-Length";
        k->left = n;
        k->state = n ? HD_LEN : HD_DONE;
    } else {
        k->keep = false;
        k->state = HD_UNTIL_EOF;
    }
    if (k->head_only || k->status == 204 || k->status == 304)
        k->state = HD_DONE;
    return NULL;
}

/* Body bytes: to the receiver (a success reply to a streaming request) or buffered. NULL, or
 * why the call fails. */
static const char *hd_body(struct http_call *call, const char *p, size_t n)
{
    struct hd_call *k = call->direct;
    if (n == 0)
        return NULL;
    if (k->streaming)
        return call->on_data(p, n, call->ud) == 0 ? NULL : "aborted by the receiver";
    if (call->in.len + n > call->max_body)
        return "the reply is larger than the engine takes";
    return buf_append(&call->in, p, n) < 0 ? "out of memory" : NULL;
}

/* One line (CRLF or LF ended) from k->raw at *pos: its length without the ending, or -1 when
 * it is not all there yet, -2 when it is longer than HD_LINE_MAX. */
static long hd_line(struct hd_call *k, size_t pos, size_t *next)
{
    const char *s = k->raw.data + pos;
    size_t avail = k->raw.len - pos;
    const char *nl = memchr(s, '\n', avail < HD_LINE_MAX ? avail : HD_LINE_MAX);
    if (!nl)
        return avail >= HD_LINE_MAX ? -2 : -1;
    size_t len = (size_t)(nl - s);
    *next = pos + len + 1;
    if (len && s[len - 1] == '\r')
        len--;
    return (long)len;
}

/* Parses what k->raw holds. NULL (more is needed, or done), or why the call fails. */
static const char *hd_parse(struct http_call *call)
{
    struct hd_call *k = call->direct;
    size_t pos = 0;
    const char *why = NULL;
    while (!why && pos < k->raw.len && k->state != HD_DONE) {
        const char *s = k->raw.data + pos;
        size_t avail = k->raw.len - pos, next = 0;
        long ll;
        switch (k->state) {
        case HD_HEAD: {
            /* From where the last search stopped (less the 3 bytes an end may straddle), so a
             * head trickled a byte at a time is not searched from its start each time. */
            size_t from = k->head_scan > 3 ? k->head_scan - 3 : 0;
            size_t upto = avail < HD_HEAD_MAX + 4 ? avail : HD_HEAD_MAX + 4;
            const char *end = from < upto ? memmem(s + from, upto - from, "\r\n\r\n", 4) : NULL;
            if (!end) {
                k->head_scan = upto;
                if (avail >= HD_HEAD_MAX + 4)
                    why = "the executor's reply head is longer than 64 KiB";
                goto more;
            }
            k->head_scan = 0;
            k->head.len = 0;
            if (buf_append(&k->head, s, (size_t)(end - s) + 2) < 0)
                return "out of memory";
            pos += (size_t)(end - s) + 4;
            if ((why = hd_parse_head(k)))
                break;
            if (k->status < 200) { /* 100 Continue and the like: the reply follows */
                k->state = HD_HEAD;
                continue;
            }
            k->streaming = call->on_data && k->status < 300;
            break;
        }
        case HD_LEN:
        case HD_CHUNK_DATA: {
            size_t n = avail < k->left ? avail : (size_t)k->left;
            why = hd_body(call, s, n);
            pos += n;
            k->left -= n;
            if (k->left == 0)
                k->state = k->state == HD_LEN ? HD_DONE : HD_CHUNK_END;
            break;
        }
        case HD_UNTIL_EOF:
            why = hd_body(call, s, avail);
            pos += avail;
            break;
        case HD_CHUNK_SIZE: {
            ll = hd_line(k, pos, &next);
            if (ll == -1)
                goto more;
            size_t sz_len = ll < 0 ? 0 : (size_t)ll;
            const char *semi = ll < 0 ? NULL : memchr(s, ';', sz_len);
            if (semi)
                sz_len = (size_t)(semi - s);
            while (sz_len && (s[sz_len - 1] == ' ' || s[sz_len - 1] == '\t'))
                sz_len--;
            unsigned long long n;
            if (ll < 0 || hd_parse_number(s, sz_len, 16, &n) < 0) {
                why = "the executor's reply has a bad chunk size";
                break;
            }
            pos = next;
            k->left = n;
            k->state = n ? HD_CHUNK_DATA : HD_TRAILER;
            break;
        }
        case HD_CHUNK_END:
            ll = hd_line(k, pos, &next);
            if (ll == -1)
                goto more;
            if (ll != 0) {
                why = "the executor's reply has a chunk longer than its size";
                break;
            }
            pos = next;
            k->state = HD_CHUNK_SIZE;
            break;
        case HD_TRAILER:
            ll = hd_line(k, pos, &next);
            if (ll == -1)
                goto more;
            if (ll == -2) {
                why = "the executor's reply has a trailer line longer than 1 KiB";
                break;
            }
            pos = next;
            if (ll == 0)
                k->state = HD_DONE;
            break;
        case HD_DONE:
            break;
        }
    }
more:
    buf_consume(&k->raw, pos);
    return why;
}

static void hd_read(struct http_call *call)
{
    struct hd_call *k = call->direct;
    char tmp[65536];
    ssize_t n = recv(k->conn->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        int e = n < 0 ? errno : 0;
        if (hd_retry(call))
            return;
        if (k->state == HD_UNTIL_EOF) {
            k->state = HD_DONE;
            hd_succeed(call);
            return;
        }
        if (e)
            hd_failf(call, "the executor's connection failed: %s", strerror(e));
        else
            hd_fail(call, "the executor closed the connection before its reply ended", false, false,
                    false);
        return;
    }
    k->got_any = true;
    k->last_byte = loop_now_ms();
    if (buf_append(&k->raw, tmp, (size_t)n) < 0) {
        hd_fail(call, "out of memory", false, false, false);
        return;
    }
    const char *why = hd_parse(call);
    if (why)
        hd_fail(call, why, false, false, false);
    else if (k->state == HD_DONE)
        hd_succeed(call);
}

static void hd_on_fd(int fd, uint32_t events, void *ud)
{
    struct hd_conn *c = ud;
    (void)fd;
    if (!c->call) {
        /* Idle: the executor closed it, or sent what nobody asked for. */
        hd_idle_remove(c);
        hd_conn_close(c);
        return;
    }
    struct http_call *call = c->call;
    if ((events & EPOLLOUT) && hd_send(call) < 0)
        return;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        hd_read(call);
}

/* A failure while the call started, reported now. */
static void hd_on_early(void *ud)
{
    struct http_call *call = ud;
    struct hd_call *k = call->direct;
    k->early = NULL;
    hd_fail(call, k->early_why, k->early_connect, k->early_refused, false);
}

/* ---- deadlines ---- */

static void hd_on_sweep(void *ud)
{
    struct http_direct *d = ud;
    d->sweep = NULL;
    /* One at a time from the start: a callback may end or start other calls. */
    for (;;) {
        double now = loop_now_ms();
        struct http_call *call = d->calls;
        char why[128] = "";
        for (; call; call = call->next) {
            struct hd_call *k = call->direct;
            if (k->timeout_ms > 0 && now >= k->started + (double)k->timeout_ms) {
                snprintf(why, sizeof(why), "Operation timed out after %ld milliseconds",
                         k->timeout_ms);
                break;
            }
            if (k->idle_ms > 0 && now >= k->last_byte + (double)k->idle_ms) {
                snprintf(why, sizeof(why), "no byte of the reply came for %ld milliseconds",
                         k->idle_ms);
                break;
            }
        }
        if (!call)
            break;
        hd_fail(call, why, false, false, true);
    }
    hd_sweep_arm(d);
}

static void hd_sweep_arm(struct http_direct *d)
{
    if (!d->sweep && d->calls)
        d->sweep = loop_timer_add(d->loop, HD_SWEEP_MS, hd_on_sweep, d);
}

/* ---- the interface ---- */

/* The target of an http:// URL: what follows the host, "/" when nothing does. */
static const char *hd_target(const char *url)
{
    const char *p = strchr(url + 7, '/');
    return p ? p : "/";
}

static int hd_build(struct hd_call *k, const struct http_request *req)
{
    const char *host = req->url + 7;
    size_t host_len = strcspn(host, "/");
    int rc = buf_printf(&k->out, "%s %s HTTP/1.1\r\nHost: %.*s\r\n", req->method,
                        hd_target(req->url), (int)host_len, host);
    for (const char *const *hl = req->headers; rc == 0 && hl && *hl; hl++)
        rc = buf_printf(&k->out, "%s\r\n", *hl);
    if (rc == 0 && req->body)
        rc = buf_printf(&k->out, "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n",
                        req->content_type ? req->content_type : "application/json", req->body_len);
    else if (rc == 0 && strcmp(req->method, "POST") == 0)
        rc = buf_append_str(&k->out, "Content-Length: 0\r\n\r\n");
    else if (rc == 0)
        rc = buf_append_str(&k->out, "\r\n");
    if (rc == 0 && req->body)
        rc = buf_append(&k->out, req->body, req->body_len);
    return rc;
}

struct http_call *http_direct_start(struct http_direct *d, const struct http_request *req,
                                    http_done_fn fn, void *ud)
{
    /* A method or header with a line break would make a second request of this one. */
    if (strpbrk(req->method, "\r\n ") || strpbrk(req->url, "\r\n "))
        return NULL;
    for (const char *const *hl = req->headers; hl && *hl; hl++)
        if (strpbrk(*hl, "\r\n"))
            return NULL;
    struct http_call *call = calloc(1, sizeof(*call));
    struct hd_call *k = call ? calloc(1, sizeof(*k)) : NULL;
    if (!k) {
        free(call);
        return NULL;
    }
    call->direct = k;
    call->fn = fn;
    call->ud = ud;
    call->on_data = req->on_data;
    call->max_body = req->max_body ? req->max_body : HTTP_BODY_MAX;
    k->d = d;
    k->path = strdup(req->unix_socket);
    k->peer_arg = strdup(req->peer_arg ? req->peer_arg : "");
    k->peer_check = req->peer_check;
    k->fresh = k->close_after = req->fresh_connect;
    k->head_only = strcmp(req->method, "HEAD") == 0;
    k->timeout_ms = req->timeout_ms;
    k->idle_ms = req->idle_timeout_ms > 0 && req->idle_timeout_ms < 1000 ? 1000
                 : req->idle_timeout_ms > 0 ? (req->idle_timeout_ms + 999) / 1000 * 1000
                                            : 0;
    k->started = k->last_byte = loop_now_ms();
    if (!k->path || !k->peer_arg || hd_build(k, req) < 0) {
        hd_call_free(call);
        return NULL;
    }
    http_call_link(&d->calls, call);
    hd_sweep_arm(d);
    /* Started now, as libcurl would on the loop's next turn: a failure calls back from here,
     * which the callers allow (it is never the caller's own frame that is freed). */
    k->starting = true;
    hd_attach(call);
    k->starting = false;
    if (k->early_why && !(k->early = loop_timer_add(d->loop, 0, hd_on_early, call))) {
        http_call_unlink(&d->calls, call);
        hd_call_free(call);
        return NULL;
    }
    return call;
}

void http_direct_cancel(struct http_direct *d, struct http_call *call)
{
    struct hd_call *k = call->direct;
    http_call_unlink(&d->calls, call);
    if (k->conn) /* mid-request: the connection cannot carry another */
        hd_conn_close(k->conn);
    k->conn = NULL;
    hd_call_free(call);
}

void http_direct_cancel_all(struct http_direct *d)
{
    while (d && d->calls)
        hd_fail(d->calls, "cancelled: engine shutting down", false, false, false);
}

void http_direct_free(struct http_direct *d)
{
    if (!d)
        return;
    http_direct_cancel_all(d);
    /* Every connection is idle now; a pool goes with its last one. */
    for (size_t b = 0; b < HD_BUCKETS; b++)
        while (d->pools[b]) {
            struct hd_conn *c = d->pools[b]->idle;
            hd_idle_remove(c);
            hd_conn_close(c);
        }
    if (d->sweep)
        loop_timer_cancel(d->loop, d->sweep);
    free(d);
}
