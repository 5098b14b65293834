/* pragma: read-only questions to SQLite (contract in pragma.h). */
#include "pragma.h"

#include <stdio.h>

int
sql_pragma_int(sqlite3 *db, const char *name, int64_t *out)
{
	sqlite3_stmt *s;
	char sql[64];
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA %s", name);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* 1 if sqlite_master has an object of that type and name, 0 if not, -1. */
static int
master_has(sqlite3 *db, const char *type, const char *name)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "type = ?1 AND name = ?2", -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(s, 1, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) != 0 : -1;
	sqlite3_finalize(s);
	return rc;
}

int
sql_table_exists(sqlite3 *db, const char *name)
{
	return master_has(db, "table", name);
}

int
sql_index_exists(sqlite3 *db, const char *name)
{
	return master_has(db, "index", name);
}

bool
sql_column_exists(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *s;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) "
	    "WHERE name = ?2", -1, &s, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, col, -1, SQLITE_STATIC);
	yes = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return yes;
}

int
sql_used_bytes(sqlite3 *db, uint64_t *out)
{
	int64_t pages, free_pages, page_size;

	if (sql_pragma_int(db, "page_count", &pages) == -1 ||
	    sql_pragma_int(db, "freelist_count", &free_pages) == -1 ||
	    sql_pragma_int(db, "page_size", &page_size) == -1)
		return -1;
	*out = (uint64_t)(pages - free_pages) * (uint64_t)page_size;
	return 0;
}

bool
sql_is_damage(int code)
{
	return (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB;
}
