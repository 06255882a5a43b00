/* POST /execute_action: one action, queued behind the one that runs (action.h). */
#include <string.h>

#include "action.h"
#include "endpoint.h"
#include "executor.h"

/* Resumes the connection whose action finished after it was suspended. */
static void on_action_done(struct action_req *req)
{
    endpoint_resume(req->owner);
}

static void free_action(void *state)
{
    action_req_free(state);
}

static enum MHD_Result reply_action(struct request *rq)
{
    struct action_req *req = rq->state;
    json_t *result = req->result;
    if (!result)
        return endpoint_reply_stopping(rq);
    req->result = NULL;
    return endpoint_reply_json(rq, MHD_HTTP_OK, result);
}

enum MHD_Result endpoint_execute(struct request *rq)
{
    if (rq->state) /* resumed: the action has its result (or the executor gave up on it) */
        return reply_action(rq);
    enum MHD_Result rc;
    json_t *body = endpoint_body_object(rq, &rc);
    if (!body)
        return rc;
    struct buf err = BUF_INIT;
    struct action_req *req = action_req_new(body, &err);
    json_decref(body);
    if (!req) {
        rc = endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST, "%s",
                                   err.data ? err.data : "Invalid action");
        buf_free(&err);
        return rc;
    }
    const char *diff = endpoint_query(rq, "paddock_diff");
    req->want_diff = diff && strcmp(diff, "1") == 0;
    req->done = on_action_done;
    req->owner = rq;
    rq->state = req;
    rq->state_free = free_action;
    rq->ex->last_action_at = evloop_now();
    if (action_submit(rq->ex, req))
        return reply_action(rq);
    /* One action at a time: this connection sleeps until its result is there. */
    endpoint_suspend(rq);
    return MHD_YES;
}
