/* Engine API endpoints: one handler each, one line each in the table at the bottom. */
#include "engine/api.h"

#include "engine/base/session_state.h"
#include "engine/browse.h"
#include "engine/changes.h"
#include "engine/commit.h"
#include "engine/disk.h"
#include "engine/driver.h"
#include "engine/egress.h"
#include "engine/engine_internal.h"
#include "engine/files.h"
#include "engine/gc.h"
#include "engine/images.h"
#include "engine/listen.h"
#include "engine/logs.h"
#include "engine/output.h"
#include "engine/pool.h"
#include "engine/remote_runtime.h"
#include "engine/seccomp_probe.h"
#include "engine/security.h"
#include "engine/session.h"
#include "engine/session_internal.h"
#include "engine/stats.h"
#include "engine/store/store.h"
#include "engine/terminal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What `paddock run --engine auto` weighs: the machine's CPUs and memory (MemAvailable), and
 * the sessions this engine runs (warm pool ones not counted: they are free to take). */
static json_t *route_info_capacity(struct engine *eng)
{
    long long total = 0, avail = 0;
    FILE *f = fopen("/proc/meminfo", "re");
    char line[128];
    while (f && fgets(line, sizeof(line), f)) {
        long long kb;
        if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
            total = kb * 1024;
        else if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            avail = kb * 1024;
    }
    if (f)
        fclose(f);
    long long live = session_count_live(eng);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return json_pack("{s:I,s:I,s:I,s:I}", "cpus", (json_int_t)(cpus > 0 ? cpus : 1), "memory_total",
                     (json_int_t)total, "memory_free", (json_int_t)avail, "sessions",
                     (json_int_t)live);
}

static void route_info(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    json_t *info = json_pack(
        "{s:s,s:s,s:s,s:s,s:s?,s:{s:s,s:b,s:s?,s:s?}}", "version", PADDOCK_VERSION, "api", "v1",
        "state_dir", eng->state_dir, "default_image", eng->default_image, "executor",
        eng->executor_path, "docker", "socket", eng->driver->address(eng), "reachable",
        eng->docker_ok, "api_version", eng->docker_api_version, "error", eng->docker_error);
    json_object_set_new(info, "listen", listen_info(eng));
    json_object_set_new(info, "capacity", route_info_capacity(eng));
    json_object_set_new(info, "seccomp", seccomp_probe_info(eng));
    json_object_set_new(info, "security", security_info(eng));
    json_object_set_new(info, "channel", json_string(api_req_channel(r)));
    json_object_set_new(info, "disk", disk_info_json(eng));
    json_object_set_new(info, "unsafe_bench", engine_bench_info(eng));
    /* The group commit's batching (commit.c): commits, the writes they carried, the most one
     * carried. */
    struct commit_counts cc;
    commit_counts(eng, &cc);
    json_object_set_new(info, "record",
                        json_pack("{s:I,s:I,s:I}", "commits", (json_int_t)cc.commits, "writes",
                                  (json_int_t)cc.writes, "largest", (json_int_t)cc.largest));
    api_reply_json(r, 200, info);
}

/* GET /v1/sessions[?all=1&pool=1&state=S&image=TEXT&since=T&until=T&limit=N&before=ID]:
 * newest first, filtered; with limit, one page and "next_before" (the next page's cursor, or
 * null at the end). */
static void route_sessions_list(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *all = api_req_query(r, "all");
    const char *pool = api_req_query(r, "pool");
    double since, until, limit;
    if (api_query_number(r, "since", 0, 9e15, 0, &since) < 0 ||
        api_query_number(r, "until", 0, 9e15, 0, &until) < 0 ||
        api_query_number(r, "limit", 1, 1000, 0, &limit) < 0)
        return;
    if (limit != (double)(long)limit) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"limit\" must be an integer from 1 to 1000");
        return;
    }
    struct store_session_query q = {
        .flags = (all && strcmp(all, "0") != 0 ? STORE_LIST_DELETED : 0) |
                 (pool && strcmp(pool, "0") != 0 ? STORE_LIST_POOLED : 0),
        .image = api_req_query(r, "image"),
        .before = api_req_query(r, "before"),
        .since = since,
        .until = until,
        .limit = (int)limit,
    };
    const char *state_name = api_req_query(r, "state");
    enum session_st state;
    if (state_name) {
        if (session_st_parse(state_name, &state) < 0) {
            api_reply_error(r, ERR_BAD_REQUEST, "no session state \"%.64s\"", state_name);
            return;
        }
        q.state = &state;
    }
    if (q.image && strlen(q.image) > 512) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"image\" is at most 512 bytes");
        return;
    }
    json_t *cursor = q.before ? store_session_get(eng->store, q.before) : NULL;
    if (q.before && !cursor) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"before\": no session %.64s", q.before);
        return;
    }
    json_decref(cursor);
    char *err = NULL;
    json_t *list = store_sessions_query(eng->store, &q, &err);
    if (!list) {
        api_reply_error(r, ERR_STORE_ERROR, "%s", err ? err : "listing sessions failed");
        free(err);
        return;
    }
    size_t n = json_array_size(list);
    json_t *next =
        q.limit && n == (size_t)q.limit ? json_object_get(json_array_get(list, n - 1), "id") : NULL;
    api_reply_json(
        r, 200, json_pack("{s:o,s:O}", "sessions", list, "next_before", next ? next : json_null()));
}

static void route_reply_result(const struct session_result *res, void *ud)
{
    struct api_req *r = ud;
    if (res->err && res->session_id)
        api_reply_json(r, err_status(res->err),
                       json_pack("{s:{s:s,s:s,s:s}}", "error", "code", err_name(res->err),
                                 "message", res->message ? res->message : "error", "session",
                                 res->session_id));
    else if (res->err)
        api_reply_error(r, res->err, "%s", res->message);
    else
        api_reply_json(r, res->status, json_incref(res->body));
}

static void route_sessions_create(struct api_req *r)
{
    json_t *opts = api_req_json(r, 1);
    if (!opts)
        return;
    /* OpenHands' attach_to_existing: the session by id or name, never a new one. */
    json_t *attach = json_object_get(opts, "attach");
    if (attach) {
        if (!json_is_string(attach) || json_object_size(opts) != 1)
            api_reply_error(r, ERR_BAD_REQUEST,
                            "\"attach\" takes a session id or name, and no other field");
        else
            session_attach(api_req_engine(r), json_string_value(attach), route_reply_result, r);
        json_decref(opts);
        return;
    }
    struct session_result bad = {0};
    if (session_create(api_req_engine(r), opts, !api_req_is_operator(r), route_reply_result, r,
                       &bad) < 0)
        api_reply_error(r, bad.err, "%s", bad.message);
    json_decref(opts);
}

json_t *api_stored_session(struct api_req *r)
{
    json_t *s = store_session_get(api_req_engine(r)->store, api_req_param(r, 0));
    if (!s)
        api_reply_error(r, ERR_NOT_FOUND, "no session %s", api_req_param(r, 0));
    return s;
}

static void route_session_get(struct api_req *r)
{
    json_t *s = api_stored_session(r);
    json_t *disk = s ? disk_session_json(api_req_engine(r), api_req_param(r, 0)) : NULL;
    if (disk)
        json_object_set_new(s, "disk", disk);
    if (s)
        api_reply_json(r, 200, s);
}

bool api_session_known(struct api_req *r)
{
    json_t *s = api_stored_session(r);
    json_decref(s);
    return s != NULL;
}

struct session *api_live_session(struct api_req *r)
{
    const char *id = api_req_param(r, 0);
    struct session *s = session_find(api_req_engine(r), id);
    if (s)
        return s;
    json_t *stored = store_session_get(api_req_engine(r)->store, id);
    if (stored)
        api_reply_error(r, ERR_CONFLICT, "session %s is %s; create a new session", id,
                        json_string_value(json_object_get(stored, "state")));
    else
        api_reply_error(r, ERR_NOT_FOUND, "no session %s", id);
    json_decref(stored);
    return NULL;
}

static void route_session_delete(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (s)
        session_delete(s, route_reply_result, r);
}

static void route_session_pause(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (s)
        session_pause(s, route_reply_result, r);
}

static void route_session_resume(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (s)
        session_resume(s, route_reply_result, r);
}

/* POST /v1/sessions/{id}/limits {"disk": SIZE}: the operator raises (or lowers) the limit. */
static void route_session_limits(struct api_req *r)
{
    struct session *s = api_live_session(r);
    json_t *body = s ? api_req_json(r, 0) : NULL;
    if (!body)
        return;
    char msg[300];
    enum err_code e = disk_limit_set(api_req_engine(r), session_id(s), body, msg, sizeof(msg));
    json_decref(body);
    if (e != ERR_NONE)
        api_reply_error(r, e, "%s", msg);
    else
        route_session_get(r);
}

static void route_session_stop(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (s)
        session_stop(s, route_reply_result, r);
}

static void route_session_events(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *id = api_req_param(r, 0);
    if (!api_session_known(r))
        return;
    api_reply_json(r, 200, json_pack("{s:o}", "events", store_events_list(eng->store, id, 1000)));
}

static void route_gc_reply(unsigned status, json_t *report, void *ud)
{
    api_reply_json(ud, status, json_incref(report));
}

static void route_gc(struct api_req *r)
{
    json_t *opts = api_req_json(r, 1);
    if (!opts)
        return;
    json_t *dry = json_object_get(opts, "dry_run");
    if ((dry && !json_is_boolean(dry)) || json_object_size(opts) > (dry ? 1u : 0u))
        api_reply_error(r, ERR_BAD_REQUEST, "the body is {} or {\"dry_run\": true|false}");
    else
        gc_run(api_req_engine(r), json_is_true(dry), route_gc_reply, r);
    json_decref(opts);
}

static void route_session_actions(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *id = api_req_param(r, 0);
    if (!api_session_known(r))
        return;
    const char *ls = api_req_query(r, "limit"), *bs = api_req_query(r, "before");
    char *end = NULL;
    long limit = ls ? strtol(ls, &end, 10) : 100;
    if (ls && (*end || limit < 1 || limit > 1000)) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"limit\" must be an integer from 1 to 1000");
        return;
    }
    long long before = bs ? strtoll(bs, &end, 10) : 0;
    if (bs && (*end || before < 0)) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"before\" must be a non-negative action id");
        return;
    }
    json_t *list = store_actions_list(eng->store, id, (int)limit, before);
    size_t n = json_array_size(list);
    json_t *next = n == (size_t)limit ? json_object_get(json_array_get(list, n - 1), "id") : NULL;
    api_reply_json(
        r, 200, json_pack("{s:o,s:O}", "actions", list, "next_before", next ? next : json_null()));
}

/* GET /v1/sessions/{id}/stats?since=T&limit=N: resource samples, oldest first. */
static void route_session_stats(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    if (!api_session_known(r))
        return;
    stats_flush(eng->stats, api_req_param(r, 0));
    const char *since = api_req_query(r, "since"), *limit = api_req_query(r, "limit");
    char *end = NULL;
    double t = since ? strtod(since, &end) : 0;
    long n = limit ? strtol(limit, &end, 10) : 3600;
    if ((since && (!*since || *end)) || (limit && (!*limit || *end || n < 1 || n > 100000))) {
        api_reply_error(r, ERR_BAD_REQUEST, "since must be a time in seconds, limit 1..100000");
        return;
    }
    api_reply_json(r, 200,
                   json_pack("{s:o}", "samples",
                             store_samples_list(eng->store, api_req_param(r, 0), t, (int)n)));
}

static void route_pool_get(struct api_req *r)
{
    api_reply_json(r, 200, pool_status(api_req_engine(r)));
}

/* POST /v1/pool {"image"?, "size"}: change a pool's size; it fills or shrinks in the
 * background. */
static void route_pool_set(struct api_req *r)
{
    json_t *body = api_req_json(r, 0);
    if (!body)
        return;
    struct engine *eng = api_req_engine(r);
    json_t *img = json_object_get(body, "image"), *size = json_object_get(body, "size");
    const char *k;
    json_t *v;
    json_object_foreach(body, k, v)
    {
        if (strcmp(k, "image") && strcmp(k, "size")) {
            api_reply_error(r, ERR_BAD_REQUEST, "unknown field \"%.64s\" (known: image, size)", k);
            json_decref(body);
            return;
        }
    }
    if (!json_is_integer(size) || (img && !json_is_string(img))) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"size\" must be an integer and \"image\" a string");
        json_decref(body);
        return;
    }
    char *err = NULL;
    if (pool_set(eng, img ? json_string_value(img) : eng->default_image,
                 (long)json_integer_value(size), &err) < 0)
        api_reply_error(r, ERR_BAD_REQUEST, "%s", err ? err : "refused");
    else
        api_reply_json(r, 200, pool_status(eng));
    free(err);
    json_decref(body);
}

/* API_ROUTE_OPERATOR: the operator's decisions, the engine's own settings and the operator's
 * reads (docs/security.md, "What only the operator can do"). What weakens a sandbox (options, a
 * root terminal) is not a route of its own: [security] decides it where it is asked
 * (engine/security.c). */
const struct api_route api_routes[] = {
    {"GET", "/v1/info", route_info, 0},
    {"GET", "/v1/sessions", route_sessions_list, 0},
    {"POST", "/v1/sessions", route_sessions_create, 0},
    {"GET", "/v1/sessions/*", route_session_get, 0},
    {"DELETE", "/v1/sessions/*", route_session_delete, 0},
    /* The operator's call: an agent does not raise its own sandbox's disk limit. */
    {.method = "POST",
     .pattern = "/v1/sessions/*/limits",
     .fn = route_session_limits,
     .flags = API_ROUTE_OPERATOR},
    {"POST", "/v1/sessions/*/execute_action", api_route_execute, 0},
    {"POST", "/v1/risk", api_route_risk, 0},
    {"GET", "/v1/actions/*", api_route_action_get, 0},
    {"GET", "/v1/actions/*/output", output_route_get, 0},
    {"POST", "/v1/actions/*/approve", api_route_action_approve, API_ROUTE_OPERATOR},
    {"POST", "/v1/actions/*/reject", api_route_action_reject, API_ROUTE_OPERATOR},
    {"GET", "/v1/approvals", api_route_approvals, 0},
    {"GET", "/v1/verify", api_route_verify, 0},
    {"GET", "/v1/sessions/*/rules", api_route_session_rules_get, 0},
    /* The operator's rules: a change is the operator's, never the agent's. */
    {.method = "POST",
     .pattern = "/v1/sessions/*/rules",
     .fn = api_route_session_rules_add,
     .flags = API_ROUTE_OPERATOR},
    {"GET", "/v1/rules", api_route_rules_list, 0},
    {.method = "POST",
     .pattern = "/v1/rules",
     .fn = api_route_rules_add,
     .flags = API_ROUTE_OPERATOR},
    {"GET", "/v1/rules/*", api_route_rule_get, 0},
    {.method = "PATCH",
     .pattern = "/v1/rules/*",
     .fn = api_route_rule_edit,
     .flags = API_ROUTE_OPERATOR},
    {.method = "DELETE",
     .pattern = "/v1/rules/*",
     .fn = api_route_rule_remove,
     .flags = API_ROUTE_OPERATOR},
    {"GET", "/v1/history", api_route_history, 0},
    {"POST", "/v1/sessions/*/terminal", terminal_route_open, 0},
    {"POST", "/v1/sessions/*/terminal/resize", terminal_route_resize, 0},
    {"GET", "/v1/sessions/*/terminal/*", terminal_route_get, 0},
    {"GET", "/v1/sessions/*/actions", route_session_actions, 0},
    {"POST", "/v1/sessions/*/pause", route_session_pause, 0},
    {"POST", "/v1/sessions/*/resume", route_session_resume, 0},
    {"POST", "/v1/sessions/*/stop", route_session_stop, 0},
    {"GET", "/v1/sessions/*/events", route_session_events, 0},
    {"POST", "/v1/gc", route_gc, API_ROUTE_OPERATOR},
    {"GET", "/v1/sessions/*/logs", logs_route_get, 0},
    {"GET", "/v1/sessions/*/changes", changes_route_get, 0},
    {"GET", "/v1/sessions/*/egress", egress_route_list, 0},
    {"GET", "/v1/sessions/*/stats", route_session_stats, 0},
    {"GET", "/v1/events", api_events_open, 0},
    {"POST", "/v1/images", images_route_build, 0},
    {"GET", "/v1/images", images_route_list, 0},
    {"GET", "/v1/images/builds/*", images_route_build_get, 0},
    {"DELETE", "/v1/images/*", images_route_remove, API_ROUTE_OPERATOR},
    {"GET", "/v1/pool", route_pool_get, 0},
    {"POST", "/v1/pool", route_pool_set, API_ROUTE_OPERATOR},
    {"POST", "/v1/sessions/*/upload_file", files_route_upload, 0},
    {"GET", "/v1/sessions/*/download_files", files_route_download, 0},
    {"POST", "/v1/sessions/*/list_files", files_route_list, 0},
    {"GET", "/v1/sessions/*/alive", files_route_alive, 0},
    {"GET", "/v1/sessions/*/server_info", files_route_server_info, 0},
    {.method = "GET",
     .pattern = "/v1/sessions/*/files",
     .fn = browse_route_list,
     .flags = API_ROUTE_OPERATOR},
    {.method = "GET",
     .pattern = "/v1/sessions/*/files/content",
     .fn = browse_route_read,
     .flags = API_ROUTE_OPERATOR},
    {.method = "GET",
     .pattern = "/v1/sessions/*/vscode/connection_token",
     .fn = remote_route_vscode_token},
    {.method = "POST",
     .pattern = "/v1/sessions/*/update_mcp_server",
     .fn = remote_route_update_mcp},
    {.method = "POST", .pattern = "/start", .fn = remote_route_start},
    {.method = "GET", .pattern = "/sessions/*", .fn = remote_route_session},
    {.method = "GET", .pattern = "/runtime/*", .fn = remote_route_runtime},
    {.method = "POST", .pattern = "/pause", .fn = remote_route_pause},
    {.method = "POST", .pattern = "/resume", .fn = remote_route_resume},
    {.method = "POST", .pattern = "/stop", .fn = remote_route_stop},
    {.method = "GET", .pattern = "/image_exists", .fn = remote_route_image_exists},
    {.method = "GET", .pattern = "/registry_prefix", .fn = remote_route_registry_prefix},
    {.method = "GET", .pattern = "/list", .fn = remote_route_list},
    {.method = "POST", .pattern = "/build", .fn = remote_route_build},
    {.method = "GET", .pattern = "/build_status", .fn = remote_route_build_status},
};
const size_t api_routes_count = sizeof(api_routes) / sizeof(api_routes[0]);
