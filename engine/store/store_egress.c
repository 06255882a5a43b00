/* The egress record: one row per connection through a session's proxy, and the operators'
 * allow rules (engine/egress.c; docs/egress.md). */
#include "engine/store/store.h"
#include "engine/store/store_internal.h"

#include <stdlib.h>
#include <string.h>

/* A row of the record without an fsync of its own (synchronous=NORMAL): it survives the
 * engine's crash, which is what the record promises; the next action's commit syncs it. */
static int store_egress_step(struct store *s, sqlite3_stmt *st, const char *what, char **err)
{
    store_sync_full(s, 0);
    int rc = store_step_done(s, st, what, err);
    store_sync_full(s, 1);
    return rc;
}

int64_t store_egress_add(struct store *s, const struct store_egress_new *e, char **err)
{
    sqlite3_stmt *st = store_prepare(
        s, "INSERT INTO egress(session_id, host, port, method, decision, rule, decided_by, "
           "action_id, command, started_at) VALUES (?,?,?,?,?,?,?,?,?,?)");
    if (st) {
        store_bind_text(st, 1, e->session_id);
        store_bind_text(st, 2, e->host);
        sqlite3_bind_int(st, 3, e->port);
        store_bind_text(st, 4, e->method);
        store_bind_text(st, 5, e->decision);
        store_bind_text(st, 6, e->rule);
        store_bind_text(st, 7, e->decided_by);
        if (e->action_id > 0)
            sqlite3_bind_int64(st, 8, e->action_id);
        store_bind_text(st, 9, e->command);
        sqlite3_bind_double(st, 10, e->now);
    }
    if (store_egress_step(s, st, "recording a connection", err) < 0)
        return -1;
    return sqlite3_last_insert_rowid(s->db);
}

int store_egress_decide(struct store *s, int64_t id, const char *decision, const char *rule,
                        const char *by, char **err)
{
    sqlite3_stmt *st =
        store_prepare(s, "UPDATE egress SET decision = ?, rule = coalesce(?, rule), decided_by = ? "
                         "WHERE id = ?");
    if (st) {
        store_bind_text(st, 1, decision);
        store_bind_text(st, 2, rule);
        store_bind_text(st, 3, by);
        sqlite3_bind_int64(st, 4, id);
    }
    return store_egress_step(s, st, "recording a connection's decision", err);
}

int store_egress_end(struct store *s, int64_t id, const char *address, int64_t up, int64_t down,
                     double now, const char *reason, char **err)
{
    sqlite3_stmt *st = store_prepare(
        s, "UPDATE egress SET address = coalesce(?, address), bytes_up = ?, bytes_down = ?, "
           "ended_at = ?, end_reason = ?, decision = CASE decision WHEN 'pending' THEN "
           "'rejected' ELSE decision END WHERE id = ?");
    if (st) {
        store_bind_text(st, 1, address);
        sqlite3_bind_int64(st, 2, up);
        sqlite3_bind_int64(st, 3, down);
        sqlite3_bind_double(st, 4, now);
        store_bind_text(st, 5, reason);
        sqlite3_bind_int64(st, 6, id);
    }
    return store_egress_step(s, st, "recording a connection's end", err);
}

int store_egress_interrupt(struct store *s, double now, char **err)
{
    sqlite3_stmt *st = store_prepare(
        s, "UPDATE egress SET ended_at = ?, end_reason = 'interrupted: the engine stopped', "
           "decision = CASE decision WHEN 'pending' THEN 'rejected' ELSE decision END WHERE "
           "ended_at IS NULL");
    if (st)
        sqlite3_bind_double(st, 1, now);
    if (store_step_done(s, st, "closing the connections of a stopped engine", err) < 0)
        return -1;
    return sqlite3_changes(s->db);
}

json_t *store_egress_list(struct store *s, const char *session_id, int limit)
{
    json_t *conns = json_array(), *hosts = json_array();
    sqlite3_stmt *st = store_prepare(
        s, "SELECT id, host, port, method, decision, rule, decided_by, action_id, command, "
           "address, bytes_up, bytes_down, started_at, ended_at, end_reason FROM egress WHERE "
           "session_id = ? ORDER BY id DESC LIMIT ?");
    if (st) {
        store_bind_text(st, 1, session_id);
        sqlite3_bind_int(st, 2, limit);
        while (sqlite3_step(st) == SQLITE_ROW) {
            json_t *o = json_pack(
                "{s:I,s:s,s:o,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:o,s:o,s:o}", "id",
                (json_int_t)sqlite3_column_int64(st, 0), "session_id", session_id, "host",
                store_col_text(st, 1), "port", (json_int_t)sqlite3_column_int64(st, 2), "method",
                store_col_text(st, 3), "decision", store_col_text(st, 4), "rule",
                store_col_text(st, 5), "decided_by", store_col_text(st, 6), "action_id",
                sqlite3_column_type(st, 7) == SQLITE_NULL
                    ? json_null()
                    : json_integer(sqlite3_column_int64(st, 7)),
                "command", store_col_text(st, 8), "address", store_col_text(st, 9), "bytes_up",
                (json_int_t)sqlite3_column_int64(st, 10), "bytes_down",
                (json_int_t)sqlite3_column_int64(st, 11), "started_at", store_col_real(st, 12),
                "ended_at", store_col_real(st, 13), "end_reason", store_col_text(st, 14));
            json_array_append_new(conns, o);
        }
    }
    sqlite3_finalize(st);
    st = store_prepare(s, "SELECT host, port, count(*), sum(bytes_up), sum(bytes_down), "
                          "max(started_at), sum(decision IN ('allowed', 'approved')) FROM egress "
                          "WHERE session_id = ? GROUP BY host, port ORDER BY host, port");
    if (st) {
        store_bind_text(st, 1, session_id);
        while (sqlite3_step(st) == SQLITE_ROW)
            json_array_append_new(
                hosts,
                json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:o}", "host", store_col_text(st, 0), "port",
                          (json_int_t)sqlite3_column_int64(st, 1), "connections",
                          (json_int_t)sqlite3_column_int64(st, 2), "allowed",
                          (json_int_t)sqlite3_column_int64(st, 6), "bytes_up",
                          (json_int_t)sqlite3_column_int64(st, 3), "bytes_down",
                          (json_int_t)sqlite3_column_int64(st, 4), "last", store_col_real(st, 5)));
    }
    sqlite3_finalize(st);
    return json_pack("{s:o,s:o}", "connections", conns, "hosts", hosts);
}

int64_t store_egress_rule_add(struct store *s, const char *session_id, const char *pattern,
                              const char *by, double now, char **err)
{
    sqlite3_stmt *st = store_prepare(
        s,
        "INSERT INTO egress_rules(session_id, pattern, created_by, created_at) VALUES (?,?,?,?)");
    if (st) {
        store_bind_text(st, 1, session_id);
        store_bind_text(st, 2, pattern);
        store_bind_text(st, 3, by);
        sqlite3_bind_double(st, 4, now);
    }
    int rc = store_step_done(s, st, "adding an egress rule", err);
    return rc < 0 ? -1 : sqlite3_last_insert_rowid(s->db);
}

json_t *store_egress_rules(struct store *s, const char *session_id)
{
    json_t *arr = json_array();
    sqlite3_stmt *st =
        store_prepare(s, "SELECT id, pattern, session_id IS NULL, created_by, created_at FROM "
                         "egress_rules WHERE session_id IS NULL OR session_id = ? ORDER BY id");
    if (st) {
        store_bind_text(st, 1, session_id);
        while (sqlite3_step(st) == SQLITE_ROW)
            json_array_append_new(arr, json_pack("{s:I,s:o,s:s,s:o,s:o}", "id",
                                                 (json_int_t)sqlite3_column_int64(st, 0), "pattern",
                                                 store_col_text(st, 1), "scope",
                                                 sqlite3_column_int(st, 2) ? "engine" : "session",
                                                 "created_by", store_col_text(st, 3), "created_at",
                                                 store_col_real(st, 4)));
    }
    sqlite3_finalize(st);
    return arr;
}
