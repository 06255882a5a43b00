/* The terminal endpoint (engine/terminal.c) against a real engine and Docker: an HTTP upgrade
 * on the unix socket, a shell in the sandbox, resize, exit codes, refusals, clean-up. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char *sid;

/* The upgrade: status and X-Paddock-Terminal; the connection stays open in *fd for 101. */
static int term_open(const char *query, int *fd, char *tid, size_t tidsz, char *body, size_t bodysz,
                     bool upgrade_headers)
{
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", harness_eng->op_socket);
    assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "POST /v1/sessions/%s/terminal%s HTTP/1.1\r\nHost: x\r\n%sContent-Length: "
                     "0\r\n\r\n",
                     sid, query, upgrade_headers ? "Connection: Upgrade\r\nUpgrade: tcp\r\n" : "");
    assert_int_equal(write(s, req, (size_t)n), n);
    char buf[8192];
    size_t len = 0;
    char *end = NULL;
    while (!end && len < sizeof(buf) - 1) {
        ssize_t r = read(s, buf + len, sizeof(buf) - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    assert_non_null(end);
    int status = 0;
    sscanf(buf, "HTTP/1.1 %d", &status);
    tid[0] = '\0';
    char *h = strcasestr(buf, "X-Paddock-Terminal: ");
    if (h)
        sscanf(h + 20, "%31[0-9a-f]", tid);
    (void)tidsz;
    if (body) {
        /* the error body (Connection: close after an error reply, or its length) */
        size_t have = len - (size_t)(end + 4 - buf);
        memcpy(body, end + 4, have < bodysz ? have : bodysz - 1);
        body[have < bodysz ? have : bodysz - 1] = '\0';
        if (status != 101 && !strchr(body, '}')) {
            ssize_t r = read(s, body + have, bodysz - 1 - have);
            if (r > 0)
                body[have + (size_t)r] = '\0';
        }
    }
    if (status == 101)
        *fd = s;
    else
        close(s);
    return status;
}

/* Read until want appears in out (≤ 10 s); returns whether it did. out keeps what was read
 * before (NUL-terminated; empty for a fresh expectation): one read may bring the output of
 * several commands, so a later expectation must search what an earlier one already read. */
static bool term_expect_more(int fd, const char *want, char *out, size_t outsz)
{
    size_t len = strlen(out);
    double t0 = now_ms();
    while (!strstr(out, want) && now_ms() - t0 < 10000) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 500) <= 0)
            continue;
        if (len + 1 >= outsz)
            memmove(out, out + outsz / 2, (len -= outsz / 2));
        ssize_t r = read(fd, out + len, outsz - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        out[len] = '\0';
    }
    return strstr(out, want) != NULL;
}

/* The same, with nothing read before. */
static bool term_expect(int fd, const char *want, char *out, size_t outsz)
{
    out[0] = '\0';
    return term_expect_more(fd, want, out, outsz);
}

/* Read to the end (≤ 10 s): true when the engine closed the connection. */
static bool term_closed(int fd)
{
    char buf[4096];
    double t0 = now_ms();
    while (now_ms() - t0 < 10000) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 500) <= 0)
            continue;
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r == 0)
            return true;
        if (r < 0 && errno != EINTR)
            return true;
    }
    return false;
}

static int setup(void **state)
{
    harness_group_setup(state);
    json_t *s = session_new(harness_eng, "{\"name\": \"term\"}");
    sid = strdup(jstr(s, "id"));
    json_decref(s);
    return 0;
}

static int teardown(void **state)
{
    session_delete(harness_eng, sid);
    free(sid);
    return harness_group_teardown_clean(state);
}

static void test_shell_echo_resize_exit(void **state)
{
    int fd = -1;
    char tid[32], out[16384];
    assert_int_equal(term_open("?rows=30&cols=100", &fd, tid, sizeof(tid), NULL, 0, true), 101);
    assert_int_equal(strlen(tid), 16);
    const char *cmd = "echo hi-$((40+2)); stty size; id -u\r";
    assert_int_equal(write(fd, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
    assert_true(term_expect(fd, "hi-42", out, sizeof(out)));
    assert_true(term_expect_more(fd, "1000", out, sizeof(out)));
    /* resize through the API, then the shell sees it */
    char *rpath = strdupf("/v1/sessions/%s/terminal/resize", sid);
    char *body = strdupf("{\"terminal\": \"%s\", \"rows\": 33, \"cols\": 101}", tid);
    struct reply r;
    api(harness_eng, "POST", rpath, body, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    const char *sz = "stty size\r";
    assert_int_equal(write(fd, sz, strlen(sz)), (ssize_t)strlen(sz));
    assert_true(term_expect(fd, "33 101", out, sizeof(out)));
    /* Ctrl-C reaches the shell (a long sleep ends), the terminal stays */
    const char *sl = "sleep 100\r";
    assert_int_equal(write(fd, sl, strlen(sl)), (ssize_t)strlen(sl));
    usleep(300000);
    assert_int_equal(write(fd, "\x03", 1), 1);
    const char *after = "echo after-$((2*21))\r";
    assert_int_equal(write(fd, after, strlen(after)), (ssize_t)strlen(after));
    assert_true(term_expect(fd, "after-42", out, sizeof(out)));
    /* the shell's exit ends the connection; its code is kept */
    const char *ex = "exit 3\r";
    assert_int_equal(write(fd, ex, strlen(ex)), (ssize_t)strlen(ex));
    assert_true(term_closed(fd));
    close(fd);
    char *gpath = strdupf("/v1/sessions/%s/terminal/%s", sid, tid);
    api(harness_eng, "GET", gpath, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_false(json_is_true(json_object_get(r.json, "running")));
    assert_int_equal(json_integer_value(json_object_get(r.json, "exit_code")), 3);
    reply_free(&r);
    /* a resize of an ended terminal */
    api(harness_eng, "POST", rpath, body, &r);
    assert_int_equal(r.status, 409);
    reply_free(&r);
    /* the record has it */
    json_t *ev = session_events(harness_eng, sid);
    json_t *opened = events_find(ev, "terminal");
    assert_non_null(opened);
    assert_non_null(strstr(jstr(opened, "detail"), tid));
    json_decref(ev);
    free(rpath);
    free(body);
    free(gpath);
}

/* Piped input (?tty=0): the client's half-close ends the command's stdin. */
static void test_piped(void **state)
{
    int fd = -1;
    char tid[32], out[4096];
    assert_int_equal(term_open("?tty=0", &fd, tid, sizeof(tid), NULL, 0, true), 101);
    const char *in = "echo piped-$((3*3))\nexit 6\n";
    assert_int_equal(write(fd, in, strlen(in)), (ssize_t)strlen(in));
    shutdown(fd, SHUT_WR);
    assert_true(term_expect(fd, "piped-9", out, sizeof(out)));
    assert_null(strstr(out, "$ ")); /* no prompt without a TTY */
    assert_true(term_closed(fd));
    close(fd);
    char *gpath = strdupf("/v1/sessions/%s/terminal/%s", sid, tid);
    struct reply r;
    api(harness_eng, "GET", gpath, NULL, &r);
    assert_int_equal(json_integer_value(json_object_get(r.json, "exit_code")), 6);
    reply_free(&r);
    free(gpath);
}

/* The client going away hangs the shell up: no process of it is left in the container. */
static void test_client_close_ends_shell(void **state)
{
    int fd = -1;
    char tid[32], out[4096];
    assert_int_equal(term_open("?cmd=sleep%20321", &fd, tid, sizeof(tid), NULL, 0, true), 101);
    usleep(500000);
    struct reply r;
    char *top = NULL;
    json_t *s = NULL;
    char *spath = strdupf("/v1/sessions/%s", sid);
    api(harness_eng, "GET", spath, NULL, &r);
    top = strdupf("/v1.41/containers/%s/top", jstr(r.json, "container_id"));
    reply_free(&r);
    docker("GET", top, &r);
    assert_non_null(strstr(r.body, "sleep 321"));
    reply_free(&r);
    close(fd);
    bool gone = false;
    for (int i = 0; i < 50 && !gone; i++) {
        usleep(100000);
        docker("GET", top, &r);
        gone = r.status == 200 && !strstr(r.body, "sleep 321");
        reply_free(&r);
    }
    assert_true(gone);
    (void)out;
    (void)s;
    free(top);
    free(spath);
}

static void test_refusals(void **state)
{
    int fd = -1;
    char tid[32], body[2048];
    /* no upgrade headers */
    assert_int_equal(term_open("", &fd, tid, sizeof(tid), body, sizeof(body), false), 400);
    assert_non_null(strstr(body, "upgrade"));
    assert_int_equal(term_open("?rows=0", &fd, tid, sizeof(tid), body, sizeof(body), true), 400);
    assert_int_equal(term_open("?user=mallory", &fd, tid, sizeof(tid), body, sizeof(body), true),
                     400);
    /* unknown session */
    char *saved = sid;
    sid = "0000000000000000";
    assert_int_equal(term_open("", &fd, tid, sizeof(tid), body, sizeof(body), true), 404);
    sid = saved;
    /* resize: unknown terminal, bad values */
    char *rpath = strdupf("/v1/sessions/%s/terminal/resize", sid);
    struct reply r;
    api(harness_eng, "POST", rpath,
        "{\"terminal\": \"ffffffffffffffff\", \"rows\": 5, \"cols\": 5}", &r);
    assert_int_equal(r.status, 404);
    reply_free(&r);
    api(harness_eng, "POST", rpath, "{\"terminal\": \"x\", \"rows\": 0, \"cols\": 5}", &r);
    assert_int_equal(r.status, 400);
    reply_free(&r);
    api(harness_eng, "POST", rpath, "not json", &r);
    assert_int_equal(r.status, 400);
    reply_free(&r);
    free(rpath);
    /* a paused session has no terminal */
    char *p = strdupf("/v1/sessions/%s/pause", sid);
    api(harness_eng, "POST", p, NULL, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    assert_int_equal(term_open("", &fd, tid, sizeof(tid), body, sizeof(body), true), 409);
    assert_non_null(strstr(body, "paused"));
    free(p);
    p = strdupf("/v1/sessions/%s/resume", sid);
    api(harness_eng, "POST", p, NULL, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    free(p);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shell_echo_resize_exit),
        cmocka_unit_test(test_piped),
        cmocka_unit_test(test_client_close_ends_shell),
        cmocka_unit_test(test_refusals),
    };
    int failed = cmocka_run_group_tests_name("terminal", tests, setup, teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
