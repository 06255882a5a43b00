/* paddock-bench-live: from the sandbox writing a line to the dashboard's frame showing it.
 *
 *   paddock-bench-live [--paddock PATH] [--image IMAGE] [--samples N]
 *
 * A real engine (`paddock serve` on a temporary state dir) and sandbox, and the real dashboard
 * on a pseudo-terminal whose bytes go through a terminal emulator (libvterm): the agent's view
 * (Terminal tab, a) is opened, then a command in the sandbox prints one line per sample, each
 * when the bench makes a file in the bind-mounted workspace. Just before printing, the
 * command writes the wall clock (date +%s%N, the host's clock: a container shares it) to a
 * file; the sample is the time from then until the emulated screen shows the line (the
 * dashboard's frame written to its terminal). Issue 18's budget is p50 ≤ 50 ms; this
 * measures it, tests do not assert it.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vterm.h>

#include "bench.h"

#define LIVE_ROWS 40
#define LIVE_COLS 160

static const char *engine_sock;
static char operator_sock[300]; /* the dashboard's: the operator's socket beside it */

static size_t live_on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct {
        char *d;
        size_t len;
    } *b = ud;
    char *d = realloc(b->d, b->len + sz * n + 1);
    if (!d)
        return 0;
    memcpy(d + b->len, p, sz * n);
    b->d = d;
    b->len += sz * n;
    d[b->len] = '\0';
    return sz * n;
}

/* One request to the engine: the status, the reply parsed into *out (may be NULL). */
static long live_req(const char *method, const char *path, const char *body, json_t **out)
{
    CURL *e = curl_easy_init();
    struct {
        char *d;
        size_t len;
    } b = {0};
    char url[512];
    snprintf(url, sizeof(url), "http://paddock%s", path);
    curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, engine_sock);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, live_on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 120L);
    if (body)
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    long status = -1;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(e);
    if (out)
        *out = b.d ? json_loads(b.d, 0, NULL) : NULL;
    free(b.d);
    return status;
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the dashboard on a pty, its screen emulated ---- */

struct live_dash {
    pid_t pid;
    int master;
    VTerm *vt;
    VTermScreen *screen;
};

/* Read what the dashboard wrote (≤ ms of waiting) into the emulator; false once it is gone. */
static bool live_pump(struct live_dash *d, int ms)
{
    struct pollfd p = {.fd = d->master, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
        return true;
    char buf[65536];
    ssize_t n = read(d->master, buf, sizeof(buf));
    if (n <= 0)
        return n < 0 && errno == EINTR;
    vterm_input_write(d->vt, buf, (size_t)n);
    return true;
}

static bool live_screen_has(struct live_dash *d, const char *text)
{
    static char rows[LIVE_ROWS * (LIVE_COLS * 4 + 1) + 1];
    size_t n = vterm_screen_get_text(
        d->screen, rows, sizeof(rows) - 1,
        (VTermRect){.start_row = 0, .end_row = LIVE_ROWS, .start_col = 0, .end_col = LIVE_COLS});
    rows[n] = '\0';
    return strstr(rows, text) != NULL;
}

/* Pump until the screen shows text (≤ ms); whether it does. */
static bool live_wait_for(struct live_dash *d, const char *text, double ms)
{
    double deadline = now_ms() + ms;
    while (!live_screen_has(d, text)) {
        if (now_ms() > deadline || !live_pump(d, 20))
            return false;
    }
    return true;
}

static void live_keys(struct live_dash *d, const char *keys)
{
    if (write(d->master, keys, strlen(keys)) < 0)
        perror("paddock-bench-live: keys");
}

static int live_dash_start(struct live_dash *d, const char *paddock)
{
    struct winsize ws = {.ws_row = LIVE_ROWS, .ws_col = LIVE_COLS};
    d->pid = forkpty(&d->master, NULL, NULL, &ws);
    if (d->pid < 0)
        return -1;
    if (d->pid == 0) {
        setenv("TERM", "xterm-256color", 1);
        setenv("LANG", "C.UTF-8", 1);
        setenv("PADDOCK_SOCKET", engine_sock, 1);
        setenv("PADDOCK_OPERATOR_SOCKET", operator_sock, 1);
        execl(paddock, paddock, (char *)NULL);
        _exit(127);
    }
    d->vt = vterm_new(LIVE_ROWS, LIVE_COLS);
    vterm_set_utf8(d->vt, 1);
    d->screen = vterm_obtain_screen(d->vt);
    vterm_screen_reset(d->screen, 1);
    return 0;
}

static void live_dash_stop(struct live_dash *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        waitpid(d->pid, NULL, 0);
    }
    if (d->vt)
        vterm_free(d->vt);
    close(d->master);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"paddock", required_argument, NULL, 'p'},
                                         {"image", required_argument, NULL, 'i'},
                                         {"samples", required_argument, NULL, 'n'},
                                         {NULL, 0, NULL, 0}};
    const char *paddock = "build/paddock", *image = "paddock/base:local";
    int samples = 50, c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'p')
            paddock = optarg;
        else if (c == 'i')
            image = optarg;
        else if (c == 'n')
            samples = atoi(optarg);
        else
            return 2;
    }
    char tmpl[] = "/tmp/paddock-bench-live-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        return 1;
    char sock[256], log[256], ws[256];
    snprintf(sock, sizeof(sock), "%s/engine.sock", dir);
    snprintf(log, sizeof(log), "%s/engine.log", dir);
    /* Outside the state dir: the mount policy refuses what lies in it. */
    snprintf(ws, sizeof(ws), "/tmp/paddock-bench-ws-XXXXXX");
    if (!mkdtemp(ws) || chown(ws, 1000, 1000) < 0) {
        perror("paddock-bench-live: workspace");
        return 1;
    }
    engine_sock = sock;
    snprintf(operator_sock, sizeof(operator_sock), "%s/operator.sock", dir);
    setenv("PADDOCK_TEST_LABEL", "bench", 1);
    setenv("PADDOCK_IMAGE", image, 1);
    setenv("PADDOCK_CONFIRM", "never", 1);
    /* The session binds a host workspace, which the agents' socket may ask for only when
     * [security] allows it (docs/security.md). */
    char cfg[300];
    snprintf(cfg, sizeof(cfg), "%s/config.toml", dir);
    FILE *cf = fopen(cfg, "w");
    if (!cf || fputs("[security]\nhost_volumes = \"allow\"\n", cf) < 0 || fclose(cf) != 0) {
        perror("paddock-bench-live: config");
        return 1;
    }
    setenv("PADDOCK_CONFIG", cfg, 1);
    pid_t eng = fork();
    if (eng == 0) {
        if (!freopen(log, "w", stderr))
            _exit(126);
        execl(paddock, paddock, "serve", "--state-dir", dir, "--socket", sock, (char *)NULL);
        _exit(127);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    for (int i = 0; i < 500 && live_req("GET", "/v1/info", NULL, NULL) != 200; i++)
        usleep(10000);

    int rc = 1;
    struct live_dash d = {0};
    char *body = NULL;
    json_t *sess = NULL;
    if (asprintf(&body, "{\"name\": \"bench-live\", \"workspace\": \"%s\"}", ws) < 0 ||
        live_req("POST", "/v1/sessions", body, &sess) != 201) {
        fprintf(stderr, "paddock-bench-live: no session (see %s)\n", log);
        goto out;
    }
    const char *sid = json_string_value(json_object_get(sess, "id"));
    if (live_dash_start(&d, paddock) < 0 || !live_wait_for(&d, "bench-live", 10000)) {
        fprintf(stderr, "paddock-bench-live: the dashboard does not show the session\n");
        goto out;
    }
    /* To the Terminal tab (] until its hint shows), then the agent's view. */
    bool there = false;
    for (int i = 0; i < 12 && !there; i++) {
        there = live_wait_for(&d, "the agent's own shell", 1000);
        if (!there)
            live_keys(&d, "]");
    }
    live_keys(&d, "la");
    if (!there || !live_wait_for(&d, "agent's shell, read-only", 10000)) {
        fprintf(stderr, "paddock-bench-live: cannot open the agent's view\n");
        goto out;
    }
    /* One line per go file; the time written just before the line. */
    static const char cmd[] =
        "i=0; while :; do i=$((i+1)); until [ -e /workspace/go$i ]; do sleep 0.005; done; "
        "date +%s%N > /workspace/t$i; echo zq${i}qz; done";
    json_t *act = json_pack("{s:{s:s,s:{s:s,s:b}}}", "action", "action", "run", "args", "command",
                            cmd, "blocking", 1);
    char *act_text = json_dumps(act, JSON_COMPACT);
    json_decref(act);
    char path[128];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action?wait=0", sid);
    if (live_req("POST", path, act_text, NULL) != 202) {
        fprintf(stderr, "paddock-bench-live: the command did not start\n");
        free(act_text);
        goto out;
    }
    free(act_text);
    struct timings lat = {0};
    int warmup = 3;
    for (int i = 1; i <= samples + warmup; i++) {
        char go[300], tfile[300], token[32];
        snprintf(go, sizeof(go), "%s/go%d", ws, i);
        snprintf(tfile, sizeof(tfile), "%s/t%d", ws, i);
        snprintf(token, sizeof(token), "zq%dqz", i);
        int fd = open(go, O_CREAT | O_WRONLY, 0644);
        if (fd >= 0)
            close(fd);
        if (!live_wait_for(&d, token, 15000)) {
            fprintf(stderr, "paddock-bench-live: line %d never showed\n", i);
            goto out;
        }
        double seen = wall_ms();
        FILE *f = fopen(tfile, "r");
        long long ns = 0;
        if (!f || fscanf(f, "%lld", &ns) != 1) {
            fprintf(stderr, "paddock-bench-live: no time for line %d\n", i);
            if (f)
                fclose(f);
            goto out;
        }
        fclose(f);
        if (i > warmup)
            timings_add(&lat, seen - (double)ns / 1e6);
    }
    printf("%-52s %8s %8s %8s\n", "live output (sandbox line -> dashboard frame)", "p50", "p90",
           "max");
    printf("%-52s %7.1f %8.1f %8.1f  ms  (%d lines, agent view %dx%d)\n", "",
           timings_pct(&lat, 0.5), timings_pct(&lat, 0.9), timings_pct(&lat, 1.0), samples,
           LIVE_COLS, LIVE_ROWS);
    free(lat.v);
    rc = 0;
out:
    live_dash_stop(&d);
    if (sess) {
        char del[128];
        snprintf(del, sizeof(del), "/v1/sessions/%s",
                 json_string_value(json_object_get(sess, "id")));
        live_req("DELETE", del, NULL, NULL);
    }
    json_decref(sess);
    free(body);
    kill(eng, SIGTERM);
    waitpid(eng, NULL, 0);
    char rm[600];
    snprintf(rm, sizeof(rm), "rm -rf '%s' '%s'", dir, ws);
    if (system(rm) != 0)
        fprintf(stderr, "paddock-bench-live: %s left behind\n", dir);
    return rc;
}
