/* Operator rules in the store: engine-wide (the config file's and the API's) and per session.
 * Every change is recorded in the chain in the transaction that makes it; a removed rule keeps
 * its row, marked, so the record still finds what it recorded. */
#include "engine/store/store.h"

#include "engine/base/util.h"
#include "engine/store/store_internal.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define STORE_RULE_COLS                                                                            \
    "id, session_id, pattern, decision, kind, origin, created_by, created_at, changed_by, "        \
    "changed_at"

static json_t *store_rule_row(sqlite3_stmt *st)
{
    return json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "id",
                     (json_int_t)sqlite3_column_int64(st, 0), "session_id", store_col_text(st, 1),
                     "pattern", store_col_text(st, 2), "decision", store_col_text(st, 3), "kind",
                     store_col_text(st, 4), "origin", store_col_text(st, 5), "created_by",
                     store_col_text(st, 6), "created_at", store_col_real(st, 7), "changed_by",
                     store_col_text(st, 8), "changed_at", store_col_real(st, 9));
}

/* The session a rule belongs to (malloc'd; NULL for an engine-wide one); 1, 0 when there is no
 * such rule in force, -1. */
static int store_rule_session(struct store *s, int64_t id, char **session_id)
{
    sqlite3_stmt *st =
        store_prepare(s, "SELECT session_id FROM rules WHERE id = ? AND removed = 0");
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st), found = 0;
    *session_id = NULL;
    if (rc == SQLITE_ROW) {
        found = 1;
        if (sqlite3_column_text(st, 0) &&
            !(*session_id = strdup((const char *)sqlite3_column_text(st, 0))))
            found = -1;
    } else if (rc != SQLITE_DONE) {
        found = -1;
    }
    sqlite3_finalize(st);
    return found;
}

/* Insert (in the caller's transaction) and record: the id, or -1. */
static int64_t store_rule_insert(struct store *s, const struct store_rule *r, double now,
                                 char **err)
{
    sqlite3_stmt *st = store_prepare(s, "INSERT INTO rules(session_id, pattern, decision, kind, "
                                        "origin, created_by, created_at) VALUES (?,?,?,?,?,?,?)");
    if (st) {
        store_bind_text(st, 1, r->session_id);
        store_bind_text(st, 2, r->pattern);
        store_bind_text(st, 3, policy_rule_name(r->decision));
        store_bind_text(st, 4, r->kind && *r->kind ? r->kind : NULL);
        store_bind_text(st, 5, r->origin ? r->origin : "operator");
        store_bind_text(st, 6, r->by);
        sqlite3_bind_double(st, 7, now);
    }
    if (store_step_done(s, st, "adding a rule", err) < 0)
        return -1;
    int64_t id = sqlite3_last_insert_rowid(s->db);
    return store_chain_append(s, r->session_id, "rule_change", id, err) < 0 ? -1 : id;
}

int64_t store_rule_add(struct store *s, const struct store_rule *r, double now, char **err)
{
    if (store_tx_begin(s, err) < 0)
        return -1;
    int64_t id = store_rule_insert(s, r, now, err);
    if (id < 0 || store_tx_commit(s, err) < 0) {
        store_tx_rollback(s);
        return -1;
    }
    return id;
}

/* Change one rule's row by sql (?1 the id, ?2 by, ?3 now, then the values) and record it, in
 * the caller's transaction. 1, 0 when it is not in force, -1. */
static int store_rule_change(struct store *s, int64_t id, const char *sql, const char *by,
                             double now, const char *v4, const char *v5, const char *v6, char **err)
{
    char *sid = NULL;
    int found = store_rule_session(s, id, &sid);
    if (found <= 0) {
        if (found < 0 && err)
            *err = store_errf(s, "reading the rule");
        return found;
    }
    sqlite3_stmt *st = store_prepare(s, sql);
    if (st) {
        sqlite3_bind_int64(st, 1, id);
        store_bind_text(st, 2, by);
        sqlite3_bind_double(st, 3, now);
        store_bind_text(st, 4, v4);
        store_bind_text(st, 5, v5);
        store_bind_text(st, 6, v6);
    }
    int rc = store_step_done(s, st, "changing the rule", err) < 0 ||
                     store_chain_append(s, sid, "rule_change", id, err) < 0
                 ? -1
                 : 1;
    free(sid);
    return rc;
}

static int store_rule_change_tx(struct store *s, int64_t id, const char *sql, const char *by,
                                double now, const char *v4, const char *v5, const char *v6,
                                char **err)
{
    if (store_tx_begin(s, err) < 0)
        return -1;
    int rc = store_rule_change(s, id, sql, by, now, v4, v5, v6, err);
    if (rc <= 0 || store_tx_commit(s, err) < 0) {
        store_tx_rollback(s);
        return rc == 0 ? 0 : -1;
    }
    return 1;
}

int store_rule_edit(struct store *s, int64_t id, const char *pattern, const char *kind,
                    enum policy_rule decision, const char *by, double now, char **err)
{
    /* ?6 "": every kind (NULL in the row); NULL: keep it. */
    return store_rule_change_tx(
        s, id,
        "UPDATE rules SET pattern = COALESCE(?4, pattern), decision = COALESCE(?5, decision), "
        "kind = CASE WHEN ?6 IS NULL THEN kind WHEN ?6 = '' THEN NULL ELSE ?6 END, "
        "changed_by = ?2, changed_at = ?3 WHERE id = ?1",
        by, now, pattern, decision == POLICY_RULE_NONE ? NULL : policy_rule_name(decision), kind,
        err);
}

int store_rule_remove(struct store *s, int64_t id, const char *by, double now, char **err)
{
    return store_rule_change_tx(
        s, id, "UPDATE rules SET removed = 1, changed_by = ?2, changed_at = ?3 WHERE id = ?1", by,
        now, NULL, NULL, NULL, err);
}

json_t *store_rule_get(struct store *s, int64_t id)
{
    sqlite3_stmt *st =
        store_prepare(s, "SELECT " STORE_RULE_COLS " FROM rules WHERE id = ? AND removed = 0");
    json_t *o = NULL;
    if (st) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW)
            o = store_rule_row(st);
    }
    sqlite3_finalize(st);
    return o;
}

json_t *store_rules_list(struct store *s, const char *session_id)
{
    sqlite3_stmt *st = store_prepare(
        s, "SELECT " STORE_RULE_COLS " FROM rules WHERE removed = 0 AND (session_id IS NULL OR "
           "?1 IS NULL OR session_id = ?1) ORDER BY session_id IS NOT NULL, id");
    json_t *arr = json_array();
    if (st) {
        store_bind_text(st, 1, session_id);
        while (sqlite3_step(st) == SQLITE_ROW)
            json_array_append_new(arr, store_rule_row(st));
    }
    sqlite3_finalize(st);
    return arr;
}

/* Whether the config's list (at i) holds the same rule as the row. */
static bool store_rule_same(json_t *want, const char *pattern, const char *decision)
{
    return pattern && decision &&
           strcmp(json_string_value(json_object_get(want, "pattern")) ?: "", pattern) == 0 &&
           strcmp(json_string_value(json_object_get(want, "decision")) ?: "", decision) == 0;
}

int store_rules_sync_config(struct store *s, json_t *rules, double now, char **err)
{
    if (store_tx_begin(s, err) < 0)
        return -1;
    /* The config's rules in force, in order: kept while they match the list's head in order;
     * from the first difference on, the rest go and the list's rest is added (the order of
     * rules is the order they are matched in). */
    sqlite3_stmt *st = store_prepare(s, "SELECT id, pattern, decision FROM rules WHERE "
                                        "origin = 'config' AND removed = 0 ORDER BY id");
    size_t kept = 0;
    bool differ = false;
    int rc = st ? 0 : -1;
    int64_t *gone = NULL;
    size_t ngone = 0;
    while (rc == 0 && st && sqlite3_step(st) == SQLITE_ROW) {
        const char *pat = (const char *)sqlite3_column_text(st, 1);
        const char *dec = (const char *)sqlite3_column_text(st, 2);
        if (!differ && kept < json_array_size(rules) &&
            store_rule_same(json_array_get(rules, kept), pat, dec)) {
            kept++;
            continue;
        }
        differ = true;
        int64_t *g = realloc(gone, (ngone + 1) * sizeof(*g));
        if (!g) {
            rc = -1;
            break;
        }
        gone = g;
        gone[ngone++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (rc < 0 && err && !*err)
        *err = store_errf(s, "reading the config's rules");
    for (size_t i = 0; rc == 0 && i < ngone; i++)
        if (store_rule_change(s, gone[i],
                              "UPDATE rules SET removed = 1, changed_by = ?2, changed_at = ?3 "
                              "WHERE id = ?1",
                              "config", now, NULL, NULL, NULL, err) < 0)
            rc = -1;
    free(gone);
    for (size_t i = kept; rc == 0 && i < json_array_size(rules); i++) {
        json_t *r = json_array_get(rules, i);
        struct store_rule row = {.pattern = json_string_value(json_object_get(r, "pattern")),
                                 .origin = "config",
                                 .by = "config"};
        if (!row.pattern || policy_rule_parse(json_string_value(json_object_get(r, "decision")),
                                              &row.decision) < 0) {
            if (err)
                *err = util_strdupf("config rule %zu is not {\"pattern\", \"decision\"}", i + 1);
            rc = -1;
        } else if (store_rule_insert(s, &row, now, err) < 0) {
            rc = -1;
        }
    }
    if (rc < 0 || store_tx_commit(s, err) < 0) {
        store_tx_rollback(s);
        return -1;
    }
    return 0;
}
