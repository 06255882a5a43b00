/* The one way text reaches the screen: sanitize (common/sanitize.c), then draw wide characters
 * clipped to a number of columns. Nothing in ui/ calls waddstr & co. on its own. */
#include "common/sanitize.h"
#include "ui/graph.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define DRAW_MAX_BYTES 2048 /* sanitized bytes per drawn string: far more than a line */

struct draw_glyphs {
    wchar_t wc[DRAW_MAX_BYTES];
    signed char w[DRAW_MAX_BYTES];
    size_t n;
    int width; /* total columns */
};

/* Sanitize s and decode it into characters with their column widths. */
static void draw_decode(struct ui *ui, const char *s, struct draw_glyphs *g)
{
    char buf[DRAW_MAX_BYTES];
    size_t len =
        sanitize_text_flags(s, s ? strlen(s) : 0, buf, sizeof(buf), ui->utf8 ? 0 : SANITIZE_ASCII);
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    g->n = 0;
    g->width = 0;
    for (size_t i = 0; i < len && g->n < DRAW_MAX_BYTES;) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, buf + i, len - i, &st);
        if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
            /* cannot happen for sanitizer output in a UTF-8 or ASCII locale */
            memset(&st, 0, sizeof(st));
            wc = L'?';
            k = 1;
        }
        int cw = wcwidth(wc);
        if (cw < 0) { /* unknown to the locale's tables */
            wc = L'?';
            cw = 1;
        }
        if (cw == 0 && g->n == 0) { /* a combining mark with nothing to combine with */
            i += k;
            continue;
        }
        g->wc[g->n] = wc;
        g->w[g->n] = (signed char)cw;
        g->n++;
        g->width += cw;
        i += k;
    }
}

/* Draw glyphs within width columns; when they do not fit, the last column is `…`. */
static int draw_glyphs_put(struct ui *ui, WINDOW *w, const struct draw_glyphs *g, int width,
                           attr_t attr)
{
    if (width <= 0)
        return 0;
    bool cut = g->width > width;
    int budget = cut ? width - 1 : width;
    int cols = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (cols + g->w[i] > budget)
            break;
        wchar_t ws[2] = {g->wc[i], L'\0'};
        cchar_t cc;
        setcchar(&cc, ws, attr, PAIR_NUMBER(attr), NULL);
        wadd_wch(w, &cc);
        cols += g->w[i];
    }
    if (cut) {
        /* a wide character that did not fit leaves a gap: pad it */
        while (cols < width - 1) {
            waddch(w, ' ' | attr);
            cols++;
        }
        if (ui->utf8) {
            cchar_t cc;
            setcchar(&cc, L"\u2026", attr, PAIR_NUMBER(attr), NULL);
            wadd_wch(w, &cc);
        } else {
            waddch(w, '~' | attr);
        }
        cols++;
    }
    return cols;
}

int draw_text(struct ui *ui, WINDOW *w, int y, int x, int width, const char *s, attr_t attr)
{
    static struct draw_glyphs g; /* single-threaded; too big for the stack comfortably */
    if (!w || width <= 0)
        return 0;
    draw_decode(ui, s, &g);
    if (wmove(w, y, x) == ERR)
        return 0;
    return draw_glyphs_put(ui, w, &g, width, attr);
}

int draw_text_right(struct ui *ui, WINDOW *w, int y, int x, int width, const char *s, attr_t attr)
{
    static struct draw_glyphs g;
    if (!w || width <= 0)
        return 0;
    draw_decode(ui, s, &g);
    int used = g.width < width ? g.width : width;
    if (wmove(w, y, x + width - used) == ERR)
        return 0;
    return draw_glyphs_put(ui, w, &g, used, attr);
}

int draw_text_width(struct ui *ui, const char *s)
{
    static struct draw_glyphs g;
    draw_decode(ui, s, &g);
    return g.width;
}

const char *draw_glyph(const struct ui *ui, const char *utf8, const char *ascii)
{
    return ui->utf8 ? utf8 : ascii;
}

void draw_fill(WINDOW *w, int y, int x, int width, attr_t attr)
{
    if (!w || width <= 0 || wmove(w, y, x) == ERR)
        return;
    for (int i = 0; i < width; i++)
        waddch(w, ' ' | attr);
}

void draw_frame(struct ui *ui, WINDOW *w, const char *title, bool focused)
{
    attr_t border = theme_attr(focused ? UI_C_BORDER_FOCUS : UI_C_BORDER);
    wattrset(w, border);
    box(w, 0, 0);
    wattrset(w, A_NORMAL);
    if (!title || !*title)
        return;
    int width = getmaxx(w);
    int x = 2;
    x += draw_text(ui, w, 0, x, width - 4, " ", theme_attr(UI_C_TITLE));
    x += draw_text(ui, w, 0, x, width - 2 - x, title, theme_attr(UI_C_TITLE));
    draw_text(ui, w, 0, x, width - 2 - x, " ", theme_attr(UI_C_TITLE));
}

int draw_tabs_width(struct ui *ui, const char *const *names, size_t n, bool tight)
{
    int need = n ? (int)n - 1 : 0;
    for (size_t t = 0; t < n; t++)
        need += draw_text_width(ui, names[t]) + (tight ? 0 : 2);
    return need;
}

int draw_tabs(struct ui *ui, WINDOW *w, int y, int x, int end, const char *const *names, size_t n,
              size_t cur, bool focused, bool tight, short (*cols)[2])
{
    for (size_t t = 0; t < n && x < end - 1; t++) {
        attr_t a = t == cur ? theme_attr(focused ? UI_C_SELECTED : UI_C_SELECTED_BLUR)
                            : theme_attr(UI_C_DIM);
        char name[48];
        snprintf(name, sizeof(name), tight ? "%s" : " %s ", names[t]);
        int x0 = x;
        x += draw_text(ui, w, y, x, end - x, name, a);
        if (cols) {
            cols[t][0] = (short)x0;
            cols[t][1] = (short)x;
        }
        x += 1;
    }
    return x;
}

void draw_graph(struct ui *ui, WINDOW *w, int y, int x, int width, int height, const double *values,
                size_t n, double max, enum graph_mode mode, attr_t attr)
{
    if (width < 1 || height < 1)
        return;
    size_t rowsz = (size_t)width * 3 + 1;
    char *rows = malloc(rowsz * (size_t)height);
    if (!rows)
        return;
    graph_render(values, n, max, width, height, mode, rows, rowsz);
    for (int r = 0; r < height; r++)
        draw_text(ui, w, y + r, x, width, rows + (size_t)r * rowsz, attr);
    free(rows);
}
