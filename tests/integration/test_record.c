/* The tamper-evident record (docs/record.md) with a real engine, Docker and SQLite: a session's
 * actions, a rejected decision, a rule and its lifecycle events verify; each change made behind
 * the engine's back with the sqlite3 shell (one byte of an observation, an action deleted, two
 * events swapped, a decision's reason edited) makes `paddock verify` exit 1 naming it; an
 * export verifies on its own and an edited export does not. The benchmarks' engine without a
 * record (PADDOCK_UNSAFE_BENCH=record) says so in GET /v1/info, answers actions, writes none
 * of them to the store and takes its stand-in log away when it stops. */
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

static char *sid;

/* paddock --socket S --state-dir D ARGS... */
static void cli(const char *const *args, struct proc_result *pr)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)harness_bin();
    argv[n++] = "--socket";
    argv[n++] = harness_eng->socket;
    argv[n++] = "--state-dir";
    argv[n++] = harness_eng->state_dir;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    proc_run(argv, NULL, 120000, pr);
}

/* The sqlite3 shell on e's store (WAL: beside the running engine, as anyone could): what it
 * printed (malloc'd). */
static char *sqlite_on(struct engine_proc *e, const char *sql)
{
    char *db = strdupf("%s/paddock.db", e->state_dir);
    char *argv[] = {"/usr/bin/sqlite3", "-cmd", ".timeout 10000", db, (char *)sql, NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 60000, &pr);
    if (pr.status != 0)
        fail_msg("sqlite3 %s: %d %s", sql, pr.status, pr.err);
    char *out = strdup(pr.out);
    proc_result_free(&pr);
    free(db);
    return out;
}

static void sqlite(const char *sql)
{
    free(sqlite_on(harness_eng, sql));
}

/* `paddock verify SESSION` (or the given arguments) exits want and prints text. */
static void expect_verify(const char *const *args, int want, const char *text)
{
    struct proc_result pr;
    cli(args, &pr);
    if (pr.status != want || !strstr(pr.out, text))
        fail_msg("paddock verify: exit %d (want %d), wanted \"%s\" in: %s%s", pr.status, want, text,
                 pr.out, pr.err);
    proc_result_free(&pr);
}

static void expect_session(int want, const char *text)
{
    const char *args[] = {"verify", sid, NULL};
    expect_verify(args, want, text);
}

static void test_record_verifies(void **state)
{
    json_t *s = session_new(harness_eng, "{\"confirm\": \"high\"}");
    sid = strdup(jstr(s, "id"));
    json_decref(s);
    json_decref(session_run(harness_eng, sid, "echo hi"));
    json_decref(session_run(harness_eng, sid, "echo second"));
    /* a risky one rejected by the operator with a reason */
    char *p = strdupf("/v1/sessions/%s/execute_action?wait=0", sid);
    json_t *r = api_json(
        harness_eng, "POST", p,
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"rm -rf /home/x\"}}}", 202);
    json_int_t id = json_integer_value(json_object_get(r, "action_id"));
    json_decref(r);
    free(p);
    p = strdupf("/v1/actions/%lld/reject", (long long)id);
    json_decref(
        api_json(harness_eng, "POST", p, "{\"by\": \"bob\", \"reason\": \"not here\"}", 200));
    free(p);
    p = strdupf("/v1/sessions/%s/rules", sid);
    json_decref(
        api_json(harness_eng, "POST", p, "{\"pattern\": \"ls *\", \"decision\": \"allow\"}", 201));
    free(p);
    /* two more lifecycle events */
    p = strdupf("/v1/sessions/%s/pause", sid);
    json_decref(api_json(harness_eng, "POST", p, NULL, 200));
    free(p);
    json_decref(session_wait_state(harness_eng, sid, "paused", 30000));
    p = strdupf("/v1/sessions/%s/resume", sid);
    json_decref(api_json(harness_eng, "POST", p, NULL, 200));
    free(p);
    json_decref(session_wait_state(harness_eng, sid, "ready", 30000));

    expect_session(0, "record verified");
    const char *all[] = {"verify", NULL};
    expect_verify(all, 0, "record verified");
    const char *js[] = {"verify", "--json", sid, NULL};
    expect_verify(js, 0, "\"ok\": true");
}

static void test_export_verifies_alone(void **state)
{
    char *file = strdupf("%s/export.json", harness_eng->state_dir);
    const char *ex[] = {"export", sid, "--format", "json", "-o", file, NULL};
    struct proc_result pr;
    cli(ex, &pr);
    assert_int_equal(pr.status, 0);
    proc_result_free(&pr);
    json_t *doc = json_load_file(file, 0, NULL);
    assert_non_null(doc);
    assert_non_null(jstr(doc, "chain.head"));
    assert_true(json_array_size(jpath(doc, "chain.entries")) > 5);
    /* the engine is not asked: a socket nobody answers */
    char *argv[] = {(char *)harness_bin(),
                    "--socket",
                    "/nonexistent/engine.sock",
                    "verify",
                    "--export",
                    file,
                    NULL};
    proc_run(argv, NULL, 60000, &pr);
    if (pr.status != 0 || !strstr(pr.out, "record verified"))
        fail_msg("verify --export: %d %s%s", pr.status, pr.out, pr.err);
    proc_result_free(&pr);
    /* the first action's command edited in the export */
    json_t *a = json_array_get(json_object_get(doc, "actions"), 0);
    json_object_set_new(a, "summary", json_string("echo ho"));
    assert_int_equal(json_dump_file(doc, file, 0), 0);
    const char *v[] = {"verify", "--export", file, NULL};
    expect_verify(v, 1, "the exported summary differs");
    /* an entry dropped from the export */
    json_object_set_new(a, "summary", json_string("echo hi"));
    json_array_remove(jpath(doc, "chain.entries"), 1);
    assert_int_equal(json_dump_file(doc, file, 0), 0);
    expect_verify(v, 1, "the entry before it is missing");
    json_decref(doc);
    free(file);
}

static void test_tampering_named(void **state)
{
    /* one byte of a stored observation ("hi" becomes "ho") */
    sqlite("CREATE TABLE keep AS SELECT action_id, content FROM observations WHERE action_id = 1;"
           "UPDATE observations SET content = substr(content, 1, instr(content, 'hi')) || 'o' || "
           "substr(content, instr(content, 'hi') + 2) WHERE action_id = 1");
    expect_session(1, "record broken: observation 1 ");
    expect_session(1, "its content differs");
    sqlite("UPDATE observations SET content = (SELECT content FROM keep) WHERE action_id = 1;"
           "DROP TABLE keep");
    expect_session(0, "record verified");

    /* a decision's reason edited */
    sqlite("UPDATE approvals SET reason = 'fine by me' WHERE reason = 'not here'");
    expect_session(1, "its reason differs");
    expect_session(1, "record broken: decision 3 ");
    sqlite("UPDATE approvals SET reason = 'not here' WHERE reason = 'fine by me'");
    expect_session(0, "record verified");

    /* two events swapped (their contents trade rows) */
    sqlite("CREATE TABLE t AS SELECT id, kind, detail, at FROM events WHERE session_id = (SELECT "
           "id FROM sessions) ORDER BY id DESC LIMIT 2;"
           "UPDATE events SET kind = (SELECT kind FROM t WHERE t.id != events.id), detail = "
           "(SELECT detail FROM t WHERE t.id != events.id), at = (SELECT at FROM t WHERE t.id "
           "!= events.id) WHERE id IN (SELECT id FROM t);");
    expect_session(1, "record broken: event ");
    expect_session(1, "its kind differs");
    sqlite("UPDATE events SET kind = (SELECT kind FROM t WHERE t.id = events.id), detail = "
           "(SELECT detail FROM t WHERE t.id = events.id), at = (SELECT at FROM t WHERE t.id = "
           "events.id) WHERE id IN (SELECT id FROM t); DROP TABLE t;");
    expect_session(0, "record verified");

    /* an action deleted (its observation and search entry with it) */
    sqlite("DELETE FROM observations WHERE action_id = 2; DELETE FROM actions_fts WHERE rowid = "
           "2; DELETE FROM actions WHERE id = 2;");
    expect_session(1, "record broken: action 2 ");
    expect_session(1, "its row is gone");
    const char *all[] = {"verify", "--json", NULL};
    expect_verify(all, 1, "\"ok\": false");
}

/* sqlite_on's answer to "SELECT count(*) FROM <from_where>'<id>'" is want. */
static void expect_count(struct engine_proc *e, const char *from_where, const char *id,
                         const char *want)
{
    char *sql = strdupf("SELECT count(*) FROM %s'%s'", from_where, id);
    char *n = sqlite_on(e, sql);
    if (strcmp(n, want) != 0)
        fail_msg("%s: %s, want %s", sql, n, want);
    free(n);
    free(sql);
}

static void test_unrecorded_bench_engine(void **state)
{
    struct engine_proc *e = engine_new();
    e->extra_env[0] = "PADDOCK_UNSAFE_BENCH=record";
    assert_int_equal(engine_start(e), 0);
    json_t *info = api_json(e, "GET", "/v1/info", NULL, 200);
    json_t *off = json_object_get(info, "unsafe_bench");
    assert_int_equal(json_array_size(off), 1);
    assert_string_equal(json_string_value(json_array_get(off, 0)), "record");
    json_decref(info);
    char *log = strdupf("%s/bench-record.log", e->state_dir);
    assert_true(path_exists(log));

    json_t *s = session_new(e, NULL);
    const char *id = jstr(s, "id");
    json_t *r = session_run(e, id, "echo unrecorded-$((6 * 7))");
    const char *content = jstr(r, "content");
    assert_non_null(content);
    assert_non_null(strstr(content, "unrecorded-42"));
    json_decref(r);
    /* ?wait=0: its id is none the store gives (above 2^50), and nothing answers for it */
    char *path = strdupf("/v1/sessions/%s/execute_action?wait=0", id);
    json_t *acc = api_json(
        e, "POST", path, "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"true\"}}}", 202);
    json_int_t aid = json_integer_value(json_object_get(acc, "action_id"));
    json_decref(acc);
    assert_true(aid > ((json_int_t)1 << 50));
    char *apath = strdupf("/v1/actions/%lld", (long long)aid);
    json_decref(api_json(e, "GET", apath, NULL, 404));
    free(apath);
    /* one that needs the operator is refused at once: an approval lives in the action's row */
    struct reply rr;
    api(e, "POST", path,
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"rm -rf /home/x\"}}}", &rr);
    assert_int_equal(rr.status, 409);
    assert_string_equal(jstr(rr.json, "error.code"), "conflict");
    assert_non_null(strstr(jstr(rr.json, "error.message"), "cannot hold an action for approval"));
    reply_free(&rr);
    free(path);
    json_t *pend = api_json(e, "GET", "/v1/approvals", NULL, 200);
    assert_int_equal(
        json_array_size(json_is_array(pend) ? pend : json_object_get(pend, "approvals")), 0);
    json_decref(pend);
    /* The session is in the store (its lifecycle is not the action path); its actions are not,
     * nor any entry of the record about them. */
    expect_count(e, "sessions WHERE id = ", id, "1\n");
    expect_count(e, "actions WHERE session_id = ", id, "0\n");
    expect_count(e, "chain WHERE kind IN ('action', 'observation') AND session_id = ", id, "0\n");

    session_delete(e, id);
    json_decref(s);
    assert_int_equal(engine_stop(e), 0);
    assert_false(path_exists(log));
    assert_int_equal(engine_destroy(e), 0);
    free(log);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_verifies),
        cmocka_unit_test(test_export_verifies_alone),
        cmocka_unit_test(test_tampering_named),
        cmocka_unit_test(test_unrecorded_bench_engine),
    };
    int rc = cmocka_run_group_tests(tests, harness_group_setup, harness_group_teardown);
    free(sid);
    return rc || harness_teardown_failed;
}
