/* Cgroups for local sandboxes (local_cgroup.h). cgroup v2 when /sys/fs/cgroup is the unified
 * hierarchy; else cgroup v1, each controller's hierarchy found in /proc/self/mountinfo (Docker
 * hosts with the cgroupfs driver still run this way). The files differ, so each version is one
 * table of file names; the code walks the table. */
#include "engine/local_cgroup.h"

#include "engine/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"
#define CG_BASE "paddock.local"
#define CG2_MAGIC 0x63677270 /* CGROUP2_SUPER_MAGIC */
#define CG_PERIOD_US 100000

/* The freezer is the one optional controller: without it, pause falls back to signals. */
enum cg_ctl { CG_MEMORY, CG_CPU, CG_CPUACCT, CG_PIDS, CG_FREEZER, CG_N };

/* Where each value lives, per version. */
struct cg_files {
    const char *memory, *memory_limit, *swap_limit, *cpu_usage, *cpu_limit, *pids, *pids_limit,
        *oom, *freeze;
    const char *frozen, *thawed; /* what .freeze is written */
    const char *oom_key;         /* the line of .oom counting kills */
    long long cpu_scale;         /* .cpu_usage's unit in ns */
    bool cpu_stat_line;          /* .cpu_usage is "usage_usec N" in a list */
    bool cpu_max_pair;           /* .cpu_limit is "quota period" (v2), else two files (v1) */
};

static const struct cg_files files_v2 = {
    .memory = "memory.current",
    .memory_limit = "memory.max",
    .swap_limit = "memory.swap.max",
    .cpu_usage = "cpu.stat",
    .cpu_limit = "cpu.max",
    .pids = "pids.current",
    .pids_limit = "pids.max",
    .oom = "memory.events",
    .freeze = "cgroup.freeze",
    .frozen = "1",
    .thawed = "0",
    .oom_key = "oom_kill",
    .cpu_scale = 1000,
    .cpu_stat_line = true,
    .cpu_max_pair = true,
};

static const struct cg_files files_v1 = {
    .memory = "memory.usage_in_bytes",
    .memory_limit = "memory.limit_in_bytes",
    .swap_limit = "memory.memsw.limit_in_bytes",
    .cpu_usage = "cpuacct.usage",
    .cpu_limit = "cpu.cfs_quota_us",
    .pids = "pids.current",
    .pids_limit = "pids.max",
    .oom = "memory.oom_control",
    .freeze = "freezer.state",
    .frozen = "FROZEN",
    .thawed = "THAWED",
    .oom_key = "oom_kill",
    .cpu_scale = 1,
};

static const char *const ctl_names[CG_N] = {[CG_MEMORY] = "memory",
                                            [CG_CPU] = "cpu",
                                            [CG_CPUACCT] = "cpuacct",
                                            [CG_PIDS] = "pids",
                                            [CG_FREEZER] = "freezer"};

struct local_cgroup {
    const struct cg_files *f;
    char *dir[CG_N];      /* the cgroup in each controller's hierarchy (v2: one for all);
                           * dir[CG_FREEZER] NULL without a freezer */
    char *join[CG_N + 1]; /* distinct dirs' cgroup.procs */
};

/* ---- files ---- */

static int cg_write(const char *dir, const char *file, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int cg_read(const char *dir, const char *file, char *buf, size_t size)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* A number, "max" as -1; -2 when unreadable. */
static int64_t cg_number(const char *dir, const char *file)
{
    char buf[64];
    if (cg_read(dir, file, buf, sizeof(buf)) < 0)
        return -2;
    if (strncmp(buf, "max", 3) == 0)
        return -1;
    return strtoll(buf, NULL, 10);
}

/* The value of "key N" in a key-per-line file; -2 when absent. */
static int64_t cg_keyed(const char *dir, const char *file, const char *key)
{
    char buf[2048];
    if (cg_read(dir, file, buf, sizeof(buf)) < 0)
        return -2;
    size_t len = strlen(key);
    for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, len) == 0 && p[len] == ' ')
            return strtoll(p + len + 1, NULL, 10);
    return -2;
}

/* ---- hierarchies ---- */

static bool cg_is_v2(void)
{
    struct statfs s;
    return statfs(CG_ROOT, &s) == 0 && (unsigned long)s.f_type == CG2_MAGIC;
}

/* The mount point of controller's v1 hierarchy (malloc'd), or NULL. */
static char *cg_v1_mount(const char *ctl)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return NULL;
    char line[1024], *found = NULL;
    while (!found && fgets(line, sizeof(line), f)) {
        char mnt[512], fstype[64], opts[512];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
            sscanf(dash + 3, "%63s %*s %511s", fstype, opts) != 2 || strcmp(fstype, "cgroup") != 0)
            continue;
        for (char *save = NULL, *o = strtok_r(opts, ",", &save); o && !found;
             o = strtok_r(NULL, ",", &save))
            if (strcmp(o, ctl) == 0)
                found = strdup(mnt);
    }
    fclose(f);
    return found;
}

/* Each controller's directory for the path under paddock.local ("" for the base itself). */
static int cg_dirs(const char *sub, char *dir[CG_N], const struct cg_files **files, char **err)
{
    if (cg_is_v2()) {
        *files = &files_v2;
        for (int i = 0; i < CG_N; i++)
            dir[i] = util_strdupf(CG_ROOT "/" CG_BASE "%s%s", *sub ? "/" : "", sub);
        return 0;
    }
    *files = &files_v1;
    for (int i = 0; i < CG_N; i++) {
        char *mnt = cg_v1_mount(ctl_names[i]);
        if (!mnt && i == CG_FREEZER) {
            dir[i] = NULL;
            continue;
        }
        if (!mnt) {
            if (err)
                *err = util_strdupf("no cgroup hierarchy with the %s controller is mounted "
                                    "(neither cgroup v2 at " CG_ROOT " nor cgroup v1)",
                                    ctl_names[i]);
            for (int j = 0; j < i; j++) {
                free(dir[j]);
                dir[j] = NULL;
            }
            return -1;
        }
        dir[i] = util_strdupf("%s/" CG_BASE "%s%s", mnt, *sub ? "/" : "", sub);
        free(mnt);
    }
    return 0;
}

/* v2: the controllers handed down from the root to paddock.local/<scope>. */
static int cg_v2_delegate(const char *scope, char **err)
{
    char have[256] = "";
    if (cg_read(CG_ROOT, "cgroup.controllers", have, sizeof(have)) < 0 || !strstr(have, "memory") ||
        !strstr(have, "cpu") || !strstr(have, "pids")) {
        *err = util_strdupf(CG_ROOT " (cgroup v2) does not offer the memory, cpu and pids "
                                    "controllers (it has: %s)",
                            have);
        return -1;
    }
    char *base = strdup(CG_ROOT "/" CG_BASE), *sc = util_strdupf("%s/%s", base, scope);
    const char *levels[] = {CG_ROOT, base, sc};
    int rc = 0;
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        if (i > 0 && mkdir(levels[i], 0755) < 0 && errno != EEXIST)
            rc = -1;
        else if (cg_write(levels[i], "cgroup.subtree_control", "+memory +cpu +pids") < 0)
            rc = -1;
        if (rc < 0)
            *err = util_strdupf("cannot delegate the memory, cpu and pids controllers to %s: %s",
                                levels[i], strerror(errno));
    }
    free(base);
    free(sc);
    return rc;
}

/* ---- the handle ---- */

static struct local_cgroup *cg_new(const char *scope, const char *name, char **err)
{
    struct local_cgroup *cg = calloc(1, sizeof(*cg));
    char *sub = util_strdupf("%s/%s", scope, name);
    if (!cg || !sub || cg_dirs(sub, cg->dir, &cg->f, err) < 0) {
        free(cg);
        free(sub);
        return NULL;
    }
    free(sub);
    size_t n = 0;
    for (int i = 0; i < CG_N; i++) {
        bool seen = !cg->dir[i];
        for (int j = 0; j < i && !seen; j++)
            seen = cg->dir[j] && strcmp(cg->dir[i], cg->dir[j]) == 0;
        if (!seen)
            cg->join[n++] = util_strdupf("%s/cgroup.procs", cg->dir[i]);
    }
    return cg;
}

void local_cgroup_free(struct local_cgroup *cg)
{
    if (!cg)
        return;
    for (int i = 0; i < CG_N; i++) {
        free(cg->dir[i]);
        free(cg->join[i]);
    }
    free(cg);
}

static int cg_limit(const struct local_cgroup *cg, const struct local_cgroup_limits *lim)
{
    const struct cg_files *f = cg->f;
    char v[64];
    if (lim->memory > 0)
        snprintf(v, sizeof(v), "%lld", (long long)lim->memory);
    else
        snprintf(v, sizeof(v), "%s", f == &files_v2 ? "max" : "-1");
    if (cg_write(cg->dir[CG_MEMORY], f->memory_limit, v) < 0)
        return -1;
    /* No swap beyond the memory limit, as Docker's MemorySwap = Memory (absent without swap
     * accounting: nothing to limit then). */
    if (cg_write(cg->dir[CG_MEMORY], f->swap_limit,
                 f == &files_v2 ? (lim->memory > 0 ? "0" : "max") : v) < 0 &&
        errno != ENOENT)
        return -1;
    long long quota = lim->cpus > 0 ? (long long)(lim->cpus * CG_PERIOD_US) : -1;
    if (f->cpu_max_pair) {
        if (quota > 0)
            snprintf(v, sizeof(v), "%lld %d", quota, CG_PERIOD_US);
        else
            snprintf(v, sizeof(v), "max %d", CG_PERIOD_US);
        if (cg_write(cg->dir[CG_CPU], f->cpu_limit, v) < 0)
            return -1;
    } else {
        snprintf(v, sizeof(v), "%d", CG_PERIOD_US);
        if (cg_write(cg->dir[CG_CPU], "cpu.cfs_period_us", v) < 0)
            return -1;
        snprintf(v, sizeof(v), "%lld", quota);
        if (cg_write(cg->dir[CG_CPU], f->cpu_limit, v) < 0)
            return -1;
    }
    if (lim->pids > 0)
        snprintf(v, sizeof(v), "%lld", (long long)lim->pids);
    else
        snprintf(v, sizeof(v), "max");
    return cg_write(cg->dir[CG_PIDS], f->pids_limit, v);
}

struct local_cgroup *local_cgroup_make(const char *scope, const char *name,
                                       const struct local_cgroup_limits *lim, char **err)
{
    *err = NULL;
    if (cg_is_v2() && cg_v2_delegate(scope, err) < 0)
        return NULL;
    struct local_cgroup *cg = cg_new(scope, name, err);
    if (!cg)
        return NULL;
    for (int i = 0; i < CG_N; i++)
        if (cg->dir[i] && util_mkdir_p(cg->dir[i], 0755) < 0) {
            *err = util_strdupf("cannot make the cgroup %s: %s", cg->dir[i], strerror(errno));
            local_cgroup_free(cg);
            return NULL;
        }
    if (cg_limit(cg, lim) < 0) {
        *err = util_strdupf("cannot set the limits of the cgroup %s: %s", cg->dir[CG_MEMORY],
                            strerror(errno));
        local_cgroup_remove(cg);
        local_cgroup_free(cg);
        return NULL;
    }
    return cg;
}

struct local_cgroup *local_cgroup_open(const char *scope, const char *name)
{
    char *err = NULL;
    struct local_cgroup *cg = cg_new(scope, name, &err);
    free(err);
    struct stat st;
    if (cg && stat(cg->dir[CG_PIDS], &st) < 0) {
        local_cgroup_free(cg);
        return NULL;
    }
    return cg;
}

const char *const *local_cgroup_join_files(const struct local_cgroup *cg)
{
    return (const char *const *)cg->join;
}

int local_cgroup_usage(const struct local_cgroup *cg, struct local_cgroup_usage *out)
{
    const struct cg_files *f = cg->f;
    out->memory = cg_number(cg->dir[CG_MEMORY], f->memory);
    out->memory_limit = cg_number(cg->dir[CG_MEMORY], f->memory_limit);
    /* v1 says "no limit" with a page-rounded INT64_MAX. */
    if (out->memory_limit >= (int64_t)1 << 62)
        out->memory_limit = -1;
    int64_t cpu = f->cpu_stat_line ? cg_keyed(cg->dir[CG_CPUACCT], f->cpu_usage, "usage_usec")
                                   : cg_number(cg->dir[CG_CPUACCT], f->cpu_usage);
    out->cpu_ns = cpu >= 0 ? cpu * f->cpu_scale : -1;
    out->pids = cg_number(cg->dir[CG_PIDS], f->pids);
    out->oom_kills = cg_keyed(cg->dir[CG_MEMORY], f->oom, f->oom_key);
    return out->memory < 0 && out->cpu_ns < 0 ? -1 : 0;
}

/* SIGKILL what cgroup.procs lists; the number of processes seen. */
static int cg_kill_listed(const char *procs)
{
    FILE *f = fopen(procs, "re");
    if (!f)
        return 0;
    int n = 0, pid;
    while (fscanf(f, "%d", &pid) == 1)
        if (pid > 0 && kill(pid, SIGKILL) == 0)
            n++;
    fclose(f);
    return n;
}

/* One try, never a wait: kill what is in the directories (a frozen group thawed, or the kill
 * would not land), remove them; -1 when one stayed (its killed processes not reaped yet). */
static int cg_remove_dirs(char *const dir[CG_N], const struct cg_files *f)
{
    if (f == &files_v2)
        cg_write(dir[0], "cgroup.kill", "1"); /* 5.14 and later; else the list below */
    for (int i = 0; i < CG_N; i++) {
        char *procs = dir[i] ? util_strdupf("%s/cgroup.procs", dir[i]) : NULL;
        if (procs)
            cg_kill_listed(procs);
        free(procs);
    }
    if (dir[CG_FREEZER])
        cg_write(dir[CG_FREEZER], f->freeze, f->thawed);
    int rc = 0;
    for (int i = 0; i < CG_N; i++) {
        if (!dir[i])
            continue;
        if (rmdir(dir[i]) < 0 && errno != ENOENT)
            rc = -1;
        /* The scope goes with its last sandbox. */
        char *up = strdup(dir[i]), *slash = up ? strrchr(up, '/') : NULL;
        if (slash) {
            *slash = '\0';
            rmdir(up);
        }
        free(up);
    }
    return rc;
}

int local_cgroup_remove(struct local_cgroup *cg)
{
    return cg_remove_dirs(cg->dir, cg->f);
}

int local_cgroup_oom_watch(const struct local_cgroup *cg)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", cg->dir[CG_MEMORY], cg->f->oom);
    if (cg->f == &files_v2) {
        /* The kernel notifies a change of memory.events as a file modification. */
        int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd >= 0 && inotify_add_watch(fd, path, IN_MODIFY) < 0) {
            close(fd);
            return -1;
        }
        return fd;
    }
    /* v1: an eventfd registered through cgroup.event_control for memory.oom_control. */
    int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int ofd = open(path, O_RDONLY | O_CLOEXEC);
    char line[64];
    snprintf(line, sizeof(line), "%d %d", efd, ofd);
    int rc = efd >= 0 && ofd >= 0 ? cg_write(cg->dir[CG_MEMORY], "cgroup.event_control", line) : -1;
    if (ofd >= 0)
        close(ofd); /* the registration holds its own reference */
    if (rc < 0 && efd >= 0) {
        close(efd);
        efd = -1;
    }
    return efd;
}

int local_cgroup_freeze(const struct local_cgroup *cg, bool frozen)
{
    if (!cg->dir[CG_FREEZER]) {
        errno = ENOTSUP;
        return -1;
    }
    return cg_write(cg->dir[CG_FREEZER], cg->f->freeze, frozen ? cg->f->frozen : cg->f->thawed);
}

void local_cgroup_gc(const char *scope, int (*keep)(const char *name, void *ud), void *ud)
{
    char *base[CG_N] = {0};
    const struct cg_files *f;
    if (cg_dirs(scope, base, &f, NULL) < 0)
        return;
    DIR *d = opendir(base[CG_PIDS]);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR)
            continue;
        char *name = strdup(e->d_name);
        if (!name)
            break;
        char *dir[CG_N] = {0};
        for (int i = 0; i < CG_N; i++)
            dir[i] = base[i] ? util_strdupf("%s/%s", base[i], name) : NULL;
        if (!keep(name, ud)) {
            cg_remove_dirs(dir, f);
        } else {
            for (int i = 0; i < CG_N; i++) /* an empty one: its sandbox ended meanwhile */
                if (dir[i])
                    rmdir(dir[i]);
        }
        for (int i = 0; i < CG_N; i++)
            free(dir[i]);
        free(name);
    }
    if (d)
        closedir(d);
    for (int i = 0; i < CG_N; i++)
        free(base[i]);
}
