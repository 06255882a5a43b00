/* The session state machine: the states, the one table of allowed transitions, and what each
 * state tells a client that asks for something the state does not allow. */
#ifndef PADDOCK_SESSION_STATE_H
#define PADDOCK_SESSION_STATE_H

#include "engine/base/errors.h"

#include <stdbool.h>
#include <stddef.h>

enum session_st {
    SESSION_BUILDING,     /* its runtime image is being built */
    SESSION_STARTING,     /* container being created and started */
    SESSION_STARTED,      /* container running, executor not answering yet */
    SESSION_READY,        /* executor answers: actions go through */
    SESSION_PAUSED,       /* cgroup frozen (docker pause): memory, cwd, variables kept */
    SESSION_STOPPED,      /* container exited (by request or on its own) */
    SESSION_ERROR,        /* failed for good (create failed, container removed outside) */
    SESSION_DISCONNECTED, /* should run, but the daemon or the executor does not answer */
    SESSION_OOM_KILLED,   /* container killed by the kernel: out of memory */
    SESSION_DELETED,      /* container, volumes and socket dir removed; kept in history */
    SESSION_ST_COUNT
};

/* The lifecycle operation in flight on a session: one at a time; NONE when idle. */
enum session_op {
    SESSION_OP_NONE,
    SESSION_OP_CREATE,
    SESSION_OP_CLAIM, /* a warm-pool sandbox becomes the caller's */
    SESSION_OP_PAUSE,
    SESSION_OP_RESUME,
    SESSION_OP_STOP,
    SESSION_OP_DELETE,
    SESSION_OP_COUNT
};

/* A set of states, for "one of these" tests: SESSION_ST_SET(SESSION_READY) | ... */
#define SESSION_ST_SET(st) (1u << (st))

/* "ready", "oom-killed", ...: the text the store and the API carry; NULL out of range. */
const char *session_st_name(enum session_st st);
/* The state named by text: 0 and *st, or -1 (*st untouched) when no state has that name. */
int session_st_parse(const char *name, enum session_st *st);
/* Whether the table allows from → to. A state to itself is not a transition (false). */
bool session_st_allows(enum session_st from, enum session_st to);
/* Live sessions own a container: every state but error and deleted. */
bool session_st_is_live(enum session_st st);
/* The HTTP status an action gets in this state (503 while disconnected, else 409; 0 when
 * ready), and what to do about the state, for messages: "resume it with POST
 * /v1/sessions/ID/resume". id fills the paths. */
unsigned session_st_refusal_status(enum session_st st);
/* The error code of that refusal, for clients to tell states apart without reading the text:
 * session_paused, session_stopped (stopped or oom-killed), unavailable (disconnected), else
 * conflict; ERR_NONE when ready. */
enum err_code session_st_refusal(enum session_st st);
void session_st_hint(enum session_st st, const char *id, char *out, size_t size);
/* The allowed next states of a state as "a, b, c" (for messages and docs). */
void session_st_next_list(enum session_st st, char *out, size_t size);
/* "create", "pause", ... for messages; NULL for SESSION_OP_NONE or out of range. */
const char *session_op_name(enum session_op op);

#endif
