/* Group commit (engine/commit.c) on a real store and loop: a durable batch's continuations wait
 * for the syncer's fdatasync of the log (they run from the loop, never inside the flush), and
 * durable writes gather while a sync runs; a batch that need not be durable goes on at once; a
 * failing write fails alone; what still waits at shutdown is synced and run. The benchmarks'
 * engine without a record (ENGINE_BENCH_NO_RECORD) logs a stand-in for each write in a ring
 * that wraps, and removes it at a stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "engine/base/loop.h"
#include "engine/commit.h"
#include "engine/engine_internal.h"
#include "engine/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], path[128];

struct op {
    struct engine *eng;
    const char *session;
    int64_t id;
    int calls, rc;
    bool stop; /* stop the loop when done */
};

static int op_write(struct store *st, void *ud, char **err)
{
    struct op *o = ud;
    o->id = store_action_insert(st, o->session, "run", "echo hi", "{}", 1.0, err);
    return o->id < 0 ? -1 : 0;
}

static void op_done(int rc, char *err, void *ud)
{
    struct op *o = ud;
    o->calls++;
    o->rc = rc;
    free(err);
    if (o->stop)
        loop_stop(o->eng->loop);
}

static void on_deadline(void *ud)
{
    loop_stop(ud);
}

static int setup(void **state)
{
    static struct engine eng;
    memset(&eng, 0, sizeof(eng));
    strcpy(dir, "/tmp/paddock-commit-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/paddock.db", dir);
    char *err = NULL;
    eng.store = store_open(path, &err);
    assert_non_null(eng.store);
    eng.loop = loop_new();
    assert_non_null(eng.loop);
    assert_int_equal(commit_init(&eng, &err), 0);
    assert_int_equal(
        store_session_insert(eng.store, "ssss", "s", "img", SESSION_READY, NULL, 1, &err), 0);
    *state = &eng;
    return 0;
}

static int teardown(void **state)
{
    struct engine *eng = *state;
    commit_shutdown(eng);
    loop_free(eng->loop);
    store_close(eng->store);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* Runs the loop until o is done (or 10 s). */
static void run_until_done(struct engine *eng, struct op *o)
{
    o->stop = true;
    struct loop_timer *t = loop_timer_add(eng->loop, 10000, on_deadline, eng->loop);
    if (o->calls == 0)
        loop_run(eng->loop);
    if (o->calls > 0)
        loop_timer_cancel(eng->loop, t);
}

static void test_durable_waits_for_sync(void **state)
{
    struct engine *eng = *state;
    struct op a = {.eng = eng, .session = "ssss"}, b = {.eng = eng, .session = "ssss"};
    commit_add(eng, true, op_write, op_done, &a);
    commit_add(eng, true, op_write, op_done, &b);
    assert_true(commit_flush(eng));
    /* committed, not yet synced: nobody told */
    assert_int_equal(a.calls, 0);
    assert_int_equal(b.calls, 0);
    assert_true(a.id > 0 && b.id > a.id);
    run_until_done(eng, &b);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, 0);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.rc, 0);
    struct commit_counts n;
    commit_counts(eng, &n);
    assert_int_equal(n.commits, 1);
    assert_int_equal(n.writes, 2);
}

/* While a sync runs, durable writes gather (no commit yet) and intents go at once. */
static void test_durable_gather_during_sync(void **state)
{
    struct engine *eng = *state;
    struct op a = {.eng = eng, .session = "ssss"}, b = {.eng = eng, .session = "ssss"},
              c = {.eng = eng, .session = "ssss"}, i = {.eng = eng, .session = "ssss"};
    commit_add(eng, true, op_write, op_done, &a);
    assert_true(commit_flush(eng));
    commit_add(eng, true, op_write, op_done, &b);
    commit_add(eng, true, op_write, op_done, &c);
    assert_false(commit_flush(eng)); /* a's sync under way: b and c wait, unwritten */
    assert_int_equal(b.id, 0);
    commit_add(eng, false, op_write, op_done, &i);
    assert_true(commit_flush(eng)); /* an intent does not wait */
    assert_int_equal(i.calls, 1);
    assert_int_equal(b.id, 0);
    run_until_done(eng, &c);
    assert_int_equal(a.rc, 0);
    assert_int_equal(b.rc, 0);
    assert_int_equal(c.rc, 0);
    assert_true(b.id > i.id && c.id > b.id);
    struct commit_counts n;
    commit_counts(eng, &n);
    assert_int_equal(n.commits, 3); /* a; i; b and c together */
    assert_int_equal(n.writes, 4);
}

static void test_not_durable_at_once(void **state)
{
    struct engine *eng = *state;
    struct op a = {.eng = eng, .session = "ssss"};
    commit_add(eng, false, op_write, op_done, &a);
    assert_true(commit_flush(eng));
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, 0);
}

static void test_failing_write_alone(void **state)
{
    struct engine *eng = *state;
    struct op a = {.eng = eng, .session = "ssss"}, bad = {.eng = eng, .session = "nope"},
              c = {.eng = eng, .session = "ssss"};
    commit_add(eng, true, op_write, op_done, &a);
    commit_add(eng, true, op_write, op_done, &bad);
    commit_add(eng, true, op_write, op_done, &c);
    assert_true(commit_flush(eng));
    run_until_done(eng, &c);
    assert_int_equal(a.rc, 0);
    assert_int_equal(bad.calls, 1);
    assert_int_equal(bad.rc, -1);
    assert_int_equal(c.rc, 0);
    json_t *row = store_action_get(eng->store, c.id);
    assert_non_null(row);
    json_decref(row);
}

static void test_shutdown_runs_waiting(void **state)
{
    struct engine *eng = *state;
    static struct op a;
    memset(&a, 0, sizeof(a));
    a.eng = eng;
    a.session = "ssss";
    commit_add(eng, true, op_write, op_done, &a);
    assert_true(commit_flush(eng));
    commit_shutdown(eng); /* teardown's is then a no-op */
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.rc, 0);
}

static int bench_write(struct store *st, void *ud, char **err)
{
    (void)st;
    (void)ud;
    (void)err;
    return 0; /* what ENGINE_BENCH_NO_RECORD's writes do: leave the store alone */
}

/* ENGINE_BENCH_NO_RECORD: each write of a batch is an entry in <state>/bench-record.log, a
 * ring that does not grow past its 16 MiB (65,536 entries) however many come; the log is gone
 * after a clean stop; a log that cannot be made is a clear error. */
static void test_bench_log(void **state)
{
    struct engine *eng = *state;
    commit_shutdown(eng);
    eng->bench_off = ENGINE_BENCH_NO_RECORD;
    eng->state_dir = dir;
    char *err = NULL;
    assert_int_equal(commit_init(eng, &err), 0);
    assert_false(commit_records(eng));
    char log[160];
    snprintf(log, sizeof(log), "%s/bench-record.log", dir);
    struct op a = {.eng = eng}, b = {.eng = eng};
    commit_add(eng, true, bench_write, op_done, &a);
    commit_add(eng, true, bench_write, op_done, &b);
    assert_true(commit_flush(eng));
    run_until_done(eng, &b);
    assert_int_equal(a.rc, 0);
    assert_int_equal(b.rc, 0);
    /* two entries at the ring's start, the zeros it was made of after them */
    FILE *f = fopen(log, "rb");
    assert_non_null(f);
    static unsigned char got[1024];
    assert_int_equal(fread(got, 1, sizeof(got), f), sizeof(got));
    fclose(f);
    assert_int_equal(got[0], 'e');
    assert_int_equal(got[511], 'e');
    assert_int_equal(got[512], 0);
    /* past the ring's end: it wraps instead of growing */
    static struct op many, last;
    memset(&many, 0, sizeof(many));
    memset(&last, 0, sizeof(last));
    many.eng = last.eng = eng;
    for (int i = 0; i < 70000; i++)
        commit_add(eng, true, bench_write, op_done, &many);
    commit_add(eng, true, bench_write, op_done, &last);
    assert_true(commit_flush(eng));
    run_until_done(eng, &last);
    assert_int_equal(many.calls, 70000);
    assert_int_equal(many.rc, 0);
    assert_int_equal(last.rc, 0);
    struct stat st;
    assert_int_equal(stat(log, &st), 0);
    assert_int_equal(st.st_size, 16 * 1024 * 1024);
    commit_shutdown(eng);
    assert_int_equal(access(log, F_OK), -1);

    eng->state_dir = "/nonexistent/paddock-commit";
    assert_int_equal(commit_init(eng, &err), -1);
    assert_non_null(strstr(err, "bench-record.log"));
    free(err);
    eng->state_dir = NULL;
    eng->bench_off = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_durable_waits_for_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_durable_gather_during_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_durable_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_write_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_runs_waiting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bench_log, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
