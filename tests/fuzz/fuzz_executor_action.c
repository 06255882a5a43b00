/* The executor's request decoding: a POST /execute_action body as a client of the executor
 * sends it, read as endpoint_body_object does (JSON_ALLOW_NUL), then decoded by
 * action_req_new: the action table's field check and the action type's own parse. */
#include "action.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *body = json_loadb((const char *)data, size, JSON_ALLOW_NUL, NULL);
    if (!body)
        return 0;
    struct buf err = {0};
    struct action_req *req = action_req_new(body, &err);
    /* a refusal says why (the 400's detail); a request that parsed has its type */
    if ((!req && err.len == 0) || (req && !req->type))
        abort();
    action_req_free(req);
    buf_free(&err);
    json_decref(body);
    return 0;
}
