/* Integration tests of the optional TCP listener (loopback only): the bearer token (generated
 * into <state>/token with mode 0600 and reused, or given), 401 without or with wrong
 * credentials before anything else, the unix socket needing none, the refusal to listen
 * beyond loopback without a token (tested as a refusal only: nothing binds there), bad
 * --listen and --token-file values, and events reaching subscribers of both sockets. */
#include "harness.h"
#include "netclient.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct engine_proc *cur;

static int teardown(void **state)
{
    if (cur) {
        int code = engine_stop(cur);
        if (code != 0) {
            fprintf(stderr, "FAIL: the engine exited with status %d on SIGTERM\n", code);
            harness_teardown_failed = 1;
        }
        engine_destroy(cur);
        cur = NULL;
    }
    return 0;
}

/* The listener's port from GET /v1/info on the unix socket. */
static int listen_port(struct engine_proc *e)
{
    struct reply r;
    api(e, "GET", "/v1/info", NULL, &r);
    assert_int_equal(r.status, 200);
    const char *addr = jstr(r.json, "listen.address");
    assert_non_null(addr);
    assert_int_equal(strncmp(addr, "127.0.0.1:", 10), 0);
    int port = atoi(addr + 10);
    assert_true(port > 0 && port < 65536);
    reply_free(&r);
    return port;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[512] = "";
    if (!fgets(buf, sizeof(buf), f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return strdup(buf);
}

/* A request over TCP with up to two headers ("Name: value", NULL for none). */
static void tcp(int port, const char *method, const char *path, const char *body, const char *h1,
                const char *h2, struct net_reply *out)
{
    char *url = strdupf("http://127.0.0.1:%d%s", port, path);
    const char *headers[] = {h1, h2, NULL};
    if (!h1)
        headers[0] = h2, headers[1] = NULL;
    struct net_req q = {.method = method, .url = url, .body = body, .headers = headers};
    net_do(&q, out);
    free(url);
    if (out->r.status < 0)
        fail_msg("%s %s over TCP: %s", method, path, out->r.err);
}

static void expect_401(struct net_reply *r)
{
    if (r->r.status != 401)
        fprintf(stderr, "want 401, got %ld %s\n", r->r.status, r->r.body);
    assert_int_equal(r->r.status, 401);
    assert_string_equal(jstr(r->r.json, "error.code"), "unauthorized");
    assert_non_null(jstr(r->r.json, "error.message"));
    net_reply_free(r);
}

static const char *bearer(const char *token)
{
    static char h[256];
    snprintf(h, sizeof(h), "Authorization: Bearer %s", token);
    return h;
}

/* ---- tests ---- */

static void test_generated_token(void **state)
{
    cur = engine_new();
    cur->extra_env[0] = "PADDOCK_LISTEN=127.0.0.1:0";
    assert_int_equal(engine_start(cur), 0);
    int port = listen_port(cur);

    /* <state>/token: 32 random bytes as hex, the engine user's alone. */
    char *tpath = strdupf("%s/token", cur->state_dir);
    struct stat st;
    assert_int_equal(lstat(tpath, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    char *token = read_text(tpath);
    assert_non_null(token);
    assert_int_equal(strlen(token), 64);
    for (const char *p = token; *p; p++)
        assert_true(isxdigit((unsigned char)*p));
    struct reply info;
    api(cur, "GET", "/v1/info", NULL, &info);
    assert_string_equal(jstr(info.json, "listen.token_file"), tpath);
    reply_free(&info);

    struct net_reply r;
    tcp(port, "GET", "/v1/info", NULL, NULL, NULL, &r);
    assert_non_null(strstr(r.r.body, "Bearer"));
    expect_401(&r);
    tcp(port, "GET", "/v1/info", NULL, bearer("0000000000000000000000000000000000000000"), NULL,
        &r);
    expect_401(&r);
    /* The right token with one character more or less is wrong too. */
    char *longer = strdupf("%sx", token);
    tcp(port, "GET", "/v1/info", NULL, bearer(longer), NULL, &r);
    expect_401(&r);
    free(longer);
    char *shorter = strndup(token, 63);
    tcp(port, "GET", "/v1/info", NULL, bearer(shorter), NULL, &r);
    expect_401(&r);
    free(shorter);
    /* A token in the wrong header does not count on /v1. */
    tcp(port, "GET", "/v1/info", NULL, net_header("X-Session-API-Key", token), NULL, &r);
    expect_401(&r);
    tcp(port, "GET", "/v1/info", NULL, bearer(token), NULL, &r);
    assert_int_equal(r.r.status, 200);
    assert_string_equal(jstr(r.r.json, "api"), "v1");
    net_reply_free(&r);
    /* A stranger learns nothing about the routes: 401 before 404 or 405. */
    tcp(port, "GET", "/no/such/path", NULL, NULL, NULL, &r);
    expect_401(&r);
    tcp(port, "DELETE", "/v1/info", NULL, NULL, NULL, &r);
    expect_401(&r);
    tcp(port, "GET", "/no/such/path", NULL, bearer(token), NULL, &r);
    assert_int_equal(r.r.status, 404);
    net_reply_free(&r);
    /* No body is read before the credentials: a client that waits for "100 Continue" gets
     * the 401 instead, and never sends its 8 MiB. */
    char *big = malloc(8 * 1024 * 1024 + 1);
    memset(big, 'x', 8 * 1024 * 1024);
    big[8 * 1024 * 1024] = '\0';
    tcp(port, "POST", "/v1/sessions", big, "Expect: 100-continue", NULL, &r);
    expect_401(&r);
    free(big);
    /* The remote-runtime API takes X-API-Key (the token when no key is configured). */
    tcp(port, "GET", "/list", NULL, NULL, NULL, &r);
    expect_401(&r);
    tcp(port, "GET", "/list", NULL, net_header("X-API-Key", "not-the-key-at-all"), NULL, &r);
    expect_401(&r);
    tcp(port, "GET", "/list", NULL, net_header("X-API-Key", token), NULL, &r);
    assert_int_equal(r.r.status, 200);
    net_reply_free(&r);
    /* ... but not on the engine's own API. */
    tcp(port, "GET", "/v1/sessions", NULL, net_header("X-API-Key", token), NULL, &r);
    expect_401(&r);

    /* The unix socket needs nothing. */
    struct reply u;
    api(cur, "GET", "/v1/sessions", NULL, &u);
    assert_int_equal(u.status, 200);
    reply_free(&u);
    api(cur, "GET", "/list", NULL, &u);
    assert_int_equal(u.status, 200);
    reply_free(&u);

    /* A restart keeps the token (clients need not read it again), still mode 0600. */
    assert_int_equal(engine_stop(cur), 0);
    assert_int_equal(engine_start(cur), 0);
    port = listen_port(cur);
    char *again = read_text(tpath);
    assert_string_equal(again, token);
    assert_int_equal(lstat(tpath, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    tcp(port, "GET", "/v1/info", NULL, bearer(token), NULL, &r);
    assert_int_equal(r.r.status, 200);
    net_reply_free(&r);
    free(again);
    free(token);
    free(tpath);
}

/* A token file others could read is replaced by a new token. */
static void test_token_file_replaced_when_open(void **state)
{
    cur = engine_new();
    char *tpath = strdupf("%s/token", cur->state_dir);
    int fd = open(tpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    const char *old = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
    assert_int_equal(write(fd, old, strlen(old)), (ssize_t)strlen(old));
    close(fd);
    chmod(tpath, 0644);
    cur->extra_env[0] = "PADDOCK_LISTEN=localhost:0";
    assert_int_equal(engine_start(cur), 0);
    int port = listen_port(cur);
    char *token = read_text(tpath);
    assert_int_equal(strlen(token), 64);
    assert_true(strncmp(token, old, 64) != 0);
    struct stat st;
    assert_int_equal(stat(tpath, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    struct net_reply r;
    tcp(port, "GET", "/v1/info", NULL,
        bearer("0123456789abcdef0123456789abcdef0123456789abcdef"
               "0123456789abcdef"),
        NULL, &r);
    expect_401(&r);
    free(token);
    free(tpath);
}

static void test_given_token(void **state)
{
    cur = engine_new();
    cur->extra_env[0] = "PADDOCK_LISTEN=127.0.0.1:0";
    cur->extra_env[1] = "PADDOCK_TOKEN=a-token-the-operator-chose-42";
    assert_int_equal(engine_start(cur), 0);
    int port = listen_port(cur);
    char *tpath = strdupf("%s/token", cur->state_dir);
    assert_false(path_exists(tpath));
    free(tpath);
    struct reply info;
    api(cur, "GET", "/v1/info", NULL, &info);
    assert_true(json_is_null(jpath(info.json, "listen.token_file")));
    reply_free(&info);
    struct net_reply r;
    tcp(port, "GET", "/v1/info", NULL, bearer("a-token-the-operator-chose-4"), NULL, &r);
    expect_401(&r);
    tcp(port, "GET", "/v1/info", NULL, bearer("a-token-the-operator-chose-42"), NULL, &r);
    assert_int_equal(r.r.status, 200);
    net_reply_free(&r);
}

/* paddock serve with these arguments (after --state-dir and --socket of a fresh dir) and env;
 * it must exit at once. */
static void serve_refused(const char *const *args, const char *const *env, const char *want)
{
    struct engine_proc *e = engine_new();
    char *argv[16] = {(char *)harness_bin(), "serve",    "--state-dir",
                      e->state_dir,          "--socket", e->socket};
    int n = 6;
    for (int i = 0; args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    struct proc_result pr;
    proc_run(argv, env, 20000, &pr);
    if (pr.status != 1 || !strstr(pr.err, want))
        fprintf(stderr, "status %d, stderr: %s\n(want: %s)\n", pr.status, pr.err, want);
    assert_int_equal(pr.status, 1);
    assert_non_null(strstr(pr.err, want));
    /* It never served: no socket, no token file left behind. */
    assert_false(path_exists(e->socket));
    char *tpath = strdupf("%s/token", e->state_dir);
    assert_false(path_exists(tpath));
    free(tpath);
    proc_result_free(&pr);
    engine_destroy(e);
}

static void test_refusals(void **state)
{
    /* Beyond loopback without TLS: refused, token or not (nothing binds 0.0.0.0). */
    const char *plain[] = {"--listen", "0.0.0.0:8080", NULL};
    serve_refused(plain, NULL,
                  "refusing to listen on 0.0.0.0:8080 without TLS: its token would cross the "
                  "network in clear; pass --tls-cert and --tls-key (or --insecure");
    const char *env_tok[] = {"PADDOCK_TOKEN=a-token-of-enough-length", NULL};
    serve_refused(plain, env_tok, "refusing to listen on 0.0.0.0:8080 without TLS");
    /* Half a TLS configuration, and a client CA without TLS. */
    const char *half[] = {"--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent/c", NULL};
    serve_refused(half, NULL, "TLS needs both --tls-cert and --tls-key");
    const char *ca_only[] = {"--listen", "127.0.0.1:0", "--tls-client-ca", "/nonexistent/ca", NULL};
    serve_refused(ca_only, NULL, "--tls-client-ca needs TLS");
    const char *no_file[] = {"--listen",  "127.0.0.1:0",    "--tls-cert", "/nonexistent/c",
                             "--tls-key", "/nonexistent/k", NULL};
    serve_refused(no_file, NULL, "cannot read the TLS certificate /nonexistent/c");
    /* With --insecure, beyond loopback without a token: refused. */
    const char *all[] = {"--listen", "0.0.0.0:8080", "--insecure", NULL};
    serve_refused(all, NULL,
                  "refusing to listen on 0.0.0.0:8080 without a token: pass --token-file or "
                  "PADDOCK_TOKEN");
    const char *env_all[] = {"PADDOCK_LISTEN=[::]:8080", NULL};
    const char *insecure[] = {"--insecure", NULL};
    serve_refused(insecure, env_all, "refusing to listen on [::]:8080 without a token");
    const char *bad[] = {"--listen", "nonsense", NULL};
    serve_refused(bad, NULL, "--listen takes HOST:PORT");
    const char *port[] = {"--listen", "127.0.0.1:99999", NULL};
    serve_refused(port, NULL, "the port must be a number from 0 to 65535");
    const char *name[] = {"--listen", "example.invalid:8080", NULL};
    serve_refused(name, NULL, "numeric IPv4 or IPv6 address");
    const char *env_short[] = {"PADDOCK_TOKEN=short", NULL};
    const char *lo[] = {"--listen", "127.0.0.1:0", NULL};
    serve_refused(lo, env_short, "the token must be at least 16 printable characters");

    /* A token file others can read. */
    char tmpl[] = "/tmp/paddock-token-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "a-token-of-enough-length\n", 25), 25);
    close(fd);
    chmod(tmpl, 0644);
    const char *open_file[] = {"--listen", "127.0.0.1:0", "--token-file", tmpl, NULL};
    serve_refused(open_file, NULL, "readable by its owner alone (chmod 600); it is mode 644");
    unlink(tmpl);
    const char *missing[] = {"--listen", "127.0.0.1:0", "--token-file", "/nonexistent/t", NULL};
    serve_refused(missing, NULL, "cannot read the token file /nonexistent/t");
}

/* --token-file with a good file: the engine serves with that token. */
static void test_token_file(void **state)
{
    struct engine_proc *e = engine_new();
    char *tfile = strdupf("%s/given-token", e->state_dir);
    int fd = open(tfile, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "  file-token-0123456789\n", 24), 24);
    close(fd);
    char *log = strdupf("%s/serve.log", e->state_dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (lfd < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0)
            _exit(126);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        setenv("PADDOCK_TEST_LABEL", "1", 1);
        execl(harness_bin(), harness_bin(), "serve", "--state-dir", e->state_dir, "--socket",
              e->socket, "--listen", "127.0.0.1:0", "--token-file", tfile, (char *)NULL);
        _exit(127);
    }
    double deadline = now_ms() + 10000;
    long status = -1;
    while (now_ms() < deadline && status != 200) {
        struct reply r;
        http_unix(e->socket, "GET", "/v1/info", NULL, 0, 1000, &r);
        status = r.status;
        reply_free(&r);
        if (status != 200)
            sleep_ms(20);
    }
    int port = status == 200 ? listen_port(e) : 0;
    struct net_reply r = {0};
    if (port)
        tcp(port, "GET", "/v1/info", NULL, bearer("file-token-0123456789"), NULL, &r);
    long got = r.r.status;
    net_reply_free(&r);
    if (port)
        tcp(port, "GET", "/v1/info", NULL, bearer("  file-token-0123456789"), NULL, &r);
    long padded = r.r.status;
    net_reply_free(&r);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    char *tpath = strdupf("%s/token", e->state_dir);
    bool generated = path_exists(tpath);
    free(tpath);
    free(tfile);
    free(log);
    engine_destroy(e);
    assert_int_equal(status, 200);
    assert_int_equal(got, 200);
    /* Leading spaces are dropped from the header value as from the file: the same token. */
    assert_int_equal(padded, 200);
    assert_false(generated);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Subscribers of either socket hear what happens through the other. */
static void test_events_both(void **state)
{
    cur = engine_new();
    cur->extra_env[0] = "PADDOCK_LISTEN=127.0.0.1:0";
    cur->extra_env[1] = "PADDOCK_TOKEN=events-token-0123456789";
    assert_int_equal(engine_start(cur), 0);
    int port = listen_port(cur);
    struct sse *t = sse_open_tcp(port, "/v1/events", "events-token-0123456789");
    struct sse *u = sse_open(cur->socket, "/v1/events");
    /* Created over TCP... */
    struct net_reply r;
    tcp(port, "POST", "/v1/sessions", "{\"keep_alive\": false}", bearer("events-token-0123456789"),
        NULL, &r);
    assert_int_equal(r.r.status, 201);
    char *id = strdup(jstr(r.r.json, "id"));
    engine_track(cur, id);
    net_reply_free(&r);
    assert_non_null(sse_wait(u, "session", "id", id, "state", "ready", 20000));
    assert_non_null(sse_wait(t, "session", "id", id, "state", "ready", 20000));
    /* ... deleted over the unix socket. */
    session_delete(cur, id);
    assert_non_null(sse_wait(t, "session", "id", id, "state", "deleted", 20000));
    assert_non_null(sse_wait(u, "session", "id", id, "state", "deleted", 20000));
    free(id);
    sse_close(t);
    sse_close(u);
}

/* Every route the table marks as the operator's, asked by an agent on the agents' socket and
 * over TCP with the token (which agents and OpenHands are given): 403 naming the operator's
 * socket, nothing changed; spellings of those paths that a matcher might read otherwise
 * (an encoded '/', a doubled or trailing '/', another method's case) are never a success. */
static void test_operator_routes_closed_to_agents(void **state)
{
    (void)state;
    cur = engine_new();
    cur->extra_env[0] = "PADDOCK_LISTEN=127.0.0.1:0";
    cur->extra_env[1] = "PADDOCK_TOKEN=agent-token-0123456789";
    assert_int_equal(engine_start(cur), 0);
    int port = listen_port(cur);
    static const struct {
        const char *method, *path, *body;
        bool exact; /* the route itself: 403 forbidden; else any refusal */
    } routes[] = {
        {"POST", "/v1/actions/1/approve", "{\"by\": \"operator\"}", true},
        {"POST", "/v1/actions/1/reject", "{}", true},
        {"POST", "/v1/sessions/s1/rules", "{\"pattern\": \"*\", \"decision\": \"allow\"}", true},
        {"POST", "/v1/rules", "{\"pattern\": \"*\", \"decision\": \"allow\"}", true},
        {"PATCH", "/v1/rules/1", "{\"decision\": \"allow\"}", true},
        {"DELETE", "/v1/rules/1", NULL, true},
        {"POST", "/v1/sessions/s1/limits", "{\"disk\": \"1T\"}", true},
        {"POST", "/v1/gc", "{\"dry_run\": true}", true},
        {"POST", "/v1/pool", "{\"size\": 3}", true},
        {"DELETE", "/v1/images/pd_v1", NULL, true},
        {"GET", "/v1/sessions/s1/files", NULL, true},
        {"GET", "/v1/sessions/s1/files/content?path=/etc/shadow", NULL, true},
        {"POST", "/v1/actions/1%2Fapprove", "{}", false},
        {"POST", "/v1/actions/1/approve/", "{}", false},
        {"POST", "//v1/rules", "{\"pattern\": \"*\", \"decision\": \"allow\"}", false},
        {"POST", "/v1//gc", "{\"dry_run\": true}", false},
        {"post", "/v1/gc", "{\"dry_run\": true}", false},
        {"GET", "/v1/sessions/s1%2Ffiles", NULL, false},
    };
    json_t *before = api_json(cur, "GET", "/v1/rules", NULL, 200);
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        for (int via_tcp = 0; via_tcp < 2; via_tcp++) {
            struct net_reply n = {0};
            struct reply u = {0};
            struct reply *r = &u;
            if (via_tcp) {
                tcp(port, routes[i].method, routes[i].path, routes[i].body,
                    bearer("agent-token-0123456789"), NULL, &n);
                r = &n.r;
            } else {
                api_agent(cur, routes[i].method, routes[i].path, routes[i].body, &u);
            }
            bool ok = routes[i].exact ? r->status == 403 && jstr(r->json, "error.message") &&
                                            strstr(jstr(r->json, "error.message"), "operator")
                                      : r->status >= 400;
            if (!ok)
                fail_msg("%s %s %s: %ld %s", via_tcp ? "TCP" : "agents' socket", routes[i].method,
                         routes[i].path, r->status, r->body ? r->body : "");
            if (via_tcp)
                net_reply_free(&n);
            else
                reply_free(&u);
        }
    }
    json_t *after = api_json(cur, "GET", "/v1/rules", NULL, 200);
    assert_true(json_equal(before, after));
    json_decref(before);
    json_decref(after);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_generated_token, teardown),
        cmocka_unit_test_teardown(test_token_file_replaced_when_open, teardown),
        cmocka_unit_test_teardown(test_given_token, teardown),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test_teardown(test_events_both, teardown),
        cmocka_unit_test_teardown(test_operator_routes_closed_to_agents, teardown),
    };
    int failed = cmocka_run_group_tests_name("listen", tests, NULL, NULL);
    return failed || harness_teardown_failed ? 1 : 0;
}
