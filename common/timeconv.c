/* Checked conversions of seconds to time_t and struct tm (timeconv.h). */
#include "common/timeconv.h"

#include <math.h>
#include <stdint.h>

/* 10000-01-01T00:00:00Z: the first time a four-digit year no longer shows. */
#define TIMECONV_YEAR_10000 253402300800.0

int timeconv_to_time(double sec, time_t *out)
{
    /* time_t is a 64-bit integer on every target paddock builds for (glibc and musl 1.2 on
     * 64-bit Linux): 2^63 is exact as a double, so the comparison below is too. */
    _Static_assert(sizeof(time_t) == sizeof(int64_t), "time_t is 64 bits");
    if (!isfinite(sec))
        return -1;
    double whole = floor(sec);
    if (!(whole >= -9223372036854775808.0 && whole < 9223372036854775808.0))
        return -1;
    *out = (time_t)whole;
    return 0;
}

static int timeconv_calendar(double sec, time_t *t)
{
    if (!(sec > 0 && sec < TIMECONV_YEAR_10000))
        return -1;
    return timeconv_to_time(sec, t);
}

int timeconv_to_local(double sec, struct tm *out)
{
    time_t t;
    return timeconv_calendar(sec, &t) == 0 && localtime_r(&t, out) ? 0 : -1;
}

int timeconv_to_utc(double sec, struct tm *out)
{
    time_t t;
    return timeconv_calendar(sec, &t) == 0 && gmtime_r(&t, out) ? 0 : -1;
}
