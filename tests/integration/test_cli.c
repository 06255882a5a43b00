/* Integration tests of the CLI (`paddock run`, `paddock ls`) against a real engine. */
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

/* paddock --socket S --state-dir D ARGS... */
static void cli(const char *const *args, struct proc_result *pr)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)harness_bin();
    argv[n++] = "--socket";
    argv[n++] = harness_eng->socket;
    argv[n++] = "--state-dir";
    argv[n++] = harness_eng->state_dir;
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    proc_run(argv, NULL, 120000, pr);
}

static void assert_no_live_session(void)
{
    struct reply r;
    api(harness_eng, "GET", "/v1/sessions", NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *list = json_object_get(r.json, "sessions");
    assert_true(json_is_array(list));
    if (json_array_size(list))
        fprintf(stderr, "sessions left: %s\n", r.body);
    assert_int_equal(json_array_size(list), 0);
    reply_free(&r);
}

static int count_all_sessions(const char *state)
{
    struct reply r;
    api(harness_eng, "GET", "/v1/sessions?all=1", NULL, &r);
    assert_int_equal(r.status, 200);
    int n = 0;
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(r.json, "sessions"), i, row)
    {
        if (!state || strcmp(jstr(row, "state"), state) == 0)
            n++;
    }
    reply_free(&r);
    return n;
}

static void test_run_echo(void **state)
{
    const char *args[] = {"run", "--", "echo", "hi", NULL};
    struct proc_result pr;
    cli(args, &pr);
    if (pr.status != 0 || strcmp(pr.out, "hi\n") != 0)
        fprintf(stderr, "paddock run -- echo hi: status %d\nstdout: [%s]\nstderr: [%s]\n",
                pr.status, pr.out, pr.err);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "hi\n");
    proc_result_free(&pr);
    assert_no_live_session();
    assert_int_equal(count_all_sessions("deleted"), 1);
}

static void test_run_exit_code(void **state)
{
    const char *args[] = {"run", "--", "sh", "-c", "exit 3", NULL};
    struct proc_result pr;
    cli(args, &pr);
    if (pr.status != 3)
        fprintf(stderr, "paddock run -- sh -c 'exit 3': status %d\nstdout: [%s]\nstderr: [%s]\n",
                pr.status, pr.out, pr.err);
    assert_int_equal(pr.status, 3);
    assert_string_equal(pr.out, "");
    proc_result_free(&pr);
    assert_no_live_session();
    assert_int_equal(count_all_sessions("deleted"), 2);
}

static void test_run_quoting(void **state)
{
    /* Arguments with spaces and quotes reach the shell as the same words. */
    const char *args[] = {"run", "--", "printf", "%s|", "a b", "it's", NULL};
    struct proc_result pr;
    cli(args, &pr);
    if (pr.status != 0)
        fprintf(stderr, "stderr: %s\n", pr.err);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "a b|it's|\n");
    proc_result_free(&pr);
    assert_no_live_session();
}

static void test_run_in_session(void **state)
{
    /* --session ID runs in an existing session and leaves it alone. */
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    const char *args[] = {"run", "--session", id, "--", "echo", "in-session", NULL};
    struct proc_result pr;
    cli(args, &pr);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "in-session\n");
    proc_result_free(&pr);
    char *path = strdupf("/v1/sessions/%s", id);
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "ready");
    assert_int_equal(json_integer_value(json_object_get(r.json, "action_count")), 1);
    reply_free(&r);
    free(path);
    session_delete(harness_eng, id);
    json_decref(s);
}

static void test_ls_json(void **state)
{
    json_t *s = session_new(harness_eng, "{\"name\": \"ls-test\"}");
    const char *id = jstr(s, "id");
    const char *args[] = {"ls", "--json", NULL};
    struct proc_result pr;
    cli(args, &pr);
    assert_int_equal(pr.status, 0);
    json_error_t e;
    json_t *j = json_loads(pr.out, 0, &e);
    if (!j)
        fprintf(stderr, "paddock ls --json printed invalid JSON (%s): %s\n", e.text, pr.out);
    assert_non_null(j);
    assert_true(json_is_array(j));
    assert_int_equal(json_array_size(j), 1);
    assert_string_equal(jstr(json_array_get(j, 0), "id"), id);
    assert_string_equal(jstr(json_array_get(j, 0), "name"), "ls-test");
    assert_string_equal(jstr(json_array_get(j, 0), "state"), "ready");
    json_decref(j);
    proc_result_free(&pr);

    /* --all also lists deleted sessions: the API's ?all=1 list, the same length. */
    const char *args_all[] = {"ls", "--all", "--json", NULL};
    cli(args_all, &pr);
    assert_int_equal(pr.status, 0);
    j = json_loads(pr.out, 0, &e);
    assert_non_null(j);
    assert_true(json_is_array(j));
    assert_int_equal(json_array_size(j), (size_t)count_all_sessions(NULL));
    json_decref(j);
    proc_result_free(&pr);

    session_delete(harness_eng, id);
    cli(args, &pr);
    assert_int_equal(pr.status, 0);
    j = json_loads(pr.out, 0, &e);
    assert_non_null(j);
    assert_int_equal(json_array_size(j), 0);
    json_decref(j);
    proc_result_free(&pr);
    json_decref(s);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_echo),    cmocka_unit_test(test_run_exit_code),
        cmocka_unit_test(test_run_quoting), cmocka_unit_test(test_run_in_session),
        cmocka_unit_test(test_ls_json),
    };
    int failed = cmocka_run_group_tests_name("cli", tests, harness_group_setup,
                                             harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
