/* Resource samples and container log tails: what past sessions' graphs and logs are made of. */
#include "engine/store/store.h"
#include "engine/store/store_internal.h"

#include <stdlib.h>
#include <string.h>

static void store_bind_count(sqlite3_stmt *st, int i, int64_t v)
{
    if (v < 0)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

int store_samples_add(struct store *s, const char *session_id, const struct store_sample *v,
                      size_t n, char **err)
{
    if (n == 0)
        return 0;
    store_sync_full(s, 0);
    int rc = store_exec(s, "BEGIN IMMEDIATE", err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_stmt *st = store_prepare(
            s, "INSERT INTO samples(session_id, at, span, cpu, mem, mem_limit, pids, net_rx, "
               "net_tx, blk_read, blk_write) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
        if (st) {
            store_bind_text(st, 1, session_id);
            sqlite3_bind_double(st, 2, v[i].at);
            sqlite3_bind_double(st, 3, v[i].span > 0 ? v[i].span : 1);
            if (v[i].cpu < 0)
                sqlite3_bind_null(st, 4);
            else
                sqlite3_bind_double(st, 4, v[i].cpu);
            store_bind_count(st, 5, v[i].mem);
            store_bind_count(st, 6, v[i].mem_limit);
            store_bind_count(st, 7, v[i].pids);
            store_bind_count(st, 8, v[i].net_rx);
            store_bind_count(st, 9, v[i].net_tx);
            store_bind_count(st, 10, v[i].blk_read);
            store_bind_count(st, 11, v[i].blk_write);
        }
        rc = store_step_done(s, st, "inserting samples", err);
    }
    if (rc == 0)
        rc = store_exec(s, "COMMIT", err);
    else
        store_exec(s, "ROLLBACK", NULL);
    store_sync_full(s, 1);
    return rc;
}

static json_t *store_col_count(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                     : json_integer(sqlite3_column_int64(st, i));
}

json_t *store_samples_list(struct store *s, const char *session_id, double since, int limit)
{
    if (limit <= 0 || limit > 100000)
        limit = 100000;
    /* The newest `limit` rows, handed back oldest first. */
    sqlite3_stmt *st = store_prepare(
        s, "SELECT * FROM (SELECT at, span, cpu, mem, mem_limit, pids, net_rx, net_tx, "
           "blk_read, blk_write FROM samples WHERE session_id = ? AND at > ? "
           "ORDER BY at DESC LIMIT ?) ORDER BY at ASC");
    json_t *arr = json_array();
    if (st) {
        store_bind_text(st, 1, session_id);
        sqlite3_bind_double(st, 2, since);
        sqlite3_bind_int(st, 3, limit);
    }
    static const char *const names[] = {"mem",    "mem_limit", "pids",     "net_rx",
                                        "net_tx", "blk_read",  "blk_write"};
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        json_t *o = json_object();
        json_object_set_new(o, "at", store_col_real(st, 0));
        json_object_set_new(o, "span", store_col_real(st, 1));
        json_object_set_new(o, "cpu", store_col_real(st, 2));
        for (int i = 0; i < 7; i++)
            json_object_set_new(o, names[i], store_col_count(st, 3 + i));
        json_array_append_new(arr, o);
    }
    sqlite3_finalize(st);
    return arr;
}

int store_samples_downsample(struct store *s, double before, double bucket)
{
    if (bucket < 2)
        return 0;
    char *err = NULL;
    store_sync_full(s, 0);
    if (store_exec(s, "BEGIN IMMEDIATE", &err) < 0) {
        free(err);
        store_sync_full(s, 1);
        return -1;
    }
    /* Only rows finer than the bucket are merged, so running it again changes nothing. */
    sqlite3_stmt *ins = store_prepare(
        s, "INSERT INTO samples(session_id, at, span, cpu, mem, mem_limit, pids, net_rx, net_tx, "
           "blk_read, blk_write) "
           "SELECT session_id, CAST(at / ?1 AS INTEGER) * ?1 + ?1, ?1, avg(cpu), "
           "CAST(avg(mem) AS INTEGER), max(mem_limit), max(pids), max(net_rx), max(net_tx), "
           "max(blk_read), max(blk_write) FROM samples WHERE at < ?2 AND span < ?1 "
           "GROUP BY session_id, CAST(at / ?1 AS INTEGER)");
    if (ins) {
        sqlite3_bind_double(ins, 1, bucket);
        sqlite3_bind_double(ins, 2, before);
    }
    int rc = store_step_done(s, ins, "downsampling samples", &err);
    int removed = 0;
    if (rc == 0) {
        sqlite3_stmt *del = store_prepare(s, "DELETE FROM samples WHERE at < ?2 AND span < ?1");
        if (del) {
            sqlite3_bind_double(del, 1, bucket);
            sqlite3_bind_double(del, 2, before);
        }
        rc = store_step_done(s, del, "downsampling samples", &err);
        removed = rc == 0 ? sqlite3_changes(s->db) : 0;
    }
    if (rc == 0)
        rc = store_exec(s, "COMMIT", &err);
    else
        store_exec(s, "ROLLBACK", NULL);
    store_sync_full(s, 1);
    free(err);
    return rc < 0 ? -1 : removed;
}

int store_log_tail_set(struct store *s, const char *session_id, const char *text, size_t len,
                       size_t total, double now, char **err)
{
    sqlite3_stmt *st = store_prepare(
        s, "INSERT OR REPLACE INTO log_tails(session_id, text, size, at) VALUES (?,?,?,?)");
    if (st) {
        store_bind_text(st, 1, session_id);
        sqlite3_bind_text(st, 2, text, (int)len, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)total);
        sqlite3_bind_double(st, 4, now);
    }
    return store_step_done(s, st, "saving the log tail", err);
}

json_t *store_log_tail_get(struct store *s, const char *session_id)
{
    sqlite3_stmt *st =
        store_prepare(s, "SELECT text, size, at FROM log_tails WHERE session_id = ?");
    json_t *o = NULL;
    if (st) {
        store_bind_text(st, 1, session_id);
        if (sqlite3_step(st) == SQLITE_ROW)
            o = json_pack("{s:o,s:I,s:o}", "text", store_col_text(st, 0), "size",
                          (json_int_t)sqlite3_column_int64(st, 1), "at", store_col_real(st, 2));
    }
    sqlite3_finalize(st);
    return o;
}
