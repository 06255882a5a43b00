/* The operator's reads of the workspace: forwarded to the executor's /browse, recorded as the
 * operator's once answered (refusals too: an attempt to read outside is worth a line). */
#include "engine/browse.h"

#include "engine/api.h"
#include "engine/base/util.h"
#include "engine/docker/http.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BROWSE_TIMEOUT_MS 30000

struct browse_op {
    struct session *s; /* held until the executor answered */
    struct api_req *r;
    bool list;
    char who[64];
    char *path; /* as asked */
    char *body; /* the request to the executor */
};

static void browse_op_free(struct browse_op *op)
{
    session_release(op->s);
    free(op->path);
    free(op->body);
    free(op);
}

/* The executor's status as the engine's error code. */
static enum err_code browse_error(long status)
{
    return status == 400   ? ERR_BAD_REQUEST
           : status == 403 ? ERR_FORBIDDEN
           : status == 404 ? ERR_NOT_FOUND
           : status == 501 ? ERR_NOT_IMPLEMENTED
                           : ERR_EXECUTOR_ERROR;
}

static void browse_record(struct browse_op *op, const char *outcome)
{
    struct engine *eng = op->s->eng;
    char *detail = util_strdupf("%s %s %.400s%s%.300s", op->who, op->list ? "listed" : "read",
                                op->path, outcome ? ": " : "", outcome ? outcome : "");
    if (detail)
        store_event_add(eng->store, op->s->id, "operator", detail, util_now());
    free(detail);
}

static void browse_on_done(const struct http_result *res, void *ud)
{
    struct browse_op *op = ud;
    json_t *j = res->status >= 0 ? json_loadb(res->body, res->len, 0, NULL) : NULL;
    if (res->status == 200 && json_is_object(j)) {
        char outcome[96];
        if (op->list)
            snprintf(outcome, sizeof(outcome), "%lld entries",
                     (long long)json_integer_value(json_object_get(j, "total")));
        else
            snprintf(outcome, sizeof(outcome), "%lld bytes, %s",
                     (long long)json_integer_value(json_object_get(j, "size")),
                     json_string_value(json_object_get(j, "kind")) ?: "?");
        browse_record(op, outcome);
        api_reply_json(op->r, 200, j);
        browse_op_free(op);
        return;
    }
    const char *detail = json_string_value(json_object_get(j, "detail"));
    char msg[600];
    if (res->status < 0)
        snprintf(msg, sizeof(msg), "the sandbox's executor did not answer: %s",
                 res->error ? res->error : "no reply");
    else
        snprintf(msg, sizeof(msg), "%.500s",
                 detail ? detail : "the executor gave no reason for refusing");
    char outcome[640];
    snprintf(outcome, sizeof(outcome), "refused (%s)", msg);
    browse_record(op, outcome);
    api_reply_error(op->r, res->status < 0 ? ERR_EXECUTOR_ERROR : browse_error(res->status), "%s",
                    msg);
    json_decref(j);
    browse_op_free(op);
}

static void browse_start(struct api_req *r, bool list)
{
    struct session *s = api_live_session(r);
    if (!s)
        return;
    enum err_code refusal;
    char msg[512];
    if (session_check_actionable(s, &refusal, msg, sizeof(msg)) < 0) {
        api_reply_error(r, refusal, "%s", msg);
        return;
    }
    const char *path = api_req_query(r, "path");
    const char *raw = api_req_query(r, "raw");
    double limit, max;
    if (api_query_number(r, "limit", 1, 5000, 500, &limit) < 0 ||
        api_query_number(r, "max", 0, 16 * 1024 * 1024, 4 * 1024 * 1024, &max) < 0)
        return;
    if (!list && (!path || !*path)) {
        api_reply_error(r, ERR_BAD_REQUEST, "name the file: ?path=<path in the workspace>");
        return;
    }
    json_t *req = json_pack("{s:s,s:s,s:I,s:I,s:b}", "path", path ? path : "", "op",
                            list ? "list" : "read", "limit", (json_int_t)limit, "max",
                            (json_int_t)max, "raw", raw && strcmp(raw, "0") != 0);
    struct browse_op *op = calloc(1, sizeof(*op));
    if (op) {
        op->path = strdup(path && *path ? path : "/workspace");
        op->body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    }
    json_decref(req);
    if (!op || !op->path || !op->body) {
        if (op) {
            free(op->path);
            free(op->body);
        }
        free(op);
        api_reply_error(r, ERR_BAD_REQUEST, "\"path\" must be text (UTF-8)");
        return;
    }
    op->s = s;
    session_hold(s);
    op->r = r;
    op->list = list;
    api_req_peer(r, op->who, sizeof(op->who));
    struct http_request hr = {.method = "POST",
                              .url = "http://executor/browse",
                              .body = op->body,
                              .body_len = strlen(op->body),
                              .timeout_ms = BROWSE_TIMEOUT_MS};
    if (s->driver->executor_request(s, &hr, browse_on_done, op) < 0) {
        struct http_result res = {.status = -1, .error = "cannot start a request"};
        browse_on_done(&res, op);
    }
}

void browse_route_list(struct api_req *r)
{
    browse_start(r, true);
}

void browse_route_read(struct api_req *r)
{
    browse_start(r, false);
}
