/* An action's state and its approval: the closed sets the store's columns and the API carry
 * as text (docs/approvals.md); the engine holds them as these enums. */
#ifndef PADDOCK_ACTION_STATE_H
#define PADDOCK_ACTION_STATE_H

#include <stdbool.h>

enum action_st {
    ACTION_PENDING,     /* waits for the operator's decision */
    ACTION_RUNNING,     /* sent to the sandbox (or about to be) */
    ACTION_DONE,        /* the sandbox answered */
    ACTION_FAILED,      /* it could not run, or the sandbox did not answer */
    ACTION_REJECTED,    /* never ran: rejected by the operator, a rule, the agent or a deadline */
    ACTION_INTERRUPTED, /* in flight when the engine died: never re-run */
    ACTION_SKIPPED,     /* arrived awaiting confirmation: recorded, never run */
    ACTION_ST_COUNT
};

enum action_approval {
    APPROVAL_NONE,     /* it never waited */
    APPROVAL_PENDING,  /* waits for a decision */
    APPROVAL_AUTO,     /* allowed by an operator's rule */
    APPROVAL_APPROVED, /* by the operator */
    APPROVAL_REJECTED, /* by the operator, a deny rule, the agent or the engine */
    APPROVAL_EXPIRED,  /* no decision before the deadline: rejected */
    APPROVAL_COUNT
};

/* The confirmation_state an OpenHands action arrives with (absent: confirmed). */
enum action_confirmation {
    CONFIRMATION_CONFIRMED,
    CONFIRMATION_REJECTED, /* recorded, never run */
    CONFIRMATION_AWAITING, /* "awaiting_confirmation": skipped */
    CONFIRMATION_COUNT
};

/* "pending", "running", ...: the text the store and the API carry; NULL out of range. */
const char *action_st_name(enum action_st st);
/* The state named by text: 0 and *st, or -1 (*st untouched) when no state has that name. */
int action_st_parse(const char *name, enum action_st *st);
/* Whether the action has ended (done, failed, rejected, interrupted, skipped). */
bool action_st_is_final(enum action_st st);

/* "none", "pending", "auto", ...; NULL out of range. */
const char *action_approval_name(enum action_approval a);
/* The approval named by text: 0 and *a, or -1 (*a untouched). */
int action_approval_parse(const char *name, enum action_approval *a);

/* "confirmed", "rejected", "awaiting_confirmation"; NULL out of range. */
const char *action_confirmation_name(enum action_confirmation c);
/* The confirmation state named by text: 0 and *c, or -1 (*c untouched). */
int action_confirmation_parse(const char *name, enum action_confirmation *c);

#endif
