/* The warm pool: pre-started sandboxes per image, so POST /v1/sessions is ready at once. */
#ifndef PADDOCK_POOL_H
#define PADDOCK_POOL_H

#include <jansson.h>
#include <stdbool.h>

struct engine;
struct session;
struct pool;

/* spec: "N" (N for the default image) or "IMAGE=N[,IMAGE=N...]"; NULL or "" for none.
 * NULL with *err when the spec is wrong. */
struct pool *pool_new(struct engine *eng, const char *spec, char **err);
void pool_free(struct pool *p);

/* A session changed: look at the pool again soon (coalesced; refills, replaces dead ones). */
void pool_on_session(struct engine *eng);
/* Whether a warm sandbox of image can serve a request with these options: only image, name,
 * env, env_allow and keep_alive may be given (anything else needs its own container). */
bool pool_fits(struct engine *eng, json_t *opts, const char *image);
/* A ready, idle pooled session of image, or NULL. */
struct session *pool_take(struct engine *eng, const char *image);

/* {"pools": [{"image", "size", "ready", "starting", "claimed", "last_error"}]} */
json_t *pool_status(struct engine *eng);
/* Set an image's pool size (0 empties it); -1 with a message when refused. */
int pool_set(struct engine *eng, const char *image, long size, char **err);

#endif
