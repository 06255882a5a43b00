/* libcurl multi driven by the engine loop: socket and timer callbacks, no polling. */
#include "engine/http.h"

#include "engine/loop.h"
#include "engine/util.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

struct http_call;

struct http {
    struct loop *loop;
    CURLM *multi;
    struct loop_timer *timer;
    struct http_call *calls; /* in flight, so shutdown can finish each one */
};

struct http_call {
    struct http_call *next, *prev;
    CURL *easy;
    struct curl_slist *hdrs;
    char *body_out;
    struct util_buf in;
    char errbuf[CURL_ERROR_SIZE];
    http_done_fn fn;
    http_data_fn on_data;
    void *ud;
    bool receiver_aborted;
};

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
    return util_buf_append(&call->in, p, size * n) == 0 ? size * n : 0;
}

static void http_unlink(struct http *h, struct http_call *call)
{
    if (call->prev)
        call->prev->next = call->next;
    else
        h->calls = call->next;
    if (call->next)
        call->next->prev = call->prev;
}

static void http_call_free(struct http_call *call)
{
    curl_easy_cleanup(call->easy);
    curl_slist_free_all(call->hdrs);
    free(call->body_out);
    util_buf_free(&call->in);
    free(call);
}

static void http_finish(struct http *h, CURL *easy, CURLcode rc)
{
    struct http_call *call = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&call);
    curl_multi_remove_handle(h->multi, easy);
    http_unlink(h, call);
    struct http_result r = {
        .status = -1, .body = call->in.data ? call->in.data : "", .len = call->in.len};
    if (rc == CURLE_OK) {
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &r.status);
    } else {
        r.error = call->receiver_aborted            ? "aborted by the receiver"
                  : rc == CURLE_ABORTED_BY_CALLBACK ? "cancelled: engine shutting down"
                  : call->errbuf[0]                 ? call->errbuf
                                                    : curl_easy_strerror(rc);
        r.connect_failed = rc == CURLE_COULDNT_CONNECT;
    }
    call->fn(&r, call->ud);
    http_call_free(call);
}

void http_cancel(struct http *h, struct http_call *call)
{
    if (!call)
        return;
    curl_multi_remove_handle(h->multi, call->easy);
    http_unlink(h, call);
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
    curl_multi_socket_action(h->multi, fd, flags, &running);
    http_check_done(h);
}

static int http_on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *sockp)
{
    struct http *h = userp;
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
    curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    http_check_done(h);
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
    h->multi = curl_multi_init();
    if (!h->multi) {
        free(h);
        return NULL;
    }
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, http_on_socket);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, http_on_timer_change);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
    /* Keep a few idle connections per executor socket for keep-alive reuse. */
    curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, 256L);
    return h;
}

void http_cancel_all(struct http *h)
{
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
    free(h);
}

int http_start(struct http *h, const struct http_request *req, http_done_fn fn, void *ud)
{
    return http_start_call(h, req, fn, ud) ? 0 : -1;
}

struct http_call *http_start_call(struct http *h, const struct http_request *req, http_done_fn fn,
                                  void *ud)
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
    call->fn = fn;
    call->on_data = req->on_data;
    call->ud = ud;
    curl_easy_setopt(e, CURLOPT_URL, req->url);
    if (req->unix_socket)
        curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, req->unix_socket);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
    curl_easy_setopt(e, CURLOPT_PRIVATE, call);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, call->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (req->timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->timeout_ms);
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
    if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
        http_call_free(call);
        return NULL;
    }
    call->next = h->calls;
    if (h->calls)
        h->calls->prev = call;
    h->calls = call;
    return call;
}
