/* Non-blocking engine requests for the dashboard's one loop: libcurl's multi interface, with
 * the dashboard's own descriptors (terminal, signals, event stream) as curl_multi_poll's extra
 * descriptors, so one wait covers everything and a slow history query never freezes a key. */
#include "client/client_async.h"

#include "client/client_internal.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

struct client_async_req {
    struct client_async_req *next;
    struct client *c; /* the engine it goes to */
    struct client_xfer x;
    client_async_fn fn;
    void *ud;
};

struct client_async {
    struct client *c;
    CURLM *multi;
    struct client_async_req *reqs;
};

struct client_async *client_async_new(struct client *c)
{
    struct client_async *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->c = c;
    a->multi = curl_multi_init();
    if (!a->multi) {
        free(a);
        return NULL;
    }
    return a;
}

static void client_async_drop(struct client_async *a, struct client_async_req *r)
{
    for (struct client_async_req **pp = &a->reqs; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    curl_multi_remove_handle(a->multi, r->x.h);
    json_t *reply = NULL;
    client_xfer_finish(r->c, &r->x, CURLE_OK, &reply, NULL);
    json_decref(reply);
    curl_easy_cleanup(r->x.h);
    free(r);
}

void client_async_free(struct client_async *a)
{
    if (!a)
        return;
    while (a->reqs)
        client_async_drop(a, a->reqs);
    curl_multi_cleanup(a->multi);
    free(a);
}

int client_async_request(struct client_async *a, const char *method, const char *path, json_t *body,
                         long timeout_ms, client_async_fn fn, void *ud)
{
    return client_async_request_on(a, a->c, method, path, body, timeout_ms, fn, ud);
}

int client_async_request_on(struct client_async *a, struct client *c, const char *method,
                            const char *path, json_t *body, long timeout_ms, client_async_fn fn,
                            void *ud)
{
    struct client_async_req *r = calloc(1, sizeof(*r));
    CURL *h = r ? curl_easy_init() : NULL;
    if (!h) {
        free(r);
        return -1;
    }
    r->c = c;
    client_xfer_setup(c, &r->x, h, method, path, body, timeout_ms);
    curl_easy_setopt(h, CURLOPT_PRIVATE, r);
    r->fn = fn;
    r->ud = ud;
    if (curl_multi_add_handle(a->multi, h) != CURLM_OK) {
        json_t *reply = NULL;
        client_xfer_finish(c, &r->x, CURLE_OK, &reply, NULL);
        curl_easy_cleanup(h);
        free(r);
        return -1;
    }
    r->next = a->reqs;
    a->reqs = r;
    return 0;
}

void client_async_cancel(struct client_async *a, void *ud)
{
    struct client_async_req *r = a->reqs;
    while (r) {
        struct client_async_req *next = r->next;
        if (r->ud == ud)
            client_async_drop(a, r);
        r = next;
    }
}

size_t client_async_pending(const struct client_async *a)
{
    size_t n = 0;
    for (const struct client_async_req *r = a->reqs; r; r = r->next)
        n++;
    return n;
}

/* Finished transfers: their callbacks, each after the request is off the list (a callback
 * may start new requests). Returns how many ran. */
static int client_async_done(struct client_async *a)
{
    CURLMsg *m;
    int left, ran = 0;
    while ((m = curl_multi_info_read(a->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct client_async_req *r = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        CURLcode rc = m->data.result;
        for (struct client_async_req **pp = &a->reqs; *pp; pp = &(*pp)->next)
            if (*pp == r) {
                *pp = r->next;
                break;
            }
        curl_multi_remove_handle(a->multi, r->x.h);
        json_t *reply = NULL;
        char *err = NULL;
        int status = client_xfer_finish(r->c, &r->x, rc, &reply, &err);
        curl_easy_cleanup(r->x.h);
        client_async_fn fn = r->fn;
        void *ud = r->ud;
        free(r);
        fn(status, reply, err, ud);
        json_decref(reply);
        free(err);
        ran++;
    }
    return ran;
}

#define CLIENT_ASYNC_MAX_FDS 40

int client_async_poll(struct client_async *a, struct pollfd *fds, int nfds, int timeout_ms)
{
    struct curl_waitfd w[CLIENT_ASYNC_MAX_FDS];
    int n = nfds < CLIENT_ASYNC_MAX_FDS ? nfds : CLIENT_ASYNC_MAX_FDS;
    for (int i = 0; i < n; i++) {
        w[i].fd = fds[i].fd;
        w[i].events = (short)((fds[i].events & POLLIN ? CURL_WAIT_POLLIN : 0) |
                              (fds[i].events & POLLOUT ? CURL_WAIT_POLLOUT : 0));
        w[i].revents = 0;
    }
    int running = 0;
    curl_multi_perform(a->multi, &running);
    /* A request finished: the caller sees its effect (draws) before any sleep. */
    if (client_async_done(a))
        timeout_ms = 0;
    int numfds = 0;
    if (curl_multi_poll(a->multi, w, (unsigned)n, timeout_ms < 0 ? 3600 * 1000 : timeout_ms,
                        &numfds) != CURLM_OK)
        return -1;
    int ready = 0;
    for (int i = 0; i < n; i++) {
        /* curl_multi_poll reports readiness, not hang-ups: a closed descriptor shows as
         * readable, and the caller's read finds the end. */
        fds[i].revents = (short)((w[i].revents & CURL_WAIT_POLLIN ? POLLIN : 0) |
                                 (w[i].revents & CURL_WAIT_POLLOUT ? POLLOUT : 0) |
                                 (w[i].revents & CURL_WAIT_POLLPRI ? POLLPRI : 0));
        if (fds[i].revents)
            ready++;
    }
    curl_multi_perform(a->multi, &running);
    client_async_done(a);
    return ready;
}
