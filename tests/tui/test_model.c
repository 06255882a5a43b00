/* The dashboard's model (ui/model.c): replies replace lists, events keep them current, and
 * nothing from the engine with a bad shape gets in. */
#include "ui/model.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *model_test_json(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    assert_non_null(j);
    return j;
}

static void test_sessions_reply(void **state)
{
    (void)state;
    struct model m = {0};
    const char *err = NULL;
    json_t *r = model_test_json(
        "{\"sessions\": [{\"id\": \"aa11\", \"name\": \"one\", \"state\": \"ready\", "
        "\"created_at\": 20, \"action_count\": 3, \"limits\": {\"memory\": 268435456}},"
        "{\"id\": \"bad id/../x\", \"state\": \"ready\"}, {\"name\": \"no id\"},"
        "{\"id\": \"bb22\", \"state\": \"paused\", \"created_at\": 10}]}");
    assert_int_equal(model_set_sessions(&m, r, &err), 0);
    json_decref(r);
    assert_int_equal(m.nsessions, 2); /* the two without a usable id are left out */
    assert_string_equal(m.sessions[0].id, "aa11");
    assert_int_equal(m.sessions[0].action_count, 3);
    /* the whole object is kept for the Overview */
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(m.sessions[0].raw, "limits"), "memory")),
        268435456);
    assert_int_equal(model_count_sessions_in(&m, "paused"), 1);

    json_t *bad = model_test_json("{\"sessions\": 7}");
    assert_int_equal(model_set_sessions(&m, bad, &err), -1);
    assert_non_null(err);
    json_decref(bad);
    assert_int_equal(m.nsessions, 2); /* a bad reply changes nothing */
    model_free(&m);
}

static void test_session_events(void **state)
{
    (void)state;
    struct model m = {0};
    json_t *a = model_test_json("{\"id\": \"old\", \"state\": \"ready\", \"created_at\": 1}");
    json_t *b = model_test_json("{\"id\": \"new\", \"state\": \"starting\", \"created_at\": 2}");
    assert_true(model_upsert_session(&m, a));
    assert_true(model_upsert_session(&m, b));
    assert_int_equal(m.nsessions, 2);
    assert_string_equal(m.sessions[0].id, "new"); /* newest first */
    json_t *gone = model_test_json("{\"id\": \"old\", \"state\": \"deleted\"}");
    assert_true(model_upsert_session(&m, gone));
    assert_int_equal(m.nsessions, 1);
    assert_int_equal(model_find_session(&m, "old"), -1);
    json_decref(a);
    json_decref(b);
    json_decref(gone);
    model_free(&m);
}

static void test_approvals(void **state)
{
    (void)state;
    struct model m = {0};
    const char *err = NULL;
    assert_int_equal(model_count_approvals(&m, NULL), 0);
    json_t *r = model_test_json("{\"approvals\": [{\"id\": 4, \"session_id\": \"s1\"},"
                                "{\"id\": 5, \"session_id\": \"s2\"},"
                                "{\"id\": 6, \"session_id\": \"s1\"}]}");
    assert_int_equal(model_set_approvals(&m, r, &err), 0);
    json_decref(r);
    assert_int_equal(model_count_approvals(&m, NULL), 3);
    assert_int_equal(model_count_approvals(&m, "s1"), 2);
    assert_int_equal(model_count_approvals(&m, "s3"), 0);
    json_t *bad = model_test_json("{\"approvals\": {}}");
    assert_int_equal(model_set_approvals(&m, bad, &err), -1);
    json_decref(bad);
    assert_int_equal(model_count_approvals(&m, NULL), 3);
    model_free(&m);
}

/* Several engines: each one's fetch replaces its own share; the lists stay in order across
 * engines; counters follow the action events and a refetch never counts down. */
static void test_many_engines(void **state)
{
    (void)state;
    struct model m = {0};
    const char *err = NULL;
    json_t *r0 = model_test_json("{\"sessions\": [{\"id\": \"l2\", \"created_at\": 30},"
                                 "{\"id\": \"l1\", \"created_at\": 10, \"action_count\": 1}]}");
    json_t *r1 = model_test_json("{\"sessions\": [{\"id\": \"r1\", \"created_at\": 20, "
                                 "\"action_count\": 4}]}");
    assert_int_equal(model_set_sessions_of(&m, 0, r0, &err), 0);
    assert_int_equal(model_set_sessions_of(&m, 1, r1, &err), 0);
    assert_int_equal(m.nsessions, 3);
    const char *order[] = {"l2", "r1", "l1"}; /* newest first, across engines */
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(m.sessions[i].id, order[i]);
    assert_int_equal(m.sessions[1].engine, 1);

    /* a new action of r1 counts; another event of the same action does not */
    json_t *fresh = model_test_json("{\"id\": 9, \"session_id\": \"r1\", \"new\": true}");
    json_t *later = model_test_json("{\"id\": 9, \"session_id\": \"r1\", \"state\": \"done\"}");
    assert_true(model_count_action(&m, fresh));
    assert_false(model_count_action(&m, later));
    assert_int_equal(m.sessions[model_find_session(&m, "r1")].action_count, 5);

    /* engine 1 again, from a snapshot behind the stream: engine 0's stay, r1 keeps 5 */
    assert_int_equal(model_set_sessions_of(&m, 1, r1, &err), 0);
    assert_int_equal(m.nsessions, 3);
    assert_int_equal(m.sessions[model_find_session(&m, "r1")].action_count, 5);
    assert_int_equal(model_find_session(&m, "l1"), 2);
    json_t *none = model_test_json("{\"sessions\": []}");
    assert_int_equal(model_set_sessions_of(&m, 0, none, &err), 0);
    assert_int_equal(m.nsessions, 1); /* engine 0 has none now; r1 stays */

    /* approvals: the same id on two engines is two items, oldest first, each with its engine */
    json_t *a0 = model_test_json("{\"approvals\": [{\"id\": 1, \"created_at\": 5}]}");
    json_t *a1 = model_test_json("{\"approvals\": [{\"id\": 1, \"created_at\": 3},"
                                 "{\"id\": 2, \"created_at\": 7}]}");
    assert_int_equal(model_set_approvals_of(&m, 0, a0, &err), 0);
    assert_int_equal(model_set_approvals_of(&m, 1, a1, &err), 0);
    assert_int_equal(json_array_size(m.approvals), 3);
    assert_int_equal(model_approval_engine(json_array_get(m.approvals, 0)), 1);
    assert_int_equal(model_approval_engine(json_array_get(m.approvals, 1)), 0);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(m.approvals, 2), "id")), 2);
    json_t *empty = model_test_json("{\"approvals\": []}");
    assert_int_equal(model_set_approvals_of(&m, 1, empty, &err), 0);
    assert_int_equal(json_array_size(m.approvals), 1); /* engine 0's stays */
    assert_int_equal(model_approval_engine(json_array_get(m.approvals, 0)), 0);

    json_t *all[] = {r0, r1, fresh, later, none, a0, a1, empty};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        json_decref(all[i]);
    model_free(&m);
}

static void test_actions_reply(void **state)
{
    (void)state;
    struct model m = {0};
    const char *err = NULL;
    json_t *r = model_test_json("{\"actions\": [{\"id\": 9, \"kind\": \"run\", \"summary\": "
                                "\"ls\", \"state\": \"done\", \"exit_code\": 0},"
                                "{\"id\": \"x\"}, {\"id\": 8, \"state\": \"pending\"}]}");
    assert_int_equal(model_set_actions(&m, "s1", r, &err), 0);
    json_decref(r);
    assert_int_equal(m.nactions, 2);
    assert_string_equal(m.actions_for, "s1");
    assert_true(m.actions[0].has_exit);
    assert_false(m.actions[1].has_exit);
    /* an event for another session does not land in this list */
    json_t *other = model_test_json("{\"id\": 10, \"session_id\": \"s2\", \"state\": \"done\"}");
    assert_false(model_upsert_action(&m, "s2", other));
    json_decref(other);
    json_t *mine = model_test_json("{\"id\": 10, \"session_id\": \"s1\", \"state\": \"done\"}");
    assert_true(model_upsert_action(&m, "s1", mine));
    json_decref(mine);
    assert_int_equal(m.nactions, 3);
    assert_int_equal(m.actions[0].id, 10); /* newest first */
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sessions_reply), cmocka_unit_test(test_session_events),
        cmocka_unit_test(test_approvals),      cmocka_unit_test(test_actions_reply),
        cmocka_unit_test(test_many_engines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
