/* common/utf8.c: strict checks, decoding and encoding of every code point, counting and cutting
 * at character boundaries, and both repair styles (the executor's maximal subparts as Python
 * does; the engine's one replacement per byte with NUL replaced and a stream's tail kept). */
#include "common/utf8.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#define FFFD "\xEF\xBF\xBD"

static void test_utf8_every_code_point_round_trips(void **state)
{
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        char s[4];
        size_t n = utf8_put(cp, s);
        assert_int_equal(n, cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);
        uint32_t back = 0;
        assert_int_equal(utf8_decode(s, n, &back), n);
        assert_int_equal(back, cp);
        assert_int_equal(utf8_char_len(s, n, NULL), (int)n);
        assert_true(utf8_valid(s, n));
        assert_int_equal(utf8_count(s, n), 1);
        assert_int_equal(utf8_next(s, n), n);
        assert_int_equal(utf8_prev(s, n), 0);
        assert_int_equal(utf8_cut(s, n), n);
        if (n > 1) { /* every shorter prefix is incomplete, and cut drops it */
            for (size_t k = 1; k < n; k++) {
                assert_int_equal(utf8_char_len(s, k, NULL), -1);
                assert_int_equal(utf8_decode(s, k, &back), 0);
                assert_false(utf8_valid(s, k));
                assert_int_equal(utf8_cut(s, k), 0);
            }
        }
    }
}

static void test_utf8_every_two_bytes_checked(void **state)
{
    /* A pair of bytes is valid exactly when it re-encodes to itself. */
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++) {
            char s[2] = {(char)a, (char)b};
            uint32_t cp;
            size_t n = utf8_decode(s, 2, &cp);
            if (a < 0x80) {
                assert_int_equal(n, 1);
                continue;
            }
            bool want = a >= 0xC2 && a <= 0xDF && b >= 0x80 && b <= 0xBF;
            assert_int_equal(n == 2, want);
            if (want) {
                char e[4];
                assert_int_equal(utf8_put(cp, e), 2);
                assert_memory_equal(e, s, 2);
            }
        }
}

static void test_utf8_lead_len(void **state)
{
    for (unsigned c = 0; c < 256; c++) {
        size_t want = c < 0x80                 ? 1
                      : c >= 0xC2 && c <= 0xDF ? 2
                      : c >= 0xE0 && c <= 0xEF ? 3
                      : c >= 0xF0 && c <= 0xF4 ? 4
                                               : 0;
        assert_int_equal(utf8_lead_len((unsigned char)c), want);
    }
}

static void test_utf8_ill_formed(void **state)
{
    size_t bad = 0;
    struct {
        const char *s;
        size_t n;
        int len;
        size_t bad;
    } cases[] = {
        {"\x80", 1, 0, 1},             /* a lone continuation byte */
        {"\xC0\xAF", 2, 0, 1},         /* overlong lead */
        {"\xE0\x80\x80", 3, 0, 1},     /* overlong three-byte form */
        {"\xED\xA0\x80", 3, 0, 1},     /* a surrogate */
        {"\xF4\x90\x80\x80", 4, 0, 1}, /* past U+10FFFF */
        {"\xF5\x80\x80\x80", 4, 0, 1}, /* no such lead */
        {"\xE2\x82"
         "A",
         3, 0, 2}, /* cut short by a new character */
        {"\xF0\x9F\x98"
         "A",
         4, 0, 3},
        {"\xF0\x9F\x98", 3, -1, 3}, /* the bytes end inside it */
        {"\xE2", 1, -1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bad = 99;
        assert_int_equal(utf8_char_len(cases[i].s, cases[i].n, &bad), cases[i].len);
        assert_int_equal(bad, cases[i].bad);
        uint32_t cp = 0;
        assert_int_equal(utf8_decode(cases[i].s, cases[i].n, &cp), 0);
        assert_int_equal(cp, (unsigned char)cases[i].s[0]); /* the byte itself */
        size_t len = 0;
        assert_int_equal(utf8_decode_lax(cases[i].s, cases[i].n, &len), cp);
        assert_int_equal(len, 1);
        assert_false(utf8_valid(cases[i].s, cases[i].n));
    }
    assert_true(utf8_valid("a\0b", 3)); /* NUL is a character */
    assert_true(utf8_valid("", 0));
}

static void test_utf8_encode_without_a_form(void **state)
{
    char s[4];
    assert_int_equal(utf8_put(0xD800, s), 3);
    assert_memory_equal(s, FFFD, 3);
    assert_int_equal(utf8_put(0x110000, s), 3);
    assert_memory_equal(s, FFFD, 3);
    assert_int_equal(utf8_put(0, s), 1);
    assert_int_equal(s[0], '\0');
}

static void test_utf8_count_offset_next_prev_cut(void **state)
{
    const char *s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z"; /* a é € 😀 z */
    size_t n = strlen(s);
    assert_int_equal(utf8_count(s, n), 5);
    assert_int_equal(utf8_offset(s, n, 0), 0);
    assert_int_equal(utf8_offset(s, n, 1), 1);
    assert_int_equal(utf8_offset(s, n, 2), 3);
    assert_int_equal(utf8_offset(s, n, 3), 6);
    assert_int_equal(utf8_offset(s, n, 4), 10);
    assert_int_equal(utf8_offset(s, n, 5), n);
    assert_int_equal(utf8_offset(s, n, 50), n);
    assert_int_equal(utf8_next(s + 1, n - 1), 2);
    assert_int_equal(utf8_next(s + 6, n - 6), 4);
    assert_int_equal(utf8_next(s + 6, 2), 2);      /* no further than the bytes given */
    assert_int_equal(utf8_next("\x80\x80", 2), 1); /* a stray continuation byte: itself */
    assert_int_equal(utf8_prev(s, n), 10);
    assert_int_equal(utf8_prev(s, 10), 6);
    assert_int_equal(utf8_prev(s, 6), 3);
    assert_int_equal(utf8_prev(s, 0), 0);
    assert_int_equal(utf8_prev("\x80\x80\x80\x80\x80", 5), 1); /* a character is 4 bytes at most */
    for (size_t k = 0; k <= n; k++) {
        size_t c = utf8_cut(s, k);
        bool boundary = k == 0 || k == 1 || k == 3 || k == 6 || k == 10 || k == n;
        assert_int_equal(c, boundary ? k : k < 3 ? 1 : k < 6 ? 3 : 6);
    }
    assert_int_equal(utf8_cut("ab\x80\x80\x80\x80", 6), 6); /* not UTF-8: nothing to keep whole */
}

static void check_repair(unsigned flags, const char *in, size_t n, const char *want,
                         size_t want_len, size_t want_tail)
{
    struct buf out = BUF_INIT;
    assert_int_equal(buf_append_str(&out, "<"), 0); /* it appends */
    size_t tail = 99;
    assert_int_equal(utf8_repair(&out, in, n, flags, &tail), 0);
    assert_int_equal(out.len, want_len + 1);
    assert_memory_equal(out.data + 1, want, want_len);
    assert_int_equal(out.data[out.len], '\0');
    assert_int_equal(tail, want_tail);
    buf_free(&out);
}

#define REPAIR(flags, in, want) check_repair(flags, in, sizeof(in) - 1, want, sizeof(want) - 1, 0)

static void test_utf8_repair_maximal_subparts(void **state)
{
    /* Python's bytes.decode("utf-8", "replace"): the executor's observations. */
    REPAIR(0, "plain", "plain");
    REPAIR(0, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    REPAIR(0, "\xff", FFFD);
    REPAIR(0, "a\xc3", "a" FFFD);
    REPAIR(0, "\xe2\x82", FFFD); /* truncated: one replacement */
    REPAIR(0,
           "\xf0\x9f\x98"
           "A",
           FFFD "A");
    REPAIR(0, "\xed\xa0\x80", FFFD FFFD FFFD);
    REPAIR(0, "\xc0\xaf", FFFD FFFD);
    REPAIR(0, "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);
    REPAIR(0, "x\0y", "x\0y"); /* NUL kept */
}

static void test_utf8_repair_engine_style(void **state)
{
    /* The engine's log text and paths: each bad byte and each NUL becomes U+FFFD. */
    const unsigned f = UTF8_REPAIR_NUL | UTF8_REPAIR_EACH_BYTE;
    REPAIR(f, "ok \xC3\xA9 \xFF \xC0\xAF \xED\xA0\x80 a\0b",
           "ok \xC3\xA9 " FFFD " " FFFD FFFD " " FFFD FFFD FFFD " a" FFFD "b");
    REPAIR(f, "ab\xE2\x82", "ab" FFFD FFFD);
    /* A stream cut inside a character keeps its start for the next chunk... */
    check_repair(f | UTF8_REPAIR_KEEP_TAIL, "ab\xE2\x82", 4, "ab", 2, 2);
    check_repair(f | UTF8_REPAIR_KEEP_TAIL, "\xF0", 1, "", 0, 1);
    /* ...but a sequence already broken is not a tail. */
    check_repair(f | UTF8_REPAIR_KEEP_TAIL,
                 "ab\xE2"
                 "A",
                 4, "ab" FFFD "A", 6, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_every_code_point_round_trips),
        cmocka_unit_test(test_utf8_every_two_bytes_checked),
        cmocka_unit_test(test_utf8_lead_len),
        cmocka_unit_test(test_utf8_ill_formed),
        cmocka_unit_test(test_utf8_encode_without_a_form),
        cmocka_unit_test(test_utf8_count_offset_next_prev_cut),
        cmocka_unit_test(test_utf8_repair_maximal_subparts),
        cmocka_unit_test(test_utf8_repair_engine_style),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
