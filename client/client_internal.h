/* What client.c and client_async.c share: one way to set up a request and read its reply. */
#ifndef PADDOCK_CLIENT_INTERNAL_H
#define PADDOCK_CLIENT_INTERNAL_H

#include "client/client.h"
#include "common/buf.h"

#include <curl/curl.h>
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

#endif
