/* The I/O around a session's container (session_prepare.c): before the create, after the
 * start, after the removal. The pure part (parsing, the create body) is session_config.h. */
#ifndef PADDOCK_SESSION_PREPARE_H
#define PADDOCK_SESSION_PREPARE_H

#include "engine/base/errors.h"

struct engine;
struct session_config;
struct session_result;

/* Before docker create: the checks that need the daemon (runtime, disk, named volumes), the
 * engine-owned directories, the git clone. fn gets NULL, or the refusal (status, code,
 * message valid during the call). fn may run before this returns. */
typedef void (*session_prepare_done_fn)(const struct session_result *err, void *ud);
void session_prepare(struct engine *eng, struct session_config *c, const char *id,
                     session_prepare_done_fn fn, void *ud);

/* After docker start: every bind the mount policy checked must show, inside the container, the
 * inode that was checked (Docker resolves the path again); the host ports Docker chose go into
 * the store (sessions.config.ports, shown as the session's "ports"). Then next(why, ud): why is
 * NULL, or says which mount differs or could not be checked (the caller removes the container).
 * next may run before this returns. */
typedef void (*session_prepare_started_fn)(const char *why, void *ud);
void session_prepare_started(struct engine *eng, const struct session_config *c, const char *id,
                             const char *container_id, session_prepare_started_fn next, void *ud);

/* Before a stopped session's container starts again: Docker resolves each bind's source once
 * more, so each (but the engine's own) goes through the mount policy again. fn(err, why, c,
 * ud): why NULL, or the refusal (err its code); c (the caller's, may be NULL) holds the binds
 * as volumes with what they named, for session_prepare_started. fn may run before this
 * returns. */
typedef void (*session_prepare_restart_fn)(enum err_code err, const char *why,
                                           struct session_config *c, void *ud);
void session_prepare_restart(struct engine *eng, const char *container_id,
                             session_prepare_restart_fn fn, void *ud);

/* Remove what the engine made for the session (<state>/work/<id>), once its container is
 * gone. */
void session_prepare_cleanup(struct engine *eng, const char *id);

#endif
