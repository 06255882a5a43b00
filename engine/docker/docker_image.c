/* Docker images: inspect, pull and build with their progress streams, tag, remove. */
#include "engine/base/util.h"
#include "engine/docker/docker.h"
#include "engine/docker/docker_internal.h"
#include "engine/docker/http.h"
#include "engine/docker/jsonl.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct image_call {
    docker_progress_fn on_progress; /* NULL: a plain request, body buffered */
    docker_done_fn fn;
    void *ud;
    struct jsonl lines;
    char *error;    /* the first error object's message */
    char *image_id; /* a build's aux.ID */
    bool streamed;  /* a success status came with a stream */
    long idle_ms;   /* the stall bound (a pull), for the message when it runs out */
};

static void image_call_free(struct image_call *c)
{
    jsonl_free(&c->lines);
    free(c->error);
    free(c->image_id);
    free(c);
}

/* The message of an error object: errorDetail.message, else error. */
static const char *image_error_text(json_t *obj)
{
    const char *m =
        json_string_value(json_object_get(json_object_get(obj, "errorDetail"), "message"));
    return m ? m : json_string_value(json_object_get(obj, "error"));
}

static int image_on_line(json_t *obj, const char *line, size_t len, void *ud)
{
    struct image_call *c = ud;
    if (!json_is_object(obj))
        return 0; /* Docker sends only objects here; skip anything else */
    const char *err = image_error_text(obj);
    if (err && !c->error)
        c->error = strdup(err);
    const char *id = json_string_value(json_object_get(json_object_get(obj, "aux"), "ID"));
    if (id) {
        free(c->image_id);
        c->image_id = strdup(id);
    }
    if (c->on_progress)
        c->on_progress(obj, c->ud);
    return 0;
}

static int image_on_data(const char *p, size_t n, void *ud)
{
    struct image_call *c = ud;
    c->streamed = true;
    return jsonl_feed(&c->lines, p, n, image_on_line, c);
}

static void image_on_done(const struct http_result *r, void *ud)
{
    struct image_call *c = ud;
    struct docker_reply rep = {.status = r->status, .message = ""};
    json_t *made = NULL;
    char stalled[160];
    if (r->status < 0 && r->timed_out && c->idle_ms > 0) {
        /* The daemon answers, but not about this: a registry it cannot reach, say. */
        snprintf(stalled, sizeof(stalled),
                 "the Docker daemon sent nothing about it for %ld s, stalled reaching the "
                 "registry perhaps; closing the request cancelled it",
                 c->idle_ms / 1000);
        rep.status = 504;
        rep.message = stalled;
    } else if (r->status < 0) {
        rep.message = r->error ? r->error : "transport error";
    } else if (r->status >= 300 || !c->on_progress) {
        /* An error before any stream, or a plain reply: Docker's JSON with its "message". */
        if (r->len) {
            rep.json = json_loadb(r->body, r->len, 0, NULL);
            const char *m = json_string_value(json_object_get(rep.json, "message"));
            rep.message = m ? m : rep.json ? "" : r->body;
        }
    } else {
        jsonl_finish(&c->lines, image_on_line, c);
        if (c->error) {
            rep.status = 500;
            rep.message = c->error;
        } else {
            made = json_pack("{s:s?}", "Id", c->image_id);
            rep.json = made;
        }
    }
    c->fn(&rep, c->ud);
    if (rep.json != made)
        json_decref(rep.json);
    json_decref(made);
    image_call_free(c);
}

/* timeout_ms bounds the whole call; idle_ms (0: none) a stall of its reply. */
static int image_request(struct docker *d, const char *method, const char *path, const void *body,
                         size_t len, const char *content_type, long timeout_ms, long idle_ms,
                         docker_progress_fn on_progress, bool stream, docker_done_fn fn, void *ud)
{
    struct image_call *c = calloc(1, sizeof(*c));
    if (!c)
        return -1;
    c->on_progress = on_progress;
    c->fn = fn;
    c->ud = ud;
    c->idle_ms = idle_ms;
    struct http_request req = {
        .method = method,
        .body = body,
        .body_len = len,
        .content_type = content_type,
        .timeout_ms = timeout_ms,
        .idle_timeout_ms = idle_ms,
        .on_data = stream ? image_on_data : NULL,
    };
    /* Waits for the negotiated API version like every other call. */
    if (!docker_req_start(d, path, &req, image_on_done, c)) {
        image_call_free(c);
        return -1;
    }
    return 0;
}

/* A streaming call with no progress reader still needs the stream parsed for errors. */
static void image_ignore_progress(json_t *obj, void *ud)
{
    (void)obj;
    (void)ud;
}

int docker_image_inspect(struct docker *d, const char *name, docker_done_fn fn, void *ud)
{
    char *e = docker_escape(name);
    char *path = e ? util_strdupf("/images/%s/json", e) : NULL;
    int rc =
        path ? image_request(d, "GET", path, NULL, 0, NULL, 10000, 0, NULL, false, fn, ud) : -1;
    free(e);
    free(path);
    return rc;
}

int docker_image_ref_split(const char *ref, char **repo, char **tag)
{
    const char *at = strchr(ref, '@');
    const char *slash = strrchr(ref, '/');
    const char *colon = strrchr(ref, ':');
    size_t rlen;
    if (at) {
        rlen = (size_t)(at - ref);
        *tag = strdup(at + 1);
    } else if (colon && (!slash || colon > slash)) {
        rlen = (size_t)(colon - ref);
        *tag = strdup(colon + 1);
    } else {
        rlen = strlen(ref);
        *tag = strdup("latest");
    }
    *repo = strndup(ref, rlen);
    if (!*repo || !*tag) {
        free(*repo);
        free(*tag);
        *repo = *tag = NULL;
        return -1;
    }
    return 0;
}

int docker_image_pull(struct docker *d, const char *ref, const char *platform, long timeout_ms,
                      docker_progress_fn on_progress, docker_done_fn fn, void *ud)
{
    char *repo = NULL, *tag = NULL;
    if (docker_image_ref_split(ref, &repo, &tag) < 0)
        return -1;
    char *er = docker_escape(repo), *et = docker_escape(tag);
    char *ep = platform ? docker_escape(platform) : NULL;
    char *path = er && et && (!platform || ep)
                     ? util_strdupf("/images/create?fromImage=%s&tag=%s%s%s", er, et,
                                    ep ? "&platform=" : "", ep ? ep : "")
                     : NULL;
    int rc = path ? image_request(d, "POST", path, NULL, 0, NULL, 0, timeout_ms,
                                  on_progress ? on_progress : image_ignore_progress, true, fn, ud)
                  : -1;
    free(repo);
    free(tag);
    free(er);
    free(et);
    free(ep);
    free(path);
    return rc;
}

int docker_image_build(struct docker *d, const char *tag, json_t *labels, int nocache,
                       const char *platform, const void *context, size_t len, long timeout_ms,
                       docker_progress_fn on_progress, docker_done_fn fn, void *ud)
{
    char *lj = labels ? json_dumps(labels, JSON_COMPACT) : NULL;
    char *el = lj ? docker_escape(lj) : NULL;
    char *et = docker_escape(tag);
    char *ep = platform ? docker_escape(platform) : NULL;
    char *path =
        et && (!labels || el) && (!platform || ep)
            ? util_strdupf("/build?t=%s&rm=1&forcerm=1%s%s%s%s%s", et, nocache ? "&nocache=1" : "",
                           el ? "&labels=" : "", el ? el : "", ep ? "&platform=" : "", ep ? ep : "")
            : NULL;
    int rc = path ? image_request(d, "POST", path, context, len, "application/x-tar", timeout_ms, 0,
                                  on_progress ? on_progress : image_ignore_progress, true, fn, ud)
                  : -1;
    free(lj);
    free(el);
    free(et);
    free(ep);
    free(path);
    return rc;
}

int docker_image_list(struct docker *d, const char *label, docker_done_fn fn, void *ud)
{
    return docker_call_filtered(d, "/images/json?filters=%s", label, fn, ud);
}

int docker_image_tag(struct docker *d, const char *name, const char *repo, const char *tag,
                     docker_done_fn fn, void *ud)
{
    char *en = docker_escape(name), *er = docker_escape(repo), *et = docker_escape(tag);
    char *path = en && er && et ? util_strdupf("/images/%s/tag?repo=%s&tag=%s", en, er, et) : NULL;
    int rc =
        path ? image_request(d, "POST", path, NULL, 0, NULL, 30000, 0, NULL, false, fn, ud) : -1;
    free(en);
    free(er);
    free(et);
    free(path);
    return rc;
}

int docker_image_remove(struct docker *d, const char *name, docker_done_fn fn, void *ud)
{
    char *en = docker_escape(name);
    char *path = en ? util_strdupf("/images/%s", en) : NULL;
    int rc =
        path ? image_request(d, "DELETE", path, NULL, 0, NULL, 60000, 0, NULL, false, fn, ud) : -1;
    free(en);
    free(path);
    return rc;
}
