/*
 * sql: SQLite helpers for the store's files: run, prepare, read a pragma,
 * log an error naming the database.  They reach only st->db and st->path.
 */
#ifndef SPYREMON_SQL_H
#define SPYREMON_SQL_H

#include <stdint.h>

#include <sqlite3.h>

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

/* The integer result of "PRAGMA name"; -1 on failure. */
int sql_pragma_int(sqlite3 *db, const char *name, int64_t *out);

/* 1 if db has a table of that name, 0 if not, -1 if the schema cannot be read. */
int sql_table_exists(sqlite3 *db, const char *name);

/* Bytes of the database file in use: (page_count - freelist_count) * page_size. */
int sql_used_bytes(sqlite3 *db, uint64_t *out);

#endif
