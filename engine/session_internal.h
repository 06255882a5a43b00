/* What the session files share (session.c, session_control.c, reconcile.c, gc.c). */
#ifndef PADDOCK_SESSION_INTERNAL_H
#define PADDOCK_SESSION_INTERNAL_H

#include "engine/base/session_state.h"
#include "engine/risk/policy.h"
#include "engine/session.h"

#include <jansson.h>
#include <stdbool.h>

#define SESSION_ID_BYTES 8
/* How long a started container's executor has to answer /alive. */
#define SESSION_READY_TIMEOUT_MS 30000.0

struct loop_timer;
struct sandbox_driver;

struct session {
    struct session *next;
    struct engine *eng;
    char id[2 * SESSION_ID_BYTES + 1];
    char *name;
    char *container_id;
    /* Its sandbox's driver: the engine's (eng->driver), or driver_local for "backend":
     * "local". Every call about this session's sandbox goes through it. */
    const struct sandbox_driver *driver;
    char *sock_dir;
    char *exec_sock;
    /* The container's first process as this host sees it (Docker's State.Pid), which the
     * executor must share a pid namespace with; 0 until learned after each (re)start. */
    long exec_init_pid;
    bool exec_init_learning; /* the driver's inspect for it is in flight */
    enum session_st state;
    /* The lifecycle operation in flight, SESSION_OP_NONE when idle. One at a time; Docker
     * events meanwhile only mark the session stale. */
    enum session_op op;
    bool stale;      /* an event came during op: look at the container again afterwards */
    bool keep_alive; /* survives the engine; false: deleted at a clean engine stop */
    bool pooled;     /* a warm-pool sandbox nobody claimed yet (pool.c): no events, no stats */
    char *image;
    bool doomed; /* delete once op ends (engine stopping, keep_alive false) */
    /* Reattaching: an inspect or /alive probe in flight, another one asked meanwhile, the
     * backoff of the next try while disconnected. */
    bool refreshing, refresh_again;
    struct loop_timer *retry_timer;
    long retry_ms;
    unsigned gen;  /* bumped by every state change: a reply about an older state is stale */
    bool seen;     /* reconcile: its container is in Docker's list */
    int busy;      /* async operations holding a pointer to this session */
    bool unlinked; /* removed from the list; freed when busy drops to 0 */
    /* Approvals (action.c): the policy, how long an action waits, the operator's rules; read
     * from the store at the first action. */
    bool policy_loaded;
    enum policy confirm;
    double approval_timeout;
    json_t *rules;      /* the engine-wide rules, then the session's */
    unsigned rules_gen; /* eng->rules_gen when rules was read */
};

void session_hold(struct session *s);
/* A store write failed: storage_full (507) when the disk is full (the operator can fix that),
 * else store_error (500). */
enum err_code session_store_error(struct engine *eng);
void session_release(struct session *s);
/* Change state through the table (session_state.c): recorded in the store, as a lifecycle event
 * and as a "session" event. Returns 0, or -1 when the table does not allow it (nothing
 * changes). The same state again is no event, unless the reason differs. */
int session_set_state(struct session *s, enum session_st state, const char *reason);
/* The same with the container's exit code (STORE_NO_EXIT_CODE: none). */
int session_set_state_exit(struct session *s, enum session_st state, const char *reason,
                           int exit_code);
/* Mark the start and the end of a lifecycle operation; the end looks at the container again
 * when events came meanwhile, and deletes a doomed session. */
void session_op_begin(struct session *s, enum session_op op);
void session_op_end(struct session *s);
/* A pooled session becomes the caller's (name; patch merged into its stored config: options
 * keep_alive, confirm, approval_timeout, env names, withheld_env); the reply is 201 with it,
 * after env (may be NULL; already without what was withheld) is exported in its shell. -1
 * when it cannot be claimed (fn not called). pool.c. */
int session_claim(struct session *s, const char *name, json_t *patch, json_t *env,
                  session_done_fn fn, void *ud);
/* A warm-pool sandbox of image (keep_alive false, hidden until claimed). session.c. */
int session_create_pooled(struct engine *eng, const char *image, session_done_fn fn, void *ud,
                          struct session_result *bad);
/* Find a session by id, or by name among sessions that are not in error. */
struct session *session_find_ref(struct engine *eng, const char *ref);

/* Whether the session takes actions and file transfers now (ready, and no lifecycle operation
 * but its creation in progress): 0, or -1 with the refusal (conflict, or unavailable while
 * disconnected) and its message (what state, why, what to do). session.c. */
int session_check_actionable(struct session *s, enum err_code *err, char *msg, size_t size);

/* ---- start and probe (session.c): docker start, then /alive until ready ---- */
/* restart: the container exists and was stopped (resume) rather than just created. fn gets
 * 200 (restart) / 201 (create) with the session, or the error. */
void session_start_container(struct session *s, bool restart, session_done_fn fn, void *ud);

/* ---- session_control.c ---- */
/* Whether a request (verb, for messages) may go on: 1 when the session is already in target
 * (fn got 200 and the session as it is), -1 when refused (fn got 409 with the state, its reason
 * and what to do, or the operation in progress), 0 to go on. from_ok is the set of states the
 * request starts from (SESSION_ST_SET bits). */
int session_check(struct session *s, const char *verb, enum session_st target, unsigned from_ok,
                  session_done_fn fn, void *ud);
/* session_pause with the reason its state will carry (NULL: "paused by request"); fn may be
 * NULL when nobody waits for the reply (the disk watchdog). */
void session_pause_because(struct session *s, const char *reason, session_done_fn fn, void *ud);
/* Delete a session at the engine's clean stop (keep_alive false), once it is idle. */
void session_shutdown_delete(struct session *s);

/* ---- reconcile.c ---- */
/* Look at the session's container (inspect) and set the state from what it is: running → probe
 * the executor (ready, or disconnected and retried with backoff), paused, exited → stopped or
 * oom-killed with the exit code, gone → error. */
void session_refresh(struct session *s);
/* Stop retrying (the session is going away or changes state by request). */
void session_retry_cancel(struct session *s);
/* The executor channel refused what serves the session's socket (why: the error): the session
 * goes disconnected with that reason and is retried, each probe on a new connection. */
void session_channel_refused(struct session *s, const char *why);
/* Explain a failed action: the container's state and exit, then reply (at once when the channel
 * refused what serves the socket: the container is not to blame). */
void session_explain_failure(struct session *s, const struct http_result *r,
                             void (*fn)(const char *msg, void *ud), void *ud);

#endif
