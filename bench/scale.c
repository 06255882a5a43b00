/* paddock-bench-scale: one engine under load (issue 20, "Up: one engine"). Starts its own engine
 * on a temporary state dir; every container it makes carries its own paddock.test label and is
 * removed.
 *
 *   paddock-bench-scale --paddock build/paddock [--image IMG] [--echo N] [--clients N]
 *                       [--seconds S] [--live N] [--batch B] [--before OLD_PADDOCK] [--read]
 *                       [--throughput]
 *
 * 1. echo hi through the engine with one client, one request at a time (keep-alive): the
 *    median is what a lone action costs, group commit or not.
 * 2. Recorded actions a second across --clients sessions (10): one client per session, each
 *    sending its next `echo hi` as soon as the last one is answered, for --seconds; against
 *    the same actions straight to the sessions' executors in turns with it (no engine, nothing
 *    recorded: the ceiling), and `docker exec` across the same containers at once. Each says
 *    where its CPU went an action: the engine, the sandboxes' executors and shells (found from
 *    each container's first process), this client. With --before, an older build's engine runs
 *    beside this one and both parts are measured on both in the same minutes, in turns. So is
 *    this build with nothing recorded (PADDOCK_UNSAFE_BENCH=record: each write 256 bytes
 *    appended to a log and synced instead): what the record costs, and the most any durable
 *    record leaves on this machine.
 *    --throughput: part 2 alone, without the docker exec peer (for profiling).
 * 3. With --live N: N sessions created in batches of --batch at once (what the daemon takes),
 *    one action in each, the engine's RSS and descriptors, echo hi's median on one of them
 *    with all N live (against part 1's), then every one deleted and nothing left behind
 *    (containers and volumes with the label, the sessions' run directories, the list).
 *    Not for CI: 500 sandboxes take minutes and most of a small machine.
 */
#include "bench.h"
#include "procstat.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *sock;
static CURL *one;
static char label[64];

#define ECHO_BODY "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"echo hi\"}}}"
/* --read: the throughput part's action reads a 3-byte file instead: the executor answers
 * without a shell, so what is left is mostly the engine's (and the client's) part. */
#define READ_BODY "{\"action\":{\"action\":\"read\",\"args\":{\"path\":\"/workspace/hi.txt\"}}}"
#define READ_SETUP                                                                                 \
    "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"echo hi > /workspace/hi.txt\"}}}"
static const char *tput_body = ECHO_BODY, *tput_want = "\"content\":\"hi\"";
static bool tput_read;
/* --throughput: part 2 alone (with its peer straight to the executors), for profiling. */
static bool only_tput;

/* The processes inside the sandboxes (found from each container's first process) by what
 * they are: the executor, the shell (bash), anything else; and their CPU so far. */
enum sandbox_part { PART_EXECUTOR, PART_SHELL, PART_OTHER, PART_COUNT };
static const char *const sandbox_part_name[PART_COUNT] = {"executors", "shells", "other"};
struct sandbox_procs {
    pid_t pid[256];
    enum sandbox_part part[256];
    int n;
};

static int stat_read(pid_t pid, char *comm, size_t cap, pid_t *ppid)
{
    char buf[1024];
    procstat_text(pid, buf, sizeof(buf));
    char *a = strchr(buf, '('), *z = strrchr(buf, ')');
    int pp = 0;
    if (!a || !z || z < a || sscanf(z + 2, "%*c %d", &pp) != 1)
        return -1;
    snprintf(comm, cap, "%.*s", (int)(z - a - 1), a + 1);
    *ppid = pp;
    return 0;
}

static void sandbox_procs_find(char **cids, int n, struct sandbox_procs *sp)
{
    pid_t init[n];
    sp->n = 0;
    for (int i = 0; i < n; i++) {
        char cmd[160];
        init[i] = 0;
        if (!cids[i])
            continue;
        snprintf(cmd, sizeof(cmd), "docker inspect -f '{{.State.Pid}}' %s", cids[i]);
        FILE *f = popen(cmd, "r");
        int pid = 0;
        if (f && fscanf(f, "%d", &pid) == 1)
            init[i] = pid;
        if (f)
            pclose(f);
    }
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) && sp->n < 256) {
        pid_t pid = (pid_t)atoi(e->d_name), up = pid;
        char comm[64], c2[64];
        pid_t pp;
        if (pid <= 0 || stat_read(pid, comm, sizeof(comm), &pp) < 0)
            continue;
        bool in = false;
        for (int depth = 0; depth < 6 && up > 1 && !in; depth++) {
            for (int i = 0; i < n; i++)
                in |= init[i] == up;
            if (!in && stat_read(up, c2, sizeof(c2), &up) < 0)
                break;
        }
        if (!in)
            continue;
        sp->part[sp->n] = strncmp(comm, "paddock-exec", 12) == 0 ? PART_EXECUTOR
                          : strcmp(comm, "bash") == 0            ? PART_SHELL
                                                                 : PART_OTHER;
        sp->pid[sp->n++] = pid;
    }
    if (d)
        closedir(d);
}

/* An engine of the run: its binary, state dir, socket, client, and what was measured on it. */
struct engine_run {
    const char *bin, *name;
    const char *unsafe; /* $PADDOCK_UNSAFE_BENCH for it, or NULL */
    char dir[64], sock[128];
    pid_t pid;
    CURL *one;
    char **ids;
    struct timings echo;
    long ok, all, commits, writes;
    double ms, cpu;
    /* the CPU its sandboxes' processes and this client used during part 2 */
    struct sandbox_procs procs;
    double part_cpu[PART_COUNT], client_cpu;
    double machine_cpu; /* every core's busy time over part 2 (/proc/stat) */
    double docker_cpu;  /* dockerd's, containerd's and the shims' over part 2 */
    /* the engine's loop thread over part 2: on a CPU, and runnable but waiting for one (ms;
     * sched_ok false when the kernel does not say) */
    double loop_run, loop_wait, all_run; /* all_run: every thread of the engine's */
    bool sched_ok;
};

/* Part 2 straight to the executors of the first engine's sessions: the ceiling. */
struct direct_run {
    long ok, all;
    double ms, part_cpu[PART_COUNT], client_cpu, machine_cpu, docker_cpu;
};

static int engine_start(struct engine_run *x)
{
    snprintf(x->dir, sizeof(x->dir), "/tmp/paddock-bench-scale-XXXXXX");
    if (!mkdtemp(x->dir))
        return -1;
    char log[128];
    snprintf(x->sock, sizeof(x->sock), "%s/engine.sock", x->dir);
    snprintf(log, sizeof(log), "%s/engine.log", x->dir);
    x->pid = fork();
    if (x->pid == 0) {
        if (!freopen(log, "w", stderr))
            _exit(126);
        if (x->unsafe)
            setenv("PADDOCK_UNSAFE_BENCH", x->unsafe, 1);
        execl(x->bin, x->bin, "serve", "--state-dir", x->dir, "--socket", x->sock, (char *)NULL);
        _exit(127);
    }
    x->one = curl_easy_init();
    for (int i = 0; i < 500; i++) {
        if (req_on(x->one, x->sock, "GET", "/v1/info", NULL, NULL) == 200)
            return 0;
        usleep(10000);
    }
    fprintf(stderr, "bench-scale: %s did not answer (log: %s)\n", x->bin, log);
    return -1;
}

static void engine_stop(struct engine_run *x)
{
    if (x->pid > 0) { /* never kill(-1, ...) after a fork that failed */
        kill(x->pid, SIGTERM);
        waitpid(x->pid, NULL, 0);
    }
    if (x->one)
        curl_easy_cleanup(x->one);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench-scale: cannot remove %s\n", x->dir);
}

static void engine_use(struct engine_run *x)
{
    sock = x->sock;
    one = x->one;
}

static long req(const char *method, const char *path, const char *payload, json_t **out)
{
    return req_on(one, sock, method, path, payload, out);
}

/* n requests at once in batches of batch: POST /v1/sessions (ids[i] set to the new session's
 * id, NULL where it failed) or, with del, DELETE /v1/sessions/ids[i]. How many succeeded. */
static int batched(int n, int batch, char **ids, bool del, double *ms_total)
{
    double t0 = now_ms();
    int good = 0;
    for (int base = 0; base < n; base += batch) {
        int k = n - base < batch ? n - base : batch;
        CURLM *m = curl_multi_init();
        CURL *h[k];
        struct bench_body b[k];
        struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
        memset(b, 0, sizeof(b));
        for (int i = 0; i < k; i++) {
            h[i] = NULL;
            char url[160];
            if (del && !ids[base + i])
                continue;
            h[i] = curl_easy_init();
            if (del)
                snprintf(url, sizeof(url), "http://paddock/v1/sessions/%s", ids[base + i]);
            else
                snprintf(url, sizeof(url), "http://paddock/v1/sessions");
            curl_easy_setopt(h[i], CURLOPT_UNIX_SOCKET_PATH, sock);
            curl_easy_setopt(h[i], CURLOPT_URL, url);
            if (del)
                curl_easy_setopt(h[i], CURLOPT_CUSTOMREQUEST, "DELETE");
            else
                curl_easy_setopt(h[i], CURLOPT_POSTFIELDS, "{}");
            curl_easy_setopt(h[i], CURLOPT_HTTPHEADER, hdr);
            curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, bench_on_body);
            curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &b[i]);
            curl_multi_add_handle(m, h[i]);
        }
        int running = 1;
        while (running) {
            curl_multi_perform(m, &running);
            if (running)
                curl_multi_poll(m, NULL, 0, 1000, NULL);
        }
        for (int i = 0; i < k; i++) {
            if (!h[i])
                continue;
            long st = -1;
            curl_easy_getinfo(h[i], CURLINFO_RESPONSE_CODE, &st);
            if (del) {
                good += st == 200;
            } else {
                json_t *j = b[i].p ? json_loads(b[i].p, 0, NULL) : NULL;
                const char *id = json_string_value(json_object_get(j, "id"));
                ids[base + i] = st == 201 && id ? strdup(id) : NULL;
                good += ids[base + i] != NULL;
                json_decref(j);
            }
            if (st != (del ? 200 : 201))
                fprintf(stderr, "bench-scale: %s %d: %ld %.200s\n", del ? "delete" : "create",
                        base + i, st, b[i].p ? b[i].p : "");
            free(b[i].p);
            curl_multi_remove_handle(m, h[i]);
            curl_easy_cleanup(h[i]);
        }
        curl_slist_free_all(hdr);
        curl_multi_cleanup(m);
    }
    *ms_total = now_ms() - t0;
    return good;
}

/* One client per session, each sending its next action when the last one is answered, for
 * seconds; returns how many were answered 200 (*all: how many were answered at all). With dir,
 * straight to each session's executor (its socket under dir) instead of through the engine. */
static long closed_loop_on(const char *dir, char **ids, int n, double seconds, long *all,
                           double *ms)
{
    CURLM *m = curl_multi_init();
    CURL *h[n];
    char urls[n][160];
    struct bench_body b[n];
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    char socks[n][300];
    memset(b, 0, sizeof(b));
    int live = 0;
    for (int i = 0; i < n; i++) {
        h[i] = NULL;
        if (!ids[i])
            continue;
        if (dir) {
            snprintf(urls[i], sizeof(urls[i]), "http://executor/execute_action");
            snprintf(socks[i], sizeof(socks[i]), "%s/run/%s/executor.sock", dir, ids[i]);
        } else {
            snprintf(urls[i], sizeof(urls[i]), "http://paddock/v1/sessions/%s/execute_action",
                     ids[i]);
            snprintf(socks[i], sizeof(socks[i]), "%s", sock);
        }
        h[i] = curl_easy_init();
        /* SIGPIPE is ignored for the whole run (main): without this libcurl sets and restores
         * its handler around every call, two sigactions a request of the load generator. */
        curl_easy_setopt(h[i], CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h[i], CURLOPT_UNIX_SOCKET_PATH, socks[i]);
        curl_easy_setopt(h[i], CURLOPT_URL, urls[i]);
        curl_easy_setopt(h[i], CURLOPT_POSTFIELDS, tput_body);
        curl_easy_setopt(h[i], CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, bench_on_body);
        curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &b[i]);
        curl_easy_setopt(h[i], CURLOPT_PRIVATE, (void *)(long)i);
        curl_multi_add_handle(m, h[i]);
        live++;
    }
    long ok = 0;
    *all = 0;
    double t0 = now_ms(), end = t0 + seconds * 1e3;
    while (live) {
        int running;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURL *e = msg->easy_handle;
            long i = 0, st = -1;
            curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&i);
            curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &st);
            (*all)++;
            if (st == 200 && b[i].p && strstr(b[i].p, tput_want))
                ok++;
            free(b[i].p);
            b[i].p = NULL;
            b[i].n = 0;
            curl_multi_remove_handle(m, e);
            if (now_ms() < end)
                curl_multi_add_handle(m, e); /* the same handle: its connection is kept */
            else
                live--;
        }
        if (live)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    *ms = now_ms() - t0;
    for (int i = 0; i < n; i++)
        if (h[i])
            curl_easy_cleanup(h[i]);
    curl_slist_free_all(hdr);
    curl_multi_cleanup(m);
    return ok;
}

static long closed_loop(char **ids, int n, double seconds, long *all, double *ms)
{
    return closed_loop_on(NULL, ids, n, seconds, all, ms);
}

/* echo hi on one session, n times in a row; its latencies. */
static void echo_series(const char *id, int n, struct timings *t)
{
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action", id);
    for (int i = 0; i < n; i++) {
        json_t *j = NULL;
        double t0 = now_ms();
        long st = req("POST", path, ECHO_BODY, &j);
        double ms = now_ms() - t0;
        const char *c = json_string_value(json_object_get(j, "content"));
        if (st == 200 && c && strcmp(c, "hi") == 0)
            timings_add(t, ms);
        json_decref(j);
    }
}

/* The same, sample by sample: through the engine, then straight to the session's executor
 * (its socket under the state dir), so what the machine adds and what the engine adds can be
 * told apart. */
static void echo_pairs(const char *dir, const char *id, int n, struct timings *eng_t,
                       struct timings *exe_t)
{
    char path[160], exe_sock[300];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action", id);
    snprintf(exe_sock, sizeof(exe_sock), "%s/run/%s/executor.sock", dir, id);
    CURL *x = curl_easy_init();
    for (int i = 0; i < n + 5; i++) {
        json_t *j = NULL;
        double t0 = now_ms();
        long st = req("POST", path, ECHO_BODY, &j);
        double ms = now_ms() - t0;
        const char *c = json_string_value(json_object_get(j, "content"));
        if (i >= 5 && st == 200 && c && strcmp(c, "hi") == 0)
            timings_add(eng_t, ms);
        json_decref(j);
        j = NULL;
        t0 = now_ms();
        st = req_on(x, exe_sock, "POST", "/execute_action", ECHO_BODY, &j);
        ms = now_ms() - t0;
        c = json_string_value(json_object_get(j, "content"));
        if (i >= 5 && st == 200 && c && strcmp(c, "hi") == 0)
            timings_add(exe_t, ms);
        json_decref(j);
    }
    curl_easy_cleanup(x);
}

static char *container_of(const char *id)
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

/* The same command in every container at once, rounds times: how many ran, in *ms. */
static int docker_exec_all(char **cids, int n, int rounds, double *ms)
{
    int done = 0;
    double t0 = now_ms();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    for (int r = 0; r < rounds; r++) {
        pid_t pids[n];
        for (int i = 0; i < n; i++) {
            char *argv[] = {"docker", "exec", cids[i], "sh", "-c", "echo hi", NULL};
            if (!cids[i] || posix_spawnp(&pids[i], "docker", &fa, NULL, argv, environ) != 0)
                pids[i] = 0;
        }
        for (int i = 0; i < n; i++) {
            int st;
            if (pids[i] && waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st) &&
                WEXITSTATUS(st) == 0)
                done++;
        }
    }
    posix_spawn_file_actions_destroy(&fa);
    *ms = now_ms() - t0;
    return done;
}

static void sandbox_cpu(const struct sandbox_procs *sp, double out[PART_COUNT])
{
    for (int k = 0; k < PART_COUNT; k++)
        out[k] = 0;
    for (int i = 0; i < sp->n; i++)
        out[sp->part[i]] += procstat_cpu_ms(sp->pid[i]);
}

static double self_cpu_ms(void)
{
    return procstat_cpu_ms(getpid());
}

/* The CPU so far of Docker's own processes (dockerd, containerd, the containers' shims), ms:
 * they carry each container's log lines and its stdio, so a sandbox's writes to its log cost
 * there. Every container's shim counts, the machine's others too. */
static double docker_cpu_ms(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    double sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char buf[1024];
        procstat_text((pid_t)pid, buf, sizeof(buf));
        char *open = strchr(buf, '('), *close = strrchr(buf, ')');
        if (!open || !close || close < open)
            continue;
        size_t n = (size_t)(close - open - 1);
        /* comm is cut at 15 characters: containerd-shim-runc-v2 reads containerd-shim */
        if ((n == 7 && !strncmp(open + 1, "dockerd", 7)) ||
            (n >= 10 && !strncmp(open + 1, "containerd", 10)))
            sum += procstat_text_cpu_ms(buf);
    }
    closedir(d);
    return sum;
}

/* Where the CPU of n actions went, ms an action (engine_cpu < 0: no engine), and the rate two
 * cores would allow if nothing else ran. */
static void cpu_split_print(long n, double engine_cpu, const double part[PART_COUNT], double client,
                            double docker, double machine)
{
    if (n <= 0)
        return;
    double total = client + (engine_cpu > 0 ? engine_cpu : 0);
    printf("  CPU an action:");
    if (engine_cpu >= 0)
        printf(" engine %.3f ms,", engine_cpu / (double)n);
    for (int k = 0; k < PART_COUNT; k++) {
        printf(" %s %.3f ms,", sandbox_part_name[k], part[k] / (double)n);
        total += part[k];
    }
    printf(" client %.3f ms = %.3f ms (2 cores: at most %.0f a second)\n", client / (double)n,
           total / (double)n, total > 0 ? 2000.0 * (double)n / total : 0);
    if (machine > 0)
        printf("  the whole machine: %.3f ms of CPU an action: Docker (dockerd, containerd, shims) "
               "%.3f ms, %.3f ms outside all these processes (kernel threads, interrupts, other "
               "load; %.0f a second at most on %ld cores)\n",
               machine / (double)n, docker / (double)n, (machine - total - docker) / (double)n,
               sysconf(_SC_NPROCESSORS_ONLN) * 1000.0 * (double)n / machine,
               sysconf(_SC_NPROCESSORS_ONLN));
}

static int count_fds(pid_t pid)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(p);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* Lines a shell command prints (containers or volumes left with the label). */
static int count_lines(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    int n = 0;
    char line[512];
    while (f && fgets(line, sizeof(line), f))
        n++;
    if (f)
        pclose(f);
    return n;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static long info_count(const char *key)
{
    json_t *j = NULL;
    req("GET", "/v1/info", NULL, &j);
    long v = (long)json_integer_value(json_object_get(json_object_get(j, "record"), key));
    json_decref(j);
    return v;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"paddock", required_argument, NULL, 'p'},
                                         {"image", required_argument, NULL, 'i'},
                                         {"echo", required_argument, NULL, 'e'},
                                         {"clients", required_argument, NULL, 'c'},
                                         {"seconds", required_argument, NULL, 's'},
                                         {"live", required_argument, NULL, 'l'},
                                         {"batch", required_argument, NULL, 'b'},
                                         {"before", required_argument, NULL, 'B'},
                                         {"read", no_argument, NULL, 'R'},
                                         {"throughput", no_argument, NULL, 'T'},
                                         {NULL, 0, NULL, 0}};
    const char *paddock = "build/paddock", *image = "paddock/base:local", *before = NULL;
    int n_echo = 300, clients = 10, n_live = 0, batch = 20, c;
    double seconds = 5;
    signal(SIGPIPE, SIG_IGN); /* a peer that goes away is an error of its request */
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            paddock = optarg;
            break;
        case 'i':
            image = optarg;
            break;
        case 'e':
            n_echo = atoi(optarg);
            break;
        case 'c':
            clients = atoi(optarg);
            break;
        case 's':
            seconds = atof(optarg);
            break;
        case 'l':
            n_live = atoi(optarg);
            break;
        case 'b':
            batch = atoi(optarg);
            break;
        case 'B':
            before = optarg;
            break;
        case 'T':
            only_tput = true;
            break;
        case 'R':
            tput_body = READ_BODY;
            tput_read = true;
            tput_want = "hi";
            break;
        default:
            fprintf(stderr,
                    "usage: %s --paddock P [--image I] [--echo N] [--clients N] [--seconds S] "
                    "[--live N] [--batch B] [--before OLD_PADDOCK] [--read] [--throughput]\n",
                    argv[0]);
            return 2;
        }
    }
    if (clients < 1 || batch < 1 || n_echo < 1)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0); /* a long run shows each part as it ends */
    snprintf(label, sizeof(label), "bench-scale-%d", (int)getpid());
    setenv("PADDOCK_TEST_LABEL", label, 1);
    setenv("PADDOCK_IMAGE", image, 1);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    /* The engine measured and, with --before, an older build beside it, measured in the same
     * minutes (interleaved): this machine's other load drifts too much for runs apart. */
    struct engine_run E[3] = {{.bin = paddock, .name = "this build"},
                              {.bin = before, .name = "--before"}};
    int ne = before ? 2 : 1;
    /* Beside them, this build with nothing recorded (the store's rows replaced by 256 bytes a
     * write appended to a log and synced alike): the most that any durable record leaves. */
    E[ne++] = (struct engine_run){
        .bin = paddock, .name = "this build, nothing recorded", .unsafe = "record"};
    for (int k = 0; k < ne; k++)
        if (engine_start(&E[k]) < 0) {
            for (int j = 0; j <= k; j++)
                engine_stop(&E[j]);
            return 1;
        }
    struct engine_run *eng_run = &E[0];
    pid_t eng = eng_run->pid;
    printf("paddock bench-scale: %s, image %s, %s%s%s\n\n", PADDOCK_VERSION, image, paddock,
           before ? " against " : "", before ? before : "");
    double ms;
    /* 1. one client: echo hi, the engines taking turns sample by sample */
    for (int k = 0; k < ne; k++) {
        engine_use(&E[k]);
        E[k].ids = calloc((size_t)clients, sizeof(char *));
        batched(clients, clients, E[k].ids, false, &ms);
        if (E[k].ids[0])
            echo_series(E[k].ids[0], 5, &E[k].echo); /* warm-up */
        E[k].echo.n = 0;
    }
    for (int i = 0; i < (only_tput ? 0 : n_echo); i++)
        for (int j = 0; j < ne; j++) {
            struct engine_run *x = &E[(i + j) % ne];
            engine_use(x);
            if (x->ids[0])
                echo_series(x->ids[0], 1, &x->echo);
        }
    for (int k = 0; k < (only_tput ? 0 : ne); k++)
        printf("echo hi, engine API, one client, %s: p50 %.3f ms, p95 %.3f ms (%zu samples; "
               "goal p50 ≤ 1 ms)\n",
               E[k].name, timings_pct(&E[k].echo, 0.5), timings_pct(&E[k].echo, 0.95), E[k].echo.n);

    if (tput_read)
        for (int k = 0; k < ne; k++) {
            engine_use(&E[k]);
            for (int i = 0; i < clients; i++) {
                char path[160];
                snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action", E[k].ids[i]);
                if (E[k].ids[i])
                    req("POST", path, READ_SETUP, NULL);
            }
        }
    /* 2. throughput across the sessions: each engine for half the time, twice, in turn, and
     * between them the same actions straight to the first engine's executors */
    struct direct_run D = {0};
    char **cids = calloc((size_t)clients, sizeof(char *));
    for (int k = ne - 1; k >= 0; k--) { /* the first engine's containers kept, for the peer */
        engine_use(&E[k]);
        for (int i = 0; i < clients; i++) {
            free(cids[i]);
            cids[i] = E[k].ids[i] ? container_of(E[k].ids[i]) : NULL;
        }
        sandbox_procs_find(cids, clients, &E[k].procs);
    }
    /* As many rounds as engines, each starting with the next: every engine runs in every
     * place of the order once (a Latin square), the machine's drift shared out evenly. */
    int rounds = ne;
    for (int round = 0; round < rounds; round++) {
        for (int j = 0; j < ne; j++) {
            struct engine_run *x = &E[(round + j) % ne];
            engine_use(x);
            long c0 = info_count("commits"), w0 = info_count("writes"), all = 0;
            double cpu0 = procstat_cpu_ms(x->pid), p0[PART_COUNT], p1[PART_COUNT],
                   me0 = self_cpu_ms();
            double m0 = procstat_machine_ms(), d0 = docker_cpu_ms();
            sandbox_cpu(&x->procs, p0);
            double r0 = 0, q0 = 0, r1 = 0, q1 = 0, a0 = 0, a1 = 0;
            bool sched = procstat_sched_ms(x->pid, x->pid, &r0, &q0) == 0 &&
                         procstat_sched_all_ms(x->pid, &a0) == 0;
            x->ok += closed_loop(x->ids, clients, seconds / rounds, &all, &ms);
            sched = sched && procstat_sched_ms(x->pid, x->pid, &r1, &q1) == 0 &&
                    procstat_sched_all_ms(x->pid, &a1) == 0;
            x->sched_ok = (round == 0 || x->sched_ok) && sched;
            x->loop_run += r1 - r0;
            x->loop_wait += q1 - q0;
            x->all_run += a1 - a0;
            x->machine_cpu += procstat_machine_ms() - m0;
            x->docker_cpu += docker_cpu_ms() - d0;
            x->cpu += procstat_cpu_ms(x->pid) - cpu0;
            x->client_cpu += self_cpu_ms() - me0;
            sandbox_cpu(&x->procs, p1);
            for (int k = 0; k < PART_COUNT; k++)
                x->part_cpu[k] += p1[k] - p0[k];
            x->all += all;
            x->ms += ms;
            x->commits += info_count("commits") - c0;
            x->writes += info_count("writes") - w0;
        }
        long all = 0;
        double p0[PART_COUNT], p1[PART_COUNT], me0 = self_cpu_ms(), m0 = procstat_machine_ms();
        double d0 = docker_cpu_ms();
        sandbox_cpu(&E[0].procs, p0);
        D.ok += closed_loop_on(E[0].dir, E[0].ids, clients, seconds / rounds, &all, &ms);
        D.machine_cpu += procstat_machine_ms() - m0;
        D.docker_cpu += docker_cpu_ms() - d0;
        D.client_cpu += self_cpu_ms() - me0;
        sandbox_cpu(&E[0].procs, p1);
        for (int k = 0; k < PART_COUNT; k++)
            D.part_cpu[k] += p1[k] - p0[k];
        D.all += all;
        D.ms += ms;
    }
    engine_use(&E[0]);
    double peer_ms = 0;
    int peer = only_tput ? 0 : docker_exec_all(cids, clients, 3, &peer_ms);
    for (int k = 0; k < ne; k++) {
        struct engine_run *x = &E[k];
        double rate = x->ms > 0 ? (double)x->ok * 1000.0 / x->ms : 0;
        printf("%s%s actions across %d sessions, one client each, %s, %.0f s: %ld answered (%ld "
               "with hi) = %.0f actions/s (%s); the engine's CPU %.3f ms an action (%.0f%% of a "
               "core)",
               x->unsafe ? "" : "recorded ", tput_read ? "read (3 bytes, no shell)" : "echo hi",
               clients, x->name, x->ms / 1e3, x->all, x->ok, rate,
               x->unsafe ? "PADDOCK_UNSAFE_BENCH=record: the most a durable record leaves"
                         : "goal ≥ 5,000",
               x->all ? x->cpu / (double)x->all : 0, x->ms > 0 ? x->cpu * 100.0 / x->ms : 0);
        if (x->commits > 0)
            printf("; %ld commits carried %ld writes (%.1f a commit; an action is two)", x->commits,
                   x->writes, (double)x->writes / (double)x->commits);
        printf("\n");
        /* Runnable nearly all the time says the loop is what the others wait for. */
        if (x->sched_ok && x->ms > 0)
            printf("  the engine's loop thread: on a CPU %.0f%% of the time, runnable and waiting "
                   "for a CPU %.0f%% (%.3f ms an action on a CPU; its other threads, the "
                   "syncer's, %.3f ms)\n",
                   x->loop_run * 100.0 / x->ms, x->loop_wait * 100.0 / x->ms,
                   x->all ? x->loop_run / (double)x->all : 0,
                   x->all ? (x->all_run - x->loop_run) / (double)x->all : 0);
        cpu_split_print(x->all, x->cpu, x->part_cpu, x->client_cpu, x->docker_cpu, x->machine_cpu);
        /* The same build without the record: what the record costs it (the engine's CPU only:
         * the kernel's writeback and the disk's own threads are not in it). */
        const struct engine_run *bare = &E[ne - 1];
        if (k == 0 && x->all > 0 && bare->all > 0 && bare->ok > 0 && bare->ms > 0)
            printf("  against nothing recorded: %.2f× its actions a second; the engine's CPU "
                   "%.3f ms an action above it\n",
                   rate / ((double)bare->ok * 1000.0 / bare->ms),
                   x->cpu / (double)x->all - bare->cpu / (double)bare->all);
    }
    printf("the same %s straight to the executors of %d sessions (no engine, nothing recorded), "
           "%.0f s: %ld answered (%ld with hi) = %.0f actions/s (the ceiling here)\n",
           tput_read ? "reads" : "echo hi", clients, D.ms / 1e3, D.all, D.ok,
           D.ms > 0 ? (double)D.ok * 1000.0 / D.ms : 0);
    cpu_split_print(D.all, -1, D.part_cpu, D.client_cpu, D.docker_cpu, D.machine_cpu);
    if (!only_tput)
        printf("docker exec across the same %d containers at once: %d in %.0f ms = %.0f/s (this "
               "build: %.1f× that)\n",
               clients, peer, peer_ms, peer_ms > 0 ? peer * 1000.0 / peer_ms : 0,
               peer_ms > 0 && peer && E[0].ms > 0
                   ? ((double)E[0].ok * 1000.0 / E[0].ms) / (peer * 1000.0 / peer_ms)
                   : 0);
    for (int i = 0; i < clients; i++)
        free(cids[i]);
    free(cids);
    for (int k = 0; k < ne; k++) {
        engine_use(&E[k]);
        batched(clients, clients, E[k].ids, true, &ms);
        for (int i = 0; i < clients; i++)
            free(E[k].ids[i]);
        free(E[k].ids);
    }
    for (int k = 1; k < ne; k++)
        engine_stop(&E[k]);
    engine_use(&E[0]);
    char **ids = calloc((size_t)n_live + 1, sizeof(char *));
    char rundir[300];
    snprintf(rundir, sizeof(rundir), "%s/run", E[0].dir);

    int rc = E[0].echo.n || (only_tput && E[0].ok) ? 0 : 1;
    if (E[ne - 1].ok == 0) {
        fprintf(stderr,
                "bench-scale: the engine with nothing recorded answered no action (log: "
                "%s/engine.log)\n",
                E[ne - 1].dir);
        rc = 1;
    }
    /* 3. many live sessions */
    if (n_live > 0) {
        long rss0 = proc_status_kb(eng, "VmRSS");
        int fd0 = count_fds(eng);
        /* The one-session figure just before: the machine's other load drifts over minutes. */
        int created = batched(1, 1, ids, false, &ms);
        struct timings echo_one = {0}, echon = {0}, exe_one = {0}, exen = {0};
        double cpu_one = procstat_cpu_ms(eng);
        if (ids[0])
            echo_pairs(E[0].dir, ids[0], n_echo, &echo_one, &exe_one);
        cpu_one = (procstat_cpu_ms(eng) - cpu_one) / (double)(n_echo + 5);
        double p50_one = timings_pct(&echo_one, 0.5);
        created += batched(n_live - 1, batch, ids + 1, false, &ms);
        printf("\n%d sessions: %d created in batches of %d in %.1f s\n", n_live, created, batch,
               ms / 1e3);
        /* one action in each, a batch at a time */
        int ran = 0;
        double t0 = now_ms();
        for (int base = 0; base < n_live; base += batch) {
            int k = n_live - base < batch ? n_live - base : batch;
            long a = 0;
            double m2;
            ran += (int)closed_loop(ids + base, k, 0, &a, &m2);
        }
        printf("one echo hi in each: %d answered with hi in %.1f s\n", ran, (now_ms() - t0) / 1e3);
        /* Settled: what the actions started (the disk watchdog measuring each session's
         * writes) is done; what remains is the engine's background with that many sessions. */
        double idle = 100;
        for (int i = 0; i < 60 && idle > 5; i++) {
            double cpu_a = procstat_cpu_ms(eng), wall_a = now_ms();
            usleep(1000 * 1000);
            idle = (procstat_cpu_ms(eng) - cpu_a) * 100.0 / (now_ms() - wall_a);
        }
        double cpu_n = procstat_cpu_ms(eng);
        if (ids[0])
            echo_pairs(E[0].dir, ids[0], n_echo, &echon, &exen);
        cpu_n = (procstat_cpu_ms(eng) - cpu_n) / (double)(n_echo + 5);
        /* What the dashboard and `paddock ls` ask for: the list of every session. */
        struct timings list_t = {0};
        for (int i = 0; i < 20; i++) {
            json_t *l = NULL;
            double tl = now_ms();
            if (req("GET", "/v1/sessions", NULL, &l) == 200)
                timings_add(&list_t, now_ms() - tl);
            json_decref(l);
        }
        printf("GET /v1/sessions with %d live: p50 %.2f ms, p95 %.2f ms\n", created,
               timings_pct(&list_t, 0.5), timings_pct(&list_t, 0.95));
        long rss = proc_status_kb(eng, "VmRSS"), hwm = proc_status_kb(eng, "VmHWM");
        int fds = count_fds(eng);
        double p50n = timings_pct(&echon, 0.5);
        printf("engine with %d live sessions: RSS %.1f MB (peak %.1f MB; %.1f MB before; goal ≤ "
               "60 MB), %d descriptors (%d before), %.1f%% of a core when idle\n",
               created, (double)rss / 1024.0, (double)hwm / 1024.0, (double)rss0 / 1024.0, fds, fd0,
               idle);
        double x1 = timings_pct(&exe_one, 0.5), xn = timings_pct(&exen, 0.5);
        printf("echo hi on one session, engine API: p50 %.3f ms, p95 %.3f ms alone; p50 %.3f ms, "
               "p95 %.3f ms with %d live: %.2f× (goal ≤ 1.2×)\n",
               p50_one, timings_pct(&echo_one, 0.95), p50n, timings_pct(&echon, 0.95), created,
               p50_one > 0 ? p50n / p50_one : 0);
        printf("the same straight to its executor (no engine): p50 %.3f ms alone, %.3f ms with "
               "%d live (%.2f×: the machine's share); the engine's added latency (difference of "
               "the medians) %.3f ms alone, %.3f ms with %d live\n",
               x1, xn, created, x1 > 0 ? xn / x1 : 0, p50_one - x1, p50n - xn, created);
        printf("the engine's CPU per action (its background included): %.3f ms alone, %.3f ms "
               "with %d live\n",
               cpu_one, cpu_n, created);
        double del_ms;
        int deleted = batched(n_live, batch, ids, true, &del_ms);
        json_t *list = NULL;
        req("GET", "/v1/sessions", NULL, &list);
        size_t listed = json_array_size(json_object_get(list, "sessions"));
        if (!json_object_get(list, "sessions"))
            listed = json_array_size(list);
        json_decref(list);
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "docker ps -aq --filter label=paddock.test=%s", label);
        int left_c = count_lines(cmd);
        snprintf(cmd, sizeof(cmd), "docker volume ls -q --filter label=paddock.test=%s", label);
        int left_v = count_lines(cmd);
        int left_r = count_entries(rundir);
        printf("%d deleted in batches of %d in %.1f s; left behind: %zu sessions listed, %d "
               "containers, %d volumes, "
               "%d run directories; engine %d descriptors\n",
               deleted, batch, del_ms / 1e3, listed, left_c, left_v, left_r, count_fds(eng));
        if (created < n_live || deleted < created || left_c || left_v || left_r || listed)
            rc = 1;
        for (int i = 0; i < n_live; i++)
            free(ids[i]);
    }
    free(ids);
    engine_stop(&E[0]);
    curl_global_cleanup();
    return rc;
}
