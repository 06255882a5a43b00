/* "network": "egress" end to end (docs/egress.md): a sandbox with only lo reaches loopback
 * test servers (plain HTTP and TLS through CONNECT, a self-signed certificate made here with
 * openssl) only through the engine's proxy; denied destinations get 403 naming the rule;
 * unknown ones wait in the approval queue and are approved (once, for the session) or
 * rejected or time out; names resolving to loopback are refused; a client ignoring the proxy
 * reaches nothing; the engine SIGKILLed mid-connection keeps the connection's row.
 *
 * Network: only 127.0.0.1 (the servers of tests/integration/egress_servers.py) and the
 * sandbox's own namespace. Allow entries name 127.0.0.1 literally: that is how a loopback
 * server becomes reachable at all. */
#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static struct {
    pid_t pid;
    int in; /* the servers' stdin: they stop when it closes */
    int http, https;
    char dir[64];
    char *cert_b64, *client_b64;
} srv;

static char *b64_file(const char *path)
{
    char *const argv[] = {"/usr/bin/base64", "-w0", (char *)path, NULL};
    struct proc_result r;
    proc_run(argv, NULL, 10000, &r);
    assert_int_equal(r.status, 0);
    char *out = strdup(r.out);
    proc_result_free(&r);
    return out;
}

static int servers_setup(void **state)
{
    if (harness_group_setup_unsupervised(state) < 0)
        return -1;
    snprintf(srv.dir, sizeof(srv.dir), "/tmp/paddock-egress-XXXXXX");
    assert_non_null(mkdtemp(srv.dir));
    char *cert = strdupf("%s/cert.pem", srv.dir), *key = strdupf("%s/key.pem", srv.dir);
    char *const gen[] = {"/usr/bin/openssl",
                         "req",
                         "-x509",
                         "-newkey",
                         "rsa:2048",
                         "-nodes",
                         "-keyout",
                         key,
                         "-out",
                         cert,
                         "-days",
                         "1",
                         "-subj",
                         "/CN=127.0.0.1",
                         "-addext",
                         "subjectAltName=IP:127.0.0.1",
                         NULL};
    struct proc_result r;
    proc_run(gen, NULL, 60000, &r);
    if (r.status != 0)
        fprintf(stderr, "openssl: %s\n", r.err);
    assert_int_equal(r.status, 0);
    proc_result_free(&r);
    char *script = strdupf("%s/tests/integration/egress_servers.py", getenv("PADDOCK_SRC"));
    int out[2], in[2];
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    assert_int_equal(pipe2(in, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(in[0], 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char *log = strdupf("%s/requests.log", srv.dir);
        execlp("python3", "python3", script, cert, key, log, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(in[0]);
    srv.pid = pid;
    srv.in = in[1];
    char line[64] = "";
    size_t n = 0;
    struct pollfd pf = {.fd = out[0], .events = POLLIN};
    while (n < sizeof(line) - 1 && poll(&pf, 1, 20000) == 1) {
        ssize_t k = read(out[0], line + n, 1);
        if (k <= 0 || line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    close(out[0]);
    assert_int_equal(sscanf(line, "%d %d", &srv.http, &srv.https), 2);
    srv.cert_b64 = b64_file(cert);
    char *client = strdupf("%s/tests/integration/egress_client.py", getenv("PADDOCK_SRC"));
    srv.client_b64 = b64_file(client);
    free(client);
    free(script);
    free(cert);
    free(key);
    return 0;
}

static int servers_teardown(void **state)
{
    if (srv.pid > 0) {
        close(srv.in);
        kill(srv.pid, SIGTERM);
        waitpid(srv.pid, NULL, 0);
    }
    char *const rm[] = {"/bin/rm", "-rf", srv.dir, NULL};
    struct proc_result r;
    proc_run(rm, NULL, 10000, &r);
    proc_result_free(&r);
    free(srv.cert_b64);
    free(srv.client_b64);
    return harness_group_teardown(state);
}

/* ---- sandbox helpers ---- */

/* A run action, blocking (the client may wait for the operator in silence). wait0: 202 and the
 * action id; else the observation's content (malloc'd). */
static char *run_body(const char *command)
{
    json_t *b = json_pack("{s:{s:s,s:{s:s,s:b},s:i}}", "action", "action", "run", "args", "command",
                          command, "blocking", 1, "timeout", 120);
    char *s = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return s;
}

static char *run(const char *sid, const char *command)
{
    char *b = run_body(command);
    char *path = strdupf("/v1/sessions/%s/execute_action", sid);
    json_t *obs = api_json(harness_eng, "POST", path, b, 200);
    char *content = strdup(jstr(obs, "content") ? jstr(obs, "content") : "");
    json_decref(obs);
    free(path);
    free(b);
    return content;
}

static long long run_async(const char *sid, const char *command)
{
    char *b = run_body(command);
    char *path = strdupf("/v1/sessions/%s/execute_action?wait=0", sid);
    json_t *j = api_json(harness_eng, "POST", path, b, 202);
    long long id = json_integer_value(json_object_get(j, "action_id"));
    json_decref(j);
    free(path);
    free(b);
    assert_true(id > 0);
    return id;
}

/* The observation's content once the action ends (malloc'd). */
static char *run_result(long long id)
{
    char *path = strdupf("/v1/actions/%lld?wait=120", id);
    json_t *a = api_json(harness_eng, "GET", path, NULL, 200);
    const char *c = jstr(a, "observation.content");
    char *out = strdup(c ? c : "");
    if (!c)
        fprintf(stderr, "action %lld: %s\n", id, json_dumps(a, 0));
    json_decref(a);
    free(path);
    return out;
}

/* A new egress session (egress: the object's JSON) with the client and the certificate in it;
 * its id (malloc'd). */
static char *egress_session(const char *egress, const char *extra)
{
    char *body = strdupf("{\"network\": \"egress\", \"egress\": %s%s%s}", egress, extra ? ", " : "",
                         extra ? extra : "");
    json_t *s = session_new(harness_eng, body);
    char *sid = strdup(jstr(s, "id"));
    assert_string_equal(jstr(s, "options.network"), "egress");
    json_decref(s);
    free(body);
    char *cmd = strdupf("printf %%s %s | base64 -d > /tmp/c.py && printf %%s %s | base64 -d > "
                        "/tmp/cert.pem && echo copied",
                        srv.client_b64, srv.cert_b64);
    char *out = run(sid, cmd);
    assert_non_null(strstr(out, "copied"));
    free(out);
    free(cmd);
    return sid;
}

static char *client(const char *sid, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *client(const char *sid, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char args[1024];
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    char *cmd = strdupf("python3 /tmp/c.py %s", args);
    char *out = run(sid, cmd);
    free(cmd);
    return out;
}

static json_t *egress_record(const char *sid)
{
    char *path = strdupf("/v1/sessions/%s/egress", sid);
    json_t *j = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    return j;
}

/* The newest connection row of the session. */
static json_t *newest(json_t *rec)
{
    json_t *c = json_array_get(json_object_get(rec, "connections"), 0);
    assert_non_null(c);
    return c;
}

/* The session's egress question, once it waits; its action object (caller decrefs). */
static json_t *wait_question(const char *sid)
{
    char *path = strdupf("/v1/approvals?session=%s", sid);
    for (double deadline = now_ms() + 60000; now_ms() < deadline; sleep_ms(50)) {
        json_t *j = api_json(harness_eng, "GET", path, NULL, 200);
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(j, "approvals"), i, a)
        {
            if (strcmp(jstr(a, "kind"), "egress") == 0) {
                json_incref(a);
                json_decref(j);
                free(path);
                return a;
            }
        }
        json_decref(j);
    }
    free(path);
    fail_msg("no egress question waited for session %s", sid);
    return NULL;
}

static void decide(json_t *question, const char *verb, const char *body)
{
    char *path = strdupf("/v1/actions/%lld/%s",
                         (long long)json_integer_value(json_object_get(question, "id")), verb);
    json_t *j = api_json(harness_eng, "POST", path, body, 200);
    json_decref(j);
    free(path);
}

/* ---- the tests ---- */

/* `paddock egress SID`'s output (it must succeed); the caller frees it. */
static char *egress_cli(const char *sid)
{
    char *const argv[] = {(char *)harness_bin(),  "--socket", harness_eng->socket, "--state-dir",
                          harness_eng->state_dir, "egress",   (char *)sid,         NULL};
    struct proc_result r;
    proc_run(argv, NULL, 30000, &r);
    assert_int_equal(r.status, 0);
    char *out = strdup(r.out);
    proc_result_free(&r);
    return out;
}

/* Allowed: plain HTTP by its target, and TLS through CONNECT (untouched: the sandbox checks
 * the server's own certificate). Both recorded with the rule, the address and bytes. */
static void test_allowed_http_and_tls(void **state)
{
    (void)state;
    char egress[256];
    snprintf(egress, sizeof(egress), "{\"allow\": [\"127.0.0.1:%d\", \"127.0.0.1:%d\"]}", srv.http,
             srv.https);
    char *sid = egress_session(egress, NULL);
    char *out = client(sid, "get http://127.0.0.1:%d/hello.txt", srv.http);
    assert_non_null(strstr(out, "OK 200 hello-egress"));
    free(out);
    out = client(sid, "get https://127.0.0.1:%d/hello.txt /tmp/cert.pem", srv.https);
    assert_non_null(strstr(out, "OK 200 hello-egress"));
    free(out);
    json_t *rec = egress_record(sid);
    json_t *tls = json_array_get(json_object_get(rec, "connections"), 0);
    json_t *plain = json_array_get(json_object_get(rec, "connections"), 1);
    assert_string_equal(jstr(tls, "method"), "CONNECT");
    assert_string_equal(jstr(tls, "decision"), "allowed");
    assert_string_equal(jstr(tls, "decided_by"), "config");
    assert_int_equal(json_integer_value(json_object_get(tls, "port")), srv.https);
    assert_true(json_integer_value(json_object_get(tls, "bytes_down")) > 1000); /* certificate */
    assert_string_equal(jstr(plain, "method"), "GET");
    assert_string_equal(jstr(plain, "host"), "127.0.0.1");
    char want[64];
    snprintf(want, sizeof(want), "127.0.0.1:%d", srv.http);
    assert_string_equal(jstr(plain, "rule"), want);
    assert_string_equal(jstr(plain, "address"), want);
    assert_true(json_integer_value(json_object_get(plain, "bytes_down")) > 13);
    assert_true(json_is_number(json_object_get(plain, "ended_at")));
    assert_int_equal(json_array_size(json_object_get(rec, "hosts")), 2);
    json_decref(rec);
    /* The command line shows the same. */
    char *shown = egress_cli(sid);
    assert_non_null(strstr(shown, "CONNECT"));
    assert_non_null(strstr(shown, want));
    free(shown);
    /* The export carries the connections too (JSON and Markdown). */
    char *file = strdupf("%s/export.json", srv.dir);
    char *const exp[] = {(char *)harness_bin(),
                         "--socket",
                         harness_eng->socket,
                         "--state-dir",
                         harness_eng->state_dir,
                         "export",
                         sid,
                         "--format",
                         "json",
                         "-o",
                         file,
                         NULL};
    struct proc_result r;
    proc_run(exp, NULL, 30000, &r);
    assert_int_equal(r.status, 0);
    proc_result_free(&r);
    json_t *doc = json_load_file(file, 0, NULL);
    assert_non_null(doc);
    assert_int_equal(json_array_size(jpath(doc, "egress.connections")), 2);
    assert_string_equal(jstr(json_array_get(jpath(doc, "egress.connections"), 0), "method"),
                        "CONNECT");
    json_decref(doc);
    free(file);
    session_delete(harness_eng, sid);
    free(sid);
}

/* Denied by a deny rule (which wins over allow "*"): 403 whose body names the rule, for a plain
 * request and a CONNECT; recorded as denied with the rule. */
static void test_denied_names_the_rule(void **state)
{
    (void)state;
    char egress[256];
    snprintf(egress, sizeof(egress),
             "{\"allow\": [\"*\"], \"deny\": [\"blocked.test\", "
             "\"127.0.0.1:%d\"], \"ask\": false}",
             srv.https);
    char *sid = egress_session(egress, NULL);
    char *out = client(sid, "get http://blocked.test/x");
    assert_non_null(strstr(out, "HTTP 403"));
    assert_non_null(strstr(out, "denied by the rule \"blocked.test\""));
    free(out);
    out = client(sid, "raw CONNECT 127.0.0.1:%d", srv.https);
    assert_non_null(strstr(out, "RAW HTTP/1.1 403"));
    char want[80];
    snprintf(want, sizeof(want), "denied by the rule \"127.0.0.1:%d\"", srv.https);
    assert_non_null(strstr(out, want));
    free(out);
    json_t *rec = egress_record(sid);
    json_t *c = newest(rec);
    assert_string_equal(jstr(c, "decision"), "denied");
    assert_string_equal(jstr(c, "method"), "CONNECT");
    json_t *first = json_array_get(json_object_get(rec, "connections"), 1);
    assert_string_equal(jstr(first, "rule"), "blocked.test");
    assert_string_equal(jstr(first, "host"), "blocked.test");
    json_decref(rec);
    session_delete(harness_eng, sid);
    free(sid);
}

/* A deny entry naming an address holds for every name that reaches it: "localhost" and the
 * decimal form "2130706433" resolve to the denied 127.0.0.1 and are refused naming the rule,
 * although "*" and an allow entry naming the address would let them through. */
static void test_deny_holds_for_every_name(void **state)
{
    (void)state;
    char egress[256];
    snprintf(egress, sizeof(egress),
             "{\"allow\": [\"*\", \"127.0.0.1:%d\"], \"deny\": [\"127.0.0.1:%d\"], "
             "\"ask\": false}",
             srv.http, srv.http);
    char *sid = egress_session(egress, NULL);
    static const char *const names[] = {"127.0.0.1", "localhost", "2130706433"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *out = client(sid, "raw GET http://%s:%d/hello.txt", names[i], srv.http);
        if (!strstr(out, "RAW HTTP/1.1 403") || !strstr(out, "denied by the rule"))
            fail_msg("%s reached a denied address: %s", names[i], out);
        free(out);
    }
    json_t *rec = egress_record(sid);
    json_t *c = newest(rec);
    assert_string_equal(jstr(c, "host"), "2130706433");
    assert_string_equal(jstr(c, "decision"), "denied");
    json_decref(rec);
    session_delete(harness_eng, sid);
    free(sid);
}

/* A plain request reaches the destination with the Host that was decided: a Host header naming
 * another site (which a shared front end would route to) is replaced, and a head that could
 * smuggle a second Host past the proxy (a bare LF, a folded line, a space before the colon) is
 * a 400. */
static void test_host_is_the_destination(void **state)
{
    (void)state;
    char egress[128];
    snprintf(egress, sizeof(egress), "{\"allow\": [\"127.0.0.1:%d\"], \"ask\": false}", srv.http);
    char *sid = egress_session(egress, NULL);
    char *out = client(sid,
                       "head 'GET http://127.0.0.1:%d/host HTTP/1.1\\r\\nHost: "
                       "evil.example\\r\\n\\r\\n'",
                       srv.http);
    char want[64];
    snprintf(want, sizeof(want), "| host=127.0.0.1:%d", srv.http);
    if (!strstr(out, "RAW HTTP/1.0 200") && !strstr(out, "RAW HTTP/1.1 200"))
        fail_msg("not relayed: %s", out);
    if (!strstr(out, want) || strstr(out, "evil"))
        fail_msg("the destination heard another host: %s", out);
    free(out);
    static const char *const smuggled[] = {
        "X-A: 1\\nHost: evil.example",     /* a bare LF */
        "X-A: 1\\rHost: evil.example",     /* a bare CR */
        "X-A: 1\\r\\n Host: evil.example", /* a folded line */
        "Host : evil.example",             /* a space before the colon */
    };
    for (size_t i = 0; i < sizeof smuggled / sizeof smuggled[0]; i++) {
        out = client(sid, "head 'GET http://127.0.0.1:%d/host HTTP/1.1\\r\\n%s\\r\\n\\r\\n'",
                     srv.http, smuggled[i]);
        if (!strstr(out, "RAW HTTP/1.1 400"))
            fail_msg("%s: %s", smuggled[i], out);
        free(out);
    }
    session_delete(harness_eng, sid);
    free(sid);
}

/* Whether the test servers ever got a request whose path holds marker. */
static bool server_saw(const char *marker)
{
    char *path = strdupf("%s/requests.log", srv.dir);
    FILE *f = fopen(path, "r");
    free(path);
    bool seen = false;
    char line[1024];
    while (f && fgets(line, sizeof(line), f))
        seen = seen || strstr(line, marker) != NULL;
    if (f)
        fclose(f);
    return seen;
}

/* The session's newest connection, once its row is closed with an end reason holding want. */
static void wait_end_reason(const char *sid, const char *want)
{
    char last[1200] = "";
    for (double deadline = now_ms() + 30000; now_ms() < deadline; sleep_ms(50)) {
        json_t *rec = egress_record(sid);
        const char *why = jstr(newest(rec), "end_reason");
        snprintf(last, sizeof(last), "%s", why ? why : "(open)");
        json_decref(rec);
        if (strstr(last, want))
            return;
    }
    fail_msg("the newest connection's end reason has no \"%s\": %s", want, last);
}

/* One request per plain connection: a second request pipelined after the first (to another
 * Host), or smuggled after a Content-Length body, never reaches a server, even one that
 * ignores Connection: close; the first response arrives whole and the row says the rest
 * was cut. A body of exactly its Content-Length passes. */
static void test_one_request_per_connection(void **state)
{
    (void)state;
    char egress[128];
    snprintf(egress, sizeof(egress), "{\"allow\": [\"127.0.0.1:%d\"], \"ask\": false}", srv.http);
    char *sid = egress_session(egress, NULL);
    char *out = client(sid,
                       "head 'GET http://127.0.0.1:%d/keepalive HTTP/1.1\\r\\nHost: "
                       "127.0.0.1\\r\\n\\r\\nGET http://evil.example/pipelined-second "
                       "HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\n'",
                       srv.http);
    if (!strstr(out, "RAW HTTP/1.1 200 OK | kept\n") &&
        strcmp(out, "RAW HTTP/1.1 200 OK | kept") != 0)
        fail_msg("the first response is not whole and alone: %s", out);
    if (server_saw("pipelined-second"))
        fail_msg("the pipelined second request reached the server");
    wait_end_reason(sid, "cut");
    free(out);

    out = client(sid,
                 "head 'POST http://127.0.0.1:%d/keepalive HTTP/1.1\\r\\nContent-Length: "
                 "5\\r\\n\\r\\nhelloGET http://evil.example/smuggled-after-body "
                 "HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\n'",
                 srv.http);
    if (!strstr(out, "RAW HTTP/1.1 200 OK | got=hello") || strstr(out, "404"))
        fail_msg("the body's response is not whole and alone: %s", out);
    if (server_saw("smuggled-after-body"))
        fail_msg("the request after the body reached the server");
    wait_end_reason(sid, "cut");
    free(out);

    out = client(sid,
                 "head 'POST http://127.0.0.1:%d/post-exact HTTP/1.1\\r\\nContent-Length: "
                 "11\\r\\n\\r\\nhello world'",
                 srv.http);
    if (!strstr(out, "RAW HTTP/1.1 200 OK | got=hello world"))
        fail_msg("a body of exactly its Content-Length: %s", out);
    assert_true(server_saw("post-exact"));
    free(out);

    /* Two framings, or two lengths, are how a request hides in another's body: 400. A
     * chunked body is not relayed: 411. None reaches the server. */
    static const struct {
        const char *headers, *status, *marker;
    } framed[] = {
        {"Content-Length: 5\\r\\nTransfer-Encoding: chunked", "400", "cl-te"},
        {"Transfer-Encoding: chunked\\r\\nContent-Length: 5", "400", "te-cl"},
        {"Content-Length: 5\\r\\nContent-Length: 5", "400", "cl-cl"},
        {"Content-Length: 5, 5", "400", "cl-list"},
        {"Content-Length: +5", "400", "cl-sign"},
        {"Transfer-Encoding: chunked", "411", "te-only"},
    };
    for (size_t i = 0; i < sizeof framed / sizeof framed[0]; i++) {
        out = client(sid,
                     "head 'POST http://127.0.0.1:%d/keepalive-%s HTTP/1.1\\r\\n%s\\r\\n\\r\\n"
                     "5\\r\\nhello\\r\\n0\\r\\n\\r\\n'",
                     srv.http, framed[i].marker, framed[i].headers);
        char want[32];
        snprintf(want, sizeof(want), "RAW HTTP/1.1 %s", framed[i].status);
        if (!strstr(out, want))
            fail_msg("%s: %s", framed[i].headers, out);
        if (server_saw(framed[i].marker))
            fail_msg("%s reached the server", framed[i].headers);
        free(out);
    }
    session_delete(harness_eng, sid);
    free(sid);
}

/* The newest connection's row, once it is closed. */
static json_t *wait_closed(const char *sid)
{
    for (double deadline = now_ms() + 30000; now_ms() < deadline; sleep_ms(50)) {
        json_t *rec = egress_record(sid);
        json_t *c = newest(rec);
        if (json_is_number(json_object_get(c, "ended_at"))) {
            json_incref(c);
            json_decref(rec);
            return c;
        }
        json_decref(rec);
    }
    fail_msg("the newest connection of session %s did not end", sid);
    return NULL;
}

/* The newest connection of sid, which the engine cut off before a byte of the tunnel went up:
 * denied by rule, its end reason holding reason. The caller frees it. */
static json_t *expect_cut(const char *sid, const char *rule, const char *reason)
{
    json_t *c = wait_closed(sid);
    assert_string_equal(jstr(c, "decision"), "denied");
    assert_string_equal(jstr(c, "rule"), rule);
    if (!strstr(jstr(c, "end_reason"), reason))
        fail_msg("the record says \"%s\", not \"%s\"", jstr(c, "end_reason"), reason);
    assert_int_equal(json_integer_value(json_object_get(c, "bytes_up")), 0);
    return c;
}

/* A tunnel's TLS server name must be its CONNECT host: the same name passes (whole, and
 * split into one-byte records sent a byte at a time; TLS 1.3 and 1.2 whole, bytes counted);
 * another name, or a name on a CONNECT to an address, is cut off before any of it reaches the
 * server, recorded as denied with why and shown by `paddock egress`; a malformed ClientHello
 * likewise, and one left half-sent at the head's deadline; a second hello after a
 * HelloRetryRequest is checked as the first; plain HTTP in a tunnel is cut off too, another
 * protocol that speaks no TLS is relayed untouched. */
static void test_tls_server_name(void **state)
{
    (void)state;
    char egress[256];
    snprintf(egress, sizeof(egress),
             "{\"allow\": [\"localhost:%d\", \"127.0.0.1:%d\", \"127.0.0.1:%d\"], "
             "\"ask\": false}",
             srv.https, srv.https, srv.http);
    char *sid = egress_session(egress, NULL);
    char rule[64];
    snprintf(rule, sizeof(rule), "localhost:%d", srv.https);

    static const char *const fits[] = {"localhost", "LocalHost.", "localhost 1", "- 7"};
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        char *out = client(sid, "tls localhost %d %s", srv.https, fits[i]);
        if (!strstr(out, "OK hello-egress"))
            fail_msg("server name \"%s\": %s", fits[i], out);
        free(out);
        json_t *c = wait_closed(sid);
        assert_string_equal(jstr(c, "host"), "localhost");
        assert_string_equal(jstr(c, "decision"), "allowed");
        assert_string_equal(jstr(c, "rule"), rule);
        assert_true(json_integer_value(json_object_get(c, "bytes_up")) > 200); /* the hello */
        json_decref(c);
    }
    /* A whole TLS 1.3 and TLS 1.2 handshake and a request through the scan of the client's
     * handshake: every byte each way counted (down: the tunnel's and its 200's). */
    static const char *const versions[] = {"-", "1.2"};
    for (size_t i = 0; i < 2; i++) {
        char *out = client(sid, "tls localhost %d localhost 0 - %s", srv.https, versions[i]);
        long long sent, got;
        char ver[16];
        if (sscanf(out, "OK hello-egress %15s sent %lld got %lld", ver, &sent, &got) != 3)
            fail_msg("TLS up to %s: %s", versions[i], out);
        assert_string_equal(ver, i ? "TLSv1.2" : "TLSv1.3");
        free(out);
        json_t *c = wait_closed(sid);
        assert_string_equal(jstr(c, "decision"), "allowed");
        assert_int_equal(json_integer_value(json_object_get(c, "bytes_up")), sent);
        assert_int_equal(json_integer_value(json_object_get(c, "bytes_down")),
                         got + (long long)strlen("HTTP/1.1 200 Connection established\r\n\r\n"));
        json_decref(c);
    }

    static const struct {
        const char *args, *reason;
    } cut[] = {
        {"tls localhost %d evil.example",
         "TLS server name evil.example differs from the CONNECT host localhost"},
        {"tls localhost %d evil.example 1",
         "TLS server name evil.example differs from the CONNECT host localhost"},
        {"tls 127.0.0.1 %d localhost",
         "TLS server name localhost on a CONNECT to the address 127.0.0.1"},
        /* a warning alert first, as Go's crypto/tls skips it: the hello after it is TLS */
        {"tls localhost %d evil.example 0 1503010002015a",
         "a malformed TLS ClientHello: a TLS record of another type before the ClientHello"},
        {"badhello localhost %d", "a malformed TLS ClientHello: an extensions length that "
                                  "disagrees with the ClientHello's"},
        {"badhello localhost %d half", "no complete TLS ClientHello within 10 s"},
    };
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        char args[128];
        snprintf(args, sizeof(args), cut[i].args, srv.https);
        char *out = client(sid, "%s", args);
        if (!strstr(out, "CLOSED"))
            fail_msg("%s: not cut off: %s", args, out);
        free(out);
        json_t *c = expect_cut(
            sid, strstr(cut[i].reason, "ClientHello") ? "TLS ClientHello" : "TLS server name",
            cut[i].reason);
        assert_string_equal(jstr(c, "decided_by"), "engine");
        json_decref(c);
    }
    /* The command line shows the reason. */
    char *shown = egress_cli(sid);
    assert_non_null(strstr(shown, "TLS server name evil.example differs from the CONNECT host"));
    free(shown);
    json_t *c;

    /* After a HelloRetryRequest (a first hello with no key share), a second hello naming
     * another site is cut off before it reaches the server, which would take it (Python's
     * OpenSSL server names the site by the second hello); the same name again passes. */
    char *out = client(sid, "hrr localhost %d evil.example", srv.https);
    long long first;
    if (sscanf(out, "HRR CLOSED %*s first %lld", &first) != 1)
        fail_msg("a second hello naming another site: %s", out);
    free(out);
    c = wait_closed(sid);
    assert_string_equal(jstr(c, "decision"), "denied");
    assert_string_equal(jstr(c, "rule"), "TLS server name");
    if (!strstr(jstr(c, "end_reason"), "TLS server name evil.example differs from the CONNECT "
                                       "host localhost (in a second ClientHello); cut before "
                                       "it reached the destination"))
        fail_msg("the second hello's record says \"%s\"", jstr(c, "end_reason"));
    /* the first hello went, then at most the change_cipher_spec before the second */
    long long up = json_integer_value(json_object_get(c, "bytes_up"));
    if (up < first || up > first + 6)
        fail_msg("%lld bytes up after a first hello of %lld", up, first);
    json_decref(c);
    out = client(sid, "hrr localhost %d LOCALHOST", srv.https);
    if (!strstr(out, "HRR SERVERHELLO"))
        fail_msg("a second hello naming the CONNECT host again: %s", out);
    free(out);
    c = wait_closed(sid);
    assert_string_equal(jstr(c, "decision"), "allowed");
    json_decref(c);

    /* No TLS in the tunnel: plain HTTP (a request whose Host the engine would not see, in any
     * spelling a lenient server reads) is cut off before a byte reaches the destination;
     * another protocol's first line (an SSH banner) is relayed as it is. */
    static const char *const http_in_tunnel[] = {
        "GET /hello.txt HTTP/1.1\\r\\nHost: evil.example\\r\\nConnection: close\\r\\n\\r\\n",
        "\\r\\nget /hello.txt http/1.1\\r\\nHost: evil.example\\r\\n\\r\\n",
    };
    for (size_t i = 0; i < sizeof http_in_tunnel / sizeof http_in_tunnel[0]; i++) {
        out = client(sid, "tunnel 127.0.0.1 %d '%s'", srv.http, http_in_tunnel[i]);
        if (strstr(out, "hello-egress"))
            fail_msg("plain HTTP in a tunnel reached the server: %s", out);
        free(out);
        json_decref(expect_cut(sid, "tunnel's first line", "plain HTTP inside a CONNECT tunnel"));
    }
    out = client(sid, "tunnel 127.0.0.1 %d 'SSH-2.0-paddock_test\\r\\n'", srv.http);
    free(out);
    c = wait_closed(sid);
    assert_string_equal(jstr(c, "decision"), "allowed");
    assert_int_equal(json_integer_value(json_object_get(c, "bytes_up")), 22);
    json_decref(c);
    session_delete(harness_eng, sid);
    free(sid);
}

/* Unknown with ask: the connection waits as an "egress" action showing host and port;
 * approved once it connects (and asks again next time); rejected it gets 403 with who and
 * why; approved for the session it adds a rule and the next one goes through at once. */
static void test_unknown_waits_approved_and_rejected(void **state)
{
    (void)state;
    char *sid = egress_session("{\"allow\": [], \"ask\": true}", "\"approval_timeout\": 120");
    char get[128];
    snprintf(get, sizeof(get), "python3 /tmp/c.py get http://127.0.0.1:%d/hello.txt", srv.http);
    long long a = run_async(sid, get);
    json_t *q = wait_question(sid);
    assert_string_equal(jstr(q, "args.args.host"), "127.0.0.1");
    assert_int_equal(json_integer_value(jpath(q, "args.args.port")), srv.http);
    assert_string_equal(jstr(q, "args.args.method"), "GET");
    /* The sandbox's process that opened the connection, found through its socket. */
    assert_non_null(jstr(q, "args.args.command"));
    assert_non_null(strstr(jstr(q, "args.args.command"), "/tmp/c.py get http://127.0.0.1"));
    char dest[64];
    snprintf(dest, sizeof(dest), "127.0.0.1:%d", srv.http);
    assert_string_equal(jstr(q, "summary"), dest);
    decide(q, "approve", "{\"by\": \"alice\"}");
    json_decref(q);
    char *out = run_result(a);
    assert_non_null(strstr(out, "OK 200 hello-egress"));
    free(out);
    json_t *rec = egress_record(sid);
    assert_string_equal(jstr(newest(rec), "decision"), "approved");
    assert_string_equal(jstr(newest(rec), "decided_by"), "alice");
    assert_true(json_is_integer(json_object_get(newest(rec), "action_id")));
    json_decref(rec);

    /* Once was once: it asks again; this time it is rejected. */
    a = run_async(sid, get);
    q = wait_question(sid);
    decide(q, "reject", "{\"by\": \"bob\", \"reason\": \"not today\"}");
    json_decref(q);
    out = run_result(a);
    assert_non_null(strstr(out, "HTTP 403"));
    assert_non_null(strstr(out, "rejected by bob: not today"));
    free(out);
    rec = egress_record(sid);
    assert_string_equal(jstr(newest(rec), "decision"), "rejected");
    json_decref(rec);

    /* For the session: a rule, and the next connection needs nobody. */
    a = run_async(sid, get);
    q = wait_question(sid);
    decide(q, "approve", "{\"by\": \"carol\", \"scope\": \"session\"}");
    json_decref(q);
    out = run_result(a);
    assert_non_null(strstr(out, "OK 200"));
    free(out);
    out = client(sid, "get http://127.0.0.1:%d/hello.txt", srv.http);
    assert_non_null(strstr(out, "OK 200 hello-egress"));
    free(out);
    rec = egress_record(sid);
    assert_string_equal(jstr(newest(rec), "decision"), "allowed");
    assert_string_equal(jstr(newest(rec), "rule"), dest);
    assert_string_equal(jstr(newest(rec), "decided_by"), "carol");
    json_t *rule = json_array_get(json_object_get(rec, "rules"), 0);
    assert_string_equal(jstr(rule, "pattern"), dest);
    assert_string_equal(jstr(rule, "scope"), "session");
    json_decref(rec);
    /* The rule is this session's: another one is not let through by it. */
    char *other = egress_session("{\"allow\": [], \"ask\": false}", NULL);
    out = client(other, "raw GET http://127.0.0.1:%d/hello.txt", srv.http);
    if (!strstr(out, "RAW HTTP/1.1 403") || !strstr(out, "not in the session's allow list"))
        fail_msg("another session used the first one's rule: %s", out);
    free(out);
    session_delete(harness_eng, other);
    free(other);
    session_delete(harness_eng, sid);
    free(sid);
}

/* A question nobody answers ends with the approval timeout as a 403 that says so. */
static void test_unanswered_times_out(void **state)
{
    (void)state;
    char *sid = egress_session("{\"ask\": true}", "\"approval_timeout\": 2");
    char *out = client(sid, "get http://127.0.0.1:%d/hello.txt", srv.http);
    assert_non_null(strstr(out, "HTTP 403"));
    assert_non_null(strstr(out, "approval timed out"));
    free(out);
    json_t *rec = egress_record(sid);
    assert_string_equal(jstr(newest(rec), "decision"), "expired");
    json_decref(rec);
    session_delete(harness_eng, sid);
    free(sid);
}

/* A name the allow list lets through but that resolves to loopback is refused (only an entry
 * naming the address literally reaches it); an address no entry names literally is not in
 * "*"; nothing asks with ask false. */
static void test_loopback_refused_without_literal_allow(void **state)
{
    (void)state;
    char *sid = egress_session("{\"allow\": [\"*\", \"localhost\"], \"ask\": false}", NULL);
    char *out = client(sid, "raw GET http://localhost:%d/hello.txt", srv.http);
    assert_non_null(strstr(out, "RAW HTTP/1.1 403"));
    assert_non_null(strstr(out, "a loopback address"));
    free(out);
    json_t *rec = egress_record(sid);
    assert_string_equal(jstr(newest(rec), "decision"), "refused");
    json_decref(rec);
    out = client(sid, "raw GET http://127.0.0.1:%d/hello.txt", srv.http);
    assert_non_null(strstr(out, "RAW HTTP/1.1 403"));
    assert_non_null(strstr(out, "not in the session's allow list"));
    free(out);
    session_delete(harness_eng, sid);
    free(sid);
}

/* The sandbox has no interface but lo: a client that ignores the proxy reaches nothing (the
 * host's loopback server is not the sandbox's loopback). */
static void test_client_ignoring_proxy_reaches_nothing(void **state)
{
    (void)state;
    char egress[128];
    snprintf(egress, sizeof(egress), "{\"allow\": [\"127.0.0.1:%d\"]}", srv.http);
    char *sid = egress_session(egress, NULL);
    char *out = run(sid, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,");
    assert_string_equal(out, "lo,");
    free(out);
    out = client(sid, "direct 127.0.0.1 %d", srv.http);
    assert_non_null(strstr(out, "ERR"));
    assert_null(strstr(out, "CONNECTED"));
    free(out);
    /* Without the variables urllib connects directly: nothing answers. */
    char *cmd = strdupf("env -u HTTP_PROXY -u http_proxy python3 /tmp/c.py get "
                        "http://127.0.0.1:%d/hello.txt",
                        srv.http);
    out = run(sid, cmd);
    assert_non_null(strstr(out, "ERR"));
    free(out);
    free(cmd);
    session_delete(harness_eng, sid);
    free(sid);
}

/* The engine SIGKILLed while a connection is open: after the restart its row is there, ended
 * as interrupted, and the proxy works again. */
static void test_sigkill_mid_connection_keeps_the_row(void **state)
{
    (void)state;
    char egress[128];
    snprintf(egress, sizeof(egress), "{\"allow\": [\"127.0.0.1:%d\"]}", srv.http);
    char *sid = egress_session(egress, NULL);
    char slow[128];
    snprintf(slow, sizeof(slow), "python3 /tmp/c.py get http://127.0.0.1:%d/slow", srv.http);
    run_async(sid, slow);
    bool open = false;
    for (double deadline = now_ms() + 30000; !open && now_ms() < deadline; sleep_ms(50)) {
        json_t *rec = egress_record(sid);
        open = json_integer_value(json_object_get(rec, "open")) > 0 &&
               json_array_size(json_object_get(rec, "connections")) > 0;
        json_decref(rec);
    }
    assert_true(open);
    assert_int_equal(kill(harness_eng->pid, SIGKILL), 0);
    int st;
    assert_int_equal(waitpid(harness_eng->pid, &st, 0), harness_eng->pid);
    harness_eng->pid = 0;
    assert_int_equal(engine_start(harness_eng), 0);
    json_t *s = session_wait_state(harness_eng, sid, "ready", 30000);
    assert_non_null(s);
    json_decref(s);
    json_t *rec = egress_record(sid);
    json_t *c = newest(rec);
    assert_string_equal(jstr(c, "decision"), "allowed");
    assert_string_equal(jstr(c, "method"), "GET");
    assert_string_equal(jstr(c, "end_reason"), "interrupted: the engine stopped");
    json_decref(rec);
    char *out = client(sid, "get http://127.0.0.1:%d/hello.txt", srv.http);
    assert_non_null(strstr(out, "OK 200 hello-egress"));
    free(out);
    session_delete(harness_eng, sid);
    free(sid);
}

/* The engine restarted with one more variable ("K=V"), or without it (NULL). */
static void engine_restart_with(const char *kv)
{
    assert_int_equal(engine_stop(harness_eng), 0);
    size_t i = 0;
    while (i < HARNESS_MAX_ENV - 1 && harness_eng->extra_env[i] &&
           strncmp(harness_eng->extra_env[i], "PADDOCK_EGRESS_MAX_TOTAL=", 25) != 0)
        i++;
    harness_eng->extra_env[i] = kv;
    assert_int_equal(engine_start(harness_eng), 0);
}

/* Sessions share the engine's descriptors: all their connections together stay under what
 * its RLIMIT_NOFILE leaves (here bounded lower by PADDOCK_EGRESS_MAX_TOTAL=2), so sessions each
 * inside their own egress.max_connections cannot take the descriptors the operator's socket
 * needs. One session holding two connections: another's gets a 503 naming the engine's limit,
 * and connects once those are gone. */
static void test_engine_wide_connection_limit(void **state)
{
    (void)state;
    engine_restart_with("PADDOCK_EGRESS_MAX_TOTAL=2");
    char egress[128];
    snprintf(egress, sizeof(egress), "{\"allow\": [\"127.0.0.1:%d\"]}", srv.http);
    char *holder = egress_session(egress, NULL), *other = egress_session(egress, NULL);
    char slow[256];
    snprintf(slow, sizeof(slow),
             "for i in 1 2; do python3 /tmp/c.py get http://127.0.0.1:%d/slow > /tmp/slow$i 2>&1 "
             "& done; echo started",
             srv.http);
    free(run(holder, slow));
    bool held = false;
    for (double deadline = now_ms() + 30000; !held && now_ms() < deadline; sleep_ms(50)) {
        json_t *rec = egress_record(holder);
        held = json_integer_value(json_object_get(rec, "open")) == 2;
        json_decref(rec);
    }
    assert_true(held);
    char *out = client(other, "raw GET http://127.0.0.1:%d/hello.txt", srv.http);
    if (!strstr(out, "RAW HTTP/1.1 503") || !strstr(out, "the engine has 2 connections open"))
        fail_msg("a third connection of the engine: %s", out);
    free(out);
    session_delete(harness_eng, holder); /* its connections end with it */
    bool connected = false;
    for (double deadline = now_ms() + 30000; !connected && now_ms() < deadline; sleep_ms(200)) {
        out = client(other, "raw GET http://127.0.0.1:%d/hello.txt", srv.http);
        connected = strstr(out, "RAW HTTP/1.1 200") != NULL;
        free(out);
    }
    assert_true(connected);
    session_delete(harness_eng, other);
    free(holder);
    free(other);
    engine_restart_with(NULL);
}

/* egress.max_bytes: a download past it is cut, the connection held open beside it closed, the
 * next one refused with a 403 naming the limit; all of it recorded. */
static void test_byte_limit(void **state)
{
    (void)state;
    enum { LIMIT = 100000 };
    char egress[128];
    snprintf(egress, sizeof(egress), "{\"allow\": [\"127.0.0.1:%d\"], \"max_bytes\": %d}", srv.http,
             LIMIT);
    char *sid = egress_session(egress, NULL);
    /* in the shell's background: its actions run one at a time */
    char slow[160];
    snprintf(slow, sizeof(slow),
             "python3 /tmp/c.py get http://127.0.0.1:%d/slow > /tmp/slow.out 2>&1 & echo started",
             srv.http);
    char *out = run(sid, slow);
    free(out);
    bool open = false;
    for (double deadline = now_ms() + 30000; !open && now_ms() < deadline; sleep_ms(50)) {
        json_t *rec = egress_record(sid);
        json_t *c = json_array_get(json_object_get(rec, "connections"), 0);
        open = c && json_integer_value(json_object_get(c, "bytes_down")) == 0 &&
               json_integer_value(json_object_get(rec, "open")) > 0 &&
               strcmp(jstr(c, "decision"), "allowed") == 0;
        json_decref(rec);
    }
    assert_true(open);
    out = client(sid, "get http://127.0.0.1:%d/bytes/%d", srv.http, 3 * LIMIT);
    assert_non_null(strstr(out, "ERR")); /* cut short: IncompleteRead */
    free(out);
    /* the held one ends too, long before its 60 s */
    bool ended = false;
    for (double deadline = now_ms() + 30000; !ended && now_ms() < deadline; sleep_ms(100)) {
        out = run(sid, "cat /tmp/slow.out");
        ended = strstr(out, "ERR") != NULL;
        assert_null(strstr(out, "OK 200"));
        free(out);
    }
    assert_true(ended);
    out = client(sid, "get http://127.0.0.1:%d/hello.txt", srv.http);
    assert_non_null(strstr(out, "HTTP 403"));
    assert_non_null(strstr(out, "byte limit of 100000 bytes is reached (egress.max_bytes)"));
    free(out);
    json_t *rec = egress_record(sid);
    json_t *conns = json_object_get(rec, "connections");
    assert_int_equal(json_array_size(conns), 3);
    assert_string_equal(jstr(json_array_get(conns, 0), "decision"), "refused");
    long long total = 0;
    for (size_t i = 1; i < 3; i++) {
        json_t *c = json_array_get(conns, i);
        assert_non_null(strstr(jstr(c, "end_reason"), "egress.max_bytes"));
        total += json_integer_value(json_object_get(c, "bytes_up")) +
                 json_integer_value(json_object_get(c, "bytes_down"));
    }
    /* the relayed bytes stop at the limit; the engine's own rewritten heads come on top */
    assert_true(total > 0 && total <= LIMIT + 1024);
    json_decref(rec);
    char *path = strdupf("/v1/sessions/%s", sid);
    json_t *s = api_json(harness_eng, "GET", path, NULL, 200);
    assert_int_equal(json_integer_value(jpath(s, "options.egress.max_bytes")), LIMIT);
    json_decref(s);
    free(path);
    session_delete(harness_eng, sid);
    free(sid);
}

/* The options are checked: a bad pattern, egress without the network, an unknown field. */
static void test_options_checked(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"network\": \"egress\", \"egress\": {\"allow\": [\"bad host\"]}}",
        "{\"network\": \"egress\", \"egress\": {\"allow\": [\"*.1.2.3.4\"]}}",
        "{\"network\": \"egress\", \"egress\": {\"allow\": [\"a.b:99999\"]}}",
        "{\"network\": \"egress\", \"egress\": {\"frobnicate\": 1}}",
        "{\"network\": \"egress\", \"egress\": {\"presets\": [\"cobol\"]}}",
        "{\"network\": \"egress\", \"egress\": {\"max_bytes\": 0}}",
        "{\"network\": \"egress\", \"egress\": {\"max_bytes\": 1.5}}",
        "{\"network\": \"none\", \"egress\": {\"allow\": [\"pypi.org\"]}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = api_json(harness_eng, "POST", "/v1/sessions", bad[i], 400);
        assert_string_equal(jstr(j, "error.code"), "bad_request");
        assert_non_null(strstr(jstr(j, "error.message"), "egress"));
        json_decref(j);
    }
}

/* On the agents' channel an allow list naming the host's own addresses is as weak as the
 * bridge ([security] network_bridge, default deny: 403 naming it); hosts and public addresses
 * are not; the operator's channel may name them. */
static void test_agent_naming_internal_addresses(void **state)
{
    (void)state;
    static const char body[] =
        "{\"network\": \"egress\", \"egress\": {\"allow\": [\"169.254.169.254\"]}}";
    struct reply r;
    http_unix(harness_eng->socket, "POST", "/v1/sessions", body, -1, 30000, &r);
    assert_int_equal(r.status, 403);
    assert_non_null(strstr(r.body, "network_bridge"));
    reply_free(&r);
    http_unix(harness_eng->socket, "POST", "/v1/sessions",
              "{\"network\": \"egress\", \"egress\": {\"allow\": [\"pypi.org\"]}}", -1, 60000, &r);
    assert_int_equal(r.status, 201);
    engine_track(harness_eng, jstr(r.json, "id"));
    reply_free(&r);
}

/* 0.0.0.0 connects to this host itself: refused even where an allow entry names it (the
 * operator's own session here; an approval of "0.0.0.0:PORT" reads as no address at all). */
static void test_unspecified_never_reached(void **state)
{
    (void)state;
    char egress[128];
    snprintf(egress, sizeof(egress), "{\"allow\": [\"0.0.0.0:%d\", \"[::]:%d\"], \"ask\": false}",
             srv.http, srv.http);
    char *sid = egress_session(egress, NULL);
    static const char *const hosts[] = {"0.0.0.0", "[::]"};
    for (size_t i = 0; i < 2; i++) {
        char *out = client(sid, "raw GET http://%s:%d/hello.txt", hosts[i], srv.http);
        if (!strstr(out, "RAW HTTP/1.1 403") || !strstr(out, "an unspecified address"))
            fail_msg("%s reached: %s", hosts[i], out);
        free(out);
    }
    session_delete(harness_eng, sid);
    free(sid);
}

/* One of this machine's own IPv4 addresses that is not loopback, private, link-local or
 * shared (a public address of the host, or a documentation range): into addr, and its
 * decimal spelling into dec (a name getent resolves to it). false when it has none. */
static bool host_public_address(char addr[INET_ADDRSTRLEN], char dec[16])
{
    struct ifaddrs *list = NULL;
    bool found = false;
    if (getifaddrs(&list) < 0)
        return false;
    for (struct ifaddrs *i = list; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        const struct in_addr *a =
            &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
        uint32_t v = ntohl(a->s_addr);
        if ((v >> 24) == 127 || (v >> 24) == 10 || (v >> 24) == 0 || (v >> 20) == 0xac1 ||
            (v >> 16) == 0xc0a8 || (v >> 16) == 0xa9fe || (v >> 22) == (0x64400000u >> 22))
            continue;
        inet_ntop(AF_INET, a, addr, INET_ADDRSTRLEN);
        snprintf(dec, 16, "%u", v);
        found = true;
    }
    freeifaddrs(list);
    return found;
}

/* The host's own public address is the host: its services bound to every interface answer
 * there, behind a firewall that never sees the sandbox's traffic. An agent's allow entry naming
 * it counts as network_bridge, and a name that resolves to it is refused as loopback is. */
static void test_host_public_address_refused(void **state)
{
    (void)state;
    char addr[INET_ADDRSTRLEN], dec[16];
    if (!host_public_address(addr, dec))
        skip();
    char *body = strdupf("{\"network\": \"egress\", \"egress\": {\"allow\": [\"%s:1\"]}}", addr);
    struct reply r;
    http_unix(harness_eng->socket, "POST", "/v1/sessions", body, -1, 60000, &r);
    if (r.status == 201)
        engine_track(harness_eng, jstr(r.json, "id"));
    if (r.status != 403 || !strstr(r.body, "network_bridge"))
        fail_msg("an agent's allow entry naming %s: %ld %s", addr, r.status, r.body);
    reply_free(&r);
    free(body);
    char *sid = egress_session("{\"allow\": [\"*\"], \"ask\": false}", NULL);
    /* Port 1: nothing listens, so without the check the proxy would answer 502. */
    char *out = client(sid, "raw GET http://%s:1/", dec);
    if (!strstr(out, "RAW HTTP/1.1 403") || !strstr(out, "a host address"))
        fail_msg("%s (%s) was not refused as the host's: %s", dec, addr, out);
    free(out);
    session_delete(harness_eng, sid);
    free(sid);
}

/* The config file's [egress]: its allow list for sessions that give none (replaced by one
 * that does), its deny list always, its ask; a bad pattern there stops the engine at start. */
static void test_config_defaults(void **state)
{
    (void)state;
    struct engine_proc *e = engine_new();
    assert_non_null(e);
    char *cfg = strdupf("%s/config.toml", e->state_dir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f,
            "[egress]\nallow = [\"127.0.0.1:%d\", \"PyPI.org\"]\ndeny = [\"*.bad.test\"]\n"
            "ask = false\n[egress.presets.loop]\nallow = [\"127.0.0.1:%d\"]\n"
            "[egress.presets.python]\nallow = [\"pypi.mirror.test:443\"]\n",
            srv.http, srv.https);
    fclose(f);
    char *env = strdupf("PADDOCK_CONFIG=%s", cfg);
    e->extra_env[0] = env;
    assert_int_equal(engine_start(e), 0);
    json_t *s = session_new(e, "{\"network\": \"egress\"}");
    char want[64];
    snprintf(want, sizeof(want), "127.0.0.1:%d", srv.http);
    assert_int_equal(json_array_size(jpath(s, "options.egress.allow")), 2);
    assert_string_equal(json_string_value(json_array_get(jpath(s, "options.egress.allow"), 0)),
                        want);
    assert_string_equal(json_string_value(json_array_get(jpath(s, "options.egress.allow"), 1)),
                        "pypi.org");
    assert_string_equal(json_string_value(json_array_get(jpath(s, "options.egress.deny"), 0)),
                        "*.bad.test");
    assert_true(json_is_false(jpath(s, "options.egress.ask")));
    json_decref(s);
    /* A request's own allow list replaces the file's; the file's deny list stays. */
    s = session_new(e, "{\"network\": \"egress\", \"egress\": {\"allow\": [\"a.test\"], "
                       "\"deny\": [\"b.test\"], \"ask\": true}}");
    assert_int_equal(json_array_size(jpath(s, "options.egress.allow")), 1);
    assert_int_equal(json_array_size(jpath(s, "options.egress.deny")), 2);
    assert_true(json_is_true(jpath(s, "options.egress.ask")));
    json_decref(s);
    /* The file's presets by name; its "python" replaces the built-in one. */
    s = session_new(e, "{\"network\": \"egress\", \"egress\": {\"allow\": [], "
                       "\"presets\": [\"loop\", \"python\", \"node\"]}}");
    snprintf(want, sizeof(want), "127.0.0.1:%d", srv.https);
    json_t *allow = jpath(s, "options.egress.allow");
    assert_int_equal(json_array_size(allow), 4);
    assert_string_equal(json_string_value(json_array_get(allow, 0)), want);
    assert_string_equal(json_string_value(json_array_get(allow, 1)), "pypi.mirror.test:443");
    assert_string_equal(json_string_value(json_array_get(allow, 2)), "registry.npmjs.org:443");
    json_decref(s);
    assert_int_equal(engine_stop(e), 0);
    f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "[egress]\nallow = [\"bad host\"]\n");
    fclose(f);
    assert_int_not_equal(engine_start(e), 0);
    f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "[egress.presets.x]\nallow = [\"bad host\"]\n");
    fclose(f);
    assert_int_not_equal(engine_start(e), 0);
    engine_destroy(e);
    free(env);
    free(cfg);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_checked),
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_agent_naming_internal_addresses),
        cmocka_unit_test(test_host_public_address_refused),
        cmocka_unit_test(test_unspecified_never_reached),
        cmocka_unit_test(test_allowed_http_and_tls),
        cmocka_unit_test(test_denied_names_the_rule),
        cmocka_unit_test(test_deny_holds_for_every_name),
        cmocka_unit_test(test_host_is_the_destination),
        cmocka_unit_test(test_one_request_per_connection),
        cmocka_unit_test(test_tls_server_name),
        cmocka_unit_test(test_unknown_waits_approved_and_rejected),
        cmocka_unit_test(test_unanswered_times_out),
        cmocka_unit_test(test_loopback_refused_without_literal_allow),
        cmocka_unit_test(test_client_ignoring_proxy_reaches_nothing),
        cmocka_unit_test(test_byte_limit),
        cmocka_unit_test(test_engine_wide_connection_limit),
        cmocka_unit_test(test_sigkill_mid_connection_keeps_the_row),
    };
    int failed = cmocka_run_group_tests_name("egress", tests, servers_setup, servers_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
