/* What the store_*.c files share; not for the rest of the engine. */
#ifndef PADDOCK_STORE_INTERNAL_H
#define PADDOCK_STORE_INTERNAL_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/* The most of an observation's JSON stored (observations.content); its size is the whole. */
#define STORE_OBSERVATION_CAP (1024 * 1024)
/* Log pages that make the committing connection checkpoint (store_open). */
#define STORE_WAL_CHECKPOINT_PAGES 10000
/* SQLite's page cache for the store's connection, in KiB (PRAGMA cache_size=-N). */
#define STORE_CACHE_KIB 8192

/* Statements on the action path, prepared once (store_cached). */
enum store_slot {
    STORE_SLOT_ACTION_INSERT,
    STORE_SLOT_APPROVAL_INSERT,
    STORE_SLOT_ACTION_FINISH,
    STORE_SLOT_OBSERVATION_SET,
    STORE_SLOT_DERIVED_MARK,
    STORE_SLOT_DERIVED_HEAD,
    STORE_SLOT_DERIVED_COST,
    STORE_SLOT_DERIVED_INDEX,
    STORE_SLOT_DERIVED_COUNT,
    STORE_SLOT_DERIVED_SET,
    STORE_SLOT_ACTION_GET,
    STORE_SLOT_CHAIN_HEAD,
    STORE_SLOT_CHAIN_SESSION_HEAD,
    STORE_SLOT_CHAIN_BODY_ACTION,
    STORE_SLOT_CHAIN_BODY_DECISION,
    STORE_SLOT_CHAIN_BODY_OBSERVATION,
    STORE_SLOT_CHAIN_BODY_RULE,
    STORE_SLOT_CHAIN_BODY_RULE_CHANGE,
    STORE_SLOT_CHAIN_BODY_EVENT,
    STORE_SLOT_CHAIN_INSERT,
    STORE_SLOT_CHAIN_ACTION_SESSION,
    /* the transaction statements of the action path (store_tx_*, store_batch_*) */
    STORE_SLOT_BEGIN,
    STORE_SLOT_COMMIT,
    STORE_SLOT_SAVEPOINT,
    STORE_SLOT_RELEASE,
    STORE_SLOT_N
};

struct store {
    sqlite3 *db;
    int last_rc; /* SQLite's result of the last failed write (SQLITE_FULL: disk full) */
    /* Inside store_batch_begin/commit: a transaction is a savepoint of the batch's (bare:
     * nothing, and a rollback spoils the batch), and the batch decides how the commit is
     * synced. */
    bool batch, bare, spoiled;
    /* synchronous=NORMAL asked for (store_sync_full), and what the connection has: the level is
     * set only when a write starts and they differ (store.c) */
    bool want_normal, is_normal;
    sqlite3_stmt *cache[STORE_SLOT_N];
    struct store_chain_heads *heads; /* store_chain_heads.c */
};

char *store_errf(struct store *s, const char *what);
int store_exec(struct store *s, const char *sql, char **err);
/* NULL when the statement does not compile (a bug) or the database is gone. */
sqlite3_stmt *store_prepare(struct store *s, const char *sql);
void store_bind_text(sqlite3_stmt *st, int i, const char *v);
/* The statement of slot, prepared on first use, reset with its bindings cleared; do not
 * finalize it. */
sqlite3_stmt *store_cached(struct store *s, enum store_slot slot, const char *sql);
/* Step a cached statement that returns no rows and reset it; 0 or -1 with *err. */
int store_cached_done(struct store *s, sqlite3_stmt *st, const char *what, char **err);
/* BEGIN IMMEDIATE (the write lock up front, so a busy store waits at the start, never half
 * way), COMMIT, ROLLBACK; inside a batch a savepoint, released or rolled back to, so one
 * failed write leaves the batch's others; inside a bare batch nothing, and a rollback marks
 * the batch spoiled (store_batch_commit refuses it). */
int store_tx_begin(struct store *s, char **err);
int store_tx_commit(struct store *s, char **err);
void store_tx_rollback(struct store *s);
/* Step a statement that returns no rows and finalize it; 0 or -1 with *err. */
int store_step_done(struct store *s, sqlite3_stmt *st, const char *what, char **err);
json_t *store_col_text(sqlite3_stmt *st, int i);
json_t *store_col_real(sqlite3_stmt *st, int i);
/* full: synchronous=FULL (acknowledged data); else NORMAL (survives a crash of the engine,
 * not of the machine). Applies from the next write that starts a transaction (or runs alone):
 * call it before that write, and again (full) after its commit. */
void store_sync_full(struct store *s, int full);
/* The record (store_chain.c): append the entry of kind's row ref (kind: action, decision,
 * observation, rule, event) in the caller's transaction. */
int store_chain_append(struct store *s, const char *session_id, const char *kind, int64_t ref,
                       char **err);
/* The same for an action's entry (action, decision, observation): its session looked up. */
int store_chain_append_action(struct store *s, const char *kind, int64_t action_id, char **err);
/* The VFS the store's connection opens its files with (store_vfs.c): SQLite's default, with a
 * commit's frames of the write-ahead log written in one call. NULL when it could not be set up
 * (then SQLite's default). */
const char *store_vfs_name(void);
/* Record every row already in the store (the migration that adds the record). */
int store_chain_backfill(struct store *s, char **err);

/* The record's heads as the engine left them (store_chain_heads.c), so an entry need not read
 * them back: forgotten at every rollback. Sessions' names longer than this are not held. */
#define STORE_CHAIN_SESSION_MAX 63
int store_chain_heads_init(struct store *s);
void store_chain_heads_free(struct store *s);
/* After a rollback to a savepoint (a transaction's rollback is seen by itself). */
void store_chain_heads_forget(struct store *s);
/* The newest entry's seq and engine hash: false when not known. */
bool store_chain_heads_engine(struct store *s, int64_t *seq, char engine_hash[65]);
/* The newest hash of sid's entries (sid NULL: of the entries of no session): false when not
 * known. */
bool store_chain_heads_session(struct store *s, const char *sid, char hash[65]);
/* An entry was appended: seq and engine_hash are the engine's heads, hash sid's. */
void store_chain_heads_set(struct store *s, int64_t seq, const char engine_hash[65],
                           const char *sid, const char hash[65]);
/* Action action_id (just inserted) is sid's; the session of an action, NULL when not held. */
void store_chain_heads_action(struct store *s, int64_t action_id, const char *sid);
const char *store_chain_heads_action_session(struct store *s, int64_t action_id);

#endif
