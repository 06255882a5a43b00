/* What client.c and client_async.c share: one way to set up a request and read its reply. */
#ifndef PADDOCK_CLIENT_INTERNAL_H
#define PADDOCK_CLIENT_INTERNAL_H

#include "client/client.h"
#include "common/buf.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

/* One request's state while libcurl runs it. */
struct client_xfer {
    CURL *h;
    struct curl_slist *hdrs;
    char *payload;
    struct buf out;
    char errbuf[CURL_ERROR_SIZE];
};

/* Configure h for method path (body may be NULL) on the client's socket. */
int client_xfer_setup(struct client *c, struct client_xfer *x, CURL *h, const char *method,
                      const char *path, json_t *body, long timeout_ms);
/* The outcome of a finished transfer (as client_request returns it); frees x's buffers. */
int client_xfer_finish(struct client *c, struct client_xfer *x, CURLcode rc, json_t **reply,
                       char **err);

/* A remote client's connection for raw bytes (an event stream, a terminal): libcurl connects
 * (TLS with the CA, the client certificate) and then only carries bytes, through
 * curl_easy_send and curl_easy_recv. The handle (the caller's: curl_easy_cleanup closes the
 * socket) with its socket in *fd; NULL with *err (malloc'd). */
CURL *client_raw_connect(struct client *c, int *fd, char **err);
/* The same made on a caller's loop: the TCP connect and TLS handshake in the connection's
 * own multi (a connect-only handle must stay in one while it is used; one of its own prunes
 * nobody's connection). client_raw_start (0, or -1 with *err), then client_raw_step when
 * client_raw_poll_fd is ready or client_raw_timeout ms have passed: 1 connected (h and fd
 * usable with curl_easy_send and curl_easy_recv), 0 still under way, -1 failed (*err,
 * malloc'd). client_raw_end closes it, at any stage. */
struct client_raw {
    struct client *c;
    CURLM *multi;
    CURL *h;
    struct client_xfer x;
    bool connecting;
    int fd; /* once connected */
};
int client_raw_start(struct client *c, struct client_raw *r, char **err);
int client_raw_step(struct client_raw *r, char **err);
/* The socket to poll (for reading and writing while connecting; -1: none yet). */
int client_raw_poll_fd(const struct client_raw *r);
/* The same with what to poll it for (what curl waits for while connecting; POLLIN after). */
int client_raw_poll(const struct client_raw *r, short *events);
/* ms until client_raw_step must run with nothing ready; -1: none. */
int client_raw_timeout(const struct client_raw *r);
void client_raw_end(struct client_raw *r);

/* The request head's "Host:" and credential lines for a raw request on that connection, each
 * ending in CRLF; malloc'd, NULL without memory. */
char *client_raw_headers(const struct client *c);
/* Send all of data on a raw connection, waiting on fd while it would block (10 s at most). */
CURLcode client_raw_send(CURL *h, int fd, const char *data, size_t len);

#endif
