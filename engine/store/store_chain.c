/* The tamper-evident record (docs/record.md): every action, observation (an action's end),
 * decision, rule and lifecycle event appends an entry to the chain table in the transaction
 * that writes its row. An entry holds a canonical body of the row's content, the hash of the
 * session's previous entry and its own hash; engine_hash links every entry of the engine in
 * one chain. Verification re-reads each row, rebuilds its body and recomputes the hashes. */
#include "common/buf.h"
#include "engine/store/store.h"

#include "engine/base/util.h"
#include "engine/store/store_internal.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_ZERO "0000000000000000000000000000000000000000000000000000000000000000"

/* What each kind of entry covers: one row, selected by ?1 (the entry's ref). Columns in this
 * order are the body's fields; never change a shipped list (old entries would not verify). */
static const struct chain_kind {
    const char *name;
    enum store_slot slot; /* its statement, prepared once (the action path reads two) */
    const char *select;
    const char *successor; /* a later kind of entry about the same row (NULL: itself only) */
} chain_kinds[] = {
    {"action", STORE_SLOT_CHAIN_BODY_ACTION,
     "SELECT id, session_id, kind, summary, args, created_at, risk, risk_reason, "
     "declared_risk FROM actions WHERE id = ?1",
     NULL},
    {"decision", STORE_SLOT_CHAIN_BODY_DECISION,
     "SELECT ap.action_id, ap.session_id, ap.requested_at, ap.deadline, ap.decision, "
     "ap.decided_by, ap.decided_at, ap.reason, a.approval FROM approvals ap "
     "JOIN actions a ON a.id = ap.action_id WHERE ap.action_id = ?1 "
     "AND ap.decision IS NOT NULL",
     NULL},
    {"observation", STORE_SLOT_CHAIN_BODY_OBSERVATION,
     "SELECT a.id, a.state, a.exit_code, a.observation_size, a.error, "
     "a.finished_at, o.content, o.size, o.diff FROM actions a LEFT JOIN "
     "observations o ON o.action_id = a.id WHERE a.id = ?1",
     NULL},
    {"rule", STORE_SLOT_CHAIN_BODY_RULE,
     "SELECT id, session_id, pattern, decision, created_by, created_at FROM rules "
     "WHERE id = ?1",
     "rule_change"},
    /* A rule added, edited or removed (schema 10): the whole row, so an edit behind the
     * engine's back to any of its fields is found. Supersedes the older "rule" entries. */
    {"rule_change", STORE_SLOT_CHAIN_BODY_RULE_CHANGE,
     "SELECT id, session_id, pattern, decision, created_by, created_at, kind, origin, "
     "changed_by, changed_at, removed FROM rules WHERE id = ?1",
     NULL},
    {"event", STORE_SLOT_CHAIN_BODY_EVENT,
     "SELECT id, session_id, kind, detail, at FROM events WHERE id = ?1", NULL},
};

static const struct chain_kind *chain_kind_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(chain_kinds) / sizeof(chain_kinds[0]); i++)
        if (strcmp(chain_kinds[i].name, name) == 0)
            return &chain_kinds[i];
    return NULL;
}

/* SHA-256 fetched from its provider once: EVP_sha256() makes every digest look it up again,
 * which costs ten times the hashing of an entry's short texts (about 20 an action). */
static EVP_MD *chain_md;
static pthread_once_t chain_md_once = PTHREAD_ONCE_INIT;

static void chain_md_fetch(void)
{
    chain_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

void store_chain_sha256(const void *data, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    static const char hex[] = "0123456789abcdef";
    pthread_once(&chain_md_once, chain_md_fetch);
    EVP_Digest(data, len, md, &n, chain_md ? chain_md : EVP_sha256(), NULL);
    for (unsigned int i = 0; i < 32; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
}

/* The body: one line per column, "name=value\n"; value is null, i:<decimal>, r:<%.17g> (the
 * double SQLite holds, printed so it reads back the same), t:<sha256 of the text's bytes> or
 * b:<sha256 of the blob>. Texts go in as hashes: the body stays ASCII and short. */
static int chain_body_row(sqlite3_stmt *st, struct buf *b)
{
    for (int i = 0; i < sqlite3_column_count(st); i++) {
        char v[80];
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_NULL:
            memcpy(v, "null", 5);
            break;
        case SQLITE_INTEGER:
            snprintf(v, sizeof(v), "i:%lld", (long long)sqlite3_column_int64(st, i));
            break;
        case SQLITE_FLOAT:
            snprintf(v, sizeof(v), "r:%.17g", sqlite3_column_double(st, i));
            break;
        case SQLITE_BLOB: {
            const void *p = sqlite3_column_blob(st, i);
            v[0] = 'b';
            v[1] = ':';
            store_chain_sha256(p ? p : "", (size_t)sqlite3_column_bytes(st, i), v + 2);
            break;
        }
        default: {
            const unsigned char *p = sqlite3_column_text(st, i);
            v[0] = 't';
            v[1] = ':';
            store_chain_sha256(p ? (const char *)p : "", (size_t)sqlite3_column_bytes(st, i),
                               v + 2);
            break;
        }
        }
        /* Appended, not printed: this runs about twenty times an action. */
        if (buf_append_str(b, sqlite3_column_name(st, i)) < 0 || buf_append(b, "=", 1) < 0 ||
            buf_append_str(b, v) < 0 || buf_append(b, "\n", 1) < 0)
            return -1;
    }
    return 0;
}

/* The body of kind's row ref as it is now: 1 with *out, 0 when there is no such row, -1. */
static int chain_body(struct store *s, const struct chain_kind *k, int64_t ref, char **out)
{
    sqlite3_stmt *st = store_cached(s, k->slot, k->select);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, ref);
    int rc = sqlite3_step(st);
    int found = 0;
    struct buf b = BUF_INIT;
    if (rc == SQLITE_ROW) {
        found = chain_body_row(st, &b) == 0 ? 1 : -1;
    } else if (rc != SQLITE_DONE) {
        found = -1;
    }
    sqlite3_reset(st);
    if (found == 1)
        *out = buf_steal(&b);
    else
        buf_free(&b);
    return found;
}

void store_chain_entry_hash(int64_t seq, const char *session_id, const char *kind, int64_t ref,
                            const char *prev, const char *body, char out[65])
{
    char *text = util_strdupf("paddock-chain 1\nseq=%lld\nsession=%s\nkind=%s\nref=%lld\n"
                              "prev=%s\n%s",
                              (long long)seq, session_id ? session_id : "", kind, (long long)ref,
                              prev, body);
    store_chain_sha256(text ? text : "", text ? strlen(text) : 0, out);
    free(text);
}

void store_chain_engine_hash(const char *engine_prev, const char *hash, char out[65])
{
    char text[140];
    snprintf(text, sizeof(text), "%s\n%s\n", engine_prev, hash);
    store_chain_sha256(text, strlen(text), out);
}

/* Column col of a head statement's step result rc, as a hash: CHAIN_ZERO when there is no
 * row or it is NULL. */
static void chain_col_hash(sqlite3_stmt *st, int rc, int col, char out[65])
{
    const unsigned char *p = rc == SQLITE_ROW ? sqlite3_column_text(st, col) : NULL;
    snprintf(out, 65, "%s", p ? (const char *)p : CHAIN_ZERO);
}

/* The session's newest hash in the store: CHAIN_ZERO when it has none. */
static int chain_session_head(struct store *s, const char *session_id, char prev[65])
{
    sqlite3_stmt *st = store_cached(s, STORE_SLOT_CHAIN_SESSION_HEAD,
                                    "SELECT hash FROM chain WHERE session_id IS ?1 ORDER BY seq "
                                    "DESC LIMIT 1");
    if (!st)
        return -1;
    store_bind_text(st, 1, session_id);
    int rc = sqlite3_step(st);
    chain_col_hash(st, rc, 0, prev);
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* The heads the next entry links to: the hash of the session's newest entry (prev), the
 * engine's (eprev) and the newest seq; CHAIN_ZERO and 0 when there are none. As the engine
 * left them when it knows them (store_chain_heads.c), else from the store in one statement. */
static int chain_heads(struct store *s, const char *session_id, char prev[65], char eprev[65],
                       int64_t *seq)
{
    if (store_chain_heads_engine(s, seq, eprev))
        return store_chain_heads_session(s, session_id, prev)
                   ? 0
                   : chain_session_head(s, session_id, prev);
    sqlite3_stmt *st = store_cached(s, STORE_SLOT_CHAIN_HEAD,
                                    "SELECT (SELECT hash FROM chain WHERE session_id IS ?1 ORDER "
                                    "BY seq DESC LIMIT 1), engine_hash, seq FROM chain ORDER BY "
                                    "seq DESC LIMIT 1");
    if (!st)
        return -1;
    store_bind_text(st, 1, session_id);
    int rc = sqlite3_step(st);
    chain_col_hash(st, rc, 0, prev);
    chain_col_hash(st, rc, 1, eprev);
    *seq = rc == SQLITE_ROW ? sqlite3_column_int64(st, 2) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* One entry after the heads: 0, SQLITE_CONSTRAINT when its seq is taken (an entry the engine
 * did not write), -1 with *err. */
static int chain_insert(struct store *s, const char *session_id, const char *kind, int64_t ref,
                        const char *body, char **err)
{
    char prev[65], eprev[65], hash[65], ehash[65];
    int64_t last = 0;
    if (chain_heads(s, session_id, prev, eprev, &last) < 0) {
        if (err)
            *err = store_errf(s, "reading the record's head");
        return -1;
    }
    /* Entries are only appended, never removed: the next seq follows the newest. */
    int64_t seq = last + 1;
    store_chain_entry_hash(seq, session_id, kind, ref, prev, body, hash);
    store_chain_engine_hash(eprev, hash, ehash);
    sqlite3_stmt *st = store_cached(s, STORE_SLOT_CHAIN_INSERT,
                                    "INSERT INTO chain(seq, session_id, kind, ref, body, prev, "
                                    "hash, engine_hash) VALUES (?,?,?,?,?,?,?,?)");
    if (!st)
        return store_cached_done(s, NULL, "recording the entry", err);
    sqlite3_bind_int64(st, 1, seq);
    store_bind_text(st, 2, session_id);
    store_bind_text(st, 3, kind);
    sqlite3_bind_int64(st, 4, ref);
    store_bind_text(st, 5, body);
    store_bind_text(st, 6, prev);
    store_bind_text(st, 7, hash);
    store_bind_text(st, 8, ehash);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc == SQLITE_DONE) {
        store_chain_heads_set(s, seq, ehash, session_id, hash);
        return 0;
    }
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return SQLITE_CONSTRAINT;
    s->last_rc = rc;
    if (err)
        *err = store_errf(s, "recording the entry");
    return -1;
}

int store_chain_append(struct store *s, const char *session_id, const char *kind, int64_t ref,
                       char **err)
{
    const struct chain_kind *k = chain_kind_find(kind);
    char *body = NULL;
    if (!k || chain_body(s, k, ref, &body) != 1) {
        if (err)
            *err = util_strdupf("store: no %s %lld to record", kind, (long long)ref);
        return -1;
    }
    int rc = chain_insert(s, session_id, kind, ref, body, err);
    if (rc == SQLITE_CONSTRAINT) {
        /* Someone else appended: the heads are read from the store again. */
        store_chain_heads_forget(s);
        rc = chain_insert(s, session_id, kind, ref, body, err);
    }
    if (rc == SQLITE_CONSTRAINT) {
        s->last_rc = SQLITE_CONSTRAINT;
        if (err)
            *err = store_errf(s, "recording the entry");
        rc = -1;
    }
    free(body);
    return rc;
}

int store_chain_append_action(struct store *s, const char *kind, int64_t action_id, char **err)
{
    const char *held = store_chain_heads_action_session(s, action_id);
    char *sid = held ? strdup(held) : NULL;
    sqlite3_stmt *st = sid ? NULL
                           : store_cached(s, STORE_SLOT_CHAIN_ACTION_SESSION,
                                          "SELECT session_id FROM actions WHERE id = ?");
    if (st) {
        sqlite3_bind_int64(st, 1, action_id);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            sid = strdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_reset(st);
    }
    if (!sid) {
        if (err)
            *err = util_strdupf("store: no action %lld to record", (long long)action_id);
        return -1;
    }
    int rc = store_chain_append(s, sid, kind, action_id, err);
    free(sid);
    return rc;
}

int store_chain_backfill(struct store *s, char **err)
{
    /* Rows written before the record existed, in the order they happened: by time, then
     * actions, decisions, observations, rules, events, then by id. */
    sqlite3_stmt *st = store_prepare(
        s, "SELECT session_id, kind, ref FROM ("
           "SELECT created_at AS t, 0 AS o, 'action' AS kind, id AS ref, session_id FROM actions "
           "UNION ALL SELECT decided_at, 1, 'decision', action_id, session_id FROM approvals "
           "WHERE decision IS NOT NULL "
           "UNION ALL SELECT COALESCE(finished_at, created_at), 2, 'observation', id, session_id "
           "FROM actions WHERE state IN ('done', 'failed', 'interrupted', 'rejected', 'skipped') "
           "UNION ALL SELECT created_at, 3, 'rule', id, session_id FROM rules "
           "UNION ALL SELECT at, 4, 'event', id, session_id FROM events) "
           "ORDER BY t, o, ref");
    if (!st) {
        if (err)
            *err = store_errf(s, "recording the existing rows");
        return -1;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char *sid =
            sqlite3_column_text(st, 0) ? strdup((const char *)sqlite3_column_text(st, 0)) : NULL;
        char *kind = strdup((const char *)sqlite3_column_text(st, 1));
        int r = store_chain_append(s, sid, kind, sqlite3_column_int64(st, 2), err);
        free(sid);
        free(kind);
        if (r < 0) {
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        if (err)
            *err = store_errf(s, "recording the existing rows");
        return -1;
    }
    return 0;
}

/* The first field (line) where two bodies differ, written into what. */
static void chain_body_diff(const char *want, const char *got, char *what, size_t n)
{
    while (*want && *got) {
        size_t lw = strcspn(want, "\n"), lg = strcspn(got, "\n");
        if (lw != lg || memcmp(want, got, lw) != 0) {
            snprintf(what, n, "its %.*s differs from what was recorded", (int)strcspn(want, "="),
                     want);
            return;
        }
        want += lw + (want[lw] != '\0');
        got += lg + (got[lg] != '\0');
    }
    snprintf(what, n, "its row differs from what was recorded");
}

static json_t *chain_break(int64_t seq, const char *session_id, const char *kind, int64_t ref,
                           const char *what)
{
    return json_pack("{s:I,s:s?,s:s,s:I,s:s}", "seq", (json_int_t)seq, "session", session_id,
                     "kind", kind, "ref", (json_int_t)ref, "what", what);
}

/* Whether a later entry is about the same row: then the row holds what that one recorded
 * (an action's end recorded again). Asked only when a row differs, so it needs no index of its
 * own (one index less to write on the action path). */
static int chain_superseded(struct store *s, const struct chain_kind *k, int64_t ref, int64_t seq)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT EXISTS (SELECT 1 FROM chain WHERE kind IN (?1, "
                                        "?4) AND ref = ?2 AND seq > ?3)");
    int later = -1;
    if (st) {
        store_bind_text(st, 1, k->name);
        store_bind_text(st, 4, k->successor ? k->successor : k->name);
        sqlite3_bind_int64(st, 2, ref);
        sqlite3_bind_int64(st, 3, seq);
        if (sqlite3_step(st) == SQLITE_ROW)
            later = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return later;
}

static int chain_session_exists(struct store *s, const char *id)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT 1 FROM sessions WHERE id = ?");
    int found = 0;
    if (st) {
        store_bind_text(st, 1, id);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

/* One entry: its links, its hash, and (when it is the newest about its row) the row. NULL when
 * it matches, else the break. */
static json_t *chain_check_entry(struct store *s, sqlite3_stmt *e, json_t *heads,
                                 char engine_prev[65], bool whole)
{
    int64_t seq = sqlite3_column_int64(e, 0);
    const char *sid = (const char *)sqlite3_column_text(e, 1);
    const char *kind = (const char *)sqlite3_column_text(e, 2);
    int64_t ref = sqlite3_column_int64(e, 3);
    const char *body = (const char *)sqlite3_column_text(e, 4);
    const char *prev = (const char *)sqlite3_column_text(e, 5);
    const char *hash = (const char *)sqlite3_column_text(e, 6);
    const char *ehash = (const char *)sqlite3_column_text(e, 7);
    bool retired = sqlite3_column_int(e, 8) != 0;
    const char *key = sid ? sid : "";
    const char *want_prev = json_string_value(json_object_get(heads, key));
    char h[65], eh[65], what[200];
    kind = kind ? kind : "?";
    if (!body || !prev || !hash || !ehash)
        return chain_break(seq, sid, kind, ref, "the entry is incomplete");
    if (strcmp(prev, want_prev ? want_prev : CHAIN_ZERO) != 0)
        return chain_break(seq, sid, kind, ref,
                           "the entry before it is missing or out of order (its previous hash "
                           "does not match)");
    store_chain_entry_hash(seq, sid, kind, ref, prev, body, h);
    if (strcmp(h, hash) != 0)
        return chain_break(seq, sid, kind, ref, "the entry was changed (its hash does not match)");
    if (whole) {
        store_chain_engine_hash(engine_prev, hash, eh);
        if (strcmp(eh, ehash) != 0)
            return chain_break(seq, sid, kind, ref, "the engine's chain does not link here");
        memcpy(engine_prev, eh, 65);
    }
    json_object_set_new(heads, key, json_string(hash));
    const struct chain_kind *k = chain_kind_find(kind);
    if (!k)
        return chain_break(seq, sid, kind, ref, "unknown kind of entry");
    if (retired) {
        if (sid && chain_session_exists(s, sid))
            return chain_break(seq, sid, kind, ref,
                               "marked as removed by retention while its session exists");
        return NULL;
    }
    char *now = NULL;
    int found = chain_body(s, k, ref, &now);
    if (found < 0)
        return chain_break(seq, sid, kind, ref, "its row cannot be read");
    if (found == 0)
        return chain_break(seq, sid, kind, ref, "its row is gone");
    json_t *brk = NULL;
    int later = strcmp(now, body) != 0 ? chain_superseded(s, k, ref, seq) : 1;
    if (later < 0) {
        brk = chain_break(seq, sid, kind, ref, "the record cannot be read");
    } else if (!later) {
        chain_body_diff(body, now, what, sizeof(what));
        brk = chain_break(seq, sid, kind, ref, what);
    }
    free(now);
    return brk;
}

/* Rows the record does not know: added behind the engine's back (or an entry deleted). A set
 * difference per kind (the entries have no index by row: the action path writes fewer pages);
 * the session's condition is spliced in, so one session's check reads its rows only. */
static json_t *chain_check_unrecorded(struct store *s, const char *session_id)
{
    static const struct {
        const char *kind, *sql;
    } checks[] = {
        {"action", "SELECT id FROM actions WHERE %s EXCEPT SELECT ref FROM chain WHERE %s AND "
                   "kind = 'action' ORDER BY 1 LIMIT 1"},
        {"observation", "SELECT id FROM actions WHERE %s AND state NOT IN ('pending', 'running') "
                        "EXCEPT SELECT ref FROM chain WHERE %s AND kind = 'observation' ORDER BY "
                        "1 LIMIT 1"},
        {"decision", "SELECT action_id FROM approvals WHERE %s AND decision IS NOT NULL EXCEPT "
                     "SELECT ref FROM chain WHERE %s AND kind = 'decision' ORDER BY 1 LIMIT 1"},
        {"rule", "SELECT id FROM rules WHERE %s EXCEPT SELECT ref FROM chain WHERE %s AND kind IN "
                 "('rule', 'rule_change') ORDER BY 1 LIMIT 1"},
        {"event", "SELECT id FROM events WHERE %s EXCEPT SELECT ref FROM chain WHERE %s AND kind = "
                  "'event' ORDER BY 1 LIMIT 1"},
    };
    const char *cond = session_id ? "session_id = ?1" : "1";
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
        char *q = util_strdupf(checks[i].sql, cond, cond);
        sqlite3_stmt *st = q ? store_prepare(s, q) : NULL;
        free(q);
        json_t *brk = NULL;
        if (!st)
            return chain_break(0, session_id, checks[i].kind, 0, "the record cannot be read");
        if (session_id)
            store_bind_text(st, 1, session_id);
        if (sqlite3_step(st) == SQLITE_ROW)
            brk = json_pack("{s:n,s:s?,s:s,s:I,s:s}", "seq", "session", session_id, "kind",
                            checks[i].kind, "ref", (json_int_t)sqlite3_column_int64(st, 0), "what",
                            "its row is not in the record");
        sqlite3_finalize(st);
        if (brk)
            return brk;
    }
    return NULL;
}

json_t *store_chain_verify(struct store *s, const char *session_id, char **err)
{
    /* One read transaction: the walk sees one state of the store. */
    if (store_exec(s, "BEGIN", err) < 0)
        return NULL;
    sqlite3_stmt *e = store_prepare(
        s, session_id ? "SELECT seq, session_id, kind, ref, body, prev, hash, engine_hash, retired "
                        "FROM chain WHERE session_id = ?1 ORDER BY seq"
                      : "SELECT seq, session_id, kind, ref, body, prev, hash, engine_hash, retired "
                        "FROM chain ORDER BY seq");
    if (!e) {
        if (err)
            *err = store_errf(s, "reading the record");
        store_exec(s, "COMMIT", NULL);
        return NULL;
    }
    store_bind_text(e, 1, session_id);
    json_t *heads = json_object();
    char engine_prev[65] = CHAIN_ZERO, head[65] = CHAIN_ZERO;
    json_t *brk = NULL;
    json_int_t n = 0;
    int rc;
    while (!brk && (rc = sqlite3_step(e)) == SQLITE_ROW) {
        brk = chain_check_entry(s, e, heads, engine_prev, session_id == NULL);
        if (!brk && sqlite3_column_text(e, 6))
            snprintf(head, sizeof(head), "%s", (const char *)sqlite3_column_text(e, 6));
        n++;
    }
    sqlite3_finalize(e);
    if (!brk)
        brk = chain_check_unrecorded(s, session_id);
    store_exec(s, "COMMIT", NULL);
    json_decref(heads);
    json_t *out = json_pack("{s:b,s:s?,s:I,s:s}", "ok", brk == NULL, "session", session_id,
                            "entries", n, "head", session_id ? head : engine_prev);
    if (brk)
        json_object_set_new(out, "broken", brk);
    return out;
}

json_t *store_chain_entries(struct store *s, const char *session_id)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT seq, kind, ref, body, prev, hash FROM chain "
                                        "WHERE session_id = ? ORDER BY seq");
    json_t *arr = json_array();
    if (st) {
        store_bind_text(st, 1, session_id);
        while (sqlite3_step(st) == SQLITE_ROW)
            json_array_append_new(arr,
                                  json_pack("{s:I,s:o,s:I,s:o,s:o,s:o}", "seq",
                                            (json_int_t)sqlite3_column_int64(st, 0), "kind",
                                            store_col_text(st, 1), "ref",
                                            (json_int_t)sqlite3_column_int64(st, 2), "body",
                                            store_col_text(st, 3), "prev", store_col_text(st, 4),
                                            "hash", store_col_text(st, 5)));
    }
    sqlite3_finalize(st);
    return arr;
}
