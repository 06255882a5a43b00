/* A hostile local API client (docs/security.md): malformed requests get the JSON error
 * envelope, never libmicrohttpd's HTML, a later head on a kept connection too (but for what
 * libmicrohttpd cannot parse at all, which ends with its error or a close); a kept connection's
 * next head has the head deadline; %00 in a path is a 400; oversized env and unknown action fields
 * are refused before Docker or the executor is asked; a download that breaks off says so; heads and
 * bodies have deadlines (408); and thousands of idle or slow connections on both listeners leave
 * `paddock ls` and an authenticated TCP request answering, while an event stream outlives the
 * deadlines. */
#include "harness.h"
#include "netclient.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define FLOOD 2000

/* ---- raw connections ---- */

/* Non-blocking for the flood: a unix connect to a full backlog would otherwise wait. */
static int connect_unix_flags(const char *path, int flags)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int connect_unix(const char *path)
{
    return connect_unix_flags(path, 0);
}

static int connect_tcp_flags(int port, int flags)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the server may close first: its reply is what the test checks */
        p += w;
        n -= (size_t)w;
    }
}

/* Appends what fd has before the deadline to *buf (NUL-terminated): 1 when bytes came, 0 when
 * the peer closed it, -1 when the deadline passed first. */
static int recv_append(int fd, double deadline, char **buf, size_t *len)
{
    long left = (long)(deadline - now_ms());
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (left <= 0 || poll(&p, 1, (int)left) <= 0)
        return -1;
    char chunk[65536];
    ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (n <= 0)
        return 0;
    *buf = realloc(*buf, *len + (size_t)n + 1);
    memcpy(*buf + *len, chunk, (size_t)n);
    *len += (size_t)n;
    (*buf)[*len] = '\0';
    return 1;
}

/* What comes until the server closes or ms pass (malloc'd, NULL when nothing came); whether
 * it closed. */
static char *read_all(int fd, long ms, bool *closed)
{
    char *buf = NULL;
    size_t len = 0;
    double deadline = now_ms() + ms;
    int rc;
    while ((rc = recv_append(fd, deadline, &buf, &len)) > 0)
        ;
    *closed = rc == 0;
    return buf;
}

/* A reply's status line's code and its body after the head (malloc'd, into *body); -1 when
 * buf holds none. */
static long reply_status(const char *buf, char **body)
{
    long status = -1;
    *body = NULL;
    if (buf && sscanf(buf, "HTTP/1.%*d %ld", &status) == 1) {
        char *b = strstr(buf, "\r\n\r\n");
        *body = strdup(b ? b + 4 : "");
    }
    return status;
}

/* Read until the server closes or ms pass; the status line's code, the body after the head
 * (malloc'd, into *body). -1 when nothing came. */
static long read_reply(int fd, long ms, char **body)
{
    bool closed;
    char *buf = read_all(fd, ms, &closed);
    long status = reply_status(buf, body);
    free(buf);
    return status;
}

/* The reply must be the JSON envelope with this status and code. */
static void expect_envelope(long status, char *body, long want, const char *code)
{
    json_t *j = body ? json_loads(body, 0, NULL) : NULL;
    if (status != want || !j || !jstr(j, "error.code") || strcmp(jstr(j, "error.code"), code) ||
        !jstr(j, "error.message"))
        fail_msg("want %ld %s in the JSON envelope, got %ld: %.300s", want, code, status,
                 body ? body : "(nothing)");
    json_decref(j);
    free(body);
}

static void raw_unix_expect(const char *request, size_t len, long want, const char *code)
{
    int fd = connect_unix(harness_eng->socket);
    assert_true(fd >= 0);
    send_all(fd, request, len);
    char *body;
    long st = read_reply(fd, 30000, &body);
    close(fd);
    expect_envelope(st, body, want, code);
}

#define RAW(s, want, code) raw_unix_expect(s, sizeof(s) - 1, want, code)

/* ---- the engine ---- */

static int group_setup(void **state)
{
    harness_eng = engine_new();
    harness_eng->extra_env[0] = "PADDOCK_HEADER_TIMEOUT=2";
    harness_eng->extra_env[1] = "PADDOCK_BODY_TIMEOUT=2";
    harness_eng->extra_env[2] = "PADDOCK_CONFIRM=never";
    if (engine_start(harness_eng) == 0)
        return 0;
    engine_destroy(harness_eng);
    harness_eng = NULL;
    return -1;
}

/* Each of what libmicrohttpd used to answer with an HTML page. */
static void test_malformed_heads_json(void **state)
{
    (void)state;
    RAW("GET /v1/info HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http_version_not_supported");
    RAW("GET /v1/info HTTP/0.9\r\nHost: x\r\n\r\n", 505, "http_version_not_supported");
    RAW("GET /v1/info HTTP/1.1\r\n\r\n", 400, "bad_request"); /* no Host */
    RAW("GARBAGE\r\n\r\n", 400, "bad_request");
    RAW("GET /v1/info HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n", 400, "bad_request");
    RAW("POST /v1/risk HTTP/1.1\r\nHost: x\r\nContent-Length: 12x\r\n\r\n", 400, "bad_request");
    RAW("POST /v1/risk HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400,
        "bad_request");
    RAW("POST /v1/risk HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "bad_request");
    size_t big = 20000;
    char *req = malloc(big + 100);
    int n = snprintf(req, 100, "GET /v1/info HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(req + n, 'a', big);
    memcpy(req + n + big, "\r\n\r\n", 4);
    raw_unix_expect(req, (size_t)n + big + 4, 431, "headers_too_large");
    free(req);
}

/* The decoded path is cut at the NUL; the raw one shows it. */
static void test_nul_in_path(void **state)
{
    (void)state;
    RAW("GET /v1/info%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request");
    struct reply r;
    api(harness_eng, "GET", "/v1/sessions/abc%00/actions", NULL, &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "error.code"), "bad_request");
    reply_free(&r);
    api(harness_eng, "GET", "/v1/info?x=%00", NULL, &r);
    assert_int_equal(r.status, 400);
    reply_free(&r);
}

static void test_head_deadline(void **state)
{
    (void)state;
    int fd = connect_unix(harness_eng->socket);
    assert_true(fd >= 0);
    send_all(fd, "GET /v1/info HTTP/1.1\r\nHo", 25);
    char *body;
    long st = read_reply(fd, 30000, &body);
    close(fd);
    expect_envelope(st, body, 408, "request_timeout");
}

static void test_body_deadline(void **state)
{
    (void)state;
    int fd = connect_unix(harness_eng->socket);
    assert_true(fd >= 0);
    static const char req[] = "POST /v1/risk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                              "\r\nContent-Length: 100\r\n\r\n{\"action\":";
    send_all(fd, req, sizeof(req) - 1);
    char *body;
    long st = read_reply(fd, 30000, &body);
    close(fd);
    expect_envelope(st, body, 408, "request_timeout");
}

/* A chunk announced at 100 MB: the 413 comes once 64 MiB are in, not after the whole. */
static void test_huge_chunk(void **state)
{
    (void)state;
    int fd = connect_unix(harness_eng->socket);
    assert_true(fd >= 0);
    static const char head[] = "POST /v1/risk HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked"
                               "\r\n\r\n5F5E100\r\n";
    send_all(fd, head, sizeof(head) - 1);
    size_t blk = 1 << 20;
    char *data = malloc(blk);
    memset(data, 'x', blk);
    char *reply = NULL;
    size_t rlen = 0;
    double deadline = now_ms() + 60000;
    while (now_ms() < deadline && !(reply && strstr(reply, "}}"))) {
        struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
        if (poll(&p, 1, 1000) <= 0)
            continue;
        if (p.revents & POLLIN) {
            char buf[4096];
            ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (n <= 0)
                break;
            reply = realloc(reply, rlen + (size_t)n + 1);
            memcpy(reply + rlen, buf, (size_t)n);
            rlen += (size_t)n;
            reply[rlen] = '\0';
        } else if (p.revents & POLLOUT) {
            (void)!send(fd, data, blk, MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
            break;
        }
    }
    close(fd);
    free(data);
    long st = -1;
    char *b = reply ? strstr(reply, "\r\n\r\n") : NULL;
    if (reply)
        sscanf(reply, "HTTP/1.%*d %ld", &st);
    expect_envelope(st, b ? strdup(b + 4) : NULL, 413, "too_large");
    free(reply);
}

/* 10 MB is what the review sent; each bound on its own too. Nothing reaches Docker: the
 * refusal is immediate and no session is recorded. */
static void test_env_bounds(void **state)
{
    (void)state;
    size_t big = 10u << 20;
    char *body = malloc(big + 64);
    int n = snprintf(body, 64, "{\"env\":{\"A\":\"");
    memset(body + n, 'a', big);
    strcpy(body + n + big, "\"}}");
    struct reply r;
    double t0 = now_ms();
    api(harness_eng, "POST", "/v1/sessions", body, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error.message"), "env.A"));
    reply_free(&r);
    free(body);
    /* 100,000 keys */
    size_t cap = 100000 * 16 + 64;
    body = malloc(cap);
    size_t len = (size_t)snprintf(body, cap, "{\"env\":{");
    for (int i = 0; i < 100000; i++)
        len += (size_t)snprintf(body + len, cap - len, "%s\"K%d\":\"v\"", i ? "," : "", i);
    snprintf(body + len, cap - len, "}}");
    api(harness_eng, "POST", "/v1/sessions", body, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error.message"), "variables"));
    reply_free(&r);
    free(body);
    /* 5 values of 60 KiB: each fits, the sum does not. */
    cap = 5 * 61440 + 200;
    body = malloc(cap);
    len = (size_t)snprintf(body, cap, "{\"env\":{");
    for (int i = 0; i < 5; i++) {
        len += (size_t)snprintf(body + len, cap - len, "%s\"V%d\":\"", i ? "," : "", i);
        memset(body + len, 'b', 61440);
        len += 61440;
        body[len++] = '"';
    }
    snprintf(body + len, cap - len, "}}");
    api(harness_eng, "POST", "/v1/sessions", body, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error.message"), "totals"));
    reply_free(&r);
    free(body);
    assert_true(now_ms() - t0 < 30000); /* a bound, not a timing: Docker was never asked */
    json_t *list = api_json(harness_eng, "GET", "/v1/sessions", NULL, 200);
    assert_int_equal(json_array_size(json_object_get(list, "sessions")), 0);
    json_decref(list);
}

static void test_unknown_action_field(void **state)
{
    (void)state;
    struct reply r;
    api(harness_eng, "POST", "/v1/risk",
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"ls\"}},\"extra\":1}", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error.message"), "\"extra\""));
    reply_free(&r);

    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    /* A 10 MB unknown field beside a command that would leave a mark. */
    size_t big = 10u << 20;
    char *body = malloc(big + 200);
    int n = snprintf(body, 200,
                     "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"touch "
                     "/tmp/ran\"}},\"pad\":\"");
    memset(body + n, 'p', big);
    strcpy(body + n + big, "\"}");
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    api(harness_eng, "POST", path, body, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error.message"), "\"pad\""));
    reply_free(&r);
    free(body);
    json_t *obs = session_run(harness_eng, id, "test -e /tmp/ran && echo ran || echo clean");
    assert_non_null(strstr(jstr(obs, "content"), "clean"));
    json_decref(obs);

    /* The same session: a download that fails on an unreadable file under /sys. Whether the
     * failure comes before the archive's first byte (the executor's own error) or after (the
     * stream breaks off), the reply says so, and never that the executor is not reachable. */
    char *dl = strdupf("/v1/sessions/%s/download_files?path=/sys/class/net/lo", id);
    api(harness_eng, "GET", dl, NULL, &r);
    const char *msg = r.status == 502 ? jstr(r.json, "error.message") : jstr(r.json, "detail");
    if (!msg || (r.status == 502 ? !strstr(msg, "broke off") : !strstr(msg, "Cannot archive")))
        fail_msg("the broken download: %ld %.300s", r.status, r.body);
    reply_free(&r);
    free(dl);
    free(path);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* Past both deadlines (2 s here), an event stream is still served: its ping comes at 15 s. */
static void test_stream_outlives_deadlines(void **state)
{
    (void)state;
    int fd = connect_unix(harness_eng->socket);
    assert_true(fd >= 0);
    static const char req[] = "GET /v1/events HTTP/1.1\r\nHost: x\r\n\r\n";
    send_all(fd, req, sizeof(req) - 1);
    char got[65536] = "";
    size_t len = 0;
    double t0 = now_ms();
    bool closed = false;
    while (!strstr(got, ": ping") && !closed && now_ms() - t0 < 40000 && len + 1 < sizeof(got)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0)
            continue;
        ssize_t n = recv(fd, got + len, sizeof(got) - 1 - len, 0);
        closed = n <= 0;
        len += n > 0 ? (size_t)n : 0;
        got[len] = '\0';
    }
    close(fd);
    assert_false(closed);
    assert_non_null(strstr(got, " 200 "));
    assert_non_null(strstr(got, ": ping"));
    assert_true(now_ms() - t0 > 2000);
}

/* ---- kept-alive connections on the unix socket ---- */

/* One reply off a connection that stays open: the head, then Content-Length bytes. The status;
 * the head and the body (malloc'd). -1 when no whole reply came within ms. */
static long read_one_reply(int fd, long ms, char **head, char **body)
{
    char *buf = NULL;
    size_t len = 0;
    double deadline = now_ms() + ms;
    long status = -1;
    *head = *body = NULL;
    do {
        char *end = buf ? strstr(buf, "\r\n\r\n") : NULL;
        if (!end)
            continue;
        const char *cl = strcasestr(buf, "\r\nContent-Length:");
        size_t want = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
        if (len - (size_t)(end + 4 - buf) >= want) {
            if (sscanf(buf, "HTTP/1.%*d %ld", &status) != 1)
                status = -1;
            *head = strndup(buf, (size_t)(end - buf));
            *body = strndup(end + 4, want);
            break;
        }
    } while (recv_append(fd, deadline, &buf, &len) > 0);
    free(buf);
    return status;
}

/* Whether the peer closes fd within ms (what it sends first is read away). */
static bool closed_within(int fd, long ms)
{
    bool closed;
    free(read_all(fd, ms, &closed));
    return closed;
}

static const char info_req[] = "GET /v1/info HTTP/1.1\r\nHost: x\r\n\r\n";

/* Three requests on one connection: each answered, the connection kept; an error reply closes
 * it (the client starts afresh, through the gate). */
static void test_keep_alive(void **state)
{
    (void)state;
    int fd = connect_unix(harness_eng->socket);
    assert_true(fd >= 0);
    for (int i = 0; i < 3; i++) {
        send_all(fd, info_req, sizeof(info_req) - 1);
        char *head, *body;
        long st = read_one_reply(fd, 30000, &head, &body);
        json_t *j = body ? json_loads(body, 0, NULL) : NULL;
        if (st != 200 || !j || !jstr(j, "version"))
            fail_msg("request %d on one connection: %ld %.300s", i + 1, st,
                     body ? body : "(nothing)");
        if (strcasestr(head, "Connection: close"))
            fail_msg("request %d: the reply closes the connection: %s", i + 1, head);
        json_decref(j);
        free(head);
        free(body);
    }
    static const char missing[] = "GET /v1/nothing-here HTTP/1.1\r\nHost: x\r\n\r\n";
    send_all(fd, missing, sizeof(missing) - 1);
    char *head, *body;
    long st = read_one_reply(fd, 30000, &head, &body);
    free(head);
    expect_envelope(st, body, 404, "not_found");
    if (!closed_within(fd, 30000))
        fail_msg("the connection stays open after an error reply");
    close(fd);
}

/* A connection whose first request got a 200, kept; -1 when not. */
static int kept_connection(void)
{
    int fd = connect_unix(harness_eng->socket);
    if (fd < 0)
        return -1;
    send_all(fd, info_req, sizeof(info_req) - 1);
    char *head, *body;
    long st = read_one_reply(fd, 30000, &head, &body);
    free(head);
    free(body);
    if (st != 200) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A kept connection's next head has the head deadline (2 s here) from the last reply, however
 * it trickles in: libmicrohttpd's own timeout (120 s, reset by each byte) would keep it. */
static void test_keep_alive_deadline(void **state)
{
    (void)state;
    int idle = kept_connection();
    int slow = kept_connection();
    assert_true(idle >= 0 && slow >= 0);
    /* The slow one sends a byte of its next head every 200 ms: never idle for a second. */
    static const char next[] = "GET /v1/info HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                               "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                               "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    bool slow_closed = false;
    double deadline = now_ms() + 30000;
    for (size_t i = 0; i < sizeof(next) - 1 && now_ms() < deadline && !slow_closed; i++) {
        if (send(slow, next + i, 1, MSG_NOSIGNAL) != 1)
            slow_closed = true;
        else
            slow_closed = closed_within(slow, 200);
    }
    if (!slow_closed)
        fail_msg("a kept connection trickling its next head was not closed at the deadline");
    if (!closed_within(idle, 30000))
        fail_msg("an idle kept connection was not closed at the head deadline");
    close(idle);
    close(slow);
}

/* A later head on a kept connection goes to libmicrohttpd without the gate: what the gate
 * refuses in a first head is refused in it too, with the same JSON envelope (its form
 * rebuilt from what libmicrohttpd parsed, api.c), nothing runs, and the connection closes.
 * What libmicrohttpd itself cannot parse gets its own error page or a close. */
static void test_keep_alive_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *head;
        long status;
        const char *code;
    } refused[] = {
        {"GET /v1/info HTTP/1.1\r\n\r\n", 400, "bad_request"}, /* no Host */
        {"GET /v1/info HTTP/1.2\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"},
        {"GET /v1/info HTTP/1.1\r\nHost: x\r\nX-A: a\x01"
         "b\r\n\r\n",
         400, "bad_request"},
        {"GET /v1/info HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400, "bad_request"},
        {"GET /v1/info HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n", 400, "bad_request"},
        {"GET http://x/v1/info HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"},
        {"GETGETGETGETGETGETGETGETGETGETGETGETGET /v1/info HTTP/1.1\r\nHost: x\r\n\r\n", 400,
         "bad_request"},
        {"POST /v1/risk HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: "
         "chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
         400, "bad_request"},
        {"POST /v1/risk HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
         400, "bad_request"},
        /* libmicrohttpd would read this body to the connection's end, and never answer */
        {"POST /v1/risk HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n{}", 400,
         "bad_request"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        int fd = kept_connection();
        assert_true(fd >= 0);
        send_all(fd, refused[i].head, strlen(refused[i].head));
        shutdown(fd, SHUT_WR); /* the client says no more: an answer must come all the same */
        bool closed;
        char *got = read_all(fd, 30000, &closed), *body;
        close(fd);
        if (!closed)
            fail_msg("later head %zu: the connection stays open", i + 1);
        long st = reply_status(got, &body);
        free(got);
        expect_envelope(st, body, refused[i].status, refused[i].code);
    }
    /* Over 16 KiB, as a first head would be. */
    size_t big = 20000;
    char *req = malloc(big + 100);
    int n = snprintf(req, 100, "GET /v1/info HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(req + n, 'a', big);
    memcpy(req + n + big, "\r\n\r\n", 4);
    int fd = kept_connection();
    assert_true(fd >= 0);
    send_all(fd, req, (size_t)n + big + 4);
    free(req);
    bool closed;
    char *got = read_all(fd, 30000, &closed), *body;
    close(fd);
    if (!closed)
        fail_msg("a 20 KiB later head: the connection stays open");
    long st = reply_status(got, &body);
    free(got);
    expect_envelope(st, body, 431, "headers_too_large");

    static const char *const unparsable[] = {
        "GARBAGE\r\n\r\n",
        "GET /v1/info HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n",
        "GET /v1/info HTTP/2.0\r\nHost: x\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(unparsable) / sizeof(unparsable[0]); i++) {
        fd = kept_connection();
        assert_true(fd >= 0);
        send_all(fd, unparsable[i], strlen(unparsable[i]));
        got = read_all(fd, 30000, &closed);
        close(fd);
        if (!closed)
            fail_msg("unparsable later head %zu: the connection stays open", i + 1);
        if (got && (sscanf(got, "HTTP/1.%*d %ld", &st) != 1 || st < 400 || st > 599))
            fail_msg("unparsable later head %zu: %.200s", i + 1, got);
        free(got);
    }
}

/* An engine of the test's own with the TCP listener on loopback: its port and token. */
static struct engine_proc *tcp_engine_start(int *port, char token[128])
{
    struct engine_proc *e = engine_new();
    e->extra_env[0] = "PADDOCK_LISTEN=127.0.0.1:0";
    assert_int_equal(engine_start(e), 0);
    struct reply info;
    api(e, "GET", "/v1/info", NULL, &info);
    const char *addr = jstr(info.json, "listen.address");
    assert_non_null(addr);
    *port = atoi(strchr(addr, ':') + 1);
    reply_free(&info);
    char *tpath = strdupf("%s/token", e->state_dir);
    FILE *f = fopen(tpath, "r");
    token[0] = '\0';
    assert_non_null(f);
    assert_non_null(fgets(token, 128, f));
    fclose(f);
    free(tpath);
    token[strcspn(token, "\n")] = '\0';
    return e;
}

/* Over TCP a kept connection is no way around the token: each request needs it, and the 401
 * of one without it closes the connection. */
static void test_keep_alive_tcp(void **state)
{
    (void)state;
    int port;
    char token[128];
    struct engine_proc *e = tcp_engine_start(&port, token);
    char *authed = strdupf("GET /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                           "%s\r\n\r\n",
                           token);
    int fd = connect_tcp_flags(port, 0);
    assert_true(fd >= 0);
    for (int i = 0; i < 2; i++) {
        send_all(fd, authed, strlen(authed));
        char *head, *body;
        long st = read_one_reply(fd, 30000, &head, &body);
        if (st != 200 || strcasestr(head, "Connection: close"))
            fail_msg("authenticated request %d over TCP: %ld %s", i + 1, st,
                     head ? head : "(nothing)");
        free(head);
        free(body);
    }
    static const char bare[] = "GET /v1/sessions HTTP/1.1\r\nHost: x\r\n\r\n";
    send_all(fd, bare, sizeof(bare) - 1);
    char *head, *body;
    long st = read_one_reply(fd, 30000, &head, &body);
    free(head);
    expect_envelope(st, body, 401, "unauthorized");
    if (!closed_within(fd, 30000))
        fail_msg("the connection stays open after a 401");
    close(fd);
    free(authed);
    assert_int_equal(engine_stop(e), 0);
    engine_destroy(e);
}

/* ---- the flood: its own engine with the default deadlines and the TCP listener ---- */

static void test_flood(void **state)
{
    (void)state;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2 * FLOOD + 256) {
        rl.rlim_cur = rl.rlim_max < 2 * FLOOD + 256 ? rl.rlim_max : 2 * FLOOD + 256;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < 2 * FLOOD + 64)
        fail_msg("RLIMIT_NOFILE is %llu: the flood needs %d descriptors",
                 (unsigned long long)rl.rlim_cur, 2 * FLOOD + 64);
    int port;
    char token[128];
    struct engine_proc *e = tcp_engine_start(&port, token);

    /* Idle, and slow: a third send half a request line and stop. */
    int *fds = malloc(2 * FLOOD * sizeof(int));
    int open_fds = 0;
    /* A full backlog refuses a unix connect (EAGAIN): retried, until a generous deadline,
     * so a listener that stops accepting fails the test instead of hanging it. */
    double deadline = now_ms() + 60000;
    for (int i = 0; i < FLOOD && now_ms() < deadline; i++) {
        int u;
        while ((u = connect_unix_flags(e->socket, SOCK_NONBLOCK)) < 0 && now_ms() < deadline)
            sleep_ms(1);
        int t = connect_tcp_flags(port, SOCK_NONBLOCK);
        if (u >= 0)
            fds[open_fds++] = u;
        if (t >= 0)
            fds[open_fds++] = t;
    }
    for (int i = 0; i < open_fds; i += 3)
        (void)!send(fds[i], "GET /v1/info HTTP/1.1\r\nHo", 25, MSG_NOSIGNAL | MSG_DONTWAIT);
    /* A listener that stops accepting fills its backlog and refuses the rest. */
    if (open_fds < 2 * FLOOD * 9 / 10)
        fail_msg("only %d of %d connections could be opened", open_fds, 2 * FLOOD);

    /* The CLI answers on the operator's socket, and a client of the agents' socket the flood
     * is on still gets its answer too. */
    char *argv[] = {(char *)harness_bin(), "--state-dir", e->state_dir, "ls", NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 30000, &pr);
    if (pr.status != 0)
        fail_msg("paddock ls under the flood: status %d: %s", pr.status, pr.err);
    assert_non_null(strstr(pr.out, "STATE"));
    proc_result_free(&pr);
    struct reply ar;
    api_agent(e, "GET", "/v1/sessions", NULL, &ar);
    if (ar.status != 200)
        fail_msg("GET /v1/sessions on the agents' socket under the flood: %ld %s", ar.status,
                 ar.body ? ar.body : ar.err);
    reply_free(&ar);

    char *url = strdupf("http://127.0.0.1:%d/v1/sessions", port);
    char *auth = strdupf("Bearer %s", token);
    const char *headers[] = {net_header("Authorization", auth), NULL};
    struct net_req q = {.url = url, .headers = headers, .timeout_ms = 30000};
    struct net_reply r;
    net_do(&q, &r);
    if (r.r.status != 200)
        fail_msg("an authenticated TCP request under the flood: %ld %s", r.r.status,
                 r.r.status < 0 ? r.r.err : r.r.body);
    net_reply_free(&r);
    free(url);
    free(auth);

    for (int i = 0; i < open_fds; i++)
        close(fds[i]);
    free(fds);
    assert_int_equal(engine_stop(e), 0);
    engine_destroy(e);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_heads_json),
        cmocka_unit_test(test_nul_in_path),
        cmocka_unit_test(test_head_deadline),
        cmocka_unit_test(test_body_deadline),
        cmocka_unit_test(test_huge_chunk),
        cmocka_unit_test(test_env_bounds),
        cmocka_unit_test(test_unknown_action_field),
        cmocka_unit_test(test_stream_outlives_deadlines),
        cmocka_unit_test(test_keep_alive),
        cmocka_unit_test(test_keep_alive_deadline),
        cmocka_unit_test(test_keep_alive_malformed),
        cmocka_unit_test(test_keep_alive_tcp),
        cmocka_unit_test(test_flood),
    };
    int rc = cmocka_run_group_tests(tests, group_setup, harness_group_teardown_clean);
    return rc || harness_teardown_failed;
}
