/*
 * store_import: the records of samples loaded by "spyremon import"
 * (contract in storedb.h; the imports table is documented in
 * spyremon-schema(5)).
 *
 * The daemon never calls these; they are here so that every write to the
 * database goes through the store, which creates and migrates the schema.
 */
#include "store_priv.h"

#include <string.h>

#include "schema.h"

int
storedb_import_record(struct store *st, const struct store_import *imp)
{
	sqlite3_stmt *s;

	if (sql_prepare(st, "INSERT INTO " SCHEMA_T_IMPORTS " (path, format, "
	    "device, first_ns, last_ns, coarse, imported_ns) VALUES "
	    "(?1, ?2, ?3, ?4, ?5, ?6, ?7)", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, imp->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, imp->format, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, imp->device);
	sqlite3_bind_int64(s, 4, imp->first_ns);
	sqlite3_bind_int64(s, 5, imp->last_ns);
	sqlite3_bind_int(s, 6, imp->coarse);
	sqlite3_bind_int64(s, 7, imp->imported_ns);
	return sql_finish(st, s, sqlite3_step(s), "record import");
}

/*
 * Samples: a range of the primary key, filtered by device.  Imports: the
 * oldest run of the device that overlaps the span, found through
 * imports_device.
 */
int
storedb_span_taken(struct store *st, int device, int64_t first_ns,
    int64_t last_ns, struct store_taken *out)
{
	sqlite3_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if (sql_prepare(st, "SELECT count(*), coalesce(min(" SCHEMA_C_TS
	    "), 0) FROM " SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_TS " BETWEEN ?1 "
	    "AND ?2 AND " SCHEMA_C_DEVICE " = ?3", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, first_ns);
	sqlite3_bind_int64(s, 2, last_ns);
	sqlite3_bind_int(s, 3, device);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		out->samples = sqlite3_column_int64(s, 0);
		out->oldest_ns = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW) {
		sql_warn(st, "read samples");
		return -1;
	}
	if (sql_prepare(st, "SELECT first_ns, last_ns FROM " SCHEMA_T_IMPORTS
	    " WHERE device = ?1 AND first_ns <= ?3 AND last_ns >= ?2 "
	    "ORDER BY first_ns LIMIT 1", &s) == -1)
		return -1;
	sqlite3_bind_int(s, 1, device);
	sqlite3_bind_int64(s, 2, first_ns);
	sqlite3_bind_int64(s, 3, last_ns);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		out->imported = true;
		out->import_first_ns = sqlite3_column_int64(s, 0);
		out->import_last_ns = sqlite3_column_int64(s, 1);
	}
	return sql_finish_lookup(st, s, rc, "read imports");
}
