/* The text viewer the Logs tab, the Action page and the History page share (one set of
 * scrolling, wrapping, search and highlight rules for all of them, as tmux's mode-tree serves
 * several window modes). The pure parts first; textview_draw at the end is the only curses. */
#include "ui/textview.h"

#include "common/sanitize.h"
#include "common/utf8.h"
#include "ui/logbuf.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXTVIEW_MAX_MATCHES 256 /* highlighted matches per line */
#define TEXTVIEW_MAX_ROWS 256    /* rows of one line drawn at most */

void textview_init(struct textview *tv, const struct textview_source *src, const void *ud,
                   unsigned flags)
{
    memset(tv, 0, sizeof(*tv));
    tv->src = src;
    tv->ud = ud;
    tv->flags = flags;
    tv->wrap = true;
    tv->width = 80;
}

void textview_free(struct textview *tv)
{
    free(tv->disp);
    tv->disp = NULL;
    tv->disp_cap = 0;
}

void textview_changed(struct textview *tv)
{
    memset(tv->cache, 0, sizeof(tv->cache));
    tv->total_width = 0;
}

void textview_reset(struct textview *tv)
{
    textview_changed(tv);
    tv->has_match = false;
    tv->top_abs = tv->src && tv->src->first ? tv->src->first(tv->ud) : 0;
    tv->top_row = 0;
}

size_t textview_count(const struct textview *tv)
{
    return tv->src ? tv->src->count(tv->ud) : 0;
}

static uint64_t textview_first(const struct textview *tv)
{
    return tv->src && tv->src->first ? tv->src->first(tv->ud) : 0;
}

static size_t textview_height(const struct textview *tv)
{
    return tv->height > 0 ? (size_t)tv->height : 20;
}

/* Printable ASCII only: shown exactly as it is (no sanitizer needed to search or wrap it). */
static bool textview_plain(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
            return false;
    return true;
}

const char *textview_display(struct textview *tv, size_t i, size_t *len)
{
    size_t n = 0;
    const char *raw = tv->src->line(tv->ud, i, &n);
    *len = logview_display(raw ? raw : "", raw ? n : 0, tv->flags, &tv->disp, &tv->disp_cap);
    return tv->disp ? tv->disp : "";
}

size_t textview_rows(struct textview *tv, size_t i)
{
    if (!tv->wrap || i >= textview_count(tv))
        return 1;
    size_t raw_len = 0;
    tv->src->line(tv->ud, i, &raw_len);
    uint64_t abs = textview_first(tv) + i;
    struct textview_rows_entry *c = &tv->cache[abs % TEXTVIEW_ROWS_CACHE];
    if (c->rows && c->abs == abs && c->len == raw_len && c->width == tv->width)
        return c->rows;
    size_t n, start;
    const char *s = textview_display(tv, i, &n);
    *c = (struct textview_rows_entry){
        .abs = abs,
        .len = raw_len,
        .width = tv->width,
        .rows = logview_wrap(s, n, tv->width, tv->words, 0, &start, 0),
    };
    return c->rows;
}

static size_t textview_rows_fn(size_t line, void *ud)
{
    return textview_rows(ud, line);
}

struct logview_pos textview_top(struct textview *tv)
{
    size_t n = textview_count(tv);
    if (tv->follow)
        return logview_bottom(n, textview_height(tv), textview_rows_fn, tv);
    struct logview_pos p = {0, 0};
    uint64_t first = textview_first(tv);
    if (tv->top_abs >= first) {
        p.line = (size_t)(tv->top_abs - first);
        p.row = tv->top_row;
    }
    logview_move(&p, 0, n, textview_height(tv), textview_rows_fn, tv);
    return p;
}

void textview_set_top(struct textview *tv, struct logview_pos p)
{
    tv->top_abs = textview_first(tv) + p.line;
    tv->top_row = p.row;
}

bool textview_scroll(struct textview *tv, long delta)
{
    struct logview_pos p = textview_top(tv);
    logview_move(&p, delta, textview_count(tv), textview_height(tv), textview_rows_fn, tv);
    textview_set_top(tv, p);
    bool stopped = delta < 0 && tv->follow;
    if (stopped)
        tv->follow = false;
    return stopped;
}

long textview_page(const struct textview *tv)
{
    long rows = (long)textview_height(tv);
    return rows > 1 ? rows - 1 : 1;
}

void textview_home(struct textview *tv)
{
    tv->follow = false;
    textview_set_top(tv, (struct logview_pos){0, 0});
}

void textview_end(struct textview *tv)
{
    tv->follow = true;
}

void textview_show_line(struct textview *tv, size_t i)
{
    struct logview_pos p = {i, 0};
    tv->follow = false;
    logview_move(&p, -(long)(textview_height(tv) / 3), textview_count(tv), textview_height(tv),
                 textview_rows_fn, tv);
    textview_set_top(tv, p);
}

void textview_set_wrap(struct textview *tv, bool wrap)
{
    if (!tv->follow) {
        struct logview_pos p = textview_top(tv);
        tv->top_abs = textview_first(tv) + p.line; /* the same first line, from its start */
        tv->top_row = 0;
    }
    tv->wrap = wrap;
}

void textview_position(struct textview *tv, size_t *first, size_t *last, size_t *total)
{
    struct logview_pos p = textview_top(tv);
    size_t n = textview_count(tv), before = p.row;
    for (size_t i = 0; i < p.line && i < n; i++)
        before += textview_rows(tv, i);
    if (tv->total_width != tv->width || tv->total_wrap != tv->wrap || tv->total_lines != n) {
        size_t all = before - p.row;
        for (size_t i = p.line; i < n; i++)
            all += textview_rows(tv, i);
        tv->total_rows = all;
        tv->total_lines = n;
        tv->total_width = tv->width;
        tv->total_wrap = tv->wrap;
    }
    size_t all = tv->total_rows, shown = textview_height(tv);
    *total = all;
    *first = all ? before + 1 : 0;
    *last = before + shown < all ? before + shown : all;
}

/* ---- search ---- */

void textview_set_needle(struct textview *tv, const char *needle)
{
    snprintf(tv->needle, sizeof(tv->needle), "%s", needle ? needle : "");
    tv->has_match = false;
}

static bool textview_line_has(struct textview *tv, size_t i)
{
    size_t n = 0, pos;
    const char *s = tv->src->line(tv->ud, i, &n);
    if (!s)
        return false;
    if (!textview_plain(s, n))
        s = textview_display(tv, i, &n);
    return logbuf_matches(s, n, tv->needle, &pos, 1) > 0;
}

long textview_find_from(struct textview *tv, size_t from, int dir)
{
    size_t n = textview_count(tv);
    if (!n || !tv->needle[0])
        return -1;
    size_t start = from < n ? from : n - 1;
    for (size_t step = 0; step < n; step++) {
        size_t i = dir >= 0 ? (start + step) % n : (start + n - step) % n;
        if (textview_line_has(tv, i))
            return (long)i;
    }
    return -1;
}

long textview_find(struct textview *tv, int dir, bool first, bool *wrapped)
{
    size_t n = textview_count(tv);
    uint64_t base = textview_first(tv);
    *wrapped = false;
    bool have = tv->has_match && tv->match_abs >= base && tv->match_abs - base < n;
    size_t from;
    if (first || !have) {
        from = textview_top(tv).line; /* from what is shown */
    } else {
        size_t at = (size_t)(tv->match_abs - base);
        from = dir > 0 ? (at + 1) % n : (at + n - 1) % n;
    }
    long found = textview_find_from(tv, from, dir);
    if (found < 0) {
        tv->has_match = false;
        return -1;
    }
    *wrapped = have && !first &&
               (dir > 0 ? (uint64_t)found + base <= tv->match_abs
                        : (uint64_t)found + base >= tv->match_abs);
    tv->has_match = true;
    tv->match_abs = base + (uint64_t)found;
    textview_show_line(tv, (size_t)found);
    return found;
}

size_t textview_count_matches(struct textview *tv)
{
    size_t n = textview_count(tv), found = 0;
    if (!tv->needle[0])
        return 0;
    for (size_t i = 0; i < n; i++)
        found += textview_line_has(tv, i);
    return found;
}

/* ---- a text held whole ---- */

void textview_text_free(struct textview_text *t)
{
    free(t->text);
    free(t->off);
    free(t->lens);
    memset(t, 0, sizeof(*t));
}

int textview_text_set(struct textview_text *t, const char *text, size_t len)
{
    textview_text_free(t);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    t->text = malloc(len + 1);
    t->off = malloc(lines * sizeof(*t->off));
    t->lens = malloc(lines * sizeof(*t->lens));
    if (!t->text || !t->off || !t->lens) {
        textview_text_free(t);
        return -1;
    }
    memcpy(t->text, text, len);
    t->text[len] = '\0';
    t->len = len;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '\n')
            continue;
        if (i == len && start == len && t->nlines) /* nothing after the last newline */
            break;
        size_t n = i - start;
        if (n && text[start + n - 1] == '\r')
            n--;
        t->off[t->nlines] = start;
        t->lens[t->nlines++] = n;
        start = i + 1;
    }
    return 0;
}

static size_t textview_text_count(const void *ud)
{
    return ((const struct textview_text *)ud)->nlines;
}

static const char *textview_text_line(const void *ud, size_t i, size_t *len)
{
    const struct textview_text *t = ud;
    if (i >= t->nlines) {
        *len = 0;
        return NULL;
    }
    *len = t->lens[i];
    return t->text + t->off[i];
}

const struct textview_source textview_text_source = {
    .count = textview_text_count,
    .line = textview_text_line,
};

/* ---- the keys' side: search with its messages ---- */

unsigned textview_search(struct ui *ui, struct textview *tv, int dir, bool first)
{
    const char *needle = tv->needle;
    size_t n = textview_count(tv);
    if (!needle[0]) {
        ui_set_status(ui, "no search yet: / searches");
        return UI_DIRTY_FOOTER;
    }
    if (!n) {
        ui_set_error(ui, "no match for \"%s\" (no lines)", needle);
        return UI_DIRTY_FOOTER | UI_DIRTY_DETAIL;
    }
    bool wrapped;
    long found = textview_find(tv, dir, first, &wrapped);
    if (found < 0) {
        ui_set_error(ui, "no match for \"%s\"", needle);
        return UI_DIRTY_FOOTER | UI_DIRTY_DETAIL;
    }
    if (first)
        ui_set_status(ui, "\"%s\": %zu of %zu lines match", needle, textview_count_matches(tv), n);
    else
        ui_set_status(ui, "\"%s\": line %zu of %zu%s", needle, (size_t)found + 1, n,
                      wrapped ? (dir > 0 ? " (wrapped to the top)" : " (wrapped to the end)") : "");
    return UI_DIRTY_FOOTER | UI_DIRTY_DETAIL;
}

unsigned textview_search_set(struct ui *ui, struct textview *tv, const char *text)
{
    textview_set_needle(tv, text);
    if (!tv->needle[0]) {
        ui_set_status(ui, "search cleared");
        return UI_DIRTY_FOOTER | UI_DIRTY_DETAIL;
    }
    return textview_search(ui, tv, 1, true);
}

/* ---- the text keys (textview_keys): on the current page's text ---- */

static unsigned textview_key_scroll(struct ui *ui, long rows, long pages)
{
    struct textview *tv = keys_text(ui);
    if (!tv)
        return 0;
    if (textview_scroll(tv, rows + pages * textview_page(tv)))
        ui_set_status(ui, "follow off (G follows the end again)");
    return UI_DIRTY_DETAIL;
}

static unsigned textview_key_down(struct ui *ui)
{
    return textview_key_scroll(ui, 1, 0);
}

static unsigned textview_key_up(struct ui *ui)
{
    return textview_key_scroll(ui, -1, 0);
}

static unsigned textview_key_page_down(struct ui *ui)
{
    return textview_key_scroll(ui, 0, 1);
}

static unsigned textview_key_page_up(struct ui *ui)
{
    return textview_key_scroll(ui, 0, -1);
}

static unsigned textview_key_home(struct ui *ui)
{
    struct textview *tv = keys_text(ui);
    if (tv)
        textview_home(tv);
    return tv ? UI_DIRTY_DETAIL : 0;
}

unsigned textview_key_end(struct ui *ui)
{
    struct textview *tv = keys_text(ui);
    if (tv)
        textview_end(tv);
    return tv ? UI_DIRTY_DETAIL : 0;
}

/* The prompt's answer goes to the text of the page that asked, if it is still the one shown. */
static unsigned textview_key_search_done(struct ui *ui, const char *text, void *ud)
{
    struct textview *tv = ui_current_page(ui) == ud ? keys_text(ui) : NULL;
    if (!tv || !text)
        return UI_DIRTY_FOOTER;
    return textview_search_set(ui, tv, text);
}

static unsigned textview_key_search(struct ui *ui)
{
    struct textview *tv = keys_text(ui);
    if (!tv)
        return 0;
    prompt_open(ui, "search: ", tv->needle, textview_key_search_done, (void *)ui_current_page(ui));
    return UI_DIRTY_FOOTER;
}

static unsigned textview_key_next(struct ui *ui)
{
    struct textview *tv = keys_text(ui);
    return tv ? textview_search(ui, tv, 1, false) : 0;
}

static unsigned textview_key_prev(struct ui *ui)
{
    struct textview *tv = keys_text(ui);
    return tv ? textview_search(ui, tv, -1, false) : 0;
}

const struct ui_key textview_keys[] = {
    {.key = '/',
     .name = "/",
     .help = "search (every match highlighted)",
     .fn = textview_key_search,
     .hint = "/ search"},
    {.key = 'n',
     .name = "n",
     .help = "next line with a match (wraps)",
     .fn = textview_key_next,
     .hint = "n/N match"},
    {.key = 'N',
     .name = "N",
     .help = "previous line with a match (wraps)",
     .fn = textview_key_prev},
    {.key = 'j', .name = "j", .help = "scroll down", .fn = textview_key_down, .hint = "j/k scroll"},
    {.key = KEY_DOWN, .name = "Down", .help = "scroll down", .fn = textview_key_down},
    {.key = 'k', .name = "k", .help = "scroll up (stops following)", .fn = textview_key_up},
    {.key = KEY_UP, .name = "Up", .help = "scroll up (stops following)", .fn = textview_key_up},
    {.key = KEY_NPAGE, .name = "PgDn", .help = "page down", .fn = textview_key_page_down},
    {.key = KEY_CTRL('f'), .name = "^F", .help = "page down", .fn = textview_key_page_down},
    {.key = KEY_PPAGE,
     .name = "PgUp",
     .help = "page up (stops following)",
     .fn = textview_key_page_up},
    {.key = KEY_CTRL('b'),
     .name = "^B",
     .help = "page up (stops following)",
     .fn = textview_key_page_up},
    {.key = 'g', .name = "g", .help = "go to the top (stops following)", .fn = textview_key_home},
    {.key = KEY_HOME,
     .name = "Home",
     .help = "go to the top (stops following)",
     .fn = textview_key_home},
    {0},
};

/* ---- drawing ---- */

/* Draw s[from, to) (shown text) at y, x in at most width columns, the parts inside a match
 * (starts[], each nl bytes) in hl. Returns the columns drawn. */
static int textview_draw_run(struct ui *ui, WINDOW *w, int y, int x, int width, const char *s,
                             size_t from, size_t to, const size_t *starts, size_t nm, size_t nl,
                             attr_t base, attr_t hl)
{
    int cols = 0;
    size_t m = 0;
    char piece[2048];
    for (size_t i = from; i < to && cols < width;) {
        while (m < nm && starts[m] + nl <= i)
            m++;
        bool in = m < nm && starts[m] <= i;
        size_t end = in ? starts[m] + nl : (m < nm ? starts[m] : to);
        if (end > to)
            end = to;
        if (end - i >= sizeof(piece)) /* keep whole UTF-8 characters in each piece */
            end = i + utf8_cut(s + i, sizeof(piece) - 1);
        memcpy(piece, s + i, end - i);
        piece[end - i] = '\0';
        int n = draw_text(ui, w, y, x + cols, width - cols, piece, in ? hl : base);
        if (n <= 0)
            break;
        cols += n;
        i = end;
    }
    return cols;
}

/* Draw line i from its row `first` on, from screen row y; returns the rows used. */
static int textview_draw_line(struct ui *ui, struct textview *tv, WINDOW *w, size_t i, size_t first,
                              int y, int x, int gutter, int rows_left)
{
    size_t raw_len = 0;
    const char *raw = tv->src->line(tv->ud, i, &raw_len);
    if (!raw)
        return 1;
    int tw = tv->width;
    /* A cut line needs only what fits (a sanitizer token takes at least one column). */
    size_t prefix = (size_t)tw * 16 + 64;
    bool partial = !tv->wrap && raw_len > prefix;
    size_t n =
        logview_display(raw, partial ? prefix : raw_len, tv->flags, &tv->disp, &tv->disp_cap);
    const char *s = tv->disp ? tv->disp : "";
    if (gutter && first == 0) {
        char g[64];
        tv->src->gutter(tv->ud, i, g, sizeof(g));
        draw_text(ui, w, y, x, gutter - 1, g, theme_attr(UI_C_DIM));
    }
    x += gutter;
    static size_t starts[TEXTVIEW_MAX_MATCHES];
    size_t nl = strlen(tv->needle);
    size_t nm = nl ? logbuf_matches(s, n, tv->needle, starts, TEXTVIEW_MAX_MATCHES) : 0;
    attr_t base = theme_attr(tv->src->color ? tv->src->color(tv->ud, i) : UI_C_NORMAL);
    bool current = tv->has_match && tv->match_abs == textview_first(tv) + i;
    attr_t hl = theme_attr(current ? UI_C_SELECTED : UI_C_SELECTED_BLUR);
    if (!tv->wrap) {
        size_t cut[2] = {0, n};
        if (logview_wrap(s, n, tw, false, 0, cut, 2) > 1 || partial) {
            /* longer than the row: cut, marked */
            logview_wrap(s, n, tw - 1, false, 0, cut, 2);
            int c = textview_draw_run(ui, w, y, x, tw - 1, s, 0, cut[1], starts, nm, nl, base, hl);
            draw_text(ui, w, y, x + c, 1, draw_glyph(ui, "\u2026", "~"), theme_attr(UI_C_DIM));
        } else {
            textview_draw_run(ui, w, y, x, tw, s, 0, n, starts, nm, nl, base, hl);
        }
        return 1;
    }
    /* where each shown row starts, and one more: where the last shown row ends */
    size_t rs[TEXTVIEW_MAX_ROWS + 1];
    size_t want = (size_t)rows_left < TEXTVIEW_MAX_ROWS ? (size_t)rows_left : TEXTVIEW_MAX_ROWS;
    size_t total = logview_wrap(s, n, tw, tv->words, first, rs, want + 1);
    int used = 0;
    for (size_t r = first; r < total && (size_t)used < want; r++, used++) {
        size_t j = r - first;
        size_t to = r + 1 < total ? rs[j + 1] : n;
        textview_draw_run(ui, w, y + used, x, tw, s, rs[j], to, starts, nm, nl, base, hl);
    }
    return used ? used : 1;
}

void textview_draw(struct ui *ui, struct textview *tv, WINDOW *w, int y, int x, int height,
                   int width)
{
    int gutter =
        tv->src->gutter && tv->gutter_cols && width > tv->gutter_cols + 10 ? tv->gutter_cols : 0;
    tv->width = width - gutter > 1 ? width - gutter : 1;
    tv->height = height > 0 ? height : 1;
    if (height < 1)
        return;
    struct logview_pos top = textview_top(tv);
    if (!tv->follow)
        textview_set_top(tv, top);
    size_t n = textview_count(tv);
    int row = 0;
    for (size_t i = top.line; i < n && row < height; i++)
        row += textview_draw_line(ui, tv, w, i, i == top.line ? top.row : 0, y + row, x, gutter,
                                  height - row);
}
