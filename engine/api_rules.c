/* Engine API: the operator's rules (docs/approvals.md). Engine-wide rules (the config file's
 * and the API's) and a session's, listed, added, edited and removed; every change recorded in
 * the tamper-evident chain by the store. The config file's rules change only there. */
#include "engine/action.h"
#include "engine/action_kind.h"
#include "engine/api.h"
#include "engine/engine_internal.h"
#include "engine/risk/policy.h"
#include "engine/risk/risk.h"
#include "engine/session.h"
#include "engine/store/store.h"

#include "engine/base/util.h"

#include <stdlib.h>
#include <string.h>

/* Who made the change: the body's "by", else "operator". */
static const char *api_rules_by(json_t *body)
{
    const char *by = json_string_value(json_object_get(body, "by"));
    return by && *by ? by : "operator";
}

/* A rule's kind, when given, names an action kind the engine knows. */
static bool api_rules_kind_ok(struct api_req *r, json_t *body)
{
    const char *kind = json_string_value(json_object_get(body, "kind"));
    if (kind && *kind && !action_kind_find(kind)) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"kind\" \"%.64s\" is not an action kind (run, read, write, edit, "
                        "run_ipython, browse, ...)",
                        kind);
        return false;
    }
    return true;
}

/* GET /v1/rules[?session=ID]: the rules in force (the engine-wide ones, then the session's or,
 * without one, every session's) and the ceiling. */
void api_route_rules_list(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *sid = api_req_query(r, "session");
    api_reply_json(r, 200,
                   json_pack("{s:o,s:s}", "rules", store_rules_list(eng->store, sid), "ceiling",
                             risk_level_name(eng->rule_ceiling)));
}

/* Add a rule from body (checked) to session_id (NULL: engine-wide); replies 201 the rule. */
static void api_rules_add(struct api_req *r, json_t *body, const char *session_id,
                          const char *const *keys)
{
    struct engine *eng = api_req_engine(r);
    const char *why = policy_rule_check(body, keys);
    struct action_result res = {0};
    int64_t id;
    if (why)
        api_reply_error(r, ERR_BAD_REQUEST, "%s", why);
    else if (!api_rules_kind_ok(r, body))
        ;
    else if ((id = action_rule_add(eng, session_id, body, api_rules_by(body), &res)) < 0)
        api_reply_error(r, res.err, "%s", res.message);
    else
        api_reply_json(r, 201, store_rule_get(eng->store, id));
}

/* POST /v1/rules {"pattern", "decision", "kind"?, "session"?, "by"?}: engine-wide, or for the
 * rest of a live session. */
void api_route_rules_add(struct api_req *r)
{
    static const char *const keys[] = {"kind", "session", "by", NULL};
    json_t *body = api_req_json(r, 0);
    if (!body)
        return;
    json_t *sid = json_object_get(body, "session");
    struct session *s = NULL;
    if (sid && !json_is_null(sid)) {
        s = json_is_string(sid) ? session_find(api_req_engine(r), json_string_value(sid)) : NULL;
        if (!s) {
            api_reply_error(r, ERR_NOT_FOUND, "no live session %.64s",
                            json_is_string(sid) ? json_string_value(sid) : "(not a string)");
            json_decref(body);
            return;
        }
    }
    api_rules_add(r, body, s ? session_id(s) : NULL, keys);
    json_decref(body);
}

/* GET /v1/sessions/{id}/rules: the rules that apply to the session (engine-wide, then its). */
void api_route_session_rules_get(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    if (!api_session_known(r))
        return;
    api_reply_json(r, 200,
                   json_pack("{s:o,s:s}", "rules",
                             store_rules_list(eng->store, api_req_param(r, 0)), "ceiling",
                             risk_level_name(eng->rule_ceiling)));
}

/* POST /v1/sessions/{id}/rules {"pattern", "decision", "kind"?, "by"?}: for the rest of the
 * session; 201 and the rules that apply to it. */
void api_route_session_rules_add(struct api_req *r)
{
    static const char *const keys[] = {"kind", "by", NULL};
    struct session *s = api_live_session(r);
    if (!s)
        return;
    json_t *body = api_req_json(r, 0);
    if (!body)
        return;
    struct engine *eng = api_req_engine(r);
    const char *why = policy_rule_check(body, keys);
    struct action_result res = {0};
    if (why)
        api_reply_error(r, ERR_BAD_REQUEST, "%s", why);
    else if (!api_rules_kind_ok(r, body))
        ;
    else if (action_rule_add(eng, session_id(s), body, api_rules_by(body), &res) < 0)
        api_reply_error(r, res.err, "%s", res.message);
    else
        api_reply_json(r, 201,
                       json_pack("{s:o}", "rules", store_rules_list(eng->store, session_id(s))));
    json_decref(body);
}

/* The rule named by the path, in force and not the config file's (that one changes only in
 * the file): the caller's reference, or NULL after replying. */
static json_t *api_rules_target(struct api_req *r, int64_t *id)
{
    const char *p = api_req_param(r, 0);
    char *end = NULL;
    long long v = p ? strtoll(p, &end, 10) : 0;
    if (!p || !*p || *end || v <= 0) {
        api_reply_error(r, ERR_BAD_REQUEST, "a rule's id is a positive integer, not \"%.32s\"",
                        p ? p : "");
        return NULL;
    }
    json_t *rule = store_rule_get(api_req_engine(r)->store, v);
    if (!rule) {
        api_reply_error(r, ERR_NOT_FOUND, "no rule %lld (paddock rules list shows them)", v);
        return NULL;
    }
    const char *origin = json_string_value(json_object_get(rule, "origin"));
    if (origin && strcmp(origin, "config") == 0) {
        api_reply_error(r, ERR_CONFLICT,
                        "rule %lld comes from the config file ([approvals] allow/deny); change "
                        "it there and restart the engine",
                        v);
        json_decref(rule);
        return NULL;
    }
    *id = v;
    return rule;
}

/* GET /v1/rules/{id}: one rule in force. */
void api_route_rule_get(struct api_req *r)
{
    const char *p = api_req_param(r, 0);
    json_t *rule = p ? store_rule_get(api_req_engine(r)->store, strtoll(p, NULL, 10)) : NULL;
    if (!rule)
        api_reply_error(r, ERR_NOT_FOUND, "no rule %.32s (paddock rules list shows them)",
                        p ? p : "");
    else
        api_reply_json(r, 200, rule);
}

/* PATCH /v1/rules/{id} {"pattern"?, "decision"?, "kind"? (null or "": every kind), "by"?}. */
void api_route_rule_edit(struct api_req *r)
{
    int64_t id = 0;
    json_t *rule = api_rules_target(r, &id);
    if (!rule)
        return;
    json_t *body = api_req_json(r, 0);
    if (!body) {
        json_decref(rule);
        return;
    }
    /* The rule as it would be, checked as a new one. */
    json_t *want = json_pack("{s:O,s:O}", "pattern", json_object_get(rule, "pattern"), "decision",
                             json_object_get(rule, "decision"));
    const char *k;
    json_t *v;
    json_object_foreach(body, k, v)
    {
        if (strcmp(k, "by") != 0)
            json_object_set(want, k, v);
    }
    static const char *const keys[] = {"kind", NULL};
    const char *why = policy_rule_check(want, keys);
    json_t *kind = json_object_get(body, "kind");
    enum policy_rule dec = POLICY_RULE_NONE;
    struct engine *eng = api_req_engine(r);
    char *err = NULL;
    if (why) {
        api_reply_error(r, ERR_BAD_REQUEST, "%s", why);
    } else if (!api_rules_kind_ok(r, body)) {
    } else {
        if (json_object_get(body, "decision"))
            policy_rule_parse(json_string_value(json_object_get(body, "decision")), &dec);
        int rc =
            store_rule_edit(eng->store, id, json_string_value(json_object_get(body, "pattern")),
                            kind ? (json_is_string(kind) ? json_string_value(kind) : "") : NULL,
                            dec, api_rules_by(body), util_now(), &err);
        if (rc < 0) {
            api_reply_error(r, ERR_STORE_ERROR, "the rule was not changed: %s",
                            err ? err : "store error");
        } else if (rc == 0) {
            api_reply_error(r, ERR_NOT_FOUND, "no rule %lld", (long long)id);
        } else {
            eng->rules_gen++;
            api_reply_json(r, 200, store_rule_get(eng->store, id));
        }
    }
    free(err);
    json_decref(want);
    json_decref(body);
    json_decref(rule);
}

/* DELETE /v1/rules/{id}[?by=NAME]: the rule stops applying; its row stays for the record. */
void api_route_rule_remove(struct api_req *r)
{
    int64_t id = 0;
    json_t *rule = api_rules_target(r, &id);
    if (!rule)
        return;
    struct engine *eng = api_req_engine(r);
    const char *by = api_req_query(r, "by");
    char *err = NULL;
    int rc = store_rule_remove(eng->store, id, by && *by ? by : "operator", util_now(), &err);
    if (rc < 0) {
        api_reply_error(r, ERR_STORE_ERROR, "the rule was not removed: %s",
                        err ? err : "store error");
        json_decref(rule);
    } else if (rc == 0) {
        api_reply_error(r, ERR_NOT_FOUND, "no rule %lld", (long long)id);
        json_decref(rule);
    } else {
        eng->rules_gen++;
        api_reply_json(r, 200, json_pack("{s:o}", "removed", rule));
    }
    free(err);
}

int api_rules_load_config(struct engine *eng, const char *ceiling, const char *const *allow,
                          const char *const *deny, char **err)
{
    int level = ceiling ? risk_level_parse(ceiling) : (int)RISK_HIGH;
    if (level < 0) {
        *err = util_strdupf("rule ceiling \"%s\" is not a risk level (low, medium, high)", ceiling);
        return -1;
    }
    eng->rule_ceiling = (enum risk_level)level;
    json_t *rules = json_array();
    const char *const *lists[] = {deny, allow};
    const enum policy_rule decisions[] = {POLICY_RULE_DENY, POLICY_RULE_ALLOW};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; lists[l] && lists[l][i]; i++) {
            if (!*lists[l][i] || strlen(lists[l][i]) > 4096) {
                *err = util_strdupf("[approvals] %s: a pattern is 1 to 4096 characters",
                                    policy_rule_name(decisions[l]));
                json_decref(rules);
                return -1;
            }
            json_array_append_new(rules, json_pack("{s:s,s:s}", "pattern", lists[l][i], "decision",
                                                   policy_rule_name(decisions[l])));
        }
    int rc = store_rules_sync_config(eng->store, rules, util_now(), err);
    json_decref(rules);
    eng->rules_gen++;
    return rc;
}
