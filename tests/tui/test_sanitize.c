/* The sanitizer (common/sanitize.c): hostile inputs (escape sequences, control bytes, bidi
 * overrides, endless lines; numbered I06-I13 below), exact outputs. */
#include "common/sanitize.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sanitize a byte string given with its length (inputs may hold NULs). */
static char *san(const char *in, size_t len, unsigned flags)
{
    static char out[4096];
    sanitize_text_flags(in, len, out, sizeof(out), flags);
    return out;
}

#define SAN(lit) san(lit, sizeof(lit) - 1, 0)
#define SAN_F(lit, f) san(lit, sizeof(lit) - 1, f)

static void test_plain_text_and_utf8_kept(void **state)
{
    (void)state;
    assert_string_equal(SAN("echo hi"), "echo hi");
    assert_string_equal(SAN("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x90\xB3"),
                        "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x90\xB3");
    assert_string_equal(SAN(""), "");
}

static void test_osc52_clipboard(void **state)
{
    (void)state;
    /* I06: OSC 52 writes the clipboard; BEL-terminated. The payload never reaches the screen. */
    assert_string_equal(SAN("x\x1b]52;c;cm0gLXJmIH4K\x07y"), "x^[]52\xE2\x80\xA6y");
    /* ST-terminated, clipboard query form */
    assert_string_equal(SAN("\x1b]52;c;?\x1b\\done"), "^[]52\xE2\x80\xA6"
                                                      "done");
}

static void test_osc0_title(void **state)
{
    (void)state;
    /* I07: window title set, ST-terminated, then an OSC 8 hyperlink (I08). */
    assert_string_equal(SAN("\x1b]0;pwned\x1b\\ok"), "^[]0\xE2\x80\xA6ok");
    assert_string_equal(SAN("\x1b]8;;http://evil/\x07safe\x1b]8;;\x07"),
                        "^[]8\xE2\x80\xA6safe^[]8\xE2\x80\xA6");
    /* unterminated: swallows to the end, as a terminal would, but says so */
    assert_string_equal(SAN("a\x1b]2;title without end"), "a^[]2\xE2\x80\xA6");
    /* an ESC that is not ST aborts the string and starts its own sequence */
    assert_string_equal(SAN("\x1b]0;t\x1b[2Jz"), "^[]0\xE2\x80\xA6^[[2Jz");
}

static void test_csi_cursor_and_erase(void **state)
{
    (void)state;
    /* I09: cursor moves and erase that would overwrite the dashboard */
    assert_string_equal(SAN("a\x1b[2J\x1b[H\x1b[10;20Hb\x1b[1A\x1b[K"),
                        "a^[[2J^[[H^[[10;20Hb^[[1A^[[K");
    assert_string_equal(SAN("\x1b[31mred\x1b[0m"), "^[[31mred^[[0m");
    /* CSI 21 t (title report) and a private mode */
    assert_string_equal(SAN("\x1b[21t\x1b[?1049h"), "^[[21t^[[?1049h");
    /* a very long parameter run is shown bounded */
    assert_string_equal(SAN("\x1b[1111111111111111111111111111111111111111m!"),
                        "^[[11111111111111111111111111111111\xE2\x80\xA6!");
}

static void test_other_escapes(void **state)
{
    (void)state;
    /* I12: DCS, APC, PM, SOS (tmux passthrough is a DCS) */
    assert_string_equal(SAN("\x1bPtmux;\x1b\x1b]52;c;x\x07\x1b\\z"),
                        "^[P\xE2\x80\xA6^[^[]52\xE2\x80\xA6^[\\z");
    assert_string_equal(SAN("\x1b_apc body\x1b\\z"), "^[_\xE2\x80\xA6z");
    assert_string_equal(SAN("\x1b^pm\x07z"), "^[^\xE2\x80\xA6z");
    assert_string_equal(SAN("\x1bXsos\x18z"), "^[X\xE2\x80\xA6z");
    /* two-byte and nF escapes; a lone ESC at the end; ESC before a control */
    assert_string_equal(SAN("\x1b"
                            "c\x1b(B\x1b"
                            "7"),
                        "^[c^[(B^[7");
    assert_string_equal(SAN("end\x1b"), "end^[");
    assert_string_equal(SAN("\x1b\x1b[A"), "^[^[[A");
    assert_string_equal(SAN("\x1b\n"), "^[\xE2\x8F\x8E");
}

static void test_c1_raw_9b(void **state)
{
    (void)state;
    /* I12: a raw 0x9B is CSI on 8-bit terminals; in UTF-8 it is invalid: shown as bytes. */
    assert_string_equal(SAN("a\x9b"
                            "31mred"),
                        "a\\x9B31mred");
    assert_string_equal(SAN("\x80\x9f\x9c"), "\\x80\\x9F\\x9C");
}

static void test_c1_u009b(void **state)
{
    (void)state;
    /* U+009B (C2 9B) and U+0085 (NEL): visible code points */
    assert_string_equal(SAN("a\xC2\x9B"
                            "31m"),
                        "a<U+009B>31m");
    assert_string_equal(SAN("\xC2\x85\xC2\x80\xC2\x9F"), "<U+0085><U+0080><U+009F>");
}

static void test_bidi_u202e(void **state)
{
    (void)state;
    /* I11: Trojan Source style override */
    assert_string_equal(SAN("ls \xE2\x80\xAEtxt.exe"), "ls <U+202E>txt.exe");
    assert_string_equal(SAN("\xD8\x9C\xE2\x80\x8E\xE2\x80\x8F\xE2\x80\xAA\xE2\x81\xA6\xE2\x81\xA9"),
                        "<U+061C><U+200E><U+200F><U+202A><U+2066><U+2069>");
}

static void test_zero_width_u200b(void **state)
{
    (void)state;
    assert_string_equal(SAN("rm\xE2\x80\x8B -rf"), "rm<U+200B> -rf");
    assert_string_equal(SAN("\xE2\x80\x8C\xE2\x80\x8D\xE2\x81\xA0\xE2\x81\xA4\xEF\xBB\xBF\xC2\xAD"),
                        "<U+200C><U+200D><U+2060><U+2064><U+FEFF><U+00AD>");
    /* Unicode tags carry hidden ASCII ("ASCII smuggling") */
    assert_string_equal(SAN("ok\xF3\xA0\x80\x81\xF3\xA0\x81\xA1"), "ok<U+E0001><U+E0061>");
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    /* lone lead, bad continuation, truncated 3-byte, surrogate, overlongs, > U+10FFFF */
    assert_string_equal(SAN("\xFF\xC3(\xE2\x82"), "\\xFF\\xC3(\\xE2\\x82");
    assert_string_equal(SAN("\xED\xA0\x80"), "\\xED\\xA0\\x80");
    assert_string_equal(SAN("\xC0\xAF\xE0\x80\xAF"), "\\xC0\\xAF\\xE0\\x80\\xAF");
    assert_string_equal(SAN("\xF4\x90\x80\x80\xF5"), "\\xF4\\x90\\x80\\x80\\xF5");
    /* a valid character right after an invalid byte survives */
    assert_string_equal(SAN("\xE2\xC3\xA9"), "\\xE2\xC3\xA9");
}

static void test_c0_cr_del_tab_newline(void **state)
{
    (void)state;
    /* I10: CR hides the start of a command on a terminal */
    assert_string_equal(SAN("rm -rf /\rls   "), "rm -rf /^Mls   ");
    assert_string_equal(san("a\0b\x07"
                            "c\x08\x7f",
                            7, 0),
                        "a^@b^Gc^H^?");
    assert_string_equal(SAN("a\tb"), "a b");
    assert_string_equal(SAN("one\r\ntwo\n"), "one^M\xE2\x8F\x8Etwo\xE2\x8F\x8E");
    /* multi-line contexts keep \n and expand tabs to 8-column stops */
    assert_string_equal(SAN_F("ab\tc\n\td", SANITIZE_MULTILINE), "ab      c\n        d");
}

static void test_ascii_mode(void **state)
{
    (void)state;
    assert_string_equal(SAN_F("caf\xC3\xA9\n\x1b]0;x\x07", SANITIZE_ASCII), "caf<U+00E9>^J^[]0...");
}

static void test_one_megabyte_line_bounded(void **state)
{
    (void)state;
    /* I13: 1 MB without a newline into a 256-byte buffer: cut with a marker saying how much. */
    size_t len = 1u << 20;
    char *in = malloc(len);
    assert_non_null(in);
    memset(in, 'A', len);
    char out[256];
    size_t n = sanitize_text(in, len, out, sizeof(out));
    /* The marker room is sized for the whole input: "…[+1048576 bytes]" is 19 bytes. */
    size_t keep = 255 - strlen("\xE2\x80\xA6[+1048576 bytes]");
    char expect[256];
    memset(expect, 'A', keep);
    snprintf(expect + keep, sizeof(expect) - keep, "\xE2\x80\xA6[+%zu bytes]", len - keep);
    assert_string_equal(out, expect);
    assert_int_equal(n, strlen(expect));
    assert_true(n <= 255);

    /* the allocating variant is bounded the same way */
    char *d = sanitize_dup(in, len, 100, 0);
    assert_non_null(d);
    assert_true(strlen(d) <= 100);
    assert_memory_equal(d, "AAAA", 4);
    assert_non_null(strstr(d, "[+"));
    free(d);
    free(in);
}

static void test_bounds_at_token_edges(void **state)
{
    (void)state;
    char out[8];
    /* fits exactly: no marker */
    assert_int_equal(sanitize_text("1234567", 7, out, sizeof(out)), 7);
    assert_string_equal(out, "1234567");
    /* too small for any marker: cut at a token boundary, never inside `<U+…>` or UTF-8 */
    assert_int_equal(sanitize_text("ab\xE2\x80\xAE", 5, out, sizeof(out)), 2);
    assert_string_equal(out, "ab");
    char one[1];
    assert_int_equal(sanitize_text("abc", 3, one, sizeof(one)), 0);
    assert_string_equal(one, "");
    assert_int_equal(sanitize_text("abc", 3, one, 0), 0);
    char big[32];
    sanitize_text("\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5"
                  "\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5",
                  33, big, sizeof(big));
    /* 33 bytes into 31: the marker room is 14 bytes ("…[+33 bytes]"), so 5 characters stay */
    assert_string_equal(big, "\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5"
                             "\xE2\x80\xA6[+18 bytes]");
    /* NULL input is empty */
    assert_int_equal(sanitize_text(NULL, 5, big, sizeof(big)), 0);
    assert_string_equal(big, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_text_and_utf8_kept),
        cmocka_unit_test(test_osc52_clipboard),
        cmocka_unit_test(test_osc0_title),
        cmocka_unit_test(test_csi_cursor_and_erase),
        cmocka_unit_test(test_other_escapes),
        cmocka_unit_test(test_c1_raw_9b),
        cmocka_unit_test(test_c1_u009b),
        cmocka_unit_test(test_bidi_u202e),
        cmocka_unit_test(test_zero_width_u200b),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_c0_cr_del_tab_newline),
        cmocka_unit_test(test_ascii_mode),
        cmocka_unit_test(test_one_megabyte_line_bounded),
        cmocka_unit_test(test_bounds_at_token_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
