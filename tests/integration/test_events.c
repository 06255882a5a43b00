/* Integration test of GET /v1/events (server-sent events), read on a raw unix socket with poll:
 * session events on create and delete, action events for a run action. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- a minimal SSE client: HTTP/1.1, chunked transfer decoding, event parsing ---- */

struct sse {
    int fd;
    char *raw; /* bytes not yet decoded */
    size_t rlen;
    int status; /* HTTP status, 0 before the headers */
    bool chunked;
    char *data; /* decoded body not yet split into events */
    size_t dlen;
    json_t *events; /* [{"type", "data"}...] in arrival order */
    bool eof;
};

static void buf_append(char **b, size_t *len, const char *p, size_t n)
{
    char *nb = realloc(*b, *len + n + 1);
    assert_non_null(nb);
    memcpy(nb + *len, p, n);
    *len += n;
    nb[*len] = '\0';
    *b = nb;
}

static void buf_consume(char **b, size_t *len, size_t n)
{
    memmove(*b, *b + n, *len - n);
    *len -= n;
    (*b)[*len] = '\0';
}

static struct sse *sse_open(const char *sock)
{
    struct sse *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    s->events = json_array();
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    assert_int_equal(connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    static const char req[] = "GET /v1/events HTTP/1.1\r\nHost: localhost\r\n"
                              "Accept: text/event-stream\r\n\r\n";
    assert_int_equal(write(s->fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
    return s;
}

static void sse_close(struct sse *s)
{
    close(s->fd);
    free(s->raw);
    free(s->data);
    json_decref(s->events);
    free(s);
}

static void sse_parse_events(struct sse *s)
{
    char *end;
    while (s->dlen && (end = strstr(s->data, "\n\n"))) {
        size_t n = (size_t)(end - s->data) + 2;
        char *block = strndup(s->data, n - 2), *save = NULL;
        buf_consume(&s->data, &s->dlen, n);
        char *type = NULL, *data = NULL;
        for (char *l = strtok_r(block, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            if (l[0] == ':')
                continue; /* comment: hello, ping */
            if (strncmp(l, "event: ", 7) == 0)
                type = l + 7;
            else if (strncmp(l, "data: ", 6) == 0)
                data = l + 6;
            else
                fail_msg("unexpected line in the event stream: %s", l);
        }
        if (type || data) {
            assert_non_null(type);
            assert_non_null(data);
            json_error_t e;
            json_t *j = json_loads(data, 0, &e);
            if (!j)
                fail_msg("event data is not JSON (%s): %s", e.text, data);
            json_array_append_new(s->events, json_pack("{s:s,s:o}", "type", type, "data", j));
        }
        free(block);
    }
}

static void sse_decode(struct sse *s)
{
    if (!s->status) {
        char *h = s->raw ? strstr(s->raw, "\r\n\r\n") : NULL;
        if (!h)
            return;
        *h = '\0';
        assert_int_equal(strncmp(s->raw, "HTTP/1.1 ", 9), 0);
        s->status = atoi(s->raw + 9);
        assert_int_equal(s->status, 200);
        assert_non_null(strcasestr(s->raw, "\r\nContent-Type: text/event-stream"));
        s->chunked = strcasestr(s->raw, "\r\nTransfer-Encoding: chunked") != NULL;
        buf_consume(&s->raw, &s->rlen, (size_t)(h - s->raw) + 4);
    }
    if (!s->chunked) {
        if (s->rlen)
            buf_append(&s->data, &s->dlen, s->raw, s->rlen);
        s->rlen = 0;
    } else {
        for (;;) {
            char *crlf = s->rlen ? strstr(s->raw, "\r\n") : NULL;
            if (!crlf)
                break;
            size_t size = strtoul(s->raw, NULL, 16);
            size_t head = (size_t)(crlf - s->raw) + 2;
            if (s->rlen < head + size + 2)
                break;
            if (size == 0) {
                s->eof = true;
                buf_consume(&s->raw, &s->rlen, s->rlen);
                break;
            }
            buf_append(&s->data, &s->dlen, s->raw + head, size);
            buf_consume(&s->raw, &s->rlen, head + size + 2);
        }
    }
    sse_parse_events(s);
}

/* Read what arrives within ms milliseconds. */
static void sse_pump(struct sse *s, long ms)
{
    double deadline = now_ms() + ms;
    while (!s->eof) {
        long left = (long)(deadline - now_ms());
        if (left <= 0)
            break;
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        int n = poll(&p, 1, (int)left);
        if (n <= 0)
            continue;
        char buf[8192];
        ssize_t k = read(s->fd, buf, sizeof(buf));
        if (k > 0) {
            buf_append(&s->raw, &s->rlen, buf, (size_t)k);
            sse_decode(s);
        } else if (k == 0) {
            s->eof = true;
        } else if (errno != EAGAIN && errno != EINTR) {
            s->eof = true;
        }
        if (s->events && json_array_size(s->events))
            break; /* let the caller look */
    }
}

/* The first event of this type whose data has key == want (string), waiting up to ms. */
static json_t *sse_wait(struct sse *s, const char *type, const char *key, const char *want,
                        const char *key2, const char *want2, long ms)
{
    double deadline = now_ms() + ms;
    for (;;) {
        size_t i;
        json_t *ev;
        json_array_foreach(s->events, i, ev)
        {
            json_t *d = json_object_get(ev, "data");
            if (strcmp(jstr(ev, "type"), type) != 0)
                continue;
            const char *v = jstr(d, key);
            if (!v || strcmp(v, want) != 0)
                continue;
            if (key2 && (!jstr(d, key2) || strcmp(jstr(d, key2), want2) != 0))
                continue;
            return d;
        }
        long left = (long)(deadline - now_ms());
        if (left <= 0 || s->eof)
            break;
        sse_pump(s, left < 200 ? left : 200);
    }
    char *all = json_dumps(s->events, JSON_COMPACT);
    fprintf(stderr, "no `%s` event with %s=%s%s%s%s within %ld ms; events so far: %s\n", type, key,
            want, key2 ? " and " : "", key2 ? key2 : "", key2 ? want2 : "", ms, all);
    free(all);
    return NULL;
}

static void test_events(void **state)
{
    struct sse *s = sse_open(harness_eng->socket);
    /* The stream opens with a comment at once: headers arrive without any event. */
    double t0 = now_ms();
    while (!s->status && now_ms() - t0 < 5000)
        sse_pump(s, 100);
    assert_int_equal(s->status, 200);

    json_t *sess = session_new(harness_eng, "{\"name\": \"events-test\"}");
    const char *id = jstr(sess, "id");
    json_t *e = sse_wait(s, "session", "id", id, "state", "creating", 10000);
    assert_non_null(e);
    assert_string_equal(jstr(e, "name"), "events-test");
    e = sse_wait(s, "session", "id", id, "state", "ready", 10000);
    assert_non_null(e);
    assert_string_equal(jstr(e, "image"), HARNESS_IMAGE);

    json_t *obs = session_run(harness_eng, id, "echo event-probe");
    assert_string_equal(jstr(obs, "content"), "event-probe");
    json_decref(obs);
    e = sse_wait(s, "action", "summary", "echo event-probe", "state", "done", 10000);
    assert_non_null(e);
    assert_string_equal(jstr(e, "session_id"), id);
    assert_string_equal(jstr(e, "kind"), "run");
    assert_int_equal(json_integer_value(json_object_get(e, "exit_code")), 0);
    assert_true(json_is_number(json_object_get(e, "duration_ms")));
    json_int_t action_id = json_integer_value(json_object_get(e, "id"));
    assert_true(action_id > 0);
    /* The running state was announced before the result. */
    json_t *running = sse_wait(s, "action", "summary", "echo event-probe", "state", "running", 0);
    assert_non_null(running);
    assert_int_equal(json_integer_value(json_object_get(running, "id")), action_id);

    session_delete(harness_eng, id);
    e = sse_wait(s, "session", "id", id, "state", "deleted", 10000);
    assert_non_null(e);

    /* Order: creating < ready < action running < action done < deleted. */
    size_t i, n = json_array_size(s->events);
    int seq = 0;
    static const char *const order[][2] = {{"session", "creating"},
                                           {"session", "ready"},
                                           {"action", "running"},
                                           {"action", "done"},
                                           {"session", "deleted"}};
    for (i = 0; i < n && seq < 5; i++) {
        json_t *ev = json_array_get(s->events, i);
        if (strcmp(jstr(ev, "type"), order[seq][0]) == 0 &&
            strcmp(jstr(json_object_get(ev, "data"), "state"), order[seq][1]) == 0)
            seq++;
    }
    assert_int_equal(seq, 5);
    assert_false(s->eof);
    sse_close(s);
    json_decref(sess);
}

/* Two subscribers both get the same event; a subscriber that goes away does not hurt the
 * engine. */
static void test_two_subscribers(void **state)
{
    struct sse *a = sse_open(harness_eng->socket), *b = sse_open(harness_eng->socket);
    struct sse *gone = sse_open(harness_eng->socket);
    sse_pump(gone, 200);
    sse_close(gone);
    double t0 = now_ms();
    while ((!a->status || !b->status) && now_ms() - t0 < 5000) {
        sse_pump(a, 50);
        sse_pump(b, 50);
    }
    json_t *sess = session_new(harness_eng, NULL);
    const char *id = jstr(sess, "id");
    assert_non_null(sse_wait(a, "session", "id", id, "state", "ready", 10000));
    assert_non_null(sse_wait(b, "session", "id", id, "state", "ready", 10000));
    session_delete(harness_eng, id);
    assert_non_null(sse_wait(a, "session", "id", id, "state", "deleted", 10000));
    assert_non_null(sse_wait(b, "session", "id", id, "state", "deleted", 10000));
    sse_close(a);
    sse_close(b);
    json_decref(sess);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_two_subscribers),
    };
    int failed =
        cmocka_run_group_tests_name("events", tests, harness_group_setup, harness_group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
