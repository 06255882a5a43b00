/* Resource samples: parsing, history, series for the graphs, sparkline rings, and docker
 * stats' number formats (go-units: BytesSize "%.4g" base 1024, HumanSizeWithPrecision "%.3g"
 * base 1000). */
#include "ui/samples.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double sample_number(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

bool sample_parse(json_t *j, struct sample *out)
{
    static const struct {
        const char *key;
        size_t off;
    } fields[] = {
        {"at", offsetof(struct sample, at)},
        {"span", offsetof(struct sample, span)},
        {"cpu", offsetof(struct sample, cpu)},
        {"mem", offsetof(struct sample, mem)},
        {"mem_limit", offsetof(struct sample, mem_limit)},
        {"pids", offsetof(struct sample, pids)},
        {"net_rx", offsetof(struct sample, net_rx)},
        {"net_tx", offsetof(struct sample, net_tx)},
        {"blk_read", offsetof(struct sample, blk_read)},
        {"blk_write", offsetof(struct sample, blk_write)},
    };
    if (!json_is_object(j))
        return false;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        double v = sample_number(j, fields[i].key);
        /* Negative figures are not measurements: treat them as unknown. */
        *(double *)((char *)out + fields[i].off) = v < 0 ? NAN : v;
    }
    if (isnan(out->at))
        return false;
    if (!(out->span > 0))
        out->span = 1;
    return true;
}

static double sample_counter(const struct sample *s, enum sample_field f)
{
    switch (f) {
    case SAMPLE_NET_RX:
        return s->net_rx;
    case SAMPLE_NET_TX:
        return s->net_tx;
    case SAMPLE_BLK_READ:
        return s->blk_read;
    case SAMPLE_BLK_WRITE:
        return s->blk_write;
    default:
        return NAN;
    }
}

double sample_value(const struct sample *s, const struct sample *prev, enum sample_field f)
{
    switch (f) {
    case SAMPLE_CPU:
        return s->cpu;
    case SAMPLE_MEM:
        return s->mem;
    case SAMPLE_PIDS:
        return s->pids;
    default:
        break;
    }
    if (!prev)
        return NAN;
    double c = sample_counter(s, f), p = sample_counter(prev, f), dt = s->at - prev->at;
    if (isnan(c) || isnan(p) || !(dt > 0) || c < p) /* c < p: the container started again */
        return NAN;
    return (c - p) / dt;
}

/* ---- the history ring ---- */

int samples_init(struct samples *s, size_t cap)
{
    memset(s, 0, sizeof(*s));
    s->v = calloc(cap ? cap : 1, sizeof(*s->v));
    if (!s->v)
        return -1;
    s->cap = cap ? cap : 1;
    return 0;
}

void samples_free(struct samples *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}

void samples_clear(struct samples *s)
{
    s->n = s->head = 0;
}

const struct sample *samples_get(const struct samples *s, size_t i)
{
    return i < s->n ? &s->v[(s->head + i) % s->cap] : NULL;
}

const struct sample *samples_last(const struct samples *s)
{
    return s->n ? samples_get(s, s->n - 1) : NULL;
}

bool samples_push(struct samples *s, const struct sample *x)
{
    if (!s->v || isnan(x->at))
        return false;
    const struct sample *last = samples_last(s);
    if (last && x->at <= last->at)
        return false;
    if (s->n == s->cap) { /* drop the oldest */
        s->v[s->head] = *x;
        s->head = (s->head + 1) % s->cap;
        return true;
    }
    s->v[(s->head + s->n) % s->cap] = *x;
    s->n++;
    return true;
}

void samples_series(const struct samples *s, enum sample_field f, double t_end, double window,
                    size_t nslots, double *out, double *max)
{
    *max = 0;
    for (size_t k = 0; k < nslots; k++)
        out[k] = NAN;
    if (!nslots || !(window > 0))
        return;
    double t0 = t_end - window, slot = window / (double)nslots;
    bool rate = f >= SAMPLE_NET_RX;
    for (size_t i = 0; i < s->n; i++) {
        const struct sample *x = samples_get(s, i);
        const struct sample *prev = i ? samples_get(s, i - 1) : NULL;
        double v = sample_value(x, prev, f);
        if (isnan(v))
            continue;
        /* The interval the value describes: (a, b]. */
        double a = rate ? prev->at : x->at - x->span, b = x->at;
        if (b <= t0 || a >= t_end)
            continue;
        double lo = floor((a - t0) / slot), hi = ceil((b - t0) / slot) - 1;
        if (lo < 0)
            lo = 0;
        if (hi > (double)nslots - 1)
            hi = (double)nslots - 1;
        for (size_t k = (size_t)lo; (double)k <= hi; k++)
            if (isnan(out[k]) || v > out[k])
                out[k] = v;
        if (v > *max)
            *max = v;
    }
}

/* ---- sparklines ---- */

bool samples_spark_push(struct samples_spark *sp, const struct sample *x)
{
    if (isnan(x->at) || (sp->n && x->at <= sp->last_at))
        return false;
    size_t at = (sp->head + sp->n) % SAMPLES_SPARK_N;
    if (sp->n == SAMPLES_SPARK_N) {
        at = sp->head;
        sp->head = (sp->head + 1) % SAMPLES_SPARK_N;
    } else {
        sp->n++;
    }
    sp->at[at] = x->at;
    sp->cpu[at] = x->cpu;
    sp->mem[at] = x->mem;
    sp->last_at = x->at;
    if (!isnan(x->mem_limit))
        sp->mem_limit = x->mem_limit;
    return true;
}

void samples_spark_seed(struct samples_spark *sp, const struct sample *hist, size_t n)
{
    struct samples_spark old = *sp;
    double first = old.n ? old.at[old.head] : INFINITY;
    sp->n = sp->head = 0;
    for (size_t i = 0; i < n; i++)
        if (hist[i].at < first)
            samples_spark_push(sp, &hist[i]);
    for (unsigned i = 0; i < old.n; i++) {
        size_t k = (old.head + i) % SAMPLES_SPARK_N;
        struct sample x = {.at = old.at[k], .cpu = old.cpu[k], .mem = old.mem[k], .mem_limit = NAN};
        samples_spark_push(sp, &x);
    }
    if (old.n && old.mem_limit > 0) /* the live figure is the newer one */
        sp->mem_limit = old.mem_limit;
}

size_t samples_spark_values(const struct samples_spark *sp, bool mem, double *out)
{
    for (size_t i = 0; i < sp->n; i++) {
        size_t k = (sp->head + i) % SAMPLES_SPARK_N;
        out[i] = mem ? sp->mem[k] : sp->cpu[k];
    }
    return sp->n;
}

/* ---- docker stats' formats ---- */

static void samples_format_units(double v, double base, const char *const *units, size_t nunits,
                                 int digits, char *buf, size_t sz)
{
    if (isnan(v) || v < 0) {
        snprintf(buf, sz, "-");
        return;
    }
    size_t i = 0;
    while (v >= base && i + 1 < nunits) {
        v /= base;
        i++;
    }
    snprintf(buf, sz, "%.*g%s", digits, v, units[i]);
}

void samples_format_bytes(double bytes, char *buf, size_t sz)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    samples_format_units(bytes, 1024.0, units, sizeof(units) / sizeof(units[0]), 4, buf, sz);
}

void samples_format_decimal(double bytes, char *buf, size_t sz)
{
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    samples_format_units(bytes, 1000.0, units, sizeof(units) / sizeof(units[0]), 3, buf, sz);
}

void samples_format_rate(double bytes_per_s, char *buf, size_t sz)
{
    char n[32];
    samples_format_decimal(bytes_per_s, n, sizeof(n));
    snprintf(buf, sz, "%s%s", n, strcmp(n, "-") ? "/s" : "");
}

void samples_format_percent(double pct, char *buf, size_t sz)
{
    if (isnan(pct))
        snprintf(buf, sz, "--");
    else
        snprintf(buf, sz, "%.2f%%", pct);
}

void samples_format_window(double seconds, char *buf, size_t sz)
{
    long s = lround(seconds);
    if (s < 60)
        snprintf(buf, sz, "%lds", s);
    else if (s < 3600 && s % 60)
        snprintf(buf, sz, "%ldm%lds", s / 60, s % 60);
    else if (s < 3600)
        snprintf(buf, sz, "%ldm", s / 60);
    else if (s % 3600 / 60)
        snprintf(buf, sz, "%ldh%ldm", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, sz, "%ldh", s / 3600);
}

double samples_nice_bytes(double max)
{
    if (!(max > 1024))
        return 1024;
    return pow(2, ceil(log2(max)));
}
