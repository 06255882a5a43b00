/* Resource samples as `docker stats` computes them, and the samples and log-tail tables on a
 * real SQLite file. */
#include "engine/base/loop.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/stats.h"
#include "engine/store/store.h"

#include <stdbool.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

/* cgroup v2 (Debian 12's default): online_cpus, inactive_file, lower-case blkio ops. */
static const char stats_v2[] =
    "{\"pids_stats\":{\"current\":7},"
    "\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":3000000000},\"system_cpu_usage\":12000000000,"
    "\"online_cpus\":2},"
    "\"precpu_stats\":{\"cpu_usage\":{\"total_usage\":2000000000},"
    "\"system_cpu_usage\":10000000000},"
    "\"memory_stats\":{\"usage\":50000000,\"stats\":{\"inactive_file\":10000000},"
    "\"limit\":2147483648},"
    "\"networks\":{\"eth0\":{\"rx_bytes\":100,\"tx_bytes\":50},"
    "\"eth1\":{\"rx_bytes\":1,\"tx_bytes\":2}},"
    "\"blkio_stats\":{\"io_service_bytes_recursive\":[{\"op\":\"read\",\"value\":4096},"
    "{\"op\":\"write\",\"value\":8192},{\"op\":\"read\",\"value\":1}]}}";

/* cgroup v1: no online_cpus (count percpu_usage), total_inactive_file, capitalised ops. */
static const char stats_v1[] =
    "{\"pids_stats\":{\"current\":1},"
    "\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":500,\"percpu_usage\":[1,2,3,4]},"
    "\"system_cpu_usage\":2000},"
    "\"precpu_stats\":{\"cpu_usage\":{\"total_usage\":400},\"system_cpu_usage\":1000},"
    "\"memory_stats\":{\"usage\":1000,\"stats\":{\"total_inactive_file\":400,"
    "\"inactive_file\":1},\"limit\":4000},"
    "\"blkio_stats\":{\"io_service_bytes_recursive\":[{\"op\":\"Read\",\"value\":10},"
    "{\"op\":\"Write\",\"value\":20},{\"op\":\"Total\",\"value\":30}]}}";

/* The first object of a stream: precpu is empty, so no CPU figure yet. */
static const char stats_first[] =
    "{\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":5},\"system_cpu_usage\":9,"
    "\"online_cpus\":2},\"precpu_stats\":{\"cpu_usage\":{\"total_usage\":0}},"
    "\"memory_stats\":{\"usage\":123}}";

static json_t *load(const char *s)
{
    json_t *j = json_loads(s, 0, NULL);
    assert_non_null(j);
    return j;
}

static void test_stats_compute_like_docker_stats(void **state)
{
    struct store_sample v;
    json_t *j = load(stats_v2);
    assert_int_equal(stats_compute(j, &v), 0);
    /* (3e9-2e9) / (12e9-10e9) * 2 CPUs * 100 */
    assert_true(fabs(v.cpu - 100.0) < 1e-9);
    assert_int_equal(v.mem, 40000000); /* usage minus inactive_file */
    assert_int_equal(v.mem_limit, 2147483648LL);
    assert_int_equal(v.pids, 7);
    assert_int_equal(v.net_rx, 101);
    assert_int_equal(v.net_tx, 52);
    assert_int_equal(v.blk_read, 4097);
    assert_int_equal(v.blk_write, 8192);
    assert_true(v.at > 1e9);
    json_decref(j);

    j = load(stats_v1);
    assert_int_equal(stats_compute(j, &v), 0);
    assert_true(fabs(v.cpu - 40.0) < 1e-9); /* 100/1000 * 4 * 100 */
    assert_int_equal(v.mem, 600);           /* total_inactive_file wins on v1 */
    assert_int_equal(v.net_rx, 0);          /* --network none: no interfaces, as docker shows */
    assert_int_equal(v.blk_read, 10);
    assert_int_equal(v.blk_write, 20);
    json_decref(j);

    j = load(stats_first);
    assert_int_equal(stats_compute(j, &v), 0);
    assert_true(v.cpu < 0);
    assert_int_equal(v.mem, 123);
    json_t *o = stats_sample_json(&v);
    assert_true(json_is_null(json_object_get(o, "cpu")));
    assert_int_equal(json_integer_value(json_object_get(o, "mem")), 123);
    json_decref(o);
    json_decref(j);

    j = load("{\"message\":\"not stats\"}");
    assert_int_equal(stats_compute(j, &v), -1);
    json_decref(j);
    assert_int_equal(stats_compute(NULL, &v), -1);
}

static char dbpath[64];

static struct store *open_store(void)
{
    snprintf(dbpath, sizeof(dbpath), "/tmp/paddock-stats-test-%d.db", (int)getpid());
    char *err = NULL;
    struct store *s = store_open(dbpath, &err);
    if (!s)
        fail_msg("store_open: %s", err);
    return s;
}

static void remove_store(void)
{
    char p[96];
    unlink(dbpath);
    snprintf(p, sizeof(p), "%s-wal", dbpath);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", dbpath);
    unlink(p);
}

static void test_store_samples_and_downsample(void **state)
{
    struct store *s = open_store();
    struct store_sample v[180];
    for (int i = 0; i < 180; i++) {
        /* Three minutes of one sample a second, starting on a minute boundary. */
        v[i] = (struct store_sample){.at = 6000.0 + i,
                                     .span = 1,
                                     .cpu = i < 60 ? 10.0 : 30.0,
                                     .mem = 1000 + i,
                                     .mem_limit = 4096,
                                     .pids = i % 7,
                                     .net_rx = i,
                                     .net_tx = -1,
                                     .blk_read = 0,
                                     .blk_write = 0};
    }
    assert_int_equal(store_samples_add(s, "sess1", v, 180, NULL), 0);
    assert_int_equal(store_samples_add(s, "other", v, 3, NULL), 0);
    json_t *all = store_samples_list(s, "sess1", 0, 0);
    assert_int_equal(json_array_size(all), 180);
    json_t *first = json_array_get(all, 0);
    assert_true(json_real_value(json_object_get(first, "at")) == 6000.0);
    assert_true(json_is_null(json_object_get(first, "net_tx"))); /* unknown stays unknown */
    json_decref(all);
    /* limit gives the newest, oldest first */
    json_t *last = store_samples_list(s, "sess1", 0, 10);
    assert_int_equal(json_array_size(last), 10);
    assert_true(json_real_value(json_object_get(json_array_get(last, 0), "at")) == 6170.0);
    json_decref(last);

    /* Everything before 6120 collapses to one row a minute; the last minute is untouched. */
    int removed = store_samples_downsample(s, 6120.0, 60.0);
    assert_int_equal(removed, 120 + 3);
    json_t *after = store_samples_list(s, "sess1", 0, 0);
    assert_int_equal(json_array_size(after), 2 + 60);
    json_t *m0 = json_array_get(after, 0);
    assert_true(json_real_value(json_object_get(m0, "span")) == 60.0);
    assert_true(fabs(json_real_value(json_object_get(m0, "cpu")) - 10.0) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(m0, "pids")), 6); /* the maximum */
    json_t *m1 = json_array_get(after, 1);
    assert_true(fabs(json_real_value(json_object_get(m1, "cpu")) - 30.0) < 1e-9);
    json_decref(after);
    /* Running it again changes nothing. */
    assert_int_equal(store_samples_downsample(s, 6120.0, 60.0), 0);
    store_close(s);
    remove_store();
}

static void test_store_log_tail(void **state)
{
    struct store *s = open_store();
    assert_null(store_log_tail_get(s, "sess1"));
    assert_int_equal(store_log_tail_set(s, "sess1", "one\ntwo\n", 8, 100, 5.0, NULL), 0);
    assert_int_equal(store_log_tail_set(s, "sess1", "three\n", 6, 200, 6.0, NULL), 0);
    json_t *t = store_log_tail_get(s, "sess1");
    assert_non_null(t);
    assert_string_equal(json_string_value(json_object_get(t, "text")), "three\n");
    assert_int_equal(json_integer_value(json_object_get(t, "size")), 200);
    json_decref(t);
    store_close(s);
    /* It is on disk: a new handle sees it. */
    s = open_store();
    t = store_log_tail_get(s, "sess1");
    assert_non_null(t);
    json_decref(t);
    store_close(s);
    remove_store();
}

/* ---- the cap on stats streams: a fake driver that only counts them ---- */

#define TURNS_SESSIONS 60
#define TURNS_CAP 48 /* STATS_STREAMS_MAX */

struct fake_stream {
    bool open;
    char session[8];
    sandbox_item_fn on_item;
    void *ud;
};
static struct fake_stream fake_streams[TURNS_SESSIONS * 8];
static int fake_nstreams;

static struct sandbox_stream *fake_stats_follow(struct engine *eng, const char *id,
                                                sandbox_item_fn on_item, sandbox_done_fn on_end,
                                                void *ud)
{
    assert_true(fake_nstreams < (int)(sizeof(fake_streams) / sizeof(fake_streams[0])));
    struct fake_stream *f = &fake_streams[fake_nstreams++];
    f->open = true;
    snprintf(f->session, sizeof(f->session), "s%s", id + 1); /* container cNN: session sNN */
    f->on_item = on_item;
    f->ud = ud;
    return (struct sandbox_stream *)f;
}

static void fake_stream_close(struct engine *eng, struct sandbox_stream *s)
{
    ((struct fake_stream *)s)->open = false;
}

static const struct sandbox_driver fake_stats_driver = {
    .stats_follow = fake_stats_follow,
    .stream_close = fake_stream_close,
};

static int streams_open(void)
{
    int n = 0;
    for (int i = 0; i < fake_nstreams; i++)
        n += fake_streams[i].open;
    return n;
}

static bool streaming(const char *session)
{
    for (int i = 0; i < fake_nstreams; i++)
        if (fake_streams[i].open && strcmp(fake_streams[i].session, session) == 0)
            return true;
    return false;
}

/* One sample with a (tiny) CPU figure on every open stream. */
static void deliver_all(void)
{
    static const char sample[] =
        "{\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":2000000001},"
        "\"system_cpu_usage\":12000000000,\"online_cpus\":2},"
        "\"precpu_stats\":{\"cpu_usage\":{\"total_usage\":2000000000},"
        "\"system_cpu_usage\":10000000000},\"memory_stats\":{\"usage\":1000}}";
    json_t *j = json_loads(sample, 0, NULL);
    struct sandbox_item it = {.json = j};
    for (int i = 0; i < fake_nstreams; i++)
        if (fake_streams[i].open)
            assert_int_equal(fake_streams[i].on_item(&it, fake_streams[i].ud), 0);
    json_decref(j);
}

static void on_stop_timer(void *ud)
{
    loop_stop(ud);
}

/* Until the next rotation (once a second) has run. */
static void run_one_rotation(struct loop *l)
{
    loop_timer_add(l, 1100, on_stop_timer, l);
    loop_run(l);
}

static void test_streams_take_turns(void **state)
{
    struct engine eng = {0};
    eng.loop = loop_new();
    eng.driver = &fake_stats_driver;
    eng.store = open_store();
    fake_nstreams = 0;
    struct stats *st = stats_new(&eng);
    char sid[8], cid[8];
    for (int i = 0; i < TURNS_SESSIONS; i++) {
        snprintf(sid, sizeof(sid), "s%02d", i);
        snprintf(cid, sizeof(cid), "c%02d", i);
        stats_on_state(st, sid, cid, SESSION_READY);
    }
    /* Up to the cap at once; the others wait. */
    assert_int_equal(streams_open(), TURNS_CAP);
    assert_false(streaming("s00") && streaming("s59") && streaming("s30"));
    int waiting_before = 0;
    for (int i = 0; i < TURNS_SESSIONS; i++) {
        snprintf(sid, sizeof(sid), "s%02d", i);
        waiting_before += !streaming(sid);
    }
    assert_int_equal(waiting_before, TURNS_SESSIONS - TURNS_CAP);

    /* Those that delivered give way: after a rotation every waiting one streams. */
    char waiting[TURNS_SESSIONS][8];
    int nw = 0;
    for (int i = 0; i < TURNS_SESSIONS; i++) {
        snprintf(sid, sizeof(sid), "s%02d", i);
        if (!streaming(sid))
            snprintf(waiting[nw++], 8, "%s", sid);
    }
    deliver_all();
    run_one_rotation(eng.loop);
    assert_int_equal(streams_open(), TURNS_CAP);
    for (int i = 0; i < nw; i++)
        if (!streaming(waiting[i]))
            fail_msg("%s still waits after a rotation", waiting[i]);

    /* A session looked at (its samples asked for) streams at once, past the cap, and keeps
     * its stream through the next rotations. */
    const char *looked = NULL;
    for (int i = 0; i < TURNS_SESSIONS && !looked; i++) {
        snprintf(sid, sizeof(sid), "s%02d", i);
        if (!streaming(sid))
            looked = strdup(sid);
    }
    assert_non_null(looked);
    stats_flush(st, looked);
    assert_true(streaming(looked));
    assert_int_equal(streams_open(), TURNS_CAP + 1);
    for (int r = 0; r < 3; r++) {
        deliver_all();
        run_one_rotation(eng.loop);
        assert_true(streaming(looked));
    }
    /* The excess was given back. */
    assert_true(streams_open() <= TURNS_CAP + 1);

    /* A session that stops closes its stream; its place goes to one that waits. */
    stats_on_state(st, looked, NULL, SESSION_STOPPED);
    assert_false(streaming(looked));
    free((void *)looked);
    stats_free(st);
    assert_int_equal(streams_open(), 0);
    store_close(eng.store);
    remove_store();
    loop_free(eng.loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_compute_like_docker_stats),
        cmocka_unit_test(test_store_samples_and_downsample),
        cmocka_unit_test(test_store_log_tail),
        cmocka_unit_test(test_streams_take_turns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
