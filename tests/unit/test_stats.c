/* Resource samples as `docker stats` computes them, and the samples and log-tail tables on a
 * real SQLite file. */
#include "engine/stats.h"
#include "engine/store/store.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_compute_like_docker_stats),
        cmocka_unit_test(test_store_samples_and_downsample),
        cmocka_unit_test(test_store_log_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
