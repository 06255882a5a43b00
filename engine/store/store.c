/* SQLite store. Durable by default: WAL + synchronous=FULL, so an acknowledged action is on
 * disk before the agent hears about it; intent rows are committed before side effects. */
#include "engine/store/store.h"

#include "engine/base/util.h"
#include "engine/store/store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Migrations: entry i moves the schema from version i to i+1. Never edit a shipped entry. */
static const char *const store_migrations[] = {
    "CREATE TABLE sessions ("
    "  id TEXT PRIMARY KEY,"
    "  name TEXT NOT NULL,"
    "  image TEXT NOT NULL,"
    "  container_id TEXT,"
    "  state TEXT NOT NULL,"
    "  error TEXT,"
    "  config TEXT NOT NULL DEFAULT '{}',"
    "  created_at REAL NOT NULL,"
    "  updated_at REAL NOT NULL);"
    "CREATE TABLE actions ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  session_id TEXT NOT NULL REFERENCES sessions(id),"
    "  kind TEXT NOT NULL,"
    "  summary TEXT NOT NULL,"
    "  args TEXT NOT NULL,"
    "  state TEXT NOT NULL,"
    "  exit_code INTEGER,"
    "  created_at REAL NOT NULL,"
    "  started_at REAL,"
    "  finished_at REAL,"
    "  observation TEXT,"
    "  observation_size INTEGER,"
    "  error TEXT);"
    "CREATE INDEX actions_by_session ON actions(session_id, id);"
    "CREATE TABLE events ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  session_id TEXT,"
    "  kind TEXT NOT NULL,"
    "  detail TEXT,"
    "  at REAL NOT NULL);",
    /* 1 → 2: resource samples (span: seconds one row stands for, 1 until downsampled) and the
     * container log tail kept when a session's container goes away. */
    "CREATE TABLE samples ("
    "  session_id TEXT NOT NULL,"
    "  at REAL NOT NULL,"
    "  span REAL NOT NULL DEFAULT 1,"
    "  cpu REAL,"
    "  mem INTEGER,"
    "  mem_limit INTEGER,"
    "  pids INTEGER,"
    "  net_rx INTEGER,"
    "  net_tx INTEGER,"
    "  blk_read INTEGER,"
    "  blk_write INTEGER);"
    "CREATE INDEX samples_by_session ON samples(session_id, at);"
    "CREATE TABLE log_tails ("
    "  session_id TEXT PRIMARY KEY,"
    "  text TEXT NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  at REAL NOT NULL);",
    /* 2 → 3: the lifecycle state machine (engine/base/session_state.c): creating → starting, why a
     * session is in its state, the container's exit code, kills by the OOM killer. */
    "ALTER TABLE sessions ADD COLUMN reason TEXT;"
    "ALTER TABLE sessions ADD COLUMN exit_code INTEGER;"
    "ALTER TABLE sessions ADD COLUMN oom_kills INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sessions SET reason = error WHERE error IS NOT NULL;"
    "UPDATE sessions SET state = 'starting' WHERE state = 'creating';"
    "UPDATE sessions SET state = 'error', error = 'engine stopped while the session was being "
    "deleted', reason = 'engine stopped while the session was being deleted' "
    "WHERE state = 'deleting';"
    "UPDATE events SET kind = 'starting' WHERE kind = 'creating';"
    "CREATE INDEX events_by_session ON events(session_id, id);",
    /* 3 → 4: risk and approvals (engine/action.c), observations in their own table (so paging
     * the actions never reads through a megabyte of output), operator rules, full-text search
     * over commands and outputs. */
    "ALTER TABLE actions ADD COLUMN risk TEXT NOT NULL DEFAULT 'low';"
    "ALTER TABLE actions ADD COLUMN risk_reason TEXT;"
    "ALTER TABLE actions ADD COLUMN declared_risk TEXT;"
    "ALTER TABLE actions ADD COLUMN approval TEXT NOT NULL DEFAULT 'none';"
    "CREATE TABLE observations ("
    "  action_id INTEGER PRIMARY KEY,"
    "  content TEXT NOT NULL,"
    "  size INTEGER NOT NULL);"
    "INSERT INTO observations SELECT id, observation, COALESCE(observation_size, "
    "length(observation)) FROM actions WHERE observation IS NOT NULL;"
    "UPDATE actions SET observation = NULL WHERE observation IS NOT NULL;"
    "CREATE TABLE approvals ("
    "  action_id INTEGER PRIMARY KEY,"
    "  session_id TEXT NOT NULL,"
    "  requested_at REAL NOT NULL,"
    "  deadline REAL,"
    "  decision TEXT,"
    "  decided_by TEXT,"
    "  decided_at REAL,"
    "  reason TEXT);"
    "CREATE INDEX approvals_open ON approvals(deadline) WHERE decision IS NULL;"
    "CREATE INDEX actions_pending ON actions(session_id) WHERE state = 'pending';"
    /* a restart finds what was in flight without reading every action */
    "CREATE INDEX actions_inflight ON actions(id) WHERE state IN ('received', 'running');"
    "CREATE TABLE rules ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  session_id TEXT NOT NULL,"
    "  pattern TEXT NOT NULL,"
    "  decision TEXT NOT NULL,"
    "  created_by TEXT,"
    "  created_at REAL NOT NULL);"
    "CREATE INDEX rules_by_session ON rules(session_id);"
    "CREATE VIRTUAL TABLE actions_fts USING fts5(summary, output);"
    "INSERT INTO actions_fts(rowid, summary, output) SELECT a.id, a.summary, "
    "COALESCE(CASE WHEN json_valid(o.content) THEN substr(json_extract(o.content, '$.content'), "
    "1, 65536) END, '') FROM actions a LEFT JOIN observations o ON o.action_id = a.id;"
    /* the count kept with the session: listing sessions never counts a million rows */
    "ALTER TABLE sessions ADD COLUMN action_count INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sessions SET action_count = (SELECT count(*) FROM actions a WHERE a.session_id = "
    "sessions.id);",
    /* 4 → 5: sessions paged newest first (the dashboard's History, GET /v1/sessions?limit=):
     * a page walks this index from its cursor instead of sorting the whole table. */
    "CREATE INDEX sessions_by_created ON sessions(created_at, id);",
    /* 5 → 6: a session's file changes (engine/changes.c) kept when its container goes, as the
     * reply of GET /v1/sessions/{id}/changes. */
    "CREATE TABLE changes ("
    "  session_id TEXT PRIMARY KEY,"
    "  body TEXT NOT NULL,"
    "  at REAL NOT NULL);",
    /* 6 → 7: what a write changed (the executor's unified diff of the old text and the new),
     * kept beside the observation: the agent's observation stays OpenHands' own. */
    "ALTER TABLE observations ADD COLUMN diff TEXT;",
    /* 7 → 8: the tamper-evident record (store_chain.c, docs/record.md); the rows already there
     * are recorded in the order they happened by store_chain_backfill, in the same
     * transaction. */
    "CREATE TABLE chain ("
    "  seq INTEGER PRIMARY KEY,"
    "  session_id TEXT,"
    "  kind TEXT NOT NULL,"
    "  ref INTEGER NOT NULL,"
    "  body TEXT NOT NULL,"
    "  prev TEXT NOT NULL,"
    "  hash TEXT NOT NULL,"
    "  engine_hash TEXT NOT NULL,"
    "  retired INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX chain_by_session ON chain(session_id, seq);",
    /* 8 → 9: env values are no longer kept (they may be keys and tokens): each session keeps
     * the names it was given. secure_delete (store_open; Debian's SQLite has it on already)
     * zeroes the old bytes. Sessions' rows are not in the chain: the record still verifies. */
    "UPDATE sessions SET config = json_set(config, '$.env', (SELECT json_group_array(key) "
    "FROM json_each(sessions.config, '$.env'))) WHERE json_type(config, '$.env') = 'object';",
    /* 9 → 10: rules without fatigue (docs/approvals.md): engine-wide rules (no session; from
     * the config file or the API), a rule limited to one kind of action, edits and removals
     * (a removed rule stays, marked, so the record still finds it), and the rule that decided
     * an action beside its approval. */
    "CREATE TABLE rules_v10 ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  session_id TEXT,"
    "  pattern TEXT NOT NULL,"
    "  decision TEXT NOT NULL,"
    "  created_by TEXT,"
    "  created_at REAL NOT NULL,"
    "  kind TEXT,"
    "  origin TEXT NOT NULL DEFAULT 'operator',"
    "  changed_by TEXT,"
    "  changed_at REAL,"
    "  removed INTEGER NOT NULL DEFAULT 0);"
    "INSERT INTO rules_v10(id, session_id, pattern, decision, created_by, created_at) "
    "SELECT id, session_id, pattern, decision, created_by, created_at FROM rules;"
    "DROP TABLE rules;"
    "ALTER TABLE rules_v10 RENAME TO rules;"
    "CREATE INDEX rules_by_session ON rules(session_id);"
    "ALTER TABLE approvals ADD COLUMN rule_id INTEGER;"
    "ALTER TABLE approvals ADD COLUMN rule_pattern TEXT;",
    /* 10 → 11: the egress record (engine/egress.c): one row per connection through a
     * session's proxy, and the rules operators added by approving (session_id NULL: every
     * session of the engine). */
    "CREATE TABLE egress ("
    "  id INTEGER PRIMARY KEY,"
    "  session_id TEXT NOT NULL,"
    "  host TEXT NOT NULL,"
    "  port INTEGER NOT NULL,"
    "  method TEXT NOT NULL,"
    "  decision TEXT NOT NULL,"
    "  rule TEXT,"
    "  decided_by TEXT,"
    "  action_id INTEGER,"
    "  command TEXT,"
    "  address TEXT,"
    "  bytes_up INTEGER NOT NULL DEFAULT 0,"
    "  bytes_down INTEGER NOT NULL DEFAULT 0,"
    "  started_at REAL NOT NULL,"
    "  ended_at REAL,"
    "  end_reason TEXT);"
    "CREATE INDEX egress_by_session ON egress(session_id, id);"
    "CREATE TABLE egress_rules ("
    "  id INTEGER PRIMARY KEY,"
    "  session_id TEXT,"
    "  pattern TEXT NOT NULL,"
    "  created_by TEXT,"
    "  created_at REAL NOT NULL);",
    /* 11 → 12: the search index and the sessions' action counts are kept up in batches off
     * the action path (store_derived.c): the record's entries up to seq are in both; every
     * one so far was as it was written. */
    "CREATE TABLE derived (seq INTEGER NOT NULL);"
    "INSERT INTO derived(seq) SELECT COALESCE(MAX(seq), 0) FROM chain;",
};

/* The schema version whose migration also records the existing rows (C: SHA-256). */
#define STORE_CHAIN_VERSION 8
/* The schema version whose migration dropped env values from sessions.config. */
#define STORE_ENV_NAMES_VERSION 9

char *store_errf(struct store *s, const char *what)
{
    return util_strdupf("store: %s: %s", what, sqlite3_errmsg(s->db));
}

/* The level store_sync_full asked for, set on the connection only when it differs and a
 * write is about to start outside a transaction (SQLite refuses to change it inside one). A
 * PRAGMA synchronous is compiled anew each time it runs (its effect is its compilation), so
 * setting it twice around every batch cost more than the batch's statements; now batches one
 * after the other, all at NORMAL with the syncer thread, never set it. */
static void store_level_apply(struct store *s)
{
    if (s->want_normal == s->is_normal || !sqlite3_get_autocommit(s->db))
        return;
    if (sqlite3_exec(s->db,
                     s->want_normal ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL", NULL,
                     NULL, NULL) == SQLITE_OK)
        s->is_normal = s->want_normal;
}

int store_exec(struct store *s, const char *sql, char **err)
{
    char *msg = NULL;
    store_level_apply(s);
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        s->last_rc = rc;
        if (err)
            *err = util_strdupf("store: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int store_schema_version(struct store *s)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

bool store_last_error_was_full(struct store *s)
{
    return s->last_rc == SQLITE_FULL || s->last_rc == SQLITE_IOERR;
}

int store_schema_latest(void)
{
    return (int)(sizeof(store_migrations) / sizeof(store_migrations[0]));
}

static int store_migrate(struct store *s, char **err)
{
    int n = store_schema_latest();
    int v = store_schema_version(s);
    if (v < 0) {
        *err = store_errf(s, "reading user_version");
        return -1;
    }
    if (v > n) {
        *err = util_strdupf("store: schema version %d is newer than this paddock (%d)", v, n);
        return -1;
    }
    for (; v < n; v++) {
        char pragma[64];
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d;", v + 1);
        if (store_exec(s, "BEGIN IMMEDIATE;", err) < 0)
            return -1;
        if (store_exec(s, store_migrations[v], err) < 0 ||
            (v + 1 == STORE_CHAIN_VERSION && store_chain_backfill(s, err) < 0) ||
            store_exec(s, pragma, err) < 0) {
            store_exec(s, "ROLLBACK;", NULL);
            return -1;
        }
        if (store_exec(s, "COMMIT;", err) < 0)
            return -1;
        /* The rows v9 scrubbed may still be in WAL frames (an engine that was killed leaves
         * its WAL): move everything into the file, where secure_delete zeroed them, and empty
         * the WAL. Busy is no error: the next checkpoint does it. */
        if (v + 1 == STORE_ENV_NAMES_VERSION)
            sqlite3_exec(s->db, "PRAGMA wal_checkpoint(TRUNCATE);", NULL, NULL, NULL);
    }
    return 0;
}

/* The write-ahead log's file, opened with flags; -1 with errno when there is none. */
static int store_wal_open_flags(struct store *s, int flags)
{
    const char *db = sqlite3_db_filename(s->db, "main");
    if (!db || !*db) {
        errno = ENOENT;
        return -1;
    }
    char *wal = util_strdupf("%s-wal", db);
    if (!wal) {
        errno = ENOMEM;
        return -1;
    }
    int fd = open(wal, flags | O_CLOEXEC | O_NOFOLLOW);
    free(wal);
    return fd;
}

int store_wal_open(struct store *s)
{
    return store_wal_open_flags(s, O_RDONLY);
}

/* The log's first cycle after an open appends to a growing file, and each fdatasync of it then
 * also allocates blocks and writes the file's new size: 0.17-0.24 ms a sync on this machine's
 * disk, against 0.11 ms once SQLite writes the log again from its start after a checkpoint,
 * over blocks it already has. So the log is given a cycle's size in zeros at open, once
 * (40 MiB, about 20 ms here), when the disk has sixteen times that free (never on the small
 * filesystems of the disk-full tests). Zeros are no frame: SQLite's recovery checks each
 * frame's salt against the log's header and stops at the first that does not match, and a log
 * whose header is zeros is empty. Best effort: on a failure the zeros are cut off again. */
#define STORE_WAL_PREFILL_SPARE 16

static void store_wal_prefill(struct store *s)
{
    long long page = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        page = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    /* The header, then the frames (a header each) up to the checkpoint's mark and a little past
     * it: the commit that crosses the mark checkpoints after it is written. */
    long long want = 32 + (24 + page) * (STORE_WAL_CHECKPOINT_PAGES + 64);
    int fd = page > 0 ? store_wal_open_flags(s, O_WRONLY) : -1;
    if (fd < 0)
        return;
    struct stat sb;
    struct statvfs vfs;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size < want &&
        fstatvfs(fd, &vfs) == 0 &&
        (unsigned long long)vfs.f_bavail * vfs.f_frsize >
            (unsigned long long)want * STORE_WAL_PREFILL_SPARE) {
        static char zeros[64 * 1024];
        long long off = sb.st_size;
        while (off < want) {
            size_t n = want - off < (long long)sizeof(zeros) ? (size_t)(want - off) : sizeof(zeros);
            ssize_t w = pwrite(fd, zeros, n, off);
            if (w <= 0)
                break;
            off += w;
        }
        if ((off < want || fdatasync(fd) < 0) && ftruncate(fd, sb.st_size) < 0) {
            /* Zeros past the log's frames are harmless where they stay. */
        }
    }
    close(fd);
}

struct store *store_open(const char *path, char **err)
{
    struct store *s = calloc(1, sizeof(*s));
    if (!s) {
        *err = strdup("out of memory");
        return NULL;
    }
    /* Only the engine's loop uses the connection (the syncer thread syncs the log's
     * descriptor), so neither SQLite's lock around every call on it (NOMUTEX) nor the global
     * one its memory statistics take at every allocation guards anything: together 3.5 % of
     * the engine's CPU under load. The statistics can be turned off only before SQLite starts;
     * later calls fail, harmlessly. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (sqlite3_open_v2(path, &s->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        store_vfs_name()) != SQLITE_OK) {
        *err = util_strdupf("store: cannot open %s: %s", path,
                            s->db ? sqlite3_errmsg(s->db) : "out of memory");
        store_close(s);
        return NULL;
    }
    sqlite3_busy_timeout(s->db, 5000);
    if (store_chain_heads_init(s) < 0) {
        *err = strdup("out of memory");
        store_close(s);
        return NULL;
    }
    /* The checkpoint runs on the loop, inside the commit that crosses the mark, with two
     * fsyncs: at SQLite's default (1,000 log pages) that was every ~120 actions under load.
     * The same few pages (the tables' last leaves) are rewritten by every commit, so ten
     * times the log copies hardly more pages into the database, ten times less often. The
     * log file keeps its largest size (40 MiB) once reached: it is reused from its start.
     * The page cache is 8 MiB, not SQLite's 2: at 2 the search index's updates between turns
     * pushed the action path's pages out, and about one page an action was read back from the
     * log. */
    char pragmas[256];
    snprintf(pragmas, sizeof(pragmas),
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; "
             "PRAGMA secure_delete=ON; PRAGMA wal_autocheckpoint=%d; PRAGMA cache_size=-%d;",
             STORE_WAL_CHECKPOINT_PAGES, STORE_CACHE_KIB);
    if (store_exec(s, pragmas, err) < 0 || store_migrate(s, err) < 0) {
        store_close(s);
        return NULL;
    }
    store_wal_prefill(s);
    return s;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    for (int i = 0; i < STORE_SLOT_N; i++)
        sqlite3_finalize(s->cache[i]);
    store_chain_heads_free(s);
    if (s->db) {
        sqlite3_exec(s->db, "PRAGMA wal_checkpoint(TRUNCATE);", NULL, NULL, NULL);
        sqlite3_close_v2(s->db);
    }
    free(s);
}

/* Statements are prepared per call (tens of microseconds); the fsync of each commit dominates. */
sqlite3_stmt *store_prepare(struct store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    if (!sqlite3_stmt_readonly(st))
        store_level_apply(s);
    return st;
}

sqlite3_stmt *store_cached(struct store *s, enum store_slot slot, const char *sql)
{
    sqlite3_stmt **st = &s->cache[slot];
    if (!*st &&
        sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_reset(*st);
    sqlite3_clear_bindings(*st);
    if (!sqlite3_stmt_readonly(*st))
        store_level_apply(s);
    return *st;
}

int store_cached_done(struct store *s, sqlite3_stmt *st, const char *what, char **err)
{
    store_level_apply(s);
    int rc = st ? sqlite3_step(st) : sqlite3_errcode(s->db);
    if (st)
        sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        s->last_rc = rc;
        if (err)
            *err = store_errf(s, what);
        return -1;
    }
    return 0;
}

/* The transaction statements of the action path, prepared once: parsing them each time cost
 * more than running them. */
static const char *const store_tx_sql[STORE_SLOT_N] = {
    [STORE_SLOT_BEGIN] = "BEGIN IMMEDIATE",
    [STORE_SLOT_COMMIT] = "COMMIT",
    [STORE_SLOT_SAVEPOINT] = "SAVEPOINT tx",
    [STORE_SLOT_RELEASE] = "RELEASE tx",
};

static int store_tx_step(struct store *s, enum store_slot slot, char **err)
{
    if (slot == STORE_SLOT_BEGIN)
        store_level_apply(s); /* the transaction's level */
    sqlite3_stmt *st = store_cached(s, slot, store_tx_sql[slot]);
    int rc = st ? sqlite3_step(st) : sqlite3_errcode(s->db);
    if (st)
        sqlite3_reset(st);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW)
        return 0;
    s->last_rc = rc;
    if (err)
        *err = store_errf(s, store_tx_sql[slot]);
    return -1;
}

int store_tx_begin(struct store *s, char **err)
{
    if (s->batch && s->bare)
        return 0;
    return store_tx_step(s, s->batch ? STORE_SLOT_SAVEPOINT : STORE_SLOT_BEGIN, err);
}

int store_tx_commit(struct store *s, char **err)
{
    if (s->batch && s->bare)
        return 0;
    if (store_tx_step(s, s->batch ? STORE_SLOT_RELEASE : STORE_SLOT_COMMIT, err) < 0) {
        store_tx_rollback(s);
        return -1;
    }
    return 0;
}

void store_tx_rollback(struct store *s)
{
    if (s->batch && s->bare)
        s->spoiled = true; /* what the write left half done goes with the whole batch */
    else if (s->batch) {
        sqlite3_exec(s->db, "ROLLBACK TO tx; RELEASE tx", NULL, NULL, NULL);
        store_chain_heads_forget(s);
    } else if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_batch_begin(struct store *s, bool durable, bool savepoints, char **err)
{
    /* The level is fixed before the transaction: SQLite refuses to change it inside one. */
    store_sync_full(s, durable);
    if (store_tx_step(s, STORE_SLOT_BEGIN, err) < 0) {
        store_sync_full(s, 1);
        return -1;
    }
    s->batch = true;
    s->bare = !savepoints;
    s->spoiled = false;
    return 0;
}

int store_batch_commit(struct store *s, char **err)
{
    bool spoiled = s->spoiled;
    s->batch = s->bare = s->spoiled = false;
    int rc = spoiled ? -1 : store_tx_step(s, STORE_SLOT_COMMIT, err);
    if (spoiled && err)
        *err = strdup("store: a write of the batch failed; the batch was rolled back");
    if (rc < 0)
        store_tx_rollback(s);
    store_sync_full(s, 1);
    return rc;
}

void store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

int store_step_done(struct store *s, sqlite3_stmt *st, const char *what, char **err)
{
    store_level_apply(s);
    int rc = st ? sqlite3_step(st) : sqlite3_errcode(s->db);
    if (rc != SQLITE_DONE) {
        s->last_rc = rc;
        if (err)
            *err = store_errf(s, what);
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

int store_session_insert(struct store *s, const char *id, const char *name, const char *image,
                         enum session_st state, json_t *config, double now, char **err)
{
    sqlite3_stmt *st = store_prepare(s, "INSERT INTO sessions(id, name, image, state, config, "
                                        "created_at, updated_at) VALUES (?,?,?,?,?,?,?)");
    char *cfg = config ? json_dumps(config, JSON_COMPACT) : NULL;
    if (st) {
        store_bind_text(st, 1, id);
        store_bind_text(st, 2, name);
        store_bind_text(st, 3, image);
        store_bind_text(st, 4, session_st_name(state));
        store_bind_text(st, 5, cfg ? cfg : "{}");
        sqlite3_bind_double(st, 6, now);
        sqlite3_bind_double(st, 7, now);
    }
    free(cfg);
    return store_step_done(s, st, "inserting session", err);
}

int store_session_update(struct store *s, const char *id, enum session_st state,
                         const char *container_id, const char *error, double now, char **err)
{
    sqlite3_stmt *st = store_prepare(s, "UPDATE sessions SET state = ?, "
                                        "container_id = COALESCE(?, container_id), error = ?, "
                                        "updated_at = ? WHERE id = ?");
    if (st) {
        store_bind_text(st, 1, session_st_name(state));
        store_bind_text(st, 2, container_id);
        store_bind_text(st, 3, error);
        sqlite3_bind_double(st, 4, now);
        store_bind_text(st, 5, id);
    }
    return store_step_done(s, st, "updating session", err);
}

int store_session_config_set(struct store *s, const char *id, const char *key, json_t *value,
                             char **err)
{
    sqlite3_stmt *st = store_prepare(s, "UPDATE sessions SET config = json_set(config, '$.' || ?, "
                                        "json(?)) WHERE id = ?");
    char *v = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (st) {
        store_bind_text(st, 1, key);
        store_bind_text(st, 2, v ? v : "null");
        store_bind_text(st, 3, id);
    }
    free(v);
    return store_step_done(s, st, "updating session config", err);
}

int store_session_transition(struct store *s, const char *id, enum session_st state,
                             const char *container_id, const char *reason, int exit_code,
                             double now, char **err)
{
    const char *name = session_st_name(state);
    /* The state and its event in one transaction, without an fsync of their own
     * (synchronous=NORMAL: they survive an engine crash; after a power loss reconcile finds
     * the containers' real state anyway). */
    sqlite3_stmt *st = store_prepare(s, "UPDATE sessions SET state = ?, "
                                        "container_id = COALESCE(?, container_id), reason = ?, "
                                        "error = CASE WHEN ? = 'error' THEN ? END, "
                                        "exit_code = ?, updated_at = ? WHERE id = ?");
    if (st) {
        store_bind_text(st, 1, name);
        store_bind_text(st, 2, container_id);
        store_bind_text(st, 3, reason);
        store_bind_text(st, 4, name);
        store_bind_text(st, 5, reason);
        if (exit_code == STORE_NO_EXIT_CODE)
            sqlite3_bind_null(st, 6);
        else
            sqlite3_bind_int(st, 6, exit_code);
        sqlite3_bind_double(st, 7, now);
        store_bind_text(st, 8, id);
    }
    store_sync_full(s, 0);
    int rc = store_exec(s, "BEGIN IMMEDIATE;", err);
    if (rc < 0) {
        sqlite3_finalize(st);
    } else {
        rc = store_step_done(s, st, "updating session", err);
        if (rc == 0)
            rc = store_event_add(s, id, name, reason, now);
        if (store_exec(s, rc == 0 ? "COMMIT;" : "ROLLBACK;", rc == 0 ? err : NULL) < 0)
            rc = -1;
    }
    store_sync_full(s, 1);
    return rc;
}

int store_session_set_container(struct store *s, const char *id, const char *container_id,
                                double now)
{
    sqlite3_stmt *st = store_prepare(s, "UPDATE sessions SET container_id = ?, updated_at = ? "
                                        "WHERE id = ?");
    if (st) {
        store_bind_text(st, 1, container_id);
        sqlite3_bind_double(st, 2, now);
        store_bind_text(st, 3, id);
    }
    store_sync_full(s, 0);
    int rc = store_step_done(s, st, "recording the container", NULL);
    store_sync_full(s, 1);
    return rc;
}

int store_session_count_oom(struct store *s, const char *id, double now)
{
    sqlite3_stmt *st = store_prepare(s, "UPDATE sessions SET oom_kills = oom_kills + 1, "
                                        "updated_at = ? WHERE id = ?");
    if (st) {
        sqlite3_bind_double(st, 1, now);
        store_bind_text(st, 2, id);
    }
    return store_step_done(s, st, "counting an OOM kill", NULL);
}

json_t *store_session_config(struct store *s, const char *id)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT config FROM sessions WHERE id = ?");
    json_t *o = NULL;
    if (st) {
        store_bind_text(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            o = t ? json_loads((const char *)t, 0, NULL) : NULL;
        }
    }
    sqlite3_finalize(st);
    if (!json_is_object(o)) {
        json_decref(o);
        o = json_object();
    }
    return o;
}

json_t *store_col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? json_string((const char *)t) : json_null();
}

json_t *store_col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                     : json_real(sqlite3_column_double(st, i));
}

#define STORE_SESSION_COLS                                                                         \
    "s.id, s.name, s.image, s.state, s.container_id, s.created_at, s.updated_at, s.error, "        \
    "s.action_count + (SELECT count(*) FROM chain c WHERE c.session_id = s.id AND c.seq > "        \
    "(SELECT seq FROM derived) AND c.kind = 'action'), "                                           \
    "json_extract(s.config, '$.options'), json_extract(s.config, '$.ports'), s.reason, "           \
    "s.exit_code, s.oom_kills, json_extract(s.config, '$.options.keep_alive'), "                   \
    "json_extract(s.config, '$.pooled'), "                                                         \
    "(SELECT count(*) FROM actions a WHERE a.session_id = s.id AND a.state = 'pending'), "         \
    "json_extract(s.config, '$.env'), json_extract(s.config, '$.withheld_env')"

/* A JSON column (from json_extract), or dflt when NULL or not JSON. */
static json_t *store_col_json(sqlite3_stmt *st, int i, json_t *dflt)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    json_t *j = t ? json_loads((const char *)t, JSON_DECODE_ANY, NULL) : NULL;
    if (!j)
        return dflt;
    json_decref(dflt);
    return j;
}

static json_t *store_session_row(sqlite3_stmt *st)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", store_col_text(st, 0));
    json_object_set_new(o, "name", store_col_text(st, 1));
    json_object_set_new(o, "image", store_col_text(st, 2));
    json_object_set_new(o, "state", store_col_text(st, 3));
    json_object_set_new(o, "container_id", store_col_text(st, 4));
    json_object_set_new(o, "created_at", store_col_real(st, 5));
    json_object_set_new(o, "updated_at", store_col_real(st, 6));
    json_object_set_new(o, "error", store_col_text(st, 7));
    json_object_set_new(o, "action_count", json_integer(sqlite3_column_int64(st, 8)));
    json_object_set_new(o, "options", store_col_json(st, 9, json_null()));
    json_object_set_new(o, "ports", store_col_json(st, 10, json_array()));
    json_object_set_new(o, "reason", store_col_text(st, 11));
    json_object_set_new(o, "exit_code",
                        sqlite3_column_type(st, 12) == SQLITE_NULL
                            ? json_null()
                            : json_integer(sqlite3_column_int(st, 12)));
    json_object_set_new(o, "oom_kills", json_integer(sqlite3_column_int64(st, 13)));
    /* keep_alive defaults to true: only an explicit false lets the engine delete it. */
    json_object_set_new(o, "keep_alive",
                        json_boolean(sqlite3_column_type(st, 14) == SQLITE_NULL ||
                                     sqlite3_column_int(st, 14) != 0));
    if (sqlite3_column_int(st, 15))
        json_object_set_new(o, "pooled", json_true());
    json_object_set_new(o, "pending_approvals", json_integer(sqlite3_column_int64(st, 16)));
    /* Names only: the store has no values. */
    json_t *env = store_col_json(st, 17, json_null());
    if (json_is_array(env))
        json_object_set_new(o, "env", env);
    else
        json_decref(env);
    json_t *withheld = store_col_json(st, 18, json_null());
    if (json_is_array(withheld))
        json_object_set_new(o, "withheld_env", withheld);
    else
        json_decref(withheld);
    return o;
}

json_t *store_sessions_query(struct store *s, const struct store_session_query *q, char **err)
{
    /* Keyset paging: (created_at, id) below the cursor's, so a page costs the same however
     * deep it is. Absent bounds are bound as infinities: one plan, always an index range. */
    double cur_at = INFINITY;
    if (q->before) {
        sqlite3_stmt *c = store_prepare(s, "SELECT created_at FROM sessions WHERE id = ?");
        int found = 0;
        if (c) {
            store_bind_text(c, 1, q->before);
            if (sqlite3_step(c) == SQLITE_ROW) {
                cur_at = sqlite3_column_double(c, 0);
                found = 1;
            }
        }
        sqlite3_finalize(c);
        if (!found) {
            if (err)
                *err = util_strdupf("no session %s to page after", q->before);
            return NULL;
        }
    }
    /* Warm-pool sandboxes are the engine's own until claimed: listed only when asked. An
     * explicit state filter names what it wants, deleted included. */
    sqlite3_stmt *st = store_prepare(
        s, "SELECT " STORE_SESSION_COLS " FROM sessions s WHERE "
           "(?1 OR json_extract(s.config, '$.pooled') IS NULL) AND "
           "(CASE WHEN ?2 IS NOT NULL THEN s.state = ?2 ELSE (?3 OR s.state != 'deleted') END) "
           "AND (?4 IS NULL OR instr(s.image, ?4) > 0) AND s.created_at >= ?5 AND "
           "s.created_at < ?6 AND (s.created_at, s.id) < (?7, ?8) "
           "ORDER BY s.created_at DESC, s.id DESC LIMIT ?9");
    if (!st) {
        if (err)
            *err = store_errf(s, "listing sessions");
        return NULL;
    }
    sqlite3_bind_int(st, 1, (q->flags & STORE_LIST_POOLED) != 0);
    store_bind_text(st, 2, q->state ? session_st_name(*q->state) : NULL);
    sqlite3_bind_int(st, 3, (q->flags & STORE_LIST_DELETED) != 0);
    store_bind_text(st, 4, q->image && *q->image ? q->image : NULL);
    sqlite3_bind_double(st, 5, q->since > 0 ? q->since : -INFINITY);
    sqlite3_bind_double(st, 6, q->until > 0 ? q->until : INFINITY);
    sqlite3_bind_double(st, 7, cur_at);
    store_bind_text(st, 8, q->before ? q->before : "");
    sqlite3_bind_int(st, 9, q->limit > 0 ? q->limit : -1);
    json_t *arr = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, store_session_row(st));
    if (rc != SQLITE_DONE) {
        if (err)
            *err = store_errf(s, "listing sessions");
        json_decref(arr);
        arr = NULL;
    }
    sqlite3_finalize(st);
    return arr;
}

json_t *store_sessions_list(struct store *s, int flags)
{
    struct store_session_query q = {.flags = flags};
    json_t *arr = store_sessions_query(s, &q, NULL);
    return arr ? arr : json_array();
}

int store_session_claim(struct store *s, const char *id, const char *name, json_t *patch,
                        double now, char **err)
{
    /* One statement: a claimed sandbox is the caller's from its name to its options. */
    char *pj = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    sqlite3_stmt *st =
        store_prepare(s, "UPDATE sessions SET name = ?, created_at = ?, updated_at = ?, "
                         "config = json_patch(json_remove(config, '$.pooled'), json(?)) "
                         "WHERE id = ? AND json_extract(config, '$.pooled') IS NOT NULL");
    if (st) {
        store_bind_text(st, 1, name);
        sqlite3_bind_double(st, 2, now);
        sqlite3_bind_double(st, 3, now);
        store_bind_text(st, 4, pj ? pj : "{}");
        store_bind_text(st, 5, id);
    }
    free(pj);
    if (store_step_done(s, st, "claiming a pooled session", err) < 0)
        return -1;
    if (sqlite3_changes(s->db) != 1) {
        if (err)
            *err = util_strdupf("store: session %s is not in the pool", id);
        return -1;
    }
    return 0;
}

json_t *store_session_match(struct store *s, const char *ref)
{
    /* An exact id first, then names (newest first), then ids the ref begins; the pool's
     * unclaimed sandboxes are no one's to name. */
    sqlite3_stmt *st = store_prepare(
        s, "SELECT id, name, state, id = ?1 AS exact, name IS ?1 AS named FROM sessions "
           "WHERE json_extract(config, '$.pooled') IS NULL AND "
           "(id = ?1 OR name IS ?1 OR substr(id, 1, length(?1)) = ?1) "
           "ORDER BY exact DESC, named DESC, created_at DESC, id DESC LIMIT 64");
    json_t *arr = json_array();
    if (st && arr) {
        store_bind_text(st, 1, ref);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(st, 1);
            json_t *row =
                json_pack("{s:s,s:s?,s:s,s:b,s:b}", "id", (const char *)sqlite3_column_text(st, 0),
                          "name", name, "state", (const char *)sqlite3_column_text(st, 2), "exact",
                          sqlite3_column_int(st, 3), "named", sqlite3_column_int(st, 4));
            if (row)
                json_array_append_new(arr, row);
        }
    }
    sqlite3_finalize(st);
    return arr;
}

json_t *store_session_get(struct store *s, const char *id)
{
    sqlite3_stmt *st =
        store_prepare(s, "SELECT " STORE_SESSION_COLS " FROM sessions s WHERE s.id = ?");
    json_t *o = NULL;
    if (st) {
        store_bind_text(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW)
            o = store_session_row(st);
    }
    sqlite3_finalize(st);
    return o;
}

/* The intent row survives an engine crash without its own fsync (WAL, synchronous=NORMAL);
 * the observation's commit (FULL) syncs the WAL, intent included, before the agent hears back.
 * So an acknowledged action is on disk, at one fsync per action instead of two. */
void store_sync_full(struct store *s, int full)
{
    if (s->batch)
        return;             /* the batch's commit is synced as store_batch_begin said */
    s->want_normal = !full; /* set before the next write (store_level_apply) */
}

int store_event_add(struct store *s, const char *session_id, const char *kind, const char *detail,
                    double now)
{
    sqlite3_stmt *st =
        store_prepare(s, "INSERT INTO events(session_id, kind, detail, at) VALUES (?,?,?,?)");
    if (st) {
        store_bind_text(st, 1, session_id);
        store_bind_text(st, 2, kind);
        store_bind_text(st, 3, detail);
        sqlite3_bind_double(st, 4, now);
    }
    /* The row and its entry in the record together. */
    if (store_exec(s, "SAVEPOINT event", NULL) < 0) {
        sqlite3_finalize(st);
        return -1;
    }
    if (store_step_done(s, st, "adding event", NULL) < 0 ||
        store_chain_append(s, session_id, "event", sqlite3_last_insert_rowid(s->db), NULL) < 0) {
        store_exec(s, "ROLLBACK TO event; RELEASE event", NULL);
        store_chain_heads_forget(s);
        return -1;
    }
    return store_exec(s, "RELEASE event", NULL);
}

json_t *store_events_list(struct store *s, const char *session_id, int limit)
{
    /* The newest limit events, oldest first. */
    sqlite3_stmt *st = store_prepare(s, "SELECT id, kind, detail, at FROM (SELECT * FROM events "
                                        "WHERE session_id = ? ORDER BY id DESC LIMIT ?) "
                                        "ORDER BY id");
    json_t *arr = json_array();
    if (st) {
        store_bind_text(st, 1, session_id);
        sqlite3_bind_int(st, 2, limit);
        while (sqlite3_step(st) == SQLITE_ROW)
            json_array_append_new(
                arr, json_pack("{s:I,s:o,s:o,s:o}", "id", (json_int_t)sqlite3_column_int64(st, 0),
                               "kind", store_col_text(st, 1), "detail", store_col_text(st, 2), "at",
                               store_col_real(st, 3)));
    }
    sqlite3_finalize(st);
    return arr;
}
