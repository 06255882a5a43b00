/* Black-box test helpers for paddock-executor: start the binary on a unix socket in a fresh
 * temp dir, drive it over HTTP with libcurl, stop it by PID. Shared by the test programs of
 * the executor suite. EXECUTOR_SHELL=/path/to/shell runs them against another shell. */
#ifndef PADDOCK_TESTS_EXECUTOR_BLACKBOX_H
#define PADDOCK_TESTS_EXECUTOR_BLACKBOX_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

extern const char *executor_path; /* the binary under test (argv[1]) */
extern char tmpdir[64];           /* the running executor's temp dir */
extern char sock_path[100];
extern char work_dir[100]; /* its --working-dir, tmpdir/workspace */
extern pid_t executor_pid;
extern CURL *curl;

struct reply {
    long status;
    char *body;
    size_t len;
    json_t *json;
};

struct executor_options {
    const char *const *args; /* more arguments, NULL-terminated; NULL for none */
    const char *path_env;    /* PATH for the executor and its shell; NULL: this process's */
    bool open_tmpdir;        /* make the temp dir 0755, for an agent uid other than ours */
};

/* Starts the executor (with --no-change-timeout 1) and waits until /alive answers 200. */
int executor_start(const struct executor_options *o);
/* SIGTERM; -1 unless it exits 0 and removes its socket. Removes the temp dir. */
int executor_stop(void);

double now(void);
void setup_handle(CURL *h, const char *method, const char *path, const char *body, struct reply *r);
/* One request on the shared keep-alive handle; the body is parsed as JSON when it is JSON. */
struct reply http(const char *method, const char *path, const char *body);
void reply_free(struct reply *r);
/* POSTs {"action": action} to /execute_action (takes the reference); asserts 200 + JSON. */
struct reply execute(json_t *action);

/* Builds {"action": {"action": "run", "args": {...}, "timeout": t}}; timeout < 0: none. */
char *run_body(const char *command, bool is_input, double timeout, bool blocking);
struct reply run_full(const char *command, bool is_input, double timeout);
struct reply run(const char *command);

const char *content(const struct reply *r);
json_t *meta(const struct reply *r);
json_int_t exit_code(const struct reply *r);
const char *meta_str(const struct reply *r, const char *key);

void assert_prefix(const char *s, const char *prefix);
void assert_contains(const char *s, const char *part);

#endif
