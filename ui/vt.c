/* libvterm behind ui/vt.h. libvterm 0.1.4 specifics (its vterm.h, Debian's libvterm-dev): damage
 * arrives only at vterm_screen_flush_damage in SCROLL merge mode; the output callback must be set
 * or replies longer than 64 bytes are dropped; damage rows can exceed the size during a shrink;
 * titles arrive as a temporary string. */
#include "ui/vt.h"

#include "common/buf.h"
#include "common/sanitize.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vterm.h>

struct vt_line {
    int cols;
    struct vt_cell cells[];
};

struct vt {
    VTerm *term;
    VTermScreen *screen;
    int rows, cols;
    unsigned char *dirty; /* one flag per row */
    int cur_row, cur_col;
    bool cur_visible;
    bool bell;
    char title[256];
    /* bytes for the sandbox */
    struct buf out;
    /* scrollback: a ring of lines, newest at (sb_head + sb_count - 1) % sb_cap */
    struct vt_line **sb;
    size_t sb_cap, sb_head, sb_count;
};

/* ---- colours ---- */

static const int vt_cube[6] = {0, 95, 135, 175, 215, 255};

static int vt_cube_index(int v)
{
    if (v < 48)
        return 0;
    if (v < 114)
        return 1;
    return (v - 35) / 40;
}

static int vt_dist(int r1, int g1, int b1, int r2, int g2, int b2)
{
    return (r1 - r2) * (r1 - r2) + (g1 - g2) * (g1 - g2) + (b1 - b2) * (b1 - b2);
}

int vt_rgb_to_256(uint8_t r, uint8_t g, uint8_t b)
{
    int qr = vt_cube_index(r), qg = vt_cube_index(g), qb = vt_cube_index(b);
    int cr = vt_cube[qr], cg = vt_cube[qg], cb = vt_cube[qb];
    if (cr == r && cg == g && cb == b)
        return 16 + 36 * qr + 6 * qg + qb;
    /* the grey ramp: 232..255 are 8 + 10n */
    int avg = (r + g + b) / 3;
    int gi = avg > 238 ? 23 : avg < 8 ? 0 : (avg - 3) / 10;
    int gv = 8 + 10 * gi;
    if (vt_dist(gv, gv, gv, r, g, b) < vt_dist(cr, cg, cb, r, g, b))
        return 232 + gi;
    return 16 + 36 * qr + 6 * qg + qb;
}

/* The 16 ANSI colours as xterm shows them, for folding 16..255 onto 8 colours. */
static const uint8_t vt_ansi[16][3] = {
    {0, 0, 0},     {205, 0, 0},     {0, 205, 0},     {205, 205, 0},   {0, 0, 238}, {205, 0, 205},
    {0, 205, 205}, {229, 229, 229}, {127, 127, 127}, {255, 0, 0},     {0, 255, 0}, {255, 255, 0},
    {92, 92, 255}, {255, 0, 255},   {0, 255, 255},   {255, 255, 255},
};

static void vt_index_rgb(int idx, int *r, int *g, int *b)
{
    if (idx < 16) {
        *r = vt_ansi[idx][0], *g = vt_ansi[idx][1], *b = vt_ansi[idx][2];
    } else if (idx < 232) {
        idx -= 16;
        *r = vt_cube[idx / 36], *g = vt_cube[(idx / 6) % 6], *b = vt_cube[idx % 6];
    } else {
        *r = *g = *b = 8 + 10 * (idx - 232);
    }
}

int vt_color_fold(int idx, int ncolors, bool *bold)
{
    if (idx < 0 || ncolors >= 256 || idx < 8 || (ncolors >= 16 && idx < 16))
        return idx;
    if (idx < 16) {
        /* bright colours on 8: the base colour, bold for the foreground */
        if (bold)
            *bold = true;
        return idx - 8;
    }
    int lim = ncolors >= 16 ? 16 : 8, best = 0, bd = 1 << 30, r, g, b;
    vt_index_rgb(idx, &r, &g, &b);
    for (int i = 0; i < lim; i++) {
        int d = vt_dist(r, g, b, vt_ansi[i][0], vt_ansi[i][1], vt_ansi[i][2]);
        if (d < bd) {
            bd = d;
            best = i;
        }
    }
    return best;
}

static int vt_color(const VTermColor *c, bool fg)
{
    if (fg ? VTERM_COLOR_IS_DEFAULT_FG(c) : VTERM_COLOR_IS_DEFAULT_BG(c))
        return -1;
    if (VTERM_COLOR_IS_INDEXED(c))
        return c->indexed.idx;
    if (VTERM_COLOR_IS_RGB(c))
        return vt_rgb_to_256(c->rgb.red, c->rgb.green, c->rgb.blue);
    return -1;
}

/* ---- cells ---- */

static void vt_convert(const VTermScreenCell *c, struct vt_cell *out)
{
    memset(out, 0, sizeof(*out));
    out->width = c->width;
    if (c->chars[0] == (uint32_t)-1) {
        out->width = 0;
    } else if (c->chars[0] == 0) {
        out->ch[0] = ' ';
    } else {
        int n = 0;
        for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && n < VT_MAX_CHARS - 1 && c->chars[i]; i++) {
            uint32_t cp = c->chars[i];
            if (!sanitize_codepoint_ok(cp)) {
                /* An invisible, bidi or control code point is never drawn: the cell is
                 * marked instead (a base one becomes U+FFFD). */
                out->suspicious = true;
                if (i == 0)
                    out->ch[n++] = 0xFFFD;
                continue;
            }
            out->ch[n++] = cp;
        }
        if (!n)
            out->ch[0] = ' ';
    }
    out->fg = vt_color(&c->fg, true);
    out->bg = vt_color(&c->bg, false);
    out->bold = c->attrs.bold;
    out->underline = c->attrs.underline != 0;
    out->italic = c->attrs.italic;
    out->blink = c->attrs.blink;
    out->reverse = c->attrs.reverse;
}

static void vt_unconvert(const struct vt_cell *in, VTermScreenCell *c)
{
    memset(c, 0, sizeof(*c));
    for (int i = 0; i < VT_MAX_CHARS && in->ch[i]; i++)
        c->chars[i] = in->ch[i];
    if (c->chars[0] == ' ' && !c->chars[1])
        c->chars[0] = 0;
    c->width = (char)(in->width ? in->width : 1);
    if (in->fg < 0)
        c->fg.type = VTERM_COLOR_DEFAULT_FG;
    else
        vterm_color_indexed(&c->fg, (uint8_t)in->fg);
    if (in->bg < 0)
        c->bg.type = VTERM_COLOR_DEFAULT_BG;
    else
        vterm_color_indexed(&c->bg, (uint8_t)in->bg);
    c->attrs.bold = in->bold;
    c->attrs.underline = in->underline;
    c->attrs.italic = in->italic;
    c->attrs.blink = in->blink;
    c->attrs.reverse = in->reverse;
}

/* ---- callbacks ---- */

static void vt_mark(struct vt *v, int from, int to)
{
    if (from < 0)
        from = 0;
    if (to > v->rows)
        to = v->rows; /* a shrink reports rows beyond the new size first */
    for (int r = from; r < to; r++)
        v->dirty[r] = 1;
}

static int vt_on_damage(VTermRect rect, void *user)
{
    vt_mark(user, rect.start_row, rect.end_row);
    return 1;
}

static int vt_on_moverect(VTermRect dest, VTermRect src, void *user)
{
    (void)src;
    vt_mark(user, 0, ((struct vt *)user)->rows); /* simplest: repaint what moved */
    (void)dest;
    return 0;
}

static int vt_on_movecursor(VTermPos pos, VTermPos oldpos, int visible, void *user)
{
    struct vt *v = user;
    vt_mark(v, oldpos.row, oldpos.row + 1);
    vt_mark(v, pos.row, pos.row + 1);
    v->cur_row = pos.row;
    v->cur_col = pos.col;
    v->cur_visible = visible;
    return 1;
}

static int vt_on_termprop(VTermProp prop, VTermValue *val, void *user)
{
    struct vt *v = user;
    if (prop == VTERM_PROP_TITLE && val->string) {
        snprintf(v->title, sizeof(v->title), "%s", val->string);
        return 1;
    }
    if (prop == VTERM_PROP_CURSORVISIBLE) {
        v->cur_visible = val->boolean;
        return 1;
    }
    return 0;
}

static int vt_on_bell(void *user)
{
    ((struct vt *)user)->bell = true;
    return 1;
}

/* An erased cell with nothing that shows (no background, no reverse or underline). */
static bool vt_cell_blank(const VTermScreenCell *c)
{
    return (c->chars[0] == 0 || (c->chars[0] == ' ' && c->chars[1] == 0)) &&
           VTERM_COLOR_IS_DEFAULT_BG(&c->bg) && !c->attrs.reverse && !c->attrs.underline;
}

static int vt_on_pushline(int cols, const VTermScreenCell *cells, void *user)
{
    struct vt *v = user;
    if (!v->sb_cap)
        return 0;
    /* trailing blanks are not kept: vt_cell and popline give blanks past a line's end */
    while (cols > 0 && vt_cell_blank(&cells[cols - 1]))
        cols--;
    struct vt_line *l = malloc(sizeof(*l) + (size_t)cols * sizeof(struct vt_cell));
    if (!l)
        return 0;
    l->cols = cols;
    for (int i = 0; i < cols; i++)
        vt_convert(&cells[i], &l->cells[i]);
    if (v->sb_count == v->sb_cap) {
        free(v->sb[v->sb_head]);
        v->sb_head = (v->sb_head + 1) % v->sb_cap;
        v->sb_count--;
    }
    v->sb[(v->sb_head + v->sb_count) % v->sb_cap] = l;
    v->sb_count++;
    return 1;
}

static int vt_on_popline(int cols, VTermScreenCell *cells, void *user)
{
    struct vt *v = user;
    if (!v->sb_count)
        return 0;
    size_t at = (v->sb_head + v->sb_count - 1) % v->sb_cap;
    struct vt_line *l = v->sb[at];
    v->sb[at] = NULL;
    v->sb_count--;
    struct vt_cell blank = {.ch = {' '}, .width = 1, .fg = -1, .bg = -1};
    for (int i = 0; i < cols; i++)
        vt_unconvert(i < l->cols ? &l->cells[i] : &blank, &cells[i]);
    free(l);
    return 1;
}

static void vt_on_output(const char *s, size_t len, void *user)
{
    struct vt *v = user;
    buf_append(&v->out, s, len); /* out of memory: the keys are lost, not the dashboard */
}

static const VTermScreenCallbacks vt_callbacks = {
    .damage = vt_on_damage,
    .moverect = vt_on_moverect,
    .movecursor = vt_on_movecursor,
    .settermprop = vt_on_termprop,
    .bell = vt_on_bell,
    .sb_pushline = vt_on_pushline,
    .sb_popline = vt_on_popline,
};

/* ---- the API ---- */

struct vt *vt_new(int rows, int cols, size_t scrollback)
{
    if (rows < 1)
        rows = 1;
    if (cols < 1)
        cols = 1;
    struct vt *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->rows = rows;
    v->cols = cols;
    v->cur_visible = true;
    v->dirty = calloc((size_t)rows, 1);
    v->sb_cap = scrollback;
    v->sb = scrollback ? calloc(scrollback, sizeof(*v->sb)) : NULL;
    v->term = vterm_new(rows, cols);
    if (!v->dirty || (scrollback && !v->sb) || !v->term) {
        vt_free(v);
        return NULL;
    }
    vterm_set_utf8(v->term, 1);
    vterm_output_set_callback(v->term, vt_on_output, v);
    v->screen = vterm_obtain_screen(v->term);
    vterm_screen_set_callbacks(v->screen, &vt_callbacks, v);
    vterm_screen_enable_altscreen(v->screen, 1);
    vterm_screen_set_damage_merge(v->screen, VTERM_DAMAGE_SCROLL);
    vterm_screen_reset(v->screen, 1);
    return v;
}

void vt_free(struct vt *v)
{
    if (!v)
        return;
    if (v->term)
        vterm_free(v->term);
    for (size_t i = 0; i < v->sb_count; i++)
        free(v->sb[(v->sb_head + i) % v->sb_cap]);
    free(v->sb);
    free(v->dirty);
    buf_free(&v->out);
    free(v);
}

void vt_write(struct vt *v, const char *data, size_t len)
{
    if (len)
        vterm_input_write(v->term, data, len);
    vterm_screen_flush_damage(v->screen);
}

void vt_resize(struct vt *v, int rows, int cols)
{
    if (rows < 1)
        rows = 1;
    if (cols < 1)
        cols = 1;
    if (rows == v->rows && cols == v->cols)
        return;
    unsigned char *d = calloc((size_t)rows, 1);
    if (!d)
        return;
    free(v->dirty);
    v->dirty = d;
    v->rows = rows;
    v->cols = cols;
    vterm_set_size(v->term, rows, cols);
    vterm_screen_flush_damage(v->screen);
    vt_dirty_all(v);
}

void vt_size(const struct vt *v, int *rows, int *cols)
{
    *rows = v->rows;
    *cols = v->cols;
}

/* ncurses key codes to libvterm keys and modifiers. */
static const struct {
    int curses;
    VTermKey key;
    VTermModifier mod;
} vt_keymap[] = {
    {KEY_UP, VTERM_KEY_UP, 0},
    {KEY_DOWN, VTERM_KEY_DOWN, 0},
    {KEY_LEFT, VTERM_KEY_LEFT, 0},
    {KEY_RIGHT, VTERM_KEY_RIGHT, 0},
    {KEY_SR, VTERM_KEY_UP, VTERM_MOD_SHIFT},
    {KEY_SF, VTERM_KEY_DOWN, VTERM_MOD_SHIFT},
    {KEY_SLEFT, VTERM_KEY_LEFT, VTERM_MOD_SHIFT},
    {KEY_SRIGHT, VTERM_KEY_RIGHT, VTERM_MOD_SHIFT},
    {KEY_HOME, VTERM_KEY_HOME, 0},
    {KEY_END, VTERM_KEY_END, 0},
    {KEY_PPAGE, VTERM_KEY_PAGEUP, 0},
    {KEY_NPAGE, VTERM_KEY_PAGEDOWN, 0},
    {KEY_IC, VTERM_KEY_INS, 0},
    {KEY_DC, VTERM_KEY_DEL, 0},
    {KEY_BACKSPACE, VTERM_KEY_BACKSPACE, 0},
    {KEY_ENTER, VTERM_KEY_ENTER, 0},
    {KEY_BTAB, VTERM_KEY_TAB, VTERM_MOD_SHIFT},
};

void vt_key(struct vt *v, int key, bool is_keycode, bool alt)
{
    VTermModifier mod = alt ? VTERM_MOD_ALT : VTERM_MOD_NONE;
    if (is_keycode) {
        if (key >= KEY_F(1) && key <= KEY_F(12)) {
            vterm_keyboard_key(v->term, VTERM_KEY_FUNCTION(key - KEY_F0), mod);
            return;
        }
        for (size_t i = 0; i < sizeof(vt_keymap) / sizeof(vt_keymap[0]); i++)
            if (vt_keymap[i].curses == key) {
                vterm_keyboard_key(v->term, vt_keymap[i].key, vt_keymap[i].mod | mod);
                return;
            }
        return; /* a key the sandbox has no use for */
    }
    if (key == '\r' || key == '\n')
        vterm_keyboard_key(v->term, VTERM_KEY_ENTER, mod);
    else if (key == '\t')
        vterm_keyboard_key(v->term, VTERM_KEY_TAB, mod);
    else if (key == 0x7F || key == 0x08)
        vterm_keyboard_key(v->term, VTERM_KEY_BACKSPACE, mod);
    else if (key == 0x1B)
        vterm_keyboard_key(v->term, VTERM_KEY_ESCAPE, mod);
    else if (key > 0 && key < 0x20)
        /* Ctrl+letter as libvterm expects it: the lower-case letter with CTRL */
        vterm_keyboard_unichar(v->term, (uint32_t)(key + 0x60), mod | VTERM_MOD_CTRL);
    else if (key >= 0x20 && key <= 0x10FFFF)
        vterm_keyboard_unichar(v->term, (uint32_t)key, mod);
}

void vt_paste(struct vt *v, const char *text, size_t len)
{
    vterm_keyboard_start_paste(v->term);
    vt_on_output(text, len, v);
    vterm_keyboard_end_paste(v->term);
}

const char *vt_output(const struct vt *v, size_t *len)
{
    *len = v->out.len;
    return v->out.data;
}

void vt_output_consume(struct vt *v, size_t n)
{
    buf_consume(&v->out, n < v->out.len ? n : v->out.len);
}

void vt_cell(const struct vt *v, int row, int col, struct vt_cell *out)
{
    static const struct vt_cell blank = {.ch = {' '}, .width = 1, .fg = -1, .bg = -1};
    if (row < 0) {
        size_t back = (size_t)(-row);
        if (back > v->sb_count) {
            *out = blank;
            return;
        }
        const struct vt_line *l = v->sb[(v->sb_head + v->sb_count - back) % v->sb_cap];
        *out = col >= 0 && col < l->cols ? l->cells[col] : blank;
        return;
    }
    VTermScreenCell c;
    VTermPos pos = {.row = row, .col = col};
    if (row >= v->rows || col < 0 || col >= v->cols || !vterm_screen_get_cell(v->screen, pos, &c)) {
        *out = blank;
        return;
    }
    vt_convert(&c, out);
}

size_t vt_scrollback(const struct vt *v)
{
    return v->sb_count;
}

bool vt_row_dirty(const struct vt *v, int row)
{
    return row >= 0 && row < v->rows && v->dirty[row];
}

void vt_dirty_clear(struct vt *v)
{
    memset(v->dirty, 0, (size_t)v->rows);
}

void vt_dirty_all(struct vt *v)
{
    memset(v->dirty, 1, (size_t)v->rows);
}

void vt_cursor(const struct vt *v, int *row, int *col, bool *visible)
{
    *row = v->cur_row;
    *col = v->cur_col;
    *visible = v->cur_visible;
}

const char *vt_title(const struct vt *v)
{
    return v->title;
}

bool vt_take_bell(struct vt *v)
{
    bool b = v->bell;
    v->bell = false;
    return b;
}
