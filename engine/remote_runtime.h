/* OpenHands' remote-runtime API (the provisioner RemoteRuntime talks to) on paddock sessions:
 * a runtime is a session, its runtime_id the session id, its url the engine's own
 * /v1/sessions/{id}, so every action still goes through the engine (approvals, history).
 * docs/remote-runtime.md. */
#ifndef PADDOCK_REMOTE_RUNTIME_H
#define PADDOCK_REMOTE_RUNTIME_H

#include <stdbool.h>

struct engine;
struct api_req;

/* POST /start {"session_id", "image"?, "environment"?, "resource_factor"?, "runtime_class"?}:
 * a new session named session_id; answers at once with the runtime (pod_status "pending"
 * until it is ready) and its session_api_key. */
void remote_route_start(struct api_req *r);
/* GET /sessions/{session_id}: the runtime of a session by name (or id); 404 when none. */
void remote_route_session(struct api_req *r);
/* GET /runtime/{runtime_id}: status and pod_status. */
void remote_route_runtime(struct api_req *r);
/* POST /pause, /resume, /stop {"runtime_id"}: pause, resume, delete the session. */
void remote_route_pause(struct api_req *r);
void remote_route_resume(struct api_req *r);
void remote_route_stop(struct api_req *r);
/* GET /image_exists?image=: the engine's Docker has it. */
void remote_route_image_exists(struct api_req *r);
/* GET /registry_prefix: where OpenHands would look for runtime images (the local store). */
void remote_route_registry_prefix(struct api_req *r);
/* GET /list: every session as a runtime. */
void remote_route_list(struct api_req *r);
/* POST /build (remote_build.c): OpenHands' build context's base image made a runtime image
 * by the builder, tagged target_image and tags; {"build_id"}. */
void remote_route_build(struct api_req *r);
/* GET /build_status?build_id=: {"build_id", "status" (RUNNING, SUCCESS, FAILURE), "image",
 * "error", "paddock": the build (images.h)}. */
void remote_route_build_status(struct api_req *r);
/* GET /v1/sessions/{id}/vscode/connection_token: {"token": null} (no VS Code here). */
void remote_route_vscode_token(struct api_req *r);
/* POST /v1/sessions/{id}/update_mcp_server: 501, the executor runs no MCP servers. */
void remote_route_update_mcp(struct api_req *r);

/* key is the X-Session-API-Key the session was given (by /start or /sessions/{id}). */
bool remote_session_key_ok(struct engine *eng, const char *session_id, const char *key);

#endif
