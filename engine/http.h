/* Asynchronous HTTP client on the engine loop (libcurl multi), for Docker and executors. */
#ifndef PADDOCK_HTTP_H
#define PADDOCK_HTTP_H

#include <stddef.h>

struct loop;
struct http;
struct http_call;

/* Streaming: called with each chunk of a success (< 300) response body as it arrives (the body
 * is then not buffered, and the done callback gets an empty body; an error reply's body is
 * buffered and given to the done callback as usual). Return 0 to go on, -1 to abort (the done
 * callback then reports a transport error "aborted by the receiver"). */
typedef int (*http_data_fn)(const char *data, size_t len, void *ud);

struct http_request {
    const char *method;      /* "GET", "POST", "DELETE" */
    const char *unix_socket; /* NULL: TCP */
    const char *url;
    const char *body; /* NULL: none */
    size_t body_len;
    const char *content_type;   /* default application/json when body is set */
    long timeout_ms;            /* 0: none */
    const char *const *headers; /* extra "Name: value" lines, NULL-terminated; may be NULL */
    http_data_fn on_data;       /* NULL: buffer the whole body for the done callback */
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
/* The same, returning a handle for http_cancel (NULL on failure). */
struct http_call *http_start_call(struct http *h, const struct http_request *req, http_done_fn fn,
                                  void *ud);
/* Stop a request in flight (a follow stream the reader no longer wants); not from inside its own
 * on_data (return -1 there instead). The done callback is
 * NOT called. The handle is invalid afterwards, and also once the done callback has run. */
void http_cancel(struct http *h, struct http_call *call);

#endif
