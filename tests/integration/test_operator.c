/* Weaker isolation is the operator's call (docs/security.md).
 * - The agents' channel (the engine's --socket) asking for network host or bridge, a
 *   read-write host directory, published ports, GPUs, another runtime or a terminal gets 403
 *   naming the [security] setting, and nothing is created; the operator's channel
 *   (<state>/operator.sock) creates the same session and opens a root terminal.
 * - The agents' channel cannot approve, reject or add a rule: 403, and the action still waits.
 * - With [security] "approve", the create and the root terminal wait in the approval queue as
 *   actions of kind create and terminal, showing what is asked; the operator decides.
 * - A terminal is an action in the history: who opened it, as which user, its transcript. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- terminals: the HTTP upgrade by hand ---- */

struct term_reply {
    int status;
    char action_id[32];
    char body[8192]; /* the error body, or the terminal's output until the engine closed it */
};

/* POST .../terminal QUERY on sock; reads the reply head, then (a 101) the output until the
 * engine ends the connection (≤ 30 s) or (another status) the error body. */
static void term_request(const char *sock, const char *sid, const char *query,
                         struct term_reply *out)
{
    memset(out, 0, sizeof(*out));
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "POST /v1/sessions/%s/terminal%s HTTP/1.1\r\nHost: x\r\nConnection: "
                     "Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n",
                     sid, query);
    assert_int_equal(write(s, req, (size_t)n), n);
    shutdown(s, SHUT_WR); /* ?tty=0: the command's stdin ends at once */
    char buf[16384];
    size_t len = 0;
    double t0 = now_ms();
    while (len < sizeof(buf) - 1 && now_ms() - t0 < 30000) {
        struct pollfd p = {.fd = s, .events = POLLIN};
        if (poll(&p, 1, 500) <= 0)
            continue;
        ssize_t r = read(s, buf + len, sizeof(buf) - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(s);
    sscanf(buf, "HTTP/1.1 %d", &out->status);
    const char *h = strcasestr(buf, "X-Paddock-Action: ");
    if (h)
        sscanf(h + 18, "%31[0-9]", out->action_id);
    const char *end = strstr(buf, "\r\n\r\n");
    if (end)
        snprintf(out->body, sizeof(out->body), "%s", end + 4);
}

/* ---- a request that blocks (until the operator decides), on a thread ---- */

struct blocked {
    pthread_t t;
    char *sock, *path, *body, *sid; /* body NULL: a terminal request (path is its query) */
    struct reply r;
    struct term_reply term;
};

static void *blocked_main(void *ud)
{
    struct blocked *b = ud;
    if (b->body)
        http_unix(b->sock, "POST", b->path, b->body, -1, 120000, &b->r);
    else
        term_request(b->sock, b->sid, b->path, &b->term);
    return NULL;
}

static struct blocked *blocked_start(const char *sock, const char *path, const char *body,
                                     const char *sid)
{
    struct blocked *b = calloc(1, sizeof(*b));
    assert_non_null(b);
    b->sock = strdup(sock);
    b->path = strdup(path);
    b->body = body ? strdup(body) : NULL;
    b->sid = sid ? strdup(sid) : NULL;
    assert_int_equal(pthread_create(&b->t, NULL, blocked_main, b), 0);
    return b;
}

static void blocked_free(struct blocked *b)
{
    reply_free(&b->r);
    free(b->sock);
    free(b->path);
    free(b->body);
    free(b->sid);
    free(b);
}

/* ---- helpers ---- */

static char *tmp_dir(void)
{
    char tmpl[] = "/tmp/paddock-op-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    chmod(tmpl, 0777);
    return strdup(tmpl);
}

static void expect_forbidden(const struct reply *r, const char *setting)
{
    if (r->status != 403 || !r->body || !strstr(r->body, setting))
        fail_msg("want 403 naming %s, got %ld %s", setting, r->status, r->body ? r->body : "");
    assert_string_equal(jstr(r->json, "error.code"), "forbidden");
}

/* The first pending approval of that kind (the caller's), polled ≤ 30 s on the operator's
 * channel. */
static json_t *wait_approval(struct engine_proc *e, const char *kind)
{
    double t0 = now_ms();
    while (now_ms() - t0 < 30000) {
        json_t *list = api_json(e, "GET", "/v1/approvals", NULL, 200);
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(list, "approvals"), i, a)
        {
            if (strcmp(jstr(a, "kind") ? jstr(a, "kind") : "", kind) == 0) {
                json_incref(a);
                json_decref(list);
                return a;
            }
        }
        json_decref(list);
        sleep_ms(50);
    }
    fail_msg("no %s approval appeared within 30 s", kind);
    return NULL;
}

/* The action (full, the caller's) once it is final (≤ 15 s). */
static json_t *action_final(struct engine_proc *e, const char *id)
{
    char *path = strdupf("/v1/actions/%s?wait=15", id);
    json_t *a = api_json(e, "GET", path, NULL, 200);
    free(path);
    return a;
}

/* A config file for e setting [security] to text; PADDOCK_CONFIG points at it. Returns that
 * "PADDOCK_CONFIG=..." (malloc'd), for the caller to free once e is gone. */
static char *engine_security(struct engine_proc *e, const char *text)
{
    char *path = strdupf("%s/config.toml", e->state_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "[security]\n%s", text);
    fclose(f);
    char *env = strdupf("PADDOCK_CONFIG=%s", path);
    e->extra_env[0] = env;
    free(path);
    return env;
}

/* ---- the tests ---- */

/* Every weaker option, asked on the agents' channel with the default config: 403 naming its
 * setting, and no session made. */
static void test_agent_refused(void **state)
{
    struct engine_proc *e = harness_eng;
    char *dir = tmp_dir();
    struct {
        char *body;
        const char *setting;
    } cases[] = {
        {strdup("{\"network\": \"host\"}"), "network_host"},
        {strdup("{\"network\": \"bridge\"}"), "network_bridge"},
        {strdupf("{\"volumes\": [{\"source\": \"%s\", \"target\": \"/data\"}]}", dir),
         "host_volumes"},
        {strdupf("{\"workspace\": \"%s\"}", dir), "host_volumes"},
        {strdup("{\"gpus\": 1}"), "gpus"},
        {strdup("{\"runtime\": \"runc\"}"), "runtime"},
        {strdup("{\"setup\": [\"curl http://169.254.169.254/\"]}"), "setup"},
    };
    json_t *before = api_json(e, "GET", "/v1/sessions?all=1", NULL, 200);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct reply r;
        api_agent(e, "POST", "/v1/sessions", cases[i].body, &r);
        expect_forbidden(&r, cases[i].setting);
        reply_free(&r);
        free(cases[i].body);
    }
    json_t *after = api_json(e, "GET", "/v1/sessions?all=1", NULL, 200);
    assert_int_equal(json_array_size(json_object_get(before, "sessions")),
                     json_array_size(json_object_get(after, "sessions")));
    json_decref(before);
    json_decref(after);
    /* what the engine lets agents have is in GET /v1/info */
    json_t *info = api_json(e, "GET", "/v1/info", NULL, 200);
    assert_string_equal(jstr(info, "security.network_host"), "refuse");
    assert_string_equal(jstr(info, "channel"), "operator");
    json_decref(info);
    rmdir(dir);
    free(dir);
}

/* The operator's channel creates a session with the host's network and opens a root
 * terminal; the terminal is an action with who, as whom and its transcript. The agents'
 * channel gets no terminal into it. */
static void test_operator_can(void **state)
{
    struct engine_proc *e = harness_eng;
    json_t *s = session_new(e, "{\"network\": \"host\"}");
    const char *sid = jstr(s, "id");
    assert_string_equal(jstr(s, "options.network"), "host");

    struct term_reply t;
    term_request(e->socket, sid, "?user=root&tty=0&cmd=id%20-u", &t);
    if (t.status != 403 || !strstr(t.body, "[security] root_terminal"))
        fail_msg("agent root terminal: %d %s", t.status, t.body);
    term_request(e->socket, sid, "?tty=0&cmd=id%20-u", &t);
    if (t.status != 403 || !strstr(t.body, "[security] terminal"))
        fail_msg("agent terminal: %d %s", t.status, t.body);

    term_request(e->op_socket, sid, "?user=root&tty=0&cmd=echo%20op-$((6*7));%20id%20-u", &t);
    assert_int_equal(t.status, 101);
    assert_non_null(strstr(t.body, "op-42"));
    assert_true(t.action_id[0]);
    json_t *a = action_final(e, t.action_id);
    assert_string_equal(jstr(a, "kind"), "terminal");
    assert_string_equal(jstr(a, "state"), "done");
    assert_string_equal(jstr(a, "session_id"), sid);
    assert_string_equal(jstr(a, "args.args.user"), "root");
    assert_string_equal(jstr(a, "args.args.channel"), "operator");
    assert_string_equal(jstr(a, "decided_by"), "operator");
    const char *said = jstr(a, "observation.content");
    assert_non_null(said);
    assert_non_null(strstr(said, "op-42\n0\n")); /* the transcript: the output, as root */
    assert_int_equal(json_integer_value(jpath(a, "observation.extras.exit_code")), 0);
    json_decref(a);
    /* paddock show prints the transcript through the sanitizer: the sandbox's escapes (a
     * window title here) never reach the operator's terminal */
    term_request(e->op_socket, sid,
                 "?tty=0&cmd=printf%20%27%5C033%5D0%3Bpwned%5C007title-set%5Cn%27", &t);
    assert_int_equal(t.status, 101);
    assert_non_null(strstr(t.body, "\033]0;pwned\007title-set"));
    json_decref(action_final(e, t.action_id));
    char *argv[] = {(char *)harness_bin(), "--state-dir", e->state_dir, "show", t.action_id, NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 30000, &pr);
    if (pr.status != 0 || !strstr(pr.out, "title-set") || strchr(pr.out, '\033'))
        fail_msg("paddock show %s: %d %s %s", t.action_id, pr.status, pr.out, pr.err);
    proc_result_free(&pr);
    /* and it is in the session's history */
    char *path = strdupf("/v1/sessions/%s/actions", sid);
    json_t *list = api_json(e, "GET", path, NULL, 200);
    assert_string_equal(jstr(json_array_get(json_object_get(list, "actions"), 0), "kind"),
                        "terminal");
    json_decref(list);
    free(path);
    session_delete(e, sid);
    json_decref(s);
}

/* The operator's terminal, open: its id is in the session's history, which the agent reads,
 * but the agent cannot resize it (the operator can). */
static void test_agent_cannot_resize_operator_terminal(void **state)
{
    (void)state;
    struct engine_proc *e = harness_eng;
    json_t *sess = session_new(e, NULL);
    const char *sid = jstr(sess, "id");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", e->op_socket);
    assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char req[512];
    int n = snprintf(req, sizeof(req),
                     "POST /v1/sessions/%s/terminal?user=root&cmd=sleep%%2030 HTTP/1.1\r\nHost: "
                     "x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n",
                     sid);
    assert_int_equal(write(s, req, (size_t)n), n);
    char head[4096] = "";
    size_t len = 0;
    for (double t0 = now_ms(); !strstr(head, "\r\n\r\n") && now_ms() - t0 < 30000;) {
        struct pollfd p = {.fd = s, .events = POLLIN};
        if (poll(&p, 1, 500) <= 0)
            continue;
        ssize_t r = read(s, head + len, sizeof(head) - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        head[len] = '\0';
    }
    assert_non_null(strstr(head, "HTTP/1.1 101"));
    char action[32] = "";
    const char *h = strcasestr(head, "X-Paddock-Action: ");
    assert_non_null(h);
    sscanf(h + 18, "%31[0-9]", action);
    /* what the agent can read: the action, and the terminal's id in it */
    char *apath = strdupf("/v1/actions/%s", action);
    struct reply r;
    api_agent(e, "GET", apath, NULL, &r);
    assert_int_equal(r.status, 200);
    const char *t = jstr(r.json, "args.args.terminal");
    if (!t)
        fail_msg("no terminal id in the action: %s", r.body);
    char *tid = strdup(t);
    reply_free(&r);
    char *rpath = strdupf("/v1/sessions/%s/terminal/resize", sid);
    char *body = strdupf("{\"terminal\": \"%s\", \"rows\": 1, \"cols\": 1}", tid);
    api_agent(e, "POST", rpath, body, &r);
    if (r.status != 403)
        fail_msg("the agent resized the operator's terminal: %ld %s", r.status, r.body);
    reply_free(&r);
    api(e, "POST", rpath, body, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    close(s);
    free(body);
    free(rpath);
    free(tid);
    free(apath);
    session_delete(e, sid);
    json_decref(sess);
}

/* An agent cannot decide its own action, nor add a rule, run gc, resize the pool or read the
 * workspace as the operator: 403, and the action still waits; the operator's channel decides
 * it. */
static void test_agent_cannot_approve(void **state)
{
    struct engine_proc *e = harness_eng;
    json_t *s = session_new(e, "{\"confirm\": \"always\"}");
    const char *sid = jstr(s, "id");
    char *path = strdupf("/v1/sessions/%s/execute_action?wait=0", sid);
    struct reply r;
    api_agent(
        e, "POST", path,
        "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"echo approved-$((2*21))\"}}}",
        &r);
    assert_int_equal(r.status, 202);
    json_int_t id = json_integer_value(json_object_get(r.json, "action_id"));
    reply_free(&r);
    free(path);

    const char *verbs[] = {"approve", "reject"};
    for (size_t i = 0; i < 2; i++) {
        path = strdupf("/v1/actions/%lld/%s", (long long)id, verbs[i]);
        api_agent(e, "POST", path, "{\"by\": \"operator\"}", &r);
        expect_forbidden(&r, "operator.sock");
        reply_free(&r);
        free(path);
    }
    path = strdupf("/v1/sessions/%s/rules", sid);
    api_agent(e, "POST", path, "{\"pattern\": \"*\", \"decision\": \"allow\"}", &r);
    expect_forbidden(&r, "operator.sock");
    reply_free(&r);
    free(path);
    /* the engine's own settings and the operator's reads are not the agent's either */
    struct {
        const char *method;
        char *path;
        const char *body;
    } others[] = {
        {"POST", strdup("/v1/gc"), "{\"dry_run\": true}"},
        {"POST", strdup("/v1/pool"), "{\"size\": 3}"},
        {"GET", strdupf("/v1/sessions/%s/files", sid), NULL},
        {"GET", strdupf("/v1/sessions/%s/files/content?path=/etc/passwd", sid), NULL},
    };
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        api_agent(e, others[i].method, others[i].path, others[i].body, &r);
        expect_forbidden(&r, "operator.sock");
        reply_free(&r);
        free(others[i].path);
    }
    path = strdupf("/v1/actions/%lld", (long long)id);
    json_t *a = api_json(e, "GET", path, NULL, 200);
    assert_string_equal(jstr(a, "state"), "pending");
    json_decref(a);
    free(path);

    path = strdupf("/v1/actions/%lld/approve", (long long)id);
    json_decref(api_json(e, "POST", path, "{}", 200));
    free(path);
    char ids[32];
    snprintf(ids, sizeof(ids), "%lld", (long long)id);
    a = action_final(e, ids);
    assert_string_equal(jstr(a, "state"), "done");
    assert_non_null(strstr(jstr(a, "observation.content"), "approved-42"));
    json_decref(a);
    session_delete(e, sid);
    json_decref(s);
}

/* [security] "approve": the agent's create and root terminal wait for the operator as
 * actions of kind create and terminal that say what is asked; "allow" lets a terminal open,
 * recorded as the agent's. */
static void test_approve_mode(void **state)
{
    struct engine_proc *e = engine_new();
    char *env = engine_security(e, "network_bridge = \"approve\"\nroot_terminal = \"approve\"\n"
                                   "terminal = \"allow\"\n");
    assert_int_equal(engine_start(e), 0);

    /* the create waits; the operator sees what it asks and approves */
    struct blocked *b = blocked_start(e->socket, "/v1/sessions", "{\"network\": \"bridge\"}", NULL);
    json_t *ap = wait_approval(e, "create");
    assert_non_null(strstr(jstr(ap, "summary"), "network bridge"));
    assert_string_equal(jstr(ap, "risk"), "high");
    char *path = strdupf("/v1/actions/%lld/approve",
                         (long long)json_integer_value(json_object_get(ap, "id")));
    json_decref(api_json(e, "POST", path, "{\"by\": \"tester\"}", 200));
    free(path);
    json_decref(ap);
    pthread_join(b->t, NULL);
    if (b->r.status != 201)
        fail_msg("approved create: %ld %s", b->r.status, b->r.body ? b->r.body : b->r.err);
    char *sid = strdup(jstr(b->r.json, "id"));
    engine_track(e, sid);
    assert_string_equal(jstr(b->r.json, "state"), "ready");
    assert_string_equal(jstr(b->r.json, "options.network"), "bridge");
    blocked_free(b);

    /* a create the operator rejects: 403 saying who and why, the session left in error */
    b = blocked_start(e->socket, "/v1/sessions", "{\"network\": \"bridge\", \"name\": \"no\"}",
                      NULL);
    ap = wait_approval(e, "create");
    path = strdupf("/v1/actions/%lld/reject",
                   (long long)json_integer_value(json_object_get(ap, "id")));
    json_decref(api_json(e, "POST", path, "{\"by\": \"bob\", \"reason\": \"too open\"}", 200));
    free(path);
    json_decref(ap);
    pthread_join(b->t, NULL);
    if (b->r.status != 403 || !strstr(b->r.body, "rejected by bob: too open"))
        fail_msg("rejected create: %ld %s", b->r.status, b->r.body ? b->r.body : b->r.err);
    path = strdupf("/v1/sessions/%s", jstr(b->r.json, "error.session"));
    json_t *gone = api_json(e, "GET", path, NULL, 200);
    assert_string_equal(jstr(gone, "state"), "error");
    json_decref(gone);
    free(path);
    blocked_free(b);

    /* still refused: what the config did not open */
    struct reply r;
    api_agent(e, "POST", "/v1/sessions", "{\"network\": \"host\"}", &r);
    expect_forbidden(&r, "network_host");
    reply_free(&r);

    /* the root terminal waits; the operator rejects: the agent hears 403 */
    b = blocked_start(e->socket, "?user=root&tty=0&cmd=id", NULL, sid);
    ap = wait_approval(e, "terminal");
    assert_string_equal(jstr(ap, "summary"), "as root: id");
    path = strdupf("/v1/actions/%lld/reject",
                   (long long)json_integer_value(json_object_get(ap, "id")));
    json_decref(api_json(e, "POST", path, "{\"reason\": \"no root for agents\"}", 200));
    free(path);
    json_decref(ap);
    pthread_join(b->t, NULL);
    if (b->term.status != 403 || !strstr(b->term.body, "no root for agents"))
        fail_msg("rejected root terminal: %d %s", b->term.status, b->term.body);
    blocked_free(b);

    /* a root terminal approved after its client went away is not opened */
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", e->socket);
    assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char *req = strdupf("POST /v1/sessions/%s/terminal?user=root HTTP/1.1\r\nHost: x\r\n"
                        "Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n",
                        sid);
    assert_int_equal(write(c, req, strlen(req)), (ssize_t)strlen(req));
    free(req);
    ap = wait_approval(e, "terminal");
    close(c);
    char gone_id[32];
    snprintf(gone_id, sizeof(gone_id), "%lld",
             (long long)json_integer_value(json_object_get(ap, "id")));
    json_decref(ap);
    path = strdupf("/v1/actions/%s/approve", gone_id);
    json_decref(api_json(e, "POST", path, "{}", 200));
    free(path);
    json_t *g = action_final(e, gone_id);
    assert_string_equal(jstr(g, "state"), "failed");
    assert_non_null(strstr(jstr(g, "error"), "client went away"));
    json_decref(g);

    /* "allow": the agent's terminal opens, recorded as the agent's */
    struct term_reply t;
    term_request(e->socket, sid, "?tty=0&cmd=echo%20agent-$((5*5));%20id%20-u", &t);
    assert_int_equal(t.status, 101);
    assert_non_null(strstr(t.body, "agent-25\n1000\n"));
    json_t *a = action_final(e, t.action_id);
    assert_string_equal(jstr(a, "args.args.channel"), "agent");
    assert_string_equal(jstr(a, "args.args.user"), "agent");
    assert_string_equal(jstr(a, "decided_by"), "config");
    assert_non_null(strstr(jstr(a, "observation.content"), "agent-25"));
    json_decref(a);
    session_delete(e, sid);
    free(sid);
    assert_int_equal(engine_stop(e), 0);
    engine_destroy(e);
    free(env);
}

/* An unknown [security] setting or value stops the engine at start, naming it. */
static void test_bad_setting(void **state)
{
    struct engine_proc *e = engine_new();
    char *config = engine_security(e, "network_host = \"sometimes\"\n");
    char *argv[] = {(char *)harness_bin(), "serve", "--state-dir", e->state_dir, NULL};
    const char *env[] = {config, NULL};
    struct proc_result pr;
    proc_run(argv, env, 30000, &pr);
    assert_int_equal(pr.status, 1);
    assert_non_null(strstr(pr.err, "network_host = \"sometimes\""));
    proc_result_free(&pr);
    engine_destroy(e);
    free(config);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agent_refused),
        cmocka_unit_test(test_operator_can),
        cmocka_unit_test(test_agent_cannot_resize_operator_terminal),
        cmocka_unit_test(test_agent_cannot_approve),
        cmocka_unit_test(test_approve_mode),
        cmocka_unit_test(test_bad_setting),
    };
    int failed =
        cmocka_run_group_tests_name("operator", tests, harness_group_setup, harness_group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
