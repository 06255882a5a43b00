/* The editor's undo history: per file (by the path as the agent spelled it, normalised),
 * the texts before its last edits, newest last.
 *
 * As in openhands-aci: at most 10 entries per file, the oldest dropped first; undo pops
 * the newest. It lives in the executor process (file work runs in short-lived children,
 * which report what to push or pop). Unlike openhands-aci's unbounded temp directory, all
 * entries together are capped at EDITOR_HISTORY_MAX_BYTES: past it the oldest entries of
 * any file go first. */
#ifndef PADDOCK_EXECUTOR_EDITOR_HISTORY_H
#define PADDOCK_EXECUTOR_EDITOR_HISTORY_H

#include <stddef.h>

#define EDITOR_HISTORY_PER_FILE 10
#define EDITOR_HISTORY_MAX_BYTES (256u * 1024 * 1024)

struct editor_history;

struct editor_history *editor_history_new(void);
void editor_history_free(struct editor_history *h);
/* Returns -1 when memory runs out (the history is then unchanged). */
int editor_history_push(struct editor_history *h, const char *path, const char *text, size_t n);
/* The newest entry of path, or NULL. */
const char *editor_history_last(const struct editor_history *h, const char *path, size_t *n);
void editor_history_pop(struct editor_history *h, const char *path);

#endif
