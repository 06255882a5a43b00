/* The History page's pure parts (ui/history_query.c): date ranges typed by the operator,
 * query strings, the state filter's cycle, when the next page is fetched, time formats.
 * Local time is UTC here (TZ set in main). */
#include "ui/history_query.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOW 1795374989 /* 2026-11-22 19:16:29 UTC */
#define DAY 86400.0

static int parse(const char *text, double *since, double *until, char *err)
{
    *since = *until = -42;
    return history_parse_range(text, NOW, since, until, err, 200);
}

static void test_relative(void **state)
{
    (void)state;
    double s, u;
    char err[200];
    assert_int_equal(parse("7d", &s, &u, err), 0);
    assert_true(s == NOW - 7 * DAY);
    assert_true(u == 0);
    assert_int_equal(parse(" 12h ", &s, &u, err), 0);
    assert_true(s == NOW - 12 * 3600.0);
    assert_int_equal(parse("30m", &s, &u, err), 0);
    assert_true(s == NOW - 1800.0);
    assert_int_equal(parse("2W", &s, &u, err), 0);
    assert_true(s == NOW - 14 * DAY);
    assert_int_equal(parse("0d", &s, &u, err), 0);
    assert_true(s == NOW);
    /* older than a week: the end only */
    assert_int_equal(parse("..7d", &s, &u, err), 0);
    assert_true(s == 0);
    assert_true(u == NOW - 7 * DAY);
    assert_int_equal(parse("2d..1d", &s, &u, err), 0);
    assert_true(s == NOW - 2 * DAY && u == NOW - DAY);
}

static void test_dates(void **state)
{
    (void)state;
    double s, u;
    char err[200];
    const double nov1 = 1793491200; /* 2026-11-01 00:00 UTC */
    assert_int_equal(parse("2026-11-01", &s, &u, err), 0);
    assert_true(s == nov1);
    assert_true(u == 0);
    assert_int_equal(parse("2026-11-01 14:30", &s, &u, err), 0);
    assert_true(s == nov1 + 14 * 3600 + 30 * 60);
    assert_int_equal(parse("2026-11-01T14:30", &s, &u, err), 0);
    assert_true(s == nov1 + 14 * 3600 + 30 * 60);
    /* an end given as a day includes that day; as a minute, that minute */
    assert_int_equal(parse("2026-11-01..2026-11-03", &s, &u, err), 0);
    assert_true(s == nov1 && u == nov1 + 3 * DAY);
    assert_int_equal(parse("2026-11-01 10:00..2026-11-01 10:05", &s, &u, err), 0);
    assert_true(s == nov1 + 36000 && u == nov1 + 36000 + 360);
    assert_int_equal(parse("..2026-11-01", &s, &u, err), 0);
    assert_true(s == 0 && u == nov1 + DAY);
    assert_int_equal(parse("2026-11-01..", &s, &u, err), 0);
    assert_true(s == nov1 && u == 0);
    /* month and year ends roll over properly */
    assert_int_equal(parse("..2026-12-31", &s, &u, err), 0);
    assert_true(u == 1798761600);                          /* 2027-01-01 00:00 UTC */
    assert_int_equal(parse("2028-02-29", &s, &u, err), 0); /* a leap day */
    /* empty: no range */
    assert_int_equal(parse("", &s, &u, err), 0);
    assert_true(s == 0 && u == 0);
    assert_int_equal(parse("   ", &s, &u, err), 0);
    assert_true(s == 0 && u == 0);
    assert_int_equal(history_parse_range(NULL, NOW, &s, &u, err, sizeof(err)), 0);
}

static void test_bad_ranges(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "yesterday",
        "7",
        "7y",
        "d7",
        "-7d",
        "2026-02-30",
        "2027-02-29",
        "2026-13-01",
        "2026-11-01 25:00",
        "2026-11-01 10:6x",
        "2026-11-01x",
        "..",
        " .. ",
        "2026-11-03..2026-11-01",
        "1d..2d",
        "7d..x",
        "x..7d",
        "999999d",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        double s, u;
        char err[200] = "";
        int rc = parse(bad[i], &s, &u, err);
        if (rc == 0)
            fail_msg("\"%s\" was accepted", bad[i]);
        assert_true(err[0] != '\0');
        assert_true(s == -42 && u == -42); /* nothing set */
    }
}

static void test_query_add(void **state)
{
    (void)state;
    char p[64] = "/v1/sessions";
    assert_true(history_query_add(p, sizeof(p), "all", "1"));
    assert_string_equal(p, "/v1/sessions?all=1");
    assert_true(history_query_add(p, sizeof(p), "image", "a b/c:d&e=f"));
    assert_string_equal(p, "/v1/sessions?all=1&image=a%20b%2Fc%3Ad%26e%3Df");
    assert_true(history_query_add(p, sizeof(p), "state", NULL));
    assert_true(history_query_add(p, sizeof(p), "state", ""));
    assert_string_equal(p, "/v1/sessions?all=1&image=a%20b%2Fc%3Ad%26e%3Df");
    /* does not fit: the path stays as it was */
    assert_false(history_query_add(p, sizeof(p), "q", "0123456789012345678901234567890"));
    assert_string_equal(p, "/v1/sessions?all=1&image=a%20b%2Fc%3Ad%26e%3Df");
    char u[32] = "/v1/history";
    assert_true(history_query_add(u, sizeof(u), "q", "\xC3\xA9-_.~"));
    assert_string_equal(u, "/v1/history?q=%C3%A9-_.~");
}

static void test_state_cycle(void **state)
{
    (void)state;
    const char *s = history_state_next(NULL);
    assert_string_equal(s, "deleted");
    assert_string_equal(history_state_next(s), "ready");
    int n = 1;
    while ((s = history_state_next(s)) != NULL && n < 50)
        n++;
    assert_int_equal(n, 10); /* every state once, then back to any */
    assert_null(history_state_next("no-such-state"));
}

static void test_prefetch(void **state)
{
    (void)state;
    /* margin: half a page, at most a screen, at least one row */
    assert_int_equal(history_margin(100, 30), 30);
    assert_int_equal(history_margin(100, 0), 50);
    assert_int_equal(history_margin(3, 30), 1);
    assert_int_equal(history_margin(1, 30), 1);
    /* 3 loaded, margin 1: the first row wants nothing, the second wants the next page */
    assert_false(history_want_more(3, 0, 1, true, false));
    assert_true(history_want_more(3, 1, 1, true, false));
    assert_true(history_want_more(3, 2, 1, true, false));
    /* never two pages at once, nothing past the end */
    assert_false(history_want_more(3, 2, 1, true, true));
    assert_false(history_want_more(3, 2, 1, false, false));
    /* nothing loaded yet: the first page */
    assert_true(history_want_more(0, 0, 1, true, false));
    assert_false(history_want_more(300, 100, 30, true, false));
    assert_true(history_want_more(300, 269, 30, true, false));
}

static void test_formats(void **state)
{
    (void)state;
    char b[32];
    history_format_time(1793491200 + 14 * 3600 + 3 * 60, b, sizeof(b));
    assert_string_equal(b, "2026-11-01 14:03");
    history_format_time(0, b, sizeof(b));
    assert_string_equal(b, "-");
    history_format_time(1e300, b, sizeof(b)); /* a hostile record: no time, not a crash */
    assert_string_equal(b, "-");
    history_format_time(-INFINITY, b, sizeof(b));
    assert_string_equal(b, "-");
    history_format_span(45, b, sizeof(b));
    assert_string_equal(b, "45s");
    history_format_span(12 * 60 + 5, b, sizeof(b));
    assert_string_equal(b, "12m");
    history_format_span(3 * 3600 + 20 * 60, b, sizeof(b));
    assert_string_equal(b, "3h20m");
    history_format_span(2 * DAY + 4 * 3600, b, sizeof(b));
    assert_string_equal(b, "2d4h");
    history_format_span(-5, b, sizeof(b));
    assert_string_equal(b, "0s");
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relative),    cmocka_unit_test(test_dates),
        cmocka_unit_test(test_bad_ranges),  cmocka_unit_test(test_query_add),
        cmocka_unit_test(test_state_cycle), cmocka_unit_test(test_prefetch),
        cmocka_unit_test(test_formats),
    };
    return cmocka_run_group_tests_name("history", tests, NULL, NULL);
}
