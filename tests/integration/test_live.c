/* Integration test of a command's output while it runs: the engine's `action_output` events,
 * GET /v1/actions/{id}/output (with and without follow) and `paddock watch` get the first line
 * before the command ends. The command prints a line, then waits for a file in its bind-mounted
 * workspace; the test makes the file only after it saw the line everywhere, so the order is
 * the test's, not a timer's. Also: the agent's observation is byte for byte what the executor
 * answers without streaming, what one action keeps is bounded, and escape sequences reach the
 * CLI as visible tokens. A run_ipython cell streams the same way. */
#include "harness.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define AGENT_UID 1000

/* ---- a child whose stdout is read as it comes ---- */

struct child {
    pid_t pid;
    int fd; /* its stdout, non-blocking */
    char out[65536];
    size_t len;
};

static void child_start(struct child *c, char *const argv[], const char *state_dir)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    c->len = 0;
    c->out[0] = '\0';
    c->pid = fork();
    assert_true(c->pid >= 0);
    if (c->pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        setenv("PADDOCK_STATE_DIR", state_dir, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    c->fd = p[0];
    fcntl(c->fd, F_SETFL, O_NONBLOCK);
}

/* Read until needle is in its output or ms pass; whether it is. */
static bool child_wait_for(struct child *c, const char *needle, long ms)
{
    double deadline = now_ms() + ms;
    while (!strstr(c->out, needle)) {
        long left = (long)(deadline - now_ms());
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        ssize_t n = read(c->fd, c->out + c->len, sizeof(c->out) - 1 - c->len);
        if (n <= 0)
            return strstr(c->out, needle) != NULL;
        c->len += (size_t)n;
        c->out[c->len] = '\0';
    }
    return true;
}

/* Wait for its exit (≤ ms; then SIGKILL): the exit code, or -1. */
static int child_end(struct child *c, bool kill_it, long ms)
{
    if (kill_it)
        kill(c->pid, SIGTERM);
    double deadline = now_ms() + ms;
    int st = 0;
    pid_t r;
    while ((r = waitpid(c->pid, &st, WNOHANG)) == 0 && now_ms() < deadline) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, 50) > 0) {
            ssize_t n = read(c->fd, c->out + c->len, sizeof(c->out) - 1 - c->len);
            if (n > 0) {
                c->len += (size_t)n;
                c->out[c->len] = '\0';
            }
        }
    }
    if (r == 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, &st, 0);
    }
    close(c->fd);
    return r > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- helpers ---- */

static char *workspace_dir(void)
{
    char *t = strdupf("/tmp/paddock-live-XXXXXX");
    assert_non_null(mkdtemp(t));
    assert_int_equal(chown(t, AGENT_UID, AGENT_UID), 0);
    return t;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* POST execute_action?wait=0 for a run action: its id. */
static long long start_run(const char *sid, const char *command)
{
    /* blocking: no "no new output for 10 s" end while it waits for the test */
    json_t *body = json_pack("{s:{s:s,s:{s:s,s:b}}}", "action", "action", "run", "args", "command",
                             command, "blocking", 1);
    char *text = json_dumps(body, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action?wait=0", sid);
    json_t *r = api_json(harness_eng, "POST", path, text, 202);
    long long id = (long long)json_integer_value(json_object_get(r, "action_id"));
    assert_true(id > 0);
    json_decref(r);
    json_decref(body);
    free(text);
    free(path);
    return id;
}

/* POST execute_action?wait=0 for a run_ipython cell: its id. */
static long long start_cell(const char *sid, const char *code)
{
    json_t *body = json_pack("{s:{s:s,s:{s:s},s:i}}", "action", "action", "run_ipython", "args",
                             "code", code, "timeout", 120);
    char *text = json_dumps(body, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action?wait=0", sid);
    json_t *r = api_json(harness_eng, "POST", path, text, 202);
    long long id = (long long)json_integer_value(json_object_get(r, "action_id"));
    assert_true(id > 0);
    json_decref(r);
    json_decref(body);
    free(text);
    free(path);
    return id;
}

/* The text of every event of type (with "action": id when id > 0) joined, in order. */
static char *sse_text(struct sse *s, const char *type, long long id)
{
    size_t n = 0;
    char *all = strdup("");
    size_t i;
    json_t *ev;
    json_array_foreach(s->events, i, ev)
    {
        json_t *d = json_object_get(ev, "data");
        if (strcmp(jstr(ev, "type"), type) != 0 ||
            (id > 0 && json_integer_value(json_object_get(d, "action")) != id))
            continue;
        const char *t = jstr(d, "text");
        size_t k = t ? strlen(t) : 0;
        all = realloc(all, n + k + 1);
        memcpy(all + n, t ? t : "", k);
        n += k;
        all[n] = '\0';
    }
    return all;
}

/* Pump until the joined text of those events has needle (≤ ms). */
static bool sse_wait_text(struct sse *s, const char *type, long long id, const char *needle,
                          long ms)
{
    double deadline = now_ms() + ms;
    for (;;) {
        char *t = sse_text(s, type, id);
        bool found = strstr(t, needle) != NULL;
        free(t);
        if (found)
            return true;
        if (now_ms() > deadline || s->eof)
            return false;
        sse_pump(s, 100);
    }
}

static const char *action_state(long long id)
{
    static char state[32];
    char *path = strdupf("/v1/actions/%lld", id);
    json_t *a = api_json(harness_eng, "GET", path, NULL, 200);
    snprintf(state, sizeof(state), "%s", jstr(a, "state") ? jstr(a, "state") : "");
    json_decref(a);
    free(path);
    return state;
}

/* ---- the tests ---- */

static void test_output_arrives_before_the_end(void **state)
{
    (void)state;
    char *dir = workspace_dir();
    char *body = strdupf("{\"workspace\": \"%s\"}", dir);
    json_t *sess = session_new(harness_eng, body);
    free(body);
    const char *sid = jstr(sess, "id");

    struct sse *events = sse_open(harness_eng->socket, "/v1/events");
    char *argv[] = {(char *)harness_bin(), "--state-dir", harness_eng->state_dir, "watch",
                    (char *)sid,           NULL};
    struct child watch;
    child_start(&watch, argv, harness_eng->state_dir);
    assert_true(child_wait_for(&watch, "watching", 10000));

    /* First line, an escape sequence (a title change), then it waits for the test's file. */
    long long id = start_run(sid, "echo first-line; printf 'esc\\033]0;pwned\\007-end\\n'; "
                                  "while [ ! -e /workspace/go ]; do sleep 0.05; done; "
                                  "echo second-line");
    char *follow_path = strdupf("/v1/actions/%lld/output?follow=1", id);
    struct sse *follow = sse_open(harness_eng->socket, follow_path);

    /* The first line everywhere while the command still waits. */
    assert_true(sse_wait_text(events, "action_output", id, "first-line\n", 15000));
    assert_true(sse_wait_text(follow, "output", 0, "first-line\n", 15000));
    assert_true(child_wait_for(&watch, "\nfirst-line\n", 15000));
    assert_true(child_wait_for(&watch, "-end\n", 15000));
    assert_null(strstr(watch.out, "\nsecond-line"));
    char *out_path = strdupf("/v1/actions/%lld/output", id);
    json_t *so_far = api_json(harness_eng, "GET", out_path, NULL, 200);
    assert_true(json_is_true(json_object_get(so_far, "running")));
    assert_non_null(strstr(jstr(so_far, "text"), "first-line\n"));
    assert_null(strstr(jstr(so_far, "text"), "second-line"));
    json_decref(so_far);
    assert_string_equal(action_state(id), "running");
    /* The engine passes the bytes on (JSON escapes them); the CLI shows the escape as a
     * visible token, and no ESC byte reaches its terminal. */
    assert_true(sse_wait_text(events, "action_output", id, "esc\x1b]0;pwned\x07-end", 5000));
    assert_null(strchr(watch.out, '\x1b'));
    assert_null(strchr(watch.out, '\x07'));
    assert_non_null(strstr(watch.out, "esc^[]0"));

    /* Now it may end. */
    char *go = strdupf("%s/go", dir);
    int fd = open(go, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    char *wait_path = strdupf("/v1/actions/%lld?wait=30", id);
    json_t *a = api_json(harness_eng, "GET", wait_path, NULL, 200);
    assert_string_equal(jstr(a, "state"), "done");
    assert_string_equal(jstr(a, "observation.content"),
                        "first-line\nesc\x1b]0;pwned\x07-end\nsecond-line");
    json_decref(a);
    assert_true(sse_wait_text(follow, "output", 0, "second-line\n", 15000));
    assert_non_null(sse_wait(follow, "end", "state", "done", NULL, NULL, 15000));
    assert_true(child_wait_for(&watch, "── done, exit code 0", 15000));
    assert_true(strstr(watch.out, "\nfirst-line\n") < strstr(watch.out, "\nsecond-line\n"));
    child_end(&watch, true, 5000);

    /* Without follow, a finished action answers what it printed, from its observation. */
    json_t *after = api_json(harness_eng, "GET", out_path, NULL, 200);
    assert_false(json_is_true(json_object_get(after, "running")));
    assert_non_null(strstr(jstr(after, "text"), "second-line"));
    json_decref(after);
    /* A follow of a finished action: its text, then the end at once. */
    struct sse *late = sse_open(harness_eng->socket, follow_path);
    assert_non_null(sse_wait(late, "end", "state", "done", NULL, NULL, 10000));
    assert_true(sse_wait_text(late, "output", 0, "second-line", 1000));
    sse_close(late);

    sse_close(follow);
    sse_close(events);
    free(go);
    free(wait_path);
    free(out_path);
    free(follow_path);
    session_delete(harness_eng, sid);
    json_decref(sess);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* A run_ipython cell streams too: what it prints to stdout and stderr reaches the events and
 * the output so far while it waits for the test's file; its observation is OpenHands' format
 * (the output with colour codes dropped, then the two Jupyter lines). */
static void test_ipython_output_arrives_before_the_end(void **state)
{
    (void)state;
    char *dir = workspace_dir();
    char *body = strdupf("{\"workspace\": \"%s\"}", dir);
    json_t *sess = session_new(harness_eng, body);
    free(body);
    const char *sid = jstr(sess, "id");
    struct sse *events = sse_open(harness_eng->socket, "/v1/events");

    long long id = start_cell(sid, "import os, sys, time\n"
                                   "print('cell-first')\n"
                                   "print('cell-err', file=sys.stderr)\n"
                                   "print('\\x1b[32mgreen\\x1b[0m')\n"
                                   "while not os.path.exists('/workspace/go'):\n"
                                   "    time.sleep(0.05)\n"
                                   "print('cell-second')");
    char *follow_path = strdupf("/v1/actions/%lld/output?follow=1", id);
    struct sse *follow = sse_open(harness_eng->socket, follow_path);
    assert_true(sse_wait_text(events, "action_output", id, "cell-first\ncell-err\n", 30000));
    assert_true(sse_wait_text(follow, "output", 0, "cell-first\ncell-err\n", 15000));
    assert_true(sse_wait_text(events, "action_output", id, "\x1b[32mgreen\x1b[0m\n", 15000));
    char *out_path = strdupf("/v1/actions/%lld/output", id);
    json_t *so_far = api_json(harness_eng, "GET", out_path, NULL, 200);
    assert_true(json_is_true(json_object_get(so_far, "running")));
    assert_non_null(strstr(jstr(so_far, "text"), "cell-first\n"));
    assert_null(strstr(jstr(so_far, "text"), "cell-second"));
    json_decref(so_far);
    assert_string_equal(action_state(id), "running");

    char *go = strdupf("%s/go", dir);
    int fd = open(go, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    char *wait_path = strdupf("/v1/actions/%lld?wait=60", id);
    json_t *a = api_json(harness_eng, "GET", wait_path, NULL, 200);
    assert_string_equal(jstr(a, "state"), "done");
    assert_string_equal(jstr(a, "observation.observation"), "run_ipython");
    const char *content = jstr(a, "observation.content");
    assert_non_null(content);
    const char *want = "cell-first\ncell-err\ngreen\ncell-second\n[Jupyter current working "
                       "directory: /workspace]\n[Jupyter Python interpreter: ";
    assert_true(strncmp(content, want, strlen(want)) == 0);
    json_decref(a);
    assert_true(sse_wait_text(follow, "output", 0, "cell-second\n", 15000));
    assert_non_null(sse_wait(follow, "end", "state", "done", NULL, NULL, 15000));

    sse_close(follow);
    sse_close(events);
    free(go);
    free(wait_path);
    free(out_path);
    free(follow_path);
    session_delete(harness_eng, sid);
    json_decref(sess);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* `paddock show N --follow` prints the output before the end and exits with its code. */
/* The output events of action id that arrived before its "action" event in state "done"
 * (joined), or NULL while that event has not come. */
static char *output_before_done(struct sse *s, long long id)
{
    char *all = strdup("");
    size_t n = 0, i;
    json_t *ev;
    json_array_foreach(s->events, i, ev)
    {
        json_t *d = json_object_get(ev, "data");
        bool is_action = strcmp(jstr(ev, "type"), "action") == 0;
        if (json_integer_value(json_object_get(d, is_action ? "id" : "action")) != id)
            continue;
        if (is_action && jstr(d, "state") && strcmp(jstr(d, "state"), "done") == 0)
            return all;
        const char *t = strcmp(jstr(ev, "type"), "action_output") == 0 ? jstr(d, "text") : NULL;
        size_t k = t ? strlen(t) : 0;
        all = realloc(all, n + k + 1);
        memcpy(all + n, t ? t : "", k);
        n += k;
        all[n] = '\0';
    }
    free(all);
    return NULL;
}

/* Output printed just before the end, held back to merge it with the line before (it comes
 * within the 20 ms between events), is sent before the action's final event: a client that
 * stops at the end has seen everything. (A round where the sandbox's pause outlasts the 20 ms
 * still passes: it only exercises less.) */
static void test_output_before_final_event(void **state)
{
    (void)state;
    json_t *sess = session_new(harness_eng, NULL);
    const char *sid = jstr(sess, "id");
    struct sse *events = sse_open(harness_eng->socket, "/v1/events");
    for (int round = 0; round < 5; round++) {
        long long id = start_run(sid, "printf 'burst-a\\n'; sleep 0.005; printf 'burst-b\\n'");
        double deadline = now_ms() + 15000;
        char *got;
        while (!(got = output_before_done(events, id)) && now_ms() < deadline && !events->eof)
            sse_pump(events, 100);
        assert_non_null(got);
        assert_non_null(strstr(got, "burst-a\n"));
        assert_non_null(strstr(got, "burst-b\n"));
        free(got);
    }
    sse_close(events);
    session_delete(harness_eng, sid);
    json_decref(sess);
}

static void test_show_follow(void **state)
{
    (void)state;
    char *dir = workspace_dir();
    char *body = strdupf("{\"workspace\": \"%s\"}", dir);
    json_t *sess = session_new(harness_eng, body);
    free(body);
    const char *sid = jstr(sess, "id");
    long long id = start_run(sid, "echo show-first; while [ ! -e /workspace/go ]; do sleep 0.05; "
                                  "done; echo show-second; (exit 7)");
    char num[32];
    snprintf(num, sizeof(num), "%lld", id);
    char *argv[] = {(char *)harness_bin(),
                    "--state-dir",
                    harness_eng->state_dir,
                    "show",
                    num,
                    "--follow",
                    NULL};
    struct child show;
    child_start(&show, argv, harness_eng->state_dir);
    assert_true(child_wait_for(&show, "\nshow-first\n", 15000));
    assert_null(strstr(show.out, "\nshow-second"));
    assert_string_equal(action_state(id), "running");
    char *go = strdupf("%s/go", dir);
    int fd = open(go, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_true(child_wait_for(&show, "exit code 7", 15000));
    assert_int_equal(child_end(&show, false, 10000), 7);
    assert_non_null(strstr(show.out, "\nshow-second\n"));
    free(go);
    session_delete(harness_eng, sid);
    json_decref(sess);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* The agent gets byte for byte what the executor answers a plain request; a running action
 * keeps its newest bytes only, and says how many came before. */
static void test_observation_unchanged_and_bounded(void **state)
{
    (void)state;
    char *dir = workspace_dir();
    char *body = strdupf("{\"workspace\": \"%s\"}", dir);
    json_t *sess = session_new(harness_eng, body);
    free(body);
    const char *sid = jstr(sess, "id");

    const char *req = "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"printf "
                      "'a\\\\tb\\\\x1b[31mred\\\\n\\\\nlast'\"}}}";
    char *path = strdupf("/v1/sessions/%s/execute_action", sid);
    struct reply via_engine;
    api(harness_eng, "POST", path, req, &via_engine);
    assert_int_equal(via_engine.status, 200);
    char *sock = strdupf("%s/run/%s/executor.sock", harness_eng->state_dir, sid);
    struct reply direct;
    http_unix(sock, "POST", "/execute_action", req, -1, 30000, &direct);
    assert_int_equal(direct.status, 200);
    assert_int_equal(via_engine.len, direct.len);
    assert_memory_equal(via_engine.body, direct.body, direct.len);
    assert_non_null(strstr(via_engine.body, "red"));
    reply_free(&via_engine);
    reply_free(&direct);

    /* 1 MB of output, then a wait: what is kept is the newest 256 KiB at most. */
    long long id = start_run(sid, "head -c 1000000 /dev/zero | tr '\\0' a; echo; echo tail-mark; "
                                  "while [ ! -e /workspace/go ]; do sleep 0.05; done");
    char *out_path = strdupf("/v1/actions/%lld/output", id);
    double deadline = now_ms() + 20000;
    json_t *o = NULL;
    while (now_ms() < deadline) {
        json_decref(o);
        o = api_json(harness_eng, "GET", out_path, NULL, 200);
        if (jstr(o, "text") && strstr(jstr(o, "text"), "tail-mark"))
            break;
        sleep_ms(50); /* polling a condition to a deadline, not a timed assertion */
    }
    assert_non_null(strstr(jstr(o, "text"), "tail-mark"));
    assert_true(json_is_true(json_object_get(o, "running")));
    assert_true(strlen(jstr(o, "text")) <= 256 * 1024);
    assert_true(json_integer_value(json_object_get(o, "offset")) > 0);
    assert_int_equal(json_integer_value(json_object_get(o, "offset")) + strlen(jstr(o, "text")),
                     1000000 + strlen("\ntail-mark\n"));
    json_decref(o);
    char *go = strdupf("%s/go", dir);
    int fd = open(go, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    char *wait_path = strdupf("/v1/actions/%lld?wait=30", id);
    json_t *a = api_json(harness_eng, "GET", wait_path, NULL, 200);
    assert_string_equal(jstr(a, "state"), "done");
    json_decref(a);

    free(go);
    free(wait_path);
    free(out_path);
    free(sock);
    free(path);
    session_delete(harness_eng, sid);
    json_decref(sess);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_arrives_before_the_end),
        cmocka_unit_test(test_ipython_output_arrives_before_the_end),
        cmocka_unit_test(test_output_before_final_event),
        cmocka_unit_test(test_show_follow),
        cmocka_unit_test(test_observation_unchanged_and_bounded),
    };
    int failed = cmocka_run_group_tests_name("live", tests, harness_group_setup_unsupervised,
                                             harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
