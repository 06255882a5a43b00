/* A Docker stats stream per sampled session, up to STATS_STREAMS_MAX at once; samples are
 * buffered and written to the store every few seconds in one transaction, and published as
 * events as they arrive.
 *
 * A stream is a connection to the daemon and a collector inside it, one JSON object a second:
 * hundreds of them load the daemon and the engine for graphs nobody looks at. Past the cap the
 * sessions take turns: a stream that delivered a sample with a CPU figure (its second) gives
 * way to the session sampled longest ago, so each is sampled every few tens of seconds; one
 * whose samples the API was asked for in the last minute (a dashboard's stats tab) keeps its
 * stream. Under the cap every session streams, as before. */
#include "engine/stats.h"

#include "engine/base/loop.h"
#include "engine/base/util.h"
#include "engine/disk.h"
#include "engine/driver.h"
#include "engine/driver_local.h"
#include "engine/engine_internal.h"
#include "engine/events.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STATS_FLUSH_MS 5000
#define STATS_DOWNSAMPLE_MS (10 * 60 * 1000)
#define STATS_FULL_RESOLUTION_S 3600.0 /* per-second rows are kept for an hour */
#define STATS_BUCKET_S 60.0            /* then one row a minute */
#define STATS_PENDING_MAX 64
#define STATS_STREAMS_MAX 48
#define STATS_ROTATE_MS 1000
#define STATS_ASKED_MS 60000.0 /* looked at this recently: keeps its stream */

struct stats_watch {
    struct stats_watch *next;
    struct stats *st;
    char *session_id;
    char *container_id;
    struct sandbox_stream *stream; /* NULL: waiting for its turn */
    int got;                       /* samples with a CPU figure from this stream */
    double sampled_ms, asked_ms;   /* last such sample; last time the API asked (loop clock) */
    struct store_sample pending[STATS_PENDING_MAX];
    size_t npending;
};

struct stats {
    struct engine *eng;
    struct stats_watch *watches;
    int nstreams;
    struct loop_timer *flush_timer, *downsample_timer, *rotate_timer;
};

static int64_t stats_int(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* Counters summed over interfaces and devices (both >= 0) stop at INT64_MAX: what Docker
 * sends is not checked, and a signed sum must not wrap. */
static int64_t stats_add(int64_t a, int64_t b)
{
    return b > INT64_MAX - a ? INT64_MAX : a + b;
}

int stats_compute(json_t *j, struct store_sample *out)
{
    memset(out, 0, sizeof(*out));
    out->cpu = -1;
    out->span = 1;
    if (!json_is_object(j))
        return -1;
    json_t *cpu = json_object_get(j, "cpu_stats"), *pre = json_object_get(j, "precpu_stats");
    int64_t total = stats_int(json_object_get(cpu, "cpu_usage"), "total_usage");
    int64_t pre_total = stats_int(json_object_get(pre, "cpu_usage"), "total_usage");
    int64_t sys = stats_int(cpu, "system_cpu_usage"), pre_sys = stats_int(pre, "system_cpu_usage");
    int64_t online = stats_int(cpu, "online_cpus");
    if (online <= 0) {
        json_t *per = json_object_get(json_object_get(cpu, "cpu_usage"), "percpu_usage");
        online = json_is_array(per) && json_array_size(per) ? (int64_t)json_array_size(per) : 1;
    }
    if (total >= 0 && pre_total >= 0 && sys > 0 && pre_sys > 0 && sys > pre_sys &&
        total >= pre_total)
        out->cpu = (double)(total - pre_total) / (double)(sys - pre_sys) * (double)online * 100.0;

    json_t *mem = json_object_get(j, "memory_stats");
    int64_t usage = stats_int(mem, "usage");
    out->mem_limit = stats_int(mem, "limit");
    out->mem = usage;
    if (usage >= 0) {
        /* What `docker stats` subtracts: page cache that can be dropped (cgroup v1 names it
         * total_inactive_file, v2 inactive_file). */
        json_t *ms = json_object_get(mem, "stats");
        int64_t inactive = stats_int(ms, "total_inactive_file");
        if (inactive < 0)
            inactive = stats_int(ms, "inactive_file");
        if (inactive >= 0 && inactive < usage)
            out->mem = usage - inactive;
    }
    out->pids = stats_int(json_object_get(j, "pids_stats"), "current");

    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(j, "networks"), k, v)
    {
        int64_t rx = stats_int(v, "rx_bytes"), tx = stats_int(v, "tx_bytes");
        out->net_rx = stats_add(out->net_rx, rx > 0 ? rx : 0);
        out->net_tx = stats_add(out->net_tx, tx > 0 ? tx : 0);
    }
    size_t i;
    json_array_foreach(
        json_object_get(json_object_get(j, "blkio_stats"), "io_service_bytes_recursive"), i, v)
    {
        const char *op = json_string_value(json_object_get(v, "op"));
        int64_t n = stats_int(v, "value");
        if (!op || n < 0)
            continue;
        if (strcasecmp(op, "read") == 0)
            out->blk_read = stats_add(out->blk_read, n);
        else if (strcasecmp(op, "write") == 0)
            out->blk_write = stats_add(out->blk_write, n);
    }
    if (usage < 0 && total < 0)
        return -1;
    out->at = util_now();
    return 0;
}

json_t *stats_sample_json(const struct store_sample *v)
{
    json_t *o = json_object();
    json_object_set_new(o, "at", json_real(v->at));
    json_object_set_new(o, "span", json_real(v->span));
    json_object_set_new(o, "cpu", v->cpu < 0 ? json_null() : json_real(v->cpu));
    const struct {
        const char *name;
        int64_t value;
    } counts[] = {{"mem", v->mem},
                  {"mem_limit", v->mem_limit},
                  {"pids", v->pids},
                  {"net_rx", v->net_rx},
                  {"net_tx", v->net_tx},
                  {"blk_read", v->blk_read},
                  {"blk_write", v->blk_write}};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        json_object_set_new(o, counts[i].name,
                            counts[i].value < 0 ? json_null() : json_integer(counts[i].value));
    return o;
}

static void stats_flush_watch(struct stats_watch *w)
{
    if (w->npending == 0)
        return;
    store_samples_add(w->st->eng->store, w->session_id, w->pending, w->npending, NULL);
    w->npending = 0;
}

static void stats_on_flush(void *ud)
{
    struct stats *st = ud;
    for (struct stats_watch *w = st->watches; w; w = w->next)
        stats_flush_watch(w);
    st->flush_timer = loop_timer_add(st->eng->loop, STATS_FLUSH_MS, stats_on_flush, st);
}

static void stats_on_downsample(void *ud)
{
    struct stats *st = ud;
    store_samples_downsample(st->eng->store, util_now() - STATS_FULL_RESOLUTION_S, STATS_BUCKET_S);
    st->downsample_timer =
        loop_timer_add(st->eng->loop, STATS_DOWNSAMPLE_MS, stats_on_downsample, st);
}

static int stats_on_item(const struct sandbox_item *it, void *ud)
{
    struct stats_watch *w = ud;
    struct store_sample v;
    if (stats_compute(it->json, &v) < 0)
        return 0;
    if (w->npending == STATS_PENDING_MAX)
        stats_flush_watch(w);
    w->pending[w->npending++] = v;
    if (v.cpu >= 0) {
        w->got++;
        w->sampled_ms = loop_now_ms();
    }
    /* A sandbox at work may be writing: the disk watchdog measures it soon. */
    if (v.cpu >= DISK_BUSY_CPU)
        disk_watch_soon(w->st->eng, w->session_id);
    json_t *ev = stats_sample_json(&v);
    json_object_set_new(ev, "session", json_string(w->session_id));
    events_publish(w->st->eng->events, "stats", ev);
    json_decref(ev);
    return 0;
}

static void stats_watch_free(struct stats_watch *w)
{
    stats_flush_watch(w);
    free(w->session_id);
    free(w->container_id);
    free(w);
}

static void stats_unlink(struct stats *st, struct stats_watch *w)
{
    for (struct stats_watch **pp = &st->watches; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            return;
        }
}

/* The stream ended by itself (container gone, daemon gone): the next state change that says
 * the container runs starts a new one. */
static void stats_on_end(const struct sandbox_reply *r, void *ud)
{
    struct stats_watch *w = ud;
    (void)r;
    w->stream = NULL;
    w->st->nstreams--;
    stats_unlink(w->st, w);
    stats_watch_free(w);
}

static struct stats_watch *stats_find(struct stats *st, const char *session_id)
{
    for (struct stats_watch *w = st->watches; w; w = w->next)
        if (strcmp(w->session_id, session_id) == 0)
            return w;
    return NULL;
}

static bool stats_state_samples(enum session_st state)
{
    switch (state) {
    case SESSION_STARTED:
    case SESSION_READY:
    case SESSION_PAUSED:
    case SESSION_DISCONNECTED:
        return true;
    case SESSION_BUILDING:
    case SESSION_STARTING:
    case SESSION_STOPPED:
    case SESSION_ERROR:
    case SESSION_OOM_KILLED:
    case SESSION_DELETED:
    case SESSION_ST_COUNT:
        return false;
    }
    return false;
}

static void stats_close(struct stats *st, struct stats_watch *w)
{
    if (!w->stream)
        return;
    local_driver_for(st->eng, w->container_id)->stream_close(st->eng, w->stream);
    w->stream = NULL;
    st->nstreams--;
}

static int stats_open(struct stats *st, struct stats_watch *w)
{
    w->got = 0;
    w->stream = local_driver_for(st->eng, w->container_id)
                    ->stats_follow(st->eng, w->container_id, stats_on_item, stats_on_end, w);
    if (!w->stream)
        return -1;
    st->nstreams++;
    return 0;
}

/* Past the cap: streams that delivered give way to the sessions waiting longest. */
static void stats_on_rotate(void *ud)
{
    struct stats *st = ud;
    double now = loop_now_ms();
    int waiting = 0;
    for (struct stats_watch *w = st->watches; w; w = w->next)
        waiting += !w->stream;
    for (struct stats_watch *w = st->watches; w && waiting > 0; w = w->next)
        if (w->stream && w->got >= 1 && now - w->asked_ms > STATS_ASKED_MS) {
            stats_close(st, w);
            stats_flush_watch(w);
            waiting--;
        }
    while (st->nstreams < STATS_STREAMS_MAX) {
        struct stats_watch *next = NULL;
        for (struct stats_watch *w = st->watches; w; w = w->next)
            if (!w->stream && (!next || w->sampled_ms < next->sampled_ms))
                next = w;
        if (!next || stats_open(st, next) < 0)
            break;
        next->sampled_ms = now; /* its turn came: the others go first next time */
    }
    st->rotate_timer = loop_timer_add(st->eng->loop, STATS_ROTATE_MS, stats_on_rotate, st);
}

void stats_on_state(struct stats *st, const char *session_id, const char *container_id,
                    enum session_st state)
{
    if (!st)
        return;
    struct stats_watch *w = stats_find(st, session_id);
    bool want = container_id && stats_state_samples(state);
    if (!want) {
        if (w) {
            stats_unlink(st, w);
            stats_close(st, w);
            stats_watch_free(w);
        }
        return;
    }
    if (w && strcmp(w->container_id, container_id) == 0)
        return;
    if (w) { /* a new container for the session (resumed from stopped) */
        stats_unlink(st, w);
        stats_close(st, w);
        stats_watch_free(w);
    }
    w = calloc(1, sizeof(*w));
    if (!w)
        return;
    w->st = st;
    w->session_id = strdup(session_id);
    w->container_id = strdup(container_id);
    if (!w->session_id || !w->container_id) {
        stats_watch_free(w);
        return;
    }
    /* Under the cap at once; past it, when its turn comes (stats_on_rotate). */
    if (st->nstreams < STATS_STREAMS_MAX && stats_open(st, w) < 0) {
        stats_watch_free(w);
        return;
    }
    w->next = st->watches;
    st->watches = w;
}

void stats_flush(struct stats *st, const char *session_id)
{
    struct stats_watch *w = st ? stats_find(st, session_id) : NULL;
    if (!w)
        return;
    stats_flush_watch(w);
    w->asked_ms = loop_now_ms();
    /* Looked at while waiting for its turn: it streams now, past the cap if need be (the
     * next rotation gives the excess back). */
    if (!w->stream && stats_open(st, w) == 0)
        w->sampled_ms = w->asked_ms;
}

struct stats *stats_new(struct engine *eng)
{
    struct stats *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->eng = eng;
    st->flush_timer = loop_timer_add(eng->loop, STATS_FLUSH_MS, stats_on_flush, st);
    /* Old sessions' graphs shrink soon after start, then every ten minutes. */
    st->downsample_timer = loop_timer_add(eng->loop, 1000, stats_on_downsample, st);
    st->rotate_timer = loop_timer_add(eng->loop, STATS_ROTATE_MS, stats_on_rotate, st);
    return st;
}

void stats_free(struct stats *st)
{
    if (!st)
        return;
    while (st->watches) {
        struct stats_watch *w = st->watches;
        st->watches = w->next;
        stats_close(st, w);
        stats_watch_free(w);
    }
    if (st->rotate_timer)
        loop_timer_cancel(st->eng->loop, st->rotate_timer);
    if (st->flush_timer)
        loop_timer_cancel(st->eng->loop, st->flush_timer);
    if (st->downsample_timer)
        loop_timer_cancel(st->eng->loop, st->downsample_timer);
    free(st);
}
