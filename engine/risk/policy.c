/* Approval policy and operator rules. The risk level comes from engine/risk/risk.c; this only says
 * what waits. */
#include "engine/risk/policy.h"

#include <fnmatch.h>
#include <string.h>

static const char *const policy_table[] = {
    [POLICY_NEVER] = "never",
    [POLICY_HIGH] = "high",
    [POLICY_MEDIUM] = "medium",
    [POLICY_ALWAYS] = "always",
};
/* The lowest risk level that waits under each policy (3: none). */
static const int policy_threshold[] = {
    [POLICY_NEVER] = 3,
    [POLICY_HIGH] = 2,
    [POLICY_MEDIUM] = 1,
    [POLICY_ALWAYS] = 0,
};

int policy_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof(policy_table) / sizeof(policy_table[0]); i++)
        if (strcmp(name, policy_table[i]) == 0)
            return (int)i;
    return -1;
}

const char *policy_name(enum policy p)
{
    return policy_table[p];
}

const char *policy_names(void)
{
    return "never, high, medium, always";
}

bool policy_needs_approval(enum policy p, int level)
{
    return level >= policy_threshold[p];
}

static const char *const policy_rule_names[POLICY_RULE_COUNT] = {
    [POLICY_RULE_ALLOW] = "allow",
    [POLICY_RULE_DENY] = "deny",
};

const char *policy_rule_name(enum policy_rule d)
{
    return (unsigned)d < POLICY_RULE_COUNT ? policy_rule_names[d] : NULL;
}

int policy_rule_parse(const char *name, enum policy_rule *d)
{
    for (int i = POLICY_RULE_ALLOW; name && i < POLICY_RULE_COUNT; i++)
        if (strcmp(policy_rule_names[i], name) == 0) {
            *d = (enum policy_rule)i;
            return 0;
        }
    return -1;
}

enum policy_rule policy_rules_match(json_t *rules, const char *summary, const char **pattern)
{
    enum policy_rule found = POLICY_RULE_NONE;
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        const char *pat = json_string_value(json_object_get(r, "pattern"));
        enum policy_rule dec;
        if (!pat ||
            policy_rule_parse(json_string_value(json_object_get(r, "decision")), &dec) < 0 ||
            fnmatch(pat, summary, 0) != 0)
            continue;
        if (dec == POLICY_RULE_DENY) {
            *pattern = pat;
            return POLICY_RULE_DENY;
        }
        if (found == POLICY_RULE_NONE) {
            found = dec;
            *pattern = pat;
        }
    }
    return found;
}

const char *policy_rule_check(json_t *rule)
{
    if (!json_is_object(rule))
        return "a rule is an object {\"pattern\": \"git push *\", \"decision\": "
               "\"allow\"|\"deny\"}";
    const char *pat = json_string_value(json_object_get(rule, "pattern"));
    enum policy_rule dec;
    if (!pat || !*pat || strlen(pat) > 4096)
        return "\"pattern\" must be a non-empty string (a shell glob such as \"git push *\")";
    if (policy_rule_parse(json_string_value(json_object_get(rule, "decision")), &dec) < 0)
        return "\"decision\" must be \"allow\" or \"deny\"";
    const char *k;
    json_t *v;
    json_object_foreach(rule, k, v)
    {
        if (strcmp(k, "pattern") != 0 && strcmp(k, "decision") != 0)
            return "a rule has only \"pattern\" and \"decision\"";
    }
    return NULL;
}
