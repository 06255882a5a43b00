/* The History page's pure parts: the date range an operator types, query strings for the
 * engine, the state filter's cycle, and when to fetch the next page. No ncurses. */
#ifndef PADDOCK_UI_HISTORY_QUERY_H
#define PADDOCK_UI_HISTORY_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* A range of creation times: "7d", "12h", "30m", "2w" (that long before now), "2026-11-01" or
 * "2026-11-01 14:30" (local time; a `T` works too), "A..B", "A..", "..B"; an end given as a
 * day (or a minute) includes that day (minute). "" clears both. 0 with *since and *until set
 * (0: unbounded), or -1 with a message in err (nothing set). */
int history_parse_range(const char *text, time_t now, double *since, double *until, char *err,
                        size_t errsz);

/* Append "?key=value" or "&key=value" (value percent-encoded) to the path. A NULL or empty
 * value adds nothing. false (path unchanged) when it does not fit. */
bool history_query_add(char *path, size_t size, const char *key, const char *value);

/* The state filter's next value: NULL (any) → "deleted" → "ready" → … → NULL. */
const char *history_state_next(const char *cur);

/* Rows from the end of what is loaded at which the next page is fetched: within a screen,
 * at most half a page, at least 1. */
size_t history_margin(int page, int rows);
/* Whether to fetch the next page now: there is one, none is on its way, and the selection
 * is within margin rows of the last loaded row (or nothing is loaded). */
bool history_want_more(size_t loaded, size_t sel, size_t margin, bool more, bool pending);

/* "2026-11-01 14:03" in local time, or "-" for t <= 0. */
void history_format_time(double t, char *buf, size_t sz);
/* A duration in seconds as "45s", "12m", "3h20m", "2d4h". */
void history_format_span(double seconds, char *buf, size_t sz);

#endif
