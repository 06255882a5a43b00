/* The operator's reads of a session's workspace: a directory listed, a file read. They go to
 * the executor's POST /browse (executor/endpoint_browse.c: confined to the workspace, links
 * leaving it refused, run with the agent's permissions) and are recorded as the operator's,
 * a lifecycle event of kind "operator" (who: the peer's uid; what; the path), never as one of
 * the agent's actions. docs/protocol.md has the routes. */
#ifndef PADDOCK_BROWSE_H
#define PADDOCK_BROWSE_H

struct api_req;

/* GET /v1/sessions/{id}/files?path=P&limit=N: the directory P (default: the workspace). */
void browse_route_list(struct api_req *r);
/* GET /v1/sessions/{id}/files/content?path=P&max=N&raw=1: the file P, its bytes base64
 * encoded (binary ones only with raw=1), at most max bytes. */
void browse_route_read(struct api_req *r);

#endif
