/* Integration test of auto-lint (OpenHands' enable_auto_lint) in a real sandbox: off by
 * default; on (session option or the config key sandbox.enable_auto_lint), an edit that
 * introduces a syntax error is told so with its line in OpenHands' editor wording; an error
 * the file had before the edit is not blamed on it; insert, create and write lint too; a
 * shell script goes through `bash -n`. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REVIEW "Review the changes and make sure they are as expected."

/* One edit action; returns the observation's content (malloc'd). */
static char *edit(struct engine_proc *e, const char *id, json_t *args)
{
    json_t *body = json_pack("{s:{s:s,s:o}}", "action", "action", "edit", "args", args);
    char *text = json_dumps(body, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    json_t *obs = api_json(e, "POST", path, text, 200);
    char *content = strdup(jstr(obs, "content") ? jstr(obs, "content") : "");
    json_decref(obs);
    free(path);
    free(text);
    json_decref(body);
    return content;
}

static char *create(struct engine_proc *e, const char *id, const char *path, const char *text)
{
    return edit(e, id,
                json_pack("{s:s,s:s,s:s}", "command", "create", "path", path, "file_text", text));
}

static char *replace(struct engine_proc *e, const char *id, const char *path, const char *old,
                     const char *new_str)
{
    return edit(e, id,
                json_pack("{s:s,s:s,s:s,s:s}", "command", "str_replace", "path", path, "old_str",
                          old, "new_str", new_str));
}

static void test_off_by_default(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    assert_null(jpath(s, "options.enable_auto_lint"));
    char *out = create(harness_eng, id, "/workspace/a.py", "def f():\n    return 1\n");
    assert_string_equal(out, "File created successfully at: /workspace/a.py");
    free(out);
    out = replace(harness_eng, id, "/workspace/a.py", "return 1", "return (1");
    assert_non_null(strstr(out, "has been edited"));
    assert_null(strstr(out, "inting"));
    free(out);
    session_delete(harness_eng, id);
    json_decref(s);
}

static void test_lints_what_the_edit_introduced(void **state)
{
    json_t *s = session_new(harness_eng, "{\"enable_auto_lint\": true}");
    const char *id = jstr(s, "id");
    assert_true(json_is_true(jpath(s, "options.enable_auto_lint")));
    free(create(harness_eng, id, "/workspace/a.py", "import os\n\n\ndef f():\n    return 1\n"));

    /* a clean edit */
    char *out = replace(harness_eng, id, "/workspace/a.py", "return 1", "return 2");
    assert_non_null(strstr(out, "\n\nNo linting issues found in the changes.\n" REVIEW));
    free(out);

    /* a syntax error on line 5, with its line and column, before the review line */
    out = replace(harness_eng, id, "/workspace/a.py", "return 2", "return (2");
    const char *want = "\n\nLinting issues found in the changes:\n- Line 5, Column ";
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "SyntaxError"));
    assert_non_null(strstr(out, "\n\n" REVIEW));
    free(out);

    /* the file is broken already: an edit elsewhere (shifting the error a line down) is not
     * blamed for it */
    out = replace(harness_eng, id, "/workspace/a.py", "import os", "import os\nimport sys");
    assert_non_null(strstr(out, "No linting issues found in the changes."));
    assert_null(strstr(out, "Linting issues found"));
    free(out);

    /* insert lints too, and names the new error's line */
    free(create(harness_eng, id, "/workspace/b.py", "x = 1\ny = 2\n"));
    out = edit(harness_eng, id,
               json_pack("{s:s,s:s,s:i,s:s}", "command", "insert", "path", "/workspace/b.py",
                         "insert_line", 1, "new_str", "def g(:"));
    assert_non_null(strstr(out, "Linting issues found in the changes:\n- Line 2, Column "));
    free(out);

    /* another language the image has a checker for: sh -n / bash -n */
    free(create(harness_eng, id, "/workspace/c.sh", "echo a\n"));
    out = replace(harness_eng, id, "/workspace/c.sh", "echo a", "if true; then\necho a");
    assert_non_null(strstr(out, "Linting issues found in the changes:\n- Line "));
    free(out);

    /* create lints the new text; a write action's content is the lint of its change */
    out = create(harness_eng, id, "/workspace/d.py", "x = 1\nif x\n    pass\n");
    assert_non_null(
        strstr(out, "File created successfully at: /workspace/d.py\n\nLinting issues found in "
                    "the changes:\n- Line 2, Column "));
    free(out);
    json_t *w = json_pack("{s:{s:s,s:{s:s,s:s}}}", "action", "action", "write", "args", "path",
                          "/workspace/e.py", "content", "def h():\n    return [1\n");
    char *text = json_dumps(w, JSON_COMPACT);
    char *wp = strdupf("/v1/sessions/%s/execute_action", id);
    json_t *obs = api_json(harness_eng, "POST", wp, text, 200);
    assert_string_equal(jstr(obs, "observation"), "write");
    assert_non_null(strstr(jstr(obs, "content"), "Linting issues found in the changes:\n- Line 2"));
    json_decref(obs);
    free(text);
    json_decref(w);
    /* the same file written again, broken the same way: nothing new */
    w = json_pack("{s:{s:s,s:{s:s,s:s}}}", "action", "action", "write", "args", "path",
                  "/workspace/e.py", "content", "# header\ndef h():\n    return [1\n");
    text = json_dumps(w, JSON_COMPACT);
    obs = api_json(harness_eng, "POST", wp, text, 200);
    assert_string_equal(jstr(obs, "content"), "No linting issues found in the changes.");
    json_decref(obs);
    free(text);
    json_decref(w);
    free(wp);

    /* a file type without a linter: nothing found */
    free(create(harness_eng, id, "/workspace/notes.txt", "one\n"));
    out = replace(harness_eng, id, "/workspace/notes.txt", "one", "(two");
    assert_non_null(strstr(out, "No linting issues found in the changes."));
    free(out);
    session_delete(harness_eng, id);
    json_decref(s);
}

static void test_config_key(void **state)
{
    char dir[] = "/tmp/paddock-autolint-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *file = strdupf("%s/config.toml", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("[sandbox]\nenable_auto_lint = true\n", f);
    fclose(f);
    char *env = strdupf("PADDOCK_CONFIG=%s", file);
    struct engine_proc *e = engine_new();
    e->extra_env[0] = env;
    assert_int_equal(engine_start(e), 0);
    json_t *s = session_new(e, NULL);
    free(create(e, jstr(s, "id"), "/workspace/a.py", "def f():\n    return 1\n"));
    char *out = replace(e, jstr(s, "id"), "/workspace/a.py", "return 1", "return (1");
    assert_non_null(strstr(out, "Linting issues found in the changes:\n- Line 2, Column "));
    free(out);
    /* a session may still turn it off */
    json_t *off = session_new(e, "{\"enable_auto_lint\": false}");
    free(create(e, jstr(off, "id"), "/workspace/a.py", "def f():\n    return 1\n"));
    out = replace(e, jstr(off, "id"), "/workspace/a.py", "return 1", "return (1");
    assert_null(strstr(out, "inting"));
    free(out);
    session_delete(e, jstr(s, "id"));
    session_delete(e, jstr(off, "id"));
    json_decref(s);
    json_decref(off);
    assert_int_equal(engine_stop(e), 0);
    assert_int_equal(engine_destroy(e), 0);
    unlink(file);
    rmdir(dir);
    free(file);
    free(env);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_by_default),
        cmocka_unit_test(test_lints_what_the_edit_introduced),
        cmocka_unit_test(test_config_key),
    };
    int failed = cmocka_run_group_tests_name("autolint", tests, harness_group_setup,
                                             harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
