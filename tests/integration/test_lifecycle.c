/* Integration tests of the engine process itself: Docker unreachable, a base image the daemon
 * does not have (and cannot pull: no registry here), the state-dir lock, restart with sessions
 * that outlive the engine. Each test runs its own engines. */
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

/* ---- a base image the daemon does not have ---- */

#define MISSING_IMAGE "paddock-test-missing/none:never"

/* Docker's objects of a kind (containers, volumes, images) with the label "k=v". */
static size_t docker_count_label(const char *kind, const char *label)
{
    char *filters = strdupf("{\"label\":[\"%s\"]}", label);
    char *e = curl_easy_escape(NULL, filters, 0);
    char *path = strdupf("/%s/json?all=1&filters=%s", kind, e);
    if (strcmp(kind, "volumes") == 0) {
        free(path);
        path = strdupf("/volumes?filters=%s", e);
    }
    struct reply r;
    docker("GET", path, &r);
    assert_int_equal(r.status, 200);
    size_t n =
        json_array_size(strcmp(kind, "volumes") == 0 ? json_object_get(r.json, "Volumes") : r.json);
    reply_free(&r);
    free(path);
    curl_free(e);
    free(filters);
    return n;
}

/* One create asking for the missing image (body): a clear 400 naming the image and the
 * daemon's reason, the session's record saying the same, a "failed" build event, and
 * nothing of the session in Docker. */
static void expect_missing(struct engine_proc *e, struct sse *ev, const char *body)
{
    struct reply r;
    api(e, "POST", "/v1/sessions", body, &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "error.code"), "image_not_found");
    const char *msg = jstr(r.json, "error.message");
    assert_non_null(msg);
    /* The image, then the daemon's reason in parentheses (whatever it is on this machine). */
    const char *head = "image " MISSING_IMAGE " is not here and could not be pulled (";
    assert_non_null(strstr(msg, head));
    assert_true(strstr(msg, head)[strlen(head)] != ')');
    const char *sid = jstr(r.json, "error.session");
    assert_non_null(sid);

    char *sp = strdupf("/v1/sessions/%s", sid);
    json_t *s = api_json(e, "GET", sp, NULL, 200);
    assert_string_equal(jstr(s, "state"), "error");
    assert_string_equal(jstr(s, "reason"), msg);
    assert_null(jstr(s, "container_id"));
    json_decref(s);
    json_t *failed = sse_wait(ev, "build", "session", sid, "stage", "failed", 10000);
    assert_non_null(failed);
    assert_string_equal(jstr(failed, "message"), msg);
    assert_string_equal(jstr(failed, "image"), MISSING_IMAGE);
    assert_non_null(sse_wait(ev, "build", "session", sid, "stage", "pull", 0));

    char *label = strdupf("paddock.session=%s", sid);
    assert_int_equal(docker_count_label("containers", label), 0);
    assert_int_equal(docker_count_label("volumes", label), 0);
    free(label);
    free(sp);
    reply_free(&r);
}

static void test_missing_image(void **state)
{
    struct engine_proc *e = cur;
    assert_int_equal(engine_start(e), 0);
    struct sse *ev = sse_open(e->socket, "/v1/events");
    /* The image as asked; then as the base of setup steps (the builder pulls it). */
    expect_missing(e, ev, "{\"image\": \"" MISSING_IMAGE "\"}");
    expect_missing(e, ev, "{\"image\": \"" MISSING_IMAGE "\", \"setup\": [\"echo never\"]}");
    /* No image of that name, nor a runtime image made from it. */
    struct reply r;
    docker("GET", "/images/paddock-test-missing%2Fnone:never/json", &r);
    assert_int_equal(r.status, 404);
    reply_free(&r);
    assert_int_equal(docker_count_label("images", "paddock.base=" MISSING_IMAGE), 0);
    /* The engine is fine: the next session starts. */
    json_t *ok = session_new(e, NULL);
    session_delete(e, jstr(ok, "id"));
    json_decref(ok);
    sse_close(ev);
    stop_clean(e);
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
    proc_run(argv, NULL, 10000, &pr); /* a hang is killed there: a signal, not an exit */
    if (pr.status == 0 || !strstr(pr.err, "locked"))
        fprintf(stderr, "second serve: status %d, stderr: %s, stdout: %s\n", pr.status, pr.err,
                pr.out);
    assert_true(pr.status > 0 && pr.status < 128); /* exited by itself, non-zero */
    assert_non_null(strstr(pr.err, "locked"));
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
        cmocka_unit_test_setup_teardown(test_missing_image, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_dir_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
    };
    return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL) ? 1 : 0;
}
