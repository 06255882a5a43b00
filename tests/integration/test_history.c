/* GET /v1/sessions paged and filtered (the dashboard's History): keyset pages newest first
 * that add up to the whole list, deleted sessions with all=1 or state=deleted, filters by
 * state, image, creation time, and every bad parameter refused. Against the real daemon: the
 * sessions are real containers (four, two of them deleted), removed at the end. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSESS 4

/* Made once by the group setup, newest first (ids[0] the newest). */
static char *ids[NSESS];
static double created[NSESS];
static char *image_id; /* paddock/base:local by its id: the one session with another image */

static json_t *sessions_get(const char *query, long want_status)
{
    char *p = strdupf("/v1/sessions%s", query);
    struct reply r;
    api(harness_eng, "GET", p, NULL, &r);
    if (r.status != want_status)
        fprintf(stderr, "GET %s → %ld %s\n", p, r.status, r.body ? r.body : r.err);
    assert_int_equal(r.status, want_status);
    free(p);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    return j;
}

/* The ids of a reply's list joined by spaces ("" for none). */
static char *ids_of(json_t *reply)
{
    json_t *list = json_object_get(reply, "sessions");
    assert_true(json_is_array(list));
    size_t n = 0, i;
    json_t *row;
    json_array_foreach(list, i, row) n += strlen(jstr(row, "id")) + 1;
    char *out = calloc(1, n + 1);
    json_array_foreach(list, i, row)
    {
        if (i)
            strcat(out, " ");
        strcat(out, jstr(row, "id"));
    }
    return out;
}

static void assert_ids(json_t *reply, const char *want)
{
    char *got = ids_of(reply);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "sessions: got [%s], want [%s]\n", got, want);
    assert_string_equal(got, want);
    free(got);
}

static int setup(void **state)
{
    if (harness_group_setup_unsupervised(state) != 0)
        return -1;
    struct reply r;
    docker("GET", "/v1.41/images/" HARNESS_IMAGE "/json", &r);
    image_id = r.status == 200 && jstr(r.json, "Id") ? strdup(jstr(r.json, "Id")) : NULL;
    reply_free(&r);
    if (!image_id)
        return -1;
    /* Oldest first: hist-0 (by image id), hist-1, hist-2, hist-3; 0 and 2 deleted. */
    for (int i = 0; i < NSESS; i++) {
        char *body = i == 0 ? strdupf("{\"name\":\"hist-0\",\"image\":\"%s\"}", image_id)
                            : strdupf("{\"name\":\"hist-%d\"}", i);
        json_t *s = session_new(harness_eng, body);
        free(body);
        ids[NSESS - 1 - i] = strdup(jstr(s, "id"));
        created[NSESS - 1 - i] = json_number_value(json_object_get(s, "created_at"));
        json_decref(s);
        sleep_ms(20); /* distinct creation times, so time filters have an edge to find */
    }
    json_decref(session_run(harness_eng, ids[3], "echo from-the-oldest"));
    session_delete(harness_eng, ids[3]); /* hist-0 */
    session_delete(harness_eng, ids[1]); /* hist-2 */
    return 0;
}

static int teardown(void **state)
{
    struct reply r;
    for (int i = 0; i < NSESS; i += 2) { /* the live ones: a clean teardown finds nothing left */
        char *p = strdupf("/v1/sessions/%s", ids[i]);
        api(harness_eng, "DELETE", p, NULL, &r);
        reply_free(&r);
        free(p);
    }
    for (int i = 0; i < NSESS; i++)
        free(ids[i]);
    free(image_id);
    return harness_group_teardown_clean(state);
}

/* Without parameters: the live sessions, newest first, and no cursor (nothing paged). */
static void test_default_list(void **state)
{
    (void)state;
    json_t *j = sessions_get("", 200);
    char *want = strdupf("%s %s", ids[0], ids[2]);
    assert_ids(j, want);
    assert_true(json_is_null(json_object_get(j, "next_before")));
    free(want);
    json_decref(j);
    j = sessions_get("?all=1", 200);
    want = strdupf("%s %s %s %s", ids[0], ids[1], ids[2], ids[3]);
    assert_ids(j, want);
    free(want);
    json_decref(j);
}

/* Pages of 1, 2 and 3 follow next_before to the end and add up to ?all=1, in order. */
static void test_pages(void **state)
{
    (void)state;
    char *want = strdupf("%s %s %s %s", ids[0], ids[1], ids[2], ids[3]);
    for (int limit = 1; limit <= 3; limit++) {
        char all[512] = "";
        char *cursor = NULL;
        int pages = 0;
        for (;;) {
            char *q = cursor ? strdupf("?all=1&limit=%d&before=%s", limit, cursor)
                             : strdupf("?all=1&limit=%d", limit);
            json_t *j = sessions_get(q, 200);
            free(q);
            free(cursor);
            cursor = NULL;
            char *got = ids_of(j);
            size_t n = json_array_size(json_object_get(j, "sessions"));
            assert_true(n <= (size_t)limit);
            if (*got)
                snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s", *all ? " " : "",
                         got);
            free(got);
            pages++;
            json_t *next = json_object_get(j, "next_before");
            if (n == (size_t)limit) /* a full page points at its last session */
                assert_string_equal(
                    json_string_value(next),
                    jstr(json_array_get(json_object_get(j, "sessions"), n - 1), "id"));
            else
                assert_true(json_is_null(next));
            if (json_is_string(next))
                cursor = strdup(json_string_value(next));
            json_decref(j);
            if (!cursor)
                break;
            assert_true(pages < 10);
        }
        assert_string_equal(all, want);
        assert_int_equal(pages, NSESS / limit + 1);
    }
    free(want);
}

static void test_state_filter(void **state)
{
    (void)state;
    /* state=deleted names what it wants: no all=1 needed. */
    json_t *j = sessions_get("?state=deleted", 200);
    char *want = strdupf("%s %s", ids[1], ids[3]);
    assert_ids(j, want);
    json_decref(j);
    j = sessions_get("?state=deleted&all=1", 200);
    assert_ids(j, want);
    free(want);
    json_decref(j);
    j = sessions_get("?state=ready&all=1", 200);
    want = strdupf("%s %s", ids[0], ids[2]);
    assert_ids(j, want);
    free(want);
    json_decref(j);
    j = sessions_get("?state=paused&all=1", 200);
    assert_ids(j, "");
    json_decref(j);
    /* Paging within a filter: one deleted session a page. */
    j = sessions_get("?state=deleted&limit=1", 200);
    assert_ids(j, ids[1]);
    assert_string_equal(json_string_value(json_object_get(j, "next_before")), ids[1]);
    json_decref(j);
    char *q = strdupf("?state=deleted&limit=1&before=%s", ids[1]);
    j = sessions_get(q, 200);
    free(q);
    assert_ids(j, ids[3]);
    json_decref(j);
    q = strdupf("?state=deleted&limit=1&before=%s", ids[3]);
    j = sessions_get(q, 200);
    free(q);
    assert_ids(j, "");
    assert_true(json_is_null(json_object_get(j, "next_before")));
    json_decref(j);
    /* The deleted one's history stays: its stored session object and actions. */
    q = strdupf("/v1/sessions/%s/actions", ids[3]);
    struct reply r;
    api(harness_eng, "GET", q, NULL, &r);
    free(q);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "actions")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "actions"), 0), "summary"),
                        "echo from-the-oldest");
    reply_free(&r);
}

static void test_image_filter(void **state)
{
    (void)state;
    /* Text the image contains: the id's prefix finds only the session made by id. */
    json_t *j = sessions_get("?all=1&image=sha256%3A", 200);
    assert_ids(j, ids[3]);
    json_decref(j);
    j = sessions_get("?all=1&image=base%3Alocal", 200);
    char *want = strdupf("%s %s %s", ids[0], ids[1], ids[2]);
    assert_ids(j, want);
    free(want);
    json_decref(j);
    j = sessions_get("?all=1&image=no-such-image", 200);
    assert_ids(j, "");
    json_decref(j);
    j = sessions_get("?image=sha256%3A", 200); /* deleted, and all=1 not given */
    assert_ids(j, "");
    json_decref(j);
    /* An empty image filter is no filter. */
    j = sessions_get("?image=", 200);
    want = strdupf("%s %s", ids[0], ids[2]);
    assert_ids(j, want);
    free(want);
    json_decref(j);
}

static void test_time_filter(void **state)
{
    (void)state;
    /* since: created at or after; until: created before. */
    char *q = strdupf("?all=1&since=%.17g", created[1]);
    json_t *j = sessions_get(q, 200);
    free(q);
    char *want = strdupf("%s %s", ids[0], ids[1]);
    assert_ids(j, want);
    free(want);
    json_decref(j);
    q = strdupf("?all=1&until=%.17g", created[1]);
    j = sessions_get(q, 200);
    free(q);
    want = strdupf("%s %s", ids[2], ids[3]);
    assert_ids(j, want);
    free(want);
    json_decref(j);
    q = strdupf("?all=1&since=%.17g&until=%.17g", created[2], created[0]);
    j = sessions_get(q, 200);
    free(q);
    want = strdupf("%s %s", ids[1], ids[2]);
    assert_ids(j, want);
    free(want);
    json_decref(j);
    /* Everything combined, paged. */
    q = strdupf("?state=deleted&image=local&since=%.17g&limit=5", created[2]);
    j = sessions_get(q, 200);
    free(q);
    assert_ids(j, ids[1]);
    assert_true(json_is_null(json_object_get(j, "next_before")));
    json_decref(j);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "?limit=0",          "?limit=1001",      "?limit=1.5",      "?limit=x",
        "?since=yesterday",  "?until=-1",        "?state=sleeping", "?state=",
        "?before=nosuchone", "?limit=2&before=", "?since=1e20",     "?until=",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *j = sessions_get(bad[i], 400);
        assert_string_equal(jstr(j, "error.code"), "bad_request");
        json_decref(j);
    }
    char big[700] = "?image=";
    memset(big + 7, 'a', 600);
    json_t *j = sessions_get(big, 400);
    json_decref(j);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_list), cmocka_unit_test(test_pages),
        cmocka_unit_test(test_state_filter), cmocka_unit_test(test_image_filter),
        cmocka_unit_test(test_time_filter),  cmocka_unit_test(test_bad_parameters),
    };
    int failed = cmocka_run_group_tests_name("history", tests, setup, teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
