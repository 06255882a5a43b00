/* The one table of an action's state names, the one of its approval names and the one of
 * OpenHands' confirmation states. */
#include "engine/base/action_state.h"

#include <string.h>

static const struct {
    const char *name;
    bool final;
} action_st_table[ACTION_ST_COUNT] = {
    [ACTION_PENDING] = {"pending", false},  [ACTION_RUNNING] = {"running", false},
    [ACTION_DONE] = {"done", true},         [ACTION_FAILED] = {"failed", true},
    [ACTION_REJECTED] = {"rejected", true}, [ACTION_INTERRUPTED] = {"interrupted", true},
    [ACTION_SKIPPED] = {"skipped", true},
};

static const char *const action_approval_names[APPROVAL_COUNT] = {
    [APPROVAL_NONE] = "none",         [APPROVAL_PENDING] = "pending",
    [APPROVAL_AUTO] = "auto",         [APPROVAL_APPROVED] = "approved",
    [APPROVAL_REJECTED] = "rejected", [APPROVAL_EXPIRED] = "expired",
};

static const char *const action_confirmation_names[CONFIRMATION_COUNT] = {
    [CONFIRMATION_CONFIRMED] = "confirmed",
    [CONFIRMATION_REJECTED] = "rejected",
    [CONFIRMATION_AWAITING] = "awaiting_confirmation",
};

const char *action_st_name(enum action_st st)
{
    return (unsigned)st < ACTION_ST_COUNT ? action_st_table[st].name : NULL;
}

int action_st_parse(const char *name, enum action_st *st)
{
    for (int i = 0; name && i < ACTION_ST_COUNT; i++)
        if (strcmp(action_st_table[i].name, name) == 0) {
            *st = (enum action_st)i;
            return 0;
        }
    return -1;
}

bool action_st_is_final(enum action_st st)
{
    return (unsigned)st < ACTION_ST_COUNT && action_st_table[st].final;
}

const char *action_approval_name(enum action_approval a)
{
    return (unsigned)a < APPROVAL_COUNT ? action_approval_names[a] : NULL;
}

int action_approval_parse(const char *name, enum action_approval *a)
{
    for (int i = 0; name && i < APPROVAL_COUNT; i++)
        if (strcmp(action_approval_names[i], name) == 0) {
            *a = (enum action_approval)i;
            return 0;
        }
    return -1;
}

const char *action_confirmation_name(enum action_confirmation c)
{
    return (unsigned)c < CONFIRMATION_COUNT ? action_confirmation_names[c] : NULL;
}

int action_confirmation_parse(const char *name, enum action_confirmation *c)
{
    for (int i = 0; name && i < CONFIRMATION_COUNT; i++)
        if (strcmp(action_confirmation_names[i], name) == 0) {
            *c = (enum action_confirmation)i;
            return 0;
        }
    return -1;
}
