/* paddock-bench-containment: what containment costs, measured side by side in one run.
 *
 * 1. The executor channel's peer check (engine/base/unix_peer.c): `echo hi` through three
 *    engines at once — everything on; the peer check off; the disk watchdog off (the
 *    engine's bench-only $PADDOCK_UNSAFE_BENCH) — interleaved in random order, medians and
 *    p95; and the check itself per connection (unix_peer_open + connect + unix_peer_check
 *    against a socket this process serves), since a kept connection is checked once.
 * 2. Connection floods (engine/api_gate.c): an action on a kept connection, a request on a
 *    new connection of the unix socket (what `paddock ls` does), and an authenticated request
 *    on a new TCP connection, with and without N idle and slow connections held open against
 *    both listeners by child processes that reopen whatever the engine closes.
 * 3. The disk watchdog (engine/disk.c): one measurement of a session holding F files (its
 *    time on the loop and in all, from GET /v1/info), and the action latency with it on and
 *    off from 1.
 *
 *   paddock-bench-containment --paddock build/paddock [--image IMG] [--echo N] [--flood N]
 *                             [--files F]
 * Containers are labelled paddock.test=bench and removed with their sessions. */
#include "bench.h"

#include "engine/base/unix_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOKEN "bench-containment-token"

struct engine_run {
    const char *what;
    char dir[64], sock[128];
    pid_t pid;
    CURL *curl;
    char *sid;
};

static const char *paddock_bin = "build/paddock";

static long ereq(struct engine_run *e, const char *method, const char *path, const char *payload,
                 json_t **out)
{
    return req_on(e->curl, e->sock, method, path, payload, out);
}

/* Start `paddock serve` with extra environment ("K=V", NULL-terminated) and wait for it. */
static int engine_up(struct engine_run *e, const char *what, const char *const *env)
{
    e->what = what;
    snprintf(e->dir, sizeof(e->dir), "/tmp/paddock-benchc-XXXXXX");
    if (!mkdtemp(e->dir))
        return -1;
    snprintf(e->sock, sizeof(e->sock), "%s/engine.sock", e->dir);
    char log[128];
    snprintf(log, sizeof(log), "%s/engine.log", e->dir);
    e->pid = fork();
    if (e->pid == 0) {
        if (!freopen(log, "w", stderr))
            _exit(126);
        setenv("PADDOCK_TEST_LABEL", "bench", 1);
        setenv("PADDOCK_CONFIRM", "never", 1);
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        execl(paddock_bin, paddock_bin, "serve", "--state-dir", e->dir, "--socket", e->sock,
              (char *)NULL);
        _exit(127);
    }
    e->curl = curl_easy_init();
    for (int i = 0; i < 1000; i++) {
        if (ereq(e, "GET", "/v1/info", NULL, NULL) == 200)
            return 0;
        usleep(10000);
    }
    fprintf(stderr, "bench: the %s engine did not answer (log: %s)\n", what, log);
    return -1;
}

static void engine_down(struct engine_run *e)
{
    if (e->sid) {
        char path[128];
        snprintf(path, sizeof(path), "/v1/sessions/%s", e->sid);
        ereq(e, "DELETE", path, NULL, NULL);
        free(e->sid);
        e->sid = NULL;
    }
    if (e->pid > 0) {
        kill(e->pid, SIGTERM);
        waitpid(e->pid, NULL, 0);
    }
    if (e->curl)
        curl_easy_cleanup(e->curl);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: could not remove %s\n", e->dir);
}

static int engine_session(struct engine_run *e)
{
    json_t *j = NULL;
    long st = ereq(e, "POST", "/v1/sessions", "{}", &j);
    const char *id = json_string_value(json_object_get(j, "id"));
    e->sid = st == 201 && id ? strdup(id) : NULL;
    json_decref(j);
    if (!e->sid)
        fprintf(stderr, "bench: no session on the %s engine (%ld)\n", e->what, st);
    return e->sid ? 0 : -1;
}

/* One run action; its latency in ms, or -1 when it did not answer 200. */
static double engine_run(struct engine_run *e, const char *cmd)
{
    char path[128], body[512];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action", e->sid);
    snprintf(body, sizeof(body), "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"%s\"}}}",
             cmd);
    double t0 = now_ms();
    long st = ereq(e, "POST", path, body, NULL);
    double ms = now_ms() - t0;
    return st == 200 ? ms : -1;
}

static void row(const char *what, struct timings *t, const char *unit)
{
    printf("| %-58s | %9.3f | %9.3f | %6zu |%s\n", what, timings_pct(t, 0.5), timings_pct(t, 0.95),
           t->n, unit);
}

/* ---- 1. the peer check itself, per connection ---- */

static void peer_check_per_connection(int n, struct timings *out)
{
    char dir[] = "/tmp/paddock-benchp-XXXXXX";
    if (!mkdtemp(dir))
        return;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s/s.sock", dir);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (l < 0 || k <= 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 64) < 0) {
        fprintf(stderr, "bench: cannot serve a socket for the peer check\n");
        if (l >= 0)
            close(l);
        rmdir(dir);
        return;
    }
    exe[k] = '\0';
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        bool refused = false;
        char err[256];
        int fd = unix_peer_open(a.sun_path, &refused, err, sizeof(err));
        if (fd < 0)
            break;
        int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un via = {.sun_family = AF_UNIX};
        snprintf(via.sun_path, sizeof(via.sun_path), "/proc/self/fd/%d", fd);
        int rc = c >= 0 && connect(c, (struct sockaddr *)&via, sizeof(via)) == 0
                     ? unix_peer_check(c, exe, getpid(), err, sizeof(err))
                     : -3;
        double ms = now_ms() - t0;
        if (rc == 0)
            timings_add(out, ms);
        else if (i == 0)
            fprintf(stderr, "bench: the peer check refused this process: %s\n", err);
        close(fd);
        if (c >= 0)
            close(c);
        int s = accept(l, NULL, NULL);
        if (s >= 0)
            close(s);
    }
    close(l);
    unlink(a.sun_path);
    rmdir(dir);
}

/* ---- 2. floods ---- */

/* A child holding n connections to the unix socket (or TCP port when port > 0): half silent,
 * half a head begun and never finished; with reopen, each one the engine closes is opened
 * again at once (an attacker's churn), else it stays closed (idle clients). */
static pid_t flood_child(const char *sock, int port, int n, bool reopen)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    signal(SIGTERM, SIG_DFL);
    struct pollfd *p = calloc((size_t)n, sizeof(*p));
    if (!p)
        _exit(1);
    for (;;) {
        for (int i = 0; i < n; i++) {
            if (p[i].fd != 0)
                continue; /* open, or closed for good (-1) */
            int fd;
            if (port > 0) {
                struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
                in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                fd = socket(AF_INET, SOCK_STREAM, 0);
                if (fd >= 0 && connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
                    close(fd);
                    fd = -1;
                }
            } else {
                struct sockaddr_un a = {.sun_family = AF_UNIX};
                if (strlen(sock) >= sizeof(a.sun_path))
                    _exit(1);
                memcpy(a.sun_path, sock, strlen(sock) + 1);
                fd = socket(AF_UNIX, SOCK_STREAM, 0);
                if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
                    close(fd);
                    fd = -1;
                }
            }
            if (fd < 0)
                break; /* the listener's backlog is full: try again after the poll */
            if (i % 2) {
                static const char partial[] = "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nX-Slow: ";
                if (write(fd, partial, sizeof(partial) - 1) < 0) {
                    close(fd);
                    continue;
                }
            }
            p[i] = (struct pollfd){.fd = fd, .events = POLLIN};
        }
        if (poll(p, (nfds_t)n, 100) < 0 && errno != EINTR)
            _exit(1);
        for (int i = 0; i < n; i++)
            if (p[i].fd > 0 && p[i].revents) {
                char buf[512];
                if (read(p[i].fd, buf, sizeof(buf)) <= 0 || (p[i].revents & (POLLHUP | POLLERR))) {
                    close(p[i].fd);
                    p[i].fd = reopen ? 0 : -1;
                }
            }
    }
}

/* A request on a new connection: unix socket (port 0) or TCP with the token. ms or -1. */
static double fresh_request(const char *sock, int port, const char *path)
{
    CURL *e = curl_easy_init();
    char url[256];
    if (port)
        snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    else
        snprintf(url, sizeof(url), "http://paddock%s", path);
    curl_easy_setopt(e, CURLOPT_URL, url);
    if (!port)
        curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, sock);
    struct curl_slist *h = port ? curl_slist_append(NULL, "Authorization: Bearer " TOKEN) : NULL;
    if (h)
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    FILE *null = fopen("/dev/null", "w");
    curl_easy_setopt(e, CURLOPT_WRITEDATA, null);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
    double t0 = now_ms();
    long status = -1;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    double ms = now_ms() - t0;
    curl_slist_free_all(h);
    if (null)
        fclose(null);
    curl_easy_cleanup(e);
    return status == 200 ? ms : -1;
}

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in in = {.sin_family = AF_INET};
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(in);
    int port = -1;
    if (s >= 0 && bind(s, (struct sockaddr *)&in, sizeof(in)) == 0 &&
        getsockname(s, (struct sockaddr *)&in, &len) == 0)
        port = ntohs(in.sin_port);
    if (s >= 0)
        close(s);
    return port;
}

/* ---- 3. the watchdog's measurement ---- */

static void watchdog_measurement(struct engine_run *e, int files, json_t **info)
{
    char cmd[256];
    /* F small files in the workspace volume and F in the writable layer. */
    snprintf(cmd, sizeof(cmd),
             "mkdir -p /workspace/t /tmp/t && cd /workspace/t && seq 1 %d | xargs touch && cd "
             "/tmp/t && seq 1 %d | xargs touch && echo made",
             files, files);
    engine_run(e, cmd);
    /* The action queued a measurement; wait until one covered the files. */
    for (int i = 0; i < 600; i++) {
        json_t *j = NULL;
        ereq(e, "GET", "/v1/info", NULL, &j);
        json_int_t entries =
            json_integer_value(json_object_get(json_object_get(j, "disk"), "last_entries"));
        if (entries >= 2 * files) {
            *info = j;
            return;
        }
        json_decref(j);
        usleep(100000);
    }
    *info = NULL;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"paddock", required_argument, NULL, 'p'}, {"image", required_argument, NULL, 'i'},
        {"echo", required_argument, NULL, 'e'},    {"flood", required_argument, NULL, 'f'},
        {"files", required_argument, NULL, 'F'},   {NULL, 0, NULL, 0}};
    int n_echo = 300, n_flood = 2000, n_files = 20000, c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            paddock_bin = optarg;
            break;
        case 'i':
            setenv("PADDOCK_IMAGE", optarg, 1);
            break;
        case 'e':
            n_echo = atoi(optarg);
            break;
        case 'f':
            n_flood = atoi(optarg);
            break;
        case 'F':
            n_files = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    srand((unsigned)getpid());
    int port = free_port();
    char listen_env[64];
    snprintf(listen_env, sizeof(listen_env), "PADDOCK_LISTEN=127.0.0.1:%d", port);
    const char *env_on[] = {listen_env, "PADDOCK_TOKEN=" TOKEN, NULL};
    const char *env_nopeer[] = {"PADDOCK_UNSAFE_BENCH=peer_check", NULL};
    const char *env_nodisk[] = {"PADDOCK_UNSAFE_BENCH=disk_watch", NULL};
    struct engine_run eng[3] = {0};
    int rc = 1;
    if (engine_up(&eng[0], "default", env_on) < 0 ||
        engine_up(&eng[1], "peer check off", env_nopeer) < 0 ||
        engine_up(&eng[2], "disk watchdog off", env_nodisk) < 0)
        goto out;
    for (int i = 0; i < 3; i++)
        if (engine_session(&eng[i]) < 0)
            goto out;

    /* 1 + 3b: echo hi through the three engines, interleaved in random order. */
    struct timings echo[3] = {{0}};
    for (int i = 0; i < 10; i++) /* warm-up */
        for (int k = 0; k < 3; k++)
            engine_run(&eng[k], "echo hi");
    for (int i = 0; i < n_echo; i++) {
        int order[3] = {0, 1, 2};
        for (int k = 2; k > 0; k--) {
            int j = rand() % (k + 1), t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        for (int k = 0; k < 3; k++) {
            double ms = engine_run(&eng[order[k]], "echo hi");
            if (ms >= 0)
                timings_add(&echo[order[k]], ms);
        }
    }
    struct timings per_conn = {0};
    peer_check_per_connection(n_echo, &per_conn);

    /* 2. floods against the default engine: rounds quiet, held (N connections opened once and
     * left idle or half-sent), quiet, reopened (each one the engine closes opened again). */
    enum { QUIET, HELD, CHURN };
    struct timings act[3] = {{0}}, fresh[3] = {{0}}, tcp[3] = {{0}};
    int children = n_flood > 0 ? (n_flood + 99) / 100 : 0;
    pid_t *kids = calloc((size_t)children + 1, sizeof(pid_t));
    static const int rounds[] = {QUIET, HELD, QUIET, CHURN};
    for (size_t round = 0; round < sizeof(rounds) / sizeof(rounds[0]) && kids; round++) {
        int mode = rounds[round], started = 0;
        if (mode != QUIET) {
            /* Half on the unix socket, half on TCP; 100 per child (a peer each over unix). */
            for (int k = 0; k < children; k++)
                kids[started++] = flood_child(eng[0].sock, k % 2 ? port : 0, 100, mode == CHURN);
            usleep(2000000); /* let the connections pile up and the caps evict */
        }
        for (int i = 0; i < n_echo / 4; i++) {
            double a = engine_run(&eng[0], "echo hi");
            double b = fresh_request(eng[0].sock, 0, "/v1/sessions");
            double t = fresh_request(NULL, port, "/v1/info");
            if (a >= 0)
                timings_add(&act[mode], a);
            if (b >= 0)
                timings_add(&fresh[mode], b);
            if (t >= 0)
                timings_add(&tcp[mode], t);
        }
        for (int k = 0; k < started; k++) {
            kill(kids[k], SIGTERM);
            waitpid(kids[k], NULL, 0);
        }
    }
    free(kids);

    /* 3. one measurement of a session holding 2 × F files. */
    json_t *info = NULL;
    watchdog_measurement(&eng[0], n_files, &info);
    json_t *d = json_object_get(info, "disk");

    printf("paddock containment bench: %s; milliseconds; the rows of a block measured "
           "interleaved in one run\n\n",
           PADDOCK_VERSION);
    printf("| %-58s | %9s | %9s | %6s |\n", "metric", "p50", "p95", "n");
    printf("|%s|%s|%s|%s|\n", "------------------------------------------------------------",
           "-----------", "-----------", "--------");
    row("echo hi, engine API: everything on", &echo[0], "");
    row("echo hi, engine API: peer check off", &echo[1], "");
    row("echo hi, engine API: disk watchdog off", &echo[2], "");
    row("peer check per new connection (open, connect, check)", &per_conn, "");
    static const char *const mode_name[] = {"quiet", "N held", "N reopened"};
    for (int m = 0; m < 3; m++) {
        char what[96];
        snprintf(what, sizeof(what), "echo hi, kept connection, %s", mode_name[m]);
        row(what, &act[m], "");
        snprintf(what, sizeof(what), "GET /v1/sessions, new unix connection, %s", mode_name[m]);
        row(what, &fresh[m], "");
        snprintf(what, sizeof(what), "GET /v1/info, new TCP connection + token, %s", mode_name[m]);
        row(what, &tcp[m], "");
    }
    printf("\nN = %d connections (half unix, half TCP; half silent, half a head begun), from %d "
           "processes of 100\n",
           n_flood, children);
    double p_on = timings_pct(&echo[0], 0.5), p_off = timings_pct(&echo[1], 0.5),
           p_nodisk = timings_pct(&echo[2], 0.5);
    printf("\npeer check: echo hi median %+.1f %% with it on (%.3f vs %.3f ms); disk watchdog: "
           "%+.1f %% with it on (%.3f vs %.3f ms)\n",
           p_off > 0 ? (p_on - p_off) / p_off * 100 : 0, p_on, p_off,
           p_nodisk > 0 ? (p_on - p_nodisk) / p_nodisk * 100 : 0, p_on, p_nodisk);
    if (d)
        printf("disk watchdog, one measurement of %lld entries: %.1f ms on the loop, %.1f ms in "
               "all (slices of 512 entries between other work); %.2f ms per 1000 entries\n",
               (long long)json_integer_value(json_object_get(d, "last_entries")),
               json_number_value(json_object_get(d, "last_busy_ms")),
               json_number_value(json_object_get(d, "last_ms")),
               json_number_value(json_object_get(d, "last_busy_ms")) * 1000.0 /
                   (double)(json_integer_value(json_object_get(d, "last_entries")) + 1));
    else
        printf("disk watchdog: no measurement covered the files within 60 s\n");
    json_decref(info);
    rc = echo[0].n && echo[1].n ? 0 : 1;
out:
    for (int i = 0; i < 3; i++)
        engine_down(&eng[i]);
    curl_global_cleanup();
    return rc;
}
