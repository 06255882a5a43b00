/* paddock-bench: paddock against its peers, measured side by side in one run (interleaved in
 * random order), reported as medians and p95 with ratios. Starts its own engine on a temporary
 * state dir; every container it makes is labelled paddock.test=bench and removed.
 *
 *   paddock-bench --paddock build/paddock [--image IMG] [--ready N] [--echo N] [--exec N]
 */
#include "bench.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static CURL *curl, *exec_curl;
static const char *engine_sock;
static char exec_sock[300];

static long req(const char *method, const char *path, const char *payload, json_t **out)
{
    return req_on(curl, engine_sock, method, path, payload, out);
}

/* The operator's socket beside it: resizing the pool is the operator's (docs/security.md). */
static char operator_sock[256];

static long req_operator(const char *method, const char *path, const char *payload)
{
    return req_on(curl, operator_sock, method, path, payload, NULL);
}

/* ---- child processes ---- */

static int spawn_wait(char *const argv[], bool quiet)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *session_create(double *ms)
{
    json_t *j = NULL;
    double t0 = now_ms();
    long st = req("POST", "/v1/sessions", "{}", &j);
    *ms = now_ms() - t0;
    const char *id = json_string_value(json_object_get(j, "id"));
    char *r = st == 201 && id ? strdup(id) : NULL;
    if (!r)
        fprintf(stderr, "bench: session create failed (%ld)\n", st);
    json_decref(j);
    return r;
}

/* POST /v1/sessions with body: the id, or NULL; *ms the time to ready. */
static char *session_create_body(const char *body, double *ms)
{
    json_t *j = NULL;
    double t0 = now_ms();
    long st = req("POST", "/v1/sessions", body, &j);
    *ms = now_ms() - t0;
    const char *id = json_string_value(json_object_get(j, "id"));
    char *r = st == 201 && id ? strdup(id) : NULL;
    if (!r)
        fprintf(stderr, "bench: session create %s failed (%ld)\n", body, st);
    json_decref(j);
    return r;
}

static void session_delete(const char *id)
{
    char path[128];
    snprintf(path, sizeof(path), "/v1/sessions/%s", id);
    req("DELETE", path, NULL, NULL);
}

static char *session_container(const char *id)
{
    char path[128];
    json_t *j = NULL;
    snprintf(path, sizeof(path), "/v1/sessions/%s", id);
    req("GET", path, NULL, &j);
    const char *c = json_string_value(json_object_get(j, "container_id"));
    char *r = c ? strdup(c) : NULL;
    json_decref(j);
    return r;
}

/* An action through the engine API (sid set) or straight to the executor's socket (sid NULL);
 * true when it answered 200 and, if want is set, content equals it. */
static bool action(const char *sid, const char *action_json, const char *want)
{
    char path[128], *body = NULL;
    json_t *j = NULL;
    if (asprintf(&body, "{\"action\":%s}", action_json) < 0)
        return false;
    long st;
    if (sid) {
        snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action", sid);
        st = req("POST", path, body, &j);
    } else {
        st = req_on(exec_curl, exec_sock, "POST", "/execute_action", body, &j);
    }
    const char *content = json_string_value(json_object_get(j, "content"));
    bool ok = st == 200 && content && (!want || strcmp(content, want) == 0);
    if (ok && !want && json_is_string(json_object_get(j, "observation")) &&
        strcmp(json_string_value(json_object_get(j, "observation")), "error") == 0)
        ok = false;
    json_decref(j);
    free(body);
    return ok;
}

static const char *bench_sid;
#define RUN(cmd) "{\"action\":\"run\",\"args\":{\"command\":\"" cmd "\"}}"

static bool op_echo_engine(void)
{
    return action(bench_sid, RUN("echo hi"), "hi");
}

static bool op_echo_exec(void)
{
    return action(NULL, RUN("echo hi"), "hi");
}

static bool op_1mb(void)
{
    /* 1 MB of output; the observation keeps the 30,000-char head and tail */
    return action(NULL, RUN("head -c 1000000 /dev/zero | tr '\\\\0' a"), NULL);
}

/* A 10 MB command (issue 15 #7): it reaches the shell without its line reader, whose cost
 * grew with the square of the length. Straight to the executor: through the engine it waits
 * for approval (the classifier calls a command that long HIGH: too long to analyse). */
static char *bigcmd_json;
static bool op_10mb_command(void)
{
    return action(NULL, bigcmd_json, "10000000");
}

static bool make_bigcmd_json(void)
{
    static const char head[] = "{\"action\":\"run\",\"args\":{\"command\":\"x=";
    static const char tail[] = "; echo ${#x}\"}}";
    size_t n = 10000000;
    bigcmd_json = malloc(sizeof head + n + sizeof tail);
    if (!bigcmd_json)
        return false;
    memcpy(bigcmd_json, head, sizeof head - 1);
    memset(bigcmd_json + sizeof head - 1, 'a', n);
    memcpy(bigcmd_json + sizeof head - 1 + n, tail, sizeof tail);
    return true;
}

static bool op_read(void)
{
    return action(NULL, "{\"action\":\"read\",\"args\":{\"path\":\"/workspace/bench.txt\"}}", NULL);
}

static bool op_edit(void)
{
    static int flip;
    const char *a = flip ? "MARKER_B" : "MARKER_A", *b = flip ? "MARKER_A" : "MARKER_B";
    char js[512];
    snprintf(js, sizeof(js),
             "{\"action\":\"edit\",\"args\":{\"command\":\"str_replace\",\"path\":"
             "\"/workspace/bench.txt\",\"old_str\":\"%s\",\"new_str\":\"%s\"}}",
             a, b);
    bool ok = action(NULL, js, NULL);
    if (ok)
        flip = !flip;
    return ok;
}

/* paddock's op interleaved with the peer command: per peer run, several paddock runs. */
static void measure(bool (*op)(void), char *const peer[], int n_op, int n_peer, struct timings *a,
                    struct timings *b)
{
    for (int i = 0; i < 5; i++)
        op();
    int per = n_peer > 0 ? (n_op + n_peer - 1) / n_peer : n_op;
    for (int i = 0; i < n_peer || (int)a->n < n_op; i++) {
        for (int k = 0; k < per && (int)a->n < n_op; k++) {
            double t0 = now_ms();
            if (!op())
                return; /* not supported by this executor: the row says so */
            timings_add(a, now_ms() - t0);
        }
        if (i < n_peer && peer) {
            double t0 = now_ms();
            if (spawn_wait(peer, true) == 0)
                timings_add(b, now_ms() - t0);
        }
    }
}

/* Milliseconds from exec of the static executor to its socket accepting, on the host. */
static void measure_executor_start(const char *exe, const char *dir, int n, struct timings *out)
{
    for (int i = 0; i < n; i++) {
        char sock[300], ws[300];
        snprintf(sock, sizeof(sock), "%s/start-%d.sock", dir, i);
        snprintf(ws, sizeof(ws), "%s/ws-%d", dir, i);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(sock) >= sizeof(sa.sun_path))
            return;
        memcpy(sa.sun_path, sock, strlen(sock) + 1);
        double t0 = now_ms();
        pid_t pid = fork();
        if (pid == 0) {
            int nul = open("/dev/null", O_WRONLY);
            dup2(nul, 2);
            char home[320];
            snprintf(home, sizeof(home), "%s-home", ws);
            /* its own HOME: the executor must not touch the host user's dotfiles */
            execl(exe, exe, "--socket", sock, "--working-dir", ws, "--home", home, "--quiet",
                  (char *)NULL);
            _exit(127);
        }
        bool up = false;
        while (!up && now_ms() - t0 < 5000) { /* a bench may spin: nothing else to do */
            int fd = socket(AF_UNIX, SOCK_STREAM, 0);
            up = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
            close(fd);
        }
        if (up)
            timings_add(out, now_ms() - t0);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
}

/* RSS (kB) of the executor inside the given container, found through /proc on the host. */
static long executor_rss_kb(const char *container)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    long rss = -1;
    while (d && (e = readdir(d))) {
        char p[300], buf[4096];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(p, sizeof(p), "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        if (!strstr(buf, "paddock-executor"))
            continue;
        snprintf(p, sizeof(p), "/proc/%s/cgroup", e->d_name);
        f = fopen(p, "r");
        if (!f)
            continue;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        if (!strstr(buf, container))
            continue;
        snprintf(p, sizeof(p), "/proc/%s/status", e->d_name);
        f = fopen(p, "r");
        while (f && fgets(buf, sizeof(buf), f))
            if (sscanf(buf, "VmRSS: %ld", &rss) == 1)
                break;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return rss;
}

/* n requests at once on the engine socket (curl multi); returns the wall time in ms and
 * fills ids from the replies' "id" when ids is set. ok counts replies with status want. */
static double burst(int n, const char *method, char **paths, const char *payload, long want,
                    char **ids, int *ok)
{
    CURLM *m = curl_multi_init();
    CURL **h = calloc((size_t)n, sizeof(*h));
    struct bench_body *b = calloc((size_t)n, sizeof(*b));
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    hdr = curl_slist_append(hdr, "Expect:");
    double t0 = now_ms();
    for (int i = 0; i < n; i++) {
        char url[512];
        snprintf(url, sizeof(url), "http://paddock%s", paths[i]);
        h[i] = curl_easy_init();
        curl_easy_setopt(h[i], CURLOPT_UNIX_SOCKET_PATH, engine_sock);
        curl_easy_setopt(h[i], CURLOPT_URL, url);
        curl_easy_setopt(h[i], CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, bench_on_body);
        curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &b[i]);
        curl_easy_setopt(h[i], CURLOPT_HTTPHEADER, hdr);
        if (payload)
            curl_easy_setopt(h[i], CURLOPT_POSTFIELDS, payload);
        curl_multi_add_handle(m, h[i]);
    }
    int running = n;
    while (running) {
        curl_multi_perform(m, &running);
        if (running)
            curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    double ms = now_ms() - t0;
    *ok = 0;
    for (int i = 0; i < n; i++) {
        long st = -1;
        curl_easy_getinfo(h[i], CURLINFO_RESPONSE_CODE, &st);
        if (st == want)
            (*ok)++;
        if (ids) {
            json_t *j = b[i].p ? json_loads(b[i].p, 0, NULL) : NULL;
            const char *id = json_string_value(json_object_get(j, "id"));
            ids[i] = st == want && id ? strdup(id) : NULL;
            json_decref(j);
        }
        curl_multi_remove_handle(m, h[i]);
        curl_easy_cleanup(h[i]);
        free(b[i].p);
    }
    curl_slist_free_all(hdr);
    curl_multi_cleanup(m);
    free(h);
    free(b);
    return ms;
}

struct conc_result {
    int n, created, deleted;
    double create_ms, delete_ms, peer_create_ms, peer_delete_ms;
    long rss_before_kb, rss_peak_kb, rss_after_kb;
};

static double spawn_all(int n, char *const *const *argvs)
{
    pid_t *pids = calloc((size_t)n, sizeof(*pids));
    double t0 = now_ms();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    for (int i = 0; i < n; i++)
        if (posix_spawnp(&pids[i], argvs[i][0], &fa, NULL, argvs[i], environ) != 0)
            pids[i] = 0;
    for (int i = 0; i < n; i++)
        if (pids[i])
            while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
                ;
    posix_spawn_file_actions_destroy(&fa);
    free(pids);
    return now_ms() - t0;
}

static void concurrent_sessions(int n, pid_t eng, const char *image, struct conc_result *r)
{
    r->n = n;
    char **paths = calloc((size_t)n, sizeof(*paths)), **ids = calloc((size_t)n, sizeof(*ids));
    for (int i = 0; i < n; i++)
        paths[i] = strdup("/v1/sessions");
    r->rss_before_kb = proc_status_kb(eng, "VmRSS");
    r->create_ms = burst(n, "POST", paths, "{}", 201, ids, &r->created);
    r->rss_peak_kb = proc_status_kb(eng, "VmHWM");
    for (int i = 0; i < n; i++) {
        free(paths[i]);
        paths[i] = NULL;
        if (ids[i]) {
            char p[128];
            snprintf(p, sizeof(p), "/v1/sessions/%s", ids[i]);
            paths[i] = strdup(p);
        }
    }
    int m = 0; /* compact: only the created ones */
    for (int i = 0; i < n; i++)
        if (paths[i])
            paths[m++] = paths[i];
    r->delete_ms = burst(m, "DELETE", paths, NULL, 200, NULL, &r->deleted);
    r->rss_after_kb = proc_status_kb(eng, "VmRSS");
    for (int i = 0; i < n; i++) {
        free(ids[i]);
        if (i < m)
            free(paths[i]);
    }

    /* Peer: the same number of plain containers started and removed by the docker CLI. */
    char ***runs = calloc((size_t)n, sizeof(*runs)), ***rms = calloc((size_t)n, sizeof(*rms));
    char names[n][48];
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "paddock-bench-peer-%d-%d", (int)getpid(), i);
        char *run[] = {
            "docker", "run",    "-d",          "--network", "none", "--label", "paddock.test=bench",
            "--name", names[i], (char *)image, "sleep",     "600",  NULL};
        char *rm[] = {"docker", "rm", "-f", names[i], NULL};
        runs[i] = calloc(sizeof(run) / sizeof(run[0]), sizeof(char *));
        memcpy(runs[i], run, sizeof(run));
        rms[i] = calloc(sizeof(rm) / sizeof(rm[0]), sizeof(char *));
        memcpy(rms[i], rm, sizeof(rm));
    }
    r->peer_create_ms = spawn_all(n, (char *const *const *)runs);
    r->peer_delete_ms = spawn_all(n, (char *const *const *)rms);
    for (int i = 0; i < n; i++) {
        free(runs[i]);
        free(rms[i]);
    }
    free(runs);
    free(rms);
    free(paths);
    free(ids);
}

/* Recorded actions per second across n sessions: rounds of one `echo hi` per session at once
 * (each recorded, classified and answered), against the same number of `docker exec`s across
 * the sessions' containers at once. */
struct tput_result {
    int sessions, actions, ok;
    double ms, peer_ms;
    int peer_n;
};

static void throughput(int n, int rounds, struct tput_result *r)
{
    char **ids = calloc((size_t)n, sizeof(*ids)), **cids = calloc((size_t)n, sizeof(*cids));
    char **paths = calloc((size_t)n, sizeof(*paths));
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < n; i++) {
        double ms;
        ids[i] = session_create(&ms);
        if (!ids[i])
            continue;
        cids[i] = session_container(ids[i]);
        paths[r->sessions] = malloc(128);
        snprintf(paths[r->sessions], 128, "/v1/sessions/%s/execute_action", ids[i]);
        r->sessions++;
    }
    const char *payload = "{\"action\":" RUN("echo hi") "}";
    burst(r->sessions, "POST", paths, payload, 200, NULL, &r->ok); /* warm-up */
    double t0 = now_ms();
    for (int k = 0; k < rounds; k++) {
        int ok;
        burst(r->sessions, "POST", paths, payload, 200, NULL, &ok);
        r->ok += ok;
        r->actions += r->sessions;
    }
    r->ms = now_ms() - t0;
    r->ok -= r->sessions; /* the warm-up's */
    /* the peer: the same containers, docker exec at once, fewer rounds (it is slow) */
    int peer_rounds = rounds / 10 > 1 ? rounds / 10 : 1;
    char ***argvs = calloc((size_t)n, sizeof(*argvs));
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!cids[i])
            continue;
        argvs[m] = calloc(7, sizeof(char *));
        argvs[m][0] = "docker", argvs[m][1] = "exec", argvs[m][2] = cids[i];
        argvs[m][3] = "sh", argvs[m][4] = "-c", argvs[m][5] = "echo hi";
        m++;
    }
    for (int k = 0; k < peer_rounds && m; k++) {
        r->peer_ms += spawn_all(m, (char *const *const *)argvs);
        r->peer_n += m;
    }
    for (int i = 0; i < m; i++)
        free(argvs[i]);
    free(argvs);
    for (int i = 0; i < n; i++) {
        if (ids[i])
            session_delete(ids[i]);
        free(ids[i]);
        free(cids[i]);
        free(paths[i]);
    }
    free(ids);
    free(cids);
    free(paths);
}

/* The local backend (bubblewrap on the host) against Docker in the same run: session ready,
 * interleaved in random order, then echo hi through the engine on one session of each. */
struct backends {
    struct timings lready, dready, lecho, decho;
};

static void measure_backends(int n_ready, int n_echo, struct backends *b)
{
    static const char *const bodies[2] = {"{\"backend\": \"local\"}", "{}"};
    struct timings *ready[2] = {&b->lready, &b->dready}, *echo[2] = {&b->lecho, &b->decho};
    for (int i = 0; i < n_ready + 1; i++) { /* the first round warms up */
        bool first = rand() & 1;
        for (int k = 0; k < 2; k++) {
            int which = (k == 0) == first ? 0 : 1;
            double ms;
            char *id = session_create_body(bodies[which], &ms);
            if (id && i > 0)
                timings_add(ready[which], ms);
            if (id)
                session_delete(id);
            free(id);
        }
    }
    double ms;
    char *ids[2] = {session_create_body(bodies[0], &ms), session_create_body(bodies[1], &ms)};
    for (int i = 0; ids[0] && ids[1] && i < n_echo; i++) {
        bool first = rand() & 1;
        for (int k = 0; k < 2; k++) {
            int which = (k == 0) == first ? 0 : 1;
            double t0 = now_ms();
            if (action(ids[which], RUN("echo hi"), "hi"))
                timings_add(echo[which], now_ms() - t0);
        }
    }
    for (int k = 0; k < 2; k++) {
        if (ids[k])
            session_delete(ids[k]);
        free(ids[k]);
    }
}

static void row(const char *what, struct timings *a, const char *peer, struct timings *b)
{
    if (!a->n || !b->n) {
        printf("| %-30s | %9s | %9s | %-44s | %9s | %9s | %-22s |\n", what, "n/a", "n/a", peer,
               "n/a", "n/a", "not measured");
        return;
    }
    double a50 = timings_pct(a, 0.5), a95 = timings_pct(a, 0.95);
    double b50 = timings_pct(b, 0.5), b95 = timings_pct(b, 0.95);
    printf("| %-30s | %9.3f | %9.3f | %-44s | %9.3f | %9.3f | %6.3f× (%.1f× faster) |\n", what, a50,
           a95, peer, b50, b95, a50 / b50, b50 / a50);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"paddock", required_argument, NULL, 'p'},    {"image", required_argument, NULL, 'i'},
        {"ready", required_argument, NULL, 'r'},      {"echo", required_argument, NULL, 'e'},
        {"exec", required_argument, NULL, 'x'},       {"executor", required_argument, NULL, 'E'},
        {"concurrent", required_argument, NULL, 'c'}, {"history", required_argument, NULL, 'H'},
        {"sessions", required_argument, NULL, 'S'},   {NULL, 0, NULL, 0}};
    const char *paddock = "build/paddock", *image = "paddock/base:local";
    const char *executor = NULL;
    int n_ready = 20, n_echo = 500, n_exec = 30, n_conc = 50, n_tput = 10, c;
    long n_history = 1000000;
    if (getenv("PADDOCK_BENCH_HISTORY"))
        n_history = atol(getenv("PADDOCK_BENCH_HISTORY"));
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            paddock = optarg;
            break;
        case 'i':
            image = optarg;
            break;
        case 'r':
            n_ready = atoi(optarg);
            break;
        case 'e':
            n_echo = atoi(optarg);
            break;
        case 'x':
            n_exec = atoi(optarg);
            break;
        case 'E':
            executor = optarg;
            break;
        case 'c':
            n_conc = atoi(optarg);
            break;
        case 'H':
            n_history = atol(optarg);
            break;
        case 'S':
            n_tput = atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    char tmpl[] = "/tmp/paddock-bench-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        return 1;
    char sock[256], log[256];
    snprintf(sock, sizeof(sock), "%s/engine.sock", dir);
    snprintf(log, sizeof(log), "%s/engine.log", dir);
    engine_sock = sock;
    snprintf(operator_sock, sizeof(operator_sock), "%s/operator.sock", dir);
    setenv("PADDOCK_TEST_LABEL", "bench", 1);
    setenv("PADDOCK_IMAGE", image, 1);
    /* The local backend's opt-in, when bubblewrap and the user nobody are there. */
    bool local_ok = access("/usr/bin/bwrap", X_OK) == 0 && getpwnam("nobody");
    char cfg[300];
    snprintf(cfg, sizeof(cfg), "%s/config.toml", dir);
    FILE *cf = local_ok ? fopen(cfg, "w") : NULL;
    if (cf) {
        fprintf(cf,
                "[local]\nenabled = true\nuser = \"nobody\"\nroot = \"%s/local-root\"\n"
                "[security]\nbackend_local = \"allow\"\n", /* the bench asks on the agents socket */
                dir);
        fclose(cf);
        setenv("PADDOCK_CONFIG", cfg, 1);
    }
    pid_t eng = fork();
    if (eng == 0) {
        if (!freopen(log, "w", stderr))
            _exit(126);
        execl(paddock, paddock, "serve", "--state-dir", dir, "--socket", sock, (char *)NULL);
        _exit(127);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    curl = curl_easy_init();
    exec_curl = curl_easy_init();
    for (int i = 0; i < 500 && req("GET", "/v1/info", NULL, NULL) != 200; i++)
        usleep(10000);
    srand((unsigned)time(NULL));

    /* 1. session ready vs docker run --rm --network none IMG true */
    struct timings ready = {0}, drun = {0};
    char *run_argv[] = {
        "docker",      "run",  "--rm", "--network", "none", "--label", "paddock.test=bench",
        (char *)image, "true", NULL};
    for (int i = 0; i < 2; i++) { /* warm-up, not counted */
        double ms;
        char *id = session_create(&ms);
        if (id)
            session_delete(id);
        free(id);
        spawn_wait(run_argv, true);
    }
    for (int i = 0; i < n_ready; i++) {
        bool first = rand() & 1;
        for (int k = 0; k < 2; k++) {
            if ((k == 0) == first) {
                double ms;
                char *id = session_create(&ms);
                if (id) {
                    timings_add(&ready, ms);
                    session_delete(id);
                }
                free(id);
            } else {
                double t0 = now_ms();
                if (spawn_wait(run_argv, true) == 0)
                    timings_add(&drun, now_ms() - t0);
            }
        }
    }

    /* 1b. session ready when the warm pool has one: claim, then wait for the refill so every
     * sample finds a warm sandbox (the refill is not what is measured). */
    struct timings warm = {0};
    if (req_operator("POST", "/v1/pool", "{\"size\": 2}") == 200) {
        for (int i = 0; i < n_ready; i++) {
            for (int t = 0; t < 600; t++) { /* up to 60 s for the pool to be full again */
                json_t *p = NULL;
                req("GET", "/v1/pool", NULL, &p);
                json_t *e = json_array_get(json_object_get(p, "pools"), 0);
                long n_warm = (long)json_integer_value(json_object_get(e, "ready"));
                json_decref(p);
                if (n_warm >= 2)
                    break;
                usleep(100000);
            }
            double ms;
            char *id = session_create(&ms);
            if (id) {
                timings_add(&warm, ms);
                session_delete(id);
            }
            free(id);
        }
        req_operator("POST", "/v1/pool", "{\"size\": 0}");
    }

    /* 2. actions vs docker exec, interleaved */
    double ms;
    char *sid = session_create(&ms);
    char *cid = sid ? session_container(sid) : NULL;
    long rss_fresh = -1;
    struct timings echo = {0}, dexec = {0}, echo_x = {0}, dexec2 = {0}, big = {0}, dbig = {0},
                   rd = {0}, drd = {0}, ed = {0}, ded = {0}, start = {0}, bigcmd = {0},
                   dbigcmd = {0};
    if (sid && cid) {
        bench_sid = sid;
        usleep(200000);
        rss_fresh = executor_rss_kb(cid);
        snprintf(exec_sock, sizeof(exec_sock), "%s/run/%s/executor.sock", dir, sid);
        action(sid,
               RUN("seq 1 20000 > /workspace/bench.txt && echo MARKER_A >> /workspace/bench.txt"),
               "");
        char *p_echo[] = {"docker", "exec", cid, "sh", "-c", "echo hi", NULL};
        char *p_big[] = {
            "docker", "exec", cid, "sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' a", NULL};
        /* As the agent's uid: container root has no DAC_OVERRIDE on the workspace. */
        char *p_read[] = {"docker", "exec", "-u", "1000", cid, "cat", "/workspace/bench.txt", NULL};
        char *p_edit[] = {"docker",
                          "exec",
                          "-u",
                          "1000",
                          cid,
                          "sed",
                          "-i",
                          "-e",
                          "s/MARKER_A/MARKER_T/",
                          "-e",
                          "s/MARKER_B/MARKER_A/",
                          "-e",
                          "s/MARKER_T/MARKER_B/",
                          "/workspace/bench.txt",
                          NULL};
        measure(op_echo_engine, p_echo, n_echo, n_exec, &echo, &dexec);
        measure(op_echo_exec, p_echo, n_echo, n_exec, &echo_x, &dexec2);
        measure(op_1mb, p_big, n_exec * 2, n_exec, &big, &dbig);
        measure(op_read, p_read, n_echo / 2, n_exec, &rd, &drd);
        measure(op_edit, p_edit, n_echo / 2, n_exec, &ed, &ded);
        char *p_bigcmd[] = {"docker", "exec",
                            cid,      "sh",
                            "-c",     "x=$(head -c 10000000 /dev/zero | tr '\\0' a); echo ${#x}",
                            NULL};
        if (make_bigcmd_json())
            measure(op_10mb_command, p_bigcmd, 10, 5, &bigcmd, &dbigcmd);
        free(bigcmd_json);
    }
    if (executor)
        measure_executor_start(executor, dir, 20, &start);
    /* 3. executor idle RSS, after the actions above */
    usleep(200000);
    long rss = cid ? executor_rss_kb(cid) : -1;
    if (sid)
        session_delete(sid);

    /* 3a. the local backend against Docker */
    struct backends be = {0};
    if (cf)
        measure_backends(n_ready, n_echo / 5, &be);

    /* 3b. recorded actions per second across sessions */
    struct tput_result tput = {0};
    if (n_tput > 0)
        throughput(n_tput, 100, &tput);

    /* 4. many sessions at once */
    struct conc_result conc = {0};
    if (n_conc > 0)
        concurrent_sessions(n_conc, eng, image, &conc);

    printf("paddock bench: %s, image %s; milliseconds; paddock and peer measured interleaved in "
           "one run\n\n",
           PADDOCK_VERSION, image);
    printf("| %-30s | %9s | %9s | %-44s | %9s | %9s | %-22s |\n", "metric", "p50", "p95",
           "peer (same run)", "peer p50", "peer p95", "paddock / peer");
    printf("|%s|%s|%s|%s|%s|%s|%s|\n", "--------------------------------", "-----------",
           "-----------", "----------------------------------------------", "-----------",
           "-----------", "------------------------");
    row("session ready", &ready, "docker run --rm --network none IMG true", &drun);
    row("session ready, local backend", &be.lready, "session ready, docker backend", &be.dready);
    row("echo hi, local backend", &be.lecho, "echo hi, docker backend", &be.decho);
    row("session ready, warm pool", &warm, "docker run --rm --network none IMG true", &drun);
    row("echo hi, engine API", &echo, "docker exec C sh -c 'echo hi'", &dexec);
    row("echo hi, executor socket", &echo_x, "docker exec C sh -c 'echo hi'", &dexec2);
    row("1 MB of output, executor", &big, "docker exec C sh -c 'head -c 1000000 ...'", &dbig);
    row("read 109 KB file, executor", &rd, "docker exec C cat FILE", &drd);
    row("str_replace edit, executor", &ed, "docker exec C sed -i ... FILE", &ded);
    row("10 MB command, executor", &bigcmd, "docker exec C sh -c 'x=$(head -c 10MB ...)'",
        &dbigcmd);
    printf("\nsamples: ready %zu/%zu; echo engine %zu/%zu; echo executor %zu/%zu; 1 MB %zu/%zu; "
           "read %zu/%zu; edit %zu/%zu (a row with 0 paddock samples: that action is not "
           "supported by this executor)\n",
           ready.n, drun.n, echo.n, dexec.n, echo_x.n, dexec2.n, big.n, dbig.n, rd.n, drd.n, ed.n,
           ded.n);
    if (start.n)
        printf("executor start (exec → socket accepting, host): p50 %.2f ms, p95 %.2f ms (budget "
               "10 ms)\n",
               timings_pct(&start, 0.5), timings_pct(&start, 0.95));
    printf("executor idle RSS: %.2f MB fresh, %.2f MB after the runs above (budget 2 MB)\n",
           rss_fresh > 0 ? (double)rss_fresh / 1024.0 : -1.0,
           rss > 0 ? (double)rss / 1024.0 : -1.0);

    if (echo.n && echo_x.n)
        printf("the engine's added latency per action over the executor alone (echo hi, "
               "difference of the medians above): p50 %.3f ms, p95 %.3f ms (recording, risk, "
               "policy, forwarding)\n",
               timings_pct(&echo, 0.5) - timings_pct(&echo_x, 0.5),
               timings_pct(&echo, 0.95) - timings_pct(&echo_x, 0.95));
    if (tput.sessions)
        printf("recorded actions across %d sessions at once: %d in %.0f ms = %.0f actions/s (%d "
               "answered 200); docker exec across the same containers at once: %d in %.0f ms = "
               "%.0f/s\n",
               tput.sessions, tput.actions, tput.ms, tput.actions * 1000.0 / tput.ms, tput.ok,
               tput.peer_n, tput.peer_ms,
               tput.peer_ms > 0 ? tput.peer_n * 1000.0 / tput.peer_ms : 0);
    if (n_conc > 0)
        printf("%d sessions created at once: %d ready in %.0f ms (docker run -d ×%d at once: "
               "%.0f ms); deleted at once: %d in %.0f ms (docker rm -f ×%d: %.0f ms); engine "
               "RSS %.1f MB before, peak %.1f MB, %.1f MB after\n",
               conc.n, conc.created, conc.create_ms, conc.n, conc.peer_create_ms, conc.deleted,
               conc.delete_ms, conc.n, conc.peer_delete_ms, (double)conc.rss_before_kb / 1024.0,
               (double)conc.rss_peak_kb / 1024.0, (double)conc.rss_after_kb / 1024.0);

    kill(eng, SIGTERM);
    waitpid(eng, NULL, 0);
    if (n_history > 0)
        bench_history(paddock, n_history);
    free(sid);
    free(cid);
    curl_easy_cleanup(curl);
    curl_easy_cleanup(exec_curl);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return ready.n && echo.n ? 0 : 1;
}
