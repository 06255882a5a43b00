/* Integration test of the image builder against the real daemon: a session with setup steps
 * runs in a runtime image with the executor baked in; the same steps reuse it; other steps
 * make another; a failing step fails the session with Docker's text; a missing image gets one
 * pull (from a loopback "registry" that refuses: no packet leaves the machine) and a hint;
 * PADDOCK_BAKE_EXECUTOR=1 runs plain sessions without the executor bind mount. */
#include "harness.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *inspect(const char *cid)
{
    char *p = strdupf("/containers/%s/json", cid);
    struct reply r;
    docker("GET", p, &r);
    assert_int_equal(r.status, 200);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    free(p);
    return j;
}

static bool has_executor_mount(json_t *ins)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(ins, "Mounts"), i, m)
    {
        const char *d = jstr(m, "Destination");
        if (d && strcmp(d, "/opt/paddock/paddock-executor") == 0)
            return true;
    }
    return false;
}

/* The first "build" event of session id with this stage, waiting up to ms. */
static json_t *build_event(struct sse *s, const char *id, const char *stage, long ms)
{
    return sse_wait(s, "build", "session", id, "stage", stage, ms);
}

static void test_setup_builds_then_reuses(void **state)
{
    struct sse *ev = sse_open(harness_eng->socket, "/v1/events");
    const char *setup = "{\"setup\": [\"echo built > /etc/paddock-extra\"]}";
    json_t *a = session_new(harness_eng, setup);
    json_t *obs = session_run(harness_eng, jstr(a, "id"), "cat /etc/paddock-extra");
    assert_string_equal(jstr(obs, "content"), "built");
    json_decref(obs);
    json_t *ia = inspect(jstr(a, "container_id"));
    const char *image_a = jstr(ia, "Config.Image");
    assert_non_null(strstr(image_a, "paddock/runtime:"));
    assert_false(has_executor_mount(ia)); /* baked into the image */
    assert_non_null(build_event(ev, jstr(a, "id"), "done", 10000));

    /* The same steps: the source tag exists, nothing is built. */
    json_t *b = session_new(harness_eng, setup);
    assert_non_null(build_event(ev, jstr(b, "id"), "reused", 10000));
    assert_null(sse_wait(ev, "build", "session", jstr(b, "id"), "stage", "setup", 0));
    json_t *ib = inspect(jstr(b, "container_id"));
    assert_string_equal(jstr(ib, "Config.Image"), image_a);

    /* Other steps: another lock hash, another image. */
    json_t *c = session_new(harness_eng, "{\"runtime_extra_deps\": \"touch /etc/other\"}");
    json_t *ic = inspect(jstr(c, "container_id"));
    assert_string_not_equal(jstr(ic, "Config.Image"), image_a);
    obs = session_run(harness_eng, jstr(c, "id"), "ls /etc/other && ls /etc/paddock-extra");
    assert_int_not_equal(json_integer_value(jpath(obs, "extras.metadata.exit_code")), 0);
    json_decref(obs);

    session_delete(harness_eng, jstr(a, "id"));
    session_delete(harness_eng, jstr(b, "id"));
    session_delete(harness_eng, jstr(c, "id"));
    json_decref(ia);
    json_decref(ib);
    json_decref(ic);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    sse_close(ev);
}

static void test_failures_are_clear(void **state)
{
    struct reply r;
    api(harness_eng, "POST", "/v1/sessions", "{\"setup\": [\"echo about to fail; exit 3\"]}", &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "error.code"), "build_failed");
    assert_non_null(strstr(jstr(r.json, "error.message"), "returned a non-zero code: 3"));
    reply_free(&r);

    double t0 = now_ms();
    api(harness_eng, "POST", "/v1/sessions", "{\"image\": \"127.0.0.1:1/paddock-missing:absent\"}",
        &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "error.code"), "image_not_found");
    assert_non_null(strstr(jstr(r.json, "error.message"), "could not be pulled"));
    assert_non_null(strstr(jstr(r.json, "error.message"), "scripts/build-image"));
    assert_true(now_ms() - t0 < 60000);
    reply_free(&r);

    static const char *const bad[] = {"{\"setup\": \"echo\"}", "{\"setup\": [1]}",
                                      "{\"setup\": [\"\"]}", "{\"runtime_extra_deps\": 3}",
                                      "{\"rebuild\": \"yes\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        api(harness_eng, "POST", "/v1/sessions", bad[i], &r);
        if (r.status != 400)
            fail_msg("%s: %ld", bad[i], r.status);
        reply_free(&r);
    }
}

static void test_bake_mode(void **state)
{
    struct engine_proc *e = engine_new();
    e->extra_env[0] = "PADDOCK_BAKE_EXECUTOR=1";
    assert_int_equal(engine_start(e), 0);
    json_t *s = session_new(e, NULL);
    json_t *ins = inspect(jstr(s, "container_id"));
    assert_false(has_executor_mount(ins));
    assert_non_null(strstr(jstr(ins, "Config.Image"), "paddock/runtime:"));
    json_t *obs = session_run(e, jstr(s, "id"), "echo baked");
    assert_string_equal(jstr(obs, "content"), "baked");
    json_decref(obs);
    session_delete(e, jstr(s, "id"));
    json_decref(ins);
    json_decref(s);
    assert_int_equal(engine_stop(e), 0);
    assert_int_equal(engine_destroy(e), 0);
}

static int remove_test_images(void **state)
{
    harness_remove_test_images();
    return harness_group_teardown_clean(state);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setup_builds_then_reuses),
        cmocka_unit_test(test_failures_are_clear),
        cmocka_unit_test(test_bake_mode),
    };
    int failed =
        cmocka_run_group_tests_name("builder", tests, harness_group_setup, remove_test_images);
    return failed || harness_teardown_failed ? 1 : 0;
}
