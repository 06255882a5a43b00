/* Engine API: the action path, approvals, operator rules and history (docs/approvals.md). */
#include "common/timeconv.h"
#include "engine/action.h"
#include "engine/action_kind.h"
#include "engine/api.h"
#include "engine/base/action_state.h"
#include "engine/engine_internal.h"
#include "engine/risk/policy.h"
#include "engine/risk/risk.h"
#include "engine/session.h"
#include "engine/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void api_action_reply(const struct session_action_result *res, void *ud)
{
    api_reply_raw(ud, res->status, res->body, res->len, "application/json");
}

/* A query parameter as a number in [lo, hi]; dflt when absent; -1 (and a 400 reply) when bad. */
/* The action id of the first path parameter, or 0 and a 400 reply. */
static int64_t api_action_id(struct api_req *r)
{
    const char *p = api_req_param(r, 0);
    char *end = NULL;
    long long id = strtoll(p, &end, 10);
    if (*end || id <= 0) {
        api_reply_error(r, ERR_BAD_REQUEST, "an action id is a positive integer, not \"%.64s\"", p);
        return 0;
    }
    return id;
}

/* The body both execute_action and /v1/risk take, {"action": {...}}, checked: the action, or
 * NULL after a 400 reply. *body is the caller's to free (NULL when it did not parse). */
static json_t *api_action_body(struct api_req *r, json_t **body)
{
    *body = api_req_json(r, 0);
    if (!*body)
        return NULL;
    /* OpenHands' clients send {"action": ...} and nothing beside it (its ActionRequest has
     * that one field): anything else is a mistake or a smuggled payload, refused before any
     * of it is recorded or run, as unknown session options are. */
    const char *k;
    json_t *v;
    json_object_foreach(*body, k, v)
    {
        if (strcmp(k, "action") != 0) {
            api_reply_error(r, ERR_BAD_REQUEST,
                            "unknown field \"%.64s\" (the body is {\"action\": {...}} and "
                            "nothing else)",
                            k);
            return NULL;
        }
    }
    json_t *action = json_object_get(*body, "action");
    json_t *cstate = json_object_get(action, "confirmation_state");
    json_t *acstate = json_object_get(json_object_get(action, "args"), "confirmation_state");
    if (!json_is_object(action)) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"action\" must be an object (an OpenHands "
                        "action such as {\"action\":\"run\",\"args\":"
                        "{\"command\":\"ls\"}})");
    } else if (!json_is_string(json_object_get(action, "action"))) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"action.action\" must be a string");
    } else if (action_kind_find(json_string_value(json_object_get(action, "action"))) &&
               action_kind_find(json_string_value(json_object_get(action, "action")))
                   ->engine_side) {
        /* A terminal or a create is recorded by the engine as it happens, never asked here. */
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"%s\" is recorded by the engine itself, not an action to execute",
                        json_string_value(json_object_get(action, "action")));
    } else if (json_object_get(action, "args") &&
               !json_is_object(json_object_get(action, "args"))) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"action.args\" must be an object");
    } else if (json_is_number(json_object_get(action, "timeout")) &&
               json_number_value(json_object_get(action, "timeout")) > TIMECONV_TIMEOUT_MAX) {
        /* Refused before it is recorded: no timer holds a deadline like 1e300. */
        api_reply_error(
            r, ERR_BAD_REQUEST, "\"action.timeout\" is at most %.0f seconds (a day), not %g",
            TIMECONV_TIMEOUT_MAX, json_number_value(json_object_get(action, "timeout")));
    } else if ((cstate && !json_is_string(cstate)) ||
               (acstate && !json_is_string(acstate) && !json_is_null(acstate))) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"action.confirmation_state\" must be \"confirmed\", \"rejected\" or "
                        "\"awaiting_confirmation\"");
    } else {
        return action;
    }
    return NULL;
}

void api_route_execute(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (!s)
        return;
    double wait;
    if (api_query_number(r, "wait", 0, 1, 1, &wait) < 0)
        return;
    json_t *body;
    json_t *action = api_action_body(r, &body);
    if (action) {
        size_t len;
        const char *raw = api_req_body(r, &len);
        action_submit(s, action, raw, len, wait != 0, api_action_reply, r);
    }
    json_decref(body);
}

/* POST /v1/risk[?session=ID] {"action": {...}}: what execute_action would make of the action,
 * {risk, reason, declared_risk, rule}, recording nothing. rule: the operator's rule that would
 * decide it ({id, pattern, decision}; the engine-wide rules, and the session's when one is
 * named), null when none would; an allow rule the risk is above the ceiling of says so. */
void api_route_risk(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *sid = api_req_query(r, "session");
    if (sid) {
        json_t *stored = store_session_get(eng->store, sid);
        if (!stored) {
            api_reply_error(r, ERR_NOT_FOUND, "no session %.64s", sid);
            return;
        }
        json_decref(stored);
    }
    json_t *body;
    json_t *action = api_action_body(r, &body);
    if (action) {
        json_t *rules = store_rules_list(eng->store, sid ? sid : "");
        struct risk_result risk;
        action_kind_classify(action, ACTION_WORKSPACE, NULL, &risk);
        const char *kind = json_string_value(json_object_get(action, "action"));
        json_t *matched = NULL;
        enum policy_rule d = policy_rules_match(
            rules, kind, action_kind_summary(kind, json_object_get(action, "args")), &matched);
        json_t *rule = json_null();
        if (d != POLICY_RULE_NONE) {
            rule = json_pack("{s:O,s:O,s:s}", "id", json_object_get(matched, "id"), "pattern",
                             json_object_get(matched, "pattern"), "decision", policy_rule_name(d));
            if (d == POLICY_RULE_ALLOW && risk.level > eng->rule_ceiling)
                json_object_set_new(rule, "above_ceiling",
                                    json_string(risk_level_name(eng->rule_ceiling)));
        }
        api_reply_json(r, 200,
                       json_pack("{s:s,s:s,s:o,s:o}", "risk", risk_level_name(risk.level), "reason",
                                 risk.reason, "declared_risk",
                                 risk.declared >= 0
                                     ? json_string(risk_level_name((enum risk_level)risk.declared))
                                     : json_null(),
                                 "rule", rule));
        json_decref(rules);
    }
    json_decref(body);
}

static void api_action_waited(json_t *a, void *ud)
{
    struct api_req *r = ud;
    if (!a)
        api_reply_error(r, ERR_NOT_FOUND, "no action %s", api_req_param(r, 0));
    else
        api_reply_json(r, 200, json_incref(a));
}

/* GET /v1/actions/{id}[?wait=S]: the action with its args and observation; with wait, once it
 * has ended or after S seconds. */
void api_route_action_get(struct api_req *r)
{
    int64_t id = api_action_id(r);
    double wait;
    if (!id || api_query_number(r, "wait", 0, 600, 0, &wait) < 0)
        return;
    action_wait(api_req_engine(r), id, wait, api_action_waited, r);
}

/* {"by", "reason", "remember", "pattern", "scope"}: all optional; unknown keys and wrong types
 * are a 400. */
static json_t *api_decision_body(struct api_req *r, bool approve, struct action_decision *d)
{
    json_t *body = api_req_json(r, 1);
    if (!body)
        return NULL;
    const char *k;
    json_t *v;
    json_object_foreach(body, k, v)
    {
        bool str = strcmp(k, "by") == 0 || strcmp(k, "reason") == 0 ||
                   (approve && (strcmp(k, "pattern") == 0 || strcmp(k, "scope") == 0));
        bool flag = approve && strcmp(k, "remember") == 0;
        if ((!str && !flag) || (str && !json_is_string(v)) || (flag && !json_is_boolean(v)) ||
            (str && strlen(json_string_value(v)) > 4096)) {
            api_reply_error(r, ERR_BAD_REQUEST,
                            "%s takes {\"by\": name, \"reason\": text%s} (strings up to 4096 "
                            "bytes); \"%.64s\" is not one of them or has the wrong type",
                            approve ? "approve" : "reject",
                            approve ? ", \"remember\": true|false, \"pattern\": glob, \"scope\": "
                                      "once|session|engine"
                                    : "",
                            k);
            json_decref(body);
            return NULL;
        }
    }
    d->approve = approve;
    d->by = json_string_value(json_object_get(body, "by"));
    if (!d->by || !*d->by)
        d->by = "operator";
    d->reason = json_string_value(json_object_get(body, "reason"));
    d->remember = json_is_true(json_object_get(body, "remember"));
    d->pattern = json_string_value(json_object_get(body, "pattern"));
    static const char *const scopes[] = {[ACTION_SCOPE_ONCE] = "once",
                                         [ACTION_SCOPE_SESSION] = "session",
                                         [ACTION_SCOPE_ENGINE] = "engine"};
    const char *scope = json_string_value(json_object_get(body, "scope"));
    d->scope = ACTION_SCOPE_ONCE;
    for (size_t i = 0; scope && i < sizeof scopes / sizeof scopes[0]; i++)
        if (strcmp(scope, scopes[i]) == 0)
            d->scope = (enum action_scope)i;
    if (scope && strcmp(scope, scopes[d->scope]) != 0) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"scope\" must be \"once\", \"session\" or \"engine\"");
        json_decref(body);
        return NULL;
    }
    if (d->scope == ACTION_SCOPE_SESSION)
        d->remember = true;
    if (d->pattern && !d->remember) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"pattern\" goes with \"remember\": true");
        json_decref(body);
        return NULL;
    }
    if (d->pattern && !*d->pattern) {
        /* As POST /rules: an empty glob would be a rule that matches nothing. */
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"pattern\" must be a non-empty string (a shell glob such as \"git "
                        "push *\")");
        json_decref(body);
        return NULL;
    }
    return body;
}

static void api_decide(struct api_req *r, bool approve)
{
    int64_t id = api_action_id(r);
    if (!id)
        return;
    struct action_decision d = {0};
    json_t *body = api_decision_body(r, approve, &d);
    if (!body)
        return;
    struct action_result res;
    struct engine *eng = api_req_engine(r);
    action_decide(eng, id, &d, &res);
    if (res.status == 200)
        api_reply_json(r, 200, store_action_get(eng->store, id));
    else
        api_reply_error(r, res.err, "%s", res.message);
    json_decref(body);
}

void api_route_action_approve(struct api_req *r)
{
    api_decide(r, true);
}

void api_route_action_reject(struct api_req *r)
{
    api_decide(r, false);
}

/* GET /v1/approvals[?session=ID]: what waits for the operator, oldest first; each with the
 * allow rule proposed for "commands like this one" (proposed_rule, policy_rule_derive) and
 * whether its risk is above the rules' ceiling (above_ceiling: no rule would approve it). */
void api_route_approvals(struct api_req *r)
{
    json_t *list = store_actions_pending(api_req_engine(r)->store, api_req_query(r, "session"));
    /* Only what the engine holds: a row whose intent is still being synced cannot be decided
     * yet; its action event announces it once it can. */
    for (size_t k = json_array_size(list); k-- > 0;) {
        json_t *id = json_object_get(json_array_get(list, k), "id");
        if (!json_is_integer(id) || !action_is_held(api_req_engine(r), json_integer_value(id)))
            json_array_remove(list, k);
    }
    size_t i;
    json_t *a;
    json_array_foreach(list, i, a)
    {
        char *pat = policy_rule_derive(json_string_value(json_object_get(a, "kind")),
                                       json_string_value(json_object_get(a, "summary")));
        json_object_set_new(a, "proposed_rule", pat ? json_string(pat) : json_null());
        free(pat);
        /* a rule never approves what is rated above the ceiling: the proposal says so */
        int level = risk_level_parse(json_string_value(json_object_get(a, "risk")));
        json_object_set_new(a, "above_ceiling",
                            json_boolean(level > (int)api_req_engine(r)->rule_ceiling));
    }
    api_reply_json(r, 200, json_pack("{s:o}", "approvals", list));
}

/* GET /v1/verify[?session=ID][&entries=1]: walk the tamper-evident record (the session's chain
 * or every entry and the engine's) against the rows; entries=1 adds the session's entries (what
 * an export carries to be checked on its own). */
void api_route_verify(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *session = api_req_query(r, "session");
    const char *entries = api_req_query(r, "entries");
    char *err = NULL;
    json_t *out = store_chain_verify(eng->store, session && *session ? session : NULL, &err);
    if (!out) {
        api_reply_error(r, ERR_STORE_ERROR, "%s", err ? err : "the record cannot be read");
        free(err);
        return;
    }
    if (session && *session && entries && strcmp(entries, "1") == 0)
        json_object_set_new(out, "chain", store_chain_entries(eng->store, session));
    api_reply_json(r, 200, out);
}

/* GET /v1/history?q=&session=&kind=&state=&risk=&before=&limit=: every session's actions,
 * newest first, q searched in commands and outputs. */
void api_route_history(struct api_req *r)
{
    double limit, before;
    if (api_query_number(r, "limit", 1, 1000, 100, &limit) < 0 ||
        api_query_number(r, "before", 0, 9e15, 0, &before) < 0)
        return;
    const char *q = api_req_query(r, "q");
    if (q && strlen(q) > 1024) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"q\" is at most 1024 bytes");
        return;
    }
    struct store_search s = {.text = q && *q ? q : NULL,
                             .session_id = api_req_query(r, "session"),
                             .kind = api_req_query(r, "kind"),
                             .before = (int64_t)before,
                             .limit = (int)limit};
    if (s.kind && !action_kind_find(s.kind)) {
        const char *names[ACTION_KIND_MAX + 1];
        char list[512] = "";
        action_kind_names(NULL, names);
        for (size_t i = 0, n = 0; names[i] && n < sizeof(list); i++)
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", names[i]);
        api_reply_error(r, ERR_BAD_REQUEST, "no action kind \"%.64s\"; \"kind\" is one of %s",
                        s.kind, list);
        return;
    }
    const char *risk_name = api_req_query(r, "risk");
    int risk_level = risk_name ? risk_level_parse(risk_name) : -1; /* any case, as agents send */
    enum risk_level risk = (enum risk_level)risk_level;
    if (risk_name && risk_level < 0) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"risk\" is low, medium or high");
        return;
    }
    s.risk = risk_name ? &risk : NULL;
    const char *state_name = api_req_query(r, "state");
    enum action_st state;
    if (state_name && action_st_parse(state_name, &state) < 0) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"state\" is pending, running, done, failed, rejected, interrupted or "
                        "skipped");
        return;
    }
    s.state = state_name ? &state : NULL;
    char *err = NULL;
    json_t *list = store_actions_search(api_req_engine(r)->store, &s, &err);
    if (!list) {
        api_reply_error(r, ERR_STORE_ERROR, "%s", err ? err : "search failed");
        free(err);
        return;
    }
    size_t n = json_array_size(list);
    json_t *next = n == (size_t)limit ? json_object_get(json_array_get(list, n - 1), "id") : NULL;
    api_reply_json(
        r, 200, json_pack("{s:o,s:O}", "actions", list, "next_before", next ? next : json_null()));
}
