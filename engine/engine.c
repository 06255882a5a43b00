/* `paddock serve`: lock the state dir, open the store, listen, run the loop, stop cleanly. */
#include "engine/engine.h"

#include "engine/action.h"
#include "engine/api.h"
#include "engine/base/loop.h"
#include "engine/base/util.h"
#include "engine/commit.h"
#include "engine/disk.h"
#include "engine/docker/http.h"
#include "engine/driver.h"
#include "engine/driver_local.h"
#include "engine/egress.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/images.h"
#include "engine/listen.h"
#include "engine/monitor.h"
#include "engine/output.h"
#include "engine/pool.h"
#include "engine/seccomp.h"
#include "engine/seccomp_probe.h"
#include "engine/security.h"
#include "engine/session.h"
#include "engine/stats.h"
#include "engine/store/store.h"
#include "engine/terminal.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* One engine per state dir: an flock on engine.lock, released by the kernel if we die. */
static int engine_lock(const char *state_dir, char **err)
{
    char *path = util_strdupf("%s/engine.lock", state_dir);
    int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;
    if (fd < 0) {
        *err = util_strdupf("cannot open %s: %s", path ? path : "lock", strerror(errno));
        free(path);
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        *err = util_strdupf("state dir %s is locked by another engine (pid %s): use that one "
                            "(its socket), stop it (kill %s), or give another --state-dir",
                            state_dir, pid[0] ? pid : "?", pid[0] ? pid : "PID");
        close(fd);
        free(path);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) < 0) {
        /* the pid is informational only */
    }
    free(path);
    return fd;
}

static char *engine_read_id(const char *state_dir, char **err)
{
    char *path = util_strdupf("%s/engine.id", state_dir);
    char id[64] = "";
    FILE *f = path ? fopen(path, "r") : NULL;
    if (f) {
        if (!fgets(id, sizeof(id), f))
            id[0] = '\0';
        fclose(f);
        id[strcspn(id, "\n")] = '\0';
    }
    if (!util_is_hex_id(id, 16, 32)) {
        if (util_random_hex(id, 8) < 0 || !(f = fopen(path, "w"))) {
            *err = util_strdupf("cannot write %s: %s", path, strerror(errno));
            free(path);
            return NULL;
        }
        fprintf(f, "%s\n", id);
        fclose(f);
    }
    free(path);
    return strdup(id);
}

static int engine_listen(const char *path, char **err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        *err =
            util_strdupf("socket path too long (max %zu bytes): %s", sizeof(sa.sun_path) - 1, path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    struct stat st;
    /* We hold the state-dir lock, so a socket left here is a dead engine's. */
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            *err = util_strdupf("%s exists and is not a socket", path);
            return -1;
        }
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    mode_t old = umask(0177);
    int rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    umask(old);
    if (rc < 0 || listen(fd, SOMAXCONN) < 0) {
        *err = util_strdupf("cannot listen on %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void engine_on_shutdown_done(void *ud)
{
    struct engine *eng = ud;
    loop_stop(eng->loop);
}

/* A probe container in flight is removed first, so a quick stop leaves none behind. */
static void engine_on_probe_settled(void *ud)
{
    struct engine *eng = ud;
    session_shutdown(eng, engine_on_shutdown_done, eng);
}

/* The first signal deletes the keep_alive=false sessions, then stops; a second one stops at
 * once. */
static void engine_on_signal(int fd, uint32_t events, void *ud)
{
    struct engine *eng = ud;
    struct signalfd_siginfo si;
    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo != SIGINT && si.ssi_signo != SIGTERM)
            continue;
        if (eng->stopping) {
            loop_stop(eng->loop);
            continue;
        }
        eng->stopping = true;
        monitor_free(eng->monitor);
        eng->monitor = NULL;
        seccomp_probe_settle(eng, engine_on_probe_settled, eng);
    }
}

void engine_note_docker(struct engine *eng, bool reachable, const char *why)
{
    eng->docker_ok = reachable;
    free(eng->docker_error);
    eng->docker_error =
        reachable ? NULL
                  : util_strdupf("Docker daemon not reachable at %s (%s); %s",
                                 eng->driver->address(eng), why ? why : "", eng->driver->hint(eng));
}

/* The client negotiated the API version before this reply: api_version is the one we speak. A
 * daemon that answers but shares no version with us (too old or too new) is reachable and
 * unusable: docker.error says why. */
/* History of sessions deleted longer ago than the retention setting goes, at start and then
 * every six hours. */
static void engine_retention(void *ud)
{
    struct engine *eng = ud;
    if (eng->retention_days <= 0)
        return;
    store_retention_apply(eng->store, util_now() - eng->retention_days * 86400.0, NULL);
    loop_timer_add(eng->loop, 6L * 3600 * 1000, engine_retention, eng);
}

static void engine_on_version(const struct sandbox_reply *r, void *ud)
{
    struct engine *eng = ud;
    engine_note_docker(eng, r->status >= 0, r->message);
    if (r->status >= 0 && r->status != 200) {
        free(eng->docker_error);
        eng->docker_error =
            util_strdupf("Docker daemon at %s: %s", eng->driver->address(eng), r->message);
    }
    const char *v = eng->driver->api_version(eng);
    free(eng->docker_api_version);
    eng->docker_api_version = v ? strdup(v) : NULL;
}

/* Each API connection is a descriptor, and the connection caps (api_gate.c) assume a few
 * thousand: the soft limit goes up to the hard one (bounded, for what loops over them). */
static void engine_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    rlim_t want = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* What a benchmark may switch off, by name (engine_internal.h). */
static const struct {
    const char *name;
    enum engine_bench_off bit;
} engine_bench_names[] = {
    {"peer_check", ENGINE_BENCH_NO_PEER_CHECK},
    {"disk_watch", ENGINE_BENCH_NO_DISK_WATCH},
    {"record", ENGINE_BENCH_NO_RECORD},
};

/* "peer_check,disk_watch" into bits: 0, or -1 with *err naming what is unknown. */
static int engine_bench_parse(const char *list, unsigned *bits, char **err)
{
    *bits = 0;
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        size_t i = 0, count = sizeof(engine_bench_names) / sizeof(engine_bench_names[0]);
        while (i < count && !(strlen(engine_bench_names[i].name) == n &&
                              strncmp(engine_bench_names[i].name, p, n) == 0))
            i++;
        if (i == count) {
            *err = util_strdupf("PADDOCK_UNSAFE_BENCH: \"%.*s\" is not something a benchmark "
                                "may switch off (peer_check, disk_watch, record)",
                                (int)n, p);
            return -1;
        }
        *bits |= engine_bench_names[i].bit;
        p += n + (p[n] == ',');
    }
    return 0;
}

json_t *engine_bench_info(const struct engine *eng)
{
    json_t *off = json_array();
    for (size_t i = 0; off && i < sizeof(engine_bench_names) / sizeof(engine_bench_names[0]); i++)
        if (eng->bench_off & engine_bench_names[i].bit)
            json_array_append_new(off, json_string(engine_bench_names[i].name));
    return off;
}

int engine_serve(const struct engine_options *opt, char **err)
{
    struct engine eng = {0};
    int lockfd = -1, listenfd = -1, opfd = -1, sigfd = -1, rc = -1;
    sigset_t mask;

    if (util_mkdir_p(opt->state_dir, 0700) < 0) {
        *err = util_strdupf("cannot create state dir %s: %s", opt->state_dir, strerror(errno));
        return -1;
    }
    if ((lockfd = engine_lock(opt->state_dir, err)) < 0)
        return -1;
    engine_raise_nofile();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    eng.state_dir = strdup(opt->state_dir);
    eng.socket_path = strdup(opt->socket_path);
    eng.executor_path = opt->executor ? strdup(opt->executor) : NULL;
    eng.default_image = strdup(opt->image ? opt->image : "paddock/base:local");
    if (!(eng.seccomp_opt = seccomp_security_opt())) {
        *err = strdup("out of memory");
        goto out;
    }
    int confirm = opt->confirm ? policy_parse(opt->confirm) : POLICY_HIGH;
    eng.default_confirm = confirm < 0 ? POLICY_HIGH : (enum policy)confirm;
    eng.approval_timeout = opt->approval_timeout > 0 ? opt->approval_timeout : 600;
    eng.auto_lint = opt->enable_auto_lint;
    eng.retention_days = opt->retention_days > 0 ? opt->retention_days : 0;
    if (confirm < 0) {
        *err = util_strdupf("confirm = \"%s\" is not an approval policy (%s)", opt->confirm,
                            policy_names());
        goto out;
    }
    if (security_configure(&eng, opt->security_names, opt->security_values, err) < 0)
        goto out;
    if (engine_bench_parse(opt->unsafe_bench, &eng.bench_off, err) < 0)
        goto out;
    if (!(eng.engine_id = engine_read_id(opt->state_dir, err)))
        goto out;
    char *dbpath = util_strdupf("%s/paddock.db", opt->state_dir);
    eng.store = dbpath ? store_open(dbpath, err) : NULL;
    free(dbpath);
    if (!eng.store)
        goto out;
    store_actions_interrupt_inflight(eng.store, util_now());
    if (api_rules_load_config(&eng, opt->rule_ceiling, opt->allow, opt->deny, err) < 0)
        goto out;
    if (egress_load_config(&eng, opt, err) < 0)
        goto out;

    eng.loop = loop_new();
    eng.events = events_new();
    eng.http = eng.loop ? http_new(eng.loop) : NULL;
    if (!eng.http || !eng.events) {
        *err = strdup("out of memory");
        goto out;
    }
    if (commit_init(&eng, err) < 0)
        goto out;
    const char *driver = opt->driver ? opt->driver : "docker";
    if (!(eng.driver = driver_find(driver))) {
        *err = util_strdupf("no sandbox driver \"%s\" (there is: %s)", driver, driver_names());
        goto out;
    }
    if (eng.driver->open(&eng, opt->docker_host, err) < 0) {
        eng.driver = NULL;
        goto out;
    }
    struct local_options lo = {.enabled = opt->local_enabled,
                               .user = opt->local_user,
                               .root = opt->local_root,
                               .unsandboxed = opt->local_unsandboxed,
                               .bwrap = opt->local_bwrap};
    if (local_setup(&eng, &lo, err) < 0)
        goto out;
    if (seccomp_probe_start(&eng) < 0) {
        *err = strdup("out of memory");
        goto out;
    }
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sigfd < 0 || loop_add_fd(eng.loop, sigfd, EPOLLIN, engine_on_signal, &eng) < 0) {
        *err = util_strdupf("signalfd: %s", strerror(errno));
        goto out;
    }
    if ((listenfd = engine_listen(opt->socket_path, err)) < 0)
        goto out;
    if (!(eng.api = api_new(&eng, listenfd, err)))
        goto out;
    listenfd = -2; /* libmicrohttpd owns (and closes) the listening socket now */
    /* The operator's channel: a socket of its own in the state dir (0700), mode 0600, so that
     * the agent's socket can be handed out without handing out the operator's decisions. */
    if (!(eng.operator_socket = util_strdupf("%s/%s", opt->state_dir, API_OPERATOR_SOCKET))) {
        *err = strdup("out of memory");
        goto out;
    }
    if (strcmp(eng.operator_socket, opt->socket_path) == 0) {
        *err = util_strdupf("--socket %s is the operator's socket; give the agents' API socket "
                            "another path",
                            opt->socket_path);
        goto out;
    }
    if ((opfd = engine_listen(eng.operator_socket, err)) < 0)
        goto out;
    if (api_listen_operator(eng.api, opfd, err) < 0)
        goto out;
    opfd = -2;
    struct listen_options lopt = {
        .spec = opt->listen,
        .token = opt->token,
        .api_key = opt->api_key,
        .tls_cert = opt->tls_cert,
        .tls_key = opt->tls_key,
        .tls_client_ca = opt->tls_client_ca,
        .insecure = opt->insecure,
    };
    if (opt->listen && listen_tcp_start(&eng, &lopt, err) < 0)
        goto out;
    eng.stats = stats_new(&eng);
    if (!(eng.pool = pool_new(&eng, opt->pool, err)))
        goto out;
    session_load_all(&eng);
    if (!(eng.disk = disk_new(&eng, opt->disk_limit, opt->disk_floor))) {
        *err = strdup("out of memory");
        goto out;
    }
    if (actions_init(&eng) < 0 || output_init(&eng) < 0 || egress_init(&eng) < 0) {
        *err = strdup("out of memory");
        goto out;
    }
    engine_retention(&eng);
    eng.driver->version(&eng, engine_on_version, &eng);
    eng.monitor = monitor_start(&eng);
    if (opt->on_ready)
        opt->on_ready(opt->socket_path, opt->ud);
    if (loop_run(eng.loop) < 0) {
        *err = util_strdupf("event loop: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    /* Finish what is in flight (requests get a "cancelled" reply), then stop serving. */
    eng.stopping = true;
    monitor_free(eng.monitor);
    stats_free(eng.stats);
    disk_free(eng.disk);
    eng.disk = NULL;
    /* What is queued for the record is written, and its commands started, before the requests
     * in flight are cancelled (and recorded as interrupted). */
    commit_shutdown(&eng);
    if (eng.http)
        http_cancel_all(eng.http);
    seccomp_probe_free(&eng);
    egress_shutdown(&eng);
    actions_shutdown(&eng);
    output_shutdown(&eng);
    terminals_free(&eng);
    api_free(eng.api);
    if (listenfd >= 0)
        close(listenfd);
    if (listenfd != -1)
        unlink(opt->socket_path);
    if (opfd >= 0)
        close(opfd);
    if (opfd != -1)
        unlink(eng.operator_socket);
    free(eng.operator_socket);
    session_free_all(&eng);
    /* After everything in flight finished: their callbacks still count the pool's creations. */
    pool_free(eng.pool);
    eng.pool = NULL;
    images_free(&eng);
    if (eng.driver)
        eng.driver->close(&eng);
    local_teardown(&eng);
    http_free(eng.http);
    store_close(eng.store);
    if (sigfd >= 0)
        close(sigfd);
    loop_free(eng.loop);
    events_free(eng.events);
    json_decref(eng.egress_allow);
    json_decref(eng.egress_deny);
    json_decref(eng.egress_presets);
    free(eng.state_dir);
    free(eng.socket_path);
    free(eng.executor_path);
    free(eng.default_image);
    free(eng.seccomp_opt);
    free(eng.engine_id);
    free(eng.docker_api_version);
    free(eng.docker_error);
    listen_free(&eng);
    curl_global_cleanup();
    if (lockfd >= 0)
        close(lockfd);
    return rc;
}
