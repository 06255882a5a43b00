/* The run action's state beside the queue: the shell's events and the action deadline. */
#ifndef PADDOCK_EXECUTOR_ACTION_RUN_H
#define PADDOCK_EXECUTOR_ACTION_RUN_H

#include "shell.h"

struct executor;

int action_run_init(struct executor *ex);
void action_run_free_state(struct executor *ex);
void action_run_on_shell_event(struct executor *ex, enum shell_event ev);

#endif
