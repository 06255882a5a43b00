#include "bb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double bb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bb_assert_prefix(const char *s, const char *prefix)
{
    assert_non_null(s);
    if (strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("expected \"%s\" to start with \"%s\"", s, prefix);
}

void bb_assert_contains(const char *s, const char *part)
{
    assert_non_null(s);
    if (!strstr(s, part))
        fail_msg("expected \"%s\" to contain \"%s\"", s, part);
}

static size_t collect(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct bb_reply *r = ctx;
    size_t n = size * nmemb;
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *p = realloc(r->body, cap);
        if (!p)
            return 0;
        r->body = p;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return n;
}

/* Keeps Content-Type, Content-Disposition and Transfer-Encoding (values without the line
 * end). */
static size_t collect_header(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct bb_reply *r = ctx;
    size_t n = size * nmemb;
    static const char *const names[] = {
        "content-type:", "content-disposition:", "transfer-encoding:"};
    for (int i = 0; i < 3; i++) {
        size_t k = strlen(names[i]);
        if (n > k && strncasecmp(data, names[i], k) == 0) {
            const char *v = data + k;
            size_t vl = n - k;
            while (vl && (*v == ' '))
                v++, vl--;
            while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
                vl--;
            char **slot = i == 0   ? &r->content_type
                          : i == 1 ? &r->disposition
                                   : &r->transfer_encoding;
            free(*slot);
            *slot = strndup(v, vl);
        }
    }
    return n;
}

void bb_reply_free(struct bb_reply *r)
{
    free(r->body);
    free(r->content_type);
    free(r->disposition);
    free(r->transfer_encoding);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

void bb_setup(struct bb *e, CURL *h, const char *method, const char *path, const char *body,
              struct bb_reply *r)
{
    char url[512];
    curl_easy_reset(h);
    if (e->use_tcp) {
        snprintf(url, sizeof url, "http://%s%s", e->tcp, path);
    } else {
        snprintf(url, sizeof url, "http://executor%s", path);
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, e->sock);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 180L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, collect_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
}

void bb_perform(CURL *h, const char *key, struct bb_reply *r)
{
    struct curl_slist *headers = NULL;
    char line[512];
    if (key) {
        snprintf(line, sizeof line, "X-Session-API-Key: %s", key);
        headers = curl_slist_append(headers, line);
    }
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK) {
        char *url = NULL;
        curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &url);
        fail_msg("%s: %s", url ? url : "request", curl_easy_strerror(rc));
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    r->json = r->body ? json_loads(r->body, 0, NULL) : NULL;
}

struct bb_reply bb_http_key(struct bb *e, const char *method, const char *path, const char *body,
                            const char *key)
{
    struct bb_reply r = {0};
    bb_setup(e, e->curl, method, path, body, &r);
    bb_perform(e->curl, key, &r);
    return r;
}

struct bb_reply bb_http(struct bb *e, const char *method, const char *path, const char *body)
{
    return bb_http_key(e, method, path, body, e->opt.api_key);
}

struct bb_reply bb_upload(struct bb *e, const char *query, const char *filename, const void *data,
                          size_t n)
{
    struct bb_reply r = {0};
    char path[1024];
    snprintf(path, sizeof path, "/upload_file%s", query);
    bb_setup(e, e->curl, "POST", path, NULL, &r);
    curl_mime *mime = curl_mime_init(e->curl);
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, "file");
    curl_mime_filename(part, filename);
    curl_mime_data(part, data, n);
    curl_easy_setopt(e->curl, CURLOPT_MIMEPOST, mime);
    bb_perform(e->curl, e->opt.api_key, &r);
    curl_mime_free(mime);
    return r;
}

static size_t read_spaces(char *buf, size_t size, size_t nmemb, void *ctx)
{
    size_t *left = ctx, n = size * nmemb;
    if (n > *left)
        n = *left;
    memset(buf, ' ', n);
    *left -= n;
    return n;
}

struct bb_reply bb_post_spaces(struct bb *e, const char *path, const char *header, size_t size,
                               bool chunked, size_t *unsent)
{
    struct bb_reply r = {0};
    CURL *h = curl_easy_init();
    struct curl_slist *headers = header ? curl_slist_append(NULL, header) : NULL;
    if (chunked)
        headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
    *unsent = size;
    bb_setup(e, h, "POST", path, NULL, &r);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, read_spaces);
    curl_easy_setopt(h, CURLOPT_READDATA, unsent);
    if (!chunked)
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)size);
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK)
        fail_msg("POST %s: %s", path, curl_easy_strerror(rc));
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    r.json = r.body ? json_loads(r.body, 0, NULL) : NULL;
    curl_easy_cleanup(h);
    return r;
}

struct bb_reply bb_action(struct bb *e, const char *body)
{
    struct bb_reply r = bb_http(e, "POST", "/execute_action", body);
    if (r.status != 200)
        fail_msg("status %ld: %s", r.status, r.body ? r.body : "");
    assert_non_null(r.json);
    return r;
}

struct bb_reply bb_execute(struct bb *e, json_t *action)
{
    json_t *body = json_pack("{s:o}", "action", action);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct bb_reply r = bb_action(e, text);
    free(text);
    return r;
}

struct bb_reply bb_act(struct bb *e, const char *kind, json_t *args)
{
    return bb_execute(e, json_pack("{s:s, s:o}", "action", kind, "args", args));
}

char *bb_run_body(const char *command, bool is_input, double timeout, bool blocking)
{
    json_t *action = json_pack("{s:s, s:{s:s, s:b, s:b}}", "action", "run", "args", "command",
                               command, "is_input", is_input, "blocking", blocking);
    if (timeout >= 0)
        json_object_set_new(action, "timeout", json_real(timeout));
    json_t *body = json_pack("{s:o}", "action", action);
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    return s;
}

static struct bb_reply run_any(struct bb *e, const char *command, bool is_input, double timeout,
                               bool blocking)
{
    char *body = bb_run_body(command, is_input, timeout, blocking);
    struct bb_reply r = bb_action(e, body);
    free(body);
    return r;
}

struct bb_reply bb_run_full(struct bb *e, const char *command, bool is_input, double timeout)
{
    return run_any(e, command, is_input, timeout, timeout >= 0);
}

struct bb_reply bb_run_nonblocking(struct bb *e, const char *command, bool is_input, double timeout)
{
    return run_any(e, command, is_input, timeout, false);
}

struct bb_reply bb_run(struct bb *e, const char *command)
{
    return run_any(e, command, false, 30, true);
}

char *bb_output_until(struct bb *e, const char *first, const char *want, double within)
{
    /* A slow start (python on a loaded machine) must not fail a test that waits for a
     * program's first line: keep asking for new output until it shows or time is up. */
    size_t len = strlen(first ? first : "");
    char *seen = strdup(first ? first : "");
    double deadline = bb_now() + within;
    while (seen && !strstr(seen, want) && bb_now() < deadline) {
        struct bb_reply r = bb_run_full(e, "", false, 1);
        const char *more = bb_content(&r) ? bb_content(&r) : "";
        size_t n = strlen(more);
        char *grown = realloc(seen, len + n + 2);
        if (grown) {
            grown[len] = '\n';
            memcpy(grown + len + 1, more, n + 1);
            len += n + 1;
        }
        seen = grown;
        bb_reply_free(&r);
    }
    return seen;
}

struct bb *bb_settle_target;

int bb_settle_shell(void **state)
{
    (void)state;
    /* One failed test must not leave its program in the foreground for every test after it:
     * interrupt whatever still runs until the shell says nothing is running. */
    for (int i = 0; i < 5; i++) {
        struct bb_reply r = bb_run_full(bb_settle_target, "", false, 1);
        const char *c = bb_content(&r);
        bool idle = c && strstr(c, "No previous running command");
        bb_reply_free(&r);
        if (idle)
            return 0;
        r = bb_run_full(bb_settle_target, "C-c", true, 5);
        bb_reply_free(&r);
    }
    return -1;
}

void bb_expect_run(struct bb *e, const char *command, long long exit_code, const char *content)
{
    struct bb_reply r = bb_run(e, command);
    if (content)
        assert_string_equal(bb_content(&r), content);
    if (exit_code != BB_ANY_EXIT)
        assert_int_equal(bb_exit_code(&r), exit_code);
    bb_reply_free(&r);
}

void bb_expect_contains(struct bb *e, const char *command, const char *part)
{
    struct bb_reply r = bb_run(e, command);
    bb_assert_contains(bb_content(&r), part);
    bb_reply_free(&r);
}

const char *bb_observation(const struct bb_reply *r)
{
    return json_string_value(json_object_get(r->json, "observation"));
}

const char *bb_content(const struct bb_reply *r)
{
    return json_string_value(json_object_get(r->json, "content"));
}

const char *bb_message(const struct bb_reply *r)
{
    return json_string_value(json_object_get(r->json, "message"));
}

const json_t *bb_extra(const struct bb_reply *r, const char *key)
{
    return json_object_get(json_object_get(r->json, "extras"), key);
}

const char *bb_extra_str(const struct bb_reply *r, const char *key)
{
    return json_string_value(bb_extra(r, key));
}

json_t *bb_meta(const struct bb_reply *r)
{
    return json_object_get(json_object_get(r->json, "extras"), "metadata");
}

const char *bb_meta_str(const struct bb_reply *r, const char *key)
{
    return json_string_value(json_object_get(bb_meta(r), key));
}

long long bb_exit_code(const struct bb_reply *r)
{
    return json_integer_value(json_object_get(bb_meta(r), "exit_code"));
}

const char *bb_detail(const struct bb_reply *r)
{
    return json_string_value(json_object_get(r->json, "detail"));
}

/* A TCP port nothing listens on right now (bound, read, released). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

const char *bb_executor;

/* What a failing test leaves: cmocka jumps out of it before its bb_stop, and its executor and
 * temp dir (and the executor's own command dir) stayed behind in /tmp. So each temp dir made
 * and executor started is noted here by value (the struct bb is often on the test's stack),
 * bb_stop takes its entry out, and at exit what is left is stopped (SIGTERM: the executor
 * removes its command dir) and removed. */
#define BB_LEFT_MAX 256
static struct bb_left {
    pid_t pid;
    char dir[sizeof(((struct bb *)0)->dir)];
} bb_left[BB_LEFT_MAX];

/* A temp dir and everything in it, whatever modes a test left: 0, or -1. */
static int bb_dir_remove(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct bb_left *bb_left_find(const char *dir)
{
    for (size_t i = 0; i < BB_LEFT_MAX; i++)
        if (strcmp(bb_left[i].dir, dir) == 0)
            return &bb_left[i];
    return NULL;
}

static void bb_left_clean(void)
{
    for (size_t i = 0; i < BB_LEFT_MAX; i++) {
        struct bb_left *l = &bb_left[i];
        /* Only a child of this process still running: one reaped already may be anyone now. */
        if (l->pid > 0 && waitpid(l->pid, NULL, WNOHANG) == 0 && kill(l->pid, SIGTERM) == 0) {
            /* A clean stop takes well under a second; one that hangs is killed. */
            int waited = 0;
            while (waitpid(l->pid, NULL, WNOHANG) == 0 && waited++ < 500)
                usleep(10000);
            if (waited > 500) {
                kill(l->pid, SIGKILL);
                waitpid(l->pid, NULL, 0);
            }
        }
        if (l->dir[0] && bb_dir_remove(l->dir) < 0)
            fprintf(stderr, "bb: cannot remove %s\n", l->dir);
        memset(l, 0, sizeof *l);
    }
}

int bb_init(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-paddock-executor\n", argv[0]);
        return -1;
    }
    bb_executor = argv[1];
    atexit(bb_left_clean);
    /* Only the executors that ask for a key (or a no-change timeout) get one. */
    unsetenv("SESSION_API_KEY");
    unsetenv("NO_CHANGE_TIMEOUT_SECONDS");
    /* EXECUTOR_TEST_FILTER=PATTERN runs the matching tests only (while working on them). */
    const char *filter = getenv("EXECUTOR_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return 0;
}

int bb_prepare(struct bb *e, const struct bb_options *o)
{
    memset(e, 0, sizeof *e);
    if (o)
        e->opt = *o;
    e->pid = -1;
    snprintf(e->dir, sizeof e->dir, "/tmp/paddock-exec-test.XXXXXX");
    if (!mkdtemp(e->dir)) {
        e->dir[0] = '\0';
        return -1;
    }
    struct bb_left *l = bb_left_find("");
    if (l)
        snprintf(l->dir, sizeof l->dir, "%s", e->dir);
    if (chmod(e->dir, e->opt.dir_mode ? e->opt.dir_mode : 0700) < 0)
        return -1;
    if (!e->opt.tcp_only)
        snprintf(e->sock, sizeof e->sock, "%s/executor.sock", e->dir);
    snprintf(e->work, sizeof e->work, "%s/workspace", e->dir);
    if (e->opt.own_home)
        snprintf(e->home, sizeof e->home, "%s/home", e->dir);
    if (e->opt.tcp || e->opt.tcp_only) {
        int port = free_port();
        if (port < 0)
            return -1;
        snprintf(e->tcp, sizeof e->tcp, "127.0.0.1:%d", port);
        snprintf(e->listen, sizeof e->listen, "%s:%d",
                 e->opt.listen_host ? e->opt.listen_host : "127.0.0.1", port);
    }
    e->use_tcp = e->opt.tcp_only;
    return 0;
}

/* In the child: the private mounts o asks for; -1 when they cannot be made. */
static int private_mounts(const struct bb *e)
{
    const struct bb_options *o = &e->opt;
    if (!o->workspace_tmpfs && !o->hide)
        return 0;
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return -1;
    if (o->workspace_tmpfs && (mkdir(e->work, 0755) < 0 ||
                               mount("paddock-test", e->work, "tmpfs", 0, o->workspace_tmpfs) < 0))
        return -1;
    const char *empty = bb_path(e->dir, ".bb-empty");
    int fd = open(empty, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    close(fd);
    for (int i = 0; o->hide && o->hide[i]; i++)
        if (access(o->hide[i], F_OK) == 0 && mount(empty, o->hide[i], NULL, MS_BIND, NULL) < 0)
            return -1;
    return 0;
}

/* In the child: exec the executor as e->opt says. */
static _Noreturn void exec_executor(const struct bb *e)
{
    const struct bb_options *o = &e->opt;
    if (private_mounts(e) < 0) {
        perror("bb: private mounts");
        _exit(126);
    }
    const char *argv[BB_MAX_ARGS + 16] = {bb_executor, "--working-dir", e->work};
    int i = 3;
    if (!o->no_change_timeout || *o->no_change_timeout) {
        argv[i++] = "--no-change-timeout";
        argv[i++] = o->no_change_timeout ? o->no_change_timeout : "1";
    }
    const char *shell = o->shell ? o->shell : getenv("EXECUTOR_SHELL");
    if (e->sock[0]) {
        argv[i++] = "--socket";
        argv[i++] = e->sock;
    }
    if (e->listen[0]) {
        argv[i++] = "--listen";
        argv[i++] = e->listen;
    }
    if (shell && *shell) {
        argv[i++] = "--shell";
        argv[i++] = shell;
    }
    if (e->home[0]) {
        argv[i++] = "--home";
        argv[i++] = e->home;
    }
    for (int k = 0; o->args && o->args[k] && k < BB_MAX_ARGS; k++)
        argv[i++] = o->args[k];
    argv[i] = NULL;
    if (o->log_file) {
        int lf = open(bb_path(e->dir, "executor.log"), O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (lf < 0 || dup2(lf, STDOUT_FILENO) < 0 || dup2(lf, STDERR_FILENO) < 0)
            _exit(126);
        close(lf);
    }
    /* Gone with the test, should it crash. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* A key-looking variable that must not reach the agent's shell. */
    setenv("TEST_API_KEY", "sekrit", 1);
    if (o->env_key)
        setenv("SESSION_API_KEY", o->env_key, 1);
    if (o->path_env)
        setenv("PATH", o->path_env, 1);
    for (int k = 0; k < BB_MAX_ENV && o->env[k]; k++)
        putenv((char *)o->env[k]);
    execv(bb_executor, (char *const *)argv);
    _exit(127);
}

int bb_launch(struct bb *e)
{
    e->pid = fork();
    if (e->pid < 0)
        return -1;
    if (e->pid == 0)
        exec_executor(e);
    struct bb_left *l = e->dir[0] ? bb_left_find(e->dir) : NULL;
    if (l)
        l->pid = e->pid;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    e->curl = curl_easy_init();
    /* Ready means: the socket exists (or TCP accepts) and /alive answers 200. */
    double deadline = bb_now() + 15;
    while (bb_now() < deadline) {
        struct stat st;
        if (!e->sock[0] || stat(e->sock, &st) == 0) {
            if (e->opt.ready_file)
                e->ready_file_existed = access(bb_path(e->work, e->opt.ready_file), F_OK) == 0;
            struct bb_reply r = {0};
            bb_setup(e, e->curl, "GET", "/alive", NULL, &r);
            long status = 0;
            if (curl_easy_perform(e->curl) == CURLE_OK)
                curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
            bb_reply_free(&r);
            if (status == 200)
                return 0;
        }
        if (waitpid(e->pid, NULL, WNOHANG) == e->pid) {
            e->pid = -1;
            fprintf(stderr, "executor exited during start-up\n");
            return -1;
        }
        usleep(10000);
    }
    fprintf(stderr, "executor did not become ready\n");
    return -1;
}

int bb_start(struct bb *e, const struct bb_options *o)
{
    if (bb_prepare(e, o) < 0)
        return -1;
    return bb_launch(e);
}

int bb_stop(struct bb *e)
{
    int rc = 0;
    if (e->curl) {
        curl_easy_cleanup(e->curl);
        curl_global_cleanup();
    }
    e->curl = NULL;
    if (e->pid > 0) {
        int status;
        kill(e->pid, SIGTERM);
        waitpid(e->pid, &status, 0);
        /* SIGTERM is a clean shutdown: exit 0, socket removed. */
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "executor did not exit cleanly (status 0x%x)\n", status);
            rc = -1;
        }
        if (e->sock[0] && access(e->sock, F_OK) == 0) {
            fprintf(stderr, "executor left its socket behind\n");
            rc = -1;
        }
        e->pid = -1;
    }
    if (e->dir[0]) {
        if (bb_dir_remove(e->dir) < 0)
            rc = -1;
        struct bb_left *l = bb_left_find(e->dir);
        if (l)
            memset(l, 0, sizeof *l);
        e->dir[0] = '\0';
    }
    return rc;
}

const char *bb_path(const char *dir, const char *rel)
{
    static char ring[32][512];
    static int next;
    char *b = ring[next++ % 32];
    snprintf(b, sizeof ring[0], "%s/%s", dir, rel);
    return b;
}

bool bb_have_program(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

char *bb_capture(const char *const *argv, int fd, int *status)
{
    int fds[2];
    if (pipe(fds) < 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], fd);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    char *out = NULL;
    size_t len = 0;
    char chunk[4096];
    ssize_t n;
    while ((n = read(fds[0], chunk, sizeof chunk)) > 0) {
        char *p = realloc(out, len + (size_t)n + 1);
        if (!p)
            break;
        out = p;
        memcpy(out + len, chunk, (size_t)n);
        len += (size_t)n;
        out[len] = '\0';
    }
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return out ? out : strdup("");
}

char *bb_executor_stderr(const char *const *args, int *status)
{
    const char *argv[BB_MAX_ARGS + 2] = {bb_executor};
    for (int i = 0; args[i] && i < BB_MAX_ARGS; i++)
        argv[i + 1] = args[i];
    return bb_capture(argv, 2, status);
}

char *bb_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *out = NULL;
    size_t n = 0;
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
        char *p = realloc(out, n + k + 1);
        if (!p)
            break;
        out = p;
        memcpy(out + n, chunk, k);
        n += k;
    }
    fclose(f);
    if (!out)
        out = calloc(1, 1);
    else
        out[n] = '\0';
    if (len)
        *len = n;
    return out;
}

void bb_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}
