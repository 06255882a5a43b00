/* The Docker client against a fake daemon on the same loop (a fake inside a unit test; the
 * real daemon is covered by tests/integration/test_docker.c): version negotiation with daemons
 * too old, too new or without the API-Version header, which the real one cannot show; and the
 * exec upgrade's edge cases: the stream's first bytes in the 101's packet, a reply head split
 * across reads, a refused start with a JSON body, input held until the first resize, the exit
 * code asked again while Docker still says Running. Then the Docker sandbox driver
 * (engine/driver_docker.c) over the same fake: its table is complete, and replies, exec output,
 * exit and resize come back through it unchanged. Last, pulls of a missing image: Docker's
 * pull stream relayed as "build" events (engine/builder.c) and its error named, and a daemon
 * that never answers a pull bounded by the stall timeout with a message that says so. */
#include "engine/base/loop.h"
#include "engine/builder.h"
#include "engine/docker/docker.h"
#include "engine/docker/http.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "tests/unit/fake_http.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the fake daemon */

enum start_mode { START_ONE_PACKET, START_SPLIT, START_404 };
/* POST /images/create: Docker's progress lines then its error object, or no answer at all. */
enum pull_mode { PULL_PROGRESS_THEN_ERROR, PULL_HANG };

struct fake {
    struct loop *l;
    struct fake_http *srv;
    char path[108];
    /* behaviour */
    const char *ping_api; /* API-Version header of /_ping, NULL: none */
    const char *api_max;  /* /version's ApiVersion */
    const char *api_min;  /* /version's MinAPIVersion */
    const char *refuse;   /* /version answers 400 with this message */
    enum start_mode start;
    enum pull_mode pull;
    int running_answers; /* /exec/e1/json says Running this many times first */
    /* what it saw */
    char version_path[64];
    char log[4096]; /* "resize h=24 w=80;input abc;..." in order */
    char create_body[1024];
    char start_head[1024];
    char start_body[256];
    char pull_path[256];
    int requests;
    int split_fd;
    int split_step;
};

static void logf_(struct fake *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct fake *f, const char *fmt, ...)
{
    size_t n = strlen(f->log);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->log + n, sizeof(f->log) - n, fmt, ap);
    va_end(ap);
}

/* Keep what fits (the fake's records are for assertions only). */
static void keep(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src) < n - 1 ? strlen(src) : n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static void put(int fd, const char *p, size_t n)
{
    assert_true(fake_http_put(fd, p, n));
}

static const char upgraded[] = "HTTP/1.1 101 UPGRADED\r\nContent-Type: "
                               "application/vnd.docker.raw-stream\r\nConnection: "
                               "Upgrade\r\nUpgrade: tcp\r\n\r\n";

static void on_split_timer(void *ud)
{
    struct fake *f = ud;
    /* The head in three pieces, the blank line itself cut in two, each on its own turn. */
    size_t n = strlen(upgraded), cut1 = 20, cut2 = n - 3;
    if (f->split_step == 0)
        put(f->split_fd, upgraded, cut1);
    else if (f->split_step == 1)
        put(f->split_fd, upgraded + cut1, cut2 - cut1);
    else {
        put(f->split_fd, upgraded + cut2, n - cut2);
        put(f->split_fd, "hello\r\n", 7);
    }
    if (++f->split_step < 3)
        loop_timer_add(f->l, 5, on_split_timer, f);
}

/* One request: method, path (after the version prefix), body. */
static void route(struct fake_conn *c, const char *method, const char *full, const char *head,
                  const char *body, void *ud)
{
    struct fake *f = ud;
    f->requests++;
    const char *path = full;
    if (strncmp(path, "/v1.", 4) == 0)
        path = strchr(path + 1, '/');
    if (strcmp(path, "/_ping") == 0) {
        char h[64] = "";
        if (f->ping_api)
            snprintf(h, sizeof(h), "API-Version: %s\r\n", f->ping_api);
        fake_http_reply(c, 200, h, "OK");
    } else if (strcmp(path, "/version") == 0) {
        keep(f->version_path, sizeof(f->version_path), full);
        char b[256];
        if (f->refuse) {
            snprintf(b, sizeof(b), "{\"message\":\"%s\"}", f->refuse);
            fake_http_reply(c, 400, NULL, b);
            return;
        }
        snprintf(b, sizeof(b), "{\"ApiVersion\":\"%s\",\"MinAPIVersion\":\"%s\"}", f->api_max,
                 f->api_min);
        fake_http_reply(c, 200, NULL, b);
    } else if (strcmp(path, "/containers/c1/exec") == 0) {
        keep(f->create_body, sizeof(f->create_body), body);
        logf_(f, "create %s;", full);
        fake_http_reply(c, 201, NULL, "{\"Id\":\"e1\"}");
    } else if (strcmp(path, "/containers/paused/exec") == 0) {
        fake_http_reply(c, 409, NULL,
                        "{\"message\":\"Container paused is paused, unpause the container "
                        "before exec\"}");
    } else if (strcmp(path, "/exec/e1/start") == 0) {
        keep(f->start_head, sizeof(f->start_head), head);
        keep(f->start_body, sizeof(f->start_body), body);
        logf_(f, "start %s;", full);
        if (f->start == START_404) {
            fake_http_reply(c, 404, NULL, "{\"message\":\"No such exec instance: e1\"}");
            return;
        }
        c->raw = true;
        if (f->start == START_ONE_PACKET) {
            /* The head and the stream's first bytes in one write. */
            char first[512];
            int m = snprintf(first, sizeof(first), "%shello\r\n", upgraded);
            put(c->fd, first, (size_t)m);
        } else {
            f->split_fd = c->fd;
            f->split_step = 0;
            on_split_timer(f);
        }
    } else if (strncmp(path, "/images/create?", 15) == 0) {
        keep(f->pull_path, sizeof(f->pull_path), path);
        if (f->pull == PULL_HANG)
            return; /* the daemon says nothing: a registry it cannot reach */
        /* What dockerd streams for a pull that fails after it began. */
        fake_http_reply(
            c, 200, "Content-Type: application/json\r\n",
            "{\"status\":\"Pulling from paddock-test-missing/none\",\"id\":\"never\"}\r\n"
            "{\"status\":\"Pulling fs layer\",\"progressDetail\":{},\"id\":\"a1b2c3\"}\r\n"
            "{\"status\":\"Downloading\",\"progressDetail\":{\"current\":512,\"total\":1024},"
            "\"progress\":\"[=====>    ]\",\"id\":\"a1b2c3\"}\r\n"
            "{\"errorDetail\":{\"message\":\"fake: unexpected EOF\"},\"error\":\"fake: "
            "unexpected EOF\"}\r\n");
    } else if (strncmp(path, "/exec/e1/resize?", 16) == 0) {
        logf_(f, "resize %s;", path + 16);
        fake_http_reply(c, 201, NULL, "");
    } else if (strcmp(path, "/exec/e1/json") == 0) {
        logf_(f, "inspect;");
        if (f->running_answers-- > 0)
            fake_http_reply(c, 200, NULL, "{\"Running\":true,\"ExitCode\":null}");
        else
            fake_http_reply(c, 200, NULL, "{\"Running\":false,\"ExitCode\":7}");
    } else {
        fake_http_reply(c, 404, NULL, "{\"message\":\"fake: no route\"}");
    }
}

/* The upgraded exec stream: the process echoes input; "quit" ends it (the stream closes). */
static void on_raw(struct fake_conn *c, void *ud)
{
    struct fake *f = ud;
    logf_(f, "input %.*s;", (int)c->len, c->in);
    bool quit = strstr(c->in, "quit") != NULL;
    put(c->fd, c->in, c->len);
    c->len = 0;
    c->in[0] = '\0';
    if (quit)
        fake_http_close(c);
}

/* ---------------------------------------------------------------- fixtures */

static struct loop *L;
static struct http *H;
static struct fake F;
static bool timed_out;

static void on_deadline(void *ud)
{
    timed_out = true;
    loop_stop(L);
}

static void run_until(const bool *flag)
{
    timed_out = false;
    struct loop_timer *t = loop_timer_add(L, 10000, on_deadline, NULL); /* never hang */
    while (!*flag && !timed_out)
        assert_int_equal(loop_run(L), 0);
    if (!timed_out)
        loop_timer_cancel(L, t);
    assert_false(timed_out);
}

static int setup(void **state)
{
    L = loop_new();
    H = http_new(L);
    memset(&F, 0, sizeof(F));
    F.l = L;
    F.ping_api = "1.41";
    F.api_max = "1.41";
    F.api_min = "1.12";
    snprintf(F.path, sizeof(F.path), "/tmp/paddock-fake-docker-%d.sock", (int)getpid());
    F.srv = fake_http_listen(L, F.path, route, on_raw, &F);
    return F.srv ? 0 : -1;
}

static int teardown(void **state)
{
    http_cancel_all(H);
    http_free(H);
    fake_http_free(F.srv);
    loop_free(L);
    return 0;
}

static struct docker *fake_docker(void)
{
    char host[160];
    snprintf(host, sizeof(host), "unix://%s", F.path);
    struct docker *d = docker_new(H, host);
    assert_non_null(d);
    return d;
}

struct rep {
    bool done;
    long status;
    char message[512];
};

static void on_rep(const struct docker_reply *r, void *ud)
{
    struct rep *w = ud;
    w->status = r->status;
    snprintf(w->message, sizeof(w->message), "%s", r->message);
    w->done = true;
    loop_stop(L);
}

static void finish(struct docker *d)
{
    http_cancel_all(H);
    docker_free(d);
}

/* ---------------------------------------------------------------- negotiation */

static void test_negotiates_the_newest_common(void **state)
{
    F.ping_api = F.api_max = "1.45";
    struct docker *d = fake_docker();
    struct rep r = {0};
    assert_int_equal(docker_version(d, on_rep, &r), 0);
    run_until(&r.done);
    assert_int_equal(r.status, 200);
    assert_string_equal(docker_api_version(d), "1.45");
    assert_string_equal(F.version_path, "/v1.45/version");
    finish(d);
}

static void test_caps_at_what_we_know(void **state)
{
    F.ping_api = F.api_max = "1.60";
    F.api_min = "1.44"; /* Docker 29's minimum */
    struct docker *d = fake_docker();
    struct rep r = {0};
    assert_int_equal(docker_ping(d, on_rep, &r), 0);
    run_until(&r.done);
    assert_int_equal(r.status, 200);
    assert_string_equal(docker_api_version(d), "1.51");
    assert_string_equal(F.version_path, "/v1.51/version");
    finish(d);
}

static void test_no_header_asks_version(void **state)
{
    F.ping_api = NULL; /* a proxy that drops headers */
    F.api_max = "1.43";
    struct docker *d = fake_docker();
    struct rep r = {0};
    assert_int_equal(docker_ping(d, on_rep, &r), 0);
    run_until(&r.done);
    assert_int_equal(r.status, 200);
    assert_string_equal(F.version_path, "/version");
    assert_string_equal(docker_api_version(d), "1.43");
    finish(d);
}

static void test_daemon_too_old(void **state)
{
    F.ping_api = F.api_max = "1.40";
    struct docker *d = fake_docker();
    struct rep r = {0};
    assert_int_equal(docker_container_inspect(d, "c1", on_rep, &r), 0);
    run_until(&r.done);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.message, "too old"));
    assert_non_null(strstr(r.message, "1.40"));
    assert_non_null(strstr(r.message, "1.41"));
    assert_null(docker_api_version(d));
    finish(d);
}

static void test_daemon_too_new(void **state)
{
    F.ping_api = F.api_max = "1.70";
    F.api_min = "1.60";
    struct docker *d = fake_docker();
    struct rep r = {0};
    assert_int_equal(docker_ping(d, on_rep, &r), 0);
    run_until(&r.done);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.message, "too new"));
    assert_non_null(strstr(r.message, "1.60"));
    assert_null(docker_api_version(d));

    /* A daemon that refuses our version in its own words: those words are kept. */
    F.api_min = "1.12";
    F.refuse = "client version 1.51 is too old. Minimum supported API version is 1.60";
    struct rep r2 = {0};
    assert_int_equal(docker_ping(d, on_rep, &r2), 0);
    run_until(&r2.done);
    assert_int_equal(r2.status, 400);
    assert_non_null(strstr(r2.message, "Minimum supported API version is 1.60"));
    assert_non_null(strstr(r2.message, "1.41 to 1.51"));
    finish(d);
}

/* A follow stream opened before negotiation ends with the failure like any call. */
static void test_stream_gets_the_failure(void **state)
{
    F.ping_api = F.api_max = "1.30";
    struct docker *d = fake_docker();
    struct rep r = {0};
    assert_non_null(docker_events_follow(d, "x=1", NULL, on_rep, &r));
    run_until(&r.done);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.message, "too old"));
    finish(d);
}

/* ---------------------------------------------------------------- exec */

struct term {
    char out[1024];
    size_t len;
    const char *want;
    bool got, exited;
    int code;
    char error[512];
};

static int on_out(const char *p, size_t n, int fd, void *ud)
{
    struct term *t = ud;
    assert_int_equal(fd, 1);
    assert_true(t->len + n < sizeof(t->out));
    memcpy(t->out + t->len, p, n);
    t->len += n;
    t->out[t->len] = '\0';
    if (t->want && strstr(t->out, t->want)) {
        t->got = true;
        loop_stop(L);
    }
    return 0;
}

static void on_exit_(int code, const char *error, void *ud)
{
    struct term *t = ud;
    t->exited = true;
    t->code = code;
    snprintf(t->error, sizeof(t->error), "%s", error ? error : "");
    loop_stop(L);
}

static void expect_out(struct term *t, const char *want)
{
    t->want = want;
    t->got = strstr(t->out, want) != NULL;
    run_until(&t->got);
}

static void exec_roundtrip(enum start_mode mode, const char *api)
{
    F.start = mode;
    F.ping_api = F.api_max = api;
    F.running_answers = 2; /* the exit code is asked again until Docker has it */
    struct docker *d = fake_docker();
    const char *cmd[] = {"sh", NULL};
    const char *env[] = {"A=1", NULL};
    struct docker_exec_opts o = {.cmd = cmd,
                                 .env = env,
                                 .user = "1000",
                                 .working_dir = "/w",
                                 .tty = 1,
                                 .rows = 24,
                                 .cols = 80};
    struct term t = {0};
    struct docker_exec *x = docker_exec_open(d, "c1", &o, on_out, on_exit_, &t);
    assert_non_null(x);
    /* Typed before the stream is up: sent after it (and after the first size). */
    assert_int_equal(docker_exec_write(x, "abc", 3), 3);
    expect_out(&t, "hello\r\nabc");
    assert_string_equal(docker_exec_id(x), "e1");
    assert_int_equal(docker_exec_write(x, "quit", 4), 4);
    run_until(&t.exited);
    assert_string_equal(t.error, "");
    assert_int_equal(t.code, 7);
    assert_string_equal(t.out, "hello\r\nabcquit");

    /* The create and start bodies; the upgrade asked for. */
    assert_non_null(strstr(F.create_body, "\"Tty\":true"));
    assert_non_null(strstr(F.create_body, "\"AttachStdin\":true"));
    assert_non_null(strstr(F.create_body, "\"Cmd\":[\"sh\"]"));
    assert_non_null(strstr(F.create_body, "\"Env\":[\"A=1\"]"));
    assert_non_null(strstr(F.create_body, "\"User\":\"1000\""));
    assert_non_null(strstr(F.create_body, "\"WorkingDir\":\"/w\""));
    assert_non_null(strstr(F.create_body, "\"DetachKeys\""));
    assert_non_null(strstr(F.start_head, "\r\nConnection: Upgrade\r\n"));
    assert_non_null(strstr(F.start_head, "\r\nUpgrade: tcp\r\n"));
    assert_non_null(strstr(F.start_body, "\"Detach\":false"));
    assert_non_null(strstr(F.start_body, "\"Tty\":true"));
    if (strcmp(api, "1.41") == 0) {
        /* No ConsoleSize before 1.42: a resize right after the start, before the input. */
        assert_null(strstr(F.create_body, "ConsoleSize"));
        assert_non_null(strstr(F.log, "start /v1.41/exec/e1/start;resize h=24&w=80;input abc;"));
    } else {
        /* 1.42+: the size comes with the start (and with the create once the version is
         * known when it is made); no resize. */
        assert_non_null(strstr(F.start_body, "\"ConsoleSize\":[24,80]"));
        assert_null(strstr(F.log, "resize"));
    }
    assert_non_null(strstr(F.log, "inspect;inspect;inspect;"));
    finish(d);
}

static void test_exec_first_bytes_with_the_101(void **state)
{
    exec_roundtrip(START_ONE_PACKET, "1.41");
}

static void test_exec_reply_split(void **state)
{
    exec_roundtrip(START_SPLIT, "1.41");
}

static void test_exec_console_size(void **state)
{
    exec_roundtrip(START_ONE_PACKET, "1.43");
}

static void test_exec_refused(void **state)
{
    struct docker *d = fake_docker();
    const char *cmd[] = {"sh", NULL};
    struct docker_exec_opts o = {.cmd = cmd, .tty = 1};
    struct term t = {0};
    F.start = START_404;
    assert_non_null(docker_exec_open(d, "c1", &o, on_out, on_exit_, &t));
    run_until(&t.exited);
    assert_int_equal(t.code, -1);
    assert_non_null(strstr(t.error, "404"));
    assert_non_null(strstr(t.error, "No such exec instance: e1"));

    struct term t2 = {0};
    assert_non_null(docker_exec_open(d, "paused", &o, on_out, on_exit_, &t2));
    run_until(&t2.exited);
    assert_int_equal(t2.code, -1);
    assert_non_null(strstr(t2.error, "is paused"));
    finish(d);
}

/* Closed before the create came back, and while connecting: nothing is called, nothing leaks
 * (the ASan build checks). */
static void test_exec_close_early(void **state)
{
    struct docker *d = fake_docker();
    const char *cmd[] = {"sh", NULL};
    struct docker_exec_opts o = {.cmd = cmd, .tty = 1};
    struct term t = {0};
    struct docker_exec *x = docker_exec_open(d, "c1", &o, on_out, on_exit_, &t);
    assert_non_null(x);
    docker_exec_close(x);
    struct rep r = {0};
    assert_int_equal(docker_ping(d, on_rep, &r), 0);
    run_until(&r.done);
    assert_false(t.exited);
    assert_null(strstr(F.log, "start"));
    finish(d);
}

/* ---------------------------------------------------------------- the Docker driver */

/* Every op of every driver is set: the engine calls them without checking. */
static void test_driver_table_complete(void **state)
{
    assert_null(driver_find("no-such-driver"));
    assert_string_equal(driver_names(), "docker, local");
    for (int k = 0; k < 2; k++) {
        const char *name = k ? "local" : "docker";
        const struct sandbox_driver *d = driver_find(name);
        assert_non_null(d);
        assert_string_equal(d->name, name);
        const bool set[] = {
            d->open,
            d->close,
            d->address,
            d->hint,
            d->api_version,
            d->is_local,
            d->ping,
            d->version,
            d->info,
            d->create,
            d->start,
            d->stop,
            d->pause,
            d->resume,
            d->remove,
            d->rename,
            d->inspect,
            d->wait,
            d->list,
            d->changes,
            d->logs_tail,
            d->events_follow,
            d->stats_follow,
            d->logs_follow,
            d->stream_close,
            d->volume_inspect,
            d->volume_list,
            d->volume_remove,
            d->exec_open,
            d->exec_write,
            d->exec_close_input,
            d->exec_resize,
            d->exec_resume_output,
            d->exec_id,
            d->exec_close,
            d->exec_inspect,
            d->image_inspect,
            d->image_pull,
            d->image_build,
            d->image_tag,
            d->executor_ready,
            d->executor_request,
        };
        for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
            assert_true(set[i]);
    }
}

struct drep {
    bool done;
    long status;
    json_t *json;
    char message[512];
};

static void on_drep(const struct sandbox_reply *r, void *ud)
{
    struct drep *w = ud;
    w->status = r->status;
    w->json = json_incref(r->json);
    snprintf(w->message, sizeof(w->message), "%s", r->message);
    w->done = true;
    loop_stop(L);
}

static void test_driver_docker_relays(void **state)
{
    const struct sandbox_driver *drv = driver_find("docker");
    struct engine eng = {.loop = L, .http = H, .driver = drv};
    char host[160], *err = NULL;
    snprintf(host, sizeof(host), "unix://%s", F.path);
    assert_int_equal(drv->open(&eng, host, &err), 0);
    assert_string_equal(drv->address(&eng), F.path);
    assert_true(drv->is_local(&eng));

    /* A one-shot call: status and body as the daemon gave them. */
    struct drep w = {0};
    assert_int_equal(drv->exec_inspect(&eng, "e1", on_drep, &w), 0);
    run_until(&w.done);
    assert_int_equal(w.status, 200);
    assert_int_equal(json_integer_value(json_object_get(w.json, "ExitCode")), 7);
    json_decref(w.json);
    assert_string_equal(drv->api_version(&eng), "1.41");

    /* A refusal: Docker's status and message. */
    struct drep gone = {0};
    assert_int_equal(drv->inspect(&eng, "gone", on_drep, &gone), 0);
    run_until(&gone.done);
    assert_int_equal(gone.status, 404);
    assert_string_equal(gone.message, "fake: no route");
    json_decref(gone.json);

    /* An exec: output, a resize answered, the exit code. */
    F.start = START_ONE_PACKET;
    const char *cmd[] = {"sh", NULL};
    struct sandbox_exec_opts o = {.cmd = cmd, .tty = 1, .rows = 24, .cols = 80};
    struct term t = {0};
    struct sandbox_exec *x = drv->exec_open(&eng, "c1", &o, on_out, on_exit_, &t);
    assert_non_null(x);
    assert_int_equal(drv->exec_write(x, "abc", 3), 3);
    expect_out(&t, "hello\r\nabc");
    assert_string_equal(drv->exec_id(x), "e1");
    struct drep rs = {0};
    assert_int_equal(drv->exec_resize(x, 30, 100, on_drep, &rs), 0);
    run_until(&rs.done);
    assert_int_equal(rs.status, 201);
    assert_non_null(strstr(F.log, "resize h=30&w=100;"));
    assert_int_equal(drv->exec_write(x, "quit", 4), 4);
    run_until(&t.exited);
    assert_int_equal(t.code, 7);
    assert_string_equal(t.error, "");

    /* Closed before it answered: no callback, nothing leaks (the ASan build checks). */
    struct term t2 = {0};
    struct sandbox_exec *x2 = drv->exec_open(&eng, "c1", &o, on_out, on_exit_, &t2);
    assert_non_null(x2);
    drv->exec_close(x2);
    struct drep p = {0};
    assert_int_equal(drv->ping(&eng, on_drep, &p), 0);
    run_until(&p.done);
    assert_false(t2.exited);

    http_cancel_all(H);
    drv->close(&eng);
}

/* ---------------------------------------------------------------- pulls */

struct pulled {
    bool done;
    struct builder_result r;
    char message[1024];
    json_t *events; /* the "build" events, in order */
};

static void on_pulled(const struct builder_result *r, void *ud)
{
    struct pulled *p = ud;
    p->r = *r;
    snprintf(p->message, sizeof(p->message), "%s", r->message ? r->message : "");
    p->r.message = p->message;
    p->done = true;
    loop_stop(L);
}

static void on_event(const char *type, json_t *data, void *ud)
{
    struct pulled *p = ud;
    if (strcmp(type, "build") == 0)
        json_array_append(p->events, data);
}

/* A pull (for a platform) asks Docker for that platform; its progress goes out as "build"
 * events of stage "pull" (the layer and its percent);
 * its failure names the image and the daemon's reason, as an event and to the caller. */
static void test_pull_progress_and_failure(void **state)
{
    const struct sandbox_driver *drv = driver_find("docker");
    struct engine eng = {.loop = L, .http = H, .driver = drv, .events = events_new()};
    char host[160], *err = NULL;
    snprintf(host, sizeof(host), "unix://%s", F.path);
    assert_int_equal(drv->open(&eng, host, &err), 0);
    struct pulled p = {.events = json_array()};
    assert_int_equal(events_subscribe(eng.events, on_event, &p), 0);
    F.pull = PULL_PROGRESS_THEN_ERROR;
    assert_int_equal(
        builder_pull(&eng, "s1", "paddock-test-missing/none:never", "linux/arm64", on_pulled, &p),
        0);
    run_until(&p.done);
    /* For the platform the session's container is for. */
    assert_string_equal(F.pull_path,
                        "/images/create?fromImage=paddock-test-missing%2Fnone&tag=never"
                        "&platform=linux%2Farm64");
    assert_int_equal(p.r.err, ERR_IMAGE_NOT_FOUND);
    assert_int_equal(p.r.status, 400);
    assert_non_null(strstr(p.message, "paddock-test-missing/none:never"));
    assert_non_null(strstr(p.message, "fake: unexpected EOF"));

    static const struct {
        const char *stage, *message;
        int percent;
    } want[] = {
        {"pull", "pulling", -1},
        {"pull", "never: Pulling from paddock-test-missing/none", -1},
        {"pull", "a1b2c3: Pulling fs layer", -1},
        {"pull", "a1b2c3: Downloading", 50},
        {"failed", NULL, -1},
    };
    assert_int_equal(json_array_size(p.events), sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        json_t *ev = json_array_get(p.events, i);
        assert_string_equal(json_string_value(json_object_get(ev, "stage")), want[i].stage);
        assert_string_equal(json_string_value(json_object_get(ev, "session")), "s1");
        assert_string_equal(json_string_value(json_object_get(ev, "image")),
                            "paddock-test-missing/none:never");
        const char *m = json_string_value(json_object_get(ev, "message"));
        assert_string_equal(m, want[i].message ? want[i].message : p.message);
        json_t *pc = json_object_get(ev, "percent");
        if (want[i].percent < 0)
            assert_null(pc);
        else
            assert_int_equal(json_integer_value(pc), want[i].percent);
    }
    events_unsubscribe(eng.events, on_event, &p);
    json_decref(p.events);
    http_cancel_all(H);
    drv->close(&eng);
    events_free(eng.events);
}

/* A daemon that never answers a pull: the stall bound ends it with a message that says so. */
static void test_pull_stall_is_bounded(void **state)
{
    const struct sandbox_driver *drv = driver_find("docker");
    struct engine eng = {.loop = L, .http = H, .driver = drv};
    char host[160], *err = NULL;
    snprintf(host, sizeof(host), "unix://%s", F.path);
    assert_int_equal(drv->open(&eng, host, &err), 0);
    F.pull = PULL_HANG;
    struct drep w = {0};
    assert_int_equal(
        drv->image_pull(&eng, "paddock-test-missing/none:never", NULL, 1000, NULL, on_drep, &w), 0);
    run_until(&w.done);
    assert_string_equal(F.pull_path,
                        "/images/create?fromImage=paddock-test-missing%2Fnone&tag=never");
    assert_int_equal(w.status, 504);
    assert_non_null(strstr(w.message, "the Docker daemon sent nothing about it for 1 s"));
    http_cancel_all(H);
    drv->close(&eng);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_negotiates_the_newest_common, setup, teardown),
        cmocka_unit_test_setup_teardown(test_caps_at_what_we_know, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_header_asks_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon_too_old, setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon_too_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_gets_the_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_first_bytes_with_the_101, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_reply_split, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_console_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_close_early, setup, teardown),
        cmocka_unit_test(test_driver_table_complete),
        cmocka_unit_test_setup_teardown(test_driver_docker_relays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pull_progress_and_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pull_stall_is_bounded, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
