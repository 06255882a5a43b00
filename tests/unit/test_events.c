/* The engine's event point: subscribers get what is published, in order, until they
 * unsubscribe (also from inside a delivery). */
#include "engine/events.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

struct seen {
    int count;
    char type[32];
    json_t *data;
    struct events *ev; /* set: unsubscribe itself on its first event */
};

static void on_event(const char *type, json_t *data, void *ud)
{
    struct seen *s = ud;
    s->count++;
    snprintf(s->type, sizeof(s->type), "%s", type);
    s->data = data;
    if (s->ev)
        events_unsubscribe(s->ev, on_event, s);
}

static void test_publish_reaches_every_subscriber(void **state)
{
    (void)state;
    struct events *ev = events_new();
    assert_non_null(ev);
    struct seen a = {0}, b = {0};
    assert_int_equal(events_subscribe(ev, on_event, &a), 0);
    assert_int_equal(events_subscribe(ev, on_event, &b), 0);
    json_t *j = json_pack("{s:s}", "id", "s1");
    events_publish(ev, "session", j);
    assert_int_equal(a.count, 1);
    assert_int_equal(b.count, 1);
    assert_string_equal(a.type, "session");
    assert_ptr_equal(b.data, j);
    json_decref(j);
    events_free(ev);
}

static void test_unsubscribe_stops_delivery(void **state)
{
    (void)state;
    struct events *ev = events_new();
    struct seen a = {0}, b = {0};
    events_subscribe(ev, on_event, &a);
    events_subscribe(ev, on_event, &b);
    events_unsubscribe(ev, on_event, &a);
    events_publish(ev, "build", NULL);
    assert_int_equal(a.count, 0);
    assert_int_equal(b.count, 1);
    /* Unsubscribing what is not subscribed changes nothing. */
    events_unsubscribe(ev, on_event, &a);
    events_publish(ev, "build", NULL);
    assert_int_equal(b.count, 2);
    events_free(ev);
}

static void test_unsubscribe_inside_delivery(void **state)
{
    (void)state;
    struct events *ev = events_new();
    struct seen once = {.ev = ev}, after = {0};
    events_subscribe(ev, on_event, &once);
    events_subscribe(ev, on_event, &after);
    events_publish(ev, "action", NULL);
    events_publish(ev, "action", NULL);
    assert_int_equal(once.count, 1);
    assert_int_equal(after.count, 2);
    events_free(ev);
}

static void test_many_subscribers_and_no_point(void **state)
{
    (void)state;
    struct events *ev = events_new();
    struct seen s[20] = {0};
    for (int i = 0; i < 20; i++)
        assert_int_equal(events_subscribe(ev, on_event, &s[i]), 0);
    events_publish(ev, "stats", NULL);
    for (int i = 0; i < 20; i++)
        assert_int_equal(s[i].count, 1);
    events_free(ev);
    /* Before the engine made its event point, publishing is a no-op. */
    events_publish(NULL, "stats", NULL);
    assert_int_equal(events_subscribe(NULL, on_event, &s[0]), -1);
}

static bool feeds_open;
static bool listening(void *ud)
{
    (void)ud;
    return feeds_open;
}

/* events_listening: a subscriber without a predicate always listens; one with it only while
 * it says so (the API while a feed is open), so a publisher can skip building the event. */
static void test_listening(void **state)
{
    (void)state;
    struct events *ev = events_new();
    struct seen a = {0}, b = {0};
    assert_false(events_listening(ev));
    assert_int_equal(events_subscribe_if(ev, on_event, listening, &a), 0);
    feeds_open = false;
    assert_false(events_listening(ev));
    feeds_open = true;
    assert_true(events_listening(ev));
    feeds_open = false;
    assert_int_equal(events_subscribe(ev, on_event, &b), 0);
    assert_true(events_listening(ev));
    events_unsubscribe(ev, on_event, &b);
    assert_false(events_listening(ev));
    events_free(ev);
    assert_false(events_listening(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_publish_reaches_every_subscriber),
        cmocka_unit_test(test_unsubscribe_stops_delivery),
        cmocka_unit_test(test_unsubscribe_inside_delivery),
        cmocka_unit_test(test_many_subscribers_and_no_point),
        cmocka_unit_test(test_listening),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
