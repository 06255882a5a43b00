/* What is derived from the record, written off the action path: the search index
 * (actions_fts) and each session's action_count. Indexing each action as it was written cost an
 * FTS5 insert at its intent and an update (a delete and an insert) at its end, with a new index
 * segment flushed at every commit, and counting it rewrote its session's row: together more
 * than a third of the pages each action's commits wrote. Instead both follow the record:
 * derived.seq is the last entry they cover, and each update takes the entries after it: the
 * actions of those entries (an action's intent or its end) are indexed, each once with its
 * command and its output as they are now, the intents are counted in their sessions, and the
 * mark moves, in one transaction. The engine runs it in batches between turns of its loop
 * (commit.c); a search runs it first, so its results miss nothing recorded, and a session's
 * count as read adds the intents past the mark (store.c). */
#include "engine/store/store.h"

#include "engine/store/store_internal.h"

#include <sqlite3.h>
#include <stdlib.h>

/* Read one integer from a cached statement: 0, or -1. */
static int store_derived_read(struct store *s, enum store_slot slot, const char *sql, int64_t *v)
{
    sqlite3_stmt *st = store_cached(s, slot, sql);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* One statement over the entries (?1, ?2]: 0, or -1 with *err. */
static int store_derived_step(struct store *s, enum store_slot slot, const char *sql, int64_t from,
                              int64_t to, const char *what, char **err)
{
    sqlite3_stmt *st = store_cached(s, slot, sql);
    if (st) {
        sqlite3_bind_int64(st, 1, from);
        sqlite3_bind_int64(st, 2, to);
    }
    return store_cached_done(s, st, what, err);
}

int store_derived_update(struct store *s, int limit, char **err)
{
    int64_t mark, head;
    if (store_derived_read(s, STORE_SLOT_DERIVED_MARK, "SELECT seq FROM derived", &mark) < 0 ||
        store_derived_read(s, STORE_SLOT_DERIVED_HEAD, "SELECT MAX(seq) FROM chain", &head) < 0) {
        if (err)
            *err = store_errf(s, "reading what is derived from the record");
        return -1;
    }
    if (head <= mark)
        return 0;
    int64_t to = limit > 0 && head - mark > limit ? mark + limit : head;
    /* Derived from committed rows: a crash may lose it, never its rows, and the mark goes
     * with it. */
    store_sync_full(s, 0);
    int rc = store_tx_begin(s, err);
    /* REPLACE: an action indexed by an earlier update while it ran, now with its output. What
     * search finds in the output: the observation's text, the first 64 KiB. */
    if (rc == 0)
        rc = store_derived_step(
            s, STORE_SLOT_DERIVED_INDEX,
            "INSERT OR REPLACE INTO actions_fts(rowid, summary, output) SELECT a.id, a.summary, "
            "COALESCE(CASE WHEN json_valid(o.content) THEN substr(json_extract(o.content, "
            "'$.content'), 1, 65536) END, '') FROM actions a LEFT JOIN observations o ON "
            "o.action_id = a.id WHERE a.id IN (SELECT ref FROM chain WHERE seq > ?1 AND seq <= "
            "?2 AND kind IN ('action', 'observation')) ORDER BY a.id",
            mark, to, "indexing actions for search", err);
    if (rc == 0)
        rc = store_derived_step(s, STORE_SLOT_DERIVED_COUNT,
                                "UPDATE sessions SET action_count = action_count + (SELECT "
                                "count(*) FROM chain c WHERE c.session_id = sessions.id AND "
                                "c.seq > ?1 AND c.seq <= ?2 AND c.kind = 'action') WHERE id IN "
                                "(SELECT session_id FROM chain WHERE seq > ?1 AND seq <= ?2 AND "
                                "kind = 'action')",
                                mark, to, "counting actions", err);
    if (rc == 0)
        rc = store_derived_step(s, STORE_SLOT_DERIVED_SET, "UPDATE derived SET seq = ?2", mark, to,
                                "marking what is derived from the record", err);
    if (rc == 0)
        rc = store_tx_commit(s, err);
    else
        store_tx_rollback(s);
    store_sync_full(s, 1);
    return rc < 0 ? -1 : to < head;
}
