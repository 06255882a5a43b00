/* The terminal connection (client_term.h): one non-blocking unix socket, a small state
 * machine for the upgrade (request out, reply head in, an error body when refused), then a
 * byte pump with an outgoing buffer so a slow engine never blocks the caller's loop. */
#include "client/client_term.h"

#include "client/client.h"
#include "client/client_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CLIENT_TERM_HEAD_MAX (16 * 1024)  /* a reply head longer than this is not ours */
#define CLIENT_TERM_BODY_MAX (64 * 1024)  /* an error body: its message is all we want */
#define CLIENT_TERM_READ_MAX (256 * 1024) /* per pump: the loop's other work goes on */

struct client_term {
    int fd;
    CURL *curl;             /* a remote engine's TLS connection (bytes through it), else NULL */
    struct client_raw conn; /* that connection, made on the caller's loop (conn.h is curl) */
    enum client_term_state state;
    bool connecting; /* connect() still in progress */
    bool shut_wr;    /* half-close once out is empty */
    char tid[CLIENT_TERM_ID_MAX];
    char *error;
    char code[40]; /* the refusal's error code, "" when none */
    /* out: the request first, then the sandbox's input; req_left: request bytes not yet
     * written (nothing after it goes out before the 101) */
    struct buf out;
    size_t req_left;
    /* the reply until the upgrade is decided */
    struct buf in;
};

/* ---- the reply head ---- */

/* The value of header name in head[0..len) (lines after the status line), or NULL; *vlen its
 * length with surrounding blanks cut. */
static const char *client_term_header(const char *head, size_t len, const char *name, size_t *vlen)
{
    size_t nlen = strlen(name);
    const char *p = memchr(head, '\n', len);
    while (p && (size_t)(p + 1 - head) < len) {
        const char *line = p + 1;
        const char *eol = memchr(line, '\n', len - (size_t)(line - head));
        if (!eol)
            break;
        if ((size_t)(eol - line) > nlen && line[nlen] == ':' &&
            strncasecmp(line, name, nlen) == 0) {
            const char *v = line + nlen + 1, *e = eol;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
                e--;
            *vlen = (size_t)(e - v);
            return v;
        }
        p = eol;
    }
    return NULL;
}

int client_term_parse_reply(const char *buf, size_t len, struct client_term_reply *out)
{
    if (!len)
        return 0;
    const char *end = NULL;
    for (size_t i = 0; i + 3 < len && !end; i++)
        if (buf[i] == '\r' && memcmp(buf + i, "\r\n\r\n", 4) == 0)
            end = buf + i;
    if (len >= 5 && memcmp(buf, "HTTP/", 5) != 0)
        return -1;
    if (len < 5 && memcmp(buf, "HTTP/", len) != 0)
        return -1;
    if (!end)
        return len > CLIENT_TERM_HEAD_MAX ? -1 : 0;
    size_t head_len = (size_t)(end - buf) + 4;
    if (head_len > CLIENT_TERM_HEAD_MAX)
        return -1;
    /* "HTTP/1.1 101 Switching Protocols" */
    const char *sp = memchr(buf, ' ', head_len);
    if (!sp || sp + 4 > end || sp[1] < '1' || sp[1] > '5' || sp[2] < '0' || sp[2] > '9' ||
        sp[3] < '0' || sp[3] > '9' || (sp + 4 < end && sp[4] != ' ' && sp[4] != '\r'))
        return -1;
    memset(out, 0, sizeof(*out));
    out->status = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
    out->head_len = head_len;
    out->content_length = -1;
    size_t vlen;
    const char *v = client_term_header(buf, head_len, "X-Paddock-Terminal", &vlen);
    if (v) {
        /* the id goes into URL paths: hex and dashes only, else none */
        size_t ok = 0;
        while (ok < vlen && (strchr("0123456789abcdefABCDEF-", v[ok]) && v[ok]))
            ok++;
        if (ok == vlen && vlen && vlen < sizeof(out->tid)) {
            memcpy(out->tid, v, vlen);
            out->tid[vlen] = '\0';
        }
    }
    v = client_term_header(buf, head_len, "Content-Length", &vlen);
    if (v && vlen && vlen < 12) {
        char num[16];
        memcpy(num, v, vlen);
        num[vlen] = '\0';
        char *e;
        long n = strtol(num, &e, 10);
        if (*e == '\0' && n >= 0)
            out->content_length = n;
    }
    return 1;
}

/* ---- the connection ---- */

static void client_term_fail(struct client_term *t, const char *fmt, const char *arg)
{
    free(t->error);
    if (asprintf(&t->error, fmt, arg) < 0)
        t->error = NULL;
    t->state = CLIENT_TERM_FAILED;
}

/* Queue the upgrade request (hdrs: its Host and credential lines) on t; t, or NULL with *err
 * after closing it. */
static struct client_term *client_term_request(struct client_term *t, const char *path,
                                               const char *hdrs, char **err)
{
    char *req = NULL;
    int n = asprintf(&req,
                     "POST %s HTTP/1.1\r\n%sConnection: Upgrade\r\nUpgrade: tcp\r\n"
                     "Content-Length: 0\r\n\r\n",
                     path, hdrs);
    if (n < 0 || buf_append(&t->out, req, (size_t)n) < 0) {
        if (n >= 0)
            free(req);
        *err = strdup("out of memory");
        client_term_close(t);
        return NULL;
    }
    explicit_bzero(req, (size_t)n);
    free(req);
    t->req_left = (size_t)n;
    t->state = CLIENT_TERM_CONNECTING;
    return t;
}

struct client_term *client_term_open(const char *socket_path, const char *path, char **err)
{
    *err = NULL;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof(sa.sun_path)) {
        if (asprintf(err, "the socket path %s is too long", socket_path) < 0)
            *err = NULL;
        return NULL;
    }
    strcpy(sa.sun_path, socket_path);
    struct client_term *t = calloc(1, sizeof(*t));
    if (!t) {
        *err = strdup("out of memory");
        return NULL;
    }
    t->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int rc = t->fd < 0 ? -1 : connect(t->fd, (struct sockaddr *)&sa, sizeof(sa));
    if (rc < 0 && (t->fd < 0 || (errno != EINPROGRESS && errno != EINTR))) {
        /* EAGAIN on a unix socket: the engine's backlog is full; say so like any error */
        if (asprintf(err, "engine at %s: %s", socket_path, strerror(errno)) < 0)
            *err = NULL;
        client_term_close(t);
        return NULL;
    }
    t->connecting = rc < 0; /* in progress: writable once connected */
    return client_term_request(t, path, "Host: paddock\r\n", err);
}

struct client_term *client_term_open_on(struct client *c, const char *path, char **err)
{
    if (!client_is_remote(c))
        return client_term_open(client_socket(c), path, err);
    *err = NULL;
    struct client_term *t = calloc(1, sizeof(*t));
    if (!t) {
        *err = strdup("out of memory");
        return NULL;
    }
    t->fd = -1;
    if (client_raw_start(c, &t->conn, err) < 0) {
        client_term_close(t);
        return NULL;
    }
    t->curl = t->conn.h;
    char *hdrs = client_raw_headers(c);
    if (!hdrs) {
        *err = strdup("out of memory");
        client_term_close(t);
        return NULL;
    }
    t = client_term_request(t, path, hdrs, err);
    explicit_bzero(hdrs, strlen(hdrs));
    free(hdrs);
    return t;
}

void client_term_close(struct client_term *t)
{
    if (!t)
        return;
    if (t->conn.h)
        client_raw_end(&t->conn); /* it owns the socket */
    else if (t->fd >= 0)
        close(t->fd);
    if (t->out.data)
        explicit_bzero(t->out.data, t->out.len); /* it may hold the credentials */
    free(t->out.data);
    free(t->in.data);
    free(t->error);
    free(t);
}

int client_term_fd(const struct client_term *t)
{
    if (!t || t->state > CLIENT_TERM_OPEN)
        return -1;
    return t->conn.connecting ? client_raw_poll_fd(&t->conn) : t->fd;
}

short client_term_events(const struct client_term *t)
{
    short ev = POLLIN;
    if (t->conn.connecting) { /* what curl waits for in the handshake */
        client_raw_poll(&t->conn, &ev);
        return ev;
    }
    if (t->connecting || (t->state == CLIENT_TERM_CONNECTING ? t->req_left : t->out.len))
        ev |= POLLOUT;
    return ev;
}

enum client_term_state client_term_state(const struct client_term *t)
{
    return t->state;
}

const char *client_term_id(const struct client_term *t)
{
    return t->tid;
}

const char *client_term_error(const struct client_term *t)
{
    return t->error;
}

const char *client_term_error_code(const struct client_term *t)
{
    return t->code[0] ? t->code : NULL;
}

size_t client_term_pending(const struct client_term *t)
{
    return t->out.len - t->req_left; /* the request is not the caller's */
}

/* send/recv on the socket, or through libcurl's TLS: -1 with errno EAGAIN when it would
 * block, as the socket calls. */
static ssize_t client_term_write(struct client_term *t, const char *p, size_t n)
{
    if (!t->curl)
        return send(t->fd, p, n, MSG_NOSIGNAL);
    size_t sent = 0;
    CURLcode rc = curl_easy_send(t->curl, p, n, &sent);
    errno = rc == CURLE_AGAIN ? EAGAIN : EPIPE;
    return rc == CURLE_OK ? (ssize_t)sent : -1;
}

static ssize_t client_term_read(struct client_term *t, char *p, size_t n)
{
    if (!t->curl)
        return read(t->fd, p, n);
    size_t got = 0;
    CURLcode rc = curl_easy_recv(t->curl, p, n, &got);
    errno = rc == CURLE_AGAIN ? EAGAIN : EIO;
    return rc == CURLE_OK ? (ssize_t)got : -1;
}

int client_term_timeout(const struct client_term *t)
{
    return t && t->state <= CLIENT_TERM_OPEN ? client_raw_timeout(&t->conn) : -1;
}

/* Write what may go now: the request while connecting, everything once open. */
static void client_term_flush(struct client_term *t)
{
    if (t->conn.connecting) { /* a remote engine's TCP connect and TLS handshake */
        char *why = NULL;
        int rc = client_raw_step(&t->conn, &why);
        if (rc < 0)
            client_term_fail(t, "%s", why ? why : "cannot reach the engine");
        free(why);
        if (rc <= 0)
            return;
        t->fd = t->conn.fd;
    }
    if (t->connecting) {
        int e = 0;
        socklen_t el = sizeof(e);
        struct pollfd p = {.fd = t->fd, .events = POLLOUT};
        if (poll(&p, 1, 0) <= 0)
            return;
        if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
            client_term_fail(t, "cannot reach the engine: %s", strerror(e ? e : errno));
            return;
        }
        t->connecting = false;
    }
    while (t->out.len) {
        size_t n = t->state == CLIENT_TERM_CONNECTING ? t->req_left : t->out.len;
        if (!n)
            break;
        ssize_t w = client_term_write(t, t->out.data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0) {
            if (t->state == CLIENT_TERM_OPEN)
                t->state = CLIENT_TERM_CLOSED; /* the engine went; reading says the rest */
            else
                client_term_fail(t, "the engine closed the connection (%s)", strerror(errno));
            return;
        }
        memmove(t->out.data, t->out.data + w, t->out.len - (size_t)w);
        t->out.len -= (size_t)w;
        if (t->state == CLIENT_TERM_CONNECTING)
            t->req_left -= (size_t)w;
    }
    /* Over TLS a half-close would end the TLS stream itself: the input stays open. */
    if (t->shut_wr && !t->out.len && t->state == CLIENT_TERM_OPEN && !t->curl) {
        shutdown(t->fd, SHUT_WR);
        t->shut_wr = false;
    }
}

/* The reply so far in t->in: decide the upgrade when its head (and an error's body) is in.
 * eof: the engine closed. */
static void client_term_on_reply(struct client_term *t, bool eof, client_term_data_fn fn, void *ud)
{
    struct client_term_reply r;
    int rc = client_term_parse_reply(t->in.data, t->in.len, &r);
    if (rc < 0) {
        client_term_fail(t, "%s", "the engine's answer is not HTTP");
        return;
    }
    if (rc == 0) {
        if (eof)
            client_term_fail(t, "%s", "the engine closed the connection before answering");
        return;
    }
    size_t body = t->in.len - r.head_len;
    if (r.status == 101) {
        snprintf(t->tid, sizeof(t->tid), "%s", r.tid);
        t->state = CLIENT_TERM_OPEN;
        if (body && fn)
            fn(t->in.data + r.head_len, body, ud);
        free(t->in.data);
        t->in = (struct buf){0};
        client_term_flush(t); /* keys typed while it connected */
        return;
    }
    bool whole = r.content_length >= 0 && body >= (size_t)r.content_length;
    if (!whole && !eof && t->in.len < CLIENT_TERM_HEAD_MAX + CLIENT_TERM_BODY_MAX)
        return;
    json_t *j = json_loadb(t->in.data + r.head_len, body, JSON_DISABLE_EOF_CHECK, NULL);
    const char *code = client_error_code(j);
    snprintf(t->code, sizeof(t->code), "%s", code ? code : "");
    client_term_fail(t, "%s", client_error_message(j, "the engine refused the terminal"));
    json_decref(j);
}

enum client_term_state client_term_pump(struct client_term *t, short revents,
                                        client_term_data_fn fn, void *ud)
{
    (void)revents; /* both directions are tried: a non-blocking call costs nothing */
    if (t->state > CLIENT_TERM_OPEN)
        return t->state;
    client_term_flush(t);
    size_t got = 0;
    while (t->state <= CLIENT_TERM_OPEN && !t->connecting && !t->conn.connecting &&
           got < CLIENT_TERM_READ_MAX) {
        char buf[16384];
        ssize_t n = client_term_read(t, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        bool eof = n <= 0;
        if (t->state == CLIENT_TERM_OPEN) {
            if (eof) {
                t->state = CLIENT_TERM_CLOSED; /* the command ended (or the engine went) */
                break;
            }
            got += (size_t)n;
            if (fn)
                fn(buf, (size_t)n, ud);
            continue;
        }
        if (!eof && buf_append(&t->in, buf, (size_t)n) < 0) {
            client_term_fail(t, "%s", "out of memory");
            break;
        }
        client_term_on_reply(t, eof, fn, ud);
        if (eof)
            break;
    }
    return t->state;
}

int client_term_send(struct client_term *t, const char *p, size_t n)
{
    if (t->state > CLIENT_TERM_OPEN || t->out.len + n > CLIENT_TERM_OUT_MAX ||
        buf_append(&t->out, p, n) < 0)
        return -1;
    client_term_flush(t);
    return 0;
}

void client_term_shutdown_write(struct client_term *t)
{
    t->shut_wr = true;
    if (t->state == CLIENT_TERM_OPEN)
        client_term_flush(t);
}
