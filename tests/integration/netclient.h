/* HTTP requests the harness's http_unix cannot make: over TCP, with extra headers, with a
 * multipart upload, keeping the reply's Content-Type and Content-Disposition. */
#ifndef PADDOCK_TESTS_NETCLIENT_H
#define PADDOCK_TESTS_NETCLIENT_H

#include "harness.h"

struct net_req {
    const char *unix_socket; /* NULL: TCP */
    const char *method;      /* default GET, POST with a body or an upload */
    const char *url;         /* "http://127.0.0.1:PORT/path" (any host over a unix socket) */
    const char *body;        /* JSON by default */
    const char *content_type;
    const char *const *headers; /* "Name: value", NULL-terminated; may be NULL */
    /* A multipart/form-data body with the field "file" holding these bytes under this name. */
    const char *file_name;
    const char *file_data;
    size_t file_len;
    long timeout_ms; /* 0: 60 s */
};

/* The reply (status -1 on a transport error), plus the reply's headers of interest. */
struct net_reply {
    struct reply r;
    char content_type[128];
    char disposition[256];
};

void net_do(const struct net_req *q, struct net_reply *out);
void net_reply_free(struct net_reply *out);

/* "Name: value" into a static rotating buffer (for headers lists). */
const char *net_header(const char *name, const char *value);

#endif
