/* Resource samples (ui/samples.c): parsing, the history ring, graph series and rates, the
 * sparkline ring and its seeding, docker stats' number formats; and the model feeding the
 * sessions' sparklines from `stats` events and fetched history (ui/model.c). */
#include "ui/model.h"
#include "ui/samples.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *samples_test_json(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    assert_non_null(j);
    return j;
}

static struct sample samples_test_at(double at, double cpu, double mem, double rx)
{
    return (struct sample){.at = at,
                           .span = 1,
                           .cpu = cpu,
                           .mem = mem,
                           .mem_limit = 1024,
                           .pids = 1,
                           .net_rx = rx,
                           .net_tx = 0,
                           .blk_read = 0,
                           .blk_write = 0};
}

static void test_parse(void **state)
{
    (void)state;
    struct sample s;
    json_t *j = samples_test_json(
        "{\"at\": 100.5, \"span\": 1.0, \"cpu\": null, \"mem\": 1069056, \"mem_limit\": "
        "268435456, \"pids\": 3, \"net_rx\": 10, \"net_tx\": 20, \"blk_read\": 0, \"blk_write\": "
        "-1, \"session\": \"abc\"}");
    assert_true(sample_parse(j, &s));
    assert_true(s.at == 100.5);
    assert_true(isnan(s.cpu)); /* a stream's first sample has no CPU figure */
    assert_true(s.mem == 1069056);
    assert_true(s.pids == 3);
    assert_true(isnan(s.blk_write)); /* negative: not a measurement */
    json_decref(j);
    /* no time: not a sample; span missing: one second */
    j = samples_test_json("{\"cpu\": 5}");
    assert_false(sample_parse(j, &s));
    json_decref(j);
    j = samples_test_json("{\"at\": 7}");
    assert_true(sample_parse(j, &s));
    assert_true(s.span == 1);
    json_decref(j);
    j = samples_test_json("[1]");
    assert_false(sample_parse(j, &s));
    json_decref(j);
}

static void test_rates(void **state)
{
    (void)state;
    struct sample a = samples_test_at(10, 1, 1, 1000), b = samples_test_at(12, 2, 2, 5000);
    assert_true(sample_value(&b, &a, SAMPLE_NET_RX) == 2000); /* 4000 bytes over 2 s */
    assert_true(sample_value(&b, &a, SAMPLE_CPU) == 2);       /* a gauge: as is */
    assert_true(isnan(sample_value(&b, NULL, SAMPLE_NET_RX)));
    /* the counter went down: the container started again, no rate */
    struct sample c = samples_test_at(13, 0, 0, 10);
    assert_true(isnan(sample_value(&c, &b, SAMPLE_NET_RX)));
}

static void test_ring(void **state)
{
    (void)state;
    struct samples h;
    assert_int_equal(samples_init(&h, 3), 0);
    assert_null(samples_last(&h));
    for (int i = 1; i <= 5; i++) {
        struct sample x = samples_test_at(i, i * 10, 0, 0);
        assert_true(samples_push(&h, &x));
    }
    /* the newest three, oldest first */
    assert_int_equal(h.n, 3);
    assert_true(samples_get(&h, 0)->at == 3);
    assert_true(samples_get(&h, 2)->at == 5);
    assert_true(samples_last(&h)->cpu == 50);
    assert_null(samples_get(&h, 3));
    /* not newer than the newest: ignored (history and live events overlap) */
    struct sample old = samples_test_at(4, 99, 0, 0);
    assert_false(samples_push(&h, &old));
    assert_true(samples_last(&h)->cpu == 50);
    samples_clear(&h);
    assert_int_equal(h.n, 0);
    assert_true(samples_push(&h, &old));
    samples_free(&h);
}

static void test_series(void **state)
{
    (void)state;
    struct samples h;
    assert_int_equal(samples_init(&h, 64), 0);
    /* samples each second at 101..110, cpu = 10 * i; a gap (nothing) at 111..115; 116 */
    for (int i = 1; i <= 10; i++) {
        struct sample x = samples_test_at(100 + i, 10 * i, 0, 1000.0 * i);
        samples_push(&h, &x);
    }
    struct sample late = samples_test_at(116, 5, 0, 0);
    samples_push(&h, &late);

    /* A 10 s window ending at 110 in 10 slots: slot k is (100 + k, 101 + k]. */
    double v[20], max;
    samples_series(&h, SAMPLE_CPU, 110, 10, 10, v, &max);
    for (int k = 0; k < 10; k++)
        assert_true(v[k] == 10.0 * (k + 1));
    assert_true(max == 100);

    /* 20 slots of half a second: each sample covers the two halves of its second. */
    samples_series(&h, SAMPLE_CPU, 110, 10, 20, v, &max);
    assert_true(v[0] == 10 && v[1] == 10 && v[18] == 100 && v[19] == 100);

    /* 2 slots of 5 s: the largest value of each. */
    samples_series(&h, SAMPLE_CPU, 110, 10, 2, v, &max);
    assert_true(v[0] == 50 && v[1] == 100);

    /* Up to 116: the seconds with no sample are gaps (NAN), not zeros. */
    samples_series(&h, SAMPLE_CPU, 116, 6, 6, v, &max);
    assert_true(isnan(v[1]) && isnan(v[4]));
    assert_true(v[5] == 5);

    /* Rates: 1000 bytes a second; the first sample has none; a reset (116) none either. */
    samples_series(&h, SAMPLE_NET_RX, 110, 10, 10, v, &max);
    assert_true(isnan(v[0]));
    for (int k = 1; k < 10; k++)
        assert_true(v[k] == 1000);
    assert_true(max == 1000);
    samples_series(&h, SAMPLE_NET_RX, 116, 6, 6, v, &max);
    for (int k = 0; k < 6; k++)
        assert_true(isnan(v[k]));
    assert_true(max == 0);
    samples_free(&h);
}

static void test_spark(void **state)
{
    (void)state;
    struct samples_spark sp;
    memset(&sp, 0, sizeof(sp));
    double v[SAMPLES_SPARK_N];
    for (int i = 0; i < SAMPLES_SPARK_N + 5; i++) {
        struct sample x = samples_test_at(1000 + i, i, 2 * i, 0);
        assert_true(samples_spark_push(&sp, &x));
    }
    assert_int_equal(samples_spark_values(&sp, false, v), SAMPLES_SPARK_N);
    assert_true(v[0] == 5 && v[SAMPLES_SPARK_N - 1] == SAMPLES_SPARK_N + 4); /* newest kept */
    samples_spark_values(&sp, true, v);
    assert_true(v[SAMPLES_SPARK_N - 1] == 2 * (SAMPLES_SPARK_N + 4));
    assert_true(sp.mem_limit == 1024);
    struct sample stale = samples_test_at(1001, 7, 7, 0);
    assert_false(samples_spark_push(&sp, &stale));

    /* Seeding: two live samples arrived before the history reply; the history's older
     * samples go before them, its overlapping ones are dropped. */
    memset(&sp, 0, sizeof(sp));
    struct sample live[2] = {samples_test_at(50, 50, 0, 0), samples_test_at(51, 51, 0, 0)};
    live[1].mem_limit = 4096;
    samples_spark_push(&sp, &live[0]);
    samples_spark_push(&sp, &live[1]);
    struct sample hist[4] = {samples_test_at(47, 47, 0, 0), samples_test_at(48, 48, 0, 0),
                             samples_test_at(49, 49, 0, 0), samples_test_at(50, 99, 0, 0)};
    samples_spark_seed(&sp, hist, 4);
    assert_int_equal(samples_spark_values(&sp, false, v), 5);
    for (int i = 0; i < 5; i++)
        assert_true(v[i] == 47 + i);
    assert_true(sp.mem_limit == 4096); /* the live limit is the newer */
}

static void test_formats(void **state)
{
    (void)state;
    char b[32];
    /* as docker stats (go-units BytesSize / HumanSizeWithPrecision(x, 3)) */
    static const struct {
        double v;
        const char *bin, *dec;
    } cases[] = {
        {0, "0B", "0B"},
        {512, "512B", "512B"},
        {1000, "1000B", "1kB"},
        {1069056, "1.02MiB", "1.07MB"},
        {1941504, "1.852MiB", "1.94MB"},
        {268435456, "256MiB", "268MB"},
        {2147483648.0, "2GiB", "2.15GB"},
        {1048575, "1024KiB", "1.05MB"},
        {1449, "1.415KiB", "1.45kB"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        samples_format_bytes(cases[i].v, b, sizeof(b));
        assert_string_equal(b, cases[i].bin);
        samples_format_decimal(cases[i].v, b, sizeof(b));
        assert_string_equal(b, cases[i].dec);
    }
    samples_format_bytes(NAN, b, sizeof(b));
    assert_string_equal(b, "-");
    samples_format_rate(1449, b, sizeof(b));
    assert_string_equal(b, "1.45kB/s");
    samples_format_rate(NAN, b, sizeof(b));
    assert_string_equal(b, "-");
    samples_format_percent(99.064, b, sizeof(b));
    assert_string_equal(b, "99.06%");
    samples_format_percent(0.0036, b, sizeof(b));
    assert_string_equal(b, "0.00%");
    samples_format_percent(NAN, b, sizeof(b));
    assert_string_equal(b, "--");
    samples_format_window(30, b, sizeof(b));
    assert_string_equal(b, "30s");
    samples_format_window(120, b, sizeof(b));
    assert_string_equal(b, "2m");
    samples_format_window(90, b, sizeof(b));
    assert_string_equal(b, "1m30s");
    samples_format_window(3600, b, sizeof(b));
    assert_string_equal(b, "1h");
    samples_format_window(5400, b, sizeof(b));
    assert_string_equal(b, "1h30m");
    assert_true(samples_nice_bytes(0) == 1024);
    assert_true(samples_nice_bytes(1069056) == 2097152);
    assert_true(samples_nice_bytes(268435456) == 268435456);
}

/* The model: `stats` events feed the session's sparklines, a fetched history goes before
 * them, and a sessions refetch or a session event keeps them. */
static void test_model_sparks(void **state)
{
    (void)state;
    struct model m = {0};
    const char *err = NULL;
    json_t *r = samples_test_json("{\"sessions\": [{\"id\": \"s1\", \"state\": \"ready\", "
                                  "\"created_at\": 1}]}");
    assert_int_equal(model_set_sessions(&m, r, &err), 0);
    json_t *ev = samples_test_json("{\"at\": 10, \"cpu\": 50, \"mem\": 100, \"mem_limit\": 1000, "
                                   "\"session\": \"s1\"}");
    assert_true(model_add_sample(&m, 0, ev));
    assert_false(model_add_sample(&m, 0, ev)); /* the same sample twice: once */
    json_decref(ev);
    ev = samples_test_json("{\"at\": 11, \"cpu\": 60, \"session\": \"nobody\"}");
    assert_false(model_add_sample(&m, 0, ev));
    json_decref(ev);

    json_t *hist = samples_test_json("{\"samples\": [{\"at\": 8, \"cpu\": 30, \"mem\": 80}, "
                                     "{\"at\": 9, \"cpu\": 40, \"mem\": 90}, {\"at\": 10, "
                                     "\"cpu\": 99, \"mem\": 99}]}");
    assert_true(model_seed_samples(&m, 0, "s1", hist));
    assert_false(model_seed_samples(&m, 0, "nobody", hist));
    json_decref(hist);
    double v[SAMPLES_SPARK_N];
    assert_int_equal(samples_spark_values(&m.sessions[0].spark, false, v), 3);
    assert_true(v[0] == 30 && v[1] == 40 && v[2] == 50);

    /* a refetch and a session event replace the session objects, not the sparklines */
    assert_int_equal(model_set_sessions(&m, r, &err), 0);
    json_decref(r);
    assert_int_equal(m.sessions[0].spark.n, 3);
    json_t *up = samples_test_json("{\"id\": \"s1\", \"state\": \"paused\", \"created_at\": 1}");
    assert_true(model_upsert_session(&m, up));
    json_decref(up);
    assert_int_equal(samples_spark_values(&m.sessions[0].spark, true, v), 3);
    assert_true(v[2] == 100);
    assert_true(m.sessions[0].spark.mem_limit == 1000);
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_ring),         cmocka_unit_test(test_series),
        cmocka_unit_test(test_spark),        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_model_sparks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
