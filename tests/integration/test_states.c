/* Integration tests of the session state machine against the real daemon: pause/resume keeps
 * the shell, stop then resume, containers killed, removed or OOM-killed from outside, an action
 * in flight when its container dies, engine restart reconcile, name collisions, attach,
 * keep_alive, gc, and delete leaving nothing. Each test runs its own engine. */
#include "harness.h"
#include "proxy.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WAIT_MS 20000

static struct engine_proc *cur;
/* A volume the running test made: teardown removes it even when an assertion failed. */
static char *test_volume;
/* The relay standing in for the daemon, when the test uses one. */
static struct proxy *test_proxy;
static char *test_env; /* an extra_env entry of cur */

static int setup(void **state)
{
    cur = engine_new();
    /* These tests are about states, not approvals: nothing waits for an operator. */
    cur->extra_env[0] = "PADDOCK_CONFIRM=never";
    return engine_start(cur) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    /* A clean exit on SIGTERM (the ASan build's leak check changes it when something leaked). */
    if (cur->pid) {
        int code = engine_stop(cur);
        if (code != 0) {
            fprintf(stderr, "FAIL: the engine exited with status %d on SIGTERM\n", code);
            harness_teardown_failed = 1;
        }
    }
    engine_destroy(cur);
    cur = NULL;
    proxy_stop(test_proxy);
    test_proxy = NULL;
    free(test_env);
    test_env = NULL;
    if (test_volume) {
        char *p = strdupf("/v1.41/volumes/%s", test_volume);
        struct reply r;
        docker("DELETE", p, &r);
        reply_free(&r);
        free(p);
        free(test_volume);
        test_volume = NULL;
    }
    return 0;
}

static void stop_clean(struct engine_proc *e)
{
    int code = engine_stop(e);
    if (code != 0)
        fail_msg("the engine did not exit cleanly on SIGTERM (status %d)", code);
}

/* POST /v1/sessions/{id}/{verb}; returns the reply (caller frees). */
static void session_post(struct engine_proc *e, const char *id, const char *verb, struct reply *r)
{
    char *path = strdupf("/v1/sessions/%s/%s", id, verb);
    api(e, "POST", path, "", r);
    free(path);
}

/* A request that must answer 200 with the session in state want. */
static void session_expect(struct engine_proc *e, const char *id, const char *verb,
                           const char *want)
{
    struct reply r;
    session_post(e, id, verb, &r);
    if (r.status != 200 || !jstr(r.json, "state") || strcmp(jstr(r.json, "state"), want) != 0)
        fail_msg("%s %s → HTTP %ld %s (want 200, state %s)", verb, id, r.status,
                 r.body ? r.body : r.err, want);
    reply_free(&r);
}

/* A request refused with status and a message containing both texts. */
static void expect_refused(struct reply *r, long status, const char *text1, const char *text2)
{
    const char *msg = jstr(r->json, "error.message");
    if (r->status != status || !msg || !strstr(msg, text1) || (text2 && !strstr(msg, text2)))
        fail_msg("want HTTP %ld with \"%s\"%s%s%s in the message; got %ld %s", status, text1,
                 text2 ? " and \"" : "", text2 ? text2 : "", text2 ? "\"" : "", r->status,
                 r->body ? r->body : r->err);
}

static void run_refused(struct engine_proc *e, const char *id, long status, const char *text1,
                        const char *text2)
{
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(e, "POST", path, "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"true\"}}}", &r);
    free(path);
    expect_refused(&r, status, text1, text2);
    reply_free(&r);
}

static void run_expect(struct engine_proc *e, const char *id, const char *cmd, const char *out)
{
    json_t *obs = session_run(e, id, cmd);
    if (!jstr(obs, "content") || strcmp(jstr(obs, "content"), out) != 0)
        fail_msg("`%s` printed \"%s\", want \"%s\"", cmd, jstr(obs, "content"), out);
    json_decref(obs);
}

/* docker inspect of a container; NULL when Docker answers 404. */
static json_t *inspect(const char *cid)
{
    char *path = strdupf("/v1.41/containers/%s/json", cid);
    struct reply r;
    docker("GET", path, &r);
    free(path);
    json_t *j = r.status == 200 ? json_incref(r.json) : NULL;
    if (r.status != 200 && r.status != 404)
        fail_msg("docker inspect %s: HTTP %ld %s", cid, r.status, r.body ? r.body : r.err);
    reply_free(&r);
    return j;
}

static void docker_expect(const char *method, const char *path, const char *body, long status)
{
    struct reply r;
    docker_body(method, path, body, &r);
    if (r.status != status)
        fail_msg("docker %s %s → HTTP %ld %s (want %ld)", method, path, r.status,
                 r.body ? r.body : r.err, status);
    reply_free(&r);
}

static char *container_of(json_t *session)
{
    const char *cid = jstr(session, "container_id");
    assert_non_null(cid);
    return strdup(cid);
}

/* ---- pause / resume: a cgroup freeze, the shell keeps its cwd and variables ---- */

static void test_pause_resume_keeps_shell(void **state)
{
    struct engine_proc *e = cur;
    struct sse *ev = sse_open(e->socket, "/v1/events");
    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    char *cid = container_of(s);
    run_expect(e, id, "cd /tmp; export PADDOCK_KEEP=kept; echo set", "set");

    session_expect(e, id, "pause", "paused");
    json_t *ins = inspect(cid);
    assert_non_null(ins);
    if (!json_is_true(jpath(ins, "State.Paused"))) {
        char *st = json_dumps(jpath(ins, "State"), JSON_COMPACT);
        json_t *events = session_events(e, id);
        char *evs = json_dumps(events, JSON_COMPACT);
        engine_print_log(e);
        fail_msg("paused by the engine, but Docker says %s; events %s", st, evs);
    }
    json_decref(ins);
    /* Actions and illegal requests are refused with the state and what to do. */
    run_refused(e, id, 409, "paused", "/resume");
    struct reply r;
    session_post(e, id, "pause", &r); /* again: already paused, nothing to do */
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "paused");
    assert_string_equal(jstr(r.json, "reason"), "paused by request");
    reply_free(&r);

    session_expect(e, id, "resume", "ready");
    ins = inspect(cid);
    assert_false(json_is_true(jpath(ins, "State.Paused")));
    json_decref(ins);
    run_expect(e, id, "echo $PADDOCK_KEEP $(pwd)", "kept /tmp");

    /* Every transition is a lifecycle event, in the store and on the event stream. */
    assert_non_null(sse_wait(ev, "session", "id", id, "state", "paused", WAIT_MS));
    json_t *events = session_events(e, id);
    const char *order[] = {"starting", "started", "ready", "paused", "ready"};
    assert_int_equal(json_array_size(events), 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(jstr(json_array_get(events, i), "kind"), order[i]);
    json_decref(events);
    sse_close(ev);
    free(cid);
    json_decref(s);
}

/* ---- stop, then resume: the container starts again (a restart) ---- */

static void test_stop_then_resume(void **state)
{
    struct engine_proc *e = cur;
    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    char *cid = container_of(s);
    run_expect(e, id, "cd /tmp; export PADDOCK_KEEP=kept; echo set", "set");

    struct reply r;
    session_post(e, id, "stop", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "stopped");
    assert_string_equal(jstr(r.json, "reason"), "stopped by request");
    assert_true(json_is_integer(json_object_get(r.json, "exit_code")));
    reply_free(&r);
    json_t *ins = inspect(cid);
    assert_false(json_is_true(jpath(ins, "State.Running")));
    json_decref(ins);

    run_refused(e, id, 409, "stopped", "/resume");
    session_post(e, id, "pause", &r);
    expect_refused(&r, 409, "cannot pause", "stopped");
    reply_free(&r);

    session_expect(e, id, "resume", "ready");
    /* A new shell: the variable is gone and the cwd is the workspace again. */
    run_expect(e, id, "echo ${PADDOCK_KEEP:-gone} $(pwd)", "gone /workspace");
    json_t *events = session_events(e, id);
    assert_non_null(events_find(events, "stopped"));
    assert_int_equal(json_array_size(events), 7); /* + stopped, starting, started, ready */
    json_decref(events);
    free(cid);
    json_decref(s);
}

/* ---- the container killed from outside: stopped, with the exit code ---- */

static void test_killed_outside(void **state)
{
    struct engine_proc *e = cur;
    struct sse *ev = sse_open(e->socket, "/v1/events");
    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    char *cid = container_of(s);
    char *path = strdupf("/v1.41/containers/%s/kill", cid);
    docker_expect("POST", path, NULL, 204);
    free(path);

    json_t *got = session_wait_state(e, id, "stopped", WAIT_MS);
    assert_non_null(got);
    assert_int_equal(json_integer_value(json_object_get(got, "exit_code")), 137);
    assert_non_null(strstr(jstr(got, "reason"), "137"));
    json_decref(got);
    json_t *sev = sse_wait(ev, "session", "id", id, "state", "stopped", WAIT_MS);
    assert_non_null(sev);
    assert_non_null(strstr(jstr(sev, "reason"), "exited with code 137"));
    json_t *events = session_events(e, id);
    json_t *stopped = events_find(events, "stopped");
    assert_non_null(stopped);
    assert_non_null(strstr(jstr(stopped, "detail"), "137"));
    json_decref(events);

    run_refused(e, id, 409, "stopped", "resume");
    session_expect(e, id, "resume", "ready");
    run_expect(e, id, "echo back", "back");
    sse_close(ev);
    free(cid);
    json_decref(s);
}

/* ---- an action in flight when its container dies finishes with a clear error ---- */

struct inflight {
    struct engine_proc *e;
    const char *id;
    struct reply r;
};

static void *inflight_run(void *ud)
{
    struct inflight *f = ud;
    char *path = strdupf("/v1/sessions/%s/execute_action", f->id);
    http_unix(f->e->socket, "POST", path,
              "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"sleep 120\"},"
              "\"timeout\":200}}",
              -1, 60000, &f->r);
    free(path);
    return NULL;
}

static void test_action_in_flight_dies(void **state)
{
    struct engine_proc *e = cur;
    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    char *cid = container_of(s);
    struct inflight f = {.e = e, .id = id};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, inflight_run, &f), 0);
    /* Wait until the command runs in the sandbox (Docker's process list shows it). */
    char *tpath = strdupf("/v1.41/containers/%s/top", cid);
    bool running = false;
    for (double end = now_ms() + WAIT_MS; !running && now_ms() < end; sleep_ms(20)) {
        struct reply r;
        docker("GET", tpath, &r);
        running = r.body && strstr(r.body, "sleep 120");
        reply_free(&r);
    }
    free(tpath);
    assert_true(running);
    char *path = strdupf("/v1.41/containers/%s/kill", cid);
    docker_expect("POST", path, NULL, 204);
    free(path);
    pthread_join(t, NULL);
    if (f.r.status != 502 || !strstr(f.r.body, "exited (code 137)"))
        fail_msg("the action in flight got HTTP %ld %s; want 502 saying the container exited "
                 "(code 137)",
                 f.r.status, f.r.body ? f.r.body : f.r.err);
    assert_string_equal(jstr(f.r.json, "error.code"), "executor_error");
    reply_free(&f.r);
    json_t *got = session_wait_state(e, id, "stopped", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    free(cid);
    json_decref(s);
}

/* ---- the container removed from outside: error ---- */

static void test_removed_outside(void **state)
{
    struct engine_proc *e = cur;
    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    char *cid = container_of(s);
    char *path = strdupf("/v1.41/containers/%s?force=1", cid);
    docker_expect("DELETE", path, NULL, 204);
    free(path);

    json_t *got = session_wait_state(e, id, "error", WAIT_MS);
    assert_non_null(got);
    assert_string_equal(jstr(got, "reason"), "container removed outside paddock");
    assert_string_equal(jstr(got, "error"), "container removed outside paddock");
    json_decref(got);
    char *dir = strdupf("%s/run/%s", e->state_dir, id);
    assert_false(path_exists(dir));
    free(dir);
    run_refused(e, id, 409, "error", "delete it");
    struct reply r;
    session_post(e, id, "resume", &r);
    expect_refused(&r, 409, "cannot resume", "container removed outside paddock");
    reply_free(&r);
    session_delete(e, id);
    free(cid);
    json_decref(s);
}

/* ---- paused and unpaused from outside: the engine asks Docker what is true (the event
 * stream lags, so a late "pause" from the engine's own pause must not pause a running session)
 * ---- */

static void test_paused_outside(void **state)
{
    struct engine_proc *e = cur;
    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    char *cid = container_of(s);
    /* the engine's own pauses and resumes, back to back: their events arrive late */
    for (int i = 0; i < 3; i++) {
        session_expect(e, id, "pause", "paused");
        session_expect(e, id, "resume", "ready");
    }
    run_expect(e, id, "echo still", "still");
    char *path = strdupf("/v1.41/containers/%s/pause", cid);
    docker_expect("POST", path, NULL, 204);
    free(path);
    json_t *got = session_wait_state(e, id, "paused", WAIT_MS);
    assert_non_null(got);
    assert_string_equal(jstr(got, "reason"), "paused outside paddock");
    json_decref(got);
    path = strdupf("/v1.41/containers/%s/unpause", cid);
    docker_expect("POST", path, NULL, 204);
    free(path);
    got = session_wait_state(e, id, "ready", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    run_expect(e, id, "echo again", "again");
    session_delete(e, id);
    free(cid);
    json_decref(s);
}

/* ---- out of memory: a process killed (the session lives on), then the sandbox itself ---- */

static void test_oom(void **state)
{
    struct engine_proc *e = cur;
    json_t *s = session_new(e, "{\"limits\": {\"memory\": \"64m\"}}");
    const char *id = jstr(s, "id");
    char *cid = container_of(s);
    json_t *ins = inspect(cid); /* 64 MiB without swap */
    assert_int_equal(json_integer_value(jpath(ins, "HostConfig.Memory")), 64 << 20);
    assert_int_equal(json_integer_value(jpath(ins, "HostConfig.MemorySwap")), 64 << 20);
    json_decref(ins);

    json_t *obs = session_run(e, id, "python3 -c 'a = bytearray(200 * 2**20)'");
    assert_int_equal(json_integer_value(jpath(obs, "extras.metadata.exit_code")), 137);
    json_decref(obs);
    /* The kernel killed python, not the sandbox: still ready, the kill counted and recorded. */
    json_t *got = NULL;
    for (double end = now_ms() + WAIT_MS; now_ms() < end; sleep_ms(20)) {
        char *sp = strdupf("/v1/sessions/%s", id);
        struct reply r;
        api(e, "GET", sp, NULL, &r);
        free(sp);
        json_decref(got);
        got = json_incref(r.json);
        reply_free(&r);
        if (json_integer_value(json_object_get(got, "oom_kills")) >= 1)
            break;
    }
    assert_int_equal(json_integer_value(json_object_get(got, "oom_kills")), 1);
    assert_string_equal(jstr(got, "state"), "ready");
    json_decref(got);
    json_t *events = session_events(e, id);
    assert_non_null(events_find(events, "oom"));
    json_decref(events);
    run_expect(e, id, "echo alive", "alive");

    /* A 40 MiB write: the executor itself holds it, outgrows the limit and is killed, and the
     * container with it. */
    size_t n = 40u << 20;
    char *body = malloc(n + 200);
    assert_non_null(body);
    int k = snprintf(body, 200,
                     "{\"action\":{\"action\":\"write\",\"args\":{\"path\":\"/workspace/big\","
                     "\"content\":\"");
    memset(body + k, 'x', n);
    strcpy(body + k + n, "\"}}}");
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(e, "POST", path, body, &r);
    free(path);
    free(body);
    if (r.status != 502 || !strstr(r.body, "out of memory"))
        fail_msg("the write that ran out of memory got HTTP %ld %s", r.status,
                 r.body ? r.body : r.err);
    reply_free(&r);
    got = session_wait_state(e, id, "oom-killed", WAIT_MS);
    assert_non_null(got);
    assert_non_null(strstr(jstr(got, "reason"), "out of memory"));
    assert_int_equal(json_integer_value(json_object_get(got, "exit_code")), 137);
    json_decref(got);
    run_refused(e, id, 409, "oom-killed", "more memory");
    session_expect(e, id, "resume", "ready");
    run_expect(e, id, "echo again", "again");
    free(cid);
    json_decref(s);
}

/* ---- the daemon goes away and comes back (a relay in front of it stops and starts): the
 * sessions are disconnected meanwhile, then recovered with their shells intact ---- */

static void test_daemon_gone_reconnects(void **state)
{
    struct engine_proc *e = cur;
    stop_clean(e);
    char *psock = strdupf("%s/docker.sock", e->state_dir);
    test_env = strdupf("DOCKER_HOST=unix://%s", psock);
    test_proxy = proxy_start(psock, harness_docker_socket());
    assert_non_null(test_proxy);
    e->extra_env[1] = test_env;
    assert_int_equal(engine_start(e), 0);
    json_t *a = session_new(e, NULL), *b = session_new(e, NULL);
    const char *ida = jstr(a, "id"), *idb = jstr(b, "id");
    run_expect(e, ida, "cd /tmp; export PADDOCK_KEEP=kept; echo set", "set");
    session_expect(e, idb, "pause", "paused");
    struct sse *ev = sse_open(e->socket, "/v1/events");

    proxy_stop(test_proxy); /* the daemon is gone */
    test_proxy = NULL;
    json_t *got = session_wait_state(e, ida, "disconnected", WAIT_MS);
    assert_non_null(got);
    assert_non_null(strstr(jstr(got, "reason"), "Docker daemon not reachable"));
    json_decref(got);
    got = session_wait_state(e, idb, "disconnected", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    assert_non_null(sse_wait(ev, "session", "id", ida, "state", "disconnected", WAIT_MS));
    /* Nothing waits for it: actions 503, creates 503, requests 409 with what to do. */
    run_refused(e, ida, 503, "disconnected", "reconnects");
    struct reply r;
    api(e, "POST", "/v1/sessions", "", &r);
    assert_int_equal(r.status, 503);
    assert_string_equal(jstr(r.json, "error.code"), "docker_unavailable");
    reply_free(&r);
    session_post(e, idb, "resume", &r);
    expect_refused(&r, 409, "disconnected", "reconnects");
    reply_free(&r);
    api(e, "GET", "/v1/info", NULL, &r);
    assert_true(json_is_false(jpath(r.json, "docker.reachable")));
    reply_free(&r);

    test_proxy = proxy_start(psock, harness_docker_socket()); /* it is back */
    assert_non_null(test_proxy);
    got = session_wait_state(e, ida, "ready", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    got = session_wait_state(e, idb, "paused", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    assert_non_null(sse_wait(ev, "session", "id", ida, "state", "ready", WAIT_MS));
    run_expect(e, ida, "echo $PADDOCK_KEEP $(pwd)", "kept /tmp"); /* the same shell */
    session_expect(e, idb, "resume", "ready");
    json_t *events = session_events(e, ida);
    size_t n = json_array_size(events);
    assert_true(n >= 2);
    assert_string_equal(jstr(json_array_get(events, n - 2), "kind"), "disconnected");
    assert_string_equal(jstr(json_array_get(events, n - 1), "kind"), "ready");
    json_decref(events);

    /* An engine that starts while the daemon is away: disconnected, then recovered. */
    stop_clean(e);
    proxy_stop(test_proxy);
    test_proxy = NULL;
    assert_int_equal(engine_start(e), 0);
    got = session_wait_state(e, ida, "disconnected", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    test_proxy = proxy_start(psock, harness_docker_socket());
    assert_non_null(test_proxy);
    got = session_wait_state(e, ida, "ready", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    run_expect(e, ida, "echo $PADDOCK_KEEP", "kept");

    sse_close(ev);
    json_decref(a);
    json_decref(b);
    free(psock);
}

/* ---- engine restart: running, paused, exited and removed containers ---- */

static void test_restart_reconciles(void **state)
{
    struct engine_proc *e = cur;
    const char *names[] = {"r-run", "r-pau", "r-exi", "r-rem"};
    char *ids[4], *cids[4];
    for (int i = 0; i < 4; i++) {
        char *body = strdupf("{\"name\": \"%s\"}", names[i]);
        json_t *s = session_new(e, body);
        free(body);
        ids[i] = strdup(jstr(s, "id"));
        cids[i] = container_of(s);
        json_decref(s);
    }
    run_expect(e, ids[1], "cd /tmp; export PADDOCK_KEEP=kept; echo set", "set");
    stop_clean(e);

    char *p = strdupf("/v1.41/containers/%s/pause", cids[1]);
    docker_expect("POST", p, NULL, 204);
    free(p);
    p = strdupf("/v1.41/containers/%s/kill", cids[2]);
    docker_expect("POST", p, NULL, 204);
    free(p);
    p = strdupf("/v1.41/containers/%s?force=1", cids[3]);
    docker_expect("DELETE", p, NULL, 204);
    free(p);

    assert_int_equal(engine_start(e), 0);
    json_t *got = session_wait_state(e, ids[1], "paused", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    got = session_wait_state(e, ids[2], "stopped", WAIT_MS);
    assert_non_null(got);
    assert_int_equal(json_integer_value(json_object_get(got, "exit_code")), 137);
    assert_non_null(strstr(jstr(got, "reason"), "137"));
    json_decref(got);
    got = session_wait_state(e, ids[3], "error", WAIT_MS);
    assert_non_null(got);
    assert_string_equal(jstr(got, "reason"), "container removed outside paddock");
    json_decref(got);
    got = session_wait_state(e, ids[0], "ready", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    run_expect(e, ids[0], "echo running", "running");
    /* The paused one was frozen across the restart: its shell is as it was. */
    session_expect(e, ids[1], "resume", "ready");
    run_expect(e, ids[1], "echo $PADDOCK_KEEP $(pwd)", "kept /tmp");
    session_expect(e, ids[2], "resume", "ready");
    for (int i = 0; i < 4; i++) {
        free(ids[i]);
        free(cids[i]);
    }
}

/* ---- names: a container already named like ours, two sessions with one name; attach ---- */

static char *find_session_named(struct engine_proc *e, const char *name, const char *state)
{
    struct reply r;
    api(e, "GET", "/v1/sessions", NULL, &r);
    size_t i;
    json_t *row;
    char *id = NULL;
    json_array_foreach(json_object_get(r.json, "sessions"), i, row)
    {
        if (strcmp(jstr(row, "name"), name) == 0 && strcmp(jstr(row, "state"), state) == 0)
            id = strdup(jstr(row, "id"));
    }
    reply_free(&r);
    return id;
}

static void test_names_and_attach(void **state)
{
    struct engine_proc *e = cur;
    char *eid = engine_read_id(e);
    assert_non_null(eid);
    char *cname = strdupf("paddock-%.8s-clash", eid);
    char *path = strdupf("/v1.41/containers/create?name=%s", cname);
    struct reply r;
    docker_body("POST", path,
                "{\"Image\": \"" HARNESS_IMAGE "\", \"Cmd\": [\"true\"], "
                "\"Labels\": {\"paddock.test\": \"1\"}}",
                &r);
    free(path);
    assert_int_equal(r.status, 201);
    char *hand = strdup(jstr(r.json, "Id"));
    reply_free(&r);

    api(e, "POST", "/v1/sessions", "{\"name\": \"clash\"}", &r);
    expect_refused(&r, 409, "already in use", "paddock gc");
    assert_string_equal(jstr(r.json, "error.code"), "conflict");
    reply_free(&r);
    char *failed = find_session_named(e, "clash", "error");
    assert_non_null(failed);
    engine_track(e, failed);
    /* The engine never removes a container it did not make. */
    json_t *ins = inspect(hand);
    assert_non_null(ins);
    json_decref(ins);
    path = strdupf("/v1.41/containers/%s?force=1", hand);
    docker_expect("DELETE", path, NULL, 204);
    free(path);
    /* A session in error does not hold its name. */
    json_t *clash = session_new(e, "{\"name\": \"clash\"}");
    json_t *cins = inspect(jstr(clash, "container_id"));
    assert_non_null(cins);
    assert_string_equal(jstr(cins, "Name") + 1, cname);
    json_decref(cins);
    json_decref(clash);

    json_t *twin = session_new(e, "{\"name\": \"twin\"}");
    const char *tid = jstr(twin, "id");
    api(e, "POST", "/v1/sessions", "{\"name\": \"twin\"}", &r);
    expect_refused(&r, 409, "already exists", "attach");
    reply_free(&r);

    /* Attach by name and by id: the same session, 200, nothing new. */
    api(e, "POST", "/v1/sessions", "{\"attach\": \"twin\"}", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "id"), tid);
    reply_free(&r);
    char *by_id = strdupf("{\"attach\": \"%s\"}", tid);
    api(e, "POST", "/v1/sessions", by_id, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "id"), tid);
    reply_free(&r);
    /* Attaching to a paused or stopped session brings it back. */
    session_expect(e, tid, "pause", "paused");
    api(e, "POST", "/v1/sessions", by_id, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "ready");
    reply_free(&r);
    session_expect(e, tid, "stop", "stopped");
    api(e, "POST", "/v1/sessions", "{\"attach\": \"twin\"}", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "ready");
    reply_free(&r);
    run_expect(e, tid, "echo attached", "attached");
    free(by_id);

    api(e, "POST", "/v1/sessions", "{\"attach\": \"nobody\"}", &r);
    assert_int_equal(r.status, 404);
    reply_free(&r);
    api(e, "POST", "/v1/sessions", "{\"attach\": 5}", &r);
    assert_int_equal(r.status, 400);
    reply_free(&r);
    api(e, "POST", "/v1/sessions", "{\"attach\": \"twin\", \"image\": \"x\"}", &r);
    assert_int_equal(r.status, 400);
    reply_free(&r);
    session_delete(e, tid);
    char *gone = strdupf("{\"attach\": \"%s\"}", tid);
    api(e, "POST", "/v1/sessions", gone, &r);
    expect_refused(&r, 404, "deleted", NULL);
    reply_free(&r);
    free(gone);
    json_decref(twin);
    free(failed);
    free(hand);
    free(cname);
    free(eid);
}

/* ---- keep_alive: false sessions go with a clean engine stop; true ones outlive it ---- */

static void test_keep_alive(void **state)
{
    struct engine_proc *e = cur;
    json_t *a = session_new(e, "{\"keep_alive\": false}");
    json_t *b = session_new(e, NULL);
    assert_true(json_is_false(json_object_get(a, "keep_alive")));
    assert_true(json_is_true(json_object_get(b, "keep_alive")));
    struct reply r;
    api(e, "POST", "/v1/sessions", "{\"keep_alive\": \"no\"}", &r);
    assert_int_equal(r.status, 400);
    reply_free(&r);
    stop_clean(e);

    json_t *ins = inspect(jstr(a, "container_id"));
    assert_null(ins);
    ins = inspect(jstr(b, "container_id"));
    assert_non_null(ins);
    assert_true(json_is_true(jpath(ins, "State.Running")));
    json_decref(ins);
    char *dir = strdupf("%s/run/%s", e->state_dir, jstr(a, "id"));
    assert_false(path_exists(dir));
    free(dir);

    assert_int_equal(engine_start(e), 0);
    char *path = strdupf("/v1/sessions/%s", jstr(a, "id"));
    api(e, "GET", path, NULL, &r);
    assert_string_equal(jstr(r.json, "state"), "deleted");
    reply_free(&r);
    free(path);
    json_t *got = session_wait_state(e, jstr(b, "id"), "ready", WAIT_MS);
    assert_non_null(got);
    json_decref(got);
    run_expect(e, jstr(b, "id"), "echo kept", "kept");
    json_decref(a);
    json_decref(b);
}

/* ---- gc: orphans go, live sessions and other engines' containers stay ---- */

static void test_gc(void **state)
{
    struct engine_proc *e = cur;
    char *eid = engine_read_id(e);
    json_t *live = session_new(e, NULL);
    const char *lid = jstr(live, "id");
    const char *orphan_sid = "00000000deadbeef";

    char *body = strdupf("{\"Image\": \"" HARNESS_IMAGE "\", \"Cmd\": [\"sleep\", \"300\"], "
                         "\"Labels\": {\"paddock.test\": \"1\", \"paddock.engine\": \"%s\", "
                         "\"paddock.session\": \"%s\"}}",
                         eid, orphan_sid);
    struct reply r;
    docker_body("POST", "/v1.41/containers/create", body, &r);
    free(body);
    assert_int_equal(r.status, 201);
    char *orphan = strdup(jstr(r.json, "Id"));
    reply_free(&r);
    char *p = strdupf("/v1.41/containers/%s/start", orphan);
    docker_expect("POST", p, NULL, 204);
    free(p);
    /* Another engine's container: never ours to remove. */
    docker_body("POST", "/v1.41/containers/create",
                "{\"Image\": \"" HARNESS_IMAGE "\", \"Cmd\": [\"true\"], \"Labels\": "
                "{\"paddock.test\": \"1\", \"paddock.engine\": \"ffffffffffffffff\", "
                "\"paddock.session\": \"00000000deadbeef\"}}",
                &r);
    assert_int_equal(r.status, 201);
    char *foreign = strdup(jstr(r.json, "Id"));
    reply_free(&r);
    char *vname = strdupf("paddock-test-gc-%ld", (long)getpid());
    test_volume = strdup(vname);
    engine_track(e, orphan_sid); /* teardown removes both containers if an assertion fails */
    body = strdupf("{\"Name\": \"%s\", \"Labels\": {\"paddock.test\": \"1\", "
                   "\"paddock.engine\": \"%s\", \"paddock.session\": \"%s\"}}",
                   vname, eid, orphan_sid);
    docker_expect("POST", "/v1.41/volumes/create", body, 201);
    free(body);
    char *dir = strdupf("%s/run/%s", e->state_dir, orphan_sid);
    assert_int_equal(mkdir(dir, 0700), 0);

    /* --dry-run lists them and removes nothing. */
    char *argv[] = {(char *)harness_bin(), "--state-dir", e->state_dir, "gc",
                    "--dry-run",           "--json",      NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 60000, &pr);
    if (pr.status != 0)
        fail_msg("paddock gc --dry-run --json: status %d, stderr %s", pr.status, pr.err);
    json_t *rep = json_loads(pr.out, 0, NULL);
    assert_non_null(rep);
    assert_true(json_is_true(json_object_get(rep, "dry_run")));
    assert_int_equal(json_array_size(json_object_get(rep, "containers")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(rep, "containers"), 0), "id"), orphan);
    assert_int_equal(json_array_size(json_object_get(rep, "volumes")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(rep, "volumes"), 0), "name"), vname);
    assert_int_equal(json_array_size(json_object_get(rep, "socket_dirs")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(rep, "socket_dirs"), 0)),
                        dir);
    json_decref(rep);
    proc_result_free(&pr);
    json_t *ins = inspect(orphan);
    assert_non_null(ins);
    json_decref(ins);
    assert_true(path_exists(dir));

    char *argv2[] = {(char *)harness_bin(), "--state-dir", e->state_dir, "gc", NULL};
    proc_run(argv2, NULL, 60000, &pr);
    if (pr.status != 0 || !strstr(pr.out, "removed container") || !strstr(pr.out, vname))
        fail_msg("paddock gc: status %d, stdout %s, stderr %s", pr.status, pr.out, pr.err);
    proc_result_free(&pr);
    assert_null(inspect(orphan));
    p = strdupf("/v1.41/volumes/%s", vname);
    docker("GET", p, &r);
    assert_int_equal(r.status, 404);
    reply_free(&r);
    free(p);
    assert_false(path_exists(dir));
    /* What is live stays, and so does what is not ours. */
    ins = inspect(jstr(live, "container_id"));
    assert_non_null(ins);
    assert_true(json_is_true(jpath(ins, "State.Running")));
    json_decref(ins);
    run_expect(e, lid, "echo still", "still");
    ins = inspect(foreign);
    assert_non_null(ins);
    json_decref(ins);
    char *lsdir = strdupf("%s/run/%s", e->state_dir, lid);
    assert_true(path_exists(lsdir));
    free(lsdir);

    api(e, "POST", "/v1/gc", "", &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "containers")), 0);
    assert_int_equal(json_array_size(json_object_get(r.json, "volumes")), 0);
    assert_int_equal(json_array_size(json_object_get(r.json, "socket_dirs")), 0);
    reply_free(&r);
    api(e, "POST", "/v1/gc", "{\"dry_run\": 1}", &r);
    assert_int_equal(r.status, 400);
    reply_free(&r);

    p = strdupf("/v1.41/containers/%s?force=1", foreign);
    docker_expect("DELETE", p, NULL, 204);
    free(p);
    free(foreign);
    free(dir);
    free(vname);
    free(orphan);
    json_decref(live);
    free(eid);
}

/* ---- delete leaves no container, volume or socket dir ---- */

static void test_delete_leaves_nothing(void **state)
{
    struct engine_proc *e = cur;
    char *eid = engine_read_id(e);
    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    /* A volume the engine made for the session carries its labels. */
    char *vname = strdupf("paddock-test-vol-%s", id);
    test_volume = strdup(vname);
    char *body = strdupf("{\"Name\": \"%s\", \"Labels\": {\"paddock.test\": \"1\", "
                         "\"paddock.engine\": \"%s\", \"paddock.session\": \"%s\"}}",
                         vname, eid, id);
    docker_expect("POST", "/v1.41/volumes/create", body, 201);
    free(body);
    session_expect(e, id, "pause", "paused");
    session_delete(e, id); /* a paused session too */

    char *l = strdupf("paddock.session=%s", id);
    const char *labels[] = {l, NULL};
    json_t *list = docker_containers_with_labels(labels);
    assert_int_equal(json_array_size(list), 0);
    json_decref(list);
    free(l);
    char *p = strdupf("/v1.41/volumes/%s", vname);
    struct reply r;
    docker("GET", p, &r);
    assert_int_equal(r.status, 404);
    reply_free(&r);
    free(p);
    char *dir = strdupf("%s/run/%s", e->state_dir, id);
    assert_false(path_exists(dir));
    free(dir);
    free(vname);
    free(eid);
    json_decref(s);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pause_resume_keeps_shell, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_then_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_action_in_flight_dies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removed_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paused_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oom, setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon_gone_reconnects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_reconciles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_and_attach, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_alive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_leaves_nothing, setup, teardown),
    };
    int failed = cmocka_run_group_tests_name("states", tests, NULL, NULL);
    return failed || harness_teardown_failed ? 1 : 0;
}
