/* The session state machine's one table (docs/architecture.md draws it). Every state change
 * in the engine goes through session_st_allows: what the table does not list is refused. */
#include "engine/base/session_state.h"

#include <stdio.h>
#include <string.h>

#define B(st) SESSION_ST_SET(st)

static const struct {
    const char *name;
    unsigned next;    /* bit set of the states it may go to */
    unsigned refusal; /* HTTP status of an action refused in this state (0: allowed) */
    const char *hint; /* what to do, for messages; "%s" is the session id */
} session_st_table[SESSION_ST_COUNT] = {
    [SESSION_BUILDING] = {"building", B(SESSION_STARTING) | B(SESSION_ERROR), 409,
                          "its image is being built; wait until it is ready"},
    [SESSION_STARTING] = {"starting",
                          B(SESSION_BUILDING) | B(SESSION_STARTED) | B(SESSION_PAUSED) |
                              B(SESSION_STOPPED) | B(SESSION_OOM_KILLED) | B(SESSION_ERROR),
                          409, "it is starting; wait until it is ready"},
    [SESSION_STARTED] = {"started",
                         B(SESSION_READY) | B(SESSION_PAUSED) | B(SESSION_STOPPED) |
                             B(SESSION_OOM_KILLED) | B(SESSION_ERROR) | B(SESSION_DISCONNECTED),
                         409, "its executor is starting; wait until it is ready"},
    [SESSION_READY] = {"ready",
                       B(SESSION_PAUSED) | B(SESSION_STOPPED) | B(SESSION_OOM_KILLED) |
                           B(SESSION_ERROR) | B(SESSION_DISCONNECTED) | B(SESSION_DELETED),
                       0, ""},
    [SESSION_PAUSED] = {"paused",
                        B(SESSION_READY) | B(SESSION_STOPPED) | B(SESSION_OOM_KILLED) |
                            B(SESSION_ERROR) | B(SESSION_DISCONNECTED) | B(SESSION_DELETED),
                        409, "resume it with POST /v1/sessions/%s/resume"},
    [SESSION_STOPPED] = {"stopped",
                         B(SESSION_STARTING) | B(SESSION_STARTED) | B(SESSION_ERROR) |
                             B(SESSION_DELETED),
                         409,
                         "start it again with POST /v1/sessions/%s/resume (a restart: the "
                         "shell's variables and cwd are not kept)"},
    [SESSION_ERROR] = {"error", B(SESSION_DELETED), 409,
                       "delete it (DELETE /v1/sessions/%s) and create a new one"},
    [SESSION_DISCONNECTED] = {"disconnected",
                              B(SESSION_STARTED) | B(SESSION_READY) | B(SESSION_PAUSED) |
                                  B(SESSION_STOPPED) | B(SESSION_OOM_KILLED) | B(SESSION_ERROR) |
                                  B(SESSION_DELETED),
                              503,
                              "paddock reconnects on its own (with backoff); retry once it is "
                              "ready again"},
    [SESSION_OOM_KILLED] = {"oom-killed",
                            B(SESSION_STARTING) | B(SESSION_STARTED) | B(SESSION_ERROR) |
                                B(SESSION_DELETED),
                            409,
                            "start it again with POST /v1/sessions/%s/resume, or delete it and "
                            "create one with more memory"},
    [SESSION_DELETED] = {"deleted", 0, 409, "create a new session"},
};

static const char *const session_op_names[SESSION_OP_COUNT] = {
    [SESSION_OP_CREATE] = "create", [SESSION_OP_CLAIM] = "claim", [SESSION_OP_PAUSE] = "pause",
    [SESSION_OP_RESUME] = "resume", [SESSION_OP_STOP] = "stop",   [SESSION_OP_DELETE] = "delete",
};

const char *session_st_name(enum session_st st)
{
    return (unsigned)st < SESSION_ST_COUNT ? session_st_table[st].name : NULL;
}

int session_st_parse(const char *name, enum session_st *st)
{
    for (int i = 0; name && i < SESSION_ST_COUNT; i++)
        if (strcmp(session_st_table[i].name, name) == 0) {
            *st = (enum session_st)i;
            return 0;
        }
    return -1;
}

bool session_st_allows(enum session_st from, enum session_st to)
{
    if ((unsigned)from >= SESSION_ST_COUNT || (unsigned)to >= SESSION_ST_COUNT)
        return false;
    return (session_st_table[from].next & B(to)) != 0;
}

bool session_st_is_live(enum session_st st)
{
    return (unsigned)st < SESSION_ST_COUNT && st != SESSION_ERROR && st != SESSION_DELETED;
}

unsigned session_st_refusal_status(enum session_st st)
{
    return (unsigned)st < SESSION_ST_COUNT ? session_st_table[st].refusal : 409;
}

void session_st_hint(enum session_st st, const char *id, char *out, size_t size)
{
    const char *h = (unsigned)st < SESSION_ST_COUNT ? session_st_table[st].hint : "";
    snprintf(out, size, h, id); /* the hints are this file's constants, at most one %s */
}

void session_st_next_list(enum session_st st, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; (unsigned)st < SESSION_ST_COUNT && i < SESSION_ST_COUNT && n < size; i++)
        if (session_st_table[st].next & B(i))
            n += (size_t)snprintf(out + n, size - n, "%s%s", n ? ", " : "",
                                  session_st_table[i].name);
    if (!out[0])
        snprintf(out, size, "none");
}

const char *session_op_name(enum session_op op)
{
    return (unsigned)op < SESSION_OP_COUNT ? session_op_names[op] : NULL;
}
