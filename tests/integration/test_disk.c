/* The disk bound on a storage driver without quotas (overlay2 on ext4 here): a session past its
 * limit (limits.disk) is paused with the reason, wherever it wrote (its writable layer, its
 * workspace volume), without the watchdog following a link the sandbox made; the operator
 * raises the limit and resumes. And the store's floor: below it on the state dir's filesystem,
 * creates and actions are refused with 507 and what to free, and nothing recorded is lost. */
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
#include <sys/statvfs.h>
#include <time.h>

#define MIB (1024LL * 1024)

static struct reply run_raw(struct engine_proc *e, const char *id, const char *cmd)
{
    json_t *a = json_pack("{s:{s:s,s:{s:s}}}", "action", "action", "run", "args", "command", cmd);
    char *body = json_dumps(a, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(e, "POST", path, body, &r);
    free(path);
    free(body);
    json_decref(a);
    return r;
}

/* An action submitted without waiting for it (?wait=0: 202); its id. */
static long long run_async(struct engine_proc *e, const char *id, const char *cmd)
{
    json_t *a = json_pack("{s:{s:s,s:{s:s}}}", "action", "action", "run", "args", "command", cmd);
    char *body = json_dumps(a, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action?wait=0", id);
    struct reply r;
    api(e, "POST", path, body, &r);
    assert_int_equal(r.status, 202);
    long long action = (long long)json_integer_value(jpath(r.json, "action_id"));
    assert_true(action > 0);
    reply_free(&r);
    free(path);
    free(body);
    json_decref(a);
    return action;
}

static json_t *session_get(struct engine_proc *e, const char *id)
{
    char *path = strdupf("/v1/sessions/%s", id);
    struct reply r;
    api(e, "GET", path, NULL, &r);
    free(path);
    assert_int_equal(r.status, 200);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    return j;
}

static long post_status(struct engine_proc *e, const char *id, const char *verb, const char *body,
                        json_t **out)
{
    char *path = strdupf("/v1/sessions/%s/%s", id, verb);
    struct reply r;
    api(e, "POST", path, body, &r);
    free(path);
    long st = r.status;
    if (out)
        *out = json_incref(r.json);
    reply_free(&r);
    return st;
}

/* Wait (≤ 30 s) until the session is paused with the disk watchdog's reason; the session. */
static json_t *wait_disk_paused(const char *id)
{
    json_t *s = session_wait_state(harness_eng, id, "paused", 30000);
    if (!s)
        fail_msg("session %s was not paused at its disk limit", id);
    const char *why = jstr(s, "reason");
    if (!why || !strstr(why, "disk limit reached") || !strstr(why, "limits.disk") ||
        !strstr(why, "paddock limit"))
        fail_msg("paused, but not for its disk: %s", why ? why : "(no reason)");
    return s;
}

/* Wait (≤ 30 s) until a measurement finished after wall-clock time t; the session then. */
static json_t *wait_measured_after(const char *id, double t)
{
    double deadline = now_ms() + 30000;
    for (;;) {
        json_t *s = session_get(harness_eng, id);
        json_t *at = jpath(s, "disk.at");
        if (at && json_number_value(at) > t)
            return s;
        json_decref(s);
        if (now_ms() > deadline)
            fail_msg("session %s was not measured within 30 s", id);
        sleep_ms(200);
    }
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 100 MiB into the container's writable layer (/tmp) against a 64 MiB limit: the session is
 * paused, while the writing action runs or after it ended, whichever the watchdog sees first
 * (a frozen action waits and goes on once resumed). */
static void test_layer_limit_pauses_then_raise_resume(void **state)
{
    json_t *s = session_new(harness_eng, "{\"limits\": {\"disk\": \"64m\"}}");
    const char *id = jstr(s, "id");
    assert_int_equal(json_integer_value(jpath(s, "options.limits.disk")), 64 * MIB);
    long long action = run_async(harness_eng, id,
                                 "dd if=/dev/zero of=/tmp/fill bs=1M count=100 status=none && "
                                 "echo wrote");
    json_t *p = wait_disk_paused(id);
    json_decref(p);
    /* The measurement in the session object: over the limit. */
    p = session_get(harness_eng, id);
    assert_true(json_integer_value(jpath(p, "disk.used")) > 64 * MIB);
    assert_int_equal(json_integer_value(jpath(p, "disk.limit")), 64 * MIB);
    json_decref(p);

    /* paddock ls says why. */
    char *argv[] = {(char *)harness_bin(), "--state-dir", harness_eng->state_dir, "ls", NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 20000, &pr);
    assert_int_equal(pr.status, 0);
    if (!strstr(pr.out, "disk limit reached"))
        fail_msg("paddock ls does not show the reason:\n%s", pr.out);
    proc_result_free(&pr);
    /* paddock show too, with the measurement. */
    char *show[] = {
        (char *)harness_bin(), "--state-dir", harness_eng->state_dir, "show", (char *)id, NULL};
    proc_run(show, NULL, 20000, &pr);
    assert_int_equal(pr.status, 0);
    if (!strstr(pr.out, "disk limit reached") || !strstr(pr.out, "used of 64.0 MiB"))
        fail_msg("paddock show does not show the reason and the measurement:\n%s", pr.out);
    proc_result_free(&pr);

    /* No action while paused: the refusal names the reason. */
    struct reply r = run_raw(harness_eng, id, "echo refused");
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(jstr(r.json, "error.message"), "disk limit reached"));
    reply_free(&r);

    /* Resumed without more room: measured again and paused again. */
    assert_int_equal(post_status(harness_eng, id, "resume", NULL, NULL), 200);
    p = wait_disk_paused(id);
    json_decref(p);

    /* A bad limit is refused; a raised one is kept, and the session stays paused until
     * resumed. */
    assert_int_equal(post_status(harness_eng, id, "limits", "{\"disk\": \"1k\"}", NULL), 400);
    assert_int_equal(post_status(harness_eng, id, "limits", "{\"size\": \"1g\"}", NULL), 400);
    json_t *raised = NULL;
    assert_int_equal(post_status(harness_eng, id, "limits", "{\"disk\": \"1g\"}", &raised), 200);
    assert_int_equal(json_integer_value(jpath(raised, "options.limits.disk")), 1LL << 30);
    assert_string_equal(jstr(raised, "state"), "paused");
    json_decref(raised);

    double t = wall_now();
    assert_int_equal(post_status(harness_eng, id, "resume", NULL, NULL), 200);
    /* The writing action finishes (it was frozen, not lost). */
    char *apath = strdupf("/v1/actions/%lld?wait=60", action);
    api(harness_eng, "GET", apath, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "done");
    reply_free(&r);
    free(apath);
    json_t *obs = session_run(harness_eng, id, "echo after-raise");
    assert_string_equal(jstr(obs, "content"), "after-raise");
    json_decref(obs);
    /* Measured since the resume, under the new limit: still ready. */
    p = wait_measured_after(id, t);
    assert_string_equal(jstr(p, "state"), "ready");
    assert_true(json_integer_value(jpath(p, "disk.used")) > 64 * MIB);
    json_decref(p);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* The default workspace is a volume the engine made: what is written there counts too. */
static void test_workspace_volume_counts(void **state)
{
    json_t *s = session_new(harness_eng, "{\"limits\": {\"disk\": \"64m\"}}");
    const char *id = jstr(s, "id");
    run_async(harness_eng, id, "dd if=/dev/zero of=/workspace/fill bs=1M count=100 status=none");
    json_t *p = wait_disk_paused(id);
    json_decref(p);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* Links the sandbox makes to the host's root and to big trees are not followed: the session
 * takes what it wrote, a few KiB, and stays ready. */
static void test_links_not_followed(void **state)
{
    json_t *s = session_new(harness_eng, "{\"limits\": {\"disk\": \"64m\"}}");
    const char *id = jstr(s, "id");
    json_t *obs = session_run(harness_eng, id,
                              "ln -s / /tmp/hostroot && ln -s /usr /workspace/usr && "
                              "ln -s /proc/1/root /tmp/init-root && echo linked");
    assert_string_equal(jstr(obs, "content"), "linked");
    json_decref(obs);
    /* Two measurements on: the second began after the links existed. */
    json_t *p = wait_measured_after(id, wall_now());
    double at = json_number_value(jpath(p, "disk.at"));
    json_decref(p);
    p = wait_measured_after(id, at);
    assert_string_equal(jstr(p, "state"), "ready");
    if (jpath(p, "disk.error"))
        fail_msg("not measured: %s", jstr(p, "disk.error"));
    assert_true(json_integer_value(jpath(p, "disk.used")) < 16 * MIB);
    json_decref(p);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* The floor: set above the filesystem's free space (config file), the engine refuses creates
 * and actions with 507 and what to free; what it recorded before is intact; delete still works. */
static void test_floor_refuses_507(void **state)
{
    struct engine_proc *e = engine_new();
    e->extra_env[0] = "PADDOCK_CONFIRM=never";
    assert_int_equal(engine_start(e), 0);
    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    json_t *obs = session_run(e, id, "echo kept-before-floor");
    assert_string_equal(jstr(obs, "content"), "kept-before-floor");
    json_decref(obs);
    assert_int_equal(engine_stop(e), 0);

    struct statvfs v;
    assert_int_equal(statvfs(e->state_dir, &v), 0);
    long long floor = (long long)v.f_bavail * (long long)v.f_frsize + (1LL << 30);
    char *cfg = strdupf("%s/floor.toml", e->state_dir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "[paddock]\ndisk_floor = \"%lld\"\n", floor);
    fclose(f);
    char *env = strdupf("PADDOCK_CONFIG=%s", cfg);
    e->extra_env[1] = env;
    assert_int_equal(engine_start(e), 0);

    struct reply r;
    api(e, "GET", "/v1/info", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(jpath(r.json, "disk.floor")), floor);
    reply_free(&r);
    json_t *ready = session_wait_state(e, id, "ready", 30000);
    assert_non_null(ready);
    json_decref(ready);

    api(e, "POST", "/v1/sessions", "{}", &r);
    if (r.status != 507)
        fail_msg("create below the floor: want 507, got %ld: %s", r.status, r.body);
    assert_string_equal(jstr(r.json, "error.code"), "storage_full");
    const char *msg = jstr(r.json, "error.message");
    assert_non_null(strstr(msg, "the session was not created"));
    assert_non_null(strstr(msg, "below the engine's floor"));
    assert_non_null(strstr(msg, "free space there"));
    assert_non_null(strstr(msg, e->state_dir));
    reply_free(&r);

    r = run_raw(e, id, "echo refused-below-floor");
    if (r.status != 507)
        fail_msg("action below the floor: want 507, got %ld: %s", r.status, r.body);
    assert_string_equal(jstr(r.json, "error.code"), "storage_full");
    assert_non_null(strstr(jstr(r.json, "error.message"), "below the engine's floor"));
    reply_free(&r);

    /* Nothing new recorded, nothing old lost, the record verifies. */
    api(e, "GET", "/v1/sessions", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(jpath(r.json, "sessions")), 1);
    reply_free(&r);
    char *path = strdupf("/v1/sessions/%s/actions", id);
    api(e, "GET", path, NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *acts = jpath(r.json, "actions");
    assert_int_equal(json_array_size(acts), 1);
    assert_string_equal(jstr(json_array_get(acts, 0), "summary"), "echo kept-before-floor");
    assert_string_equal(jstr(json_array_get(acts, 0), "state"), "done");
    reply_free(&r);
    free(path);
    path = strdupf("/v1/verify?session=%s", id);
    api(e, "GET", path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(jpath(r.json, "ok")));
    reply_free(&r);
    free(path);

    /* The operator frees space: delete still works below the floor. */
    session_delete(e, id);
    assert_int_equal(engine_stop(e), 0);
    engine_destroy(e);
    free(env);
    free(cfg);
    json_decref(s);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layer_limit_pauses_then_raise_resume),
        cmocka_unit_test(test_workspace_volume_counts),
        cmocka_unit_test(test_links_not_followed),
        cmocka_unit_test(test_floor_refuses_507),
    };
    int failed = cmocka_run_group_tests_name("disk", tests, harness_group_setup_unsupervised,
                                             harness_group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
