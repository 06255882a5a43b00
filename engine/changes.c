/* File changes of a session. Docker's GET /containers/{id}/changes covers the container's own
 * filesystem only: mounts (the workspace when it is a host directory or a volume, /tmp on a
 * read-only root) are invisible to it. So the workspace is compared by what the engine can
 * see: nothing more (it is part of the container: Docker's diff has it), the overlay's upper
 * dir (exact: added, changed, whiteouts), or a host directory's timestamps since the session
 * started (added, changed; deletions cannot be seen). The recorded write, edit and upload
 * actions fill what no comparison covers and name the action of each path; `run` commands
 * are opaque, and the reply says so. The result is kept in the store at delete. */
#include "engine/changes.h"

#include "common/utf8.h"
#include "engine/action_kind.h"
#include "engine/api.h"
#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/driver.h"
#include "engine/driver_local.h"
#include "engine/engine_internal.h"
#include "engine/session_config.h"
#include "engine/store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define CHANGES_WORKSPACE "/workspace"
/* File times come from the kernel's coarse clock, up to a tick (10 ms) behind the precise time
 * events are stamped with: a write just after the start must not look older than it. Far less
 * than a container's start, so what the engine made before it (a clone) stays out. */
#define CHANGES_CLOCK_SLACK 0.05
/* Entries collected before sorting (a huge diff is cut, not held whole twice). */
#define CHANGES_COLLECT_MAX (CHANGES_MAX * 8)

/* Docker's Kind numbers. */
enum changes_kind { CHANGES_CHANGED = 0, CHANGES_ADDED = 1, CHANGES_DELETED = 2 };
static const char *const changes_kind_names[] = {"changed", "added", "deleted"};

/* Where each entry was seen. */
enum changes_from { FROM_DIFF, FROM_UPPER, FROM_SCAN, FROM_ACTION };
static const char *const changes_from_names[] = {"diff", "overlay", "scan", "action"};

/* What Docker makes in every session's filesystem for the engine's mounts and --init: not the
 * sandbox's doing. */
static const char *const changes_engine_made[] = {
    "/opt/paddock",
    "/opt/paddock/paddock-executor",
    "/run/paddock",
    "/usr/sbin/docker-init",
};

/* The user database the executor writes for a non-root agent at start. */
static const char *const changes_user_db[] = {"/etc/passwd", "/etc/group"};

struct change {
    char *path;
    enum changes_kind kind;
    enum changes_from from;
    long long action_id;
    bool weak; /* a recorded action in a place a comparison covers: only names the action */
};

struct changes_list {
    struct change *v;
    size_t n, cap;
    bool truncated;
};

/* One computation: what the reply says besides the list. */
struct changes_ctx {
    const char *container_source; /* "docker diff", "none" (gone), "error" */
    char *container_error;
    bool container_exact; /* Docker's diff covers every writable place outside the workspace */
    const char *ws_type;
    const char *ws_source;
    bool ws_exact;
    long long opaque;
    json_t *notes;
};

static void changes_list_free(struct changes_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].path);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* Paths are bytes from the sandbox: stored as valid UTF-8 (JSON), shown sanitized by clients. */
static void changes_add(struct changes_list *l, const char *path, size_t len,
                        enum changes_kind kind, enum changes_from from, long long action_id,
                        bool weak)
{
    if (l->n >= CHANGES_COLLECT_MAX) {
        l->truncated = true;
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct change *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            l->truncated = true;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    struct buf repaired = BUF_INIT;
    char *p = utf8_repair(&repaired, path, len, UTF8_REPAIR_NUL | UTF8_REPAIR_EACH_BYTE, NULL) < 0
                  ? NULL
                  : buf_steal(&repaired);
    if (!p) {
        buf_free(&repaired);
        l->truncated = true;
        return;
    }
    l->v[l->n++] = (struct change){p, kind, from, action_id, weak};
}

/* Tree order: '/' sorts before every other byte, so a directory's entries follow it. */
static int changes_path_cmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int ca = *a == '/' ? 1 : *a ? (unsigned char)*a + 1 : 0;
        int cb = *b == '/' ? 1 : *b ? (unsigned char)*b + 1 : 0;
        if (ca != cb || !ca)
            return ca - cb;
    }
}

static int changes_cmp(const void *pa, const void *pb)
{
    const struct change *a = pa, *b = pb;
    int c = changes_path_cmp(a->path, b->path);
    if (c)
        return c;
    /* the same path: what a comparison saw before what an action says */
    if ((a->from == FROM_ACTION) != (b->from == FROM_ACTION))
        return a->from == FROM_ACTION ? 1 : -1;
    return a->action_id > b->action_id ? -1 : a->action_id < b->action_id;
}

static bool changes_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool changes_in_workspace(const char *path)
{
    return changes_under(path, CHANGES_WORKSPACE);
}

/* ---- Docker's diff ---- */

/* Docker lists every parent of a change as changed: keep a changed directory only when nothing
 * under it changed (its own mode or owner did); drop what Docker made for the engine, and the
 * workspace when it is a mount (only its mount point is in the container's layer). */
static void changes_from_diff(struct changes_list *out, json_t *diff, bool ws_mounted,
                              bool user_named)
{
    struct changes_list d = {0};
    size_t i;
    json_t *it;
    json_array_foreach(diff, i, it)
    {
        const char *p = json_string_value(json_object_get(it, "Path"));
        json_int_t k = json_integer_value(json_object_get(it, "Kind"));
        if (p && k >= 0 && k <= 2)
            changes_add(&d, p, strlen(p), (enum changes_kind)k, FROM_DIFF, 0, false);
    }
    out->truncated |= d.truncated;
    if (d.n) /* qsort wants a non-null base even for nothing */
        qsort(d.v, d.n, sizeof(*d.v), changes_cmp);
    for (i = 0; i < d.n; i++) {
        struct change *c = &d.v[i];
        bool drop = ws_mounted && changes_in_workspace(c->path);
        for (size_t k = 0; !drop && k < sizeof(changes_engine_made) / sizeof(*changes_engine_made);
             k++)
            drop = c->kind != CHANGES_DELETED && strcmp(c->path, changes_engine_made[k]) == 0;
        /* The executor named a non-root agent there (executor/userdb.h); that agent cannot
         * change them itself. */
        for (size_t k = 0;
             !drop && user_named && k < sizeof(changes_user_db) / sizeof(*changes_user_db); k++)
            drop = c->kind == CHANGES_CHANGED && strcmp(c->path, changes_user_db[k]) == 0;
        if (!drop && c->kind == CHANGES_CHANGED && i + 1 < d.n && strcmp(c->path, "/") != 0)
            drop = changes_under(d.v[i + 1].path, c->path) && strcmp(d.v[i + 1].path, c->path);
        if (drop || out->n >= CHANGES_COLLECT_MAX) {
            free(c->path);
            continue;
        }
        changes_add(out, c->path, strlen(c->path), c->kind, c->from, 0, false);
        free(c->path);
    }
    free(d.v);
}

/* ---- walking a host directory (bounded, never following a symlink) ---- */

struct changes_walk {
    struct changes_list *out;
    enum changes_from from;
    double since; /* scan: the session's first start */
    dev_t dev;    /* the walk stays on the workspace's filesystem */
    size_t visited;
    bool stopped;
    char rel[PATH_MAX]; /* "/workspace/a/b" of the entry at hand */
};

static void changes_walk_add(struct changes_walk *w, enum changes_kind kind)
{
    changes_add(w->out, w->rel, strlen(w->rel), kind, w->from, 0, false);
}

static int changes_open_dir(int dfd, const char *name)
{
    return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Append "/name" to w->rel; false when it would not fit. */
static bool changes_walk_enter(struct changes_walk *w, size_t rel_len, const char *name)
{
    size_t n = strlen(name);
    if (rel_len + 1 + n >= sizeof(w->rel))
        return false;
    w->rel[rel_len] = '/';
    memcpy(w->rel + rel_len + 1, name, n + 1);
    return true;
}

static bool changes_walk_count(struct changes_walk *w)
{
    if (++w->visited > CHANGES_WALK_MAX)
        w->stopped = true;
    return !w->stopped;
}

static bool changes_dot(const char *n)
{
    return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

static double changes_ts(const struct statx_timestamp *t)
{
    return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

/* A host directory: born since the session started → added; else modified since → changed
 * (a directory only when born: its mtime moves with its entries). Takes dfd. */
static void changes_scan_dir(struct changes_walk *w, int dfd, size_t rel_len, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *e;
    while (!w->stopped && (e = readdir(d))) {
        if (changes_dot(e->d_name) || !changes_walk_count(w) ||
            !changes_walk_enter(w, rel_len, e->d_name))
            continue;
        struct statx sx;
        if (statx(dirfd(d), e->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                  STATX_TYPE | STATX_MTIME | STATX_BTIME, &sx) < 0)
            continue;
        bool dir = S_ISDIR(sx.stx_mode);
        if ((sx.stx_mask & STATX_BTIME) && changes_ts(&sx.stx_btime) >= w->since)
            changes_walk_add(w, CHANGES_ADDED);
        else if (!dir && changes_ts(&sx.stx_mtime) >= w->since)
            changes_walk_add(w, CHANGES_CHANGED);
        if (!dir || depth + 1 >= CHANGES_WALK_DEPTH ||
            makedev(sx.stx_dev_major, sx.stx_dev_minor) != w->dev)
            continue;
        int sub = changes_open_dir(dirfd(d), e->d_name);
        if (sub >= 0)
            changes_scan_dir(w, sub, rel_len + 1 + strlen(e->d_name), depth + 1);
    }
    closedir(d);
}

static bool changes_opaque(int fd)
{
    char v[2] = {0};
    return (fgetxattr(fd, "trusted.overlay.opaque", v, 1) == 1 && v[0] == 'y') ||
           (fgetxattr(fd, "user.overlay.opaque", v, 1) == 1 && v[0] == 'y');
}

/* An opaque directory hides its lower entries: each one the upper dir lacks was deleted. */
static void changes_upper_hidden(struct changes_walk *w, int ufd, int lfd, size_t rel_len)
{
    int l = dup(lfd);
    DIR *d = l >= 0 ? fdopendir(l) : NULL;
    if (!d) {
        if (l >= 0)
            close(l);
        return;
    }
    struct dirent *e;
    struct stat st;
    while (!w->stopped && (e = readdir(d))) {
        if (changes_dot(e->d_name) || !changes_walk_count(w) ||
            !changes_walk_enter(w, rel_len, e->d_name))
            continue;
        if (fstatat(ufd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            changes_walk_add(w, CHANGES_DELETED);
    }
    closedir(d);
}

/* The overlay's upper dir against its lower one: a whiteout (character device 0/0) is a
 * deletion, an entry the lower dir lacks was added, one it has was changed (a directory only
 * when opaque or its mode or owner changed: it is copied up for any change inside). Takes ufd
 * and lfd (-1: no lower counterpart). */
static void changes_upper_dir(struct changes_walk *w, int ufd, int lfd, size_t rel_len, int depth)
{
    DIR *d = fdopendir(ufd);
    if (!d) {
        close(ufd);
        if (lfd >= 0)
            close(lfd);
        return;
    }
    struct dirent *e;
    while (!w->stopped && (e = readdir(d))) {
        if (changes_dot(e->d_name) || !changes_walk_count(w) ||
            !changes_walk_enter(w, rel_len, e->d_name))
            continue;
        struct stat st, lst;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) {
            changes_walk_add(w, CHANGES_DELETED);
            continue;
        }
        bool lower = lfd >= 0 && fstatat(lfd, e->d_name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
        if (!S_ISDIR(st.st_mode)) {
            changes_walk_add(w, lower ? CHANGES_CHANGED : CHANGES_ADDED);
            continue;
        }
        int sub = changes_open_dir(dirfd(d), e->d_name);
        bool opaque = sub >= 0 && lower && changes_opaque(sub);
        bool lower_dir = lower && S_ISDIR(lst.st_mode);
        if (!lower)
            changes_walk_add(w, CHANGES_ADDED);
        else if (opaque || !lower_dir || st.st_mode != lst.st_mode || st.st_uid != lst.st_uid ||
                 st.st_gid != lst.st_gid)
            changes_walk_add(w, CHANGES_CHANGED);
        if (sub < 0)
            continue;
        if (depth + 1 >= CHANGES_WALK_DEPTH) {
            close(sub);
            continue;
        }
        size_t sub_len = rel_len + 1 + strlen(e->d_name);
        int sub_l = lower_dir ? changes_open_dir(lfd, e->d_name) : -1;
        if (opaque && sub_l >= 0) {
            changes_upper_hidden(w, sub, sub_l, sub_len);
            close(sub_l);
            sub_l = -1;
        }
        changes_upper_dir(w, sub, sub_l, sub_len, depth + 1);
    }
    closedir(d);
    if (lfd >= 0)
        close(lfd);
}

/* Walk the workspace's host side; false (and *why) when it cannot be read. */
static bool changes_walk_workspace(struct changes_list *out, const char *dir, const char *lower,
                                   double since, bool *stopped, char **why)
{
    struct changes_walk *w = calloc(1, sizeof(*w));
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    struct stat st;
    if (!w || fd < 0 || fstat(fd, &st) < 0) {
        *why = util_strdupf("cannot read %s: %s", dir ? dir : "the workspace",
                            w ? strerror(errno) : "out of memory");
        if (fd >= 0)
            close(fd);
        free(w);
        return false;
    }
    w->out = out;
    w->since = since;
    w->dev = st.st_dev;
    snprintf(w->rel, sizeof(w->rel), "%s", CHANGES_WORKSPACE);
    size_t len = strlen(w->rel);
    if (lower) {
        w->from = FROM_UPPER;
        int lfd = open(lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (lfd < 0) {
            *why = util_strdupf("cannot read %s: %s", lower, strerror(errno));
            close(fd);
            free(w);
            return false;
        }
        changes_upper_dir(w, fd, lfd, len, 0);
    } else {
        w->from = FROM_SCAN;
        changes_scan_dir(w, fd, len, 0);
    }
    *stopped = w->stopped;
    free(w);
    return true;
}

/* ---- recorded actions ---- */

/* The path an action names, as the sandbox sees it (relative ones are in the workspace, the
 * executor's working directory). */
static char *changes_action_path(const char *p)
{
    if (!p || !*p)
        return NULL;
    if (p[0] == '/')
        return strdup(p);
    if (p[0] == '.' && p[1] == '/')
        p += 2;
    return util_strdupf("%s/%s", CHANGES_WORKSPACE, p);
}

static void changes_from_actions(struct changes_list *out, struct store *st, const char *sid,
                                 const struct changes_ctx *c)
{
    const char *writers[ACTION_KIND_MAX + 1];
    action_kind_names(action_kind_writes_files, writers);
    json_t *rows = store_actions_file_writes(st, sid, writers, CHANGES_MAX);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const struct action_kind *kind =
            action_kind_find(json_string_value(json_object_get(row, "kind")));
        if (!kind || !kind->file_change)
            continue;
        /* A write or an upload may have made the file or replaced one: the record does not
         * say; an editor's create made it, its view wrote nothing. */
        enum action_file_change fc =
            kind->file_change(json_string_value(json_object_get(row, "command")));
        if (fc == ACTION_FILE_NONE)
            continue;
        char *p = changes_action_path(json_string_value(
            json_object_get(row, kind->path_in_observation ? "observed_path" : "path")));
        if (!p)
            continue;
        enum changes_kind k = fc == ACTION_FILE_ADDED ? CHANGES_ADDED : CHANGES_CHANGED;
        bool exact = changes_in_workspace(p) ? c->ws_exact : c->container_exact;
        changes_add(out, p, strlen(p), k, FROM_ACTION,
                    (long long)json_integer_value(json_object_get(row, "id")), exact);
        free(p);
    }
    json_decref(rows);
}

/* ---- the reply ---- */

static void changes_note(struct changes_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void changes_note(struct changes_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = util_vstrdupf(fmt, ap);
    va_end(ap);
    if (s)
        json_array_append_new(c->notes, json_string(s));
    free(s);
}

/* Sort, merge each path's entries (a comparison's kind, the newest action's id), drop weak
 * action entries nothing else saw, and build the reply. */
static json_t *changes_build(struct changes_list *l, const struct changes_ctx *c)
{
    if (l->n)
        qsort(l->v, l->n, sizeof(*l->v), changes_cmp);
    json_t *arr = json_array();
    size_t total = 0;
    for (size_t i = 0; i < l->n;) {
        size_t j = i + 1;
        long long action = l->v[i].action_id;
        while (j < l->n && strcmp(l->v[j].path, l->v[i].path) == 0) {
            if (!action)
                action = l->v[j].action_id;
            j++;
        }
        const struct change *e = &l->v[i];
        if (!(e->from == FROM_ACTION && e->weak)) {
            total++;
            if (json_array_size(arr) < CHANGES_MAX) {
                json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "path", e->path, "kind",
                                      changes_kind_names[e->kind], "where",
                                      changes_in_workspace(e->path) ? "workspace" : "container",
                                      "from", changes_from_names[e->from]);
                if (o && action)
                    json_object_set_new(o, "action_id", json_integer(action));
                json_array_append_new(arr, o);
            }
        }
        i = j;
    }
    return json_pack("{s:o,s:b,s:I,s:s,s:s?,s:s,s:s,s:b,s:I,s:O,s:f}", "changes", arr, "truncated",
                     l->truncated || total > CHANGES_MAX, "total", (json_int_t)total,
                     "container_source", c->container_source, "container_error", c->container_error,
                     "workspace_type", c->ws_type, "workspace_source", c->ws_source,
                     "workspace_exact", c->ws_exact, "opaque_actions", (json_int_t)c->opaque,
                     "notes", c->notes, "at", util_now());
}

/* Everything but Docker's diff, which the caller got (diff NULL: none; container_error says
 * why). */
static json_t *changes_compute(struct engine *eng, json_t *session, json_t *diff,
                               const char *container_error)
{
    const char *sid = json_string_value(json_object_get(session, "id"));
    json_t *opts = json_object_get(session, "options");
    json_t *ws = json_object_get(opts, "workspace");
    bool read_only = json_is_true(json_object_get(opts, "read_only"));
    struct changes_ctx c = {
        .container_source = diff              ? "docker diff"
                            : container_error ? "error"
                                              : "none",
        .container_error = container_error ? strdup(container_error) : NULL,
        .container_exact = diff && !read_only,
        .notes = json_array(),
    };
    /* None stored: the image's own /workspace. "anonymous_volume" (the image's /workspace
     * under a read-only root), like any type this build does not know, is a volume the engine
     * does not read. The reply names the stored type as it is. */
    enum session_ws ws_type = SESSION_WS_IMAGE;
    const char *ws_name = json_string_value(json_object_get(ws, "type"));
    if (ws_name && session_ws_parse(ws_name, &ws_type) < 0)
        ws_type = SESSION_WS_VOLUME;
    c.ws_type = ws_name ? ws_name : session_ws_name(SESSION_WS_IMAGE);
    bool ws_mounted = ws_type != SESSION_WS_IMAGE;
    struct changes_list l = {0};
    if (diff)
        changes_from_diff(&l, diff, ws_mounted,
                          json_integer_value(json_object_get(opts, "user_id")) != 0);
    else
        changes_note(&c, "%s",
                     container_error ? container_error
                                     : "the container is gone: its own filesystem "
                                       "cannot be compared any more");
    if (read_only)
        changes_note(&c, "the root filesystem is read-only; /tmp is a tmpfs Docker's diff "
                         "cannot see: files there are known only from recorded actions");

    const char *src = json_string_value(json_object_get(ws, "source"));
    const char *upper = json_string_value(json_object_get(ws, "upper"));
    c.ws_source = "recorded actions";
    char *why = NULL;
    bool stopped = false;
    if (!ws_mounted && diff) {
        c.ws_source = "docker diff";
        c.ws_exact = true;
    } else if (ws_type == SESSION_WS_OVERLAY) {
        if (changes_walk_workspace(&l, upper, src, 0, &stopped, &why)) {
            c.ws_source = "overlay upper dir";
            c.ws_exact = true;
        }
    } else if (ws_type == SESSION_WS_BIND || ws_type == SESSION_WS_CLONE) {
        double since = store_session_first_start(eng->store, sid);
        if (since <= 0)
            since = json_number_value(json_object_get(session, "created_at"));
        since -= CHANGES_CLOCK_SLACK;
        if (changes_walk_workspace(&l, src, NULL, since, &stopped, &why)) {
            c.ws_source = "host dir timestamps and recorded actions";
            changes_note(&c,
                         "the workspace is the host directory %s: files born or modified since "
                         "the session started are listed (by anyone, not only the sandbox); "
                         "deleted files cannot be seen",
                         src);
        }
    } else if (ws_mounted) {
        changes_note(&c, "the workspace is a Docker volume the engine does not read: only files "
                         "that write, edit and upload actions touched are listed");
    }
    if (why) {
        changes_note(&c, "workspace: %s; only recorded actions are listed", why);
        free(why);
    }
    if (stopped) {
        l.truncated = true;
        changes_note(&c, "the workspace walk stopped after %d entries", CHANGES_WALK_MAX);
    }
    if (json_array_size(json_object_get(opts, "volumes")))
        changes_note(&c, "the session's other volumes are not compared");

    changes_from_actions(&l, eng->store, sid, &c);
    const char *shells[ACTION_KIND_MAX + 1];
    action_kind_names(action_kind_is_shell_like, shells);
    c.opaque = store_actions_count_finished(eng->store, sid, shells);
    if (c.opaque && !(c.ws_exact && c.container_exact))
        changes_note(&c,
                     "%lld run action%s may have changed files no comparison here covers: "
                     "commands are opaque",
                     c.opaque, c.opaque == 1 ? "" : "s");
    json_t *reply = changes_build(&l, &c);
    changes_list_free(&l);
    json_decref(c.notes);
    free(c.container_error);
    return reply;
}

/* ---- GET /v1/sessions/{id}/changes ---- */

struct changes_op {
    struct engine *eng;
    struct api_req *r; /* the request to answer, or NULL when saving */
    json_t *session;
    changes_saved_fn done;
    void *ud;
};

static void changes_op_free(struct changes_op *op)
{
    json_decref(op->session);
    free(op);
}

static void changes_reply_stored(struct api_req *r, json_t *session, const char *why)
{
    const char *id = json_string_value(json_object_get(session, "id"));
    json_t *kept = store_changes_get(api_req_engine(r)->store, id);
    if (!kept) {
        api_reply_error(r, ERR_CONFLICT,
                        "session %s has no container (%s) and no changes were kept for it", id,
                        why);
        return;
    }
    json_object_set_new(kept, "source", json_string("stored"));
    api_reply_json(r, 200, kept);
}

static void changes_on_diff(const struct sandbox_reply *rep, void *ud)
{
    struct changes_op *op = ud;
    if (op->r) {
        if (rep->status == 404) {
            changes_reply_stored(op->r, op->session, "it was removed");
        } else if (rep->status == 501) { /* the driver has none (the local backend) */
            api_reply_error(op->r, ERR_NOT_IMPLEMENTED, "%s", rep->message);
        } else if (rep->status != 200) {
            api_reply_error(op->r, rep->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_DOCKER_ERROR,
                            "cannot read the container's changes: %s", rep->message);
        } else {
            /* Docker answers null when nothing changed */
            json_t *diff = json_is_array(rep->json) ? json_incref(rep->json) : json_array();
            json_t *reply = changes_compute(op->eng, op->session, diff, NULL);
            json_decref(diff);
            json_object_set_new(reply, "source", json_string("live"));
            api_reply_json(op->r, 200, reply);
        }
        changes_op_free(op);
        return;
    }
    /* Saving: keep what can still be seen, whatever Docker said. */
    char *why = NULL;
    if (rep->status == 404)
        why = strdup("the container was already gone when the session was deleted");
    else if (rep->status != 200)
        why = util_strdupf("cannot read the container's changes: %s", rep->message);
    json_t *diff = rep->status != 200         ? NULL
                   : json_is_array(rep->json) ? json_incref(rep->json)
                                              : json_array();
    json_t *reply = changes_compute(op->eng, op->session, diff, why);
    json_decref(diff);
    free(why);
    char *body = json_dumps(reply, JSON_COMPACT);
    char *err = NULL;
    const char *id = json_string_value(json_object_get(op->session, "id"));
    if (!body || store_changes_set(op->eng->store, id, body, util_now(), &err) < 0)
        op->done(op->ud, err ? err : "out of memory");
    else
        op->done(op->ud, NULL);
    free(err);
    free(body);
    json_decref(reply);
    changes_op_free(op);
}

static struct changes_op *changes_op_new(struct engine *eng, json_t *session)
{
    struct changes_op *op = calloc(1, sizeof(*op));
    if (!op) {
        json_decref(session);
        return NULL;
    }
    op->eng = eng;
    op->session = session;
    return op;
}

void changes_route_get(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    json_t *s = api_stored_session(r);
    if (!s)
        return;
    const char *cid = json_string_value(json_object_get(s, "container_id"));
    const char *state = json_string_value(json_object_get(s, "state"));
    enum session_st st;
    if (!cid || (session_st_parse(state, &st) == 0 && st == SESSION_DELETED)) {
        char why[96];
        snprintf(why, sizeof(why), "it is %s", state ? state : "unknown");
        changes_reply_stored(r, s, why);
        json_decref(s);
        return;
    }
    struct changes_op *op = changes_op_new(eng, s);
    if (!op) {
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return;
    }
    op->r = r;
    if (local_driver_for(eng, cid)->changes(eng, cid, changes_on_diff, op) < 0) {
        changes_op_free(op);
        api_reply_error(r, ERR_INTERNAL, "cannot start a request");
    }
}

void changes_save(struct engine *eng, const char *session_id, const char *container_id,
                  changes_saved_fn done, void *ud)
{
    json_t *s = store_session_get(eng->store, session_id);
    struct changes_op *op = s ? changes_op_new(eng, s) : NULL;
    if (!op) {
        done(ud, s ? "out of memory" : NULL);
        return;
    }
    op->done = done;
    op->ud = ud;
    if (!container_id) {
        struct sandbox_reply rep = {.status = 404, .message = ""};
        changes_on_diff(&rep, op);
        return;
    }
    if (local_driver_for(eng, container_id)->changes(eng, container_id, changes_on_diff, op) < 0) {
        struct sandbox_reply rep = {.status = -1, .message = "cannot start a request"};
        changes_on_diff(&rep, op);
    }
}
