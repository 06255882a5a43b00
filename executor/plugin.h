/* Plugins: optional capabilities chosen at start with `--plugins NAME...`, as OpenHands'
 * action server takes them. Each entry of plugin.c's table has a name, what it sets up and
 * tears down, and the action types that only work with it; adding a plugin is one line. */
#ifndef PADDOCK_EXECUTOR_PLUGIN_H
#define PADDOCK_EXECUTOR_PLUGIN_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "common/buf.h"
#include "marker.h"

struct executor;

/* Turns a plugin on by name (aliases included). -1 with "unknown plugin 'X' (known: ...)". */
int plugin_enable(struct executor *ex, const char *name, struct buf *err);
/* Runs the plugins' steps that must come before the shell's environment is built from the
 * executor's (agent_skills puts its module on PYTHONPATH). -1 with a message. */
int plugin_prepare_all(struct executor *ex, struct buf *err);
/* Sets up the plugins turned on, once the loop and the shell exist. -1 with a message. */
int plugin_init_all(struct executor *ex, struct buf *err);
void plugin_free_all(struct executor *ex);
/* NULL when an action of this type may run; else an ErrorObservation naming its plugin. */
json_t *plugin_check_action(const struct executor *ex, const char *type);
/* A `run` command completed: plugins may add to its observation's metadata. */
void plugin_on_run_completed(struct executor *ex, const struct marker_info *m, json_t *obs);
/* The reaper found a child that is not the shell: true when a plugin's process. */
bool plugin_reaped(struct executor *ex, pid_t pid, int status);

#endif
