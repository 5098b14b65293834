/*
 * smiversion: what aiu-smi says it is (its -v output), from when on
 * (contract in storedb.h; the smi_versions table is documented in
 * spyremon-schema(5)).  Only changes are stored, so the table holds one
 * row per version a host ran, and a window's version is the one in force
 * over its span.
 */
#include "store_priv.h"

#include <string.h>

#include "schema.h"

int
storedb_smi_version(struct store *st, const char *version, int64_t ts_ns)
{
	sqlite3_stmt *s;

	/* a row only where the version in force at ts_ns differs */
	if (sql_prepare(st, "INSERT OR REPLACE INTO " SCHEMA_T_SMI_VERSIONS
	    " (since_ns, version) SELECT ?1, ?2 WHERE ?2 IS NOT coalesce(("
	    "SELECT version FROM " SCHEMA_T_SMI_VERSIONS " WHERE since_ns <= ?1 "
	    "ORDER BY since_ns DESC LIMIT 1), '')", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, ts_ns);
	sqlite3_bind_text(s, 2, version, -1, SQLITE_STATIC);
	return sql_finish(st, s, sqlite3_step(s), "write the aiu-smi version");
}
