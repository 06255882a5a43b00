/* The sandbox driver boundary: every operation on a sandbox, its images and its executor
 * channel, as one table of functions. The engine holds one driver (eng->driver, chosen by name
 * with `paddock serve --driver` or the config's paddock.driver) and reaches the sandbox runtime
 * only through it. Docker (driver_docker.c) is the first implementation; another is one file
 * with a `const struct sandbox_driver` and one line in driver.c's table.
 *
 * The normalized form. Replies keep the shape of the Docker Engine API, which is what the
 * engine was written against, so a driver translates to it rather than the engine to each
 * driver:
 * - status: -1 when the runtime could not be reached (message says why); else an HTTP status
 *   with Docker's meaning for that call (2xx done, 304 already so, 404 no such sandbox or image,
 *   409 conflict or not in a state for it, 400 refused configuration, 5xx failed).
 * - json: Docker's reply body, borrowed during the callback. The engine reads only these
 *   fields, which is what another driver must provide:
 *     create:  {"Id"}
 *     inspect: {"State": {"Status", "Running", "Paused", "ExitCode", "OOMKilled", "Error"},
 *               "NetworkSettings": {"Ports": {"PORT/PROTO": [{"HostIp", "HostPort"}]}}}
 *     list:    [{"Id", "Names", "State", "Labels"}]
 *     events:  {"Action" ("start", "die", "oom", "pause", "unpause", "destroy", ...),
 *               "Actor": {"ID", "Attributes": {the sandbox's labels}}}
 *     stats:   Docker's stats object (stats_compute reads it)
 *     changes: [{"Path", "Kind": 0 modified, 1 added, 2 deleted}] or null
 *     volume list: {"Volumes": [{"Name", "Labels"}]}
 *     info:    {"Runtimes", "Driver", "DriverStatus", "DockerRootDir"?, "OSType",
 *              "Architecture" (uname's machine: x86_64, aarch64, ...)} (DockerRootDir: where
 *              layers and volumes live, for the disk watchdog's free-space trigger)
 * - The create request is Docker's create body (session_config_container builds it): Image,
 *   Cmd, Entrypoint, Env, Labels, User, WorkingDir, ExposedPorts and HostConfig (mounts,
 *   limits, capabilities, security options, network mode, port bindings, runtime, devices),
 *   plus "Platform" ("os/arch[/variant]", Docker's query parameter) when a session names one.
 *   A driver honours what it can and refuses (400) what it cannot enforce.
 * Sandbox ids are opaque strings the driver chose (the container id for Docker).
 *
 * Every int-returning operation returns 0 (fn is called exactly once, later, from the loop) or
 * -1 when the request could not even be made (fn is not called). */
#ifndef PADDOCK_DRIVER_H
#define PADDOCK_DRIVER_H

#include "engine/docker/http.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct engine;
struct session;

struct sandbox_reply {
    long status;         /* see above; -1: the runtime could not be reached */
    json_t *json;        /* the parsed body or NULL; borrowed during the callback */
    const char *message; /* the runtime's error message, the transport error, logs text, or "" */
};
typedef void (*sandbox_done_fn)(const struct sandbox_reply *r, void *ud);

/* One item of a follow stream: a JSON object (events, stats) or a piece of log output. */
struct sandbox_item {
    json_t *json;     /* events/stats: the object (borrowed); NULL for logs */
    const char *data; /* logs: bytes (not NUL-terminated) */
    size_t len;
    int fd; /* logs: 1 stdout, 2 stderr */
};
/* Return 0 to go on, -1 to close the stream (on_end then comes with status -1). */
typedef int (*sandbox_item_fn)(const struct sandbox_item *it, void *ud);
struct sandbox_stream;

/* A process started in a running sandbox (operator terminals). */
struct sandbox_exec;
struct sandbox_exec_opts {
    const char *const *cmd;  /* argv, NULL-terminated (required) */
    const char *const *env;  /* "K=V", NULL-terminated; NULL: the sandbox's */
    const char *user;        /* "uid[:gid]" or a name; NULL: the sandbox's */
    const char *working_dir; /* NULL: the sandbox's */
    int tty;                 /* a PTY: one raw stream (stdout and stderr merged, fd 1) */
    int rows, cols;          /* the PTY's first size (0: the runtime's default) */
    /* Called when the input queue drained after exec_write took less than asked. */
    void (*on_drain)(void *ud);
};
/* Output as it comes; return -1 to pause reading until exec_resume_output. */
typedef int (*sandbox_output_fn)(const char *data, size_t len, int fd, void *ud);
/* The end, called once: exit code and error NULL, or -1 and why. The handle is gone after. */
typedef void (*sandbox_exit_fn)(int exit_code, const char *error, void *ud);
/* One progress object of an image pull or build ({"status"} or {"stream"}), borrowed. */
typedef void (*sandbox_progress_fn)(json_t *obj, void *ud);

struct sandbox_driver {
    const char *name; /* what --driver and paddock.driver name */

    /* ---- the driver itself ----
     * open: connect to the runtime at address (NULL: the driver's default; Docker: a
     * DOCKER_HOST-style URL) and keep the state in eng->driver_state. Failing to reach the
     * runtime is not an error here (calls then fail with status -1); -1 with *err only when
     * the driver cannot work at all. close: after http_cancel_all, drops what is pending. */
    int (*open)(struct engine *eng, const char *address, char **err);
    void (*close)(struct engine *eng);
    /* Where the runtime is, for messages and for refusing to mount its socket (a path), and
     * what to check when it does not answer. */
    const char *(*address)(const struct engine *eng);
    const char *(*hint)(const struct engine *eng);
    /* The runtime's API version once known (NULL before), for GET /v1/info. */
    const char *(*api_version)(const struct engine *eng);
    /* The runtime's process ids are this host's (an exec's pid may be signalled). */
    bool (*is_local)(const struct engine *eng);
    /* ping: any 2xx when the runtime answers. version: negotiates, then the runtime's
     * version object. info: what the runtime supports (runtimes, storage driver). */
    int (*ping)(struct engine *eng, sandbox_done_fn fn, void *ud);
    int (*version)(struct engine *eng, sandbox_done_fn fn, void *ud);
    int (*info)(struct engine *eng, sandbox_done_fn fn, void *ud);

    /* ---- sandboxes ---- */
    /* Create (not start) a sandbox named name from the create body: 201 {"Id"}; 404 the image
     * is missing; 409 the name is taken; 400 the body is refused. */
    int (*create)(struct engine *eng, const char *name, json_t *body, sandbox_done_fn fn, void *ud);
    /* Start: 204, or 304 when it already runs. */
    int (*start)(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud);
    /* Stop (SIGTERM, then SIGKILL after timeout_s): 204, or 304 when already stopped. */
    int (*stop)(struct engine *eng, const char *id, int timeout_s, sandbox_done_fn fn, void *ud);
    /* Freeze and thaw every process (memory, cwd and variables kept): 204; 409 when not
     * running (pause) or not paused (resume). */
    int (*pause)(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud);
    int (*resume)(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud);
    /* Remove it whatever its state, with its anonymous volumes: 204; 404 when gone. */
    int (*remove)(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud);
    /* Give it another name (warm pool claims): 204; 409 when the name is taken. */
    int (*rename)(struct engine *eng, const char *id, const char *name, sandbox_done_fn fn,
                  void *ud);
    /* Its state (see the normalized form): 200, 404 when gone. */
    int (*inspect)(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud);
    /* 200 {"StatusCode"} once it is not running; status -1 after timeout_ms. */
    int (*wait)(struct engine *eng, const char *id, long timeout_ms, sandbox_done_fn fn, void *ud);
    /* Every sandbox (running or not) that carries the label ("key" or "key=value"): 200 and
     * the array. */
    int (*list)(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud);
    /* The files changed in its own filesystem (not in mounts): 200 and the array or null. */
    int (*changes)(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud);
    /* The last tail lines of its output: 200 with the text in message. */
    int (*logs_tail)(struct engine *eng, const char *id, int tail, sandbox_done_fn fn, void *ud);

    /* ---- follow streams: NULL when they cannot be opened; else on_end is called once when
     * the stream ends (status -1: the runtime went away), unless stream_close came first. */
    /* Lifecycle events of the sandboxes with the label. */
    struct sandbox_stream *(*events_follow)(struct engine *eng, const char *label,
                                            sandbox_item_fn on_item, sandbox_done_fn on_end,
                                            void *ud);
    /* A resource sample about once a second. */
    struct sandbox_stream *(*stats_follow)(struct engine *eng, const char *id,
                                           sandbox_item_fn on_item, sandbox_done_fn on_end,
                                           void *ud);
    /* Output from the last tail lines on (tail < 0: all), timestamps prefixed when asked. */
    struct sandbox_stream *(*logs_follow)(struct engine *eng, const char *id, int tail,
                                          int timestamps, sandbox_item_fn on_item,
                                          sandbox_done_fn on_end, void *ud);
    /* No callback afterwards; not from inside on_item (return -1 there). */
    void (*stream_close)(struct engine *eng, struct sandbox_stream *s);

    /* ---- volumes the engine made for sessions (named by label) ---- */
    /* 200 with the volume, 404 when it does not exist. */
    int (*volume_inspect)(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud);
    int (*volume_list)(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud);
    /* 204; 404 gone; 409 in use. */
    int (*volume_remove)(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud);

    /* ---- processes in a running sandbox (operator terminals) ---- */
    /* NULL when it could not even be asked; else on_exit comes once, unless exec_close. */
    struct sandbox_exec *(*exec_open)(struct engine *eng, const char *id,
                                      const struct sandbox_exec_opts *opts,
                                      sandbox_output_fn on_output, sandbox_exit_fn on_exit,
                                      void *ud);
    /* Bytes taken (fewer when the queue is full: opts.on_drain says when to go on), -1 when
     * the input is over. */
    long (*exec_write)(struct sandbox_exec *x, const void *data, size_t len);
    /* End of input once what is queued is sent; -1 when the transport has no half-close. */
    int (*exec_close_input)(struct sandbox_exec *x);
    /* The PTY's size; fn (may be NULL) gets the reply of the resize that carried this size or
     * a later one, and is not called once the process ended or was closed. */
    int (*exec_resize)(struct sandbox_exec *x, int rows, int cols, sandbox_done_fn fn, void *ud);
    void (*exec_resume_output)(struct sandbox_exec *x);
    /* The process's id in the runtime ("" before it exists), for exec_inspect later. */
    const char *(*exec_id)(const struct sandbox_exec *x);
    /* Stop following; no callback afterwards. The runtime may leave the process running. */
    void (*exec_close)(struct sandbox_exec *x);
    /* 200 {"Running", "Pid" (the host's when is_local), "ExitCode"}. */
    int (*exec_inspect)(struct engine *eng, const char *exec_id, sandbox_done_fn fn, void *ud);

    /* ---- images ---- */
    /* 200 with the image, 404 when there is none. */
    int (*image_inspect)(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud);
    /* 200 once pulled, for platform ("os/arch[/variant]", NULL: the runtime's own); 404/500
     * with why; 504 when the runtime said nothing about it for timeout_ms (a stall bound). */
    int (*image_pull)(struct engine *eng, const char *ref, const char *platform, long timeout_ms,
                      sandbox_progress_fn on_progress, sandbox_done_fn fn, void *ud);
    /* Build the tar context (a Dockerfile at its root) as tag, for platform ("os/arch[/variant]",
     * NULL: the runtime's own): 200 {"Id"}, 500 with why. */
    int (*image_build)(struct engine *eng, const char *tag, json_t *labels, int nocache,
                       const char *platform, const void *context, size_t len, long timeout_ms,
                       sandbox_progress_fn on_progress, sandbox_done_fn fn, void *ud);
    /* The images carrying the label ("key" or "key=value"): 200 and
     * [{"Id", "RepoTags", "Labels", "Size", "Created" (seconds since the epoch)}]. */
    int (*image_list)(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud);
    /* Remove the reference name (the image with it when it was the last): 200; 404 no such
     * image; 409 a sandbox uses it. */
    int (*image_remove)(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud);
    /* Give image name the reference ref ("repo:tag"): 201. */
    int (*image_tag)(struct engine *eng, const char *name, const char *ref, sandbox_done_fn fn,
                     void *ud);

    /* ---- the executor channel: HTTP to the paddock-executor inside session s ----
     * ready: whether a request may be tried now (the executor is listening and the driver
     * knows what to check its server against; asking may start learning that). request: req
     * with the channel filled in (its unix_socket or URL host is the driver's, and the check
     * of who serves it); fn is http_start's. */
    bool (*executor_ready)(struct session *s);
    int (*executor_request)(struct session *s, const struct http_request *req, http_done_fn fn,
                            void *ud);
};

/* The drivers (driver.c's table lists them). */
extern const struct sandbox_driver driver_docker; /* driver_docker.c */
extern const struct sandbox_driver driver_local;  /* driver_local.c: a session backend */

/* The driver of that name, or NULL. */
const struct sandbox_driver *driver_find(const char *name);
/* The names of every driver, ", "-separated, for messages. */
const char *driver_names(void);

#endif
