#include "blackbox.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *blackbox_executor_path;
char blackbox_tmpdir[64];
char blackbox_sock_path[100];
char blackbox_work_dir[100];
pid_t blackbox_executor_pid = -1;
static CURL *curl;

static size_t collect(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct reply *r = ctx;
    size_t n = size * nmemb;
    char *p = realloc(r->body, r->len + n + 1);
    if (!p)
        return 0;
    memcpy(p + r->len, data, n);
    r->body = p;
    r->len += n;
    r->body[r->len] = '\0';
    return n;
}

void blackbox_reply_free(struct reply *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

double blackbox_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void blackbox_setup_handle(CURL *h, const char *method, const char *path, const char *body,
                           struct reply *r)
{
    char url[256];
    snprintf(url, sizeof url, "http://executor%s", path);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, blackbox_sock_path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
}

struct reply blackbox_http(const char *method, const char *path, const char *body)
{
    struct reply r = {0};
    blackbox_setup_handle(curl, method, path, body, &r);
    CURLcode rc = curl_easy_perform(curl);
    if (rc != CURLE_OK)
        fail_msg("%s %s: %s", method, path, curl_easy_strerror(rc));
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    r.json = r.body ? json_loads(r.body, 0, NULL) : NULL;
    return r;
}

struct reply blackbox_action(const char *body)
{
    struct reply r = blackbox_http("POST", "/execute_action", body);
    if (r.status != 200)
        fail_msg("status %ld: %s", r.status, r.body ? r.body : "");
    assert_non_null(r.json);
    return r;
}

char *blackbox_run_body(const char *command, bool is_input, double timeout, bool blocking)
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

struct reply blackbox_run_full(const char *command, bool is_input, double timeout)
{
    char *body = blackbox_run_body(command, is_input, timeout, timeout >= 0);
    struct reply r = blackbox_http("POST", "/execute_action", body);
    free(body);
    assert_int_equal(r.status, 200);
    assert_non_null(r.json);
    return r;
}

struct reply blackbox_run(const char *command)
{
    return blackbox_run_full(command, false, 30);
}

const char *blackbox_content(const struct reply *r)
{
    return json_string_value(json_object_get(r->json, "content"));
}

json_t *blackbox_meta(const struct reply *r)
{
    return json_object_get(json_object_get(r->json, "extras"), "metadata");
}

json_int_t blackbox_exit_code(const struct reply *r)
{
    return json_integer_value(json_object_get(blackbox_meta(r), "exit_code"));
}

const char *blackbox_meta_str(const struct reply *r, const char *key)
{
    return json_string_value(json_object_get(blackbox_meta(r), key));
}

void blackbox_assert_prefix(const char *s, const char *prefix)
{
    assert_non_null(s);
    if (strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("expected \"%s\" to start with \"%s\"", s, prefix);
}

void blackbox_assert_contains(const char *s, const char *part)
{
    assert_non_null(s);
    if (!strstr(s, part))
        fail_msg("expected \"%s\" to contain \"%s\"", s, part);
}

const char *blackbox_path_env;

int blackbox_start(const char *const *extra_args, unsigned tmpdir_mode)
{
    snprintf(blackbox_tmpdir, sizeof blackbox_tmpdir, "/tmp/paddock-exec-test.XXXXXX");
    if (!mkdtemp(blackbox_tmpdir) || chmod(blackbox_tmpdir, tmpdir_mode) < 0)
        return -1;
    snprintf(blackbox_sock_path, sizeof blackbox_sock_path, "%s/executor.sock", blackbox_tmpdir);
    snprintf(blackbox_work_dir, sizeof blackbox_work_dir, "%s/workspace", blackbox_tmpdir);
    const char *shell = getenv("EXECUTOR_SHELL");
    blackbox_executor_pid = fork();
    if (blackbox_executor_pid < 0)
        return -1;
    if (blackbox_executor_pid == 0) {
        char *argv[24] = {(char *)blackbox_executor_path,
                          "--socket",
                          blackbox_sock_path,
                          "--working-dir",
                          blackbox_work_dir,
                          "--no-change-timeout",
                          "1"};
        int i = 7;
        if (shell && *shell) {
            argv[i++] = "--shell";
            argv[i++] = (char *)shell;
        }
        for (; extra_args && *extra_args && i < 23; extra_args++)
            argv[i++] = (char *)*extra_args;
        argv[i] = NULL;
        /* A key-looking variable that must not reach the agent's shell. */
        setenv("TEST_API_KEY", "sekrit", 1);
        if (blackbox_path_env)
            setenv("PATH", blackbox_path_env, 1);
        execv(blackbox_executor_path, argv);
        _exit(127);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    curl = curl_easy_init();
    /* Ready means: the socket exists and /alive answers 200. */
    double deadline = blackbox_now() + 15;
    while (blackbox_now() < deadline) {
        struct stat st;
        if (stat(blackbox_sock_path, &st) == 0) {
            struct reply r = {0};
            blackbox_setup_handle(curl, "GET", "/alive", NULL, &r);
            long status = 0;
            if (curl_easy_perform(curl) == CURLE_OK)
                curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
            blackbox_reply_free(&r);
            if (status == 200)
                return 0;
        }
        if (waitpid(blackbox_executor_pid, NULL, WNOHANG) == blackbox_executor_pid) {
            blackbox_executor_pid = -1;
            fprintf(stderr, "executor exited during start-up\n");
            return -1;
        }
        usleep(10000);
    }
    fprintf(stderr, "executor did not become ready\n");
    return -1;
}

int blackbox_stop(void)
{
    int rc = 0;
    if (curl)
        curl_easy_cleanup(curl);
    curl = NULL;
    curl_global_cleanup();
    if (blackbox_executor_pid > 0) {
        int status;
        kill(blackbox_executor_pid, SIGTERM);
        waitpid(blackbox_executor_pid, &status, 0);
        blackbox_executor_pid = -1;
        /* SIGTERM is a clean shutdown: exit 0, socket removed. */
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "executor did not exit cleanly (status 0x%x)\n", status);
            rc = -1;
        }
        if (access(blackbox_sock_path, F_OK) == 0) {
            fprintf(stderr, "executor left its socket behind\n");
            rc = -1;
        }
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", blackbox_tmpdir);
    if (system(cmd) != 0)
        rc = -1;
    return rc;
}

int blackbox_group_setup(void **state)
{
    (void)state;
    return blackbox_start(NULL, 0700);
}

int blackbox_group_teardown(void **state)
{
    (void)state;
    return blackbox_stop();
}
