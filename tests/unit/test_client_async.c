/* The dashboard's non-blocking requests (client/client_async.c) against a fake engine on a unix
 * socket: replies arrive out of order, a slow one never blocks the caller's descriptors, a
 * dead socket is a transport error, cancelled requests never call back. */
#include "client/client.h"
#include "client/client_async.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char sock_path[108];
static int listen_fd;

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* One connection per request: /slow answers after 300 ms, anything else at once with its path. */
static void *serve_one(void *arg)
{
    int c = (int)(intptr_t)arg;
    char buf[2048];
    ssize_t n = read(c, buf, sizeof(buf) - 1);
    if (n > 0) {
        buf[n] = '\0';
        char path[256] = "";
        sscanf(buf, "%*s %255s", path);
        if (strcmp(path, "/slow") == 0)
            usleep(300000);
        char body[300];
        int bl = snprintf(body, sizeof(body), "{\"path\":\"%s\"}", path);
        char hdr[200];
        int hl = snprintf(hdr, sizeof(hdr),
                          "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: "
                          "%d\r\nConnection: close\r\n\r\n",
                          strcmp(path, "/missing") == 0 ? 404 : 200, bl);
        write_all(c, hdr, (size_t)hl);
        write_all(c, body, (size_t)bl);
    }
    close(c);
    return NULL;
}

static void *acceptor(void *arg)
{
    for (;;) {
        int c = accept(listen_fd, NULL, NULL);
        if (c < 0)
            return NULL;
        pthread_t t;
        pthread_create(&t, NULL, serve_one, (void *)(intptr_t)c);
        pthread_detach(t);
    }
}

struct got {
    int n;
    char order[4][32];
    int status[4];
    char err[128];
};

static void on_reply(int status, json_t *reply, const char *err, void *ud)
{
    struct got *g = ud;
    if (g->n < 4) {
        const char *p = json_string_value(json_object_get(reply, "path"));
        snprintf(g->order[g->n], sizeof(g->order[0]), "%s", p ? p : "-");
        g->status[g->n] = status;
        if (err)
            snprintf(g->err, sizeof(g->err), "%s", err);
    }
    g->n++;
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void test_out_of_order_and_extra_fds(void **state)
{
    struct client *c = client_new(sock_path);
    struct client_async *a = client_async_new(c);
    struct got g = {0};
    assert_int_equal(client_async_request(a, "GET", "/slow", NULL, 5000, on_reply, &g), 0);
    assert_int_equal(client_async_request(a, "GET", "/fast", NULL, 5000, on_reply, &g), 0);
    json_t *body = json_pack("{s:i}", "x", 1);
    assert_int_equal(client_async_request(a, "POST", "/missing", body, 5000, on_reply, &g), 0);
    json_decref(body); /* the request keeps its own copy */
    assert_int_equal(client_async_pending(a), 3);
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool pipe_seen = false;
    write_all(p[1], "k", 1); /* a key arrives while /slow is still out */
    while (g.n < 3 && ms_since(&t0) < 5000) {
        struct pollfd fds[1] = {{.fd = p[0], .events = POLLIN}};
        int r = client_async_poll(a, fds, 1, 1000);
        assert_true(r >= 0);
        if (fds[0].revents & POLLIN) {
            char ch;
            assert_int_equal(read(p[0], &ch, 1), 1);
            pipe_seen = true;
            /* the extra descriptor woke the loop before the slow reply */
            assert_true(g.n < 3);
        }
    }
    assert_true(pipe_seen);
    assert_int_equal(g.n, 3);
    assert_string_equal(g.order[2], "/slow"); /* the slow one last, whatever the start order */
    for (int i = 0; i < 3; i++) {
        if (strcmp(g.order[i], "/missing") == 0)
            assert_int_equal(g.status[i], 404);
        else
            assert_int_equal(g.status[i], 200);
    }
    assert_int_equal(client_async_pending(a), 0);
    close(p[0]);
    close(p[1]);
    client_async_free(a);
    client_free(c);
}

static void test_cancel_and_transport_error(void **state)
{
    struct client *c = client_new(sock_path);
    struct client_async *a = client_async_new(c);
    struct got g = {0}, other = {0};
    client_async_request(a, "GET", "/slow", NULL, 5000, on_reply, &g);
    client_async_request(a, "GET", "/fast", NULL, 5000, on_reply, &other);
    client_async_cancel(a, &g);
    assert_int_equal(client_async_pending(a), 1);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (client_async_pending(a) && ms_since(&t0) < 5000)
        client_async_poll(a, NULL, 0, 100);
    assert_int_equal(g.n, 0);
    assert_int_equal(other.n, 1);
    client_async_free(a);
    client_free(c);

    c = client_new("/nonexistent/engine.sock");
    a = client_async_new(c);
    struct got e = {0};
    client_async_request(a, "GET", "/v1/info", NULL, 2000, on_reply, &e);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (e.n == 0 && ms_since(&t0) < 5000)
        client_async_poll(a, NULL, 0, 100);
    assert_int_equal(e.n, 1);
    assert_int_equal(e.status[0], -1);
    assert_non_null(strstr(e.err, "/nonexistent/engine.sock"));
    /* pending requests are dropped at free without a callback */
    struct got never = {0};
    client_async_request(a, "GET", "/v1/info", NULL, 2000, on_reply, &never);
    client_async_free(a);
    assert_int_equal(never.n, 0);
    client_free(c);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    snprintf(sock_path, sizeof(sock_path), "/tmp/paddock-async-%d.sock", (int)getpid());
    unlink(sock_path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
    if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(listen_fd, 16) < 0)
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, acceptor, NULL);
    pthread_detach(t);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_of_order_and_extra_fds),
        cmocka_unit_test(test_cancel_and_transport_error),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(sock_path);
    curl_global_cleanup();
    return rc;
}
