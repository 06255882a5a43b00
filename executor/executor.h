/* State shared by the executor's parts: one process, one shell, one action at a time. */
#ifndef PADDOCK_EXECUTOR_EXECUTOR_H
#define PADDOCK_EXECUTOR_EXECUTOR_H

#include <stdbool.h>
#include <sys/types.h>

#include "action.h"
#include "common/evloop.h"
#include "reqlog.h"
#include "shell.h"

#define EXECUTOR_DEFAULT_TIMEOUT 120.0  /* seconds, OpenHands' sandbox.timeout */
#define EXECUTOR_DEFAULT_NO_CHANGE 10.0 /* seconds, NO_CHANGE_TIMEOUT_SECONDS */
/* A streamed command's first output waits this long for its end (seconds, --stream-hold). */
#define EXECUTOR_DEFAULT_STREAM_HOLD 0.002
#define EXECUTOR_MAX_BODY (64u * 1024 * 1024) /* request bodies above this get 413 */
#define EXECUTOR_CONNECTION_TIMEOUT 60u       /* seconds a connection may idle */
#define EXECUTOR_ENV_TIMEOUT 30.0             /* seconds for POST /env's shell command */

struct executor_config {
    const char *socket_path;
    const char *working_dir;
    const char *username; /* name reported for the agent uid when passwd has none */
    bool switch_user;     /* run the shell as uid/gid (we are root and --user-id was given) */
    uid_t uid;            /* the shell's uid */
    gid_t gid;
    double no_change_timeout;
    double stream_hold; /* seconds a streamed action's first output waits for its end */
    bool auto_lint;     /* --auto-lint: edits report the lint errors they introduced (lint.h) */
};

struct server;
struct run_state;
struct fsjob_state;
struct ipython;
struct browse;

struct executor {
    struct executor_config cfg;
    struct evloop *loop;
    struct shell shell;
    struct server *server;
    struct action_queue queue;
    struct run_state *run;
    struct execute_stream *held; /* a first output frame waiting for its action's end */
    struct fsjob_state *fsjob;   /* file actions: the child at work, the undo history */
    char *api_key;               /* X-Session-API-Key, NULL when none is configured */
    double started_at;           /* evloop_now() at start */
    double last_action_at;       /* evloop_now() of the last /execute_action */
    bool serving;                /* the socket is up */
    bool shell_started;          /* a shell printed its first prompt once */
    bool stopping;
    bool quiet;        /* --quiet: no line per request in the container log */
    struct reqlog log; /* those lines, a burst a second */
    bool shell_broken; /* it kept dying before its first prompt: actions fail fast */
    int shell_failures;
    const char *fatal; /* why start-up failed */

    unsigned plugins;        /* a bit per entry of plugin.c's table, from --plugins */
    struct ipython *ipython; /* run_ipython's state while the ipython plugin is on */
    struct browse *browse;   /* the browse actions' state */
    char *skills_dir;        /* agent_skills: the directory of the module on PYTHONPATH */
};

#endif
