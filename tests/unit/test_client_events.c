/* The dashboard's event-stream reader against a fake server that splits events and chunks at
 * awkward places, as a real HTTP server may. */
#include "client/client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
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

/* Sends the events as HTTP chunks, each cut into two writes with a pause between. */
static void *fake_server(void *arg)
{
    int c = accept(listen_fd, NULL, NULL);
    char buf[1024];
    if (c < 0 || read(c, buf, sizeof(buf)) <= 0)
        return NULL;
    const char *hdr = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n";
    write_all(c, hdr, strlen(hdr));
    const char *payloads[] = {
        ": hello\n\n",
        "event: session\ndata: {\"id\":\"a1\",\"state\":\"ready\"}\n\n",
        "event: action\r\ndata: {\"id\":7,\"summary\":\"echo hi\"}\r\n\r\nevent: act",
        "ion\ndata: {\"id\":8}\n\n",
    };
    for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
        char chunk[256];
        int n = snprintf(chunk, sizeof(chunk), "%zx\r\n%s\r\n", strlen(payloads[i]), payloads[i]);
        write_all(c, chunk, (size_t)n / 2);
        usleep(20000);
        write_all(c, chunk + n / 2, (size_t)n - (size_t)n / 2);
    }
    write_all(c, "0\r\n\r\n", 5);
    usleep(50000);
    close(c);
    return NULL;
}

struct seen {
    int n;
    char types[8][16];
    char ids[8][16];
};

static void on_event(const char *type, json_t *data, void *ud)
{
    struct seen *s = ud;
    if (s->n >= 8)
        return;
    snprintf(s->types[s->n], sizeof(s->types[0]), "%s", type);
    json_t *id = json_object_get(data, "id");
    if (json_is_string(id))
        snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", json_string_value(id));
    else
        snprintf(s->ids[s->n], sizeof(s->ids[0]), "%lld", (long long)json_integer_value(id));
    s->n++;
}

static void test_events_split_everywhere(void **state)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sock_path, sizeof(sock_path), "/tmp/paddock-sse-%d.sock", (int)getpid());
    strcpy(sa.sun_path, sock_path);
    unlink(sock_path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(listen_fd, 1), 0);
    pthread_t th;
    pthread_create(&th, NULL, fake_server, NULL);

    struct client *c = client_new(sock_path);
    char *err = NULL;
    struct client_events *ev = client_events_open(c, &err);
    assert_non_null(ev);
    struct seen s = {0};
    int ended = 0;
    for (int i = 0; i < 200 && !ended; i++) {
        struct pollfd p = {.fd = client_events_fd(ev), .events = POLLIN};
        if (poll(&p, 1, 50) > 0 && client_events_pump(ev, on_event, &s) < 0)
            ended = 1;
    }
    assert_true(ended); /* the last chunk ends the stream */
    assert_int_equal(s.n, 3);
    assert_string_equal(s.types[0], "session");
    assert_string_equal(s.ids[0], "a1");
    assert_string_equal(s.types[1], "action");
    assert_string_equal(s.ids[1], "7");
    assert_string_equal(s.types[2], "action");
    assert_string_equal(s.ids[2], "8");
    client_events_close(ev);
    client_free(c);
    pthread_join(th, NULL);
    close(listen_fd);
    unlink(sock_path);
}

static void test_events_no_engine(void **state)
{
    struct client *c = client_new("/tmp/paddock-no-engine-here.sock");
    char *err = NULL;
    assert_null(client_events_open(c, &err));
    assert_non_null(err);
    assert_non_null(strstr(err, "/tmp/paddock-no-engine-here.sock"));
    free(err);
    json_t *reply = NULL;
    assert_int_equal(client_request(c, "GET", "/v1/info", NULL, 1000, &reply, &err), -1);
    assert_null(reply);
    free(err);
    assert_false(client_ping(c));
    client_free(c);
}

/* ---- client_sse_open on any path: the request, plain and refused replies ---- */

struct fake_reply {
    const char *parts[6]; /* written one by one with a pause between */
    bool keep_open;       /* after the reply, wait for the client to hang up (keep-alive) */
    char request[1024];   /* what the client sent */
};

static void *fake_reply_server(void *arg)
{
    struct fake_reply *f = arg;
    int c = accept(listen_fd, NULL, NULL);
    if (c < 0)
        return NULL;
    ssize_t n = read(c, f->request, sizeof(f->request) - 1);
    f->request[n > 0 ? n : 0] = '\0';
    for (size_t i = 0; i < 6 && f->parts[i]; i++) {
        write_all(c, f->parts[i], strlen(f->parts[i]));
        usleep(20000);
    }
    if (f->keep_open) {
        char buf[64];
        while (read(c, buf, sizeof(buf)) > 0)
            ;
    }
    close(c);
    return NULL;
}

static struct client *fake_start(pthread_t *th, struct fake_reply *f)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sock_path, sizeof(sock_path), "/tmp/paddock-sse-%d.sock", (int)getpid());
    strcpy(sa.sun_path, sock_path);
    unlink(sock_path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(listen_fd, 1), 0);
    pthread_create(th, NULL, fake_reply_server, f);
    return client_new(sock_path);
}

static void fake_stop(pthread_t th, struct client *c)
{
    client_free(c);
    pthread_join(th, NULL);
    close(listen_fd);
    unlink(sock_path);
}

/* Pump until the stream ends (bounded); returns whether it ended. */
static bool pump_to_end(struct client_events *ev, struct seen *s)
{
    for (int i = 0; i < 200; i++) {
        struct pollfd p = {.fd = client_events_fd(ev), .events = POLLIN};
        if (poll(&p, 1, 50) > 0 && client_events_pump(ev, on_event, s) < 0)
            return true;
    }
    return false;
}

struct logs_seen {
    int n;
    int fds[8];
    char texts[8][64];
    char end_reason[64];
};

static void on_log_event(const char *type, json_t *data, void *ud)
{
    struct logs_seen *s = ud;
    if (strcmp(type, "end") == 0) {
        snprintf(s->end_reason, sizeof(s->end_reason), "%s",
                 json_string_value(json_object_get(data, "reason")));
        return;
    }
    if (strcmp(type, "log") != 0 || s->n >= 8)
        return;
    s->fds[s->n] = (int)json_integer_value(json_object_get(data, "fd"));
    snprintf(s->texts[s->n], sizeof(s->texts[0]), "%s",
             json_string_value(json_object_get(data, "text")));
    s->n++;
}

/* A plain (not chunked) stream on another path, ended by the server closing it. */
static void test_sse_any_path_plain(void **state)
{
    (void)state;
    struct fake_reply f = {
        .parts = {"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: log\n",
                  "data: {\"fd\":2,\"text\":\"2026-01-02T03:04:05.1Z a\\n\"}\n\nevent: log\ndata: ",
                  "{\"fd\":1,\"text\":\"b\\u001b]52;c;x\\u0007\\n\"}\n\n",
                  "event: end\ndata: {\"reason\":\"the container stopped\"}\n\n"},
    };
    pthread_t th;
    struct client *c = fake_start(&th, &f);
    char *err = NULL;
    struct client_events *ev =
        client_sse_open(c, "/v1/sessions/ab12/logs?follow=1&tail=2000&timestamps=1", &err);
    assert_non_null(ev);
    assert_int_equal(client_events_status(ev), 0); /* nothing read yet */
    struct logs_seen s = {0};
    bool ended = false;
    for (int i = 0; i < 200 && !ended; i++) {
        struct pollfd p = {.fd = client_events_fd(ev), .events = POLLIN};
        if (poll(&p, 1, 50) > 0 && client_events_pump(ev, on_log_event, &s) < 0)
            ended = true;
    }
    assert_true(ended);
    assert_int_equal(client_events_status(ev), 200);
    assert_null(client_events_error(ev));
    assert_int_equal(s.n, 2);
    assert_int_equal(s.fds[0], 2);
    assert_string_equal(s.texts[0], "2026-01-02T03:04:05.1Z a\n");
    assert_int_equal(s.fds[1], 1);
    assert_string_equal(s.texts[1], "b\033]52;c;x\a\n"); /* raw: the view sanitizes */
    assert_string_equal(s.end_reason, "the container stopped");
    client_events_close(ev);
    fake_stop(th, c);
    assert_non_null(strstr(f.request, "GET /v1/sessions/ab12/logs?follow=1&tail=2000&timestamps=1 "
                                      "HTTP/1.1\r\n"));
    assert_non_null(strstr(f.request, "Accept: text/event-stream\r\n"));
}

/* A refusal on a connection kept open: its length ends it; status and message are kept. */
static void test_sse_refused_keep_alive(void **state)
{
    (void)state;
    static const char body[] = "{\"error\":{\"code\":\"conflict\",\"message\":\"session ab12 has "
                               "no container to follow\"}}";
    char head[256];
    snprintf(head, sizeof(head),
             "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: "
             "%zu\r\n\r\n",
             strlen(body));
    char first[40];
    snprintf(first, sizeof(first), "%.20s", body);
    struct fake_reply f = {.parts = {head, first, body + 20}, .keep_open = true};
    pthread_t th;
    struct client *c = fake_start(&th, &f);
    char *err = NULL;
    struct client_events *ev = client_sse_open(c, "/v1/sessions/ab12/logs?follow=1", &err);
    assert_non_null(ev);
    struct seen s = {0};
    assert_true(pump_to_end(ev, &s));
    assert_int_equal(s.n, 0);
    assert_int_equal(client_events_status(ev), 409);
    assert_string_equal(client_events_error(ev), "session ab12 has no container to follow");
    client_events_close(ev); /* the server then sees the hang-up */
    fake_stop(th, c);
}

/* A refusal whose body is not the engine's JSON still says its status. */
static void test_sse_refused_chunked_not_json(void **state)
{
    (void)state;
    struct fake_reply f = {
        .parts = {"HTTP/1.1 502 Bad Gateway\r\nTransfer-Encoding: chunked\r\n\r\n",
                  "5\r\noops!\r\n", "0\r\n\r\n"},
        .keep_open = true,
    };
    pthread_t th;
    struct client *c = fake_start(&th, &f);
    char *err = NULL;
    struct client_events *ev = client_sse_open(c, "/x", &err);
    assert_non_null(ev);
    struct seen s = {0};
    assert_true(pump_to_end(ev, &s));
    assert_int_equal(client_events_status(ev), 502);
    assert_string_equal(client_events_error(ev), "the engine answered HTTP 502");
    client_events_close(ev);
    fake_stop(th, c);
}

/* Nothing that could end or split the request line gets into it. */
static void test_sse_bad_paths(void **state)
{
    (void)state;
    struct client *c = client_new("/tmp/paddock-no-engine-here.sock");
    const char *bad[] = {"", "v1/events", "/v1/a b", "/v1/a\r\nX-Evil: 1", "/v1/\x7f", NULL};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *err = NULL;
        assert_null(client_sse_open(c, bad[i], &err));
        assert_non_null(err);
        assert_non_null(strstr(err, "bad path"));
        free(err);
    }
    client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_split_everywhere),
        cmocka_unit_test(test_events_no_engine),
        cmocka_unit_test(test_sse_any_path_plain),
        cmocka_unit_test(test_sse_refused_keep_alive),
        cmocka_unit_test(test_sse_refused_chunked_not_json),
        cmocka_unit_test(test_sse_bad_paths),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
