/* Time-series graphs as text: braille (2x4 dots a cell), eighth blocks, or ASCII. Pure: no
 * ncurses; the views draw the rows it returns (trusted text: only graph glyphs). */
#ifndef PADDOCK_UI_GRAPH_H
#define PADDOCK_UI_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

enum graph_mode {
    GRAPH_BRAILLE, /* two samples a column, four levels a row */
    GRAPH_BLOCK,   /* one sample a column, eight levels a row */
    GRAPH_ASCII,   /* one sample a column, two levels a row: for terminals without UTF-8 */
};

/* Area graph of the newest values (oldest first in the array; NAN is a gap) scaled to
 * [0, max], right-aligned, into height rows of width cells; row 0 is the top. Row r is
 * written NUL-terminated at rows + r * rowsz (rowsz >= width * 3 + 1 for braille and block).
 * Returns how many values were shown. */
size_t graph_render(const double *values, size_t n, double max, int width, int height,
                    enum graph_mode mode, char *rows, size_t rowsz);

/* One-row sparkline of the newest width values: ▁▂▃▄▅▆▇█, or " .:-=+*#" without UTF-8. */
void graph_sparkline(const double *values, size_t n, double max, int width, bool utf8, char *out,
                     size_t outsz);

/* The n values (oldest first; NAN is a gap) spread over cols columns into out[cols]: each
 * column the average of its values (peak: their maximum), NAN when it has none; fewer values
 * than columns stretch. */
void graph_bucket(const double *values, size_t n, size_t cols, bool peak, double *out);

/* A scale top for the values: the maximum rounded up to 1, 2 or 5 times a power of ten, at
 * least at_least. */
double graph_nice_max(const double *values, size_t n, double at_least);

#endif
