/* The Logs view's bounded buffer (ui/logbuf.c). */
#include "ui/logbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_lines_across_chunks(void **state)
{
    struct logbuf b;
    assert_int_equal(logbuf_init(&b, 100, 1 << 20), 0);
    assert_int_equal(logbuf_append(&b, 1, "hel", 3, 1), 0);
    assert_int_equal(logbuf_append(&b, 2, "err one\n", 8, 1), 1);
    assert_int_equal(logbuf_append(&b, 1, "lo\r\nworld\nx", 11, 2), 2);
    assert_int_equal(b.count, 3);
    assert_string_equal(logbuf_get(&b, 0)->text, "err one");
    assert_int_equal(logbuf_get(&b, 0)->fd, 2);
    assert_string_equal(logbuf_get(&b, 1)->text, "hello"); /* CR before LF dropped */
    assert_string_equal(logbuf_get(&b, 2)->text, "world");
    assert_null(logbuf_get(&b, 3));
    assert_int_equal(logbuf_append(&b, 1, "\n", 1, 3), 1); /* the partial "x" completes */
    assert_string_equal(logbuf_get(&b, 3)->text, "x");
    logbuf_free(&b);
}

static void test_bounded_and_counted(void **state)
{
    struct logbuf b;
    assert_int_equal(logbuf_init(&b, 10, 1 << 20), 0);
    for (int i = 0; i < 25; i++) {
        char line[32];
        int n = snprintf(line, sizeof(line), "line %d\n", i);
        logbuf_append(&b, 1, line, (size_t)n, i);
    }
    assert_int_equal(b.count, 10);
    assert_int_equal(b.dropped, 15);
    assert_int_equal(b.total, 25);
    assert_string_equal(logbuf_get(&b, 0)->text, "line 15");
    assert_string_equal(logbuf_get(&b, 9)->text, "line 24");
    logbuf_free(&b);

    /* bytes bound: 100 bytes of text at most */
    assert_int_equal(logbuf_init(&b, 1000, 100), 0);
    for (int i = 0; i < 50; i++)
        logbuf_append(&b, 1, "0123456789\n", 11, i);
    assert_true(b.bytes <= 100);
    assert_int_equal(b.count, 10);
    assert_int_equal(b.dropped, 40);
    /* an endless line is cut at max_bytes / 4 */
    char big[1000];
    memset(big, 'a', sizeof(big));
    logbuf_clear(&b);
    logbuf_append(&b, 1, big, sizeof(big), 1);
    assert_true(b.bytes <= 100);
    assert_true(b.count >= 1);
    assert_int_equal(logbuf_get(&b, 0)->len, 25);
    logbuf_free(&b);
}

static void test_search(void **state)
{
    struct logbuf b;
    assert_int_equal(logbuf_init(&b, 100, 1 << 20), 0);
    const char *text = "starting\nERROR: disk\nok\nan error again\nbye\n";
    logbuf_append(&b, 1, text, strlen(text), 1);
    assert_int_equal(logbuf_find(&b, "error", 0, 1), 1);
    assert_int_equal(logbuf_find(&b, "error", 2, 1), 3);
    assert_int_equal(logbuf_find(&b, "error", 4, 1), 1);  /* wraps */
    assert_int_equal(logbuf_find(&b, "error", 2, -1), 1); /* backwards */
    assert_int_equal(logbuf_find(&b, "error", 0, -1), 3); /* wraps backwards */
    assert_int_equal(logbuf_find(&b, "nothing", 0, 1), -1);
    assert_int_equal(logbuf_find(&b, "", 0, 1), -1);
    size_t starts[4];
    assert_int_equal(logbuf_matches("aXaxa", 5, "xa", starts, 4), 2);
    assert_int_equal(starts[0], 1);
    assert_int_equal(starts[1], 3);
    assert_int_equal(logbuf_matches("aaaa", 4, "aa", starts, 4), 2); /* not overlapping */
    assert_int_equal(logbuf_matches("a", 1, "aa", starts, 4), 0);
    logbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_across_chunks),
        cmocka_unit_test(test_bounded_and_counted),
        cmocka_unit_test(test_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
