/* executor/lint.c against the host's python3 and bash: the wording, the line of an error the
 * change made, an error the file had before (moved by the change or not) not blamed on it, a
 * file type without a linter, a linter missing from the PATH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lint.h"

static char *lint(const char *path, const char *old, const char *new_text)
{
    struct buf out = BUF_INIT;
    assert_int_equal(
        lint_changes(&out, getenv("PATH"), path, old, strlen(old), new_text, strlen(new_text)), 0);
    return out.data ? out.data : strdup("");
}

static void test_python(void **state)
{
    const char *good = "import os\n\n\ndef f():\n    return 1\n";
    char *r = lint("/w/a.py", good, "import os\n\n\ndef f():\n    return (1\n");
    assert_non_null(strstr(r, "Linting issues found in the changes:\n- Line 5, Column "));
    assert_non_null(strstr(r, "E999 SyntaxError"));
    assert_int_equal(r[strlen(r) - 1], '\n');
    free(r);
    r = lint("/w/a.py", good, "import os\n\n\ndef f():\n    return 2\n");
    assert_string_equal(r, "No linting issues found in the changes.");
    free(r);
    /* broken before; the change adds a line above the error, which moves down */
    const char *broken = "import os\n\ndef f():\n    return (1\n";
    r = lint("/w/a.py", broken, "import os\nimport sys\n\ndef f():\n    return (1\n");
    assert_string_equal(r, "No linting issues found in the changes.");
    free(r);
    /* broken before, the same line rewritten with the error kept: it is the change's line */
    r = lint("/w/a.py", "x = (1\n", "y = (1\n");
    assert_non_null(strstr(r, "- Line 1, Column "));
    free(r);
}

static void test_shell_and_others(void **state)
{
    char *r = lint("/w/s.sh", "echo a\n", "if true; then\necho a\n");
    assert_non_null(strstr(r, "Linting issues found in the changes:\n- Line "));
    free(r);
    r = lint("/w/notes.txt", "a\n", "(b\n");
    assert_string_equal(r, "No linting issues found in the changes.");
    free(r);
    /* no linter on the PATH: nothing can be found */
    struct buf out = BUF_INIT;
    assert_int_equal(lint_changes(&out, "/nonexistent", "/w/a.py", "x = 1\n", 6, "x = (\n", 6), 0);
    assert_string_equal(out.data, "No linting issues found in the changes.");
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_python),
        cmocka_unit_test(test_shell_and_others),
    };
    return cmocka_run_group_tests_name("lint", tests, NULL, NULL);
}
