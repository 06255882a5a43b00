/* The Docker client (engine/docker*.c) against the real daemon, driven on its own loop: every
 * container call, the logs/stats/events streams, exec with a TTY through the HTTP upgrade; and
 * the same over DOCKER_HOST=tcp:// with TLS through a TLS proxy on 127.0.0.1, also for
 * `paddock serve` (ping, a session running `echo hi`, a wrong CA, an unreachable host).
 * Containers carry paddock.test=1 and a label of this run, and are removed by it. */
#include "common/buf.h"
#include "engine/base/loop.h"
#include "engine/docker/docker.h"
#include "engine/docker/http.h"
#include "harness.h"
#include "tls_proxy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A deadline against hangs only: no assertion is about speed. */
#define WAIT_LIMIT_MS 60000

static struct loop *L;
static struct http *H;
static struct docker *D; /* the local socket */
static struct tls_proxy proxy;
static char run_label[64]; /* paddock.test.run=<pid-time>: what this run made */

/* ---------------------------------------------------------------- driving the loop */

static bool timed_out;

static void on_deadline(void *ud)
{
    timed_out = true;
    loop_stop(L);
}

/* Run the loop until *flag (set by a callback that also calls loop_stop). */
static void run_until(const bool *flag)
{
    timed_out = false;
    struct loop_timer *t = loop_timer_add(L, WAIT_LIMIT_MS, on_deadline, NULL);
    while (!*flag && !timed_out)
        assert_int_equal(loop_run(L), 0);
    if (!timed_out)
        loop_timer_cancel(L, t);
    if (timed_out)
        fprintf(stderr, "gave up waiting after %d ms\n", WAIT_LIMIT_MS);
    assert_false(timed_out);
}

struct rep {
    bool done;
    long status;
    json_t *json;
    char *message;
};

static void on_rep(const struct docker_reply *r, void *ud)
{
    struct rep *w = ud;
    w->status = r->status;
    w->json = json_incref(r->json);
    w->message = strdup(r->message ? r->message : "");
    w->done = true;
    loop_stop(L);
}

static void rep_wait(struct rep *w)
{
    run_until(&w->done);
}

static void rep_free(struct rep *w)
{
    json_decref(w->json);
    free(w->message);
    memset(w, 0, sizeof(*w));
}

/* Expect a status; print Docker's message when it differs. */
static void rep_expect(struct rep *w, long status)
{
    rep_wait(w);
    if (w->status != status)
        fprintf(stderr, "Docker answered %ld (want %ld): %s\n", w->status, status, w->message);
    assert_int_equal(w->status, status);
}

/* ---------------------------------------------------------------- containers */

static char *container_make(struct docker *d, const char *cmd, bool tty, const char *extra_label)
{
    json_t *labels = json_pack("{s:s}", "paddock.test", "1");
    char *eq = strchr(run_label, '=');
    json_object_set_new(labels, "paddock.test.run", json_string(eq + 1));
    if (extra_label) {
        char *k = strdup(extra_label), *v = strchr(k, '=');
        *v++ = '\0';
        json_object_set_new(labels, k, json_string(v));
        free(k);
    }
    json_t *body = json_pack("{s:s,s:[s,s,s],s:b,s:b,s:o,s:{s:b,s:s}}", "Image", HARNESS_IMAGE,
                             "Cmd", "sh", "-c", cmd, "Tty", tty, "OpenStdin", false, "Labels",
                             labels, "HostConfig", "Init", true, "NetworkMode", "none");
    struct rep r = {0};
    assert_int_equal(docker_container_create(d, "", NULL, body, on_rep, &r), 0);
    json_decref(body);
    rep_expect(&r, 201);
    char *id = strdup(json_string_value(json_object_get(r.json, "Id")));
    rep_free(&r);
    return id;
}

static void container_start(struct docker *d, const char *id)
{
    struct rep r = {0};
    assert_int_equal(docker_container_start(d, id, on_rep, &r), 0);
    rep_expect(&r, 204);
    rep_free(&r);
}

static char *container_run(struct docker *d, const char *cmd, bool tty)
{
    char *id = container_make(d, cmd, tty, NULL);
    container_start(d, id);
    return id;
}

static void container_remove(struct docker *d, const char *id)
{
    struct rep r = {0};
    assert_int_equal(docker_container_remove(d, id, on_rep, &r), 0);
    rep_expect(&r, 204);
    rep_free(&r);
}

static json_t *container_inspect(const char *id)
{
    struct rep r = {0};
    assert_int_equal(docker_container_inspect(D, id, on_rep, &r), 0);
    rep_expect(&r, 200);
    json_t *j = json_incref(r.json);
    rep_free(&r);
    return j;
}

static bool listed(json_t *list, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "Id")), id) == 0)
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- version */

static void test_negotiated_version(void **state)
{
    struct rep r = {0};
    assert_int_equal(docker_version(D, on_rep, &r), 0);
    rep_expect(&r, 200);
    /* The newest version both speak: the daemon's, capped at what we know (1.51). */
    const char *daemon = json_string_value(json_object_get(r.json, "ApiVersion"));
    assert_non_null(daemon);
    unsigned maj, min;
    assert_int_equal(sscanf(daemon, "%u.%u", &maj, &min), 2);
    char want[16];
    if (maj * 1000 + min > 1051)
        snprintf(want, sizeof(want), "1.51");
    else
        snprintf(want, sizeof(want), "%s", daemon);
    assert_non_null(docker_api_version(D));
    assert_string_equal(docker_api_version(D), want);
    rep_free(&r);

    assert_int_equal(docker_ping(D, on_rep, &r), 0);
    rep_expect(&r, 200);
    rep_free(&r);
}

/* A client made before anything was negotiated holds its first calls until the version is
 * known; several at once all get through. */
static void test_calls_wait_for_negotiation(void **state)
{
    struct docker *d = docker_new(H, NULL);
    assert_null(docker_api_version(d));
    struct rep r[3] = {{0}};
    assert_int_equal(docker_ping(d, on_rep, &r[0]), 0);
    assert_int_equal(docker_container_list(d, run_label, on_rep, &r[1]), 0);
    assert_int_equal(docker_container_inspect(d, "paddock-no-such-container", on_rep, &r[2]), 0);
    for (int i = 0; i < 3; i++)
        rep_wait(&r[i]);
    assert_int_equal(r[0].status, 200);
    assert_int_equal(r[1].status, 200);
    assert_true(json_is_array(r[1].json));
    assert_int_equal(r[2].status, 404);
    assert_non_null(strstr(r[2].message, "paddock-no-such-container"));
    assert_non_null(docker_api_version(d));
    for (int i = 0; i < 3; i++)
        rep_free(&r[i]);
    docker_free(d);
}

/* ---------------------------------------------------------------- container calls */

static void test_container_calls(void **state)
{
    char *id = container_make(D, "echo out; echo err >&2; sleep 100", false, NULL);
    json_t *j = container_inspect(id);
    assert_string_equal(jstr(j, "State.Status"), "created");
    json_decref(j);

    container_start(D, id);
    j = container_inspect(id);
    assert_true(json_is_true(jpath(j, "State.Running")));
    assert_string_equal(
        json_string_value(json_object_get(jpath(j, "Config.Labels"), "paddock.test")), "1");
    json_decref(j);

    struct rep r = {0};
    assert_int_equal(docker_container_list(D, run_label, on_rep, &r), 0);
    rep_expect(&r, 200);
    assert_true(listed(r.json, id));
    rep_free(&r);

    /* pause / unpause: the cgroup is frozen and thawed */
    assert_int_equal(docker_container_pause(D, id, on_rep, &r), 0);
    rep_expect(&r, 204);
    rep_free(&r);
    j = container_inspect(id);
    assert_true(json_is_true(jpath(j, "State.Paused")));
    json_decref(j);
    assert_int_equal(docker_container_unpause(D, id, on_rep, &r), 0);
    rep_expect(&r, 204);
    rep_free(&r);
    j = container_inspect(id);
    assert_true(json_is_false(jpath(j, "State.Paused")));
    assert_true(json_is_true(jpath(j, "State.Running")));
    json_decref(j);

    /* stop; a second stop is a 304 */
    assert_int_equal(docker_container_stop(D, id, 1, on_rep, &r), 0);
    rep_expect(&r, 204);
    rep_free(&r);
    j = container_inspect(id);
    assert_true(json_is_false(jpath(j, "State.Running")));
    json_decref(j);
    assert_int_equal(docker_container_stop(D, id, 1, on_rep, &r), 0);
    rep_expect(&r, 304);
    rep_free(&r);

    /* wait, asked before the kill, answers with the kill's status */
    container_start(D, id);
    struct rep waited = {0}, killed = {0};
    assert_int_equal(docker_container_wait(D, id, on_rep, &waited), 0);
    assert_int_equal(docker_container_kill(D, id, "SIGKILL", on_rep, &killed), 0);
    rep_expect(&killed, 204);
    rep_expect(&waited, 200);
    assert_int_equal(json_integer_value(json_object_get(waited.json, "StatusCode")), 137);
    rep_free(&waited);
    rep_free(&killed);

    /* logs tail: demultiplexed text */
    assert_int_equal(docker_container_logs_tail(D, id, 10, on_rep, &r), 0);
    rep_expect(&r, 200);
    assert_non_null(strstr(r.message, "out\n"));
    assert_non_null(strstr(r.message, "err\n"));
    rep_free(&r);

    container_remove(D, id);
    assert_int_equal(docker_container_inspect(D, id, on_rep, &r), 0);
    rep_expect(&r, 404);
    rep_free(&r);
    assert_int_equal(docker_container_list(D, run_label, on_rep, &r), 0);
    rep_expect(&r, 200);
    assert_false(listed(r.json, id));
    rep_free(&r);
    free(id);
}

/* ---------------------------------------------------------------- streams */

struct collect {
    struct buf fd[3];
    int items;
    int objects;           /* stats: samples with cpu_stats and memory_stats */
    const char *until;     /* stop once fd 2 ends with this... */
    const char *until_out; /* ...and fd 1 holds this */
    int until_objects;
    bool done;
    bool ended;
    long end_status;
};

static void collect_free(struct collect *c)
{
    for (int i = 0; i < 3; i++)
        buf_free(&c->fd[i]);
}

static int on_log_item(const struct docker_item *it, void *ud)
{
    struct collect *c = ud;
    assert_null(it->json);
    assert_true(it->fd == 1 || it->fd == 2);
    assert_int_equal(buf_append(&c->fd[it->fd], it->data, it->len), 0);
    c->items++;
    bool have_err = c->fd[2].data && strstr(c->fd[2].data, c->until);
    bool have_out = c->fd[1].data && strstr(c->fd[1].data, c->until_out);
    if (have_err && have_out) {
        c->done = true;
        loop_stop(L);
        return -1; /* close the stream */
    }
    return 0;
}

static void on_stream_end(const struct docker_reply *r, void *ud)
{
    struct collect *c = ud;
    c->ended = true;
    c->end_status = r->status;
    if (!c->done)
        fprintf(stderr, "stream ended early: %ld %s\n", r->status, r->message);
    c->done = true;
    loop_stop(L);
}

static void test_logs_follow_demux(void **state)
{
    /* 100,000 bytes on stdout make frames and chunks that split anywhere. */
    char *id = container_run(D,
                             "head -c 100000 /dev/zero | tr '\\000' a; echo; echo out; "
                             "echo err >&2; sleep 100",
                             false);
    struct collect c = {.until = "err\n", .until_out = "out\n"};
    struct docker_stream *s = docker_logs_follow(D, id, -1, 0, 0, on_log_item, on_stream_end, &c);
    assert_non_null(s);
    run_until(&c.done);
    assert_true(c.fd[1].len == 100000 + 1 + 4);
    for (size_t i = 0; i < 100000; i++)
        if (c.fd[1].data[i] != 'a')
            fail_msg("stdout byte %zu is 0x%02x, not 'a'", i, (unsigned char)c.fd[1].data[i]);
    assert_memory_equal(c.fd[1].data + 100000, "\nout\n", 5);
    assert_string_equal(c.fd[2].data, "err\n"); /* stderr kept apart, nothing else in it */
    assert_true(c.items >= 3);
    assert_true(c.ended); /* closing from on_item ends it with the callback */
    assert_int_equal(c.end_status, -1);
    collect_free(&c);
    container_remove(D, id);
    free(id);
}

static void test_logs_follow_tty_raw(void **state)
{
    char *id = container_run(D, "echo tty-out; echo tty-err >&2; sleep 100", true);
    struct collect c = {.until = "", .until_out = "tty-err"};
    /* A TTY merges both into one raw stream on fd 1: no framing to decode. */
    struct docker_stream *s = docker_logs_follow(D, id, -1, 0, 1, on_log_item, NULL, &c);
    assert_non_null(s);
    assert_int_equal(buf_append(&c.fd[2], "", 0), 0); /* nothing is expected on fd 2 */
    run_until(&c.done);
    assert_int_equal(strncmp(c.fd[1].data, "tty-out\r\n", 9), 0); /* the PTY's CR LF, no header */
    assert_non_null(strstr(c.fd[1].data, "tty-err\r\n"));
    assert_string_equal(c.fd[2].data, "");
    collect_free(&c);
    container_remove(D, id);
    free(id);
}

static int on_stats(const struct docker_item *it, void *ud)
{
    struct collect *c = ud;
    assert_non_null(it->json);
    if (json_is_object(json_object_get(it->json, "cpu_stats")) &&
        json_is_object(json_object_get(it->json, "memory_stats")) &&
        json_is_integer(jpath(it->json, "cpu_stats.cpu_usage.total_usage")))
        c->objects++;
    if (c->objects >= c->until_objects) {
        c->done = true;
        loop_stop(L);
        return -1;
    }
    return 0;
}

static void test_stats_stream(void **state)
{
    char *id = container_run(D, "sleep 100", false);
    struct collect c = {.until_objects = 2};
    struct docker_stream *s = docker_stats_follow(D, id, on_stats, NULL, &c);
    assert_non_null(s);
    run_until(&c.done);
    assert_true(c.objects >= 2);
    collect_free(&c);
    container_remove(D, id);
    free(id);
}

/* A stream closed by its owner calls nothing afterwards. */
static void test_stream_close(void **state)
{
    char *id = container_run(D, "sleep 100", false);
    struct collect c = {.until_objects = 1000};
    struct docker_stream *s = docker_stats_follow(D, id, on_stats, on_stream_end, &c);
    assert_non_null(s);
    docker_stream_close(D, s);
    container_remove(D, id); /* the stream would end here had it not been closed */
    assert_false(c.ended);
    collect_free(&c);
    free(id);
}

struct events {
    json_t *seen; /* [[id, action]...] */
    const char *watch_id;
    bool done;
};

static int on_event(const struct docker_item *it, void *ud)
{
    struct events *e = ud;
    const char *id = jstr(it->json, "Actor.ID");
    const char *action = jstr(it->json, "Action");
    if (!id || !action)
        return 0;
    json_array_append_new(e->seen, json_pack("[s,s]", id, action));
    if (e->watch_id && strcmp(id, e->watch_id) == 0 && strcmp(action, "destroy") == 0) {
        e->done = true;
        loop_stop(L);
        return -1;
    }
    return 0;
}

static bool seen(struct events *e, const char *id, const char *action)
{
    size_t i;
    json_t *p;
    json_array_foreach(e->seen, i, p)
    {
        const char *pid = json_string_value(json_array_get(p, 0));
        const char *pact = json_string_value(json_array_get(p, 1));
        if (strcmp(pid, id) == 0 && (!action || strcmp(pact, action) == 0))
            return true;
    }
    return false;
}

static void test_events_by_label(void **state)
{
    char label[96];
    snprintf(label, sizeof(label), "paddock.test.events=%d", (int)getpid());
    struct events e = {.seen = json_array()};
    /* Replaying from a second ago: nothing is missed however late the daemon subscribes. */
    struct docker_stream *s =
        docker_events_follow_since(D, label, (double)time(NULL) - 1, on_event, NULL, &e);
    assert_non_null(s);
    struct rep r = {0};

    /* Another container (no label) lives and dies first; events come in order, so by our
     * container's destroy any of its events would have come. */
    char *other = container_run(D, "sleep 100", false);
    container_remove(D, other);
    char *id = container_make(D, "sleep 100", false, label);
    e.watch_id = id;
    container_start(D, id);
    assert_int_equal(docker_container_kill(D, id, NULL, on_rep, &r), 0);
    rep_expect(&r, 204);
    rep_free(&r);
    container_remove(D, id);
    run_until(&e.done);
    assert_true(seen(&e, id, "start"));
    assert_true(seen(&e, id, "die"));
    assert_true(seen(&e, id, "destroy"));
    assert_false(seen(&e, other, NULL));
    json_decref(e.seen);
    free(id);
    free(other);
}

/* ---------------------------------------------------------------- exec */

struct term {
    struct docker_exec *x;
    struct buf out[3];
    const char *want; /* stop the loop once out[1] (or out[2]) holds this */
    bool got_want;
    bool exited;
    int code;
    char *error;
    bool drained;
};

static int on_term_output(const char *p, size_t n, int fd, void *ud)
{
    struct term *t = ud;
    assert_true(fd == 1 || fd == 2);
    assert_int_equal(buf_append(&t->out[fd], p, n), 0);
    if (t->want && ((t->out[1].data && strstr(t->out[1].data, t->want)) ||
                    (t->out[2].data && strstr(t->out[2].data, t->want)))) {
        t->got_want = true;
        loop_stop(L);
    }
    return 0;
}

static void on_term_exit(int code, const char *error, void *ud)
{
    struct term *t = ud;
    t->exited = true;
    t->code = code;
    t->error = error ? strdup(error) : NULL;
    t->x = NULL;
    loop_stop(L);
}

static void term_expect(struct term *t, const char *want)
{
    t->want = want;
    t->got_want = false;
    if ((t->out[1].data && strstr(t->out[1].data, want)) ||
        (t->out[2].data && strstr(t->out[2].data, want)))
        return;
    bool either = false;
    timed_out = false;
    struct loop_timer *tm = loop_timer_add(L, WAIT_LIMIT_MS, on_deadline, NULL);
    while (!t->got_want && !t->exited && !timed_out)
        assert_int_equal(loop_run(L), 0);
    if (!timed_out)
        loop_timer_cancel(L, tm);
    either = t->got_want;
    if (!either)
        fprintf(stderr, "waiting for \"%s\"; the terminal shows: %s%s%s\n", want,
                t->out[1].data ? t->out[1].data : "", t->exited ? " (exited: " : "",
                t->exited ? (t->error ? t->error : "no error") : "");
    assert_true(either);
}

static void term_send(struct term *t, const char *s)
{
    assert_int_equal(docker_exec_write(t->x, s, strlen(s)), (long)strlen(s));
}

static void term_wait_exit(struct term *t)
{
    run_until(&t->exited);
}

static void term_free(struct term *t)
{
    for (int i = 0; i < 3; i++)
        buf_free(&t->out[i]);
    free(t->error);
}

/* The dashboard's terminal: sh on a PTY, resized, typed into, and its exit code. */
static void exec_tty_session(struct docker *d, const char *cid)
{
    const char *cmd[] = {"sh", NULL};
    struct docker_exec_opts o = {.cmd = cmd, .tty = 1, .rows = 24, .cols = 80};
    struct term t = {0};
    t.x = docker_exec_open(d, cid, &o, on_term_output, on_term_exit, &t);
    assert_non_null(t.x);
    /* The first size came with the start (a resize right after it on API 1.41). */
    term_send(&t, "stty size\n");
    term_expect(&t, "24 80");
    assert_true(strlen(docker_exec_id(t.x)) >= 12);

    struct rep r = {0};
    assert_int_equal(docker_exec_resize(t.x, 40, 100, on_rep, &r), 0);
    rep_wait(&r);
    assert_true(r.status == 200 || r.status == 201);
    rep_free(&r);
    term_send(&t, "stty size\n");
    term_expect(&t, "40 100");

    /* Input comes back: the PTY echoes what was typed, then the shell's answer. */
    term_send(&t, "echo pad$((40+2))dock\n");
    term_expect(&t, "pad42dock\r\n");
    assert_non_null(strstr(t.out[1].data, "echo pad$((40+2))dock"));
    assert_null(t.out[2].data); /* a TTY has one stream */

    term_send(&t, "exit 3\n");
    term_wait_exit(&t);
    if (t.error)
        fprintf(stderr, "exec error: %s\n", t.error);
    assert_null(t.error);
    assert_int_equal(t.code, 3);
    term_free(&t);
}

static void test_exec_tty(void **state)
{
    char *id = container_run(D, "sleep 100", false);
    exec_tty_session(D, id);
    container_remove(D, id);
    free(id);
}

/* Without a TTY: stdout and stderr apart, Env, WorkingDir and User applied. */
static void test_exec_plain(void **state)
{
    char *id = container_run(D, "sleep 100", false);
    const char *cmd[] = {"sh", "-c", "echo \"$FOO\"; pwd; id -u; echo e >&2; exit 5", NULL};
    const char *env[] = {"FOO=bar baz", NULL};
    struct docker_exec_opts o = {
        .cmd = cmd, .env = env, .working_dir = "/tmp", .user = "65534", .no_stdin = 1};
    struct term t = {0};
    t.x = docker_exec_open(D, id, &o, on_term_output, on_term_exit, &t);
    assert_non_null(t.x);
    assert_int_equal(docker_exec_write(t.x, "x", 1), -1); /* no stdin attached */
    term_wait_exit(&t);
    assert_null(t.error);
    assert_int_equal(t.code, 5);
    assert_string_equal(t.out[1].data, "bar baz\n/tmp\n65534\n");
    assert_string_equal(t.out[2].data, "e\n");
    term_free(&t);
    container_remove(D, id);
    free(id);
}

static void on_drain(void *ud)
{
    struct term *t = ud;
    t->drained = true;
    loop_stop(L);
}

/* More input than the queue holds: back-pressure (short writes, on_drain), then the end of
 * input (a half-close) lets `wc -c` answer. */
static void test_exec_input_backpressure(void **state)
{
    char *id = container_run(D, "sleep 100", false);
    const char *cmd[] = {"wc", "-c", NULL};
    struct term t = {0};
    struct docker_exec_opts o = {.cmd = cmd, .on_drain = on_drain};
    t.x = docker_exec_open(D, id, &o, on_term_output, on_term_exit, &t);
    assert_non_null(t.x);
    size_t total = 3 * DOCKER_EXEC_MAX_QUEUE + 12345, sent = 0;
    char *chunk = malloc(65536);
    memset(chunk, 'z', 65536);
    int short_writes = 0;
    while (sent < total) {
        size_t n = total - sent < 65536 ? total - sent : 65536;
        long took = docker_exec_write(t.x, chunk, n);
        assert_true(took >= 0);
        sent += (size_t)took;
        if ((size_t)took < n) {
            short_writes++;
            assert_true(docker_exec_queued(t.x) >= DOCKER_EXEC_MAX_QUEUE);
            t.drained = false;
            run_until(&t.drained);
            assert_int_equal(docker_exec_queued(t.x), 0);
        }
    }
    free(chunk);
    assert_true(short_writes >= 1);
    assert_int_equal(docker_exec_close_input(t.x), 0);
    term_wait_exit(&t);
    assert_null(t.error);
    assert_int_equal(t.code, 0);
    char want[32];
    snprintf(want, sizeof(want), "%zu\n", total);
    assert_string_equal(t.out[1].data, want);
    term_free(&t);
    container_remove(D, id);
    free(id);
}

static void test_exec_errors(void **state)
{
    const char *cmd[] = {"sh", NULL};
    struct docker_exec_opts o = {.cmd = cmd, .tty = 1};
    struct term t = {0};
    t.x = docker_exec_open(D, "paddock-no-such-container", &o, on_term_output, on_term_exit, &t);
    assert_non_null(t.x);
    term_wait_exit(&t);
    assert_int_equal(t.code, -1);
    assert_non_null(t.error);
    assert_non_null(strstr(t.error, "paddock-no-such-container"));
    term_free(&t);

    /* A command that does not exist: Docker starts the stream, then says so in it; the
     * exit code tells (126/127). */
    char *id = container_run(D, "sleep 100", false);
    const char *bad[] = {"/no/such/binary", NULL};
    struct docker_exec_opts ob = {.cmd = bad, .no_stdin = 1};
    struct term t2 = {0};
    t2.x = docker_exec_open(D, id, &ob, on_term_output, on_term_exit, &t2);
    assert_non_null(t2.x);
    term_wait_exit(&t2);
    if (t2.error)
        fprintf(stderr, "exec error: %s\n", t2.error);
    assert_null(t2.error);
    assert_true(t2.code == 126 || t2.code == 127);
    term_free(&t2);

    /* Closed by its owner: no callback afterwards. */
    struct term t3 = {0};
    t3.x = docker_exec_open(D, id, &o, on_term_output, on_term_exit, &t3);
    assert_non_null(t3.x);
    term_send(&t3, "echo up$((1+1))\n");
    term_expect(&t3, "up2\r\n"); /* the stream is up */
    docker_exec_close(t3.x);
    struct rep r = {0};
    assert_int_equal(docker_ping(D, on_rep, &r), 0);
    rep_expect(&r, 200);
    rep_free(&r);
    assert_false(t3.exited);
    term_free(&t3);

    container_remove(D, id);
    free(id);
}

/* ---------------------------------------------------------------- TLS (client) */

static struct docker *tls_client(const char *cert_path)
{
    setenv("DOCKER_TLS_VERIFY", "1", 1);
    setenv("DOCKER_CERT_PATH", cert_path, 1);
    struct docker *d = docker_new(H, proxy.host);
    unsetenv("DOCKER_TLS_VERIFY");
    unsetenv("DOCKER_CERT_PATH");
    assert_non_null(d);
    return d;
}

static void test_tls_calls_and_exec(void **state)
{
    struct docker *d = tls_client(proxy.certs);
    assert_string_equal(docker_socket(d), proxy.host);
    struct rep r = {0};
    assert_int_equal(docker_ping(d, on_rep, &r), 0);
    rep_expect(&r, 200);
    rep_free(&r);
    assert_non_null(docker_api_version(d));

    char *id = container_run(d, "sleep 100", false);
    exec_tty_session(d, id);
    /* no half-close over TLS */
    const char *cmd[] = {"cat", NULL};
    struct docker_exec_opts o = {.cmd = cmd};
    struct term t = {0};
    t.x = docker_exec_open(d, id, &o, on_term_output, on_term_exit, &t);
    assert_non_null(t.x);
    assert_int_equal(docker_exec_close_input(t.x), -1);
    term_send(&t, "over tls\n");
    term_expect(&t, "over tls\n");
    docker_exec_close(t.x);
    term_free(&t);
    container_remove(d, id);
    free(id);
    docker_free(d);
}

static void test_tls_wrong_ca(void **state)
{
    struct docker *d = tls_client(proxy.wrong_ca);
    struct rep r = {0};
    assert_int_equal(docker_ping(d, on_rep, &r), 0);
    rep_wait(&r);
    assert_int_equal(r.status, -1);
    fprintf(stderr, "wrong CA: %s\n", r.message);
    assert_non_null(strstr(r.message, "TLS"));
    assert_non_null(strstr(r.message, "certificate"));
    assert_non_null(strstr(r.message, proxy.wrong_ca));
    rep_free(&r);

    const char *cmd[] = {"sh", NULL};
    struct docker_exec_opts o = {.cmd = cmd, .tty = 1};
    struct term t = {0};
    t.x = docker_exec_open(d, "whatever", &o, on_term_output, on_term_exit, &t);
    assert_non_null(t.x);
    term_wait_exit(&t);
    assert_int_equal(t.code, -1);
    assert_non_null(strstr(t.error, "TLS"));
    term_free(&t);
    docker_free(d);
}

static void test_bad_docker_host(void **state)
{
    struct docker *d = docker_new(H, "ssh://somewhere");
    struct rep r = {0};
    assert_int_equal(docker_ping(d, on_rep, &r), 0);
    rep_wait(&r);
    assert_int_equal(r.status, -1);
    assert_non_null(strstr(r.message, "ssh://somewhere"));
    assert_non_null(strstr(r.message, "tcp://"));
    rep_free(&r);
    docker_free(d);

    /* TLS asked for, no CA: said at the first call */
    setenv("DOCKER_TLS_VERIFY", "1", 1);
    setenv("DOCKER_CERT_PATH", "/nonexistent/certs", 1);
    d = docker_new(H, "tcp://127.0.0.1:1");
    unsetenv("DOCKER_TLS_VERIFY");
    unsetenv("DOCKER_CERT_PATH");
    assert_int_equal(docker_ping(d, on_rep, &r), 0);
    rep_wait(&r);
    assert_int_equal(r.status, -1);
    assert_non_null(strstr(r.message, "/nonexistent/certs/ca.pem"));
    rep_free(&r);
    docker_free(d);
}

/* ---------------------------------------------------------------- TLS (paddock serve) */

static json_t *info_settled(struct engine_proc *e)
{
    struct reply r;
    double deadline = now_ms() + 10000;
    for (;;) {
        api(e, "GET", "/v1/info", NULL, &r);
        assert_int_equal(r.status, 200);
        if (json_is_true(jpath(r.json, "docker.reachable")) ||
            json_is_string(jpath(r.json, "docker.error")) || now_ms() > deadline)
            break;
        reply_free(&r);
        sleep_ms(20);
    }
    json_t *j = json_incref(r.json);
    reply_free(&r);
    return j;
}

static void test_engine_over_tls(void **state)
{
    struct engine_proc *e = engine_new();
    char *host = strdupf("DOCKER_HOST=%s", proxy.host);
    char *certs = strdupf("DOCKER_CERT_PATH=%s", proxy.certs);
    e->extra_env[0] = host;
    e->extra_env[1] = "DOCKER_TLS_VERIFY=1";
    e->extra_env[2] = certs;
    assert_int_equal(engine_start(e), 0);
    json_t *info = info_settled(e);
    if (!json_is_true(jpath(info, "docker.reachable")))
        fprintf(stderr, "info: %s\n", json_dumps(info, 0));
    assert_true(json_is_true(jpath(info, "docker.reachable")));
    assert_true(json_is_null(jpath(info, "docker.error")));
    assert_string_equal(jstr(info, "docker.socket"), proxy.host);
    assert_non_null(jstr(info, "docker.api_version"));
    json_decref(info);

    json_t *s = session_new(e, NULL);
    const char *sid = jstr(s, "id");
    json_t *obs = session_run(e, sid, "echo hi");
    assert_string_equal(jstr(obs, "content"), "hi");
    json_decref(obs);
    session_delete(e, sid);
    json_decref(s);
    assert_int_equal(engine_stop(e), 0);
    assert_int_equal(engine_destroy(e), 0);
    free(host);
    free(certs);
}

static void test_engine_tls_wrong_ca(void **state)
{
    struct engine_proc *e = engine_new();
    char *host = strdupf("DOCKER_HOST=%s", proxy.host);
    char *certs = strdupf("DOCKER_CERT_PATH=%s", proxy.wrong_ca);
    e->extra_env[0] = host;
    e->extra_env[1] = "DOCKER_TLS_VERIFY=1";
    e->extra_env[2] = certs;
    assert_int_equal(engine_start(e), 0);
    json_t *info = info_settled(e);
    assert_true(json_is_false(jpath(info, "docker.reachable")));
    const char *err = jstr(info, "docker.error");
    assert_non_null(err);
    fprintf(stderr, "engine, wrong CA: %s\n", err);
    assert_non_null(strstr(err, proxy.host));
    assert_non_null(strstr(err, "TLS"));
    assert_non_null(strstr(err, "ca.pem"));
    json_decref(info);
    assert_int_equal(engine_stop(e), 0);
    engine_destroy(e);
    free(host);
    free(certs);
}

static void test_engine_tcp_unreachable(void **state)
{
    struct engine_proc *e = engine_new();
    e->extra_env[0] = "DOCKER_HOST=tcp://127.0.0.1:1";
    assert_int_equal(engine_start(e), 0);
    json_t *info = info_settled(e);
    assert_true(json_is_false(jpath(info, "docker.reachable")));
    const char *err = jstr(info, "docker.error");
    assert_non_null(err);
    fprintf(stderr, "engine, nothing listening: %s\n", err);
    assert_non_null(strstr(err, "tcp://127.0.0.1:1"));
    assert_non_null(strstr(err, "dockerd"));
    assert_non_null(strstr(err, "DOCKER_HOST"));
    json_decref(info);

    struct reply r;
    api(e, "POST", "/v1/sessions", NULL, &r);
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(jstr(r.json, "error.message"), "dockerd"));
    reply_free(&r);
    assert_int_equal(engine_stop(e), 0);
    engine_destroy(e);
}

/* ---------------------------------------------------------------- fixtures */

static void on_list_cleanup(const struct docker_reply *r, void *ud)
{
    on_rep(r, ud);
}

static int group_setup(void **state)
{
    snprintf(run_label, sizeof(run_label), "paddock.test.run=%d-%ld", (int)getpid(),
             (long)time(NULL));
    L = loop_new();
    H = http_new(L);
    D = docker_new(H, NULL);
    if (!L || !H || !D)
        return -1;
    return tls_proxy_start(&proxy, harness_docker_socket());
}

static int group_teardown(void **state)
{
    /* Whatever a failed test left: everything with this run's label. */
    struct rep r = {0};
    int left = 0;
    if (docker_container_list(D, run_label, on_list_cleanup, &r) == 0) {
        rep_wait(&r);
        size_t i;
        json_t *c;
        json_array_foreach(r.json, i, c)
        {
            left++;
            struct rep rr = {0};
            docker_container_remove(D, json_string_value(json_object_get(c, "Id")), on_rep, &rr);
            rep_wait(&rr);
            rep_free(&rr);
        }
        rep_free(&r);
    }
    if (left)
        fprintf(stderr, "cleanup: removed %d container(s) left by the tests\n", left);
    tls_proxy_stop(&proxy);
    http_cancel_all(H);
    docker_free(D);
    http_free(H);
    loop_free(L);
    return left ? -1 : 0;
}

int main(void)
{
    harness_require();
    signal(SIGPIPE, SIG_IGN);
    unsetenv("DOCKER_TLS_VERIFY");
    unsetenv("DOCKER_TLS");
    unsetenv("DOCKER_CERT_PATH");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_negotiated_version),
        cmocka_unit_test(test_calls_wait_for_negotiation),
        cmocka_unit_test(test_container_calls),
        cmocka_unit_test(test_logs_follow_demux),
        cmocka_unit_test(test_logs_follow_tty_raw),
        cmocka_unit_test(test_stats_stream),
        cmocka_unit_test(test_stream_close),
        cmocka_unit_test(test_events_by_label),
        cmocka_unit_test(test_exec_tty),
        cmocka_unit_test(test_exec_plain),
        cmocka_unit_test(test_exec_input_backpressure),
        cmocka_unit_test(test_exec_errors),
        cmocka_unit_test(test_tls_calls_and_exec),
        cmocka_unit_test(test_tls_wrong_ca),
        cmocka_unit_test(test_bad_docker_host),
        cmocka_unit_test(test_engine_over_tls),
        cmocka_unit_test(test_engine_tls_wrong_ca),
        cmocka_unit_test(test_engine_tcp_unreachable),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
