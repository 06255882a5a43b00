/* CPU time from /proc (procstat.h). */
#include "procstat.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double procstat_ticks_ms(unsigned long long ticks)
{
    return (double)ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

void procstat_text(pid_t pid, char *buf, size_t cap)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    FILE *f = pid > 0 ? fopen(p, "r") : NULL;
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
}

double procstat_text_cpu_ms(const char *text)
{
    /* after the command name, which may hold anything but ends at the last ')' */
    const char *q = strrchr(text, ')');
    unsigned long long ut = 0, st = 0;
    if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return procstat_ticks_ms(ut + st);
}

double procstat_cpu_ms(pid_t pid)
{
    char buf[1024];
    procstat_text(pid, buf, sizeof(buf));
    return procstat_text_cpu_ms(buf);
}

double procstat_machine_ms(void)
{
    unsigned long long v[7] = {0};
    FILE *f = fopen("/proc/stat", "r");
    int got = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                         &v[4], &v[5], &v[6])
                : 0;
    if (f)
        fclose(f);
    if (got != 7)
        return 0;
    return procstat_ticks_ms(v[0] + v[1] + v[2] + v[5] + v[6]);
}

int procstat_sched_ms(pid_t pid, pid_t tid, double *run_ms, double *wait_ms)
{
    char p[96];
    snprintf(p, sizeof(p), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    FILE *f = pid > 0 ? fopen(p, "r") : NULL;
    unsigned long long run = 0, wait = 0;
    int got = f ? fscanf(f, "%llu %llu", &run, &wait) : 0;
    if (f)
        fclose(f);
    if (got != 2)
        return -1;
    *run_ms = (double)run / 1e6;
    *wait_ms = (double)wait / 1e6;
    return 0;
}

int procstat_sched_all_ms(pid_t pid, double *run_ms)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
    DIR *d = pid > 0 ? opendir(p) : NULL;
    struct dirent *e;
    int got = 0;
    *run_ms = 0;
    while (d && (e = readdir(d))) {
        double r, w;
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid > 0 && procstat_sched_ms(pid, tid, &r, &w) == 0) {
            *run_ms += r;
            got++;
        }
    }
    if (d)
        closedir(d);
    return got ? 0 : -1;
}
