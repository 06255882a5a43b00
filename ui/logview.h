/* Lines of text, pure (no ncurses): Docker's timestamps taken off each log line, sanitized
 * display text, rows of a wrapped line, scrolling over lines of several rows, and saving a log
 * buffer. The text viewer (ui/textview.c) and the Logs tab (ui/tab_logs.c) build on them. */
#ifndef PADDOCK_UI_LOGVIEW_H
#define PADDOCK_UI_LOGVIEW_H

#include "ui/logbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Width of a shown time, "HH:MM:SS.mmm", and the space after it. */
#define LOGVIEW_STAMP_COLS 13

/* A Docker log timestamp at the start of s (RFC 3339 with up to 9 fraction digits, Z or
 * ±hh:mm, then one space: "2026-11-22T19:43:01.332018648Z "). Returns the bytes it takes,
 * space included, and the time in *at (seconds since the epoch); 0 when s starts otherwise. */
size_t logview_stamp_parse(const char *s, size_t len, double *at);

/* "HH:MM:SS.mmm" in local time, or blanks of that width when at is 0 (no time known). */
void logview_stamp_format(double at, char *buf, size_t size);

/* One `log` event's text into b. stamped: every line starts with Docker's timestamp (as the
 * stream asks for), taken off and kept as the line's time; lines without one get `now`. A
 * stream's event starts a Docker frame, so a timestamp there is taken off even within a
 * line. Returns the lines completed. */
size_t logview_append(struct logbuf *b, int fd, const char *text, size_t len, bool stamped,
                      double now);

/* The sanitized, single-line text of a raw line into *buf (grown as needed; SANITIZE_* flags).
 * Returns its length; (*buf)[len] is NUL. On out of memory: 0 and an empty text. */
size_t logview_display(const char *text, size_t len, unsigned flags, char **buf, size_t *cap);

/* Rows that sanitized text s takes at `width` columns (at least 1). The byte offset where each
 * of rows first .. first + max - 1 starts goes to starts[0 ..] (those that exist). Combining
 * marks stay with their character; one wider than the width still gets a row of its own.
 * words: a row ends after its last space instead when that keeps half the width (prose). */
size_t logview_wrap(const char *s, size_t len, int width, bool words, size_t first, size_t *starts,
                    size_t max);

/* A place in the lines: a line and a row within it (wrapped lines have several). */
struct logview_pos {
    size_t line, row;
};

/* The rows line i takes (at least 1). */
typedef size_t (*logview_rows_fn)(size_t line, void *ud);

/* The first row shown when the last `height` rows of n lines fill the view. */
struct logview_pos logview_bottom(size_t n, size_t height, logview_rows_fn rows, void *ud);
/* Whether the view starting at p shows the last row of the n lines. */
bool logview_at_bottom(struct logview_pos p, size_t n, size_t height, logview_rows_fn rows,
                       void *ud);
/* Move the view's first row by delta rows: never before the first row, never past the
 * bottom (logview_bottom). */
void logview_move(struct logview_pos *p, long delta, size_t n, size_t height, logview_rows_fn rows,
                  void *ud);

/* Write every line as it came (raw bytes, a newline each), with its time as an RFC 3339 UTC
 * prefix when stamps is set and the line has one. 0, or -1 (errno set) on a write error. */
int logview_save(const struct logbuf *b, FILE *f, bool stamps);

#endif
