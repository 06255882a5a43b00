/* paddock gc: containers, volumes and socket dirs of no live session. Everything is found by
 * the engine's label, never by a name prefix. */
#include "engine/gc.h"

#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/driver.h"
#include "engine/driver_local.h"
#include "engine/engine_internal.h"
#include "engine/session.h"
#include "engine/session_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gc {
    struct engine *eng;
    bool dry_run;
    gc_done_fn fn;
    void *ud;
    json_t *report;
    int pending;
    void (*next)(struct gc *g); /* the step after the removals in flight */
};

/* The live session a resource labelled with sid belongs to, or NULL. cid: the container's id
 * (a second container of a live session belongs to nobody), NULL for volumes. */
static struct session *gc_owner(struct engine *eng, const char *sid, const char *cid)
{
    struct session *s = sid ? session_find(eng, sid) : NULL;
    if (!s || !session_st_is_live(s->state))
        return NULL;
    if (cid && s->container_id && strcmp(s->container_id, cid) != 0)
        return NULL;
    return s;
}

static void gc_error(struct gc *g, const char *what, const char *why)
{
    char *msg = util_strdupf("cannot remove %s: %s", what, why);
    json_array_append_new(json_object_get(g->report, "errors"),
                          json_string(msg ? msg : "cannot remove"));
    free(msg);
}

static void gc_finish(struct gc *g)
{
    g->fn(200, g->report, g->ud);
    json_decref(g->report);
    free(g);
}

static void gc_fail(struct gc *g, const struct sandbox_reply *r)
{
    enum err_code e = r->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_DOCKER_ERROR;
    char *msg = r->status < 0 ? util_strdupf("Docker daemon not reachable at %s (%s)",
                                             g->eng->driver->address(g->eng), r->message)
                              : util_strdupf("docker answered %ld: %s", r->status, r->message);
    json_t *err = json_pack("{s:{s:s,s:s}}", "error", "code", err_name(e), "message",
                            msg ? msg : "docker error");
    g->fn(err_status(e), err, g->ud);
    json_decref(err);
    free(msg);
    json_decref(g->report);
    free(g);
}

static void gc_step_done(struct gc *g)
{
    if (--g->pending == 0)
        g->next(g);
}

struct gc_removal {
    struct gc *g;
    char *what;
};

static void gc_on_removed(const struct sandbox_reply *r, void *ud)
{
    struct gc_removal *rm = ud;
    if (r->status != 204 && r->status != 404)
        gc_error(rm->g, rm->what, r->status < 0 ? "daemon gone" : r->message);
    struct gc *g = rm->g;
    free(rm->what);
    free(rm);
    gc_step_done(g);
}

static void gc_remove(struct gc *g, bool volume, const char *id)
{
    struct gc_removal *rm = calloc(1, sizeof(*rm));
    if (!rm || !(rm->what = strdup(id))) {
        free(rm);
        gc_error(g, id, "out of memory");
        return;
    }
    rm->g = g;
    g->pending++;
    int rc = volume ? g->eng->driver->volume_remove(g->eng, id, gc_on_removed, rm)
                    : g->eng->driver->remove(g->eng, id, gc_on_removed, rm);
    if (rc < 0) {
        struct sandbox_reply none = {.status = -1, .message = "cannot start a request"};
        gc_on_removed(&none, rm);
    }
}

/* ---- 3. socket dirs ---- */

static void gc_socket_dirs(struct gc *g)
{
    char *run = util_strdupf("%s/run", g->eng->state_dir);
    DIR *d = run ? opendir(run) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (gc_owner(g->eng, de->d_name, NULL))
            continue;
        char *path = util_strdupf("%s/%s", run, de->d_name);
        if (!path)
            continue;
        json_array_append_new(json_object_get(g->report, "socket_dirs"), json_string(path));
        if (!g->dry_run && util_remove_tree(path) < 0)
            gc_error(g, path, "remove failed");
        free(path);
    }
    if (d)
        closedir(d);
    free(run);
    gc_finish(g);
}

/* ---- 2. volumes ---- */

static void gc_on_volumes(const struct sandbox_reply *r, void *ud)
{
    struct gc *g = ud;
    if (r->status != 200) {
        gc_fail(g, r);
        return;
    }
    g->pending = 1;
    g->next = gc_socket_dirs;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(r->json, "Volumes"), i, v)
    {
        const char *name = json_string_value(json_object_get(v, "Name"));
        const char *sid =
            json_string_value(json_object_get(json_object_get(v, "Labels"), "paddock.session"));
        if (!name || gc_owner(g->eng, sid, NULL))
            continue;
        json_array_append_new(json_object_get(g->report, "volumes"),
                              json_pack("{s:s,s:s?}", "name", name, "session", sid));
        if (!g->dry_run)
            gc_remove(g, true, name);
    }
    gc_step_done(g);
}

static void gc_volumes(struct gc *g)
{
    char *label = util_strdupf("paddock.engine=%s", g->eng->engine_id);
    if (!label || g->eng->driver->volume_list(g->eng, label, gc_on_volumes, g) < 0) {
        struct sandbox_reply none = {.status = -1, .message = "cannot start a request"};
        gc_on_volumes(&none, g);
    }
    free(label);
}

/* ---- 1. containers ---- */

static void gc_on_containers(const struct sandbox_reply *r, void *ud)
{
    struct gc *g = ud;
    if (r->status != 200 || !json_is_array(r->json)) {
        gc_fail(g, r);
        return;
    }
    /* Volumes go after the containers that use them. */
    g->pending = 1;
    g->next = gc_volumes;
    size_t i;
    json_t *c;
    json_array_foreach(r->json, i, c)
    {
        const char *cid = json_string_value(json_object_get(c, "Id"));
        const char *sid =
            json_string_value(json_object_get(json_object_get(c, "Labels"), "paddock.session"));
        const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
        if (!cid || gc_owner(g->eng, sid, cid))
            continue;
        json_array_append_new(json_object_get(g->report, "containers"),
                              json_pack("{s:s,s:s?,s:s?,s:s?}", "id", cid, "name",
                                        name && name[0] == '/' ? name + 1 : name, "session", sid,
                                        "state", json_string_value(json_object_get(c, "State"))));
        if (!g->dry_run)
            gc_remove(g, false, cid);
    }
    gc_step_done(g);
}

void gc_run(struct engine *eng, bool dry_run, gc_done_fn fn, void *ud)
{
    struct gc *g = calloc(1, sizeof(*g));
    if (!g) {
        json_t *err = json_pack("{s:{s:s,s:s}}", "error", "code", err_name(ERR_INTERNAL), "message",
                                "out of memory");
        fn(err_status(ERR_INTERNAL), err, ud);
        json_decref(err);
        return;
    }
    g->eng = eng;
    g->dry_run = dry_run;
    g->fn = fn;
    g->ud = ud;
    if (!dry_run)
        local_gc(eng);
    g->report = json_pack("{s:b,s:[],s:[],s:[],s:[]}", "dry_run", dry_run, "containers", "volumes",
                          "socket_dirs", "errors");
    char *label = util_strdupf("paddock.engine=%s", eng->engine_id);
    if (!label || eng->driver->list(eng, label, gc_on_containers, g) < 0) {
        struct sandbox_reply none = {.status = -1, .message = "cannot start a request"};
        gc_on_containers(&none, g);
    }
    free(label);
}
