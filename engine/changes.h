/* A session's file changes: what the sandbox added, changed or deleted, in the container's own
 * filesystem (Docker's diff) and in its workspace (Docker's diff when the workspace is part of
 * the container, the overlay's upper dir, a host directory's timestamps, or only the recorded
 * write/edit/upload actions); kept in the store when the container goes. */
#ifndef PADDOCK_CHANGES_H
#define PADDOCK_CHANGES_H

struct engine;
struct api_req;

/* Entries in one reply (and in what is kept); more sets "truncated". */
#define CHANGES_MAX 10000
/* Directory entries one workspace walk looks at, and how deep it goes. */
#define CHANGES_WALK_MAX 100000
#define CHANGES_WALK_DEPTH 64

/* GET /v1/sessions/{id}/changes (docs/architecture.md). */
void changes_route_get(struct api_req *r);

/* Compute the changes and keep them in the store (before the container is removed); done(ud,
 * error or NULL) runs once, later or at once. A container already gone keeps what the
 * workspace and the recorded actions still show. */
typedef void (*changes_saved_fn)(void *ud, const char *error);
void changes_save(struct engine *eng, const char *session_id, const char *container_id,
                  changes_saved_fn done, void *ud);

#endif
