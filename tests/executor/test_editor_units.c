/* Unit tests of the file actions' pure parts: the diff (expected texts are what Python's
 * difflib.unified_diff gives, n=0, lines right-stripped), encoding detection and
 * conversion, Python text rules, path spelling, the undo history, binary sniffing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "editor_encoding.h"
#include "editor_history.h"
#include "fileio.h"
#include "pathname.h"
#include "pytext.h"

/* ---- diff ------------------------------------------------------------------------------- */

static void expect_diff(const char *old, const char *new_text, const char *want)
{
    struct buf out = BUF_INIT;
    assert_int_equal(diff_unified(&out, "P", old, strlen(old), new_text, strlen(new_text)), 0);
    assert_string_equal(out.data ? out.data : "", want);
    buf_free(&out);
}

static void test_diff_basics(void **state)
{
    (void)state;
    expect_diff("same\ntext", "same\ntext", "");
    expect_diff("", "", "");
    /* "".split("\n") is one empty line: creating a file diffs against it. */
    expect_diff("", "hello", "--- P\n+++ P\n@@ -1 +1 @@\n-\n+hello");
    expect_diff("This is a test file.\nThis file is for testing purposes.\n",
                "This is a sample file.\nThis file is for testing purposes.\n",
                "--- P\n+++ P\n@@ -1 +1 @@\n-This is a test file.\n+This is a sample file.");
    expect_diff("a\nb\nc\nd\ne\n", "a\nB\nc\nD\ne\n",
                "--- P\n+++ P\n@@ -2 +2 @@\n-b\n+B\n@@ -4 +4 @@\n-d\n+D");
    expect_diff("one\ntwo\nthree", "zero\none\nthree\nfour",
                "--- P\n+++ P\n@@ -0,0 +1 @@\n+zero\n@@ -2 +2,0 @@\n-two\n@@ -3,0 +4 @@\n+four");
    expect_diff("x\nx\nx\nx\nx\ny\n", "x\nx\nx\nz\ny\n", "--- P\n+++ P\n@@ -4,2 +4 @@\n-x\n-x\n+z");
    /* Every diff line is right-stripped, as OpenHands strips them. */
    expect_diff("a  \nb\t\n", "a\nc\t\n", "--- P\n+++ P\n@@ -1,2 +1,2 @@\n-a\n-b\n+a\n+c");
}

static void test_diff_autojunk(void **state)
{
    (void)state;
    /* 200 or more new lines: a line found more than 1% + 1 times is no anchor. difflib then
     * matches the unique "end" first, and the run of "x" lines only by extension. */
    struct buf old = BUF_INIT, new_text = BUF_INIT, want = BUF_INIT, out = BUF_INIT;
    for (int i = 0; i < 250; i++)
        buf_append_str(&old, "x\n");
    buf_append_str(&old, "end");
    buf_append_str(&new_text, "start\n");
    buf_append(&new_text, old.data, old.len);
    assert_int_equal(diff_unified(&out, "P", old.data, old.len, new_text.data, new_text.len), 0);
    assert_string_equal(out.data, "--- P\n+++ P\n@@ -0,0 +1 @@\n+start");
    buf_free(&old);
    buf_free(&new_text);
    buf_free(&want);
    buf_free(&out);
}

/* ---- encodings -------------------------------------------------------------------------- */

static void test_encoding_detect(void **state)
{
    (void)state;
    assert_int_equal(editor_encoding_detect("", 0), EDITOR_ENC_UTF8);
    assert_int_equal(editor_encoding_detect("plain ascii\n", 12), EDITOR_ENC_UTF8);
    const char *utf8 = "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 caf\xc3\xa9";
    assert_int_equal(editor_encoding_detect(utf8, strlen(utf8)), EDITOR_ENC_UTF8);
    /* "Привет, мир!" in cp1251: whole words of high letters. */
    const char *cyr = "text = \"\xcf\xf0\xe8\xe2\xe5\xf2, \xec\xe8\xf0!\"\n";
    assert_int_equal(editor_encoding_detect(cyr, strlen(cyr)), EDITOR_ENC_CP1251);
    /* "café crème naïve" in latin-1: high letters inside ASCII words. */
    const char *lat = "caf\xe9 cr\xe8me na\xefve\n";
    assert_int_equal(editor_encoding_detect(lat, strlen(lat)), EDITOR_ENC_LATIN1);
    /* German: "Größe" mixes, so latin-1 even with two high letters in a row. */
    const char *de = "Gr\xf6\xdf"
                     "e\n";
    assert_int_equal(editor_encoding_detect(de, strlen(de)), EDITOR_ENC_LATIN1);
    /* Cyrillic with 0x98 (no cp1251 character): latin-1, so every byte survives. */
    const char *odd = "\xcf\xf0\xe8\xe2\xe5\xf2 \x98";
    assert_int_equal(editor_encoding_detect(odd, strlen(odd)), EDITOR_ENC_LATIN1);
    /* Broken UTF-8 is not UTF-8. */
    assert_int_equal(editor_encoding_detect("\xc3(", 2), EDITOR_ENC_LATIN1);
    /* An encoded surrogate is not UTF-8 either. */
    assert_int_equal(editor_encoding_detect("a\xed\xa0\xa1", 4), EDITOR_ENC_LATIN1);
    /* C1 bytes are controls in latin-1 but punctuation in cp1251 ("\x85" is an ellipsis). */
    assert_int_equal(editor_encoding_detect("Wait\x85 \x93ok\x94", 10), EDITOR_ENC_CP1251);
}

static void test_encoding_round_trip(void **state)
{
    (void)state;
    /* Every byte but 0x98 decodes in cp1251 and encodes back to itself; all in latin-1. */
    for (int enc = EDITOR_ENC_CP1251; enc <= EDITOR_ENC_LATIN1; enc++) {
        char all[256];
        size_t n = 0;
        for (int c = 0; c < 256; c++)
            if (enc == EDITOR_ENC_LATIN1 || c != 0x98)
                all[n++] = (char)c;
        struct buf text = BUF_INIT, back = BUF_INIT, err = BUF_INIT;
        assert_int_equal(editor_encoding_decode(enc, all, n, &text), 0);
        assert_int_equal(editor_encoding_encode(enc, text.data, text.len, &back, &err), 0);
        assert_int_equal(back.len, n);
        assert_memory_equal(back.data, all, n);
        buf_free(&text);
        buf_free(&back);
        buf_free(&err);
    }
    struct buf text = BUF_INIT;
    assert_int_equal(editor_encoding_decode(EDITOR_ENC_CP1251, "\xa8\xb8\xb9\x88", 4, &text), 0);
    assert_string_equal(text.data, "Ёё№€");
    buf_free(&text);
}

static void expect_encode_error(enum editor_encoding enc, const char *text, const char *want)
{
    struct buf out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(editor_encoding_encode(enc, text, strlen(text), &out, &err), 1);
    assert_string_equal(err.data, want);
    buf_free(&out);
    buf_free(&err);
}

static void test_encoding_errors_as_python(void **state)
{
    (void)state;
    expect_encode_error(EDITOR_ENC_CP1251, "ab中c",
                        "'charmap' codec can't encode character '\\u4e2d' in position 2: "
                        "character maps to <undefined>");
    expect_encode_error(EDITOR_ENC_CP1251, "中中x",
                        "'charmap' codec can't encode characters in position 0-1: character maps "
                        "to <undefined>");
    expect_encode_error(EDITOR_ENC_CP1251, "aéz",
                        "'charmap' codec can't encode character '\\xe9' in position 1: character "
                        "maps to <undefined>");
    expect_encode_error(EDITOR_ENC_LATIN1, "aéz€",
                        "'latin-1' codec can't encode character '\\u20ac' in position 3: ordinal "
                        "not in range(256)");
    expect_encode_error(EDITOR_ENC_LATIN1, "😀",
                        "'latin-1' codec can't encode character '\\U0001f600' in position 0: "
                        "ordinal not in range(256)");
}

/* ---- Python text rules ------------------------------------------------------------------ */

static void expect_repr(const char *s, const char *want)
{
    struct buf out = BUF_INIT;
    assert_int_equal(pytext_repr_str(&out, s, strlen(s)), 0);
    assert_string_equal(out.data, want);
    buf_free(&out);
}

static void test_pytext_repr(void **state)
{
    (void)state;
    expect_repr("/w/a.txt", "'/w/a.txt'");
    expect_repr("it's", "\"it's\"");
    expect_repr("it's \"q\"", "'it\\'s \"q\"'");
    expect_repr("a\tb\nc\\", "'a\\tb\\nc\\\\'");
    expect_repr("\x01\x7f\xc2\xa0ü", "'\\x01\\x7f\\xa0ü'");
    json_t *v = json_loads("[1, \"x\", 1.5, true, null, [2], {\"k\": 3}]", 0, NULL);
    struct buf out = BUF_INIT;
    assert_int_equal(pytext_repr_json(&out, v), 0);
    assert_string_equal(out.data, "[1, 'x', 1.5, True, None, [2], {'k': 3}]");
    buf_reset(&out);
    long lines[] = {1, 2, 7};
    assert_int_equal(pytext_repr_longs(&out, lines, 3), 0);
    assert_string_equal(out.data, "[1, 2, 7]");
    buf_free(&out);
    json_decref(v);
}

static void test_pytext_strip_and_lines(void **state)
{
    (void)state;
    /* str.strip() knows more than ASCII whitespace: NBSP, ideographic space, \x1c. */
    const char *s = " \t\xc2\xa0x y\x1c\xe3\x80\x80\n";
    size_t n = strlen(s);
    size_t from = pytext_lstrip(s, n), to = pytext_rstrip(s, n);
    assert_int_equal(to - from, 3);
    assert_memory_equal(s + from, "x y", 3);
    /* splitlines() separators. */
    const char *t = "a\r\nb\fc\xe2\x80\xa8"
                    "d";
    size_t next, pos = 0, count = 0;
    const char *want[] = {"a", "b", "c", "d"};
    while (pos < strlen(t)) {
        size_t end = pytext_line_end(t, strlen(t), pos, &next);
        assert_int_equal(end - pos, strlen(want[count]));
        assert_memory_equal(t + pos, want[count], end - pos);
        count++;
        pos = next;
    }
    assert_int_equal(count, 4);
    struct buf out = BUF_INIT;
    assert_int_equal(pytext_universal_newlines(&out, "a\r\nb\rc\n\r", 8), 0);
    assert_string_equal(out.data, "a\nb\nc\n\n");
    buf_reset(&out);
    buf_append_str(&out, "h\xc3\xa9llo");
    assert_int_equal(pytext_truncate(&out, 2, "<cut>"), 0);
    assert_string_equal(out.data, "h\xc3\xa9<cut>");
    buf_free(&out);
}

static void test_pytext_parse_int(void **state)
{
    (void)state;
    long v = 0;
    assert_int_equal(pytext_parse_int("185", 3, &v), 0);
    assert_int_equal(v, 185);
    assert_int_equal(pytext_parse_int(" -1_000 \n", 9, &v), 0);
    assert_int_equal(v, -1000);
    assert_int_equal(pytext_parse_int("+7", 2, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(pytext_parse_int("abc", 3, &v), -1);
    assert_int_equal(pytext_parse_int("1.5", 3, &v), -1);
    assert_int_equal(pytext_parse_int("1__0", 4, &v), -1);
    assert_int_equal(pytext_parse_int("_1", 2, &v), -1);
    assert_int_equal(pytext_parse_int("", 0, &v), -1);
    assert_int_equal(pytext_parse_int("99999999999999999999", 20, &v), -1);
}

/* ---- paths ------------------------------------------------------------------------------ */

static void expect_norm(const char *in, const char *want)
{
    struct buf out = BUF_INIT;
    assert_int_equal(pathname_normalize(&out, in), 0);
    assert_string_equal(out.data, want);
    buf_free(&out);
}

static void test_pathname(void **state)
{
    (void)state;
    expect_norm("/workspace/", "/workspace");
    expect_norm("/a//b/./c/", "/a/b/c");
    expect_norm("/a/../b", "/a/../b");
    expect_norm("//net/x", "//net/x");
    expect_norm("///x", "/x");
    expect_norm("/", "/");
    expect_norm("", ".");
    expect_norm("./a/b", "a/b");
    struct buf out = BUF_INIT;
    assert_int_equal(pathname_join(&out, "/ws", "./sub/../f.txt"), 0);
    assert_string_equal(out.data, "/ws/sub/../f.txt");
    buf_reset(&out);
    assert_int_equal(pathname_join(&out, "/ws", "/etc//x"), 0);
    assert_string_equal(out.data, "/etc/x");
    buf_reset(&out);
    assert_int_equal(pathname_dirname(&out, "/a/b"), 0);
    assert_string_equal(out.data, "/a");
    buf_reset(&out);
    assert_int_equal(pathname_dirname(&out, "/a"), 0);
    assert_string_equal(out.data, "/");
    buf_free(&out);
    assert_string_equal(pathname_suffix("/a/doc.tar.PDF"), ".PDF");
    assert_string_equal(pathname_suffix("/a/.bashrc"), "");
    assert_string_equal(pathname_suffix("/a.b/c"), "");
    assert_string_equal(pathname_suffix("/a/c."), "");
}

/* ---- history ---------------------------------------------------------------------------- */

static void test_history(void **state)
{
    (void)state;
    struct editor_history *h = editor_history_new();
    size_t n;
    assert_null(editor_history_last(h, "/a", &n));
    char text[8];
    for (int i = 0; i < 12; i++) {
        snprintf(text, sizeof text, "v%d", i);
        assert_int_equal(editor_history_push(h, "/a", text, strlen(text)), 0);
    }
    assert_int_equal(editor_history_push(h, "/b", "other", 5), 0);
    /* Ten kept, newest first out: v11 .. v2. */
    for (int i = 11; i >= 2; i--) {
        const char *last = editor_history_last(h, "/a", &n);
        assert_non_null(last);
        snprintf(text, sizeof text, "v%d", i);
        assert_int_equal(n, strlen(text));
        assert_memory_equal(last, text, n);
        editor_history_pop(h, "/a");
    }
    assert_null(editor_history_last(h, "/a", &n));
    assert_non_null(editor_history_last(h, "/b", &n));
    editor_history_free(h);
}

/* ---- binary sniffing ----------------------------------------------------------------------- */

static void test_binary_sniff(void **state)
{
    (void)state;
    assert_false(fileio_is_binary("", 0));
    assert_false(fileio_is_binary("text\twith\ttabs\r\n", 16));
    assert_false(fileio_is_binary("\xcf\xf0\xe8\xe2\xe5\xf2\xff", 7)); /* cp1251 with я */
    assert_true(fileio_is_binary("Some text\0with binary", 21));
    assert_true(fileio_is_binary("\x01\x02\x03\x04xy", 6));
    const char *ansi = "\x1b[31mred\x1b[0m plain words here";
    assert_false(fileio_is_binary(ansi, strlen(ansi)));
    /* Only the first KB counts. */
    char big[2048];
    memset(big, 'a', sizeof big);
    big[1500] = '\0';
    assert_false(fileio_is_binary(big, sizeof big));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_basics),
        cmocka_unit_test(test_diff_autojunk),
        cmocka_unit_test(test_encoding_detect),
        cmocka_unit_test(test_encoding_round_trip),
        cmocka_unit_test(test_encoding_errors_as_python),
        cmocka_unit_test(test_pytext_repr),
        cmocka_unit_test(test_pytext_strip_and_lines),
        cmocka_unit_test(test_pytext_parse_int),
        cmocka_unit_test(test_pathname),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_binary_sniff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
