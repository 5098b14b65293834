/*
 * sql: SQLite helpers for the store's files: run, prepare, read a pragma,
 * log an error naming the database.  They reach only st->db and st->path.
 */
#ifndef SPYREMON_SQL_H
#define SPYREMON_SQL_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "pragma.h"	/* the read-only helpers, below store/ */

struct store;
struct store_stats;

/*
 * Run sql (one or more statements); on failure log it naming what
 * (sql_warn's rate limit and record) and return -1.
 */
int sql_exec(struct store *st, const char *what, const char *sql);

/*
 * Log the connection's last SQLite error as "path: what: message", and
 * keep its code and message in st->err_code and st->err_msg (a ROLLBACK
 * after it clears SQLite's own).  The same line again is logged at most
 * as often as st->rl_sql lets it (3 a minute); the next line logged says
 * how many were left out.  Every call is counted (st->sql_errors, and
 * st->sql_corrupt for damage) and its line kept for status.
 */
void sql_warn(struct store *st, const char *what);

/*
 * Count a failure (what failed, its SQLite code and message) for status,
 * without logging it: st->sql_errors, st->sql_corrupt if it is damage,
 * and the line "what: msg" with its time.  sql_warn calls it; a caller
 * that logs a failure its own way calls it too.
 */
void sql_note(struct store *st, const char *what, int code, const char *msg);

/* The counts and last line sql_note kept, into out's error fields. */
void store_errors_stats(struct store *st, struct store_stats *out);

/* Prepare sql into *out; on failure log it, set *out to NULL and return -1. */
int sql_prepare(struct store *st, const char *sql, sqlite3_stmt **out);

/*
 * Finalize s, whose last step returned rc; unless rc is SQLITE_DONE (it
 * ran to its end), log what failed as sql_warn does and return -1.
 */
int sql_finish(struct store *st, sqlite3_stmt *s, int rc, const char *what);

/* As sql_finish, but a row (SQLITE_ROW, a lookup that found) is no failure. */
int sql_finish_lookup(struct store *st, sqlite3_stmt *s, int rc,
    const char *what);

#endif
