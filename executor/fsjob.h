/* File actions run as the agent user, in a child process, off the event loop.
 *
 * The executor is root in the container; the agent is not. A file action must see the
 * filesystem exactly as the agent does: its permissions, its view of /proc/self, symlinks
 * and ".." resolved with its rights. So each file action forks a child that drops to the
 * agent's uid/gid (when the executor switched users at all), marks itself non-dumpable,
 * closes every descriptor it inherited, does the work and writes one JSON reply to a pipe:
 *
 *   {"observation": {...}, "history": {"op": "push"|"pop", "path": P, "text": T}}
 *
 * The executor reads the pipe from its loop (so /alive keeps answering), applies the
 * history change and returns the observation. A child that outlives the action's timeout
 * is killed. */
#ifndef PADDOCK_EXECUTOR_FSJOB_H
#define PADDOCK_EXECUTOR_FSJOB_H

#include <jansson.h>

#include "action.h"
#include "editor_history.h"

struct executor;

/* What the work function may look at (a copy of the executor's state at fork time). */
struct fsjob_env {
    const char *cwd;     /* the shell's working directory at its last prompt */
    const char *workdir; /* --working-dir */
    const struct editor_history *history;
    bool auto_lint; /* --auto-lint */
};

/* Runs in the child. Returns the reply object, or NULL when memory runs out. */
typedef json_t *(*fsjob_fn)(const struct fsjob_env *env, const void *args);

int fsjob_init(struct executor *ex);
void fsjob_free_state(struct executor *ex);

/* Starts fn(req->args) in a child; the reply finishes req later. ACTION_DONE (with an error
 * observation) only when no child could be started. */
enum action_status fsjob_start(struct executor *ex, struct action_req *req, fsjob_fn fn,
                               double timeout);
/* Shutdown: the child is killed, no result follows. */
void fsjob_cancel(struct executor *ex, struct action_req *req);

/* For work functions: the reply {"observation": obs} (takes obs). */
json_t *fsjob_reply(json_t *obs);

#endif
