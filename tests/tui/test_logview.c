/* The pure parts of the text lines (ui/logview.c): Docker timestamps, shown text, wrapping,
 * scrolling over wrapped lines, saving. The search is the text viewer's (test_textview.c). */
#include "common/sanitize.h"
#include "ui/logview.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void test_stamp_parse(void **state)
{
    (void)state;
    double at = 0;
    const char *s = "2026-11-22T19:43:01.332018648Z paddock-executor: POST";
    size_t n = logview_stamp_parse(s, strlen(s), &at);
    assert_int_equal(n, 31);
    assert_string_equal(s + n, "paddock-executor: POST");
    assert_true(fabs(at - (1795376581.0 + 0.332018648)) < 1e-5);

    assert_int_equal(logview_stamp_parse("1970-01-01T00:00:01Z x", 22, &at), 21);
    assert_true(fabs(at - 1.0) < 1e-9);
    /* an offset: 01:00:00+01:00 is midnight UTC */
    assert_int_equal(logview_stamp_parse("1970-01-02T01:00:00.5+01:00 x", 29, &at), 28);
    assert_true(fabs(at - 86400.5) < 1e-9);

    const char *bad[] = {
        "hello world",
        "2026-11-22T19:43:01Z",           /* no space after it */
        "2026-11-22 19:43:01Z x",         /* not a T */
        "2026-13-22T19:43:01Z x",         /* month 13 */
        "2026-11-22T24:43:01Z x",         /* hour 24 */
        "2026-11-22T19:43:01.Z x",        /* a dot without digits */
        "2026-11-22T19:43:01 x",          /* no zone */
        "2026-11-22T19:43:01+0100 x",     /* zone without a colon */
        "2026-1a-22T19:43:01Z x",         /* not a digit */
        "2026-11-22T19:43:01.1234567890Z" /* ten fraction digits: no Z after nine */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        at = -1;
        assert_int_equal(logview_stamp_parse(bad[i], strlen(bad[i]), &at), 0);
        assert_true(at == -1); /* untouched */
    }
}

static void test_stamp_format(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    char buf[32];
    logview_stamp_format(3600 * 13 + 62.5, buf, sizeof(buf));
    assert_string_equal(buf, "13:01:02.500");
    assert_int_equal(strlen(buf), LOGVIEW_STAMP_COLS - 1);
    logview_stamp_format(0, buf, sizeof(buf)); /* no time known: blanks of the same width */
    assert_int_equal(strlen(buf), LOGVIEW_STAMP_COLS - 1);
    assert_null(strpbrk(buf, "0123456789:"));
    logview_stamp_format(INFINITY, buf, sizeof(buf)); /* a hostile record: shown as unknown */
    assert_int_equal(strlen(buf), LOGVIEW_STAMP_COLS - 1);
    assert_non_null(strchr(buf, '?'));
}

static void test_append_takes_stamps_off(void **state)
{
    (void)state;
    struct logbuf b;
    assert_int_equal(logbuf_init(&b, 100, 1 << 20), 0);
    const char *ev1 = "1970-01-01T00:00:10Z first\n1970-01-01T00:00:11.25Z second\n";
    assert_int_equal(logview_append(&b, 2, ev1, strlen(ev1), true, 99), 2);
    /* a Docker frame cut in two (a long message): each part has its stamp */
    const char *ev2 = "1970-01-01T00:00:12Z thi";
    assert_int_equal(logview_append(&b, 1, ev2, strlen(ev2), true, 99), 0);
    const char *ev3 = "1970-01-01T00:00:13Z rd 2026-01-01T00:00:00Z stays\nno stamp\n";
    assert_int_equal(logview_append(&b, 1, ev3, strlen(ev3), true, 99), 2);
    assert_int_equal(b.count, 4);
    assert_string_equal(logbuf_get(&b, 0)->text, "first");
    assert_true(logbuf_get(&b, 0)->at == 10);
    assert_int_equal(logbuf_get(&b, 0)->fd, 2);
    assert_string_equal(logbuf_get(&b, 1)->text, "second");
    assert_true(logbuf_get(&b, 1)->at == 11.25);
    assert_string_equal(logbuf_get(&b, 2)->text, "third 2026-01-01T00:00:00Z stays");
    assert_true(logbuf_get(&b, 2)->at == 13);
    assert_string_equal(logbuf_get(&b, 3)->text, "no stamp");
    assert_true(logbuf_get(&b, 3)->at == 99);
    /* unstamped (a stored tail): the text stays as it is */
    const char *tail = "1970-01-01T00:00:10Z kept\n";
    assert_int_equal(logview_append(&b, 1, tail, strlen(tail), false, 5), 1);
    assert_string_equal(logbuf_get(&b, 4)->text, "1970-01-01T00:00:10Z kept");
    assert_true(logbuf_get(&b, 4)->at == 5);
    logbuf_free(&b);
}

static void test_display_is_sanitized(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t cap = 0;
    const char *hostile = "\033]52;c;cHduZWQ=\007\033]0;title\007\033[2J\033[H\xe2\x80\xaeok\tx";
    size_t n = logview_display(hostile, strlen(hostile), 0, &buf, &cap);
    assert_string_equal(buf, "^[]52…^[]0…^[[2J^[[H<U+202E>ok x");
    assert_int_equal(n, strlen(buf));
    for (size_t i = 0; i < n; i++)
        assert_true((unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f);
    /* what the sanitizer gives is left alone by it: drawing it again changes nothing */
    char again[256];
    sanitize_text(buf, n, again, sizeof(again));
    assert_string_equal(again, buf);
    /* every byte of a long line is shown (no fixed cut) */
    char *longl = malloc(100000);
    memset(longl, 'a', 100000);
    longl[99999] = 'Z';
    n = logview_display(longl, 100000, 0, &buf, &cap);
    assert_int_equal(n, 100000);
    assert_int_equal(buf[99999], 'Z');
    free(longl);
    free(buf);
}

static void test_wrap(void **state)
{
    (void)state;
    assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
    size_t st[8];
    assert_int_equal(logview_wrap("abcdefghij", 10, 4, false, 0, st, 8), 3);
    assert_int_equal(st[0], 0);
    assert_int_equal(st[1], 4);
    assert_int_equal(st[2], 8);
    /* only the rows asked for */
    st[0] = st[1] = 777;
    assert_int_equal(logview_wrap("abcdefghij", 10, 4, false, 1, st, 1), 3);
    assert_int_equal(st[0], 4);
    assert_int_equal(st[1], 777);
    /* exactly the width: one row; empty: one row */
    assert_int_equal(logview_wrap("abcd", 4, 4, false, 0, st, 8), 1);
    assert_int_equal(logview_wrap("", 0, 4, false, 0, st, 8), 1);
    /* wide characters are not split; "日本語" is 6 columns */
    const char *cjk = "日本語";
    assert_int_equal(logview_wrap(cjk, strlen(cjk), 5, false, 0, st, 8), 2);
    assert_int_equal(st[1], 6);
    /* a character wider than the width still gets a row */
    assert_int_equal(logview_wrap(cjk, strlen(cjk), 1, false, 0, st, 8), 3);
    /* a combining mark stays with its letter: "e\u0301" + "abc" at width 1 */
    const char *comb = "e\xcc\x81"
                       "ab";
    assert_int_equal(logview_wrap(comb, strlen(comb), 1, false, 0, st, 8), 3);
    assert_int_equal(st[1], 3);
    assert_int_equal(st[2], 4);
}

/* Lines of 1, 3, 1 and 2 rows. */
static size_t fake_rows(size_t line, void *ud)
{
    const size_t *r = ud;
    return r[line];
}

static void test_scroll_over_wrapped_lines(void **state)
{
    (void)state;
    size_t rows[] = {1, 3, 1, 2};
    struct logview_pos b = logview_bottom(4, 3, fake_rows, rows);
    assert_int_equal(b.line, 2); /* line 2 (1 row) and line 3 (2 rows) fill 3 rows */
    assert_int_equal(b.row, 0);
    b = logview_bottom(4, 4, fake_rows, rows);
    assert_int_equal(b.line, 1);
    assert_int_equal(b.row, 2); /* the last row of line 1 */
    b = logview_bottom(4, 50, fake_rows, rows);
    assert_int_equal(b.line, 0);
    assert_int_equal(b.row, 0);

    struct logview_pos p = {0, 0};
    logview_move(&p, 1, 4, 3, fake_rows, rows);
    assert_int_equal(p.line, 1);
    assert_int_equal(p.row, 0);
    logview_move(&p, 2, 4, 3, fake_rows, rows);
    assert_int_equal(p.line, 1);
    assert_int_equal(p.row, 2);
    assert_false(logview_at_bottom(p, 4, 3, fake_rows, rows));
    logview_move(&p, 100, 4, 3, fake_rows, rows); /* never past the bottom */
    assert_int_equal(p.line, 2);
    assert_int_equal(p.row, 0);
    assert_true(logview_at_bottom(p, 4, 3, fake_rows, rows));
    logview_move(&p, -1, 4, 3, fake_rows, rows);
    assert_int_equal(p.line, 1);
    assert_int_equal(p.row, 2);
    logview_move(&p, -100, 4, 3, fake_rows, rows);
    assert_int_equal(p.line, 0);
    assert_int_equal(p.row, 0);
    /* lines went away under the view: it ends at the bottom */
    p.line = 9;
    logview_move(&p, 0, 4, 3, fake_rows, rows);
    assert_int_equal(p.line, 2);
    /* nothing at all */
    logview_move(&p, -3, 0, 3, fake_rows, rows);
    assert_int_equal(p.line, 0);
    assert_int_equal(p.row, 0);
    assert_true(logview_at_bottom(p, 0, 3, fake_rows, rows));
}

static void test_save(void **state)
{
    (void)state;
    struct logbuf b;
    assert_int_equal(logbuf_init(&b, 100, 1 << 20), 0);
    const char *ev = "1970-01-01T00:00:10.5Z raw \033]0;t\007 bytes\n";
    logview_append(&b, 1, ev, strlen(ev), true, 0);
    logview_append(&b, 2, "no time\n", 8, false, 0);
    for (int stamps = 0; stamps < 2; stamps++) {
        FILE *f = tmpfile();
        assert_non_null(f);
        assert_int_equal(logview_save(&b, f, stamps), 0);
        rewind(f);
        char got[256] = {0};
        size_t n = fread(got, 1, sizeof(got) - 1, f);
        fclose(f);
        const char *want = stamps ? "1970-01-01T00:00:10.500Z raw \033]0;t\007 bytes\nno time\n"
                                  : "raw \033]0;t\007 bytes\nno time\n";
        assert_int_equal(n, strlen(want));
        assert_string_equal(got, want);
    }
    logbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stamp_parse),
        cmocka_unit_test(test_stamp_format),
        cmocka_unit_test(test_append_takes_stamps_off),
        cmocka_unit_test(test_display_is_sanitized),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_scroll_over_wrapped_lines),
        cmocka_unit_test(test_save),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
