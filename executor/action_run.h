/* The run action's state beside the queue: the shell's events and the action deadline. */
#ifndef PADDOCK_EXECUTOR_ACTION_RUN_H
#define PADDOCK_EXECUTOR_ACTION_RUN_H

#include "shell.h"

struct executor;

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

struct action_req;

/* The ErrorObservation content of an internal command refused because a command runs. */
#define ACTION_RUN_BUSY "ERROR: The shell is running a command."

int action_run_init(struct executor *ex);
void action_run_free_state(struct executor *ex);
void action_run_on_shell_event(struct executor *ex, enum shell_event ev);
/* The reaper found a child: true when it was an is_static shell. */
bool action_run_child_exited(struct executor *ex, pid_t pid, int status);

/* A hidden command the executor runs itself (start-up steps, POST /env), queued like any
 * action: blocking, never refused as several commands, refused with ACTION_RUN_BUSY when
 * the shell runs a command, invisible to the agent (its output and the restart note stay
 * for the agent's next observation). On a timeout the shell is restarted. The caller sets
 * done/owner and submits it. NULL when memory runs out. */
struct action_req *action_run_internal_new(const char *command, double timeout);
/* The exit code in a `run` observation, -1 for anything else. */
int action_run_exit_code(const json_t *obs);

#endif
