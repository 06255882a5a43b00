/* Seconds as paddock passes them around (JSON numbers, doubles) turned into libc's time types,
 * checked: a number from an API, a record or a container may be anything (1e300, -1e300,
 * infinity), and converting one that a time_t or an int cannot hold is undefined behaviour. */
#ifndef PADDOCK_COMMON_TIMECONV_H
#define PADDOCK_COMMON_TIMECONV_H

#include <time.h>

/* The longest action timeout (seconds) the engine and the executor accept: a day. Beyond it an
 * action is refused with a 400 rather than left with a deadline no timer can hold. */
#define TIMECONV_TIMEOUT_MAX 86400.0

/* sec rounded down to a whole second into *out: 0, or -1 when sec is NaN, infinite or outside
 * what a time_t holds (*out unchanged). */
int timeconv_to_time(double sec, time_t *out);
/* A wall-clock time (seconds since the epoch) broken down in local time or UTC into *out: 0,
 * or -1 when sec is not after the epoch (0 and below mean "no time" in paddock's records), is
 * past year 9999 (which a four-digit "%Y" no longer shows), or the libc refuses it. */
int timeconv_to_local(double sec, struct tm *out);
int timeconv_to_utc(double sec, struct tm *out);

#endif
