/* What the store_*.c files share; not for the rest of the engine. */
#ifndef PADDOCK_STORE_INTERNAL_H
#define PADDOCK_STORE_INTERNAL_H

#include <jansson.h>
#include <sqlite3.h>

struct store {
    sqlite3 *db;
    int last_rc; /* SQLite's result of the last failed write (SQLITE_FULL: disk full) */
};

char *store_errf(struct store *s, const char *what);
int store_exec(struct store *s, const char *sql, char **err);
/* NULL when the statement does not compile (a bug) or the database is gone. */
sqlite3_stmt *store_prepare(struct store *s, const char *sql);
void store_bind_text(sqlite3_stmt *st, int i, const char *v);
/* Step a statement that returns no rows and finalize it; 0 or -1 with *err. */
int store_step_done(struct store *s, sqlite3_stmt *st, const char *what, char **err);
json_t *store_col_text(sqlite3_stmt *st, int i);
json_t *store_col_real(sqlite3_stmt *st, int i);
/* full: synchronous=FULL (acknowledged data); else NORMAL (survives a crash of the engine,
 * not of the machine). */
void store_sync_full(struct store *s, int full);

#endif
