/* Approval policy and operator rules (engine/risk/policy.c). */
#include "engine/risk/policy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

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
    const char *pat = NULL;
    assert_int_equal(policy_rules_match(rules, "git push origin main", &pat), POLICY_RULE_ALLOW);
    assert_string_equal(pat, "git push *");
    /* a deny wins over an earlier allow */
    assert_int_equal(policy_rules_match(rules, "git push --force origin", &pat), POLICY_RULE_DENY);
    assert_string_equal(pat, "*--force*");
    assert_int_equal(policy_rules_match(rules, "git pull", &pat), POLICY_RULE_NONE);
    assert_int_equal(policy_rules_match(rules, "ls -la", &pat),
                     POLICY_RULE_NONE); /* whole-string match only */
    assert_int_equal(policy_rules_match(NULL, "ls", &pat), POLICY_RULE_NONE);
    json_decref(rules);
    /* an escaped pattern matches only itself */
    rules = json_loads("[{\"pattern\":\"rm -rf /tmp/\\\\*\",\"decision\":\"allow\"}]", 0, NULL);
    assert_int_equal(policy_rules_match(rules, "rm -rf /tmp/*", &pat), POLICY_RULE_ALLOW);
    assert_int_equal(policy_rules_match(rules, "rm -rf /tmp/x", &pat), POLICY_RULE_NONE);
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
        {"{\"pattern\":\"x\",\"decision\":\"allow\",\"extra\":1}", "only"},
        {"[1]", "object"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        json_t *j = json_loads(cases[i].json, 0, NULL);
        assert_non_null(j);
        const char *why = policy_rule_check(j);
        if (cases[i].why) {
            assert_non_null(why);
            assert_non_null(strstr(why, cases[i].why));
        } else {
            assert_null(why);
        }
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_table),
        cmocka_unit_test(test_rules_match),
        cmocka_unit_test(test_rule_names),
        cmocka_unit_test(test_rule_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
