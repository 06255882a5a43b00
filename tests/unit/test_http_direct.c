/* The executor channel's own HTTP client (engine/docker/http_direct.c), against a scripted
 * executor on a unix socket on the same loop (a fake inside a unit test; the real executor is
 * the integration suites'): kept connections, replies split anywhere, hostile replies, a peer
 * check that refuses, a kept connection the executor closed, deadlines and cancelling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/buf.h"
#include "engine/base/loop.h"
#include "engine/docker/http.h"

/* ---- the scripted executor ---- */

struct fake {
    struct loop *l;
    int lfd;
    char path[108];
    int accepts, requests, closes;
    bool dropped_once;
    struct fconn *conns; /* open ones, for fake_stop */
    struct http *h;      /* the client under test, on the same loop */
    char last_head[2048];
    char last_body[256];
};

struct fconn {
    struct fake *f;
    struct fconn *next;
    int fd;
    struct buf in;
};

static void put(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void fconn_close(struct fconn *c)
{
    for (struct fconn **pp = &c->f->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    c->f->closes++;
    loop_del_fd(c->f->l, c->fd);
    close(c->fd);
    buf_free(&c->in);
    free(c);
}

/* One request's reply, chosen by its target. false: the connection was closed. */
static bool reply(struct fconn *c, const char *target)
{
    int fd = c->fd;
    if (strncmp(target, "/len", 4) == 0) {
        const char *r = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Two: a b \r\n"
                        "Content-Length: 5\r\n\r\nhello";
        put(fd, r, strlen(r));
    } else if (strncmp(target, "/bytewise", 9) == 0) {
        /* Chunked, one byte a write: the client sees it split anywhere. */
        const char *r = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "3\r\none\r\n4;ext=1\r\n two\r\n6\r\n three\r\n0\r\nX-T: 1\r\n\r\n";
        for (size_t i = 0; r[i]; i++)
            put(fd, r + i, 1);
    } else if (strncmp(target, "/error", 6) == 0) {
        const char *r = "HTTP/1.1 409 Conflict\r\nContent-Length: 11\r\n\r\n{\"busy\":1}\n";
        put(fd, r, strlen(r));
    } else if (strcmp(target, "/noreply-once") == 0 && c->f->dropped_once) {
        const char *r = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nagain";
        put(fd, r, strlen(r));
    } else if (strcmp(target, "/noreply-gone") == 0) {
        unlink(c->f->path); /* the executor went away: the retry cannot connect */
        fconn_close(c);
        return false;
    } else if (strncmp(target, "/noreply", 8) == 0) {
        c->f->dropped_once = true;
        fconn_close(c); /* as an executor whose idle timeout struck */
        return false;
    } else if (strncmp(target, "/hang", 5) == 0) {
        /* nothing: the client's deadline or its cancel ends it */
    } else if (strncmp(target, "/eof", 4) == 0) {
        const char *r = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort";
        put(fd, r, strlen(r));
        fconn_close(c);
        return false;
    } else if (strncmp(target, "/until-close", 12) == 0) {
        const char *r = "HTTP/1.0 200 OK\r\n\r\nall of it";
        put(fd, r, strlen(r));
        fconn_close(c);
        return false;
    } else {
        /* The hostile ones: each must fail its request and never be kept. */
        static const struct {
            const char *target, *reply;
        } bad[] = {
            {"/garbage", "SSH-2.0-OpenSSH\r\n\r\n"},
            {"/badchunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"},
            {"/overchunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n"},
            {"/gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"},
            {"/badlen", "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n"},
            {"/hugelen", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"},
            {"/big", "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
            if (strcmp(target, bad[i].target) == 0) {
                put(fd, bad[i].reply, strlen(bad[i].reply));
                if (strcmp(target, "/big") == 0) {
                    static char x[5000];
                    memset(x, 'x', sizeof(x));
                    put(fd, x, sizeof(x));
                }
            }
        if (strcmp(target, "/hugehead") == 0) {
            const char *r = "HTTP/1.1 200 OK\r\n";
            put(fd, r, strlen(r));
            static char line[70 * 1024];
            memset(line, 'h', sizeof(line));
            memcpy(line, "X-Long: ", 8);
            put(fd, line, sizeof(line));
        }
    }
    return true;
}

static void fconn_on(int fd, uint32_t ev, void *ud)
{
    struct fconn *c = ud;
    char tmp[4096];
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n <= 0) {
        fconn_close(c);
        return;
    }
    buf_append(&c->in, tmp, (size_t)n);
    for (;;) {
        char *end = c->in.data ? strstr(c->in.data, "\r\n\r\n") : NULL;
        if (!end)
            return;
        size_t head_len = (size_t)(end - c->in.data) + 4, body_len = 0;
        const char *cl = strcasestr(c->in.data, "Content-Length: ");
        if (cl && cl < end)
            body_len = strtoul(cl + 16, NULL, 10);
        if (c->in.len < head_len + body_len)
            return;
        struct fake *f = c->f;
        f->requests++;
        snprintf(f->last_head, sizeof(f->last_head), "%.*s", (int)head_len, c->in.data);
        snprintf(f->last_body, sizeof(f->last_body), "%.*s", (int)body_len, c->in.data + head_len);
        char target[128] = "";
        sscanf(c->in.data, "%*s %127s", target);
        buf_consume(&c->in, head_len + body_len);
        if (!reply(c, target))
            return;
    }
}

static void fake_on_accept(int fd, uint32_t ev, void *ud)
{
    struct fake *f = ud;
    int s = accept(fd, NULL, NULL);
    if (s < 0)
        return;
    struct fconn *c = calloc(1, sizeof(*c));
    c->f = f;
    c->fd = s;
    c->next = f->conns;
    f->conns = c;
    f->accepts++;
    loop_add_fd(f->l, s, EPOLLIN, fconn_on, c);
}

static void fake_start(struct fake *f)
{
    f->l = loop_new();
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(f->path, sizeof(f->path), "/tmp/paddock-direct-%d.sock", (int)getpid());
    strcpy(sa.sun_path, f->path);
    unlink(f->path);
    f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(f->lfd, 8), 0);
    assert_int_equal(loop_add_fd(f->l, f->lfd, EPOLLIN, fake_on_accept, f), 0);
}

static void fake_stop(struct fake *f)
{
    while (f->conns)
        fconn_close(f->conns);
    loop_del_fd(f->l, f->lfd);
    close(f->lfd);
    unlink(f->path);
    loop_free(f->l);
}

/* ---- the client's side ---- */

static int refuse_peer;

static int peer_check(int fd, const char *arg, char *err, size_t errlen)
{
    (void)fd;
    if (strcmp(arg, "the-arg") != 0) {
        snprintf(err, errlen, "peer check got %s", arg);
        return -2;
    }
    if (refuse_peer) {
        snprintf(err, errlen, "not our executor");
        return -1;
    }
    return 0;
}

struct res {
    struct loop *l;
    int done;
    long status;
    char body[256];
    char error[256];
    char ctype[64], two[64];
    int connect_failed, peer_refused, timed_out;
    char streamed[256];
};

static void on_done(const struct http_result *r, void *ud)
{
    struct res *x = ud;
    x->done++;
    x->status = r->status;
    snprintf(x->body, sizeof(x->body), "%.*s", (int)r->len, r->body);
    snprintf(x->error, sizeof(x->error), "%s", r->error ? r->error : "");
    x->connect_failed = r->connect_failed;
    x->peer_refused = r->peer_refused;
    x->timed_out = r->timed_out;
    const char *ct = r->status > 0 ? http_result_header(r, "content-type") : NULL;
    const char *two = r->status > 0 ? http_result_header(r, "X-Two") : NULL;
    /* Both pointers still good after the second lookup. */
    snprintf(x->ctype, sizeof(x->ctype), "%s", ct ? ct : "");
    snprintf(x->two, sizeof(x->two), "%s", two ? two : "");
    loop_stop(x->l);
}

static int on_data(const char *p, size_t n, void *ud)
{
    struct res *x = ud;
    strncat(x->streamed, p, n < sizeof(x->streamed) - strlen(x->streamed) - 1 ? n : 0);
    return 0;
}

static void on_deadline(void *ud)
{
    loop_stop(ud);
}

/* One request to the fake, run to its callback (5 s at most). */
static void run(struct fake *f, struct http *h, const char *target, const char *body, bool stream,
                long timeout_ms, struct res *x)
{
    char url[160];
    snprintf(url, sizeof(url), "http://executor%s", target);
    memset(x, 0, sizeof(*x));
    x->l = f->l;
    static const char *const extra[] = {"X-Key: k1", NULL};
    struct http_request req = {.method = body ? "POST" : "GET",
                               .unix_socket = f->path,
                               .url = url,
                               .body = body,
                               .body_len = body ? strlen(body) : 0,
                               .headers = extra,
                               .on_data = stream ? on_data : NULL,
                               .timeout_ms = timeout_ms,
                               .max_body = 1000,
                               .peer_check = peer_check,
                               .peer_arg = "the-arg"};
    assert_int_equal(http_start(h, &req, on_done, x), 0);
    struct loop_timer *t = loop_timer_add(f->l, 5000, on_deadline, f->l);
    if (x->done == 0)
        loop_run(f->l);
    loop_timer_cancel(f->l, t);
    assert_int_equal(x->done, 1);
}

static int setup(void **state)
{
    struct fake *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fake_start(f);
    f->h = http_new(f->l);
    *state = f;
    return f->h ? 0 : -1;
}

static int teardown(void **state)
{
    struct fake *f = *state;
    http_free(f->h);
    fake_stop(f);
    free(f);
    return 0;
}

static void test_kept_connection(void **state)
{
    struct fake *f = *state;
    struct http *h = f->h;
    struct res x;
    for (int i = 0; i < 3; i++) {
        run(f, h, "/len", "{\"a\":1}", false, 0, &x);
        assert_int_equal(x.status, 200);
        assert_string_equal(x.body, "hello");
        assert_string_equal(x.ctype, "text/plain");
        assert_string_equal(x.two, "a b");
    }
    /* Three requests, one connection; each as sent. */
    assert_int_equal(f->accepts, 1);
    assert_int_equal(f->requests, 3);
    assert_non_null(strstr(f->last_head, "POST /len HTTP/1.1\r\nHost: executor\r\n"));
    assert_non_null(strstr(f->last_head, "X-Key: k1\r\n"));
    assert_non_null(strstr(f->last_head, "Content-Length: 7\r\n"));
    assert_string_equal(f->last_body, "{\"a\":1}");
    /* An error reply is buffered even for a streaming request, and keeps the connection. */
    run(f, h, "/error", "{}", true, 0, &x);
    assert_int_equal(x.status, 409);
    assert_string_equal(x.body, "{\"busy\":1}\n");
    assert_string_equal(x.streamed, "");
    assert_int_equal(f->accepts, 1);
}

static void test_split_anywhere(void **state)
{
    struct fake *f = *state;
    struct http *h = f->h;
    struct res x;
    run(f, h, "/bytewise", NULL, true, 0, &x);
    assert_int_equal(x.status, 200);
    assert_string_equal(x.streamed, "one two three");
    assert_string_equal(x.body, "");
    run(f, h, "/bytewise", NULL, false, 0, &x);
    assert_string_equal(x.body, "one two three");
    assert_int_equal(f->accepts, 1); /* the trailer read, the connection kept */
    /* No length: the body ends with the connection, which is not kept. */
    run(f, h, "/until-close", NULL, false, 0, &x);
    assert_int_equal(x.status, 200);
    assert_string_equal(x.body, "all of it");
    run(f, h, "/len", NULL, false, 0, &x);
    assert_int_equal(x.status, 200);
    assert_int_equal(f->accepts, 2);
}

static void test_hostile_replies(void **state)
{
    static const struct {
        const char *target, *error;
    } cases[] = {
        {"/garbage", "no HTTP/1 status line"},
        {"/badchunk", "bad chunk size"},
        {"/overchunk", "chunk longer than its size"},
        {"/gzip", "other than chunked"},
        {"/badlen", "bad Content-Length"},
        {"/hugelen", "bad Content-Length"},
        {"/big", "larger than the engine takes"},
        {"/hugehead", "longer than 64 KiB"},
        {"/eof", "closed the connection before its reply ended"},
    };
    struct fake *f = *state;
    struct http *h = f->h;
    struct res x;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int before = f->accepts;
        run(f, h, cases[i].target, NULL, false, 0, &x);
        assert_int_equal(x.status, -1);
        if (!strstr(x.error, cases[i].error))
            fail_msg("%s: %s", cases[i].target, x.error);
        /* Never kept: the next request needs a connection of its own. */
        run(f, h, "/len", NULL, false, 0, &x);
        assert_int_equal(x.status, 200);
        /* The first goes on a new connection; each later one on the kept one /len left. */
        assert_int_equal(f->accepts, before + (i == 0 ? 2 : 1));
    }
    /* Every hostile reply's connection closed: one new connection for each of them. */
    assert_int_equal(f->accepts, 1 + (int)(sizeof(cases) / sizeof(cases[0])));
}

static void test_peer_refused_and_missing(void **state)
{
    struct fake *f = *state;
    struct http *h = f->h;
    struct res x;
    refuse_peer = 1;
    run(f, h, "/len", NULL, false, 0, &x);
    refuse_peer = 0;
    assert_int_equal(x.status, -1);
    assert_int_equal(x.peer_refused, 1);
    assert_int_equal(x.connect_failed, 1);
    assert_string_equal(x.error, "not our executor");
    assert_int_equal(f->requests, 0); /* nothing sent */
    /* Nothing at the path. */
    char saved[108];
    snprintf(saved, sizeof(saved), "%s", f->path);
    snprintf(f->path, sizeof(f->path), "/tmp/paddock-direct-none-%d.sock", (int)getpid());
    run(f, h, "/len", NULL, false, 0, &x);
    snprintf(f->path, sizeof(f->path), "%s", saved);
    assert_int_equal(x.status, -1);
    assert_int_equal(x.connect_failed, 1);
    assert_int_equal(x.peer_refused, 0);
}

static void test_closed_kept_connection(void **state)
{
    struct fake *f = *state;
    struct http *h = f->h;
    struct res x;
    run(f, h, "/len", NULL, false, 0, &x);
    assert_int_equal(f->accepts, 1);
    /* The executor drops the kept connection on reading the next request, unanswered: the
     * request goes again, once, on a new connection. */
    run(f, h, "/noreply-then", NULL, false, 0, &x);
    assert_int_equal(x.status, -1); /* the retry is dropped too: reported, not retried again */
    assert_non_null(strstr(x.error, "closed the connection"));
    assert_int_equal(f->accepts, 2);
    assert_int_equal(f->requests, 3);
    /* Dropped once, answered on the new connection: the caller sees only the answer. */
    run(f, h, "/len", NULL, false, 0, &x);
    f->dropped_once = false;
    run(f, h, "/noreply-once", NULL, false, 0, &x);
    assert_int_equal(x.status, 200);
    assert_string_equal(x.body, "again");
    assert_int_equal(f->accepts, 4);
    assert_int_equal(f->requests, 6);
    /* Dropped, and the socket gone: the retry fails to connect, and says so. */
    run(f, h, "/noreply-gone", NULL, false, 0, &x);
    assert_int_equal(x.status, -1);
    assert_int_equal(x.connect_failed, 1);
    assert_int_equal(f->requests, 7);
}

struct cancel_state {
    struct loop *l;
    struct http *h;
    struct http_call *call;
    struct fake *f;
};

static void do_cancel(void *ud)
{
    struct cancel_state *c = ud;
    if (c->f->requests == 0) { /* not there yet: look again */
        loop_timer_add(c->l, 10, do_cancel, c);
        return;
    }
    http_cancel(c->h, c->call);
    c->call = NULL;
}

static void stop_when_closed(void *ud)
{
    struct cancel_state *c = ud;
    if (!c->call && c->f->closes == 2)
        loop_stop(c->l);
    else
        loop_timer_add(c->l, 10, stop_when_closed, c);
}

static void never_called(const struct http_result *r, void *ud)
{
    (void)r;
    (void)ud;
    fail_msg("a cancelled call's callback ran");
}

static void test_deadline_and_cancel(void **state)
{
    struct fake *f = *state;
    struct http *h = f->h;
    struct res x;
    run(f, h, "/hang", NULL, false, 300, &x);
    assert_int_equal(x.status, -1);
    assert_int_equal(x.timed_out, 1);
    assert_non_null(strstr(x.error, "timed out"));
    /* A cancelled call: no callback, and its connection is closed (the fake sees it go, after
     * the timed-out one). */
    f->requests = 0;
    struct http_request req = {.method = "GET",
                               .unix_socket = f->path,
                               .url = "http://executor/hang",
                               .peer_check = peer_check,
                               .peer_arg = "the-arg"};
    struct cancel_state c = {.l = f->l, .h = h, .f = f};
    c.call = http_start_call(h, &req, never_called, NULL);
    assert_non_null(c.call);
    loop_timer_add(f->l, 10, do_cancel, &c);
    loop_timer_add(f->l, 10, stop_when_closed, &c);
    struct loop_timer *t = loop_timer_add(f->l, 5000, on_deadline, f->l);
    loop_run(f->l);
    loop_timer_cancel(f->l, t);
    assert_null(c.call);
    assert_int_equal(f->closes, 2); /* the timed-out connection, then the cancelled one */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kept_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_anywhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_replies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_refused_and_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_kept_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_and_cancel, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
