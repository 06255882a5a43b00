/* Secrets at rest and one rule for credential-named variables (issue 15, item 9): the store
 * (the SQLite file and its WAL, bytes included) never holds an env value, before or after the
 * delete; a fresh sandbox and a warm one from the pool both keep GITHUB_TOKEN from the agent's
 * shell (and a fresh one from its container), the create reply says it was withheld and why,
 * env_allow lets it through in both, and a stopped-then-resumed session still has FOO. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values distinct enough to grep the store's bytes for. The commands print them with '-'
 * turned to '+', so the recorded output never holds them either. */
#define FOO_VALUE "bar-53c9e1a7"
#define TOKEN_VALUE "x-tok-8d2f71b4"
#define ENV_BODY "\"env\": {\"FOO\": \"" FOO_VALUE "\", \"GITHUB_TOKEN\": \"" TOKEN_VALUE "\"}"
#define SHOW_ENV "echo \"F=${FOO//-/+} G=${GITHUB_TOKEN+set}${GITHUB_TOKEN//-/+}\""
#define SEES_FOO_ONLY "F=bar+53c9e1a7 G="
#define SEES_BOTH "F=bar+53c9e1a7 G=setx+tok+8d2f71b4"

static json_t *get(const char *path)
{
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    if (r.status != 200)
        fail_msg("GET %s: %ld %s", path, r.status, r.body ? r.body : r.err);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    return j;
}

/* The pool's one sandbox is ready and idle. */
static void wait_pool_ready(void)
{
    double deadline = now_ms() + 90000;
    for (;;) {
        json_t *p = get("/v1/pool");
        json_t *e = json_array_get(json_object_get(p, "pools"), 0);
        long ready = (long)json_integer_value(json_object_get(e, "ready"));
        long starting = (long)json_integer_value(json_object_get(e, "starting"));
        json_decref(p);
        if (ready == 1 && starting == 0)
            return;
        if (now_ms() > deadline)
            fail_msg("pool: %ld ready, %ld starting; want 1 ready", ready, starting);
        sleep_ms(200);
    }
}

/* The container id of the pool's ready sandbox. */
static char *pooled_container(void)
{
    json_t *all = get("/v1/sessions?pool=1");
    size_t i;
    json_t *s;
    char *cid = NULL;
    json_array_foreach(json_object_get(all, "sessions"), i, s)
    {
        if (json_is_true(json_object_get(s, "pooled")) && jstr(s, "container_id"))
            cid = strdup(jstr(s, "container_id"));
    }
    json_decref(all);
    assert_non_null(cid);
    return cid;
}

static bool file_holds(const char *path, const char *needle)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t cap = 1 << 16, len = 0, n;
    char *data = malloc(cap);
    assert_non_null(data);
    while ((n = fread(data + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            cap *= 2;
            data = realloc(data, cap);
            assert_non_null(data);
        }
    }
    fclose(f);
    bool found = memmem(data, len, needle, strlen(needle)) != NULL;
    free(data);
    return found;
}

/* Neither value anywhere in the store: its rows through SQLite, then the bytes of the
 * database file and of its WAL once the WAL is checkpointed into the file. */
static void store_holds_no_value(void)
{
    char *db = strdupf("%s/paddock.db", harness_eng->state_dir);
    char *wal = strdupf("%s-wal", db);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h,
                                        "SELECT count(*) FROM sessions WHERE instr(config, ?1) OR "
                                        "instr(config, ?2)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, FOO_VALUE, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, TOKEN_VALUE, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    if (sqlite3_column_int(st, 0) != 0)
        fail_msg("sessions.config holds an env value in %d rows", sqlite3_column_int(st, 0));
    sqlite3_finalize(st);
    /* The engine may be reading: retry the checkpoint until it moved every frame. */
    double deadline = now_ms() + 10000;
    for (;;) {
        int log = -1, done = -2;
        int rc = sqlite3_wal_checkpoint_v2(h, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
        if (rc == SQLITE_OK && log == done)
            break;
        if (now_ms() > deadline)
            fail_msg("could not checkpoint %s: %s", db, sqlite3_errmsg(h));
        sleep_ms(100);
    }
    sqlite3_close(h);
    const char *values[] = {FOO_VALUE, TOKEN_VALUE};
    for (size_t i = 0; i < 2; i++) {
        if (file_holds(db, values[i]))
            fail_msg("%s holds the env value %s", db, values[i]);
        if (file_holds(wal, values[i]))
            fail_msg("%s holds the env value %s", wal, values[i]);
    }
    free(wal);
    free(db);
}

static void assert_withheld_token(json_t *s)
{
    json_t *w = json_object_get(s, "withheld_env");
    if (json_array_size(w) != 1) {
        char *d = json_dumps(s, JSON_COMPACT);
        fail_msg("want GITHUB_TOKEN withheld: %s", d);
    }
    assert_string_equal(jstr(json_array_get(w, 0), "name"), "GITHUB_TOKEN");
    const char *why = jstr(json_array_get(w, 0), "why");
    assert_non_null(why);
    assert_non_null(strstr(why, "env_allow"));
}

static void assert_shell_sees(const char *id, const char *want)
{
    json_t *obs = session_run(harness_eng, id, SHOW_ENV);
    const char *got = jstr(obs, "content");
    if (!got || strncmp(got, want, strlen(want)) != 0 ||
        (got[strlen(want)] != '\0' && got[strlen(want)] != '\n'))
        fail_msg("the agent's shell shows \"%s\"; want \"%s\"", got ? got : "(none)", want);
    json_decref(obs);
}

/* What Docker holds for the container: no withheld value. */
static void assert_container_env_lacks(const char *cid, const char *value)
{
    char *path = strdupf("/containers/%s/json", cid);
    struct reply r;
    docker("GET", path, &r);
    assert_int_equal(r.status, 200);
    char *env = json_dumps(jpath(r.json, "Config.Env"), JSON_COMPACT);
    assert_non_null(env);
    if (strstr(env, value))
        fail_msg("the container's Env holds %s: %s", value, env);
    free(env);
    reply_free(&r);
    free(path);
}

/* `paddock show` names what the session got and what was withheld, never a value. */
static void assert_show_names(const char *id)
{
    char *argv[] = {(char *)harness_bin(),  "--socket", harness_eng->socket, "--state-dir",
                    harness_eng->state_dir, "show",     (char *)id,          NULL};
    struct proc_result pr;
    proc_run(argv, NULL, 30000, &pr);
    assert_int_equal(pr.status, 0);
    if (!strstr(pr.out, "FOO") || !strstr(pr.out, "withheld env") ||
        !strstr(pr.out, "GITHUB_TOKEN") || strstr(pr.out, FOO_VALUE) || strstr(pr.out, TOKEN_VALUE))
        fail_msg("paddock show:\n%s", pr.out);
    proc_result_free(&pr);
}

static void post_ok(const char *path_fmt, const char *id)
{
    char *path = strdupf(path_fmt, id);
    json_decref(api_json(harness_eng, "POST", path, "{}", 200));
    free(path);
}

/* A fresh sandbox (options the pool cannot serve): FOO reaches the shell, GITHUB_TOKEN
 * reaches neither the shell nor the container, the store keeps names only, and FOO is still
 * there after stop and resume. */
static void test_fresh_withholds_and_stores_names(void **state)
{
    wait_pool_ready();
    char *warm = pooled_container();
    json_t *s = session_new(harness_eng, "{" ENV_BODY ", \"limits\": {\"pids\": 300}}");
    const char *id = jstr(s, "id");
    assert_string_not_equal(jstr(s, "container_id"), warm);
    store_holds_no_value();
    assert_shell_sees(id, SEES_FOO_ONLY);
    assert_container_env_lacks(jstr(s, "container_id"), TOKEN_VALUE);
    assert_withheld_token(s);
    assert_string_equal(json_string_value(json_array_get(json_object_get(s, "env"), 0)), "FOO");
    assert_int_equal(json_array_size(json_object_get(s, "env")), 1);
    assert_show_names(id);

    post_ok("/v1/sessions/%s/stop", id);
    json_decref(session_wait_state(harness_eng, id, "stopped", 30000));
    post_ok("/v1/sessions/%s/resume", id);
    json_t *back = session_wait_state(harness_eng, id, "ready", 60000);
    assert_non_null(back);
    json_decref(back);
    assert_shell_sees(id, SEES_FOO_ONLY);

    session_delete(harness_eng, id);
    store_holds_no_value();
    json_decref(s);
    free(warm);
}

/* A warm sandbox from the pool: the same rule, the same reply. */
static void test_pooled_withholds_alike(void **state)
{
    wait_pool_ready();
    char *warm = pooled_container();
    json_t *s = session_new(harness_eng, "{" ENV_BODY "}");
    const char *id = jstr(s, "id");
    assert_string_equal(jstr(s, "container_id"), warm);
    assert_shell_sees(id, SEES_FOO_ONLY);
    store_holds_no_value();
    assert_withheld_token(s);
    session_delete(harness_eng, id);
    store_holds_no_value();
    json_decref(s);
    free(warm);
}

/* env_allow passes GITHUB_TOKEN through on purpose, fresh and pooled alike. */
static void test_env_allow_passes_through(void **state)
{
    static const char *const bodies[] = {
        "{" ENV_BODY ", \"env_allow\": [\"GITHUB_TOKEN\"], \"limits\": {\"pids\": 300}}",
        "{" ENV_BODY ", \"env_allow\": [\"GITHUB_TOKEN\"]}",
    };
    for (size_t i = 0; i < 2; i++) {
        wait_pool_ready();
        char *warm = pooled_container();
        json_t *s = session_new(harness_eng, bodies[i]);
        const char *id = jstr(s, "id");
        /* the first got a container of its own, the second the warm one */
        assert_int_equal(strcmp(jstr(s, "container_id"), warm) == 0, i == 1);
        assert_int_equal(json_array_size(json_object_get(s, "withheld_env")), 0);
        assert_shell_sees(id, SEES_BOTH);
        store_holds_no_value();
        session_delete(harness_eng, id);
        json_decref(s);
        free(warm);
    }
}

static int setup(void **state)
{
    harness_eng = engine_new();
    harness_eng->extra_env[0] = "PADDOCK_POOL=1";
    harness_eng->extra_env[1] = "PADDOCK_CONFIRM=never";
    if (engine_start(harness_eng) == 0)
        return 0;
    engine_destroy(harness_eng);
    harness_eng = NULL;
    return -1;
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_withholds_and_stores_names),
        cmocka_unit_test(test_pooled_withholds_alike),
        cmocka_unit_test(test_env_allow_passes_through),
    };
    int failed = cmocka_run_group_tests_name("secrets", tests, setup, harness_group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
