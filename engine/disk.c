/* The disk watchdog and the store's floor (disk.h). */
#include "engine/disk.h"

#include "common/size.h"
#include "engine/base/disk_walk.h"
#include "engine/base/loop.h"
#include "engine/base/util.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/session_config.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

/* Entries looked at per turn of the loop: about a millisecond or two, so requests keep their
 * pace while a large tree is measured. */
#define DISK_SLICE 512
/* After an action, the next measurement of its session waits this long, and at least
 * DISK_GAP_MS after the last one began: a stream of actions costs a measurement a second. */
#define DISK_SOON_MS 200
#define DISK_GAP_MS 1000
/* The floor's check (every action, twice) reuses the state dir's free space read this recently,
 * while it was more than DISK_FS_DROP above the floor: to pass the floor unseen, something must
 * write that much within this time. Nearer the floor, or below it, every check reads it again,
 * so a refusal and the recovery after space is freed are seen at once. */
#define DISK_FLOOR_MS 50

/* What the watchdog knows of one session. */
struct disk_seen {
    struct disk_seen *next;
    char id[2 * SESSION_ID_BYTES + 1];
    char *container_id; /* the container the roots belong to */
    json_t *roots;      /* array of paths to measure; NULL until learned */
    bool queued;
    bool seen;               /* the session was found live in the last interval's sweep */
    struct loop_timer *soon; /* disk_watch_soon's, until it queues the session */
    struct disk *d;          /* for the timer */
    double last_ms;          /* when its last measurement began (loop_now_ms), 0: never */
    long long used;
    double at; /* 0: never measured */
    char *error;
};

struct disk {
    struct engine *eng;
    long long limit, floor;
    struct loop_timer *interval, *slice, *fs_timer;
    /* The filesystems sandboxes write to (the state dir's, Docker's root once /info said it):
     * their free space at the last sweep, so a drop starts the next one. */
    char *docker_root;
    long long fs_base[2];
    struct disk_seen *seen;
    /* The queue of ids to measure, in order (each at most once: disk_seen.queued). */
    char (*queue)[2 * SESSION_ID_BYTES + 1];
    size_t n_queue, cap_queue;
    /* The measurement in flight: its session, the walk, and when it began. */
    struct disk_seen *cur;
    struct disk_walk *walk;
    double started_ms, busy_ms;
    bool learning; /* an inspect or volume list for cur is in flight */
    unsigned gen;  /* bumped when cur changes: replies about an older cur are dropped */
    long long passes, last_entries;
    double last_ms, last_busy_ms;
    /* The state dir's free space as last read, and when (loop_now_ms; 0: never). */
    long long state_free;
    double state_free_ms;
};

static void disk_next(struct disk *d);

static struct disk_seen *disk_seen_find(struct disk *d, const char *id, bool create)
{
    for (struct disk_seen *x = d->seen; x; x = x->next)
        if (strcmp(x->id, id) == 0)
            return x;
    if (!create || strlen(id) >= sizeof(d->seen->id))
        return NULL;
    struct disk_seen *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    strcpy(x->id, id);
    x->d = d;
    x->next = d->seen;
    d->seen = x;
    return x;
}

static void disk_seen_free(struct disk_seen *x)
{
    if (x->soon)
        loop_timer_cancel(x->d->eng->loop, x->soon);
    free(x->container_id);
    json_decref(x->roots);
    free(x->error);
    free(x);
}

/* A session that can write now: its container runs and the engine talks to it. */
static bool disk_writing(const struct session *s)
{
    return s->container_id && !s->pooled &&
           (s->state == SESSION_READY || s->state == SESSION_STARTED);
}

static void disk_enqueue(struct disk *d, const char *id)
{
    struct disk_seen *x = disk_seen_find(d, id, true);
    if (!x || x->queued)
        return;
    if (d->n_queue == d->cap_queue) {
        size_t cap = d->cap_queue ? 2 * d->cap_queue : 16;
        void *q = realloc(d->queue, cap * sizeof(*d->queue));
        if (!q)
            return; /* measured at the next interval */
        d->queue = q;
        d->cap_queue = cap;
    }
    strcpy(d->queue[d->n_queue++], id);
    x->queued = true;
}

long long disk_limit_default(const struct engine *eng)
{
    return eng->disk ? eng->disk->limit : DISK_LIMIT_DEFAULT;
}

/* The session's limit: its stored options' limits.disk, else the engine's default. */
static long long disk_limit_of(struct disk *d, const char *id)
{
    json_t *cfg = store_session_config(d->eng->store, id);
    json_t *v = json_object_get(json_object_get(json_object_get(cfg, "options"), "limits"), "disk");
    long long limit =
        json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : d->limit;
    json_decref(cfg);
    return limit;
}

/* ---- one measurement ---- */

/* How a measurement ended. */
enum disk_outcome {
    DISK_MEASURED, /* used holds the bytes */
    DISK_FAILED,   /* the engine could not measure (error says why): nothing is decided */
    DISK_HIDDEN,   /* the sandbox's tree cannot be measured (error): treated as over */
    DISK_SKIPPED,  /* the container went away meanwhile: nothing recorded */
};

static void disk_finish(struct disk *d, enum disk_outcome how, long long used, const char *error)
{
    struct disk_seen *x = d->cur;
    disk_walk_free(d->walk);
    d->walk = NULL;
    d->cur = NULL;
    d->gen++;
    if (how != DISK_SKIPPED) {
        d->passes++;
        d->last_ms = loop_now_ms() - d->started_ms;
        d->last_busy_ms = d->busy_ms;
        free(x->error);
        x->error = error ? strdup(error) : NULL;
        x->at = util_now();
        if (how == DISK_MEASURED)
            x->used = used;
    }
    struct session *s = session_find(d->eng, x->id);
    long long limit = disk_limit_of(d, x->id);
    bool over = how == DISK_HIDDEN || (how == DISK_MEASURED && used > limit);
    if (s && over && disk_writing(s) && s->op == SESSION_OP_NONE) {
        char u[32], l[32], *why;
        if (how == DISK_HIDDEN)
            why = util_strdupf("disk limit: its files cannot be measured (%s); delete the session",
                               error);
        else
            why = util_strdupf("disk limit reached: %s used of %s (limits.disk); raise it (paddock "
                               "limit %s --disk SIZE), then resume; or delete the session",
                               size_format(used, u, sizeof(u)), size_format(limit, l, sizeof(l)),
                               x->id);
        if (why)
            session_pause_because(s, why, NULL, NULL);
        free(why);
    } else if (s && over && disk_writing(s)) {
        disk_watch_soon(d->eng, x->id); /* a lifecycle request is under way: again in a second */
    }
    disk_next(d);
}

static void disk_on_slice(void *ud)
{
    struct disk *d = ud;
    d->slice = NULL;
    double t0 = loop_now_ms();
    char *err = NULL;
    int rc = disk_walk_step(d->walk, DISK_SLICE, &err);
    d->busy_ms += loop_now_ms() - t0;
    d->last_entries = disk_walk_entries(d->walk);
    if (rc > 0 && (d->slice = loop_timer_add(d->eng->loop, 0, disk_on_slice, d)))
        return;
    if (rc == 0)
        disk_finish(d, DISK_MEASURED, disk_walk_bytes(d->walk), NULL);
    else
        disk_finish(d, rc == -2 ? DISK_HIDDEN : DISK_FAILED, 0, err ? err : "out of memory");
    free(err);
}

static void disk_walk_start(struct disk *d)
{
    struct disk_seen *x = d->cur;
    char *err = NULL;
    d->walk = disk_walk_new();
    size_t i;
    json_t *p;
    if (!d->walk) {
        disk_finish(d, DISK_FAILED, 0, "out of memory");
        return;
    }
    json_array_foreach(x->roots, i, p)
    {
        if (disk_walk_add(d->walk, json_string_value(p), &err) < 0) {
            disk_finish(d, DISK_FAILED, 0, err);
            free(err);
            return;
        }
    }
    disk_on_slice(d);
}

/* An inspect and a volume list in flight; eng, not the watchdog, since a reply cancelled at
 * the engine's stop comes after the watchdog is gone. */
struct disk_learn {
    struct engine *eng;
    unsigned gen;
    json_t *roots;   /* what the inspect found: upper dir, work dir */
    json_t *volumes; /* {name: source} of the container's volume mounts */
};

/* The watchdog when the reply is still the one it waits for, else NULL. */
static struct disk *disk_learn_current(struct disk_learn *l)
{
    struct disk *d = l->eng->disk;
    return d && l->gen == d->gen ? d : NULL;
}

static struct disk *disk_learn_end(struct disk_learn *l)
{
    struct disk *d = disk_learn_current(l);
    bool current = d != NULL;
    json_decref(l->roots);
    json_decref(l->volumes);
    free(l);
    if (current)
        d->learning = false;
    return current ? d : NULL;
}

/* The volumes labelled as the session's are the engine's: their sources join the roots. */
static void disk_on_volumes(const struct sandbox_reply *r, void *ud)
{
    struct disk_learn *l = ud;
    if (!disk_learn_current(l)) {
        disk_learn_end(l);
        return;
    }
    struct disk_seen *x = l->eng->disk->cur;
    if (r->status == 200) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(r->json, "Volumes"), i, v)
        {
            const char *name = json_string_value(json_object_get(v, "Name"));
            const char *src = name ? json_string_value(json_object_get(l->volumes, name)) : NULL;
            if (src)
                json_array_append_new(l->roots, json_string(src));
        }
    }
    json_decref(x->roots);
    x->roots = json_incref(l->roots);
    struct disk *d = disk_learn_end(l);
    if (d)
        disk_walk_start(d);
}

static void disk_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct disk_learn *l = ud;
    struct disk *d = disk_learn_current(l);
    if (!d) {
        disk_learn_end(l);
        return;
    }
    if (r->status != 200 || !json_is_object(r->json)) {
        /* Gone or unreachable: the events will tell; measured again later. */
        if ((d = disk_learn_end(l)))
            disk_finish(d, DISK_SKIPPED, 0, NULL);
        return;
    }
    json_t *gd = json_object_get(r->json, "GraphDriver");
    const char *upper = json_string_value(json_object_get(json_object_get(gd, "Data"), "UpperDir"));
    if (upper)
        json_array_append_new(l->roots, json_string(upper));
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(r->json, "Mounts"), i, m)
    {
        const char *type = json_string_value(json_object_get(m, "Type"));
        const char *name = json_string_value(json_object_get(m, "Name"));
        const char *src = json_string_value(json_object_get(m, "Source"));
        if (type && strcmp(type, "volume") == 0 && name && src)
            json_object_set_new(l->volumes, name, json_string(src));
    }
    char *label = util_strdupf("paddock.session=%s", d->cur->id);
    if (!label || d->eng->driver->volume_list(d->eng, label, disk_on_volumes, l) < 0) {
        struct sandbox_reply none = {.status = -1, .message = ""};
        disk_on_volumes(&none, l);
    }
    free(label);
}

/* The next queued session: learn its trees once per container, then walk them. */
static void disk_next(struct disk *d)
{
    while (!d->cur && d->n_queue > 0) {
        char id[sizeof(d->queue[0])];
        strcpy(id, d->queue[0]);
        memmove(d->queue, d->queue + 1, (d->n_queue - 1) * sizeof(*d->queue));
        d->n_queue--;
        struct disk_seen *x = disk_seen_find(d, id, false);
        if (!x)
            continue;
        x->queued = false;
        struct session *s = session_find(d->eng, id);
        if (!s || !disk_writing(s))
            continue;
        d->cur = x;
        d->gen++;
        d->started_ms = x->last_ms = loop_now_ms();
        d->busy_ms = 0;
        if (x->roots && x->container_id && strcmp(x->container_id, s->container_id) == 0) {
            disk_walk_start(d);
            return;
        }
        free(x->container_id);
        x->container_id = strdup(s->container_id);
        struct disk_learn *l = calloc(1, sizeof(*l));
        char *work = session_config_work_dir(d->eng, id);
        if (!l || !x->container_id || !work || !(l->roots = json_array()) ||
            !(l->volumes = json_object())) {
            free(work);
            if (l) {
                json_decref(l->roots);
                json_decref(l->volumes);
            }
            free(l);
            disk_finish(d, DISK_FAILED, 0, "out of memory");
            return;
        }
        json_array_append_new(l->roots, json_string(work));
        free(work);
        l->eng = d->eng;
        l->gen = d->gen;
        d->learning = true;
        if (s->driver->inspect(d->eng, s->container_id, disk_on_inspect, l) < 0) {
            struct sandbox_reply none = {.status = -1, .message = "cannot start a request"};
            disk_on_inspect(&none, l);
        }
        return;
    }
}

/* ---- when ---- */

static void disk_on_soon(void *ud);

static int disk_by_last(const void *a, const void *b)
{
    double x = (*(struct disk_seen *const *)a)->last_ms,
           y = (*(struct disk_seen *const *)b)->last_ms;
    return x < y ? -1 : x > y;
}

/* Every session that can write, measured soon (each at most once a second), up to
 * DISK_SWEEP_MAX of them, those measured longest ago first; sessions that went away
 * forgotten. */
static void disk_sweep(struct disk *d)
{
    for (struct disk_seen *x = d->seen; x; x = x->next)
        x->seen = false;
    size_t n = 0;
    for (struct session *s = d->eng->sessions; s; s = s->next) {
        struct disk_seen *x = disk_seen_find(d, s->id, false);
        if (x)
            x->seen = true;
        n += disk_writing(s);
    }
    struct disk_seen **pick = n > DISK_SWEEP_MAX ? calloc(n, sizeof(*pick)) : NULL;
    size_t k = 0;
    for (struct session *s = d->eng->sessions; s; s = s->next) {
        if (!disk_writing(s))
            continue;
        struct disk_seen *x = pick ? disk_seen_find(d, s->id, true) : NULL;
        if (x && k < n) {
            x->seen = true;
            pick[k++] = x;
        } else {
            disk_watch_soon(d->eng, s->id); /* few sessions (or no memory): every one */
        }
    }
    if (pick) {
        qsort(pick, k, sizeof(*pick), disk_by_last);
        for (size_t i = 0; i < k && i < DISK_SWEEP_MAX; i++)
            disk_watch_soon(d->eng, pick[i]->id);
        free(pick);
    }
    for (struct disk_seen **p = &d->seen; *p;) {
        struct disk_seen *x = *p;
        if (!x->seen && !x->queued && !x->soon && x != d->cur && !session_find(d->eng, x->id)) {
            *p = x->next;
            disk_seen_free(x);
        } else {
            p = &x->next;
        }
    }
}

static void disk_on_interval(void *ud)
{
    struct disk *d = ud;
    d->interval = loop_timer_add(d->eng->loop, DISK_INTERVAL_MS, disk_on_interval, d);
    disk_sweep(d);
}

static long long disk_fs_free(const char *path)
{
    struct statvfs v;
    if (!path || statvfs(path, &v) < 0)
        return -1;
    return (long long)v.f_bavail * (long long)v.f_frsize;
}

/* The state dir's free space, read now; what the floor's check may reuse. */
static long long disk_state_free(struct disk *d)
{
    d->state_free = disk_fs_free(d->eng->state_dir);
    d->state_free_ms = loop_now_ms();
    return d->state_free;
}

/* Once a second, one statvfs per filesystem: whatever fills one (a write, an fallocate, with
 * or without CPU) starts a sweep once DISK_FS_DROP went since the last. */
static void disk_on_fs(void *ud)
{
    struct disk *d = ud;
    d->fs_timer = loop_timer_add(d->eng->loop, DISK_FS_MS, disk_on_fs, d);
    const char *paths[2] = {d->eng->state_dir, d->docker_root};
    bool sweep = false;
    long long now[2];
    for (int i = 0; i < 2; i++) {
        now[i] = i == 0 ? disk_state_free(d) : disk_fs_free(paths[i]);
        if (now[i] >= 0 && d->fs_base[i] >= 0 && d->fs_base[i] - now[i] >= DISK_FS_DROP)
            sweep = true;
        if (now[i] > d->fs_base[i])
            d->fs_base[i] = now[i]; /* space freed: measure drops from here */
    }
    if (!sweep)
        return;
    d->fs_base[0] = now[0];
    d->fs_base[1] = now[1];
    disk_sweep(d);
}

static void disk_on_info(const struct sandbox_reply *r, void *ud)
{
    struct disk *d = ((struct engine *)ud)->disk; /* NULL when the engine stopped meanwhile */
    if (!d)
        return;
    const char *root = json_string_value(json_object_get(r->json, "DockerRootDir"));
    if (r->status == 200 && root && root[0] == '/' && !d->docker_root) {
        d->docker_root = strdup(root);
        d->fs_base[1] = disk_fs_free(d->docker_root);
    }
}

static void disk_on_soon(void *ud)
{
    struct disk_seen *x = ud;
    x->soon = NULL;
    disk_enqueue(x->d, x->id);
    disk_next(x->d);
}

void disk_watch_soon(struct engine *eng, const char *session_id)
{
    struct disk *d = eng->disk;
    if (!d || eng->bench_off & ENGINE_BENCH_NO_DISK_WATCH)
        return;
    struct disk_seen *x = disk_seen_find(d, session_id, true);
    if (!x || x->queued || x->soon)
        return;
    double wait = x->last_ms + DISK_GAP_MS - loop_now_ms();
    x->soon =
        loop_timer_add(eng->loop, wait > DISK_SOON_MS ? (long)wait : DISK_SOON_MS, disk_on_soon, x);
}

struct disk *disk_new(struct engine *eng, long long limit, long long floor)
{
    struct disk *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->eng = eng;
    d->limit = limit > 0 ? limit : DISK_LIMIT_DEFAULT;
    d->floor = floor < 0 ? 0 : floor > 0 ? floor : DISK_FLOOR_DEFAULT;
    if (eng->bench_off & ENGINE_BENCH_NO_DISK_WATCH)
        return d; /* the floor still holds */
    d->fs_base[0] = disk_state_free(d);
    d->fs_base[1] = -1;
    d->interval = loop_timer_add(eng->loop, DISK_INTERVAL_MS, disk_on_interval, d);
    d->fs_timer = loop_timer_add(eng->loop, DISK_FS_MS, disk_on_fs, d);
    if (!d->interval || !d->fs_timer) {
        disk_free(d);
        return NULL;
    }
    /* Where Docker keeps layers and volumes; without an answer the state dir's filesystem
     * and the other triggers remain. */
    eng->driver->info(eng, disk_on_info, eng);
    return d;
}

void disk_free(struct disk *d)
{
    if (!d)
        return;
    if (d->interval)
        loop_timer_cancel(d->eng->loop, d->interval);
    if (d->fs_timer)
        loop_timer_cancel(d->eng->loop, d->fs_timer);
    free(d->docker_root);
    if (d->slice)
        loop_timer_cancel(d->eng->loop, d->slice);
    disk_walk_free(d->walk);
    while (d->seen) {
        struct disk_seen *x = d->seen;
        d->seen = x->next;
        disk_seen_free(x);
    }
    free(d->queue);
    free(d);
}

/* ---- the floor ---- */

int disk_floor_check(struct engine *eng, const char *what, char *msg, size_t n)
{
    struct disk *d = eng->disk;
    if (!d || d->floor == 0)
        return 0;
    bool recent = d->state_free_ms > 0 && loop_now_ms() - d->state_free_ms < DISK_FLOOR_MS;
    long long avail =
        recent && d->state_free - DISK_FS_DROP > d->floor ? d->state_free : disk_state_free(d);
    if (avail < 0 || avail >= d->floor)
        return 0;
    char a[32], f[32];
    snprintf(msg, n,
             "%s: the filesystem of the state directory %s has %s free, below the engine's "
             "floor of %s (disk_floor); free space there (delete sessions you no longer need: "
             "paddock rm, then paddock gc; or remove other files on that filesystem), or lower "
             "the floor in the config file",
             what, eng->state_dir, size_format(avail, a, sizeof(a)),
             size_format(d->floor, f, sizeof(f)));
    return -1;
}

/* ---- the operator's side ---- */

enum err_code disk_limit_set(struct engine *eng, const char *session_id, json_t *body, char *msg,
                             size_t n)
{
    json_t *v = json_object_get(body, "disk");
    if (!json_is_object(body) || !v || json_object_size(body) != 1) {
        snprintf(msg, n, "the body is {\"disk\": SIZE} (bytes, or a size such as \"20g\")");
        return ERR_BAD_REQUEST;
    }
    long long b = json_is_integer(v) ? json_integer_value(v) : size_parse(json_string_value(v));
    if (b < DISK_LIMIT_MIN) {
        snprintf(msg, n,
                 "\"disk\" must be bytes (an integer) or a size string such as \"20g\", "
                 "at least 64m");
        return ERR_BAD_REQUEST;
    }
    json_t *cfg = store_session_config(eng->store, session_id);
    json_t *opts = json_object_get(cfg, "options");
    if (!json_is_object(opts)) {
        opts = json_object();
        json_object_set_new(cfg, "options", opts);
    }
    json_t *limits = json_object_get(opts, "limits");
    if (!json_is_object(limits)) {
        limits = json_object();
        json_object_set_new(opts, "limits", limits);
    }
    json_object_set_new(limits, "disk", json_integer(b));
    char *err = NULL;
    int rc = store_session_config_set(eng->store, session_id, "options", opts, &err);
    json_decref(cfg);
    if (rc < 0) {
        enum err_code e = session_store_error(eng);
        snprintf(msg, n, "cannot record the new limit: %s", err ? err : "store failed");
        free(err);
        return e;
    }
    disk_watch_soon(eng, session_id);
    return ERR_NONE;
}

json_t *disk_session_json(struct engine *eng, const char *session_id)
{
    struct disk *d = eng->disk;
    struct disk_seen *x = d ? disk_seen_find(d, session_id, false) : NULL;
    if (!x || x->at == 0)
        return NULL;
    json_t *j = json_pack("{s:I,s:I,s:f}", "used", (json_int_t)x->used, "limit",
                          (json_int_t)disk_limit_of(d, session_id), "at", x->at);
    if (j && x->error)
        json_object_set_new(j, "error", json_string(x->error));
    return j;
}

json_t *disk_info_json(struct engine *eng)
{
    struct disk *d = eng->disk;
    if (!d)
        return json_null();
    return json_pack("{s:I,s:I,s:I,s:i,s:I,s:f,s:f,s:I}", "limit_default", (json_int_t)d->limit,
                     "floor", (json_int_t)d->floor, "free", (json_int_t)disk_state_free(d),
                     "interval_ms", DISK_INTERVAL_MS, "passes", (json_int_t)d->passes, "last_ms",
                     d->last_ms, "last_busy_ms", d->last_busy_ms, "last_entries",
                     (json_int_t)d->last_entries);
}
