/* What a session's creation needs besides its create body (session_prepare.h): the checks
 * that ask the daemon, the engine-owned directories, the git clone; after the start, the host
 * ports the daemon chose; after the removal, the directories again. */
#include "engine/session_prepare.h"

#include "common/buf.h"
#include "engine/base/git.h"
#include "engine/base/util.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/mount_policy.h"
#include "engine/platform.h"
#include "engine/session.h"
#include "engine/session_config.h"
#include "engine/store/store.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SESSION_GIT_TIMEOUT_MS (10L * 60 * 1000)

/* ---- before docker create ---- */

struct prep {
    struct engine *eng;
    struct session_config *c;
    char *id;
    size_t vol_i; /* next named volume to inspect; n_volumes means the workspace's */
    session_prepare_done_fn fn;
    void *ud;
};

/* msg NULL: prepared. */
static void prep_finish(struct prep *op, enum err_code err, const char *msg)
{
    struct session_result res = {.status = err_status(err), .err = err, .message = msg};
    op->fn(msg ? &res : NULL, op->ud);
    free(op->id);
    free(op);
}

static void prep_failf(struct prep *op, enum err_code err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void prep_failf(struct prep *op, enum err_code err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = util_vstrdupf(fmt, ap);
    va_end(ap);
    prep_finish(op, err, msg ? msg : "refused");
    free(msg);
}

/* A transport failure to the daemon: 503 with the engine's usual text. */
static bool prep_docker_down(struct prep *op, const struct sandbox_reply *r)
{
    engine_note_docker(op->eng, r->status >= 0, r->message);
    if (r->status >= 0)
        return false;
    prep_finish(op, ERR_DOCKER_UNAVAILABLE,
                op->eng->docker_error ? op->eng->docker_error : "Docker daemon not reachable");
    return true;
}

static void prep_volumes(struct prep *op);

/* Per-container quotas: overlay2 only over xfs (with pquota, which /info does not show:
 * Docker itself refuses without it), btrfs, zfs, devicemapper, windowsfilter. */
static bool disk_quota_supported(json_t *info, char *desc, size_t n)
{
    const char *driver = json_string_value(json_object_get(info, "Driver"));
    const char *backing = NULL;
    size_t i;
    json_t *kv;
    json_array_foreach(json_object_get(info, "DriverStatus"), i, kv)
    {
        const char *k = json_string_value(json_array_get(kv, 0));
        if (k && strcmp(k, "Backing Filesystem") == 0)
            backing = json_string_value(json_array_get(kv, 1));
    }
    snprintf(desc, n, "%s%s%s", driver ? driver : "an unknown driver", backing ? " on " : "",
             backing ? backing : "");
    if (!driver)
        return false;
    if (strcmp(driver, "overlay2") == 0)
        return backing && strcmp(backing, "xfs") == 0;
    return strcmp(driver, "btrfs") == 0 || strcmp(driver, "zfs") == 0 ||
           strcmp(driver, "devicemapper") == 0 || strcmp(driver, "windowsfilter") == 0;
}

static void prep_on_info(const struct sandbox_reply *r, void *ud)
{
    struct prep *op = ud;
    if (prep_docker_down(op, r))
        return;
    if (r->status != 200 || !json_is_object(r->json)) {
        prep_failf(op, ERR_DOCKER_ERROR, "docker info failed (%ld): %s", r->status, r->message);
        return;
    }
    struct session_config *c = op->c;
    if (c->runtime) {
        json_t *rts = json_object_get(r->json, "Runtimes");
        if (!json_object_get(rts, c->runtime)) {
            struct buf list = {0};
            const char *k;
            json_t *v;
            json_object_foreach(rts, k, v)
            {
                if (list.len)
                    buf_append(&list, ", ", 2);
                buf_append(&list, k, strlen(k));
            }
            prep_failf(op, ERR_BAD_REQUEST,
                       "\"runtime\": \"%s\" is not offered by this Docker daemon (available: "
                       "%s)",
                       c->runtime, list.len ? list.data : "none listed");
            buf_free(&list);
            return;
        }
    }
    char *why = NULL;
    if (c->platform && platform_check(r->json, op->eng->driver->is_local(op->eng),
                                      PLATFORM_BINFMT_DIR, c->platform, &why) < 0) {
        prep_finish(op, ERR_BAD_REQUEST, why ? why : "\"platform\" refused");
        free(why);
        return;
    }
    /* Without quotas the limit is the watchdog's alone (disk.c). */
    char desc[128];
    c->disk_quota = c->disk_asked && disk_quota_supported(r->json, desc, sizeof(desc));
    prep_volumes(op);
}

/* A named volume made with the local driver's mount options can point anywhere on the host
 * (type=none, o=bind, device=/etc): its device goes through the same policy as a bind. */
static void prep_on_volume(const struct sandbox_reply *r, void *ud)
{
    struct prep *op = ud;
    if (prep_docker_down(op, r))
        return;
    bool ws = op->vol_i == op->c->n_volumes;
    const char *name = ws ? op->c->ws_source : op->c->volumes[op->vol_i].source;
    char field[64];
    if (ws)
        snprintf(field, sizeof(field), "workspace.source");
    else
        snprintf(field, sizeof(field), "volumes[%zu].source", op->vol_i);
    if (r->status == 200) {
        const char *driver = json_string_value(json_object_get(r->json, "Driver"));
        json_t *o = json_object_get(r->json, "Options");
        const char *type = json_string_value(json_object_get(o, "type"));
        const char *device = json_string_value(json_object_get(o, "device"));
        const char *mo = json_string_value(json_object_get(o, "o"));
        if (!driver || strcmp(driver, "local") != 0) {
            prep_failf(op, ERR_BAD_REQUEST,
                       "\"%s\": volume %s uses the driver %s; only local volumes are accepted",
                       field, name, driver ? driver : "(unknown)");
            return;
        }
        if (json_object_size(o) && !(type && strcmp(type, "tmpfs") == 0)) {
            bool bind = mo && strstr(mo, "bind") && (!type || strcmp(type, "none") == 0);
            char *resolved = NULL, *why = NULL;
            if (!bind || !device) {
                prep_failf(op, ERR_BAD_REQUEST,
                           "\"%s\": volume %s is mounted with driver options (type %s) the "
                           "engine cannot check",
                           field, name, type ? type : "unset");
                return;
            }
            struct mount_id *id = ws ? &op->c->ws_id : &op->c->volumes[op->vol_i].id;
            if (mount_policy_check(op->eng, device, false, &resolved, id, &why) < 0) {
                prep_failf(op, ERR_BAD_REQUEST, "\"%s\": volume %s binds %s", field, name,
                           why ? why : device);
                free(why);
                return;
            }
            free(resolved);
        }
    } else if (r->status != 404) {
        prep_failf(op, ERR_DOCKER_ERROR, "docker volume inspect %s failed (%ld): %s", name,
                   r->status, r->message);
        return;
    }
    op->vol_i++;
    prep_volumes(op);
}

static void prep_dirs_and_git(struct prep *op);

static void prep_volumes(struct prep *op)
{
    struct session_config *c = op->c;
    while (op->vol_i < c->n_volumes && !c->volumes[op->vol_i].volume)
        op->vol_i++;
    const char *name = NULL;
    if (op->vol_i < c->n_volumes)
        name = c->volumes[op->vol_i].source;
    else if (op->vol_i == c->n_volumes && c->ws == SESSION_WS_VOLUME)
        name = c->ws_source;
    if (!name) {
        prep_dirs_and_git(op);
        return;
    }
    if (op->eng->driver->volume_inspect(op->eng, name, prep_on_volume, op) < 0)
        prep_finish(op, ERR_INTERNAL, "cannot start a request");
}

static void prep_on_git(const char *err, void *ud)
{
    struct prep *op = ud;
    session_config_forget_token(op->c); /* needed once */
    if (err)
        prep_failf(op, ERR_GIT_ERROR, "cloning %s failed: %s", op->c->git_url, err);
    else
        prep_finish(op, ERR_NONE, NULL);
}

/* mkdir -p and chown/chmod, for the engine's own per-session dirs. */
static int make_dir(const char *path, const struct stat *like, char **err)
{
    if (util_mkdir_p(path, 0700) < 0) {
        *err = util_strdupf("cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    if (like) {
        /* The overlay's root takes the upper dir's owner and mode: make it the host dir's. */
        if ((geteuid() == 0 && chown(path, like->st_uid, like->st_gid) < 0) ||
            chmod(path, like->st_mode & 07777) < 0) {
            *err = util_strdupf("cannot set the owner of %s: %s", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void prep_dirs_and_git(struct prep *op)
{
    struct session_config *c = op->c;
    if (c->ws != SESSION_WS_OVERLAY && c->ws != SESSION_WS_CLONE && !c->git_url) {
        prep_finish(op, ERR_NONE, NULL);
        return;
    }
    char *wd = session_config_work_dir(op->eng, op->id);
    char *err = NULL;
    char *target = NULL;
    struct stat lower;
    if (!wd) {
        prep_finish(op, ERR_INTERNAL, "out of memory");
        return;
    }
    if (c->ws == SESSION_WS_OVERLAY) {
        char *upper = util_strdupf("%s/upper", wd);
        char *work = util_strdupf("%s/work", wd);
        if (stat(c->ws_source, &lower) < 0)
            err = util_strdupf("workspace %s: %s", c->ws_source, strerror(errno));
        if (!err && (!upper || !work))
            err = strdup("out of memory");
        if (!err && make_dir(upper, &lower, &err) == 0)
            make_dir(work, NULL, &err);
        free(upper);
        free(work);
    } else if (c->ws == SESSION_WS_CLONE) {
        target = util_strdupf("%s/workspace", wd);
        if (!target || make_dir(target, NULL, &err) < 0 || chmod(target, 0755) < 0) {
            if (!err)
                err = util_strdupf("cannot create %s", target ? target : "the workspace");
        }
    } else {
        target = strdup(c->ws_source);
    }
    free(wd);
    if (err) {
        prep_finish(op, ERR_INTERNAL, err);
        free(err);
        free(target);
        return;
    }
    if (!c->git_url) {
        free(target);
        prep_finish(op, ERR_NONE, NULL);
        return;
    }
    /* The clone runs as the engine's user; as root, the checkout is then given to the agent
     * (an engine-made workspace) or to the host directory's owner. */
    struct stat st = {.st_uid = (uid_t)c->uid, .st_gid = (gid_t)c->uid};
    if (c->ws == SESSION_WS_BIND && stat(target, &st) < 0)
        st.st_uid = st.st_gid = 0;
    struct git_clone_spec gs = {.url = c->git_url,
                                .token = c->git_token,
                                .ref = c->git_ref,
                                .dir = target,
                                .chown = geteuid() == 0,
                                .owner_uid = st.st_uid,
                                .owner_gid = st.st_gid,
                                .timeout_ms = SESSION_GIT_TIMEOUT_MS};
    int rc = git_clone_start(op->eng->loop, &gs, prep_on_git, op, &err);
    free(target);
    if (rc < 0) {
        prep_failf(op, ERR_INTERNAL, "cannot clone: %s", err ? err : "git failed");
        free(err);
    }
}

void session_prepare(struct engine *eng, struct session_config *c, const char *id,
                     session_prepare_done_fn fn, void *ud)
{
    struct prep *op = calloc(1, sizeof(*op));
    if (!op || !(op->id = strdup(id))) {
        free(op);
        struct session_result res = {
            .status = 500, .err = ERR_INTERNAL, .message = "out of memory"};
        fn(&res, ud);
        return;
    }
    op->eng = eng;
    op->c = c;
    op->fn = fn;
    op->ud = ud;
    if (c->runtime || c->disk_asked || c->platform) {
        if (eng->driver->info(eng, prep_on_info, op) < 0)
            prep_finish(op, ERR_INTERNAL, "cannot start a request");
        return;
    }
    prep_volumes(op);
}

/* ---- after docker start ---- */

struct started {
    struct engine *eng;
    const struct session_config *c;
    char *id;
    session_prepare_started_fn next;
    void *ud;
};

/* Docker resolved each bind source again when it mounted it: what the container shows at each
 * target must be the inode the policy checked. NULL, or why not (malloc'd). */
static char *started_verify_mounts(const struct session_config *c, pid_t pid)
{
    char *why = NULL;
    for (size_t i = 0; !why && i < c->n_volumes; i++)
        if (c->volumes[i].id.set)
            mount_policy_verify(pid, c->volumes[i].target, &c->volumes[i].id, &why);
    if (!why && c->ws_id.set && (c->ws == SESSION_WS_BIND || c->ws == SESSION_WS_VOLUME))
        mount_policy_verify(pid, WORKSPACE_IN_CONTAINER, &c->ws_id, &why);
    return why;
}

static bool started_has_checked_mounts(const struct session_config *c)
{
    for (size_t i = 0; i < c->n_volumes; i++)
        if (c->volumes[i].id.set)
            return true;
    return c->ws_id.set && (c->ws == SESSION_WS_BIND || c->ws == SESSION_WS_VOLUME);
}

static void started_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct started *op = ud;
    char *why = NULL;
    if (started_has_checked_mounts(op->c)) {
        json_t *state = json_object_get(r->json, "State");
        pid_t pid = (pid_t)json_integer_value(json_object_get(state, "Pid"));
        if (r->status != 200)
            why = util_strdupf("cannot check the container's mounts: docker inspect failed "
                               "(%ld): %s",
                               r->status, r->message);
        else
            why = started_verify_mounts(op->c, pid);
    }
    json_t *ports = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(json_object_get(r->json, "NetworkSettings"), "Ports"), k, v)
    {
        int port = atoi(k);
        const char *proto = strchr(k, '/');
        size_t i;
        json_t *b;
        json_array_foreach(v, i, b)
        {
            const char *hip = json_string_value(json_object_get(b, "HostIp"));
            const char *hp = json_string_value(json_object_get(b, "HostPort"));
            if (hip && hp)
                json_array_append_new(ports, json_pack("{s:i,s:s,s:s,s:i}", "container_port", port,
                                                       "protocol", proto ? proto + 1 : "tcp",
                                                       "host_ip", hip, "host_port", atoi(hp)));
        }
    }
    if (!why && op->c->n_ports)
        store_session_config_set(op->eng->store, op->id, "ports", ports, NULL);
    json_decref(ports);
    op->next(why, op->ud);
    free(why);
    free(op->id);
    free(op);
}

void session_prepare_started(struct engine *eng, const struct session_config *c, const char *id,
                             const char *container_id, session_prepare_started_fn next, void *ud)
{
    bool need = c->n_ports || started_has_checked_mounts(c);
    struct started *op = need ? calloc(1, sizeof(*op)) : NULL;
    if (op && !(op->id = strdup(id))) {
        free(op);
        op = NULL;
    }
    if (!op) {
        next(need ? "out of memory" : NULL, ud);
        return;
    }
    op->eng = eng;
    op->c = c;
    op->next = next;
    op->ud = ud;
    if (eng->driver->inspect(eng, container_id, started_on_inspect, op) < 0) {
        free(op->id);
        free(op);
        next(started_has_checked_mounts(c) ? "cannot start a request to check the mounts" : NULL,
             ud);
    }
}

/* ---- before a restart ---- */

struct recheck {
    struct engine *eng;
    session_prepare_restart_fn fn;
    void *ud;
};

/* The engine's own binds (the executor, the socket dir, an engine-made workspace) lie in paths
 * only it writes; the policy would refuse them. */
static bool recheck_is_engines(const struct engine *eng, const char *src)
{
    size_t n = strlen(eng->state_dir);
    return strcmp(src, eng->executor_path) == 0 ||
           (strncmp(src, eng->state_dir, n) == 0 && src[n] == '/');
}

static void recheck_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct recheck *op = ud;
    struct session_config *c = calloc(1, sizeof(*c));
    enum err_code err = ERR_NONE;
    char *why = NULL;
    size_t i;
    json_t *m;
    if (!c) {
        err = ERR_INTERNAL;
        why = strdup("out of memory");
    } else if (r->status != 200 && r->status != 404) {
        /* 404 and an unreachable daemon: the start itself says so. */
        err = r->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_DOCKER_ERROR;
        why = util_strdupf("cannot check the container's mounts before the start: docker "
                           "inspect failed (%ld): %s",
                           r->status, r->message);
    }
    json_array_foreach(r->status == 200 && c ? json_object_get(r->json, "Mounts") : NULL, i, m)
    {
        const char *type = json_string_value(json_object_get(m, "Type"));
        const char *src = json_string_value(json_object_get(m, "Source"));
        const char *dst = json_string_value(json_object_get(m, "Destination"));
        if (why || !type || strcmp(type, "bind") != 0 || !src || !dst ||
            recheck_is_engines(op->eng, src))
            continue;
        bool ws = strcmp(dst, WORKSPACE_IN_CONTAINER) == 0;
        if (!ws && c->n_volumes == SESSION_MAX_VOLUMES) {
            err = ERR_CONFLICT;
            why = strdup("the container has more binds than a session may have");
            break;
        }
        char **source = ws ? &c->ws_source : &c->volumes[c->n_volumes].source;
        struct mount_id *id = ws ? &c->ws_id : &c->volumes[c->n_volumes].id;
        char *reason = NULL;
        if (ws)
            c->ws = SESSION_WS_BIND;
        else
            c->volumes[c->n_volumes++].target = strdup(dst);
        if (mount_policy_check(op->eng, src, false, source, id, &reason) < 0 ||
            strcmp(*source, src) != 0) {
            err = ERR_CONFLICT;
            why = util_strdupf("the bind at %.300s no longer passes the mount policy: %s", dst,
                               reason ? reason : "its path now resolves elsewhere");
        }
        free(reason);
    }
    op->fn(err, why, c, op->ud);
    free(why);
    free(op);
}

void session_prepare_restart(struct engine *eng, const char *container_id,
                             session_prepare_restart_fn fn, void *ud)
{
    struct recheck *op = calloc(1, sizeof(*op));
    if (!op) {
        fn(ERR_INTERNAL, "out of memory", NULL, ud);
        return;
    }
    *op = (struct recheck){.eng = eng, .fn = fn, .ud = ud};
    if (eng->driver->inspect(eng, container_id, recheck_on_inspect, op) < 0) {
        free(op);
        fn(ERR_INTERNAL, "cannot start a request", NULL, ud);
    }
}

void session_prepare_cleanup(struct engine *eng, const char *id)
{
    char *wd = session_config_work_dir(eng, id);
    if (wd)
        util_remove_tree(wd);
    free(wd);
}
