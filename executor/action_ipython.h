/* run_ipython's state beside the queue (the ipython plugin): the runner and the deadline. */
#ifndef PADDOCK_EXECUTOR_ACTION_IPYTHON_H
#define PADDOCK_EXECUTOR_ACTION_IPYTHON_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/buf.h"

struct executor;

/* Plugin hooks: set up (no Python process yet: it starts with the first cell), tear down,
 * and the reaper's news about a child. */
int action_ipython_init(struct executor *ex, struct buf *err);
void action_ipython_free_state(struct executor *ex);
bool action_ipython_reaped(struct executor *ex, pid_t pid, int status);

#endif
