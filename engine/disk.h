/* The disk watchdog and the store's floor.
 *
 * Where the storage driver has no per-container quota (overlay2 without project quotas), a
 * sandbox could fill the host's disk. Every session has a disk limit (limits.disk; the engine's
 * default otherwise): the watchdog measures what the session takes — its container's writable
 * layer (the overlay upper dir Docker reports), the engine-made work dir (<state>/work/<id>)
 * and the volumes the engine made for it — soon after each action, each stats sample showing
 * it busy (DISK_BUSY_CPU), and each drop of DISK_FS_DROP in the free space of the filesystems
 * sandboxes write to (one statvfs a second), at most once a second per session; and every
 * DISK_INTERVAL_MS whatever happened (up to DISK_SWEEP_MAX sessions a sweep);
 * on the loop in slices (engine/base/disk_walk.c: no link followed), and pauses a session past
 * its limit with the reason. The operator raises the limit (disk_limit_set), resumes or
 * deletes.
 *
 * The floor: below a free-space floor on the state dir's filesystem, new sessions and actions
 * are refused (507) before SQLite could fail. */
#ifndef PADDOCK_DISK_H
#define PADDOCK_DISK_H

#include "engine/base/errors.h"

#include <jansson.h>
#include <stddef.h>

struct engine;
struct disk;

#define DISK_LIMIT_DEFAULT (10LL << 30) /* a session's limit when it names none */
#define DISK_FLOOR_DEFAULT (1LL << 30)  /* free space the store keeps */
#define DISK_LIMIT_MIN (64LL << 20)     /* the least limits.disk may be */
#define DISK_INTERVAL_MS 30000          /* every running session, whatever happened */
/* ... up to this many a sweep, those measured longest ago first: walking hundreds of sessions
 * every interval keeps the loop busy (500: 17 walks a second) and slows every action; past it
 * an idle session is walked every DISK_INTERVAL_MS × sessions / DISK_SWEEP_MAX, one at work
 * still after each action and busy sample. */
#define DISK_SWEEP_MAX 60
#define DISK_FS_MS 1000           /* the free space of the filesystems sandboxes write to */
#define DISK_FS_DROP (64LL << 20) /* ... which, fallen this much, measures every session */
#define DISK_BUSY_CPU 1.0         /* % of a CPU in a stats sample: the session is measured */

/* limit, floor: the engine's (0: the defaults above; a floor of -1: none). NULL when out of
 * memory. Starts the interval. */
struct disk *disk_new(struct engine *eng, long long limit, long long floor);
void disk_free(struct disk *d);

/* A session's limit when its options name none. */
long long disk_limit_default(const struct engine *eng);
/* Measure a session soon (after an action, a resume, a raised limit, a busy stats sample). */
void disk_watch_soon(struct engine *eng, const char *session_id);
/* 0 when the state dir's filesystem has more free space than the floor; else -1 and msg (what
 * was refused: what, the free space, the floor and what to free). */
int disk_floor_check(struct engine *eng, const char *what, char *msg, size_t n);
/* POST /v1/sessions/{id}/limits {"disk": SIZE}: the new limit into the stored options (at
 * least DISK_LIMIT_MIN), and a measurement soon. ERR_NONE, or the error with msg (a bad body,
 * or the store failed). */
enum err_code disk_limit_set(struct engine *eng, const char *session_id, json_t *body, char *msg,
                             size_t n);
/* The session's last measurement for its object: {"used", "limit", "at", "error"?} (the
 * caller's reference), or NULL when it was never measured. */
json_t *disk_session_json(struct engine *eng, const char *session_id);
/* For GET /v1/info: {"limit_default", "floor", "free", "interval_ms", "passes", "last_ms",
 * "last_entries"} (the caller's reference). */
json_t *disk_info_json(struct engine *eng);

#endif
