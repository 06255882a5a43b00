/* Bounded capture of a command's output.
 *
 * A command may print gigabytes; an observation shows at most the first and last 15,000 chars
 * of its right-stripped text. So the capture keeps the first CLIP_HEAD_MAX bytes and a ring of
 * the last CLIP_TAIL_MAX bytes (64 KiB each: enough for 15,000 chars of up to 4 bytes each).
 * Trailing whitespace is held apart until something else follows, so right-stripping never
 * throws away the real tail, however much whitespace a command prints at the end. */
#ifndef PADDOCK_EXECUTOR_CLIP_H
#define PADDOCK_EXECUTOR_CLIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define CLIP_HEAD_MAX 65536
#define CLIP_TAIL_MAX 65536
/* OpenHands reads a tmux pane of 1,000 rows with 10,000 rows of history: of a longer output
 * only the last 11,000 lines are seen (its test_long_output_exceed_history_limit finds line
 * 40,000 of 50,000). The capture keeps the last CAPTURE_RECENT_MAX bytes and where the last
 * 11,000 lines start, so it can show the same window. */
#define CAPTURE_LINES_MAX 11000
#define CAPTURE_RECENT_MAX (4u * 1024 * 1024)

/* First head_max bytes, last tail_max bytes, and how many there were in all. */
struct clip {
    char *head;
    size_t head_len, head_cap;
    char *ring;
    size_t ring_start; /* index of the oldest byte in ring */
    size_t ring_len;
    uint64_t total;
    size_t head_max, tail_max;
};

struct capture {
    struct clip body; /* committed output: never ends in whitespace */
    struct clip ws;   /* trailing whitespace not yet followed by anything else */
    /* The line window: the last recent_max bytes (a ring that grows up to that), and the
     * stream positions just after the last lines_max + 1 newlines (a ring too). */
    char *recent;
    size_t recent_cap, recent_start, recent_len, recent_max;
    uint64_t total; /* bytes appended */
    uint64_t *nl;
    size_t nl_start, nl_len, nl_cap, lines_max;
    uint64_t newlines;
    bool windowless; /* no line window (run_ipython: Jupyter has no pane history) */
};

/* head_max/tail_max: 0 selects the defaults; tests pass small ones. */
void capture_init(struct capture *c, size_t head_max, size_t tail_max);
/* Tests: a smaller line window (0 selects the defaults). */
void capture_set_window(struct capture *c, size_t lines_max, size_t recent_max);
/* No line window at all: only the 30,000-char head/tail cap applies. Survives reset. */
void capture_no_window(struct capture *c);
int capture_append(struct capture *c, const char *data, size_t n);
bool capture_is_empty(const struct capture *c);
/* Appends the text to out: the last lines_max lines when there were more (OpenHands' window),
 * right-stripped, UTF-8-repaired, middle-truncated to 30,000 chars. */
int capture_render(const struct capture *c, struct buf *out);
/* The same without the 30,000-char cap (OpenHands does not cap `hidden` commands): the whole
 * text while the line window's bytes (CAPTURE_RECENT_MAX) hold it, else as capture_render. */
int capture_render_uncapped(const struct capture *c, struct buf *out);
/* 0 when no line was dropped; else how many lines capture_render shows (lines_max, or fewer
 * when those lines were longer than the bytes kept). */
size_t capture_shown_lines(const struct capture *c);
/* Forgets everything and gives memory back. */
void capture_reset(struct capture *c);
/* Forgets the text, for the next command; rings of up to CAPTURE_KEEP_BYTES stay allocated
 * (capture_reset gives them back). */
#define CAPTURE_KEEP_BYTES (16 * 1024)
void capture_clear(struct capture *c);

#endif
