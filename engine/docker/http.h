/* Asynchronous HTTP client on the engine loop (libcurl multi), for Docker and executors. */
#ifndef PADDOCK_HTTP_H
#define PADDOCK_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct loop;
struct http;
struct http_call;

/* Streaming: called with each chunk of a success (< 300) response body as it arrives (the body
 * is then not buffered, and the done callback gets an empty body; an error reply's body is
 * buffered and given to the done callback as usual). Return 0 to go on, -1 to abort (the done
 * callback then reports a transport error "aborted by the receiver"). */
typedef int (*http_data_fn)(const char *data, size_t len, void *ud);

/* TLS for an https:// URL (Docker's DOCKER_TLS_VERIFY/DOCKER_CERT_PATH). */
struct http_tls {
    const char *ca_file;   /* PEM CA the peer's certificate must chain to; NULL: the system's */
    const char *cert_file; /* client certificate (PEM); NULL: none */
    const char *key_file;  /* its key */
    bool verify;           /* check the peer's certificate and name */
};

struct http_request {
    const char *method;         /* "GET", "POST", "DELETE" */
    const char *unix_socket;    /* NULL: TCP */
    const struct http_tls *tls; /* https:// URLs; NULL: verify against the system's CAs */
    const char *url;
    const char *body; /* NULL: none */
    size_t body_len;
    const char *content_type; /* default application/json when body is set */
    long timeout_ms;          /* 0: none */
    /* 0: none; else the request fails (timed_out) once no byte of the reply came for this
     * long (counted in whole seconds, at least one): a bound on a stall, not on the length. */
    long idle_timeout_ms;
    const char *const *headers; /* extra "Name: value" lines, NULL-terminated; may be NULL */
    http_data_fn on_data;       /* NULL: buffer the whole body for the done callback */
    size_t max_body; /* a buffered body longer than this fails the call; 0: HTTP_BODY_MAX */
    /* A unix socket in a directory someone else can write: each new connection goes to the
     * socket at unix_socket opened without following a link (anything else there is refused
     * unopened, peer_refused), and before its first request peer_check(fd, peer_arg) says
     * whether who serves it may have it: 0; -1 with why in err (refused: the request fails
     * with that error, peer_refused); -2 with why when it cannot tell now (the request fails
     * with that error). Nothing is sent unless 0. peer_arg is copied. NULL: libcurl connects. */
    int (*peer_check)(int fd, const char *arg, char *err, size_t errlen);
    const char *peer_arg;
    bool fresh_connect; /* a new connection of its own, closed after (none kept from before) */
};

/* What a buffered reply may hold unless the request says less: a peer that sends more (a
 * sandbox's executor is one) fails its call instead of growing the engine without bound. */
#define HTTP_BODY_MAX (256u * 1024 * 1024)

struct http_result {
    long status;      /* HTTP status, or -1 when the transport failed */
    const char *body; /* NUL-terminated; valid during the callback only */
    size_t len;
    const char *error;  /* transport error text when status == -1 */
    int connect_failed; /* the socket refused or did not exist */
    int tls_failed;     /* the TLS handshake or a certificate check failed */
    int timed_out;      /* timeout_ms or idle_timeout_ms ran out */
    int peer_refused; /* http_request.peer_check (or its not-a-socket test) refused: nothing sent */
    const void *priv; /* for http_result_header */
    const char *head; /* ... a reply of the executor channel's own client: its head */
};

typedef void (*http_done_fn)(const struct http_result *r, void *ud);

/* A response header's value (case-insensitive name), or NULL; valid during the callback. */
const char *http_result_header(const struct http_result *r, const char *name);

struct http *http_new(struct loop *l);
struct loop *http_loop(const struct http *h);
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

/* ---- raw connections (protocols upgraded from HTTP: Docker's exec hijack) ----
 * libcurl connects (unix socket, TCP, TLS with req's settings) asynchronously on the loop and
 * then hands over the connection: the owner watches http_raw_fd on the loop and moves bytes
 * with http_raw_send/http_raw_recv (TLS included). Each raw connection has a libcurl multi of
 * its own, so no other transfer can reuse, prune or close it. */
struct http_raw;
/* Connected (error NULL), or failed (error says why; the handle is then already freed). */
typedef void (*http_raw_fn)(struct http_raw *c, const char *error, int connect_failed,
                            int tls_failed, void *ud);
/* Only req's url, unix_socket, tls and timeout_ms (the connect timeout) are used. NULL when
 * out of memory; else fn is called once, later, from the loop (unless closed first). */
struct http_raw *http_raw_open(struct loop *l, const struct http_request *req, http_raw_fn fn,
                               void *ud);
int http_raw_fd(const struct http_raw *c);
/* Bytes moved (> 0); 0 from recv when the peer closed; -1 with errno EAGAIN when the socket
 * is not ready (wait on the fd; after recv's EAGAIN only: TLS may hold decoded bytes), or
 * another errno on failure (http_raw_error says why). */
ssize_t http_raw_send(struct http_raw *c, const void *p, size_t n);
ssize_t http_raw_recv(struct http_raw *c, void *p, size_t n);
const char *http_raw_error(const struct http_raw *c);
/* Half-close (no more sending) on a plain connection; -1 over TLS, which has no half-close. */
int http_raw_shutdown_write(struct http_raw *c);
/* Close the connection; remove the fd from the loop before. */
void http_raw_close(struct http_raw *c);

#endif
