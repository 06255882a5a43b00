/* The agent's own shell, read-only, for the Terminal tab: a terminal emulator (ui/vt.c) fed a
 * transcript of the session's `run` actions, each its prompt and command, then its output as
 * the command prints it (the engine's `action_output` events; what a command running when it
 * opens printed before, from GET /v1/actions/{id}/output), or the observation's output once
 * the action is final (GET /v1/actions/{id}) when none streamed, in action order; live from
 * the engine's `action` events. The emulator interprets the bytes into cells: no byte of the
 * output reaches the real terminal. Keys never go anywhere from it. */
#ifndef PADDOCK_UI_AGENTLOG_H
#define PADDOCK_UI_AGENTLOG_H

#include <jansson.h>
#include <stddef.h>

struct ui;
struct vt;
struct agentlog;

#define AGENTLOG_HISTORY 50 /* past actions replayed when it opens */

/* Start for session sid (already valid for a path): fetch its recent actions. NULL when out
 * of memory. */
struct agentlog *agentlog_new(struct ui *ui, const char *sid, int rows, int cols);
/* Drop its pending requests and free it. */
void agentlog_free(struct agentlog *a);
struct vt *agentlog_vt(struct agentlog *a);
/* "loading", an error, or NULL once the history is in. */
const char *agentlog_status(const struct agentlog *a);
/* An `action_output` event's data. Returns dirty bits. */
unsigned agentlog_on_output(struct agentlog *a, json_t *ev);
/* An `action` event's data. Returns dirty bits. */
unsigned agentlog_on_action(struct agentlog *a, json_t *action);

#endif
