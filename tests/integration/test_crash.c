/* Crash test of the action store: a load of actions (some that run at once, some that wait for
 * an approval with ?wait=0, an operator approving and rejecting) while the engine is killed with
 * SIGKILL (now and then SIGTERM) at seeded random moments and restarted. At the end the store must
 * be intact and agree with everything any client was told:
 *
 * - PRAGMA integrity_check is "ok";
 * - an action answered with its observation is "done" (or "failed") with that observation;
 * - an action answered 202 is there: pending (with its deadline), run, rejected, expired or
 *   interrupted, never missing; an approval answered 200 ran (or was interrupted), a rejection
 *   answered 200 is rejected;
 * - after a restart nothing is "received" or "running", and the record verifies (GET /v1/verify)
 *   after every restart;
 * - what is derived from the record (the search index, the sessions' action counts) is up to
 *   it after the clean stop, each action counted and indexed once;
 * - nothing ran twice and nothing rejected or pending ran: every command appends its own token
 *   to a file in the session's workspace (a host directory), and each token is there at most
 *   once, exactly once for a "done" action, never for a rejected or pending one.
 *
 * PADDOCK_CRASH_SEED fixes the seed (it is printed); PADDOCK_CRASH_KILLS the number of kills
 * (default 5). Which actions are in flight at a kill also depends on thread timing, so a seed
 * replays the kill schedule, not every interleaving. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N_SESSIONS 3
#define N_CLIENTS 3
/* Session N_SESSIONS-1 has a short approval timeout, so expiries (also across restarts) are in
 * the mix; the others keep theirs for an hour. */
#define SHORT_TIMEOUT 2
#define LONG_TIMEOUT 3600

static struct engine_proc *eng;
static char *ws[N_SESSIONS];
static char *sid[N_SESSIONS];
static atomic_bool stop_load;
static atomic_int sent, conn_errors;

/* What a client was told. */
enum ack_kind {
    ACK_OBSERVATION, /* 200 with the observation (blocking request) */
    ACK_ACCEPTED,    /* 202 {"action_id", "state"} */
    ACK_APPROVED,    /* 200 to POST /approve */
    ACK_REJECTED,    /* 200 to POST /reject */
};

struct ack {
    enum ack_kind kind;
    int session;
    long long id; /* 0 when the answer does not say (observation) */
    char *command;
    char *token;
    char *state;   /* 202: the state it announced */
    char *content; /* observation: its content */
};

static struct ack *acks;
static int n_acks, cap_acks;
static pthread_mutex_t acks_lock = PTHREAD_MUTEX_INITIALIZER;

static void ack_add(struct ack a)
{
    pthread_mutex_lock(&acks_lock);
    if (n_acks == cap_acks) {
        cap_acks = cap_acks ? cap_acks * 2 : 1024;
        acks = realloc(acks, (size_t)cap_acks * sizeof(*acks));
        if (!acks)
            abort();
    }
    acks[n_acks++] = a;
    pthread_mutex_unlock(&acks_lock);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

/* ---------------------------------------------------------------- load */

struct client {
    pthread_t t;
    int n;
    unsigned seed;
};

static char *action_body(const char *cmd, bool declare_high)
{
    json_t *args = json_pack("{s:s}", "command", cmd);
    if (declare_high)
        json_object_set_new(args, "security_risk", json_integer(2));
    json_t *b = json_pack("{s:{s:s,s:o}}", "action", "action", "run", "args", args);
    char *s = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return s;
}

/* One client: a mix of blocking LOW actions, ?wait=0 LOW actions and ?wait=0 actions declared
 * HIGH (they wait for the operator under the policy "high"). Every command appends its unique
 * token to the session's tokens file and prints it. */
static void *client_main(void *ud)
{
    struct client *c = ud;
    int seq = 0;
    while (!atomic_load(&stop_load)) {
        int s = (int)(rand_r(&c->seed) % N_SESSIONS);
        int kind = (int)(rand_r(&c->seed) % 3); /* 0 blocking, 1 wait=0 low, 2 wait=0 high */
        char *token = strdupf("c%d-%d-%c", c->n, seq++, "blh"[kind]);
        char *cmd = strdupf("echo %s >> /workspace/tokens && echo %s", token, token);
        char *body = action_body(cmd, kind == 2);
        char *path = strdupf("/v1/sessions/%s/execute_action%s", sid[s], kind ? "?wait=0" : "");
        struct reply r;
        http_unix(eng->socket, "POST", path, body, -1, 60000, &r);
        atomic_fetch_add(&sent, 1);
        struct ack a = {.session = s, .command = cmd, .token = token};
        bool acked = false;
        if (kind == 0 && r.status == 200 && json_is_object(r.json) &&
            json_is_string(json_object_get(r.json, "observation"))) {
            a.kind = ACK_OBSERVATION;
            a.content = strdup(jstr(r.json, "content") ? jstr(r.json, "content") : "");
            acked = true;
        } else if (kind != 0 && r.status == 202 &&
                   json_is_integer(json_object_get(r.json, "action_id"))) {
            a.kind = ACK_ACCEPTED;
            a.id = json_integer_value(json_object_get(r.json, "action_id"));
            a.state = strdup(jstr(r.json, "state") ? jstr(r.json, "state") : "");
            acked = true;
        } else if (r.status < 0) {
            atomic_fetch_add(&conn_errors, 1);
        }
        if (acked) {
            ack_add(a);
        } else {
            free(cmd);
            free(token);
            /* Refused (restarting, session not ready yet) or the connection broke: not
             * acknowledged, nothing promised. A pause before the next try. */
            sleep_ms(20);
        }
        reply_free(&r);
        free(body);
        free(path);
    }
    return NULL;
}

/* The operator: approves about two thirds of what waits, rejects the rest. */
static void *approver_main(void *ud)
{
    unsigned seed = *(unsigned *)ud;
    while (!atomic_load(&stop_load)) {
        struct reply r;
        http_unix(eng->socket, "GET", "/v1/approvals", NULL, -1, 10000, &r);
        json_t *list = r.status == 200 ? json_incref(json_object_get(r.json, "approvals")) : NULL;
        reply_free(&r);
        size_t i;
        json_t *x;
        json_array_foreach(list, i, x)
        {
            if (atomic_load(&stop_load))
                break;
            if (rand_r(&seed) % 4 == 0)
                continue; /* leave some pending (and some to expire) */
            bool approve = rand_r(&seed) % 3 != 0;
            long long id = json_integer_value(json_object_get(x, "id"));
            char *p = strdupf("/v1/actions/%lld/%s", id, approve ? "approve" : "reject");
            http_unix(eng->op_socket, "POST", p, "{\"by\": \"crash-operator\"}", -1, 10000, &r);
            if (r.status == 200)
                ack_add((struct ack){.kind = approve ? ACK_APPROVED : ACK_REJECTED, .id = id});
            reply_free(&r);
            free(p);
        }
        json_decref(list);
        sleep_ms(50 + rand_r(&seed) % 100);
    }
    return NULL;
}

/* ---------------------------------------------------------------- checks */

static int token_count(const char *text, const char *token)
{
    int n = 0;
    size_t tl = strlen(token);
    for (const char *p = text; p && (p = strstr(p, token)); p += tl)
        if ((p == text || p[-1] == '\n') && (p[tl] == '\n' || p[tl] == '\0'))
            n++;
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    return b;
}

static const char *col(sqlite3_stmt *st, int i)
{
    const char *v = (const char *)sqlite3_column_text(st, i);
    return v ? v : "";
}

static bool one_of(const char *v, const char *const *set)
{
    for (size_t i = 0; set[i]; i++)
        if (strcmp(v, set[i]) == 0)
            return true;
    return false;
}

static int failures;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "CRASH CHECK: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

#define ROW_SQL                                                                                    \
    "SELECT a.id, a.session_id, a.summary, a.state, a.approval, ap.deadline, ap.decision, "        \
    "o.content, ap.requested_at FROM actions a LEFT JOIN approvals ap ON ap.action_id = a.id "     \
    "LEFT JOIN observations o ON o.action_id = a.id "

/* The store (the engine stopped) against the acknowledgements and the token files. */
static void check_store(void)
{
    char *dbpath = strdupf("%s/paddock.db", eng->state_dir);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    free(dbpath);
    sqlite3_stmt *st = NULL;

    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        if (strcmp(col(st, 0), "ok") != 0)
            problem("integrity_check: %s", col(st, 0));
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        problem("foreign_key_check: table %s row %lld", col(st, 0),
                (long long)sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    /* The search index agrees with its table. */
    char *msg = NULL;
    if (sqlite3_exec(db, "INSERT INTO actions_fts(actions_fts) VALUES('integrity-check')", NULL,
                     NULL, &msg) != SQLITE_OK) {
        problem("actions_fts integrity-check: %s", msg ? msg : "?");
        sqlite3_free(msg);
    }

    /* What is derived from the record (store_derived.c) agrees with it after the kills: a
     * clean stop brought it up to the record; every session counts its actions once and every
     * action is in the search index once. */
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (SELECT seq FROM derived), (SELECT COALESCE(MAX("
                                        "seq), 0) FROM chain), (SELECT count(*) FROM actions), "
                                        "(SELECT count(*) FROM actions_fts), (SELECT count(*) "
                                        "FROM actions a JOIN actions_fts f ON f.rowid = a.id)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    if (sqlite3_column_int64(st, 0) != sqlite3_column_int64(st, 1))
        problem("derived up to entry %lld of %lld after a clean stop",
                (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 1));
    if (sqlite3_column_int64(st, 3) != sqlite3_column_int64(st, 2) ||
        sqlite3_column_int64(st, 4) != sqlite3_column_int64(st, 2))
        problem("%lld actions, %lld in the search index (%lld of them actions)",
                (long long)sqlite3_column_int64(st, 2), (long long)sqlite3_column_int64(st, 3),
                (long long)sqlite3_column_int64(st, 4));
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT s.id, s.action_count, (SELECT count(*) FROM "
                                        "actions a WHERE a.session_id = s.id) FROM sessions s",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        if (sqlite3_column_int64(st, 1) != sqlite3_column_int64(st, 2))
            problem("session %s counts %lld actions, has %lld", col(st, 0),
                    (long long)sqlite3_column_int64(st, 1), (long long)sqlite3_column_int64(st, 2));
    sqlite3_finalize(st);

    /* Nothing in flight after a restart. */
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT id, state, summary FROM actions WHERE state IN "
                                        "('received', 'running')",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        problem("action %lld is still %s after a restart: %s",
                (long long)sqlite3_column_int64(st, 0), col(st, 1), col(st, 2));
    sqlite3_finalize(st);

    /* Pending ⇔ an open approval with a deadline that is its request time plus the session's
     * timeout (not lost, not moved by a restart). */
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           ROW_SQL "WHERE a.state = 'pending' OR (ap.action_id IS NOT NULL AND "
                                   "ap.decision IS NULL)",
                           -1, &st, NULL),
        SQLITE_OK);
    int pending = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        pending++;
        long long id = sqlite3_column_int64(st, 0);
        if (strcmp(col(st, 3), "pending") != 0 || strcmp(col(st, 4), "pending") != 0 ||
            sqlite3_column_type(st, 6) != SQLITE_NULL)
            problem("action %lld: state %s approval %s decision %s: pending in one place only", id,
                    col(st, 3), col(st, 4), col(st, 6));
        if (sqlite3_column_type(st, 5) == SQLITE_NULL) {
            problem("pending action %lld has no deadline", id);
            continue;
        }
        double timeout =
            strcmp(col(st, 1), sid[N_SESSIONS - 1]) == 0 ? SHORT_TIMEOUT : LONG_TIMEOUT;
        double want = sqlite3_column_double(st, 8) + timeout;
        if (fabs(sqlite3_column_double(st, 5) - want) > 1e-3)
            problem("pending action %lld: deadline %.3f, want %.3f", id,
                    sqlite3_column_double(st, 5), want);
    }
    sqlite3_finalize(st);

    /* Tokens: each at most once; once for what is done; never for what never ran. */
    char *text[N_SESSIONS];
    for (int i = 0; i < N_SESSIONS; i++) {
        char *p = strdupf("%s/tokens", ws[i]);
        text[i] = slurp(p);
        free(p);
    }
    assert_int_equal(sqlite3_prepare_v2(db, ROW_SQL "ORDER BY a.id", -1, &st, NULL), SQLITE_OK);
    int rows = 0, by_state[6] = {0};
    static const char *const states[] = {"done",        "failed",  "rejected",
                                         "interrupted", "pending", NULL};
    while (sqlite3_step(st) == SQLITE_ROW) {
        long long id = sqlite3_column_int64(st, 0);
        const char *state = col(st, 3), *summary = col(st, 2);
        int s = -1;
        for (int i = 0; i < N_SESSIONS; i++)
            if (strcmp(col(st, 1), sid[i]) == 0)
                s = i;
        char token[64];
        if (s < 0 || sscanf(summary, "echo %63s >>", token) != 1)
            continue; /* not the load's */
        rows++;
        int k = 0;
        while (states[k] && strcmp(states[k], state) != 0)
            k++;
        by_state[k]++;
        int n = token_count(text[s], token);
        if (n > 1)
            problem("action %lld (%s) ran %d times: token %s", id, state, n, token);
        if (strcmp(state, "done") == 0 && n != 1)
            problem("action %lld is done but its token %s is in the file %d times", id, token, n);
        if ((strcmp(state, "rejected") == 0 || strcmp(state, "pending") == 0) && n != 0)
            problem("action %lld is %s but ran: token %s", id, state, token);
    }
    sqlite3_finalize(st);
    printf("store: %d actions of the load (done %d, failed %d, rejected %d, interrupted %d, "
           "pending %d, other %d); %d pending in all\n",
           rows, by_state[0], by_state[1], by_state[2], by_state[3], by_state[4], by_state[5],
           pending);

    /* Every acknowledgement against its row. */
    sqlite3_stmt *by_id = NULL, *by_summary = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, ROW_SQL "WHERE a.id = ?", -1, &by_id, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, ROW_SQL "WHERE a.summary = ?", -1, &by_summary, NULL),
                     SQLITE_OK);
    static const char *const after_202_high[] = {"pending",  "done",        "failed",
                                                 "rejected", "interrupted", NULL};
    static const char *const after_202_low[] = {"done", "failed", "interrupted", NULL};
    static const char *const after_approved[] = {"done", "failed", "interrupted", NULL};
    int counts[4] = {0};
    for (int i = 0; i < n_acks; i++) {
        struct ack *a = &acks[i];
        counts[a->kind]++;
        sqlite3_stmt *q = a->kind == ACK_OBSERVATION ? by_summary : by_id;
        sqlite3_reset(q);
        if (a->kind == ACK_OBSERVATION)
            sqlite3_bind_text(q, 1, a->command, -1, SQLITE_STATIC);
        else
            sqlite3_bind_int64(q, 1, a->id);
        if (sqlite3_step(q) != SQLITE_ROW) {
            problem("acknowledged action %lld (%s) is missing from the store", a->id,
                    a->command ? a->command : "a decision");
            continue;
        }
        long long id = sqlite3_column_int64(q, 0);
        const char *state = col(q, 3), *approval = col(q, 4);
        switch (a->kind) {
        case ACK_OBSERVATION: {
            if (strcmp(state, "done") != 0 && strcmp(state, "failed") != 0)
                problem("action %lld was answered with its observation but is %s", id, state);
            json_t *o = json_loads(col(q, 7), 0, NULL);
            const char *c = jstr(o, "content");
            if (!c || strcmp(c, a->content) != 0)
                problem("action %lld: the agent saw \"%s\", the store keeps %s", id, a->content,
                        col(q, 7));
            json_decref(o);
            if (sqlite3_step(q) == SQLITE_ROW)
                problem("command %s is in the store twice", a->command);
            break;
        }
        case ACK_ACCEPTED: {
            bool high = strcmp(a->state, "pending") == 0;
            if (!one_of(state, high ? after_202_high : after_202_low))
                problem("action %lld was answered 202 %s but is %s", id, a->state, state);
            if (strcmp(col(q, 2), a->command) != 0)
                problem("action %lld: summary %s, the agent sent %s", id, col(q, 2), a->command);
            if (strcmp(state, "interrupted") == 0 && high && strcmp(approval, "approved") != 0)
                problem("action %lld was interrupted without being approved (%s)", id, approval);
            break;
        }
        case ACK_APPROVED:
            if (!one_of(state, after_approved) || strcmp(approval, "approved") != 0)
                problem("action %lld was approved (200) but is %s, approval %s", id, state,
                        approval);
            break;
        case ACK_REJECTED:
            if (strcmp(state, "rejected") != 0 || strcmp(approval, "rejected") != 0)
                problem("action %lld was rejected (200) but is %s, approval %s", id, state,
                        approval);
            break;
        }
    }
    sqlite3_finalize(by_id);
    sqlite3_finalize(by_summary);
    printf("acknowledged: %d observations, %d accepted (202), %d approvals, %d rejections; "
           "%d requests sent, %d connection errors\n",
           counts[ACK_OBSERVATION], counts[ACK_ACCEPTED], counts[ACK_APPROVED],
           counts[ACK_REJECTED], atomic_load(&sent), atomic_load(&conn_errors));
    /* The load did something in each part, or the test proves nothing. */
    assert_true(counts[ACK_OBSERVATION] > 0);
    assert_true(counts[ACK_ACCEPTED] > 0);
    assert_true(counts[ACK_APPROVED] > 0);
    for (int i = 0; i < N_SESSIONS; i++)
        free(text[i]);
    sqlite3_close(db);
}

/* ---------------------------------------------------------------- the test */

/* The engine's whole record walks clean (GET /v1/verify): why not, or NULL. */
static char *verify_record(void)
{
    struct reply r;
    api(eng, "GET", "/v1/verify", NULL, &r);
    char *why = NULL;
    if (r.status != 200 || !json_is_true(json_object_get(r.json, "ok")))
        why = strdupf("the record does not verify after run %d: HTTP %ld %s", eng->runs, r.status,
                      r.body ? r.body : r.err);
    reply_free(&r);
    return why;
}

/* Stop the engine with SIGKILL (or SIGTERM, which must exit 0) and start it again; why not,
 * or NULL. The load threads still run: no assertion here. */
static char *restart(bool term)
{
    if (term) {
        int code = engine_stop(eng);
        if (code != 0)
            return strdupf("the engine did not exit cleanly on SIGTERM under load (status %d)",
                           code);
    } else {
        if (kill(eng->pid, SIGKILL) < 0 || waitpid(eng->pid, NULL, 0) != eng->pid)
            return strdupf("cannot kill the engine (pid %ld)", (long)eng->pid);
        eng->pid = 0;
    }
    if (engine_start(eng) != 0)
        return strdup("the engine did not start again");
    return verify_record();
}

static void test_crash(void **state)
{
    const char *se = getenv("PADDOCK_CRASH_SEED");
    unsigned seed = se && *se ? (unsigned)strtoul(se, NULL, 10) : (unsigned)time(NULL);
    const char *ke = getenv("PADDOCK_CRASH_KILLS");
    int kills = ke && *ke ? atoi(ke) : 5;
    if (kills < 1)
        kills = 1;
    printf("crash test: seed %u (PADDOCK_CRASH_SEED), %d kills (PADDOCK_CRASH_KILLS)\n", seed,
           kills);
    unsigned rng = seed;

    assert_int_equal(engine_start(eng), 0);
    for (int i = 0; i < N_SESSIONS; i++) {
        char *t = strdup("/tmp/paddock-crash-XXXXXX");
        assert_non_null(mkdtemp(t));
        assert_int_equal(chmod(t, 0777), 0);
        ws[i] = t;
        char *body = strdupf("{\"confirm\": \"high\", \"approval_timeout\": %d, \"workspace\": "
                             "\"%s\"}",
                             i == N_SESSIONS - 1 ? SHORT_TIMEOUT : LONG_TIMEOUT, t);
        json_t *s = session_new(eng, body);
        sid[i] = strdup(jstr(s, "id"));
        json_decref(s);
        free(body);
    }

    struct client clients[N_CLIENTS];
    for (int i = 0; i < N_CLIENTS; i++) {
        clients[i] = (struct client){.n = i, .seed = seed * 31u + (unsigned)i};
        assert_int_equal(pthread_create(&clients[i].t, NULL, client_main, &clients[i]), 0);
    }
    pthread_t approver;
    unsigned aseed = seed * 17u + 5u;
    assert_int_equal(pthread_create(&approver, NULL, approver_main, &aseed), 0);

    char *why = NULL;
    for (int k = 0; k < kills && !why; k++) {
        long up = 300 + (long)(rand_r(&rng) % 1500);
        /* Every fourth stop or so is a SIGTERM under load: it must exit cleanly, and what it
         * leaves must be as consistent as after a SIGKILL. */
        bool term = rand_r(&rng) % 4 == 0;
        sleep_ms(up);
        printf("%s %d after %ld ms up (%d requests so far)\n", term ? "SIGTERM" : "SIGKILL", k + 1,
               up, atomic_load(&sent));
        why = restart(term);
    }
    /* Some load on the last engine, then stop it, and a last kill so that the final start
     * interrupts whatever was in flight. */
    if (!why)
        sleep_ms(300 + (long)(rand_r(&rng) % 700));
    atomic_store(&stop_load, true);
    for (int i = 0; i < N_CLIENTS; i++)
        pthread_join(clients[i].t, NULL);
    pthread_join(approver, NULL);
    if (why)
        fail_msg("%s (seed %u)", why, seed);
    why = restart(false);
    if (why)
        fail_msg("%s (seed %u)", why, seed);
    int code = engine_stop(eng);
    if (code != 0)
        fail_msg("the engine did not exit cleanly on SIGTERM (status %d)", code);

    check_store();
    /* A sanitizer report in any run's log (a killed run has no exit status to show it). */
    for (int run = 1; run <= eng->runs; run++) {
        char *p = strdupf("%s/serve-%d.log", eng->state_dir, run);
        char *log = slurp(p);
        if (strstr(log, "runtime error") || strstr(log, "Sanitizer"))
            problem("engine run %d reported an error: %s\n%s", run, p, log);
        free(log);
        free(p);
    }
    if (failures)
        fail_msg("%d inconsistencies between the store and what clients were told (seed %u)",
                 failures, seed);

    /* The sessions still work after all that, and go cleanly. */
    assert_int_equal(engine_start(eng), 0);
    why = verify_record();
    if (why)
        fail_msg("%s (seed %u)", why, seed);
    for (int i = 0; i < N_SESSIONS; i++) {
        json_decref(session_run(eng, sid[i], "true"));
        session_delete(eng, sid[i]);
    }
    why = verify_record();
    if (why)
        fail_msg("%s (seed %u)", why, seed);
    code = engine_stop(eng);
    if (code != 0)
        fail_msg("the engine did not exit cleanly on SIGTERM (status %d)", code);
}

static int setup(void **state)
{
    eng = engine_new();
    return 0;
}

static int teardown(void **state)
{
    int left = engine_destroy(eng);
    eng = NULL;
    for (int i = 0; i < N_SESSIONS; i++) {
        if (ws[i])
            nftw(ws[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(ws[i]);
        free(sid[i]);
        ws[i] = sid[i] = NULL;
    }
    for (int i = 0; i < n_acks; i++) {
        free(acks[i].command);
        free(acks[i].token);
        free(acks[i].state);
        free(acks[i].content);
    }
    free(acks);
    acks = NULL;
    n_acks = cap_acks = 0;
    return left ? -1 : 0;
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
    };
    return cmocka_run_group_tests_name("crash", tests, NULL, NULL) ? 1 : 0;
}
