/* common/timeconv.c: seconds from a hostile number become a time_t or a struct tm only when
 * they fit; NaN, infinities and numbers like 1e300 are refused instead of converted. */
#include "common/timeconv.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

static void test_to_time(void **state)
{
    (void)state;
    time_t t = 42;
    assert_int_equal(timeconv_to_time(1.9, &t), 0);
    assert_int_equal(t, 1);
    assert_int_equal(timeconv_to_time(-1.5, &t), 0); /* rounded down, not toward zero */
    assert_int_equal(t, -2);
    assert_int_equal(timeconv_to_time(1e18, &t), 0);
    assert_true(t == (time_t)1000000000000000000LL);
    assert_int_equal(timeconv_to_time(-9223372036854775808.0, &t), 0);
    assert_true(t == (time_t)INT64_MIN);
    t = 42;
    static const double bad[] = {1e300,     -1e300, 9223372036854775808.0, -9.3e18, INFINITY,
                                 -INFINITY, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(timeconv_to_time(bad[i], &t), -1);
        assert_int_equal(t, 42); /* untouched */
    }
}

static void test_to_calendar(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    struct tm tm;
    assert_int_equal(timeconv_to_utc(86400.75, &tm), 0);
    assert_int_equal(tm.tm_year, 70);
    assert_int_equal(tm.tm_mday, 2);
    assert_int_equal(tm.tm_sec, 0);
    assert_int_equal(timeconv_to_local(253402300799.0, &tm), 0); /* the last second shown */
    assert_int_equal(tm.tm_year + 1900, 9999);
    static const double bad[] = {0, -1, -1e300, 253402300800.0, 1e300, INFINITY, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(timeconv_to_local(bad[i], &tm), -1);
        assert_int_equal(timeconv_to_utc(bad[i], &tm), -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_to_time),
        cmocka_unit_test(test_to_calendar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
