/* The session state machine's table: the transitions docs/architecture.md lists, and nothing
 * else; the state and operation names; what a refused request is told. The action's state and
 * approval names. */
#include "engine/base/action_state.h"
#include "engine/base/session_state.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

/* The documented table (docs/architecture.md, "Session states"): from → to. */
static const char *const documented[][2] = {
    {"building", "starting"},   {"building", "error"},       {"starting", "building"},
    {"starting", "started"},    {"starting", "paused"},      {"starting", "stopped"},
    {"starting", "oom-killed"}, {"starting", "error"},       {"started", "ready"},
    {"started", "paused"},      {"started", "stopped"},      {"started", "oom-killed"},
    {"started", "error"},       {"started", "disconnected"}, {"ready", "paused"},
    {"ready", "stopped"},       {"ready", "oom-killed"},     {"ready", "error"},
    {"ready", "disconnected"},  {"ready", "deleted"},        {"paused", "ready"},
    {"paused", "stopped"},      {"paused", "oom-killed"},    {"paused", "error"},
    {"paused", "disconnected"}, {"paused", "deleted"},       {"stopped", "starting"},
    {"stopped", "started"},     {"stopped", "error"},        {"stopped", "deleted"},
    {"oom-killed", "starting"}, {"oom-killed", "started"},   {"oom-killed", "error"},
    {"oom-killed", "deleted"},  {"disconnected", "started"}, {"disconnected", "ready"},
    {"disconnected", "paused"}, {"disconnected", "stopped"}, {"disconnected", "oom-killed"},
    {"disconnected", "error"},  {"disconnected", "deleted"}, {"error", "deleted"},
};

static bool documented_allows(const char *from, const char *to)
{
    for (size_t i = 0; i < sizeof(documented) / sizeof(documented[0]); i++)
        if (strcmp(documented[i][0], from) == 0 && strcmp(documented[i][1], to) == 0)
            return true;
    return false;
}

/* The text to enum and back: every state and every operation has its own name, and a name
 * that is no state is refused (the out value untouched). */
static void test_names_round_trip(void **state)
{
    const char *names[] = {"building", "starting", "started",      "ready",      "paused",
                           "stopped",  "error",    "disconnected", "oom-killed", "deleted"};
    assert_int_equal(sizeof(names) / sizeof(names[0]), SESSION_ST_COUNT);
    for (int i = 0; i < SESSION_ST_COUNT; i++) {
        enum session_st st = SESSION_ST_COUNT;
        assert_int_equal(session_st_parse(names[i], &st), 0);
        assert_int_equal(st, i);
        assert_string_equal(session_st_name(st), names[i]);
        /* name → parse → the same enum, for every enum value */
        enum session_st back = SESSION_ST_COUNT;
        assert_int_equal(session_st_parse(session_st_name((enum session_st)i), &back), 0);
        assert_int_equal(back, i);
    }
    const char *unknown[] = {"creating", "", "Ready", "ready ", "oom_killed", NULL};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        enum session_st st = SESSION_READY;
        assert_int_equal(session_st_parse(unknown[i], &st), -1);
        assert_int_equal(st, SESSION_READY);
    }
    assert_null(session_st_name(SESSION_ST_COUNT));

    const char *ops[] = {NULL, "create", "claim", "pause", "resume", "stop", "delete"};
    assert_int_equal(sizeof(ops) / sizeof(ops[0]), SESSION_OP_COUNT);
    assert_null(session_op_name(SESSION_OP_NONE));
    for (int i = 1; i < SESSION_OP_COUNT; i++)
        assert_string_equal(session_op_name((enum session_op)i), ops[i]);
    assert_null(session_op_name(SESSION_OP_COUNT));
}

static void test_table_is_the_documented_one(void **state)
{
    for (int f = 0; f < SESSION_ST_COUNT; f++)
        for (int t = 0; t < SESSION_ST_COUNT; t++) {
            const char *from = session_st_name((enum session_st)f);
            const char *to = session_st_name((enum session_st)t);
            bool want = documented_allows(from, to);
            if (session_st_allows((enum session_st)f, (enum session_st)t) != want)
                fail_msg("%s → %s: table says %s, docs say %s", from, to, want ? "no" : "yes",
                         want ? "yes" : "no");
        }
    /* deleted is the end; a state to itself is no transition; out of range never passes. */
    for (int t = 0; t < SESSION_ST_COUNT; t++)
        assert_false(session_st_allows(SESSION_DELETED, (enum session_st)t));
    assert_false(session_st_allows(SESSION_READY, SESSION_READY));
    assert_false(session_st_allows(SESSION_ST_COUNT, SESSION_READY));
    assert_false(session_st_allows(SESSION_READY, SESSION_ST_COUNT));
}

static void test_live_and_refusals(void **state)
{
    assert_true(session_st_is_live(SESSION_READY));
    assert_true(session_st_is_live(SESSION_STOPPED));
    assert_true(session_st_is_live(SESSION_DISCONNECTED));
    assert_false(session_st_is_live(SESSION_ERROR));
    assert_false(session_st_is_live(SESSION_DELETED));
    assert_false(session_st_is_live(SESSION_ST_COUNT));
    assert_int_equal(session_st_refusal_status(SESSION_READY), 0);
    assert_int_equal(session_st_refusal_status(SESSION_PAUSED), 409);
    assert_int_equal(session_st_refusal_status(SESSION_DISCONNECTED), 503);
    assert_int_equal(session_st_refusal_status(SESSION_ST_COUNT), 409);
    char hint[256];
    session_st_hint(SESSION_PAUSED, "abc123", hint, sizeof(hint));
    assert_string_equal(hint, "resume it with POST /v1/sessions/abc123/resume");
    session_st_hint(SESSION_STOPPED, "abc123", hint, sizeof(hint));
    assert_non_null(strstr(hint, "/v1/sessions/abc123/resume"));
    session_st_hint(SESSION_ST_COUNT, "abc123", hint, sizeof(hint));
    assert_string_equal(hint, "");
    char next[128];
    session_st_next_list(SESSION_ERROR, next, sizeof(next));
    assert_string_equal(next, "deleted");
    session_st_next_list(SESSION_DELETED, next, sizeof(next));
    assert_string_equal(next, "none");
    session_st_next_list(SESSION_PAUSED, next, sizeof(next));
    assert_string_equal(next, "ready, stopped, error, disconnected, oom-killed, deleted");
    /* A small buffer is cut, never overrun. */
    char tiny[8];
    session_st_next_list(SESSION_READY, tiny, sizeof(tiny));
    assert_true(strlen(tiny) < sizeof(tiny));
}

/* An action's states, approvals and confirmation states: the names docs/approvals.md and
 * OpenHands use, each enum value round trips, unknown text is refused; the final states are the
 * five that end an action. */
static void test_action_names_round_trip(void **state)
{
    const char *names[] = {"pending",  "running",     "done",   "failed",
                           "rejected", "interrupted", "skipped"};
    assert_int_equal(sizeof(names) / sizeof(names[0]), ACTION_ST_COUNT);
    for (int i = 0; i < ACTION_ST_COUNT; i++) {
        enum action_st st = ACTION_ST_COUNT;
        assert_int_equal(action_st_parse(names[i], &st), 0);
        assert_int_equal(st, i);
        assert_string_equal(action_st_name(st), names[i]);
        assert_int_equal(action_st_is_final(st), i != ACTION_PENDING && i != ACTION_RUNNING);
    }
    enum action_st st = ACTION_RUNNING;
    assert_int_equal(action_st_parse("finished", &st), -1);
    assert_int_equal(action_st_parse("Done", &st), -1);
    assert_int_equal(action_st_parse(NULL, &st), -1);
    assert_int_equal(st, ACTION_RUNNING);
    assert_null(action_st_name(ACTION_ST_COUNT));
    assert_false(action_st_is_final(ACTION_ST_COUNT));

    const char *approvals[] = {"none", "pending", "auto", "approved", "rejected", "expired"};
    assert_int_equal(sizeof(approvals) / sizeof(approvals[0]), APPROVAL_COUNT);
    for (int i = 0; i < APPROVAL_COUNT; i++) {
        enum action_approval a = APPROVAL_COUNT;
        assert_int_equal(action_approval_parse(approvals[i], &a), 0);
        assert_int_equal(a, i);
        assert_string_equal(action_approval_name(a), approvals[i]);
    }
    enum action_approval a = APPROVAL_AUTO;
    assert_int_equal(action_approval_parse("allowed", &a), -1);
    assert_int_equal(action_approval_parse(NULL, &a), -1);
    assert_int_equal(a, APPROVAL_AUTO);
    assert_null(action_approval_name(APPROVAL_COUNT));

    const char *confirmations[] = {"confirmed", "rejected", "awaiting_confirmation"};
    assert_int_equal(sizeof(confirmations) / sizeof(confirmations[0]), CONFIRMATION_COUNT);
    for (int i = 0; i < CONFIRMATION_COUNT; i++) {
        enum action_confirmation c = CONFIRMATION_COUNT;
        assert_int_equal(action_confirmation_parse(confirmations[i], &c), 0);
        assert_int_equal(c, i);
        assert_string_equal(action_confirmation_name(c), confirmations[i]);
    }
    enum action_confirmation c = CONFIRMATION_REJECTED;
    assert_int_equal(action_confirmation_parse("awaiting", &c), -1);
    assert_int_equal(action_confirmation_parse(NULL, &c), -1);
    assert_int_equal(c, CONFIRMATION_REJECTED);
    assert_null(action_confirmation_name(CONFIRMATION_COUNT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_table_is_the_documented_one),
        cmocka_unit_test(test_live_and_refusals),
        cmocka_unit_test(test_action_names_round_trip),
    };
    return cmocka_run_group_tests_name("session_state", tests, NULL, NULL);
}
