/* The engine loop and its async HTTP client, against a small fake HTTP server that runs on the
 * same loop (a fake inside a unit test; the real peers are covered by the integration suite). */
#include "engine/base/loop.h"
#include "engine/docker/http.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int order[8], norder;

static void on_timer(void *ud)
{
    order[norder++] = (int)(intptr_t)ud;
}

static void on_stop(void *ud)
{
    loop_stop(ud);
}

static void test_timers_fire_in_order(void **state)
{
    struct loop *l = loop_new();
    norder = 0;
    loop_timer_add(l, 30, on_timer, (void *)3);
    loop_timer_add(l, 10, on_timer, (void *)1);
    struct loop_timer *t = loop_timer_add(l, 20, on_timer, (void *)99);
    loop_timer_add(l, 20, on_timer, (void *)2);
    loop_timer_cancel(l, t);
    loop_timer_add(l, 40, on_stop, l);
    double t0 = loop_now_ms();
    assert_int_equal(loop_run(l), 0);
    assert_true(loop_now_ms() - t0 >= 39.0);
    assert_int_equal(norder, 3);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 2);
    assert_int_equal(order[2], 3);
    loop_free(l);
}

static int prepared[6];

static long on_prepare(void *ud)
{
    prepared[(intptr_t)ud]++;
    return -1;
}

static void on_stop_prepared(void *ud)
{
    loop_stop(ud);
}

/* The hook table is small and fixed: a hook past it is refused, not dropped silently (a
 * listener whose hook never runs is never served), and a removed hook frees its place. */
static void test_prepare_hooks_refused_when_full(void **state)
{
    struct loop *l = loop_new();
    memset(prepared, 0, sizeof(prepared));
    int added = 0;
    for (intptr_t i = 0; i < 6; i++)
        if (loop_add_prepare(l, on_prepare, (void *)i) == 0)
            added++;
    assert_true(added >= 1 && added < 6);
    loop_del_prepare(l, on_prepare, (void *)0);
    assert_int_equal(loop_add_prepare(l, on_prepare, (void *)5), 0);
    assert_int_equal(loop_add_prepare(l, on_prepare, (void *)5), -1);
    loop_timer_add(l, 1, on_stop_prepared, l);
    assert_int_equal(loop_run(l), 0);
    assert_int_equal(prepared[0], 0);
    assert_true(prepared[1] > 0 && prepared[5] > 0);
    loop_free(l);
}

struct pipe_ctx {
    struct loop *l;
    int fds[2];
    int reads;
};

static void on_readable(int fd, uint32_t ev, void *ud)
{
    struct pipe_ctx *c = ud;
    char b[16];
    assert_true(read(fd, b, sizeof(b)) > 0);
    c->reads++;
    /* deleting the watch from inside its own callback must be safe */
    loop_del_fd(c->l, fd);
    loop_stop(c->l);
}

static void test_fd_callback_and_delete_inside(void **state)
{
    struct pipe_ctx c = {.l = loop_new()};
    assert_int_equal(pipe(c.fds), 0);
    assert_int_equal(loop_add_fd(c.l, c.fds[0], EPOLLIN, on_readable, &c), 0);
    assert_int_equal(write(c.fds[1], "x", 1), 1);
    assert_int_equal(loop_run(c.l), 0);
    assert_int_equal(c.reads, 1);
    assert_int_equal(loop_mod_fd(c.l, c.fds[0], EPOLLIN), -1); /* gone */
    close(c.fds[0]);
    close(c.fds[1]);
    loop_free(c.l);
}

/* ---- fake HTTP server on the loop ---- */
struct fake {
    struct loop *l;
    int lfd;
    char path[108];
    int requests;
};

static void fake_on_client(int fd, uint32_t ev, void *ud)
{
    struct fake *f = ud;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    if (n <= 0) {
        loop_del_fd(f->l, fd);
        close(fd);
        return;
    }
    buf[n] = '\0';
    f->requests++;
    if (strstr(buf, "GET /stream")) {
        /* A follow stream: three chunks, then the connection stays open, as Docker's logs
         * and events streams do. The client must see each chunk and stop it itself. */
        const char *hdr = strstr(buf, "X-Probe: yes") ? "probe" : "none";
        char resp[512];
        int m = snprintf(resp, sizeof(resp),
                         "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "%zx\r\n%s\r\n4\r\none;\r\n4\r\ntwo;\r\n6\r\nthree;\r\n",
                         strlen(hdr), hdr);
        assert_int_equal(write(fd, resp, (size_t)m), m);
        return;
    }
    if (strstr(buf, "GET /big")) {
        /* A reply of 5000 bytes: more than a request's max_body of 1000 takes. */
        static char big[5200];
        int m = snprintf(big, sizeof(big), "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n");
        memset(big + m, 'x', 5000);
        assert_int_equal(write(fd, big, (size_t)m + 5000), m + 5000);
        return;
    }
    const char *body = strstr(buf, "GET /hello") ? "{\"hello\":\"world\"}" : "{\"no\":1}";
    int code = strstr(buf, "GET /hello") ? 200 : 404;
    char resp[256];
    int m =
        snprintf(resp, sizeof(resp),
                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                 code, strlen(body), body);
    assert_int_equal(write(fd, resp, (size_t)m), m);
}

static void fake_on_accept(int fd, uint32_t ev, void *ud)
{
    struct fake *f = ud;
    int c = accept(fd, NULL, NULL);
    if (c >= 0)
        loop_add_fd(f->l, c, EPOLLIN, fake_on_client, f);
}

static int fake_start(struct fake *f)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(f->path, sizeof(f->path), "/tmp/paddock-fake-%d.sock", (int)getpid());
    strcpy(sa.sun_path, f->path);
    unlink(f->path);
    f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(f->lfd, 8) < 0)
        return -1;
    return loop_add_fd(f->l, f->lfd, EPOLLIN, fake_on_accept, f);
}

struct results {
    struct loop *l;
    long status[3];
    char body[3][64];
    int connect_failed[3];
    int done;
};

static void on_done(const struct http_result *r, void *ud)
{
    struct results *res = ud;
    int i = res->done++;
    res->status[i] = r->status;
    res->connect_failed[i] = r->connect_failed;
    snprintf(res->body[i], sizeof(res->body[i]), "%s", r->body ? r->body : "");
    if (res->done == 3)
        loop_stop(res->l);
}

static void test_http_client_on_the_loop(void **state)
{
    struct fake f = {.l = loop_new()};
    assert_int_equal(fake_start(&f), 0);
    struct http *h = http_new(f.l);
    struct results res = {.l = f.l};
    struct http_request ok = {.method = "GET", .unix_socket = f.path, .url = "http://x/hello"};
    struct http_request nf = {.method = "GET", .unix_socket = f.path, .url = "http://x/nope"};
    struct http_request dead = {
        .method = "GET", .unix_socket = "/tmp/paddock-no-such-socket", .url = "http://x/hello"};
    assert_int_equal(http_start(h, &ok, on_done, &res), 0);
    assert_int_equal(http_start(h, &dead, on_done, &res), 0);
    assert_int_equal(http_start(h, &nf, on_done, &res), 0);
    loop_timer_add(f.l, 5000, on_stop, f.l); /* never hang the suite */
    assert_int_equal(loop_run(f.l), 0);
    assert_int_equal(res.done, 3);
    int seen_ok = 0, seen_404 = 0, seen_dead = 0;
    for (int i = 0; i < 3; i++) {
        if (res.status[i] == 200 && strcmp(res.body[i], "{\"hello\":\"world\"}") == 0)
            seen_ok++;
        if (res.status[i] == 404)
            seen_404++;
        if (res.status[i] == -1)
            seen_dead++;
    }
    assert_int_equal(seen_ok, 1);
    assert_int_equal(seen_404, 1);
    assert_int_equal(seen_dead, 1);
    http_free(h);
    close(f.lfd);
    unlink(f.path);
    loop_free(f.l);
}

static void test_http_cancel_all_finishes_every_call(void **state)
{
    struct loop *l = loop_new();
    struct http *h = http_new(l);
    struct results res = {.l = l};
    struct http_request r = {
        .method = "GET", .unix_socket = "/tmp/paddock-no-such-socket", .url = "http://x/"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(http_start(h, &r, on_done, &res), 0);
    http_cancel_all(h);
    assert_int_equal(res.done, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(res.status[i], -1);
    http_free(h);
    loop_free(l);
}

struct big_result {
    struct loop *l;
    long status[2];
    size_t len[2];
    char error[2][64];
    int done;
};

static void big_on_done(const struct http_result *r, void *ud)
{
    struct big_result *b = ud;
    int i = b->done++;
    b->status[i] = r->status;
    b->len[i] = r->len;
    snprintf(b->error[i], sizeof(b->error[i]), "%s", r->error ? r->error : "");
    loop_stop(b->l);
}

/* A buffered reply is bounded (max_body, by default HTTP_BODY_MAX): a peer that sends more (a
 * sandbox's executor is one) fails its call with why, instead of the engine holding it all. */
static void test_http_body_bounded(void **state)
{
    struct fake f = {.l = loop_new()};
    assert_int_equal(fake_start(&f), 0);
    struct http *h = http_new(f.l);
    struct big_result b = {.l = f.l};
    struct http_request small = {
        .method = "GET", .unix_socket = f.path, .url = "http://x/big", .max_body = 1000};
    assert_int_equal(http_start(h, &small, big_on_done, &b), 0);
    loop_timer_add(f.l, 5000, on_stop, f.l);
    assert_int_equal(loop_run(f.l), 0);
    struct http_request whole = {.method = "GET", .unix_socket = f.path, .url = "http://x/big"};
    assert_int_equal(http_start(h, &whole, big_on_done, &b), 0);
    loop_timer_add(f.l, 5000, on_stop, f.l);
    assert_int_equal(loop_run(f.l), 0);
    assert_int_equal(b.done, 2);
    assert_int_equal(b.status[0], -1);
    assert_non_null(strstr(b.error[0], "larger than the engine takes"));
    assert_int_equal(b.status[1], 200);
    assert_int_equal(b.len[1], 5000);
    http_free(h);
    close(f.lfd);
    unlink(f.path);
    loop_free(f.l);
}

struct stream_state {
    struct loop *l;
    struct http *h;
    struct http_call *call;
    char seen[128];
    int abort_at_three; /* 1: return -1 from on_data; 0: http_cancel from a timer */
    int done_calls;
    char done_error[64];
};

static void stream_cancel(void *ud)
{
    struct stream_state *st = ud;
    http_cancel(st->h, st->call);
    loop_stop(st->l);
}

static int stream_on_data(const char *p, size_t n, void *ud)
{
    struct stream_state *st = ud;
    strncat(st->seen, p, n < sizeof(st->seen) - strlen(st->seen) - 1 ? n : 0);
    if (strstr(st->seen, "three;")) {
        if (st->abort_at_three)
            return -1;
        loop_timer_add(st->l, 0, stream_cancel, st);
    }
    return 0;
}

static void stream_on_done(const struct http_result *r, void *ud)
{
    struct stream_state *st = ud;
    st->done_calls++;
    snprintf(st->done_error, sizeof(st->done_error), "%s", r->error ? r->error : "");
    loop_stop(st->l);
}

static void test_http_stream_chunks_abort_and_cancel(void **state)
{
    for (int mode = 0; mode < 2; mode++) {
        struct fake f = {.l = loop_new()};
        assert_int_equal(fake_start(&f), 0);
        struct stream_state st = {.l = f.l, .h = http_new(f.l), .abort_at_three = mode};
        const char *hdrs[] = {"X-Probe: yes", NULL};
        struct http_request req = {.method = "GET",
                                   .unix_socket = f.path,
                                   .url = "http://x/stream",
                                   .headers = hdrs,
                                   .on_data = stream_on_data};
        st.call = http_start_call(st.h, &req, stream_on_done, &st);
        assert_non_null(st.call);
        loop_timer_add(f.l, 5000, on_stop, f.l); /* never hang the suite */
        assert_int_equal(loop_run(f.l), 0);
        /* Each chunk arrived while the response was still open, with the extra header sent. */
        assert_string_equal(st.seen, "probeone;two;three;");
        if (mode == 1) {
            assert_int_equal(st.done_calls, 1);
            assert_string_equal(st.done_error, "aborted by the receiver");
        } else {
            assert_int_equal(st.done_calls, 0); /* cancelled: no done callback */
        }
        http_free(st.h);
        close(f.lfd);
        unlink(f.path);
        loop_free(f.l);
    }
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timers_fire_in_order),
        cmocka_unit_test(test_prepare_hooks_refused_when_full),
        cmocka_unit_test(test_fd_callback_and_delete_inside),
        cmocka_unit_test(test_http_client_on_the_loop),
        cmocka_unit_test(test_http_cancel_all_finishes_every_call),
        cmocka_unit_test(test_http_stream_chunks_abort_and_cancel),
        cmocka_unit_test(test_http_body_bounded),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
