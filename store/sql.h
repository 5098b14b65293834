/*
 * sql: SQLite helpers for the store's files: run, prepare, read a pragma,
 * log an error naming the database.  They reach only st->db and st->path.
 */
#ifndef SPYREMON_SQL_H
#define SPYREMON_SQL_H

#include <stdint.h>

#include <sqlite3.h>

#include "pragma.h"	/* the read-only helpers, below store/ */

struct store;

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
 * how many were left out.
 */
void sql_warn(struct store *st, const char *what);

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
