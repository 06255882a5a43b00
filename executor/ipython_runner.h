/* The Python process behind run_ipython: python3 as the agent user, driven over pipes.
 *
 * fds of the runner: 0 /dev/null (input() gets EOF), 1 and 2 the output pipe (what the cell
 * and its subprocesses print, read as it comes), 3 requests, 4 replies. `python3 -u -c
 * BOOTSTRAP` reads "<length>\n<script>" from fd 3 and runs the script
 * (ipython_runner_script); from then on both pipes carry frames "<kind> <length>\n<payload>":
 *
 *   replies  ready <sys.executable>   once, when the script runs
 *            done                     the request sent last has finished
 *   requests cell <code>              run a cell
 *            chdir <path>             os.chdir, errors ignored
 *
 * One request at a time: the next is sent after the previous one's `done`. The runner writes
 * all output before `done`, so output is complete when `done` is read. It leads its own
 * process group: an interrupt is SIGINT to the group, as a terminal's ^C. */
#ifndef PADDOCK_EXECUTOR_IPYTHON_RUNNER_H
#define PADDOCK_EXECUTOR_IPYTHON_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ansi.h"
#include "clip.h"
#include "common/buf.h"
#include "common/evloop.h"

extern const char ipython_runner_script[];

enum ipython_runner_event {
    IPYTHON_RUNNER_READY,  /* the script runs; r->executable is known */
    IPYTHON_RUNNER_DONE,   /* the request sent last finished; its output is in r->out */
    IPYTHON_RUNNER_EXITED, /* the process is gone; r->exit_code tells how */
};

struct ipython_runner_options {
    char *const *envp;
    const char *workdir;
    bool switch_user;
    uid_t uid;
    gid_t gid;
};

struct ipython_runner;
typedef void (*ipython_runner_fn)(struct ipython_runner *r, enum ipython_runner_event ev,
                                  void *ctx);

struct ipython_runner {
    struct ipython_runner_options opt;
    struct evloop *loop;
    pid_t pid;   /* -1: no process, or it was reaped */
    bool reaped; /* the reaper got its status (below) before its pipes closed */
    int status;
    struct evloop_watch reply; /* fd 4 of the runner, read end */
    struct evloop_watch req;   /* fd 3 of the runner, write end */
    struct evloop_watch out;   /* fds 1 and 2 of the runner, read end */
    bool writing;              /* req is watched for EPOLLOUT */
    struct buf wq;             /* request bytes the pipe has not taken yet */
    struct buf rq;             /* reply bytes not parsed yet */
    struct ansi_filter ansi;
    struct capture output; /* output since ipython_runner_clear_output(), colour codes dropped */
    bool saw_output;       /* any byte at all came since then */
    bool ready;            /* `ready` came */
    bool busy;             /* a request was sent and its `done` has not come */
    char *executable;      /* sys.executable of the runner */
    int exit_code;         /* after EXITED: exit status, or 128 + signal */
    ipython_runner_fn on_event;
    void *ctx;
    /* Each piece of output as read, before colour codes are dropped (NULL: nobody). */
    void (*tap)(void *tap_ctx, const char *data, size_t n);
    void *tap_ctx;
};

void ipython_runner_init(struct ipython_runner *r, struct evloop *loop,
                         const struct ipython_runner_options *opt, ipython_runner_fn on_event,
                         void *ctx);
/* Starts `python -u -c BOOTSTRAP` and sends the script; READY (or EXITED) follows. */
int ipython_runner_start(struct ipython_runner *r, const char *python);
bool ipython_runner_running(const struct ipython_runner *r);
/* Sends one request (see above); the runner is busy until its DONE. */
int ipython_runner_send(struct ipython_runner *r, const char *kind, const char *data, size_t n);
/* SIGINT to the runner's process group. */
void ipython_runner_interrupt(struct ipython_runner *r);
/* Reads what the pipes hold right now; events may follow. */
void ipython_runner_drain(struct ipython_runner *r);
/* Forgets the output so far. */
void ipython_runner_clear_output(struct ipython_runner *r);
/* SIGKILL to the process group and reap it; no event. */
void ipython_runner_stop(struct ipython_runner *r);
/* The executor's reaper found pid's status: true when it was the runner (EXITED follows when
 * its reply pipe closes). */
bool ipython_runner_reaped(struct ipython_runner *r, pid_t pid, int status);
void ipython_runner_free(struct ipython_runner *r);

#endif
