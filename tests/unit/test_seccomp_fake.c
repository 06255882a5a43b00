/* The seccomp probe's refusal through a whole engine with no Docker: a fake daemon whose probe
 * container exits 1 (the profile was not applied). The engine (engine_serve, in a child
 * process) then reports "not_applied" in GET /v1/info and refuses every create with 503
 * before asking the daemon; with PADDOCK_SECCOMP_UNVERIFIED=1 it says "override" and the
 * create reaches the daemon. The fake runs on a thread of this program (fake_http.c). */
#include "engine/base/loop.h"
#include "engine/engine.h"
#include "tests/unit/fake_http.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <ftw.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 15000

static struct loop *fl;
static int stop_fd = -1;
static struct fake_http *docker;
static pthread_t fake_thread;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int probes, session_creates; /* creates the fake saw, under mu */

static char state_dir[64], engine_sock[128], docker_host[160];
static pid_t engine_pid;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A daemon that runs the probe and ignores its profile: the probe exits 1. Sessions' creates
 * are counted and refused (500), which ends them quickly. */
static void docker_route(struct fake_conn *c, const char *method, const char *full,
                         const char *head, const char *body, void *ud)
{
    const char *path = full;
    if (strncmp(path, "/v1.", 4) == 0)
        path = strchr(path + 1, '/');
    if (strcmp(path, "/_ping") == 0) {
        fake_http_reply(c, 200, "API-Version: 1.45\r\n", "OK");
    } else if (strcmp(path, "/version") == 0) {
        fake_http_reply(c, 200, NULL, "{\"Version\":\"fake\",\"ApiVersion\":\"1.45\"}");
    } else if (strncmp(path, "/events", 7) == 0) {
        fake_http_hold(c);
    } else if (strncmp(path, "/containers/json", 16) == 0) {
        fake_http_reply(c, 200, NULL, "[]");
    } else if (strncmp(path, "/containers/create", 18) == 0) {
        bool probe = body && strstr(body, "\"paddock.probe\"");
        pthread_mutex_lock(&mu);
        ++*(probe ? &probes : &session_creates);
        pthread_mutex_unlock(&mu);
        if (probe)
            fake_http_reply(c, 201, NULL, "{\"Id\":\"fakeprobe\",\"Warnings\":[]}");
        else
            fake_http_reply(c, 500, NULL, "{\"message\":\"fake: no sessions here\"}");
    } else if (strcmp(path, "/containers/fakeprobe/start") == 0 ||
               (strncmp(path, "/containers/fakeprobe", 21) == 0 && strcmp(method, "DELETE") == 0)) {
        fake_http_reply(c, 204, NULL, "");
    } else if (strncmp(path, "/containers/fakeprobe/wait", 26) == 0) {
        fake_http_reply(c, 200, NULL, "{\"StatusCode\":1}");
    } else {
        fake_http_reply(c, 404, NULL, "{\"message\":\"fake: no route\"}");
    }
}

static void on_stop(int fd, uint32_t ev, void *ud)
{
    uint64_t v;
    if (read(fd, &v, sizeof(v)) == sizeof(v))
        loop_stop(fl);
}

static void *fake_run(void *arg)
{
    loop_run(fl);
    return NULL;
}

/* One request to the engine: its status, and its JSON reply (the caller's) or NULL. */
static json_t *api(const char *method, const char *path, const char *body, long *status)
{
    return fake_engine_api(engine_sock, method, path, body, WAIT_MS, status);
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(p);
}

static int setup(void **state)
{
    snprintf(state_dir, sizeof(state_dir), "/tmp/paddock-seccomp-fake-XXXXXX");
    if (!mkdtemp(state_dir))
        return -1;
    snprintf(engine_sock, sizeof(engine_sock), "%s/engine.sock", state_dir);
    char docker_sock[128];
    snprintf(docker_sock, sizeof(docker_sock), "%s/docker.sock", state_dir);
    snprintf(docker_host, sizeof(docker_host), "unix://%s", docker_sock);
    probes = session_creates = 0;
    fl = loop_new();
    stop_fd = eventfd(0, EFD_CLOEXEC);
    docker = fl ? fake_http_listen(fl, docker_sock, docker_route, NULL, NULL) : NULL;
    if (!docker || stop_fd < 0 || loop_add_fd(fl, stop_fd, EPOLLIN, on_stop, NULL) < 0)
        return -1;
    return pthread_create(&fake_thread, NULL, fake_run, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    if (engine_pid > 0) {
        kill(engine_pid, SIGTERM);
        waitpid(engine_pid, NULL, 0);
        engine_pid = 0;
    }
    uint64_t one = 1;
    if (write(stop_fd, &one, sizeof(one)) == sizeof(one))
        pthread_join(fake_thread, NULL);
    fake_http_free(docker);
    loop_del_fd(fl, stop_fd);
    close(stop_fd);
    loop_free(fl);
    nftw(state_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    unsetenv("PADDOCK_SECCOMP_UNVERIFIED");
    return 0;
}

/* engine_serve in a child on the fake daemon; then GET /v1/info's "seccomp" once the probe
 * ended (the caller's). */
static json_t *engine_probed(void)
{
    engine_pid = fake_engine_spawn(state_dir, engine_sock, "/bin/true", docker_host, NULL);
    assert_true(engine_pid >= 0);
    double deadline = now_ms() + WAIT_MS;
    while (now_ms() < deadline) {
        long st;
        json_t *info = api("GET", "/v1/info", NULL, &st);
        json_t *sc = json_incref(json_object_get(info, "seccomp"));
        json_decref(info);
        const char *s = json_string_value(json_object_get(sc, "state"));
        if (st == 200 && s && strcmp(s, "checking") != 0)
            return sc;
        json_decref(sc);
        usleep(20 * 1000);
    }
    fail_msg("the probe did not end");
    return NULL;
}

static void test_not_applied_refuses(void **state)
{
    json_t *sc = engine_probed();
    assert_string_equal(json_string_value(json_object_get(sc, "state")), "not_applied");
    assert_non_null(strstr(json_string_value(json_object_get(sc, "error")), "did not apply"));
    assert_false(json_is_true(json_object_get(sc, "override")));
    json_decref(sc);
    long st;
    json_t *r = api("POST", "/v1/sessions", "{}", &st);
    assert_int_equal(st, 503);
    const char *msg = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "seccomp"));
    json_decref(r);
    pthread_mutex_lock(&mu);
    assert_int_equal(probes, 1);
    assert_int_equal(session_creates, 0);
    pthread_mutex_unlock(&mu);
}

static void test_override_lets_creates_through(void **state)
{
    setenv("PADDOCK_SECCOMP_UNVERIFIED", "1", 1);
    json_t *sc = engine_probed();
    assert_string_equal(json_string_value(json_object_get(sc, "state")), "not_applied");
    assert_true(json_is_true(json_object_get(sc, "override")));
    json_decref(sc);
    long st;
    json_t *r = api("POST", "/v1/sessions", "{}", &st);
    json_decref(r);
    assert_int_not_equal(st, 503);
    pthread_mutex_lock(&mu);
    assert_int_equal(session_creates, 1);
    pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
    fake_engine_main(argc, argv);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_not_applied_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_override_lets_creates_through, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
