/* What http.c (libcurl) and http_direct.c (the executor channel without libcurl) share. */
#ifndef PADDOCK_HTTP_INTERNAL_H
#define PADDOCK_HTTP_INTERNAL_H

#include "common/buf.h"
#include "engine/docker/http.h"

#include <curl/curl.h>
#include <stdbool.h>

struct http_direct;
struct hd_call;

struct http {
    struct loop *loop;
    CURLM *multi;
    struct loop_timer *timer;
    struct http_call *calls; /* in flight, so shutdown can finish each one */
    /* A raw connection's private multi: */
    struct http_raw *raw;       /* its owner */
    curl_socket_t raw_fd;       /* the socket once handed over (the owner watches it, not us) */
    int depth;                  /* inside libcurl's callbacks: the multi cannot be freed yet */
    bool release_pending;       /* closed meanwhile: free once out of them */
    struct http_direct *direct; /* the executor channel's own client (http_direct.c) */
};

struct http_raw {
    struct http *h; /* a multi of its own */
    struct http_call *call;
    http_raw_fn fn;
    void *ud;
    curl_socket_t fd;
    bool tls;
    char err[CURL_ERROR_SIZE + 512];
};

struct http_call {
    struct http_call *next, *prev;
    struct hd_call *direct; /* a request of http_direct.c: nothing below is used */
    CURL *easy;
    struct curl_slist *hdrs;
    struct curl_slist *connect_to; /* the unix socket's own connection bundle (http_set_unix) */
    char *body_out;
    struct buf in;
    char errbuf[CURL_ERROR_SIZE];
    http_done_fn fn;
    http_data_fn on_data;
    void *ud;
    bool receiver_aborted;
    bool too_large; /* the buffered body passed max_body */
    size_t max_body;
    struct http_raw *raw; /* CONNECT_ONLY: the connection is handed to this raw handle */
    /* http_request.peer_check: the socket's path, an O_PATH fd of it while libcurl connects
     * through /proc/self/fd, and why it was refused (libcurl's message would hide it). */
    int (*peer_check)(int fd, const char *arg, char *err, size_t errlen);
    char *peer_path, *peer_arg;
    int peer_fd;
    curl_socket_t peer_sock; /* the connection opened for this request, until checked */
    bool peer_refused;
    char connect_err[512];
};

/* A list of calls in flight (struct http's, struct http_direct's): push in front, take out. */
void http_call_link(struct http_call **head, struct http_call *call);
void http_call_unlink(struct http_call **head, struct http_call *call);

/* ---- http_direct.c: plain HTTP/1.1 on the executor channel ---- */

/* Whether req goes to http_direct: a plain http:// request on a unix socket with a peer check
 * (a sandbox's executor). */
bool http_direct_takes(const struct http_request *req);
struct http_direct *http_direct_new(struct loop *l);
/* Closes every connection; the calls in flight must have been finished (cancel_all). */
void http_direct_free(struct http_direct *d);
/* As http_start_call; NULL when it cannot start. */
struct http_call *http_direct_start(struct http_direct *d, const struct http_request *req,
                                    http_done_fn fn, void *ud);
/* As http_cancel: no callback. */
void http_direct_cancel(struct http_direct *d, struct http_call *call);
/* Finishes every call in flight with a "cancelled" error. */
void http_direct_cancel_all(struct http_direct *d);
/* A reply header of a direct call's result (r->priv is its head), or NULL. */
const char *http_direct_header(const struct http_result *r, const char *name);

#endif
