/* Integration test of what the operator watches: resource samples (GET .../stats and "stats"
 * events) and container logs (tail, follow, the tail kept after the container is gone). */
#include "harness.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static json_t *get_json(const char *path, long want_status)
{
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    if (r.status != want_status)
        fail_msg("GET %s: %ld (want %ld): %s %s", path, r.status, want_status, r.body ? r.body : "",
                 r.err);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    return j;
}

/* The CPU % a spinning process shows at the least, even on a loaded machine. */
#define BUSY_CPU 5.0

/* A sample where the busy loop shows, waiting for it up to ms. */
static json_t *wait_sample(const char *id, double min_cpu, double min_mem, long ms)
{
    char *path = strdupf("/v1/sessions/%s/stats", id);
    double deadline = now_ms() + ms;
    json_t *found = NULL;
    while (!found && now_ms() < deadline) {
        json_t *j = get_json(path, 200);
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(j, "samples"), i, v)
        {
            double cpu = json_number_value(json_object_get(v, "cpu"));
            double mem = json_number_value(json_object_get(v, "mem"));
            if (cpu >= min_cpu && mem >= min_mem) {
                found = json_incref(v);
                break;
            }
        }
        json_decref(j);
        if (!found)
            sleep_ms(300);
    }
    free(path);
    return found;
}

static void test_stats_follow_the_sandbox(void **state)
{
    struct sse *ev = sse_open(harness_eng->socket, "/v1/events");
    json_t *sess = session_new(harness_eng, NULL);
    const char *id = jstr(sess, "id");

    /* Samples start with the session and come as events too. */
    json_t *e = sse_wait(ev, "stats", "session", id, NULL, NULL, 15000);
    assert_non_null(e);
    assert_true(json_integer_value(json_object_get(e, "mem")) > 0);
    assert_int_equal(json_integer_value(json_object_get(e, "mem_limit")), 2147483648LL);
    assert_true(json_integer_value(json_object_get(e, "pids")) >= 1);

    /* A process that holds 160 MiB and spins one CPU shows in the samples. It spins until the
     * test has seen it (not for a fixed time), and the CPU bar is what a spinning process gets
     * on a machine shared with a dozen others: an idle sandbox stays near 0 %. */
    json_t *obs = session_run(harness_eng, id,
                              "python3 -c 'import os,time\nx=b\"a\"*(160<<20)\nt=time.time()\n"
                              "while time.time()-t<300 and not os.path.exists(\"/tmp/burn.stop\"):"
                              " pass' >/dev/null 2>&1 &");
    json_decref(obs);
    json_t *busy = wait_sample(id, BUSY_CPU, 150 * MIB, 120000);
    if (!busy) {
        json_t *all = get_json(strdupf("/v1/sessions/%s/stats", id), 200);
        char *d = json_dumps(all, JSON_COMPACT);
        fail_msg("no sample with cpu >= %.0f and mem >= 150 MiB: %s", BUSY_CPU, d);
    }
    assert_true(json_integer_value(json_object_get(busy, "pids")) >= 2);
    json_decref(busy);
    json_decref(session_run(harness_eng, id, "touch /tmp/burn.stop"));

    /* since/limit narrow the list; bad values are refused. */
    char *p = strdupf("/v1/sessions/%s/stats?limit=1", id);
    json_t *one = get_json(p, 200);
    assert_int_equal(json_array_size(json_object_get(one, "samples")), 1);
    json_decref(one);
    free(p);
    p = strdupf("/v1/sessions/%s/stats?limit=0", id);
    json_decref(get_json(p, 400));
    free(p);
    json_decref(get_json("/v1/sessions/nosuchsession/stats", 404));

    /* After the session is gone its samples stay readable... */
    session_delete(harness_eng, id);
    p = strdupf("/v1/sessions/%s/stats", id);
    json_t *kept = get_json(p, 200);
    /* ...all of them, the busy one included. */
    size_t i;
    json_t *v;
    bool busy_kept = false;
    json_array_foreach(json_object_get(kept, "samples"), i, v) busy_kept |=
        json_number_value(json_object_get(v, "cpu")) >= BUSY_CPU;
    if (!busy_kept || json_array_size(json_object_get(kept, "samples")) < 2)
        fail_msg("samples after delete: %s", json_dumps(kept, JSON_COMPACT));
    json_decref(kept);
    free(p);
    sse_close(ev);
    json_decref(sess);
}

/* How many times needle occurs in the "log" events so far. */
static int count_logs(struct sse *s, const char *needle)
{
    int n = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(s->events, i, ev)
    {
        const char *text = jstr(json_object_get(ev, "data"), "text");
        for (const char *p = text;
             strcmp(jstr(ev, "type"), "log") == 0 && p && (p = strstr(p, needle)); p++)
            n++;
    }
    return n;
}

/* Wait up to ms until needle occurred at least want times; the last such event or NULL. */
static json_t *wait_log(struct sse *s, const char *needle, int want, long ms)
{
    double deadline = now_ms() + ms;
    while (count_logs(s, needle) < want) {
        if (now_ms() > deadline || s->eof)
            return NULL;
        sse_pump(s, 200);
    }
    for (size_t i = json_array_size(s->events); i-- > 0;) {
        json_t *ev = json_array_get(s->events, i);
        const char *text = jstr(json_object_get(ev, "data"), "text");
        if (strcmp(jstr(ev, "type"), "log") == 0 && text && strstr(text, needle))
            return json_object_get(ev, "data");
    }
    return NULL;
}

static void test_logs_tail_follow_and_kept(void **state)
{
    json_t *sess = session_new(harness_eng, NULL);
    const char *id = jstr(sess, "id");
    /* tail=100: a line written before the engine reached Docker's stream still shows. */
    char *follow = strdupf("/v1/sessions/%s/logs?follow=1&tail=100", id);
    struct sse *s = sse_open(harness_eng->socket, follow);

    /* Each action is one line of the executor's on stdout (kind, summary, exit code,
     * duration), not an access log on stderr. */
    const char *line_text = "paddock-executor: run \"echo logged";
    json_decref(session_run(harness_eng, id, "echo logged"));
    json_t *line = wait_log(s, line_text, 1, 15000);
    assert_non_null(line);
    assert_int_equal(json_integer_value(json_object_get(line, "fd")), 1);
    assert_non_null(strstr(jstr(line, "text"), "paddock-executor: run \"echo logged\" exit 0, "));
    /* The stream is attached now: a second action's line arrives live. */
    json_decref(session_run(harness_eng, id, "echo logged again; exit 3"));
    line = wait_log(s, line_text, 2, 15000);
    assert_non_null(line);
    assert_non_null(strstr(jstr(line, "text"), "\"echo logged again; exit 3\" exit 3, "));

    char *tail = strdupf("/v1/sessions/%s/logs?tail=50", id);
    json_t *t = get_json(tail, 200);
    assert_string_equal(jstr(t, "source"), "container");
    assert_non_null(strstr(jstr(t, "text"), "run \"echo logged\" exit 0"));
    assert_null(strstr(jstr(t, "text"), "POST /execute_action"));
    json_decref(t);
    char *bad = strdupf("/v1/sessions/%s/logs?tail=-1", id);
    json_decref(get_json(bad, 400));
    free(bad);

    /* Deleting the session ends the follow stream and keeps the tail in the store. */
    session_delete(harness_eng, id);
    double t0 = now_ms();
    json_t *end = NULL;
    while (!end && now_ms() - t0 < 10000) {
        size_t i;
        json_t *ev;
        json_array_foreach(s->events, i, ev) if (strcmp(jstr(ev, "type"), "end") == 0) end = ev;
        if (!end && !s->eof)
            sse_pump(s, 200);
        else if (!end)
            break;
    }
    assert_non_null(end);
    t = get_json(tail, 200);
    assert_string_equal(jstr(t, "source"), "stored");
    assert_non_null(strstr(jstr(t, "text"), "run \"echo logged\" exit 0"));
    assert_true(json_integer_value(json_object_get(t, "size")) > 0);
    json_decref(t);
    struct reply r;
    api(harness_eng, "GET", follow, NULL, &r);
    assert_int_equal(r.status, 409);
    reply_free(&r);
    json_decref(get_json("/v1/sessions/nosuchsession/logs", 404));

    sse_close(s);
    free(tail);
    free(follow);
    json_decref(sess);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_follow_the_sandbox),
        cmocka_unit_test(test_logs_tail_follow_and_kept),
    };
    int failed = cmocka_run_group_tests_name("observe", tests, harness_group_setup,
                                             harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
