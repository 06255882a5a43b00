/* Runtime images as an API (images.h). A build is a record the engine keeps in memory: the
 * builder's events carry its id, its end fills the record and answers whoever waits. */
#include "engine/images.h"

#include "engine/api.h"
#include "engine/base/util.h"
#include "engine/builder.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/platform.h"
#include "engine/security.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define IMAGES_MAX_SETUP 32
#define IMAGES_MAX_SETUP_LEN 8192

enum image_build_state { IMAGE_BUILD_RUNNING, IMAGE_BUILD_DONE, IMAGE_BUILD_FAILED };

static const char *const image_build_state_names[] = {
    [IMAGE_BUILD_RUNNING] = "running",
    [IMAGE_BUILD_DONE] = "done",
    [IMAGE_BUILD_FAILED] = "failed",
};

struct image_build {
    struct image_build *next; /* newest first */
    struct engine *eng;
    char id[20];
    char *base, *platform;
    enum image_build_state state;
    double started, finished;
    char *image;  /* done: the runtime image (its source tag) */
    json_t *refs; /* the references asked besides the three tags (array), or NULL */
    json_t *tags; /* done: {"versioned", "lock", "source"} */
    enum err_code err;
    char *error;          /* failed: why */
    struct api_req *wait; /* a POST waiting for the end (or, without wait, for the start) */
    bool wait_end;
};

struct images {
    struct image_build *builds;
};

static struct images *images_get(struct engine *eng)
{
    if (!eng->images)
        eng->images = calloc(1, sizeof(struct images));
    return eng->images;
}

static void image_build_free(struct image_build *b)
{
    free(b->base);
    free(b->platform);
    free(b->image);
    json_decref(b->refs);
    json_decref(b->tags);
    free(b->error);
    free(b);
}

/* Only finished builds are forgotten: a running one's callback still holds its record. */
static void images_trim(struct images *im)
{
    size_t n = 0;
    for (struct image_build **pp = &im->builds; *pp;) {
        struct image_build *b = *pp;
        if (++n > IMAGES_BUILDS_KEPT && b->state != IMAGE_BUILD_RUNNING) {
            *pp = b->next;
            image_build_free(b);
            continue;
        }
        pp = &b->next;
    }
}

static struct image_build *images_find(struct engine *eng, const char *id)
{
    for (struct image_build *b = eng->images ? eng->images->builds : NULL; b; b = b->next)
        if (strcmp(b->id, id) == 0)
            return b;
    return NULL;
}

static json_t *image_build_json(const struct image_build *b)
{
    json_t *j =
        json_pack("{s:s,s:s,s:s,s:s?,s:f}", "id", b->id, "state", image_build_state_names[b->state],
                  "base", b->base, "platform", b->platform, "started", b->started);
    if (!j)
        return NULL;
    json_object_set_new(j, "finished", b->finished > 0 ? json_real(b->finished) : json_null());
    json_object_set_new(j, "image", b->image ? json_string(b->image) : json_null());
    json_object_set(j, "tags", b->tags ? b->tags : json_null());
    json_object_set(j, "references", b->refs ? b->refs : json_null());
    json_object_set_new(j, "error", b->error ? json_string(b->error) : json_null());
    return j;
}

json_t *images_build_json(struct engine *eng, const char *id)
{
    struct image_build *b = images_find(eng, id);
    return b ? image_build_json(b) : NULL;
}

static void images_answer(struct image_build *b)
{
    struct api_req *r = b->wait;
    b->wait = NULL;
    if (b->state == IMAGE_BUILD_FAILED)
        api_reply_json(r, err_status(b->err),
                       json_pack("{s:{s:s,s:s,s:s}}", "error", "code", err_name(b->err), "message",
                                 b->error ? b->error : "build failed", "build", b->id));
    else
        api_reply_json(r, b->state == IMAGE_BUILD_RUNNING ? 202 : 200, image_build_json(b));
}

static void images_on_busy(void *ud)
{
    struct image_build *b = ud;
    if (b->wait && !b->wait_end)
        images_answer(b);
}

static void images_on_done(const struct builder_result *res, void *ud)
{
    struct image_build *b = ud;
    b->finished = util_now();
    if (res->status) {
        b->state = IMAGE_BUILD_FAILED;
        b->err = res->err;
        b->error = strdup(res->message ? res->message : "build failed");
    } else {
        b->state = IMAGE_BUILD_DONE;
        b->image = res->image ? strdup(res->image) : NULL;
        b->tags = res->tags ? builder_tags_json(res->tags) : NULL;
    }
    if (b->wait)
        images_answer(b);
}

int images_build_start(struct engine *eng, const struct builder_spec *spec, const char **id,
                       enum err_code *err, const char **why)
{
    struct images *im = images_get(eng);
    struct image_build *b = im ? calloc(1, sizeof(*b)) : NULL;
    unsigned char rnd[8];
    if (!b || getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        free(b);
        *err = ERR_INTERNAL;
        *why = "cannot start a build (out of memory or randomness)";
        return -1;
    }
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(b->id + 2 * i, 3, "%02x", rnd[i]);
    b->eng = eng;
    b->base = strdup(spec->image);
    b->platform = spec->platform ? strdup(spec->platform) : NULL;
    b->refs = json_is_array(spec->extra_tags) ? json_deep_copy(spec->extra_tags) : NULL;
    b->started = util_now();
    struct builder_spec s = *spec;
    s.build_id = b->id;
    if (!b->base || (spec->platform && !b->platform)) {
        image_build_free(b);
        *err = ERR_INTERNAL;
        *why = "out of memory";
        return -1;
    }
    /* In the list before the builder runs: done may come before builder_run returns. */
    b->next = im->builds;
    im->builds = b;
    if (builder_run(eng, &s, images_on_busy, images_on_done, b) < 0) {
        im->builds = b->next;
        image_build_free(b);
        *err = ERR_INTERNAL;
        *why = "cannot start the build";
        return -1;
    }
    images_trim(im);
    *id = b->id;
    return 0;
}

/* ---- routes ---- */

static bool images_ref_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || strchr("_.-/:@", s[i])))
            return false;
    return true;
}

static int images_add_step(struct api_req *r, json_t *steps, json_t *v, const char *field)
{
    const char *cmd = json_string_value(v);
    if (!cmd || !*cmd || strlen(cmd) != json_string_length(v) ||
        json_string_length(v) > IMAGES_MAX_SETUP_LEN) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"%s\" must hold non-empty commands of at most %d bytes without NUL",
                        field, IMAGES_MAX_SETUP_LEN);
        return -1;
    }
    if (json_array_size(steps) >= IMAGES_MAX_SETUP) {
        api_reply_error(r, ERR_BAD_REQUEST, "at most %d setup commands", IMAGES_MAX_SETUP);
        return -1;
    }
    json_array_append_new(steps, json_string(cmd));
    return 0;
}

/* The body checked into spec (steps: a new array the caller releases); -1 when answered. */
static int images_parse(struct api_req *r, json_t *body, struct builder_spec *spec, bool *wait)
{
    static const char *const known[] = {"image",    "setup",   "runtime_extra_deps",
                                        "platform", "rebuild", "wait"};
    const char *k;
    json_t *v;
    json_object_foreach(body, k, v)
    {
        size_t i = 0;
        while (i < sizeof(known) / sizeof(known[0]) && strcmp(k, known[i]) != 0)
            i++;
        if (i == sizeof(known) / sizeof(known[0])) {
            api_reply_error(r, ERR_BAD_REQUEST,
                            "unknown field \"%.64s\" (known: image, setup, runtime_extra_deps, "
                            "platform, rebuild, wait)",
                            k);
            return -1;
        }
    }
    struct engine *eng = api_req_engine(r);
    json_t *image = json_object_get(body, "image");
    json_t *setup = json_object_get(body, "setup");
    json_t *extra = json_object_get(body, "runtime_extra_deps");
    json_t *platform = json_object_get(body, "platform");
    json_t *rebuild = json_object_get(body, "rebuild");
    json_t *w = json_object_get(body, "wait");
    if (image && (!json_is_string(image) || !images_ref_valid(json_string_value(image)))) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"image\" must be an image reference string");
        return -1;
    }
    if (platform && (!json_is_string(platform) || !platform_valid(json_string_value(platform)))) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"platform\" must be \"os/arch\" or \"os/arch/variant\", such as "
                        "\"linux/amd64\" or \"linux/arm64\"");
        return -1;
    }
    if ((rebuild && !json_is_boolean(rebuild)) || (w && !json_is_boolean(w))) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"%s\" must be true or false",
                        rebuild && !json_is_boolean(rebuild) ? "rebuild" : "wait");
        return -1;
    }
    if (setup && !json_is_array(setup)) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"setup\" must be an array of shell commands");
        return -1;
    }
    json_t *steps = json_array();
    size_t i;
    json_array_foreach(setup, i, v) if (images_add_step(r, steps, v, "setup") < 0)
    {
        json_decref(steps);
        return -1;
    }
    if (extra && images_add_step(r, steps, extra, "runtime_extra_deps") < 0) {
        json_decref(steps);
        return -1;
    }
    *spec = (struct builder_spec){
        .image = image ? json_string_value(image) : eng->default_image,
        .steps = steps,
        .platform = platform ? json_string_value(platform) : NULL,
        .rebuild = json_is_true(rebuild),
    };
    *wait = !w || json_is_true(w);
    return 0;
}

void images_route_build(struct api_req *r)
{
    json_t *body = api_req_json(r, 1);
    if (!body)
        return;
    struct builder_spec spec;
    bool wait = true;
    if (images_parse(r, body, &spec, &wait) < 0) {
        json_decref(body);
        return;
    }
    struct engine *eng = api_req_engine(r);
    const char *id = NULL, *why = NULL;
    enum err_code err = ERR_NONE;
    char refusal[512];
    enum security_mode mode = SECURITY_ALLOW;
    /* Steps are a session's "setup" under another route (commands as root with Docker's build
     * network): the agents' channel gets what [security] setup says. A build has no session
     * whose create could wait for the operator, so "approve" sends the agent to that create. */
    if (json_array_size(spec.steps) && !api_req_is_operator(r))
        mode = security_decide(eng, 1u << SECURITY_SETUP, refusal, sizeof(refusal));
    if (mode == SECURITY_REFUSE) {
        api_reply_error(r, ERR_FORBIDDEN, "%s", refusal);
    } else if (mode == SECURITY_APPROVE) {
        api_reply_error(r, ERR_FORBIDDEN,
                        "\"setup\" steps on the agents' channel wait for the operator ([security] "
                        "setup = \"approve\"), and a build has nobody waiting: ask for them in a "
                        "session's create (POST /v1/sessions with \"setup\"), or the operator "
                        "builds the image (paddock build)");
    } else if (!eng->executor_path) {
        api_reply_error(r, ERR_EXECUTOR_MISSING,
                        "no paddock-executor binary: runtime images bake it in (build paddock, "
                        "or pass --executor to paddock serve)");
    } else if (images_build_start(eng, &spec, &id, &err, &why) < 0) {
        api_reply_error(r, err, "%s", why);
    } else {
        struct image_build *b = images_find(eng, id);
        if (b->state != IMAGE_BUILD_RUNNING) {
            b->wait = r;
            images_answer(b);
        } else {
            b->wait = r;
            b->wait_end = wait;
        }
    }
    json_decref(spec.steps);
    json_decref(body);
}

void images_route_build_get(struct api_req *r)
{
    json_t *j = images_build_json(api_req_engine(r), api_req_param(r, 0));
    if (!j) {
        api_reply_error(r, ERR_NOT_FOUND,
                        "no build %.64s (the engine keeps its last %d builds until it restarts)",
                        api_req_param(r, 0), IMAGES_BUILDS_KEPT);
        return;
    }
    api_reply_json(r, 200, j);
}

static int images_by_created(const void *a, const void *b)
{
    double x = json_number_value(json_object_get(*(json_t *const *)a, "created"));
    double y = json_number_value(json_object_get(*(json_t *const *)b, "created"));
    return x < y ? 1 : x > y ? -1 : 0;
}

static void images_on_list(const struct sandbox_reply *d, void *ud)
{
    struct api_req *r = ud;
    if (d->status < 0) {
        api_reply_error(r, ERR_DOCKER_UNAVAILABLE, "Docker daemon not reachable (%s)", d->message);
        return;
    }
    if (d->status != 200 || !json_is_array(d->json)) {
        api_reply_error(r, ERR_DOCKER_ERROR, "listing images failed (%ld): %s", d->status,
                        d->message);
        return;
    }
    double now = util_now();
    size_t n = json_array_size(d->json), i;
    json_t **rows = calloc(n ? n : 1, sizeof(*rows));
    json_t *img;
    size_t k = 0;
    json_array_foreach(d->json, i, img)
    {
        json_t *labels = json_object_get(img, "Labels");
        json_t *tags = json_object_get(img, "RepoTags");
        double created = json_number_value(json_object_get(img, "Created"));
        json_t *row = json_pack(
            "{s:O,s:o,s:O,s:O,s:O,s:f,s:f}", "id",
            json_object_get(img, "Id") ? json_object_get(img, "Id") : json_null(), "tags",
            json_is_array(tags) ? json_incref(tags) : json_array(), "base",
            json_object_get(labels, "paddock.base") ? json_object_get(labels, "paddock.base")
                                                    : json_null(),
            "platform",
            json_object_get(labels, "paddock.platform")
                ? json_object_get(labels, "paddock.platform")
                : json_null(),
            "size", json_object_get(img, "Size") ? json_object_get(img, "Size") : json_null(),
            "created", created, "age_seconds", created > 0 && now > created ? now - created : 0.0);
        if (row && rows)
            rows[k++] = row;
    }
    if (rows)
        qsort(rows, k, sizeof(*rows), images_by_created);
    json_t *list = json_array();
    for (i = 0; i < k; i++)
        json_array_append_new(list, rows[i]);
    free(rows);
    api_reply_json(r, 200, json_pack("{s:o}", "images", list));
}

void images_route_list(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    if (eng->driver->image_list(eng, "paddock.image=1", images_on_list, r) < 0)
        api_reply_error(r, ERR_INTERNAL, "cannot start a request");
}

/* ---- removal: the image checked to be a runtime image, then no session container on it ---- */

struct image_remove {
    struct api_req *r;
    char *ref;
    char *image_id;
};

static void image_remove_free(struct image_remove *op)
{
    free(op->ref);
    free(op->image_id);
    free(op);
}

static void images_on_removed(const struct sandbox_reply *d, void *ud)
{
    struct image_remove *op = ud;
    if (d->status == 200 || d->status == 204)
        api_reply_json(op->r, 200, json_pack("{s:s,s:b}", "image", op->ref, "removed", 1));
    else if (d->status == 404)
        api_reply_error(op->r, ERR_NOT_FOUND, "no image %s", op->ref);
    else if (d->status == 409)
        /* A container outside the sessions, or an image built on this one (a setup layer's
         * executor layer): Docker says which. */
        api_reply_error(op->r, ERR_CONFLICT,
                        "Docker refuses to remove %s: %s (an image built on it, such as its "
                        "source tag's, goes first)",
                        op->ref, d->message);
    else if (d->status < 0)
        api_reply_error(op->r, ERR_DOCKER_UNAVAILABLE, "Docker daemon not reachable (%s)",
                        d->message);
    else
        api_reply_error(op->r, ERR_DOCKER_ERROR, "removing %s failed (%ld): %s", op->ref, d->status,
                        d->message);
    image_remove_free(op);
}

static void images_on_users(const struct sandbox_reply *d, void *ud)
{
    struct image_remove *op = ud;
    struct engine *eng = api_req_engine(op->r);
    if (d->status != 200) {
        api_reply_error(op->r, d->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_DOCKER_ERROR,
                        "cannot list the sessions' containers (%ld): %s", d->status, d->message);
        image_remove_free(op);
        return;
    }
    size_t i;
    json_t *c;
    json_array_foreach(d->json, i, c)
    {
        const char *iid = json_string_value(json_object_get(c, "ImageID"));
        if (!iid || strcmp(iid, op->image_id) != 0)
            continue;
        const char *sid =
            json_string_value(json_object_get(json_object_get(c, "Labels"), "paddock.session"));
        api_reply_error(op->r, ERR_CONFLICT,
                        "image %s is in use by session %s; delete the session first "
                        "(DELETE /v1/sessions/%s), then the image",
                        op->ref, sid ? sid : "?", sid ? sid : "ID");
        image_remove_free(op);
        return;
    }
    if (eng->driver->image_remove(eng, op->ref, images_on_removed, op) < 0) {
        api_reply_error(op->r, ERR_INTERNAL, "cannot start a request");
        image_remove_free(op);
    }
}

static void images_on_inspect(const struct sandbox_reply *d, void *ud)
{
    struct image_remove *op = ud;
    struct engine *eng = api_req_engine(op->r);
    const char *id = json_string_value(json_object_get(d->json, "Id"));
    json_t *labels = json_object_get(json_object_get(d->json, "Config"), "Labels");
    if (d->status == 404 || (d->status == 200 && !id)) {
        api_reply_error(op->r, ERR_NOT_FOUND, "no runtime image %s (GET /v1/images lists them)",
                        op->ref);
    } else if (d->status != 200) {
        api_reply_error(op->r, d->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_DOCKER_ERROR,
                        "cannot inspect %s (%ld): %s", op->ref, d->status, d->message);
    } else if (!json_object_get(labels, "paddock.image")) {
        api_reply_error(op->r, ERR_FORBIDDEN,
                        "%s is not a paddock runtime image (no label paddock.image): the engine "
                        "removes only the images it built",
                        op->ref);
    } else if (!(op->image_id = strdup(id)) ||
               eng->driver->list(eng, "paddock.session", images_on_users, op) < 0) {
        api_reply_error(op->r, ERR_INTERNAL, "cannot start a request");
    } else {
        return;
    }
    image_remove_free(op);
}

void images_route_remove(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *tag = api_req_param(r, 0);
    const char *repo = getenv("PADDOCK_RUNTIME_REPO");
    struct image_remove *op = calloc(1, sizeof(*op));
    bool ok = tag && *tag && strlen(tag) <= 128;
    for (const char *p = tag; ok && *p; p++)
        ok = isalnum((unsigned char)*p) || strchr("_.-", *p);
    if (!ok) {
        free(op);
        api_reply_error(r, ERR_BAD_REQUEST,
                        "the image is named by its tag in the runtime repository (pd_v...), as "
                        "GET /v1/images shows it after the ':'");
        return;
    }
    if (op)
        op->ref = util_strdupf("%s:%s", repo && *repo ? repo : BUILDER_DEFAULT_REPO, tag);
    if (!op || !op->ref) {
        if (op)
            image_remove_free(op);
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return;
    }
    op->r = r;
    if (eng->driver->image_inspect(eng, op->ref, images_on_inspect, op) < 0) {
        api_reply_error(r, ERR_INTERNAL, "cannot start a request");
        image_remove_free(op);
    }
}

void images_free(struct engine *eng)
{
    struct images *im = eng->images;
    if (!im)
        return;
    while (im->builds) {
        struct image_build *b = im->builds;
        im->builds = b->next;
        image_build_free(b);
    }
    free(im);
    eng->images = NULL;
}
