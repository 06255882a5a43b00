/* History at scale: a store of N actions (default 1,000,000) made with the engine's own schema
 * (an engine creates it, then rows are bulk-inserted with SQLite directly: the same tables,
 * the search index included), then an engine on it answers pages and searches, timed. */
#include "bench.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t history_engine(const char *paddock, const char *dir, const char *sock, CURL *c)
{
    char log[300];
    snprintf(log, sizeof(log), "%s/engine.log", dir);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(log, "a", stderr))
            _exit(126);
        execl(paddock, paddock, "serve", "--state-dir", dir, "--socket", sock, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 3000; i++) {
        if (req_on(c, sock, "GET", "/v1/info", NULL, NULL) == 200)
            return pid;
        usleep(10000);
    }
    return pid;
}

static void history_stop(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* Words for commands and outputs: common ones everywhere, one rare word in 1 of 100,000. */
static const char *const words[] = {
    "build",  "test",   "error",  "warning", "passed", "failed", "src",    "main",    "import",
    "module", "config", "server", "client",  "docker", "python", "make",   "install", "update",
    "commit", "branch", "merge",  "file",    "line",   "value",  "result", "output",  "debug",
    "trace",  "cache",  "index",  "query",   "table",  "json",   "yaml",   "token",   "user"};
#define NWORDS (sizeof(words) / sizeof(words[0]))

static int history_fill(const char *db, long n, char **sid)
{
    sqlite3 *h;
    if (sqlite3_open(db, &h) != SQLITE_OK)
        return -1;
    sqlite3_exec(h, "PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL;", NULL, NULL, NULL);
    static char id[] = "b1b1b1b1b1b1b1b1";
    *sid = id;
    sqlite3_exec(h,
                 "INSERT INTO sessions(id, name, image, state, config, created_at, updated_at) "
                 "VALUES ('b1b1b1b1b1b1b1b1', 'history', 'paddock/base:local', 'deleted', "
                 "'{}', 1, 1)",
                 NULL, NULL, NULL);
    sqlite3_stmt *a, *o, *f;
    sqlite3_prepare_v2(h,
                       "INSERT INTO actions(id, session_id, kind, summary, args, state, exit_code, "
                       "created_at, started_at, finished_at, observation_size, risk, approval) "
                       "VALUES (?, 'b1b1b1b1b1b1b1b1', 'run', ?, '{}', 'done', 0, ?, ?, ?, ?, "
                       "'low', 'none')",
                       -1, &a, NULL);
    sqlite3_prepare_v2(h, "INSERT INTO observations(action_id, content, size) VALUES (?, ?, ?)", -1,
                       &o, NULL);
    sqlite3_prepare_v2(h, "INSERT INTO actions_fts(rowid, summary, output) VALUES (?, ?, ?)", -1,
                       &f, NULL);
    unsigned seed = 42;
    char cmd[200], out[400], obs[600];
    sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);
    for (long i = 1; i <= n; i++) {
        seed = seed * 1103515245u + 12345u;
        const char *w1 = words[(seed >> 8) % NWORDS], *w2 = words[(seed >> 16) % NWORDS];
        snprintf(cmd, sizeof(cmd), "%s --%s %s/%ld.py", w1, w2, words[(seed >> 4) % NWORDS],
                 i % 997);
        int ol = snprintf(out, sizeof(out), "%s %s %s %ld of %ld%s", w2, w1,
                          words[(seed >> 20) % NWORDS], i, n, i % 100000 == 7 ? " zanzibar" : "");
        snprintf(obs, sizeof(obs),
                 "{\"observation\":\"run\",\"content\":\"%s\",\"extras\":{\"metadata\":"
                 "{\"exit_code\":0}}}",
                 out);
        double t = 1e9 + (double)i;
        sqlite3_bind_int64(a, 1, i);
        sqlite3_bind_text(a, 2, cmd, -1, SQLITE_STATIC);
        sqlite3_bind_double(a, 3, t);
        sqlite3_bind_double(a, 4, t);
        sqlite3_bind_double(a, 5, t + 0.01);
        sqlite3_bind_int(a, 6, (int)strlen(obs));
        sqlite3_step(a);
        sqlite3_reset(a);
        sqlite3_bind_int64(o, 1, i);
        sqlite3_bind_text(o, 2, obs, -1, SQLITE_STATIC);
        sqlite3_bind_int(o, 3, (int)strlen(obs));
        sqlite3_step(o);
        sqlite3_reset(o);
        sqlite3_bind_int64(f, 1, i);
        sqlite3_bind_text(f, 2, cmd, -1, SQLITE_STATIC);
        sqlite3_bind_text(f, 3, out, ol, SQLITE_STATIC);
        sqlite3_step(f);
        sqlite3_reset(f);
        if (i % 100000 == 0) {
            sqlite3_exec(h, "COMMIT; BEGIN", NULL, NULL, NULL);
        }
    }
    sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    char upd[200];
    snprintf(upd, sizeof(upd), "UPDATE sessions SET action_count = %ld", n);
    sqlite3_exec(h, upd, NULL, NULL, NULL);
    sqlite3_finalize(a);
    sqlite3_finalize(o);
    sqlite3_finalize(f);
    sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    sqlite3_close(h);
    return 0;
}

static void history_time(CURL *c, const char *sock, const char *what, const char *path, int reps)
{
    struct timings s = {0};
    long status = 0;
    size_t found = 0;
    for (int i = 0; i < reps; i++) {
        json_t *out = NULL;
        double t0 = now_ms();
        status = req_on(c, sock, "GET", path, NULL, &out);
        timings_add(&s, now_ms() - t0);
        json_t *list = json_object_get(out, "actions");
        if (!list)
            list = json_object_get(out, "sessions");
        found = json_array_size(list);
        json_decref(out);
    }
    printf("| %-44s | %9.3f | %9.3f | %6zu rows | HTTP %ld |\n", what, timings_pct(&s, 0.5),
           timings_pct(&s, 0.95), found, status);
    free(s.v);
}

void bench_history(const char *paddock, long n)
{
    char tmpl[] = "/tmp/paddock-bench-history-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        return;
    char sock[300], db[300];
    snprintf(sock, sizeof(sock), "%s/engine.sock", dir);
    snprintf(db, sizeof(db), "%s/paddock.db", dir);
    CURL *c = curl_easy_init();
    pid_t eng = history_engine(paddock, dir, sock, c); /* creates the schema */
    history_stop(eng);
    char *sid = NULL;
    double t0 = now_ms();
    if (history_fill(db, n, &sid) < 0) {
        printf("history: could not build the store\n");
        return;
    }
    double fill_s = (now_ms() - t0) / 1000.0;
    struct stat st;
    stat(db, &st);
    eng = history_engine(paddock, dir, sock, c);
    char p[300];
    printf("\nhistory on a store of %ld actions (%.0f MB; built in %.0f s), ms, 30 requests "
           "each:\n\n",
           n, (double)st.st_size / 1e6, fill_s);
    printf("| %-44s | %9s | %9s | %-11s | %-8s |\n", "request", "p50", "p95", "answer", "status");
    printf("|%s|%s|%s|%s|%s|\n", "----------------------------------------------", "-----------",
           "-----------", "-------------", "----------");
    snprintf(p, sizeof(p), "/v1/sessions/%s/actions?limit=50", sid);
    history_time(c, sock, "a session's newest page (limit 50)", p, 30);
    snprintf(p, sizeof(p), "/v1/sessions/%s/actions?limit=50&before=%ld", sid, n / 2);
    history_time(c, sock, "a page half way back (before=N/2)", p, 30);
    history_time(c, sock, "GET /v1/history?limit=50", "/v1/history?limit=50", 30);
    history_time(c, sock, "full text, a rare word (1 in 100,000)",
                 "/v1/history?q=zanzibar&limit=50", 30);
    history_time(c, sock, "full text, a common word", "/v1/history?q=error&limit=50", 30);
    history_time(c, sock, "full text, two common words", "/v1/history?q=error+python&limit=50", 30);
    history_time(c, sock, "GET /v1/sessions?all=1", "/v1/sessions?all=1", 30);
    printf("\nengine RSS on it: %.1f MB\n", (double)proc_status_kb(eng, "VmRSS") / 1024.0);
    history_stop(eng);
    curl_easy_cleanup(c);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
}
