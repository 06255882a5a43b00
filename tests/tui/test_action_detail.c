/* An action shown whole (client/action_detail.c): diff lines classified (file names only before
 * the hunks), the text of an edit, a write and a run reply, every line's class. */
#include "client/action_detail.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

static enum action_line cls(const char *line, bool in_hunks)
{
    return action_detail_diff_line(line, strlen(line), in_hunks);
}

static void test_diff_lines(void **state)
{
    (void)state;
    assert_int_equal(cls("--- /workspace/f.txt", false), ACTION_LINE_FILE);
    assert_int_equal(cls("+++ /workspace/f.txt", false), ACTION_LINE_FILE);
    assert_int_equal(cls("@@ -2 +2,2 @@", false), ACTION_LINE_HUNK);
    assert_int_equal(cls("@@ -2 +2,2 @@", true), ACTION_LINE_HUNK);
    assert_int_equal(cls("+added", true), ACTION_LINE_ADD);
    assert_int_equal(cls("-removed", true), ACTION_LINE_DEL);
    assert_int_equal(cls("+", true), ACTION_LINE_ADD);
    assert_int_equal(cls("-", true), ACTION_LINE_DEL);
    /* in the hunks, "---" is a removed "--" line and "+++" an added "++" one */
    assert_int_equal(cls("--- a comment", true), ACTION_LINE_DEL);
    assert_int_equal(cls("+++ counter", true), ACTION_LINE_ADD);
    assert_int_equal(cls(" context", true), ACTION_LINE_PLAIN);
    assert_int_equal(cls("", true), ACTION_LINE_PLAIN);
    /* only the length given counts */
    assert_int_equal(action_detail_diff_line("+x", 0, true), ACTION_LINE_PLAIN);
}

/* The class of the line that holds needle (its first occurrence). */
static enum action_line line_of(const struct action_detail *d, const char *needle)
{
    const char *p = strstr(d->text, needle);
    assert_non_null(p);
    while (p > d->text && p[-1] != '\n')
        p--;
    return action_detail_line(d, (size_t)(p - d->text));
}

static void test_edit(void **state)
{
    (void)state;
    json_t *a = json_loads(
        "{\"id\": 7, \"session_id\": \"s1\", \"kind\": \"edit\", \"summary\": \"/w/f.txt\","
        " \"state\": \"done\", \"exit_code\": null, \"duration_ms\": 1.25,"
        " \"created_at\": 1795388282.8, \"started_at\": 1795388282.8,"
        " \"finished_at\": 1795388282.9, \"risk\": \"high\", \"risk_reason\": \"a reason\","
        " \"approval\": \"approved\", \"decided_by\": \"ann (dashboard)\","
        " \"decided_at\": 1795388282.85, \"decision_reason\": \"fine\","
        " \"args\": {\"action\": \"edit\", \"args\": {\"path\": \"/w/f.txt\","
        " \"command\": \"str_replace\", \"old_str\": \"two\", \"new_str\": \"TWO\"}},"
        " \"observation\": {\"observation\": \"edit\", \"content\": \"edited\\n  1\\tone\","
        " \"extras\": {\"diff\": \"--- /w/f.txt\\n+++ /w/f.txt\\n@@ -2 +2 @@\\n-two\\n+TWO\\n"
        "--- dashes\"}}}",
        0, NULL);
    assert_non_null(a);
    struct action_detail d;
    assert_int_equal(action_detail_build(a, &d), 0);
    assert_non_null(strstr(d.text, "#7 edit, done, 1.2 ms\n"));
    assert_non_null(strstr(d.text, "session s1\n"));
    assert_non_null(strstr(d.text, "risk high: a reason\n"));
    assert_non_null(strstr(d.text, "approval approved by ann (dashboard) at 20"));
    assert_non_null(strstr(d.text, ": fine\n"));
    assert_non_null(strstr(d.text, "$ /w/f.txt\n"));
    assert_non_null(strstr(d.text, "\"old_str\": \"two\""));
    /* the diff before the observation, which comes whole */
    assert_true(strstr(d.text, "\ndiff\n") < strstr(d.text, "\nobservation (edit, "));
    assert_non_null(strstr(d.text, "edited\n  1\tone\n"));
    assert_int_equal(strlen(d.text), d.len);

    assert_int_equal(line_of(&d, "diff"), ACTION_LINE_TITLE);
    assert_int_equal(line_of(&d, "observation (edit"), ACTION_LINE_TITLE);
    assert_int_equal(line_of(&d, "--- /w/f.txt"), ACTION_LINE_FILE);
    assert_int_equal(line_of(&d, "+++ /w/f.txt"), ACTION_LINE_FILE);
    assert_int_equal(line_of(&d, "@@ -2"), ACTION_LINE_HUNK);
    assert_int_equal(line_of(&d, "-two"), ACTION_LINE_DEL);
    assert_int_equal(line_of(&d, "+TWO"), ACTION_LINE_ADD);
    assert_int_equal(line_of(&d, "--- dashes"), ACTION_LINE_DEL); /* after the hunk header */
    /* outside the diff a leading - or + means nothing */
    assert_int_equal(line_of(&d, "risk high"), ACTION_LINE_PLAIN);
    assert_int_equal(line_of(&d, "  1\tone"), ACTION_LINE_PLAIN);
    action_detail_free(&d);
    assert_null(d.text);
    json_decref(a);
}

static void test_write_and_run(void **state)
{
    (void)state;
    json_t *w = json_loads("{\"id\": 3, \"kind\": \"write\", \"summary\": \"/w/n.txt\","
                           " \"state\": \"done\", \"approval\": \"none\","
                           " \"args\": {\"action\": \"write\", \"args\": {\"path\": \"/w/n.txt\","
                           " \"content\": \"+a\\n-b\\n\"}},"
                           " \"observation\": {\"observation\": \"write\", \"content\": \"\","
                           " \"message\": \"I wrote to the file /w/n.txt.\"}}",
                           0, NULL);
    struct action_detail d;
    assert_int_equal(action_detail_build(w, &d), 0);
    assert_non_null(strstr(d.text, "approval not asked\n"));
    assert_non_null(
        strstr(d.text, "content written (6 bytes; the file's earlier content is not recorded)"));
    assert_non_null(strstr(d.text, "\n+a\n-b\n"));
    assert_non_null(strstr(d.text, "I wrote to the file /w/n.txt.\n"));
    assert_int_equal(d.diff_start, d.diff_end); /* no diff */
    assert_int_equal(line_of(&d, "+a"), ACTION_LINE_PLAIN);
    assert_int_equal(line_of(&d, "-b"), ACTION_LINE_PLAIN);
    assert_int_equal(line_of(&d, "content written"), ACTION_LINE_TITLE);
    action_detail_free(&d);
    json_decref(w);

    json_t *r =
        json_loads("{\"id\": 4, \"kind\": \"run\", \"summary\": \"seq 3\","
                   " \"state\": \"done\", \"exit_code\": 1, \"approval\": \"rejected\","
                   " \"decided_by\": \"bob\", \"error\": \"boom\","
                   " \"observation_size\": 2000000,"
                   " \"args\": {\"action\": \"run\", \"args\": {\"command\": \"seq 3\"}},"
                   " \"observation\": {\"observation\": \"run\", \"content\": \"1\\n2\\n3\"}}",
                   0, NULL);
    assert_int_equal(action_detail_build(r, &d), 0);
    assert_non_null(strstr(d.text, "#4 run, done, exit code 1\n"));
    assert_non_null(strstr(d.text, "approval rejected by bob\n"));
    assert_non_null(strstr(d.text, "error: boom\n"));
    assert_non_null(strstr(d.text, "$ seq 3\n\nobservation (run, 5 bytes)\n1\n2\n3\n"));
    assert_non_null(strstr(d.text, "2000000 bytes in all"));
    assert_null(strstr(d.text, "\"command\"")); /* a run's arguments are its command */
    action_detail_free(&d);
    json_decref(r);

    /* nothing recorded yet */
    json_t *p = json_loads("{\"id\": 5, \"kind\": \"run\", \"state\": \"pending\"}", 0, NULL);
    assert_int_equal(action_detail_build(p, &d), 0);
    assert_non_null(strstr(d.text, "(no observation recorded)"));
    action_detail_free(&d);
    json_decref(p);
}

/* A write over a file: its diff comes from the action (the engine records it beside the
 * observation), classified as an edit's is. */
static void test_write_with_diff(void **state)
{
    (void)state;
    json_t *w = json_loads("{\"id\": 9, \"kind\": \"write\", \"summary\": \"/w/o.txt\","
                           " \"state\": \"done\", \"approval\": \"none\","
                           " \"args\": {\"action\": \"write\", \"args\": {\"path\": \"/w/o.txt\","
                           " \"content\": \"one\\nTWO\"}},"
                           " \"diff\": \"--- /w/o.txt\\n+++ /w/o.txt\\n@@ -2 +2 @@\\n-two\\n+TWO\","
                           " \"observation\": {\"observation\": \"write\", \"content\": \"\","
                           " \"extras\": {\"path\": \"/w/o.txt\"}}}",
                           0, NULL);
    assert_non_null(w);
    struct action_detail d;
    assert_int_equal(action_detail_build(w, &d), 0);
    assert_true(d.diff_start < d.diff_end);
    assert_non_null(strstr(d.text, "content written (7 bytes; what it changed in the file is the "
                                   "diff below)\n"));
    assert_true(strstr(d.text, "\ndiff\n") < strstr(d.text, "\nobservation (write, "));
    assert_int_equal(line_of(&d, "diff"), ACTION_LINE_TITLE);
    assert_int_equal(line_of(&d, "--- /w/o.txt"), ACTION_LINE_FILE);
    assert_int_equal(line_of(&d, "@@ -2"), ACTION_LINE_HUNK);
    assert_int_equal(line_of(&d, "-two"), ACTION_LINE_DEL);
    assert_int_equal(line_of(&d, "+TWO"), ACTION_LINE_ADD);
    action_detail_free(&d);
    json_decref(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_lines),
        cmocka_unit_test(test_write_with_diff),
        cmocka_unit_test(test_edit),
        cmocka_unit_test(test_write_and_run),
    };
    return cmocka_run_group_tests_name("action_detail", tests, NULL, NULL);
}
