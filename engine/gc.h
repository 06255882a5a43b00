/* Garbage collection: what the engine made and no live session owns. */
#ifndef PADDOCK_GC_H
#define PADDOCK_GC_H

#include <jansson.h>
#include <stdbool.h>

struct engine;

/* status is an HTTP status; report (borrowed) is {"dry_run", "containers": [{"id", "name",
 * "session", "state"}], "volumes": [{"name", "session"}], "socket_dirs": [path], "errors":
 * [text]} on success, or {"error": {"code", "message"}}. */
typedef void (*gc_done_fn)(unsigned status, json_t *report, void *ud);

/* Remove (or with dry_run only list) the containers and volumes labelled
 * paddock.engine=<this engine> whose paddock.session is no live session (deleted, in error, or
 * unknown), and the directories under <state>/run/ of no live session. Containers of other
 * engines are never touched. */
void gc_run(struct engine *eng, bool dry_run, gc_done_fn fn, void *ud);

#endif
