/* The black-box harness of the executor suite: start the real binary (argv[1] of the test
 * program) in a fresh temp dir with the options a test needs (unix socket and/or loopback
 * TCP, an API key, environment, the shell, --home, extra arguments), talk HTTP to it with
 * libcurl, stop it by PID. One instance per running executor; tests keep theirs in a static.
 * EXECUTOR_SHELL=/path/to/shell in the environment runs every executor with that --shell
 * (busybox ash) unless a test picks one. */
#ifndef PADDOCK_TESTS_EXECUTOR_BB_H
#define PADDOCK_TESTS_EXECUTOR_BB_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define BB_MAX_ARGS 24
#define BB_MAX_ENV 8

/* How an executor is started. Zero is the usual: a unix socket, no key, this process's
 * environment and PATH, $EXECUTOR_SHELL, HOME left alone, a 0700 temp dir. */
struct bb_options {
    const char *const *args;     /* more arguments, NULL-terminated (may name files in the dir) */
    bool tcp;                    /* also --listen on a free port (requests: see use_tcp) */
    bool tcp_only;               /* --listen only, no --socket */
    const char *listen_host;     /* the --listen host; NULL: 127.0.0.1 (requests always go there) */
    const char *env_key;         /* SESSION_API_KEY for the executor */
    const char *api_key;         /* sent as X-Session-API-Key by bb_http and friends */
    const char *env[BB_MAX_ENV]; /* "NAME=value" set for the executor */
    const char *path_env;        /* PATH for the executor (and so its shell) */
    const char *shell;           /* --shell; NULL: $EXECUTOR_SHELL when set; "": none */
    const char *no_change_timeout; /* --no-change-timeout; NULL: "1"; "": not given */
    bool own_home;                 /* --home <dir>/home */
    unsigned dir_mode;             /* the temp dir's mode; 0 is 0700 */
    /* Relative to the workspace: whether it existed when the socket appeared is kept in
     * ready_file_existed (the setup script ran before the executor served). */
    const char *ready_file;
    /* Root only: the executor runs in a mount namespace of its own (gone with it), where the
     * workspace is a tmpfs with these options ("size=256k") and each path of hide (NULL-
     * terminated) is covered by an empty file that is not executable. */
    const char *workspace_tmpfs;
    const char *const *hide;
    bool log_file; /* the executor's stdout and stderr go to <dir>/executor.log */
};

struct bb {
    struct bb_options opt;
    char dir[64];    /* the temp dir, removed at stop */
    char sock[100];  /* <dir>/executor.sock ("" when the executor runs on TCP only) */
    char work[128];  /* <dir>/workspace, the --working-dir */
    char home[128];  /* <dir>/home with own_home, else "" */
    char tcp[64];    /* "127.0.0.1:PORT" with tcp */
    char listen[80]; /* the --listen argument */
    bool use_tcp;    /* requests go to tcp, not sock (set with tcp_only; tests may toggle) */
    bool ready_file_existed;
    pid_t pid; /* -1 when none runs */
    CURL *curl;
};

struct bb_reply {
    long status;
    char *body;
    size_t len, cap;
    json_t *json;       /* the body parsed, when it is JSON */
    char *content_type; /* response headers of interest */
    char *disposition;
    char *transfer_encoding; /* "chunked" when the reply was sent before its length was known */
};

/* The executor binary; set by bb_init. */
extern const char *bb_executor;
/* Takes the executor from argv[1]; -1 (usage printed) without it. EXECUTOR_TEST_FILTER=PATTERN
 * in the environment runs only the tests whose names match. */
int bb_init(int argc, char **argv);

/* The temp dir and paths (and a free port with o->tcp); nothing runs yet, so a test may put
 * files there first. o may be NULL. -1 on failure. */
int bb_prepare(struct bb *e, const struct bb_options *o);
/* Starts the executor bb_prepare made ready (--working-dir, --no-change-timeout, the
 * listeners, the options) and waits until /alive answers 200. -1 on failure. */
int bb_launch(struct bb *e);
/* bb_prepare + bb_launch. */
int bb_start(struct bb *e, const struct bb_options *o);
/* SIGTERM; checks the clean exit (0, socket removed); removes the temp dir. 0 when no
 * executor was started. */
int bb_stop(struct bb *e);

/* Sets up h for one request to e (no extra headers); the reply is collected into r. */
void bb_setup(struct bb *e, CURL *h, const char *method, const char *path, const char *body,
              struct bb_reply *r);
/* Performs a handle set up by bb_setup with the key header (NULL: none); fills status, json. */
void bb_perform(CURL *h, const char *key, struct bb_reply *r);
/* One request on e's keep-alive handle with e's key; fails the test when curl fails. */
struct bb_reply bb_http(struct bb *e, const char *method, const char *path, const char *body);
/* Same with an explicit API key header (NULL: none), whatever e's key is. */
struct bb_reply bb_http_key(struct bb *e, const char *method, const char *path, const char *body,
                            const char *key);
/* POST a multipart/form-data upload of one file (field "file", the given file name). */
struct bb_reply bb_upload(struct bb *e, const char *query, const char *filename, const void *data,
                          size_t n);
/* POST path with a body of size spaces, announced by Content-Length (or sent chunked, with
 * no length) and streamed as the executor reads it, on a connection of its own; header: one
 * more header line (NULL: none). *unsent: the bytes never sent. */
struct bb_reply bb_post_spaces(struct bb *e, const char *path, const char *header, size_t size,
                               bool chunked, size_t *unsent);
void bb_reply_free(struct bb_reply *r);

/* POST /execute_action with body; asserts 200 and a JSON reply. */
struct bb_reply bb_action(struct bb *e, const char *body);
/* {"action": action} (the reference is taken); asserts 200 and JSON. */
struct bb_reply bb_execute(struct bb *e, json_t *action);
/* {"action": {"action": kind, "args": args}} (the reference is taken). */
struct bb_reply bb_act(struct bb *e, const char *kind, json_t *args);

/* {"action": {"action": "run", "args": {...}, "timeout": t}}; t < 0: none. */
char *bb_run_body(const char *command, bool is_input, double timeout, bool blocking);
/* A blocking run with a timeout (< 0: none); asserts 200 and JSON. */
struct bb_reply bb_run_full(struct bb *e, const char *command, bool is_input, double timeout);
/* A non-blocking run (the no-change timeout applies). */
struct bb_reply bb_run_nonblocking(struct bb *e, const char *command, bool is_input,
                                   double timeout);
/* A blocking run with 30 s. */
struct bb_reply bb_run(struct bb *e, const char *command);

/* bb_run, then: the exit code is exit_code (unless BB_ANY_EXIT) and the content is content
 * (unless NULL). */
#define BB_ANY_EXIT (-1000)
void bb_expect_run(struct bb *e, const char *command, long long exit_code, const char *content);
/* bb_run, then: the content holds part. */
void bb_expect_contains(struct bb *e, const char *command, const char *part);

/* first and then the new output of the running command, asked for each second, until it
 * holds want or within seconds pass; malloc'd (NULL when out of memory). */
char *bb_output_until(struct bb *e, const char *first, const char *want, double within);
/* A cmocka teardown: ^C until nothing runs in bb_settle_target's shell (-1 if it never
 * settles). */
extern struct bb *bb_settle_target;
int bb_settle_shell(void **state);

/* Parts of an observation. */
const char *bb_observation(const struct bb_reply *r);
const char *bb_content(const struct bb_reply *r);
const char *bb_message(const struct bb_reply *r);
const json_t *bb_extra(const struct bb_reply *r, const char *key);
const char *bb_extra_str(const struct bb_reply *r, const char *key);
json_t *bb_meta(const struct bb_reply *r);
const char *bb_meta_str(const struct bb_reply *r, const char *key);
long long bb_exit_code(const struct bb_reply *r);
/* The "detail" of an error reply. */
const char *bb_detail(const struct bb_reply *r);

double bb_now(void);
void bb_assert_prefix(const char *s, const char *prefix);
void bb_assert_contains(const char *s, const char *part);
/* dir/rel in one of 32 rotating buffers (so a test can hold a few). */
const char *bb_path(const char *dir, const char *rel);
/* True when `command -v name` finds it here. */
bool bb_have_program(const char *name);
/* Runs argv (NULL-terminated, from PATH) and returns what it wrote to fd (1 or 2; caller
 * frees); *status = its exit code (128 + signal). */
char *bb_capture(const char *const *argv, int fd, int *status);
/* The executor run with args (start-up refusals): its stderr, and its exit code. */
char *bb_executor_stderr(const char *const *args, int *status);
/* A file's content, NUL-terminated (caller frees), NULL when unreadable. */
char *bb_read_file(const char *path, size_t *len);
void bb_write_file(const char *path, const void *data, size_t n);

#endif
