/* Runtime images as an API (OpenHands' builder, docs/protocol.md "Runtime images"): builds on
 * request through the image builder (builder.h) with progress on the event stream, the list
 * of runtime images, their removal; and the builds the engine remembers (the last
 * IMAGES_BUILDS_KEPT), which the remote-runtime API's /build_status reads. */
#ifndef PADDOCK_IMAGES_H
#define PADDOCK_IMAGES_H

#include <jansson.h>

#include "engine/base/errors.h"

struct api_req;
struct engine;
struct builder_spec;

#define IMAGES_BUILDS_KEPT 64

/* POST /v1/images {"image"?, "setup"?, "runtime_extra_deps"?, "platform"?, "rebuild"?,
 * "wait"?}: with wait (the default) the answer is the finished build; without, 202 once it
 * started (or the finished build, when nothing needed building). */
void images_route_build(struct api_req *r);
/* GET /v1/images/builds/{id}: a build the engine remembers. */
void images_route_build_get(struct api_req *r);
/* GET /v1/images: {"images": [{"id", "tags", "base", "platform", "size", "created",
 * "age_seconds"}]}, the runtime images (label paddock.image=1), newest first. */
void images_route_list(struct api_req *r);
/* DELETE /v1/images/{tag}: the runtime repository's tag (or a full reference's tag part)
 * removed; 409 while a session's container uses the image. */
void images_route_remove(struct api_req *r);

/* Starts a build of spec (its build_id is ignored: one is made); *id (static copy until the
 * build is forgotten) names it. 0, or -1 with *err and *why (a static message) when it could
 * not start. */
int images_build_start(struct engine *eng, const struct builder_spec *spec, const char **id,
                       enum err_code *err, const char **why);
/* The build's object {"id", "state" ("running", "done", "failed"), "base", "platform",
 * "started", "finished", "image", "tags", "references" (the extra ones asked), "error"}: the
 * caller's reference, NULL when the engine does not know the id. */
json_t *images_build_json(struct engine *eng, const char *id);
/* At engine shutdown: forgets every build (a running one's callback never comes then). */
void images_free(struct engine *eng);

#endif
