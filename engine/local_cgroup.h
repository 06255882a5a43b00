/* The local backend's resource limits: one cgroup per running local sandbox, made by the engine
 * (root) under paddock.local/<engine id>/<sandbox id> of the host's cgroup hierarchy (cgroup v2
 * at /sys/fs/cgroup; on a host whose controllers are still on cgroup v1, the same directories in
 * the memory, cpu, cpuacct and pids hierarchies, and the freezer's when it is mounted). The
 * executor's outer process joins it before it execs, so the agent and everything it starts stay
 * under the session's limits.memory, limits.cpus and limits.pids; its counters are the session's
 * resource stats. */
#ifndef PADDOCK_LOCAL_CGROUP_H
#define PADDOCK_LOCAL_CGROUP_H

#include <stdbool.h>
#include <stdint.h>

struct local_cgroup;

struct local_cgroup_limits {
    int64_t memory; /* bytes (0: none) */
    double cpus;    /* CPUs of time per period (0: none) */
    int64_t pids;   /* processes and threads (0: none) */
};

struct local_cgroup_usage {
    int64_t memory;       /* bytes in use */
    int64_t memory_limit; /* bytes (-1: none) */
    int64_t cpu_ns;       /* CPU time used since it was made */
    int64_t pids;         /* processes and threads now */
    int64_t oom_kills;    /* processes the kernel's OOM killer ended in it */
};

/* Make (or find again) the cgroup scope/name with these limits: the handle, or NULL with *err
 * saying why (no writable cgroup hierarchy, a controller missing). */
struct local_cgroup *local_cgroup_make(const char *scope, const char *name,
                                       const struct local_cgroup_limits *lim, char **err);
/* The handle of an existing one, without changing it; NULL when there is none. */
struct local_cgroup *local_cgroup_open(const char *scope, const char *name);
/* The files a process writes "0" to to join it (NULL-terminated, owned by the handle): the child
 * writes them between fork and exec. */
const char *const *local_cgroup_join_files(const struct local_cgroup *cg);
int local_cgroup_usage(const struct local_cgroup *cg, struct local_cgroup_usage *out);
/* SIGKILL every process in it (thawed if frozen), then try once to remove it (and the scope when
 * it is empty); never waits: 0 when it is gone, -1 when it stays for now (killed processes not
 * yet reaped, a child group): the caller tries again later. */
int local_cgroup_remove(struct local_cgroup *cg);
/* A descriptor (non-blocking, close-on-exec; the caller's to close) that turns readable when
 * the OOM killer may have struck in it: read it empty, then compare usage's oom_kills. -1 (errno
 * set) when the kernel offers no such notice. */
int local_cgroup_oom_watch(const struct local_cgroup *cg);
/* Freeze or thaw every process in it (cgroup v2's cgroup.freeze, v1's freezer.state): 0, or -1
 * (errno set; ENOTSUP or ENOENT: no freezer here, the caller falls back to signals). */
int local_cgroup_freeze(const struct local_cgroup *cg, bool frozen);
void local_cgroup_free(struct local_cgroup *cg);
/* After an engine crash, or what a removal left: remove every cgroup of scope whose name keep()
 * rejects (its processes killed) and every empty one; one try each, never a wait. */
void local_cgroup_gc(const char *scope, int (*keep)(const char *name, void *ud), void *ud);

#endif
