/* Resource samples as the engine reports them (GET /v1/sessions/{id}/stats, `stats` events):
 * parsing, a bounded history, graph series over a time window (counters turned into rates),
 * the per-session sparkline ring, and numbers formatted the way `docker stats` prints them.
 * Pure: no ncurses, no requests. */
#ifndef PADDOCK_UI_SAMPLES_H
#define PADDOCK_UI_SAMPLES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* One sample; NAN where the engine sent null or nothing (cpu in a stream's first sample). */
struct sample {
    double at, span; /* end of the interval it describes (s), its length (1, or 60 merged) */
    double cpu;      /* % of ONE CPU, as docker stats (200 = two cores busy) */
    double mem, mem_limit, pids;
    double net_rx, net_tx, blk_read, blk_write; /* cumulative bytes */
};

enum sample_field {
    SAMPLE_CPU,
    SAMPLE_MEM,
    SAMPLE_PIDS,
    SAMPLE_NET_RX, /* rates: bytes a second between consecutive samples */
    SAMPLE_NET_TX,
    SAMPLE_BLK_READ,
    SAMPLE_BLK_WRITE,
    SAMPLE_FIELD_COUNT
};

/* Parse a sample object; false when it is not one (no numeric "at"). */
bool sample_parse(json_t *j, struct sample *out);
/* The field's gauge value, or for counters the rate from prev to s (NAN without prev, across
 * a counter reset, or when either is unknown). */
double sample_value(const struct sample *s, const struct sample *prev, enum sample_field f);

/* A ring of the newest samples, oldest first, strictly increasing in `at` (a sample not newer
 * than the newest is ignored: the fetched history and the live events overlap). */
struct samples {
    struct sample *v;
    size_t cap, n, head; /* head: index of the oldest */
};

/* 0, or -1 out of memory. */
int samples_init(struct samples *s, size_t cap);
void samples_free(struct samples *s);
void samples_clear(struct samples *s);
/* true when added. */
bool samples_push(struct samples *s, const struct sample *x);
/* The i-th oldest (i < n). */
const struct sample *samples_get(const struct samples *s, size_t i);
const struct sample *samples_last(const struct samples *s);

/* The field over the window (t_end - window, t_end] cut into nslots equal slots, oldest
 * first: each slot the largest value of the samples whose interval (at - span, at] overlaps
 * it (a rate's interval is the one since the previous sample); NAN where nothing covers it.
 * *max gets the largest value in the window (0 when none). */
void samples_series(const struct samples *s, enum sample_field f, double t_end, double window,
                    size_t nslots, double *out, double *max);

/* The sessions list's sparklines: the last SAMPLES_SPARK_N cpu and memory values. */
#define SAMPLES_SPARK_N 30

struct samples_spark {
    double at[SAMPLES_SPARK_N], cpu[SAMPLES_SPARK_N], mem[SAMPLES_SPARK_N];
    double last_at, mem_limit;
    unsigned n, head;
    bool seeded; /* its history was asked for once */
};

/* Add a sample not older than the newest one; true when added. */
bool samples_spark_push(struct samples_spark *sp, const struct sample *x);
/* Put history (oldest first) before what the ring holds: the fetched samples older than its
 * oldest, the newest SAMPLES_SPARK_N of all kept. */
void samples_spark_seed(struct samples_spark *sp, const struct sample *hist, size_t n);
/* Copy the cpu (or mem) values oldest first into out[SAMPLES_SPARK_N]; returns how many. */
size_t samples_spark_values(const struct samples_spark *sp, bool mem, double *out);

/* docker stats' figures: sizes in binary units with 4 significant digits ("1.02MiB",
 * "256MiB"), I/O totals in decimal units with 3 ("1.45kB", "0B"), percentages "%.2f%%". */
void samples_format_bytes(double bytes, char *buf, size_t sz);
void samples_format_decimal(double bytes, char *buf, size_t sz);
void samples_format_percent(double pct, char *buf, size_t sz);
/* A rate: samples_format_decimal + "/s". */
void samples_format_rate(double bytes_per_s, char *buf, size_t sz);
/* A window length: "30s", "2m", "1h", "1h30m". */
void samples_format_window(double seconds, char *buf, size_t sz);
/* A scale top for bytes: the next power of two at or above max (at least 1 KiB). */
double samples_nice_bytes(double max);

#endif
