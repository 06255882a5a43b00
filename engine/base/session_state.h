/* The session state machine: the states, the one table of allowed transitions, and what each
 * state tells a client that asks for something the state does not allow. */
#ifndef PADDOCK_SESSION_STATE_H
#define PADDOCK_SESSION_STATE_H

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

/* "ready", "oom-killed", ...; NULL for a value out of range. */
const char *session_st_name(enum session_st st);
/* The state of a name, or -1. */
int session_st_parse(const char *name);
/* The name's own static copy (for pointers kept in memory), or NULL when unknown. */
const char *session_st_intern(const char *name);
/* Whether the table allows from → to. A state to itself is not a transition (false). */
bool session_st_allows(enum session_st from, enum session_st to);
/* Name-based: unknown names are never allowed. */
bool session_st_allows_name(const char *from, const char *to);
/* Live sessions own a container: every state but error and deleted. */
bool session_st_is_live(const char *name);
/* The HTTP status an action gets in this state (503 while disconnected, else 409), and what to
 * do about the state, for messages: "resume it with POST /v1/sessions/ID/resume". id fills
 * the paths. */
unsigned session_st_refusal_status(const char *name);
void session_st_hint(const char *name, const char *id, char *out, size_t size);
/* The allowed next states of a state as "a, b, c" (for messages and docs). */
void session_st_next_list(const char *name, char *out, size_t size);

#endif
