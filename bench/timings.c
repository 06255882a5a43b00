/* Samples and percentiles, the monotonic clock and /proc/PID/status, for every part of the
 * bench. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void timings_add(struct timings *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = realloc(s->v, s->cap * sizeof(double));
        if (!s->v)
            abort();
    }
    s->v[s->n++] = x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double timings_pct(struct timings *s, double p)
{
    if (!s->n)
        return 0;
    qsort(s->v, s->n, sizeof(double), cmp_double);
    size_t i = (size_t)(p * (double)(s->n - 1) + 0.5);
    return s->v[i];
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A "NAME:   123 kB" field of /proc/PID/status in kB, or -1. */
long proc_status_kb(pid_t pid, const char *field)
{
    char p[64], buf[256];
    long v = -1;
    snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "r");
    size_t flen = strlen(field);
    while (f && fgets(buf, sizeof(buf), f))
        if (strncmp(buf, field, flen) == 0 && buf[flen] == ':') {
            v = atol(buf + flen + 1);
            break;
        }
    if (f)
        fclose(f);
    return v;
}
