/* Black-box tests of the file actions (read, write, edit) against the executor binary given
 * as argv[1]: OpenHands' runtime tests (tests/runtime/test_aci_edit.py) and the openhands-aci
 * editor tests, rewritten here with their exact output strings.
 *
 * When run as root, a second group starts the executor with --user-id 65534 and checks
 * that files are read and written as that user. */
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
#include <unistd.h>

#include "bb.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* printf into one of a ring of buffers: expected strings without bookkeeping. */
static const char *f(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *f(const char *fmt, ...)
{
    static char ring[8][8192];
    static int next;
    char *b = ring[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof ring[0], fmt, ap);
    va_end(ap);
    return b;
}

static struct bb ex;

/* A path in the workspace. */
static const char *wpath(const char *name)
{
    return bb_path(ex.work, name);
}

static void put_text(const char *path, const char *text)
{
    bb_write_file(path, text, strlen(text));
}

/* dir and, below it, each name of tree: a directory when it ends in '/', else a file. */
static void make_tree(const char *dir, const char *const *tree)
{
    assert_int_equal(mkdir(dir, 0755), 0);
    for (; *tree; tree++) {
        const char *p = f("%s/%s", dir, *tree);
        if ((*tree)[strlen(*tree) - 1] == '/')
            assert_int_equal(mkdir(p, 0755), 0);
        else
            put_text(p, "x");
    }
}

static void assert_file(const char *path, const char *want, size_t want_len)
{
    size_t n;
    char *got = bb_read_file(path, &n);
    assert_non_null(got);
    if (n != want_len || memcmp(got, want, n) != 0)
        fail_msg("%s holds \"%s\" (%zu bytes), expected \"%s\" (%zu bytes)", path, got, n, want,
                 want_len);
    free(got);
}

static struct bb_reply edit(json_t *args)
{
    return bb_act(&ex, "edit", args);
}

/* An edit observation whose content is exactly want. */
static void expect_edit(const char *command, const char *path, const char *want)
{
    struct bb_reply r = edit(json_pack("{s:s, s:s}", "command", command, "path", path));
    assert_string_equal(bb_observation(&r), "edit");
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
}

/* An ErrorObservation with exactly this text. */
static void assert_error_obs(const struct bb_reply *r, const char *want)
{
    assert_string_equal(bb_observation(r), "error");
    assert_string_equal(bb_content(r), want);
    assert_string_equal(bb_message(r), want);
    assert_string_equal(bb_extra_str(r, "error_id"), "");
}

static struct bb_reply write_file(const char *path, const char *text)
{
    return bb_act(&ex, "write", json_pack("{s:s, s:s}", "path", path, "content", text));
}

static struct bb_reply read_file(const char *path)
{
    return bb_act(&ex, "read", json_pack("{s:s}", "path", path));
}

static struct bb_reply view_range(const char *path, json_t *range)
{
    return bb_act(
        &ex, "read",
        json_pack("{s:s, s:s, s:o}", "path", path, "impl_source", "oh_aci", "view_range", range));
}

/* ---- write ------------------------------------------------------------------------------ */

static void test_write_relative_and_shape(void **state)
{
    (void)state;
    struct bb_reply r =
        write_file("w1.txt", "This is a test file.\nThis file is for testing purposes.");
    assert_string_equal(bb_observation(&r), "write");
    assert_string_equal(bb_content(&r), "");
    assert_string_equal(bb_extra_str(&r, "path"), wpath("w1.txt"));
    assert_string_equal(bb_message(&r), f("I wrote to the file %s.", wpath("w1.txt")));
    assert_int_equal(json_object_size(json_object_get(r.json, "extras")), 1);
    bb_reply_free(&r);
    const char *want = "This is a test file.\nThis file is for testing purposes.\n";
    assert_file(wpath("w1.txt"), want, strlen(want));
    struct stat st;
    assert_int_equal(stat(wpath("w1.txt"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0664);
}

static void test_write_trailing_newline_rule(void **state)
{
    (void)state;
    /* Split on "\n", each piece + "\n": content ending in "\n" gets an empty line more. */
    struct bb_reply r = write_file("w2.txt", "a\n");
    bb_reply_free(&r);
    assert_file(wpath("w2.txt"), "a\n\n", 3);
    r = write_file("w3.txt", "");
    bb_reply_free(&r);
    assert_file(wpath("w3.txt"), "\n", 1);
}

static void test_write_creates_parents(void **state)
{
    (void)state;
    struct bb_reply r = write_file("deep/er/w4.txt", "x");
    assert_string_equal(bb_extra_str(&r, "path"), wpath("deep/er/w4.txt"));
    bb_reply_free(&r);
    assert_file(wpath("deep/er/w4.txt"), "x\n", 2);
}

static void test_write_start_end_keeps_mode(void **state)
{
    (void)state;
    put_text(wpath("w5.txt"), "1\n2\n3\n4\n");
    assert_int_equal(chmod(wpath("w5.txt"), 0600), 0);
    struct bb_reply r = bb_act(&ex, "write",
                               json_pack("{s:s, s:s, s:i, s:i}", "path", wpath("w5.txt"), "content",
                                         "X", "start", 1, "end", 3));
    assert_string_equal(bb_observation(&r), "write");
    bb_reply_free(&r);
    assert_file(wpath("w5.txt"), "1\nX\n4\n", 6);
    struct stat st;
    assert_int_equal(stat(wpath("w5.txt"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    /* Default start/end on an existing file: everything replaced. */
    r = write_file(wpath("w5.txt"), "new");
    bb_reply_free(&r);
    assert_file(wpath("w5.txt"), "new\n", 4);
}

/* ?paddock_diff=1 (the engine asks it for writes): the observation gains a top-level
 * "paddock_diff", difflib's unified diff of the old text and the new; without it the reply
 * is OpenHands' observation, key for key. */
static struct bb_reply write_with_diff(const char *path, json_t *args)
{
    json_object_set_new(args, "path", json_string(path));
    json_t *body = json_pack("{s:{s:s, s:o}}", "action", "action", "write", "args", args);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct bb_reply r = bb_http(&ex, "POST", "/execute_action?paddock_diff=1", text);
    free(text);
    assert_int_equal(r.status, 200);
    return r;
}

static void test_write_diff_when_asked(void **state)
{
    (void)state;
    char *p = strdup(wpath("wd.txt"));
    put_text(p, "1\n2\n3\n4\n");
    struct bb_reply r = bb_act(&ex, "write", json_pack("{s:s, s:s}", "path", p, "content", "a"));
    assert_null(json_object_get(r.json, "paddock_diff")); /* not asked: not there */
    bb_reply_free(&r);

    put_text(p, "1\n2\n3\n4\n");
    r = write_with_diff(p, json_pack("{s:s, s:i, s:i}", "content", "X", "start", 1, "end", 3));
    assert_string_equal(bb_observation(&r), "write");
    assert_int_equal(json_object_size(json_object_get(r.json, "extras")), 1);
    const char *d = json_string_value(json_object_get(r.json, "paddock_diff"));
    assert_non_null(d);
    assert_string_equal(d, f("--- %s\n+++ %s\n@@ -2,2 +2 @@\n-2\n-3\n+X", p, p));
    bb_reply_free(&r);
    assert_file(p, "1\nX\n4\n", 6);

    /* a new file: every line added */
    char *n = strdup(wpath("wd-new.txt"));
    r = write_with_diff(n, json_pack("{s:s}", "content", "x"));
    assert_string_equal(json_string_value(json_object_get(r.json, "paddock_diff")),
                        f("--- %s\n+++ %s\n@@ -0,0 +1 @@\n+x", n, n));
    bb_reply_free(&r);

    /* the same text again: an empty diff, still said */
    r = write_with_diff(n, json_pack("{s:s}", "content", "x"));
    assert_string_equal(json_string_value(json_object_get(r.json, "paddock_diff")), "");
    bb_reply_free(&r);

    /* a failed write has no diff */
    r = write_with_diff(f("%s/x", p), json_pack("{s:s}", "content", "x"));
    assert_string_equal(bb_observation(&r), "error");
    assert_null(json_object_get(r.json, "paddock_diff"));
    bb_reply_free(&r);
    free(p);
    free(n);
}

/* A diff past 256 KiB is cut at a line end and says how much it showed. */
static void test_write_diff_cut(void **state)
{
    (void)state;
    char *p = strdup(wpath("wd-big.txt"));
    size_t lines = 40000; /* "line NNNNN\n" x 40,000: ~440 KB each way */
    char *old = malloc(lines * 16), *next = malloc(lines * 16);
    assert_non_null(old);
    assert_non_null(next);
    size_t ol = 0, nl = 0;
    for (size_t i = 0; i < lines; i++) {
        ol += (size_t)sprintf(old + ol, "line %zu\n", i);
        nl += (size_t)sprintf(next + nl, "LINE %zu\n", i);
    }
    put_text(p, old);
    next[nl - 1] = '\0'; /* write adds the last newline */
    struct bb_reply r = write_with_diff(p, json_pack("{s:s}", "content", next));
    const char *d = json_string_value(json_object_get(r.json, "paddock_diff"));
    assert_non_null(d);
    assert_true(strlen(d) > 256 * 1024);
    assert_true(strlen(d) < 256 * 1024 + 200);
    bb_assert_contains(d, "\n(diff cut: ");
    bb_assert_contains(d, "-line 1\n");
    assert_int_equal(d[strlen(d) - 1], '\n');
    bb_reply_free(&r);
    free(old);
    free(next);
    free(p);
}

static void test_write_errors(void **state)
{
    (void)state;
    assert_int_equal(mkdir(wpath("wdir"), 0755), 0);
    struct bb_reply r = write_file("wdir", "x");
    assert_error_obs(&r, f("Path is a directory: %s. You can only write to files", wpath("wdir")));
    bb_reply_free(&r);
    bb_write_file(wpath("w6.txt"), "caf\xe9\n", 5);
    r = write_file("w6.txt", "x");
    assert_error_obs(&r, f("File could not be decoded as utf-8: %s", wpath("w6.txt")));
    bb_reply_free(&r);
    assert_file(wpath("w6.txt"), "caf\xe9\n", 5);
}

/* ---- read (default) --------------------------------------------------------------------- */

static void test_read_shape_and_slicing(void **state)
{
    (void)state;
    put_text(wpath("r1.txt"), "l0\nl1\nl2\nl3\n");
    struct bb_reply r = read_file("r1.txt");
    assert_string_equal(bb_observation(&r), "read");
    assert_string_equal(bb_content(&r), "l0\nl1\nl2\nl3\n");
    assert_string_equal(bb_extra_str(&r, "path"), wpath("r1.txt"));
    assert_string_equal(bb_extra_str(&r, "impl_source"), "default");
    assert_string_equal(bb_message(&r), f("I read the file %s.", wpath("r1.txt")));
    bb_reply_free(&r);
    static const struct {
        int start, end;
        const char *want;
    } cases[] = {
        {1, 3, "l1\nl2\n"},  {2, -1, "l2\nl3\n"},
        {0, 1, "l0\n"},      {3, 10, "l2\nl3\n"}, /* read_lines: begin = min(start, len - 2) */
        {-5, 2, "l0\nl1\n"}, {2, 0, "l2\n"},      /* end below start: one line */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        r = bb_act(&ex, "read",
                   json_pack("{s:s, s:i, s:i}", "path", "r1.txt", "start", cases[i].start, "end",
                             cases[i].end));
        assert_string_equal(bb_content(&r), cases[i].want);
        bb_reply_free(&r);
    }
    /* Universal newlines, as Python's text files read. */
    put_text(wpath("r2.txt"), "a\r\nb\rc\n");
    r = read_file("r2.txt");
    assert_string_equal(bb_content(&r), "a\nb\nc\n");
    bb_reply_free(&r);
}

static void test_read_errors(void **state)
{
    (void)state;
    struct bb_reply r = read_file("nope.txt");
    assert_error_obs(&r, f("File not found: %s. Your current working directory is %s.",
                           wpath("nope.txt"), ex.work));
    bb_reply_free(&r);
    assert_int_equal(mkdir(wpath("rdir"), 0755), 0);
    r = read_file(wpath("rdir"));
    assert_error_obs(&r, f("Path is a directory: %s. You can only read files", wpath("rdir")));
    bb_reply_free(&r);
    bb_write_file(wpath("r3.txt"), "caf\xe9\n", 5);
    r = read_file("r3.txt");
    assert_error_obs(&r, f("File could not be decoded as utf-8: %s.", wpath("r3.txt")));
    bb_reply_free(&r);
    bb_write_file(wpath("r4.bin"), "ELF\0\1\2\3", 7);
    r = read_file("r4.bin");
    assert_error_obs(&r, "ERROR_BINARY_FILE");
    bb_reply_free(&r);
    r = bb_act(&ex, "read",
               json_pack("{s:s, s:s}", "path", wpath("r4.bin"), "impl_source", "oh_aci"));
    assert_error_obs(&r, "ERROR_BINARY_FILE");
    bb_reply_free(&r);
}

static void test_read_media_as_data_urls(void **state)
{
    (void)state;
    /* A PNG signature with NUL bytes: binary, but sent as a data: URL. */
    bb_write_file(wpath("img.png"), "\x89PNG\r\n\x1a\n\0\0", 10);
    struct bb_reply r = read_file("img.png");
    assert_string_equal(bb_observation(&r), "read");
    assert_string_equal(bb_content(&r), "data:image/png;base64,iVBORw0KGgoAAA==");
    bb_reply_free(&r);
    static const struct {
        const char *name, *want;
    } cases[] = {
        {"a.JPG", "data:image/jpeg;base64,YWJj"},      {"a.jpeg", "data:image/jpeg;base64,YWJj"},
        {"a.gif", "data:image/gif;base64,YWJj"},       {"a.bmp", "data:image/bmp;base64,YWJj"},
        {"a.pdf", "data:application/pdf;base64,YWJj"}, {"a.mp4", "data:video/mp4;base64,YWJj"},
        {"a.webm", "data:video/webm;base64,YWJj"},     {"a.ogg", "data:audio/ogg;base64,YWJj"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        put_text(wpath(cases[i].name), "abc");
        r = read_file(cases[i].name);
        assert_string_equal(bb_content(&r), cases[i].want);
        bb_reply_free(&r);
    }
}

static void test_paths_relative_to_the_shell_cwd(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "mkdir -p sub && cd sub");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    r = write_file("rel.txt", "in sub");
    assert_string_equal(bb_extra_str(&r, "path"), wpath("sub/rel.txt"));
    bb_reply_free(&r);
    assert_file(wpath("sub/rel.txt"), "in sub\n", 7);
    r = read_file("./rel.txt");
    assert_string_equal(bb_content(&r), "in sub\n");
    assert_string_equal(bb_extra_str(&r, "path"), wpath("sub/rel.txt"));
    bb_reply_free(&r);
    r = read_file("../sub/missing");
    assert_error_obs(&r, f("File not found: %s/sub/../sub/missing. Your current working "
                           "directory is %s.",
                           ex.work, wpath("sub")));
    bb_reply_free(&r);
    bb_expect_run(&ex, f("cd %s", ex.work), BB_ANY_EXIT, NULL);
}

static void test_fifo_refused_without_hanging(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(wpath("pipe"), 0644), 0);
    /* A blocking open would never answer: the suite's timeout is what would catch it. */
    struct bb_reply r = read_file("pipe");
    assert_error_obs(&r, f("Path is a FIFO: %s. You can only read files", wpath("pipe")));
    bb_reply_free(&r);
    r = write_file("pipe", "x");
    assert_error_obs(&r, f("Path is a FIFO: %s. You can only write to files", wpath("pipe")));
    bb_reply_free(&r);
    const char *p = wpath("pipe");
    expect_edit("view", p,
                f("ERROR:\nInvalid `path` parameter: %s. The path %s is a FIFO, not a regular "
                  "file or a directory, and cannot be used with this tool.",
                  p, p));
    r = edit(json_pack("{s:s, s:s, s:s, s:s}", "command", "str_replace", "path", p, "old_str", "a",
                       "new_str", "b"));
    assert_string_equal(bb_content(&r),
                        f("ERROR:\nInvalid `path` parameter: %s. The path %s is a FIFO, not a "
                          "regular file or a directory, and cannot be used with this tool.",
                          p, p));
    bb_reply_free(&r);
}

/* ---- editor: view ----------------------------------------------------------------------- */

static void test_view_file(void **state)
{
    (void)state;
    const char *p = wpath("v1.txt");
    put_text(p, "This is a test file.\nThis file is for testing purposes.");
    struct bb_reply r = edit(json_pack("{s:s, s:s}", "command", "view", "path", p));
    assert_string_equal(bb_observation(&r), "edit");
    assert_string_equal(bb_content(&r), f("Here's the result of running `cat -n` on %s:\n"
                                          "     1\tThis is a test file.\n"
                                          "     2\tThis file is for testing purposes.\n",
                                          p));
    assert_string_equal(bb_extra_str(&r, "path"), p);
    assert_true(json_is_false(bb_extra(&r, "prev_exist")));
    assert_true(json_is_null(bb_extra(&r, "old_content")));
    assert_true(json_is_null(bb_extra(&r, "new_content")));
    assert_string_equal(bb_extra_str(&r, "impl_source"), "oh_aci");
    assert_string_equal(bb_extra_str(&r, "diff"), "");
    assert_true(json_is_null(bb_extra(&r, "_diff_cache")));
    assert_string_equal(bb_message(&r), f("I edited the file %s.", p));
    bb_reply_free(&r);
    /* A trailing newline shows as an empty numbered line; an empty file as "1\t". */
    put_text(p, "x\n");
    expect_edit("view", p,
                f("Here's the result of running `cat -n` on %s:\n     1\tx\n     2\t\n", p));
    put_text(p, "");
    expect_edit("view", p, f("Here's the result of running `cat -n` on %s:\n     1\t\n", p));
}

static void test_view_directory(void **state)
{
    (void)state;
    const char *d = wpath("vd");
    static const char *const tree[] = {
        "test.txt", ".hidden",      "sub/",        "sub/a.txt",           "sub/.h2",
        ".hdir/",   ".hdir/inside", "sub/deeper/", "sub/deeper/too-deep", NULL};
    make_tree(d, tree);
    assert_int_equal(symlink(f("%s/sub", d), f("%s/link", d)), 0);
    expect_edit("view", d,
                f("Here's the files and directories up to 2 levels deep in %s, excluding hidden "
                  "items:\n%s/\n%s/link/\n%s/link/a.txt\n%s/link/deeper/\n%s/sub/\n%s/sub/a.txt\n"
                  "%s/sub/deeper/\n%s/test.txt\n\n2 hidden files/directories in this directory "
                  "are excluded. You can use 'ls -la %s' to see them.",
                  d, d, d, d, d, d, d, d, d, d));
    /* A trailing slash is normalised away; no hidden entries, no sentence. */
    expect_edit("view", f("%s/sub/", d),
                f("Here's the files and directories up to 2 levels deep in %s/sub, excluding "
                  "hidden items:\n%s/sub/\n%s/sub/a.txt\n%s/sub/deeper/\n%s/sub/deeper/too-deep"
                  "\n\n1 hidden files/directories in this directory are excluded. You can use "
                  "'ls -la %s/sub' to see them.",
                  d, d, d, d, d, d));
    struct bb_reply r = view_range(d, json_pack("[i, i]", 1, 2));
    assert_string_equal(bb_observation(&r), "read");
    assert_string_equal(bb_content(&r), "ERROR:\nInvalid `view_range` parameter: [1, 2]. The "
                                        "`view_range` parameter is not allowed when `path` points "
                                        "to a directory.");
    bb_reply_free(&r);
}

static void test_view_range(void **state)
{
    (void)state;
    const char *p = wpath("v2.txt");
    char text[256] = "";
    for (int i = 1; i <= 10; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "Line %d\n", i);
    put_text(p, text);
    char head[512];
    snprintf(head, sizeof head, "Here's the result of running `cat -n` on %s:\n", p);
    struct bb_reply r = view_range(p, json_pack("[i, i]", 3, 5));
    assert_string_equal(bb_observation(&r), "read");
    assert_string_equal(bb_extra_str(&r, "impl_source"), "oh_aci");
    assert_string_equal(bb_extra_str(&r, "path"), p);
    assert_string_equal(bb_content(&r),
                        f("%s     3\tLine 3\n     4\tLine 4\n     5\tLine 5\n", head));
    bb_reply_free(&r);
    r = view_range(p, json_pack("[i, i]", 9, -1));
    assert_string_equal(bb_content(&r), f("%s     9\tLine 9\n    10\tLine 10\n", head));
    bb_reply_free(&r);
    r = view_range(p, json_pack("[i, i]", 10, 20));
    assert_string_equal(bb_content(&r),
                        f("NOTE: We only show up to 10 since there're only 10 lines "
                          "in this file.\n%s    10\tLine 10\n",
                          head));
    bb_reply_free(&r);
    static const struct {
        const char *range, *want;
    } errors[] = {
        {"[0, 2]", "Invalid `view_range` parameter: [0, 2]. Its first element `0` should be "
                   "within the range of lines of the file: [1, 10]."},
        {"[11, 12]", "Invalid `view_range` parameter: [11, 12]. Its first element `11` should "
                     "be within the range of lines of the file: [1, 10]."},
        {"[5, 3]", "Invalid `view_range` parameter: [5, 3]. Its second element `3` should be "
                   "greater than or equal to the first element `5`."},
        {"[1]", "Invalid `view_range` parameter: [1]. It should be a list of two integers."},
        {"[\"1\", 2]",
         "Invalid `view_range` parameter: ['1', 2]. It should be a list of two integers."},
        {"[1.5, 2]",
         "Invalid `view_range` parameter: [1.5, 2]. It should be a list of two integers."},
    };
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        r = view_range(p, json_loads(errors[i].range, 0, NULL));
        assert_string_equal(bb_content(&r), f("ERROR:\n%s", errors[i].want));
        bb_reply_free(&r);
    }
    /* No range (null or empty): the whole file. */
    r = view_range(p, json_array());
    bb_assert_prefix(bb_content(&r), f("%s     1\tLine 1\n", head));
    bb_reply_free(&r);
}

static void test_view_clipped_at_16000_chars(void **state)
{
    (void)state;
    const char *p = wpath("big.txt");
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    for (int i = 0; i < 16000; i++)
        fputs("Line 1\n", fp);
    fclose(fp);
    struct bb_reply r = edit(json_pack("{s:s, s:s}", "command", "view", "path", p));
    const char *c = bb_content(&r);
    /* 2285 whole lines (15995 chars), then "Line " and the notice on line 2286. */
    const char *tail =
        "  2285\tLine 1\n  2286\tLine <response clipped><NOTE>Due to the max output limit, only "
        "part of this file has been shown to you. You should retry this tool after you have "
        "searched inside the file with `grep -n` in order to find the line numbers of what you "
        "are looking for.</NOTE>\n";
    assert_true(strlen(c) > strlen(tail));
    assert_string_equal(c + strlen(c) - strlen(tail), tail);
    bb_reply_free(&r);
}

/* ---- editor: create --------------------------------------------------------------------- */

static void test_create(void **state)
{
    (void)state;
    const char *p = wpath("c1.txt");
    struct bb_reply r =
        edit(json_pack("{s:s, s:s, s:s}", "command", "create", "path", p, "file_text", "hello"));
    assert_string_equal(bb_content(&r), f("File created successfully at: %s", p));
    assert_string_equal(bb_extra_str(&r, "diff"),
                        f("--- %s\n+++ %s\n@@ -1 +1 @@\n-\n+hello", p, p));
    assert_true(json_is_null(bb_extra(&r, "new_content")));
    bb_reply_free(&r);
    assert_file(p, "hello", 5); /* no newline added */
    r = edit(json_pack("{s:s, s:s, s:s}", "command", "create", "path", p, "file_text", "again"));
    assert_string_equal(bb_content(&r),
                        f("ERROR:\nInvalid `path` parameter: %s. File already exists at: %s. "
                          "Cannot overwrite files using command `create`.",
                          p, p));
    assert_string_equal(bb_extra_str(&r, "diff"), "");
    bb_reply_free(&r);
    r = edit(
        json_pack("{s:s, s:s, s:n}", "command", "create", "path", wpath("c2.txt"), "file_text"));
    assert_string_equal(bb_content(&r),
                        "ERROR:\nParameter `file_text` is required for command: create.");
    bb_reply_free(&r);
    /* Parents are not created. */
    const char *q = wpath("nodir/c3.txt");
    r = edit(json_pack("{s:s, s:s, s:s}", "command", "create", "path", q, "file_text", ""));
    assert_string_equal(bb_content(&r), f("ERROR:\nRan into [Errno 2] No such file or directory: "
                                          "'%s' while trying to write to %s",
                                          q, q));
    bb_reply_free(&r);
    /* create pushed its text: undo rewrites the same content. */
    expect_edit("undo_edit", p,
                f("Last edit to %s undone successfully. Here's the result of running `cat -n` "
                  "on %s:\n     1\thello\n",
                  p, p));
    assert_file(p, "hello", 5);
}

/* ---- editor: str_replace ---------------------------------------------------------------- */

static struct bb_reply replace(const char *path, const char *old_str, const char *new_str)
{
    return edit(json_pack("{s:s, s:s, s:s, s:s}", "command", "str_replace", "path", path, "old_str",
                          old_str, "new_str", new_str));
}

static void test_str_replace(void **state)
{
    (void)state;
    const char *p = wpath("s1.txt");
    put_text(p, "This is a test file.\nThis file is for testing purposes.");
    struct bb_reply r = replace(p, "test file", "sample file");
    assert_string_equal(bb_content(&r),
                        f("The file %s has been edited. Here's the result of running `cat -n` on "
                          "a snippet of %s:\n     1\tThis is a sample file.\n     2\tThis file is "
                          "for testing purposes.\nReview the changes and make sure they are as "
                          "expected. Edit the file again if necessary.",
                          p, p));
    assert_string_equal(bb_extra_str(&r, "old_content"), "test file");
    assert_string_equal(bb_extra_str(&r, "new_content"), "sample file");
    assert_string_equal(bb_extra_str(&r, "diff"),
                        f("--- %s\n+++ %s\n@@ -1 +1 @@\n-This is a test file.\n+This is a "
                          "sample file.",
                          p, p));
    bb_reply_free(&r);
    const char *want = "This is a sample file.\nThis file is for testing purposes.";
    assert_file(p, want, strlen(want));
    /* Through `write` the file ends in "\n": the snippet shows the empty last line. */
    r = write_file(p, "This is a test file.\nThis file is for testing purposes.");
    bb_reply_free(&r);
    r = replace(p, "test file", "sample file");
    assert_string_equal(bb_content(&r),
                        f("The file %s has been edited. Here's the result of running `cat -n` on "
                          "a snippet of %s:\n     1\tThis is a sample file.\n     2\tThis file is "
                          "for testing purposes.\n     3\t\nReview the changes and make sure they "
                          "are as expected. Edit the file again if necessary.",
                          p, p));
    bb_reply_free(&r);
    /* Tabs and several lines; new_str removing a line. */
    put_text(p, "def test():\n\tprint(\"Hello, World!\")");
    r = replace(p, "def test():\n\tprint(\"Hello, World!\")",
                "def test():\n\tprint(\"Hello, Universe!\")");
    assert_string_equal(bb_content(&r),
                        f("The file %s has been edited. Here's the result of running `cat -n` on "
                          "a snippet of %s:\n     1\tdef test():\n     2\t\tprint(\"Hello, "
                          "Universe!\")\nReview the changes and make sure they are as expected. "
                          "Edit the file again if necessary.",
                          p, p));
    bb_reply_free(&r);
    put_text(p, "Line 1\nLine to remove\nLine 3");
    r = replace(p, "Line to remove\n", "");
    bb_reply_free(&r);
    assert_file(p, "Line 1\nLine 3", 13);
}

static void test_str_replace_snippet_window(void **state)
{
    (void)state;
    const char *p = wpath("s2.txt");
    char text[512] = "";
    for (int i = 1; i <= 20; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "Line %d\n", i);
    put_text(p, text);
    struct bb_reply r = replace(p, "Line 10\n", "Line ten\nLine ten and a half\n");
    /* Lines L-4+1 .. L+4+newlines of new_str (OHEditor reads from max(0, L-4) + 1); the
     * slice ends in "\n", so an empty numbered line closes it. */
    assert_string_equal(
        bb_content(&r),
        f("The file %s has been edited. Here's the result of running `cat -n` on "
          "a snippet of %s:\n     7\tLine 7\n     8\tLine 8\n     9\tLine 9\n    "
          "10\tLine ten\n    11\tLine ten and a half\n    12\tLine 11\n    13\tLine "
          "12\n    14\tLine 13\n    15\tLine 14\n    16\tLine 15\n    17\t\nReview "
          "the changes and make sure they are as expected. Edit the file again if "
          "necessary.",
          p, p));
    assert_string_equal(bb_extra_str(&r, "diff"),
                        f("--- %s\n+++ %s\n@@ -10 +10,2 @@\n-Line 10\n+Line "
                          "ten\n+Line ten and a half",
                          p, p));
    bb_reply_free(&r);
}

static void test_str_replace_errors(void **state)
{
    (void)state;
    const char *p = wpath("s3.txt");
    put_text(p, "This is a test file.\nThis file is for testing purposes.");
    struct bb_reply r = replace(p, "Non-existent Line", "New Line");
    assert_string_equal(bb_content(&r), f("ERROR:\nNo replacement was performed, old_str "
                                          "`Non-existent Line` did not appear verbatim in %s.",
                                          p));
    assert_string_equal(bb_extra_str(&r, "diff"), "");
    bb_reply_free(&r);
    r = replace(p, "test", "sample");
    assert_string_equal(bb_content(&r),
                        "ERROR:\nNo replacement was performed. Multiple occurrences "
                        "of old_str `test` in lines [1, 2]. Please ensure it is "
                        "unique.");
    bb_reply_free(&r);
    r = replace(p, "test file", "test file");
    assert_string_equal(bb_content(&r),
                        "ERROR:\nInvalid `new_str` parameter: test file. No "
                        "replacement was performed. `new_str` and `old_str` must be "
                        "different.");
    bb_reply_free(&r);
    r = edit(json_pack("{s:s, s:s, s:n, s:s}", "command", "str_replace", "path", p, "old_str",
                       "new_str", "x"));
    assert_string_equal(bb_content(&r),
                        "ERROR:\nParameter `old_str` is required for command: str_replace.");
    bb_reply_free(&r);
    /* Two identical blocks: the lines they start on. */
    const char *block = "def example():\n    print(\"Hello\")\n    return True";
    put_text(p, f("%s\n\nprint('separator')\n\n%s", block, block));
    r = replace(p, block, "def new():\n    print(\"World\")");
    assert_string_equal(bb_content(&r), f("ERROR:\nNo replacement was performed. Multiple "
                                          "occurrences of old_str `%s` in lines [1, 7]. Please "
                                          "ensure it is unique.",
                                          block));
    bb_reply_free(&r);
    /* An empty old_str matches everywhere: every line, and the one after the last "\n". */
    r = write_file(p, "Line 1\nLine 2\nLine 3");
    bb_reply_free(&r);
    r = replace(p, "", "New string");
    assert_string_equal(bb_content(&r),
                        "ERROR:\nNo replacement was performed. Multiple occurrences "
                        "of old_str `` in lines [1, 2, 3, 4]. Please ensure it is "
                        "unique.");
    bb_reply_free(&r);
}

static void test_str_replace_whitespace_retry(void **state)
{
    (void)state;
    const char *p = wpath("s4.txt");
    put_text(p, "foo = 1\nbar = 2\n");
    struct bb_reply r = replace(p, "  bar = 2\n\n", "  baz = 3  ");
    assert_string_equal(bb_content(&r),
                        f("The file %s has been edited. Here's the result of running `cat -n` on "
                          "a snippet of %s:\n     1\tfoo = 1\n     2\tbaz = 3\n     3\t\nReview "
                          "the changes and make sure they are as expected. Edit the file again if "
                          "necessary.",
                          p, p));
    /* The observation carries the action's strings, not the stripped ones. */
    assert_string_equal(bb_extra_str(&r, "old_content"), "  bar = 2\n\n");
    bb_reply_free(&r);
    assert_file(p, "foo = 1\nbaz = 3\n", 16);
    r = replace(p, "  nothing  ", "x");
    assert_string_equal(bb_content(&r), f("ERROR:\nNo replacement was performed, old_str `nothing` "
                                          "did not appear verbatim in %s.",
                                          p));
    bb_reply_free(&r);
}

static void test_diff_hunks(void **state)
{
    (void)state;
    const char *p = wpath("s5.txt");
    put_text(p, "a\nb\nc\nd\ne\n");
    struct bb_reply r = replace(p, "b\nc\nd", "B\nc\nD");
    assert_string_equal(bb_extra_str(&r, "diff"),
                        f("--- %s\n+++ %s\n@@ -2 +2 @@\n-b\n+B\n@@ -4 +4 @@\n-d\n+D", p, p));
    bb_reply_free(&r);
    /* Diff lines are right-stripped; a hunk that only deletes has a ",0" range. */
    r = replace(p, "B\nc\n", "");
    assert_string_equal(bb_extra_str(&r, "diff"),
                        f("--- %s\n+++ %s\n@@ -2,2 +1,0 @@\n-B\n-c", p, p));
    bb_reply_free(&r);
}

/* ---- editor: insert --------------------------------------------------------------------- */

static struct bb_reply insert_at(const char *path, json_t *line, const char *text)
{
    return edit(json_pack("{s:s, s:s, s:o, s:s}", "command", "insert", "path", path, "insert_line",
                          line, "new_str", text));
}

static void test_insert(void **state)
{
    (void)state;
    const char *p = wpath("i1.txt");
    put_text(p, "This is a test file.\nThis file is for testing purposes.");
    struct bb_reply r = insert_at(p, json_integer(1), "Inserted line");
    assert_string_equal(bb_content(&r),
                        f("The file %s has been edited. Here's the result of running `cat -n` on "
                          "a snippet of the edited file:\n     1\tThis is a test file.\n     "
                          "2\tInserted line\n     3\tThis file is for testing purposes.\nReview "
                          "the changes and make sure they are as expected (correct indentation, "
                          "no duplicate lines, etc). Edit the file again if necessary.",
                          p));
    assert_string_equal(bb_extra_str(&r, "diff"),
                        f("--- %s\n+++ %s\n@@ -1,0 +2 @@\n+Inserted line", p, p));
    assert_true(json_is_null(bb_extra(&r, "old_content")));
    assert_string_equal(bb_extra_str(&r, "new_content"), "Inserted line");
    bb_reply_free(&r);
    r = insert_at(p, json_integer(0), "\xe4\xb8\xad\xe6\x96\x87");
    bb_reply_free(&r);
    const char *want = "\xe4\xb8\xad\xe6\x96\x87\nThis is a test file.\nInserted line\nThis file "
                       "is for testing purposes.";
    assert_file(p, want, strlen(want));
    /* At the end, after a last line without newline: glued onto it (OHEditor's quirk). */
    r = insert_at(p, json_integer(4), "END");
    bb_reply_free(&r);
    want = "\xe4\xb8\xad\xe6\x96\x87\nThis is a test file.\nInserted line\nThis file is for "
           "testing purposes.END\n";
    assert_file(p, want, strlen(want));
    /* An empty new_str inserts one empty line; insert_line may come as a string. */
    put_text(p, "Line 1\nLine 2");
    r = insert_at(p, json_string("1"), "");
    bb_assert_contains(bb_content(&r), "     1\tLine 1\n     2\t\n     3\tLine 2\n");
    bb_reply_free(&r);
    assert_file(p, "Line 1\n\nLine 2", 14);
}

static void test_insert_errors(void **state)
{
    (void)state;
    const char *p = wpath("i2.txt");
    put_text(p, "Line 1\nLine 2");
    struct bb_reply r = insert_at(p, json_integer(10), "x");
    assert_string_equal(bb_content(&r), "ERROR:\nInvalid `insert_line` parameter: 10. It should be "
                                        "within the range of allowed values: [0, 2]");
    bb_reply_free(&r);
    r = insert_at(p, json_integer(-1), "x");
    assert_string_equal(bb_content(&r), "ERROR:\nInvalid `insert_line` parameter: -1. It should be "
                                        "within the range of allowed values: [0, 2]");
    bb_reply_free(&r);
    r = insert_at(p, json_string("abc"), "x");
    assert_string_equal(bb_content(&r), "ERROR:\nInvalid insert_line value: 'abc'. Expected an "
                                        "integer.");
    assert_string_equal(bb_extra_str(&r, "diff"), "");
    bb_reply_free(&r);
    r = edit(json_pack("{s:s, s:s, s:s}", "command", "insert", "path", p, "new_str", "x"));
    assert_string_equal(bb_content(&r),
                        "ERROR:\nParameter `insert_line` is required for command: insert.");
    bb_reply_free(&r);
    r = edit(json_pack("{s:s, s:s, s:i, s:n}", "command", "insert", "path", p, "insert_line", 1,
                       "new_str"));
    assert_string_equal(bb_content(&r),
                        "ERROR:\nParameter `new_str` is required for command: insert.");
    bb_reply_free(&r);
    assert_file(p, "Line 1\nLine 2", 13);
}

/* ---- editor: undo_edit ------------------------------------------------------------------ */

static void test_undo_steps(void **state)
{
    (void)state;
    const char *p = wpath("u1.txt");
    put_text(p, "v0\n");
    for (int i = 0; i < 3; i++) {
        struct bb_reply r = replace(p, f("v%d", i), f("v%d", i + 1));
        bb_reply_free(&r);
    }
    assert_file(p, "v3\n", 3);
    struct bb_reply r = edit(json_pack("{s:s, s:s}", "command", "undo_edit", "path", p));
    assert_string_equal(bb_content(&r),
                        f("Last edit to %s undone successfully. Here's the result of running "
                          "`cat -n` on %s:\n     1\tv2\n     2\t\n",
                          p, p));
    assert_string_equal(bb_extra_str(&r, "diff"), f("--- %s\n+++ %s\n@@ -1 +1 @@\n-v3\n+v2", p, p));
    bb_reply_free(&r);
    assert_file(p, "v2\n", 3);
    r = edit(json_pack("{s:s, s:s}", "command", "undo_edit", "path", p));
    bb_reply_free(&r);
    assert_file(p, "v1\n", 3);
    r = edit(json_pack("{s:s, s:s}", "command", "undo_edit", "path", p));
    bb_reply_free(&r);
    assert_file(p, "v0\n", 3);
    expect_edit("undo_edit", p, f("ERROR:\nNo edit history found for %s.", p));
    assert_file(p, "v0\n", 3);
}

static void test_undo_keeps_ten(void **state)
{
    (void)state;
    const char *p = wpath("u2.txt");
    put_text(p, "n0");
    for (int i = 0; i < 12; i++) {
        struct bb_reply r = replace(p, f("n%d", i), f("n%d", i + 1));
        bb_reply_free(&r);
    }
    for (int i = 0; i < 10; i++) {
        struct bb_reply r = edit(json_pack("{s:s, s:s}", "command", "undo_edit", "path", p));
        bb_assert_prefix(bb_content(&r), "Last edit to");
        bb_reply_free(&r);
    }
    assert_file(p, "n2", 2);
    expect_edit("undo_edit", p, f("ERROR:\nNo edit history found for %s.", p));
}

/* ---- encodings -------------------------------------------------------------------------- */

#define CP1251_ORIG                                                                                \
    "# -*- coding: cp1251 -*-\x0a\x0a# \xd2\xe5\xf1\xf2\xee\xe2\xfb\xe9 \xf4\xe0\xe9\xeb \xf1 "    \
    "\xea\xe8\xf0\xe8\xeb\xeb\xe8\xf6\xe5\xe9\x0atext = \x22\xcf\xf0\xe8\xe2\xe5\xf2, "            \
    "\xec\xe8\xf0!\x22\x0anumbers = [1, 2, 3, 4, 5]\x0amessage = \x22\xdd\xf2\xee "                \
    "\xf2\xe5\xf1\xf2\xee\xe2\xe0\xff \xf1\xf2\xf0\xee\xea\xe0\x22\x0a"
#define CP1251_REPL                                                                                \
    "# -*- coding: cp1251 -*-\x0a\x0a# \xd2\xe5\xf1\xf2\xee\xe2\xfb\xe9 \xf4\xe0\xe9\xeb \xf1 "    \
    "\xea\xe8\xf0\xe8\xeb\xeb\xe8\xf6\xe5\xe9\x0atext = "                                          \
    "\x22\xc7\xe4\xf0\xe0\xe2\xf1\xf2\xe2\xf3\xe9, \xec\xe8\xf0!\x22\x0anumbers = [1, 2, 3, 4, "   \
    "5]\x0amessage = \x22\xdd\xf2\xee \xf2\xe5\xf1\xf2\xee\xe2\xe0\xff "                           \
    "\xf1\xf2\xf0\xee\xea\xe0\x22\x0a"
#define CP1251_INS                                                                                 \
    "# -*- coding: cp1251 -*-\x0a\x0a# \xd2\xe5\xf1\xf2\xee\xe2\xfb\xe9 \xf4\xe0\xe9\xeb \xf1 "    \
    "\xea\xe8\xf0\xe8\xeb\xeb\xe8\xf6\xe5\xe9\x0atext = "                                          \
    "\x22\xc7\xe4\xf0\xe0\xe2\xf1\xf2\xe2\xf3\xe9, \xec\xe8\xf0!\x22\x0anew_var = "                \
    "\x22\xcd\xee\xe2\xe0\xff \xef\xe5\xf0\xe5\xec\xe5\xed\xed\xe0\xff\x22\x0anumbers = [1, 2, "   \
    "3, 4, 5]\x0amessage = \x22\xdd\xf2\xee \xf2\xe5\xf1\xf2\xee\xe2\xe0\xff "                     \
    "\xf1\xf2\xf0\xee\xea\xe0\x22\x0a"

static void test_cp1251_round_trip(void **state)
{
    (void)state;
    const char *p = wpath("cyr.py");
    bb_write_file(p, CP1251_ORIG, sizeof CP1251_ORIG - 1);
    struct bb_reply r = edit(json_pack("{s:s, s:s}", "command", "view", "path", p));
    bb_assert_contains(bb_content(&r), "     3\t# Тестовый файл с кириллицей\n     4\ttext = "
                                       "\"Привет, мир!\"\n");
    bb_reply_free(&r);
    r = view_range(p, json_pack("[i, i]", 3, 4));
    assert_string_equal(bb_content(&r), f("Here's the result of running `cat -n` on %s:\n     3\t# "
                                          "Тестовый файл с кириллицей\n     4\ttext = \"Привет, "
                                          "мир!\"\n",
                                          p));
    bb_reply_free(&r);
    r = replace(p, "Привет, мир!", "Здравствуй, мир!");
    bb_assert_contains(bb_content(&r), "Здравствуй, мир!");
    bb_reply_free(&r);
    assert_file(p, CP1251_REPL, sizeof CP1251_REPL - 1);
    r = insert_at(p, json_integer(4), "new_var = \"Новая переменная\"");
    bb_assert_contains(bb_content(&r), "     5\tnew_var = \"Новая переменная\"\n");
    bb_reply_free(&r);
    assert_file(p, CP1251_INS, sizeof CP1251_INS - 1);
    /* A character cp1251 has no byte for: refused, file untouched. */
    r = replace(p, "мир", "中");
    assert_string_equal(bb_content(&r), f("ERROR:\nRan into 'charmap' codec can't encode character "
                                          "'\\u4e2d' in position 75: character maps to <undefined> "
                                          "while trying to write to %s",
                                          p));
    bb_reply_free(&r);
    assert_file(p, CP1251_INS, sizeof CP1251_INS - 1);
    for (int i = 0; i < 2; i++) {
        r = edit(json_pack("{s:s, s:s}", "command", "undo_edit", "path", p));
        bb_reply_free(&r);
    }
    assert_file(p, CP1251_ORIG, sizeof CP1251_ORIG - 1);
}

static void test_latin1_round_trip(void **state)
{
    (void)state;
    const char *p = wpath("lat.txt");
    bb_write_file(p, "caf\xe9 cr\xe8me\nna\xefve\n", 17);
    struct bb_reply r = replace(p, "crème", "brûlée");
    assert_string_equal(bb_content(&r),
                        f("The file %s has been edited. Here's the result of running `cat -n` on "
                          "a snippet of %s:\n     1\tcafé brûlée\n     2\tnaïve\n     3\t\nReview "
                          "the changes and make sure they are as expected. Edit the file again if "
                          "necessary.",
                          p, p));
    assert_string_equal(bb_extra_str(&r, "diff"),
                        f("--- %s\n+++ %s\n@@ -1 +1 @@\n-café crème\n+café brûlée", p, p));
    bb_reply_free(&r);
    assert_file(p,
                "caf\xe9 br\xfbl\xe9"
                "e\nna\xefve\n",
                18);
    r = replace(p, "naïve", "€");
    assert_string_equal(bb_content(&r),
                        f("ERROR:\nRan into 'latin-1' codec can't encode character "
                          "'\\u20ac' in position 12: ordinal not in range(256) while "
                          "trying to write to %s",
                          p));
    bb_reply_free(&r);
}

/* ---- refusals and path checks ----------------------------------------------------------- */

static void test_binary_and_size_refused(void **state)
{
    (void)state;
    const char *p = wpath("bin.sql");
    bb_write_file(p, "Some text\0with binary\0content", 29);
    const char *msg = f("ERROR:\nFile validation failed for %s: File appears to be binary and this "
                        "file type cannot be read or edited by this tool.",
                        p);
    expect_edit("view", p, msg);
    struct bb_reply r = replace(p, "Some", "Any");
    assert_string_equal(bb_content(&r), msg);
    bb_reply_free(&r);
    const char *big = wpath("big.sql");
    int fd = open(big, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 11 * 1024 * 1024), 0);
    close(fd);
    msg = f("ERROR:\nFile validation failed for %s: File is too large (11.0MB). Maximum allowed "
            "size is 10MB.",
            big);
    expect_edit("view", big, msg);
    r = insert_at(big, json_integer(0), "x");
    assert_string_equal(bb_content(&r), msg);
    bb_reply_free(&r);
}

static void test_path_checks(void **state)
{
    (void)state;
    put_text(wpath("pc.txt"), "x");
    expect_edit("view", "pc.txt",
                f("ERROR:\nInvalid `path` parameter: pc.txt. The path should be an absolute path, "
                  "starting with `/`. Maybe you meant %s?",
                  wpath("pc.txt")));
    expect_edit("view", "nowhere.txt",
                "ERROR:\nInvalid `path` parameter: nowhere.txt. The path should be an absolute "
                "path, starting with `/`.");
    const char *missing = wpath("missing.txt");
    expect_edit("view", missing,
                f("ERROR:\nInvalid `path` parameter: %s. The path %s does not exist. Please "
                  "provide a valid path.",
                  missing, missing));
    expect_edit("undo_edit", ex.work,
                f("ERROR:\nInvalid `path` parameter: %s. The path %s is a directory and only the "
                  "`view` command can be used on directories.",
                  ex.work, ex.work));
    const char *pdf = wpath("doc.PDF");
    put_text(pdf, "%PDF-1.4");
    expect_edit("str_replace", pdf,
                f("ERROR:\nInvalid `path` parameter: %s. The path %s points to a binary file "
                  "(.PDF) and only the `view` command can be used on supported binary files.",
                  pdf, pdf));
    expect_edit("frob", wpath("pc.txt"),
                "ERROR:\nUnrecognized command frob. The allowed commands for the oh_editor tool "
                "are: view, create, str_replace, insert, undo_edit");
}

static void test_bad_requests(void **state)
{
    (void)state;
    static const struct {
        const char *body, *detail;
    } cases[] = {
        {"{\"action\": {\"action\": \"edit\", \"args\": {\"path\": \"/x\", \"impl_source\": "
         "\"llm_based_edit\"}}}",
         "impl_source \"llm_based_edit\" is not run by the executor"},
        {"{\"action\": {\"action\": \"read\", \"args\": {}}}", "Missing field: action.args.path"},
        {"{\"action\": {\"action\": \"write\", \"args\": {\"path\": \"x\"}}}",
         "Missing field: action.args.content"},
        {"{\"action\": {\"action\": \"read\", \"args\": {\"path\": \"x\", \"start\": \"1\"}}}",
         "Invalid field: action.args.start (expected an integer)"},
        {"{\"action\": {\"action\": \"edit\", \"args\": {\"path\": 5}}}",
         "Invalid field: action.args.path (expected a string)"},
        {"{\"action\": {\"action\": \"read\", \"args\": {\"path\": \"a\\u0000b\"}}}",
         "Invalid field: action.args.path (contains a NUL byte)"},
        {"{\"action\": {\"action\": \"write\", \"args\": {\"path\": \"x\", \"content\": "
         "\"\", \"view_range\": [1, 2]}}}",
         "Unknown field: action.args.view_range (write takes: path, content, start, end)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct bb_reply r = bb_http(&ex, "POST", "/execute_action", cases[i].body);
        assert_int_equal(r.status, 400);
        bb_assert_contains(json_string_value(json_object_get(r.json, "detail")), cases[i].detail);
        bb_reply_free(&r);
    }
}

/* ---- as another user (root only) -------------------------------------------------------- */

/* ---- more of the openhands-aci editor tests --------------------------------------------- */

static void test_view_large_directory_clipped(void **state)
{
    (void)state;
    const char *d = wpath("large_dir");
    assert_int_equal(mkdir(d, 0755), 0);
    for (int i = 0; i < 1000; i++)
        put_text(f("%s/file_%d.txt", d, i), "content");
    struct bb_reply r = edit(json_pack("{s:s, s:s}", "command", "view", "path", d));
    assert_string_equal(bb_observation(&r), "edit");
    bb_assert_prefix(bb_content(&r),
                     f("Here's the files and directories up to 2 levels deep in %s, excluding "
                       "hidden items:\n%s/\n",
                       d, d));
    bb_assert_contains(bb_content(&r), "<response clipped><NOTE>Due to the max output limit, "
                                       "only part of this directory has been shown to you. You "
                                       "should use `ls -la` instead to view large directories "
                                       "incrementally.</NOTE>");
    bb_reply_free(&r);
}

static void test_view_directory_on_hidden_path(void **state)
{
    (void)state;
    /* The viewed directory may be hidden itself; below it, hidden entries are left out and
     * only the first level's are counted. */
    const char *d = wpath(".hidden_test_dir");
    static const char *const tree[] = {"visible1.txt",
                                       ".hidden1",
                                       "visible_dir/",
                                       "visible_dir/visible2.txt",
                                       "visible_dir/.hidden2",
                                       ".hidden_dir/",
                                       ".hidden_dir/visible3.txt",
                                       ".hidden_dir/.hidden3",
                                       NULL};
    make_tree(d, tree);
    expect_edit("view", d,
                f("Here's the files and directories up to 2 levels deep in %s, excluding hidden "
                  "items:\n%s/\n%s/visible1.txt\n%s/visible_dir/\n%s/visible_dir/visible2.txt\n\n"
                  "2 hidden files/directories in this directory are excluded. You can use 'ls -la "
                  "%s' to see them.",
                  d, d, d, d, d, d));
}

static void test_binary_bytes_and_text_types(void **state)
{
    (void)state;
    /* charset-normalizer finds no encoding for these bytes and openhands-aci calls the file
     * binary; this rule (docs/protocol.md) reads them as cp1251. */
    const char *p = wpath("junk.bin");
    bb_write_file(p, "\x8f\x8f\x8f\x8f", 4);
    expect_edit("view", p, f("Here's the result of running `cat -n` on %s:\n     1\tЏЏЏЏ\n", p));
    struct bb_reply r;
    /* A .sql file of text is text. */
    p = wpath("query.sql");
    put_text(p, "\n    SELECT *\n    FROM users\n    WHERE id = 1;\n    ");
    r = edit(json_pack("{s:s, s:s}", "command", "view", "path", p));
    bb_assert_contains(bb_content(&r), "     2\t    SELECT *\n");
    assert_null(strstr(bb_content(&r), "binary"));
    bb_reply_free(&r);
}

static void test_encodings_kept_per_file(void **state)
{
    (void)state;
    /* test_mixed_encoding_workflow: a UTF-8 Cyrillic file stays UTF-8 beside a cp1251 one. */
    const char *u = wpath("utf8.py"), *c = wpath("cp1251.py");
    put_text(u, "# -*- coding: utf-8 -*-\ntext_utf8 = \"Текст в кодировке UTF-8\"\n");
    static const char orig_c[] = "# -*- coding: cp1251 -*-\ntext_cp1251 = \"\xd2\xe5\xea\xf1\xf2 "
                                 "\xe2 \xea\xee\xe4\xe8\xf0\xee\xe2\xea\xe5 CP1251\"\n";
    bb_write_file(c, orig_c, sizeof orig_c - 1);
    struct bb_reply r = replace(c, "Текст в кодировке CP1251", "Измененный текст в CP1251");
    bb_assert_contains(bb_content(&r), "Измененный текст в CP1251");
    bb_reply_free(&r);
    r = replace(u, "Текст в кодировке UTF-8", "Измененный текст в UTF-8");
    bb_assert_contains(bb_content(&r), "Измененный текст в UTF-8");
    bb_reply_free(&r);
    const char *want_u = "# -*- coding: utf-8 -*-\ntext_utf8 = \"Измененный текст в UTF-8\"\n";
    assert_file(u, want_u, strlen(want_u));
    const char *want_c = "# -*- coding: cp1251 -*-\ntext_cp1251 = \"\xc8\xe7\xec\xe5\xed\xe5"
                         "\xed\xed\xfb\xe9 \xf2\xe5\xea\xf1\xf2 \xe2 CP1251\"\n";
    assert_file(c, want_c, strlen(want_c));
    /* test_create_non_utf8_file: a new file is written as UTF-8, whatever it declares. */
    const char *n = wpath("new_cyr.py");
    const char *text = "# -*- coding: cp1251 -*-\n\n# Новый файл с кириллицей\ngreeting = "
                       "\"Привет из нового файла!\"\n";
    r = edit(json_pack("{s:s, s:s, s:s}", "command", "create", "path", n, "file_text", text));
    bb_assert_contains(bb_content(&r), "File created successfully");
    bb_reply_free(&r);
    assert_file(n, text, strlen(text));
    r = edit(json_pack("{s:s, s:s}", "command", "view", "path", n));
    bb_assert_contains(bb_content(&r), "Привет из нового файла!");
    bb_reply_free(&r);
}

static void test_path_rule(void **state)
{
    (void)state;
    /* `..` is the kernel's to resolve and stays in the reported path. */
    assert_int_equal(mkdir(wpath("pr"), 0755), 0);
    put_text(wpath("pr.txt"), "dots\n");
    struct bb_reply r = read_file("pr/../pr.txt");
    assert_string_equal(bb_observation(&r), "read");
    assert_string_equal(bb_content(&r), "dots\n");
    assert_string_equal(bb_extra_str(&r, "path"), wpath("pr/../pr.txt"));
    bb_reply_free(&r);
    /* No path filtering: a symlink out of the workspace is followed with the agent's rights. */
    put_text(bb_path(ex.dir, "outside.txt"), "outside\n");
    assert_int_equal(symlink(bb_path(ex.dir, "outside.txt"), wpath("pr/out")), 0);
    r = read_file("pr/out");
    assert_string_equal(bb_content(&r), "outside\n");
    bb_reply_free(&r);
    /* /proc/self is the file process's own, which holds nothing of the executor: no API key
     * variable in its environment (the harness gives the executor TEST_API_KEY). */
    r = read_file("/proc/self/status");
    assert_string_equal(bb_observation(&r), "read");
    bb_assert_prefix(bb_content(&r), "Name:");
    bb_reply_free(&r);
}

static int start_plain(void **state)
{
    (void)state;
    return bb_start(&ex, NULL);
}

static int start_as_agent(void **state)
{
    (void)state;
    static const char *const args[] = {"--user-id", "65534", NULL};
    return bb_start(&ex, &(struct bb_options){.args = args, .dir_mode = 0755});
}

static int stop(void **state)
{
    (void)state;
    return bb_stop(&ex);
}

static void test_agent_permissions(void **state)
{
    (void)state;
    /* Made by root (this test), readable by root only. */
    const char *secret = wpath("secret.txt");
    put_text(secret, "top secret\n");
    assert_int_equal(chmod(secret, 0600), 0);
    struct bb_reply r = read_file(secret);
    assert_error_obs(&r, f("Cannot read %s: Permission denied.", secret));
    bb_reply_free(&r);
    expect_edit("view", secret,
                f("ERROR:\nRan into [Errno 13] Permission denied: '%s' while trying to read %s",
                  secret, secret));
    r = replace(secret, "top", "bottom");
    bb_assert_contains(bb_content(&r), "Permission denied");
    bb_reply_free(&r);
    assert_file(secret, "top secret\n", 11);
    /* Through a symlink it is no better. */
    assert_int_equal(symlink(secret, wpath("link.txt")), 0);
    r = read_file("link.txt");
    assert_error_obs(&r, f("Cannot read %s: Permission denied.", wpath("link.txt")));
    bb_reply_free(&r);
    /* The file process is not dumpable: its /proc/self is root's. */
    r = read_file("/proc/self/environ");
    assert_error_obs(&r, "Cannot read /proc/self/environ: Permission denied.");
    bb_reply_free(&r);
    expect_edit("view", "/proc/self/environ",
                "ERROR:\nRan into [Errno 13] Permission denied: '/proc/self/environ' while trying "
                "to read /proc/self/environ");
    /* Nor can it be written through (its files are root's), nor the executor's own. */
    r = write_file("/proc/self/oom_score_adj", "-1000");
    assert_error_obs(&r, "Cannot write /proc/self/oom_score_adj: Permission denied.");
    bb_reply_free(&r);
    char exec_environ[64];
    snprintf(exec_environ, sizeof exec_environ, "/proc/%d/environ", (int)ex.pid);
    r = read_file(exec_environ);
    assert_error_obs(&r, f("Cannot read %s: Permission denied.", exec_environ));
    bb_reply_free(&r);
    /* A directory find could not read turns the whole view into find's error, as in
     * OpenHands (find -L ... prints "find: ‘<dir>’: Permission denied" on stderr). */
    assert_int_equal(mkdir(wpath("view"), 0755), 0);
    assert_int_equal(mkdir(wpath("view/private"), 0700), 0);
    expect_edit(
        "view", wpath("view"),
        f("ERROR:\nfind: \xE2\x80\x98%s\xE2\x80\x99: Permission denied\n", wpath("view/private")));
    /* What the agent creates is the agent's. */
    r = write_file("mine/new.txt", "hi");
    assert_string_equal(bb_observation(&r), "write");
    bb_reply_free(&r);
    struct stat st;
    assert_int_equal(stat(wpath("mine/new.txt"), &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_mode & 07777, 0664);
    assert_int_equal(stat(wpath("mine"), &st), 0);
    assert_int_equal(st.st_uid, 65534);
    r = edit(json_pack("{s:s, s:s, s:s}", "command", "create", "path", wpath("made.txt"),
                       "file_text", "x"));
    bb_reply_free(&r);
    assert_int_equal(stat(wpath("made.txt"), &st), 0);
    assert_int_equal(st.st_uid, 65534);
}

int main(int argc, char **argv)
{
    if (bb_init(argc, argv) < 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_relative_and_shape),
        cmocka_unit_test(test_write_trailing_newline_rule),
        cmocka_unit_test(test_write_creates_parents),
        cmocka_unit_test(test_write_start_end_keeps_mode),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_write_diff_when_asked),
        cmocka_unit_test(test_write_diff_cut),
        cmocka_unit_test(test_read_shape_and_slicing),
        cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_read_media_as_data_urls),
        cmocka_unit_test(test_paths_relative_to_the_shell_cwd),
        cmocka_unit_test(test_fifo_refused_without_hanging),
        cmocka_unit_test(test_view_file),
        cmocka_unit_test(test_view_directory),
        cmocka_unit_test(test_view_range),
        cmocka_unit_test(test_view_clipped_at_16000_chars),
        cmocka_unit_test(test_create),
        cmocka_unit_test(test_str_replace),
        cmocka_unit_test(test_str_replace_snippet_window),
        cmocka_unit_test(test_str_replace_errors),
        cmocka_unit_test(test_str_replace_whitespace_retry),
        cmocka_unit_test(test_diff_hunks),
        cmocka_unit_test(test_insert),
        cmocka_unit_test(test_insert_errors),
        cmocka_unit_test(test_undo_steps),
        cmocka_unit_test(test_undo_keeps_ten),
        cmocka_unit_test(test_cp1251_round_trip),
        cmocka_unit_test(test_latin1_round_trip),
        cmocka_unit_test(test_binary_and_size_refused),
        cmocka_unit_test(test_path_checks),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_view_large_directory_clipped),
        cmocka_unit_test(test_view_directory_on_hidden_path),
        cmocka_unit_test(test_binary_bytes_and_text_types),
        cmocka_unit_test(test_encodings_kept_per_file),
        cmocka_unit_test(test_path_rule),
    };
    int failed = cmocka_run_group_tests_name("files", tests, start_plain, stop);
    if (geteuid() == 0) {
        const struct CMUnitTest agent_tests[] = {
            cmocka_unit_test(test_agent_permissions),
        };
        failed += cmocka_run_group_tests_name("files-as-agent", agent_tests, start_as_agent, stop);
    }
    return failed;
}
