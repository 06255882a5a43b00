/* The store against a real SQLite file: schema, intent-then-observation, paging, recovery. */
#include "engine/store/store.h"
#include "engine/store/store_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char dir[64];
static char path[128];

static int setup(void **state)
{
    strcpy(dir, "/tmp/paddock-store-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/paddock.db", dir);
    char *err = NULL;
    struct store *s = store_open(path, &err);
    if (err)
        fail_msg("%s", err);
    assert_non_null(s);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    store_close(*state);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd);
}

/* The record walks clean: the session's chain (or every entry when sid is NULL). */
static void assert_verified(struct store *s, const char *sid)
{
    char *err = NULL;
    json_t *v = store_chain_verify(s, sid, &err);
    assert_non_null(v);
    if (!json_is_true(json_object_get(v, "ok"))) {
        char *t = json_dumps(v, 0);
        fail_msg("record broken: %s", t);
    }
    assert_true(json_integer_value(json_object_get(v, "entries")) > 0);
    json_decref(v);
}

/* The first break of the record, as "kind ref: what" (NULL when it verifies). */
static char *verify_break(struct store *s)
{
    json_t *v = store_chain_verify(s, NULL, NULL);
    assert_non_null(v);
    json_t *b = json_object_get(v, "broken");
    char *out = NULL;
    if (b) {
        out = malloc(300);
        snprintf(out, 300, "%s %lld: %s", json_string_value(json_object_get(b, "kind")),
                 (long long)json_integer_value(json_object_get(b, "ref")),
                 json_string_value(json_object_get(b, "what")));
    }
    json_decref(v);
    return out;
}

static void sql(const char *text)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, text, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", text, msg);
    sqlite3_close(db);
}

static void assert_break(struct store *s, const char *want)
{
    char *got = verify_break(s);
    if (!got || strstr(got, want) != got)
        fail_msg("wanted a break at \"%s\", got \"%s\"", want, got ? got : "(verified)");
    free(got);
}

static void test_schema_and_wal(void **state)
{
    struct store *s = *state;
    assert_int_equal(store_schema_version(s), store_schema_latest());
    assert_true(store_schema_latest() >= 2);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The store's connection has no mutex of its own (SQLITE_OPEN_NOMUTEX: only the engine's loop
 * uses it) and SQLite keeps no memory statistics, both locks taken on every call. */
static void test_connection_without_locks(void **state)
{
    struct store *s = *state;
    assert_null(sqlite3_db_mutex(s->db));
    sqlite3_int64 cur = -1, hi = -1;
    assert_int_equal(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &cur, &hi, 0), SQLITE_OK);
    assert_int_equal(cur, 0); /* not counted */
}

/* The page cache holds STORE_CACHE_KIB: 4 MiB written (more than SQLite's default 2 MiB) reads
 * back twice with no page missing from the cache the second time. */
static void test_page_cache_holds_the_tail(void **state)
{
    struct store *s = *state;
    assert_int_equal(sqlite3_exec(s->db,
                                  "CREATE TABLE scratch(b BLOB); WITH RECURSIVE n(i) AS (SELECT 1 "
                                  "UNION ALL SELECT i + 1 FROM n WHERE i < 1024) INSERT INTO "
                                  "scratch SELECT zeroblob(4000) FROM n;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    for (int pass = 0; pass < 2; pass++) {
        int cur = 0, hi = 0;
        sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_MISS, &cur, &hi, 1); /* reset */
        assert_int_equal(
            sqlite3_exec(s->db, "SELECT sum(length(b)) FROM scratch", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_MISS, &cur, &hi, 0);
        if (pass == 1 && cur != 0)
            fail_msg("%d pages were read again on the second pass", cur);
    }
}

/* Column col of the one row sql gives on db. */
static long long one_row_int(sqlite3 *db, const char *sql, int col)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, col);
    sqlite3_finalize(st);
    return v;
}

/* The same on the store's file, through a connection of its own (as anyone could). */
static long long one_row_int_path(const char *sql_text)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    long long v = one_row_int(db, sql_text, 0);
    sqlite3_close(db);
    return v;
}

/* Write calls this process made so far (/proc/self/io). */
static long long write_calls(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    long long n = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "syscw: %lld", &n) == 1)
            break;
    if (f)
        fclose(f);
    assert_true(n >= 0);
    return n;
}

/* A commit's frames reach the log in one write (store_vfs.c: SQLite writes each frame as two),
 * and at the commit itself, not at a later sync: another connection reads each commit at once.
 * Without a sync at commit (synchronous=NORMAL), as the engine's batches go. */
static void test_wal_commit_is_one_write(void **state)
{
    struct store *s = *state;
    assert_int_equal(sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL; CREATE TABLE scratch(i, b)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3 *other;
    assert_int_equal(sqlite3_open_v2(path, &other, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    for (int i = 1; i <= 20; i++) {
        char sql_text[200];
        /* eight rows of a page each: ten frames or so */
        snprintf(sql_text, sizeof(sql_text),
                 "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 8) "
                 "INSERT INTO scratch SELECT %d, randomblob(3000) FROM n",
                 i);
        long long before = write_calls();
        assert_int_equal(sqlite3_exec(s->db, sql_text, NULL, NULL, NULL), SQLITE_OK);
        long long writes = write_calls() - before;
        if (writes > 2)
            fail_msg("commit %d took %lld write calls", i, writes);
        assert_int_equal(one_row_int(other, "SELECT count(*) FROM scratch", 0), 8 * i);
        assert_int_equal(one_row_int(other,
                                     "SELECT count(*) FROM scratch WHERE i = (SELECT "
                                     "max(i) FROM scratch) AND length(b) = 3000",
                                     0),
                         8);
    }
    sqlite3_close(other);
}

/* A commit whose frames cannot be written (here: past the file size limit, as a full disk
 * refuses them) fails as that commit's error, and nothing of it is seen; the store stays
 * whole. The frames are written inside the commit's own last write, not later. */
static void test_wal_commit_write_error(void **state)
{
    struct store *s = *state;
    assert_int_equal(sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL; CREATE TABLE scratch(i, b)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = (struct rlimit){.rlim_cur = 1024 * 1024, .rlim_max = old.rlim_max};
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int i, rc = SQLITE_OK;
    for (i = 1; i <= 200 && rc == SQLITE_OK; i++) {
        char sql_text[200];
        snprintf(sql_text, sizeof(sql_text),
                 "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 8) "
                 "INSERT INTO scratch SELECT %d, randomblob(3000) FROM n",
                 i);
        rc = sqlite3_exec(s->db, sql_text, NULL, NULL, NULL);
    }
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, was);
    if (rc == SQLITE_OK)
        fail_msg("200 commits past the size limit all succeeded");
    int failed = i - 1;
    assert_true((rc & 0xff) == SQLITE_FULL || (rc & 0xff) == SQLITE_IOERR);
    sqlite3 *other;
    assert_int_equal(sqlite3_open_v2(path, &other, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(one_row_int(other, "SELECT count(*) FROM scratch", 0), 8 * (failed - 1));
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(other, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    sqlite3_close(other);
    /* and the store takes the next commit */
    assert_int_equal(
        sqlite3_exec(s->db, "INSERT INTO scratch VALUES (0, 'after')", NULL, NULL, NULL),
        SQLITE_OK);
}

/* The log gets a cycle's size in zeros at open (a growing log costs each sync its blocks and
 * its size), and a copy taken as a killed engine leaves it (frames, then zeros) recovers every
 * committed row. */
static void test_wal_prefilled_and_recovers(void **state)
{
    struct store *s = *state;
    long long cycle = (4096LL + 24) * STORE_WAL_CHECKPOINT_PAGES;
    struct statvfs vfs;
    assert_int_equal(statvfs(dir, &vfs), 0);
    if ((unsigned long long)vfs.f_bavail * vfs.f_frsize < 20ULL * (unsigned long long)cycle) {
        print_message("too little free space under %s for the log's zeros\n", dir);
        skip();
    }
    char wal[160], copy[160], cmd[1024];
    snprintf(wal, sizeof(wal), "%s-wal", path);
    struct stat sb;
    assert_int_equal(stat(wal, &sb), 0);
    if (sb.st_size < cycle)
        fail_msg("the log is %lld bytes at open, not a cycle's %lld", (long long)sb.st_size, cycle);
    char *err = NULL;
    for (int i = 0; i < 50; i++) {
        char id[16];
        snprintf(id, sizeof(id), "s%d", i);
        assert_int_equal(
            store_session_insert(s, id, id, "img:1", SESSION_STARTING, NULL, 1.0, &err), 0);
    }
    assert_int_equal(stat(wal, &sb), 0);
    assert_true(sb.st_size >= cycle); /* written into the zeros, not past them */
    snprintf(copy, sizeof(copy), "%s/copy.db", dir);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && cp '%s' '%s-wal'", path, copy, wal, copy);
    assert_int_equal(system(cmd), 0);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(copy, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(one_row_int(db, "SELECT count(*) FROM sessions", 0), 50);
    /* A damaged file's findings come back as rows, not as an error: one row, "ok". */
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The log is checkpointed only past STORE_WAL_CHECKPOINT_PAGES pages, not at SQLite's 1,000:
 * 1,500 commits later (a few pages each) it still holds them all. */
static void test_wal_checkpoint_mark(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(
        store_session_insert(s, "ckpt", "demo", "img:1", SESSION_STARTING, NULL, 1.0, &err), 0);
    for (int i = 0; i < 1500; i++)
        assert_int_equal(store_session_update(s, "ckpt", i % 2 ? SESSION_READY : SESSION_STARTING,
                                              "cid", NULL, 2.0 + i, &err),
                         0);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    /* busy, the log's pages, those checkpointed: a passive checkpoint changes nothing here */
    long long log = one_row_int(db, "PRAGMA wal_checkpoint(PASSIVE)", 1);
    sqlite3_close(db);
    if (log <= 1500 || log >= STORE_WAL_CHECKPOINT_PAGES)
        fail_msg("the log holds %lld pages after 1,500 commits", log);
}

static void test_reopen_keeps_version(void **state)
{
    char *err = NULL;
    struct store *again = store_open(path, &err); /* a second connection: no re-migration */
    assert_non_null(again);
    assert_int_equal(store_schema_version(again), store_schema_latest());
    store_close(again);
}

static void test_session_roundtrip(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(
        store_session_insert(s, "aaaa", "demo", "img:1", SESSION_STARTING, NULL, 10.5, &err), 0);
    assert_int_equal(store_session_update(s, "aaaa", SESSION_READY, "cid1", NULL, 11.0, &err), 0);
    json_t *o = store_session_get(s, "aaaa");
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "state")), "ready");
    assert_string_equal(json_string_value(json_object_get(o, "container_id")), "cid1");
    assert_string_equal(json_string_value(json_object_get(o, "name")), "demo");
    assert_int_equal(json_integer_value(json_object_get(o, "action_count")), 0);
    json_decref(o);
    /* container_id stays when an update passes NULL */
    assert_int_equal(store_session_update(s, "aaaa", SESSION_DELETED, NULL, NULL, 12.0, &err), 0);
    o = store_session_get(s, "aaaa");
    assert_string_equal(json_string_value(json_object_get(o, "container_id")), "cid1");
    json_decref(o);
    json_t *live = store_sessions_list(s, 0), *all = store_sessions_list(s, 1);
    assert_int_equal(json_array_size(live), 0);
    assert_int_equal(json_array_size(all), 1);
    json_decref(live);
    json_decref(all);
    assert_null(store_session_get(s, "nope"));
    /* a duplicate id is refused with a message */
    assert_int_equal(store_session_insert(s, "aaaa", "x", "i", SESSION_STARTING, NULL, 1, &err),
                     -1);
    assert_non_null(err);
    free(err);
}

/* What a reference matches: the id first, then names (newest first), then id prefixes; pooled
 * sessions never. */
static void test_session_match(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "ab12", "older", "i", SESSION_READY, NULL, 1, &err),
                     0);
    assert_int_equal(store_session_insert(s, "ab34", "ab12x", "i", SESSION_READY, NULL, 2, &err),
                     0);
    assert_int_equal(store_session_insert(s, "cd56", "ab12", "i", SESSION_READY, NULL, 3, &err), 0);
    json_t *pool = json_pack("{s:b}", "pooled", 1);
    assert_int_equal(store_session_insert(s, "ab99", "warm", "i", SESSION_READY, pool, 4, &err), 0);
    json_decref(pool);
    json_t *m = store_session_match(s, "ab12");
    assert_int_equal(json_array_size(m), 2); /* the id, the name "ab12" */
    assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "id")), "ab12");
    assert_true(json_is_true(json_object_get(json_array_get(m, 0), "exact")));
    assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "id")), "cd56");
    assert_true(json_is_true(json_object_get(json_array_get(m, 1), "named")));
    json_decref(m);
    m = store_session_match(s, "ab");
    assert_int_equal(json_array_size(m), 2); /* ab12, ab34; not the pooled ab99 */
    json_decref(m);
    m = store_session_match(s, "zz");
    assert_int_equal(json_array_size(m), 0);
    json_decref(m);
}

static void test_actions_intent_then_finish(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "bbbb", "b", "img", SESSION_READY, NULL, 1, &err), 0);
    int64_t id = store_action_insert(s, "bbbb", "run", "echo hi", "{}", 100.0, &err);
    assert_true(id > 0);
    json_t *a = store_action_get(s, id);
    assert_string_equal(json_string_value(json_object_get(a, "state")), "running");
    assert_true(json_is_null(json_object_get(a, "exit_code")));
    json_decref(a);
    const char obs[] = "{\"content\":\"hi\"}";
    assert_int_equal(
        store_action_finish(s, id, ACTION_DONE, 0, obs, strlen(obs), NULL, 100.25, &err), 0);
    a = store_action_get(s, id);
    assert_string_equal(json_string_value(json_object_get(a, "state")), "done");
    assert_int_equal(json_integer_value(json_object_get(a, "exit_code")), 0);
    assert_true(json_real_value(json_object_get(a, "duration_ms")) > 249.0);
    assert_true(json_real_value(json_object_get(a, "duration_ms")) < 251.0);
    json_decref(a);
    /* an action for an unknown session violates the foreign key */
    assert_int_equal(store_action_insert(s, "zzzz", "run", "x", "{}", 1, &err), -1);
    free(err);
}

/* Group commit's store side: writes inside a batch are invisible to another reader until the
 * one commit, a write that fails inside it is undone alone (its savepoint), the entries of
 * the hash chain appended in the batch link in order, and the record verifies. */
static long long committed_actions(void)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    long long n = -1;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM actions", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static void test_batch(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "gggg", "g", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_int_equal(store_session_insert(s, "hhhh", "h", "img", SESSION_READY, NULL, 1, &err), 0);
    int64_t first = store_action_insert(s, "gggg", "run", "before", "{}", 2.0, &err);
    assert_true(first > 0);
    const char obs[] = "{\"content\":\"x\"}";

    assert_int_equal(store_batch_begin(s, true, true, &err), 0);
    int64_t a = store_action_insert(s, "gggg", "run", "one", "{}", 3.0, &err);
    int64_t b = store_action_insert(s, "hhhh", "run", "two", "{}", 3.0, &err);
    assert_true(a > 0 && b > 0);
    /* an unknown session: this write fails, the batch's others stay */
    assert_int_equal(store_action_insert(s, "zzzz", "run", "bad", "{}", 3.0, &err), -1);
    free(err);
    err = NULL;
    assert_int_equal(
        store_action_finish(s, first, ACTION_DONE, 0, obs, strlen(obs), NULL, 3.5, &err), 0);
    int64_t c = store_action_insert(s, "gggg", "run", "three", "{}", 4.0, &err);
    assert_true(c > b);
    assert_int_equal(committed_actions(), 1); /* nothing of the batch before its commit */
    assert_int_equal(store_batch_commit(s, &err), 0);
    assert_null(err);
    assert_int_equal(committed_actions(), 4);
    json_t *row = store_action_get(s, first);
    assert_string_equal(json_string_value(json_object_get(row, "state")), "done");
    json_decref(row);
    assert_verified(s, "gggg");
    assert_verified(s, "hhhh");
    assert_verified(s, NULL);

    /* After the batch, a write commits by itself again. */
    int64_t d = store_action_insert(s, "hhhh", "run", "after", "{}", 5.0, &err);
    assert_true(d > c);
    assert_int_equal(committed_actions(), 5);
    assert_verified(s, NULL);
}

/* A bare batch (no savepoint per write): a failing write spoils it, the commit fails and
 * nothing of it stays; the record still verifies. */
static void test_batch_bare(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "kkkk", "k", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_int_equal(store_batch_begin(s, true, false, &err), 0);
    assert_true(store_action_insert(s, "kkkk", "run", "one", "{}", 3.0, &err) > 0);
    assert_true(store_action_insert(s, "kkkk", "run", "two", "{}", 3.0, &err) > 0);
    assert_int_equal(store_batch_commit(s, &err), 0);
    assert_int_equal(committed_actions(), 2);
    assert_verified(s, "kkkk");

    assert_int_equal(store_batch_begin(s, true, false, &err), 0);
    assert_true(store_action_insert(s, "kkkk", "run", "three", "{}", 4.0, &err) > 0);
    assert_int_equal(store_action_insert(s, "zzzz", "run", "bad", "{}", 4.0, &err), -1);
    free(err);
    err = NULL;
    assert_int_equal(store_batch_commit(s, &err), -1);
    assert_non_null(err);
    free(err);
    err = NULL;
    assert_int_equal(committed_actions(), 2);
    assert_verified(s, NULL);
    /* and the store takes writes again, alone */
    assert_true(store_action_insert(s, "kkkk", "run", "four", "{}", 5.0, &err) > 0);
    assert_int_equal(committed_actions(), 3);
    assert_verified(s, NULL);
}

static void test_actions_paging(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "cccc", "c", "img", SESSION_READY, NULL, 1, &err), 0);
    int64_t ids[5];
    for (int i = 0; i < 5; i++) {
        char cmd[16];
        snprintf(cmd, sizeof(cmd), "cmd%d", i);
        ids[i] = store_action_insert(s, "cccc", "run", cmd, "{}", i, &err);
    }
    json_t *page = store_actions_list(s, "cccc", 2, 0);
    assert_int_equal(json_array_size(page), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(page, 0), "summary")),
                        "cmd4");
    json_decref(page);
    page = store_actions_list(s, "cccc", 10, ids[2]);
    assert_int_equal(json_array_size(page), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(page, 0), "summary")),
                        "cmd1");
    json_decref(page);
    json_t *sess = store_session_get(s, "cccc");
    assert_int_equal(json_integer_value(json_object_get(sess, "action_count")), 5);
    json_decref(sess);
}

static void test_interrupt_inflight(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "dddd", "d", "img", SESSION_READY, NULL, 1, &err), 0);
    int64_t a = store_action_insert(s, "dddd", "run", "sleep 100", "{}", 1, &err);
    int64_t b = store_action_insert(s, "dddd", "run", "true", "{}", 1, &err);
    store_action_finish(s, b, ACTION_DONE, 0, "{}", 2, NULL, 2, &err);
    assert_int_equal(store_actions_interrupt_inflight(s, 3), 1);
    json_t *ja = store_action_get(s, a), *jb = store_action_get(s, b);
    assert_string_equal(json_string_value(json_object_get(ja, "state")), "interrupted");
    assert_string_equal(json_string_value(json_object_get(jb, "state")), "done");
    json_decref(ja);
    json_decref(jb);
    assert_int_equal(store_actions_interrupt_inflight(s, 4), 0);
}

/* A pending action: durable with its deadline, decided once; a rejection keeps its observation. */
static void test_actions_pending_and_decided(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "eeee", "e", "img", SESSION_READY, NULL, 1, &err), 0);
    struct store_action_new row = {.session_id = "eeee",
                                   .kind = "run",
                                   .summary = "rm -rf /home/x",
                                   .args_json =
                                       "{\"action\":\"run\",\"args\":{\"command\":\"rm\"}}",
                                   .risk = RISK_HIGH,
                                   .risk_reason = "deletes recursively",
                                   .state = ACTION_PENDING,
                                   .approval = APPROVAL_PENDING,
                                   .deadline = 700,
                                   .durable = true,
                                   .now = 100};
    int64_t a = store_action_add(s, &row, &err);
    int64_t b = store_action_add(s, &row, &err);
    assert_true(a > 0 && b > a);
    json_t *p = store_actions_pending(s, NULL);
    assert_int_equal(json_array_size(p), 2);
    json_t *first = json_array_get(p, 0);
    assert_int_equal(json_integer_value(json_object_get(first, "id")), a);
    assert_true(json_real_value(json_object_get(first, "deadline")) == 700.0);
    assert_string_equal(json_string_value(json_object_get(first, "risk")), "high");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(first, "args"), "args"), "command")),
                        "rm");
    json_decref(p);
    json_t *sess = store_session_get(s, "eeee");
    assert_int_equal(json_integer_value(json_object_get(sess, "pending_approvals")), 2);
    json_decref(sess);
    /* a pending action is not in flight: a restart leaves it waiting */
    assert_int_equal(store_actions_interrupt_inflight(s, 150), 0);

    assert_int_equal(store_action_decide(s, a, APPROVAL_APPROVED, "alice", "ok", NULL, 200, &err),
                     1);
    assert_int_equal(store_action_decide(s, a, APPROVAL_REJECTED, "bob", NULL, NULL, 201, &err), 0);
    json_t *ja = store_action_get(s, a);
    assert_string_equal(json_string_value(json_object_get(ja, "state")), "running");
    assert_string_equal(json_string_value(json_object_get(ja, "approval")), "approved");
    assert_string_equal(json_string_value(json_object_get(ja, "decided_by")), "alice");
    assert_true(json_is_null(json_object_get(ja, "deadline")));
    assert_true(json_real_value(json_object_get(ja, "started_at")) == 200.0);
    json_decref(ja);

    const char *obs = "{\"observation\":\"user_rejected\",\"content\":\"no\"}";
    assert_int_equal(store_action_decide(s, b, APPROVAL_EXPIRED, "timeout", "late", obs, 700, &err),
                     1);
    json_t *jb = store_action_get_full(s, b);
    assert_string_equal(json_string_value(json_object_get(jb, "state")), "rejected");
    assert_string_equal(json_string_value(json_object_get(jb, "approval")), "expired");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(jb, "observation"), "observation")),
        "user_rejected");
    json_decref(jb);
    p = store_actions_pending(s, "eeee");
    assert_int_equal(json_array_size(p), 0);
    json_decref(p);
    assert_int_equal(store_action_decide(s, 99999, APPROVAL_APPROVED, "x", NULL, NULL, 1, &err), 0);
}

static int64_t add_done(struct store *s, const char *sid, const char *cmd, const char *output)
{
    char *err = NULL;
    int64_t id = store_action_insert(s, sid, "run", cmd, "{}", 1, &err);
    assert_true(id > 0);
    json_t *o = json_pack("{s:s,s:s}", "observation", "run", "content", output);
    char *obs = json_dumps(o, JSON_COMPACT);
    assert_int_equal(store_action_finish(s, id, ACTION_DONE, 0, obs, strlen(obs), NULL, 2, &err),
                     0);
    free(obs);
    json_decref(o);
    return id;
}

static size_t search_count(struct store *s, const char *text, const char *sid, int64_t before)
{
    char *err = NULL;
    struct store_search q = {.text = text, .session_id = sid, .before = before, .limit = 100};
    json_t *r = store_actions_search(s, &q, &err);
    assert_non_null(r);
    size_t n = json_array_size(r);
    json_decref(r);
    return n;
}

/* Full-text search over commands and outputs, with filters and paging; any typed text is a
 * query, never a syntax error. */
static void test_actions_search(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "ffff", "f", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_int_equal(store_session_insert(s, "gggg", "g", "img", SESSION_READY, NULL, 1, &err), 0);
    int64_t a = add_done(s, "ffff", "make test", "all 12 tests passed: zebra");
    add_done(s, "ffff", "ls", "README.md src");
    int64_t c = add_done(s, "gggg", "cat notes", "zebra crossing");
    assert_int_equal(search_count(s, "zebra", NULL, 0), 2);
    assert_int_equal(search_count(s, "zebra", "ffff", 0), 1);
    assert_int_equal(search_count(s, "zebra passed", NULL, 0), 1);
    assert_int_equal(search_count(s, "make", NULL, 0), 1);
    assert_int_equal(search_count(s, "zebra", NULL, c), 1);
    assert_int_equal(search_count(s, "nothing-like-it", NULL, 0), 0);
    assert_int_equal(search_count(s, NULL, NULL, 0), 3);
    const char *hostile[] = {"\"", "a\"b", "*", "NEAR(", "x:y", "-rf", "(a OR b)", "^", "'", ""};
    for (size_t i = 0; i < sizeof(hostile) / sizeof(*hostile); i++)
        search_count(s, hostile[i], NULL, 0); /* asserts a list, not an error */
    enum action_st done = ACTION_DONE;
    struct store_search q = {.text = "zebra", .state = &done, .kind = "run", .limit = 1};
    json_t *r = store_actions_search(s, &q, &err);
    assert_int_equal(json_array_size(r), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(r, 0), "id")), c);
    json_decref(r);
    q.kind = "read";
    r = store_actions_search(s, &q, &err);
    assert_int_equal(json_array_size(r), 0);
    json_decref(r);
    (void)a;
}

/* What the search index and the sessions' counts hold, straight from the file: the index's
 * rows (checked by FTS5's own integrity-check) and the count as stored. */
static void derived_rows(long long *fts, long long *count)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO actions_fts(actions_fts) VALUES('integrity-check')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (SELECT count(*) FROM actions_fts), (SELECT "
                                        "action_count FROM sessions WHERE id = 'hhhh')",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    *fts = sqlite3_column_int64(st, 0);
    *count = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static long long session_count(struct store *s)
{
    json_t *o = store_session_get(s, "hhhh");
    long long n = json_integer_value(json_object_get(o, "action_count"));
    json_decref(o);
    return n;
}

/* The search index and the counts are written off the action path (store_derived_update), yet
 * never miss anything recorded: an action whose end came after a restart (the store closed
 * without updating them, as a crash leaves it) is found by its output; one indexed while it
 * ran is found by its output once it ended, indexed once; a session counts each action once,
 * whether the update ran or not. */
static void test_derived_after_restart(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    long long fts, count;
    assert_int_equal(store_session_insert(s, "hhhh", "h", "img", SESSION_READY, NULL, 1, &err), 0);
    int64_t early = store_action_insert(s, "hhhh", "run", "sleep 5; echo quagga", "{}", 1, &err);
    assert_true(early > 0);
    int64_t late = store_action_insert(s, "hhhh", "run", "make okapi", "{}", 2, &err);
    assert_true(late > 0);
    assert_int_equal(session_count(s), 2);
    /* indexed while they run: commands only */
    assert_int_equal(store_derived_update(s, 1, 0, &err), 1); /* one entry, more to come */
    assert_int_equal(store_derived_update(s, 0, 0, &err), 0);
    derived_rows(&fts, &count);
    assert_int_equal(fts, 2);
    assert_int_equal(count, 2);
    assert_int_equal(search_count(s, "okapi", NULL, 0), 1);
    store_close(s);
    *state = s = store_open(path, &err);
    assert_non_null(s);
    const char obs[] = "{\"observation\":\"run\",\"content\":\"built zanzibar\"}";
    assert_int_equal(store_action_finish(s, late, ACTION_DONE, 0, obs, strlen(obs), NULL, 3, &err),
                     0);
    int64_t third = store_action_insert(s, "hhhh", "run", "ls", "{}", 4, &err);
    const char obs3[] = "{\"observation\":\"run\",\"content\":\"wombat.txt\"}";
    assert_int_equal(
        store_action_finish(s, third, ACTION_DONE, 0, obs3, strlen(obs3), NULL, 5, &err), 0);
    assert_int_equal(session_count(s), 3);
    /* as after a crash: closed with the index behind the record */
    store_close(s);
    derived_rows(&fts, &count);
    assert_int_equal(fts, 2);
    assert_int_equal(count, 2);
    *state = s = store_open(path, &err);
    assert_non_null(s);
    assert_int_equal(session_count(s), 3);
    assert_int_equal(search_count(s, "zanzibar", NULL, 0), 1);
    assert_int_equal(search_count(s, "wombat", NULL, 0), 1);
    assert_int_equal(search_count(s, "okapi zanzibar", NULL, 0), 1);
    assert_int_equal(search_count(s, "quagga", NULL, 0), 1);
    derived_rows(&fts, &count);
    assert_int_equal(fts, 3);
    assert_int_equal(count, 3);
    assert_int_equal(session_count(s), 3);
    assert_int_equal(store_derived_update(s, 0, 0, &err), 0);
    assert_int_equal(session_count(s), 3);
    assert_verified(s, NULL);
}

/* An update takes entries up to a byte bound on the observations it reads (the engine's loop
 * waits while it parses and indexes them), at least one entry a turn, and the turns together
 * leave the index and the counts as one unbounded update would. */
static void test_derived_bytes_bound(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    long long fts, count;
    assert_int_equal(store_session_insert(s, "hhhh", "h", "img", SESSION_READY, NULL, 1, &err), 0);
    char obs[20100];
    int n = snprintf(obs, sizeof obs, "{\"observation\":\"run\",\"content\":\"");
    for (int w = 0; n < 20000; w++)
        n += snprintf(obs + n, sizeof obs - (size_t)n, "gnu%d ", w);
    n += snprintf(obs + n, sizeof obs - (size_t)n, "\"}");
    for (int i = 0; i < 3; i++) {
        int64_t id = store_action_insert(s, "hhhh", "run", "cat herd", "{}", 1, &err);
        assert_true(id > 0);
        assert_int_equal(store_action_finish(s, id, ACTION_DONE, 0, obs, (size_t)n, NULL, 2, &err),
                         0);
    }
    /* six entries of about 20 KB each: one a turn under 30 KB, as one under 1 byte */
    assert_int_equal(store_derived_update(s, 0, 30000, &err), 1);
    derived_rows(&fts, &count);
    assert_int_equal(fts, 1);
    assert_int_equal(count, 1);
    assert_int_equal(store_derived_update(s, 0, 1, &err), 1);
    assert_int_equal(store_derived_update(s, 0, 45000, &err), 1); /* two entries */
    int turns = 0;
    while (store_derived_update(s, 0, 30000, &err) == 1)
        turns++;
    assert_int_equal(turns, 1);
    derived_rows(&fts, &count);
    assert_int_equal(fts, 3);
    assert_int_equal(count, 3);
    assert_int_equal(session_count(s), 3);
    assert_int_equal(search_count(s, "gnu17", NULL, 0), 3);
    assert_verified(s, NULL);
}

/* A session removed by retention while its actions wait for the derived update: the update
 * then indexes and counts only what is left, and the record still verifies. */
static void test_derived_after_retention(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    const char obs[] = "{\"observation\":\"run\",\"content\":\"aardvark\"}";
    assert_int_equal(store_session_insert(s, "gggg", "g", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_int_equal(store_session_insert(s, "hhhh", "h", "img", SESSION_READY, NULL, 1, &err), 0);
    int64_t gone = store_action_insert(s, "gggg", "run", "cat aardvark", "{}", 2, &err);
    assert_true(gone > 0);
    assert_int_equal(store_action_finish(s, gone, ACTION_DONE, 0, obs, strlen(obs), NULL, 3, &err),
                     0);
    int64_t kept = store_action_insert(s, "hhhh", "run", "echo bison", "{}", 4, &err);
    assert_true(kept > 0);
    assert_int_equal(store_session_update(s, "gggg", SESSION_DELETED, NULL, NULL, 10, &err), 0);
    assert_int_equal(store_retention_apply(s, 500, &err), 1);
    assert_int_equal(store_derived_update(s, 0, 0, &err), 0);
    long long fts, count;
    derived_rows(&fts, &count);
    assert_int_equal(fts, 1);
    assert_int_equal(count, 1);
    assert_int_equal(search_count(s, "aardvark", NULL, 0), 0);
    assert_int_equal(search_count(s, "bison", NULL, 0), 1);
    assert_verified(s, NULL);
}

static void test_rules_and_retention(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "hhhh", "h", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_int_equal(store_session_insert(s, "iiii", "i", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_true(store_rule_add(s,
                               &(struct store_rule){.session_id = "hhhh",
                                                    .pattern = "git push *",
                                                    .decision = POLICY_RULE_ALLOW,
                                                    .by = "alice"},
                               5, &err) > 0);
    assert_true(store_rule_add(s,
                               &(struct store_rule){.session_id = "hhhh",
                                                    .pattern = "*curl*",
                                                    .decision = POLICY_RULE_DENY,
                                                    .by = "alice"},
                               6, &err) > 0);
    json_t *rules = store_rules_list(s, "hhhh");
    assert_int_equal(json_array_size(rules), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rules, 1), "decision")),
                        "deny");
    json_decref(rules);
    add_done(s, "hhhh", "echo old", "kept-word");
    add_done(s, "iiii", "echo young", "kept-word");
    assert_int_equal(store_session_update(s, "hhhh", SESSION_DELETED, NULL, NULL, 10, &err), 0);
    assert_int_equal(store_session_update(s, "iiii", SESSION_DELETED, NULL, NULL, 1000, &err), 0);
    assert_int_equal(store_retention_apply(s, 500, &err), 1);
    assert_null(store_session_get(s, "hhhh"));
    json_t *still = store_session_get(s, "iiii");
    assert_non_null(still);
    json_decref(still);
    assert_int_equal(search_count(s, "kept", NULL, 0), 1);
    rules = store_rules_list(s, "hhhh");
    assert_int_equal(json_array_size(rules), 0);
    json_decref(rules);
    assert_int_equal(store_retention_apply(s, 500, &err), 0);
    assert_verified(s, NULL); /* the engine's chain links across the retired entries */
}

/* State changes: reason, exit code, the error column only for the error state; lifecycle events
 * oldest first; OOM kills counted; keep_alive read from the stored options. */
static void test_transitions_and_events(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    json_t *cfg = json_pack("{s:s,s:{s:b}}", "image", "img", "options", "keep_alive", 0);
    assert_int_equal(store_session_insert(s, "eeee", "e", "img", SESSION_STARTING, cfg, 1, &err),
                     0);
    assert_int_equal(store_session_insert(s, "ffff", "f", "img", SESSION_STARTING, NULL, 1, &err),
                     0);
    json_decref(cfg);
    assert_int_equal(store_session_transition(s, "eeee", SESSION_STOPPED, "cid",
                                              "exited with code 137", 137, 2, &err),
                     0);
    json_t *o = store_session_get(s, "eeee");
    assert_string_equal(json_string_value(json_object_get(o, "state")), "stopped");
    assert_string_equal(json_string_value(json_object_get(o, "reason")), "exited with code 137");
    assert_true(json_is_null(json_object_get(o, "error")));
    assert_int_equal(json_integer_value(json_object_get(o, "exit_code")), 137);
    assert_true(json_is_false(json_object_get(o, "keep_alive")));
    assert_int_equal(json_integer_value(json_object_get(o, "oom_kills")), 0);
    json_decref(o);
    assert_int_equal(store_session_transition(s, "eeee", SESSION_ERROR, NULL, "gone",
                                              STORE_NO_EXIT_CODE, 3, &err),
                     0);
    assert_int_equal(store_session_count_oom(s, "eeee", 4), 0);
    o = store_session_get(s, "eeee");
    assert_string_equal(json_string_value(json_object_get(o, "error")), "gone");
    assert_true(json_is_null(json_object_get(o, "exit_code")));
    assert_string_equal(json_string_value(json_object_get(o, "container_id")), "cid");
    assert_int_equal(json_integer_value(json_object_get(o, "oom_kills")), 1);
    json_decref(o);
    o = store_session_get(s, "ffff"); /* no keep_alive in its options: true */
    assert_true(json_is_true(json_object_get(o, "keep_alive")));
    json_decref(o);
    json_t *c = store_session_config(s, "eeee");
    assert_true(json_is_false(json_object_get(json_object_get(c, "options"), "keep_alive")));
    json_decref(c);
    c = store_session_config(s, "nope");
    assert_true(json_is_object(c));
    assert_int_equal(json_object_size(c), 0);
    json_decref(c);

    for (int i = 0; i < 5; i++) {
        char kind[16];
        snprintf(kind, sizeof(kind), "k%d", i);
        assert_int_equal(store_event_add(s, "eeee", kind, i == 2 ? "why" : NULL, 10 + i), 0);
    }
    json_t *ev = store_events_list(s, "eeee", 3); /* the newest 3, oldest first */
    assert_int_equal(json_array_size(ev), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "kind")), "k2");
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "detail")), "why");
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 2), "kind")), "k4");
    json_decref(ev);
    ev = store_events_list(s, "ffff", 10);
    assert_int_equal(json_array_size(ev), 0);
    json_decref(ev);
}

/* A store written by the first schema: states renamed, reasons kept, env values gone (a big
 * one too: its overflow pages are freed, and zeroed). */
static void test_migration_from_v1(void **state)
{
    char d[] = "/tmp/paddock-store-XXXXXX";
    assert_non_null(mkdtemp(d));
    char p[128];
    snprintf(p, sizeof(p), "%s/paddock.db", d);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    const char *v1 =
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL, image TEXT NOT NULL,"
        " container_id TEXT, state TEXT NOT NULL, error TEXT, config TEXT NOT NULL DEFAULT '{}',"
        " created_at REAL NOT NULL, updated_at REAL NOT NULL);"
        "CREATE TABLE actions (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL"
        " REFERENCES sessions(id), kind TEXT NOT NULL, summary TEXT NOT NULL, args TEXT NOT NULL,"
        " state TEXT NOT NULL, exit_code INTEGER, created_at REAL NOT NULL, started_at REAL,"
        " finished_at REAL, observation TEXT, observation_size INTEGER, error TEXT);"
        "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT,"
        " kind TEXT NOT NULL, detail TEXT, at REAL NOT NULL);"
        "INSERT INTO sessions VALUES ('a1', 'a', 'i', NULL, 'creating', NULL, '{}', 1, 1);"
        "INSERT INTO sessions VALUES ('b1', 'b', 'i', 'c', 'deleting', NULL, '{}', 1, 1);"
        "INSERT INTO sessions VALUES ('c1', 'c', 'i', 'c', 'error', 'boom', "
        "'{\"env\":{\"FOO\":\"wombat-value\",\"BIG\":\"' || printf('%.6000c', 'w') || "
        "'wombat-value\"}}', 1, 1);"
        "INSERT INTO events(session_id, kind, at) VALUES ('a1', 'creating', 1);"
        "INSERT INTO actions(session_id, kind, summary, args, state, created_at, observation, "
        "observation_size) VALUES ('c1', 'run', 'echo old', '{}', 'done', 1, "
        "'{\"content\":\"platypus\"}', 21);"
        "PRAGMA user_version = 1;";
    assert_int_equal(sqlite3_exec(db, v1, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    char *err = NULL;
    struct store *s = store_open(p, &err);
    assert_non_null(s);
    assert_int_equal(store_schema_version(s), store_schema_latest());
    json_t *o = store_session_get(s, "a1");
    assert_string_equal(json_string_value(json_object_get(o, "state")), "starting");
    json_decref(o);
    o = store_session_get(s, "b1");
    assert_string_equal(json_string_value(json_object_get(o, "state")), "error");
    assert_non_null(strstr(json_string_value(json_object_get(o, "reason")), "deleted"));
    json_decref(o);
    o = store_session_get(s, "c1");
    assert_string_equal(json_string_value(json_object_get(o, "reason")), "boom");
    assert_int_equal(json_integer_value(json_object_get(o, "action_count")), 1); /* counted */
    /* v9: the env's names stay, its values are gone */
    json_t *env = json_object_get(o, "env");
    assert_int_equal(json_array_size(env), 2);
    assert_string_equal(json_string_value(json_array_get(env, 0)), "FOO");
    assert_string_equal(json_string_value(json_array_get(env, 1)), "BIG");
    json_decref(o);
    json_t *ev = store_events_list(s, "a1", 10);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "kind")),
                        "starting");
    json_decref(ev);
    /* v4: the observation moved to its own table and the action is searchable by its output */
    struct store_search q = {.text = "platypus", .limit = 10};
    json_t *found = store_actions_search(s, &q, &err);
    assert_int_equal(json_array_size(found), 1);
    json_t *full = store_action_get_full(
        s, json_integer_value(json_object_get(json_array_get(found, 0), "id")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(full, "observation"), "content")),
        "platypus");
    assert_string_equal(json_string_value(json_object_get(full, "risk")), "low");
    json_decref(full);
    json_decref(found);
    assert_verified(s, NULL); /* the rows before the record, recorded by the migration */
    store_close(s);
    /* Not in the file's bytes either (store_close checkpointed the WAL into it). */
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    static char bytes[1 << 20];
    size_t n = fread(bytes, 1, sizeof(bytes), f);
    fclose(f);
    assert_null(memmem(bytes, n, "wombat-value", 12));
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
    assert_int_equal(system(cmd), 0);
}

/* Every kind of entry, then each change made behind the store's back is named. */
static void test_chain_tamper(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "tttt", "t", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_int_equal(store_session_transition(s, "tttt", SESSION_READY, "c", "up",
                                              STORE_NO_EXIT_CODE, 1.25, &err),
                     0);
    int64_t a = store_action_insert(s, "tttt", "run", "echo hi", "{}", 2.1, &err);
    assert_int_equal(
        store_action_finish(s, a, ACTION_DONE, 0, "{\"content\":\"hi\"}", 16, NULL, 2.2, &err), 0);
    struct store_action_new row = {.session_id = "tttt",
                                   .kind = "run",
                                   .summary = "rm -rf /",
                                   .args_json = "{}",
                                   .risk = RISK_HIGH,
                                   .state = ACTION_PENDING,
                                   .approval = APPROVAL_PENDING,
                                   .deadline = 700,
                                   .now = 3};
    int64_t b = store_action_add(s, &row, &err);
    assert_int_equal(store_action_decide(s, b, APPROVAL_REJECTED, "op", "no way", "{}", 4, &err),
                     1);
    assert_true(store_rule_add(s,
                               &(struct store_rule){.session_id = "tttt",
                                                    .pattern = "ls *",
                                                    .decision = POLICY_RULE_ALLOW,
                                                    .by = "op"},
                               5, &err) > 0);
    assert_int_equal(store_event_add(s, "tttt", "paused", NULL, 6), 0);
    assert_int_equal(store_event_add(s, NULL, "engine", "started", 7), 0);
    assert_verified(s, "tttt");
    assert_verified(s, NULL);

    /* one byte of an observation */
    sql("UPDATE observations SET content = '{\"content\":\"ho\"}' WHERE action_id = 1");
    assert_break(s, "observation 1: its content differs");
    sql("UPDATE observations SET content = '{\"content\":\"hi\"}' WHERE action_id = 1");
    assert_verified(s, NULL);
    /* a decision's reason */
    sql("UPDATE approvals SET reason = 'fine' WHERE action_id = 2");
    assert_break(s, "decision 2: its reason differs");
    sql("UPDATE approvals SET reason = 'no way' WHERE action_id = 2");
    /* two events swapped */
    sql("UPDATE events SET kind = CASE kind WHEN 'ready' THEN 'paused' ELSE 'ready' END "
        "WHERE session_id = 'tttt'");
    assert_break(s, "event 1: its kind differs");
    sql("UPDATE events SET kind = CASE kind WHEN 'ready' THEN 'paused' ELSE 'ready' END "
        "WHERE session_id = 'tttt'");
    assert_verified(s, NULL);
    /* an entry rewritten with a fresh hash of its own still breaks the next link */
    sql("UPDATE chain SET hash = '00' WHERE seq = 2");
    assert_break(s, "action 1: the entry was changed");
    /* an action deleted */
    sql("UPDATE chain SET hash = (SELECT prev FROM chain WHERE seq = 3) WHERE seq = 2;"
        "DELETE FROM actions WHERE id = 1");
    assert_break(s, "action 1: its row is gone");
}

/* The record's heads are remembered between entries (store_chain_heads.c). An entry rolled
 * back to a savepoint is forgotten with it: the next one links to what the store holds. */
static void test_chain_heads_after_rollback(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "ssss", "s", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_int_equal(store_event_add(s, "ssss", "ready", NULL, 2), 0);
    assert_true(store_action_insert(s, "ssss", "run", "one", "{}", 2.5, &err) > 0);
    long long before = one_row_int_path("SELECT max(seq) FROM chain");

    assert_int_equal(store_batch_begin(s, true, true, &err), 0);
    assert_int_equal(store_tx_begin(s, &err), 0);
    assert_int_equal(store_event_add(s, "ssss", "paused", NULL, 3), 0);
    assert_true(store_action_insert(s, "ssss", "run", "two", "{}", 3.5, &err) > 0);
    store_tx_rollback(s);
    assert_int_equal(store_event_add(s, "ssss", "resumed", NULL, 4), 0);
    int64_t three = store_action_insert(s, "ssss", "run", "three", "{}", 4.5, &err);
    assert_true(three > 0);
    assert_int_equal(store_batch_commit(s, &err), 0);
    const char obs[] = "{\"content\":\"x\"}";
    assert_int_equal(store_action_finish(s, three, ACTION_DONE, 0, obs, strlen(obs), NULL, 5, &err),
                     0);
    /* the rolled-back entries' seqs are taken again, and every link holds */
    assert_int_equal(one_row_int_path("SELECT max(seq) FROM chain"), before + 3);
    assert_verified(s, "ssss");
    assert_verified(s, NULL);

    /* A whole transaction rolled back (SQLite's rollback hook): the same. */
    assert_int_equal(store_batch_begin(s, true, false, &err), 0);
    assert_int_equal(store_event_add(s, "ssss", "paused", NULL, 6), 0);
    assert_int_equal(store_action_insert(s, "zzzz", "run", "bad", "{}", 6.5, &err), -1);
    free(err);
    err = NULL;
    assert_int_equal(store_batch_commit(s, &err), -1);
    free(err);
    err = NULL;
    assert_int_equal(store_event_add(s, "ssss", "resumed", NULL, 7), 0);
    assert_int_equal(one_row_int_path("SELECT max(seq) FROM chain"), before + 4);
    assert_verified(s, NULL);
}

/* An entry appended beside the engine (its seq taken): the engine's next entry still goes in,
 * after it, and the forged one is where the record breaks. */
static void test_chain_heads_outside_entry(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "oooo", "o", "img", SESSION_READY, NULL, 1, &err), 0);
    assert_int_equal(store_event_add(s, "oooo", "ready", NULL, 2), 0);
    assert_int_equal(store_event_add(s, "oooo", "paused", NULL, 3), 0);
    sql("INSERT INTO chain(seq, session_id, kind, ref, body, prev, hash, engine_hash) "
        "SELECT seq + 1, session_id, kind, ref, body, prev, hash, engine_hash FROM chain "
        "ORDER BY seq DESC LIMIT 1");
    long long forged = one_row_int_path("SELECT max(seq) FROM chain");
    assert_int_equal(store_event_add(s, "oooo", "resumed", NULL, 4), 0);
    assert_int_equal(one_row_int_path("SELECT max(seq) FROM chain"), forged + 1);
    assert_int_equal(one_row_int_path("SELECT count(*) FROM chain WHERE seq = (SELECT max(seq) "
                                      "FROM chain) AND ref = (SELECT max(id) FROM events)"),
                     1);
    char *got = verify_break(s);
    assert_non_null(got);
    assert_non_null(strstr(got, "event 2: "));
    free(got);
}

/* Rules engine-wide and per session: added, edited, removed and the config file's kept in
 * step, each change in the record; an edit behind the store's back is named. */
static void test_rules_edit_and_record(void **state)
{
    struct store *s = *state;
    char *err = NULL;
    assert_int_equal(store_session_insert(s, "rrrr", "r", "img", SESSION_READY, NULL, 1, &err), 0);
    int64_t e = store_rule_add(
        s, &(struct store_rule){.pattern = "make *", .decision = POLICY_RULE_ALLOW, .by = "op"}, 2,
        &err);
    int64_t r = store_rule_add(s,
                               &(struct store_rule){.session_id = "rrrr",
                                                    .pattern = "git status *",
                                                    .kind = "run",
                                                    .decision = POLICY_RULE_ALLOW,
                                                    .by = "op"},
                               3, &err);
    assert_true(e > 0 && r > e);
    /* the session sees the engine-wide rule first, then its own */
    json_t *l = store_rules_list(s, "rrrr");
    assert_int_equal(json_array_size(l), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(l, 0), "id")), e);
    assert_true(json_is_null(json_object_get(json_array_get(l, 0), "session_id")));
    assert_string_equal(json_string_value(json_object_get(json_array_get(l, 1), "kind")), "run");
    json_decref(l);
    l = store_rules_list(s, "other");
    assert_int_equal(json_array_size(l), 1);
    json_decref(l);
    assert_verified(s, NULL);
    /* edit: pattern, then the kind back to any */
    assert_int_equal(store_rule_edit(s, r, "git diff *", NULL, POLICY_RULE_NONE, "bob", 4, &err),
                     1);
    assert_int_equal(store_rule_edit(s, r, NULL, "", POLICY_RULE_DENY, "bob", 5, &err), 1);
    json_t *g = store_rule_get(s, r);
    assert_string_equal(json_string_value(json_object_get(g, "pattern")), "git diff *");
    assert_string_equal(json_string_value(json_object_get(g, "decision")), "deny");
    assert_true(json_is_null(json_object_get(g, "kind")));
    assert_string_equal(json_string_value(json_object_get(g, "changed_by")), "bob");
    json_decref(g);
    assert_verified(s, "rrrr");
    assert_verified(s, NULL);
    /* a rule's pattern changed in SQLite: named */
    sql("UPDATE rules SET pattern = '*' WHERE id = 2");
    assert_break(s, "rule_change 2: its pattern differs");
    sql("UPDATE rules SET pattern = 'git diff *' WHERE id = 2");
    assert_verified(s, NULL);
    /* un-removing one in SQLite: named */
    assert_int_equal(store_rule_remove(s, r, "bob", 6, &err), 1);
    assert_null(store_rule_get(s, r));
    assert_int_equal(store_rule_remove(s, r, "bob", 6, &err), 0);
    assert_int_equal(store_rule_edit(s, r, "x", NULL, POLICY_RULE_NONE, "bob", 7, &err), 0);
    assert_verified(s, NULL);
    sql("UPDATE rules SET removed = 0 WHERE id = 2");
    assert_break(s, "rule_change 2: its removed differs");
    sql("UPDATE rules SET removed = 1 WHERE id = 2");
    /* a rule inserted behind the store's back */
    sql("INSERT INTO rules(pattern, decision, created_at) VALUES ('*', 'allow', 8)");
    assert_break(s, "rule 3: its row is not in the record");
    sql("DELETE FROM rules WHERE id = 3");
    assert_verified(s, NULL);

    /* the config file's rules: added, kept, then one gone and one new, in order */
    json_t *cfg = json_loads("[{\"pattern\":\"rm *\",\"decision\":\"deny\"},"
                             "{\"pattern\":\"ls *\",\"decision\":\"allow\"}]",
                             0, NULL);
    assert_int_equal(store_rules_sync_config(s, cfg, 9, &err), 0);
    assert_int_equal(store_rules_sync_config(s, cfg, 10, &err), 0);
    l = store_rules_list(s, NULL);
    assert_int_equal(json_array_size(l), 3); /* make *, rm *, ls * */
    assert_string_equal(json_string_value(json_object_get(json_array_get(l, 1), "origin")),
                        "config");
    json_int_t ls_id = json_integer_value(json_object_get(json_array_get(l, 2), "id"));
    json_decref(l);
    json_array_remove(cfg, 0);
    json_array_append_new(cfg, json_pack("{s:s,s:s}", "pattern", "cat *", "decision", "allow"));
    assert_int_equal(store_rules_sync_config(s, cfg, 11, &err), 0);
    l = store_rules_list(s, NULL);
    assert_int_equal(json_array_size(l), 3); /* make *, ls * (again), cat * */
    assert_string_equal(json_string_value(json_object_get(json_array_get(l, 1), "pattern")),
                        "ls *");
    assert_true(json_integer_value(json_object_get(json_array_get(l, 1), "id")) > ls_id);
    assert_string_equal(json_string_value(json_object_get(json_array_get(l, 2), "pattern")),
                        "cat *");
    json_decref(l);
    json_decref(cfg);
    assert_verified(s, NULL);
}

static void test_open_bad_path(void **state)
{
    char *err = NULL;
    struct store *s = store_open("/nonexistent-dir/x/paddock.db", &err);
    assert_null(s);
    assert_non_null(err);
    assert_non_null(strstr(err, "cannot open"));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_schema_and_wal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wal_checkpoint_mark, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_without_locks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_page_cache_holds_the_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wal_prefilled_and_recovers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_keeps_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_actions_intent_then_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_bare, setup, teardown),
        cmocka_unit_test_setup_teardown(test_actions_paging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt_inflight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_actions_pending_and_decided, setup, teardown),
        cmocka_unit_test_setup_teardown(test_actions_search, setup, teardown),
        cmocka_unit_test_setup_teardown(test_derived_after_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_derived_bytes_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_derived_after_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules_and_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transitions_and_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chain_tamper, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chain_heads_after_rollback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wal_commit_is_one_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wal_commit_write_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chain_heads_outside_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_match, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules_edit_and_record, setup, teardown),
        cmocka_unit_test(test_migration_from_v1),
        cmocka_unit_test(test_open_bad_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
