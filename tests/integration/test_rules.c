/* Rules without fatigue (docs/approvals.md) with a real engine, Docker and SQLite: a rule added
 * with `paddock rules add` and one added through the API let a matching action run without
 * waiting, and its history (API, `paddock history`, `paddock show`) names the rule; an action
 * that does not match waits; after `paddock rules rm` the same action waits again. An allow
 * rule never covers a second command after a ';' nor anything rated above the ceiling. Rule
 * edits are in the record (`paddock verify` passes) and a rule row altered with sqlite3 breaks
 * it. The config file's [approvals] rules load, cannot be edited through the API, and follow
 * the file at the next start. */
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

/* paddock --socket S --state-dir D ARGS... against engine e */
static void cli_on(struct engine_proc *e, const char *const *args, struct proc_result *pr)
{
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)harness_bin();
    argv[n++] = "--socket";
    argv[n++] = e->socket;
    argv[n++] = "--state-dir";
    argv[n++] = e->state_dir;
    for (size_t i = 0; args[i] && n < 23; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    proc_run(argv, NULL, 120000, pr);
}

/* The command exits 0 and prints text (NULL: anything); its stdout (malloc'd). */
static char *cli_ok(const char *const *args, const char *text)
{
    struct proc_result pr;
    cli_on(harness_eng, args, &pr);
    if (pr.status != 0 || (text && !strstr(pr.out, text)))
        fail_msg("paddock %s: exit %d, wanted \"%s\" in: %s%s", args[0], pr.status,
                 text ? text : "", pr.out, pr.err);
    char *out = strdup(pr.out);
    proc_result_free(&pr);
    return out;
}

static void sqlite(const char *sql)
{
    char *db = strdupf("%s/paddock.db", harness_eng->state_dir);
    char *argv[] = {"/usr/bin/sqlite3", "-cmd", ".timeout 10000", db, (char *)sql, NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 60000, &pr);
    if (pr.status != 0)
        fail_msg("sqlite3 %s: %d %s", sql, pr.status, pr.err);
    proc_result_free(&pr);
    free(db);
}

/* Send cmd with ?wait=0 to session s of engine e: the action's id; its state must be want
 * (pending: it waits; running: it went ahead). */
static json_int_t submit_on(struct engine_proc *e, const char *s, const char *cmd, const char *want)
{
    json_t *body =
        json_pack("{s:{s:s,s:{s:s}}}", "action", "action", "run", "args", "command", cmd);
    char *b = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char *p = strdupf("/v1/sessions/%s/execute_action?wait=0", s);
    json_t *r = api_json(e, "POST", p, b, 202);
    if (strcmp(jstr(r, "state"), want) != 0)
        fail_msg("%s: state %s, want %s", cmd, jstr(r, "state"), want);
    json_int_t id = json_integer_value(json_object_get(r, "action_id"));
    json_decref(r);
    free(p);
    free(b);
    return id;
}

static json_int_t submit(const char *cmd, const char *want)
{
    return submit_on(harness_eng, sid, cmd, want);
}

/* The action once final. */
static json_t *action_final(struct engine_proc *e, json_int_t id)
{
    char *p = strdupf("/v1/actions/%lld?wait=60", (long long)id);
    json_t *a = api_json(e, "GET", p, NULL, 200);
    free(p);
    return a;
}

static void reject(json_int_t id)
{
    char *p = strdupf("/v1/actions/%lld/reject", (long long)id);
    json_decref(api_json(harness_eng, "POST", p, "{\"by\": \"test\"}", 200));
    free(p);
}

/* The rule's id from `paddock rules add`'s "added rule N: ..." */
static long long rule_id_of(const char *out)
{
    const char *p = strstr(out, "added rule ");
    assert_non_null(p);
    return strtoll(p + 11, NULL, 10);
}

/* An auto-approved action: ran, and names rule id with pattern everywhere it is shown. */
static void assert_ran_by_rule(json_int_t id, long long rule, const char *pattern)
{
    json_t *a = action_final(harness_eng, id);
    assert_string_equal(jstr(a, "state"), "done");
    assert_string_equal(jstr(a, "approval"), "auto");
    assert_string_equal(jstr(a, "decided_by"), "rule");
    assert_int_equal(json_integer_value(jpath(a, "rule.id")), rule);
    assert_string_equal(jstr(a, "rule.pattern"), pattern);
    char *want = strdupf("allowed by rule %lld \"%s\"", rule, pattern);
    assert_non_null(strstr(jstr(a, "decision_reason"), want));
    json_decref(a);
    /* paddock history and paddock show say it too */
    const char *h[] = {"history", sid, "--limit", "20", NULL};
    free(cli_ok(h, want));
    char ids[32];
    snprintf(ids, sizeof(ids), "%lld", (long long)id);
    const char *s[] = {"show", ids, NULL};
    free(cli_ok(s, want));
    free(want);
}

static void test_rule_cli_and_api(void **state)
{
    json_t *s = session_new(harness_eng, "{\"confirm\": \"always\"}");
    sid = strdup(jstr(s, "id"));
    json_decref(s);
    /* nothing yet: it waits */
    reject(submit("echo cli-rule one", "pending"));

    /* a session rule with the CLI */
    const char *add[] = {"rules", "add", "--session", sid, "echo cli-rule *", NULL};
    char *out = cli_ok(add, "added rule");
    long long r1 = rule_id_of(out);
    free(out);
    const char *ls[] = {"rules", "list", NULL};
    out = cli_ok(ls, "echo cli-rule *");
    assert_non_null(strstr(out, "ceiling: rules approve nothing rated above high"));
    free(out);
    json_int_t id = submit("echo cli-rule two", "running");
    assert_ran_by_rule(id, r1, "echo cli-rule *");
    /* one that does not match waits */
    reject(submit("echo other", "pending"));
    /* "echo cli-rule *" never covers a second command */
    reject(submit("echo cli-rule x; echo pwned", "pending"));
    reject(submit("echo cli-rule $(id)", "pending"));

    /* an engine-wide rule through the API */
    json_t *rule = api_json(harness_eng, "POST", "/v1/rules",
                            "{\"pattern\": \"echo api-rule *\", \"decision\": \"allow\", "
                            "\"kind\": \"run\", \"by\": \"carol\"}",
                            201);
    long long r2 = json_integer_value(json_object_get(rule, "id"));
    assert_true(json_is_null(json_object_get(rule, "session_id")));
    assert_string_equal(jstr(rule, "created_by"), "carol");
    json_decref(rule);
    id = submit("echo api-rule three", "running");
    assert_ran_by_rule(id, r2, "echo api-rule *");

    /* the default ceiling is high: a rule the operator saved covers a HIGH command it matches
     * (test_config_rules holds a lower ceiling) */
    json_t *hr = api_json(harness_eng, "POST", "/v1/rules",
                          "{\"pattern\": \"rm -rf /home/x*\", \"decision\": \"allow\"}", 201);
    long long r3 = json_integer_value(json_object_get(hr, "id"));
    json_decref(hr);
    char *rp = strdupf("/v1/risk?session=%s", sid);
    json_t *risk = api_json(harness_eng, "POST", rp,
                            "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"rm -rf "
                            "/home/x\"}}}",
                            200);
    assert_string_equal(jstr(risk, "risk"), "high");
    assert_int_equal(json_integer_value(jpath(risk, "rule.id")), r3);
    assert_null(json_object_get(json_object_get(risk, "rule"), "above_ceiling"));
    json_decref(risk);
    free(rp);
    id = submit("rm -rf /home/x", "running");
    assert_ran_by_rule(id, r3, "rm -rf /home/x*");
    /* still never a second command */
    reject(submit("rm -rf /home/x; echo pwned", "pending"));

    /* edit the CLI's rule: the old pattern no longer matches, the new one does */
    char r1s[32];
    snprintf(r1s, sizeof(r1s), "%lld", r1);
    const char *ed[] = {"rules", "edit", r1s, "--pattern", "echo edited-rule *", NULL};
    free(cli_ok(ed, "changed rule"));
    reject(submit("echo cli-rule four", "pending"));
    id = submit("echo edited-rule five", "running");
    assert_ran_by_rule(id, r1, "echo edited-rule *");
    /* the earlier decision still names the pattern it had then */
    /* rm: the same action waits again */
    const char *rm[] = {"rules", "rm", r1s, NULL};
    free(cli_ok(rm, "removed rule"));
    reject(submit("echo edited-rule five", "pending"));
    char r2s[32];
    snprintf(r2s, sizeof(r2s), "/v1/rules/%lld", r2);
    json_decref(api_json(harness_eng, "DELETE", r2s, NULL, 200));
    reject(submit("echo api-rule three", "pending"));
    json_decref(api_json(harness_eng, "DELETE", r2s, NULL, 404));

    /* the approvals queue proposes a rule no broader than the command's program and subcommand */
    id = submit("git status --short", "pending");
    char *ap = strdupf("/v1/approvals?session=%s", sid);
    json_t *q = api_json(harness_eng, "GET", ap, NULL, 200);
    json_t *item = json_array_get(json_object_get(q, "approvals"), 0);
    assert_string_equal(jstr(item, "proposed_rule"), "git status --short *");
    assert_true(json_is_false(json_object_get(item, "above_ceiling")));
    json_decref(q);
    free(ap);
    reject(id);

    /* the export names the rule in each format */
    char *want = strdupf("allowed by rule %lld \"echo cli-rule *\"", r1);
    static const char *const formats[] = {"md", "cast", "json"};
    for (size_t i = 0; i < 3; i++) {
        const char *ex[] = {"export", sid, "--format", formats[i], "-o", "-", NULL};
        char *file = strdupf("%s/export.%s", harness_eng->state_dir, formats[i]);
        ex[5] = file;
        free(cli_ok(ex, NULL));
        FILE *f = fopen(file, "r");
        assert_non_null(f);
        static char text[1 << 20];
        size_t n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = '\0';
        fclose(f);
        if (i == 0 && !strstr(text, want))
            fail_msg("the md export does not say \"%s\"", want);
        /* the cast's output events are JSON strings: the quotes escaped */
        char *cast_want = strdupf("allowed by rule %lld \\\"echo cli-rule *\\\"", r1);
        if (i == 1 && !strstr(text, cast_want))
            fail_msg("the cast does not say %s", cast_want);
        free(cast_want);
        if (i == 2) {
            json_t *doc = json_loads(text, 0, NULL);
            bool found = false;
            size_t k;
            json_t *x;
            json_array_foreach(json_object_get(doc, "actions"), k, x)
            {
                found |= json_integer_value(jpath(x, "rule.id")) == r1 &&
                         strcmp(jstr(x, "rule.pattern") ?: "", "echo cli-rule *") == 0;
            }
            json_decref(doc);
            assert_true(found);
        }
        free(file);
    }
    free(want);
}

static void test_rules_in_record(void **state)
{
    const char *v[] = {"verify", NULL};
    free(cli_ok(v, "record verified"));
    const char *vs[] = {"verify", sid, NULL};
    free(cli_ok(vs, "record verified"));
    /* a removed rule's pattern widened behind the engine's back: named */
    sqlite("UPDATE rules SET pattern = '*' WHERE id = 1");
    struct proc_result pr;
    cli_on(harness_eng, v, &pr);
    if (pr.status != 1 || !strstr(pr.out, "rule_change 1") || !strstr(pr.out, "pattern"))
        fail_msg("verify after the edit: %d %s%s", pr.status, pr.out, pr.err);
    proc_result_free(&pr);
    sqlite("UPDATE rules SET pattern = 'echo edited-rule *' WHERE id = 1");
    free(cli_ok(v, "record verified"));
    /* a rule brought back to life: named */
    sqlite("UPDATE rules SET removed = 0 WHERE id = 1");
    cli_on(harness_eng, v, &pr);
    if (pr.status != 1 || !strstr(pr.out, "rule_change 1") || !strstr(pr.out, "removed"))
        fail_msg("verify after un-removing: %d %s%s", pr.status, pr.out, pr.err);
    proc_result_free(&pr);
    sqlite("UPDATE rules SET removed = 1 WHERE id = 1");
    free(cli_ok(v, "record verified"));
}

/* The config file's rules: loaded at start, shown as the config file's, not editable through
 * the API, and kept in step with the file at the next start. */
static void test_config_rules(void **state)
{
    struct engine_proc *e = engine_new();
    assert_non_null(e);
    char *cfg = strdupf("%s/config.toml", e->state_dir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "[approvals]\nallow = [\"echo from-config *\", \"ls *\"]\n"
               "deny = [\"*forbidden*\"]\nceiling = \"medium\"\n");
    fclose(f);
    char *env = strdupf("PADDOCK_CONFIG=%s", cfg);
    e->extra_env[0] = env;
    assert_int_equal(engine_start(e), 0);
    json_t *l = api_json(e, "GET", "/v1/rules", NULL, 200);
    assert_int_equal(json_array_size(json_object_get(l, "rules")), 3);
    json_t *first = json_array_get(json_object_get(l, "rules"), 0);
    assert_string_equal(jstr(first, "origin"), "config");
    assert_string_equal(jstr(first, "decision"), "deny");
    long long cid = json_integer_value(json_object_get(first, "id"));
    json_decref(l);
    json_t *s = session_new(e, "{\"confirm\": \"always\"}");
    char *id = strdup(jstr(s, "id"));
    json_decref(s);
    engine_track(e, id);
    json_int_t a = submit_on(e, id, "echo from-config yes", "running");
    json_t *got = action_final(e, a);
    assert_string_equal(jstr(got, "approval"), "auto");
    assert_string_equal(jstr(got, "rule.pattern"), "echo from-config *");
    json_decref(got);
    /* the file's ceiling (medium): an allow rule never approves a HIGH command it matches */
    char *sp = strdupf("/v1/sessions/%s/rules", id);
    json_t *yr =
        api_json(e, "POST", sp, "{\"pattern\": \"rm -rf /home/y*\", \"decision\": \"allow\"}", 201);
    /* the reply lists the session's rules: this one is the one with its pattern */
    long long yid = 0;
    size_t i;
    json_t *one;
    json_array_foreach(json_object_get(yr, "rules"), i,
                       one) if (strcmp(jstr(one, "pattern"), "rm -rf /home/y*") == 0) yid =
        json_integer_value(json_object_get(one, "id"));
    assert_true(yid > 0);
    char *yp = strdupf("/v1/rules/%lld", yid);
    json_decref(yr);
    free(sp);
    json_int_t hi = submit_on(e, id, "rm -rf /home/y", "pending");
    char *rp = strdupf("/v1/risk?session=%s", id);
    json_t *risk = api_json(e, "POST", rp,
                            "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"rm -rf "
                            "/home/y\"}}}",
                            200);
    assert_string_equal(jstr(risk, "rule.above_ceiling"), "medium");
    json_decref(risk);
    free(rp);
    char *dp = strdupf("/v1/actions/%lld/reject", (long long)hi);
    json_decref(api_json(e, "POST", dp, "{\"by\": \"test\"}", 200));
    free(dp);
    json_decref(api_json(e, "DELETE", yp, NULL, 200)); /* the file's rules alone below */
    free(yp);
    /* a deny rule from the file rejects at once */
    json_int_t d = submit_on(e, id, "echo forbidden", "rejected");
    got = action_final(e, d);
    assert_int_equal(json_integer_value(jpath(got, "rule.id")), cid);
    json_decref(got);
    /* not through the API */
    char *p = strdupf("/v1/rules/%lld", cid);
    struct reply r;
    api(e, "DELETE", p, NULL, &r);
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(r.body, "config file"));
    reply_free(&r);
    api(e, "PATCH", p, "{\"pattern\": \"x\"}", &r);
    assert_int_equal(r.status, 409);
    reply_free(&r);
    free(p);
    /* the file changes: at the next start the rules follow it, and the record verifies */
    assert_int_equal(engine_stop(e), 0);
    f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "[approvals]\nallow = [\"ls *\"]\n");
    fclose(f);
    assert_int_equal(engine_start(e), 0);
    l = api_json(e, "GET", "/v1/rules", NULL, 200);
    assert_int_equal(json_array_size(json_object_get(l, "rules")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(l, "rules"), 0), "pattern"), "ls *");
    json_decref(l);
    json_t *v = api_json(e, "GET", "/v1/verify", NULL, 200);
    assert_true(json_is_true(json_object_get(v, "ok")));
    json_decref(v);
    /* a ceiling that is no level: the engine does not start */
    assert_int_equal(engine_stop(e), 0);
    f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "[approvals]\nceiling = \"critical\"\n");
    fclose(f);
    assert_true(engine_start(e) != 0);
    free(id);
    engine_destroy(e); /* removes the session's container, when the engine left it */
    free(env);
    free(cfg);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_cli_and_api),
        cmocka_unit_test(test_rules_in_record),
        cmocka_unit_test(test_config_rules),
    };
    int rc = cmocka_run_group_tests(tests, harness_group_setup, harness_group_teardown);
    return rc || harness_teardown_failed;
}
