/* The Changes tab's list (ui/changeset.c): a reply parsed, sorted in tree order, counted per
 * kind, bad entries left out, a bad reply changing nothing, markers, names and the filter. */
#include "ui/changeset.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <string.h>

static const char *const reply_text =
    "{\"changes\": ["
    " {\"path\": \"/workspace/b.txt\", \"kind\": \"added\", \"where\": \"workspace\"},"
    " {\"path\": \"/workspace/a-b\", \"kind\": \"deleted\", \"where\": \"workspace\"},"
    " {\"path\": \"/workspace/a/x\", \"kind\": \"changed\", \"where\": \"workspace\","
    "  \"action_id\": 12},"
    " {\"path\": \"/tmp/evil\\u001b]0;t\\u0007\", \"kind\": \"added\", \"where\": \"container\"},"
    " {\"path\": \"/workspace/odd\", \"kind\": \"renamed\"},"
    " {\"kind\": \"added\"},"
    " {\"path\": \"/workspace/a\", \"kind\": \"added\", \"where\": \"workspace\"}"
    "], \"total\": 9, \"truncated\": true, \"source\": \"stored\", \"at\": 1795388000.5,"
    " \"notes\": [\"a note\"]}";

static void test_parse(void **state)
{
    (void)state;
    json_t *reply = json_loads(reply_text, 0, NULL);
    assert_non_null(reply);
    struct changeset set = {0};
    const char *err = NULL;
    assert_int_equal(changeset_parse(reply, &set, &err), 0);
    json_decref(reply);
    /* an unknown kind and a missing path are left out */
    assert_int_equal(set.n, 5);
    /* tree order: a directory, then what is under it, before a sibling sharing its prefix */
    assert_string_equal(set.v[0].path, "/tmp/evil\x1b]0;t\x07");
    assert_string_equal(set.v[1].path, "/workspace/a");
    assert_string_equal(set.v[2].path, "/workspace/a/x");
    assert_string_equal(set.v[3].path, "/workspace/a-b");
    assert_string_equal(set.v[4].path, "/workspace/b.txt");
    assert_int_equal(set.v[2].kind, CHANGESET_CHANGED);
    assert_int_equal(set.v[2].action_id, 12);
    assert_int_equal(set.v[1].action_id, 0);
    assert_true(set.v[1].workspace);
    assert_false(set.v[0].workspace);
    assert_int_equal(set.v[3].kind, CHANGESET_DELETED);
    assert_int_equal(set.count[CHANGESET_ADDED], 3);
    assert_int_equal(set.count[CHANGESET_CHANGED], 1);
    assert_int_equal(set.count[CHANGESET_DELETED], 1);
    assert_int_equal(set.total, 9);
    assert_true(set.truncated);
    assert_true(set.stored);
    assert_true(set.at == 1795388000.5);
    assert_int_equal(json_array_size(set.notes), 1);

    assert_string_equal(changeset_kind_name(CHANGESET_ADDED), "added");
    assert_string_equal(changeset_kind_name(CHANGESET_CHANGED), "changed");
    assert_string_equal(changeset_kind_name(CHANGESET_DELETED), "deleted");
    assert_int_equal(changeset_marker(CHANGESET_ADDED), 'A');
    assert_int_equal(changeset_marker(CHANGESET_CHANGED), 'C');
    assert_int_equal(changeset_marker(CHANGESET_DELETED), 'D');

    assert_true(changeset_matches(&set.v[4], NULL));
    assert_true(changeset_matches(&set.v[4], ""));
    assert_true(changeset_matches(&set.v[4], "B.TXT"));
    assert_false(changeset_matches(&set.v[4], "a-b"));
    assert_true(changeset_matches(&set.v[0], "evil"));

    /* a reply without a list changes nothing */
    json_t *bad = json_loads("{\"error\": {\"code\": \"x\"}}", 0, NULL);
    err = NULL;
    assert_int_equal(changeset_parse(bad, &set, &err), -1);
    assert_non_null(err);
    assert_int_equal(set.n, 5);
    json_decref(bad);
    assert_int_equal(changeset_parse(NULL, &set, &err), -1);
    assert_int_equal(set.n, 5);

    /* an empty list replaces it */
    json_t *empty = json_loads("{\"changes\": [], \"source\": \"live\"}", 0, NULL);
    assert_int_equal(changeset_parse(empty, &set, &err), 0);
    json_decref(empty);
    assert_int_equal(set.n, 0);
    assert_false(set.stored);
    assert_int_equal(set.total, 0);
    changeset_free(&set);
    assert_null(set.v);
}

static void test_in_git(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        bool in_git;
    } cases[] = {
        {"/workspace/demo/.git", true},
        {"/workspace/demo/.git/objects/ab/cdef", true},
        {".git/HEAD", true},
        {"/workspace/demo/.gitignore", false},
        {"/workspace/demo/my.git/x", false},
        {"/workspace/demo/hello.py", false},
        {"/workspace/.github/workflows/ci.yml", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct changeset_entry e = {.path = (char *)cases[i].path};
        assert_int_equal(changeset_in_git(&e), cases[i].in_git);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_in_git),
    };
    return cmocka_run_group_tests_name("changeset", tests, NULL, NULL);
}
