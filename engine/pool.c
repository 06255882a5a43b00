/* Warm pool: per image, up to N sandboxes started ahead of time and kept ready. A claim turns
 * one into the caller's session with one store write; the pool refills in the background,
 * at most POOL_PARALLEL creations at a time, never above its size, with a backoff when
 * creating fails (a missing image must not become a busy loop). Pooled sessions are
 * keep_alive=false: a clean engine stop deletes them; a restart after a crash finds them by
 * their stored "pooled" flag and counts them again. */
#include "engine/pool.h"

#include "engine/api.h"
#include "engine/base/loop.h"
#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/docker/http.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/session_internal.h"
#include "engine/stats.h"
#include "engine/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_MAX_IMAGES 16
#define POOL_MAX_SIZE 64
#define POOL_PARALLEL 2 /* creations at once: more only slows each on 2 cores */
#define POOL_BACKOFF_MIN_MS 1000
#define POOL_BACKOFF_MAX_MS 60000

struct pool_entry {
    char *image;
    long size;
    int creating;
    long claimed;
    long backoff_ms;
    double retry_at; /* loop ms before which no creation is tried (after a failure) */
    char *last_error;
};

struct pool {
    struct engine *eng;
    struct pool_entry e[POOL_MAX_IMAGES];
    int n;
    struct loop_timer *kick; /* a refill is due */
};

static struct pool_entry *pool_entry_find(struct pool *p, const char *image)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->e[i].image, image) == 0)
            return &p->e[i];
    return NULL;
}

static int pool_entry_add(struct pool *p, const char *image, long size, char **err)
{
    if (size < 0 || size > POOL_MAX_SIZE) {
        *err = util_strdupf("pool size for %s must be 0..%d, not %ld", image, POOL_MAX_SIZE, size);
        return -1;
    }
    struct pool_entry *e = pool_entry_find(p, image);
    if (!e) {
        if (p->n == POOL_MAX_IMAGES) {
            *err = util_strdupf("at most %d images can have a pool", POOL_MAX_IMAGES);
            return -1;
        }
        e = &p->e[p->n];
        memset(e, 0, sizeof(*e));
        e->image = strdup(image);
        if (!e->image) {
            *err = strdup("out of memory");
            return -1;
        }
        p->n++;
    }
    e->size = size;
    e->retry_at = 0;
    e->backoff_ms = 0;
    return 0;
}

static bool pool_image_valid(const char *img)
{
    size_t n = strlen(img);
    if (n == 0 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((img[i] >= 'a' && img[i] <= 'z') || (img[i] >= 'A' && img[i] <= 'Z') ||
              (img[i] >= '0' && img[i] <= '9') || strchr("_.-/:@", img[i])))
            return false;
    return true;
}

static int pool_parse(struct pool *p, const char *spec, char **err)
{
    char *copy = strdup(spec), *save = NULL;
    if (!copy) {
        *err = strdup("out of memory");
        return -1;
    }
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strrchr(item, '=');
        const char *image = p->eng->default_image;
        const char *num = item;
        if (eq) {
            *eq = '\0';
            image = item;
            num = eq + 1;
        }
        char *end;
        long size = strtol(num, &end, 10);
        if (!*num || *end || !pool_image_valid(image)) {
            *err = util_strdupf("pool: \"%s\" is not N or IMAGE=N", item);
            rc = -1;
        } else {
            rc = pool_entry_add(p, image, size, err);
        }
    }
    free(copy);
    return rc;
}

/* Whether a pooled sandbox counts towards the pool's size: it is, or is becoming, ready. */
static bool pool_live(const struct session *s)
{
    switch (s->state) {
    case SESSION_BUILDING:
    case SESSION_STARTING:
    case SESSION_STARTED:
    case SESSION_READY:
        return true;
    case SESSION_PAUSED:
    case SESSION_STOPPED:
    case SESSION_ERROR:
    case SESSION_DISCONNECTED:
    case SESSION_OOM_KILLED:
    case SESSION_DELETED:
    case SESSION_ST_COUNT:
        return false;
    }
    return false;
}

static void pool_ignore(const struct session_result *r, void *ud)
{
    (void)r;
    (void)ud;
}

static void pool_on_created(const struct session_result *r, void *ud)
{
    struct pool_entry *e = ud;
    e->creating--;
    if (r->err) {
        e->backoff_ms = e->backoff_ms ? e->backoff_ms * 2 : POOL_BACKOFF_MIN_MS;
        if (e->backoff_ms > POOL_BACKOFF_MAX_MS)
            e->backoff_ms = POOL_BACKOFF_MAX_MS;
        e->retry_at = loop_now_ms() + (double)e->backoff_ms;
        free(e->last_error);
        e->last_error = strdup(r->message ? r->message : err_name(r->err));
    } else {
        e->backoff_ms = 0;
        free(e->last_error);
        e->last_error = NULL;
    }
}

static void pool_refill_entry(struct pool *p, struct pool_entry *e)
{
    struct engine *eng = p->eng;
    long live = 0;
    /* Dead pooled sandboxes are replaced; extras beyond the size go (not-ready ones first is
     * not worth the bookkeeping: any idle one will do). */
    for (struct session *s = eng->sessions, *next; s; s = next) {
        next = s->next;
        if (!s->pooled || !s->image || strcmp(s->image, e->image) != 0 || s->op != SESSION_OP_NONE)
            continue;
        bool dead = (SESSION_ST_SET(SESSION_STOPPED) | SESSION_ST_SET(SESSION_OOM_KILLED) |
                     SESSION_ST_SET(SESSION_ERROR)) &
                    SESSION_ST_SET(s->state);
        if (dead || (pool_live(s) && live + e->creating >= e->size)) {
            if (!dead && s->state != SESSION_READY)
                continue; /* starting: let it finish, it is counted next time */
            session_delete(s, pool_ignore, NULL);
            continue;
        }
        if (pool_live(s))
            live++;
    }
    for (struct session *s = eng->sessions; s; s = s->next)
        if (s->pooled && s->op != SESSION_OP_NONE && s->image && strcmp(s->image, e->image) == 0 &&
            pool_live(s) && s->op != SESSION_OP_CREATE)
            live++;
    while (live + e->creating < e->size && e->creating < POOL_PARALLEL &&
           loop_now_ms() >= e->retry_at && !eng->stopping) {
        struct session_result bad = {0};
        e->creating++;
        if (session_create_pooled(eng, e->image, pool_on_created, e, &bad) < 0) {
            e->creating--;
            free(e->last_error);
            e->last_error = strdup(bad.message ? bad.message : "cannot create");
            e->backoff_ms = POOL_BACKOFF_MAX_MS;
            e->retry_at = loop_now_ms() + (double)e->backoff_ms;
            break;
        }
        live++; /* the new session is in eng->sessions as "starting" with op "create" */
    }
}

static void pool_on_kick(void *ud)
{
    struct pool *p = ud;
    p->kick = NULL;
    double next = -1;
    for (int i = 0; i < p->n; i++) {
        pool_refill_entry(p, &p->e[i]);
        if (p->e[i].retry_at > loop_now_ms() && (next < 0 || p->e[i].retry_at < next))
            next = p->e[i].retry_at;
    }
    /* A backoff ends with no session event to wake us: come back for it. */
    if (next >= 0 && !p->eng->stopping)
        p->kick = loop_timer_add(p->eng->loop, (long)(next - loop_now_ms()) + 1, pool_on_kick, p);
}

void pool_on_session(struct engine *eng)
{
    struct pool *p = eng->pool;
    if (!p || p->n == 0 || eng->stopping)
        return;
    if (p->kick)
        loop_timer_cancel(eng->loop, p->kick);
    p->kick = loop_timer_add(eng->loop, 0, pool_on_kick, p);
}

struct pool *pool_new(struct engine *eng, const char *spec, char **err)
{
    struct pool *p = calloc(1, sizeof(*p));
    if (!p) {
        *err = strdup("out of memory");
        return NULL;
    }
    p->eng = eng;
    if (spec && *spec && pool_parse(p, spec, err) < 0) {
        pool_free(p);
        return NULL;
    }
    /* First fill once the loop runs (after the stored sessions are loaded). */
    if (p->n)
        p->kick = loop_timer_add(eng->loop, 0, pool_on_kick, p);
    return p;
}

void pool_free(struct pool *p)
{
    if (!p)
        return;
    if (p->kick)
        loop_timer_cancel(p->eng->loop, p->kick);
    for (int i = 0; i < p->n; i++) {
        free(p->e[i].image);
        free(p->e[i].last_error);
    }
    free(p);
}

bool pool_fits(struct engine *eng, json_t *opts, const char *image)
{
    struct pool *p = eng->pool;
    struct pool_entry *e = p ? pool_entry_find(p, image) : NULL;
    if (!e || e->size == 0)
        return false;
    const char *k;
    json_t *v;
    json_object_foreach(opts, k, v)
    {
        /* Options that live in the engine, not in the container, fit any warm sandbox. */
        static const char *const fit[] = {
            "image", "name", "env", "env_allow", "keep_alive", "confirm", "approval_timeout"};
        size_t i = 0;
        while (i < sizeof(fit) / sizeof(fit[0]) && strcmp(k, fit[i]) != 0)
            i++;
        if (i == sizeof(fit) / sizeof(fit[0]))
            return false;
    }
    return true;
}

struct session *pool_take(struct engine *eng, const char *image)
{
    for (struct session *s = eng->sessions; s; s = s->next)
        if (s->pooled && s->op == SESSION_OP_NONE && !s->unlinked && s->image &&
            strcmp(s->image, image) == 0 && s->state == SESSION_READY)
            return s;
    return NULL;
}

/* ---- claim ---- */

static void pool_on_renamed(const struct sandbox_reply *r, void *ud)
{
    (void)r;
    (void)ud;
}

struct claim_op {
    struct session *s;
    session_done_fn fn;
    void *ud;
};

static void claim_reply(struct claim_op *op)
{
    struct engine *eng = op->s->eng;
    json_t *body = store_session_get(eng->store, op->s->id);
    struct session_result res = {.status = 201, .body = body};
    op->fn(&res, op->ud);
    json_decref(body);
}

static void claim_on_env(const struct http_result *r, void *ud)
{
    struct claim_op *op = ud;
    struct session *s = op->s;
    session_op_end(s);
    if (r->status == 200) {
        claim_reply(op);
    } else {
        /* A sandbox without the asked variables is not what was asked for: say so and do
         * not keep it. */
        char *msg = util_strdupf("the warm sandbox did not take the environment (%s)",
                                 r->status < 0 ? r->error : "executor refused");
        struct session_result res = {
            .status = 502, .err = ERR_EXECUTOR_ERROR, .message = msg ? msg : "env failed"};
        op->fn(&res, op->ud);
        free(msg);
        if (!s->unlinked)
            session_delete(s, pool_ignore, NULL);
    }
    session_release(s);
    free(op);
}

int session_claim(struct session *s, const char *name, json_t *patch, json_t *env,
                  session_done_fn fn, void *ud)
{
    struct engine *eng = s->eng;
    char *nm = strdup(name);
    bool keep_alive =
        !json_is_false(json_object_get(json_object_get(patch, "options"), "keep_alive"));
    if (!nm || store_session_claim(eng->store, s->id, name, patch, util_now(), NULL) < 0) {
        free(nm);
        return -1;
    }
    free(s->name);
    s->name = nm;
    s->pooled = false;
    s->keep_alive = keep_alive;
    store_event_add(eng->store, s->id, "claimed", "from the warm pool", util_now());
    for (int i = 0; eng->pool && i < eng->pool->n; i++)
        if (strcmp(eng->pool->e[i].image, s->image) == 0)
            eng->pool->e[i].claimed++;
    stats_on_state(eng->stats, s->id, s->container_id, s->state);
    /* The container takes the session's name too, as a created one has it (for `docker ps`
     * and lazydocker users); a name Docker refuses leaves the id-based one. */
    if (strcmp(name, s->id) != 0 && s->container_id) {
        char cname[96];
        snprintf(cname, sizeof(cname), "paddock-%.8s-%s", eng->engine_id, name);
        eng->driver->rename(eng, s->container_id, cname, pool_on_renamed, NULL);
    }
    session_publish(eng, s->id); /* the first event of the session as its own; kicks a refill */
    struct claim_op *op = calloc(1, sizeof(*op));
    if (!op)
        return -1;
    op->s = s;
    op->fn = fn;
    op->ud = ud;
    if (!json_is_object(env) || json_object_size(env) == 0) {
        claim_reply(op);
        free(op);
        return 0;
    }
    /* The container was made without these variables: export them in its live shell (and
     * ~/.bashrc), as OpenHands' add_env_vars does. */
    char *body = json_dumps(env, JSON_COMPACT);
    struct http_request req = {.method = "POST",
                               .url = "http://executor/env",
                               .body = body,
                               .body_len = body ? strlen(body) : 0,
                               .timeout_ms = 30000};
    session_hold(s);
    session_op_begin(s, SESSION_OP_CLAIM);
    if (!body || s->driver->executor_request(s, &req, claim_on_env, op) < 0) {
        struct http_result r = {.status = -1, .error = "cannot start a request"};
        claim_on_env(&r, op);
    }
    free(body);
    return 0;
}

/* ---- status and control ---- */

json_t *pool_status(struct engine *eng)
{
    json_t *arr = json_array();
    struct pool *p = eng->pool;
    for (int i = 0; p && i < p->n; i++) {
        struct pool_entry *e = &p->e[i];
        long ready = 0, starting = 0, removing = 0;
        for (struct session *s = eng->sessions; s; s = s->next) {
            if (!s->pooled || !s->image || strcmp(s->image, e->image) != 0)
                continue;
            if (s->op == SESSION_OP_DELETE) /* a shrink or a dead one: going, not coming */
                removing++;
            else if (s->state == SESSION_READY && s->op == SESSION_OP_NONE)
                ready++;
            else if (pool_live(s))
                starting++;
        }
        json_array_append_new(arr, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:s?}", "image", e->image,
                                             "size", (json_int_t)e->size, "ready",
                                             (json_int_t)ready, "starting", (json_int_t)starting,
                                             "removing", (json_int_t)removing, "claimed",
                                             (json_int_t)e->claimed, "last_error", e->last_error));
    }
    return json_pack("{s:o}", "pools", arr);
}

int pool_set(struct engine *eng, const char *image, long size, char **err)
{
    if (!eng->pool) {
        *err = strdup("no pool");
        return -1;
    }
    if (!pool_image_valid(image)) {
        *err = util_strdupf("\"image\" must be an image reference");
        return -1;
    }
    if (pool_entry_add(eng->pool, image, size, err) < 0)
        return -1;
    pool_on_session(eng);
    return 0;
}
