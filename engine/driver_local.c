/* The local sandbox driver (driver.h): the static executor runs on this host as an unprivileged
 * user, in a workspace directory the engine makes under [local] root, inside bubblewrap (no
 * network, the system read-only, only the workspace writable, its own PID namespace, a fresh
 * /tmp, /run and /dev). No Docker. Only sessions that ask for "backend": "local" use it, and
 * only when the operator enabled it in the engine's config (driver_local.h).
 *
 * A sandbox is its outer process (bwrap, or the executor itself when unsandboxed runs are
 * allowed) and a state file the engine owns (<state>/local/<id>.json: never in a place the
 * sandbox can write), so an engine started again finds the process by pid and start time
 * (reattach) or reports it ended. The end of a process is seen through a pidfd, and told to
 * the sessions as Docker's "die" event would be.
 *
 * While it runs it is in a cgroup of its own that holds the session's limits and gives its
 * stats (local_cgroup.h), and under paddock's seccomp table (local_seccomp.h), bubblewrap or
 * not. Operator terminals are shells the engine starts inside the same namespaces, cgroup,
 * user and filter. */
#include "engine/driver_local.h"
#include "engine/driver.h"

#include "engine/base/loop.h"
#include "engine/base/unix_peer.h"
#include "engine/base/util.h"
#include "engine/engine_internal.h"
#include "engine/local_cgroup.h"
#include "engine/local_seccomp.h"
#include "engine/session.h"
#include "engine/session_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCAL_ROOT_DEFAULT "/var/lib/paddock-local"
#define LOCAL_NOT_AVAILABLE "not available on the local backend"
/* Inside the sandbox: where the socket dir and the executor are bound (a fresh /run). */
#define LOCAL_SOCK_DIR "/run/paddock"
#define LOCAL_EXECUTOR "/run/paddock-executor"
#define LOCAL_POLL_MS 10
#define LOCAL_STOP_WAIT_MS 5000
#define LOCAL_STATS_MS 1000
/* Removing a cgroup whose killed processes are still exiting: tried again from a loop timer,
 * the delay doubling up to a cap, until a deadline; what is left then is gc's (local_gc). */
#define LOCAL_REAP_FIRST_MS 10
#define LOCAL_REAP_MAX_MS 1000
#define LOCAL_REAP_DEADLINE_MS 60000
#define LOCAL_OOM_CHECK_MS 50
#define LOCAL_OOM_CHECKS 40
/* In bubblewrap's child: the seccomp program's descriptor (--seccomp). */
#define LOCAL_SECCOMP_FD 6
#define STR_(x) #x
#define STR(x) STR_(x)

struct lsb {
    struct lsb *next;
    struct engine *eng;
    char *id, *session_id, *sock_dir, *ws, *exe;
    json_t *env, *labels;
    pid_t pid;                /* the outer process; 0 when not running */
    unsigned long long start; /* its start time (/proc/pid/stat), against pid reuse */
    /* The first process of its PID namespace once seen, and its start time: killing it ends
     * every process of the namespace, even when the outer one is gone already. */
    pid_t init;
    unsigned long long init_start;
    int pidfd;
    bool child; /* the engine's own child (its exit code can be read) */
    bool paused;
    bool frozen;      /* paused by the cgroup freezer, else by SIGSTOP (no freezer here) */
    bool oom_killed;  /* the kernel's OOM killer ended a process of its last run, as Docker's
                       * State.OOMKilled */
    int64_t oom_told; /* OOM kills of this run already told as "oom" events */
    int oom_fd;       /* local_cgroup_oom_watch's, while it runs; -1 */
    struct loop_timer *oom_timer;
    int oom_checks;
    int exit_code;
    const char *error;              /* why it ended, when not by itself */
    struct local_cgroup_limits lim; /* the session's limits (the create body's) */
    struct local_cgroup *cg;        /* while it runs */
};

/* A cgroup being removed: its processes were killed and have not all exited yet. */
struct local_reap {
    struct local_reap *next;
    struct engine *eng;
    char *id; /* the sandbox's */
    struct local_cgroup *cg;
    struct loop_timer *timer;
    long delay_ms;
    double deadline;
};

struct local {
    bool enabled, unsandboxed;
    char *user, *root, *bwrap, *dir; /* dir: <state>/local */
    char *scope;                     /* the engine's cgroups: paddock.local/<engine id> */
    void *bpf;                       /* the seccomp program (local_seccomp.h) */
    size_t bpf_len;
    struct sandbox_exec *execs; /* terminals' processes, until they end */
    unsigned long exec_serial;
    uid_t uid;
    gid_t gid;
    struct lsb *sbs;
    struct local_reap *reaps;
};

static struct local *lc(const struct engine *eng)
{
    return eng->local;
}

/* ---- replies, always later from the loop ---- */

struct later {
    struct engine *eng;
    sandbox_done_fn fn;
    void *ud;
    long status;
    json_t *json;
    char *message;
    /* a poll: done() says when to reply (wait, stop, remove) */
    struct lsb *sb;
    double deadline;
    void (*then)(struct later *lt);
};

static void later_fire(void *ud)
{
    struct later *lt = ud;
    struct sandbox_reply r = {
        .status = lt->status, .json = lt->json, .message = lt->message ? lt->message : ""};
    if (lt->fn)
        lt->fn(&r, lt->ud);
    json_decref(lt->json);
    free(lt->message);
    free(lt);
}

/* json is taken. */
static int reply_later(struct engine *eng, sandbox_done_fn fn, void *ud, long status, json_t *json,
                       const char *message)
{
    struct later *lt = calloc(1, sizeof(*lt));
    if (!lt) {
        json_decref(json);
        return -1;
    }
    *lt = (struct later){.eng = eng, .fn = fn, .ud = ud, .status = status, .json = json};
    lt->message = message ? strdup(message) : NULL;
    if (!loop_timer_add(eng->loop, 0, later_fire, lt)) {
        json_decref(json);
        free(lt->message);
        free(lt);
        return -1;
    }
    return 0;
}

/* ---- processes ---- */

static unsigned long long proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may hold anything */
    unsigned long long t = 0;
    /* A zombie (or dying) process runs nothing: as good as gone, though its pid is taken. */
    if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
        return 0;
    /* after ") ": state ppid ... field 22 is the start time */
    if (sscanf(p + 2,
               "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
               "%*d %*d %llu",
               &t) != 1)
        t = 0;
    return t;
}

static pid_t proc_parent(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    int ppid = -1;
    if (!p || sscanf(p + 2, "%*c %d", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
}

static bool sb_alive(const struct lsb *sb)
{
    return sb->pid > 0 && proc_start_time(sb->pid) == sb->start;
}

/* Signal root and every process descending from it (a /proc walk; what reparented away from
 * the tree is out of reach, which the PID namespace of bubblewrap prevents: there it stays under
 * the namespace's first process). */
static void tree_signal(pid_t root, int sig)
{
    pid_t tree[4096];
    size_t n = 0;
    tree[n++] = root;
    for (size_t round = 0; round < 64; round++) {
        size_t before = n;
        DIR *d = opendir("/proc");
        if (!d)
            break;
        struct dirent *e;
        while ((e = readdir(d)) && n < sizeof(tree) / sizeof(tree[0])) {
            char *end;
            long pid = strtol(e->d_name, &end, 10);
            if (*end || pid <= 0)
                continue;
            bool known = false;
            for (size_t i = 0; i < n && !known; i++)
                known = tree[i] == (pid_t)pid;
            if (known)
                continue;
            pid_t pp = proc_parent((pid_t)pid);
            for (size_t i = 0; i < n; i++)
                if (tree[i] == pp) {
                    tree[n++] = (pid_t)pid;
                    break;
                }
        }
        closedir(d);
        if (n == before)
            break;
    }
    for (size_t i = 0; i < n; i++)
        kill(tree[i], sig);
}

/* The first process of the sandbox's PID namespace (bwrap's child), or the executor itself when
 * unsandboxed: what the channel's check compares the server's namespace with. 0 when not yet. */
static void sb_save(const struct local *L, const struct lsb *sb);

static pid_t sb_ns_init(const struct local *L, struct lsb *sb)
{
    if (!sb_alive(sb))
        return 0;
    if (!L->bwrap)
        return sb->pid;
    char path[80], buf[64] = "";
    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)sb->pid, (int)sb->pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int child = 0;
    if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%d", &child) != 1)
        child = 0;
    fclose(f);
    if (child > 0 && child != sb->init) {
        sb->init = (pid_t)child;
        sb->init_start = proc_start_time(sb->init);
        sb_save(L, sb);
    }
    return (pid_t)child;
}

/* SIGKILL of the namespace's first process: the kernel then kills the rest of it. */
static void sb_kill_namespace(struct lsb *sb)
{
    if (sb->init > 0 && sb->init_start && proc_start_time(sb->init) == sb->init_start)
        kill(sb->init, SIGKILL);
    sb->init = 0;
    sb->init_start = 0;
}

/* ---- the state file ---- */

static char *sb_file(const struct local *L, const char *id, const char *ext)
{
    return util_strdupf("%s/%s.%s", L->dir, id, ext);
}

static void sb_save(const struct local *L, const struct lsb *sb)
{
    json_t *j = json_pack(
        "{s:s,s:s,s:s,s:s,s:O,s:O,s:I,s:I,s:I,s:I,s:b,s:b,s:b,s:I,s:{s:I,s:f,s:I}}", "session",
        sb->session_id, "sock_dir", sb->sock_dir, "workspace", sb->ws, "executor", sb->exe, "env",
        sb->env, "labels", sb->labels, "pid", (json_int_t)sb->pid, "start", (json_int_t)sb->start,
        "init", (json_int_t)sb->init, "init_start", (json_int_t)sb->init_start, "paused",
        sb->paused, "frozen", sb->frozen, "oom_killed", sb->oom_killed, "oom_told",
        (json_int_t)sb->oom_told, "limits", "memory", (json_int_t)sb->lim.memory, "cpus",
        sb->lim.cpus, "pids", (json_int_t)sb->lim.pids);
    char *path = sb_file(L, sb->id, "json"), *tmp = sb_file(L, sb->id, "json.tmp");
    if (j && path && tmp && json_dump_file(j, tmp, JSON_COMPACT) == 0)
        rename(tmp, path);
    json_decref(j);
    free(path);
    free(tmp);
}

static void sb_oom_unwatch(struct lsb *sb);

static void sb_free(struct lsb *sb)
{
    if (sb->pidfd >= 0) {
        loop_del_fd(sb->eng->loop, sb->pidfd);
        close(sb->pidfd);
    }
    sb_oom_unwatch(sb);
    free(sb->id);
    free(sb->session_id);
    free(sb->sock_dir);
    free(sb->ws);
    free(sb->exe);
    local_cgroup_free(sb->cg);
    json_decref(sb->env);
    json_decref(sb->labels);
    free(sb);
}

static void sb_on_exit(int fd, uint32_t events, void *ud);

/* ---- removing cgroups without waiting on the loop ---- */

static void reap_free(struct local_reap *r)
{
    struct engine *eng = r->eng;
    struct local *L = lc(eng);
    for (struct local_reap **p = &L->reaps; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    if (r->timer)
        loop_timer_cancel(eng->loop, r->timer);
    local_cgroup_free(r->cg);
    free(r->id);
    free(r);
}

static void reap_tick(void *ud);

static void reap_schedule(struct local_reap *r)
{
    r->timer = loop_timer_add(r->eng->loop, r->delay_ms, reap_tick, r);
    if (!r->timer)
        reap_free(r); /* gc's then */
}

static void reap_tick(void *ud)
{
    struct local_reap *r = ud;
    r->timer = NULL;
    if (local_cgroup_remove(r->cg) == 0 || loop_now_ms() >= r->deadline) {
        reap_free(r);
        return;
    }
    r->delay_ms = r->delay_ms * 2 > LOCAL_REAP_MAX_MS ? LOCAL_REAP_MAX_MS : r->delay_ms * 2;
    reap_schedule(r);
}

/* A start again of the sandbox makes its cgroup anew: an old removal must not kill it. */
static void reap_cancel(struct engine *eng, const char *id)
{
    for (struct local_reap *r = lc(eng)->reaps; r; r = r->next)
        if (strcmp(r->id, id) == 0) {
            reap_free(r);
            return;
        }
}

/* Its processes are gone: so is its cgroup (what is left in it is killed). Killed processes
 * take a moment to exit, a D-state one longer: the removal goes on from a timer then. */
static void sb_uncgroup(struct lsb *sb)
{
    struct engine *eng = sb->eng;
    if (!sb->cg)
        sb->cg = local_cgroup_open(lc(eng)->scope, sb->id);
    struct local_reap *r = NULL;
    if (sb->cg && local_cgroup_remove(sb->cg) < 0 && (r = calloc(1, sizeof(*r))) &&
        (r->id = strdup(sb->id))) {
        reap_cancel(eng, sb->id);
        r->eng = eng;
        r->cg = sb->cg;
        r->delay_ms = LOCAL_REAP_FIRST_MS;
        r->deadline = loop_now_ms() + LOCAL_REAP_DEADLINE_MS;
        r->next = lc(eng)->reaps;
        lc(eng)->reaps = r;
        sb->cg = NULL;
        reap_schedule(r);
        return;
    }
    free(r);
    local_cgroup_free(sb->cg);
    sb->cg = NULL;
}

/* ---- the OOM killer: told as Docker's "oom" event, one per kill, and kept for inspect ---- */

static void sb_oom_unwatch(struct lsb *sb)
{
    if (sb->oom_timer)
        loop_timer_cancel(sb->eng->loop, sb->oom_timer);
    sb->oom_timer = NULL;
    if (sb->oom_fd >= 0) {
        loop_del_fd(sb->eng->loop, sb->oom_fd);
        close(sb->oom_fd);
    }
    sb->oom_fd = -1;
}

/* The kills not told yet, told now (before the "die" of a sandbox the killer ended); whether
 * there were any. */
static bool sb_oom_tell(struct lsb *sb)
{
    struct local_cgroup_usage u;
    if (!sb->cg || local_cgroup_usage(sb->cg, &u) < 0)
        return false;
    sb->oom_killed = sb->oom_killed || u.oom_kills > 0;
    if (u.oom_kills <= sb->oom_told)
        return false;
    for (; sb->oom_told < u.oom_kills; sb->oom_told++) {
        json_t *ev = json_pack("{s:s,s:{s:s,s:O}}", "Action", "oom", "Actor", "ID", sb->id,
                               "Attributes", sb->labels);
        if (ev && !sb->eng->stopping)
            session_on_sandbox_event(sb->eng, ev);
        json_decref(ev);
    }
    return true;
}

/* cgroup v1 signals when the group runs out of memory, before the killer has chosen: the count
 * is read again a few times shortly after. */
static void sb_oom_check(void *ud)
{
    struct lsb *sb = ud;
    sb->oom_timer = NULL;
    if (!sb_oom_tell(sb) && --sb->oom_checks > 0)
        sb->oom_timer = loop_timer_add(sb->eng->loop, LOCAL_OOM_CHECK_MS, sb_oom_check, sb);
}

static void sb_on_oom(int fd, uint32_t events, void *ud)
{
    (void)events;
    char buf[4096];
    while (read(fd, buf, sizeof(buf)) > 0) {
    }
    struct lsb *sb = ud;
    sb->oom_checks = LOCAL_OOM_CHECKS;
    sb_oom_check(sb);
}

/* Without a notice from the kernel the kills are still counted when the sandbox ends. */
static void sb_oom_watch(struct lsb *sb)
{
    sb_oom_unwatch(sb);
    if (!sb->cg || (sb->oom_fd = local_cgroup_oom_watch(sb->cg)) < 0)
        return;
    if (loop_add_fd(sb->eng->loop, sb->oom_fd, EPOLLIN, sb_on_oom, sb) < 0) {
        close(sb->oom_fd);
        sb->oom_fd = -1;
    }
}

static void sb_watch(struct lsb *sb)
{
    sb->pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0);
    if (sb->pidfd >= 0 && loop_add_fd(sb->eng->loop, sb->pidfd, EPOLLIN, sb_on_exit, sb) < 0) {
        close(sb->pidfd);
        sb->pidfd = -1;
    }
}

/* The outer process ended: the sandbox is down, and the session hears it as a "die". */
static void sb_ended(struct lsb *sb)
{
    struct engine *eng = sb->eng;
    if (sb->pidfd >= 0) {
        loop_del_fd(eng->loop, sb->pidfd);
        close(sb->pidfd);
        sb->pidfd = -1;
    }
    int st;
    if (sb->child && waitpid(sb->pid, &st, WNOHANG) == sb->pid)
        sb->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    else if (!sb->child) {
        sb->error = "it ended while the engine was not its parent (exit code unknown)";
        sb->exit_code = -1;
    }
    sb_kill_namespace(sb); /* what the outer process left behind in it */
    sb_oom_tell(sb);
    sb_oom_unwatch(sb);
    sb_uncgroup(sb);
    sb->pid = 0;
    sb->start = 0;
    sb->paused = false;
    sb_save(lc(eng), sb);
    json_t *ev = json_pack("{s:s,s:{s:s,s:O}}", "Action", "die", "Actor", "ID", sb->id,
                           "Attributes", sb->labels);
    if (ev && !eng->stopping)
        session_on_sandbox_event(eng, ev);
    json_decref(ev);
}

static void sb_on_exit(int fd, uint32_t events, void *ud)
{
    (void)fd;
    (void)events;
    sb_ended(ud);
}

/* Known in memory, or found again from its state file (an engine started again). */
static struct lsb *sb_find(struct engine *eng, const char *id)
{
    struct local *L = lc(eng);
    if (!L || strncmp(id, LOCAL_ID_PREFIX, strlen(LOCAL_ID_PREFIX)) != 0 || strchr(id, '/'))
        return NULL;
    for (struct lsb *sb = L->sbs; sb; sb = sb->next)
        if (strcmp(sb->id, id) == 0)
            return sb;
    char *path = sb_file(L, id, "json");
    json_t *j = path ? json_load_file(path, 0, NULL) : NULL;
    free(path);
    const char *sid = json_string_value(json_object_get(j, "session"));
    const char *sock = json_string_value(json_object_get(j, "sock_dir"));
    const char *ws = json_string_value(json_object_get(j, "workspace"));
    const char *exe = json_string_value(json_object_get(j, "executor"));
    struct lsb *sb = sid && sock && ws && exe ? calloc(1, sizeof(*sb)) : NULL;
    if (!sb) {
        json_decref(j);
        return NULL;
    }
    *sb = (struct lsb){.eng = eng,
                       .id = strdup(id),
                       .session_id = strdup(sid),
                       .sock_dir = strdup(sock),
                       .ws = strdup(ws),
                       .exe = strdup(exe),
                       .env = json_incref(json_object_get(j, "env")),
                       .labels = json_incref(json_object_get(j, "labels")),
                       .pid = (pid_t)json_integer_value(json_object_get(j, "pid")),
                       .start = (unsigned long long)json_integer_value(json_object_get(j, "start")),
                       .init = (pid_t)json_integer_value(json_object_get(j, "init")),
                       .init_start =
                           (unsigned long long)json_integer_value(json_object_get(j, "init_start")),
                       .paused = json_is_true(json_object_get(j, "paused")),
                       .frozen = json_is_true(json_object_get(j, "frozen")),
                       .oom_killed = json_is_true(json_object_get(j, "oom_killed")),
                       .oom_told = json_integer_value(json_object_get(j, "oom_told")),
                       .pidfd = -1,
                       .oom_fd = -1};
    json_t *lim = json_object_get(j, "limits");
    sb->lim =
        (struct local_cgroup_limits){.memory = json_integer_value(json_object_get(lim, "memory")),
                                     .cpus = json_number_value(json_object_get(lim, "cpus")),
                                     .pids = json_integer_value(json_object_get(lim, "pids"))};
    json_decref(j);
    sb->next = L->sbs;
    L->sbs = sb;
    if (sb->pid > 0 && sb_alive(sb)) {
        sb_watch(sb); /* reattached */
        sb->cg = local_cgroup_open(L->scope, sb->id);
        sb_oom_watch(sb);
    } else if (sb->pid > 0) {
        sb_kill_namespace(sb);
        sb_uncgroup(sb);
        sb->pid = 0;
        sb->error = "it ended while the engine was away (exit code unknown)";
        sb->exit_code = -1;
        sb_save(L, sb);
    }
    return sb;
}

/* ---- the driver itself: never the engine's driver, only a session's ---- */

static int ld_open(struct engine *eng, const char *address, char **err)
{
    (void)eng;
    (void)address;
    *err = strdup("the local driver is a session backend (\"backend\": \"local\", enabled in the "
                  "config's [local] section), not the engine's driver");
    return -1;
}

static void ld_close(struct engine *eng)
{
    (void)eng;
}

static const char *ld_address(const struct engine *eng)
{
    (void)eng;
    return "the local backend";
}

static const char *ld_hint(const struct engine *eng)
{
    (void)eng;
    return "see the engine's log";
}

static const char *ld_api_version(const struct engine *eng)
{
    (void)eng;
    return NULL;
}

static bool ld_is_local(const struct engine *eng)
{
    (void)eng;
    return true;
}

static int ld_ok(struct engine *eng, sandbox_done_fn fn, void *ud)
{
    return reply_later(eng, fn, ud, 200, json_object(), NULL);
}

/* ---- sandboxes ---- */

static const char *mount_source(json_t *mounts, const char *target)
{
    size_t i;
    json_t *m;
    json_array_foreach(mounts, i, m)
    {
        const char *t = json_string_value(json_object_get(m, "Target"));
        if (t && strcmp(t, target) == 0)
            return json_string_value(json_object_get(m, "Source"));
    }
    return NULL;
}

/* What the create body asks that this driver cannot give: NULL, or why. */
static const char *create_refusal(json_t *body)
{
    json_t *host = json_object_get(body, "HostConfig");
    const char *net = json_string_value(json_object_get(host, "NetworkMode"));
    if (net && strcmp(net, "none") != 0)
        return "the local backend has no network: \"network\" must be \"none\"";
    if (json_object_size(json_object_get(host, "PortBindings")))
        return "the local backend has no network: no \"ports\"";
    if (json_object_get(host, "Runtime") || json_object_get(host, "DeviceRequests"))
        return "the local backend has no container runtime nor devices";
    if (json_array_size(json_object_get(host, "Mounts")) != 2)
        return "the local backend mounts nothing but its own workspace";
    return NULL;
}

static int ld_create(struct engine *eng, const char *name, json_t *body, sandbox_done_fn fn,
                     void *ud)
{
    (void)name;
    struct local *L = lc(eng);
    json_t *labels = json_object_get(body, "Labels");
    const char *sid = json_string_value(json_object_get(labels, "paddock.session"));
    json_t *mounts = json_object_get(json_object_get(body, "HostConfig"), "Mounts");
    const char *sock = mount_source(mounts, "/run/paddock");
    const char *exe = mount_source(mounts, "/opt/paddock/paddock-executor");
    if (!L || !L->enabled)
        return reply_later(eng, fn, ud, 400, NULL, "the local backend is off ([local] enabled)");
    const char *why = create_refusal(body);
    if (why || !sid || !sock || !exe)
        return reply_later(eng, fn, ud, 400, NULL, why ? why : "incomplete create body");
    struct lsb *sb = calloc(1, sizeof(*sb));
    if (!sb)
        return -1;
    *sb = (struct lsb){.eng = eng,
                       .id = util_strdupf(LOCAL_ID_PREFIX "%s", sid),
                       .session_id = strdup(sid),
                       .sock_dir = strdup(sock),
                       .ws = local_workspace(eng, sid),
                       .exe = strdup(exe),
                       .env = json_deep_copy(json_object_get(body, "Env")),
                       .labels = json_deep_copy(labels),
                       .pidfd = -1,
                       .oom_fd = -1};
    json_t *host = json_object_get(body, "HostConfig");
    sb->lim = (struct local_cgroup_limits){
        .memory = json_integer_value(json_object_get(host, "Memory")),
        .cpus = (double)json_integer_value(json_object_get(host, "NanoCpus")) / 1e9,
        .pids = json_integer_value(json_object_get(host, "PidsLimit"))};
    if (!sb->id || !sb->session_id || !sb->sock_dir || !sb->ws || !sb->exe) {
        sb_free(sb);
        return -1;
    }
    /* The workspace and the socket's directory are the user's; nothing else is. */
    char err[300] = "";
    if (mkdir(sb->ws, 0700) < 0 && errno != EEXIST)
        snprintf(err, sizeof(err), "cannot make the workspace %s: %s", sb->ws, strerror(errno));
    else if (chown(sb->ws, L->uid, L->gid) < 0 || chown(sb->sock_dir, L->uid, L->gid) < 0)
        snprintf(err, sizeof(err), "cannot give the workspace to %s: %s", L->user, strerror(errno));
    if (err[0]) {
        sb_free(sb);
        return reply_later(eng, fn, ud, 500, NULL, err);
    }
    sb->next = L->sbs;
    L->sbs = sb;
    sb_save(L, sb);
    return reply_later(eng, fn, ud, 201, json_pack("{s:s}", "Id", sb->id), NULL);
}

/* The argv that runs the executor: bubblewrap's, or the executor's alone (unsandboxed). */
static char **start_argv(const struct local *L, const struct lsb *sb)
{
    static const char *const bw[] = {"--unshare-pid",
                                     "--unshare-net",
                                     "--unshare-ipc",
                                     "--unshare-uts",
                                     "--unshare-cgroup-try",
                                     "--new-session",
                                     "--ro-bind",
                                     "/",
                                     "/",
                                     "--dev",
                                     "/dev",
                                     "--proc",
                                     "/proc",
                                     "--tmpfs",
                                     "/tmp",
                                     "--tmpfs",
                                     "/run",
                                     "--hostname",
                                     "paddock-local"};
    size_t nbw = sizeof(bw) / sizeof(bw[0]);
    char **v = calloc(nbw + 32, sizeof(char *));
    size_t n = 0;
    if (!v)
        return NULL;
    char *sock = NULL;
    if (L->bwrap) {
        v[n++] = strdup(L->bwrap);
        for (size_t i = 0; i < nbw; i++)
            v[n++] = strdup(bw[i]);
        /* By fds the engine opened (3, 4, 5 in the child): the user need not reach the
         * engine's directories, and a path swapped meanwhile is not what gets bound. */
        const char *more[] = {"--bind-fd",
                              "3",
                              LOCAL_SOCK_DIR,
                              "--ro-bind-fd",
                              "5",
                              LOCAL_EXECUTOR,
                              "--bind-fd",
                              "4",
                              sb->ws,
                              "--chdir",
                              sb->ws,
                              "--seccomp",
                              STR(LOCAL_SECCOMP_FD),
                              LOCAL_EXECUTOR};
        for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
            v[n++] = strdup(more[i]);
        sock = strdup(LOCAL_SOCK_DIR "/executor.sock");
    } else {
        v[n++] = strdup(sb->exe);
        sock = util_strdupf("%s/executor.sock", sb->sock_dir);
    }
    /* Unsandboxed, /tmp is the host's: the home goes in the workspace instead. */
    const char *args[] = {"--socket",  sock,     "--working-dir",
                          sb->ws,      "--home", L->bwrap ? "/tmp/home" : sb->ws,
                          "--plugins", "ipython"};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
        v[n++] = args[i] ? strdup(args[i]) : NULL;
    /* and the long commands' files in the socket's directory, which the engine removes on
     * delete: a killed executor cannot leave them in the host's /tmp. */
    if (!L->bwrap) {
        v[n++] = strdup("--command-dir");
        v[n++] = strdup(sb->sock_dir);
    }
    free(sock);
    for (size_t i = 0; i < n; i++)
        if (!v[i]) {
            for (size_t j = 0; j < n; j++)
                free(v[j]);
            free(v);
            return NULL;
        }
    return v;
}

static void argv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* In a forked child: no signal blocked (the engine blocks some for its signalfd), and every
 * signal back to its default. An ignored one (SIGPIPE by the engine,
 * SIGHUP when the engine runs under nohup) would survive execve, and a terminal's shell that
 * ignores SIGHUP outlives its hang-up. Async-signal-safe (sigaction only). */
static void child_signals_default(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)sigaction(sig, &dfl, NULL);
}

/* In a forked child: into each of the session's cgroups (the files of
 * local_cgroup_join_files). -1 when one refuses. Async-signal-safe. */
static int child_join_cgroup(const char *const *join)
{
    for (size_t i = 0; join[i]; i++) {
        int cfd = open(join[i], O_WRONLY | O_CLOEXEC);
        bool ok = cfd >= 0 && write(cfd, "0", 1) == 1;
        if (cfd >= 0)
            close(cfd);
        if (!ok)
            return -1;
    }
    return 0;
}

static int ld_start(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct local *L = lc(eng);
    struct lsb *sb = sb_find(eng, id);
    if (!sb)
        return reply_later(eng, fn, ud, 404, NULL, "no such local sandbox");
    if (sb_alive(sb))
        return reply_later(eng, fn, ud, 304, NULL, NULL);
    /* The limits hold or it does not start: a session must not run unlimited unawares. */
    char *why = NULL;
    reap_cancel(eng, sb->id);
    local_cgroup_free(sb->cg);
    sb->cg = local_cgroup_make(L->scope, sb->id, &sb->lim, &why);
    if (!sb->cg) {
        char *msg = util_strdupf("the local backend cannot enforce the session's limits "
                                 "(memory, cpus, pids): %s",
                                 why ? why : "out of memory");
        free(why);
        int rc = reply_later(eng, fn, ud, 500, NULL, msg);
        free(msg);
        return rc;
    }
    const char *const *join = local_cgroup_join_files(sb->cg);
    /* bubblewrap reads the program from this descriptor before it runs the executor. */
    int sfd = memfd_create("paddock-seccomp", MFD_CLOEXEC);
    if (sfd < 0 || write(sfd, L->bpf, L->bpf_len) != (ssize_t)L->bpf_len ||
        lseek(sfd, 0, SEEK_SET) < 0) {
        char msg[200];
        snprintf(msg, sizeof(msg), "cannot pass the seccomp filter: %s", strerror(errno));
        if (sfd >= 0)
            close(sfd);
        return reply_later(eng, fn, ud, 500, NULL, msg);
    }
    char **argv = start_argv(L, sb);
    size_t ne = json_array_size(sb->env);
    char **envp = calloc(ne + 5, sizeof(char *));
    char *log = sb_file(L, sb->id, "log");
    if (!argv || !envp || !log) {
        argv_free(argv);
        free(envp);
        free(log);
        close(sfd);
        return -1;
    }
    size_t k = 0;
    envp[k++] = strdup("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    envp[k++] = util_strdupf("USER=%s", L->user);
    envp[k++] = util_strdupf("LOGNAME=%s", L->user);
    for (size_t i = 0; i < ne; i++)
        envp[k++] = strdup(json_string_value(json_array_get(sb->env, i)));
    int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    free(log);
    pid_t pid = logfd < 0 ? -1 : fork();
    if (pid == 0) {
        /* The child: only async-signal-safe calls until exec. */
        child_signals_default();
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
            _exit(126);
        /* Into the session's cgroup before anything of the sandbox runs. */
        if (child_join_cgroup(join) < 0) {
            static const char m[] = "paddock: cannot join the session's cgroup\n";
            (void)!write(2, m, sizeof(m) - 1);
            _exit(125);
        }
        if (L->bwrap &&
            (sfd == LOCAL_SECCOMP_FD ? fcntl(sfd, F_SETFD, 0) : dup2(sfd, LOCAL_SECCOMP_FD)) < 0)
            _exit(126);
        syscall(SYS_close_range, 3, LOCAL_SECCOMP_FD - 1, 0);
        syscall(SYS_close_range, L->bwrap ? LOCAL_SECCOMP_FD + 1 : LOCAL_SECCOMP_FD, ~0U, 0);
        /* 3, 4, 5: what start_argv binds (opened as root, without following a link). */
        if (open(sb->sock_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW) != 3 ||
            open(sb->ws, O_PATH | O_DIRECTORY | O_NOFOLLOW) != 4 || open(sb->exe, O_PATH) != 5 ||
            chdir(sb->ws) < 0)
            _exit(126);
        if (setsid() < 0 || setgroups(0, NULL) < 0 || setgid(L->gid) < 0 || setuid(L->uid) < 0)
            _exit(126);
        /* Unsandboxed, the engine loads the filter itself (bubblewrap does otherwise). */
        if (!L->bwrap && local_seccomp_load(L->bpf, L->bpf_len) < 0)
            _exit(126);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    int err = errno;
    if (logfd >= 0)
        close(logfd);
    close(sfd);
    argv_free(argv);
    argv_free(envp);
    if (pid < 0) {
        char msg[200];
        snprintf(msg, sizeof(msg), "cannot start the local sandbox: %s", strerror(err));
        sb_uncgroup(sb);
        return reply_later(eng, fn, ud, 500, NULL, msg);
    }
    sb->pid = pid;
    sb->child = true;
    sb->paused = false;
    sb->frozen = false;
    sb->oom_killed = false;
    sb->oom_told = 0;
    sb->exit_code = 0;
    sb->error = NULL;
    sb_oom_watch(sb);
    /* Read at once: the child has not exec'd yet, but its start time is already its own. */
    sb->start = proc_start_time(pid);
    sb_watch(sb);
    sb_save(L, sb);
    return reply_later(eng, fn, ud, 204, NULL, NULL);
}

/* Poll until the sandbox is down (its pidfd callback ran), then lt->then. */
static void down_poll(void *ud)
{
    struct later *lt = ud;
    if (lt->sb->pid > 0 && sb_alive(lt->sb) && loop_now_ms() < lt->deadline) {
        if (loop_timer_add(lt->eng->loop, LOCAL_POLL_MS, down_poll, lt))
            return;
    }
    if (lt->sb->pid > 0 && !sb_alive(lt->sb))
        sb_ended(lt->sb); /* gone before its pidfd said so */
    lt->then(lt);
}

static int wait_down(struct engine *eng, struct lsb *sb, long ms, void (*then)(struct later *),
                     sandbox_done_fn fn, void *ud)
{
    struct later *lt = calloc(1, sizeof(*lt));
    if (!lt)
        return -1;
    *lt = (struct later){.eng = eng,
                         .fn = fn,
                         .ud = ud,
                         .sb = sb,
                         .deadline = loop_now_ms() + (double)ms,
                         .then = then};
    if (!loop_timer_add(eng->loop, 0, down_poll, lt)) {
        free(lt);
        return -1;
    }
    return 0;
}

static void stop_then(struct later *lt)
{
    lt->status = lt->sb->pid > 0 ? 500 : 204;
    lt->message = lt->status == 500 ? strdup("the sandbox's processes did not end") : NULL;
    later_fire(lt);
}

static void sb_kill(struct lsb *sb)
{
    if (sb->pid > 0 && sb_alive(sb)) {
        tree_signal(sb->pid, SIGKILL);
        tree_signal(sb->pid, SIGCONT);
    }
    sb_kill_namespace(sb);
    /* A cgroup v1 freezer holds SIGKILL until it thaws. */
    if (sb->frozen && sb->cg)
        local_cgroup_freeze(sb->cg, false);
}

static int ld_stop(struct engine *eng, const char *id, int timeout_s, sandbox_done_fn fn, void *ud)
{
    (void)timeout_s; /* the executor keeps nothing to flush: killed at once */
    struct lsb *sb = sb_find(eng, id);
    if (!sb)
        return reply_later(eng, fn, ud, 404, NULL, "no such local sandbox");
    if (!sb_alive(sb))
        return reply_later(eng, fn, ud, 304, NULL, NULL);
    sb_kill(sb);
    return wait_down(eng, sb, LOCAL_STOP_WAIT_MS, stop_then, fn, ud);
}

static int ld_pause_resume(struct engine *eng, const char *id, bool pause, sandbox_done_fn fn,
                           void *ud)
{
    struct lsb *sb = sb_find(eng, id);
    if (!sb)
        return reply_later(eng, fn, ud, 404, NULL, "no such local sandbox");
    if (!sb_alive(sb) || sb->paused == pause)
        return reply_later(eng, fn, ud, 409, NULL,
                           pause ? "the sandbox is not running" : "the sandbox is not paused");
    /* The cgroup freezer, as Docker pauses: every process of the sandbox, whatever it does with
     * SIGCONT, and the ones that left the process tree. SIGSTOP of the tree only where there is no
     * freezer (cgroup v1 without its hierarchy, a kernel before 5.2). The reply's message says
     * which, for the session's reason. */
    const char *how;
    if (pause) {
        sb->frozen = sb->cg && local_cgroup_freeze(sb->cg, true) == 0;
        if (!sb->frozen)
            tree_signal(sb->pid, SIGSTOP);
        how = sb->frozen ? "cgroup freezer" : "SIGSTOP: no cgroup freezer on this host";
    } else {
        if (sb->frozen && local_cgroup_freeze(sb->cg, false) < 0)
            return reply_later(eng, fn, ud, 500, NULL, "cannot thaw the sandbox's cgroup");
        if (!sb->frozen)
            tree_signal(sb->pid, SIGCONT);
        sb->frozen = false;
        how = "";
    }
    sb->paused = pause;
    sb_save(lc(eng), sb);
    return reply_later(eng, fn, ud, 204, NULL, how);
}

static int ld_pause(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    return ld_pause_resume(eng, id, true, fn, ud);
}

static int ld_resume(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    return ld_pause_resume(eng, id, false, fn, ud);
}

/* The processes are gone: remove what the engine made (workspace, state file, log). */
static void remove_then(struct later *lt)
{
    struct lsb *sb = lt->sb;
    struct local *L = lc(lt->eng);
    if (sb->pid > 0) {
        lt->status = 500;
        lt->message = strdup("the sandbox's processes did not end");
        later_fire(lt);
        return;
    }
    util_remove_tree(sb->ws);
    char *state = sb_file(L, sb->id, "json"), *log = sb_file(L, sb->id, "log");
    if (state)
        unlink(state);
    if (log)
        unlink(log);
    free(state);
    free(log);
    for (struct lsb **p = &L->sbs; *p; p = &(*p)->next)
        if (*p == sb) {
            *p = sb->next;
            break;
        }
    sb_free(sb);
    lt->status = 204;
    later_fire(lt);
}

static int ld_remove(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct lsb *sb = sb_find(eng, id);
    if (!sb)
        return reply_later(eng, fn, ud, 404, NULL, "no such local sandbox");
    sb_kill(sb);
    return wait_down(eng, sb, LOCAL_STOP_WAIT_MS, remove_then, fn, ud);
}

static int ld_rename(struct engine *eng, const char *id, const char *name, sandbox_done_fn fn,
                     void *ud)
{
    (void)id;
    (void)name;
    return reply_later(eng, fn, ud, 501, NULL, "renaming is " LOCAL_NOT_AVAILABLE);
}

static json_t *sb_inspect(const struct local *L, struct lsb *sb)
{
    bool running = sb_alive(sb);
    const char *status = running ? (sb->paused ? "paused" : "running") : "exited";
    /* GraphDriver's UpperDir is where the sandbox's writes go: the workspace here, which the
     * disk watchdog (disk.c) then measures against limits.disk. */
    return json_pack(
        "{s:s,s:{s:s,s:b,s:b,s:i,s:b,s:s,s:I},s:{s:O},s:{s:I},s:{s:{s:s}}}", "Id", sb->id, "State",
        "Status", status, "Running", running, "Paused", running && sb->paused, "ExitCode",
        sb->exit_code, "OOMKilled", !running && sb->oom_killed, "Error", sb->error ? sb->error : "",
        "Pid", (json_int_t)sb_ns_init(L, sb), "Config", "Labels", sb->labels, "HostConfig",
        "Memory", (json_int_t)sb->lim.memory, "GraphDriver", "Data", "UpperDir", sb->ws);
}

static int ld_inspect(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct lsb *sb = sb_find(eng, id);
    if (!sb)
        return reply_later(eng, fn, ud, 404, NULL, "no such local sandbox");
    return reply_later(eng, fn, ud, 200, sb_inspect(lc(eng), sb), NULL);
}

static void wait_then(struct later *lt)
{
    if (lt->sb->pid > 0) {
        lt->status = -1;
        lt->message = strdup("timed out");
    } else {
        lt->status = 200;
        lt->json = json_pack("{s:i}", "StatusCode", lt->sb->exit_code);
    }
    later_fire(lt);
}

static int ld_wait(struct engine *eng, const char *id, long timeout_ms, sandbox_done_fn fn,
                   void *ud)
{
    struct lsb *sb = sb_find(eng, id);
    if (!sb)
        return reply_later(eng, fn, ud, 404, NULL, "no such local sandbox");
    return wait_down(eng, sb, timeout_ms, wait_then, fn, ud);
}

/* label: "key" or "key=value" */
static bool labels_match(json_t *labels, const char *label)
{
    const char *eq = strchr(label, '=');
    char key[128];
    snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - label) : (int)strlen(label), label);
    const char *v = json_string_value(json_object_get(labels, key));
    return v && (!eq || strcmp(v, eq + 1) == 0);
}

static int ld_list(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud)
{
    json_t *a = json_array();
    for (struct lsb *sb = lc(eng) ? lc(eng)->sbs : NULL; sb; sb = sb->next)
        if (labels_match(sb->labels, label))
            json_array_append_new(a, json_pack("{s:s,s:[s],s:s,s:O}", "Id", sb->id, "Names", sb->id,
                                               "State", sb_alive(sb) ? "running" : "exited",
                                               "Labels", sb->labels));
    return reply_later(eng, fn, ud, 200, a, NULL);
}

static int ld_changes(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    (void)id;
    return reply_later(eng, fn, ud, 501, NULL,
                       "the container diff is " LOCAL_NOT_AVAILABLE
                       " (the system is the host's, read-only; only the workspace changes)");
}

/* The executor's own output (its log file), the last tail lines. */
static int ld_logs_tail(struct engine *eng, const char *id, int tail, sandbox_done_fn fn, void *ud)
{
    struct lsb *sb = sb_find(eng, id);
    char *path = sb ? sb_file(lc(eng), sb->id, "log") : NULL;
    FILE *f = path ? fopen(path, "re") : NULL;
    free(path);
    char buf[16384];
    size_t n = 0;
    if (f) {
        if (fseek(f, -(long)(sizeof(buf) - 1), SEEK_END) < 0)
            rewind(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    const char *p = buf + n;
    for (int lines = 0; p > buf && lines <= tail;)
        if (*--p == '\n' && p + 1 < buf + n)
            lines++;
    if (*p == '\n')
        p++;
    return reply_later(eng, fn, ud, sb ? 200 : 404, NULL, p);
}

static struct sandbox_stream *ld_no_stream(struct engine *eng, const char *id,
                                           sandbox_item_fn on_item, sandbox_done_fn on_end,
                                           void *ud)
{
    (void)eng;
    (void)id;
    (void)on_item;
    (void)on_end;
    (void)ud;
    return NULL;
}

static struct sandbox_stream *ld_logs_follow(struct engine *eng, const char *id, int tail,
                                             int timestamps, sandbox_item_fn on_item,
                                             sandbox_done_fn on_end, void *ud)
{
    (void)tail;
    (void)timestamps;
    return ld_no_stream(eng, id, on_item, on_end, ud);
}

/* Stats: the sandbox's cgroup read about once a second, in the shape of Docker's stats object
 * (what stats_compute reads), the host's CPU time from /proc/stat as Docker's
 * system_cpu_usage. The only stream this driver opens. */
struct sandbox_stream {
    struct engine *eng;
    char *id;
    sandbox_item_fn on_item;
    sandbox_done_fn on_end;
    void *ud;
    struct loop_timer *timer;
    int64_t pre_cpu, pre_sys;
};

/* Every CPU's time since boot, in ns; -1 when unreadable. */
static int64_t host_cpu_ns(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return -1;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (n < 4 || hz <= 0)
        return -1;
    unsigned long long ticks = 0;
    for (int i = 0; i < n; i++)
        ticks += v[i];
    return (int64_t)(ticks * (1000000000ULL / (unsigned long long)hz));
}

static void stats_stream_free(struct sandbox_stream *st)
{
    if (st->timer)
        loop_timer_cancel(st->eng->loop, st->timer);
    free(st->id);
    free(st);
}

static void stats_tick(void *ud)
{
    struct sandbox_stream *st = ud;
    st->timer = NULL;
    struct lsb *sb = sb_find(st->eng, st->id);
    struct local_cgroup_usage u;
    if (!sb || !sb_alive(sb) || !sb->cg || local_cgroup_usage(sb->cg, &u) < 0) {
        struct sandbox_reply r = {.status = -1, .message = "the local sandbox is not running"};
        sandbox_done_fn on_end = st->on_end;
        void *ud2 = st->ud;
        stats_stream_free(st);
        on_end(&r, ud2);
        return;
    }
    int64_t sys = host_cpu_ns();
    json_t *j = json_pack("{s:{s:{s:I},s:I,s:I},s:{s:{s:I},s:I},s:{s:I,s:I},s:{s:I}}", "cpu_stats",
                          "cpu_usage", "total_usage", (json_int_t)u.cpu_ns, "system_cpu_usage",
                          (json_int_t)sys, "online_cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN),
                          "precpu_stats", "cpu_usage", "total_usage", (json_int_t)st->pre_cpu,
                          "system_cpu_usage", (json_int_t)st->pre_sys, "memory_stats", "usage",
                          (json_int_t)u.memory, "limit", (json_int_t)u.memory_limit, "pids_stats",
                          "current", (json_int_t)u.pids);
    st->pre_cpu = u.cpu_ns;
    st->pre_sys = sys;
    st->timer = loop_timer_add(st->eng->loop, LOCAL_STATS_MS, stats_tick, st);
    struct sandbox_item it = {.json = j};
    int rc = j ? st->on_item(&it, st->ud) : 0;
    json_decref(j);
    if (rc < 0) {
        struct sandbox_reply r = {.status = -1, .message = "closed"};
        sandbox_done_fn on_end = st->on_end;
        void *ud2 = st->ud;
        stats_stream_free(st);
        on_end(&r, ud2);
    }
}

static struct sandbox_stream *ld_stats_follow(struct engine *eng, const char *id,
                                              sandbox_item_fn on_item, sandbox_done_fn on_end,
                                              void *ud)
{
    struct lsb *sb = sb_find(eng, id);
    if (!sb || !sb->cg)
        return NULL;
    struct sandbox_stream *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    *st = (struct sandbox_stream){
        .eng = eng, .id = strdup(id), .on_item = on_item, .on_end = on_end, .ud = ud};
    if (st->id)
        st->timer = loop_timer_add(eng->loop, 0, stats_tick, st);
    if (!st->timer) {
        stats_stream_free(st);
        return NULL;
    }
    return st;
}

static void ld_stream_close(struct engine *eng, struct sandbox_stream *s)
{
    (void)eng;
    if (s)
        stats_stream_free(s);
}

static int ld_volume_none(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud)
{
    (void)name;
    return reply_later(eng, fn, ud, 404, NULL, "the local backend has no volumes");
}

static int ld_volume_list(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud)
{
    (void)label;
    return reply_later(eng, fn, ud, 200, json_pack("{s:[]}", "Volumes"), NULL);
}

/* ---- processes in a sandbox (operator terminals) ----
 * The engine (root) forks a child that joins the sandbox's cgroup and its namespaces by the
 * namespace's first process (mount, PID, network, IPC, UTS, cgroup: what bubblewrap made),
 * becomes the sandbox's user, loads the same seccomp filter and runs the command in the
 * workspace: the shell sees what the agent sees and may do what the agent may. Joining a PID
 * namespace takes effect for children, so the child forks once more and reports the shell's
 * pid, then waits for it and exits with its status. */

struct sandbox_exec {
    struct sandbox_exec *next;
    struct engine *eng;
    char id[48];
    int in, out, err; /* the PTY master (in == out, err -1), or pipes; -1 when closed */
    bool tty, out_paused, want_drain, closed, ended;
    int busy;         /* inside a callback of this handle: not freed until it returns */
    pid_t pid, shell; /* the child (its status is the shell's), the shell */
    int pidfd, exit_code;
    sandbox_output_fn on_output;
    sandbox_exit_fn on_exit;
    void (*on_drain)(void *ud);
    void *ud;
};

static void exec_unlist(struct sandbox_exec *x)
{
    for (struct sandbox_exec **p = &lc(x->eng)->execs; *p; p = &(*p)->next)
        if (*p == x) {
            *p = x->next;
            return;
        }
}

/* A PTY's master is both in and out (registered once). */
static void exec_fd_close(struct sandbox_exec *x, int *fd)
{
    if (*fd < 0)
        return;
    loop_del_fd(x->eng->loop, *fd);
    close(*fd);
    if (x->tty)
        x->in = x->out = -1;
    *fd = -1;
}

static void exec_free(struct sandbox_exec *x)
{
    exec_unlist(x);
    if (x->pidfd >= 0) {
        loop_del_fd(x->eng->loop, x->pidfd);
        close(x->pidfd);
    }
    if (x->tty) {
        exec_fd_close(x, &x->out);
    } else {
        exec_fd_close(x, &x->in);
        exec_fd_close(x, &x->out);
    }
    exec_fd_close(x, &x->err);
    free(x);
}

static uint32_t exec_events(const struct sandbox_exec *x, int fd)
{
    uint32_t ev = 0;
    if (fd == x->out && !x->out_paused)
        ev |= EPOLLIN;
    if (fd == x->err && !x->out_paused)
        ev |= EPOLLIN;
    if (fd == x->in && x->want_drain)
        ev |= EPOLLOUT;
    return ev;
}

/* Read what fd has; 0 on its end, 1 when more may come. */
static int exec_read(struct sandbox_exec *x, int *fd, int which)
{
    char buf[16384];
    for (int rounds = 0; rounds < 16 && *fd >= 0 && !x->out_paused; rounds++) {
        ssize_t n = read(*fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 1;
        if (n <= 0) { /* EIO: the PTY's other side is closed */
            exec_fd_close(x, fd);
            return 0;
        }
        if (!x->closed && x->on_output(buf, (size_t)n, which, x->ud) < 0) {
            x->out_paused = true;
            if (*fd >= 0)
                loop_mod_fd(x->eng->loop, *fd, exec_events(x, *fd));
        }
    }
    return 1;
}

/* Ended and read out (or no longer followed): on_exit once, then the handle goes. */
static void exec_finish(struct sandbox_exec *x)
{
    if (x->busy || !x->ended || (!x->closed && (x->out >= 0 || x->err >= 0)))
        return;
    if (!x->closed) {
        x->closed = true;
        x->on_exit(x->exit_code, NULL, x->ud);
    }
    exec_free(x);
}

static void exec_on_fd(int fd, uint32_t events, void *ud)
{
    struct sandbox_exec *x = ud;
    x->busy++;
    if ((events & EPOLLOUT) && fd == x->in && x->want_drain) {
        x->want_drain = false;
        loop_mod_fd(x->eng->loop, fd, exec_events(x, fd));
        if (x->on_drain && !x->closed)
            x->on_drain(x->ud);
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        if (fd == x->out)
            exec_read(x, &x->out, 1);
        else if (fd == x->err)
            exec_read(x, &x->err, 2);
        else if (fd == x->in)
            exec_fd_close(x, &x->in);
    }
    x->busy--;
    exec_finish(x);
}

/* The child ended: its status is the shell's. What is still buffered is read out first. */
static void exec_on_exit(int fd, uint32_t events, void *ud)
{
    (void)fd;
    (void)events;
    struct sandbox_exec *x = ud;
    loop_del_fd(x->eng->loop, x->pidfd);
    close(x->pidfd);
    x->pidfd = -1;
    int st;
    if (waitpid(x->pid, &st, 0) == x->pid)
        x->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    x->ended = true;
    x->out_paused = false;
    /* What is left in the PTY or the pipes is read now; a writer that lingers (a background
     * process of the shell) is not waited for. */
    x->busy++;
    if (x->out >= 0 && exec_read(x, &x->out, 1) > 0)
        exec_fd_close(x, &x->out);
    if (x->err >= 0 && exec_read(x, &x->err, 2) > 0)
        exec_fd_close(x, &x->err);
    x->busy--;
    exec_finish(x);
}

/* The namespaces of the sandbox's first process, opened now (and checked to be its own, not a
 * reused pid's): -1 each when unsandboxed. */
static const char *const ns_names[] = {"cgroup", "ipc", "uts", "net", "pid", "mnt"};
#define NS_N (sizeof(ns_names) / sizeof(ns_names[0]))

static int ns_open(const struct local *L, struct lsb *sb, int fds[NS_N])
{
    for (size_t i = 0; i < NS_N; i++)
        fds[i] = -1;
    if (!L->bwrap)
        return 0;
    pid_t init = sb_ns_init(L, sb);
    if (init <= 0)
        return -1;
    for (size_t i = 0; i < NS_N; i++) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)init, ns_names[i]);
        if ((fds[i] = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            return -1;
    }
    return proc_start_time(init) == sb->init_start ? 0 : -1;
}

static void fds_close(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The child: only async-signal-safe calls. Writes the shell's pid to report, or fails. */
static void exec_child(const struct local *L, const struct lsb *sb, int nsfd[NS_N], int slave,
                       int pin[2], int pout[2], int perr[2], int report, char **argv, char **envp,
                       bool tty)
{
    child_signals_default();
    if (child_join_cgroup(local_cgroup_join_files(sb->cg)) < 0)
        _exit(125);
    for (size_t i = 0; i < NS_N; i++)
        if (nsfd[i] >= 0 && setns(nsfd[i], 0) < 0)
            _exit(125);
    pid_t shell = fork();
    if (shell < 0)
        _exit(125);
    if (shell > 0) {
        (void)!write(report, &shell, sizeof(shell));
        /* It keeps nothing open: the shell's stdin must end when the engine closes it. */
        syscall(SYS_close_range, 0, ~0U, 0);
        int st;
        while (waitpid(shell, &st, 0) < 0)
            if (errno != EINTR)
                _exit(125);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    }
    close(report);
    if (setsid() < 0)
        _exit(126);
    if (tty) {
        if (ioctl(slave, TIOCSCTTY, 0) < 0 || dup2(slave, 0) < 0 || dup2(slave, 1) < 0 ||
            dup2(slave, 2) < 0)
            _exit(126);
    } else if (dup2(pin[0], 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0) {
        _exit(126);
    }
    syscall(SYS_close_range, 3, ~0U, 0);
    if (chdir(sb->ws) < 0 || setgroups(0, NULL) < 0 || setgid(L->gid) < 0 || setuid(L->uid) < 0 ||
        local_seccomp_load(L->bpf, L->bpf_len) < 0)
        _exit(126);
    execve(argv[0], argv, envp);
    _exit(127);
}

static char **exec_env(const struct local *L, const struct lsb *sb,
                       const struct sandbox_exec_opts *o)
{
    size_t n = 0;
    while (o->env && o->env[n])
        n++;
    char **v = calloc(n + 6, sizeof(char *));
    if (!v)
        return NULL;
    size_t k = 0;
    v[k++] = strdup("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    v[k++] = util_strdupf("USER=%s", L->user);
    v[k++] = util_strdupf("LOGNAME=%s", L->user);
    v[k++] = util_strdupf("HOME=%s", L->bwrap ? "/tmp/home" : sb->ws);
    for (size_t i = 0; i < n; i++)
        v[k++] = strdup(o->env[i]);
    for (size_t i = 0; i < k; i++)
        if (!v[i]) {
            argv_free(v);
            return NULL;
        }
    return v;
}

static struct sandbox_exec *ld_exec_open(struct engine *eng, const char *id,
                                         const struct sandbox_exec_opts *opts,
                                         sandbox_output_fn on_output, sandbox_exit_fn on_exit,
                                         void *ud)
{
    struct local *L = lc(eng);
    struct lsb *sb = sb_find(eng, id);
    if (!L || !sb || !sb_alive(sb) || sb->paused || !sb->cg)
        return NULL;
    size_t argc = 0;
    while (opts->cmd[argc])
        argc++;
    char **argv = calloc(argc + 1, sizeof(char *)), **envp = exec_env(L, sb, opts);
    struct sandbox_exec *x = calloc(1, sizeof(*x));
    int nsfd[NS_N], master = -1, slave = -1, report[2] = {-1, -1};
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
    bool ok = argv && envp && x && ns_open(L, sb, nsfd) == 0 && pipe2(report, O_CLOEXEC) == 0;
    for (size_t i = 0; ok && i < argc; i++)
        ok = (argv[i] = strdup(opts->cmd[i])) != NULL;
    if (ok && opts->tty) {
        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        ok = master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0;
        char *name = ok ? ptsname(master) : NULL;
        ok = name && (slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) >= 0;
        struct winsize ws = {.ws_row = (unsigned short)(opts->rows > 0 ? opts->rows : 24),
                             .ws_col = (unsigned short)(opts->cols > 0 ? opts->cols : 80)};
        ok = ok && ioctl(master, TIOCSWINSZ, &ws) == 0;
    } else if (ok) {
        ok = pipe2(pin, O_CLOEXEC) == 0 && pipe2(pout, O_CLOEXEC) == 0 &&
             pipe2(perr, O_CLOEXEC) == 0;
    }
    pid_t pid = ok ? fork() : -1;
    if (pid == 0)
        exec_child(L, sb, nsfd, slave, pin, pout, perr, report[1], argv, envp, opts->tty);
    fds_close(nsfd, NS_N);
    argv_free(argv);
    argv_free(envp);
    int child_fds[] = {slave, pin[0], pout[1], perr[1], report[1]};
    fds_close(child_fds, sizeof(child_fds) / sizeof(child_fds[0]));
    pid_t shell = 0;
    if (pid > 0 && read(report[0], &shell, sizeof(shell)) != sizeof(shell))
        shell = 0; /* it failed before the shell: its exit code says so */
    if (report[0] >= 0)
        close(report[0]);
    if (pid < 0) {
        int rest[] = {master, pin[1], pout[0], perr[0]};
        fds_close(rest, sizeof(rest) / sizeof(rest[0]));
        free(x);
        return NULL;
    }
    *x = (struct sandbox_exec){.eng = eng,
                               .in = opts->tty ? master : pin[1],
                               .out = opts->tty ? master : pout[0],
                               .err = opts->tty ? -1 : perr[0],
                               .tty = opts->tty,
                               .pid = pid,
                               .shell = shell,
                               .pidfd = (int)syscall(SYS_pidfd_open, pid, 0),
                               .on_output = on_output,
                               .on_exit = on_exit,
                               .on_drain = opts->on_drain,
                               .ud = ud};
    snprintf(x->id, sizeof(x->id), "local-exec-%lu", ++L->exec_serial);
    int fds[] = {x->out, x->err, x->tty ? -1 : x->in};
    for (size_t i = 0; i < 3; i++)
        if (fds[i] >= 0) {
            fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
            loop_add_fd(eng->loop, fds[i], exec_events(x, fds[i]), exec_on_fd, x);
        }
    if (x->pidfd >= 0)
        loop_add_fd(eng->loop, x->pidfd, EPOLLIN, exec_on_exit, x);
    x->next = L->execs;
    L->execs = x;
    return x;
}

static long ld_exec_write(struct sandbox_exec *x, const void *data, size_t len)
{
    if (x->in < 0)
        return -1;
    ssize_t n = write(x->in, data, len);
    if (n < 0 && errno != EAGAIN && errno != EINTR)
        return -1;
    if (n < 0)
        n = 0;
    if ((size_t)n < len && !x->want_drain) {
        x->want_drain = true;
        loop_mod_fd(x->eng->loop, x->in, exec_events(x, x->in));
    }
    return (long)n;
}

static int ld_exec_close_input(struct sandbox_exec *x)
{
    if (x->tty)
        return -1; /* a PTY has no half-close */
    exec_fd_close(x, &x->in);
    return 0;
}

static int ld_exec_resize(struct sandbox_exec *x, int rows, int cols, sandbox_done_fn fn, void *ud)
{
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    if (!x->tty || x->out < 0 || ioctl(x->out, TIOCSWINSZ, &ws) < 0)
        return -1;
    return fn ? reply_later(x->eng, fn, ud, 200, NULL, NULL) : 0;
}

static void ld_exec_resume_output(struct sandbox_exec *x)
{
    if (!x->out_paused)
        return;
    x->out_paused = false;
    if (x->out >= 0)
        loop_mod_fd(x->eng->loop, x->out, exec_events(x, x->out));
    if (x->err >= 0)
        loop_mod_fd(x->eng->loop, x->err, exec_events(x, x->err));
}

static const char *ld_exec_id(const struct sandbox_exec *x)
{
    return x->id;
}

/* Stop following: the process stays until it ends (its pidfd still reaps it, exec_inspect still
 * finds it; the caller hangs it up), its output read and dropped meanwhile. */
static void ld_exec_close(struct sandbox_exec *x)
{
    x->closed = true;
    x->on_drain = NULL;
    ld_exec_resume_output(x);
    exec_finish(x);
}

static int ld_exec_inspect(struct engine *eng, const char *exec_id, sandbox_done_fn fn, void *ud)
{
    for (struct sandbox_exec *x = lc(eng) ? lc(eng)->execs : NULL; x; x = x->next)
        if (strcmp(x->id, exec_id) == 0)
            return reply_later(eng, fn, ud, 200,
                               json_pack("{s:b,s:I,s:i}", "Running", !x->ended, "Pid",
                                         (json_int_t)x->shell, "ExitCode", x->exit_code),
                               NULL);
    return reply_later(eng, fn, ud, 404, NULL, "no such process");
}

static int ld_image_inspect(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud)
{
    (void)name;
    return reply_later(eng, fn, ud, 404, NULL, "images are " LOCAL_NOT_AVAILABLE);
}

static int ld_image_pull(struct engine *eng, const char *ref, const char *platform, long timeout_ms,
                         sandbox_progress_fn on_progress, sandbox_done_fn fn, void *ud)
{
    (void)ref;
    (void)platform;
    (void)timeout_ms;
    (void)on_progress;
    return reply_later(eng, fn, ud, 501, NULL, "images are " LOCAL_NOT_AVAILABLE);
}

static int ld_image_build(struct engine *eng, const char *tag, json_t *labels, int nocache,
                          const char *platform, const void *context, size_t len, long timeout_ms,
                          sandbox_progress_fn on_progress, sandbox_done_fn fn, void *ud)
{
    (void)tag;
    (void)labels;
    (void)nocache;
    (void)platform;
    (void)context;
    (void)len;
    (void)timeout_ms;
    (void)on_progress;
    return reply_later(eng, fn, ud, 501, NULL, "images are " LOCAL_NOT_AVAILABLE);
}

static int ld_image_tag(struct engine *eng, const char *name, const char *ref, sandbox_done_fn fn,
                        void *ud)
{
    (void)name;
    (void)ref;
    return reply_later(eng, fn, ud, 501, NULL, "images are " LOCAL_NOT_AVAILABLE);
}

static int ld_image_list(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud)
{
    (void)label;
    return reply_later(eng, fn, ud, 501, NULL, "images are " LOCAL_NOT_AVAILABLE);
}

static int ld_image_remove(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud)
{
    (void)name;
    return reply_later(eng, fn, ud, 501, NULL, "images are " LOCAL_NOT_AVAILABLE);
}

/* ---- the executor channel ---- */

static bool ld_executor_ready(struct session *s)
{
    struct lsb *sb = s->container_id ? sb_find(s->eng, s->container_id) : NULL;
    if (!sb || sb->paused)
        return false;
    if (s->exec_init_pid <= 0)
        s->exec_init_pid = (long)sb_ns_init(lc(s->eng), sb);
    struct stat st; /* the sandbox can write the socket's directory: a link is not followed */
    return s->exec_init_pid > 0 && lstat(s->exec_sock, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The server of the socket must run the engine's executor in the sandbox's PID namespace, as
 * with Docker (driver_docker.c): the user in the sandbox can replace the socket. */
static int ld_executor_check(int fd, const char *arg, char *err, size_t errlen)
{
    char *end = NULL;
    long init = strtol(arg, &end, 10);
    if (init <= 0 || !end || *end != ' ' || !end[1]) {
        snprintf(err, errlen, "the local sandbox's first process is not known");
        return -2;
    }
    char why[400];
    int rc = unix_peer_check(fd, end + 1, (pid_t)init, why, sizeof(why));
    if (rc == -1)
        snprintf(err, errlen,
                 "refused the executor's socket: %s; nothing was sent to it (something in the "
                 "sandbox replaced the socket)",
                 why);
    else if (rc < 0)
        snprintf(err, errlen, "%s", why);
    return rc;
}

struct ld_call {
    struct session *s;
    http_done_fn fn;
    http_data_fn on_data;
    void *ud;
};

static int ld_executor_data(const char *data, size_t len, void *ud)
{
    struct ld_call *c = ud;
    return c->on_data(data, len, c->ud);
}

static void ld_executor_done(const struct http_result *r, void *ud)
{
    struct ld_call c = *(struct ld_call *)ud;
    free(ud);
    if (r->peer_refused && !c.s->unlinked)
        session_channel_refused(c.s, r->error);
    c.fn(r, c.ud);
    session_release(c.s);
}

static int ld_executor_request(struct session *s, const struct http_request *req, http_done_fn fn,
                               void *ud)
{
    struct lsb *sb = s->container_id ? sb_find(s->eng, s->container_id) : NULL;
    if (!sb)
        return -1;
    if (s->exec_init_pid <= 0)
        s->exec_init_pid = (long)sb_ns_init(lc(s->eng), sb);
    struct ld_call *c = malloc(sizeof(*c));
    char *arg = util_strdupf("%ld %s", s->exec_init_pid, sb->exe);
    if (!c || !arg) {
        free(c);
        free(arg);
        return -1;
    }
    *c = (struct ld_call){.s = s, .fn = fn, .on_data = req->on_data, .ud = ud};
    struct http_request r = *req;
    r.unix_socket = s->exec_sock;
    r.peer_check = s->eng->bench_off & ENGINE_BENCH_NO_PEER_CHECK ? NULL : ld_executor_check;
    r.peer_arg = arg;
    r.on_data = req->on_data ? ld_executor_data : NULL;
    session_hold(s);
    int rc = http_start(s->eng->http, &r, ld_executor_done, c);
    free(arg);
    if (rc < 0) {
        free(c);
        session_release(s);
    }
    return rc;
}

const struct sandbox_driver driver_local = {
    .name = "local",
    .open = ld_open,
    .close = ld_close,
    .address = ld_address,
    .hint = ld_hint,
    .api_version = ld_api_version,
    .is_local = ld_is_local,
    .ping = ld_ok,
    .version = ld_ok,
    .info = ld_ok,
    .create = ld_create,
    .start = ld_start,
    .stop = ld_stop,
    .pause = ld_pause,
    .resume = ld_resume,
    .remove = ld_remove,
    .rename = ld_rename,
    .inspect = ld_inspect,
    .wait = ld_wait,
    .list = ld_list,
    .changes = ld_changes,
    .logs_tail = ld_logs_tail,
    .events_follow = ld_no_stream,
    .stats_follow = ld_stats_follow,
    .logs_follow = ld_logs_follow,
    .stream_close = ld_stream_close,
    .volume_inspect = ld_volume_none,
    .volume_list = ld_volume_list,
    .volume_remove = ld_volume_none,
    .exec_open = ld_exec_open,
    .exec_write = ld_exec_write,
    .exec_close_input = ld_exec_close_input,
    .exec_resize = ld_exec_resize,
    .exec_resume_output = ld_exec_resume_output,
    .exec_id = ld_exec_id,
    .exec_close = ld_exec_close,
    .exec_inspect = ld_exec_inspect,
    .image_inspect = ld_image_inspect,
    .image_pull = ld_image_pull,
    .image_build = ld_image_build,
    .image_tag = ld_image_tag,
    .image_list = ld_image_list,
    .image_remove = ld_image_remove,
    .executor_ready = ld_executor_ready,
    .executor_request = ld_executor_request,
};

/* ---- the engine's settings ---- */

static char *find_bwrap(void)
{
    static const char *const paths[] = {"/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        if (access(paths[i], X_OK) == 0)
            return strdup(paths[i]);
    return NULL;
}

/* A cgroup of this engine's scope is kept while its sandbox's state file exists (a sandbox
 * that outlived the engine); the rest was left by a crash. */
static int gc_keep(const char *name, void *ud)
{
    char *path = sb_file(ud, name, "json");
    int keep = path && access(path, F_OK) == 0;
    free(path);
    return keep;
}

int local_setup(struct engine *eng, const struct local_options *o, char **err)
{
    if (!o || !o->enabled)
        return 0;
    if (!o->user || !*o->user) {
        *err = strdup("[local] enabled needs [local] user (the unprivileged user the local "
                      "backend runs as)");
        return -1;
    }
    struct passwd *pw = getpwnam(o->user);
    if (!pw) {
        *err = util_strdupf("[local] user: no user \"%s\" on this host", o->user);
        return -1;
    }
    if (pw->pw_uid == 0 || pw->pw_gid == 0) {
        *err = util_strdupf("[local] user: \"%s\" is root or in group root; the local backend "
                            "needs an unprivileged user",
                            o->user);
        return -1;
    }
    struct local *L = calloc(1, sizeof(*L));
    if (!L) {
        *err = strdup("out of memory");
        return -1;
    }
    L->enabled = true;
    L->unsandboxed = o->unsandboxed;
    L->uid = pw->pw_uid;
    L->gid = pw->pw_gid;
    L->user = strdup(o->user);
    L->root = strdup(o->root && *o->root ? o->root : LOCAL_ROOT_DEFAULT);
    L->dir = util_strdupf("%s/local", eng->state_dir);
    L->scope = strdup(eng->engine_id);
    L->bwrap = o->bwrap && *o->bwrap ? (access(o->bwrap, X_OK) == 0 ? strdup(o->bwrap) : NULL)
                                     : find_bwrap();
    eng->local = L;
    /* bubblewrap, running as the user, resolves the bound directories' paths again: the state
     * dir must be traversable (0711: no listing; each session's socket dir is its own). */
    struct stat sd;
    if (stat(eng->state_dir, &sd) == 0 && (sd.st_mode & 0011) != 0011)
        chmod(eng->state_dir, (sd.st_mode & 07777) | 0011);
    if (local_seccomp_compile(&L->bpf, &L->bpf_len, err) < 0) {
        local_teardown(eng);
        return -1;
    }
    if (!L->user || !L->root || !L->dir || !L->scope || util_mkdir_p(L->dir, 0700) < 0 ||
        util_mkdir_p(L->root, 0755) < 0) {
        *err = util_strdupf("[local] root %s or %s: cannot make it: %s", L->root ? L->root : "",
                            L->dir ? L->dir : "", strerror(errno));
        local_teardown(eng);
        return -1;
    }
    local_cgroup_gc(L->scope, gc_keep, L);
    return 0;
}

void local_teardown(struct engine *eng)
{
    struct local *L = lc(eng);
    if (!L)
        return;
    while (L->execs) /* the shells stay; the engine stops following them */
        exec_free(L->execs);
    while (L->reaps) /* the next engine's gc removes what is left */
        reap_free(L->reaps);
    while (L->sbs) {
        struct lsb *sb = L->sbs;
        L->sbs = sb->next;
        sb_free(sb);
    }
    free(L->user);
    free(L->root);
    free(L->bwrap);
    free(L->dir);
    free(L->scope);
    free(L->bpf);
    free(L);
    eng->local = NULL;
}

int local_check_usable(const struct engine *eng, char *why, size_t n)
{
    const struct local *L = lc(eng);
    if (!L || !L->enabled) {
        snprintf(why, n,
                 "\"backend\": \"local\" is off on this engine: the operator enables it in the "
                 "engine's config ([local] enabled = true, with user and root)");
        return -1;
    }
    if (!L->bwrap && !L->unsandboxed) {
        snprintf(why, n,
                 "\"backend\": \"local\" needs bubblewrap (Debian's bubblewrap: no bwrap found), "
                 "or the operator allowing unsandboxed local runs ([local] unsandboxed = true)");
        return -1;
    }
    return 0;
}

char *local_workspace(const struct engine *eng, const char *session_id)
{
    const struct local *L = lc(eng);
    return L ? util_strdupf("%s/%s", L->root, session_id) : NULL;
}

void local_gc(struct engine *eng)
{
    struct local *L = lc(eng);
    if (L)
        local_cgroup_gc(L->scope, gc_keep, L);
}

const struct sandbox_driver *local_driver_for(const struct engine *eng, const char *sandbox_id)
{
    return sandbox_id && strncmp(sandbox_id, LOCAL_ID_PREFIX, strlen(LOCAL_ID_PREFIX)) == 0
               ? &driver_local
               : eng->driver;
}
