/* Sessions: one hardened container each, with the executor listening on a per-session socket. */
#ifndef PADDOCK_SESSION_H
#define PADDOCK_SESSION_H

#include "engine/base/session_state.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/base/errors.h"

struct engine;
struct session;

/* Outcome of an asynchronous session operation. status is an HTTP status; on success err is
 * ERR_NONE and body is the reply document (borrowed). */
struct session_result {
    unsigned status;     /* on failure err_status(err) */
    enum err_code err;   /* ERR_NONE on success */
    const char *message; /* error text, NULL on success */
    json_t *body;        /* success reply, borrowed */
    /* a create that failed: the session it left in state error (its record stays, for
     * what went wrong), so the caller that made it can delete it */
    const char *session_id;
};
typedef void (*session_done_fn)(const struct session_result *r, void *ud);

/* Raw passthrough reply of an action: the executor's status and body, unchanged. */
struct session_action_result {
    unsigned status;
    const char *body;
    size_t len;
    enum err_code err; /* when the engine answers an error itself, else ERR_NONE */
};
typedef void (*session_action_fn)(const struct session_action_result *r, void *ud);

/* At start-up: every session that is not deleted, in its stored state, into memory; the
 * monitor's reconcile then checks them against the containers. */
void session_load_all(struct engine *eng);
/* At shutdown: free the in-memory list (containers keep running; a restart reattaches). */
void session_free_all(struct engine *eng);
/* A clean engine stop: delete the sessions with keep_alive false (others outlive the engine),
 * then call done (at the latest after 20 s). */
void session_shutdown(struct engine *eng, void (*done)(void *ud), void *ud);

struct session *session_find(struct engine *eng, const char *id);
/* What a session reference in a path or a command names, as docker does: the session whose id
 * it is; else the newest live session of that name (else the newest of that name); else the
 * one session whose id begins with it (or the one live one among several). 0 with *id
 * (malloc'd); 1 when nothing matches; -1 when the prefix is ambiguous, with *err (malloc'd:
 * the candidates named) and *candidates ({id, name, state} objects, the caller's), or when
 * out of memory (*err NULL). */
int session_ref_resolve(struct engine *eng, const char *ref, char **id, json_t **candidates,
                        char **err);
const char *session_id(const struct session *s);
enum session_st session_state(const struct session *s);

/* Validates opts synchronously: returns -1 and fills *bad (400) when they are wrong, or 403
 * when an agent (agent: the request came on the agents' channel) asks for weaker isolation
 * than [security] lets it (engine/security.h); otherwise starts creating and calls fn once the
 * session is ready or failed (after the operator's approval when [security] says
 * "approve"). */
int session_create(struct engine *eng, json_t *opts, bool agent, session_done_fn fn, void *ud,
                   struct session_result *bad);
/* Remove the container, the session's labelled volumes and its socket dir; state deleted. */
void session_delete(struct session *s, session_done_fn fn, void *ud);
/* The lifecycle requests (session_control.c). Each answers 200 with the session, or 409 with
 * the state, its reason and what to do when the state does not allow it. pause: docker pause
 * (a cgroup freeze: processes, cwd and variables are kept); resume: unpause a paused session,
 * or start a stopped (or oom-killed) one again and wait for its executor; stop: docker stop. */
void session_pause(struct session *s, session_done_fn fn, void *ud);
void session_resume(struct session *s, session_done_fn fn, void *ud);
void session_stop(struct session *s, session_done_fn fn, void *ud);
/* POST /v1/sessions {"attach": ref}: the session with that id or name, resumed when paused or
 * stopped; 404 when there is none. */
void session_attach(struct engine *eng, const char *ref, session_done_fn fn, void *ud);

/* ---- the containers as Docker sees them (reconcile.c) ---- */
/* Match every session with the engine's containers (label paddock.engine=<id>): running →
 * executor probed (ready, or disconnected and retried with backoff), paused, exited → stopped
 * or oom-killed with the exit code, missing → error. */
void session_reconcile(struct engine *eng);
/* The daemon went away: ready, started and paused sessions become disconnected. */
void session_mark_disconnected(struct engine *eng, const char *why);
/* One object of the driver's events stream (driver.h: the normalized form). */
void session_on_sandbox_event(struct engine *eng, json_t *event);

/* Publish the stored session object as a "session" event. */
void session_publish(struct engine *eng, const char *id);

#endif
