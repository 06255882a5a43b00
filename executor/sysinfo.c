#include "sysinfo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* The number after "key" in a /proc file of "key value" lines, or 0. */
static long long proc_field(const char *path, const char *key)
{
    char line[256];
    long long v = 0;
    size_t kl = strlen(key);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0) {
            sscanf(line + kl, "%lld", &v);
            break;
        }
    fclose(f);
    return v;
}

/* Process CPU seconds, from clock_gettime, which needs no /proc. */
static double cpu_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

json_t *sysinfo_json(double uptime, double idle_time)
{
    /* CPU percent over the time since the previous call (psutil samples 0.1 s; we never sleep). */
    static double last_cpu = -1, last_wall;
    double cpu = cpu_seconds(), wall = wall_seconds(), cpu_percent = 0;
    if (last_cpu >= 0 && wall > last_wall)
        cpu_percent = 100.0 * (cpu - last_cpu) / (wall - last_wall);
    else if (uptime > 0)
        cpu_percent = 100.0 * cpu / uptime;
    last_cpu = cpu;
    last_wall = wall;

    long long rss = proc_field("/proc/self/status", "VmRSS:") * 1024;
    long long vms = proc_field("/proc/self/status", "VmSize:") * 1024;
    long long total = proc_field("/proc/meminfo", "MemTotal:") * 1024;
    double mem_percent = total > 0 ? 100.0 * (double)rss / (double)total : 0;

    struct statvfs vfs;
    long long disk_total = 0, disk_free = 0, disk_used = 0;
    double disk_percent = 0;
    if (statvfs("/", &vfs) == 0) {
        disk_total = (long long)vfs.f_blocks * (long long)vfs.f_frsize;
        disk_free = (long long)vfs.f_bavail * (long long)vfs.f_frsize;
        disk_used = ((long long)vfs.f_blocks - (long long)vfs.f_bfree) * (long long)vfs.f_frsize;
        if (disk_used + disk_free > 0)
            disk_percent = 100.0 * (double)disk_used / (double)(disk_used + disk_free);
    }
    /* psutil rounds these two to one decimal. */
    cpu_percent = round(cpu_percent * 10) / 10;
    disk_percent = round(disk_percent * 10) / 10;
    long long read_bytes = proc_field("/proc/self/io", "read_bytes:");
    long long write_bytes = proc_field("/proc/self/io", "write_bytes:");

    return json_pack("{s:f, s:f, s:{s:f, s:{s:I, s:I, s:f}, s:{s:I, s:I, s:I, s:f}, s:{s:I, s:I}}}",
                     "uptime", uptime, "idle_time", idle_time, "resources", "cpu_percent",
                     cpu_percent, "memory", "rss", (json_int_t)rss, "vms", (json_int_t)vms,
                     "percent", mem_percent, "disk", "total", (json_int_t)disk_total, "used",
                     (json_int_t)disk_used, "free", (json_int_t)disk_free, "percent", disk_percent,
                     "io", "read_bytes", (json_int_t)read_bytes, "write_bytes",
                     (json_int_t)write_bytes);
}
