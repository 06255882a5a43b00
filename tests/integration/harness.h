/* Integration-test harness: real `paddock serve` processes against the real Docker daemon.
 *
 * Environment (set by tests/integration/meson.build):
 *   PADDOCK_BIN       the paddock binary under test
 *   PADDOCK_EXECUTOR  the static executor the engine bind-mounts into sandboxes
 *   PADDOCK_SRC       the source tree
 *   PADDOCK_ALLOW_SKIP=1  exit 77 (skip) instead of failing when Docker or the image is missing
 */
#ifndef PADDOCK_TESTS_HARNESS_H
#define PADDOCK_TESTS_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HARNESS_IMAGE "paddock/base:local"
#define HARNESS_MAX_ENV 8
#define HARNESS_MAX_IDS 128

/* One `paddock serve` child and its temp state dir. */
struct engine_proc {
    pid_t pid;       /* 0 when not running */
    char *state_dir; /* mkdtemp; removed by engine_destroy */
    char *socket;    /* <state_dir>/engine.sock: the agents' channel */
    char *op_socket; /* <state_dir>/operator.sock: the operator's channel (api() uses it) */
    char *log;       /* stderr+stdout of the current run: <state_dir>/serve-N.log */
    int runs;        /* how many times it was started */
    const char *extra_env[HARNESS_MAX_ENV]; /* "K=V" added to the child's environment */
    char *session_ids[HARNESS_MAX_IDS];     /* sessions this test created (for cleanup) */
    int n_ids;
};

/* A reply: status (-1 = transport error, message in err), the body, and the body parsed as
 * JSON when it is JSON. */
struct reply {
    long status;
    char *body;
    size_t len;
    json_t *json;
    char err[256];
};

/* ---- preconditions ---- */

/* Docker answers /_ping and the image exists, and PADDOCK_BIN/PADDOCK_EXECUTOR are set; else
 * print why and exit 1 (or 77 with PADDOCK_ALLOW_SKIP=1). Call first in main(). */
void harness_require(void);
const char *harness_bin(void);
const char *harness_docker_socket(void);

/* ---- engines ---- */

/* New temp state dir; nothing started. */
struct engine_proc *engine_new(void);
/* Start `paddock serve` on e's state dir and wait until GET /v1/info answers (≤ 10 s).
 * Returns 0, or -1 after printing the log. */
int engine_start(struct engine_proc *e);
/* SIGTERM by pid, wait (≤ 30 s, then SIGKILL). Returns the exit status as from waitpid()
 * translated: the exit code, or 128+signal; prints the log when it is not 0. */
int engine_stop(struct engine_proc *e);
/* Stop if running (asserting nothing), remove every container this engine's test made,
 * remove the state dir, free. Returns the number of containers it had to remove. */
int engine_destroy(struct engine_proc *e);
void engine_print_log(const struct engine_proc *e);
/* Remember a session id for cleanup. */
void engine_track(struct engine_proc *e, const char *id);
/* The engine id kept in <state>/engine.id (malloc'd), or NULL. */
char *engine_read_id(const struct engine_proc *e);

/* ---- group fixtures: one engine per test program ---- */
extern struct engine_proc *harness_eng;
extern int harness_teardown_failed; /* main() returns 1 when set */
int harness_group_setup(void **state);
/* The same with PADDOCK_CONFIRM=never: no action waits for approval. */
int harness_group_setup_unsupervised(void **state);
/* Stop the engine (it must exit 0 on SIGTERM: a sanitizer report changes that) and remove what
 * the test made. */
int harness_group_teardown(void **state);
/* The same, and any container left for cleanup to remove is a failure too. */
int harness_group_teardown_clean(void **state);
/* Removes every image built with paddock.test=1 (runtime images of the tests), whatever its
 * tags. */
void harness_remove_test_images(void);

/* ---- HTTP ---- */

/* Blocking request over a unix socket. body may be NULL (no body); body_len < 0 = strlen. */
void http_unix(const char *sock, const char *method, const char *path, const char *body,
               long body_len, long timeout_ms, struct reply *out);
void reply_free(struct reply *r);

/* Engine API shorthands, on the operator's channel (as the CLI and the dashboard). */
void api(struct engine_proc *e, const char *method, const char *path, const char *body,
         struct reply *out);
/* The same on the agents' channel (the engine's --socket). */
void api_agent(struct engine_proc *e, const char *method, const char *path, const char *body,
               struct reply *out);
/* The same, asserting the status is want; returns the JSON reply (caller decrefs; NULL when
 * the body is not JSON). */
json_t *api_json(struct engine_proc *e, const char *method, const char *path, const char *body,
                 long want);
/* Docker Engine API on the host daemon, path starting with "/v1.41/...". */
void docker(const char *method, const char *path, struct reply *out);

/* POST /v1/sessions with body (NULL = empty); asserts 201 + state ready; tracks the id;
 * returns the session object (caller decrefs). */
json_t *session_new(struct engine_proc *e, const char *body);
/* POST execute_action for a run action; asserts HTTP 200; returns the observation. */
json_t *session_run(struct engine_proc *e, const char *id, const char *command);
/* DELETE the session; asserts 200 and state deleted. */
void session_delete(struct engine_proc *e, const char *id);

/* Wait (≤ ms) until the session's state is state; returns the session object (caller decrefs)
 * or NULL after printing the last one seen. */
json_t *session_wait_state(struct engine_proc *e, const char *id, const char *state, long ms);
/* The session's lifecycle events ({"events": [...]}.events; caller decrefs). */
json_t *session_events(struct engine_proc *e, const char *id);
/* The first lifecycle event of that kind, or NULL (borrowed from events). */
json_t *events_find(json_t *events, const char *kind);

/* Docker Engine API with a JSON body (NULL: none). */
void docker_body(const char *method, const char *path, const char *body, struct reply *out);

/* Containers (docker list objects) carrying all these labels ("k=v"), NULL-terminated. */
json_t *docker_containers_with_labels(const char *const *labels);

/* ---- processes ---- */

struct proc_result {
    int status; /* exit code, or 128+signal, or -1 when it did not finish in time (killed) */
    char *out;
    char *err;
};

/* Run argv with extra "K=V" env (NULL-terminated list, may be NULL), capture stdout and
 * stderr, wait ≤ timeout_ms. */
void proc_run(char *const argv[], const char *const *env, long timeout_ms, struct proc_result *res);
void proc_result_free(struct proc_result *r);

/* ---- misc ---- */

double now_ms(void);
void sleep_ms(long ms);
bool path_exists(const char *path);
char *strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The string member of a JSON path like "extras.metadata.working_dir", or NULL. */
json_t *jpath(json_t *j, const char *dotted);
const char *jstr(json_t *j, const char *dotted);

#endif
