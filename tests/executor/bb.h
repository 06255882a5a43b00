/* Shared helpers of the executor's black-box tests: start the binary in a fresh temp dir,
 * talk HTTP to it with libcurl (unix socket or TCP), stop it by PID. */
#ifndef PADDOCK_TESTS_EXECUTOR_BB_H
#define PADDOCK_TESTS_EXECUTOR_BB_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define BB_MAX_ARGS 24

struct bb {
    const char *exe;
    char dir[64];        /* the temp dir, removed at stop */
    char sock[100];      /* <dir>/executor.sock ("" when the executor runs on TCP only) */
    char work[128];      /* <dir>/workspace */
    char tcp[64];        /* "127.0.0.1:PORT" when it also listens on TCP */
    bool use_tcp;        /* requests go to tcp instead of sock */
    const char *api_key; /* sent as X-Session-API-Key when set */
    pid_t pid;
    CURL *curl;
};

struct bb_reply {
    long status;
    char *body;
    size_t len, cap;
    json_t *json;       /* the body parsed, when it is JSON */
    char *content_type; /* response headers of interest */
    char *disposition;
};

/* The temp dir and paths; a free TCP port in e->tcp when tcp is true. Returns -1 on failure. */
int bb_prepare(struct bb *e, const char *exe, bool tcp);
/* Starts the executor prepared with bb_prepare: --working-dir, --no-change-timeout 1, the
 * socket (unless no_socket), then the extra args (NULL-terminated); env_key sets
 * SESSION_API_KEY for it. Waits until /alive answers 200. -1 on failure. */
int bb_launch(struct bb *e, const char *const *extra, bool no_socket, const char *env_key);
/* bb_prepare + bb_launch with the usual options (and EXECUTOR_SHELL when set). */
int bb_start(struct bb *e, const char *exe);
/* SIGTERM; checks the clean exit (0, socket removed); removes the temp dir. */
int bb_stop(struct bb *e);

/* Sets up h for one request (no extra headers); the reply is collected into r. */
void bb_setup(struct bb *e, CURL *h, const char *method, const char *path, const char *body,
              struct bb_reply *r);
/* One request on e's keep-alive handle; fails the test when curl fails. */
struct bb_reply bb_http(struct bb *e, const char *method, const char *path, const char *body);
/* Same with an explicit API key header (NULL: none), whatever e->api_key says. */
struct bb_reply bb_http_key(struct bb *e, const char *method, const char *path, const char *body,
                            const char *key);
/* POST a multipart/form-data upload of one file (field "file", the given file name). */
struct bb_reply bb_upload(struct bb *e, const char *query, const char *filename, const void *data,
                          size_t n);
void bb_reply_free(struct bb_reply *r);

/* {"action": {"action": "run", "args": {...}, "timeout": t}}; t < 0: none. */
char *bb_run_body(const char *command, bool is_input, double timeout, bool blocking);
/* Runs a command (blocking, 30 s) and returns the observation (fails unless 200). */
struct bb_reply bb_run(struct bb *e, const char *command);
const char *bb_content(const struct bb_reply *r);
long long bb_exit_code(const struct bb_reply *r);

double bb_now(void);
void bb_assert_contains(const char *s, const char *part);
/* Runs argv (NULL-terminated) and returns its stdout (caller frees); *status = exit code. */
char *bb_capture(const char *const *argv, int *status);
/* A file's content (caller frees), NULL when unreadable. */
char *bb_read_file(const char *path, size_t *len);
void bb_write_file(const char *path, const void *data, size_t n);

#endif
