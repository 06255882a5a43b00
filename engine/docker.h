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
/* GET /info: storage driver, runtimes, ... */
int docker_info(struct docker *d, docker_done_fn fn, void *ud);
/* GET /volumes/{name} (404 when it does not exist yet). */
int docker_volume_inspect(struct docker *d, const char *name, docker_done_fn fn, void *ud);
/* POST /containers/create?name=NAME with body; reply json has "Id". */
int docker_container_create(struct docker *d, const char *name, json_t *body, docker_done_fn fn,
                            void *ud);
int docker_container_start(struct docker *d, const char *id, docker_done_fn fn, void *ud);
int docker_container_inspect(struct docker *d, const char *id, docker_done_fn fn, void *ud);
/* DELETE /containers/{id}?force=1&v=1 */
int docker_container_remove(struct docker *d, const char *id, docker_done_fn fn, void *ud);
/* POST /containers/{id}/stop?t=S (204, or 304 when already stopped). */
int docker_container_stop(struct docker *d, const char *id, int timeout_s, docker_done_fn fn,
                          void *ud);
/* POST /containers/{id}/kill?signal=SIG (NULL: SIGKILL). */
int docker_container_kill(struct docker *d, const char *id, const char *signal, docker_done_fn fn,
                          void *ud);
/* Freeze and thaw the container's cgroup: processes keep their memory, cwd and variables. */
int docker_container_pause(struct docker *d, const char *id, docker_done_fn fn, void *ud);
int docker_container_unpause(struct docker *d, const char *id, docker_done_fn fn, void *ud);
/* POST /containers/{id}/wait?condition=not-running; replies {"StatusCode"} once it stops
 * (no timeout). */
int docker_container_wait(struct docker *d, const char *id, docker_done_fn fn, void *ud);
/* GET /containers/json?all=1 filtered by one label ("key" or "key=value"); reply json is the
 * array. */
int docker_container_list(struct docker *d, const char *label, docker_done_fn fn, void *ud);
/* GET /containers/{id}/logs?stdout=1&stderr=1&tail=N (demultiplexed text in message). */
int docker_container_logs_tail(struct docker *d, const char *id, int tail, docker_done_fn fn,
                               void *ud);

/* ---- follow streams (docker_stream.c) ---- */
struct docker_stream;
/* One decoded item of a stream: a JSON object (events, stats) or a log chunk. */
struct docker_item {
    json_t *json;     /* events/stats: the object (borrowed); NULL for logs */
    const char *data; /* logs: the bytes of one frame (not NUL-terminated) */
    size_t len;
    int fd; /* logs: 1 stdout, 2 stderr (a TTY container: always 1) */
};
/* Return 0 to go on, -1 to close the stream (end is then called with status -1). */
typedef int (*docker_item_fn)(const struct docker_item *it, void *ud);

/* GET /events filtered by a label ("paddock.engine=ID") and type container. end is called once
 * when the stream ends (daemon gone: status -1) unless docker_stream_close came first. */
struct docker_stream *docker_events_follow(struct docker *d, const char *label,
                                           docker_item_fn on_item, docker_done_fn on_end, void *ud);
/* GET /containers/{id}/stats?stream=1: one object a second. */
struct docker_stream *docker_stats_follow(struct docker *d, const char *id, docker_item_fn on_item,
                                          docker_done_fn on_end, void *ud);
/* GET /containers/{id}/logs?follow=1&stdout=1&stderr=1&tail=N[&timestamps=1]; tty says the
 * container has a TTY (raw stream, no framing). */
struct docker_stream *docker_logs_follow(struct docker *d, const char *id, int tail, int timestamps,
                                         int tty, docker_item_fn on_item, docker_done_fn on_end,
                                         void *ud);
/* Stop a stream; neither callback is called afterwards. Not from inside on_item (return -1). */
void docker_stream_close(struct docker *d, struct docker_stream *s);

#endif
