/* libcurl multi driven by the engine loop: socket and timer callbacks, no polling. */
#include "engine/docker/http.h"
#include "engine/docker/http_internal.h"

#include "common/buf.h"
#include "common/hash.h"
#include "engine/base/loop.h"
#include "engine/base/unix_peer.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static size_t http_on_data(char *p, size_t size, size_t n, void *ud)
{
    struct http_call *call = ud;
    long code = 0;
    curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &code);
    /* Only a success body streams; an error reply is buffered for the done callback. */
    if (call->on_data && code < 300) {
        if (call->on_data(p, size * n, call->ud) == 0)
            return size * n;
        call->receiver_aborted = true;
        return 0;
    }
    if (call->in.len + size * n > call->max_body) {
        call->too_large = true;
        return 0;
    }
    return buf_append(&call->in, p, size * n) == 0 ? size * n : 0;
}

void http_call_link(struct http_call **head, struct http_call *call)
{
    call->prev = NULL;
    call->next = *head;
    if (*head)
        (*head)->prev = call;
    *head = call;
}

void http_call_unlink(struct http_call **head, struct http_call *call)
{
    if (call->prev)
        call->prev->next = call->next;
    else
        *head = call->next;
    if (call->next)
        call->next->prev = call->prev;
    call->next = call->prev = NULL;
}

static void http_call_free(struct http_call *call)
{
    curl_easy_cleanup(call->easy);
    curl_slist_free_all(call->hdrs);
    curl_slist_free_all(call->connect_to);
    free(call->body_out);
    if (call->peer_fd >= 0)
        close(call->peer_fd);
    free(call->peer_path);
    free(call->peer_arg);
    buf_free(&call->in);
    free(call);
}

static bool http_is_tls_error(CURLcode rc)
{
    static const CURLcode tls[] = {
        CURLE_SSL_CONNECT_ERROR,   CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
        CURLE_SSL_CIPHER,          CURLE_SSL_CACERT_BADFILE,       CURLE_SSL_ISSUER_ERROR,
        CURLE_SSL_CRL_BADFILE,     CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
        CURLE_SSL_SHUTDOWN_FAILED,
    };
    for (size_t i = 0; i < sizeof(tls) / sizeof(tls[0]); i++)
        if (rc == tls[i])
            return true;
    return false;
}

static void http_raw_finish(struct http *h, struct http_call *call, CURLcode rc);

static void http_finish(struct http *h, CURL *easy, CURLcode rc)
{
    struct http_call *call = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&call);
    if (call->raw) {
        http_raw_finish(h, call, rc);
        return;
    }
    curl_multi_remove_handle(h->multi, easy);
    http_call_unlink(&h->calls, call);
    struct http_result r = {.status = -1,
                            .body = call->in.data ? call->in.data : "",
                            .len = call->in.len,
                            .priv = easy};
    if (rc == CURLE_OK) {
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &r.status);
    } else {
        r.error = call->too_large                   ? "the reply is larger than the engine takes"
                  : call->receiver_aborted          ? "aborted by the receiver"
                  : call->connect_err[0]            ? call->connect_err
                  : rc == CURLE_ABORTED_BY_CALLBACK ? "cancelled: engine shutting down"
                  : call->errbuf[0]                 ? call->errbuf
                                                    : curl_easy_strerror(rc);
        r.connect_failed = rc == CURLE_COULDNT_CONNECT || call->connect_err[0];
        r.peer_refused = call->peer_refused;
        r.tls_failed = http_is_tls_error(rc);
        r.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    }
    call->fn(&r, call->ud);
    http_call_free(call);
}

const char *http_result_header(const struct http_result *r, const char *name)
{
    if (r->head)
        return http_direct_header(r, name);
    struct curl_header *hd = NULL;
    if (!r->priv || curl_easy_header((CURL *)r->priv, name, 0, CURLH_HEADER, -1, &hd) != CURLHE_OK)
        return NULL;
    return hd->value;
}

void http_cancel(struct http *h, struct http_call *call)
{
    if (!call)
        return;
    if (call->direct) {
        http_direct_cancel(h->direct, call);
        return;
    }
    curl_multi_remove_handle(h->multi, call->easy);
    http_call_unlink(&h->calls, call);
    http_call_free(call);
}

static void http_check_done(struct http *h)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(h->multi, &left)))
        if (m->msg == CURLMSG_DONE)
            http_finish(h, m->easy_handle, m->data.result);
}

static void http_raw_free(struct http_raw *c);

static void http_leave(struct http *h)
{
    if (--h->depth == 0 && h->release_pending)
        http_raw_free(h->raw);
}

static void http_on_fd(int fd, uint32_t events, void *ud)
{
    struct http *h = ud;
    int flags = 0, running;
    if (events & EPOLLIN)
        flags |= CURL_CSELECT_IN;
    if (events & EPOLLOUT)
        flags |= CURL_CSELECT_OUT;
    if (events & (EPOLLERR | EPOLLHUP))
        flags |= CURL_CSELECT_ERR;
    h->depth++;
    curl_multi_socket_action(h->multi, fd, flags, &running);
    http_check_done(h);
    http_leave(h);
}

static int http_on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *sockp)
{
    struct http *h = userp;
    if (s == h->raw_fd)
        return 0; /* handed over: its owner watches it */
    if (what == CURL_POLL_REMOVE) {
        loop_del_fd(h->loop, s);
        return 0;
    }
    uint32_t ev = 0;
    if (what & CURL_POLL_IN)
        ev |= EPOLLIN;
    if (what & CURL_POLL_OUT)
        ev |= EPOLLOUT;
    loop_add_fd(h->loop, s, ev, http_on_fd, h);
    return 0;
}

static void http_on_timer(void *ud)
{
    struct http *h = ud;
    int running;
    h->timer = NULL;
    h->depth++;
    curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    http_check_done(h);
    http_leave(h);
}

static int http_on_timer_change(CURLM *m, long timeout_ms, void *userp)
{
    struct http *h = userp;
    if (h->timer) {
        loop_timer_cancel(h->loop, h->timer);
        h->timer = NULL;
    }
    if (timeout_ms >= 0)
        h->timer = loop_timer_add(h->loop, timeout_ms, http_on_timer, h);
    return 0;
}

struct http *http_new(struct loop *l)
{
    struct http *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->loop = l;
    h->raw_fd = CURL_SOCKET_BAD;
    h->multi = curl_multi_init();
    h->direct = http_direct_new(l);
    if (!h->multi || !h->direct) {
        if (h->multi)
            curl_multi_cleanup(h->multi);
        http_direct_free(h->direct);
        free(h);
        return NULL;
    }
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, http_on_socket);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, http_on_timer_change);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
    /* Idle connections kept for reuse: one per live session's executor (500 on one engine,
     * issue 20) and the daemon's. Fewer, and with many sessions at work each action would
     * evict another session's connection and open its own (a connect and a peer check). */
    curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, 1024L);
    return h;
}

void http_cancel_all(struct http *h)
{
    if (h)
        http_direct_cancel_all(h->direct);
    while (h && h->calls)
        http_finish(h, h->calls->easy, CURLE_ABORTED_BY_CALLBACK);
}

void http_free(struct http *h)
{
    if (!h)
        return;
    http_cancel_all(h);
    if (h->timer)
        loop_timer_cancel(h->loop, h->timer);
    curl_multi_cleanup(h->multi);
    http_direct_free(h->direct);
    free(h);
}

struct loop *http_loop(const struct http *h)
{
    return h->loop;
}

int http_start(struct http *h, const struct http_request *req, http_done_fn fn, void *ud)
{
    return http_start_call(h, req, fn, ud) ? 0 : -1;
}

static void http_set_tls(CURL *e, const struct http_tls *t)
{
    if (!t)
        return;
    if (t->ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, t->ca_file);
    if (t->cert_file)
        curl_easy_setopt(e, CURLOPT_SSLCERT, t->cert_file);
    if (t->key_file)
        curl_easy_setopt(e, CURLOPT_SSLKEY, t->key_file);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, t->verify ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, t->verify ? 2L : 0L);
}

static void http_peer_fd_close(struct http_call *call)
{
    if (call->peer_fd >= 0)
        close(call->peer_fd);
    call->peer_fd = -1;
}

/* A new connection: the socket found without following links, reached through its O_PATH fd
 * (libcurl connects to the address as rewritten here). */
static curl_socket_t http_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *addr)
{
    struct http_call *call = ud;
    (void)purpose;
    http_peer_fd_close(call);
    int pfd = unix_peer_open(call->peer_path, &call->peer_refused, call->connect_err,
                             sizeof(call->connect_err));
    if (pfd < 0)
        return CURL_SOCKET_BAD;
    /* libcurl's address storage holds a sockaddr_un (it came from CURLOPT_UNIX_SOCKET_PATH). */
    struct sockaddr_un *sa = (struct sockaddr_un *)(void *)&addr->addr;
    if (addr->family != AF_UNIX) {
        snprintf(call->connect_err, sizeof(call->connect_err), "%s: not a unix socket address",
                 call->peer_path);
        close(pfd);
        return CURL_SOCKET_BAD;
    }
    int n = snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d", pfd);
    addr->addrlen = (unsigned)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(call->connect_err, sizeof(call->connect_err), "socket: %s", strerror(errno));
        close(pfd);
        return CURL_SOCKET_BAD;
    }
    call->peer_fd = pfd;
    call->peer_sock = fd;
    return fd;
}

/* Before each request: a connection this request opened is checked (who serves it may have
 * it). A reused one was checked by the request that opened it: the peer of a connected socket
 * does not change, and one that failed was shut down, so libcurl does not keep it. */
static int http_prereq(void *ud, char *primary_ip, char *local_ip, int primary_port, int local_port)
{
    struct http_call *call = ud;
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    http_peer_fd_close(call);
    curl_socket_t fd = call->peer_sock;
    call->peer_sock = CURL_SOCKET_BAD;
    if (fd == CURL_SOCKET_BAD)
        return CURL_PREREQFUNC_OK;
    int rc = call->peer_check(fd, call->peer_arg, call->connect_err, sizeof(call->connect_err));
    if (rc < 0) {
        shutdown(fd, SHUT_RDWR);
        call->peer_refused = rc == -1;
        return CURL_PREREQFUNC_ABORT;
    }
    return CURL_PREREQFUNC_OK;
}

/* libcurl keeps idle connections in bundles by host name and port, and before reusing one it
 * checks every idle connection of the bundle for life (a poll each), socket path or not. Every
 * executor is "http://executor": one bundle of all the sessions' connections, so each request
 * polled every other session's idle connection (10 sessions: ~6 polls an action; 500: ~500).
 * A connect-to name made from the socket's path gives each socket a bundle of its own (the Host
 * header stays the URL's; a unix socket is never resolved, so the name is only a key). Two
 * paths that hash alike share a bundle, as all did before: libcurl still compares the path. */
static int http_set_unix(CURL *e, struct http_call *call, const char *path)
{
    char line[64];
    snprintf(line, sizeof(line), "::u%016llx:", (unsigned long long)hash_fnv1a(path, strlen(path)));
    if (!(call->connect_to = curl_slist_append(NULL, line)))
        return -1;
    curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, path);
    curl_easy_setopt(e, CURLOPT_CONNECT_TO, call->connect_to);
    return 0;
}

static int http_set_peer_check(CURL *e, struct http_call *call, const struct http_request *req)
{
    call->peer_check = req->peer_check;
    call->peer_path = strdup(req->unix_socket ? req->unix_socket : "");
    call->peer_arg = strdup(req->peer_arg ? req->peer_arg : "");
    if (!req->unix_socket || !call->peer_path || !call->peer_arg)
        return -1;
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, http_open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, call);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, http_prereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, call);
    return 0;
}

static struct http_call *http_start_raw(struct http *h, const struct http_request *req,
                                        struct http_raw *raw, http_done_fn fn, void *ud)
{
    struct http_call *call = calloc(1, sizeof(*call));
    if (!call)
        return NULL;
    CURL *e = curl_easy_init();
    if (!e) {
        free(call);
        return NULL;
    }
    call->easy = e;
    call->peer_fd = -1;
    call->peer_sock = CURL_SOCKET_BAD;
    call->fn = fn;
    call->on_data = req->on_data;
    call->max_body = req->max_body ? req->max_body : HTTP_BODY_MAX;
    call->ud = ud;
    call->raw = raw;
    curl_easy_setopt(e, CURLOPT_URL, req->url);
    if (req->unix_socket && http_set_unix(e, call, req->unix_socket) < 0) {
        http_call_free(call);
        return NULL;
    }
    if (req->fresh_connect) {
        curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
    }
    if (req->peer_check && http_set_peer_check(e, call, req) < 0) {
        http_call_free(call);
        return NULL;
    }
    http_set_tls(e, req->tls);
    curl_easy_setopt(e, CURLOPT_PRIVATE, call);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, call->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (raw) {
        curl_easy_setopt(e, CURLOPT_CONNECT_ONLY, 1L);
        if (req->timeout_ms > 0)
            curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, req->timeout_ms);
        goto add;
    }
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
    if (req->timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->timeout_ms);
    if (req->idle_timeout_ms > 0) {
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                         req->idle_timeout_ms < 1000 ? 1L : (req->idle_timeout_ms + 999) / 1000);
    }
    call->hdrs = curl_slist_append(call->hdrs, "Expect:");
    for (const char *const *hl = req->headers; hl && *hl; hl++)
        call->hdrs = curl_slist_append(call->hdrs, *hl);
    if (req->body) {
        call->body_out = malloc(req->body_len + 1);
        if (!call->body_out) {
            http_call_free(call);
            return NULL;
        }
        memcpy(call->body_out, req->body, req->body_len);
        call->body_out[req->body_len] = '\0';
        char ct[128];
        snprintf(ct, sizeof(ct), "Content-Type: %s",
                 req->content_type ? req->content_type : "application/json");
        call->hdrs = curl_slist_append(call->hdrs, ct);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->body_out);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    } else if (strcmp(req->method, "POST") == 0) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->hdrs);
add:
    if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
        http_call_free(call);
        return NULL;
    }
    http_call_link(&h->calls, call);
    return call;
}

struct http_call *http_start_call(struct http *h, const struct http_request *req, http_done_fn fn,
                                  void *ud)
{
    if (http_direct_takes(req))
        return http_direct_start(h->direct, req, fn, ud);
    return http_start_raw(h, req, NULL, fn, ud);
}

/* ---- raw connections ---- */

static void http_raw_free(struct http_raw *c)
{
    /* Removing a CONNECT_ONLY handle from its multi closes the connection. */
    curl_multi_remove_handle(c->h->multi, c->call->easy);
    http_call_free(c->call);
    c->h->calls = NULL; /* its only call */
    http_free(c->h);
    free(c);
}

/* Inside the private multi's callbacks the multi cannot go: http_leave frees it after them. */
static void http_raw_release(struct http_raw *c)
{
    if (c->h->depth > 0)
        c->h->release_pending = true;
    else
        http_raw_free(c);
}

static void http_raw_finish(struct http *h, struct http_call *call, CURLcode rc)
{
    struct http_raw *c = call->raw;
    http_call_unlink(&h->calls, call);
    if (rc == CURLE_OK) {
        curl_socket_t fd = CURL_SOCKET_BAD;
        curl_easy_getinfo(call->easy, CURLINFO_ACTIVESOCKET, &fd);
        if (fd != CURL_SOCKET_BAD) {
            /* The handle stays in the multi: removing it would close the connection. */
            c->fd = fd;
            h->raw_fd = fd;
            loop_del_fd(h->loop, fd);
            c->fn(c, NULL, 0, 0, c->ud);
            return;
        }
        snprintf(c->err, sizeof(c->err), "connected, but libcurl gave no socket");
    } else {
        snprintf(c->err, sizeof(c->err), "%s",
                 call->connect_err[0] ? call->connect_err
                 : call->errbuf[0]    ? call->errbuf
                                      : curl_easy_strerror(rc));
    }
    c->fn(NULL, c->err, rc == CURLE_COULDNT_CONNECT, http_is_tls_error(rc), c->ud);
    http_raw_release(c);
}

struct http_raw *http_raw_open(struct loop *l, const struct http_request *req, http_raw_fn fn,
                               void *ud)
{
    struct http_raw *c = calloc(1, sizeof(*c));
    if (!c || !(c->h = http_new(l))) {
        free(c);
        return NULL;
    }
    c->h->raw = c;
    c->fn = fn;
    c->ud = ud;
    c->fd = CURL_SOCKET_BAD;
    c->tls = strncmp(req->url, "https:", 6) == 0;
    if (!(c->call = http_start_raw(c->h, req, c, NULL, NULL))) {
        http_free(c->h);
        free(c);
        return NULL;
    }
    return c;
}

int http_raw_fd(const struct http_raw *c)
{
    return c->fd;
}

static ssize_t http_raw_result(struct http_raw *c, CURLcode rc, size_t n)
{
    if (rc == CURLE_OK)
        return (ssize_t)n;
    if (rc == CURLE_AGAIN) {
        errno = EAGAIN;
        return -1;
    }
    snprintf(c->err, sizeof(c->err), "%s", curl_easy_strerror(rc));
    errno = EIO;
    return -1;
}

ssize_t http_raw_send(struct http_raw *c, const void *p, size_t n)
{
    size_t sent = 0;
    CURLcode rc = curl_easy_send(c->call->easy, p, n, &sent);
    return http_raw_result(c, rc, sent);
}

ssize_t http_raw_recv(struct http_raw *c, void *p, size_t n)
{
    size_t got = 0;
    CURLcode rc = curl_easy_recv(c->call->easy, p, n, &got);
    return http_raw_result(c, rc, got);
}

const char *http_raw_error(const struct http_raw *c)
{
    return c->err;
}

int http_raw_shutdown_write(struct http_raw *c)
{
    if (c->tls || c->fd == CURL_SOCKET_BAD)
        return -1;
    return shutdown(c->fd, SHUT_WR);
}

void http_raw_close(struct http_raw *c)
{
    if (c)
        http_raw_release(c);
}
