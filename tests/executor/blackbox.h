/* Black-box harness for paddock-executor tests: start the real binary on a unix socket in a
 * fresh temp dir, drive it over HTTP with libcurl, stop it by PID. Shared by the test
 * programs of the executor suite. */
#ifndef PADDOCK_TESTS_EXECUTOR_BLACKBOX_H
#define PADDOCK_TESTS_EXECUTOR_BLACKBOX_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct reply {
    long status;
    char *body;
    size_t len;
    json_t *json;
};

/* The executor binary (argv[1] of the test program). */
extern const char *blackbox_executor_path;
/* Of the running executor: its temp dir, socket and --working-dir (<tmpdir>/workspace). */
extern char blackbox_tmpdir[64];
extern char blackbox_sock_path[100];
extern char blackbox_work_dir[100];

double blackbox_now(void);

/* Starts the executor with --no-change-timeout 1 (and --shell $EXECUTOR_SHELL when set) plus
 * extra_args (NULL-terminated, may be NULL); returns once /alive answers. tmpdir_mode: the
 * temp dir's mode (0700 unless another user must reach the workspace). */
int blackbox_start(const char *const *extra_args, unsigned tmpdir_mode);
/* PATH for the next executor started and its shell; NULL: this process's. */
extern const char *blackbox_path_env;
/* The running executor's pid, -1 when none. */
extern pid_t blackbox_executor_pid;
/* SIGTERM; checks the clean exit and the removed socket; removes the temp dir. */
int blackbox_stop(void);
/* cmocka group fixtures around blackbox_start(NULL, 0700) / blackbox_stop(). */
int blackbox_group_setup(void **state);
int blackbox_group_teardown(void **state);

void blackbox_setup_handle(CURL *h, const char *method, const char *path, const char *body,
                           struct reply *r);
/* One request on the shared keep-alive handle; the body is parsed when it is JSON. */
struct reply blackbox_http(const char *method, const char *path, const char *body);
void blackbox_reply_free(struct reply *r);
/* POST /execute_action with body; asserts 200 and a JSON reply. */
struct reply blackbox_action(const char *body);

/* {"action": {"action": "run", "args": {...}, "timeout": t}}; timeout < 0: none. */
char *blackbox_run_body(const char *command, bool is_input, double timeout, bool blocking);
struct reply blackbox_run_full(const char *command, bool is_input, double timeout);
struct reply blackbox_run(const char *command);

const char *blackbox_content(const struct reply *r);
json_t *blackbox_meta(const struct reply *r);
json_int_t blackbox_exit_code(const struct reply *r);
const char *blackbox_meta_str(const struct reply *r, const char *key);

void blackbox_assert_prefix(const char *s, const char *prefix);
void blackbox_assert_contains(const char *s, const char *part);

#endif
