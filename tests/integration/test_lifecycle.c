/* Integration tests of the engine process itself: Docker unreachable, the state-dir lock,
 * restart with sessions that outlive the engine. Each test runs its own engines. */
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

/* The test's engine: made by setup, destroyed by teardown even when an assertion fails
 * (no engine process or container outlives the test). */
static struct engine_proc *cur;

static int setup(void **state)
{
    cur = engine_new();
    return 0;
}

static int teardown(void **state)
{
    engine_destroy(cur);
    cur = NULL;
    return 0;
}

/* Stop an engine and require a clean exit (0). */
static void stop_clean(struct engine_proc *e)
{
    int code = engine_stop(e);
    if (code != 0)
        fail_msg("the engine did not exit cleanly on SIGTERM (status %d)", code);
}

/* ---- 11. Docker unreachable ---- */

static void test_docker_unreachable(void **state)
{
    struct engine_proc *e = cur;
    e->extra_env[0] = "DOCKER_HOST=unix:///nonexistent/docker.sock";
    assert_int_equal(engine_start(e), 0);

    struct reply r;
    api(e, "POST", "/v1/sessions", NULL, &r);
    if (r.status != 503)
        fprintf(stderr, "POST /v1/sessions → HTTP %ld %s\n", r.status, r.body ? r.body : r.err);
    assert_int_equal(r.status, 503);
    assert_string_equal(jstr(r.json, "error.code"), "docker_unavailable");
    const char *msg = jstr(r.json, "error.message");
    assert_non_null(msg);
    if (!strstr(msg, "dockerd"))
        fprintf(stderr, "message: %s\n", msg);
    assert_non_null(strstr(msg, "dockerd"));
    assert_non_null(strstr(msg, "/nonexistent/docker.sock"));
    reply_free(&r);

    /* Nothing was left half-made: no live session, no socket dir. */
    api(e, "GET", "/v1/sessions", NULL, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(r.json, "sessions"), i, row)
    {
        engine_track(e, jstr(row, "id"));
        assert_string_not_equal(jstr(row, "state"), "ready");
        assert_string_not_equal(jstr(row, "state"), "starting");
        char *dir = strdupf("%s/run/%s", e->state_dir, jstr(row, "id"));
        assert_false(path_exists(dir));
        free(dir);
    }
    reply_free(&r);

    /* The engine stays up and exits cleanly; info says why sessions cannot be made. */
    api(e, "GET", "/v1/info", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_false(jpath(r.json, "docker.reachable")));
    assert_true(json_is_null(jpath(r.json, "docker.api_version")));
    json_t *derr = jpath(r.json, "docker.error");
    json_incref(derr);
    if (!json_is_string(derr))
        fprintf(stderr, "GET /v1/info: %s\n", r.body);
    reply_free(&r);
    stop_clean(e);
    /* docs/architecture.md: docker = {"reachable", "api_version", "error"}: the reason. */
    assert_true(json_is_string(derr));
    assert_true(strlen(json_string_value(derr)) > 0);
    json_decref(derr);
}

/* ---- 12. one engine per state dir ---- */

static void test_state_dir_lock(void **state)
{
    struct engine_proc *e = cur;
    assert_int_equal(engine_start(e), 0);

    char *argv[] = {
        (char *)harness_bin(), "serve", "--state-dir", e->state_dir, "--socket", e->socket, NULL};
    struct proc_result pr;
    double t0 = now_ms();
    proc_run(argv, NULL, 10000, &pr);
    double took = now_ms() - t0;
    if (pr.status == 0 || !strstr(pr.err, "locked"))
        fprintf(stderr, "second serve: status %d, stderr: %s, stdout: %s\n", pr.status, pr.err,
                pr.out);
    assert_true(pr.status > 0 && pr.status < 128); /* exited by itself, non-zero */
    assert_non_null(strstr(pr.err, "locked"));
    assert_true(took < 3000);
    proc_result_free(&pr);

    /* The first engine is untouched: its socket still answers. */
    struct reply r;
    api(e, "GET", "/v1/info", NULL, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);

    stop_clean(e);
}

/* ---- 14. restart: sandboxes outlive the engine ---- */

static void test_restart(void **state)
{
    struct engine_proc *e = cur;
    assert_int_equal(engine_start(e), 0);
    json_t *s = session_new(e, NULL);
    char *id = strdup(jstr(s, "id"));
    const char *cid = jstr(s, "container_id");
    assert_non_null(cid);
    json_t *obs = session_run(e, id, "export KEEP=kept; cd /tmp; echo before");
    assert_string_equal(jstr(obs, "content"), "before");
    json_decref(obs);

    stop_clean(e);

    /* The container keeps running without the engine. */
    char *path = strdupf("/v1.41/containers/%s/json", cid);
    struct reply r;
    docker("GET", path, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(jpath(r.json, "State.Running")));
    reply_free(&r);
    free(path);
    json_decref(s);

    assert_int_equal(engine_start(e), 0);
    char *sp = strdupf("/v1/sessions/%s", id);
    api(e, "GET", sp, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "ready");
    assert_int_equal(json_integer_value(json_object_get(r.json, "action_count")), 1);
    reply_free(&r);

    obs = session_run(e, id, "echo again");
    assert_string_equal(jstr(obs, "content"), "again");
    assert_int_equal(json_integer_value(jpath(obs, "extras.metadata.exit_code")), 0);
    json_decref(obs);
    /* Same shell: its state survived the engine restart too. */
    obs = session_run(e, id, "echo $KEEP $(pwd)");
    assert_string_equal(jstr(obs, "content"), "kept /tmp");
    json_decref(obs);

    session_delete(e, id);
    char *l = strdupf("paddock.session=%s", id);
    const char *labels[] = {l, NULL};
    json_t *list = docker_containers_with_labels(labels);
    assert_int_equal(json_array_size(list), 0);
    json_decref(list);
    free(l);

    stop_clean(e);
    /* A third start finds the session deleted and does not resurrect it. */
    assert_int_equal(engine_start(e), 0);
    api(e, "GET", sp, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "deleted");
    reply_free(&r);
    stop_clean(e);
    free(sp);
    free(id);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_docker_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_dir_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
    };
    return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL) ? 1 : 0;
}
