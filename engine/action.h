/* The action path (action.c): record, classify, hold for approval, forward, record, answer;
 * the operator's decisions; long polls on an action's end. docs/approvals.md. */
#ifndef PADDOCK_ACTION_H
#define PADDOCK_ACTION_H

#include "engine/base/action_state.h"
#include "engine/risk/risk.h"
#include "engine/session.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Where the sandbox's workspace is: what the risk classifier takes as inside. */
#define ACTION_WORKSPACE "/workspace"

struct engine;

/* At start-up, after the sessions are loaded: actions that were waiting wait again (deadlines
 * kept); those of sessions that are gone are rejected. */
int actions_init(struct engine *eng);
/* At a stop: whoever waits for a pending action hears 503 (the row stays pending). */
void actions_shutdown(struct engine *eng);

/* POST .../execute_action. action: the parsed "action" object; body/len: the request as
 * received (forwarded unchanged). wait: answer with the observation (after the approval
 * when one is needed); else answer 202 {"action_id", "state"} as soon as it is recorded. */
void action_submit(struct session *s, json_t *action, const char *body, size_t len, bool wait,
                   session_action_fn fn, void *ud);

/* An error or success of a synchronous request: status 200, or the error. */
struct action_result {
    unsigned status;   /* 200, or err_status(err) */
    enum err_code err; /* ERR_NONE on success */
    char message[512];
};
/* How far an approval reaches: this once, the rest of the session, every session of the
 * engine (the last only for what the engine asks itself: egress, docs/egress.md). */
enum action_scope { ACTION_SCOPE_ONCE, ACTION_SCOPE_SESSION, ACTION_SCOPE_ENGINE };
struct action_decision {
    bool approve; /* else reject */
    const char *by, *reason;
    bool remember;           /* approve: allow this pattern for the rest of the session */
    const char *pattern;     /* with remember: the pattern; NULL: exactly this command or path */
    enum action_scope scope; /* "remember" is ACTION_SCOPE_SESSION */
};
/* Whether the engine holds action id for a decision: its intent is durable and it waits. A
 * pending row whose intent is still being synced is not held yet (nothing can decide it). */
bool action_is_held(struct engine *eng, int64_t id);
/* Decide a pending action. 404 unknown; 409 already_decided / expired / not_pending /
 * session_gone / session_paused / conflict, and nothing changes; 200 when decided. */
void action_decide(struct engine *eng, int64_t id, const struct action_decision *d,
                   struct action_result *out);
/* Add an operator rule ({"pattern", "decision", "kind"?}, checked by policy_rule_check) to a
 * session (session_id NULL: engine-wide); every session reads the rules again before its next
 * action. The rule's id, or -1 with *out. */
int64_t action_rule_add(struct engine *eng, const char *session_id, json_t *rule, const char *by,
                        struct action_result *out);

/* The full action object (with args and observation) once its state is final, or after
 * seconds (≤ 600), whichever comes first; NULL when there is no such action. */
typedef void (*action_wait_fn)(json_t *action, void *ud);
void action_wait(struct engine *eng, int64_t id, double seconds, action_wait_fn fn, void *ud);

/* ---- approvals the engine asks for a request it holds (a terminal, a create) ---- */
/* approved: the operator said yes (why: who); else why says who refused, or that the deadline
 * passed or the engine stops. Called once. */
typedef void (*action_decided_fn)(bool approved, const char *why, void *ud);
struct action_request {
    const char *session_id;
    json_t *action; /* {"action": kind (an engine_side row of action_kind.c), "args": {...}} */
    const char *summary;
    enum risk_level risk;
    const char *risk_reason;
    /* true: waits for the operator (timeout seconds), fn hears the decision; false: recorded
     * as running now, allowed by decided_by for decision_reason, fn never called. */
    bool pending;
    double timeout;
    const char *decided_by, *decision_reason;
};
/* Record the action; its id, or -1 with *err (malloc'd). The asker ends the row with
 * action_end once what was approved is over. */
int64_t action_ask(struct engine *eng, const struct action_request *q, action_decided_fn fn,
                   void *ud, char **err);
/* The scope the operator gave the approval being delivered: valid during an approving
 * action_decided_fn call (what an asker that keeps rules reads, egress.c); ACTION_SCOPE_ONCE
 * at any other time. */
enum action_scope action_decision_scope(const struct engine *eng);
/* The asker went away before a decision (a connection closed): the pending action is rejected
 * by the engine with why, and its fn is not called. Nothing when it is not pending. */
void action_ask_cancel(struct engine *eng, int64_t id, const char *why);
/* The end of an action the engine did itself: its state, exit code, observation (JSON text, or
 * NULL) and error, recorded and published. */
void action_end(struct engine *eng, int64_t id, enum action_st state, int exit_code,
                const char *observation, const char *error);

/* A session's container went for good: its waiting actions are rejected with why. */
void actions_session_gone(struct engine *eng, const char *session_id, const char *why);

#endif
