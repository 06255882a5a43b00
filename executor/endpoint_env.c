/* POST /env {"K": "V", ...} (a paddock extension): OpenHands' add_env_vars. The keys are
 * upper-cased, exported in the live shell and persisted to ~/.bashrc; the export runs as a
 * hidden command queued like any action. */
#include "action.h"
#include "action_run.h"
#include "endpoint.h"
#include "env.h"
#include "executor.h"

#include <string.h>

static void on_env_done(struct action_req *req)
{
    endpoint_resume(req->owner);
}

static void free_env(void *state)
{
    action_req_free(state);
}

/* What the hidden export command's observation means for the caller. */
static enum MHD_Result reply_env(struct request *rq)
{
    struct action_req *req = rq->state;
    json_t *result = req->result;
    if (!result)
        return endpoint_reply_stopping(rq);
    req->result = NULL;
    const char *content = json_string_value(json_object_get(result, "content"));
    int code = action_run_exit_code(result);
    enum MHD_Result rc;
    if (code == 0)
        rc = endpoint_reply_json(rq, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"));
    else if (content && strcmp(content, ACTION_RUN_BUSY) == 0)
        rc = endpoint_reply_detail(rq, MHD_HTTP_CONFLICT,
                                   "The shell is running a command: variables can be added once "
                                   "it has finished (or after C-c).");
    else
        rc = endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR,
                                   "Failed to add environment variables: %s",
                                   content && *content ? content : "the shell command failed");
    json_decref(result);
    return rc;
}

enum MHD_Result endpoint_env(struct request *rq)
{
    if (rq->state) /* resumed: the export finished */
        return reply_env(rq);
    enum MHD_Result rc;
    json_t *body = endpoint_body_object(rq, &rc);
    if (!body)
        return rc;
    struct env_var *vars = NULL;
    size_t n = 0;
    const char *key;
    json_t *value;
    json_object_foreach(body, key, value)
    {
        if (!env_name_valid(key)) {
            rc = endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST, "Invalid variable name: %s", key);
            goto out;
        }
        if (!json_is_string(value)) {
            rc = endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST,
                                       "Invalid value for %s (expected a string)", key);
            goto out;
        }
        if (env_vars_add(&vars, &n, key, strlen(key), json_string_value(value),
                         json_string_length(value)) < 0) {
            rc = endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
            goto out;
        }
        if (env_name_reserved(vars[n - 1].name)) {
            rc = endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST,
                                       "Reserved variable name: %s (the executor sets it)",
                                       vars[n - 1].name);
            goto out;
        }
    }
    if (n == 0) {
        rc = endpoint_reply_json(rq, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"));
        goto out;
    }
    struct buf cmd = BUF_INIT;
    struct action_req *req = NULL;
    if (env_script_add(&cmd, vars, n) == 0)
        req = action_run_internal_new(cmd.data, EXECUTOR_ENV_TIMEOUT);
    buf_free(&cmd);
    if (!req) {
        rc = endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
        goto out;
    }
    req->done = on_env_done;
    req->owner = rq;
    rq->state = req;
    rq->state_free = free_env;
    if (action_submit(rq->ex, req)) {
        rc = reply_env(rq);
        goto out;
    }
    endpoint_suspend(rq); /* behind the action that runs, like any other */
    rc = MHD_YES;
out:
    env_vars_free(vars, n);
    json_decref(body);
    return rc;
}
