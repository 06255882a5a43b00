/* The embedded terminal's emulator (ui/vt.c over libvterm): text, hostile sequences stay in
 * the grid, keys are encoded as the shell's modes ask, colours, scrollback, resize. */
#include "ui/vt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curses.h>
#include <string.h>

/* Row r of the screen as ASCII (non-ASCII cells as '?'), trailing spaces cut. */
static void row_text(struct vt *v, int r, char *out, size_t sz)
{
    int rows, cols;
    vt_size(v, &rows, &cols);
    size_t n = 0;
    for (int c = 0; c < cols && n + 1 < sz; c++) {
        struct vt_cell cell;
        vt_cell(v, r, c, &cell);
        if (cell.width == 0)
            continue;
        out[n++] = cell.ch[0] < 0x80 ? (char)cell.ch[0] : '?';
    }
    while (n && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

static void feed(struct vt *v, const char *s)
{
    vt_write(v, s, strlen(s));
}

static void take(struct vt *v, char *out, size_t sz)
{
    size_t len;
    const char *o = vt_output(v, &len);
    snprintf(out, sz, "%.*s", (int)len, o ? o : "");
    vt_output_consume(v, len);
}

static void test_text_and_cursor(void **state)
{
    struct vt *v = vt_new(5, 20, 100);
    assert_non_null(v);
    feed(v, "hello\r\nworld");
    char row[64];
    row_text(v, 0, row, sizeof(row));
    assert_string_equal(row, "hello");
    row_text(v, 1, row, sizeof(row));
    assert_string_equal(row, "world");
    int r, c;
    bool vis;
    vt_cursor(v, &r, &c, &vis);
    assert_int_equal(r, 1);
    assert_int_equal(c, 5);
    assert_true(vt_row_dirty(v, 0));
    vt_dirty_clear(v);
    assert_false(vt_row_dirty(v, 0));
    feed(v, "\x1b[1;1Hj");
    assert_true(vt_row_dirty(v, 0));
    row_text(v, 0, row, sizeof(row));
    assert_string_equal(row, "jello");
    vt_free(v);
}

/* What a hostile program writes stays in the grid: the clipboard write and the title are
 * swallowed, cursor moves are clamped to the pane, bidi and zero-width code points show as
 * a mark, and the only bytes going back are answers to queries. */
static void test_hostile_sequences(void **state)
{
    struct vt *v = vt_new(4, 10, 10);
    char out[64];
    feed(v, "\x1b]52;c;cm0gLXJmIH4K\x07");
    feed(v, "\x1b]0;pwned\x07");
    feed(v, "\x1b[999;999HX");
    feed(v, "\x1b[1;1Ha\xe2\x80\xae"
            "b"); /* U+202E right-to-left override */
    take(v, out, sizeof(out));
    assert_string_equal(out, "");
    assert_string_equal(vt_title(v), "pwned"); /* kept raw; the view draws it sanitized */
    struct vt_cell cell;
    vt_cell(v, 3, 9, &cell);
    assert_int_equal(cell.ch[0], 'X');
    /* libvterm attaches the zero-width override to 'a': dropped, and the cell marked */
    vt_cell(v, 0, 0, &cell);
    assert_int_equal(cell.ch[0], 'a');
    assert_int_equal(cell.ch[1], 0);
    assert_true(cell.suspicious);
    vt_cell(v, 0, 1, &cell);
    assert_int_equal(cell.ch[0], 'b');
    assert_false(cell.suspicious);
    /* a control character as a cell's base is a mark too */
    feed(v, "\x1b[2;1H\xc2\x9b"); /* U+009B, a C1 CSI, as UTF-8 */
    /* a cursor position query is answered to the sandbox, not to the operator's terminal */
    feed(v, "\x1b[1;3H\x1b[6n");
    take(v, out, sizeof(out));
    assert_string_equal(out, "\x1b[1;3R");
    feed(v, "\x07");
    assert_true(vt_take_bell(v));
    assert_false(vt_take_bell(v));
    vt_free(v);
}

static void test_keys(void **state)
{
    struct vt *v = vt_new(4, 10, 0);
    char out[64];
    vt_key(v, 'a', false, false);
    vt_key(v, '\r', false, false);
    vt_key(v, 3, false, false); /* Ctrl-C goes to the shell */
    vt_key(v, '\t', false, false);
    vt_key(v, 0x1B, false, false);
    take(v, out, sizeof(out));
    assert_string_equal(out, "a\r\x03\t\x1b");
    vt_key(v, KEY_UP, true, false);
    take(v, out, sizeof(out));
    assert_string_equal(out, "\x1b[A");
    feed(v, "\x1b[?1h"); /* application cursor keys, as less and vim ask */
    vt_key(v, KEY_UP, true, false);
    take(v, out, sizeof(out));
    assert_string_equal(out, "\x1bOA");
    vt_key(v, 'x', false, true);
    take(v, out, sizeof(out));
    assert_string_equal(out, "\x1bx");
    vt_key(v, 0xE9, false, false); /* é as UTF-8 */
    take(v, out, sizeof(out));
    assert_string_equal(out, "\xc3\xa9");
    feed(v, "\x1b[?2004h"); /* bracketed paste */
    vt_paste(v, "ls", 2);
    take(v, out, sizeof(out));
    assert_string_equal(out, "\x1b[200~ls\x1b[201~");
    vt_free(v);
}

static void test_colors(void **state)
{
    assert_int_equal(vt_rgb_to_256(255, 0, 0), 196);
    assert_int_equal(vt_rgb_to_256(95, 135, 175), 67);
    assert_int_equal(vt_rgb_to_256(128, 128, 128), 244);
    assert_int_equal(vt_rgb_to_256(0, 0, 0), 16);
    bool bold = false;
    assert_int_equal(vt_color_fold(9, 8, &bold), 1);
    assert_true(bold);
    assert_int_equal(vt_color_fold(196, 8, NULL), 1);
    assert_int_equal(vt_color_fold(196, 256, NULL), 196);
    assert_int_equal(vt_color_fold(12, 16, NULL), 12);
    assert_int_equal(vt_color_fold(-1, 8, NULL), -1);

    struct vt *v = vt_new(2, 10, 0);
    feed(v, "\x1b[31;44;1mR\x1b[38;2;255;0;0mT\x1b[0mD");
    struct vt_cell c;
    vt_cell(v, 0, 0, &c);
    assert_int_equal(c.fg, 1);
    assert_int_equal(c.bg, 4);
    assert_true(c.bold);
    vt_cell(v, 0, 1, &c);
    assert_int_equal(c.fg, 196); /* RGB to the nearest of 256 */
    vt_cell(v, 0, 2, &c);
    assert_int_equal(c.fg, -1);
    assert_int_equal(c.bg, -1);
    assert_false(c.bold);
    vt_free(v);
}

static void test_scrollback_and_resize(void **state)
{
    struct vt *v = vt_new(3, 10, 2);
    feed(v, "one\r\ntwo\r\nthree\r\nfour\r\nfive");
    char row[32];
    assert_int_equal(vt_scrollback(v), 2); /* "one" and "two"; the ring keeps 2 */
    struct vt_cell c;
    vt_cell(v, -1, 0, &c);
    assert_int_equal(c.ch[0], 't'); /* the newest: "two" */
    vt_cell(v, -2, 0, &c);
    assert_int_equal(c.ch[0], 'o');
    vt_cell(v, -3, 0, &c);
    assert_int_equal(c.ch[0], ' '); /* beyond: blank */
    feed(v, "\r\nsix");
    assert_int_equal(vt_scrollback(v), 2); /* bounded: "one" went */
    vt_cell(v, -2, 0, &c);
    assert_int_equal(c.ch[0], 't');
    /* growing takes lines back from the scrollback */
    vt_resize(v, 5, 10);
    assert_int_equal(vt_scrollback(v), 0);
    row_text(v, 0, row, sizeof(row));
    assert_string_equal(row, "two");
    row_text(v, 4, row, sizeof(row));
    assert_string_equal(row, "six");
    for (int r = 0; r < 5; r++)
        assert_true(vt_row_dirty(v, r));
    /* shrinking pushes them back; nothing is drawn beyond the new size */
    vt_resize(v, 2, 6);
    int rows, cols;
    vt_size(v, &rows, &cols);
    assert_int_equal(rows, 2);
    assert_int_equal(cols, 6);
    assert_false(vt_row_dirty(v, 2));
    vt_free(v);
}

/* A line that scrolls off keeps what shows (a coloured background, reverse) and drops trailing
 * blanks; past its end the cells are blank, and it comes back whole. */
static void test_scrollback_trailing(void **state)
{
    struct vt *v = vt_new(2, 20, 10);
    feed(v, "ab\x1b[41m  \x1b[0m  \x1b[7m \x1b[0m\r\nx\r\ny");
    assert_int_equal(vt_scrollback(v), 1);
    struct vt_cell c;
    vt_cell(v, -1, 1, &c);
    assert_int_equal(c.ch[0], 'b');
    vt_cell(v, -1, 3, &c);
    assert_int_equal(c.bg, 1); /* the red background is kept */
    vt_cell(v, -1, 6, &c);
    assert_true(c.reverse);
    vt_cell(v, -1, 15, &c);
    assert_int_equal(c.ch[0], ' ');
    assert_int_equal(c.bg, -1);
    assert_int_equal(c.width, 1);
    vt_resize(v, 3, 20);
    assert_int_equal(vt_scrollback(v), 0);
    vt_cell(v, 0, 3, &c);
    assert_int_equal(c.bg, 1);
    vt_cell(v, 0, 19, &c);
    assert_int_equal(c.ch[0], ' ');
    vt_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_and_cursor),
        cmocka_unit_test(test_hostile_sequences),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_colors),
        cmocka_unit_test(test_scrollback_and_resize),
        cmocka_unit_test(test_scrollback_trailing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
