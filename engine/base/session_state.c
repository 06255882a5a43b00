/* The session state machine's one table (docs/architecture.md draws it). Every state change
 * in the engine goes through session_st_allows: what the table does not list is refused. */
#include "engine/base/session_state.h"

#include "engine/base/errors.h"

#include <stdio.h>
#include <string.h>

#define B(st) SESSION_ST_SET(st)

static const struct {
    const char *name;
    unsigned next;         /* bit set of the states it may go to */
    enum err_code refusal; /* the error of an action refused in this state (none: allowed) */
    const char *hint;      /* what to do, for messages; "%s" is the session id */
} session_st_table[SESSION_ST_COUNT] = {
    [SESSION_BUILDING] = {"building", B(SESSION_STARTING) | B(SESSION_ERROR), ERR_CONFLICT,
                          "its image is being built; wait until it is ready"},
    [SESSION_STARTING] = {"starting",
                          B(SESSION_BUILDING) | B(SESSION_STARTED) | B(SESSION_PAUSED) |
                              B(SESSION_STOPPED) | B(SESSION_OOM_KILLED) | B(SESSION_ERROR),
                          ERR_CONFLICT, "it is starting; wait until it is ready"},
    [SESSION_STARTED] = {"started",
                         B(SESSION_READY) | B(SESSION_PAUSED) | B(SESSION_STOPPED) |
                             B(SESSION_OOM_KILLED) | B(SESSION_ERROR) | B(SESSION_DISCONNECTED),
                         ERR_CONFLICT, "its executor is starting; wait until it is ready"},
    [SESSION_READY] = {"ready",
                       B(SESSION_PAUSED) | B(SESSION_STOPPED) | B(SESSION_OOM_KILLED) |
                           B(SESSION_ERROR) | B(SESSION_DISCONNECTED) | B(SESSION_DELETED),
                       ERR_NONE, ""},
    [SESSION_PAUSED] = {"paused",
                        B(SESSION_READY) | B(SESSION_STOPPED) | B(SESSION_OOM_KILLED) |
                            B(SESSION_ERROR) | B(SESSION_DISCONNECTED) | B(SESSION_DELETED),
                        ERR_SESSION_PAUSED, "resume it with POST /v1/sessions/%s/resume"},
    [SESSION_STOPPED] = {"stopped",
                         B(SESSION_STARTING) | B(SESSION_STARTED) | B(SESSION_ERROR) |
                             B(SESSION_DELETED),
                         ERR_SESSION_STOPPED,
                         "start it again with POST /v1/sessions/%s/resume (a restart: the "
                         "shell's variables and cwd are not kept)"},
    [SESSION_ERROR] = {"error", B(SESSION_DELETED), ERR_CONFLICT,
                       "delete it (DELETE /v1/sessions/%s) and create a new one"},
    [SESSION_DISCONNECTED] = {"disconnected",
                              B(SESSION_STARTED) | B(SESSION_READY) | B(SESSION_PAUSED) |
                                  B(SESSION_STOPPED) | B(SESSION_OOM_KILLED) | B(SESSION_ERROR) |
                                  B(SESSION_DELETED),
                              ERR_UNAVAILABLE,
                              "paddock reconnects on its own (with backoff); retry once it is "
                              "ready again"},
    [SESSION_OOM_KILLED] = {"oom-killed",
                            B(SESSION_STARTING) | B(SESSION_STARTED) | B(SESSION_ERROR) |
                                B(SESSION_DELETED),
                            ERR_SESSION_STOPPED,
                            "start it again with POST /v1/sessions/%s/resume, or delete it and "
                            "create one with more memory"},
    [SESSION_DELETED] = {"deleted", 0, ERR_CONFLICT, "create a new session"},
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

enum err_code session_st_refusal(enum session_st st)
{
    return (unsigned)st < SESSION_ST_COUNT ? session_st_table[st].refusal : ERR_CONFLICT;
}

unsigned session_st_refusal_status(enum session_st st)
{
    return err_status(session_st_refusal(st));
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
