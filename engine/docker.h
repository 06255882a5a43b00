/* Docker Engine API client (asynchronous, on the engine loop). */
#ifndef PADDOCK_DOCKER_H
#define PADDOCK_DOCKER_H

#include <jansson.h>

struct loop;
struct http;
struct docker;

struct docker_reply {
    long status;         /* HTTP status, -1 when the daemon could not be reached */
    json_t *json;        /* parsed body or NULL; borrowed during the callback */
    const char *message; /* Docker's "message", or the transport error, or "" */
};

typedef void (*docker_done_fn)(const struct docker_reply *r, void *ud);

/* host: DOCKER_HOST-style "unix:///path" or NULL for $DOCKER_HOST / the default socket. */
struct docker *docker_new(struct http *http, const char *host);
void docker_free(struct docker *d);
const char *docker_socket(const struct docker *d);
/* How to start a daemon, for error messages. */
const char *docker_start_hint(void);

int docker_ping(struct docker *d, docker_done_fn fn, void *ud);
int docker_version(struct docker *d, docker_done_fn fn, void *ud);
/* POST /containers/create?name=NAME with body; reply json has "Id". */
int docker_container_create(struct docker *d, const char *name, json_t *body, docker_done_fn fn,
                            void *ud);
int docker_container_start(struct docker *d, const char *id, docker_done_fn fn, void *ud);
int docker_container_inspect(struct docker *d, const char *id, docker_done_fn fn, void *ud);
/* DELETE /containers/{id}?force=1&v=1 */
int docker_container_remove(struct docker *d, const char *id, docker_done_fn fn, void *ud);
/* GET /containers/{id}/logs?stdout=1&stderr=1&tail=N (demultiplexed text in message). */
int docker_container_logs_tail(struct docker *d, const char *id, int tail, docker_done_fn fn,
                               void *ud);

#endif
