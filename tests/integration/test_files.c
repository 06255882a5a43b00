/* Integration tests of the file endpoints through the engine: upload, download, list_files,
 * the probes; each transfer recorded as an action (kind, summary, state, a small observation,
 * never the bytes) and published as "action" events; refusals: unknown session, a path the
 * agent may not touch (the executor's 403 relayed), bad bodies, a paused session, an archive
 * over the download limit. One engine (download limit 64 KiB) and one session for the group. */
#include "harness.h"
#include "netclient.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOWNLOAD_MAX "65536"

static char *sid; /* the group's session */

static int group_setup(void **state)
{
    harness_eng = engine_new();
    harness_eng->extra_env[0] = "PADDOCK_DOWNLOAD_MAX=" DOWNLOAD_MAX;
    if (engine_start(harness_eng) < 0) {
        engine_destroy(harness_eng);
        harness_eng = NULL;
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    if (sid)
        session_delete(harness_eng, sid);
    free(sid);
    sid = NULL;
    return harness_group_teardown_clean(state);
}

/* The group's session, made on first use. */
static const char *session(void)
{
    if (!sid) {
        json_t *s = session_new(harness_eng, NULL);
        sid = strdup(jstr(s, "id"));
        json_decref(s);
    }
    return sid;
}

/* A request to the engine's socket: path under /v1/sessions/{id}/. */
static void files_req(const char *id, const char *method, const char *rest, const char *body,
                      const char *file_name, const char *data, size_t len, struct net_reply *out)
{
    char *url = strdupf("http://localhost/v1/sessions/%s/%s", id, rest);
    struct net_req q = {.unix_socket = harness_eng->socket,
                        .method = method,
                        .url = url,
                        .body = body,
                        .file_name = file_name,
                        .file_data = data,
                        .file_len = len};
    net_do(&q, out);
    free(url);
    if (out->r.status < 0)
        fail_msg("%s %s: %s", method, rest, out->r.err);
}

static void upload(const char *id, const char *dest, const char *name, const char *data,
                   struct net_reply *out)
{
    char *rest = strdupf("upload_file?destination=%s", dest);
    files_req(id, "POST", rest, NULL, name, data, strlen(data), out);
    free(rest);
}

/* The session's newest action of a kind (caller decrefs), from GET .../actions. */
static json_t *newest_action(const char *id, const char *kind)
{
    char *path = strdupf("/v1/sessions/%s/actions", id);
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    free(path);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *a, *found = NULL;
    json_array_foreach(json_object_get(r.json, "actions"), i, a)
    {
        if (strcmp(jstr(a, "kind"), kind) == 0) {
            found = json_incref(a);
            break;
        }
    }
    reply_free(&r);
    if (!found)
        fail_msg("no %s action in session %s", kind, id);
    return found;
}

/* GET /v1/actions/{id}: the full object, with args and observation. */
static json_t *action_full(json_t *a)
{
    char *path = strdupf("/v1/actions/%lld", (long long)json_integer_value(jpath(a, "id")));
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    free(path);
    assert_int_equal(r.status, 200);
    json_t *full = json_incref(r.json);
    reply_free(&r);
    return full;
}

static size_t count_actions(const char *id)
{
    char *path = strdupf("/v1/sessions/%s/actions", id);
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    free(path);
    assert_int_equal(r.status, 200);
    size_t n = json_array_size(json_object_get(r.json, "actions"));
    reply_free(&r);
    return n;
}

/* Write bytes to a temp file; the path is malloc'd. */
static char *temp_file(const void *data, size_t len)
{
    char tmpl[] = "/tmp/paddock-files-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
    return strdup(tmpl);
}

/* ---- tests ---- */

static void test_upload_then_read(void **state)
{
    const char *id = session();
    struct sse *ev = sse_open(harness_eng->socket, "/v1/events");
    struct net_reply u;
    upload(id, "/workspace/up", "hello.txt", "hello from the host\n", &u);
    if (u.r.status != 200)
        fprintf(stderr, "upload → %ld %s\n", u.r.status, u.r.body);
    assert_int_equal(u.r.status, 200);
    assert_string_equal(jstr(u.r.json, "filename"), "hello.txt");
    assert_string_equal(jstr(u.r.json, "destination"), "/workspace/up");
    net_reply_free(&u);

    /* The agent sees the file. */
    struct reply r;
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    api(harness_eng, "POST", path,
        "{\"action\":{\"action\":\"read\",\"args\":{\"path\":\"/workspace/up/hello.txt\"}}}", &r);
    free(path);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(jstr(r.json, "content"), "hello from the host"));
    reply_free(&r);

    /* Recorded: kind, summary (the destination), done, and an observation without the bytes. */
    json_t *a = newest_action(id, "upload");
    assert_string_equal(jstr(a, "summary"), "/workspace/up");
    assert_string_equal(jstr(a, "state"), "done");
    json_t *full = action_full(a);
    assert_string_equal(jstr(full, "observation.path"), "/workspace/up/hello.txt");
    assert_int_equal(json_integer_value(jpath(full, "observation.status")), 200);
    assert_true(json_integer_value(jpath(full, "observation.size")) > 20);
    char *dump = json_dumps(full, JSON_COMPACT);
    assert_null(strstr(dump, "hello from the host"));
    free(dump);
    assert_string_equal(jstr(full, "args.destination"), "/workspace/up");

    /* Published as it runs and when it is done. */
    const char *aid_state[] = {"running", "done"};
    for (int i = 0; i < 2; i++) {
        json_t *e = sse_wait(ev, "action", "kind", "upload", "state", aid_state[i], 10000);
        assert_non_null(e);
        assert_int_equal(json_integer_value(json_object_get(e, "id")),
                         json_integer_value(json_object_get(a, "id")));
        assert_string_equal(jstr(e, "summary"), "/workspace/up");
    }
    json_decref(full);
    json_decref(a);
    sse_close(ev);
}

static void test_download(void **state)
{
    const char *id = session();
    struct net_reply u;
    upload(id, "/workspace/dl", "back.txt", "round trip\n", &u);
    assert_int_equal(u.r.status, 200);
    net_reply_free(&u);

    struct net_reply d;
    files_req(id, "GET", "download_files?path=/workspace/dl", NULL, NULL, NULL, 0, &d);
    if (d.r.status != 200)
        fprintf(stderr, "download → %ld %s\n", d.r.status, d.r.body);
    assert_int_equal(d.r.status, 200);
    assert_string_equal(d.content_type, "application/zip");
    assert_non_null(strstr(d.disposition, "dl.zip"));
    assert_true(d.r.len > 22);
    assert_memory_equal(d.r.body, "PK", 2);
    /* The archive holds the file with its content (Python's zipfile reads it). */
    char *zip = temp_file(d.r.body, d.r.len);
    char *argv[] = {"/usr/bin/python3", "-c",
                    "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); "
                    "sys.stdout.write(z.read('back.txt').decode())",
                    zip, NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 30000, &pr);
    if (pr.status != 0)
        fprintf(stderr, "zipfile: %s\n", pr.err);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "round trip\n");
    proc_result_free(&pr);
    unlink(zip);
    free(zip);

    json_t *a = newest_action(id, "download");
    assert_string_equal(jstr(a, "summary"), "/workspace/dl");
    assert_string_equal(jstr(a, "state"), "done");
    json_t *full = action_full(a);
    assert_int_equal(json_integer_value(jpath(full, "observation.size")), (json_int_t)d.r.len);
    assert_int_equal(json_integer_value(jpath(full, "observation.status")), 200);
    assert_string_equal(jstr(full, "args.path"), "/workspace/dl");
    json_decref(full);
    json_decref(a);
    net_reply_free(&d);
}

static void test_list_files(void **state)
{
    const char *id = session();
    struct net_reply u;
    upload(id, "/workspace/ls", "b.txt", "b\n", &u);
    assert_int_equal(u.r.status, 200);
    net_reply_free(&u);
    upload(id, "/workspace/ls/sub", "a.txt", "a\n", &u);
    assert_int_equal(u.r.status, 200);
    net_reply_free(&u);

    struct net_reply l;
    files_req(id, "POST", "list_files", "{\"path\": \"/workspace/ls\"}", NULL, NULL, 0, &l);
    assert_int_equal(l.r.status, 200);
    assert_true(json_is_array(l.r.json));
    assert_int_equal(json_array_size(l.r.json), 2);
    assert_string_equal(json_string_value(json_array_get(l.r.json, 0)), "sub/");
    assert_string_equal(json_string_value(json_array_get(l.r.json, 1)), "b.txt");
    net_reply_free(&l);

    json_t *a = newest_action(id, "list_files");
    assert_string_equal(jstr(a, "summary"), "/workspace/ls");
    assert_string_equal(jstr(a, "state"), "done");
    json_t *full = action_full(a);
    json_t *obs = json_object_get(full, "observation");
    assert_true(json_is_array(obs));
    assert_string_equal(json_string_value(json_array_get(obs, 1)), "b.txt");
    json_decref(full);
    json_decref(a);

    /* No path: the working directory. */
    files_req(id, "POST", "list_files", NULL, NULL, NULL, 0, &l);
    assert_int_equal(l.r.status, 200);
    bool has_ls = false;
    size_t i;
    json_t *v;
    json_array_foreach(l.r.json, i, v) has_ls |= strcmp(json_string_value(v), "ls/") == 0;
    assert_true(has_ls);
    net_reply_free(&l);
    a = newest_action(id, "list_files");
    assert_string_equal(jstr(a, "summary"), "/workspace");
    json_decref(a);
}

static void test_probes(void **state)
{
    const char *id = session();
    size_t before = count_actions(id);
    struct net_reply p;
    files_req(id, "GET", "alive", NULL, NULL, NULL, 0, &p);
    assert_int_equal(p.r.status, 200);
    assert_string_equal(jstr(p.r.json, "status"), "ok");
    net_reply_free(&p);
    files_req(id, "GET", "server_info", NULL, NULL, NULL, 0, &p);
    assert_int_equal(p.r.status, 200);
    assert_true(json_is_number(json_object_get(p.r.json, "uptime")));
    assert_true(json_is_object(json_object_get(p.r.json, "resources")));
    net_reply_free(&p);
    /* Probes are not actions. */
    assert_int_equal(count_actions(id), before);
}

static void test_unknown_session(void **state)
{
    struct net_reply r;
    const char *rests[] = {"upload_file?destination=/workspace", "download_files?path=/workspace",
                           "list_files", "alive", "server_info"};
    for (size_t i = 0; i < sizeof(rests) / sizeof(*rests); i++) {
        bool up = i == 0;
        files_req("0123456789abcdef", i == 0 || i == 2 ? "POST" : "GET", rests[i],
                  i == 2 ? "{}" : NULL, up ? "x.txt" : NULL, up ? "x" : NULL, up ? 1 : 0, &r);
        assert_int_equal(r.r.status, 404);
        assert_string_equal(jstr(r.r.json, "error.code"), "not_found");
        net_reply_free(&r);
    }
}

static void test_outside_workspace(void **state)
{
    const char *id = session();
    /* /etc is root's: the agent may not write there, and the executor says so. */
    struct net_reply u;
    upload(id, "/etc/paddock-test", "x.txt", "nope\n", &u);
    assert_int_equal(u.r.status, 403);
    assert_non_null(strstr(jstr(u.r.json, "detail"), "Permission denied"));
    assert_non_null(strstr(jstr(u.r.json, "detail"), "/etc/paddock-test"));
    net_reply_free(&u);
    json_t *a = newest_action(id, "upload");
    assert_string_equal(jstr(a, "summary"), "/etc/paddock-test");
    assert_string_equal(jstr(a, "state"), "failed");
    assert_non_null(strstr(jstr(a, "error"), "executor answered 403"));
    assert_non_null(strstr(jstr(a, "error"), "Permission denied"));
    json_t *full = action_full(a);
    assert_int_equal(json_integer_value(jpath(full, "observation.status")), 403);
    json_decref(full);
    json_decref(a);

    /* /root is 0700 root's: no download for the agent. */
    struct net_reply d;
    files_req(id, "GET", "download_files?path=/root", NULL, NULL, NULL, 0, &d);
    assert_int_equal(d.r.status, 403);
    assert_non_null(strstr(jstr(d.r.json, "detail"), "/root"));
    net_reply_free(&d);
    a = newest_action(id, "download");
    assert_string_equal(jstr(a, "summary"), "/root");
    assert_string_equal(jstr(a, "state"), "failed");
    json_decref(a);

    /* A relative destination: the executor's 400. */
    upload(id, "relative/dir", "x.txt", "x", &u);
    assert_int_equal(u.r.status, 400);
    assert_string_equal(jstr(u.r.json, "detail"), "Destination must be an absolute path");
    net_reply_free(&u);
}

static void test_bad_requests(void **state)
{
    const char *id = session();
    size_t before = count_actions(id);
    struct net_reply r;
    files_req(id, "POST", "list_files", "{\"path\": ", NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 400);
    assert_string_equal(jstr(r.r.json, "error.code"), "invalid_json");
    net_reply_free(&r);
    files_req(id, "POST", "list_files", "[\"/workspace\"]", NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 400);
    net_reply_free(&r);
    files_req(id, "POST", "list_files", "{\"path\": 7}", NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 400);
    assert_non_null(strstr(jstr(r.r.json, "error.message"), "\"path\""));
    net_reply_free(&r);
    files_req(id, "GET", "download_files", NULL, NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 400);
    assert_non_null(strstr(jstr(r.r.json, "error.message"), "path"));
    net_reply_free(&r);
    /* An upload that is no multipart body. */
    files_req(id, "POST", "upload_file?destination=/workspace", "{}", NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 400);
    net_reply_free(&r);
    /* Refused before anything was recorded, but the last one, which the executor refused. */
    assert_int_equal(count_actions(id), before + 1);
    json_t *a = newest_action(id, "upload");
    assert_string_equal(jstr(a, "state"), "failed");
    json_decref(a);
}

static void test_not_ready(void **state)
{
    const char *id = session();
    char *path = strdupf("/v1/sessions/%s/pause", id);
    struct reply p;
    api(harness_eng, "POST", path, "", &p);
    assert_int_equal(p.status, 200);
    reply_free(&p);
    free(path);
    size_t before = count_actions(id);
    struct net_reply r;
    upload(id, "/workspace", "x.txt", "x", &r);
    assert_int_equal(r.r.status, 409);
    assert_string_equal(jstr(r.r.json, "error.code"), "session_paused");
    assert_non_null(strstr(jstr(r.r.json, "error.message"), "paused"));
    net_reply_free(&r);
    files_req(id, "GET", "download_files?path=/workspace", NULL, NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 409);
    net_reply_free(&r);
    files_req(id, "POST", "list_files", "{}", NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 409);
    net_reply_free(&r);
    files_req(id, "GET", "alive", NULL, NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 503);
    net_reply_free(&r);
    assert_int_equal(count_actions(id), before);
    path = strdupf("/v1/sessions/%s/resume", id);
    api(harness_eng, "POST", path, "", &p);
    assert_int_equal(p.status, 200);
    reply_free(&p);
    free(path);
    files_req(id, "POST", "list_files", "{}", NULL, NULL, 0, &r);
    assert_int_equal(r.r.status, 200);
    net_reply_free(&r);
}

static void test_download_too_large(void **state)
{
    const char *id = session();
    /* Random bytes do not compress: the archive outgrows the limit of 64 KiB. */
    json_t *obs = session_run(harness_eng, id,
                              "mkdir -p /workspace/big && head -c 300000 /dev/urandom > "
                              "/workspace/big/r.bin && echo made");
    assert_non_null(strstr(jstr(obs, "content"), "made"));
    json_decref(obs);
    struct net_reply d;
    files_req(id, "GET", "download_files?path=/workspace/big", NULL, NULL, NULL, 0, &d);
    assert_int_equal(d.r.status, 413);
    assert_string_equal(jstr(d.r.json, "error.code"), "too_large");
    assert_non_null(strstr(jstr(d.r.json, "error.message"), "/workspace/big"));
    assert_non_null(strstr(jstr(d.r.json, "error.message"), DOWNLOAD_MAX));
    net_reply_free(&d);
    json_t *a = newest_action(id, "download");
    assert_string_equal(jstr(a, "summary"), "/workspace/big");
    assert_string_equal(jstr(a, "state"), "failed");
    assert_non_null(strstr(jstr(a, "error"), "download limit"));
    json_decref(a);
    /* The session is fine afterwards. */
    files_req(id, "GET", "download_files?path=/workspace/dl", NULL, NULL, NULL, 0, &d);
    assert_int_equal(d.r.status, 200);
    net_reply_free(&d);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upload_then_read),   cmocka_unit_test(test_download),
        cmocka_unit_test(test_list_files),         cmocka_unit_test(test_probes),
        cmocka_unit_test(test_unknown_session),    cmocka_unit_test(test_outside_workspace),
        cmocka_unit_test(test_bad_requests),       cmocka_unit_test(test_not_ready),
        cmocka_unit_test(test_download_too_large),
    };
    int failed = cmocka_run_group_tests_name("files", tests, group_setup, group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
