/* A bounded buffer of log lines for the Logs view: lines in, oldest dropped past the limits
 * (and counted, so the view can say so), search with next/previous match. Pure: no ncurses;
 * the text is raw (the view sanitizes it when drawing). */
#ifndef PADDOCK_UI_LOGBUF_H
#define PADDOCK_UI_LOGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct logbuf_line {
    char *text; /* without the newline; raw bytes from the container */
    size_t len;
    double at; /* when it arrived (seconds), for the timestamps toggle */
    int fd;    /* 1 stdout, 2 stderr */
};

struct logbuf {
    struct logbuf_line *ring;
    size_t cap;       /* lines the ring holds */
    size_t max_bytes; /* text bytes kept at most */
    size_t head;      /* index of the oldest line */
    size_t count;     /* lines held */
    size_t bytes;     /* text bytes held */
    uint64_t dropped; /* lines dropped from the front so far */
    uint64_t total;   /* lines ever added: line i's absolute number is dropped + i */
    /* a partial last line (no newline yet) per fd */
    char *partial[3];
    size_t partial_len[3];
};

/* 0, or -1 when out of memory. max_lines >= 1. */
int logbuf_init(struct logbuf *b, size_t max_lines, size_t max_bytes);
void logbuf_free(struct logbuf *b);
void logbuf_clear(struct logbuf *b);
/* Text as it comes (any chunking): split into lines at \n (a \r before it is dropped); an
 * unfinished line waits for the rest. Returns how many lines were completed. A single line
 * longer than max_bytes / 4 is cut there (the rest continues as a new line). */
size_t logbuf_append(struct logbuf *b, int fd, const char *data, size_t len, double at);
/* Line i, 0 = the oldest held; NULL past the end. */
const struct logbuf_line *logbuf_get(const struct logbuf *b, size_t i);

/* Case-insensitive (ASCII) search for needle from line `from` forward (dir > 0) or backward
 * (dir < 0), wrapping around; returns the line index or -1. */
long logbuf_find(const struct logbuf *b, const char *needle, size_t from, int dir);
/* Every match of needle in a line: offsets into *starts (up to max); returns the count. */
size_t logbuf_matches(const char *text, size_t len, const char *needle, size_t *starts, size_t max);

#endif
