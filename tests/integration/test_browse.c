/* Integration tests of the operator's reads of a workspace (GET /v1/sessions/{id}/files and
 * .../files/content; `paddock files` and `paddock cat`): a listing bounded with the rest
 * counted, a file's bytes, a binary file described, escapes refused (outside the workspace,
 * "..", a symbolic link leaving it) with a clear error, and every read recorded as the
 * operator's (a lifecycle event naming the uid and the path) and never as one of the agent's
 * actions. One engine and one session for the group. */
#include "harness.h"

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

static char *sid;

static int group_teardown(void **state)
{
    if (sid)
        session_delete(harness_eng, sid);
    free(sid);
    sid = NULL;
    return harness_group_teardown_clean(state);
}

/* The group's session with its files, made on first use: d/a.txt, 30 files in many/, an ELF
 * header in bin.o, links out of the workspace, a name with an escape sequence. */
static const char *session(void)
{
    if (sid)
        return sid;
    json_t *s = session_new(harness_eng, NULL);
    sid = strdup(jstr(s, "id"));
    json_decref(s);
    json_t *o = session_run(harness_eng, sid,
                            "cd /workspace && mkdir -p d many && printf 'hello\\nworld\\n' > "
                            "d/a.txt && for i in $(seq 1 30); do : > many/f$i; done && "
                            "printf '\\177ELF\\002\\001\\001\\000\\000\\000' > bin.o && "
                            "ln -s /etc out && ln -s ../etc/passwd pw && ln -s d/a.txt in && "
                            "touch \"$(printf 'evil\\033]0;pwned\\007name')\" && echo ok");
    assert_non_null(strstr(jstr(o, "content"), "ok"));
    json_decref(o);
    return sid;
}

static json_t *get(const char *rest, long want)
{
    char *path = strdupf("/v1/sessions/%s/%s", session(), rest);
    json_t *j = api_json(harness_eng, "GET", path, NULL, want);
    free(path);
    assert_non_null(j);
    return j;
}

static json_t *entry(json_t *list, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(list, "entries"), i, e)
    {
        if (strcmp(jstr(e, "name"), name) == 0)
            return e;
    }
    return NULL;
}

/* A directory listed: types, sizes, link targets not followed; directories first. */
static void test_list(void **state)
{
    json_t *root = get("files", 200);
    assert_string_equal(jstr(root, "path"), "/workspace");
    assert_string_equal(jstr(json_array_get(json_object_get(root, "entries"), 0), "type"),
                        "directory");
    json_t *out = entry(root, "out");
    assert_non_null(out);
    assert_string_equal(jstr(out, "type"), "link");
    assert_string_equal(jstr(out, "target"), "/etc");
    assert_string_equal(jstr(entry(root, "bin.o"), "type"), "file");
    json_decref(root);
    json_t *d = get("files?path=d", 200);
    assert_string_equal(jstr(d, "path"), "/workspace/d");
    assert_int_equal(json_integer_value(json_object_get(entry(d, "a.txt"), "size")), 12);
    json_decref(d);
}

/* limit: at most that many entries, the rest counted. */
static void test_list_bounded(void **state)
{
    json_t *m = get("files?path=/workspace/many&limit=10", 200);
    assert_int_equal(json_array_size(json_object_get(m, "entries")), 10);
    assert_int_equal(json_integer_value(json_object_get(m, "total")), 30);
    assert_int_equal(json_integer_value(json_object_get(m, "omitted")), 20);
    json_decref(m);
}

/* A text file's bytes; a binary one described (no bytes) unless raw=1; a link inside the
 * workspace is read through. */
static void test_read(void **state)
{
    json_t *f = get("files/content?path=d/a.txt", 200);
    assert_string_equal(jstr(f, "content_base64"), "aGVsbG8Kd29ybGQK"); /* hello\nworld\n */
    assert_false(json_is_true(json_object_get(f, "binary")));
    json_decref(f);
    json_t *in = get("files/content?path=in", 200);
    assert_string_equal(jstr(in, "content_base64"), "aGVsbG8Kd29ybGQK");
    json_decref(in);
    json_t *b = get("files/content?path=/workspace/bin.o", 200);
    assert_true(json_is_true(json_object_get(b, "binary")));
    assert_string_equal(jstr(b, "kind"), "ELF executable or library");
    assert_int_equal(json_integer_value(json_object_get(b, "size")), 10);
    assert_null(json_object_get(b, "content_base64"));
    json_decref(b);
    json_t *raw = get("files/content?path=bin.o&raw=1", 200);
    assert_string_equal(jstr(raw, "content_base64"), "f0VMRgIBAQAAAA==");
    json_decref(raw);
}

static void assert_refused(const char *rest, const char *words)
{
    json_t *j = get(rest, 403);
    assert_string_equal(jstr(j, "error.code"), "forbidden");
    if (!strstr(jstr(j, "error.message"), words))
        fail_msg("%s: \"%s\" does not say \"%s\"", rest, jstr(j, "error.message"), words);
    json_decref(j);
}

/* Outside the workspace, "..", and links leaving it: refused, and said so. */
static void test_escapes_refused(void **state)
{
    assert_refused("files/content?path=/etc/passwd", "outside the workspace");
    assert_refused("files?path=/", "outside the workspace");
    assert_refused("files/content?path=/workspace/../etc/passwd", "leaves the workspace");
    assert_refused("files/content?path=../etc/passwd", "leaves the workspace");
    assert_refused("files/content?path=pw", "leaves the workspace");
    assert_refused("files/content?path=out/passwd", "leaves the workspace");
    assert_refused("files?path=out", "leaves the workspace");
    json_t *j = get("files/content?path=nosuch", 404);
    json_decref(j);
    j = get("files/content?path=d", 400);
    assert_non_null(strstr(jstr(j, "error.message"), "is a directory"));
    json_decref(j);
}

/* The reads are the operator's: lifecycle events naming who and what, and none of them among
 * the agent's actions (only the setup command is there). */
static void test_recorded_as_operator(void **state)
{
    json_t *f = get("files/content?path=d/a.txt", 200);
    json_decref(f);
    json_t *r = get("files/content?path=/etc/shadow", 403);
    json_decref(r);
    char *path = strdupf("/v1/sessions/%s/actions", session());
    json_t *acts = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(acts, "actions"), i, a)
    {
        if (strcmp(jstr(a, "kind"), "run") != 0)
            fail_msg("an operator read among the agent's actions: %s %s", jstr(a, "kind"),
                     jstr(a, "summary"));
    }
    assert_int_equal(json_array_size(json_object_get(acts, "actions")), 1);
    json_decref(acts);
    json_t *ev = session_events(harness_eng, session());
    char *who = strdupf("uid %u read d/a.txt: 12 bytes", (unsigned)getuid());
    char *refused = strdupf("uid %u read /etc/shadow: refused", (unsigned)getuid());
    bool saw_read = false, saw_refused = false;
    json_array_foreach(ev, i, a)
    {
        if (strcmp(jstr(a, "kind"), "operator") != 0)
            continue;
        saw_read |= strstr(jstr(a, "detail"), who) != NULL;
        saw_refused |= strstr(jstr(a, "detail"), refused) != NULL;
    }
    if (!saw_read || !saw_refused) {
        char *dump = json_dumps(ev, JSON_INDENT(1));
        fail_msg("no operator events \"%s\" and \"%s\" in %s", who, refused, dump);
    }
    free(who);
    free(refused);
    json_decref(ev);
}

/* paddock --socket S --state-dir D ARGS... */
static void cli(const char *const *args, struct proc_result *pr)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)harness_bin();
    argv[n++] = "--socket";
    argv[n++] = harness_eng->socket;
    argv[n++] = "--state-dir";
    argv[n++] = harness_eng->state_dir;
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    proc_run(argv, NULL, 120000, pr);
}

/* paddock files and cat: a listing with a hostile name neutralised, the bytes to a pipe, a
 * binary file described unless --raw, an escape refused with the engine's reason, and the
 * reads in `paddock show`'s history as the operator's. */
static void test_cli(void **state)
{
    struct proc_result pr;
    cli((const char *[]){"files", session(), NULL}, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "d/"));
    assert_non_null(strstr(pr.out, "out -> /etc"));
    assert_non_null(strstr(pr.out, "evil"));
    assert_null(strchr(pr.out, '\033'));
    assert_null(strchr(pr.out, '\007'));
    proc_result_free(&pr);
    cli((const char *[]){"files", "--limit", "5", session(), "many", NULL}, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "25 more not shown"));
    proc_result_free(&pr);
    cli((const char *[]){"cat", session(), "d/a.txt", NULL}, &pr);
    assert_int_equal(pr.status, 0);
    assert_string_equal(pr.out, "hello\nworld\n");
    proc_result_free(&pr);
    cli((const char *[]){"cat", session(), "bin.o", NULL}, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "ELF executable or library, 10 bytes (binary"));
    proc_result_free(&pr);
    cli((const char *[]){"cat", "--raw", session(), "bin.o", NULL}, &pr);
    assert_int_equal(pr.status, 0);
    assert_memory_equal(pr.out, "\177ELF\002\001\001", 7);
    proc_result_free(&pr);
    cli((const char *[]){"cat", session(), "out/passwd", NULL}, &pr);
    assert_int_equal(pr.status, 1);
    assert_non_null(strstr(pr.err, "leaves the workspace"));
    assert_string_equal(pr.out, "");
    proc_result_free(&pr);
    cli((const char *[]){"show", session(), NULL}, &pr);
    assert_int_equal(pr.status, 0);
    assert_non_null(strstr(pr.out, "operator"));
    assert_non_null(strstr(pr.out, "read bin.o"));
    proc_result_free(&pr);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_list_bounded),
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_escapes_refused),
        cmocka_unit_test(test_recorded_as_operator),
        cmocka_unit_test(test_cli),
    };
    int rc = cmocka_run_group_tests(tests, harness_group_setup, group_teardown);
    return rc || harness_teardown_failed;
}
