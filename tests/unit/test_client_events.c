/* The dashboard's event-stream reader against a fake server that splits events and chunks at
 * awkward places, as a real HTTP server may. */
#include "app/client.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_split_everywhere),
        cmocka_unit_test(test_events_no_engine),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
