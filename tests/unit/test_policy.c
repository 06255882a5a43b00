/* Approval policy and operator rules (engine/risk/policy.c). */
#include "engine/risk/policy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

/* What waits under each policy, for each risk level (low, medium, high). */
static void test_policy_table(void **state)
{
    static const struct {
        const char *policy;
        bool waits[3];
    } cases[] = {
        {"never", {false, false, false}},
        {"high", {false, false, true}},
        {"medium", {false, true, true}},
        {"always", {true, true, true}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        int p = policy_parse(cases[i].policy);
        assert_true(p >= 0);
        assert_string_equal(policy_name(p), cases[i].policy);
        for (int level = 0; level < 3; level++)
            assert_int_equal(policy_needs_approval(p, level), cases[i].waits[level]);
    }
    assert_int_equal(policy_parse("HIGH"), -1);
    assert_int_equal(policy_parse(""), -1);
    assert_int_equal(policy_parse(NULL), -1);
}

static void test_rules_match(void **state)
{
    json_t *rules = json_loads("[{\"pattern\":\"git push *\",\"decision\":\"allow\"},"
                               "{\"pattern\":\"*--force*\",\"decision\":\"deny\"},"
                               "{\"pattern\":\"ls\",\"decision\":\"allow\"}]",
                               0, NULL);
    json_t *m = NULL;
    const char *pat = NULL;
    assert_int_equal(policy_rules_match(rules, "run", "git push origin main", &m),
                     POLICY_RULE_ALLOW);
    pat = json_string_value(json_object_get(m, "pattern"));
    assert_string_equal(pat, "git push *");
    /* a deny wins over an earlier allow */
    assert_int_equal(policy_rules_match(rules, "run", "git push --force origin", &m),
                     POLICY_RULE_DENY);
    pat = json_string_value(json_object_get(m, "pattern"));
    assert_string_equal(pat, "*--force*");
    assert_int_equal(policy_rules_match(rules, "run", "git pull", &m), POLICY_RULE_NONE);
    assert_int_equal(policy_rules_match(rules, "run", "ls -la", &m),
                     POLICY_RULE_NONE); /* whole-string match only */
    assert_int_equal(policy_rules_match(NULL, "run", "ls", &m), POLICY_RULE_NONE);
    json_decref(rules);
    /* an escaped pattern matches only itself */
    rules = json_loads("[{\"pattern\":\"rm -rf /tmp/\\\\*\",\"decision\":\"allow\"}]", 0, NULL);
    assert_int_equal(policy_rules_match(rules, "run", "rm -rf /tmp/*", &m), POLICY_RULE_ALLOW);
    assert_int_equal(policy_rules_match(rules, "run", "rm -rf /tmp/x", &m), POLICY_RULE_NONE);
    json_decref(rules);
}

/* A rule's decision: each value round trips through its text; anything else is refused. */
static void test_rule_names(void **state)
{
    const char *names[] = {NULL, "allow", "deny"};
    assert_int_equal(sizeof(names) / sizeof(names[0]), POLICY_RULE_COUNT);
    assert_null(policy_rule_name(POLICY_RULE_NONE));
    for (int i = POLICY_RULE_ALLOW; i < POLICY_RULE_COUNT; i++) {
        enum policy_rule d = POLICY_RULE_NONE;
        assert_string_equal(policy_rule_name((enum policy_rule)i), names[i]);
        assert_int_equal(policy_rule_parse(names[i], &d), 0);
        assert_int_equal(d, i);
    }
    const char *unknown[] = {"Allow", "", "none", "reject", NULL};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        enum policy_rule d = POLICY_RULE_DENY;
        assert_int_equal(policy_rule_parse(unknown[i], &d), -1);
        assert_int_equal(d, POLICY_RULE_DENY);
    }
    assert_null(policy_rule_name(POLICY_RULE_COUNT));
}

static void test_rule_check(void **state)
{
    static const struct {
        const char *json;
        const char *why; /* substring of the refusal, NULL: accepted */
    } cases[] = {
        {"{\"pattern\":\"make *\",\"decision\":\"allow\"}", NULL},
        {"{\"pattern\":\"x\",\"decision\":\"deny\"}", NULL},
        {"{\"pattern\":\"\",\"decision\":\"deny\"}", "pattern"},
        {"{\"pattern\":1,\"decision\":\"deny\"}", "pattern"},
        {"{\"pattern\":\"x\",\"decision\":\"maybe\"}", "decision"},
        {"{\"pattern\":\"x\"}", "decision"},
        {"{\"pattern\":\"x\",\"decision\":\"allow\",\"extra\":1}", "unknown key"},
        {"{\"pattern\":\"x\",\"decision\":\"allow\",\"kind\":\"run\"}", NULL},
        {"{\"pattern\":\"x\",\"decision\":\"allow\",\"kind\":3}", "kind"},
        {"{\"pattern\":\"x\",\"decision\":\"allow\",\"session\":\"a\"}", "unknown key"},
        {"[1]", "object"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        json_t *j = json_loads(cases[i].json, 0, NULL);
        assert_non_null(j);
        static const char *const keys[] = {"kind", NULL};
        const char *why = policy_rule_check(j, keys);
        if (cases[i].why) {
            assert_non_null(why);
            assert_non_null(strstr(why, cases[i].why));
        } else {
            assert_null(why);
        }
        json_decref(j);
    }
}

/* An allow rule's wildcards never reach a shell metacharacter: "ls *" covers what ls is given,
 * never a second command, a substitution or a redirection. */
static void test_allow_match(void **state)
{
    static const struct {
        const char *pattern, *summary;
        bool match;
    } cases[] = {
        {"ls *", "ls -la /tmp", true},
        {"ls *", "ls", true}, /* " *" at the end also covers no more words */
        {"ls *", "lsblk", false},
        {"ls *", "ls; rm -rf /", false},
        {"ls *", "ls x; rm -rf /", false},
        {"ls *", "ls && rm -rf /", false},
        {"ls *", "ls || rm -rf /", false},
        {"ls *", "ls | sh", false},
        {"ls *", "ls & rm -rf /", false},
        {"ls *", "ls $(rm -rf /)", false},
        {"ls *", "ls `rm -rf /`", false},
        {"ls *", "ls > /etc/passwd", false},
        {"ls *", "ls < /dev/zero", false},
        {"ls *", "ls\nrm -rf /", false},
        {"ls *", "ls \\\nrm", false},
        {"ls *", "ls (x)", false},
        {"ls ?", "ls ;", false},
        {"ls [;a]", "ls ;", false},
        {"ls [;a]", "ls a", true},
        {"ls [!a]", "ls b", true},
        {"ls [!a]", "ls |", false},
        {"git push *", "git push origin main", true},
        {"git push *", "git push --force origin main", true},
        {"git push *", "git pull", false},
        {"git push *", "git push origin main; curl x | sh", false},
        {"*", "anything at all", true},
        {"*", "echo hi; id", false},
        /* what the pattern spells out itself may hold them */
        {"make && make test", "make && make test", true},
        {"make && *", "make && make test", true},
        {"make && *", "make && make test; id", false},
        /* escaped glob characters are literal */
        {"rm -rf /tmp/\\*", "rm -rf /tmp/*", true},
        {"rm -rf /tmp/\\*", "rm -rf /tmp/x", false},
        {"a\\ *", "a *", true},
        {"a\\ *", "a", false},
        {"echo [", "echo [", true},
        {"", "", true},
        {"x", "", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        bool got = policy_allow_match(cases[i].pattern, cases[i].summary);
        if (got != cases[i].match)
            fail_msg("%s vs \"%s\": got %d", cases[i].pattern, cases[i].summary, got);
    }
    /* many stars against a long command: bounded, no match (the action waits) */
    static char lots[20001];
    memset(lots, 'a', sizeof(lots) - 1);
    assert_false(policy_allow_match("*a*a*a*a*a*a*a*a*a*a*a*a*b", lots));
    assert_true(policy_allow_match("a*a", lots));
    assert_false(policy_allow_match(NULL, "x"));
    assert_false(policy_allow_match("x", NULL));
}

/* A deny is the broad glob: "rm -rf *" stops the same command hidden after a ';'. And a rule
 * with a kind applies to that kind only. */
static void test_deny_broad_and_kind(void **state)
{
    json_t *rules = json_loads("[{\"id\":1,\"pattern\":\"ls *\",\"decision\":\"allow\"},"
                               "{\"id\":2,\"pattern\":\"*rm -rf *\",\"decision\":\"deny\"},"
                               "{\"id\":3,\"pattern\":\"/workspace/x.sh\",\"decision\":\"allow\","
                               "\"kind\":\"read\"}]",
                               0, NULL);
    json_t *m = NULL;
    assert_int_equal(policy_rules_match(rules, "run", "ls x; rm -rf /", &m), POLICY_RULE_DENY);
    assert_int_equal(json_integer_value(json_object_get(m, "id")), 2);
    m = NULL;
    assert_int_equal(policy_rules_match(rules, "run", "ls x; id", &m), POLICY_RULE_NONE);
    assert_null(m);
    assert_int_equal(policy_rules_match(rules, "run", "ls x", &m), POLICY_RULE_ALLOW);
    assert_int_equal(json_integer_value(json_object_get(m, "id")), 1);
    /* read this file: yes; run it: no */
    assert_int_equal(policy_rules_match(rules, "read", "/workspace/x.sh", &m), POLICY_RULE_ALLOW);
    assert_int_equal(json_integer_value(json_object_get(m, "id")), 3);
    m = NULL;
    assert_int_equal(policy_rules_match(rules, "run", "/workspace/x.sh", &m), POLICY_RULE_NONE);
    assert_int_equal(policy_rules_match(rules, NULL, "/workspace/x.sh", &m), POLICY_RULE_NONE);
    json_decref(rules);
}

/* The proposal for "commands like this one": program, subcommand and leading options, then
 * " *"; exactly the command when it has anything a prefix could hide behind. */
static void test_derive(void **state)
{
    static const struct {
        const char *kind, *summary, *want;
    } cases[] = {
        {"run", "git push origin main", "git push *"},
        {"run", "git status", "git status *"},
        {"run", "git push --force origin main", "git push --force *"},
        {"run", "npm install lodash", "npm install *"},
        {"run", "rm -rf build", "rm -rf build"}, /* "build" may be a subcommand: exactly */
        {"run", "git -C /w push origin", "git -C /w push origin"},
        {"run", "rm -rf ./build/", "rm -rf *"},
        {"run", "ls -la /tmp", "ls -la *"},
        {"run", "ls", "ls *"},
        {"run", "make", "make *"},
        {"run", "  cargo   test  --release", "cargo   test  --release *"},
        {"run", "./run.sh data.csv", "./run.sh *"},
        {"run", "git commit -m 'a message'", "git commit -m 'a message'"},
        /* compound, substituted, redirected, globbed: exactly, glob characters escaped */
        {"run", "ls; rm -rf /", "ls; rm -rf /"},
        {"run", "cd /w && make", "cd /w && make"},
        {"run", "rm -rf /tmp/*", "rm -rf /tmp/\\*"},
        {"run", "echo $(id)", "echo $(id)"},
        {"run", "FOO=1 make", "FOO=1 make"},
        /* programs that run what they are given */
        {"run", "bash run.sh", "bash run.sh"},
        {"run", "python3 script.py", "python3 script.py"},
        {"run", "sudo make install", "sudo make install"},
        {"run", "xargs rm", "xargs rm"},
        {"run", "find . -name x", "find . -name x"},
        /* other kinds: the path, code or URL exactly */
        {"read", "/workspace/a[1].txt", "/workspace/a\\[1\\].txt"},
        {"write", "/workspace/main.c", "/workspace/main.c"},
        {"run_ipython", "print(1)", "print(1)"},
        {NULL, "ls -la", "ls -la"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char *got = policy_rule_derive(cases[i].kind, cases[i].summary);
        assert_non_null(got);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("derive(%s, \"%s\") = \"%s\", want \"%s\"",
                     cases[i].kind ? cases[i].kind : "-", cases[i].summary, got, cases[i].want);
        /* a proposal always covers the action it came from */
        assert_true(policy_allow_match(got, cases[i].summary) ||
                    strcmp(cases[i].summary, "  cargo   test  --release") == 0);
        free(got);
    }
    /* never broader than what was seen: the proposal from "ls -la" does not cover "ls; id" */
    char *p = policy_rule_derive("run", "ls -la");
    assert_false(policy_allow_match(p, "ls -la; id"));
    assert_false(policy_allow_match(p, "ls -la x | sh"));
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_table), cmocka_unit_test(test_rules_match),
        cmocka_unit_test(test_rule_names),   cmocka_unit_test(test_rule_check),
        cmocka_unit_test(test_allow_match),  cmocka_unit_test(test_deny_broad_and_kind),
        cmocka_unit_test(test_derive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
