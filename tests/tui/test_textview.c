/* The text viewer (ui/textview.c) every text page shares: a text cut into lines, wrapping by
 * columns or at words, scrolling over wrapped lines, following the end, a source that drops
 * its oldest lines, search in what is shown (and its wrap around the ends), the position
 * shown as "first-last of total". No terminal: only the pure parts run. */
#include "ui/logbuf.h"
#include "ui/textview.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_line(const struct textview_text *t, size_t i, const char *want)
{
    assert_true(i < t->nlines);
    assert_int_equal(t->lens[i], strlen(want));
    assert_memory_equal(t->text + t->off[i], want, strlen(want));
}

static void test_text_lines(void **state)
{
    (void)state;
    struct textview_text t = {0};
    const char *s = "one\r\ntwo\n\nfour\n";
    assert_int_equal(textview_text_set(&t, s, strlen(s)), 0);
    assert_int_equal(t.nlines, 4); /* no empty line after the last newline */
    assert_line(&t, 0, "one");     /* the \r before a newline goes */
    assert_line(&t, 1, "two");
    assert_line(&t, 2, "");
    assert_line(&t, 3, "four");
    assert_int_equal(textview_text_set(&t, "last", 4), 0);
    assert_int_equal(t.nlines, 1);
    assert_line(&t, 0, "last");
    assert_int_equal(textview_text_set(&t, "", 0), 0);
    assert_int_equal(t.nlines, 1); /* an empty text is one empty line */
    textview_text_free(&t);
    assert_null(t.text);
}

static void test_wrap_words(void **state)
{
    (void)state;
    assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
    size_t st[8];
    const char *s = "hello world again";
    /* by columns: 8, 8, 1 */
    assert_int_equal(logview_wrap(s, strlen(s), 8, false, 0, st, 8), 3);
    assert_int_equal(st[1], 8);
    /* at words: "hello " "world " "again" */
    assert_int_equal(logview_wrap(s, strlen(s), 8, true, 0, st, 8), 3);
    assert_int_equal(st[1], 6);
    assert_int_equal(st[2], 12);
    const char *fox = "the quick brown fox";
    assert_int_equal(logview_wrap(fox, strlen(fox), 10, true, 0, st, 8), 2);
    assert_int_equal(st[1], 10); /* "the quick " | "brown fox" */
    /* a space before half the width is not worth it: cut by columns */
    const char *t = "a bcdefghijkl";
    assert_int_equal(logview_wrap(t, strlen(t), 8, true, 0, st, 8), 2);
    assert_int_equal(st[1], 8);
}

/* A view over a text of lines of 3, 25, 1, 12 and 7 characters, 10 columns, 3 rows. */
static void view_of(struct textview *tv, struct textview_text *t)
{
    const char *s = "abc\n"
                    "0123456789012345678901234\n"
                    "x\n"
                    "hello world!\n"
                    "the end";
    assert_int_equal(textview_text_set(t, s, strlen(s)), 0);
    textview_init(tv, &textview_text_source, t, 0);
    tv->width = 10;
    tv->height = 3;
}

static void test_scroll_and_follow(void **state)
{
    (void)state;
    assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
    struct textview tv;
    struct textview_text t = {0};
    view_of(&tv, &t);
    assert_int_equal(textview_count(&tv), 5);
    assert_int_equal(textview_rows(&tv, 0), 1);
    assert_int_equal(textview_rows(&tv, 1), 3);
    assert_int_equal(textview_rows(&tv, 3), 2);
    size_t first, last, total;
    textview_position(&tv, &first, &last, &total);
    assert_int_equal(total, 8);
    assert_int_equal(first, 1);
    assert_int_equal(last, 3);
    /* one row down: into the wrapped line */
    assert_false(textview_scroll(&tv, 1));
    struct logview_pos p = textview_top(&tv);
    assert_int_equal(p.line, 1);
    assert_int_equal(p.row, 0);
    textview_scroll(&tv, 2);
    p = textview_top(&tv);
    assert_int_equal(p.line, 1);
    assert_int_equal(p.row, 2);
    /* never past the bottom: the last 3 rows are line 3's two and line 4 */
    textview_scroll(&tv, 100);
    p = textview_top(&tv);
    assert_int_equal(p.line, 3);
    assert_int_equal(p.row, 0);
    textview_position(&tv, &first, &last, &total);
    assert_int_equal(first, 6);
    assert_int_equal(last, 8);
    assert_int_equal(textview_page(&tv), 2);
    /* home, and end: following sticks to the bottom; moving up stops following */
    textview_home(&tv);
    p = textview_top(&tv);
    assert_int_equal(p.line, 0);
    assert_int_equal(p.row, 0);
    textview_end(&tv);
    assert_true(tv.follow);
    p = textview_top(&tv);
    assert_int_equal(p.line, 3);
    assert_true(textview_scroll(&tv, -1));
    assert_false(tv.follow);
    p = textview_top(&tv);
    assert_int_equal(p.line, 2);
    /* cut, not wrapped: one row a line; the first line shown stays, from its start */
    textview_scroll(&tv, -1);
    p = textview_top(&tv);
    assert_int_equal(p.line, 1);
    assert_int_equal(p.row, 2);
    textview_set_wrap(&tv, false);
    p = textview_top(&tv);
    assert_int_equal(p.line, 1);
    assert_int_equal(p.row, 0);
    assert_int_equal(textview_rows(&tv, 1), 1);
    textview_free(&tv);
    textview_text_free(&t);
}

static void test_search(void **state)
{
    (void)state;
    assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
    struct textview_text t = {0};
    const char *s = "alpha\n\033[31mERROR\033[0m disk\nbeta error\ngamma\n";
    assert_int_equal(textview_text_set(&t, s, strlen(s)), 0);
    struct textview tv;
    textview_init(&tv, &textview_text_source, &t, 0);
    tv.height = 2;
    assert_int_equal(textview_find_from(&tv, 0, 1), -1); /* no needle: nothing */
    textview_set_needle(&tv, "error");
    assert_int_equal(textview_find_from(&tv, 0, 1), 1);
    assert_int_equal(textview_find_from(&tv, 2, 1), 2);
    assert_int_equal(textview_find_from(&tv, 3, 1), 1);  /* wraps to the top */
    assert_int_equal(textview_find_from(&tv, 0, -1), 2); /* wraps to the end */
    assert_int_equal(textview_count_matches(&tv), 2);
    /* n and N: from what is shown, then from the match, round the ends */
    bool wrapped;
    assert_int_equal(textview_find(&tv, 1, true, &wrapped), 1);
    assert_false(wrapped);
    assert_true(tv.has_match);
    assert_int_equal(tv.match_abs, 1);
    assert_int_equal(textview_find(&tv, 1, false, &wrapped), 2);
    assert_false(wrapped);
    assert_int_equal(textview_find(&tv, 1, false, &wrapped), 1);
    assert_true(wrapped);
    assert_int_equal(textview_find(&tv, -1, false, &wrapped), 2);
    assert_true(wrapped);
    /* the match is in view: a third of the way down (here: at the top of two rows) */
    assert_int_equal(textview_top(&tv).line, 2);
    /* the escape shows as "^[[31m": that is what can be found */
    textview_set_needle(&tv, "^[[31m");
    assert_int_equal(textview_find_from(&tv, 0, 1), 1);
    assert_false(tv.has_match);
    textview_set_needle(&tv, "zzz");
    assert_int_equal(textview_find(&tv, 1, true, &wrapped), -1);
    assert_false(tv.has_match);
    assert_int_equal(textview_count_matches(&tv), 0);
    textview_free(&tv);
    textview_text_free(&t);
}

/* A ring of lines (the Logs tab's source): the oldest go, the view stays on its line. */
static size_t ring_count(const void *ud)
{
    return ((const struct logbuf *)ud)->count;
}

static const char *ring_line(const void *ud, size_t i, size_t *len)
{
    const struct logbuf_line *l = logbuf_get(ud, i);
    *len = l ? l->len : 0;
    return l ? l->text : NULL;
}

static uint64_t ring_first(const void *ud)
{
    return ((const struct logbuf *)ud)->dropped;
}

static const struct textview_source ring_source = {
    .count = ring_count,
    .line = ring_line,
    .first = ring_first,
};

static void test_source_that_drops_lines(void **state)
{
    (void)state;
    assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
    struct logbuf b;
    assert_int_equal(logbuf_init(&b, 5, 1 << 20), 0);
    for (int i = 0; i < 5; i++) {
        char line[16];
        int n = snprintf(line, sizeof(line), "line %d\n", i);
        logbuf_append(&b, 1, line, (size_t)n, 0);
    }
    struct textview tv;
    textview_init(&tv, &ring_source, &b, 0);
    tv.height = 2;
    textview_scroll(&tv, 2); /* line 2 on top */
    assert_int_equal(textview_top(&tv).line, 2);
    logbuf_append(&b, 1, "line 5\n", 7, 0); /* line 0 goes */
    assert_int_equal(b.dropped, 1);
    struct logview_pos p = textview_top(&tv);
    assert_int_equal(p.line, 1); /* the same line ("line 2"), one index up */
    size_t len;
    assert_string_equal(textview_display(&tv, p.line, &len), "line 2");
    /* following: new lines keep the end in view */
    textview_end(&tv);
    logbuf_append(&b, 1, "line 6\n", 7, 0);
    assert_int_equal(textview_top(&tv).line, 3);
    textview_free(&tv);
    logbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_lines),
        cmocka_unit_test(test_wrap_words),
        cmocka_unit_test(test_scroll_and_follow),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_source_that_drops_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
