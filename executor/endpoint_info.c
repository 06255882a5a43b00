/* GET /alive and GET /server_info: the two endpoints open without the API key. */
#include "endpoint.h"
#include "executor.h"
#include "sysinfo.h"

enum MHD_Result endpoint_alive(struct request *rq)
{
    return endpoint_reply_json(rq, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"));
}

enum MHD_Result endpoint_server_info(struct request *rq)
{
    double now = evloop_now();
    return endpoint_reply_json(
        rq, MHD_HTTP_OK, sysinfo_json(now - rq->ex->started_at, now - rq->ex->last_action_at));
}
