/* Unit tests of the executor's pure parts: marker parser, output capture and truncation,
 * number format, command-line encoding, special keys, environment filter,
 * colour-code stripping, PATH lookup, git repository lookup, page text from HTML, the
 * request log's burst a second. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ansi.h"
#include "clip.h"
#include "cmdline.h"
#include "common/buf.h"
#include "common/evloop.h"
#include "common/utf8.h"
#include "env.h"
#include "gitinfo.h"
#include "htmltext.h"
#include "jalloc.h"
#include "marker.h"
#include "reqlog.h"
#include "text.h"
#include "userdb.h"
#include "which.h"

/* ---- marker parser ---------------------------------------------------------------------- */

#define BEGIN "__PDK0123456789abcdef{"
#define END "}0123456789abcdefKDP__"

struct collected {
    struct buf out;
    int markers;
    struct marker_info last;
    size_t out_at_marker[8]; /* output length when each marker came: checks ordering */
};

static void on_output(void *ctx, const char *d, size_t n)
{
    struct collected *c = ctx;
    buf_append(&c->out, d, n);
}

static void on_found(void *ctx, const struct marker_info *m)
{
    struct collected *c = ctx;
    if (c->markers < 8)
        c->out_at_marker[c->markers] = c->out.len;
    c->markers++;
    c->last = *m;
}

static void feed_split(const char *stream, size_t n, size_t split, struct collected *c)
{
    struct marker_parser p;
    struct marker_sink sink = {on_output, on_found, c};
    assert_int_equal(marker_parser_init(&p, BEGIN, END), 0);
    assert_int_equal(marker_feed(&p, stream, split, &sink), 0);
    assert_int_equal(marker_feed(&p, stream + split, n - split, &sink), 0);
    marker_flush(&p, &sink);
    marker_parser_free(&p);
}

static void test_marker_whole(void **state)
{
    (void)state;
    const char *s = "hello\n" BEGIN "0;;1000;1;4321;box\037/usr/bin:/bin\037/work/x" END "after";
    struct collected c = {0};
    feed_split(s, strlen(s), strlen(s), &c);
    assert_int_equal(c.markers, 1);
    assert_string_equal(c.out.data, "hello\nafter");
    assert_int_equal(c.out_at_marker[0], 6);
    assert_int_equal(c.last.exit_code, 0);
    assert_int_equal(c.last.pid, -1);
    assert_int_equal(c.last.uid, 1000);
    assert_true(c.last.stdin_tty);
    assert_int_equal(c.last.shell_pid, 4321);
    assert_string_equal(c.last.hostname, "box");
    assert_string_equal(c.last.path, "/usr/bin:/bin");
    assert_string_equal(c.last.cwd, "/work/x");
    buf_free(&c.out);
}

static void test_marker_split_everywhere(void **state)
{
    (void)state;
    const char *s =
        "out1" BEGIN "127;4242;0;1;7;h\037/p\037/a;b}c" END "out2" BEGIN "3;;0;1;7;h\037\037/" END;
    size_t n = strlen(s);
    for (size_t split = 0; split <= n; split++) {
        struct collected c = {0};
        feed_split(s, n, split, &c);
        assert_int_equal(c.markers, 2);
        assert_string_equal(c.out.data, "out1out2");
        assert_int_equal(c.out_at_marker[0], 4);
        assert_int_equal(c.out_at_marker[1], 8);
        assert_int_equal(c.last.exit_code, 3);
        buf_free(&c.out);
    }
}

static void test_marker_byte_by_byte(void **state)
{
    (void)state;
    const char *s = "a" BEGIN "1;99;0;1;7;host;x\037/bin;y\037/with;semi;colons" END "b";
    struct marker_parser p;
    struct collected c = {0};
    struct marker_sink sink = {on_output, on_found, &c};
    assert_int_equal(marker_parser_init(&p, BEGIN, END), 0);
    for (size_t i = 0; s[i]; i++)
        assert_int_equal(marker_feed(&p, s + i, 1, &sink), 0);
    marker_flush(&p, &sink);
    assert_int_equal(c.markers, 1);
    assert_string_equal(c.out.data, "ab");
    assert_int_equal(c.last.pid, 99);
    assert_string_equal(c.last.hostname, "host;x"); /* the agent may set any HOSTNAME */
    assert_string_equal(c.last.path, "/bin;y");
    assert_string_equal(c.last.cwd, "/with;semi;colons");
    marker_parser_free(&p);
    buf_free(&c.out);
}

static void test_marker_spoof_without_nonce(void **state)
{
    (void)state;
    /* Marker-shaped text with another nonce, or none, is plain output. */
    const char *s =
        "__PDKffffffffffffffff{0;;0;h\037\037/}ffffffffffffffffKDP__ __PDK{0;;0;h\037\037/}KDP__";
    struct collected c = {0};
    feed_split(s, strlen(s), 10, &c);
    assert_int_equal(c.markers, 0);
    assert_string_equal(c.out.data, s);
    buf_free(&c.out);
}

static void test_marker_partial_prefix_flushed(void **state)
{
    (void)state;
    /* A prefix of BEGIN at the end is held back, then output at end of stream. */
    const char *s = "text __PDK0123";
    struct marker_parser p;
    struct collected c = {0};
    struct marker_sink sink = {on_output, on_found, &c};
    assert_int_equal(marker_parser_init(&p, BEGIN, END), 0);
    assert_int_equal(marker_feed(&p, s, strlen(s), &sink), 0);
    assert_string_equal(c.out.data, "text ");
    marker_flush(&p, &sink);
    assert_string_equal(c.out.data, s);
    assert_int_equal(c.markers, 0);
    marker_parser_free(&p);
    buf_free(&c.out);
}

static void test_marker_malformed_and_overlong(void **state)
{
    (void)state;
    const char *bad = BEGIN "not a body" END "x";
    struct collected c = {0};
    feed_split(bad, strlen(bad), 7, &c);
    assert_int_equal(c.markers, 0);
    assert_string_equal(c.out.data, bad);
    buf_free(&c.out);

    /* BEGIN followed by more than a body can hold: output, and parsing recovers. */
    struct buf s = BUF_INIT;
    buf_append_str(&s, BEGIN);
    for (int i = 0; i < MARKER_BODY_MAX + 100; i++)
        buf_append(&s, "y", 1);
    buf_append_str(&s, BEGIN "5;;0;1;7;h\037\037/" END);
    struct collected d = {0};
    feed_split(s.data, s.len, s.len / 2, &d);
    assert_int_equal(d.markers, 1);
    assert_int_equal(d.last.exit_code, 5);
    assert_int_equal(d.out.len, strlen(BEGIN) + MARKER_BODY_MAX + 100);
    buf_free(&d.out);
    buf_free(&s);
}

static void test_marker_parse_body(void **state)
{
    (void)state;
    struct marker_info m;
#define BODY(s) s, sizeof s - 1
    assert_int_equal(marker_parse_body(BODY("0;;0;1;7;h\037p\037/"), &m), 0);
    assert_int_equal(m.pid, -1);
    assert_int_equal(marker_parse_body(BODY("x;;0;1;7;h\037p\037/"), &m), -1);
    assert_int_equal(marker_parse_body(BODY("0;;0;1;7;h\037p"), &m), -1); /* no cwd field */
    assert_int_equal(marker_parse_body(BODY("0;;0;h\037p\037/"), &m),
                     -1); /* no tty and shell pid */
    assert_int_equal(marker_parse_body(BODY("-1;12;5;0;99;h\037\037"), &m), 0);
    assert_false(m.stdin_tty);
    assert_int_equal(m.shell_pid, 99);
    assert_int_equal(m.exit_code, -1);
    assert_int_equal(m.pid, 12);
    assert_int_equal(m.uid, 5);
    assert_string_equal(m.path, "");
    assert_string_equal(m.cwd, "");
    /* Overlong texts are cut, not refused: a marker is never lost to a long PATH. */
    struct buf b = BUF_INIT;
    buf_append_str(&b, "0;;0;1;7;h\037");
    for (int i = 0; i < MARKER_PATH_MAX + 10; i++)
        buf_append(&b, "p", 1);
    buf_append_str(&b, "\037/w");
    assert_int_equal(marker_parse_body(b.data, b.len, &m), 0);
    assert_int_equal(strlen(m.path), MARKER_PATH_MAX);
    assert_string_equal(m.cwd, "/w");
    /* The copy the shell keeps: every field, the longest PATH whole, over an older one. */
    static struct marker_info kept;
    memset(&kept, 'z', sizeof kept);
    marker_info_copy(&kept, &m);
    assert_int_equal(kept.exit_code, 0);
    assert_int_equal(kept.pid, -1);
    assert_int_equal(kept.uid, 0);
    assert_true(kept.stdin_tty);
    assert_int_equal(kept.shell_pid, 7);
    assert_string_equal(kept.hostname, "h");
    assert_int_equal(strlen(kept.path), MARKER_PATH_MAX);
    assert_string_equal(kept.path, m.path);
    assert_string_equal(kept.cwd, "/w");
    buf_free(&b);
#undef BODY
}

/* ---- capture, truncation ---------------------------------------------------------------- */

static char *render(struct capture *c)
{
    struct buf out = BUF_INIT;
    assert_int_equal(capture_render(c, &out), 0);
    return buf_steal(&out);
}

static void test_capture_rstrip(void **state)
{
    (void)state;
    struct capture c;
    capture_init(&c, 0, 0);
    capture_append(&c, "  hello", 7);
    capture_append(&c, "  \n", 3);
    capture_append(&c, "\n\t ", 3);
    char *s = render(&c);
    assert_string_equal(s, "  hello"); /* right-stripped only */
    free(s);
    capture_append(&c, "world \n", 7);
    s = render(&c);
    assert_string_equal(s, "  hello  \n\n\t world");
    free(s);
    capture_reset(&c);
    assert_true(capture_is_empty(&c));
    s = render(&c);
    assert_string_equal(s, "");
    free(s);
}

/* Byte i of the test stream: printable, position-dependent. */
static char pattern(size_t i)
{
    return (char)('a' + (i * 7 + i / 26) % 26);
}

static void check_truncated(const char *s, size_t total)
{
    size_t marker = strlen(TEXT_TRUNCATION_MARKER);
    assert_int_equal(strlen(s), 30000 + marker);
    for (size_t i = 0; i < 15000; i++)
        assert_int_equal(s[i], pattern(i));
    assert_memory_equal(s + 15000, TEXT_TRUNCATION_MARKER, marker);
    for (size_t i = 0; i < 15000; i++)
        assert_int_equal(s[15000 + marker + i], pattern(total - 15000 + i));
}

static void test_capture_truncates_middle(void **state)
{
    (void)state;
    /* Just over the cap (contiguous path) and far over it (head/ring path). */
    size_t sizes[] = {30000, 30001, 100000, 1000000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        struct capture c;
        capture_init(&c, 0, 0);
        char chunk[4093]; /* odd size: chunks straddle head and ring edges */
        for (size_t i = 0; i < sizes[k];) {
            size_t n = sizes[k] - i < sizeof chunk ? sizes[k] - i : sizeof chunk;
            for (size_t j = 0; j < n; j++)
                chunk[j] = pattern(i + j);
            capture_append(&c, chunk, n);
            i += n;
        }
        char *s = render(&c);
        if (sizes[k] <= 30000) {
            assert_int_equal(strlen(s), sizes[k]);
        } else {
            check_truncated(s, sizes[k]);
        }
        free(s);
        capture_reset(&c);
    }
}

static void test_capture_whitespace_flood(void **state)
{
    (void)state;
    struct capture c;
    capture_init(&c, 0, 0);
    char spaces[10000];
    memset(spaces, ' ', sizeof spaces);
    capture_append(&c, "abc", 3);
    for (int i = 0; i < 50; i++) /* 500 KB of trailing whitespace: stripped */
        capture_append(&c, spaces, sizeof spaces);
    char *s = render(&c);
    assert_string_equal(s, "abc");
    free(s);
    capture_append(&c, "z", 1); /* now it is inside the text: truncated, tail intact */
    s = render(&c);
    size_t marker = strlen(TEXT_TRUNCATION_MARKER);
    assert_int_equal(strlen(s), 30000 + marker);
    assert_memory_equal(s, "abc   ", 6);
    assert_int_equal(s[strlen(s) - 1], 'z');
    assert_int_equal(s[strlen(s) - 2], ' ');
    free(s);
    capture_reset(&c);
}

static void test_capture_multibyte_count(void **state)
{
    (void)state;
    /* 40,000 two-byte chars: the cap counts chars, not bytes. */
    struct capture c;
    capture_init(&c, 0, 0);
    for (int i = 0; i < 40000; i++)
        capture_append(&c, "\xc3\xa9", 2);
    char *s = render(&c);
    assert_int_equal(utf8_count(s, strlen(s)), 30000 + strlen(TEXT_TRUNCATION_MARKER));
    assert_int_equal(strlen(s), 60000 + strlen(TEXT_TRUNCATION_MARKER));
    free(s);
    capture_reset(&c);
}

/* ---- jansson's free lists ------------------------------------------------------------- */

static void test_jalloc_lists(void **state)
{
    (void)state;
    size_t base = jalloc_kept();
    /* A freed block comes back for the next request of its size class, and only of it. */
    char *a = jalloc_malloc(40);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % 16, 0);
    memset(a, 'a', 40);
    jalloc_free(a);
    assert_int_equal(jalloc_kept(), base + 1);
    char *b = jalloc_malloc(20); /* another class: a new block */
    assert_ptr_not_equal(b, a);
    char *c = jalloc_malloc(48); /* 40 and 48 share a class */
    assert_ptr_equal(c, a);
    assert_int_equal(jalloc_kept(), base);
    jalloc_free(b);
    jalloc_free(c);
    /* Large blocks are not kept; zero bytes is a block too. */
    char *big = jalloc_malloc(JALLOC_MAX + 1);
    assert_non_null(big);
    memset(big, 'b', JALLOC_MAX + 1);
    size_t before = jalloc_kept();
    jalloc_free(big);
    assert_int_equal(jalloc_kept(), before);
    void *z = jalloc_malloc(0);
    assert_non_null(z);
    jalloc_free(z);
    jalloc_free(NULL);
    /* At most JALLOC_KEEP of a class stay; the rest go back to malloc. */
    void *many[JALLOC_KEEP + 10];
    for (size_t i = 0; i < JALLOC_KEEP + 10; i++)
        assert_non_null(many[i] = jalloc_malloc(JALLOC_MAX));
    before = jalloc_kept();
    for (size_t i = 0; i < JALLOC_KEEP + 10; i++)
        jalloc_free(many[i]);
    assert_int_equal(jalloc_kept(), before + JALLOC_KEEP);
}

/* jalloc_dumps is json_dumps' text, in memory free() takes. */
static void test_jalloc_dumps(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:s, s:[i, f, b, n], s:{s:s}}", "a", "x\n\"\u00e9\x01", "b", 1, 2.5, 1,
                          "c", "d", "</e>");
    char *want = json_dumps(v, JSON_COMPACT);
    char *got = jalloc_dumps(v, JSON_COMPACT);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
    free(want);
    json_decref(v);
    json_t *s = json_string("bare");
    assert_null(jalloc_dumps(s, JSON_COMPACT)); /* as json_dumps without JSON_ENCODE_ANY */
    got = jalloc_dumps(s, JSON_ENCODE_ANY);
    assert_string_equal(got, "\"bare\"");
    free(got);
    json_decref(s);
}

/* ---- the 10,000-line window ------------------------------------------------------------- */

static char *render_window(const char *text, size_t lines_max, size_t recent_max, size_t step,
                           size_t *shown)
{
    struct capture c;
    capture_init(&c, 0, 0);
    capture_set_window(&c, lines_max, recent_max);
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i += step)
        assert_int_equal(capture_append(&c, text + i, n - i < step ? n - i : step), 0);
    *shown = capture_shown_lines(&c);
    char *s = render(&c);
    capture_reset(&c);
    return s;
}

static void test_capture_line_window(void **state)
{
    (void)state;
    size_t shown;
    /* Split anywhere, the result is the same: the last 5 of 10 lines. */
    for (size_t step = 1; step <= 21; step += 4) {
        char *s = render_window("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", 5, 0, step, &shown);
        assert_string_equal(s, "6\n7\n8\n9\n10");
        assert_int_equal(shown, 5);
        free(s);
    }
    /* A last line without a newline counts as a line. */
    char *s = render_window("1\n2\n3\n4\n5\n6", 5, 0, 100, &shown);
    assert_string_equal(s, "2\n3\n4\n5\n6");
    assert_int_equal(shown, 5);
    free(s);
    /* Exactly the window: nothing dropped, no prefix. */
    s = render_window("1\n2\n3\n4\n5\n", 5, 0, 100, &shown);
    assert_string_equal(s, "1\n2\n3\n4\n5");
    assert_int_equal(shown, 0);
    free(s);
    /* Blank lines count (a tmux history holds them too). */
    s = render_window("a\n\n\n\n\n\n\n", 5, 0, 100, &shown);
    assert_string_equal(s, "");
    assert_int_equal(shown, 5);
    free(s);
}

/* A cleared capture starts the next command afresh on the rings it kept: the window counts
 * only the new lines, a ring that wrapped before starts over, and a big ring is given back. */
static void test_capture_clear_reuses(void **state)
{
    (void)state;
    struct capture c;
    capture_init(&c, 0, 0);
    capture_set_window(&c, 3, 0);
    for (int i = 0; i < 7; i++) /* the line ring is full-sized and has wrapped */
        assert_int_equal(capture_append(&c, "old\n", 4), 0);
    assert_int_equal(capture_shown_lines(&c), 3);
    const char *recent = c.recent;
    const uint64_t *nl = c.nl;
    capture_clear(&c);
    assert_true(capture_is_empty(&c));
    assert_ptr_equal(c.recent, recent);
    assert_ptr_equal(c.nl, nl);
    assert_int_equal(capture_shown_lines(&c), 0);
    char *s = render(&c);
    assert_string_equal(s, "");
    free(s);
    assert_int_equal(capture_append(&c, "a\nb\n", 4), 0);
    s = render(&c);
    assert_string_equal(s, "a\nb");
    free(s);
    assert_int_equal(capture_shown_lines(&c), 0);
    assert_int_equal(capture_append(&c, "c\nd\ne\n", 6), 0);
    s = render(&c);
    assert_string_equal(s, "c\nd\ne");
    free(s);
    assert_int_equal(capture_shown_lines(&c), 3);
    /* Output beyond CAPTURE_KEEP_BYTES: its ring is not kept. */
    capture_clear(&c);
    char big[CAPTURE_KEEP_BYTES + 1];
    memset(big, 'x', sizeof big);
    assert_int_equal(capture_append(&c, big, sizeof big), 0);
    assert_true(c.recent_cap > CAPTURE_KEEP_BYTES);
    capture_clear(&c);
    assert_null(c.recent);
    assert_int_equal(c.recent_cap, 0);
    assert_int_equal(capture_append(&c, "z\n", 2), 0);
    s = render(&c);
    assert_string_equal(s, "z");
    free(s);
    capture_reset(&c);
    assert_null(c.recent);
    assert_null(c.nl);
}

static void test_capture_line_window_bounded(void **state)
{
    (void)state;
    size_t shown;
    /* Ten 11-byte lines, 16 bytes kept: the window starts at the first line that begins
     * inside what is kept, and says how many lines that is. */
    struct buf t = BUF_INIT;
    for (int i = 0; i < 10; i++)
        buf_append_str(&t, i == 9 ? "bbbbbbbbbb\n" : "aaaaaaaaaa\n");
    char *s = render_window(t.data, 5, 16, 7, &shown);
    assert_string_equal(s, "bbbbbbbbbb");
    assert_int_equal(shown, 1);
    free(s);
    buf_free(&t);
    /* One line longer than what is kept: its tail. */
    s = render_window("1\n2\n3\nxxxxxxxxxxxxxxxxxxxxxxxxxyz", 2, 8, 3, &shown);
    assert_string_equal(s, "xxxxxxyz");
    assert_int_equal(shown, 1);
    free(s);
}

static void test_capture_line_window_default(void **state)
{
    (void)state;
    /* 12,000 numbered lines, as `seq 1 12000` prints them: lines 1001-12000 remain, and
     * that text is over 30,000 chars, so it is middle-truncated too. */
    struct capture c;
    struct buf t = BUF_INIT;
    capture_init(&c, 0, 0);
    for (int i = 1; i <= 12000; i++)
        buf_printf(&t, "%d\n", i);
    capture_append(&c, t.data, t.len);
    assert_int_equal(capture_shown_lines(&c), 11000);
    char *s = render(&c);
    assert_memory_equal(s, "1001\n1002\n", 10);
    assert_string_equal(s + strlen(s) - 6, "\n12000");
    assert_non_null(strstr(s, TEXT_TRUNCATION_MARKER));
    assert_int_equal(utf8_count(s, strlen(s)), 30000 + strlen(TEXT_TRUNCATION_MARKER));
    free(s);
    capture_reset(&c);
    assert_int_equal(capture_shown_lines(&c), 0);
    buf_free(&t);
}

static void test_truncate_exact_limit(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    for (int i = 0; i < 30000; i++)
        buf_append(&b, "x", 1);
    assert_int_equal(text_truncate_middle(&b), 0);
    assert_int_equal(b.len, 30000);
    buf_append(&b, "y", 1);
    assert_int_equal(text_truncate_middle(&b), 0);
    assert_int_equal(b.len, 30000 + strlen(TEXT_TRUNCATION_MARKER));
    assert_int_equal(b.data[b.len - 1], 'y');
    buf_free(&b);
}

/* ---- numbers ---------------------------------------------------------------------------- */

static void test_format_numbers(void **state)
{
    (void)state;
    char s[64];
    struct {
        double v;
        const char *want;
    } floats[] = {{1, "1.0"},
                  {2.5, "2.5"},
                  {120, "120.0"},
                  {0.1, "0.1"},
                  {1e16, "1e+16"},
                  {1e-5, "1e-05"},
                  {123456789, "123456789.0"},
                  {0.25, "0.25"}};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        text_format_float(s, sizeof s, floats[i].v);
        assert_string_equal(s, floats[i].want);
    }
    text_format_number(s, sizeof s, 10);
    assert_string_equal(s, "10");
    text_format_number(s, sizeof s, 0.5);
    assert_string_equal(s, "0.5");
}

/* ---- command lines and keys ------------------------------------------------------------- */

static void test_cmdline_direct(void **state)
{
    (void)state;
    assert_true(cmdline_is_direct("echo hi", 7, CMDLINE_DIRECT_MAX));
    assert_false(cmdline_is_direct("echo a\necho b", 13, CMDLINE_DIRECT_MAX));
    /* a trailing backslash would wait for another line */
    assert_false(cmdline_is_direct("echo \\", 6, CMDLINE_DIRECT_MAX));
    assert_false(cmdline_is_direct("a\tb\x01", 4, CMDLINE_DIRECT_MAX));
    assert_true(cmdline_is_direct("a\tb", 3, CMDLINE_DIRECT_MAX));
    assert_false(cmdline_is_direct("abcdef", 6, 5));
    assert_false(cmdline_is_direct("", 0, CMDLINE_DIRECT_MAX));
}

static void test_special_keys(void **state)
{
    (void)state;
    assert_int_equal(cmdline_special_key("C-c", 3), 3);
    assert_int_equal(cmdline_special_key(" C-d \n", 6), 4);
    assert_int_equal(cmdline_special_key("C-Z", 3), 26);
    assert_int_equal(cmdline_special_key("C-\\", 3), 0x1c);
    assert_int_equal(cmdline_special_key("C-cc", 4), -1);
    assert_int_equal(cmdline_special_key("c-c", 3), -1);
    assert_int_equal(cmdline_special_key("ls", 2), -1);
    assert_int_equal(cmdline_special_key_name("C-c", 3), 'C');
}

/* ---- environment ------------------------------------------------------------------------ */

static void test_env_filter(void **state)
{
    (void)state;
    char *inherited[] = {"OPENAI_API_KEY=sk",
                         "GITHUB_TOKEN=t",
                         "AWS_SECRET_ACCESS_KEY=s",
                         "DB_PASSWORD=p",
                         "GIT_AUTHOR_NAME=me",
                         "NPM_AUTH=x",
                         "FOO=bar",
                         "PROMPT_COMMAND=x",
                         "HOME=/elsewhere",
                         NULL};
    struct env_params p = {.home = "/home/a", .user = "a", .shell = "/bin/bash", .hostname = "h"};
    char **env = env_build(inherited, &p);
    assert_non_null(env);
    assert_null(env_get(env, "OPENAI_API_KEY"));
    assert_null(env_get(env, "GITHUB_TOKEN"));
    assert_null(env_get(env, "AWS_SECRET_ACCESS_KEY"));
    assert_null(env_get(env, "DB_PASSWORD"));
    assert_null(env_get(env, "PROMPT_COMMAND"));
    assert_null(env_get(env, "NPM_AUTH"));
    assert_string_equal(env_get(env, "GIT_AUTHOR_NAME"), "me");
    assert_string_equal(env_get(env, "FOO"), "bar");
    assert_string_equal(env_get(env, "HOME"), "/home/a");
    assert_string_equal(env_get(env, "TERM"), "dumb");
    assert_string_equal(env_get(env, "PAGER"), "cat");
    assert_string_equal(env_get(env, "GIT_PAGER"), "cat");
    assert_string_equal(env_get(env, "LANG"), "C.UTF-8");
    assert_string_equal(env_get(env, "PATH"), ENV_DEFAULT_PATH);
    env_free(env);
}

/* A create's env_allow (PADDOCK_ENV_ALLOW) lets exactly the names it lists through. */
static void test_env_allow(void **state)
{
    (void)state;
    char *inherited[] = {"GITHUB_TOKEN=t", "GITHUB_TOKEN_2=u", "OPENAI_API_KEY=sk",
                         "PADDOCK_ENV_ALLOW=GITHUB_TOKEN,NPM_AUTH", NULL};
    struct env_params p = {.home = "/home/a",
                           .user = "a",
                           .shell = "/bin/bash",
                           .hostname = "h",
                           .allow = "GITHUB_TOKEN,NPM_AUTH"};
    char **env = env_build(inherited, &p);
    assert_non_null(env);
    assert_string_equal(env_get(env, "GITHUB_TOKEN"), "t");
    assert_null(env_get(env, "GITHUB_TOKEN_2"));
    assert_null(env_get(env, "OPENAI_API_KEY"));
    assert_null(env_get(env, "PADDOCK_ENV_ALLOW"));
    env_free(env);
}

/* ---- colour codes (run_ipython output) --------------------------------------------------- */

static void ansi_collect(void *ctx, const char *d, size_t n)
{
    buf_append(ctx, d, n);
}

/* Strips s fed in pieces of `step` bytes (0: all at once). */
static char *ansi_strip(const char *s, size_t step)
{
    struct ansi_filter f;
    struct buf out = BUF_INIT;
    size_t n = strlen(s);
    ansi_filter_init(&f);
    for (size_t i = 0; i < n;) {
        size_t k = step && n - i > step ? step : n - i;
        ansi_filter_feed(&f, s + i, k, ansi_collect, &out);
        i += k;
    }
    ansi_filter_flush(&f, ansi_collect, &out);
    buf_append(&out, "", 0);
    return out.data ? buf_steal(&out) : strdup("");
}

static void test_ansi_strip(void **state)
{
    (void)state;
    /* OpenHands' pattern: \x1B\[\d+(;\d+){0,2}m, nothing else. */
    static const char *const cases[][2] = {
        {"plain", "plain"},
        {"\033[33mLorem ipsum\033[0m", "Lorem ipsum"},
        {"Lorem \033[38;25mIpsum\033[0m sit\namet.", "Lorem Ipsum sit\namet."},
        {"\033[38;5;32mLorem\033[0m", "Lorem"},
        {"\033[1m\033[46m\033[31mLorem dolor\033[0m", "Lorem dolor"},
        {"\033[0m", ""},
        {"a\033[1;2;3;4mb", "a\033[1;2;3;4mb"}, /* four numbers: not a colour code */
        {"a\033[mb", "a\033[mb"},               /* no number */
        {"a\033[2Jb", "a\033[2Jb"},             /* not SGR */
        {"a\033[1;mb", "a\033[1;mb"},
        {"\033\033[1mx", "\033x"},
        {"end\033[", "end\033["},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (size_t step = 0; step < 4; step++) {
            char *got = ansi_strip(cases[i][0], step);
            assert_string_equal(got, cases[i][1]);
            free(got);
        }
    }
}

/* ---- PATH lookup ------------------------------------------------------------------------ */

static void test_which_find(void **state)
{
    (void)state;
    char out[256];
    char *env[] = {"PATH=/nonexistent::/bin:/usr/bin", NULL};
    assert_true(which_find_env(env, "sh", out, sizeof out));
    assert_string_equal(out, "/bin/sh");
    assert_false(which_find_env(env, "no-such-program-paddock", out, sizeof out));
    assert_string_equal(out, "");
    char *dirs_only[] = {"PATH=/", NULL};
    assert_false(which_find_env(dirs_only, "tmp", out, sizeof out)); /* a directory */
    /* The executor's own lookups skip empty and relative entries; the shell's take them
     * from its cwd. */
    assert_false(which_find(":bin", NULL, "sh", out, sizeof out));
    assert_true(which_find(":bin", "/", "sh", out, sizeof out));
    assert_string_equal(out, "//bin/sh");
    assert_true(which_find("", "/bin", "sh", out, sizeof out));
    assert_string_equal(out, "/bin/sh");
    /* No PATH at all: the default one. */
    char *none[] = {NULL};
    assert_true(which_find_env(none, "sh", out, sizeof out));
}

/* ---- git repository lookup (gitinfo plugin) --------------------------------------------- */

static void put(const char *root, const char *rel, const char *text)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_gitinfo_lookup(void **state)
{
    (void)state;
    static const char sha[] = "00112233445566778899aabbccddeeff00112233";
    char root[] = "/tmp/paddock-gitinfo.XXXXXX", dir[600], cmd[600];
    struct gitinfo gi;
    assert_non_null(mkdtemp(root));
    put(root, "main/.git/HEAD", "ref: refs/heads/main\n");
    put(root, "main/.git/refs/heads/main", sha);
    put(root, "main/src/deep/file", "");
    snprintf(dir, sizeof dir, "%s/main/src/deep", root);
    gitinfo_lookup(dir, &gi);
    assert_true(gi.repo);
    assert_string_equal(gi.branch, "main");
    assert_string_equal(gi.commit, sha);

    /* A linked worktree: .git is a file; HEAD is its own, refs are the main repository's. */
    put(root, "wt/.git", "gitdir: ../main/.git/worktrees/wt\n");
    put(root, "main/.git/worktrees/wt/HEAD", "ref: refs/heads/topic\n");
    put(root, "main/.git/worktrees/wt/commondir", "../..\n");
    put(root, "main/.git/packed-refs",
        "# pack-refs with: peeled\n"
        "00112233445566778899aabbccddeeff00112233 refs/heads/main\n"
        "ffeeddccbbaa99887766554433221100ffeeddcc refs/heads/topic\n");
    snprintf(dir, sizeof dir, "%s/wt", root);
    gitinfo_lookup(dir, &gi);
    assert_true(gi.repo);
    assert_string_equal(gi.branch, "topic");
    assert_string_equal(gi.commit, "ffeeddccbbaa99887766554433221100ffeeddcc");

    /* Not a repository. */
    gitinfo_lookup(root, &gi);
    assert_false(gi.repo);
    assert_string_equal(gi.branch, "");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* ---- page text (browse) ---------------------------------------------------------------- */

static void expect_page_text(const char *html, const char *want)
{
    struct buf out = BUF_INIT;
    assert_int_equal(htmltext_render(&out, html, strlen(html)), 0);
    assert_string_equal(out.data ? out.data : "", want);
    buf_free(&out);
}

static void test_htmltext(void **state)
{
    (void)state;
    expect_page_text("", "");
    expect_page_text("plain  text\n here", "plain text here");
    expect_page_text("<html><head><title>x</title><script>a<b</script></head><body>"
                     "<h1>Title</h1><p>One <i>two</i></p><p>three</p></body></html>",
                     "Title\n\nOne two\n\nthree");
    expect_page_text("a<br>b<br/>c<div>d</div>e", "a\nb\nc\nd\ne");
    expect_page_text("<ul><li>x</li><li>y</li></ul>after", "x\ny\n\nafter");
    expect_page_text("<table><tr><td>1</td><td>2</td></tr><tr><td>3</td></tr></table>", "1 2\n3");
    expect_page_text("&lt;tag&gt; &amp; &quot;q&quot; &#65;&#x42; &nbsp;x &bogus; a&b",
                     "<tag> & \"q\" AB  x &bogus; a&b");
    expect_page_text("x<!-- <p>not</p> -->y<style>p{}</style>z", "xyz");
    expect_page_text("1 < 2 and 3 > 2", "1 < 2 and 3 > 2");
    expect_page_text("caf\xc3\xa9 <b>\xe2\x80\x94</b>", "caf\xc3\xa9 \xe2\x80\x94");
}

static void test_env_quote(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    assert_int_equal(env_quote(&b, "a\"b\\c$d`e\nf 'g' \xc3\xa9", 19), 0);
    assert_string_equal(b.data, "\"a\\\"b\\\\c\\$d\\`e\nf 'g' \xc3\xa9\"");
    buf_reset(&b);
    assert_int_equal(env_quote(&b, "x\0y", 3), 0); /* NUL cannot be in a shell string */
    assert_string_equal(b.data, "\"xy\"");
    buf_reset(&b);
    assert_int_equal(env_squote(&b, "it's", 4), 0);
    assert_string_equal(b.data, "'it'\\''s'");
    buf_free(&b);
    assert_true(env_name_valid("_A1"));
    assert_true(env_name_valid("my_var"));
    assert_false(env_name_valid("1A"));
    assert_false(env_name_valid("A-B"));
    assert_false(env_name_valid(""));
    assert_true(env_name_reserved("PROMPT_COMMAND"));
    assert_true(env_name_reserved("PS1"));
    assert_false(env_name_reserved("PATH"));
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    struct buf b = BUF_INIT;
    char tmp[4096];
    size_t n;
    buf_append(&b, "", 0);
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        buf_append(&b, tmp, n);
    fclose(f);
    return buf_steal(&b);
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Runs the add-variables script in `shell` with HOME=home, then prints the variables. */
static char *run_env_script(const char *shell, const char *home, const struct env_var *vars,
                            size_t n)
{
    struct buf script = BUF_INIT, cmd = BUF_INIT;
    assert_int_equal(env_script_add(&script, vars, n), 0);
    buf_append_str(&script, " && echo ok");
    for (size_t i = 0; i < n; i++)
        buf_printf(&script, "; printf '[%%s]' \"$%s\"", vars[i].name);
    char path[256];
    snprintf(path, sizeof path, "%s/script.sh", home);
    spit(path, script.data);
    buf_printf(&cmd, "HOME='%s' %s %s", home, shell, path);
    FILE *p = popen(cmd.data, "r");
    assert_non_null(p);
    struct buf out = BUF_INIT;
    char tmp[4096];
    size_t k;
    buf_append(&out, "", 0);
    while ((k = fread(tmp, 1, sizeof tmp, p)) > 0)
        buf_append(&out, tmp, k);
    pclose(p);
    buf_free(&script);
    buf_free(&cmd);
    return buf_steal(&out);
}

static void test_env_script(void **state)
{
    (void)state;
    const char *shells[] = {"bash", "busybox sh"};
    for (size_t k = 0; k < 2; k++) {
        if (k == 1 && system("busybox true >/dev/null 2>&1") != 0)
            continue;
        char home[] = "/tmp/paddock-env-XXXXXX";
        assert_non_null(mkdtemp(home));
        char rc[300];
        snprintf(rc, sizeof rc, "%s/.bashrc", home);
        struct env_var *vars = NULL;
        size_t n = 0;
        const char *tricky = "a b $HOME \"q\" 'x' `c` \\ end\nline2";
        assert_int_equal(env_vars_add(&vars, &n, "tricky", 6, tricky, strlen(tricky)), 0);
        assert_int_equal(env_vars_add(&vars, &n, "PLAIN", 5, "v1", 2), 0);

        /* No .bashrc yet: both lines appended; the values read back exactly. */
        char *out = run_env_script(shells[k], home, vars, n);
        struct buf want = BUF_INIT;
        buf_printf(&want, "ok\n[%s][v1]", tricky);
        assert_string_equal(out, want.data);
        free(out);
        char *text = slurp(rc);
        assert_string_equal(text, "export TRICKY=\"a b \\$HOME \\\"q\\\" 'x' \\`c\\` \\\\ end\n"
                                  "line2\"\nexport PLAIN=\"v1\"\n");
        free(text);

        /* Again with new values: the live values change, .bashrc keeps its first lines. */
        free(vars[1].value);
        vars[1].value = strdup("v2");
        vars[1].len = 2;
        out = run_env_script(shells[k], home, vars + 1, 1);
        assert_string_equal(out, "ok\n[v2]");
        free(out);
        text = slurp(rc);
        assert_non_null(strstr(text, "export PLAIN=\"v1\"\n"));
        assert_null(strstr(text, "v2"));
        free(text);

        /* A .bashrc whose last line has no newline: the new line starts on its own. */
        spit(rc, "alias ll='ls -l'");
        out = run_env_script(shells[k], home, vars + 1, 1);
        assert_string_equal(out, "ok\n[v2]");
        free(out);
        text = slurp(rc);
        assert_string_equal(text, "alias ll='ls -l'\nexport PLAIN=\"v2\"\n");
        free(text);

        /* Cannot write .bashrc: the script fails. */
        unlink(rc);
        assert_int_equal(mkdir(rc, 0700), 0);
        out = run_env_script(shells[k], home, vars + 1, 1);
        assert_string_equal(out, "[v2]");
        free(out);

        buf_free(&want);
        env_vars_free(vars, n);
        char rm[300];
        snprintf(rm, sizeof rm, "rm -rf '%s'", home);
        assert_int_equal(system(rm), 0);
    }
}

static void test_env_file(void **state)
{
    (void)state;
    char path[] = "/tmp/paddock-envfile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char *environ_[] = {"BARE=from-env", NULL};
    spit(path, "# comment\n\n  a=1\nB=two words = kept\r\nlower_case=x\nBARE\nMISSING\nA=again\n");
    struct env_var *vars = NULL;
    size_t n = 0;
    struct buf err = BUF_INIT;
    assert_int_equal(env_file_read(path, environ_, &vars, &n, &err), 0);
    assert_int_equal(n, 4);
    assert_string_equal(vars[0].name, "A");
    assert_string_equal(vars[0].value, "again");
    assert_string_equal(vars[1].name, "B");
    assert_string_equal(vars[1].value, "two words = kept");
    assert_string_equal(vars[2].name, "LOWER_CASE");
    assert_string_equal(vars[3].name, "BARE");
    assert_string_equal(vars[3].value, "from-env");
    env_vars_free(vars, n);
    vars = NULL;
    n = 0;

    spit(path, "OK=1\n1X=2\n");
    assert_int_equal(env_file_read(path, environ_, &vars, &n, &err), -1);
    assert_non_null(strstr(err.data, ":2: invalid variable name: 1X"));
    env_vars_free(vars, n);
    vars = NULL;
    n = 0;
    buf_reset(&err);
    spit(path, "prompt_command=x\n");
    assert_int_equal(env_file_read(path, environ_, &vars, &n, &err), -1);
    assert_non_null(strstr(err.data, "reserved variable name"));
    env_vars_free(vars, n);
    buf_reset(&err);
    unlink(path);
    vars = NULL;
    n = 0;
    assert_int_equal(env_file_read(path, environ_, &vars, &n, &err), -1);
    assert_non_null(strstr(err.data, "cannot open"));
    buf_free(&err);
}

static void test_which_python(void **state)
{
    (void)state;
    char dir[] = "/tmp/paddock-which-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[512], out[512];
    const char *made[][2] = {
        {"b1", "python"}, {"b2", "python3"}, {"b3", "python"}, {"rel", "python"}};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, made[i][0]);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/%s/%s", dir, made[i][0], made[i][1]);
        spit(p, "#!/bin/sh\n");
        assert_int_equal(chmod(p, i == 2 ? 0644 : 0755), 0); /* b3's is not executable */
    }
    char path[1024], want[512];
    snprintf(path, sizeof path, "/nonexistent:%s/b3:%s/b2:%s/b1", dir, dir, dir);
    which_python(path, "/", out, sizeof out);
    snprintf(want, sizeof want, "%s/b1/python", dir); /* python anywhere beats python3 */
    assert_string_equal(out, want);
    snprintf(path, sizeof path, "%s/b3:%s/b2", dir, dir);
    which_python(path, "/", out, sizeof out);
    snprintf(want, sizeof want, "%s/b2/python3", dir);
    assert_string_equal(out, want);
    which_python("rel", dir, out, sizeof out); /* relative entries: from the shell's cwd */
    snprintf(want, sizeof want, "%s/rel/python", dir);
    assert_string_equal(out, want);
    which_python("/nonexistent", "/", out, sizeof out);
    assert_string_equal(out, "");
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    assert_int_equal(system(p), 0);
}

/* Sets path's mtime to sec (relative to now) and nsec; its ctime becomes now. */
static void stamp_set(const char *path, long sec, long nsec)
{
    struct timespec ts[2] = {{.tv_sec = time(NULL) + sec, .tv_nsec = nsec},
                             {.tv_sec = time(NULL) + sec, .tv_nsec = nsec}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Sets path's mtime an hour back, so a change now gives it a new one whatever the clock's tick. */
static void age(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    stamp_set(p, -3600, 0);
}

static void cached_is(struct which_cache *c, const char *path, const char *cwd, const char *dir,
                      const char *rel)
{
    char out[512], want[512];
    snprintf(want, sizeof want, "%s%s%s", rel ? dir : "", rel && *rel ? "/" : "", rel ? rel : "");
    which_python_cached(c, path, cwd, out, sizeof out);
    assert_string_equal(out, want);
}

/* The cache gives what which_python gives after each change that alters the answer. */
static void test_which_python_cache(void **state)
{
    (void)state;
    char dir[] = "/tmp/paddock-whichc-XXXXXX", p[512], path[1024];
    assert_non_null(mkdtemp(dir));
    struct which_cache c = {.trust_recent = true};
    const char *dirs[] = {"a", "b", "rel"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    snprintf(p, sizeof p, "%s/b/python3", dir);
    spit(p, "#!/bin/sh\n");
    assert_int_equal(chmod(p, 0755), 0);
    age(dir, "a");
    age(dir, "b");
    snprintf(path, sizeof path, "%s/a:%s/b:%s/later", dir, dir, dir);
    cached_is(&c, path, "/", dir, "b/python3");
    cached_is(&c, path, "/", dir, "b/python3"); /* from the cache */
    assert_true(c.valid);

    /* python installed earlier along PATH */
    snprintf(p, sizeof p, "%s/a/python", dir);
    spit(p, "#!/bin/sh\n");
    assert_int_equal(chmod(p, 0755), 0);
    cached_is(&c, path, "/", dir, "a/python");
    /* made not executable in place: only its own mode changes */
    assert_int_equal(chmod(p, 0644), 0);
    cached_is(&c, path, "/", dir, "b/python3");
    /* and executable again: a candidate passed over is watched too */
    assert_int_equal(chmod(p, 0755), 0);
    cached_is(&c, path, "/", dir, "a/python");
    /* removed */
    age(dir, "a");
    cached_is(&c, path, "/", dir, "a/python");
    assert_int_equal(unlink(p), 0);
    cached_is(&c, path, "/", dir, "b/python3");
    /* a directory along PATH that did not exist is made, with a python in it */
    snprintf(p, sizeof p, "%s/later", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/later/python", dir);
    spit(p, "#!/bin/sh\n");
    assert_int_equal(chmod(p, 0755), 0);
    cached_is(&c, path, "/", dir, "later/python");
    /* a dangling symlink along PATH whose target is installed later, outside PATH: no
     * directory along PATH changes, only what the link resolves to */
    snprintf(p, sizeof p, "%s/opt", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    char target[512];
    snprintf(target, sizeof target, "%s/opt/python3.99", dir);
    snprintf(p, sizeof p, "%s/a/python", dir);
    assert_int_equal(symlink(target, p), 0);
    age(dir, "a");
    cached_is(&c, path, "/", dir, "later/python");
    cached_is(&c, path, "/", dir, "later/python"); /* from the cache */
    spit(target, "#!/bin/sh\n");
    assert_int_equal(chmod(target, 0755), 0);
    cached_is(&c, path, "/", dir, "a/python");
    /* another PATH (a venv activated) */
    snprintf(path, sizeof path, "%s/b", dir);
    cached_is(&c, path, "/", dir, "b/python3");
    /* a relative entry: the cwd takes part */
    snprintf(p, sizeof p, "%s/rel/python", dir);
    spit(p, "#!/bin/sh\n");
    assert_int_equal(chmod(p, 0755), 0);
    cached_is(&c, "rel", dir, dir, "rel/python");
    cached_is(&c, "rel", "/", dir, NULL);
    cached_is(&c, "/nonexistent", "/", dir, NULL);
    which_cache_free(&c);
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    assert_int_equal(system(p), 0);
}

/* path's ctime, and the wall clock, in nanoseconds. */
static long long ctime_ns(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
}

static long long realtime_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* Waits (to a deadline, in small steps) until path's ctime is more than WHICH_RACY_NS old. */
static void wait_settled(const char *path)
{
    long long changed = ctime_ns(path);
    for (int i = 0; i < 1000; i++) {
        if (realtime_ns() > changed + WHICH_RACY_NS + 10000000LL)
            return;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    fail_msg("%s: the clock did not pass its ctime", path);
}

/* Without trust_recent: stamps with nanoseconds are trusted once WHICH_RACY_NS old, not after
 * seconds (a sandbox's /usr/sbin has its creation time: every command of its first seconds
 * looked python up in full), and a time in the future never is. */
static void test_which_python_cache_settles(void **state)
{
    (void)state;
    char dir[] = "/tmp/paddock-whichs-XXXXXX", b[512], py[512];
    assert_non_null(mkdtemp(dir));
    snprintf(b, sizeof b, "%s/b", dir);
    assert_int_equal(mkdir(b, 0755), 0);
    snprintf(py, sizeof py, "%s/b/python3", dir);
    spit(py, "#!/bin/sh\n");
    assert_int_equal(chmod(py, 0755), 0);
    struct which_cache c = {0};
    /* changed just now (its ctime): looked up, not kept */
    stamp_set(b, -3600, 500000000);
    stamp_set(py, -3600, 500000000);
    cached_is(&c, b, "/", dir, "b/python3");
    if (realtime_ns() < ctime_ns(b) + WHICH_RACY_NS)
        assert_false(c.valid);
    /* a tenth of a second later: kept (with seconds alone, not before two had passed) */
    wait_settled(b);
    wait_settled(py);
    cached_is(&c, b, "/", dir, "b/python3");
    assert_true(c.valid);
    cached_is(&c, b, "/", dir, "b/python3");
    assert_true(c.valid);
    /* a directory time in the future is never trusted, however long one waits */
    stamp_set(b, 3600, 500000000);
    wait_settled(b);
    cached_is(&c, b, "/", dir, "b/python3");
    assert_false(c.valid);
    /* and a change after it settled is still seen at once */
    stamp_set(b, -3600, 500000000);
    wait_settled(b);
    cached_is(&c, b, "/", dir, "b/python3");
    assert_true(c.valid);
    snprintf(py, sizeof py, "%s/b/python", dir);
    spit(py, "#!/bin/sh\n");
    assert_int_equal(chmod(py, 0755), 0);
    cached_is(&c, b, "/", dir, "b/python");
    which_cache_free(&c);
    snprintf(py, sizeof py, "rm -rf '%s'", dir);
    assert_int_equal(system(py), 0);
}

/* ---- userdb: the session's user in passwd and group ---- */

static char *db_slurp(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return strdup(text);
}

static void db_put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_file(const char *dir, const char *name, const char *want)
{
    char *got = db_slurp(dir, name);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_userdb_name_user(void **state)
{
    (void)state;
    char dir[] = "/tmp/paddock-userdb-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const char pw[] = "root:x:0:0:root:/root:/bin/bash\n"
                             "agent:x:1000:1000:paddock agent:/home/agent:/bin/bash\n"
                             "openhands:x:1000:1000:OpenHands agent:/home/openhands:/bin/bash\n"
                             "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n";
    static const char gr[] = "root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n";
    db_put(dir, "passwd", pw);
    db_put(dir, "group", gr);
    char path[600];
    snprintf(path, sizeof path, "%s/passwd", dir);
    assert_int_equal(chmod(path, 0640), 0);
    struct buf err = BUF_INIT;

    /* The image's second name for uid 1000 goes first, with its GECOS and shell kept. */
    struct userdb_user u = {"openhands", 1000, 1000, "/home/openhands", "/usr/bin/bash"};
    assert_int_equal(userdb_name_user(dir, &u, &err), 1);
    expect_file(dir, "passwd",
                "root:x:0:0:root:/root:/bin/bash\n"
                "openhands:x:1000:1000:OpenHands agent:/home/openhands:/bin/bash\n"
                "agent:x:1000:1000:paddock agent:/home/agent:/bin/bash\n"
                "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n");
    expect_file(dir, "group", gr); /* gid 1000 has a group */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640); /* the old file's mode */
    /* Saying so already: nothing is written. */
    assert_int_equal(userdb_name_user(dir, &u, &err), 0);

    /* A uid the image does not know: appended, with a group of its name; its shell is the
     * executor's. */
    db_put(dir, "passwd", pw);
    u = (struct userdb_user){"openhands", 1234, 1234, "/tmp/home", "/bin/sh"};
    assert_int_equal(userdb_name_user(dir, &u, &err), 1);
    expect_file(dir, "passwd",
                "root:x:0:0:root:/root:/bin/bash\n"
                "agent:x:1000:1000:paddock agent:/home/agent:/bin/bash\n"
                "openhands:x:1234:1234:OpenHands agent:/tmp/home:/bin/bash\n"
                "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n");
    expect_file(dir, "group", "root:x:0:\nagent:x:1000:\nnogroup:x:65534:\nopenhands:x:1234:\n");

    /* A new name for a known uid goes before the uid's entry, with its shell. */
    db_put(dir, "passwd", "root:x:0:0::/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/ash");
    db_put(dir, "group", "node:x:1000:");
    u = (struct userdb_user){"agent", 1000, 1000, "/home/node", "/bin/bash"};
    assert_int_equal(userdb_name_user(dir, &u, &err), 1);
    expect_file(dir, "passwd",
                "root:x:0:0::/root:/bin/sh\nagent:x:1000:1000::/home/node:/bin/ash\n"
                "node:x:1000:1000::/home/node:/bin/ash\n");
    expect_file(dir, "group", "node:x:1000:");

    /* A symlinked passwd is not written through. */
    char target[600];
    snprintf(target, sizeof target, "%s/elsewhere", dir);
    db_put(dir, "elsewhere", "keep\n");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(userdb_name_user(dir, &u, &err), -1);
    assert_non_null(strstr(err.data, "passwd"));
    expect_file(dir, "elsewhere", "keep\n");

    /* Names and fields passwd cannot hold. */
    buf_reset(&err);
    u = (struct userdb_user){"a:b", 1000, 1000, "/home/x", "/bin/sh"};
    assert_int_equal(userdb_name_user(dir, &u, &err), -1);
    u = (struct userdb_user){"x", 1000, 1000, "/home/x\n", "/bin/sh"};
    assert_int_equal(userdb_name_user(dir, &u, &err), -1);
    assert_false(userdb_name_valid("-x"));
    assert_true(userdb_name_valid("openhands"));
    buf_free(&err);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Everything the pipe holds now (non-blocking), appended to out. */
static void pipe_drain(int fd, struct buf *out)
{
    char b[4096];
    ssize_t n;
    while ((n = read(fd, b, sizeof b)) > 0)
        buf_append(out, b, (size_t)n);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A busy executor writes REQLOG_BURST lines one by one, holds the rest back, and sums them up
 * in one line when the second ends; then lines are written one by one again. */
static void test_reqlog_burst(void **state)
{
    (void)state;
    struct evloop *l = evloop_new();
    assert_non_null(l);
    int p[2];
    assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    struct reqlog g;
    assert_int_equal(reqlog_init(&g, l, p[1]), 0);
    struct buf got = {0};
    for (int i = 0; i < REQLOG_BURST + 5; i++)
        reqlog_line(&g, p[1], i >= REQLOG_BURST + 3, "line %d", i);
    pipe_drain(p[0], &got);
    assert_int_equal(count_lines(got.data), REQLOG_BURST);
    assert_non_null(strstr(got.data, "line 0\n"));
    char last[32];
    snprintf(last, sizeof last, "line %d\n", REQLOG_BURST - 1);
    assert_non_null(strstr(got.data, last));
    snprintf(last, sizeof last, "line %d\n", REQLOG_BURST);
    assert_null(strstr(got.data, last));

    /* The summary comes when the second ends (polled to a deadline, not slept for). */
    buf_reset(&got);
    double deadline = evloop_now() + 10;
    while (!strstr(got.data ? got.data : "", "more requests") && evloop_now() < deadline) {
        evloop_run_once(l, 100);
        pipe_drain(p[0], &got);
    }
    assert_non_null(got.data);
    assert_non_null(strstr(got.data, "paddock-executor: 5 more requests in the last second, 2 of "
                                     "them failed"));
    assert_int_equal(count_lines(got.data), 1);

    /* A new second: written at once again. */
    buf_reset(&got);
    reqlog_line(&g, p[1], false, "after");
    pipe_drain(p[0], &got);
    assert_string_equal(got.data, "after\n");

    /* Held lines are summed up when the executor stops too; nothing held, nothing written. */
    for (int i = 0; i < REQLOG_BURST + 2; i++)
        reqlog_line(&g, p[1], false, "again %d", i);
    buf_reset(&got);
    reqlog_close(&g);
    pipe_drain(p[0], &got);
    assert_int_equal(count_lines(got.data), REQLOG_BURST);
    assert_non_null(strstr(got.data, ": 3 more requests in the last second, 0 of them failed"));
    buf_reset(&got);
    reqlog_close(&g);
    pipe_drain(p[0], &got);
    assert_true(got.len == 0);

    buf_free(&got);
    close(p[0]);
    close(p[1]);
    evloop_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_line_window),
        cmocka_unit_test(test_capture_line_window_bounded),
        cmocka_unit_test(test_capture_clear_reuses),
        cmocka_unit_test(test_jalloc_lists),
        cmocka_unit_test(test_jalloc_dumps),
        cmocka_unit_test(test_capture_line_window_default),
        cmocka_unit_test(test_env_quote),
        cmocka_unit_test(test_env_script),
        cmocka_unit_test(test_env_file),
        cmocka_unit_test(test_which_python),
        cmocka_unit_test(test_which_python_cache),
        cmocka_unit_test(test_which_python_cache_settles),
        cmocka_unit_test(test_reqlog_burst),
        cmocka_unit_test(test_marker_whole),
        cmocka_unit_test(test_marker_split_everywhere),
        cmocka_unit_test(test_marker_byte_by_byte),
        cmocka_unit_test(test_marker_spoof_without_nonce),
        cmocka_unit_test(test_marker_partial_prefix_flushed),
        cmocka_unit_test(test_marker_malformed_and_overlong),
        cmocka_unit_test(test_marker_parse_body),
        cmocka_unit_test(test_capture_rstrip),
        cmocka_unit_test(test_capture_truncates_middle),
        cmocka_unit_test(test_capture_whitespace_flood),
        cmocka_unit_test(test_capture_multibyte_count),
        cmocka_unit_test(test_truncate_exact_limit),
        cmocka_unit_test(test_format_numbers),
        cmocka_unit_test(test_cmdline_direct),
        cmocka_unit_test(test_special_keys),
        cmocka_unit_test(test_env_filter),
        cmocka_unit_test(test_env_allow),
        cmocka_unit_test(test_ansi_strip),
        cmocka_unit_test(test_which_find),
        cmocka_unit_test(test_gitinfo_lookup),
        cmocka_unit_test(test_htmltext),
        cmocka_unit_test(test_userdb_name_user),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
