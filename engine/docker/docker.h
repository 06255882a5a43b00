/* Docker Engine API client (asynchronous, on the engine loop). */
#ifndef PADDOCK_DOCKER_H
#define PADDOCK_DOCKER_H

#include <jansson.h>
#include <stdbool.h>

struct loop;
struct http;
struct docker;

struct docker_reply {
    long status;         /* HTTP status, -1 when the daemon could not be reached; 400 also
                            when it speaks no API version we do (message says which) */
    json_t *json;        /* parsed body or NULL; borrowed during the callback */
    const char *message; /* Docker's "message", or the transport error, or "" */
};

typedef void (*docker_done_fn)(const struct docker_reply *r, void *ud);

/* host: DOCKER_HOST-style "unix:///path" or "tcp://host:port", or NULL for $DOCKER_HOST, else
 * /var/run/docker.sock. For tcp, DOCKER_TLS_VERIFY (non-empty) verifies the daemon against
 * $DOCKER_CERT_PATH/ca.pem (default ~/.docker) and presents cert.pem/key.pem when present;
 * DOCKER_TLS alone encrypts without verifying (both as the docker CLI). A host that cannot be
 * used does not fail here: every call then fails (status -1) with the reason. NULL only when
 * out of memory. The API version is negotiated before the first call goes out (/_ping and
 * /version: the newest both speak, at least 1.41); calls made meanwhile wait for it. */
struct docker *docker_new(struct http *http, const char *host);
/* Drops what is still pending without calling back (run http_cancel_all first to have every
 * request finished with a "cancelled" reply) and closes open exec sessions. */
void docker_free(struct docker *d);
/* The daemon's address for messages: the socket path, or "tcp://host:port". */
const char *docker_socket(const struct docker *d);
/* How to start a local daemon, for error messages. */
const char *docker_start_hint(void);
/* What to check for this daemon's address (the start hint for a socket; DOCKER_HOST and the
 * TLS variables for TCP). */
const char *docker_hint(const struct docker *d);
/* The negotiated API version ("1.41"), or NULL before (or after a failed) negotiation. */
const char *docker_api_version(const struct docker *d);

int docker_ping(struct docker *d, docker_done_fn fn, void *ud);
/* GET /version (negotiating first, as any call): {"ApiVersion", "MinAPIVersion", ...}. */
int docker_version(struct docker *d, docker_done_fn fn, void *ud);
/* GET /info: storage driver, runtimes, ... */
int docker_info(struct docker *d, docker_done_fn fn, void *ud);
/* GET /volumes/{name} (404 when it does not exist yet). */
int docker_volume_inspect(struct docker *d, const char *name, docker_done_fn fn, void *ud);
/* POST /containers/create?name=NAME[&platform=P] with body; reply json has "Id". platform:
 * "os/arch[/variant]" or NULL (the daemon's own). */
int docker_container_create(struct docker *d, const char *name, const char *platform, json_t *body,
                            docker_done_fn fn, void *ud);
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
/* POST /containers/{id}/rename?name=NAME (409 when the name is taken). */
int docker_container_rename(struct docker *d, const char *id, const char *name, docker_done_fn fn,
                            void *ud);
/* Freeze and thaw the container's cgroup: processes keep their memory, cwd and variables. */
int docker_container_pause(struct docker *d, const char *id, docker_done_fn fn, void *ud);
int docker_container_unpause(struct docker *d, const char *id, docker_done_fn fn, void *ud);
/* POST /containers/{id}/wait?condition=not-running; replies {"StatusCode"} once it stops
 * (no timeout). */
int docker_container_wait(struct docker *d, const char *id, docker_done_fn fn, void *ud);
/* The same, giving up after timeout_ms (status -1 then). */
int docker_container_wait_timeout(struct docker *d, const char *id, long timeout_ms,
                                  docker_done_fn fn, void *ud);
/* GET /containers/json?all=1 filtered by one label ("key" or "key=value"); reply json is the
 * array. */
int docker_container_list(struct docker *d, const char *label, docker_done_fn fn, void *ud);
/* GET /containers/{id}/logs?stdout=1&stderr=1&tail=N (demultiplexed text in message). */
int docker_container_logs_tail(struct docker *d, const char *id, int tail, docker_done_fn fn,
                               void *ud);
/* GET /containers/{id}/changes: [{"Path", "Kind": 0 modified, 1 added, 2 deleted}] or null;
 * the container's own filesystem only (mounts are not seen). */
int docker_container_changes(struct docker *d, const char *id, docker_done_fn fn, void *ud);

/* ---- volumes (docker_volume.c) ---- */
/* GET /volumes filtered by one label; reply json {"Volumes": [{"Name", "Labels", ...}]}. */
int docker_volume_list(struct docker *d, const char *label, docker_done_fn fn, void *ud);
/* DELETE /volumes/{name} (204; 404 gone; 409 in use). */
int docker_volume_remove(struct docker *d, const char *name, docker_done_fn fn, void *ud);

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
/* The same, first replaying the events since a wall-clock time (Unix seconds; 0: none) that
 * the daemon still keeps: nothing is missed between a reconcile and the subscription. */
struct docker_stream *docker_events_follow_since(struct docker *d, const char *label, double since,
                                                 docker_item_fn on_item, docker_done_fn on_end,
                                                 void *ud);
/* GET /containers/{id}/stats?stream=1: one object a second. */
struct docker_stream *docker_stats_follow(struct docker *d, const char *id, docker_item_fn on_item,
                                          docker_done_fn on_end, void *ud);
/* GET /containers/{id}/logs?follow=1&stdout=1&stderr=1&tail=N[&timestamps=1] (tail < 0: all);
 * tty says the container has a TTY (raw stream, no framing). */
struct docker_stream *docker_logs_follow(struct docker *d, const char *id, int tail, int timestamps,
                                         int tty, docker_item_fn on_item, docker_done_fn on_end,
                                         void *ud);
/* Stop a stream; neither callback is called afterwards. Not from inside on_item (return -1). */
void docker_stream_close(struct docker *d, struct docker_stream *s);

/* ---- exec sessions (docker_exec.c) ----
 * POST /containers/{id}/exec, then POST /exec/{id}/start upgraded to a raw bidirectional
 * stream (101) on a connection of its own, driven by the loop; the exit code from
 * GET /exec/{id}/json once the stream ends. Works over the unix socket, TCP and TLS. */
struct docker_exec;
struct docker_exec_opts {
    const char *const *cmd;  /* argv, NULL-terminated (required) */
    const char *const *env;  /* "K=V", NULL-terminated; NULL: the container's */
    const char *user;        /* "uid[:gid]" or a name; NULL: the container's */
    const char *working_dir; /* NULL: the container's */
    int tty;                 /* a PTY: one raw stream (stdout and stderr merged, fd 1) */
    int no_stdin;            /* do not attach stdin (docker_exec_write is refused) */
    int rows, cols;          /* the PTY's first size (0: Docker's default) */
    /* Called when the output queue drained after docker_exec_write took less than asked. */
    void (*on_drain)(void *ud);
};
/* Output: data as it comes (a TTY's bytes, or one stdout/stderr frame piece); never
 * NUL-terminated. Return 0 to go on; -1 pauses reading after the chunk at hand (its other
 * frames still come) until docker_exec_resume_output: back-pressure for a slow reader. */
typedef int (*docker_exec_output_fn)(const char *data, size_t len, int fd, void *ud);
/* The end, called once: the process's exit code and error NULL, or exit_code -1 and why
 * (the exec could not be made or started, the daemon went away). The handle is freed when it
 * returns. */
typedef void (*docker_exec_exit_fn)(int exit_code, const char *error, void *ud);

/* NULL when the request could not even be made (out of memory, no cmd); else on_exit is
 * called once, later, unless docker_exec_close comes first. */
struct docker_exec *docker_exec_open(struct docker *d, const char *container,
                                     const struct docker_exec_opts *opts,
                                     docker_exec_output_fn on_output, docker_exec_exit_fn on_exit,
                                     void *ud);
/* Queue input for the process (sent once the stream is up, in order). Returns how many bytes
 * were taken: fewer than len when the queue is full (DOCKER_EXEC_MAX_QUEUE; opts.on_drain says
 * when to go on), -1 when the stream is over or stdin is not attached. */
#define DOCKER_EXEC_MAX_QUEUE (1024 * 1024)
long docker_exec_write(struct docker_exec *x, const void *data, size_t len);
/* Bytes queued and not yet sent. */
size_t docker_exec_queued(const struct docker_exec *x);
/* End of input once the queue is sent (a half-close). Not over TLS, which has none: -1 (send
 * the TTY's ^D instead). */
int docker_exec_close_input(struct docker_exec *x);
/* POST /exec/{id}/resize?h=rows&w=cols (TTY only). Before the stream is up the size is kept
 * and sent right after the start; one resize is in flight at a time and the latest size wins.
 * fn (may be NULL) gets the reply of the resize that carried this size or a later one; it is
 * not called once the exec has ended or was closed. 0 or -1. */
int docker_exec_resize(struct docker_exec *x, int rows, int cols, docker_done_fn fn, void *ud);
/* Reading paused by on_output returning -1 goes on. */
void docker_exec_resume_output(struct docker_exec *x);
/* The exec's id once created ("" before). */
const char *docker_exec_id(const struct docker_exec *x);
/* Close the stream; no callback afterwards. Not after on_exit. Safe from inside on_output.
 * Docker does not end the process when its client goes: see docker_exec_inspect. */
void docker_exec_close(struct docker_exec *x);
/* GET /exec/{id}/json: {"Running", "Pid" (on the daemon's host), "ExitCode", ...}. */
int docker_exec_inspect(struct docker *d, const char *exec_id, docker_done_fn fn, void *ud);
/* The daemon is on this host (a unix socket): its PIDs are ours to signal. */
bool docker_is_local(const struct docker *d);

/* ---- images (docker_image.c) ---- */
/* One progress object of a pull or a build ({"status", "progressDetail"} or {"stream"}),
 * borrowed during the call. */
typedef void (*docker_progress_fn)(json_t *obj, void *ud);
/* GET /images/{name}/json: 200 with the image object, 404 when there is none. */
int docker_image_inspect(struct docker *d, const char *name, docker_done_fn fn, void *ud);
/* POST /images/create?fromImage=REPO&tag=TAG (TAG "latest" when ref names none; &platform=
 * when platform is not NULL): 200 once
 * the stream ends without an error object, else 500 with that error's message (Docker's own
 * status and message when it refuses before streaming). timeout_ms bounds a stall, not the
 * pull: 504 with a message saying so once the daemon sent nothing for that long (a pull that
 * makes progress may take longer; the daemon cancels it when the connection closes). */
int docker_image_pull(struct docker *d, const char *ref, const char *platform, long timeout_ms,
                      docker_progress_fn on_progress, docker_done_fn fn, void *ud);
/* POST /build?t=TAG with a tar context in memory: 200 with {"Id": aux.ID} on success, 500
 * with the error object's message (e.g. a RUN step's "returned a non-zero code"). platform:
 * "os/arch[/variant]" or NULL. */
int docker_image_build(struct docker *d, const char *tag, json_t *labels, int nocache,
                       const char *platform, const void *context, size_t len, long timeout_ms,
                       docker_progress_fn on_progress, docker_done_fn fn, void *ud);
/* GET /images/json filtered by a label ("key" or "key=value"): 200 and the array. */
int docker_image_list(struct docker *d, const char *label, docker_done_fn fn, void *ud);
/* POST /images/{name}/tag?repo=REPO&tag=TAG: 201. */
int docker_image_tag(struct docker *d, const char *name, const char *repo, const char *tag,
                     docker_done_fn fn, void *ud);
/* DELETE /images/{name}. */
int docker_image_remove(struct docker *d, const char *name, docker_done_fn fn, void *ud);
/* "repo:tag" / "repo@digest" / "repo" → repo and tag (malloc'd; "latest" by default). */
int docker_image_ref_split(const char *ref, char **repo, char **tag);

#endif
