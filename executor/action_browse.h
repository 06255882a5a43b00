/* The browse actions' state beside the queue: the headless browser that runs, if any. */
#ifndef PADDOCK_EXECUTOR_ACTION_BROWSE_H
#define PADDOCK_EXECUTOR_ACTION_BROWSE_H

#include <stdbool.h>
#include <sys/types.h>

struct executor;

int action_browse_init(struct executor *ex);
void action_browse_free_state(struct executor *ex);
/* The reaper found a child that is not the shell: true when it was the browser. */
bool action_browse_reaped(struct executor *ex, pid_t pid, int status);

#endif
