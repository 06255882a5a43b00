/* Integration tests of OpenHands' remote-runtime API over loopback TCP, driven the way
 * RemoteRuntime drives it: GET /sessions/{sid} (none), POST /start, poll GET /runtime/{id}
 * until pod_status is ready, /alive and execute_action through the returned url with the
 * X-Session-API-Key, pause/resume, stop. Then the credentials each path takes, bad bodies,
 * images, and the endpoints that answer a documented refusal. */
#include "harness.h"
#include "netclient.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API_KEY "rr-api-key-0123456789"

static int port;
static char *token;

static int group_setup(void **state)
{
    harness_eng = engine_new();
    harness_eng->extra_env[0] = "PADDOCK_LISTEN=127.0.0.1:0";
    harness_eng->extra_env[1] = "PADDOCK_API_KEY=" API_KEY;
    if (engine_start(harness_eng) < 0) {
        engine_destroy(harness_eng);
        harness_eng = NULL;
        return -1;
    }
    struct reply r;
    api(harness_eng, "GET", "/v1/info", NULL, &r);
    const char *addr = jstr(r.json, "listen.address");
    port = addr && strncmp(addr, "127.0.0.1:", 10) == 0 ? atoi(addr + 10) : 0;
    reply_free(&r);
    char *tpath = strdupf("%s/token", harness_eng->state_dir);
    FILE *f = fopen(tpath, "r");
    char buf[128] = "";
    if (f && fgets(buf, sizeof(buf), f))
        buf[strcspn(buf, "\n")] = '\0';
    if (f)
        fclose(f);
    free(tpath);
    token = strdup(buf);
    return port > 0 && strlen(token) == 64 ? 0 : -1;
}

static int group_teardown(void **state)
{
    free(token);
    return harness_group_teardown_clean(state);
}

/* A request to the engine over TCP: a full url, or a path on the listener. */
static void rr(const char *method, const char *url_or_path, const char *body, const char *h1,
               const char *h2, struct net_reply *out)
{
    char *url = url_or_path[0] == '/' ? strdupf("http://127.0.0.1:%d%s", port, url_or_path)
                                      : strdup(url_or_path);
    const char *headers[3] = {NULL};
    int n = 0;
    if (h1)
        headers[n++] = h1;
    if (h2)
        headers[n++] = h2;
    struct net_req q = {.method = method, .url = url, .body = body, .headers = headers};
    net_do(&q, out);
    if (out->r.status < 0)
        fail_msg("%s %s: %s", method, url, out->r.err);
    free(url);
}

static const char *key_header(void)
{
    return "X-API-Key: " API_KEY;
}

static char *session_key_header(const char *key)
{
    return strdupf("X-Session-API-Key: %s", key);
}

static void expect_status(struct net_reply *r, long status)
{
    if (r->r.status != status)
        fprintf(stderr, "want %ld, got %ld: %s\n", status, r->r.status, r->r.body);
    assert_int_equal(r->r.status, status);
}

static bool is_hex(const char *s, size_t len)
{
    if (!s || strlen(s) != len)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

/* POST /start for session_id; asserts 200 and returns the runtime (caller decrefs). */
static json_t *start_runtime(const char *sid, const char *extra)
{
    char *body = strdupf("{\"image\": \"%s\", \"command\": [\"/openhands/micromamba/bin/"
                         "micromamba\", \"run\", \"-n\", \"openhands\"], \"working_dir\": "
                         "\"/openhands/code/\", \"session_id\": \"%s\"%s%s}",
                         HARNESS_IMAGE, sid, extra ? ", " : "", extra ? extra : "");
    struct net_reply r;
    rr("POST", "/start", body, key_header(), NULL, &r);
    free(body);
    expect_status(&r, 200);
    json_t *rt = json_incref(r.r.json);
    net_reply_free(&r);
    engine_track(harness_eng, jstr(rt, "runtime_id"));
    return rt;
}

/* Poll GET /runtime/{id} as OpenHands does until pod_status is ready. */
static void wait_ready(const char *id)
{
    char *path = strdupf("/runtime/%s", id);
    double deadline = now_ms() + 60000;
    for (;;) {
        struct net_reply r;
        rr("GET", path, NULL, key_header(), NULL, &r);
        expect_status(&r, 200);
        assert_string_equal(jstr(r.r.json, "runtime_id"), id);
        const char *pod = jstr(r.r.json, "pod_status");
        bool ready = strcmp(pod, "ready") == 0;
        if (!ready && strcmp(pod, "pending") != 0 && strcmp(pod, "running") != 0)
            fail_msg("pod_status %s while starting: %s", pod, r.r.body);
        net_reply_free(&r);
        if (ready)
            break;
        if (now_ms() > deadline)
            fail_msg("runtime %s not ready within 60 s", id);
        sleep_ms(100);
    }
    free(path);
}

static json_t *execute(const char *url, const char *skey, const char *command, long want)
{
    char *u = strdupf("%s/execute_action", url);
    json_t *a = json_pack("{s:{s:s,s:{s:s,s:b},s:i}}", "action", "action", "run", "args", "command",
                          command, "blocking", 0, "timeout", 120);
    char *body = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    char *h = session_key_header(skey);
    struct net_reply r;
    rr("POST", u, body, h, NULL, &r);
    expect_status(&r, want);
    json_t *obs = json_incref(r.r.json);
    net_reply_free(&r);
    free(h);
    free(body);
    free(u);
    return obs;
}

static void lifecycle(const char *verb, const char *id, long want, struct net_reply *r)
{
    char *path = strdupf("/%s", verb);
    char *body = strdupf("{\"runtime_id\": \"%s\"}", id);
    rr("POST", path, body, key_header(), NULL, r);
    expect_status(r, want);
    free(body);
    free(path);
}

/* ---- tests ---- */

static void test_openhands_flow(void **state)
{
    struct net_reply r;
    /* _check_existing_runtime: none yet. */
    rr("GET", "/sessions/oh-flow-1", NULL, key_header(), NULL, &r);
    expect_status(&r, 404);
    net_reply_free(&r);

    json_t *rt = start_runtime("oh-flow-1", "\"environment\": {\"OH_VAR\": \"from-start\"}, "
                                            "\"resource_factor\": 1");
    const char *id = jstr(rt, "runtime_id");
    const char *key = jstr(rt, "session_api_key");
    const char *url = jstr(rt, "url");
    assert_true(is_hex(id, 16));
    assert_true(is_hex(key, 64));
    assert_string_equal(jstr(rt, "session_id"), "oh-flow-1");
    assert_string_equal(jstr(rt, "status"), "running");
    assert_true(json_is_object(json_object_get(rt, "work_hosts")));
    char *want_url = strdupf("http://127.0.0.1:%d/v1/sessions/%s", port, id);
    assert_string_equal(url, want_url);
    free(want_url);

    wait_ready(id);

    /* check_if_alive through the url, with the session's key alone. */
    char *alive = strdupf("%s/alive", url);
    char *skh = session_key_header(key);
    rr("GET", alive, NULL, skh, NULL, &r);
    expect_status(&r, 200);
    assert_string_equal(jstr(r.r.json, "status"), "ok");
    net_reply_free(&r);

    json_t *obs = execute(url, key, "echo hi", 200);
    assert_string_equal(jstr(obs, "content"), "hi");
    json_decref(obs);
    obs = execute(url, key, "echo $OH_VAR", 200);
    assert_string_equal(jstr(obs, "content"), "from-start");
    json_decref(obs);

    /* copy_to and list_files through the url. */
    char *up = strdupf("%s/upload_file?destination=/workspace/oh&recursive=false", url);
    const char *hs[] = {skh, NULL};
    struct net_req q = {.url = up,
                        .headers = hs,
                        .file_name = "f.txt",
                        .file_data = "from openhands\n",
                        .file_len = 15};
    net_do(&q, &r);
    expect_status(&r, 200);
    net_reply_free(&r);
    free(up);
    char *ls = strdupf("%s/list_files", url);
    rr("POST", ls, "{\"path\": \"/workspace/oh\"}", skh, NULL, &r);
    expect_status(&r, 200);
    assert_string_equal(json_string_value(json_array_get(r.r.json, 0)), "f.txt");
    net_reply_free(&r);
    free(ls);
    char *si = strdupf("%s/server_info", url);
    rr("GET", si, NULL, skh, NULL, &r);
    expect_status(&r, 200);
    assert_true(json_is_number(json_object_get(r.r.json, "uptime")));
    net_reply_free(&r);
    free(si);

    /* Everything went through the engine: the history has it. */
    char *apath = strdupf("/v1/sessions/%s/actions", id);
    struct reply a;
    api(harness_eng, "GET", apath, NULL, &a);
    assert_int_equal(a.status, 200);
    json_t *acts = json_object_get(a.json, "actions");
    assert_int_equal(json_array_size(acts), 4);
    assert_string_equal(jstr(json_array_get(acts, 0), "kind"), "list_files");
    assert_string_equal(jstr(json_array_get(acts, 1), "kind"), "upload");
    assert_string_equal(jstr(json_array_get(acts, 3), "summary"), "echo hi");
    reply_free(&a);
    free(apath);

    /* Attach finds it running, with the same key. */
    rr("GET", "/sessions/oh-flow-1", NULL, key_header(), NULL, &r);
    expect_status(&r, 200);
    assert_string_equal(jstr(r.r.json, "status"), "running");
    assert_string_equal(jstr(r.r.json, "runtime_id"), id);
    assert_string_equal(jstr(r.r.json, "session_api_key"), key);
    assert_string_equal(jstr(r.r.json, "url"), url);
    net_reply_free(&r);
    /* A second /start of the same session_id is a conflict. */
    rr("POST", "/start", "{\"session_id\": \"oh-flow-1\"}", key_header(), NULL, &r);
    expect_status(&r, 409);
    assert_non_null(strstr(jstr(r.r.json, "error.message"), id));
    net_reply_free(&r);

    /* Pause (close with keep_runtime_alive): not alive, and /sessions says paused. */
    lifecycle("pause", id, 200, &r);
    assert_string_equal(jstr(r.r.json, "status"), "paused");
    net_reply_free(&r);
    rr("GET", alive, NULL, skh, NULL, &r);
    expect_status(&r, 503);
    net_reply_free(&r);
    obs = execute(url, key, "echo no", 409);
    json_decref(obs);
    rr("GET", "/sessions/oh-flow-1", NULL, key_header(), NULL, &r);
    expect_status(&r, 200);
    assert_string_equal(jstr(r.r.json, "status"), "paused");
    net_reply_free(&r);

    /* Resume: ready again, the shell kept its state. */
    lifecycle("resume", id, 200, &r);
    assert_string_equal(jstr(r.r.json, "status"), "running");
    assert_string_equal(jstr(r.r.json, "pod_status"), "ready");
    net_reply_free(&r);
    wait_ready(id);
    obs = execute(url, key, "echo again $OH_VAR", 200);
    assert_string_equal(jstr(obs, "content"), "again from-start");
    json_decref(obs);
    /* Without --username/--plugins in its command: OpenHands' user and its default plugins. */
    obs = execute(url, key, "echo $USER $HOME $(id -u) $(whoami) $(id -un) ~", 200);
    assert_string_equal(jstr(obs, "content"),
                        "openhands /home/openhands 1000 openhands openhands /home/openhands");
    json_decref(obs);
    obs =
        execute(url, key, "python3 -c 'import agentskills; print(len(agentskills.__all__))'", 200);
    assert_string_equal(jstr(obs, "content"), "8");
    json_decref(obs);

    rr("GET", "/list", NULL, key_header(), NULL, &r);
    expect_status(&r, 200);
    json_t *list = json_object_get(r.r.json, "runtimes");
    bool listed = false;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x) listed |=
        strcmp(jstr(x, "runtime_id"), id) == 0 && strcmp(jstr(x, "session_id"), "oh-flow-1") == 0;
    assert_true(listed);
    net_reply_free(&r);

    /* Stop: the runtime is gone for good. */
    lifecycle("stop", id, 200, &r);
    assert_string_equal(jstr(r.r.json, "status"), "stopped");
    net_reply_free(&r);
    char *rpath = strdupf("/runtime/%s", id);
    rr("GET", rpath, NULL, key_header(), NULL, &r);
    expect_status(&r, 404);
    net_reply_free(&r);
    free(rpath);
    rr("GET", "/sessions/oh-flow-1", NULL, key_header(), NULL, &r);
    expect_status(&r, 404);
    net_reply_free(&r);
    rr("GET", alive, NULL, skh, NULL, &r);
    expect_status(&r, 409);
    net_reply_free(&r);
    struct reply s;
    char *spath = strdupf("/v1/sessions/%s", id);
    api(harness_eng, "GET", spath, NULL, &s);
    assert_string_equal(jstr(s.json, "state"), "deleted");
    reply_free(&s);
    free(spath);
    free(skh);
    free(alive);
    json_decref(rt);
}

static void test_auth(void **state)
{
    json_t *rt = start_runtime("oh-auth-1", NULL);
    const char *id = jstr(rt, "runtime_id");
    const char *url = jstr(rt, "url");
    char *skh = session_key_header(jstr(rt, "session_api_key"));
    wait_ready(id);
    struct net_reply r;

    /* The provisioner: X-API-Key, or the bearer token. */
    rr("GET", "/list", NULL, NULL, NULL, &r);
    expect_status(&r, 401);
    assert_string_equal(jstr(r.r.json, "error.code"), "unauthorized");
    assert_non_null(strstr(jstr(r.r.json, "error.message"), "X-API-Key"));
    net_reply_free(&r);
    rr("GET", "/list", NULL, "X-API-Key: rr-api-key-012345678", NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);
    char *tok_as_key = strdupf("X-API-Key: %s", token);
    rr("GET", "/list", NULL, tok_as_key, NULL, &r); /* a key is configured: the token is not it */
    expect_status(&r, 401);
    net_reply_free(&r);
    char *bearer = strdupf("Authorization: Bearer %s", token);
    rr("GET", "/list", NULL, bearer, NULL, &r);
    expect_status(&r, 200);
    net_reply_free(&r);
    rr("POST", "/start", "{\"session_id\": \"oh-never\"}", skh, NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);

    /* The session's key opens its action-server paths, and only those. */
    char *alive = strdupf("%s/alive", url);
    rr("GET", alive, NULL, skh, NULL, &r);
    expect_status(&r, 200);
    net_reply_free(&r);
    rr("GET", alive, NULL, "X-Session-API-Key: 00000000000000000000000000000000", NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);
    rr("GET", alive, NULL, NULL, NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);
    char *events = strdupf("%s/events", url);
    rr("GET", events, NULL, skh, NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);
    rr("DELETE", url, NULL, skh, NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);
    rr("GET", "/v1/sessions", NULL, skh, NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);
    char *other = strdupf("http://127.0.0.1:%d/v1/sessions/0123456789abcdef/alive", port);
    rr("GET", other, NULL, skh, NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);
    free(other);
    /* OpenHands sends its X-API-Key on the url too: that opens them as well. */
    rr("GET", alive, NULL, key_header(), NULL, &r);
    expect_status(&r, 200);
    net_reply_free(&r);
    rr("GET", events, NULL, key_header(), NULL, &r);
    expect_status(&r, 401);
    net_reply_free(&r);
    rr("GET", events, NULL, bearer, NULL, &r);
    expect_status(&r, 200);
    net_reply_free(&r);

    /* The unix socket needs nothing, for either API. */
    struct reply u;
    api(harness_eng, "GET", "/list", NULL, &u);
    assert_int_equal(u.status, 200);
    reply_free(&u);
    char *upath = strdupf("/v1/sessions/%s/alive", id);
    api(harness_eng, "GET", upath, NULL, &u);
    assert_int_equal(u.status, 200);
    reply_free(&u);
    free(upath);

    lifecycle("stop", id, 200, &r);
    net_reply_free(&r);
    free(events);
    free(alive);
    free(bearer);
    free(tok_as_key);
    free(skh);
    json_decref(rt);
}

static void test_bad_bodies(void **state)
{
    struct net_reply r;
    const char *bad_starts[] = {
        "{\"session_id\": ",
        "[]",
        "{}",
        "{\"session_id\": \"a/b\"}",
        "{\"session_id\": 7}",
        "{\"session_id\": \"oh-bad\", \"resource_factor\": 0}",
        "{\"session_id\": \"oh-bad\", \"resource_factor\": \"big\"}",
        "{\"session_id\": \"oh-bad\", \"environment\": [\"A=1\"]}",
        "{\"session_id\": \"oh-bad\", \"environment\": {\"1BAD\": \"x\"}}",
        "{\"session_id\": \"oh-bad\", \"image\": 5}",
    };
    for (size_t i = 0; i < sizeof(bad_starts) / sizeof(*bad_starts); i++) {
        rr("POST", "/start", bad_starts[i], key_header(), NULL, &r);
        if (r.r.status != 400)
            fprintf(stderr, "/start %s\n", bad_starts[i]);
        expect_status(&r, 400);
        assert_non_null(jstr(r.r.json, "error.message"));
        net_reply_free(&r);
    }
    /* Nothing was made of them. */
    rr("GET", "/sessions/oh-bad", NULL, key_header(), NULL, &r);
    expect_status(&r, 404);
    net_reply_free(&r);

    const char *verbs[] = {"/pause", "/resume", "/stop"};
    for (size_t i = 0; i < 3; i++) {
        rr("POST", verbs[i], "{}", key_header(), NULL, &r);
        expect_status(&r, 400);
        net_reply_free(&r);
        rr("POST", verbs[i], "{\"runtime_id\": ", key_header(), NULL, &r);
        expect_status(&r, 400);
        net_reply_free(&r);
        rr("POST", verbs[i], "{\"runtime_id\": \"ffffffffffffffff\"}", key_header(), NULL, &r);
        expect_status(&r, 404);
        net_reply_free(&r);
    }
    rr("GET", "/runtime/ffffffffffffffff", NULL, key_header(), NULL, &r);
    expect_status(&r, 404);
    net_reply_free(&r);
    rr("GET", "/image_exists", NULL, key_header(), NULL, &r);
    expect_status(&r, 400);
    net_reply_free(&r);
}

static void test_images_and_refusals(void **state)
{
    struct net_reply r;
    char *q = strdupf("/image_exists?image=%s", HARNESS_IMAGE);
    rr("GET", q, NULL, key_header(), NULL, &r);
    free(q);
    expect_status(&r, 200);
    assert_true(json_is_true(json_object_get(r.r.json, "exists")));
    assert_true(json_integer_value(jpath(r.r.json, "image.image_size_bytes")) > 0);
    assert_true(json_is_string(jpath(r.r.json, "image.upload_time")));
    net_reply_free(&r);
    /* A missing image is looked up, never pulled. */
    rr("GET", "/image_exists?image=paddock-test/no-such-image:none", NULL, key_header(), NULL, &r);
    expect_status(&r, 200);
    assert_true(json_is_false(json_object_get(r.r.json, "exists")));
    net_reply_free(&r);
    rr("GET", "/registry_prefix", NULL, key_header(), NULL, &r);
    expect_status(&r, 200);
    assert_string_equal(jstr(r.r.json, "registry_prefix"), "paddock");
    net_reply_free(&r);
    /* /build takes OpenHands' multipart form (built through: test_images.c) */
    rr("POST", "/build", "{}", key_header(), NULL, &r);
    expect_status(&r, 400);
    assert_string_equal(jstr(r.r.json, "error.code"), "bad_request");
    assert_non_null(strstr(jstr(r.r.json, "error.message"), "multipart/form-data"));
    net_reply_free(&r);
    rr("GET", "/build_status?build_id=x", NULL, key_header(), NULL, &r);
    expect_status(&r, 404);
    net_reply_free(&r);

    /* resource_factor scales the memory limit; VS Code and MCP have no meaning here. */
    json_t *rt = start_runtime("oh-factor-2", "\"resource_factor\": 2");
    const char *id = jstr(rt, "runtime_id");
    wait_ready(id);
    struct reply s;
    char *spath = strdupf("/v1/sessions/%s", id);
    api(harness_eng, "GET", spath, NULL, &s);
    json_t *mem = jpath(s.json, "options.limits.memory");
    if (!json_is_integer(mem) || json_integer_value(mem) != 4LL * 1024 * 1024 * 1024)
        fprintf(stderr, "session: %s\n", s.body);
    assert_int_equal(json_integer_value(mem), 4LL * 1024 * 1024 * 1024);
    reply_free(&s);
    free(spath);
    char *skh = session_key_header(jstr(rt, "session_api_key"));
    char *vs = strdupf("%s/vscode/connection_token", jstr(rt, "url"));
    rr("GET", vs, NULL, skh, NULL, &r);
    expect_status(&r, 200);
    assert_true(json_is_null(json_object_get(r.r.json, "token")));
    assert_non_null(json_object_get(r.r.json, "token"));
    net_reply_free(&r);
    char *mcp = strdupf("%s/update_mcp_server", jstr(rt, "url"));
    rr("POST", mcp, "[]", skh, NULL, &r);
    expect_status(&r, 501);
    net_reply_free(&r);
    lifecycle("stop", id, 200, &r);
    net_reply_free(&r);
    free(mcp);
    free(vs);
    free(skh);
    json_decref(rt);
}

/* The plugins and the user come from OpenHands' action-server command line; vscode, which
 * OpenHands adds by default, is dropped rather than refused. A root agent is weaker isolation:
 * [security] root_agent refuses it by default on this (the agents') channel. */
static char *start_body(const char *sid, const char *user, const char *uid)
{
    return strdupf(
        "{\"image\": \"%s\", \"session_id\": \"%s\", \"working_dir\": \"/openhands/code/\", "
        "\"command\": [\"/openhands/micromamba/bin/micromamba\", \"run\", \"-n\", \"openhands\", "
        "\"poetry\", \"run\", \"python\", \"-u\", \"-m\", "
        "\"openhands.runtime.action_execution_server\", \"60000\", \"--working-dir\", "
        "\"/workspace\", \"--plugins\", \"agent_skills\", \"jupyter\", \"vscode\", \"--username\", "
        "\"%s\", \"--user-id\", \"%s\"]}",
        HARNESS_IMAGE, sid, user, uid);
}

static void test_start_command(void **state)
{
    char *body = start_body("oh-root", "root", "0");
    struct net_reply r;
    rr("POST", "/start", body, key_header(), NULL, &r);
    free(body);
    expect_status(&r, 403);
    assert_non_null(strstr(jstr(r.r.json, "error.message"), "root_agent"));
    net_reply_free(&r);

    body = start_body("oh-cmd", "openhands", "1001");
    rr("POST", "/start", body, key_header(), NULL, &r);
    free(body);
    expect_status(&r, 200);
    json_t *rt = json_incref(r.r.json);
    net_reply_free(&r);
    const char *id = jstr(rt, "runtime_id");
    engine_track(harness_eng, id);
    wait_ready(id);
    char *path = strdupf("/v1/sessions/%s", id);
    json_t *sess = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    json_t *plugins = jpath(sess, "options.plugins");
    assert_int_equal(json_array_size(plugins), 2);
    assert_string_equal(json_string_value(json_array_get(plugins, 0)), "agent_skills");
    assert_string_equal(json_string_value(json_array_get(plugins, 1)), "jupyter");
    assert_string_equal(jstr(sess, "options.user"), "openhands");
    assert_int_equal(json_integer_value(jpath(sess, "options.user_id")), 1001);
    json_decref(sess);
    /* A uid the image does not know is named, and the workspace is its own. */
    json_t *obs = execute(jstr(rt, "url"), jstr(rt, "session_api_key"),
                          "echo $USER $(id -u) $(whoami) && touch /workspace/t && echo ok", 200);
    assert_string_equal(jstr(obs, "content"), "openhands 1001 openhands\nok");
    json_decref(obs);
    lifecycle("stop", id, 200, &r);
    net_reply_free(&r);
    json_decref(rt);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openhands_flow), cmocka_unit_test(test_auth),
        cmocka_unit_test(test_bad_bodies),     cmocka_unit_test(test_images_and_refusals),
        cmocka_unit_test(test_start_command),
    };
    int failed = cmocka_run_group_tests_name("remote_runtime", tests, group_setup, group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
