/* Integration tests of the engine API against the real Docker daemon: sessions, hardening,
 * run actions, errors, history, delete. One engine serves the whole group; the group teardown
 * stops it and requires a clean exit (0: no sanitizer finding, no leak report). */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- helpers ---- */

static json_t *run_ok(const char *id, const char *command, const char *want_content)
{
    json_t *obs = session_run(harness_eng, id, command);
    if (want_content && (!jstr(obs, "content") || strcmp(jstr(obs, "content"), want_content))) {
        char *d = json_dumps(obs, JSON_COMPACT);
        fprintf(stderr, "`%s` observation: %s\n", command, d);
        free(d);
    }
    assert_string_equal(jstr(obs, "observation"), "run");
    if (want_content)
        assert_string_equal(jstr(obs, "content"), want_content);
    return obs;
}

static json_int_t exit_code_of(json_t *obs)
{
    json_t *ec = jpath(obs, "extras.metadata.exit_code");
    assert_true(json_is_integer(ec));
    return json_integer_value(ec);
}

static bool is_hex16(const char *s)
{
    if (!s || strlen(s) != 16)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
            return false;
    return true;
}

static json_t *inspect_container(const char *cid)
{
    char *path = strdupf("/v1.41/containers/%s/json", cid);
    struct reply r;
    docker("GET", path, &r);
    free(path);
    assert_int_equal(r.status, 200);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    assert_non_null(j);
    return j;
}

static void expect_error(const char *method, const char *path, const char *body, long status,
                         const char *code)
{
    struct reply r;
    api(harness_eng, method, path, body, &r);
    if (r.status != status ||
        (code && (!jstr(r.json, "error.code") || strcmp(jstr(r.json, "error.code"), code))))
        fprintf(stderr, "%s %s %.200s → HTTP %ld %s (want %ld %s)\n", method, path,
                body ? body : "", r.status, r.body ? r.body : r.err, status, code ? code : "");
    assert_int_equal(r.status, status);
    assert_true(json_is_object(r.json));
    assert_true(json_is_string(jpath(r.json, "error.message")));
    assert_true(strlen(jstr(r.json, "error.message")) > 0);
    if (code)
        assert_string_equal(jstr(r.json, "error.code"), code);
    reply_free(&r);
}

static size_t count_containers_of(const char *id)
{
    char *l = strdupf("paddock.session=%s", id);
    const char *labels[] = {l, NULL};
    json_t *list = docker_containers_with_labels(labels);
    free(l);
    assert_true(json_is_array(list));
    size_t n = json_array_size(list);
    json_decref(list);
    return n;
}

/* ---- 1. create + hardening ---- */

static bool caps_equal(json_t *arr, const char *const *want, size_t n)
{
    if (!json_is_array(arr) || json_array_size(arr) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        size_t k;
        json_t *c;
        json_array_foreach(arr, k, c)
        {
            const char *s = json_string_value(c);
            if (!s)
                return false;
            if (strncmp(s, "CAP_", 4) == 0) /* Docker may normalise names */
                s += 4;
            if (strcmp(s, want[i]) == 0)
                found = true;
        }
        if (!found)
            return false;
    }
    return true;
}

static void test_create_hardened(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    assert_true(is_hex16(id));
    assert_string_equal(jstr(s, "state"), "ready");
    assert_string_equal(jstr(s, "image"), HARNESS_IMAGE);
    assert_int_equal(json_integer_value(json_object_get(s, "action_count")), 0);
    assert_true(json_is_null(json_object_get(s, "error")));
    const char *cid = jstr(s, "container_id");
    assert_non_null(cid);
    assert_int_equal(count_containers_of(id), 1);

    json_t *c = inspect_container(cid);
    json_t *hc = json_object_get(c, "HostConfig");
    assert_true(json_is_true(jpath(c, "State.Running")));

    json_t *capdrop = json_object_get(hc, "CapDrop");
    assert_int_equal(json_array_size(capdrop), 1);
    const char *drop = json_string_value(json_array_get(capdrop, 0));
    assert_non_null(drop);
    assert_true(strcmp(drop, "ALL") == 0 || strcmp(drop, "CAP_ALL") == 0);
    static const char *const add[] = {"CHOWN", "SETUID", "SETGID", "KILL"};
    if (!caps_equal(json_object_get(hc, "CapAdd"), add, 4)) {
        char *d = json_dumps(json_object_get(hc, "CapAdd"), JSON_COMPACT);
        fprintf(stderr, "CapAdd = %s\n", d);
        free(d);
        fail_msg("CapAdd is not exactly CHOWN, SETUID, SETGID, KILL");
    }

    bool nnp = false, seccomp = false;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(hc, "SecurityOpt"), i, v)
    {
        const char *o = json_string_value(v);
        if (o && (strcmp(o, "no-new-privileges") == 0 || strcmp(o, "no-new-privileges:true") == 0))
            nnp = true;
        /* paddock's own profile (engine/seccomp.c), not the daemon's default. */
        if (o && strncmp(o, "seccomp={", 9) == 0 && strstr(o, "\"io_uring_setup\""))
            seccomp = true;
    }
    assert_true(nnp);
    assert_true(seccomp);
    assert_string_equal(jstr(hc, "NetworkMode"), "none");
    assert_true(json_integer_value(json_object_get(hc, "PidsLimit")) > 0);
    json_int_t mem = json_integer_value(json_object_get(hc, "Memory"));
    assert_true(mem > 0);
    assert_int_equal(json_integer_value(json_object_get(hc, "MemorySwap")), mem);
    assert_true(json_integer_value(json_object_get(hc, "NanoCpus")) > 0);
    assert_true(json_is_true(json_object_get(hc, "Init")));

    json_t *labels = jpath(c, "Config.Labels");
    assert_string_equal(json_string_value(json_object_get(labels, "paddock.session")), id);
    const char *eid = json_string_value(json_object_get(labels, "paddock.engine"));
    assert_non_null(eid);
    char *want_eid = engine_read_id(harness_eng);
    assert_string_equal(eid, want_eid);
    free(want_eid);
    assert_string_equal(json_string_value(json_object_get(labels, "paddock.test")), "1");

    /* MaskedPaths omitted in the request → Docker's defaults, never an empty list. */
    assert_true(json_is_array(json_object_get(hc, "MaskedPaths")));
    assert_true(json_array_size(json_object_get(hc, "MaskedPaths")) > 0);
    assert_true(json_array_size(json_object_get(hc, "ReadonlyPaths")) > 0);

    /* The executor comes in read-only; the socket dir is the session's own. */
    bool exec_ro = false, sock_rw = false;
    json_array_foreach(json_object_get(c, "Mounts"), i, v)
    {
        const char *dst = jstr(v, "Destination");
        if (dst && strcmp(dst, "/opt/paddock/paddock-executor") == 0) {
            assert_string_equal(jstr(v, "Type"), "bind");
            assert_true(json_is_false(json_object_get(v, "RW")));
            assert_string_equal(jstr(v, "Source"), getenv("PADDOCK_EXECUTOR"));
            exec_ro = true;
        }
        if (dst && strcmp(dst, "/run/paddock") == 0) {
            char *want = strdupf("%s/run/%s", harness_eng->state_dir, id);
            assert_string_equal(jstr(v, "Source"), want);
            free(want);
            sock_rw = true;
        }
    }
    assert_true(exec_ro);
    assert_true(sock_rw);
    bool hc_ro = false;
    json_array_foreach(json_object_get(hc, "Mounts"), i, v)
    {
        const char *t = jstr(v, "Target");
        if (t && strcmp(t, "/opt/paddock/paddock-executor") == 0)
            hc_ro = json_is_true(json_object_get(v, "ReadOnly"));
    }
    assert_true(hc_ro);
    /* Mounts, never Binds. */
    assert_true(json_array_size(json_object_get(hc, "Binds")) == 0);

    json_decref(c);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- 2. echo hi ---- */

static void test_echo(void **state)
{
    json_t *s = session_new(harness_eng, "");
    const char *id = jstr(s, "id");
    json_t *obs = run_ok(id, "echo hi", "hi");
    assert_int_equal(exit_code_of(obs), 0);
    assert_true(json_is_true(json_object_get(obs, "success")));
    assert_string_equal(jstr(obs, "message"), "Command `echo hi` executed with exit code 0.");
    assert_string_equal(jstr(obs, "extras.command"), "echo hi");
    assert_string_equal(jstr(obs, "extras.metadata.working_dir"), "/workspace");
    json_decref(obs);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- 3. shell state persists between actions ---- */

static void test_cd_and_export(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    json_t *obs = run_ok(id, "cd /tmp", "");
    assert_int_equal(exit_code_of(obs), 0);
    assert_string_equal(jstr(obs, "extras.metadata.working_dir"), "/tmp");
    json_decref(obs);
    obs = run_ok(id, "pwd", "/tmp");
    assert_string_equal(jstr(obs, "extras.metadata.working_dir"), "/tmp");
    json_decref(obs);
    json_decref(run_ok(id, "export FOO=bar", ""));
    obs = run_ok(id, "echo $FOO", "bar");
    assert_int_equal(exit_code_of(obs), 0);
    json_decref(obs);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- 4. exit code ---- */

static void test_exit_code(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    json_t *obs = run_ok(id, "sh -c 'exit 3'", "");
    assert_int_equal(exit_code_of(obs), 3);
    assert_string_equal(jstr(obs, "message"),
                        "Command `sh -c 'exit 3'` executed with exit code 3.");
    assert_true(json_is_false(json_object_get(obs, "success")));
    json_decref(obs);
    /* The shell survives: the next command runs. */
    json_decref(run_ok(id, "echo still", "still"));
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- 5. unprivileged agent shell, no network ---- */

static void test_unprivileged(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    json_decref(run_ok(id, "id -u", "1000"));
    json_decref(run_ok(id, "grep CapEff /proc/self/status", "CapEff:\t0000000000000000"));
    json_decref(run_ok(id, "grep CapPrm /proc/self/status", "CapPrm:\t0000000000000000"));
    json_decref(run_ok(id, "grep NoNewPrivs /proc/self/status", "NoNewPrivs:\t1"));

    json_t *obs = run_ok(id, "cat /proc/net/dev", NULL);
    assert_int_equal(exit_code_of(obs), 0);
    /* Two header lines, then one line per interface: only the loopback. */
    char *text = strdup(jstr(obs, "content")), *save = NULL;
    int line = 0, ifaces = 0;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), line++) {
        if (line < 2)
            continue;
        char *colon = strchr(l, ':');
        assert_non_null(colon);
        *colon = '\0';
        while (*l == ' ')
            l++;
        if (strcmp(l, "lo") != 0)
            fprintf(stderr, "unexpected network interface in the sandbox: %s\n", l);
        assert_string_equal(l, "lo");
        ifaces++;
    }
    assert_int_equal(ifaces, 1);
    free(text);
    json_decref(obs);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- 6. env ---- */

static void test_env(void **state)
{
    json_t *s = session_new(harness_eng, "{\"env\": {\"GREETING\": \"hello\"}}");
    const char *id = jstr(s, "id");
    json_decref(run_ok(id, "echo $GREETING", "hello"));
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- 7. bad requests ---- */

/* Raw request with a Content-Length far above the 64 MiB cap: read the answer; if the engine
 * waits for the body, stream it (zeros) until the engine answers or the body is complete. */
static long oversized_request(const char *sock_path, bool *early)
{
    const unsigned long long total = 70000000ULL;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char *hdr = strdupf("POST /v1/sessions HTTP/1.1\r\nHost: localhost\r\n"
                        "Content-Type: application/json\r\nContent-Length: %llu\r\n\r\n{\"a\":",
                        total);
    size_t hl = strlen(hdr);
    assert_int_equal(write(fd, hdr, hl), (ssize_t)hl);
    unsigned long long sent = 5;
    free(hdr);
    static char zeros[1 << 16];
    memset(zeros, ' ', sizeof(zeros));
    char resp[4096];
    size_t rl = 0;
    *early = false;
    double deadline = now_ms() + 60000;
    bool got = false;
    double early_until = now_ms() + 2000; /* first give it 2 s to refuse without the body */
    while (now_ms() < deadline && !got) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (sent < total && now_ms() >= early_until)
            p.events |= POLLOUT;
        int n = poll(&p, 1, 100);
        if (n < 0)
            break;
        if (p.revents & (POLLIN | POLLHUP)) {
            ssize_t k = read(fd, resp + rl, sizeof(resp) - 1 - rl);
            if (k <= 0)
                break;
            rl += (size_t)k;
            resp[rl] = '\0';
            if (strstr(resp, "\r\n\r\n"))
                got = true;
            if (sent < total)
                *early = true;
        } else if (p.revents & POLLOUT) {
            size_t chunk = sizeof(zeros);
            if (total - sent < chunk)
                chunk = (size_t)(total - sent);
            ssize_t k = write(fd, zeros, chunk);
            if (k < 0 && errno != EAGAIN && errno != EINTR)
                break;
            if (k > 0)
                sent += (unsigned long long)k;
        } else if (p.revents & POLLERR) {
            break;
        }
    }
    close(fd);
    long status = -1;
    if (rl > 12 && strncmp(resp, "HTTP/1.", 7) == 0)
        status = strtol(resp + 9, NULL, 10);
    if (status != 413)
        fprintf(stderr, "oversized body: sent %llu of %llu bytes, answer: %.300s\n", sent, total,
                rl ? resp : "(none)");
    return status;
}

static void test_bad_requests(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    char *exec = strdupf("/v1/sessions/%s/execute_action", id);
    expect_error("POST", exec, "{\"action\": {\"action\": \"run\"", 400, "invalid_json");
    expect_error("POST", exec, "not json at all", 400, "invalid_json");
    expect_error("POST", exec, "{\"action\": 5}", 400, "bad_request");
    expect_error("POST", exec, "{}", 400, "bad_request");
    free(exec);

    expect_error("GET", "/v1/sessions/0123456789abcdef", NULL, 404, "not_found");
    expect_error("DELETE", "/v1/sessions/0123456789abcdef", NULL, 404, "not_found");
    expect_error("POST", "/v1/sessions/0123456789abcdef/execute_action",
                 "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"echo hi\"}}}", 404,
                 "not_found");
    expect_error("GET", "/v1/sessions/0123456789abcdef/actions", NULL, 404, "not_found");

    expect_error("POST", "/v1/sessions", "{\"image\": 7}", 400, "bad_request");
    expect_error("POST", "/v1/sessions", "{\"imagez\": \"x\"}", 400, "bad_request");
    expect_error("POST", "/v1/sessions", "[1,2]", 400, "invalid_json");
    expect_error("POST", "/v1/sessions", "{\"env\": {\"A\": 1}}", 400, "bad_request");

    /* A missing image: one pull (from a loopback "registry" that refuses, so no packet leaves
     * the machine), a clear error naming the session it left in state error (for its creator
     * to delete) and nothing else left behind. */
    struct reply r;
    api(harness_eng, "POST", "/v1/sessions",
        "{\"image\": \"127.0.0.1:1/paddock-does-not-exist:none\"}", &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "error.code"), "image_not_found");
    assert_non_null(jstr(r.json, "error.session"));
    char *left = strdup(jstr(r.json, "error.session"));
    reply_free(&r);
    api(harness_eng, "GET", "/v1/sessions?all=1", NULL, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *row;
    int failed_rows = 0;
    json_array_foreach(json_object_get(r.json, "sessions"), i, row)
    {
        const char *img = jstr(row, "image");
        if (!img || strcmp(img, "127.0.0.1:1/paddock-does-not-exist:none") != 0)
            continue;
        failed_rows++;
        engine_track(harness_eng, jstr(row, "id"));
        assert_string_equal(jstr(row, "id"), left);
        assert_string_equal(jstr(row, "state"), "error");
        assert_int_equal(count_containers_of(jstr(row, "id")), 0);
        char *dir = strdupf("%s/run/%s", harness_eng->state_dir, jstr(row, "id"));
        assert_false(path_exists(dir));
        free(dir);
    }
    reply_free(&r);
    assert_int_equal(failed_rows, 1);
    free(left);
    char *eid = engine_read_id(harness_eng);
    char *el = strdupf("paddock.engine=%s", eid);
    const char *labels[] = {el, NULL};
    json_t *mine = docker_containers_with_labels(labels);
    json_array_foreach(mine, i, row)
    {
        assert_string_not_equal(jstr(row, "Image"), "127.0.0.1:1/paddock-does-not-exist:none");
    }
    json_decref(mine);
    free(el);
    free(eid);

    expect_error("PUT", "/v1/sessions", "{}", 405, "method_not_allowed");
    expect_error("DELETE", "/v1/info", NULL, 405, "method_not_allowed");
    expect_error("GET", "/v1/nope", NULL, 404, "not_found");
    expect_error("GET", "/", NULL, 404, "not_found");

    bool early = false;
    long st = oversized_request(harness_eng->socket, &early);
    assert_int_equal(st, 413);
    if (!early)
        printf("note: the engine read the whole 70 MB body before answering 413\n");

    /* The engine still works after all that. */
    json_decref(run_ok(id, "echo ok", "ok"));
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- 8. history ---- */

static void test_history(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    static const char *const cmds[] = {"echo one", "sh -c 'exit 4'", "echo three"};
    static const int codes[] = {0, 4, 0};
    for (int k = 0; k < 3; k++) {
        json_t *obs = session_run(harness_eng, id, cmds[k]);
        assert_int_equal(exit_code_of(obs), codes[k]);
        json_decref(obs);
    }
    char *path = strdupf("/v1/sessions/%s/actions", id);
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *list = json_object_get(r.json, "actions");
    assert_int_equal(json_array_size(list), 3);
    assert_true(json_is_null(json_object_get(r.json, "next_before")));
    json_int_t prev_id = 0;
    for (int k = 0; k < 3; k++) {
        json_t *a = json_array_get(list, (size_t)k);
        int want = 2 - k; /* newest first */
        assert_string_equal(jstr(a, "summary"), cmds[want]);
        assert_string_equal(jstr(a, "kind"), "run");
        assert_string_equal(jstr(a, "state"), "done");
        assert_string_equal(jstr(a, "session_id"), id);
        assert_int_equal(json_integer_value(json_object_get(a, "exit_code")), codes[want]);
        assert_true(json_is_number(json_object_get(a, "duration_ms")));
        assert_true(json_number_value(json_object_get(a, "duration_ms")) >= 0);
        json_int_t aid = json_integer_value(json_object_get(a, "id"));
        if (k > 0)
            assert_true(aid < prev_id);
        prev_id = aid;
    }
    reply_free(&r);

    /* Paging: limit=2, then before=<next_before>. */
    char *p2 = strdupf("%s?limit=2", path);
    api(harness_eng, "GET", p2, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "actions")), 2);
    json_int_t nb = json_integer_value(json_object_get(r.json, "next_before"));
    assert_true(nb > 0);
    reply_free(&r);
    char *p3 = strdupf("%s?limit=2&before=%lld", path, (long long)nb);
    api(harness_eng, "GET", p3, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "actions")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "actions"), 0), "summary"),
                        "echo one");
    reply_free(&r);
    free(p2);
    free(p3);
    char *p4 = strdupf("%s?limit=0", path);
    expect_error("GET", p4, NULL, 400, "bad_request");
    free(p4);
    free(path);

    path = strdupf("/v1/sessions/%s", id);
    api(harness_eng, "GET", path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "action_count")), 3);
    assert_string_equal(jstr(r.json, "state"), "ready");
    reply_free(&r);
    free(path);

    /* The store itself: intent (args) and observation rows, read-only. */
    char *db = strdupf("%s/paddock.db", harness_eng->state_dir);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt *st = NULL;
    int prc = sqlite3_prepare_v2(h,
                                 "SELECT a.kind, a.summary, a.state, a.exit_code, a.args, "
                                 "o.content FROM actions a LEFT JOIN observations o ON "
                                 "o.action_id = a.id WHERE a.session_id = ? ORDER BY a.id",
                                 -1, &st, NULL);
    if (prc != SQLITE_OK)
        fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(h));
    assert_int_equal(prc, SQLITE_OK);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        assert_true(rows < 3);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), "run");
        assert_string_equal((const char *)sqlite3_column_text(st, 1), cmds[rows]);
        assert_string_equal((const char *)sqlite3_column_text(st, 2), "done");
        assert_int_equal(sqlite3_column_int(st, 3), codes[rows]);
        json_t *args = json_loads((const char *)sqlite3_column_text(st, 4), 0, NULL);
        assert_non_null(args);
        assert_string_equal(jstr(args, "action"), "run");
        assert_string_equal(jstr(args, "args.command"), cmds[rows]);
        json_decref(args);
        assert_int_not_equal(sqlite3_column_type(st, 5), SQLITE_NULL);
        json_t *obs = json_loads((const char *)sqlite3_column_text(st, 5), 0, NULL);
        assert_non_null(obs);
        assert_string_equal(jstr(obs, "observation"), "run");
        assert_int_equal(json_integer_value(jpath(obs, "extras.metadata.exit_code")), codes[rows]);
        if (rows == 0)
            assert_string_equal(jstr(obs, "content"), "one");
        json_decref(obs);
        rows++;
    }
    assert_int_equal(rows, 3);
    sqlite3_finalize(st);
    sqlite3_close(h);
    free(db);

    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- 10. delete ---- */

static void test_delete(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    char *id = strdup(jstr(s, "id"));
    json_decref(s);
    char *dir = strdupf("%s/run/%s", harness_eng->state_dir, id);
    assert_true(path_exists(dir));
    assert_int_equal(count_containers_of(id), 1);

    char *path = strdupf("/v1/sessions/%s", id);
    struct reply r;
    api(harness_eng, "DELETE", path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "deleted");
    assert_string_equal(jstr(r.json, "id"), id);
    reply_free(&r);

    /* The container is gone (Docker's own list, filtered by label) and so is the socket dir. */
    char *l = strdupf("paddock.session=%s", id);
    const char *labels[] = {l, NULL};
    json_t *list = docker_containers_with_labels(labels);
    assert_true(json_is_array(list));
    char *d = json_dumps(list, JSON_COMPACT);
    assert_string_equal(d, "[]");
    free(d);
    json_decref(list);
    free(l);
    assert_false(path_exists(dir));

    /* Deleted sessions are history: GET still answers, the list hides them, ?all=1 shows. */
    api(harness_eng, "GET", path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "deleted");
    reply_free(&r);
    api(harness_eng, "GET", "/v1/sessions", NULL, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(r.json, "sessions"), i, row)
    {
        assert_string_not_equal(jstr(row, "id"), id);
    }
    reply_free(&r);

    char *exec = strdupf("/v1/sessions/%s/execute_action", id);
    api(harness_eng, "POST", exec,
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"echo x\"}}}", &r);
    assert_true(r.status == 409 || r.status == 404);
    assert_true(json_is_string(jpath(r.json, "error.code")));
    reply_free(&r);
    /* A second delete is refused, not a crash. */
    api(harness_eng, "DELETE", path, NULL, &r);
    assert_true(r.status == 409 || r.status == 404);
    reply_free(&r);
    free(exec);
    free(path);
    free(dir);
    free(id);
}

/* ---- info ---- */

static void test_info(void **state)
{
    struct reply r;
    /* The engine asks Docker for its version right after it starts listening. */
    double deadline = now_ms() + 5000;
    for (;;) {
        api(harness_eng, "GET", "/v1/info", NULL, &r);
        assert_int_equal(r.status, 200);
        if (json_is_true(jpath(r.json, "docker.reachable")) || now_ms() > deadline)
            break;
        reply_free(&r);
        sleep_ms(50);
    }
    assert_string_equal(jstr(r.json, "api"), "v1");
    assert_string_equal(jstr(r.json, "state_dir"), harness_eng->state_dir);
    assert_string_equal(jstr(r.json, "default_image"), HARNESS_IMAGE);
    assert_true(json_is_string(json_object_get(r.json, "version")));
    assert_true(json_is_true(jpath(r.json, "docker.reachable")));
    assert_true(json_is_string(jpath(r.json, "docker.api_version")));
    /* docs/architecture.md: docker = {"reachable", "api_version", "error"}; null when fine. */
    bool has_error = json_object_get(json_object_get(r.json, "docker"), "error") != NULL;
    bool error_null = json_is_null(jpath(r.json, "docker.error"));
    if (!has_error)
        fprintf(stderr, "GET /v1/info has no docker.error: %s\n", r.body);
    reply_free(&r);
    assert_true(has_error);
    assert_true(error_null);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info),      cmocka_unit_test(test_create_hardened),
        cmocka_unit_test(test_echo),      cmocka_unit_test(test_cd_and_export),
        cmocka_unit_test(test_exit_code), cmocka_unit_test(test_unprivileged),
        cmocka_unit_test(test_env),       cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_history),   cmocka_unit_test(test_delete),
    };
    int failed =
        cmocka_run_group_tests_name("engine", tests, harness_group_setup, harness_group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
