/* What a container can write, against the engine (the host's root) that reads it.
 * - The executor channel: the session's socket dir is bind-mounted writable at /run/paddock, so
 *   root in the sandbox can put anything at executor.sock. Whatever it puts (a symlink to a host
 *   socket or to another session's executor, a FIFO, a regular file, a socket of its own
 *   server, a socket a host process serves) receives no request, the action fails saying why, and
 * the session says why in its reason.
 * - The other host dirs a container writes (an overlay's upper dir, a bind-mounted or an
 *   engine-made workspace, the socket dir): links planted there are not followed by the changes
 * walk nor by the removal at delete. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a host socket that forges the executor's replies ---- */

struct forger {
    char dir[64];
    char path[128];
    int fd;
    atomic_int requests;
    atomic_bool stop;
    pthread_t thread;
};

static void *forger_run(void *ud)
{
    struct forger *f = ud;
    static const char body[] =
        "{\"observation\":\"run\",\"content\":\"FORGED\",\"extras\":{\"command\":\"x\","
        "\"metadata\":{\"exit_code\":0}},\"success\":true}";
    while (!atomic_load(&f->stop)) {
        struct pollfd p = {.fd = f->fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        int c = accept(f->fd, NULL, NULL);
        if (c < 0)
            continue;
        char buf[65536];
        ssize_t n = read(c, buf, sizeof(buf));
        if (n > 0) {
            atomic_fetch_add(&f->requests, 1);
            char head[256];
            int hl = snprintf(head, sizeof(head),
                              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                              "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                              sizeof(body) - 1);
            if (send(c, head, (size_t)hl, MSG_NOSIGNAL) < 0 ||
                send(c, body, sizeof(body) - 1, MSG_NOSIGNAL) < 0)
                fprintf(stderr, "forger: send: %s\n", strerror(errno));
        }
        close(c);
    }
    return NULL;
}

/* A forger listening at path (NULL: forge.sock in a temp dir of its own). */
static struct forger *forger_start_at(const char *path)
{
    struct forger *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    if (path) {
        snprintf(f->path, sizeof(f->path), "%s", path);
    } else {
        snprintf(f->dir, sizeof(f->dir), "/tmp/paddock-forge-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->path, sizeof(f->path), "%s/forge.sock", f->dir);
    }
    f->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", f->path);
    assert_int_equal(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(f->fd, 16), 0);
    assert_int_equal(pthread_create(&f->thread, NULL, forger_run, f), 0);
    return f;
}

static struct forger *forger_start(void)
{
    return forger_start_at(NULL);
}

static void forger_stop(struct forger *f)
{
    atomic_store(&f->stop, true);
    pthread_join(f->thread, NULL);
    close(f->fd);
    unlink(f->path);
    if (f->dir[0])
        rmdir(f->dir);
    free(f);
}

/* ---- root in the sandbox (docker exec as uid 0, beside the engine) ---- */

/* Run sh -c cmd as user in the container; its exit code (-1 when it did not end in 30 s). */
static int exec_as(const char *cid, const char *user, const char *cmd)
{
    json_t *b = json_pack("{s:s,s:[s,s,s],s:b,s:b}", "User", user, "Cmd", "sh", "-c", cmd,
                          "AttachStdout", 0, "AttachStderr", 0);
    char *body = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    char *path = strdupf("/v1.41/containers/%s/exec", cid);
    struct reply r;
    docker_body("POST", path, body, &r);
    free(path);
    free(body);
    assert_int_equal(r.status, 201);
    char *eid = strdup(jstr(r.json, "Id"));
    reply_free(&r);
    path = strdupf("/v1.41/exec/%s/start", eid);
    docker_body("POST", path, "{\"Detach\":true}", &r);
    free(path);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    int code = -1;
    path = strdupf("/v1.41/exec/%s/json", eid);
    for (double deadline = now_ms() + 30000; now_ms() < deadline; sleep_ms(20)) {
        docker("GET", path, &r);
        bool done = r.status == 200 && json_is_false(json_object_get(r.json, "Running"));
        if (done)
            code = (int)json_integer_value(json_object_get(r.json, "ExitCode"));
        reply_free(&r);
        if (done)
            break;
    }
    free(path);
    free(eid);
    return code;
}

static int root_exec(const char *cid, const char *cmd)
{
    return exec_as(cid, "0", cmd);
}

/* ---- the engine's side ---- */

static json_t *action_body(const char *command)
{
    return json_pack("{s:{s:s,s:{s:s}}}", "action", "action", "run", "args", "command", command);
}

struct bg_action {
    const char *id, *cid;
    long status;
    pthread_t thread;
};

static void *bg_run(void *ud)
{
    struct bg_action *b = ud;
    json_t *body = action_body("touch /tmp/held; n=0; while [ ! -e /tmp/release ] && "
                               "[ $n -lt 600 ]; do n=$((n+1)); sleep 0.05; done; echo held");
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char *path = strdupf("/v1/sessions/%s/execute_action", b->id);
    struct reply r;
    http_unix(harness_eng->socket, "POST", path, s, -1, 60000, &r);
    b->status = r.status;
    reply_free(&r);
    free(path);
    free(s);
    return NULL;
}

/* libcurl keeps the connection of an earlier request and would reuse it (to the executor that
 * bound the socket first). An action in flight holds it (the executor has begun it), so the
 * next request needs a new connection, whose far end root in the sandbox gets to choose. */
static void hold_connection(struct bg_action *b, const char *id, const char *cid)
{
    b->id = id;
    b->cid = cid;
    assert_int_equal(pthread_create(&b->thread, NULL, bg_run, b), 0);
    double deadline = now_ms() + 15000;
    while (root_exec(cid, "test -e /tmp/held") != 0 && now_ms() < deadline)
        sleep_ms(20);
    assert_int_equal(root_exec(cid, "rm /tmp/held"), 0);
}

static void release_connection(struct bg_action *b)
{
    assert_int_equal(root_exec(b->cid, "touch /tmp/release"), 0);
    pthread_join(b->thread, NULL);
    assert_int_equal(b->status, 200);
}

/* POST execute_action "echo hi": must fail (502) saying `want`; returns nothing. */
static void assert_action_refused(const char *id, const char *want)
{
    json_t *body = action_body("echo hi");
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(harness_eng, "POST", path, s, &r);
    free(path);
    free(s);
    if (r.status != 502 || !r.body || !strstr(r.body, want))
        fprintf(stderr, "execute_action → %ld %s (wanted 502 with \"%s\")\n", r.status,
                r.body ? r.body : "", want);
    assert_int_equal(r.status, 502);
    assert_non_null(strstr(jstr(r.json, "error.message"), want));
    reply_free(&r);

    /* Recorded as failed with the reason, never done with a forged observation. */
    path = strdupf("/v1/sessions/%s/actions?limit=1", id);
    json_t *list = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    json_t *a = json_array_get(json_object_get(list, "actions"), 0);
    assert_string_equal(jstr(a, "state"), "failed");
    assert_non_null(strstr(jstr(a, "error"), want));
    json_decref(list);
}

/* The session is disconnected and its reason says why (within 10 s). */
static void assert_session_says(const char *id, const char *want)
{
    json_t *s = session_wait_state(harness_eng, id, "disconnected", 10000);
    assert_non_null(s);
    const char *reason = jstr(s, "reason");
    if (!reason || !strstr(reason, want))
        fprintf(stderr, "reason: %s (wanted \"%s\")\n", reason ? reason : "(null)", want);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "channel was refused"));
    assert_non_null(strstr(reason, want));
    json_decref(s);
}

/* POST list_files: must fail (502) saying want; nothing else is asserted of it. */
static void assert_list_files_refused(const char *id, const char *want)
{
    char *path = strdupf("/v1/sessions/%s/list_files", id);
    struct reply r;
    api(harness_eng, "POST", path, "{\"path\":\"/\"}", &r);
    free(path);
    if (r.status != 502 || !r.body || !strstr(r.body, want))
        fprintf(stderr, "list_files → %ld %s (wanted 502 with \"%s\")\n", r.status,
                r.body ? r.body : "", want);
    assert_int_equal(r.status, 502);
    assert_non_null(strstr(r.body, want));
    reply_free(&r);
}

/* The review's attack: executor.sock made a symlink to a host socket, which forged the replies
 * of execute_action and list_files (each probed in a session of its own: the first refusal
 * makes the session disconnected, and the next request is refused by that state). */
static void test_symlink_to_a_host_socket(void **state)
{
    struct forger *f = forger_start();
    for (int probe = 0; probe < 2; probe++) {
        json_t *s = session_new(harness_eng, NULL);
        const char *id = jstr(s, "id"), *cid = jstr(s, "container_id");
        /* The symlink's target is resolved on the host, by whoever follows it. */
        char *cmd = strdupf("ln -sf %s /run/paddock/executor.sock", f->path);
        assert_int_equal(root_exec(cid, cmd), 0);
        free(cmd);
        struct bg_action held;
        hold_connection(&held, id, cid);
        if (probe == 0)
            assert_action_refused(id, "is a symbolic link, not a socket");
        else
            assert_list_files_refused(id, "is a symbolic link, not a socket");
        release_connection(&held);
        assert_session_says(id, "is a symbolic link");
        assert_int_equal(atomic_load(&f->requests), 0);
        session_delete(harness_eng, id);
        json_decref(s);
    }
    forger_stop(f);
}

static void test_fifo_and_regular_file(void **state)
{
    static const struct {
        const char *cmd, *want;
    } plants[] = {
        {.cmd = "rm -f /run/paddock/executor.sock && mkfifo /run/paddock/executor.sock",
         .want = "is a FIFO, not a socket"},
        {.cmd = "rm -f /run/paddock/executor.sock && echo hi > /run/paddock/executor.sock",
         .want = "is a regular file, not a socket"},
    };
    for (size_t i = 0; i < sizeof(plants) / sizeof(plants[0]); i++) {
        json_t *s = session_new(harness_eng, NULL);
        const char *id = jstr(s, "id"), *cid = jstr(s, "container_id");
        struct bg_action held;
        hold_connection(&held, id, cid);
        assert_int_equal(root_exec(cid, plants[i].cmd), 0);
        assert_action_refused(id, plants[i].want);
        release_connection(&held);
        assert_session_says(id, plants[i].want);
        session_delete(harness_eng, id);
        json_decref(s);
    }
}

static void test_socket_of_another_process_in_the_sandbox(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id"), *cid = jstr(s, "container_id");
    /* Root's own server, renamed over executor.sock once it listens; every request it gets is
     * a line in /tmp/evil.log. */
    static const char server[] =
        "import socket,os\n"
        "s=socket.socket(socket.AF_UNIX)\n"
        "s.bind('/run/paddock/evil.sock')\n"
        "s.listen(8)\n"
        "os.rename('/run/paddock/evil.sock','/run/paddock/executor.sock')\n"
        "open('/tmp/evil.ready','w').close()\n"
        "while True:\n"
        "  c,_=s.accept()\n"
        "  d=c.recv(65536)\n"
        "  if d: open('/tmp/evil.log','a').write(repr(d[:40])+'\\n')\n"
        "  c.close()\n";
    char *cmd = strdupf("cat > /tmp/evil.py <<'EOF'\n%sEOF\n"
                        "python3 /tmp/evil.py >/dev/null 2>&1 &\n"
                        "n=0; while [ ! -e /tmp/evil.ready ]; "
                        "do n=$((n+1)); [ $n -gt 400 ] && exit 1; sleep 0.05; done",
                        server);
    struct bg_action held;
    hold_connection(&held, id, cid);
    assert_int_equal(root_exec(cid, cmd), 0);
    free(cmd);
    assert_action_refused(id, "which is not the executor");
    release_connection(&held);
    assert_session_says(id, "which is not the executor");
    /* Nothing reached root's server. */
    assert_int_equal(root_exec(cid, "test ! -s /tmp/evil.log"), 0);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* A socket in the session's dir served by a host process (here this test, which the socket dir
 * lets bind there), renamed over executor.sock by root in the sandbox: a socket, but no process
 * of the sandbox's container serves it. */
static void test_socket_served_from_outside_the_container(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id"), *cid = jstr(s, "container_id");
    char *host = strdupf("%s/run/%s/host.sock", harness_eng->state_dir, id);
    struct forger *f = forger_start_at(host);
    free(host);
    struct bg_action held;
    hold_connection(&held, id, cid);
    assert_int_equal(root_exec(cid, "mv -f /run/paddock/host.sock /run/paddock/executor.sock"), 0);
    assert_action_refused(id, "which is not in the sandbox's container");
    release_connection(&held);
    assert_session_says(id, "which is not in the sandbox's container");
    assert_int_equal(atomic_load(&f->requests), 0);
    session_delete(harness_eng, id);
    forger_stop(f);
    json_decref(s);
}

static void test_symlink_to_another_sessions_executor(void **state)
{
    json_t *a = session_new(harness_eng, NULL), *b = session_new(harness_eng, NULL);
    const char *id = jstr(a, "id"), *cid = jstr(a, "container_id");
    /* B's socket on the host, as the engine sees it: <state>/run/<B>/executor.sock. */
    char *cmd = strdupf("ln -sf %s/run/%s/executor.sock /run/paddock/executor.sock",
                        harness_eng->state_dir, jstr(b, "id"));
    assert_int_equal(root_exec(cid, cmd), 0);
    free(cmd);
    struct bg_action held;
    hold_connection(&held, id, cid);
    assert_action_refused(id, "is a symbolic link");
    release_connection(&held);
    assert_session_says(id, "is a symbolic link");
    /* B ran nothing of A's: its history is empty. */
    char *path = strdupf("/v1/sessions/%s/actions", jstr(b, "id"));
    json_t *list = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    assert_int_equal(json_array_size(json_object_get(list, "actions")), 0);
    json_decref(list);
    session_delete(harness_eng, id);
    session_delete(harness_eng, jstr(b, "id"));
    json_decref(a);
    json_decref(b);
}

/* Stop and resume start the executor again on a new socket: the session works again. */
static void test_stop_resume_recovers(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id"), *cid = jstr(s, "container_id");
    struct bg_action held;
    hold_connection(&held, id, cid);
    assert_int_equal(root_exec(cid, "ln -sf /etc/passwd /run/paddock/executor.sock"), 0);
    assert_action_refused(id, "is a symbolic link");
    release_connection(&held);
    assert_session_says(id, "is a symbolic link");
    char *path = strdupf("/v1/sessions/%s/stop", id);
    json_decref(api_json(harness_eng, "POST", path, NULL, 200));
    free(path);
    path = strdupf("/v1/sessions/%s/resume", id);
    json_decref(api_json(harness_eng, "POST", path, NULL, 200));
    free(path);
    json_t *o = session_run(harness_eng, id, "echo back");
    assert_string_equal(jstr(o, "content"), "back");
    json_decref(o);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- links planted in the host dirs a container writes ---- */

static void sh_ok(const char *cmd)
{
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    struct proc_result r;
    proc_run(argv, NULL, 60000, &r);
    if (r.status != 0)
        fprintf(stderr, "`%s` → %d: %s\n", cmd, r.status, r.err);
    assert_int_equal(r.status, 0);
    proc_result_free(&r);
}

static char *host_dir(const char *what)
{
    char *d = strdupf("/tmp/paddock-%s-XXXXXX", what);
    assert_non_null(mkdtemp(d));
    assert_int_equal(chmod(d, 0755), 0);
    return d;
}

static void assert_victim_intact(const char *victim)
{
    char *p = strdupf("%s/keep", victim), *q = strdupf("%s/sub/keep", victim);
    assert_true(path_exists(p));
    assert_true(path_exists(q));
    free(p);
    free(q);
}

/* No change listed below a planted link: the walk did not enter it. */
static void assert_changes_stop_at(const char *id, const char *link)
{
    char *path = strdupf("/v1/sessions/%s/changes", id);
    json_t *c = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    size_t i, n = strlen(link);
    json_t *e;
    bool seen = false;
    json_array_foreach(json_object_get(c, "changes"), i, e)
    {
        const char *p = jstr(e, "path");
        if (strcmp(p, link) == 0)
            seen = true;
        if (strncmp(p, link, n) == 0 && p[n] == '/')
            fprintf(stderr, "the changes walk followed %s: %s\n", link, p);
        assert_false(strncmp(p, link, n) == 0 && p[n] == '/');
    }
    assert_true(seen);
    json_decref(c);
}

/* A loopback dumb-HTTP git server (git_http_server.py) for an engine-made workspace. */
static pid_t git_server_start(const char *root, const char *report, const char *token, int *port)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    char *script = strdupf("%s/tests/integration/git_http_server.py", getenv("PADDOCK_SRC"));
    char *tok = strdupf("GIT_TEST_TOKEN=%s", token);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 1);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        putenv(tok);
        execlp("python3", "python3", script, root, report, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char line[32] = "";
    size_t n = 0;
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    while (n < sizeof(line) - 1 && poll(&pf, 1, 10000) == 1) {
        if (read(p[0], line + n, 1) <= 0 || line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    close(p[0]);
    free(script);
    free(tok);
    *port = atoi(line);
    assert_true(*port > 0);
    return pid;
}

/* Links to the victim, planted in the workspace (as its owner, agent or root: root in the
 * sandbox has no DAC_OVERRIDE) and in the socket dir (as root). */
static void plant_links(const char *cid, const char *victim, const char *ws_user)
{
    char *cmd = strdupf("set -e; v=%s\n"
                        "ln -s $v /workspace/ln-dir; ln -s $v/keep /workspace/ln-file\n"
                        "mkdir -p /workspace/a/b; ln -s $v /workspace/a/b/ln\n",
                        victim);
    assert_int_equal(exec_as(cid, ws_user, cmd), 0);
    free(cmd);
    cmd = strdupf("set -e; v=%s\n"
                  "ln -s $v /run/paddock/ln-dir; ln -s $v/keep /run/paddock/ln-file\n"
                  "mkdir /run/paddock/d; ln -s $v /run/paddock/d/ln\n",
                  victim);
    assert_int_equal(root_exec(cid, cmd), 0);
    free(cmd);
}

static void test_links_in_writable_host_dirs(void **state)
{
    char *victim = host_dir("victim");
    char *cmd =
        strdupf("mkdir %s/sub && echo k > %s/keep && echo k > %s/sub/keep", victim, victim, victim);
    sh_ok(cmd);
    free(cmd);

    /* An overlay workspace: the links land in the engine's upper dir. */
    char *src = host_dir("src");
    char *body = strdupf("{\"workspace\": {\"source\": \"%s\", \"mode\": \"overlay\"}}", src);
    json_t *s = session_new(harness_eng, body);
    free(body);
    const char *id = jstr(s, "id"), *cid = jstr(s, "container_id");
    plant_links(cid, victim, "0");
    assert_changes_stop_at(id, "/workspace/ln-dir");
    assert_changes_stop_at(id, "/workspace/a/b/ln");
    char *work = strdupf("%s/work/%s", harness_eng->state_dir, id);
    char *run = strdupf("%s/run/%s", harness_eng->state_dir, id);
    assert_true(path_exists(work));
    session_delete(harness_eng, id);
    assert_false(path_exists(work));
    assert_false(path_exists(run));
    assert_victim_intact(victim);
    free(work);
    free(run);
    json_decref(s);

    /* A bind-mounted host dir: the changes scan walks it on the host. */
    char *ws = host_dir("ws");
    body = strdupf("{\"workspace\": \"%s\"}", ws);
    s = session_new(harness_eng, body);
    free(body);
    id = jstr(s, "id");
    cid = jstr(s, "container_id");
    plant_links(cid, victim, "0");
    assert_changes_stop_at(id, "/workspace/ln-dir");
    session_delete(harness_eng, id);
    assert_victim_intact(victim);
    json_decref(s);

    /* An engine-made workspace (a git clone in <state>/work/<id>/workspace). */
    char *git = host_dir("git");
    cmd = strdupf("cd %s && mkdir src srv && cd src && git init -q -b main && echo hi > README && "
                  "git add README && git -c user.name=t -c user.email=t@paddock.invalid commit "
                  "-qm one && git clone -q --bare . ../srv/repo.git && cd ../srv/repo.git && "
                  "git update-server-info",
                  git);
    sh_ok(cmd);
    free(cmd);
    char *root = strdupf("%s/srv", git), *report = strdupf("%s/report.txt", git);
    int port;
    pid_t gpid = git_server_start(root, report, "pdk-channel-token", &port);
    body = strdupf("{\"git\": {\"url\": \"http://127.0.0.1:%d/repo.git\", \"token\": "
                   "\"pdk-channel-token\"}}",
                   port);
    s = session_new(harness_eng, body);
    free(body);
    kill(gpid, SIGTERM);
    waitpid(gpid, NULL, 0);
    id = jstr(s, "id");
    cid = jstr(s, "container_id");
    plant_links(cid, victim, "1000");
    assert_changes_stop_at(id, "/workspace/ln-dir");
    assert_changes_stop_at(id, "/workspace/a/b/ln");
    work = strdupf("%s/work/%s", harness_eng->state_dir, id);
    assert_true(path_exists(work));
    session_delete(harness_eng, id);
    assert_false(path_exists(work));
    assert_victim_intact(victim);
    free(work);
    free(root);
    free(report);
    json_decref(s);

    cmd = strdupf("rm -rf %s %s %s %s", victim, src, ws, git);
    sh_ok(cmd);
    free(cmd);
    free(victim);
    free(src);
    free(ws);
    free(git);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symlink_to_a_host_socket),
        cmocka_unit_test(test_fifo_and_regular_file),
        cmocka_unit_test(test_socket_of_another_process_in_the_sandbox),
        cmocka_unit_test(test_socket_served_from_outside_the_container),
        cmocka_unit_test(test_symlink_to_another_sessions_executor),
        cmocka_unit_test(test_stop_resume_recovers),
        cmocka_unit_test(test_links_in_writable_host_dirs),
    };
    int failed = cmocka_run_group_tests_name("channel", tests, harness_group_setup_unsupervised,
                                             harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
