/* Start-up steps, run in the agent's shell after its first prompt and before the socket
 * appears (so a session is ready only once they are done), as hidden executor commands:
 * the --env-file variables, the git identity, the workspace's setup script. */
#ifndef PADDOCK_EXECUTOR_STARTUP_H
#define PADDOCK_EXECUTOR_STARTUP_H

#include <stddef.h>

#include "common/buf.h"
#include "env.h"

#define STARTUP_STEP_TIMEOUT 30.0   /* seconds: variables, git identity */
#define STARTUP_SETUP_TIMEOUT 600.0 /* seconds: the setup script, as OpenHands (default) */

struct executor;

struct startup_params {
    const struct env_var *vars;
    size_t nvars;
    const char *working_dir;
    double setup_timeout; /* seconds the setup script may take */
};

/* Runs the steps one after the other; a failing step does not stop the others. Each
 * failure adds a line (and the step's output) to log. Returns -1 when the executor is
 * stopping, else 0. */
int startup_run(struct executor *ex, const struct startup_params *p, struct buf *log);

#endif
