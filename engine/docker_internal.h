/* What the docker_*.c files share; not for the rest of the engine. */
#ifndef PADDOCK_DOCKER_INTERNAL_H
#define PADDOCK_DOCKER_INTERNAL_H

#define DOCKER_API "v1.41"

#include "engine/docker.h"

struct http;
struct http_request;

struct docker {
    struct http *http;
    char *socket;
};

/* The full URL of an API path ("/containers/json?..."); malloc'd. */
char *docker_url(const struct docker *d, const char *path);
/* Point a request at the daemon (socket, later TLS). */
void docker_fill_request(const struct docker *d, struct http_request *req);
/* URL-escape one path or query component; malloc'd. */
char *docker_escape(const char *s);

/* A one-shot call under the negotiated version: the reply is parsed as JSON (demux: the
 * body is a framed log, decoded into the reply's message). fn may be NULL. 0 or -1. */
int docker_call(struct docker *d, const char *method, const char *path, json_t *body,
                long timeout_ms, int demux, docker_done_fn fn, void *ud);
/* The same with "%s" in fmt replaced by the escaped id. */
int docker_call_id(struct docker *d, const char *method, const char *fmt, const char *id,
                   json_t *body, long timeout_ms, int demux, docker_done_fn fn, void *ud);

#endif
