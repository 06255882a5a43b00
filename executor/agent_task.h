/* File work done with the agent's permissions: a forked child that takes the agent's uid, gid
 * and groups (when the executor switches users) before it touches any file, so the file
 * endpoints can reach exactly what the agent's shell could. The child runs one function,
 * blocking as it likes, while the executor's loop goes on; it reports an HTTP status and a
 * JSON reply through a pipe, and may stream data in and out through two more.
 *
 * The child forgets what it must not hold (the API key) and closes every descriptor but its
 * pipes and stderr. It is not dumpable after the switch, so the agent cannot ptrace it, and it
 * dies with the executor (PR_SET_PDEATHSIG). Its exit is reaped by the executor's SIGCHLD
 * handler; the result pipe's end of file says it is done. */
#ifndef PADDOCK_EXECUTOR_AGENT_TASK_H
#define PADDOCK_EXECUTOR_AGENT_TASK_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/evloop.h"

struct executor;

#define AGENT_TASK_INPUT 1u  /* a pipe into the child (its in_fd) */
#define AGENT_TASK_OUTPUT 2u /* a pipe out of the child (its out_fd) */
#define AGENT_TASK_REPLY_MAX (64u * 1024 * 1024)

/* Runs in the child, with the agent's permissions. in_fd/out_fd: blocking pipe ends, -1 when
 * not asked for. Returns an HTTP status; *reply (may stay NULL) is the JSON body for it. */
typedef unsigned (*agent_task_fn)(void *arg, int in_fd, int out_fd, json_t **reply);

struct agent_task {
    pid_t pid;
    int in_fd;  /* the parent's (non-blocking) end of the child's input, or -1 */
    int out_fd; /* the parent's (non-blocking) end of the child's output, or -1 */
    bool finished;
    unsigned status; /* once finished: the child's, or 500 when it ended without one */
    json_t *reply;   /* once finished: the child's JSON reply (NULL when none) */
    /* Called once, when the child has reported (or died). */
    void (*on_finish)(struct agent_task *t);
    void *owner;
    /* private */
    struct evloop *loop;
    struct evloop_watch watch; /* the result pipe */
    struct buf result;
};

/* For child functions: *reply = {"detail": "<formatted text>"} (made valid UTF-8); returns
 * status. */
unsigned agent_task_fail(json_t **reply, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with ": <strerror(err)>" appended and the status that err calls for: 403 for
 * EACCES, EPERM, EROFS; 404 for ENOENT; 400 for ENOTDIR, EISDIR, ELOOP, EEXIST,
 * ENAMETOOLONG; 507 for ENOSPC, EDQUOT; 500 otherwise. */
unsigned agent_task_fail_errno(json_t **reply, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Forks the child; NULL with a message when that fails. on_finish/owner are set by the caller
 * right after (nothing is reported before the loop runs again). */
struct agent_task *agent_task_start(struct executor *ex, agent_task_fn fn, void *arg,
                                    unsigned flags, struct buf *err);
/* Closes the parent's input end (the child reads end of file). */
void agent_task_close_input(struct agent_task *t);
/* Kills the child if it has not finished, closes everything, frees t. */
void agent_task_free(struct agent_task *t);
/* Closes everything and frees t, but lets the child run to its end: it reads end of file on
 * its input, cleans up after itself and exits (the reaper collects it). */
void agent_task_release(struct agent_task *t);

#endif
