/* Integration-test harness: see harness.h. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---------------------------------------------------------------- misc */

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

bool path_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

char *strdupf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s) {
        fprintf(stderr, "out of memory\n");
        abort();
    }
    return s;
}

json_t *jpath(json_t *j, const char *dotted)
{
    char *copy = strdup(dotted), *save = NULL;
    for (char *k = strtok_r(copy, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
        j = json_object_get(j, k);
    free(copy);
    return j;
}

const char *jstr(json_t *j, const char *dotted)
{
    return json_string_value(jpath(j, dotted));
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            buf = realloc(buf, cap);
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!buf)
        buf = strdup("");
    else
        buf[len] = '\0';
    return buf;
}

/* ---------------------------------------------------------------- HTTP */

struct membuf {
    char *p;
    size_t len;
};

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    struct membuf *b = ud;
    size_t k = size * n;
    char *p = realloc(b->p, b->len + k + 1);
    if (!p)
        return 0;
    memcpy(p + b->len, data, k);
    b->p = p;
    b->len += k;
    b->p[b->len] = '\0';
    return k;
}

void http_unix(const char *sock, const char *method, const char *path, const char *body,
               long body_len, long timeout_ms, struct reply *out)
{
    memset(out, 0, sizeof(*out));
    out->status = -1;
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(out->err, sizeof(out->err), "curl_easy_init failed");
        return;
    }
    char *url = strdupf("http://localhost%s", path);
    struct membuf b = {0};
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    if (body) {
        hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
        hdrs = curl_slist_append(hdrs, "Expect:");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)(body_len < 0 ? (long)strlen(body) : body_len));
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    }
    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
        snprintf(out->err, sizeof(out->err), "%s %s on %s: %s", method, path, sock,
                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
        free(b.p);
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
        out->body = b.p ? b.p : strdup("");
        out->len = b.len;
        out->json = json_loadb(out->body, out->len, 0, NULL);
    }
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    free(url);
}

void reply_free(struct reply *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof(*r));
}

void api(struct engine_proc *e, const char *method, const char *path, const char *body,
         struct reply *out)
{
    http_unix(e->op_socket, method, path, body, -1, 60000, out);
    if (out->status < 0)
        fprintf(stderr, "engine request failed: %s\n", out->err);
}

void api_agent(struct engine_proc *e, const char *method, const char *path, const char *body,
               struct reply *out)
{
    http_unix(e->socket, method, path, body, -1, 60000, out);
    if (out->status < 0)
        fprintf(stderr, "engine request failed: %s\n", out->err);
}

json_t *api_json(struct engine_proc *e, const char *method, const char *path, const char *body,
                 long want)
{
    struct reply r;
    api(e, method, path, body, &r);
    if (r.status != want)
        fprintf(stderr, "%s %s → %ld %s\n", method, path, r.status, r.body ? r.body : "");
    assert_int_equal(r.status, want);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    return j;
}

/* The daemon the engine uses by default: DOCKER_HOST=unix://PATH, else the standard socket. */
const char *harness_docker_socket(void)
{
    const char *h = getenv("DOCKER_HOST");
    if (h && strncmp(h, "unix://", 7) == 0 && h[7])
        return h + 7;
    return "/var/run/docker.sock";
}

void docker(const char *method, const char *path, struct reply *out)
{
    http_unix(harness_docker_socket(), method, path, NULL, 0, 60000, out);
    if (out->status < 0)
        fprintf(stderr, "docker request failed: %s\n", out->err);
}

void docker_body(const char *method, const char *path, const char *body, struct reply *out)
{
    http_unix(harness_docker_socket(), method, path, body, -1, 60000, out);
    if (out->status < 0)
        fprintf(stderr, "docker request failed: %s\n", out->err);
}

json_t *docker_containers_with_labels(const char *const *labels)
{
    json_t *filters = json_pack("{s:[]}", "label");
    for (size_t i = 0; labels[i]; i++)
        json_array_append_new(json_object_get(filters, "label"), json_string(labels[i]));
    char *f = json_dumps(filters, JSON_COMPACT);
    json_decref(filters);
    char *esc = curl_easy_escape(NULL, f, 0);
    char *path = strdupf("/v1.41/containers/json?all=1&filters=%s", esc);
    curl_free(esc);
    free(f);
    struct reply r;
    docker("GET", path, &r);
    free(path);
    json_t *list = NULL;
    if (r.status == 200 && json_is_array(r.json))
        list = json_incref(r.json);
    else
        fprintf(stderr, "docker container list: HTTP %ld %s\n", r.status, r.body ? r.body : r.err);
    reply_free(&r);
    return list;
}

/* ---------------------------------------------------------------- preconditions */

const char *harness_bin(void)
{
    return getenv("PADDOCK_BIN");
}

static void harness_unavailable(const char *fmt, ...)
{
    va_list ap;
    const char *skip = getenv("PADDOCK_ALLOW_SKIP");
    bool skipping = skip && strcmp(skip, "1") == 0;
    fprintf(stderr, skipping ? "SKIP: " : "FAIL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    if (!skipping)
        fprintf(stderr, "(integration tests need the real Docker daemon and the image; set "
                        "PADDOCK_ALLOW_SKIP=1 to skip instead of failing)\n");
    exit(skipping ? 77 : 1);
}

void harness_require(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const char *bin = getenv("PADDOCK_BIN"), *ex = getenv("PADDOCK_EXECUTOR");
    if (!bin || access(bin, X_OK) != 0) {
        fprintf(stderr, "FAIL: PADDOCK_BIN (%s) is not an executable paddock binary\n",
                bin ? bin : "unset");
        exit(1);
    }
    if (!ex || access(ex, X_OK) != 0) {
        fprintf(stderr, "FAIL: PADDOCK_EXECUTOR (%s) is not an executable executor binary\n",
                ex ? ex : "unset");
        exit(1);
    }
    struct reply r;
    http_unix(harness_docker_socket(), "GET", "/_ping", NULL, 0, 5000, &r);
    bool ok = r.status == 200 && r.body && strcmp(r.body, "OK") == 0;
    char why[300];
    snprintf(why, sizeof(why), "%s", r.status < 0 ? r.err : (r.body ? r.body : ""));
    reply_free(&r);
    if (!ok)
        harness_unavailable("no Docker daemon answers GET /_ping on %s (%s); start one with "
                            "`source scripts/lib.sh && paddock_ensure_dockerd`",
                            harness_docker_socket(), why);
    docker("GET", "/v1.41/images/" HARNESS_IMAGE "/json", &r);
    long st = r.status;
    reply_free(&r);
    if (st != 200)
        harness_unavailable("the image %s is missing (Docker answered %ld); build it with "
                            "scripts/build-image",
                            HARNESS_IMAGE, st);
}

/* ---------------------------------------------------------------- engines */

/* Engines not destroyed yet: a test that fails returns before its engine_destroy, so what
 * its engine made (containers, local sandboxes, the state dir) goes when the program exits. */
#define HARNESS_MAX_ENGINES 64
static struct engine_proc *live_engines[HARNESS_MAX_ENGINES];

static void destroy_live_engines(void)
{
    for (size_t i = 0; i < HARNESS_MAX_ENGINES; i++)
        if (live_engines[i])
            engine_destroy(live_engines[i]);
}

struct engine_proc *engine_new(void)
{
    struct engine_proc *e = calloc(1, sizeof(*e));
    char tmpl[] = "/tmp/paddock-it-XXXXXX";
    if (!e || !mkdtemp(tmpl)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        abort();
    }
    e->state_dir = strdup(tmpl);
    e->socket = strdupf("%s/engine.sock", e->state_dir);
    e->op_socket = strdupf("%s/operator.sock", e->state_dir);
    static bool registered;
    if (!registered)
        registered = atexit(destroy_live_engines) == 0;
    for (size_t i = 0; i < HARNESS_MAX_ENGINES; i++)
        if (!live_engines[i]) {
            live_engines[i] = e;
            break;
        }
    return e;
}

void engine_print_log(const struct engine_proc *e)
{
    if (!e->log)
        return;
    char *text = read_file(e->log);
    fprintf(stderr, "----- engine log %s -----\n%s----- end of engine log -----\n", e->log,
            text ? text : "(unreadable)\n");
    free(text);
}

static int wait_status(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

int engine_start(struct engine_proc *e)
{
    e->runs++;
    free(e->log);
    e->log = strdupf("%s/serve-%d.log", e->state_dir, e->runs);
    const char *bin = harness_bin();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(e->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int nul = open("/dev/null", O_RDONLY);
        if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        /* If the test program dies (timeout, crash), the engine stops too. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        setenv("PADDOCK_TEST_LABEL", "1", 1);
        /* Hermetic: the default image, and only the paths given on the command line. */
        unsetenv("PADDOCK_IMAGE");
        unsetenv("PADDOCK_STATE_DIR");
        unsetenv("PADDOCK_SOCKET");
        for (int i = 0; i < HARNESS_MAX_ENV && e->extra_env[i]; i++)
            putenv((char *)e->extra_env[i]);
        execl(bin, bin, "serve", "--state-dir", e->state_dir, "--socket", e->socket, (char *)NULL);
        _exit(127);
    }
    e->pid = pid;
    double deadline = now_ms() + 10000;
    while (now_ms() < deadline) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            e->pid = 0;
            fprintf(stderr, "paddock serve exited with status %d before answering\n",
                    wait_status(st));
            engine_print_log(e);
            return -1;
        }
        struct reply r;
        http_unix(e->op_socket, "GET", "/v1/info", NULL, 0, 1000, &r);
        long status = r.status;
        reply_free(&r);
        if (status == 200)
            return 0;
        sleep_ms(20);
    }
    fprintf(stderr, "paddock serve did not answer GET /v1/info within 10 s\n");
    engine_print_log(e);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    e->pid = 0;
    return -1;
}

int engine_stop(struct engine_proc *e)
{
    if (!e->pid)
        return 0;
    pid_t pid = e->pid;
    e->pid = 0;
    if (kill(pid, SIGTERM) < 0) {
        fprintf(stderr, "kill %ld: %s\n", (long)pid, strerror(errno));
        return -1;
    }
    double deadline = now_ms() + 30000;
    int st = 0;
    pid_t w;
    while ((w = waitpid(pid, &st, WNOHANG)) == 0 && now_ms() < deadline)
        sleep_ms(10);
    if (w == 0) {
        fprintf(stderr,
                "paddock serve (pid %ld) did not exit within 30 s of SIGTERM; killing "
                "it\n",
                (long)pid);
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        engine_print_log(e);
        return -1;
    }
    int code = wait_status(st);
    if (code != 0) {
        fprintf(stderr, "paddock serve exited with status %d after SIGTERM (want 0)\n", code);
        engine_print_log(e);
    }
    return code;
}

void engine_track(struct engine_proc *e, const char *id)
{
    if (id && e->n_ids < HARNESS_MAX_IDS)
        e->session_ids[e->n_ids++] = strdup(id);
}

char *engine_read_id(const struct engine_proc *e)
{
    char *path = strdupf("%s/engine.id", e->state_dir);
    char *text = read_file(path);
    free(path);
    if (text)
        text[strcspn(text, "\n")] = '\0';
    return text;
}

static int remove_containers(const char *const *labels)
{
    json_t *list = docker_containers_with_labels(labels);
    int n = 0;
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        const char *cid = json_string_value(json_object_get(c, "Id"));
        if (!cid)
            continue;
        char *path = strdupf("/v1.41/containers/%s?force=1&v=1", cid);
        struct reply r;
        docker("DELETE", path, &r);
        if (r.status != 204 && r.status != 404)
            fprintf(stderr, "cleanup: DELETE %s: HTTP %ld %s\n", path, r.status,
                    r.body ? r.body : r.err);
        else
            n++;
        reply_free(&r);
        free(path);
    }
    json_decref(list);
    return n;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (remove(path) < 0 && errno != ENOENT)
        fprintf(stderr, "cleanup: remove %s: %s\n", path, strerror(errno));
    return 0;
}

/* Writes text to path; -1 when it cannot. */
static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The processes in cgroup dir, SIGKILLed (thawed first when frozen, else the signal waits);
 * those not seen before (in another hierarchy of the same cgroup) are added to seen. */
static void kill_cgroup(const char *dir, long *seen, int *n_seen, int max_seen)
{
    char *freezer = strdupf("%s/freezer.state", dir), *freeze = strdupf("%s/cgroup.freeze", dir);
    write_text(freezer, "THAWED");
    write_text(freeze, "0");
    free(freezer);
    free(freeze);
    char *procs = strdupf("%s/cgroup.procs", dir);
    FILE *f = fopen(procs, "re");
    long pid;
    while (f && fscanf(f, "%ld", &pid) == 1) {
        if (pid <= 1)
            continue;
        int i = 0;
        while (i < *n_seen && seen[i] != pid)
            i++;
        if (i == *n_seen && *n_seen < max_seen)
            seen[(*n_seen)++] = pid;
        kill((pid_t)pid, SIGKILL);
    }
    if (f)
        fclose(f);
    free(procs);
}

/* Local sandboxes outlive their engine, as containers do: a test that failed before deleting
 * one leaves its processes (as the agent user) running. They are found by their cgroups,
 * paddock.local/<engine id>/ in each hierarchy (cgroup v1) or the one (v2), killed, and the
 * cgroups removed. Returns how many processes were ended. */
static int remove_local_sandboxes(const char *eid)
{
    char *patterns[] = {strdupf("/sys/fs/cgroup/paddock.local/%s/*/", eid),
                        strdupf("/sys/fs/cgroup/*/paddock.local/%s/*/", eid)};
    long seen[256];
    int killed = 0;
    for (size_t p = 0; p < 2; p++) {
        glob_t g;
        if (glob(patterns[p], GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++)
            kill_cgroup(g.gl_pathv[i], seen, &killed, 256);
        /* A cgroup goes once its processes have: wait for that, to a deadline. */
        double deadline = now_ms() + 10000;
        for (size_t i = 0; i < g.gl_pathc; i++)
            while (rmdir(g.gl_pathv[i]) < 0 && errno == EBUSY && now_ms() < deadline)
                sleep_ms(20);
        for (size_t i = 0; i < g.gl_pathc; i++) {
            /* and paddock.local/<engine id> itself ("<it>/<sandbox>/" here) */
            char *parent = strdup(g.gl_pathv[i]);
            size_t len = strlen(parent);
            while (len > 0 && parent[len - 1] == '/')
                parent[--len] = '\0';
            char *slash = strrchr(parent, '/');
            if (slash) {
                *slash = '\0';
                rmdir(parent);
            }
            free(parent);
        }
        globfree(&g);
    }
    free(patterns[0]);
    free(patterns[1]);
    return killed;
}

int engine_destroy(struct engine_proc *e)
{
    if (!e)
        return 0;
    for (size_t i = 0; i < HARNESS_MAX_ENGINES; i++)
        if (live_engines[i] == e)
            live_engines[i] = NULL;
    if (e->pid) {
        kill(e->pid, SIGKILL);
        waitpid(e->pid, NULL, 0);
        e->pid = 0;
    }
    int removed = 0;
    for (int i = 0; i < e->n_ids; i++) {
        char *sl = strdupf("paddock.session=%s", e->session_ids[i]);
        const char *labels[] = {"paddock.test=1", sl, NULL};
        removed += remove_containers(labels);
        free(sl);
        free(e->session_ids[i]);
    }
    /* Sessions made by the CLI (ids unknown here) carry this state dir's engine id. */
    char *eid = engine_read_id(e);
    if (eid && *eid) {
        char *el = strdupf("paddock.engine=%s", eid);
        const char *labels[] = {"paddock.test=1", el, NULL};
        removed += remove_containers(labels);
        free(el);
    }
    if (removed)
        fprintf(stderr, "cleanup: removed %d container(s) left by the test\n", removed);
    int killed = eid && *eid ? remove_local_sandboxes(eid) : 0;
    if (killed)
        fprintf(stderr, "cleanup: ended %d process(es) of local sandboxes left by the test\n",
                killed);
    removed += killed;
    free(eid);
    nftw(e->state_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    /* the local backend's workspaces, where the tests put them */
    char *local_root = strdupf("%s-local", e->state_dir);
    nftw(local_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(local_root);
    free(e->state_dir);
    free(e->socket);
    free(e->op_socket);
    free(e->log);
    free(e);
    return removed;
}

/* ---------------------------------------------------------------- sessions */

json_t *session_new(struct engine_proc *e, const char *body)
{
    struct reply r;
    api(e, "POST", "/v1/sessions", body, &r);
    if (r.status != 201) {
        fprintf(stderr, "POST /v1/sessions %s → HTTP %ld %s\n", body ? body : "(empty)", r.status,
                r.body ? r.body : r.err);
        engine_print_log(e);
    }
    assert_int_equal(r.status, 201);
    assert_non_null(r.json);
    engine_track(e, jstr(r.json, "id"));
    assert_string_equal(jstr(r.json, "state"), "ready");
    json_t *s = json_incref(r.json);
    reply_free(&r);
    return s;
}

json_t *session_run(struct engine_proc *e, const char *id, const char *command)
{
    json_t *body =
        json_pack("{s:{s:s,s:{s:s}}}", "action", "action", "run", "args", "command", command);
    char *b = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(e, "POST", path, b, &r);
    if (r.status != 200)
        fprintf(stderr, "run %s → HTTP %ld %s\n", command, r.status, r.body ? r.body : r.err);
    free(path);
    free(b);
    assert_int_equal(r.status, 200);
    assert_true(json_is_object(r.json));
    json_t *obs = json_incref(r.json);
    reply_free(&r);
    return obs;
}

void session_delete(struct engine_proc *e, const char *id)
{
    char *path = strdupf("/v1/sessions/%s", id);
    struct reply r;
    api(e, "DELETE", path, NULL, &r);
    free(path);
    if (r.status != 200)
        fprintf(stderr, "DELETE session %s → HTTP %ld %s\n", id, r.status, r.body ? r.body : r.err);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "deleted");
    reply_free(&r);
}

json_t *session_wait_state(struct engine_proc *e, const char *id, const char *state, long ms)
{
    char *path = strdupf("/v1/sessions/%s", id);
    double deadline = now_ms() + ms;
    json_t *last = NULL;
    for (;;) {
        struct reply r;
        api(e, "GET", path, NULL, &r);
        json_decref(last);
        last = r.status == 200 ? json_incref(r.json) : NULL;
        reply_free(&r);
        if (last && jstr(last, "state") && strcmp(jstr(last, "state"), state) == 0) {
            free(path);
            return last;
        }
        if (now_ms() > deadline)
            break;
        sleep_ms(20);
    }
    char *text = last ? json_dumps(last, JSON_COMPACT) : NULL;
    fprintf(stderr, "session %s did not reach state %s within %ld ms; last: %s\n", id, state, ms,
            text ? text : "(none)");
    free(text);
    json_decref(last);
    free(path);
    return NULL;
}

json_t *session_events(struct engine_proc *e, const char *id)
{
    char *path = strdupf("/v1/sessions/%s/events", id);
    struct reply r;
    api(e, "GET", path, NULL, &r);
    free(path);
    assert_int_equal(r.status, 200);
    json_t *ev = json_incref(json_object_get(r.json, "events"));
    reply_free(&r);
    assert_true(json_is_array(ev));
    return ev;
}

json_t *events_find(json_t *events, const char *kind)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        if (jstr(ev, "kind") && strcmp(jstr(ev, "kind"), kind) == 0)
            return ev;
    }
    return NULL;
}

/* ---------------------------------------------------------------- processes */

void proc_run(char *const argv[], const char *const *env, long timeout_ms, struct proc_result *res)
{
    memset(res, 0, sizeof(*res));
    res->status = -1;
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
        fprintf(stderr, "pipe: %s\n", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
            _exit(126);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    struct membuf bo = {0}, be = {0};
    struct pollfd pf[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
    double deadline = now_ms() + timeout_ms;
    int open_fds = 2;
    bool killed = false;
    while (open_fds > 0) {
        long left = (long)(deadline - now_ms());
        if (left <= 0) {
            if (pid > 0)
                kill(pid, SIGKILL);
            killed = true;
            break;
        }
        int n = poll(pf, 2, (int)left);
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[4096];
            ssize_t k = read(pf[i].fd, buf, sizeof(buf));
            if (k > 0) {
                on_body(buf, 1, (size_t)k, i == 0 ? &bo : &be);
            } else if (k == 0 || errno != EINTR) {
                close(pf[i].fd);
                pf[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (pf[i].fd >= 0)
            close(pf[i].fd);
    int st = 0;
    if (pid > 0 && waitpid(pid, &st, 0) == pid && !killed)
        res->status = wait_status(st);
    res->out = bo.p ? bo.p : strdup("");
    res->err = be.p ? be.p : strdup("");
}

void proc_result_free(struct proc_result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof(*r));
}

/* ---- group fixtures ---- */

struct engine_proc *harness_eng;
int harness_teardown_failed;

int harness_group_setup(void **state)
{
    harness_eng = engine_new();
    if (engine_start(harness_eng) == 0)
        return 0;
    engine_destroy(harness_eng);
    harness_eng = NULL;
    return -1;
}

/* For tests of execution itself (hostile agents, limits, states): their commands are HIGH on
 * purpose, and under the default policy they would wait for an operator who never comes. */
int harness_group_setup_unsupervised(void **state)
{
    harness_eng = engine_new();
    harness_eng->extra_env[0] = "PADDOCK_CONFIRM=never";
    if (engine_start(harness_eng) == 0)
        return 0;
    engine_destroy(harness_eng);
    harness_eng = NULL;
    return -1;
}

static int harness_teardown(bool require_clean)
{
    int code = engine_stop(harness_eng);
    if (code != 0) {
        fprintf(stderr, "FAIL: the engine did not exit cleanly on SIGTERM (status %d)\n", code);
        harness_teardown_failed = 1;
    }
    int left = engine_destroy(harness_eng);
    harness_eng = NULL;
    if (require_clean && left) {
        fprintf(stderr, "FAIL: %d container(s) of this test were left behind\n", left);
        harness_teardown_failed = 1;
    }
    return code == 0 && !(require_clean && left) ? 0 : -1;
}

int harness_group_teardown(void **state)
{
    return harness_teardown(false);
}

int harness_group_teardown_clean(void **state)
{
    return harness_teardown(true);
}

/* Every image this test built carries paddock.test=1. A setup layer is the parent of its
 * executor layer and goes only after it: a few passes. */
void harness_remove_test_images(void)
{
    char *f = curl_easy_escape(NULL, "{\"label\":[\"paddock.test=1\",\"paddock.image=1\"]}", 0);
    char *p = strdupf("/images/json?filters=%s", f);
    size_t left = 1;
    for (int pass = 0; pass < 5 && left; pass++) {
        struct reply r;
        docker("GET", p, &r);
        left = json_array_size(r.json);
        size_t i;
        json_t *img;
        json_array_foreach(r.json, i, img)
        {
            char *d = strdupf("/images/%s?force=1", jstr(img, "Id"));
            struct reply x;
            docker("DELETE", d, &x);
            reply_free(&x);
            free(d);
        }
        reply_free(&r);
    }
    free(p);
    curl_free(f);
}
