/* The History page's pure parts (history_query.h): date ranges, query strings, the state
 * cycle, the prefetch rule, time formats. */
#include "ui/history_query.h"
#include "common/timeconv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds per unit of a relative time ("7d"). */
static const struct {
    char unit;
    long seconds;
} history_units[] = {{'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}};

/* A local date and time to seconds; false when the fields are not a real date (mktime would
 * roll 2026-02-30 over to March). */
static bool history_local(int y, int mo, int d, int h, int mi, double *out)
{
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_isdst = -1};
    time_t t = mktime(&tm);
    if (t == (time_t)-1 || tm.tm_year != y - 1900 || tm.tm_mon != mo - 1 || tm.tm_mday != d)
        return false;
    *out = (double)t;
    return true;
}

/* One end of a range in s[0..len): *start where it begins and *end where what it names ends
 * (a day: the next midnight; a minute: 60 s later; a relative time: the same instant). */
static int history_parse_point(const char *s, size_t len, time_t now, double *start, double *end,
                               char *err, size_t errsz)
{
    char buf[64];
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (len == 0 || len >= sizeof(buf)) {
        snprintf(err, errsz, "a time is 7d, 12h, 2026-11-01 or 2026-11-01 14:30");
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *e = NULL;
    long n = isdigit((unsigned char)buf[0]) ? strtol(buf, &e, 10) : -1;
    if (e && e[0] && !e[1] && n >= 0 && n <= 100000) {
        for (size_t i = 0; i < sizeof(history_units) / sizeof(history_units[0]); i++) {
            if (history_units[i].unit == tolower((unsigned char)e[0])) {
                *start = *end = (double)now - (double)n * (double)history_units[i].seconds;
                return 0;
            }
        }
    }
    int y, mo, d, h = 0, mi = 0, used = 0, used2 = 0;
    if (isdigit((unsigned char)buf[0]) && sscanf(buf, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 &&
        used >= 8) {
        bool minute = false;
        if (buf[used] == ' ' || buf[used] == 'T') {
            if (sscanf(buf + used + 1, "%2d:%2d%n", &h, &mi, &used2) != 2 || h > 23 || mi > 59 ||
                h < 0 || mi < 0 || buf[used + 1 + used2]) {
                snprintf(err, errsz, "\"%s\": the time of day is HH:MM", buf);
                return -1;
            }
            minute = true;
        } else if (buf[used]) {
            used = 0;
        }
        if (used && history_local(y, mo, d, h, mi, start)) {
            if (minute) {
                *end = *start + 60;
            } else { /* the next midnight, through mktime (days are not always 24 h) */
                struct tm tm = {
                    .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d + 1, .tm_isdst = -1};
                *end = (double)mktime(&tm);
            }
            return 0;
        }
        if (used) {
            snprintf(err, errsz, "\"%s\" is not a date", buf);
            return -1;
        }
    }
    snprintf(err, errsz, "\"%s\": a time is 7d, 12h, 30m, 2w, 2026-11-01 or 2026-11-01 14:30", buf);
    return -1;
}

int history_parse_range(const char *text, time_t now, double *since, double *until, char *err,
                        size_t errsz)
{
    const char *p = text ? text : "";
    while (isspace((unsigned char)*p))
        p++;
    if (!*p) {
        *since = *until = 0;
        return 0;
    }
    double s = 0, u = 0, ignore;
    const char *dots = strstr(p, "..");
    if (!dots)
        return history_parse_point(p, strlen(p), now, since, &ignore, err, errsz) < 0
                   ? -1
                   : (*until = 0, 0);
    size_t left = (size_t)(dots - p);
    const char *right = dots + 2;
    bool has_left = false, has_right = false;
    for (size_t i = 0; i < left; i++)
        has_left |= !isspace((unsigned char)p[i]);
    for (const char *q = right; *q; q++)
        has_right |= !isspace((unsigned char)*q);
    if (!has_left && !has_right) {
        snprintf(err, errsz, "\"..\" needs a time on one side at least");
        return -1;
    }
    if (has_left && history_parse_point(p, left, now, &s, &ignore, err, errsz) < 0)
        return -1;
    if (has_right && history_parse_point(right, strlen(right), now, &ignore, &u, err, errsz) < 0)
        return -1;
    if (has_left && has_right && u <= s) {
        snprintf(err, errsz, "the range ends before it starts");
        return -1;
    }
    *since = s;
    *until = u;
    return 0;
}

bool history_query_add(char *path, size_t size, const char *key, const char *value)
{
    if (!value || !*value)
        return true;
    size_t n = strlen(path), start = n;
    int w = snprintf(path + n, size - n, "%c%s=", strchr(path, '?') ? '&' : '?', key);
    if (w < 0 || (size_t)w >= size - n)
        goto full;
    n += (size_t)w;
    for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
        if (isalnum(*c) || strchr("-_.~", *c)) {
            if (n + 1 >= size)
                goto full;
            path[n++] = (char)*c;
        } else {
            if (n + 3 >= size)
                goto full;
            n += (size_t)snprintf(path + n, size - n, "%%%02X", *c);
        }
    }
    path[n] = '\0';
    return true;
full:
    path[start] = '\0';
    return false;
}

/* What an operator looks for first in history, then the rest of the engine's states. */
static const char *const history_states[] = {
    "deleted",    "ready",        "paused",   "stopped", "error",
    "oom-killed", "disconnected", "starting", "started", "building",
};

const char *history_state_next(const char *cur)
{
    size_t n = sizeof(history_states) / sizeof(history_states[0]);
    if (!cur)
        return history_states[0];
    for (size_t i = 0; i + 1 < n; i++)
        if (strcmp(cur, history_states[i]) == 0)
            return history_states[i + 1];
    return NULL;
}

size_t history_margin(int page, int rows)
{
    int m = page / 2;
    if (rows > 0 && rows < m)
        m = rows;
    return m < 1 ? 1 : (size_t)m;
}

bool history_want_more(size_t loaded, size_t sel, size_t margin, bool more, bool pending)
{
    if (!more || pending)
        return false;
    return loaded == 0 || sel + margin + 1 >= loaded;
}

void history_format_time(double t, char *buf, size_t sz)
{
    struct tm tm;
    if (timeconv_to_local(t, &tm) < 0 || strftime(buf, sz, "%Y-%m-%d %H:%M", &tm) == 0)
        snprintf(buf, sz, "-");
}

void history_format_span(double s, char *buf, size_t sz)
{
    long v = s > 0 ? (long)(s + 0.5) : 0;
    if (v < 60)
        snprintf(buf, sz, "%lds", v);
    else if (v < 3600)
        snprintf(buf, sz, "%ldm", v / 60);
    else if (v < 86400)
        snprintf(buf, sz, "%ldh%02ldm", v / 3600, v % 3600 / 60);
    else
        snprintf(buf, sz, "%ldd%ldh", v / 86400, v % 86400 / 3600);
}
