/* The approval flow through a whole engine with no Docker: the engine (engine_serve, in a child
 * process) talks to a fake Docker daemon and, once the fake has "started" the container, to a
 * fake executor on the session's socket (<state>/run/<id>/executor.sock), both on a thread of
 * this program (tests/unit/fake_http.c). The same flow against a real daemon and real sandboxes
 * is tests/integration/test_approvals.c; this one holds where Docker is not.
 *
 * Checked: a session is created (create, start, the executor's /alive); a LOW action runs at
 * once; a HIGH one waits (pending, listed by /v1/approvals, the executor has not seen it), is
 * approved and then runs, the agent's blocked request getting the executor's observation; a
 * second HIGH one is rejected: the agent gets OpenHands' user_rejected and the executor never
 * sees it; a second decision is refused with already_decided; a waiting action outlives an
 * engine restart (reconciled with the container the fake lists by label). Every assertion is
 * on the main thread; waits poll to a deadline. */
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
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 15000
#define REJECTED_TEXT "Action has been rejected by the user! Waiting for further user input."

/* ---------------------------------------------------------------- the fakes (their thread) */

struct fakes {
    struct loop *l;
    int stop_fd;
    struct fake_http *docker;
    struct fake_http *executor;
    pthread_mutex_t mu;
    char sock_dir[512]; /* the create body's mount at /run/paddock */
    char labels[1024];  /* the create body's Labels, as JSON; "" before the create */
    char ran[4096];     /* "cmd\n" per execute_action the executor got, in order */
    char unknown[2048]; /* Docker requests the fake has no answer for */
    /* Group commit: actions whose command begins "gc-" the executor got, and how many of them
     * it got before their row was committed (read from the engine's store, separately). */
    int gc_seen, gc_uncommitted;
    char gc_first_bad[128];
};

static struct fakes FK;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void append(char *dst, size_t size, const char *s)
{
    pthread_mutex_lock(&FK.mu);
    size_t n = strlen(dst);
    snprintf(dst + n, size - n, "%s\n", s);
    pthread_mutex_unlock(&FK.mu);
}

static char state_dir[64];

/* The row of the action whose summary is cmd, as a reader of the engine's store sees it: only
 * what was committed. Its state, or "" when there is none. */
static void store_state_of(const char *cmd, char *state, size_t size)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/paddock.db", state_dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    state[0] = '\0';
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 5000);
        if (sqlite3_prepare_v2(db, "SELECT state FROM actions WHERE summary = ? ORDER BY id DESC",
                               -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_text(st, 1, cmd, -1, SQLITE_STATIC);
            if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
                snprintf(state, size, "%s", (const char *)sqlite3_column_text(st, 0));
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

/* The executor got cmd: its intent must already be committed (state running). */
static void gc_check_committed(const char *cmd)
{
    char state[32];
    store_state_of(cmd, state, sizeof(state));
    pthread_mutex_lock(&FK.mu);
    FK.gc_seen++;
    if (strcmp(state, "running") != 0) {
        if (!FK.gc_uncommitted)
            snprintf(FK.gc_first_bad, sizeof(FK.gc_first_bad), "%s (row: \"%s\")", cmd, state);
        FK.gc_uncommitted++;
    }
    pthread_mutex_unlock(&FK.mu);
}

/* The executor: /alive, and execute_action answered as a run observation of the command. */
static void executor_route(struct fake_conn *c, const char *method, const char *path,
                           const char *head, const char *body, void *ud)
{
    if (strcmp(path, "/alive") == 0) {
        fake_http_reply(c, 200, NULL, "{\"status\":\"ok\"}");
        return;
    }
    if (strncmp(path, "/execute_action", 15) != 0) {
        fake_http_reply(c, 404, NULL, "{\"detail\":\"fake executor: no route\"}");
        return;
    }
    json_t *req = json_loads(body, 0, NULL);
    const char *cmd = json_string_value(
        json_object_get(json_object_get(json_object_get(req, "action"), "args"), "command"));
    if (cmd && strcmp(cmd, "echo huge") == 0) {
        /* An executor that answers a streamed run with one plain observation larger than any
         * result frame may be (65 MiB, past the engine's 64 MiB). */
        size_t n = 65u * 1024 * 1024;
        char *big = malloc(n + 64);
        assert_non_null(big);
        int k = snprintf(big, 64, "{\"observation\":\"run\",\"content\":\"");
        memset(big + k, 'x', n);
        strcpy(big + k + n, "\"}");
        fake_http_reply(c, 200, NULL, big);
        free(big);
        json_decref(req);
        return;
    }
    if (cmd && strncmp(cmd, "echo gc-", 8) == 0)
        gc_check_committed(cmd);
    else
        append(FK.ran, sizeof(FK.ran), cmd ? cmd : "?");
    json_t *obs =
        json_pack("{s:s,s:s,s:{s:s,s:{s:i}}}", "observation", "run", "content", "fake ran it",
                  "extras", "command", cmd ? cmd : "", "metadata", "exit_code", 0);
    char *text = json_dumps(obs, JSON_COMPACT);
    fake_http_reply(c, 200, NULL, text ? text : "{}");
    free(text);
    json_decref(obs);
    json_decref(req);
}

/* The daemon: what the engine asks to create, start and watch one container. */
static void docker_route(struct fake_conn *c, const char *method, const char *full,
                         const char *head, const char *body, void *ud)
{
    const char *path = full;
    if (strncmp(path, "/v1.", 4) == 0)
        path = strchr(path + 1, '/');
    if (strcmp(path, "/_ping") == 0) {
        fake_http_reply(c, 200, "API-Version: 1.45\r\n", "OK");
    } else if (strcmp(path, "/version") == 0) {
        fake_http_reply(
            c, 200, NULL,
            "{\"Version\":\"fake\",\"ApiVersion\":\"1.45\",\"MinAPIVersion\":\"1.24\"}");
    } else if (strncmp(path, "/events", 7) == 0 || strstr(path, "/stats")) {
        fake_http_hold(c); /* nothing happens outside the engine */
    } else if (strncmp(path, "/containers/json", 16) == 0) {
        /* The one container once created (a restarted engine finds it by its labels). */
        char list[1300] = "[]";
        pthread_mutex_lock(&FK.mu);
        if (*FK.labels)
            snprintf(list, sizeof(list),
                     "[{\"Id\":\"fakec1\",\"State\":\"running\",\"Labels\":%s}]", FK.labels);
        pthread_mutex_unlock(&FK.mu);
        fake_http_reply(c, 200, NULL, list);
    } else if (strncmp(path, "/containers/create", 18) == 0 && body &&
               strstr(body, "\"paddock.probe\"")) {
        /* The engine's seccomp probe: a daemon that applies the profile (exit 0). */
        fake_http_reply(c, 201, NULL, "{\"Id\":\"fakeprobe\",\"Warnings\":[]}");
    } else if (strcmp(path, "/containers/fakeprobe/start") == 0) {
        fake_http_reply(c, 204, NULL, "");
    } else if (strncmp(path, "/containers/fakeprobe/wait", 26) == 0) {
        fake_http_reply(c, 200, NULL, "{\"StatusCode\":0}");
    } else if (strncmp(path, "/containers/fakeprobe", 21) == 0 && strcmp(method, "DELETE") == 0) {
        fake_http_reply(c, 204, NULL, "");
    } else if (strncmp(path, "/containers/create", 18) == 0) {
        json_t *b = json_loads(body, 0, NULL);
        json_t *m;
        size_t i;
        json_array_foreach(json_object_get(json_object_get(b, "HostConfig"), "Mounts"), i, m)
        {
            const char *target = json_string_value(json_object_get(m, "Target"));
            const char *source = json_string_value(json_object_get(m, "Source"));
            if (target && source && strcmp(target, "/run/paddock") == 0) {
                pthread_mutex_lock(&FK.mu);
                snprintf(FK.sock_dir, sizeof(FK.sock_dir), "%s", source);
                pthread_mutex_unlock(&FK.mu);
            }
        }
        char *labels = json_dumps(json_object_get(b, "Labels"), JSON_COMPACT);
        pthread_mutex_lock(&FK.mu);
        snprintf(FK.labels, sizeof(FK.labels), "%s", labels ? labels : "{}");
        pthread_mutex_unlock(&FK.mu);
        free(labels);
        json_decref(b);
        fake_http_reply(c, 201, NULL, "{\"Id\":\"fakec1\",\"Warnings\":[]}");
    } else if (strcmp(path, "/containers/fakec1/start") == 0) {
        /* The container's executor starts listening on the mounted socket dir. */
        char sock[600];
        pthread_mutex_lock(&FK.mu);
        snprintf(sock, sizeof(sock), "%s/executor.sock", FK.sock_dir);
        pthread_mutex_unlock(&FK.mu);
        if (!FK.executor)
            FK.executor = fake_http_listen(FK.l, sock, executor_route, NULL, NULL);
        fake_http_reply(c, FK.executor ? 204 : 500, NULL, FK.executor ? "" : "{\"message\":\"x\"}");
    } else if (strcmp(path, "/containers/fakec1/pause") == 0 ||
               strcmp(path, "/containers/fakec1/unpause") == 0) {
        fake_http_reply(c, 204, NULL, "");
    } else if (strncmp(path, "/containers/fakec1/json", 23) == 0) {
        /* Its first process is this one, which serves the fake executor's socket. */
        char reply[512];
        snprintf(reply, sizeof(reply),
                 "{\"Id\":\"fakec1\",\"Name\":\"/fake\",\"State\":{\"Status\":\"running\","
                 "\"Running\":true,\"Paused\":false,\"OOMKilled\":false,\"ExitCode\":0,"
                 "\"Pid\":%d},\"NetworkSettings\":{\"Ports\":{}},\"Config\":{\"Labels\":{}}}",
                 (int)getpid());
        fake_http_reply(c, 200, NULL, reply);
    } else {
        char line[1100];
        snprintf(line, sizeof(line), "%s %s", method, full);
        append(FK.unknown, sizeof(FK.unknown), line);
        fake_http_reply(c, 404, NULL, "{\"message\":\"fake: no route\"}");
    }
}

static void on_stop(int fd, uint32_t ev, void *ud)
{
    uint64_t v;
    if (read(fd, &v, sizeof(v)) == sizeof(v))
        loop_stop(FK.l);
}

static void *fakes_run(void *arg)
{
    loop_run(FK.l);
    return NULL;
}

/* ---------------------------------------------------------------- the engine's API */

static char engine_sock[128];
static char operator_sock[128]; /* the operator's channel: decisions go there */
static pid_t engine_pid;
static pthread_t fakes_thread;

/* One request to the engine: its status, and its JSON reply (the caller's) or NULL. */
static json_t *api(const char *method, const char *path, const char *body, long *status)
{
    return fake_engine_api(engine_sock, method, path, body, WAIT_MS, status);
}

/* The same on the operator's channel (approve and reject are the operator's). */
static json_t *api_op(const char *method, const char *path, const char *body, long *status)
{
    return fake_engine_api(operator_sock, method, path, body, WAIT_MS, status);
}

static const char *jstr(json_t *j, const char *key)
{
    return json_string_value(json_object_get(j, key));
}

static bool ran(const char *cmd)
{
    char line[256];
    snprintf(line, sizeof(line), "%s\n", cmd);
    pthread_mutex_lock(&FK.mu);
    bool yes = strstr(FK.ran, line) != NULL;
    pthread_mutex_unlock(&FK.mu);
    return yes;
}

/* An agent's blocking execute_action, on a thread: its reply, read after the join. */
struct agent {
    pthread_t t;
    char path[128];
    char body[256];
    long status;
    json_t *reply;
};

static void *agent_run(void *arg)
{
    struct agent *a = arg;
    a->reply = api("POST", a->path, a->body, &a->status);
    return NULL;
}

static void agent_start(struct agent *a, const char *session, const char *cmd)
{
    snprintf(a->path, sizeof(a->path), "/v1/sessions/%s/execute_action", session);
    snprintf(a->body, sizeof(a->body),
             "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"%s\"}}}", cmd);
    assert_int_equal(pthread_create(&a->t, NULL, agent_run, a), 0);
}

/* The id of the pending action whose summary is cmd, once /v1/approvals lists it; 0 at the
 * deadline. */
static json_int_t wait_pending(const char *cmd)
{
    double deadline = now_ms() + WAIT_MS;
    while (now_ms() < deadline) {
        long st;
        json_t *j = api("GET", "/v1/approvals", NULL, &st);
        json_t *e;
        size_t i;
        json_int_t id = 0;
        json_array_foreach(json_object_get(j, "approvals"), i, e)
        {
            json_t *act = json_object_get(e, "action") ? json_object_get(e, "action") : e;
            const char *summary = jstr(act, "summary");
            if (summary && strcmp(summary, cmd) == 0)
                id = json_integer_value(json_object_get(act, "id"));
        }
        json_decref(j);
        if (id)
            return id;
        usleep(20 * 1000);
    }
    return 0;
}

/* ---------------------------------------------------------------- fixtures */

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(p);
}

static char docker_host[160];

/* engine_serve in a child, on the state dir and the fake daemon; 0 once it answers. */
static int engine_start(void)
{
    /* The fake daemon never runs the executor, but the engine talks only to a socket served
     * by that binary: the fake executor runs in this test's binary, and its container's first
     * process (State.Pid) is this test's. */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    engine_pid = fake_engine_spawn(state_dir, engine_sock, self, docker_host, "high");
    if (engine_pid < 0)
        return -1;
    /* The engine answers /v1/info once it listens. */
    double deadline = now_ms() + WAIT_MS;
    while (now_ms() < deadline) {
        long st;
        json_t *j = api("GET", "/v1/info", NULL, &st);
        json_decref(j);
        if (st == 200)
            return 0;
        usleep(20 * 1000);
    }
    return -1;
}

/* SIGTERM, as an operator stops it; SIGKILL only past the deadline. Its exit status. */
static int engine_stop(void)
{
    int ws = -1;
    if (engine_pid <= 0)
        return -1;
    kill(engine_pid, SIGTERM);
    double deadline = now_ms() + WAIT_MS;
    while (waitpid(engine_pid, &ws, WNOHANG) == 0) {
        if (now_ms() > deadline) {
            kill(engine_pid, SIGKILL);
            waitpid(engine_pid, &ws, 0);
            break;
        }
        usleep(10 * 1000);
    }
    engine_pid = 0;
    return ws;
}

static int setup(void **state)
{
    snprintf(state_dir, sizeof(state_dir), "/tmp/paddock-approvals-fake-XXXXXX");
    if (!mkdtemp(state_dir))
        return -1;
    snprintf(engine_sock, sizeof(engine_sock), "%s/engine.sock", state_dir);
    snprintf(operator_sock, sizeof(operator_sock), "%s/operator.sock", state_dir);
    char docker_sock[128];
    snprintf(docker_sock, sizeof(docker_sock), "%s/docker.sock", state_dir);
    snprintf(docker_host, sizeof(docker_host), "unix://%s", docker_sock);
    memset(&FK, 0, sizeof(FK));
    pthread_mutex_init(&FK.mu, NULL);
    FK.l = loop_new();
    FK.stop_fd = eventfd(0, EFD_CLOEXEC);
    /* Listening before the engine starts: it finds its daemon at once. */
    FK.docker = fake_http_listen(FK.l, docker_sock, docker_route, NULL, NULL);
    if (!FK.l || FK.stop_fd < 0 || !FK.docker ||
        loop_add_fd(FK.l, FK.stop_fd, EPOLLIN, on_stop, NULL) < 0)
        return -1;
    if (pthread_create(&fakes_thread, NULL, fakes_run, NULL) != 0)
        return -1;
    /* cmocka runs no teardown after a failed setup: nothing may outlive it. */
    if (engine_start() < 0) {
        engine_stop();
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    engine_stop();
    uint64_t one = 1;
    if (write(FK.stop_fd, &one, sizeof(one)) == sizeof(one))
        pthread_join(fakes_thread, NULL);
    fake_http_free(FK.executor);
    fake_http_free(FK.docker);
    loop_del_fd(FK.l, FK.stop_fd);
    close(FK.stop_fd);
    loop_free(FK.l);
    nftw(state_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* ---------------------------------------------------------------- the flow */

static void test_approve_and_reject(void **state)
{
    long st;
    json_t *s = api("POST", "/v1/sessions", "{\"name\": \"fake\", \"confirm\": \"high\"}", &st);
    if (st != 201)
        fail_msg("create: %ld %s; Docker requests the fake did not know: %s", st, json_dumps(s, 0),
                 FK.unknown);
    assert_string_equal(jstr(s, "state"), "ready");
    char id[64];
    snprintf(id, sizeof(id), "%s", jstr(s, "id"));
    json_decref(s);

    /* A timeout no timer can hold is refused before it is recorded or run. */
    char epath[128];
    snprintf(epath, sizeof(epath), "/v1/sessions/%s/execute_action", id);
    json_t *e = api("POST", epath,
                    "{\"action\": {\"action\": \"run\", \"timeout\": 1e300, \"args\": "
                    "{\"command\": \"echo far\"}}}",
                    &st);
    assert_int_equal(st, 400);
    assert_non_null(strstr(jstr(json_object_get(e, "error"), "message"), "action.timeout"));
    json_decref(e);
    assert_false(ran("echo far"));

    /* LOW: runs at once. */
    struct agent low = {0};
    agent_start(&low, id, "echo hi");
    pthread_join(low.t, NULL);
    assert_int_equal(low.status, 200);
    assert_string_equal(jstr(low.reply, "observation"), "run");
    assert_true(ran("echo hi"));
    json_decref(low.reply);

    /* HIGH: waits for the operator; the executor has not seen it. */
    const char *risky = "rm -rf /home/demo";
    struct agent hi = {0};
    agent_start(&hi, id, risky);
    json_int_t aid = wait_pending(risky);
    assert_true(aid > 0);
    char path[128];
    snprintf(path, sizeof(path), "/v1/actions/%lld", (long long)aid);
    json_t *a = api("GET", path, NULL, &st);
    assert_int_equal(st, 200);
    assert_string_equal(jstr(a, "state"), "pending");
    assert_string_equal(jstr(a, "risk"), "high");
    json_decref(a);
    assert_false(ran(risky));

    /* Paused, the session cannot run it: the refusal's code says so (the CLI names
     * `paddock resume` from it), and nothing changes. */
    char spath[128];
    snprintf(spath, sizeof(spath), "/v1/sessions/%s/pause", id);
    json_decref(api_op("POST", spath, NULL, &st));
    assert_int_equal(st, 200);
    snprintf(path, sizeof(path), "/v1/actions/%lld/approve", (long long)aid);
    json_t *d = api_op("POST", path, "{\"by\": \"alice\"}", &st);
    assert_int_equal(st, 409);
    assert_string_equal(jstr(json_object_get(d, "error"), "code"), "session_paused");
    json_decref(d);
    assert_false(ran(risky));
    snprintf(spath, sizeof(spath), "/v1/sessions/%s/resume", id);
    json_decref(api_op("POST", spath, NULL, &st));
    assert_int_equal(st, 200);

    /* Approved: it runs, and the blocked agent gets the executor's observation. */
    d = api_op("POST", path, "{\"by\": \"alice\"}", &st);
    assert_int_equal(st, 200);
    json_decref(d);
    pthread_join(hi.t, NULL);
    assert_int_equal(hi.status, 200);
    assert_string_equal(jstr(hi.reply, "observation"), "run");
    assert_string_equal(jstr(hi.reply, "content"), "fake ran it");
    json_decref(hi.reply);
    assert_true(ran(risky));
    snprintf(path, sizeof(path), "/v1/actions/%lld?wait=10", (long long)aid);
    a = api("GET", path, NULL, &st);
    assert_string_equal(jstr(a, "state"), "done");
    assert_string_equal(jstr(a, "approval"), "approved");
    json_decref(a);

    /* ?wait=0: 202 with the pending id at once; approved, it runs and its long-poll ends. */
    const char *later = "rm -rf /home/later";
    char body[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action?wait=0", id);
    snprintf(body, sizeof(body),
             "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"%s\"}}}", later);
    a = api("POST", path, body, &st);
    assert_int_equal(st, 202);
    assert_string_equal(jstr(a, "state"), "pending");
    aid = json_integer_value(json_object_get(a, "action_id"));
    json_decref(a);
    assert_true(aid > 0);
    assert_false(ran(later));
    snprintf(path, sizeof(path), "/v1/actions/%lld/approve", (long long)aid);
    d = api_op("POST", path, "{}", &st);
    assert_int_equal(st, 200);
    json_decref(d);
    snprintf(path, sizeof(path), "/v1/actions/%lld?wait=10", (long long)aid);
    a = api("GET", path, NULL, &st);
    assert_string_equal(jstr(a, "state"), "done");
    json_decref(a);
    assert_true(ran(later));

    /* Rejected: the agent gets user_rejected with the reason; the executor never sees it. */
    const char *worse = "rm -rf /home/other";
    struct agent no = {0};
    agent_start(&no, id, worse);
    aid = wait_pending(worse);
    assert_true(aid > 0);
    snprintf(path, sizeof(path), "/v1/actions/%lld/reject", (long long)aid);
    d = api_op("POST", path, "{\"by\": \"bob\", \"reason\": \"not on this box\"}", &st);
    assert_int_equal(st, 200);
    json_decref(d);
    pthread_join(no.t, NULL);
    assert_int_equal(no.status, 200);
    assert_string_equal(jstr(no.reply, "observation"), "user_rejected");
    assert_non_null(strstr(jstr(no.reply, "content"), REJECTED_TEXT));
    assert_non_null(strstr(jstr(no.reply, "content"), "not on this box"));
    json_decref(no.reply);
    assert_false(ran(worse));
    snprintf(path, sizeof(path), "/v1/actions/%lld", (long long)aid);
    a = api("GET", path, NULL, &st);
    assert_string_equal(jstr(a, "state"), "rejected");
    json_decref(a);

    /* A second decision changes nothing and says so. */
    snprintf(path, sizeof(path), "/v1/actions/%lld/approve", (long long)aid);
    d = api_op("POST", path, "{}", &st);
    assert_int_equal(st, 409);
    assert_string_equal(jstr(json_object_get(d, "error"), "code"), "already_decided");
    json_decref(d);
    assert_false(ran(worse));
}

/* The state of a session, once it is want (NULL at the deadline; the last one seen then). */
static bool wait_state(const char *id, const char *want, char *seen, size_t size)
{
    char path[128];
    snprintf(path, sizeof(path), "/v1/sessions/%s", id);
    double deadline = now_ms() + WAIT_MS;
    while (now_ms() < deadline) {
        long st;
        json_t *j = api("GET", path, NULL, &st);
        snprintf(seen, size, "%s", jstr(j, "state") ? jstr(j, "state") : "?");
        json_decref(j);
        if (strcmp(seen, want) == 0)
            return true;
        usleep(20 * 1000);
    }
    return false;
}

/* A waiting action is durable: the engine stops and starts again, reconciles the session with
 * the container the (fake) daemon lists by label and its executor, and the action still waits;
 * approved then, it runs. */
/* A run's reply that is one plain observation (an executor that does not stream) is bounded as
 * a result frame is: past 64 MiB the action fails with the executor's error instead of the
 * engine holding all of it. */
static void test_huge_plain_reply_bounded(void **state)
{
    long st;
    json_t *s = api("POST", "/v1/sessions", "{\"name\": \"fake\"}", &st);
    assert_int_equal(st, 201);
    char id[64];
    snprintf(id, sizeof(id), "%s", jstr(s, "id"));
    json_decref(s);
    struct agent a = {0};
    agent_start(&a, id, "echo huge");
    pthread_join(a.t, NULL);
    if (a.status == 200)
        fail_msg("a 65 MiB plain observation was taken whole");
    assert_non_null(jstr(json_object_get(a.reply, "error"), "code"));
    json_decref(a.reply);
}

static void test_pending_survives_restart(void **state)
{
    long st;
    json_t *s = api("POST", "/v1/sessions", "{\"name\": \"fake\"}", &st);
    assert_int_equal(st, 201);
    char id[64];
    snprintf(id, sizeof(id), "%s", jstr(s, "id"));
    json_decref(s);

    const char *risky = "rm -rf /home/kept";
    char path[160], body[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action?wait=0", id);
    snprintf(body, sizeof(body),
             "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"%s\"}}}", risky);
    json_t *a = api("POST", path, body, &st);
    assert_int_equal(st, 202);
    json_int_t aid = json_integer_value(json_object_get(a, "action_id"));
    json_decref(a);

    assert_int_equal(engine_stop(), 0); /* a clean stop */
    assert_int_equal(engine_start(), 0);
    char seen[32];
    if (!wait_state(id, "ready", seen, sizeof(seen)))
        fail_msg("after the restart the session is %s, not ready; unknown Docker requests: %s",
                 seen, FK.unknown);
    assert_int_equal(wait_pending(risky), aid);
    assert_false(ran(risky));

    snprintf(path, sizeof(path), "/v1/actions/%lld/approve", (long long)aid);
    json_t *d = api_op("POST", path, "{}", &st);
    assert_int_equal(st, 200);
    json_decref(d);
    snprintf(path, sizeof(path), "/v1/actions/%lld?wait=10", (long long)aid);
    a = api("GET", path, NULL, &st);
    assert_string_equal(jstr(a, "state"), "done");
    json_decref(a);
    assert_true(ran(risky));
}

/* Group commit (engine/commit.c): many agents at once, each action's command reaching the
 * executor only once its row is committed (the fake executor reads the store, as a second
 * reader sees only what is committed), each observation committed before its agent hears it,
 * every one recorded once, and the record verifying. */
#define GC_AGENTS 8
#define GC_EACH 25

struct gc_agent {
    pthread_t t;
    const char *session;
    int n;
    int ok, answered_uncommitted;
    char first_bad[160];
};

static void *gc_agent_run(void *arg)
{
    struct gc_agent *g = arg;
    char path[128], body[256], cmd[64], state[32];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action", g->session);
    for (int i = 0; i < GC_EACH; i++) {
        snprintf(cmd, sizeof(cmd), "echo gc-%d-%d", g->n, i);
        snprintf(body, sizeof(body),
                 "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"%s\"}}}", cmd);
        long st;
        json_t *r = api("POST", path, body, &st);
        const char *obs = json_string_value(json_object_get(r, "observation"));
        if (st == 200 && obs && strcmp(obs, "run") == 0)
            g->ok++;
        json_decref(r);
        /* Answered: the observation is in the store for any reader. */
        store_state_of(cmd, state, sizeof(state));
        if (strcmp(state, "done") != 0) {
            if (!g->answered_uncommitted)
                snprintf(g->first_bad, sizeof(g->first_bad), "%s (row: \"%s\")", cmd, state);
            g->answered_uncommitted++;
        }
    }
    return NULL;
}

static void test_group_commit(void **state)
{
    long st;
    json_t *s = api("POST", "/v1/sessions", "{\"name\": \"gc\", \"confirm\": \"high\"}", &st);
    assert_int_equal(st, 201);
    char id[64];
    snprintf(id, sizeof(id), "%s", jstr(s, "id"));
    json_decref(s);
    json_t *info = api("GET", "/v1/info", NULL, &st);
    json_int_t writes0 =
        json_integer_value(json_object_get(json_object_get(info, "record"), "writes"));
    json_decref(info);

    struct gc_agent g[GC_AGENTS];
    memset(g, 0, sizeof(g));
    for (int i = 0; i < GC_AGENTS; i++) {
        g[i].session = id;
        g[i].n = i;
        assert_int_equal(pthread_create(&g[i].t, NULL, gc_agent_run, &g[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < GC_AGENTS; i++) {
        pthread_join(g[i].t, NULL);
        ok += g[i].ok;
        if (g[i].answered_uncommitted)
            fail_msg("agent %d heard %d observations before they were committed; first %s", i,
                     g[i].answered_uncommitted, g[i].first_bad);
    }
    assert_int_equal(ok, GC_AGENTS * GC_EACH);
    pthread_mutex_lock(&FK.mu);
    int seen = FK.gc_seen, bad = FK.gc_uncommitted;
    char first[128];
    snprintf(first, sizeof(first), "%s", FK.gc_first_bad);
    pthread_mutex_unlock(&FK.mu);
    if (bad)
        fail_msg("%d of %d commands reached the executor before their row was committed; first %s",
                 bad, seen, first);
    assert_int_equal(seen, GC_AGENTS * GC_EACH);

    /* Every one recorded once, in the session's chain, which verifies. */
    char path[160];
    snprintf(path, sizeof(path), "/v1/verify?session=%s", id);
    json_t *v = api("GET", path, NULL, &st);
    assert_int_equal(st, 200);
    if (!json_is_true(json_object_get(v, "ok")))
        fail_msg("the record does not verify: %s", json_dumps(v, 0));
    /* an action, then its observation: two entries each (and the session's events) */
    assert_true(json_integer_value(json_object_get(v, "entries")) >= 2 * GC_AGENTS * GC_EACH);
    json_decref(v);
    v = api("GET", "/v1/verify", NULL, &st);
    assert_int_equal(st, 200);
    assert_true(json_is_true(json_object_get(v, "ok")));
    json_decref(v);
    snprintf(path, sizeof(path), "/v1/history?session=%s&limit=1000", id);
    json_t *h = api("GET", path, NULL, &st);
    assert_int_equal(st, 200);
    json_t *acts = json_object_get(h, "actions");
    assert_int_equal(json_array_size(acts), GC_AGENTS * GC_EACH);
    json_decref(h);
    /* All of them went through the group commit: an intent and an observation each. */
    info = api("GET", "/v1/info", NULL, &st);
    json_t *rec = json_object_get(info, "record");
    assert_true(json_integer_value(json_object_get(rec, "writes")) - writes0 >=
                2 * GC_AGENTS * GC_EACH);
    json_decref(info);
}

int main(int argc, char **argv)
{
    fake_engine_main(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_approve_and_reject, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_survives_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_plain_reply_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
    };
    int rc = cmocka_run_group_tests_name("approvals_fake", tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
