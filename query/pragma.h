/*
 * pragma: what any connection can ask SQLite about its database, reading
 * only: a pragma's value, whether a table exists, the bytes in use.  Below
 * store/ (whose sql.h includes this header) and every reader in query/.
 */
#ifndef SPYREMON_PRAGMA_H
#define SPYREMON_PRAGMA_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

/* The integer result of "PRAGMA name"; -1 on failure. */
int sql_pragma_int(sqlite3 *db, const char *name, int64_t *out);

/* 1 if db has a table of that name, 0 if not, -1 if the schema cannot be read. */
int sql_table_exists(sqlite3 *db, const char *name);

/* 1 if db has an index of that name, 0 if not, -1 if the schema cannot be read. */
int sql_index_exists(sqlite3 *db, const char *name);

/* True if db's table has a column of that name (false if it cannot tell). */
bool sql_column_exists(sqlite3 *db, const char *table, const char *col);

/* Bytes of the database file in use: (page_count - freelist_count) * page_size. */
int sql_used_bytes(sqlite3 *db, uint64_t *out);

/*
 * True if an SQLite result code (extended or not) says the file is
 * damaged: SQLITE_CORRUPT ("database disk image is malformed") or
 * SQLITE_NOTADB.
 */
bool sql_is_damage(int code);

#endif
