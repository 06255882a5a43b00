/* common/buf.c: appends keep the bytes NUL-terminated, printf, consume, reset, steal. */
#include "common/buf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

static void test_buf_append_grows_and_terminates(void **state)
{
    struct buf b = BUF_INIT;
    assert_int_equal(buf_append(&b, "ab", 2), 0);
    assert_int_equal(b.len, 2);
    assert_string_equal(b.data, "ab");
    /* many small appends across several doublings, with a NUL inside */
    for (int i = 0; i < 5000; i++)
        assert_int_equal(buf_append(&b, i == 100 ? "\0" : "x", 1), 0);
    assert_int_equal(b.len, 5002);
    assert_true(b.cap > b.len);
    assert_int_equal(b.data[b.len], '\0');
    assert_int_equal(b.data[102], '\0');
    assert_int_equal(b.data[103], 'x');
    assert_int_equal(buf_append_str(&b, "end"), 0);
    assert_string_equal(b.data + 5002, "end");
    buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
}

static void test_buf_append_nothing(void **state)
{
    struct buf b = BUF_INIT;
    assert_int_equal(buf_append(&b, NULL, 0), 0);
    assert_non_null(b.data); /* a C string even when empty */
    assert_string_equal(b.data, "");
    buf_free(&b);
}

static void test_buf_reserve_refuses_overflow(void **state)
{
    struct buf b = BUF_INIT;
    assert_int_equal(buf_append_str(&b, "keep"), 0);
    assert_int_equal(buf_reserve(&b, (size_t)-1), -1);
    assert_int_equal(buf_append(&b, "x", (size_t)-1 - 1), -1);
    assert_string_equal(b.data, "keep"); /* unchanged */
    assert_int_equal(b.len, 4);
    size_t cap = b.cap;
    assert_int_equal(buf_reserve(&b, cap * 3), 0);
    assert_true(b.cap >= b.len + cap * 3 + 1);
    buf_free(&b);
}

static void test_buf_printf(void **state)
{
    struct buf b = BUF_INIT;
    assert_int_equal(buf_printf(&b, "%d-%s", 42, "x"), 0);
    assert_int_equal(buf_printf(&b, "|%0300d|", 7), 0);
    assert_int_equal(b.len, 4 + 302);
    assert_memory_equal(b.data, "42-x|000", 8);
    assert_string_equal(b.data + b.len - 3, "07|");
    buf_free(&b);
}

static void test_buf_consume_and_reset(void **state)
{
    struct buf b = BUF_INIT;
    buf_consume(&b, 0); /* no storage yet: nothing to do */
    assert_null(b.data);
    assert_int_equal(buf_append_str(&b, "hello world"), 0);
    buf_consume(&b, 6);
    assert_int_equal(b.len, 5);
    assert_string_equal(b.data, "world");
    buf_consume(&b, 5);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    assert_int_equal(buf_append_str(&b, "again"), 0);
    size_t cap = b.cap;
    buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, cap); /* storage kept for reuse */
    assert_string_equal(b.data, "");
    buf_free(&b);
}

static void test_buf_steal(void **state)
{
    struct buf b = BUF_INIT;
    char *empty = buf_steal(&b);
    assert_non_null(empty);
    assert_string_equal(empty, "");
    free(empty);
    assert_int_equal(buf_append_str(&b, "mine"), 0);
    char *s = buf_steal(&b);
    assert_string_equal(s, "mine");
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_append_grows_and_terminates),
        cmocka_unit_test(test_buf_append_nothing),
        cmocka_unit_test(test_buf_reserve_refuses_overflow),
        cmocka_unit_test(test_buf_printf),
        cmocka_unit_test(test_buf_consume_and_reset),
        cmocka_unit_test(test_buf_steal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
