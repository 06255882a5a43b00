/* Integration test of GET /v1/events (server-sent events), read on a raw unix socket with poll:
 * session events on create and delete, action events for a run action. */
#include "harness.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void test_events(void **state)
{
    struct sse *s = sse_open(harness_eng->socket, "/v1/events");
    /* The stream opens with a comment at once: headers arrive without any event. */
    double t0 = now_ms();
    while (!s->status && now_ms() - t0 < 5000)
        sse_pump(s, 100);
    assert_int_equal(s->status, 200);

    json_t *sess = session_new(harness_eng, "{\"name\": \"events-test\"}");
    const char *id = jstr(sess, "id");
    json_t *e = sse_wait(s, "session", "id", id, "state", "starting", 10000);
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

    /* Order: starting < started < ready < action running < action done < deleted. */
    size_t i, n = json_array_size(s->events);
    int seq = 0;
    static const char *const order[][2] = {{"session", "starting"}, {"session", "started"},
                                           {"session", "ready"},    {"action", "running"},
                                           {"action", "done"},      {"session", "deleted"}};
    for (i = 0; i < n && seq < 6; i++) {
        json_t *ev = json_array_get(s->events, i);
        if (strcmp(jstr(ev, "type"), order[seq][0]) == 0 &&
            strcmp(jstr(json_object_get(ev, "data"), "state"), order[seq][1]) == 0)
            seq++;
    }
    assert_int_equal(seq, 6);
    assert_false(s->eof);
    sse_close(s);
    json_decref(sess);
}

/* Two subscribers both get the same event; a subscriber that goes away does not hurt the
 * engine. */
static void test_two_subscribers(void **state)
{
    struct sse *a = sse_open(harness_eng->socket, "/v1/events"),
               *b = sse_open(harness_eng->socket, "/v1/events");
    struct sse *gone = sse_open(harness_eng->socket, "/v1/events");
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
