/* The Docker daemon restarted under a running engine: sessions become disconnected, nothing
 * hangs meanwhile, and once the daemon is back they are reconciled (stopped, or ready with
 * live-restore) and can be resumed.
 *
 * It takes the daemon away from everyone, so it runs alone (is_parallel: false, its own test
 * entry) and ONLY when the daemon was started by paddock's scripts: the pidfile
 * /var/lib/paddock-host/dockerd.pid names a live dockerd. It is stopped with SIGTERM by that pid
 * and started again with scripts/lib.sh's paddock_ensure_dockerd. Otherwise it is skipped. */
#include "harness.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIDFILE "/var/lib/paddock-host/dockerd.pid"
/* Requests to the engine while the daemon is away must answer within this (they must not wait
 * for the daemon); it only tells a hang from an answer. */
#define NO_HANG_MS 15000

static struct engine_proc *cur;

/* The pid of a dockerd that paddock's scripts started, or 0. */
static pid_t scripts_dockerd(void)
{
    FILE *f = fopen(PIDFILE, "r");
    long pid = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    if (pid <= 1)
        return 0;
    char path[64], comm[64] = "";
    snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    if (!fgets(comm, sizeof(comm), f))
        comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    return strcmp(comm, "dockerd") == 0 ? (pid_t)pid : 0;
}

static bool daemon_answers(void)
{
    struct reply r;
    http_unix(harness_docker_socket(), "GET", "/_ping", NULL, 0, 2000, &r);
    bool ok = r.status == 200;
    reply_free(&r);
    return ok;
}

/* Start the daemon again the way scripts/run does; 0 when it answers. */
static int daemon_start(void)
{
    const char *src = getenv("PADDOCK_SRC");
    char *cmd = strdupf("source '%s/scripts/lib.sh' && paddock_ensure_dockerd", src ? src : ".");
    char *argv[] = {"/bin/bash", "-c", cmd, NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 120000, &pr);
    if (pr.status != 0)
        fprintf(stderr, "paddock_ensure_dockerd: status %d\n%s%s", pr.status, pr.out, pr.err);
    int rc = pr.status == 0 && daemon_answers() ? 0 : -1;
    proc_result_free(&pr);
    free(cmd);
    return rc;
}

static int setup(void **state)
{
    cur = engine_new();
    return engine_start(cur) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    /* Never leave the machine without its daemon, whatever failed. */
    if (!daemon_answers() && daemon_start() < 0)
        fprintf(stderr, "FAIL: the Docker daemon could not be started again\n");
    engine_destroy(cur);
    cur = NULL;
    return 0;
}

/* The session's state, asked with a deadline that tells a hang. */
static char *state_of(struct engine_proc *e, const char *id)
{
    char *path = strdupf("/v1/sessions/%s", id);
    struct reply r;
    http_unix(e->socket, "GET", path, NULL, 0, NO_HANG_MS, &r);
    free(path);
    if (r.status != 200)
        fail_msg("GET session %s during the outage: HTTP %ld %s", id, r.status,
                 r.body ? r.body : r.err);
    char *st = strdup(jstr(r.json, "state"));
    reply_free(&r);
    return st;
}

/* Wait until the session is in one of the states ("a|b|c"); returns it (malloc'd) or NULL. */
static char *wait_states(struct engine_proc *e, const char *id, const char *states, long ms)
{
    double end = now_ms() + ms;
    char *st = NULL;
    while (now_ms() < end) {
        free(st);
        st = state_of(e, id);
        char *want = strdupf("|%s|", states), *me = strdupf("|%s|", st);
        bool hit = strstr(want, me) != NULL;
        free(want);
        free(me);
        if (hit)
            return st;
        sleep_ms(50);
    }
    fprintf(stderr, "session %s is %s, not one of %s, after %ld ms\n", id, st, states, ms);
    free(st);
    return NULL;
}

static void test_daemon_restart(void **state)
{
    struct engine_proc *e = cur;
    pid_t pid = scripts_dockerd();
    assert_true(pid > 0);
    json_t *a = session_new(e, NULL), *b = session_new(e, NULL);
    const char *ida = jstr(a, "id"), *idb = jstr(b, "id");
    json_t *obs = session_run(e, ida, "echo before");
    assert_string_equal(jstr(obs, "content"), "before");
    json_decref(obs);
    char *p = strdupf("/v1/sessions/%s/pause", idb);
    struct reply r;
    api(e, "POST", p, "", &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    free(p);
    struct sse *ev = sse_open(e->socket, "/v1/events");

    fprintf(stderr, "stopping dockerd (pid %ld) with SIGTERM\n", (long)pid);
    assert_int_equal(kill(pid, SIGTERM), 0);
    /* Docker stops the containers before it exits (no live-restore): the engine hears their
     * die events while it still can (stopped), or finds the daemon gone (disconnected). */
    char *st = wait_states(e, ida, "disconnected|stopped", 90000);
    assert_non_null(st);
    fprintf(stderr, "session a: %s\n", st);
    free(st);
    double end = now_ms() + 120000;
    while (kill(pid, 0) == 0 && now_ms() < end)
        sleep_ms(100);
    assert_true(kill(pid, 0) < 0 && errno == ESRCH);
    assert_false(daemon_answers());

    /* The engine knows the daemon is gone... */
    bool unreachable = false;
    for (end = now_ms() + 30000; !unreachable && now_ms() < end; sleep_ms(50)) {
        http_unix(e->socket, "GET", "/v1/info", NULL, 0, NO_HANG_MS, &r);
        assert_int_equal(r.status, 200);
        unreachable = json_is_false(jpath(r.json, "docker.reachable"));
        reply_free(&r);
    }
    assert_true(unreachable);
    /* ...no session of it is ready any more, and nothing waits for the daemon: reads answer,
     * actions and creates are refused at once. */
    const char *ids[] = {ida, idb};
    char *during[2];
    for (int k = 0; k < 2; k++) {
        during[k] = wait_states(e, ids[k], "disconnected|stopped", 30000);
        assert_non_null(during[k]);
        fprintf(stderr, "during the outage session %c is %s\n", 'a' + k, during[k]);
    }
    p = strdupf("/v1/sessions/%s/execute_action", ida);
    http_unix(e->socket, "POST", p,
              "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"true\"}}}", -1, NO_HANG_MS,
              &r);
    free(p);
    long want = strcmp(during[0], "disconnected") == 0 ? 503 : 409;
    if (r.status != want || !strstr(jstr(r.json, "error.message"), during[0]))
        fail_msg("an action while the daemon is away: HTTP %ld %s (want %ld)", r.status,
                 r.body ? r.body : r.err, want);
    reply_free(&r);
    free(during[0]);
    free(during[1]);
    http_unix(e->socket, "POST", "/v1/sessions", "", -1, NO_HANG_MS, &r);
    assert_int_equal(r.status, 503);
    assert_string_equal(jstr(r.json, "error.code"), "docker_unavailable");
    reply_free(&r);
    /* The failed create is in error, not left half-made. */
    api(e, "GET", "/v1/sessions", NULL, &r);
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(r.json, "sessions"), i, row)
    {
        engine_track(e, jstr(row, "id"));
        assert_string_not_equal(jstr(row, "state"), "starting");
        assert_string_not_equal(jstr(row, "state"), "ready");
    }
    reply_free(&r);

    fprintf(stderr, "starting dockerd again\n");
    assert_int_equal(daemon_start(), 0);
    /* Reconnected (backoff ≤ 30 s) and reconciled: without live-restore the daemon stopped
     * the containers (stopped); with it they run on (ready, paused). */
    for (end = now_ms() + 90000, unreachable = true; unreachable && now_ms() < end; sleep_ms(50)) {
        http_unix(e->socket, "GET", "/v1/info", NULL, 0, NO_HANG_MS, &r);
        unreachable = !json_is_true(jpath(r.json, "docker.reachable"));
        reply_free(&r);
    }
    assert_false(unreachable);
    st = wait_states(e, ida, "stopped|ready", 90000);
    assert_non_null(st);
    free(st);
    st = wait_states(e, idb, "stopped|paused", 90000);
    assert_non_null(st);
    free(st);
    /* Each went through disconnected, or straight to stopped from its die event; both are
     * lifecycle events and server-sent events. */
    for (int k = 0; k < 2; k++) {
        json_t *events = session_events(e, ids[k]);
        json_t *d = events_find(events, "disconnected"), *x = events_find(events, "stopped");
        if (!d && !x)
            fail_msg("session %s has neither a disconnected nor a stopped event", ids[k]);
        assert_non_null(
            sse_wait(ev, "session", "id", ids[k], "state", d ? "disconnected" : "stopped", 5000));
        json_decref(events);
    }

    /* Both come back on request. */
    for (int k = 0; k < 2; k++) {
        p = strdupf("/v1/sessions/%s/resume", ids[k]);
        api(e, "POST", p, "", &r);
        free(p);
        if (r.status != 200 || strcmp(jstr(r.json, "state"), "ready") != 0)
            fail_msg("resume %s after the daemon restart: HTTP %ld %s", ids[k], r.status,
                     r.body ? r.body : r.err);
        reply_free(&r);
        obs = session_run(e, ids[k], "echo after");
        assert_string_equal(jstr(obs, "content"), "after");
        json_decref(obs);
    }
    sse_close(ev);
    json_decref(a);
    json_decref(b);
    int code = engine_stop(e);
    assert_int_equal(code, 0);
}

int main(void)
{
    harness_require();
    if (!scripts_dockerd()) {
        fprintf(stderr, "SKIP: the Docker daemon was not started by paddock's scripts (no live "
                        "dockerd in " PIDFILE "); this test only restarts a daemon it may\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_daemon_restart, setup, teardown),
    };
    return cmocka_run_group_tests_name("daemon", tests, NULL, NULL) ? 1 : 0;
}
