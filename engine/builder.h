/* The image builder: a missing base image pulled (once), and a runtime image (base + extra
 * setup commands + the static executor baked in) built and reused by three tags
 * (as OpenHands' openhands/runtime/utils/runtime_build.py does, adapted; docs/architecture.md
 * "Image builder"). */
#ifndef PADDOCK_BUILDER_H
#define PADDOCK_BUILDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/base/errors.h"

struct engine;

/* Where the executor sits in every sandbox (bind-mounted, or baked into a runtime image). */
#define BUILDER_EXECUTOR_PATH "/opt/paddock/paddock-executor"
/* Repository of runtime images unless PADDOCK_RUNTIME_REPO says otherwise. */
#define BUILDER_DEFAULT_REPO "paddock/runtime"

struct builder_tags;

struct builder_result {
    unsigned status;     /* 0 on success, else err_status(err) */
    enum err_code err;   /* ERR_NONE on success: ERR_IMAGE_NOT_FOUND, ERR_BUILD_FAILED, ... */
    const char *message; /* why, on failure */
    const char *image;   /* on success: the image to run (borrowed during the callback) */
    bool executor_baked; /* the image holds the executor: no bind mount */
    /* On success of builder_run: the runtime image's three tags (borrowed); else NULL. */
    const struct builder_tags *tags;
};
typedef void (*builder_done_fn)(const struct builder_result *r, void *ud);
/* A pull or a build starts (the session shows "building"); called at most once. */
typedef void (*builder_busy_fn)(void *ud);

/* Whether sessions with these setup steps need a runtime image: steps given, a rebuild asked,
 * or the engine bakes the executor (PADDOCK_BAKE_EXECUTOR=1, for remote Docker hosts). */
bool builder_needed(json_t *steps, bool rebuild);
/* PADDOCK_BAKE_EXECUTOR=1: the executor is never bind-mounted (a remote daemon). */
bool builder_bakes(void);
/* One runtime image to make (all borrowed during builder_run). */
struct builder_spec {
    const char *session_id; /* the session it is for ("session" of the events), or NULL */
    const char *build_id;   /* the API build it is ("build" of the events), or NULL */
    const char *image;      /* the base image */
    json_t *steps;          /* array of shell commands, or NULL */
    const char *platform;   /* "os/arch[/variant]", or NULL: the daemon's own */
    bool rebuild;           /* OpenHands' force_rebuild */
    json_t *extra_tags;     /* array of more references the image gets, or NULL */
};
/* Make the runtime image: the base pulled when missing, then the image with the source tag
 * reused, or built on the lock image, or built from scratch (and with rebuild, from scratch
 * without cache). Progress goes out as "build" events. done runs exactly once, later. With a
 * platform, the daemon is asked first whether it can run
 * it (a 400 bad_request that says why, before anything is built); the final "build" event
 * carries the three tags. -1 when nothing could start (done is then not called). */
int builder_run(struct engine *eng, const struct builder_spec *spec, builder_busy_fn busy,
                builder_done_fn done, void *ud);
/* One pull of a missing image (progress as "build" events of stage "pull", a failure as one of
 * stage "failed"; session_id may be NULL); done gets success, or a 400 image_not_found that
 * names the image and the daemon's reason and says how to get it (503 docker_unavailable: no
 * daemon; 502 docker_error: the pull stalled, BUILDER_PULL_STALL_MS without a word from the
 * daemon). platform: as the session's container (NULL: the daemon's own). -1 when nothing
 * could start. */
int builder_pull(struct engine *eng, const char *session_id, const char *image,
                 const char *platform, builder_done_fn done, void *ud);
/* Point a container config at the prepared image; drop the executor's bind mount when the
 * image holds the executor. */
void builder_apply(const struct builder_result *r, json_t *config);

/* ---- tags (builder_tags.c) ---- */

struct builder_tags {
    char lock_hash[17]; /* base-36, at most 16 digits */
    char source_hash[17];
    char versioned[256]; /* full references REPO:TAG */
    char lock[256];
    char source[256];
};

/* Hex → base-36 the OpenHands way: the number's digits least-significant first, at most 16. */
void builder_base36(const unsigned char *digest, size_t n, char out[17]);
/* versioned: pd_v<version>_<base with "/"→"_s_", ":"→"_t_", "@"→"_a_", lower-cased, last 96>;
 * lock: pd_v<version>_<H(base, base_id, steps[, platform])>; source: <lock>_<H(lock hash,
 * executor)>. steps is an array of strings (NULL: none); platform NULL when none was asked;
 * exec_digest the executor's SHA-256. Returns 0, or -1 when a reference would not fit. */
int builder_tags_compute(const char *repo, const char *version, const char *base,
                         const char *base_id, json_t *steps, const char *platform,
                         const unsigned char exec_digest[32], struct builder_tags *out);
/* The tags as {"versioned", "lock", "source"} (a new object; NULL when out of memory). */
json_t *builder_tags_json(const struct builder_tags *t);
/* SHA-256 of a file into digest; 0, or -1 with errno set. */
int builder_file_digest(const char *path, unsigned char digest[32]);

#endif
