/* One text viewer for every page that shows text to read: the Logs tab (a live ring of lines),
 * the Action page (one action whole) and the History page's log tail and observation. It
 * keeps where the view is (a line and a row within it: wrapped lines have several), scrolls,
 * follows the end, wraps or cuts long lines, searches what is shown and highlights the
 * matches; the lines come from the page through a source (struct textview_source). Pure: no
 * ncurses (tests/tui/test_textview.c); textview_draw (ui_internal.h) draws through draw_text,
 * so every line is sanitized on its way to the screen. */
#ifndef PADDOCK_UI_TEXTVIEW_H
#define PADDOCK_UI_TEXTVIEW_H

#include "ui/logview.h"
#include "ui/theme.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEXTVIEW_ROWS_CACHE 128 /* rows of recently wrapped lines */
#define TEXTVIEW_NEEDLE 256

/* Where the lines come from. Line i's text is raw bytes without its newline, borrowed until the
 * source changes. */
struct textview_source {
    size_t (*count)(const void *ud);
    const char *(*line)(const void *ud, size_t i, size_t *len);
    /* Optional: the colour of line i (UI_C_NORMAL without it). */
    enum ui_color (*color)(const void *ud, size_t i);
    /* Optional: the absolute number of line 0, for a source that drops its oldest lines (the
     * view stays on the same line when the lines before it go); 0 without. */
    uint64_t (*first)(const void *ud);
    /* Optional: the text of line i's gutter (a time), shown when gutter_cols is set. */
    void (*gutter)(const void *ud, size_t i, char *buf, size_t size);
};

struct textview_rows_entry {
    uint64_t abs;
    size_t len, rows;
    int width;
};

struct textview {
    const struct textview_source *src;
    const void *ud;
    unsigned flags;   /* SANITIZE_* for this terminal */
    bool wrap;        /* long lines wrap (else they are cut, marked with …) */
    bool words;       /* wrap after a space when there is one in the row's second half */
    bool follow;      /* the view sticks to the last row */
    int gutter_cols;  /* columns before the text for src->gutter (0: none) */
    int width;        /* columns of text (without the gutter) at the last draw */
    int height;       /* rows shown at the last draw */
    uint64_t top_abs; /* first line shown (absolute: src->first + index) */
    size_t top_row;   /* and its first row shown */
    char needle[TEXTVIEW_NEEDLE];
    bool has_match;
    uint64_t match_abs; /* the line n/N went to */
    char *disp;         /* a line's shown text, reused */
    size_t disp_cap;
    struct textview_rows_entry cache[TEXTVIEW_ROWS_CACHE];
    /* textview_position's count of every row, and what it was counted for */
    size_t total_rows, total_lines;
    int total_width; /* 0: not counted */
    bool total_wrap;
};

/* A view of src's lines (ud is the source's), from the top, 20 rows of 80 columns until it
 * is drawn. */
void textview_init(struct textview *tv, const struct textview_source *src, const void *ud,
                   unsigned flags);
void textview_free(struct textview *tv);
/* The lines were replaced (or emptied): forget the wrapped rows and the match; the view goes
 * to the top. */
void textview_reset(struct textview *tv);
/* The lines' text changed in place (a refetch): forget the wrapped rows, keep the place. */
void textview_changed(struct textview *tv);

size_t textview_count(const struct textview *tv);
/* Line i's shown text (sanitized, one line) and its length; borrowed until the next call. */
const char *textview_display(struct textview *tv, size_t i, size_t *len);
/* Rows line i takes at the view's width (1 when not wrapping). */
size_t textview_rows(struct textview *tv, size_t i);

/* The first row shown (the bottom while following), within the lines. */
struct logview_pos textview_top(struct textview *tv);
void textview_set_top(struct textview *tv, struct logview_pos p);
/* Move by delta rows (never before the first, never past the bottom). Moving up stops
 * following: returns true when it did. */
bool textview_scroll(struct textview *tv, long delta);
/* Rows a page moves: the height less one, at least one. */
long textview_page(const struct textview *tv);
/* The first row, not following; the end, following it. */
void textview_home(struct textview *tv);
void textview_end(struct textview *tv);
/* Line i a third of the way down, not following. */
void textview_show_line(struct textview *tv, size_t i);
/* Wrap on or off, keeping the first line shown (from its start). */
void textview_set_wrap(struct textview *tv, bool wrap);
/* Rows: the first and last shown (1-based) and the total, for "12-40 of 300". Counts every
 * line's rows: for texts of a bounded size (an action, a tail), not the live log. */
void textview_position(struct textview *tv, size_t *first, size_t *last, size_t *total);

/* The search (needle as typed; "" clears it). */
void textview_set_needle(struct textview *tv, const char *needle);
/* The first line from `from` (forward when dir > 0, else backward, wrapping around) whose
 * shown text holds the needle (ASCII case-insensitive); -1 when none does. */
long textview_find_from(struct textview *tv, size_t from, int dir);
/* Go to the next (dir > 0) or previous match: from the first line shown when first (a new
 * search) or there is no match yet, else from the current match. The line found is shown a
 * third of the way down and becomes the match; -1 when none, else its index, and *wrapped
 * when the search went round an end. */
long textview_find(struct textview *tv, int dir, bool first, bool *wrapped);
/* How many lines' shown text holds the needle. */
size_t textview_count_matches(struct textview *tv);

/* A text held whole (an observation, a stored tail) cut into lines at '\n' (a '\r' before it
 * dropped; no empty line after a final newline), and a source over it. */
struct textview_text {
    char *text;
    size_t len;
    size_t *off, *lens; /* each line's start and length */
    size_t nlines;
};
/* Replace t's text with a copy of text. 0, or -1 when out of memory (t is then empty). */
int textview_text_set(struct textview_text *t, const char *text, size_t len);
void textview_text_free(struct textview_text *t);
/* The source over a struct textview_text (ud: the text). */
extern const struct textview_source textview_text_source;

#endif
