/* GET /v1/sessions/{id}/changes against the real daemon: files an action added, changed and
 * deleted in the container's own filesystem and in each kind of workspace (part of the
 * container, an overlay over a host directory, a bind-mounted host directory, a volume), each
 * with its kind, where it is and how it was seen; what Docker makes for the engine left out;
 * hostile names kept as bytes (clients sanitize); the changes kept at delete; 404 and 409. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AGENT_UID 1000
#define MAX_TMP 8

static char *tmp_dirs[MAX_TMP];
static int n_tmp;
static char *test_image; /* committed by the first test; removed at the end */

static char *tmpdir(void)
{
    char *t = strdupf("/tmp/paddock-chg-XXXXXX");
    assert_non_null(mkdtemp(t));
    assert_true(n_tmp < MAX_TMP);
    tmp_dirs[n_tmp++] = t;
    return t;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static int group_teardown(void **state)
{
    for (int i = 0; i < n_tmp; i++) {
        nftw(tmp_dirs[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(tmp_dirs[i]);
    }
    n_tmp = 0;
    /* The containers first: an image a container still uses would only lose its tag. */
    int rc = harness_group_teardown_clean(state);
    if (test_image) {
        char *p = strdupf("/v1.41/images/%s?force=1", test_image);
        struct reply r;
        docker("DELETE", p, &r);
        if (r.status != 200 && r.status != 404)
            fprintf(stderr, "cleanup: DELETE image %s: HTTP %ld\n", test_image, r.status);
        reply_free(&r);
        free(p);
        free(test_image);
        test_image = NULL;
    }
    return rc;
}

/* /bin/sh -c CMD, asserting exit 0. */
static void sh(const char *cmd)
{
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    struct proc_result r;
    proc_run(argv, NULL, 60000, &r);
    if (r.status != 0)
        fprintf(stderr, "`%s` → %d\nstdout: %s\nstderr: %s\n", cmd, r.status, r.out, r.err);
    assert_int_equal(r.status, 0);
    proc_result_free(&r);
}

static void run_ok(const char *id, const char *command)
{
    json_t *obs = session_run(harness_eng, id, command);
    json_t *code = jpath(obs, "extras.metadata.exit_code");
    if (json_integer_value(code) != 0)
        fprintf(stderr, "`%s`: %s\n", command, jstr(obs, "content"));
    assert_int_equal(json_integer_value(code), 0);
    json_decref(obs);
}

/* An OpenHands file action; returns its action id (from the session's newest action). */
static long long file_action(const char *id, json_t *action)
{
    json_t *req = json_pack("{s:o}", "action", action);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(harness_eng, "POST", path, body, &r);
    assert_int_equal(r.status, 200);
    assert_string_not_equal(jstr(r.json, "observation"), "error");
    /* what the engine asks of the executor for its record never reaches the agent */
    assert_null(json_object_get(r.json, "paddock_diff"));
    reply_free(&r);
    free(path);
    free(body);
    path = strdupf("/v1/sessions/%s/actions?limit=1", id);
    api(harness_eng, "GET", path, NULL, &r);
    assert_int_equal(r.status, 200);
    long long aid =
        json_integer_value(json_object_get(json_array_get(jpath(r.json, "actions"), 0), "id"));
    reply_free(&r);
    free(path);
    assert_true(aid > 0);
    return aid;
}

/* GET changes; asserts the status; returns the reply (caller decrefs). */
static json_t *changes(const char *id, long status)
{
    char *path = strdupf("/v1/sessions/%s/changes", id);
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    if (r.status != status)
        fprintf(stderr, "GET %s → %ld %s\n", path, r.status, r.body);
    assert_int_equal(r.status, status);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    free(path);
    return j;
}

static json_t *entry(json_t *reply, const char *path)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(reply, "changes"), i, e)
    {
        if (strcmp(jstr(e, "path"), path) == 0)
            return e;
    }
    return NULL;
}

/* The entry for path is there with this kind, place and source. */
static json_t *expect(json_t *reply, const char *path, const char *kind, const char *where,
                      const char *from)
{
    json_t *e = entry(reply, path);
    if (!e) {
        char *all = json_dumps(reply, JSON_INDENT(1));
        fprintf(stderr, "no %s in %s\n", path, all);
        free(all);
    }
    assert_non_null(e);
    assert_string_equal(jstr(e, "kind"), kind);
    assert_string_equal(jstr(e, "where"), where);
    assert_string_equal(jstr(e, "from"), from);
    return e;
}

/* The container's filesystem and a workspace inside it: Docker's diff sees both. Files that
 * exist in the image are needed for "changed" and "deleted": a first session makes them and is
 * committed (labelled paddock.test=1) as the image of the second. */
static void test_container_and_image_workspace(void **state)
{
    (void)state;
    json_t *a = session_new(harness_eng, NULL);
    run_ok(jstr(a, "id"),
           "mkdir -p /home/agent/t && echo old > /home/agent/t/mod && echo bye > "
           "/home/agent/t/del && echo w > /workspace/mod && echo w > /workspace/del");
    test_image = strdupf("paddock/test-changes:%d", (int)getpid());
    char *p = strdupf("/v1.41/commit?container=%s&repo=paddock/test-changes&tag=%d",
                      jstr(a, "container_id"), (int)getpid());
    struct reply r;
    docker_body("POST", p, "{\"Labels\": {\"paddock.test\": \"1\"}}", &r);
    assert_int_equal(r.status, 201);
    reply_free(&r);
    free(p);
    session_delete(harness_eng, jstr(a, "id"));
    json_decref(a);

    char *body = strdupf("{\"image\": \"%s\"}", test_image);
    json_t *s = session_new(harness_eng, body);
    free(body);
    const char *id = jstr(s, "id");
    json_t *c = changes(id, 200);
    assert_null(entry(c, "/home/agent/t/mod"));             /* nothing yet */
    assert_null(entry(c, "/opt/paddock/paddock-executor")); /* Docker's, for the engine */
    assert_null(entry(c, "/usr/sbin/docker-init"));
    json_decref(c);

    run_ok(id,
           "echo more >> /home/agent/t/mod && rm /home/agent/t/del && echo n > "
           "/home/agent/t/new && echo x >> /workspace/mod && rm /workspace/del && echo n > "
           "/workspace/new && touch \"$(printf '/tmp/evil\\033]0;pwned\\007\\342\\200\\256txt')\"");
    long long edit =
        file_action(id, json_pack("{s:s,s:{s:s,s:s,s:s}}", "action", "edit", "args", "path",
                                  "/workspace/e.py", "command", "create", "file_text", "x = 1\n"));

    c = changes(id, 200);
    assert_string_equal(jstr(c, "source"), "live");
    assert_string_equal(jstr(c, "container_source"), "docker diff");
    assert_string_equal(jstr(c, "workspace_type"), "image");
    assert_string_equal(jstr(c, "workspace_source"), "docker diff");
    assert_true(json_is_true(json_object_get(c, "workspace_exact")));
    assert_true(json_is_false(json_object_get(c, "truncated")));
    assert_int_equal(json_integer_value(json_object_get(c, "opaque_actions")), 1);
    expect(c, "/home/agent/t/mod", "changed", "container", "diff");
    expect(c, "/home/agent/t/del", "deleted", "container", "diff");
    expect(c, "/home/agent/t/new", "added", "container", "diff");
    expect(c, "/workspace/mod", "changed", "workspace", "diff");
    expect(c, "/workspace/del", "deleted", "workspace", "diff");
    expect(c, "/workspace/new", "added", "workspace", "diff");
    json_t *e = expect(c, "/workspace/e.py", "added", "workspace", "diff");
    assert_int_equal(json_integer_value(json_object_get(e, "action_id")), edit);
    /* The name as the sandbox wrote it (bytes in JSON): clients sanitize what they show. */
    expect(c, "/tmp/evil\x1b]0;pwned\x07\xe2\x80\xaetxt", "added", "container", "diff");
    /* Parents of changes are not changes of their own. */
    assert_null(entry(c, "/home/agent/t"));
    assert_null(entry(c, "/home"));
    assert_null(entry(c, "/workspace"));
    size_t live = json_array_size(json_object_get(c, "changes"));
    json_decref(c);

    /* The container goes; its changes stay. */
    session_delete(harness_eng, id);
    c = changes(id, 200);
    assert_string_equal(jstr(c, "source"), "stored");
    assert_int_equal(json_array_size(json_object_get(c, "changes")), live);
    expect(c, "/home/agent/t/del", "deleted", "container", "diff");
    e = expect(c, "/workspace/e.py", "added", "workspace", "diff");
    assert_int_equal(json_integer_value(json_object_get(e, "action_id")), edit);
    json_decref(c);
    json_decref(s);
}

/* An overlay workspace: its upper dir says exactly what was added, changed and deleted. */
static void test_overlay_workspace(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char *cmd = strdupf("mkdir %s/src && echo a > %s/a.txt && echo c > %s/c.txt && echo d > "
                        "%s/src/d.txt && chown -R %d %s",
                        dir, dir, dir, dir, AGENT_UID, dir);
    sh(cmd);
    free(cmd);
    char *body = strdupf("{\"workspace\": {\"source\": \"%s\", \"mode\": \"overlay\"}}", dir);
    json_t *s = session_new(harness_eng, body);
    free(body);
    const char *id = jstr(s, "id");
    run_ok(id, "echo changed > a.txt && echo new > b.txt && rm c.txt && mkdir e && touch e/f && "
               "rm -r src && mkdir src && echo n > src/n");
    json_t *c = changes(id, 200);
    assert_string_equal(jstr(c, "workspace_type"), "overlay");
    assert_string_equal(jstr(c, "workspace_source"), "overlay upper dir");
    assert_true(json_is_true(json_object_get(c, "workspace_exact")));
    expect(c, "/workspace/a.txt", "changed", "workspace", "overlay");
    expect(c, "/workspace/b.txt", "added", "workspace", "overlay");
    expect(c, "/workspace/c.txt", "deleted", "workspace", "overlay");
    expect(c, "/workspace/e", "added", "workspace", "overlay");
    expect(c, "/workspace/e/f", "added", "workspace", "overlay");
    /* a directory removed and made again hides what it had */
    expect(c, "/workspace/src", "changed", "workspace", "overlay");
    expect(c, "/workspace/src/d.txt", "deleted", "workspace", "overlay");
    expect(c, "/workspace/src/n", "added", "workspace", "overlay");
    json_decref(c);
    /* The upper dir goes with the session: what it showed is kept. */
    session_delete(harness_eng, id);
    c = changes(id, 200);
    assert_string_equal(jstr(c, "source"), "stored");
    expect(c, "/workspace/c.txt", "deleted", "workspace", "overlay");
    json_decref(c);
    json_decref(s);
}

/* A bind-mounted host directory: what was born or modified since the session started;
 * deletions cannot be seen, and the reply says so. */
static void test_bind_workspace(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char *cmd = strdupf("echo a > %s/a.txt && echo c > %s/c.txt && echo k > %s/keep.txt && "
                        "chown -R %d %s",
                        dir, dir, dir, AGENT_UID, dir);
    sh(cmd);
    free(cmd);
    char *body = strdupf("{\"workspace\": \"%s\"}", dir);
    json_t *s = session_new(harness_eng, body);
    free(body);
    const char *id = jstr(s, "id");
    run_ok(id, "echo changed > a.txt && echo new > b.txt && rm c.txt && mkdir e && touch e/f");
    long long w = file_action(id, json_pack("{s:s,s:{s:s,s:s}}", "action", "write", "args", "path",
                                            "w.txt", "content", "hi"));
    json_t *c = changes(id, 200);
    assert_string_equal(jstr(c, "workspace_type"), "bind");
    assert_string_equal(jstr(c, "workspace_source"), "host dir timestamps and recorded actions");
    assert_true(json_is_false(json_object_get(c, "workspace_exact")));
    expect(c, "/workspace/a.txt", "changed", "workspace", "scan");
    expect(c, "/workspace/b.txt", "added", "workspace", "scan");
    expect(c, "/workspace/e", "added", "workspace", "scan");
    expect(c, "/workspace/e/f", "added", "workspace", "scan");
    json_t *e = expect(c, "/workspace/w.txt", "added", "workspace", "scan");
    assert_int_equal(json_integer_value(json_object_get(e, "action_id")), w);
    assert_null(entry(c, "/workspace/keep.txt"));
    assert_null(entry(c, "/workspace/c.txt")); /* gone: a timestamp walk cannot see it */
    char *notes = json_dumps(json_object_get(c, "notes"), 0);
    assert_non_null(strstr(notes, "deleted files cannot be seen"));
    assert_non_null(strstr(notes, "commands are opaque"));
    free(notes);
    json_decref(c);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* A workspace the engine cannot read (an anonymous volume on a read-only root): the recorded
 * actions only, and the reply says so. */
static void test_volume_workspace(void **state)
{
    (void)state;
    json_t *s = session_new(harness_eng, "{\"read_only\": true}");
    const char *id = jstr(s, "id");
    long long w = file_action(id, json_pack("{s:s,s:{s:s,s:s}}", "action", "write", "args", "path",
                                            "/workspace/w.txt", "content", "hi"));
    long long t = file_action(id, json_pack("{s:s,s:{s:s,s:s}}", "action", "write", "args", "path",
                                            "/tmp/t.txt", "content", "hi"));
    /* a view changes nothing */
    file_action(id, json_pack("{s:s,s:{s:s,s:s}}", "action", "edit", "args", "path",
                              "/workspace/w.txt", "command", "view"));
    json_t *c = changes(id, 200);
    assert_string_equal(jstr(c, "workspace_type"), "anonymous_volume");
    assert_string_equal(jstr(c, "workspace_source"), "recorded actions");
    assert_true(json_is_false(json_object_get(c, "workspace_exact")));
    json_t *e = expect(c, "/workspace/w.txt", "changed", "workspace", "action");
    assert_int_equal(json_integer_value(json_object_get(e, "action_id")), w);
    /* /tmp is a tmpfs on a read-only root: Docker's diff does not see it */
    e = expect(c, "/tmp/t.txt", "changed", "container", "action");
    assert_int_equal(json_integer_value(json_object_get(e, "action_id")), t);
    assert_int_equal(json_array_size(json_object_get(c, "changes")), 2);
    json_decref(c);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* GET /v1/actions/{aid}: the action whole (caller decrefs). */
static json_t *action_whole(long long aid)
{
    char *path = strdupf("/v1/actions/%lld", aid);
    json_t *a = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    return a;
}

/* A file action on d.txt (kind, then its other string arguments as key, value pairs). */
static long long d_action(const char *id, json_t *args)
{
    json_object_set_new(args, "path", json_string("/workspace/d.txt"));
    json_t *kind = json_object_get(args, "kind");
    json_t *action = json_pack("{s:O,s:o}", "action", kind, "args", args);
    json_object_del(args, "kind");
    return file_action(id, action);
}

/* A write's observation says only "wrote": the engine records what it changed (the
 * executor's diff of the old text and the new) as the action's "diff", and the agent's
 * observation stays OpenHands' own. */
static void test_write_diff_recorded(void **state)
{
    (void)state;
    json_t *s = session_new(harness_eng, "{}");
    const char *id = jstr(s, "id");
    long long w1 = d_action(id, json_pack("{s:s,s:s}", "kind", "write", "content", "one\ntwo"));
    long long w2 = d_action(id, json_pack("{s:s,s:s}", "kind", "write", "content", "one\nTWO"));
    long long e = d_action(id, json_pack("{s:s,s:s,s:s,s:s}", "kind", "edit", "command",
                                         "str_replace", "old_str", "one", "new_str", "ONE"));
    json_t *a = action_whole(w1);
    assert_string_equal(jstr(a, "diff"),
                        "--- /workspace/d.txt\n+++ /workspace/d.txt\n@@ -0,0 +1,2 @@\n+one\n+two");
    json_decref(a);
    a = action_whole(w2);
    assert_string_equal(jstr(a, "diff"),
                        "--- /workspace/d.txt\n+++ /workspace/d.txt\n@@ -2 +2 @@\n-two\n+TWO");
    assert_string_equal(jstr(a, "observation.observation"), "write");
    assert_null(jpath(a, "observation.paddock_diff"));
    json_decref(a);
    /* an edit's diff stays in its observation, where OpenHands puts it */
    a = action_whole(e);
    assert_null(json_object_get(a, "diff"));
    assert_non_null(strstr(jstr(a, "observation.extras.diff"), "-one\n+ONE"));
    json_decref(a);
    session_delete(harness_eng, id);
    json_decref(s);
}

static void test_refusals(void **state)
{
    (void)state;
    json_t *c = changes("0123456789abcdef", 404);
    assert_string_equal(jstr(c, "error.code"), "not_found");
    json_decref(c);

    /* A container removed behind the engine's back: nothing was kept, and the reply says so. */
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    char *p = strdupf("/v1.41/containers/%s?force=1", jstr(s, "container_id"));
    struct reply r;
    docker("DELETE", p, &r);
    assert_int_equal(r.status, 204);
    reply_free(&r);
    free(p);
    json_decref(session_wait_state(harness_eng, id, "error", 20000));
    c = changes(id, 409);
    assert_string_equal(jstr(c, "error.code"), "conflict");
    assert_non_null(strstr(jstr(c, "error.message"), "no changes were kept"));
    json_decref(c);
    json_decref(s);
}

/* The executor names a non-root agent in /etc/passwd and /etc/group at start: not the
 * agent's doing (it cannot write them), so not a change of the session. */
static void test_user_db_not_a_change(void **state)
{
    (void)state;
    json_t *s = session_new(harness_eng, "{\"run_as_openhands\": true, \"user_id\": 1234}");
    const char *id = jstr(s, "id");
    run_ok(id, "test \"$(whoami)\" = openhands");
    json_t *c = changes(id, 200);
    assert_null(entry(c, "/etc/passwd"));
    assert_null(entry(c, "/etc/group"));
    assert_null(entry(c, "/etc"));
    json_decref(c);
    session_delete(harness_eng, id);
    json_decref(s);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_container_and_image_workspace),
        cmocka_unit_test(test_overlay_workspace),
        cmocka_unit_test(test_bind_workspace),
        cmocka_unit_test(test_volume_workspace),
        cmocka_unit_test(test_write_diff_recorded),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_user_db_not_a_change),
    };
    int failed = cmocka_run_group_tests_name("changes", tests, harness_group_setup_unsupervised,
                                             group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
