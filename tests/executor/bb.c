#include "bb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Keeps Content-Type and Content-Disposition (values without the line end). */
static size_t collect_header(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct bb_reply *r = ctx;
    size_t n = size * nmemb;
    static const char *const names[] = {"content-type:", "content-disposition:"};
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(names[i]);
        if (n > k && strncasecmp(data, names[i], k) == 0) {
            const char *v = data + k;
            size_t vl = n - k;
            while (vl && (*v == ' '))
                v++, vl--;
            while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
                vl--;
            char **slot = i == 0 ? &r->content_type : &r->disposition;
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

/* Performs h with the key header; fills status and json. */
static void perform(CURL *h, const char *key, struct bb_reply *r, const char *what)
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
    if (rc != CURLE_OK)
        fail_msg("%s: %s", what, curl_easy_strerror(rc));
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    r->json = r->body ? json_loads(r->body, 0, NULL) : NULL;
}

struct bb_reply bb_http_key(struct bb *e, const char *method, const char *path, const char *body,
                            const char *key)
{
    struct bb_reply r = {0};
    bb_setup(e, e->curl, method, path, body, &r);
    perform(e->curl, key, &r, path);
    return r;
}

struct bb_reply bb_http(struct bb *e, const char *method, const char *path, const char *body)
{
    return bb_http_key(e, method, path, body, e->api_key);
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
    perform(e->curl, e->api_key, &r, path);
    curl_mime_free(mime);
    return r;
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

struct bb_reply bb_run(struct bb *e, const char *command)
{
    char *body = bb_run_body(command, false, 30, true);
    struct bb_reply r = bb_http(e, "POST", "/execute_action", body);
    free(body);
    assert_int_equal(r.status, 200);
    assert_non_null(r.json);
    return r;
}

const char *bb_content(const struct bb_reply *r)
{
    return json_string_value(json_object_get(r->json, "content"));
}

long long bb_exit_code(const struct bb_reply *r)
{
    json_t *meta = json_object_get(json_object_get(r->json, "extras"), "metadata");
    return json_integer_value(json_object_get(meta, "exit_code"));
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

int bb_prepare(struct bb *e, const char *exe, bool tcp)
{
    memset(e, 0, sizeof *e);
    e->exe = exe;
    e->pid = -1;
    snprintf(e->dir, sizeof e->dir, "/tmp/paddock-exec-test.XXXXXX");
    if (!mkdtemp(e->dir))
        return -1;
    snprintf(e->sock, sizeof e->sock, "%s/executor.sock", e->dir);
    snprintf(e->work, sizeof e->work, "%s/workspace", e->dir);
    if (tcp) {
        int port = free_port();
        if (port < 0)
            return -1;
        snprintf(e->tcp, sizeof e->tcp, "127.0.0.1:%d", port);
    }
    return 0;
}

int bb_launch(struct bb *e, const char *const *extra, bool no_socket, const char *env_key)
{
    if (no_socket) {
        e->sock[0] = '\0';
        e->use_tcp = true;
    }
    e->pid = fork();
    if (e->pid < 0)
        return -1;
    if (e->pid == 0) {
        const char *argv[BB_MAX_ARGS + 12] = {e->exe, "--working-dir", e->work,
                                              "--no-change-timeout", "1"};
        int i = 5;
        if (!no_socket) {
            argv[i++] = "--socket";
            argv[i++] = e->sock;
        }
        for (int k = 0; extra && extra[k] && k < BB_MAX_ARGS; k++)
            argv[i++] = extra[k];
        argv[i] = NULL;
        /* Gone with the test, should it crash. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* A key-looking variable that must not reach the agent's shell. */
        setenv("TEST_API_KEY", "sekrit", 1);
        if (env_key)
            setenv("SESSION_API_KEY", env_key, 1);
        execv(e->exe, (char *const *)argv);
        _exit(127);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    e->curl = curl_easy_init();
    /* Ready means: the socket exists (or TCP accepts) and /alive answers 200. */
    double deadline = bb_now() + 15;
    while (bb_now() < deadline) {
        struct stat st;
        if (no_socket || stat(e->sock, &st) == 0) {
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

int bb_start(struct bb *e, const char *exe)
{
    const char *shell = getenv("EXECUTOR_SHELL");
    const char *extra[] = {"--shell", shell, NULL};
    if (bb_prepare(e, exe, false) < 0)
        return -1;
    return bb_launch(e, shell && *shell ? extra : NULL, false, NULL);
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
        char cmd[256];
        snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", e->dir, e->dir);
        if (system(cmd) != 0)
            rc = -1;
    }
    return rc;
}

char *bb_capture(const char *const *argv, int *status)
{
    int fds[2];
    if (pipe(fds) < 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
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
