/* The sanitizer (common/sanitize.c): hostile inputs (escape sequences, control bytes, bidi
 * overrides, endless lines; numbered I06-I13 below), exact outputs; its replay mode (the cast
 * filter), whole and split across chunks. */
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

/* ---------------------------------------------------------------- replay (the cast filter) */

struct collect {
    char buf[8192];
    size_t len;
};

static void collect_write(void *ctx, const char *p, size_t n)
{
    struct collect *c = ctx;
    assert_true(c->len + n < sizeof(c->buf));
    memcpy(c->buf + c->len, p, n);
    c->len += n;
    c->buf[c->len] = '\0';
}

/* The filter over in, whole; and the same input fed in every split into two chunks and one
 * byte at a time must give the same bytes. */
static char *replay(const char *in, size_t len)
{
    static char whole[8192];
    size_t n = 0;
    char *d = sanitize_replay_dup(in, len, &n);
    assert_non_null(d);
    assert_int_equal(n, strlen(d));
    assert_true(n < sizeof(whole));
    memcpy(whole, d, n + 1);
    free(d);
    for (size_t cut = 0; cut <= len; cut++) {
        struct collect c = {.len = 0};
        struct sanitize_replay r;
        sanitize_replay_init(&r, collect_write, &c);
        sanitize_replay_feed(&r, in, cut);
        sanitize_replay_feed(&r, in + cut, len - cut);
        sanitize_replay_finish(&r);
        assert_int_equal(c.len, n);
        assert_memory_equal(c.buf, whole, n);
    }
    struct collect c = {.len = 0};
    struct sanitize_replay r;
    sanitize_replay_init(&r, collect_write, &c);
    for (size_t i = 0; i < len; i++)
        sanitize_replay_feed(&r, in + i, 1);
    sanitize_replay_finish(&r);
    assert_int_equal(c.len, n);
    assert_memory_equal(c.buf, whole, n);
    return whole;
}

#define REPLAY(lit) replay(lit, sizeof(lit) - 1)

static void test_replay_keeps_text_colours_cursor(void **state)
{
    (void)state;
    assert_string_equal(REPLAY("plain caf\xC3\xA9 \xF0\x9F\x90\xB3\r\n\ttab\bX"),
                        "plain caf\xC3\xA9 \xF0\x9F\x90\xB3\r\n\ttab\bX");
    assert_string_equal(REPLAY("\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3m\x1b[38:5:200m\x1b[m"),
                        "\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3m\x1b[38:5:200m\x1b[m");
    assert_string_equal(REPLAY("\x1b[H\x1b[2J\x1b[10;20H\x1b[3A\x1b[B\x1b[C\x1b[4D\x1b[K\x1b[1K"
                               "\x1b[5G\x1b[2X\x1b[P\x1b[@\x1b[L\x1b[M\x1b[3;20r\x1b[S\x1b[2T"),
                        "\x1b[H\x1b[2J\x1b[10;20H\x1b[3A\x1b[B\x1b[C\x1b[4D\x1b[K\x1b[1K"
                        "\x1b[5G\x1b[2X\x1b[P\x1b[@\x1b[L\x1b[M\x1b[3;20r\x1b[S\x1b[2T");
    /* screen modes that stay on the screen, save/restore cursor, line drawing */
    assert_string_equal(REPLAY("\x1b[?1049h\x1b[?25l\x1b[?7;25h\x1b[4h\x1b"
                               "7\x1b"
                               "8\x1bM"
                               "\x1b(0q\x1b(B\x1b[s\x1b[u"),
                        "\x1b[?1049h\x1b[?25l\x1b[?7;25h\x1b[4h\x1b"
                        "7\x1b"
                        "8\x1bM"
                        "\x1b(0q\x1b(B\x1b[s\x1b[u");
}

static void test_replay_drops_strings(void **state)
{
    (void)state;
    /* OSC 0/2 titles, OSC 52 clipboard, OSC 8 link, OSC 4 palette: BEL and ST terminators */
    assert_string_equal(
        REPLAY("a\x1b]0;pwned\x07"
               "b\x1b]2;pwned\x1b\\c\x1b]52;c;cm0gLXJmIH4K\x07"
               "d\x1b]8;;http://evil/\x07link\x1b]8;;\x07\x1b]4;1;rgb:0/0/0\x1b\\e"),
        "abcdlinke");
    /* DCS (tmux passthrough), APC, PM, SOS; CAN and SUB end a string too */
    assert_string_equal(REPLAY("1\x1bPtmux;\x1b\x1b]52;c;x\x07\x1b\\2\x1b_apc\x1b\\3\x1b^pm\x07"
                               "4\x1bXsos\x18"
                               "5\x1bPq#0\x1a"
                               "6"),
                        "123456");
    /* an ESC that is not ST ends the string and starts its own sequence */
    assert_string_equal(REPLAY("\x1b]0;t\x1b[31mz"), "\x1b[31mz");
}

static void test_replay_drops_modes_and_reports(void **state)
{
    (void)state;
    /* window manipulation and title stack (CSI t), reports (n, c, x), printing (i) */
    assert_string_equal(REPLAY("a\x1b[22;0t\x1b[23;0t\x1b[8;100;300t\x1b[21t\x1b[6n\x1b[c\x1b[>c"
                               "\x1b[x\x1b[5i"
                               "b"),
                        "ab");
    /* mouse tracking, focus, bracketed paste, cursor keys, 132 columns, sync output; one
     * unknown mode spoils the whole sequence */
    assert_string_equal(REPLAY("\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1006h\x1b[?1015h\x1b[?9h"
                               "\x1b[?1004h\x1b[?2004h\x1b[?1h\x1b[?3h\x1b[?2026h\x1b[?25;1000h"
                               "\x1b[?h\x1b[?1049;h\x1b[?1049:1h"
                               "x"),
                        "x");
    /* keyboard modes (kitty, xterm modifyOtherKeys), ANSI modes other than insert */
    assert_string_equal(REPLAY("\x1b[>1u\x1b[=1;1u\x1b[<u\x1b[?u\x1b[>4;2m\x1b[20h\x1b[2h\x1b[12l"
                               "\x1b[1u\x1b[1s"
                               "y"),
                        "y");
    /* intermediates: cursor style, soft reset, mode request */
    assert_string_equal(REPLAY("\x1b[2 q\x1b[!p\x1b[?2004$p\x1b[1\"q"
                               "z"),
                        "z");
    /* xterm's mouse highlight tracking is T with five parameters */
    assert_string_equal(REPLAY("\x1b[1;2;3;4;5T\x1b[3T"), "\x1b[3T");
    /* escapes: full reset, keypad modes, charsets other than G0 ASCII/line drawing, shifts,
     * DECID, UTF-8 switch, DECALN; C0 controls besides BS HT LF CR, DEL */
    assert_string_equal(
        REPLAY("\x1b"
               "c\x1b=\x1b>\x1b)0\x1b(A\x1bN\x1bn\x1bZ\x1b%G\x1b#8\x0e\x0f\x07\x0b\x0c"
               "\x7f\x01"
               "w"),
        "w");
    /* a CSI longer than SANITIZE_SEQ_MAX is dropped, not cut */
    char longsgr[200] = "\x1b[";
    for (int i = 0; i < 40; i++)
        strcat(longsgr, "1;");
    strcat(longsgr, "1mv");
    assert_string_equal(replay(longsgr, strlen(longsgr)), "v");
    /* a sequence cut short by another byte, or by the end, is dropped */
    assert_string_equal(REPLAY("\x1b[31\nq\x1b[1;"), "\nq");
    assert_string_equal(REPLAY("end\x1b"), "end");
}

static void test_replay_c1(void **state)
{
    (void)state;
    /* raw 8-bit C1: OSC, DCS, APC, PM, SOS with their bodies to ST (0x9C) or BEL; CSI is
     * parsed and kept in its 7-bit form when allowed */
    assert_string_equal(REPLAY("a\x9d"
                               "0;title\x9c"
                               "b\x9d"
                               "52;c;eA==\x07"
                               "c\x90q\x9c"
                               "d\x9f"
                               "apc\x9c"
                               "e\x9emsg\x9c"
                               "f\x98sos\x9c"
                               "g"),
                        "abcdefg");
    assert_string_equal(REPLAY("\x9b"
                               "31mred\x9b"
                               "22;0t\x9b?1000h"),
                        "\x1b[31mred");
    /* the same as UTF-8 code points (U+009D … U+009C) */
    assert_string_equal(REPLAY("a\xC2\x9D"
                               "0;title\xC2\x9C"
                               "b\xC2\x9B"
                               "1mB\xC2\x90q\xC2\x9C"
                               "c"),
                        "ab\x1b[1mBc");
    /* other C1 controls are dropped; 0x9C inside a UTF-8 character of a title ends nothing */
    assert_string_equal(REPLAY("x\xC2\x85\x84\x8ey\x1b]0;\xC3\x9C"
                               "ber\x07z"),
                        "xyz");
    /* a 0x9B that belongs to a character is that character */
    assert_string_equal(REPLAY("\xC3\x9B"), "\xC3\x9B");
}

static void test_replay_invalid_utf8(void **state)
{
    (void)state;
    /* each bad byte is U+FFFD, but a stray 0x80-0x9F is a C1 control (dropped); a character
     * split across chunks survives (replay checks every split) */
    assert_string_equal(REPLAY("\xFF\xC3(\xED\xA0\x80\xE6\x97\xA5\xE2\x82\xF5"),
                        "\xEF\xBF\xBD\xEF\xBF\xBD(\xEF\xBF\xBD\xEF\xBF\xBD"
                        "\xE6\x97\xA5\xEF\xBF\xBD\xEF\xBF\xBD");
}

static void test_replay_unterminated_string_bounded(void **state)
{
    (void)state;
    /* an OSC that never ends hides SANITIZE_STRING_MAX bytes of body, no more */
    size_t len = 3 + SANITIZE_STRING_MAX + 5;
    char *in = malloc(len);
    assert_non_null(in);
    memcpy(in, "\x1b]0", 3);
    memset(in + 3, 'x', SANITIZE_STRING_MAX - 1);
    memcpy(in + 3 + SANITIZE_STRING_MAX - 1, "yshown", 6);
    char *out = sanitize_replay_dup(in, len, NULL);
    assert_string_equal(out, "shown");
    free(out);
    /* ended by the end of the stream: the stream then starts afresh */
    struct collect c = {.len = 0};
    struct sanitize_replay r;
    sanitize_replay_init(&r, collect_write, &c);
    sanitize_replay_feed(&r, "\x1b]2;never ends", 14);
    sanitize_replay_finish(&r);
    sanitize_replay_feed(&r, "next\x1b[1m", 8);
    sanitize_replay_finish(&r);
    assert_string_equal(c.buf, "next\x1b[1m");
    free(in);
}

static void test_replay_output_is_clean(void **state)
{
    (void)state;
    /* Random bytes from the alphabet of sequences, whole and in random chunks: the output is
     * the same, valid UTF-8, and the filter keeps it as it is (all it writes is allowed). */
    static const char alpha[] = "\x1b[]PX^_\\\x07\x18\x1a;0123456789?m(tqh$ \x7f\n\x80\x9b\x9c\x9d"
                                "\xc2\xc3\xe2\x80\xae\xf0\x9f";
    srand(7);
    for (int it = 0; it < 20000; it++) {
        char in[64];
        size_t len = (size_t)(rand() % (int)sizeof(in));
        for (size_t i = 0; i < len; i++)
            in[i] = alpha[rand() % (int)(sizeof(alpha) - 1)];
        size_t n = 0, n2 = 0;
        char *once = sanitize_replay_dup(in, len, &n);
        /* the same bytes in random chunks */
        struct collect c = {.len = 0};
        struct sanitize_replay r;
        sanitize_replay_init(&r, collect_write, &c);
        for (size_t i = 0, step; i < len; i += step) {
            step = 1 + (size_t)(rand() % 8);
            sanitize_replay_feed(&r, in + i, step < len - i ? step : len - i);
        }
        sanitize_replay_finish(&r);
        assert_int_equal(c.len, n);
        assert_memory_equal(c.buf, once, n);
        char *twice = sanitize_replay_dup(once, n, &n2);
        assert_int_equal(n, n2);
        assert_memory_equal(once, twice, n);
        char check[1024];
        sanitize_text_flags(once, n, check, sizeof(check), SANITIZE_MULTILINE);
        assert_null(strstr(check, "\\x")); /* no invalid byte */
        free(once);
        free(twice);
    }
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
        cmocka_unit_test(test_replay_keeps_text_colours_cursor),
        cmocka_unit_test(test_replay_drops_strings),
        cmocka_unit_test(test_replay_drops_modes_and_reports),
        cmocka_unit_test(test_replay_c1),
        cmocka_unit_test(test_replay_invalid_utf8),
        cmocka_unit_test(test_replay_unterminated_string_bounded),
        cmocka_unit_test(test_replay_output_is_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
