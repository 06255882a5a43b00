/* The table of action kinds (engine/action_kind.c) walked: it has a row for every kind the
 * executor accepts (read from executor/action.c's action_types[], the path is argv[1]), the
 * kinds that write files are the ones the changes count as writes (and a real store returns
 * exactly those, with each one's path), the shell-like ones are counted as opaque, and every
 * execute_action kind's classifier gives a level and a reason of its own. */
#include "engine/action_kind.h"
#include "engine/risk/risk.h"
#include "engine/store/store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *executor_source;

/* The names in executor/action.c's action_types[]: each entry's .name, or its first string. */
static int executor_kinds(char names[][32], int max)
{
    FILE *f = fopen(executor_source, "r");
    assert_non_null(f);
    static char text[64 * 1024];
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    const char *p = strstr(text, "action_types[] = {");
    assert_non_null(p);
    const char *end = strstr(p, "\n};");
    assert_non_null(end);
    p = strchr(p, '{') + 1;
    int n = 0;
    while (p < end && (p = strchr(p, '{')) && p < end) {
        const char *close = strchr(p, '}');
        const char *name = strstr(p, ".name");
        const char *q = strchr(name && name < close ? name : p, '"');
        assert_true(q && q < close);
        size_t l = strcspn(q + 1, "\"");
        assert_true(n < max && l < 32);
        memcpy(names[n], q + 1, l);
        names[n++][l] = '\0';
        p = close + 1;
    }
    return n;
}

static void test_every_executor_kind_has_a_row(void **state)
{
    (void)state;
    char names[32][32];
    int n = executor_kinds(names, 32);
    assert_true(n >= 7); /* run, read, write, edit, run_ipython, browse, browse_interactive */
    for (int i = 0; i < n; i++) {
        const struct action_kind *k = action_kind_find(names[i]);
        if (!k)
            fail_msg("the executor takes \"%s\", the engine's table has no row for it", names[i]);
        assert_false(k->transfer);
    }
    /* and the other way: a row that goes through execute_action is a kind the executor takes */
    const struct action_kind *k;
    for (size_t i = 0; (k = action_kind_at(i)); i++) {
        bool found = false;
        for (int j = 0; j < n && !found; j++)
            found = strcmp(names[j], k->name) == 0;
        if (k->engine_side) {
            if (found)
                fail_msg("\"%s\": the engine's own kind is an executor kind too", k->name);
            continue;
        }
        if (found == k->transfer)
            fail_msg("\"%s\": %s", k->name,
                     k->transfer ? "a transfer the executor also takes as an action"
                                 : "not a kind the executor takes");
        if (action_kind_find(k->name) != k)
            fail_msg("two rows called \"%s\"", k->name);
    }
    assert_null(action_kind_find("frobnicate"));
    assert_null(action_kind_find(NULL));
}

static bool has(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return true;
    return false;
}

static void test_writers_and_shells(void **state)
{
    (void)state;
    /* docs/architecture.md: "the recorded write, edit and upload actions"; "run" commands
     * (and IPython cells, and terminals) are opaque */
    const char *writers[ACTION_KIND_MAX + 1], *shells[ACTION_KIND_MAX + 1];
    action_kind_names(action_kind_writes_files, writers);
    action_kind_names(action_kind_is_shell_like, shells);
    static const char *const want_writers[] = {"write", "edit", "upload", NULL};
    static const char *const want_shells[] = {"run", "run_ipython", "terminal", NULL};
    size_t n = 0;
    for (; writers[n]; n++)
        assert_true(has(want_writers, writers[n]));
    assert_int_equal(n, 3);
    for (n = 0; shells[n]; n++)
        assert_true(has(want_shells, shells[n]));
    assert_int_equal(n, 3);
    const struct action_kind *edit = action_kind_find("edit");
    assert_int_equal(edit->file_change("view"), ACTION_FILE_NONE);
    assert_int_equal(edit->file_change("create"), ACTION_FILE_ADDED);
    assert_int_equal(edit->file_change("str_replace"), ACTION_FILE_CHANGED);
    assert_int_equal(action_kind_find("write")->file_change(NULL), ACTION_FILE_CHANGED);
    assert_true(action_kind_find("write")->ask_diff);
    assert_false(edit->ask_diff); /* its observation has its own diff */
}

/* One successful action of every kind in a real store: the file-writes query with the table's
 * writers returns exactly those, each with the path where its row says it is. */
static void test_store_returns_the_writers(void **state)
{
    (void)state;
    char dir[] = "/tmp/paddock-kinds-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/paddock.db", dir);
    char *err = NULL;
    struct store *s = store_open(path, &err);
    assert_non_null(s);
    assert_int_equal(store_session_insert(s, "kk", "k", "img", SESSION_READY, NULL, 1, &err), 0);
    const struct action_kind *k;
    for (size_t i = 0; (k = action_kind_at(i)); i++) {
        char args[160], obs[160];
        snprintf(args, sizeof(args),
                 "{\"action\":\"%s\",\"args\":{\"path\":\"/workspace/%s\",\"command\":\"create\"}}",
                 k->name, k->name);
        snprintf(obs, sizeof(obs), "{\"observation\":\"%s\",\"path\":\"/tmp/%s\"}", k->name,
                 k->name);
        int64_t id = store_action_insert(s, "kk", k->name, k->name, args, 2, &err);
        assert_true(id > 0);
        assert_int_equal(
            store_action_finish(s, id, ACTION_DONE, 0, obs, strlen(obs), NULL, 3, &err), 0);
    }
    const char *writers[ACTION_KIND_MAX + 1], *shells[ACTION_KIND_MAX + 1];
    action_kind_names(action_kind_writes_files, writers);
    action_kind_names(action_kind_is_shell_like, shells);
    json_t *got = store_actions_file_writes(s, "kk", writers, 100);
    size_t nwriters = 0;
    while (writers[nwriters])
        nwriters++;
    assert_int_equal(json_array_size(got), nwriters);
    size_t i;
    json_t *row;
    json_array_foreach(got, i, row)
    {
        k = action_kind_find(json_string_value(json_object_get(row, "kind")));
        assert_non_null(k);
        assert_true(action_kind_writes_files(k));
        char want[64];
        snprintf(want, sizeof(want), "%s/%s", k->path_in_observation ? "/tmp" : "/workspace",
                 k->name);
        assert_string_equal(json_string_value(json_object_get(
                                row, k->path_in_observation ? "observed_path" : "path")),
                            want);
        assert_string_equal(json_string_value(json_object_get(row, "command")), "create");
    }
    json_decref(got);
    size_t nshells = 0;
    while (shells[nshells])
        nshells++;
    assert_int_equal(store_actions_count_finished(s, "kk", shells), (long long)nshells);
    const char *none[] = {NULL};
    assert_int_equal(store_actions_count_finished(s, "kk", none), 0);
    store_close(s);
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Each execute_action kind's classifier, on args that name only what summarises it: a level,
 * a reason, and not the "is a ... action" of a kind the engine does not know. */
static void test_every_classifier_answers(void **state)
{
    (void)state;
    const struct action_kind *k;
    for (size_t i = 0; (k = action_kind_at(i)); i++) {
        if (k->transfer || k->engine_side) {
            assert_null(k->classify); /* recorded with the level their recorder gives */
            continue;
        }
        assert_non_null(k->classify);
        const char *arg = k->summary_arg ? k->summary_arg : "path";
        json_t *a = json_pack("{s:s,s:{s:s}}", "action", k->name, "args", arg, "/workspace/x");
        struct risk_result r, unknown;
        memset(&r, 0xff, sizeof(r));
        r.reason[sizeof(r.reason) - 1] = '\0';
        action_kind_classify(a, "/workspace", NULL, &r);
        risk_classify_action(a, NULL, "/workspace", NULL, &unknown);
        if ((int)r.level < RISK_LOW || (int)r.level > RISK_HIGH || !r.reason[0] ||
            strcmp(r.reason, unknown.reason) == 0)
            fail_msg("%s: level %d, reason \"%s\"", k->name, (int)r.level, r.reason);
        assert_int_equal(r.declared, -1);
        /* the summary is the argument the row names */
        assert_string_equal(action_kind_summary(k->name, json_object_get(a, "args")),
                            "/workspace/x");
        json_decref(a);
    }
    /* an unknown kind: MEDIUM, summarised by its path or its name */
    json_t *a = json_pack("{s:s,s:{}}", "action", "frobnicate", "args");
    struct risk_result r;
    action_kind_classify(a, "/workspace", NULL, &r);
    assert_int_equal(r.level, RISK_MEDIUM);
    assert_string_equal(action_kind_summary("frobnicate", json_object_get(a, "args")),
                        "frobnicate");
    json_decref(a);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s EXECUTOR_ACTION_C\n", argv[0]);
        return 2;
    }
    executor_source = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_executor_kind_has_a_row),
        cmocka_unit_test(test_writers_and_shells),
        cmocka_unit_test(test_store_returns_the_writers),
        cmocka_unit_test(test_every_classifier_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
