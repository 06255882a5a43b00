/* Actions in the store: the intent row, the approval, the observation, full-text search, rules
 * and retention. The action path uses prepared-once statements (store_cached): one action is
 * a handful of statements and one fsync; the search index and the session's count are written off
 * it (store_derived.c). */
#include "common/buf.h"
#include "engine/store/store.h"

#include "engine/store/store_internal.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static int store_action_write(struct store *s, const struct store_action_new *a, int64_t *id,
                              char **err)
{
    sqlite3_stmt *st = store_cached(s, STORE_SLOT_ACTION_INSERT,
                                    "INSERT INTO actions(session_id, kind, summary, args, state, "
                                    "created_at, started_at, finished_at, risk, risk_reason, "
                                    "declared_risk, approval) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        return store_cached_done(s, NULL, "inserting action", err);
    bool runs = a->state == ACTION_RUNNING;
    bool ended = a->state == ACTION_REJECTED;
    store_bind_text(st, 1, a->session_id);
    store_bind_text(st, 2, a->kind);
    store_bind_text(st, 3, a->summary);
    store_bind_text(st, 4, a->args_json);
    store_bind_text(st, 5, action_st_name(a->state));
    sqlite3_bind_double(st, 6, a->now);
    if (runs)
        sqlite3_bind_double(st, 7, a->now);
    if (ended)
        sqlite3_bind_double(st, 8, a->now);
    store_bind_text(st, 9, risk_level_name(a->risk));
    store_bind_text(st, 10, a->risk_reason);
    store_bind_text(st, 11, a->declared_risk ? risk_level_name(*a->declared_risk) : NULL);
    store_bind_text(st, 12, action_approval_name(a->approval));
    if (store_cached_done(s, st, "inserting action", err) < 0)
        return -1;
    *id = sqlite3_last_insert_rowid(s->db);
    store_chain_heads_action(s, *id, a->session_id);
    if (store_chain_append(s, a->session_id, "action", *id, err) < 0)
        return -1;
    /* Counted in its session, and indexed for search, by store_derived_update. */
    if (a->approval != APPROVAL_NONE) {
        st = store_cached(s, STORE_SLOT_APPROVAL_INSERT,
                          "INSERT INTO approvals(action_id, session_id, requested_at, deadline, "
                          "decision, decided_by, decided_at, reason, rule_id, rule_pattern) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?)");
        if (st) {
            bool pending = a->approval == APPROVAL_PENDING;
            sqlite3_bind_int64(st, 1, *id);
            store_bind_text(st, 2, a->session_id);
            sqlite3_bind_double(st, 3, a->now);
            if (pending)
                sqlite3_bind_double(st, 4, a->deadline);
            else {
                store_bind_text(st, 5, action_approval_name(a->approval));
                store_bind_text(st, 6, a->decided_by);
                sqlite3_bind_double(st, 7, a->now);
                store_bind_text(st, 8, a->decision_reason);
                if (a->rule_id > 0) {
                    sqlite3_bind_int64(st, 9, a->rule_id);
                    store_bind_text(st, 10, a->rule_pattern);
                }
            }
        }
        if (store_cached_done(s, st, "recording the approval", err) < 0)
            return -1;
        if (a->approval != APPROVAL_PENDING &&
            store_chain_append(s, a->session_id, "decision", *id, err) < 0)
            return -1;
    }
    return 0;
}

static int store_observation_set(struct store *s, int64_t id, const char *obs, size_t len,
                                 const char *diff, char **err)
{
    sqlite3_stmt *st = store_cached(
        s, STORE_SLOT_OBSERVATION_SET,
        "INSERT OR REPLACE INTO observations(action_id, content, size, diff) VALUES (?,?,?,?)");
    if (st) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, obs,
                          (int)(len > STORE_OBSERVATION_CAP ? STORE_OBSERVATION_CAP : len),
                          SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)len);
        store_bind_text(st, 4, diff);
    }
    return store_cached_done(s, st, "recording the observation", err);
}

int64_t store_action_add(struct store *s, const struct store_action_new *a, char **err)
{
    int64_t id = -1;
    /* A pending or answered-at-once action is acknowledged before it runs: FULL. One that
     * runs now is synced by its observation's commit before the agent hears back. */
    if (!a->durable)
        store_sync_full(s, 0);
    int rc = store_tx_begin(s, err);
    if (rc == 0)
        rc = store_action_write(s, a, &id, err);
    if (rc == 0 && a->observation)
        rc = store_observation_set(s, id, a->observation, strlen(a->observation), NULL, err);
    /* Decided at once (rejected, skipped): its end is recorded with it. */
    if (rc == 0 && (a->observation || (a->state != ACTION_RUNNING && a->state != ACTION_PENDING)))
        rc = store_chain_append(s, a->session_id, "observation", id, err);
    if (rc == 0)
        rc = store_tx_commit(s, err);
    else
        store_tx_rollback(s);
    if (!a->durable)
        store_sync_full(s, 1);
    return rc < 0 ? -1 : id;
}

int64_t store_action_insert(struct store *s, const char *session_id, const char *kind,
                            const char *summary, const char *args_json, double now, char **err)
{
    struct store_action_new a = {.session_id = session_id,
                                 .kind = kind,
                                 .summary = summary,
                                 .args_json = args_json,
                                 .state = ACTION_RUNNING,
                                 .now = now};
    return store_action_add(s, &a, err);
}

int store_action_decide(struct store *s, int64_t id, enum action_approval decision, const char *by,
                        const char *reason, const char *observation, double now, char **err)
{
    const char *name = action_approval_name(decision);
    if (store_tx_begin(s, err) < 0)
        return -1;
    sqlite3_stmt *st = store_prepare(s, "UPDATE approvals SET decision = ?, decided_by = ?, "
                                        "decided_at = ?, reason = ? "
                                        "WHERE action_id = ? AND decision IS NULL");
    if (st) {
        store_bind_text(st, 1, name);
        store_bind_text(st, 2, by);
        sqlite3_bind_double(st, 3, now);
        store_bind_text(st, 4, reason);
        sqlite3_bind_int64(st, 5, id);
    }
    if (store_step_done(s, st, "recording the decision", err) < 0) {
        store_tx_rollback(s);
        return -1;
    }
    if (sqlite3_changes(s->db) == 0) {
        store_tx_rollback(s);
        return 0;
    }
    bool approved = decision == APPROVAL_APPROVED;
    st = store_prepare(s, approved ? "UPDATE actions SET approval = ?, state = 'running', "
                                     "started_at = ? WHERE id = ?"
                                   : "UPDATE actions SET approval = ?, state = 'rejected', "
                                     "finished_at = ? WHERE id = ?");
    if (st) {
        store_bind_text(st, 1, name);
        sqlite3_bind_double(st, 2, now);
        sqlite3_bind_int64(st, 3, id);
    }
    int rc = store_step_done(s, st, "recording the decision", err);
    if (rc == 0)
        rc = store_chain_append_action(s, "decision", id, err);
    if (rc == 0 && observation)
        rc = store_observation_set(s, id, observation, strlen(observation), NULL, err);
    if (rc == 0 && !approved)
        rc = store_chain_append_action(s, "observation", id, err);
    if (rc == 0)
        return store_tx_commit(s, err) < 0 ? -1 : 1;
    store_tx_rollback(s);
    return -1;
}

int store_action_finish(struct store *s, int64_t id, enum action_st state, int exit_code,
                        const char *observation, size_t observation_len, const char *error,
                        double now, char **err)
{
    return store_action_finish_diff(s, id, state, exit_code, observation, observation_len, NULL,
                                    error, now, err);
}

int store_action_finish_diff(struct store *s, int64_t id, enum action_st state, int exit_code,
                             const char *observation, size_t observation_len, const char *diff,
                             const char *error, double now, char **err)
{
    if (store_tx_begin(s, err) < 0)
        return -1;
    sqlite3_stmt *st = store_cached(s, STORE_SLOT_ACTION_FINISH,
                                    "UPDATE actions SET state = ?, exit_code = ?, "
                                    "observation_size = ?, error = ?, finished_at = ? "
                                    "WHERE id = ?");
    if (st) {
        store_bind_text(st, 1, action_st_name(state));
        if (exit_code != STORE_NO_EXIT_CODE)
            sqlite3_bind_int(st, 2, exit_code);
        if (observation)
            sqlite3_bind_int64(st, 3, (sqlite3_int64)observation_len);
        store_bind_text(st, 4, error);
        sqlite3_bind_double(st, 5, now);
        sqlite3_bind_int64(st, 6, id);
    }
    int rc = store_cached_done(s, st, "finishing action", err);
    if (rc == 0 && observation)
        rc = store_observation_set(s, id, observation, observation_len, diff, err);
    if (rc == 0)
        rc = store_chain_append_action(s, "observation", id, err);
    if (rc == 0)
        return store_tx_commit(s, err);
    store_tx_rollback(s);
    return -1;
}

#define STORE_ACTION_COLS                                                                          \
    "a.id, a.session_id, a.kind, a.summary, a.state, a.exit_code, a.created_at, a.started_at, "    \
    "a.finished_at, a.error, a.risk, a.risk_reason, a.declared_risk, a.approval, ap.decided_by, "  \
    "ap.decided_at, ap.reason, ap.deadline, a.observation_size, ap.rule_id, ap.rule_pattern"
#define STORE_ACTION_FROM " FROM actions a LEFT JOIN approvals ap ON ap.action_id = a.id "

static json_t *store_action_row(sqlite3_stmt *st)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(sqlite3_column_int64(st, 0)));
    json_object_set_new(o, "session_id", store_col_text(st, 1));
    json_object_set_new(o, "kind", store_col_text(st, 2));
    json_object_set_new(o, "summary", store_col_text(st, 3));
    json_object_set_new(o, "state", store_col_text(st, 4));
    json_object_set_new(o, "exit_code",
                        sqlite3_column_type(st, 5) == SQLITE_NULL
                            ? json_null()
                            : json_integer(sqlite3_column_int(st, 5)));
    json_object_set_new(o, "created_at", store_col_real(st, 6));
    json_object_set_new(o, "started_at", store_col_real(st, 7));
    json_object_set_new(o, "finished_at", store_col_real(st, 8));
    if (sqlite3_column_type(st, 7) != SQLITE_NULL && sqlite3_column_type(st, 8) != SQLITE_NULL)
        json_object_set_new(
            o, "duration_ms",
            json_real((sqlite3_column_double(st, 8) - sqlite3_column_double(st, 7)) * 1e3));
    else
        json_object_set_new(o, "duration_ms", json_null());
    json_object_set_new(o, "error", store_col_text(st, 9));
    json_object_set_new(o, "risk", store_col_text(st, 10));
    json_object_set_new(o, "risk_reason", store_col_text(st, 11));
    json_object_set_new(o, "declared_risk", store_col_text(st, 12));
    json_object_set_new(o, "approval", store_col_text(st, 13));
    json_object_set_new(o, "decided_by", store_col_text(st, 14));
    json_object_set_new(o, "decided_at", store_col_real(st, 15));
    json_object_set_new(o, "decision_reason", store_col_text(st, 16));
    /* The deadline only means something while it waits. */
    enum action_st state;
    bool pending = action_st_parse((const char *)sqlite3_column_text(st, 4), &state) == 0 &&
                   state == ACTION_PENDING;
    json_object_set_new(o, "deadline", pending ? store_col_real(st, 17) : json_null());
    json_object_set_new(o, "observation_size",
                        sqlite3_column_type(st, 18) == SQLITE_NULL
                            ? json_null()
                            : json_integer(sqlite3_column_int64(st, 18)));
    /* The rule that decided it, as it was then (the reason says the same, in the record). */
    json_object_set_new(o, "rule",
                        sqlite3_column_type(st, 19) == SQLITE_NULL
                            ? json_null()
                            : json_pack("{s:I,s:o}", "id", (json_int_t)sqlite3_column_int64(st, 19),
                                        "pattern", store_col_text(st, 20)));
    return o;
}

json_t *store_action_get(struct store *s, int64_t id)
{
    sqlite3_stmt *st = store_cached(s, STORE_SLOT_ACTION_GET,
                                    "SELECT " STORE_ACTION_COLS STORE_ACTION_FROM "WHERE a.id = ?");
    json_t *o = NULL;
    if (st) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW)
            o = store_action_row(st);
        sqlite3_reset(st);
    }
    return o;
}

json_t *store_action_get_full(struct store *s, int64_t id)
{
    json_t *o = store_action_get(s, id);
    if (!o)
        return NULL;
    sqlite3_stmt *st = store_prepare(s, "SELECT a.args, o.content, o.diff FROM actions a LEFT JOIN "
                                        "observations o ON o.action_id = a.id WHERE a.id = ?");
    json_t *args = NULL, *obs = NULL;
    if (st) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *a = (const char *)sqlite3_column_text(st, 0);
            const char *ob = (const char *)sqlite3_column_text(st, 1);
            if (sqlite3_column_type(st, 2) != SQLITE_NULL)
                json_object_set_new(o, "diff", store_col_text(st, 2));
            args = a ? json_loads(a, 0, NULL) : NULL;
            if (ob) {
                obs = json_loads(ob, 0, NULL);
                /* Cut at the bound: the text as kept, not a parse error. */
                if (!obs)
                    obs = json_pack("{s:s,s:b}", "truncated_text", ob, "truncated", 1);
            }
        }
    }
    sqlite3_finalize(st);
    json_object_set_new(o, "args", args ? args : json_null());
    json_object_set_new(o, "observation", obs ? obs : json_null());
    return o;
}

static json_t *store_action_rows(sqlite3_stmt *st)
{
    json_t *arr = json_array();
    while (st && sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(arr, store_action_row(st));
    sqlite3_finalize(st);
    return arr;
}

json_t *store_actions_list(struct store *s, const char *session_id, int limit, int64_t before)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT " STORE_ACTION_COLS STORE_ACTION_FROM
                                        "WHERE a.session_id = ? AND a.id < ? "
                                        "ORDER BY a.id DESC LIMIT ?");
    if (st) {
        store_bind_text(st, 1, session_id);
        sqlite3_bind_int64(st, 2, before > 0 ? before : INT64_MAX);
        sqlite3_bind_int(st, 3, limit);
    }
    return store_action_rows(st);
}

json_t *store_actions_pending(struct store *s, const char *session_id)
{
    sqlite3_stmt *st = store_prepare(
        s, "SELECT " STORE_ACTION_COLS ", a.args" STORE_ACTION_FROM
           "WHERE a.state = 'pending' AND (?1 IS NULL OR a.session_id = ?1) ORDER BY a.id");
    json_t *arr = json_array();
    if (st) {
        store_bind_text(st, 1, session_id);
        while (sqlite3_step(st) == SQLITE_ROW) {
            json_t *o = store_action_row(st);
            const char *a = (const char *)sqlite3_column_text(st, 21);
            json_t *args = a ? json_loads(a, 0, NULL) : NULL;
            json_object_set_new(o, "args", args ? args : json_null());
            json_array_append_new(arr, o);
        }
    }
    sqlite3_finalize(st);
    return arr;
}

/* FTS5 query text from what a person typed: every word a quoted term (so `rm -rf "x"` or
 * `a:b` is searched as text, never parsed as query syntax), all of them required. */
static char *store_fts_query(const char *q)
{
    struct buf b = {0};
    const char *p = q;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (b.len)
            buf_append(&b, " ", 1);
        buf_append(&b, "\"", 1);
        for (; *p && *p != ' ' && *p != '\t' && *p != '\n'; p++) {
            buf_append(&b, p, 1);
            if (*p == '"') /* a quote inside a term doubles */
                buf_append(&b, "\"", 1);
        }
        buf_append(&b, "\"", 1);
    }
    if (!b.len)
        return NULL;
    buf_append(&b, "", 1);
    return b.data;
}

json_t *store_actions_search(struct store *s, const struct store_search *q, char **err)
{
    char *fts = q->text ? store_fts_query(q->text) : NULL;
    /* What the record holds and the index not yet: indexed first, so nothing is missed. */
    if (fts && store_derived_update(s, 0, 0, err) < 0) {
        free(fts);
        return NULL;
    }
    /* With text: the index gives matching ids newest first (FTS5 walks rowids in order, so a
     * page costs the same on a million actions); the filters apply on the way. */
    const char *sql =
        fts ? "SELECT " STORE_ACTION_COLS " FROM actions_fts f JOIN actions a ON a.id = f.rowid "
              "LEFT JOIN approvals ap ON ap.action_id = a.id "
              "WHERE actions_fts MATCH ?1 AND f.rowid < ?2 AND (?3 IS NULL OR a.session_id = ?3) "
              "AND (?4 IS NULL OR a.kind = ?4) AND (?5 IS NULL OR a.state = ?5) "
              "AND (?6 IS NULL OR a.risk = ?6) ORDER BY f.rowid DESC LIMIT ?7"
            : "SELECT " STORE_ACTION_COLS STORE_ACTION_FROM
              "WHERE a.id < ?2 AND (?3 IS NULL OR a.session_id = ?3) "
              "AND (?4 IS NULL OR a.kind = ?4) AND (?5 IS NULL OR a.state = ?5) "
              "AND (?6 IS NULL OR a.risk = ?6) ORDER BY a.id DESC LIMIT ?7";
    sqlite3_stmt *st = store_prepare(s, sql);
    if (!st) {
        *err = store_errf(s, "searching");
        free(fts);
        return NULL;
    }
    if (fts)
        sqlite3_bind_text(st, 1, fts, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, q->before > 0 ? q->before : INT64_MAX);
    store_bind_text(st, 3, q->session_id);
    store_bind_text(st, 4, q->kind);
    store_bind_text(st, 5, q->state ? action_st_name(*q->state) : NULL);
    store_bind_text(st, 6, q->risk ? risk_level_name(*q->risk) : NULL);
    sqlite3_bind_int(st, 7, q->limit);
    json_t *arr = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, store_action_row(st));
    if (rc != SQLITE_DONE) {
        *err = store_errf(s, "searching");
        json_decref(arr);
        arr = NULL;
    }
    sqlite3_finalize(st);
    free(fts);
    return arr;
}

int store_actions_interrupt_inflight(struct store *s, double now)
{
    /* Pending ones are not in flight: they never reached the sandbox and keep waiting. */
    if (store_tx_begin(s, NULL) < 0)
        return -1;
    sqlite3_stmt *st = store_prepare(s, "UPDATE actions SET state = 'interrupted', "
                                        "finished_at = ?, error = 'engine stopped while the "
                                        "action was in flight; not re-run' "
                                        "WHERE state IN ('received', 'running') RETURNING id");
    if (!st) {
        store_tx_rollback(s);
        return -1;
    }
    sqlite3_bind_double(st, 1, now);
    /* Each end in the record, after the update (RETURNING gives the ids as it runs). */
    int64_t *ids = NULL;
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t *more = realloc(ids, (size_t)(n + 1) * sizeof(*ids));
        if (!more)
            break;
        ids = more;
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    for (int i = 0; rc == SQLITE_DONE && i < n; i++)
        if (store_chain_append_action(s, "observation", ids[i], NULL) < 0)
            rc = SQLITE_ERROR;
    free(ids);
    if (rc != SQLITE_DONE || store_tx_commit(s, NULL) < 0) {
        store_tx_rollback(s);
        return -1;
    }
    return n;
}

int store_retention_apply(struct store *s, double before, char **err)
{
    /* Deleted sessions last updated before the cutoff, with everything recorded about them. */
    static const char *const sql[] = {
        "DELETE FROM actions_fts WHERE rowid IN (SELECT a.id FROM actions a JOIN old o ON "
        "o.id = a.session_id)",
        "DELETE FROM observations WHERE action_id IN (SELECT a.id FROM actions a JOIN old o ON "
        "o.id = a.session_id)",
        "DELETE FROM approvals WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM actions WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM rules WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM events WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM samples WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM log_tails WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM changes WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM egress WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM egress_rules WHERE session_id IN (SELECT id FROM old)",
        "DELETE FROM sessions WHERE id IN (SELECT id FROM old)",
        /* The engine's chain keeps their entries' hashes: it still links across them. */
        "UPDATE chain SET retired = 1 WHERE session_id IN (SELECT id FROM old)",
    };
    if (store_tx_begin(s, err) < 0)
        return -1;
    sqlite3_stmt *st = store_prepare(s, "CREATE TEMP TABLE old AS SELECT id FROM sessions "
                                        "WHERE state = 'deleted' AND updated_at < ?");
    if (st)
        sqlite3_bind_double(st, 1, before);
    int rc = store_step_done(s, st, "retention", err);
    int n = 0;
    if (rc == 0 && (st = store_prepare(s, "SELECT count(*) FROM temp.old"))) {
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    for (size_t i = 0; rc == 0 && i < sizeof(sql) / sizeof(sql[0]); i++)
        rc = store_exec(s, sql[i], err);
    if (rc == 0)
        rc = store_exec(s, "DROP TABLE old", err);
    if (rc == 0 && store_tx_commit(s, err) == 0)
        return n;
    store_tx_rollback(s);
    return -1;
}
