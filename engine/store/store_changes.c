/* What engine/changes.c reads and keeps: the file actions of a session, how many of its
 * actions are opaque commands, when it first started, and the changes kept at its end. Which
 * kinds are which is the caller's (engine/action_kind.c): the queries take lists of names. */
#include "engine/store/store.h"
#include "engine/store/store_internal.h"

#include <stdlib.h>
#include <string.h>

int store_changes_set(struct store *s, const char *session_id, const char *body, double now,
                      char **err)
{
    sqlite3_stmt *st =
        store_prepare(s, "INSERT OR REPLACE INTO changes(session_id, body, at) VALUES (?,?,?)");
    if (st) {
        store_bind_text(st, 1, session_id);
        store_bind_text(st, 2, body);
        sqlite3_bind_double(st, 3, now);
    }
    return store_step_done(s, st, "saving the changes", err);
}

json_t *store_changes_get(struct store *s, const char *session_id)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT body, at FROM changes WHERE session_id = ?");
    json_t *o = NULL;
    if (st) {
        store_bind_text(st, 1, session_id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *b = (const char *)sqlite3_column_text(st, 0);
            o = b ? json_loads(b, 0, NULL) : NULL;
            if (o && !json_is_object(o)) {
                json_decref(o);
                o = NULL;
            }
            if (o)
                json_object_set_new(o, "at", store_col_real(st, 1));
        }
    }
    sqlite3_finalize(st);
    return o;
}

/* kinds (NULL-terminated) as a JSON array, for `kind IN (SELECT value FROM json_each(?))`:
 * one statement for any list. NULL when out of memory. */
static char *store_kinds_json(const char *const *kinds)
{
    json_t *a = json_array();
    for (; a && *kinds; kinds++)
        json_array_append_new(a, json_string(*kinds));
    char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return s;
}

json_t *store_actions_file_writes(struct store *s, const char *session_id, const char *const *kinds,
                                  int limit)
{
    /* A failed edit answers an "error" observation with state done. json_valid first:
     * json_extract on a kept-but-cut text would fail the whole query. */
    char *names = store_kinds_json(kinds);
    sqlite3_stmt *st =
        names ? store_prepare(
                    s, "SELECT a.id, a.kind, CASE WHEN json_valid(a.args) THEN "
                       "json_extract(a.args, '$.args.path') END, CASE WHEN json_valid(o.content) "
                       "THEN json_extract(o.content, '$.path') END, CASE WHEN json_valid(a.args) "
                       "THEN json_extract(a.args, '$.args.command') END FROM actions a LEFT JOIN "
                       "observations o ON o.action_id = a.id WHERE a.session_id = ? AND a.kind "
                       "IN (SELECT value FROM json_each(?)) AND a.state = 'done' AND NOT "
                       "(json_valid(o.content) AND json_extract(o.content, '$.observation') IS "
                       "'error') ORDER BY a.id DESC LIMIT ?")
              : NULL;
    /* the text columns, by number */
    static const char *const keys[] = {NULL, NULL, "path", "observed_path", "command"};
    json_t *arr = json_array();
    if (st) {
        store_bind_text(st, 1, session_id);
        store_bind_text(st, 2, names);
        sqlite3_bind_int(st, 3, limit);
        while (sqlite3_step(st) == SQLITE_ROW) {
            json_t *row = json_pack("{s:I,s:o}", "id", (json_int_t)sqlite3_column_int64(st, 0),
                                    "kind", store_col_text(st, 1));
            for (int c = 2; row && c <= 4; c++)
                if (sqlite3_column_type(st, c) == SQLITE_TEXT)
                    json_object_set_new(row, keys[c], store_col_text(st, c));
            json_array_append_new(arr, row);
        }
    }
    sqlite3_finalize(st);
    free(names);
    return arr;
}

long long store_actions_count_finished(struct store *s, const char *session_id,
                                       const char *const *kinds)
{
    char *names = store_kinds_json(kinds);
    sqlite3_stmt *st = names ? store_prepare(s, "SELECT count(*) FROM actions WHERE session_id = ? "
                                                "AND kind IN (SELECT value FROM json_each(?)) AND "
                                                "state IN ('done', 'failed', 'interrupted')")
                             : NULL;
    long long n = 0;
    if (st) {
        store_bind_text(st, 1, session_id);
        store_bind_text(st, 2, names);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    free(names);
    return n;
}

double store_session_first_start(struct store *s, const char *session_id)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT min(at) FROM events WHERE session_id = ? AND "
                                        "kind IN ('started', 'ready')");
    double at = 0;
    if (st) {
        store_bind_text(st, 1, session_id);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
            at = sqlite3_column_double(st, 0);
    }
    sqlite3_finalize(st);
    return at;
}
