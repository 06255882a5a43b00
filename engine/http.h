/* Asynchronous HTTP client on the engine loop (libcurl multi), for Docker and executors. */
#ifndef PADDOCK_HTTP_H
#define PADDOCK_HTTP_H

#include <stddef.h>

struct loop;
struct http;

struct http_request {
    const char *method;      /* "GET", "POST", "DELETE" */
    const char *unix_socket; /* NULL: TCP */
    const char *url;
    const char *body; /* NULL: none */
    size_t body_len;
    const char *content_type; /* default application/json when body is set */
    long timeout_ms;          /* 0: none */
};

struct http_result {
    long status;      /* HTTP status, or -1 when the transport failed */
    const char *body; /* NUL-terminated; valid during the callback only */
    size_t len;
    const char *error;  /* transport error text when status == -1 */
    int connect_failed; /* the socket refused or did not exist */
};

typedef void (*http_done_fn)(const struct http_result *r, void *ud);

struct http *http_new(struct loop *l);
/* Finish every request in flight with a "cancelled" transport error (at shutdown). */
void http_cancel_all(struct http *h);
void http_free(struct http *h);

/* Starts a request; fn is called exactly once, later, from the loop. Returns 0 or -1. */
int http_start(struct http *h, const struct http_request *req, http_done_fn fn, void *ud);

#endif
