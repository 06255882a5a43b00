/* Runtime images. The reuse order follows OpenHands (runtime_build.py) with our
 * executor as the "source": the source tag (base + steps + this executor) is used as it is;
 * else the lock tag (base + steps) gets a thin layer with the executor; else the lock image is
 * built from the base first. Every image carries paddock.image=1 for gc and tests. */
#include "engine/builder.h"

#include "common/buf.h"
#include "engine/base/util.h"
#include "engine/docker/tar.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BUILDER_BUILD_TIMEOUT_MS (30L * 60 * 1000)
/* A pull may take as long as it makes progress; this long without a word from the daemon
 * about it is a stall (docker_image_pull). */
#define BUILDER_PULL_STALL_MS (5L * 60 * 1000)
#define BUILDER_EXECUTOR_MAX (64L * 1024 * 1024)

enum build_stage { STAGE_INSPECT_BASE, STAGE_SOURCE, STAGE_LOCK, STAGE_BUILD_LOCK, STAGE_THIN };

struct build_op {
    struct engine *eng;
    char *session_id; /* NULL for an API build */
    char *build_id;   /* NULL for a session's */
    char *base;
    char *platform; /* NULL: the daemon's own */
    json_t *steps;
    json_t *extra_tags; /* more references for the result (array) */
    size_t extra_i;
    bool rebuild;
    bool pulled;
    bool busy_said;
    enum build_stage stage;
    struct builder_tags tags;
    builder_busy_fn busy;
    builder_done_fn done;
    void *ud;
};

bool builder_bakes(void)
{
    const char *bake = getenv("PADDOCK_BAKE_EXECUTOR");
    return bake && strcmp(bake, "1") == 0;
}

bool builder_needed(json_t *steps, bool rebuild)
{
    return (json_is_array(steps) && json_array_size(steps) > 0) || rebuild || builder_bakes();
}

static void build_free(struct build_op *op)
{
    free(op->session_id);
    free(op->build_id);
    free(op->base);
    free(op->platform);
    json_decref(op->steps);
    json_decref(op->extra_tags);
    free(op);
}

static json_t *build_event_new(struct build_op *op, const char *stage, const char *image,
                               const char *message)
{
    json_t *ev = json_pack("{s:s,s:s,s:s?}", "stage", stage, "image", image ? image : op->base,
                           "message", message);
    if (ev && op->session_id)
        json_object_set_new(ev, "session", json_string(op->session_id));
    if (ev && op->build_id)
        json_object_set_new(ev, "build", json_string(op->build_id));
    return ev;
}

static void build_event(struct build_op *op, const char *stage, const char *image,
                        const char *message, int percent)
{
    json_t *ev = build_event_new(op, stage, image, message);
    if (percent >= 0)
        json_object_set_new(ev, "percent", json_integer(percent));
    events_publish(op->eng->events, "build", ev);
    json_decref(ev);
}

static void build_busy(struct build_op *op)
{
    if (!op->busy_said && op->busy) {
        op->busy_said = true;
        op->busy(op->ud);
    }
}

/* err ERR_NONE: image is the one to run (the source tag, or the base itself). */
static void build_finish_now(struct build_op *op, enum err_code err, const char *message,
                             const char *image)
{
    unsigned status = err_status(err);
    bool runtime = status == 0 && image != op->base;
    struct builder_result r = {.status = status,
                               .err = err,
                               .message = message,
                               .image = image,
                               .executor_baked = runtime,
                               .tags = runtime ? &op->tags : NULL};
    json_t *ev = build_event_new(op, status ? "failed" : "done", image, message);
    if (ev) {
        if (!status)
            json_object_set_new(ev, "percent", json_integer(100));
        if (runtime)
            json_object_set_new(ev, "tags", builder_tags_json(&op->tags));
        events_publish(op->eng->events, "build", ev);
        json_decref(ev);
    }
    op->done(&r, op->ud);
    build_free(op);
}

static void build_tag_next(struct build_op *op);

static void build_on_extra_tagged(const struct sandbox_reply *r, void *ud)
{
    struct build_op *op = ud;
    const char *ref = json_string_value(json_array_get(op->extra_tags, op->extra_i));
    if (r->status < 200 || r->status > 299) {
        char *msg = util_strdupf("cannot tag %s as %s: %s", op->tags.source, ref ? ref : "?",
                                 r->message && *r->message ? r->message : "no answer");
        build_finish_now(op, r->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_BUILD_FAILED,
                         msg ? msg : "tagging failed", NULL);
        free(msg);
        return;
    }
    op->extra_i++;
    build_tag_next(op);
}

/* Whether ref is one of the tags the engine computes in the runtime repository ("pd_v...",
 * Docker Hub's prefixes taken off as the daemon does): they name content (base, steps,
 * executor) that sessions use as they find it. OpenHands' own tags there ("oh_v...") are not. */
static bool build_ref_is_computed(const char *ref)
{
    const char *repo = getenv("PADDOCK_RUNTIME_REPO");
    if (!repo || !*repo)
        repo = BUILDER_DEFAULT_REPO;
    static const char *const hub[] = {"docker.io/", "index.docker.io/", "registry-1.docker.io/"};
    for (size_t i = 0; i < sizeof(hub) / sizeof(hub[0]); i++)
        if (strncmp(ref, hub[i], strlen(hub[i])) == 0)
            ref += strlen(hub[i]);
    size_t n = strlen(repo);
    return strncmp(ref, repo, n) == 0 &&
           (ref[n] == '@' || (ref[n] == ':' && strncmp(ref + n + 1, "pd_", 3) == 0));
}

/* What the reference names now decides whether it may name this build: nothing, or a runtime
 * image of the same base (an earlier build of the same request). Anything else (the engine's
 * base image, another base's runtime image, an image paddock never built) is not re-pointed:
 * whoever asks /build would choose what the next session of another client runs. */
static void build_on_extra_inspected(const struct sandbox_reply *r, void *ud)
{
    struct build_op *op = ud;
    const char *ref = json_string_value(json_array_get(op->extra_tags, op->extra_i));
    json_t *labels = json_object_get(json_object_get(r->json, "Config"), "Labels");
    const char *kind = json_string_value(json_object_get(labels, "paddock.image"));
    const char *base = json_string_value(json_object_get(labels, "paddock.base"));
    if (r->status == 200 &&
        !(kind && strcmp(kind, "1") == 0 && base && strcmp(base, op->base) == 0)) {
        char *msg = util_strdupf("%s already names another image (not a runtime image of %s): a "
                                 "build does not re-point it",
                                 ref, op->base);
        build_finish_now(op, ERR_CONFLICT, msg ? msg : "the reference names another image", NULL);
        free(msg);
        return;
    }
    if (r->status != 200 && r->status != 404) {
        char *msg = util_strdupf("cannot inspect %s: %s", ref,
                                 r->message && *r->message ? r->message : "no answer");
        build_finish_now(op, r->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_DOCKER_ERROR,
                         msg ? msg : "inspect failed", NULL);
        free(msg);
        return;
    }
    if (op->eng->driver->image_tag(op->eng, op->tags.source, ref, build_on_extra_tagged, op) < 0)
        build_finish_now(op, ERR_INTERNAL, "cannot start a request", NULL);
}

/* The references asked besides the three (OpenHands' target_image and tags), in order. */
static void build_tag_next(struct build_op *op)
{
    const char *ref = json_string_value(json_array_get(op->extra_tags, op->extra_i));
    if (!ref) {
        build_finish_now(op, ERR_NONE, NULL, op->tags.source);
        return;
    }
    if (build_ref_is_computed(ref)) {
        char *msg = util_strdupf("%s is a tag the engine computes from what a runtime image holds "
                                 "(pd_...): a build does not name it",
                                 ref);
        build_finish_now(op, ERR_FORBIDDEN, msg ? msg : "a runtime repository reference", NULL);
        free(msg);
        return;
    }
    if (op->eng->driver->image_inspect(op->eng, ref, build_on_extra_inspected, op) < 0)
        build_finish_now(op, ERR_INTERNAL, "cannot start a request", NULL);
}

static void build_finish(struct build_op *op, enum err_code err, const char *message,
                         const char *image)
{
    if (err == ERR_NONE && image != op->base && json_array_size(op->extra_tags)) {
        build_tag_next(op);
        return;
    }
    build_finish_now(op, err, message, image);
}

/* Build output: "Step 2/5 : RUN ..." gives the percent; every line goes out as an event. */
static void build_on_progress(json_t *obj, void *ud)
{
    struct build_op *op = ud;
    const char *line = json_string_value(json_object_get(obj, "stream"));
    const char *status = json_string_value(json_object_get(obj, "status"));
    const char *text = line ? line : status;
    if (!text)
        return;
    int n = 0, m = 0, percent = -1;
    if (line && sscanf(line, "Step %d/%d", &n, &m) == 2 && m > 0)
        percent = n * 100 / m;
    char trimmed[512];
    snprintf(trimmed, sizeof(trimmed), "%s", text);
    size_t len = strlen(trimmed);
    while (len && (trimmed[len - 1] == '\n' || trimmed[len - 1] == '\r'))
        trimmed[--len] = '\0';
    if (len)
        build_event(op, op->stage == STAGE_THIN ? "executor" : "setup", NULL, trimmed, percent);
}

static json_t *build_labels(const struct build_op *op)
{
    /* paddock.base: what GET /v1/images shows as the image's base. */
    json_t *l = json_pack("{s:s,s:s}", "paddock.image", "1", "paddock.base", op->base);
    if (l && op->platform)
        json_object_set_new(l, "paddock.platform", json_string(op->platform));
    const char *test = getenv("PADDOCK_TEST_LABEL");
    if (test && *test)
        json_object_set_new(l, "paddock.test", json_string(test));
    return l;
}

static char *read_executor(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct buf b = {0};
    char chunk[65536];
    size_t n;
    while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.len <= BUILDER_EXECUTOR_MAX)
        if (buf_append(&b, chunk, n) < 0)
            break;
    bool ok = f && !ferror(f) && b.len <= BUILDER_EXECUTOR_MAX;
    if (f)
        fclose(f);
    if (!ok) {
        buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.data ? b.data : strdup("");
}

static void build_next(struct build_op *op);
static void build_on_tagged(const struct sandbox_reply *r, void *ud);

static void build_on_built(const struct sandbox_reply *r, void *ud)
{
    struct build_op *op = ud;
    if (r->status != 200) {
        char *msg = util_strdupf("building the runtime image failed: %s", r->message);
        /* Docker gone mid-build is the daemon's failure, not the steps'. */
        build_finish(op, r->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_BUILD_FAILED,
                     msg ? msg : "build failed", NULL);
        free(msg);
        return;
    }
    if (op->stage == STAGE_BUILD_LOCK) {
        /* The versioned tag names the newest setup layer built on this base by this paddock
         * version (for people and `docker images`); then the executor layer. */
        if (op->eng->driver->image_tag(op->eng, op->tags.lock, op->tags.versioned, build_on_tagged,
                                       op) < 0)
            build_on_tagged(&(struct sandbox_reply){.status = -1, .message = ""}, op);
    } else {
        build_finish(op, ERR_NONE, NULL, op->tags.source);
    }
}

/* A build context: a Dockerfile, and the executor when it goes in. */
static int build_start(struct build_op *op, const char *tag, const char *dockerfile,
                       bool with_executor)
{
    struct tar t = {0};
    const char *err = NULL;
    int rc = tar_add_file(&t, "Dockerfile", dockerfile, strlen(dockerfile), 0644, &err);
    if (rc == 0 && with_executor) {
        size_t len = 0;
        char *exe = read_executor(op->eng->executor_path, &len);
        rc = exe ? tar_add_file(&t, "paddock-executor", exe, len, 0755, &err) : -1;
        free(exe);
    }
    if (rc == 0)
        rc = tar_finish(&t);
    json_t *labels = build_labels(op);
    if (rc == 0)
        rc = op->eng->driver->image_build(op->eng, tag, labels, op->rebuild, op->platform,
                                          t.buf.data, t.buf.len, BUILDER_BUILD_TIMEOUT_MS,
                                          build_on_progress, build_on_built, op);
    json_decref(labels);
    tar_free(&t);
    return rc;
}

static void build_next(struct build_op *op)
{
    struct buf d = {0};
    char *from = NULL;
    bool ok = true;
    if (op->stage == STAGE_BUILD_LOCK) {
        /* Each step in exec form: the command is a JSON string, so no Dockerfile parsing
         * surprises (newlines, backslashes, leading words like ONBUILD). */
        from = util_strdupf("FROM %s\n", op->base);
        ok = from && buf_append(&d, from, strlen(from)) == 0;
        size_t i;
        json_t *v;
        json_array_foreach(op->steps, i, v)
        {
            json_t *argv = json_pack("[s,s,O]", "/bin/sh", "-c", v);
            char *j = argv ? json_dumps(argv, JSON_COMPACT) : NULL;
            char *line = j ? util_strdupf("RUN %s\n", j) : NULL;
            ok = ok && line && buf_append(&d, line, strlen(line)) == 0;
            free(line);
            free(j);
            json_decref(argv);
        }
        build_event(op, "setup", op->tags.lock, "building the setup layer", 0);
    } else {
        from = util_strdupf("FROM %s\nCOPY paddock-executor " BUILDER_EXECUTOR_PATH "\n",
                            op->tags.lock);
        ok = from && buf_append(&d, from, strlen(from)) == 0;
        build_event(op, "executor", op->tags.source, "adding the executor", 0);
    }
    free(from);
    const char *tag = op->stage == STAGE_BUILD_LOCK ? op->tags.lock : op->tags.source;
    if (!ok || build_start(op, tag, d.data, op->stage == STAGE_THIN) < 0) {
        buf_free(&d);
        build_finish(op, ERR_INTERNAL, "cannot start the image build", NULL);
        return;
    }
    buf_free(&d);
}

static void build_on_inspect(const struct sandbox_reply *r, void *ud);

static int build_inspect(struct build_op *op, const char *image)
{
    return op->eng->driver->image_inspect(op->eng, image, build_on_inspect, op);
}

static void build_on_tagged(const struct sandbox_reply *r, void *ud)
{
    struct build_op *op = ud;
    (void)r; /* the versioned tag is a convenience for people; the lock tag is what counts */
    op->stage = STAGE_THIN;
    build_next(op);
}

static void build_on_base_pulled(const struct builder_result *r, void *ud);
static int pull_start(struct engine *eng, const char *session_id, const char *build_id,
                      const char *image, const char *platform, bool say_end, builder_done_fn done,
                      void *ud);

static void build_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct build_op *op = ud;
    if (r->status < 0) {
        build_finish(op, ERR_DOCKER_UNAVAILABLE, r->message, NULL);
        return;
    }
    switch (op->stage) {
    case STAGE_INSPECT_BASE: {
        if (r->status == 404 && !op->pulled) {
            op->pulled = true;
            build_busy(op);
            if (pull_start(op->eng, op->session_id, op->build_id, op->base, op->platform, false,
                           build_on_base_pulled, op) < 0)
                build_finish(op, ERR_INTERNAL, "cannot start a pull", NULL);
            return;
        }
        const char *id = json_string_value(json_object_get(r->json, "Id"));
        if (r->status != 200 || !id) {
            char *msg = util_strdupf("cannot inspect %s: %s", op->base, r->message);
            build_finish(op, ERR_IMAGE_NOT_FOUND, msg ? msg : "image missing", NULL);
            free(msg);
            return;
        }
        unsigned char digest[32];
        const char *repo = getenv("PADDOCK_RUNTIME_REPO");
        if (!op->eng->executor_path || builder_file_digest(op->eng->executor_path, digest) < 0 ||
            builder_tags_compute(repo && *repo ? repo : BUILDER_DEFAULT_REPO, PADDOCK_VERSION,
                                 op->base, id, op->steps, op->platform, digest, &op->tags) < 0) {
            build_finish(op, ERR_INTERNAL, "cannot compute the runtime image's tags", NULL);
            return;
        }
        if (op->rebuild) { /* OpenHands' force_rebuild: from scratch, no cache */
            build_busy(op);
            op->stage = STAGE_BUILD_LOCK;
            build_next(op);
            return;
        }
        op->stage = STAGE_SOURCE;
        if (build_inspect(op, op->tags.source) < 0)
            build_finish(op, ERR_INTERNAL, "cannot start a request", NULL);
        return;
    }
    case STAGE_SOURCE:
        if (r->status == 200) {
            build_event(op, "reused", op->tags.source, "runtime image exists", 100);
            build_finish(op, ERR_NONE, NULL, op->tags.source);
            return;
        }
        op->stage = STAGE_LOCK;
        if (build_inspect(op, op->tags.lock) < 0)
            build_finish(op, ERR_INTERNAL, "cannot start a request", NULL);
        return;
    case STAGE_LOCK:
        build_busy(op);
        if (r->status == 200) {
            op->stage = STAGE_THIN;
            build_next(op);
            return;
        }
        op->stage = STAGE_BUILD_LOCK;
        build_next(op);
        return;
    case STAGE_BUILD_LOCK:
    case STAGE_THIN:
        return; /* builds, not inspects: they never get here */
    }
}

static void build_on_base_pulled(const struct builder_result *r, void *ud)
{
    struct build_op *op = ud;
    if (r->status) {
        build_finish(op, r->err, r->message, NULL);
        return;
    }
    if (build_inspect(op, op->base) < 0)
        build_finish(op, ERR_INTERNAL, "cannot start a request", NULL);
}

/* The daemon's info, for the platform: refused here, before anything is pulled or built. */
static void build_on_info(const struct sandbox_reply *r, void *ud)
{
    struct build_op *op = ud;
    if (r->status < 0) {
        build_finish(op, ERR_DOCKER_UNAVAILABLE, r->message, NULL);
        return;
    }
    char *why = NULL;
    if (r->status != 200) {
        why = util_strdupf("cannot ask the Docker daemon which platforms it runs (%ld): %s",
                           r->status, r->message);
        build_finish(op, ERR_DOCKER_ERROR, why ? why : "docker info failed", NULL);
    } else if (platform_check(r->json, op->eng->driver->is_local(op->eng), PLATFORM_BINFMT_DIR,
                              op->platform, &why) < 0) {
        build_finish(op, ERR_BAD_REQUEST, why ? why : "platform refused", NULL);
    } else if (build_inspect(op, op->base) < 0) {
        build_finish(op, ERR_INTERNAL, "cannot start a request", NULL);
    }
    free(why);
}

int builder_run(struct engine *eng, const struct builder_spec *spec, builder_busy_fn busy,
                builder_done_fn done, void *ud)
{
    struct build_op *op = calloc(1, sizeof(*op));
    if (!op)
        return -1;
    op->eng = eng;
    op->session_id = spec->session_id ? strdup(spec->session_id) : NULL;
    op->build_id = spec->build_id ? strdup(spec->build_id) : NULL;
    op->base = strdup(spec->image);
    op->platform = spec->platform ? strdup(spec->platform) : NULL;
    op->steps = json_is_array(spec->steps) ? json_incref(spec->steps) : json_array();
    op->extra_tags = json_is_array(spec->extra_tags) ? json_incref(spec->extra_tags) : NULL;
    op->rebuild = spec->rebuild;
    op->busy = busy;
    op->done = done;
    op->ud = ud;
    bool ok = (!spec->session_id || op->session_id) && (!spec->build_id || op->build_id) &&
              op->base && (!spec->platform || op->platform) && op->steps;
    if (!ok || (op->platform ? eng->driver->info(eng, build_on_info, op)
                             : build_inspect(op, op->base)) < 0) {
        build_free(op);
        return -1;
    }
    return 0;
}

/* ---- pull ---- */

struct pull_op {
    struct engine *eng;
    char *session_id, *build_id; /* what the events name (either may be NULL) */
    char *image;
    builder_done_fn done;
    void *ud;
    bool say_end; /* a failure is a "failed" event of its own (no build says it after) */
};

static void pull_op_free(struct pull_op *op)
{
    free(op->session_id);
    free(op->build_id);
    free(op->image);
    free(op);
}

static void pull_event(struct pull_op *op, const char *message, int percent)
{
    json_t *ev = json_pack("{s:s?,s:s?,s:s,s:s,s:s}", "session", op->session_id, "build",
                           op->build_id, "stage", "pull", "image", op->image, "message", message);
    if (ev && percent >= 0)
        json_object_set_new(ev, "percent", json_integer(percent));
    events_publish(op->eng->events, "build", ev);
    json_decref(ev);
}

/* Docker's pull stream: {"status", "id" (a layer, or the tag), "progressDetail"}; each line
 * is a "pull" event, "<id>: <status>", with the layer's percent when Docker gives one. */
static void pull_on_progress(json_t *obj, void *ud)
{
    struct pull_op *op = ud;
    const char *status = json_string_value(json_object_get(obj, "status"));
    if (!status)
        return;
    const char *id = json_string_value(json_object_get(obj, "id"));
    json_t *pd = json_object_get(obj, "progressDetail");
    double cur = json_number_value(json_object_get(pd, "current"));
    double total = json_number_value(json_object_get(pd, "total"));
    char message[512];
    snprintf(message, sizeof(message), "%.128s%s%.256s", id ? id : "", id ? ": " : "", status);
    pull_event(op, message, total > 0 && cur <= total ? (int)(cur * 100.0 / total) : -1);
}

static void pull_on_done(const struct sandbox_reply *r, void *ud)
{
    struct pull_op *op = ud;
    struct builder_result res = {.image = op->image};
    char *msg = NULL;
    if (r->status != 200) {
        msg = util_strdupf("image %s is not here and could not be pulled (%s); build the "
                           "default one with scripts/build-image, or `docker pull %s` where a "
                           "registry is reachable",
                           op->image, r->message && *r->message ? r->message : "no answer",
                           op->image);
        /* Unreachable: the daemon's fault; stalled: its registry's; else: no such image. */
        res.err = r->status < 0      ? ERR_DOCKER_UNAVAILABLE
                  : r->status == 504 ? ERR_DOCKER_ERROR
                                     : ERR_IMAGE_NOT_FOUND;
        res.status = err_status(res.err);
        res.message = msg ? msg : "image not found";
        if (op->say_end) {
            json_t *ev = json_pack("{s:s?,s:s,s:s,s:s}", "session", op->session_id, "stage",
                                   "failed", "image", op->image, "message", res.message);
            events_publish(op->eng->events, "build", ev);
            json_decref(ev);
        }
    }
    op->done(&res, op->ud);
    free(msg);
    pull_op_free(op);
}

static int pull_start(struct engine *eng, const char *session_id, const char *build_id,
                      const char *image, const char *platform, bool say_end, builder_done_fn done,
                      void *ud)
{
    struct pull_op *op = calloc(1, sizeof(*op));
    if (!op)
        return -1;
    op->eng = eng;
    op->session_id = session_id ? strdup(session_id) : NULL;
    op->build_id = build_id ? strdup(build_id) : NULL;
    op->image = strdup(image);
    op->done = done;
    op->ud = ud;
    op->say_end = say_end;
    if ((session_id && !op->session_id) || (build_id && !op->build_id) || !op->image ||
        eng->driver->image_pull(eng, image, platform, BUILDER_PULL_STALL_MS, pull_on_progress,
                                pull_on_done, op) < 0) {
        pull_op_free(op);
        return -1;
    }
    pull_event(op, "pulling", -1);
    return 0;
}

int builder_pull(struct engine *eng, const char *session_id, const char *image,
                 const char *platform, builder_done_fn done, void *ud)
{
    return pull_start(eng, session_id, NULL, image, platform, true, done, ud);
}

void builder_apply(const struct builder_result *r, json_t *config)
{
    if (!r->image)
        return;
    json_object_set_new(config, "Image", json_string(r->image));
    if (!r->executor_baked)
        return;
    json_t *mounts = json_object_get(json_object_get(config, "HostConfig"), "Mounts");
    for (size_t i = json_array_size(mounts); i-- > 0;) {
        const char *target =
            json_string_value(json_object_get(json_array_get(mounts, i), "Target"));
        if (target && strcmp(target, BUILDER_EXECUTOR_PATH) == 0)
            json_array_remove(mounts, i);
    }
}
