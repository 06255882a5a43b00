/* The engine's JSON request handling, from the bytes of a request body on, as a local or TCP
 * client sends them: parsed as api_req_json does (JSON_REJECT_DUPLICATES), then what the
 * route does with the object before any Docker or store call. The first byte picks the route:
 *   0  POST /v1/sessions: session_config_parse, then the stored form and the container body
 *   1  POST /v1/risk and execute_action: the action's summary, risk and the operator rules
 *   2  POST /v1/sessions/{id}/rules: policy_rule_check, then the rule matched against the
 *      input's own text as a summary
 * The engine is a stand-in with a state dir that does not exist: nothing is created. */
#include "engine/action_kind.h"
#include "engine/engine_internal.h"
#include "engine/risk/policy.h"
#include "engine/risk/risk.h"
#include "engine/session.h"
#include "engine/session_config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void route_sessions_create(json_t *opts, const char *text)
{
    static struct engine eng = {
        .state_dir = "/nonexistent/paddock-fuzz/state",
        .executor_path = "/nonexistent/paddock-fuzz/paddock-executor",
        .engine_id = "0123456789abcdef",
        .default_image = "paddock/base:local",
        .seccomp_opt = "seccomp=PROFILE",
    };
    struct session_config *c = NULL;
    struct session_result bad = {0};
    if (session_config_parse(&eng, opts, &c, &bad) < 0)
        return;
    json_decref(session_config_stored(c, &eng, "fuzzid", "paddock/base:local"));
    json_decref(session_config_container(&eng, c, "fuzzid", "/nonexistent/paddock-fuzz/sock"));
    session_config_free(c);
}

static void route_risk(json_t *body, const char *text)
{
    json_t *action = json_object_get(body, "action");
    const char *kind = json_string_value(json_object_get(action, "action"));
    if (!json_is_object(action) || !kind)
        return;
    struct risk_result risk;
    action_kind_classify(action, "/workspace", NULL, &risk);
    if (risk.level < RISK_LOW || risk.level > RISK_HIGH)
        abort();
    const char *summary = action_kind_summary(kind, json_object_get(action, "args"));
    if (!summary)
        summary = "";
    json_t *rules = json_pack("[{s:i,s:s,s:s},{s:i,s:s,s:s},{s:i,s:s,s:s,s:s}]", "id", 1, "pattern",
                              "git push *", "decision", "deny", "id", 2, "pattern", "ls -la *",
                              "decision", "allow", "id", 3, "pattern", "/workspace/*", "decision",
                              "allow", "kind", "write");
    json_t *matched = NULL;
    policy_rules_match(rules, kind, summary, &matched);
    json_decref(rules);
    /* "allow commands like this one" must at least allow this one (but for the spaces before
     * a command, which the proposal leaves out: tests/unit/test_policy.c) */
    char *derived = policy_rule_derive(kind, summary);
    if (derived && !policy_allow_match(derived, summary) &&
        !policy_allow_match(derived, summary + strspn(summary, " ")))
        abort();
    free(derived);
}

static void route_rules_add(json_t *rule, const char *text)
{
    static const char *const keys[] = {"kind", NULL};
    if (policy_rule_check(rule, keys))
        return;
    json_t *rules = json_array();
    json_array_append(rules, rule);
    json_t *matched = NULL;
    const char *kind = json_string_value(json_object_get(rule, "kind"));
    policy_rules_match(rules, kind ? kind : "run", text, &matched);
    policy_allow_match(json_string_value(json_object_get(rule, "pattern")), text);
    json_decref(rules);
}

/* By the first byte: the routes above, in the order of the comment at the top. */
static void (*const routes[])(json_t *body, const char *text) = {
    route_sessions_create,
    route_risk,
    route_rules_add,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    json_t *j = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, NULL);
    char *text = strndup((const char *)data + 1, size - 1);
    if (json_is_object(j) && text)
        routes[data[0] % (sizeof(routes) / sizeof(routes[0]))](j, text);
    free(text);
    json_decref(j);
    return 0;
}
