/* The session state machine's table: the transitions docs/architecture.md lists, and nothing
 * else; the state names; what a refused request is told. */
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

static void test_names_round_trip(void **state)
{
    const char *names[] = {"building", "starting", "started",      "ready",      "paused",
                           "stopped",  "error",    "disconnected", "oom-killed", "deleted"};
    assert_int_equal(sizeof(names) / sizeof(names[0]), SESSION_ST_COUNT);
    for (int i = 0; i < SESSION_ST_COUNT; i++) {
        assert_int_equal(session_st_parse(names[i]), i);
        assert_string_equal(session_st_name((enum session_st)i), names[i]);
        char copy[32];
        snprintf(copy, sizeof(copy), "%s", names[i]);
        /* Interned: one pointer per state, whatever string it came from. */
        assert_ptr_equal(session_st_intern(copy), session_st_name((enum session_st)i));
    }
    assert_int_equal(session_st_parse("creating"), -1);
    assert_int_equal(session_st_parse(NULL), -1);
    assert_null(session_st_intern("deleting"));
    assert_null(session_st_name(SESSION_ST_COUNT));
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
            assert_int_equal(session_st_allows_name(from, to), want);
        }
    /* deleted is the end; a state to itself is no transition; unknown names never pass. */
    for (int t = 0; t < SESSION_ST_COUNT; t++)
        assert_false(session_st_allows(SESSION_DELETED, (enum session_st)t));
    assert_false(session_st_allows_name("ready", "ready"));
    assert_false(session_st_allows_name("creating", "ready"));
    assert_false(session_st_allows_name("ready", "nonsense"));
    assert_false(session_st_allows(SESSION_READY, SESSION_ST_COUNT));
}

static void test_live_and_refusals(void **state)
{
    assert_true(session_st_is_live("ready"));
    assert_true(session_st_is_live("stopped"));
    assert_true(session_st_is_live("disconnected"));
    assert_false(session_st_is_live("error"));
    assert_false(session_st_is_live("deleted"));
    assert_false(session_st_is_live("bogus"));
    assert_int_equal(session_st_refusal_status("ready"), 0);
    assert_int_equal(session_st_refusal_status("paused"), 409);
    assert_int_equal(session_st_refusal_status("disconnected"), 503);
    char hint[256];
    session_st_hint("paused", "abc123", hint, sizeof(hint));
    assert_string_equal(hint, "resume it with POST /v1/sessions/abc123/resume");
    session_st_hint("stopped", "abc123", hint, sizeof(hint));
    assert_non_null(strstr(hint, "/v1/sessions/abc123/resume"));
    session_st_hint("bogus", "abc123", hint, sizeof(hint));
    assert_string_equal(hint, "");
    char next[128];
    session_st_next_list("error", next, sizeof(next));
    assert_string_equal(next, "deleted");
    session_st_next_list("deleted", next, sizeof(next));
    assert_string_equal(next, "none");
    session_st_next_list("paused", next, sizeof(next));
    assert_string_equal(next, "ready, stopped, error, disconnected, oom-killed, deleted");
    /* A small buffer is cut, never overrun. */
    char tiny[8];
    session_st_next_list("ready", tiny, sizeof(tiny));
    assert_true(strlen(tiny) < sizeof(tiny));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_table_is_the_documented_one),
        cmocka_unit_test(test_live_and_refusals),
    };
    return cmocka_run_group_tests_name("session_state", tests, NULL, NULL);
}
