/* Integration test of the warm pool: it fills, stays hidden, a fitting request claims one
 * (with its env and name), it refills without ever exceeding its size, other options get
 * their own container, its size can change, and a clean stop removes the unclaimed ones. */
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

#define POOL_SIZE 2

static json_t *get(const char *path)
{
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    if (r.status != 200)
        fail_msg("GET %s: %ld %s", path, r.status, r.body ? r.body : r.err);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    return j;
}

/* The first pool of GET /v1/pool (caller frees): its fields from one sample. */
static json_t *pool_first(void)
{
    json_t *p = get("/v1/pool");
    json_t *e = json_incref(json_array_get(json_object_get(p, "pools"), 0));
    json_decref(p);
    assert_non_null(e);
    return e;
}

/* ready, starting and removing of one sample (pool_first). */
static void pool_counts(const json_t *e, long *ready, long *starting, long *removing)
{
    *ready = (long)json_integer_value(json_object_get(e, "ready"));
    *starting = (long)json_integer_value(json_object_get(e, "starting"));
    *removing = (long)json_integer_value(json_object_get(e, "removing"));
}

static long pool_field(const char *field)
{
    json_t *e = pool_first();
    long v = (long)json_integer_value(json_object_get(e, field));
    json_decref(e);
    return v;
}

/* The engine's containers as Docker lists them. */
static size_t engine_containers(void)
{
    char *eid = engine_read_id(harness_eng);
    char *label = strdupf("paddock.engine=%s", eid);
    const char *labels[] = {label, NULL};
    json_t *list = docker_containers_with_labels(labels);
    size_t n = json_array_size(list);
    json_decref(list);
    free(label);
    free(eid);
    return n;
}

/* Wait until the pool reports `ready` ready ones, checking at every look that it never holds
 * more than its size. Ready and starting come from one sample: read apart, a sandbox the
 * engine began to delete in between (ready, then starting until it is gone) counted twice. */
static void wait_pool_ready(long want, long size, size_t claimed, long ms)
{
    double deadline = now_ms() + ms;
    for (;;) {
        json_t *e = pool_first();
        long ready, starting, removing;
        pool_counts(e, &ready, &starting, &removing);
        char *text = json_dumps(e, JSON_COMPACT);
        json_decref(e);
        if (ready + starting > size)
            fail_msg("pool above its size %ld: %s", size, text);
        size_t n = engine_containers();
        if (n > claimed + (size_t)size)
            fail_msg("%zu containers of the engine, more than %zu claimed and the pool's %ld: %s",
                     n, claimed, size, text);
        if (ready == want && starting == 0 && removing == 0) {
            free(text);
            return;
        }
        if (now_ms() > deadline)
            fail_msg("pool: %ld ready, %ld starting; want %ld ready (%s)", ready, starting, want,
                     text);
        free(text);
        sleep_ms(200);
    }
}

static json_t *pooled_ids(void)
{
    json_t *all = get("/v1/sessions?pool=1");
    json_t *ids = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(all, "sessions"), i, s)
    {
        if (json_is_true(json_object_get(s, "pooled")))
            json_array_append_new(ids, json_string(jstr(s, "container_id")));
    }
    json_decref(all);
    return ids;
}

static bool contains(json_t *arr, const char *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(arr, i, x) if (v && strcmp(json_string_value(x), v) == 0) return true;
    return false;
}

static void test_pool_fill_claim_refill(void **state)
{
    wait_pool_ready(POOL_SIZE, POOL_SIZE, 0, 60000);
    /* Unclaimed sandboxes are the engine's: not in the list, shown with ?pool=1. */
    json_t *list = get("/v1/sessions");
    assert_int_equal(json_array_size(json_object_get(list, "sessions")), 0);
    json_decref(list);
    json_t *warm = pooled_ids();
    assert_int_equal(json_array_size(warm), POOL_SIZE);

    /* The approval policy lives in the engine: a warm sandbox serves it too. */
    json_t *s = session_new(harness_eng, "{\"name\": \"warm1\", \"env\": {\"FOO\": "
                                         "\"from-env\"}, \"confirm\": \"always\", "
                                         "\"approval_timeout\": 30}");
    const char *id = jstr(s, "id");
    assert_string_equal(jstr(s, "name"), "warm1");
    assert_true(contains(warm, jstr(s, "container_id")));
    assert_true(json_is_true(json_object_get(s, "keep_alive")));
    assert_string_equal(jstr(s, "options.confirm"), "always");
    assert_true(json_number_value(jpath(s, "options.approval_timeout")) == 30.0);
    assert_null(json_object_get(s, "pooled"));
    /* confirm "always": the action waits; approve it through the API, then it runs */
    char *exec_path = strdupf("/v1/sessions/%s/execute_action?wait=0", id);
    struct reply er;
    api(harness_eng, "POST", exec_path,
        "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"echo $FOO\"}}}", &er);
    assert_int_equal(er.status, 202);
    assert_string_equal(jstr(er.json, "state"), "pending");
    char *approve = strdupf("/v1/actions/%lld/approve",
                            (long long)json_integer_value(json_object_get(er.json, "action_id")));
    char *poll = strdupf("/v1/actions/%lld?wait=30",
                         (long long)json_integer_value(json_object_get(er.json, "action_id")));
    reply_free(&er);
    api(harness_eng, "POST", approve, "{}", &er);
    assert_int_equal(er.status, 200);
    reply_free(&er);
    api(harness_eng, "GET", poll, NULL, &er);
    assert_int_equal(er.status, 200);
    assert_string_equal(jstr(er.json, "state"), "done");
    assert_string_equal(jstr(er.json, "observation.content"), "from-env");
    reply_free(&er);
    free(exec_path);
    free(approve);
    free(poll);
    list = get("/v1/sessions");
    assert_int_equal(json_array_size(json_object_get(list, "sessions")), 1);
    json_decref(list);
    assert_int_equal(pool_field("claimed"), 1);

    /* Its container takes the session's name (renamed in the background). */
    char *eid = engine_read_id(harness_eng);
    char *want = strdupf("/paddock-%.8s-warm1", eid);
    char *path = strdupf("/containers/%s/json", jstr(s, "container_id"));
    double t0 = now_ms();
    bool renamed = false;
    while (!renamed && now_ms() - t0 < 10000) {
        struct reply r;
        docker("GET", path, &r);
        renamed = r.status == 200 && strcmp(jstr(r.json, "Name"), want) == 0;
        reply_free(&r);
        if (!renamed)
            sleep_ms(100);
    }
    assert_true(renamed);
    free(path);
    free(want);
    free(eid);

    /* The pool refills to its size, never above it. */
    wait_pool_ready(POOL_SIZE, POOL_SIZE, 1, 60000);

    /* Options a warm sandbox cannot have get a container of their own. */
    json_t *own = session_new(harness_eng, "{\"limits\": {\"pids\": 100}}");
    json_t *warm2 = pooled_ids();
    assert_false(contains(warm2, jstr(own, "container_id")));
    assert_int_equal(json_array_size(warm2), POOL_SIZE);
    json_decref(warm2);
    session_delete(harness_eng, jstr(own, "id"));
    json_decref(own);

    /* A name already taken is refused even when the pool could serve. */
    struct reply r;
    api(harness_eng, "POST", "/v1/sessions", "{\"name\": \"warm1\"}", &r);
    assert_int_equal(r.status, 409);
    reply_free(&r);

    session_delete(harness_eng, id);
    json_decref(s);
    json_decref(warm);
}

static void test_pool_resize_and_bad_input(void **state)
{
    struct reply r;
    api(harness_eng, "POST", "/v1/pool", "{\"size\": 0}", &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    /* A shrink shows its sandboxes as removing until they are gone, never as starting. */
    double t1 = now_ms();
    while (now_ms() - t1 < 60000) {
        json_t *e = pool_first();
        long ready, starting, removing;
        pool_counts(e, &ready, &starting, &removing);
        json_decref(e);
        assert_int_equal(starting, 0);
        assert_true(ready + removing <= POOL_SIZE);
        if (ready == 0 && removing == 0)
            break;
        sleep_ms(20);
    }
    wait_pool_ready(0, POOL_SIZE, 0, 60000);
    double t0 = now_ms();
    while (engine_containers() > 0 && now_ms() - t0 < 30000)
        sleep_ms(200);
    assert_int_equal(engine_containers(), 0);

    static const char *const bad[] = {"{\"size\": -1}",
                                      "{\"size\": 1000}",
                                      "{\"size\": \"2\"}",
                                      "{\"size\": 1, \"image\": \"bad image\"}",
                                      "{\"size\": 1, \"colour\": 1}",
                                      "[]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        api(harness_eng, "POST", "/v1/pool", bad[i], &r);
        if (r.status != 400)
            fail_msg("POST /v1/pool %s: %ld", bad[i], r.status);
        reply_free(&r);
    }

    api(harness_eng, "POST", "/v1/pool", "{\"size\": 1}", &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    wait_pool_ready(1, 1, 0, 60000);
}

/* A clean stop deletes the unclaimed sandboxes (keep_alive false) and keeps claimed ones. */
static void test_pool_clean_stop(void **state)
{
    json_t *s = session_new(harness_eng, "{\"name\": \"kept\"}");
    wait_pool_ready(1, 1, 1, 60000);
    assert_int_equal(engine_containers(), 2);
    assert_int_equal(engine_stop(harness_eng), 0);
    assert_int_equal(engine_containers(), 1);
    char *eid = engine_read_id(harness_eng);
    char *label = strdupf("paddock.session=%s", jstr(s, "id"));
    const char *labels[] = {label, NULL};
    json_t *left = docker_containers_with_labels(labels);
    assert_int_equal(json_array_size(left), 1);
    /* Kept on purpose; this test removes it itself. */
    char *rm = strdupf("/containers/%s?force=1", jstr(json_array_get(left, 0), "Id"));
    struct reply r;
    docker("DELETE", rm, &r);
    assert_int_equal(r.status, 204);
    reply_free(&r);
    free(rm);
    json_decref(left);
    free(label);
    free(eid);
    json_decref(s);
}

static int setup(void **state)
{
    harness_eng = engine_new();
    harness_eng->extra_env[0] = "PADDOCK_POOL="
                                "2";
    if (engine_start(harness_eng) == 0)
        return 0;
    engine_destroy(harness_eng);
    harness_eng = NULL;
    return -1;
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_fill_claim_refill),
        cmocka_unit_test(test_pool_resize_and_bad_input),
        cmocka_unit_test(test_pool_clean_stop),
    };
    int failed = cmocka_run_group_tests_name("pool", tests, setup, harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
