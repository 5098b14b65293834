/*
 * dbread: the readers' shared ground, how they report, and what is read
 * of the database as a whole: the host, aiu-smi's versions, the oldest
 * sample (contracts in dbread.h).
 */
#include "dbread.h"
#include "dbread_priv.h"

#include <err.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pragma.h"
#include "schema.h"

char *
dbread_column_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	char *p = strdup(t != NULL ? (const char *)t : "");

	if (p == NULL)
		errx(EXIT_FAILURE, "out of memory");
	return p;
}

void *
dbread_grow(void *arr, size_t n, size_t sz)
{
	char *p;

	if ((p = reallocarray(arr, n + 1, sz)) == NULL)
		errx(EXIT_FAILURE, "out of memory");
	memset(p + n * sz, 0, sz);
	return p;
}

int
db_error(sqlite3 *db, const char *what)
{
	warnx("cannot read %s: %s", what, sqlite3_errmsg(db));
	return DB_READ_FAILED;
}

int
db_preparef(sqlite3 *db, sqlite3_stmt **out, const char *what,
    const char *fmt, ...)
{
	va_list ap;
	char *sql;
	int rc;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (sql == NULL)
		errx(EXIT_FAILURE, "out of memory");
	rc = sqlite3_prepare_v2(db, sql, -1, out, NULL);
	sqlite3_free(sql);
	return rc == SQLITE_OK ? 0 : db_error(db, what);
}

int
db_oldest_cover(sqlite3 *db, int64_t *from_ns, bool *found)
{
	sqlite3_stmt *s;
	int rc;

	*found = false;
	/* the primary key's first row: one seek */
	if (sqlite3_prepare_v2(db, "SELECT ts_ns - interval_ms * 1000000 FROM "
	    "samples ORDER BY ts_ns LIMIT 1", -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the samples");
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*from_ns = sqlite3_column_int64(s, 0);
		*found = true;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    db_error(db, "the samples");
}

/* One int64 from a query with up to one bound parameter; false if NULL. */
static int
query_ts(sqlite3 *db, const char *sql, bool bind, int64_t arg, bool *found,
    int64_t *out)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the samples");
	if (bind)
		sqlite3_bind_int64(s, 1, arg);
	*found = false;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW &&
	    sqlite3_column_type(s, 0) != SQLITE_NULL) {
		*found = true;
		*out = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    db_error(db, "the samples");
}

int
db_sample_before(sqlite3 *db, int64_t ts_ns, bool *found, int64_t *stamp_ns)
{
	return query_ts(db, "SELECT max(" SCHEMA_C_TS ") FROM "
	    SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_TS " <= ?1", true, ts_ns,
	    found, stamp_ns);
}

int
db_cover_after(sqlite3 *db, int64_t ts_ns, bool *found, int64_t *from_ns)
{
	return query_ts(db, "SELECT min(" SCHEMA_C_TS " - "
	    SCHEMA_C_INTERVAL " * 1000000) FROM " SCHEMA_T_SAMPLES " WHERE "
	    SCHEMA_C_TS " >= ?1", true, ts_ns, found, from_ns);
}

int
db_smi_versions(sqlite3 *db, int64_t begin_ns, int64_t end_ns,
    struct db_smi_version **out, size_t *n, bool *recorded)
{
	struct db_smi_version *v = NULL, *grown;
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = sql_table_exists(db, SCHEMA_T_SMI_VERSIONS)) == -1)
		return db_error(db, "the schema");
	*recorded = rc == 1;
	if (!*recorded)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT since_ns, version FROM "
	    SCHEMA_T_SMI_VERSIONS " WHERE since_ns <= ?2 AND since_ns >= "
	    "coalesce((SELECT max(since_ns) FROM " SCHEMA_T_SMI_VERSIONS
	    " WHERE since_ns <= ?1), ?1) ORDER BY since_ns", -1, &s, NULL) !=
	    SQLITE_OK)
		return db_error(db, SCHEMA_T_SMI_VERSIONS);
	sqlite3_bind_int64(s, 1, begin_ns);
	sqlite3_bind_int64(s, 2, end_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if ((grown = reallocarray(v, *n + 1, sizeof(*v))) == NULL)
			errx(EXIT_FAILURE, "out of memory");
		v = grown;
		v[*n].since_ns = sqlite3_column_int64(s, 0);
		if ((v[*n].version = dbread_column_dup(s, 1)) == NULL)
			errx(EXIT_FAILURE, "out of memory");
		(*n)++;
	}
	sqlite3_finalize(s);
	*out = v;
	if (rc != SQLITE_DONE) {
		db_smi_versions_free(v, *n);
		*out = NULL;
		*n = 0;
		return db_error(db, SCHEMA_T_SMI_VERSIONS);
	}
	return 0;
}

void
db_smi_versions_free(struct db_smi_version *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].version);
	free(v);
}

int
db_host(sqlite3 *db, char **hostname, char **machine_id)
{
	sqlite3_stmt *s;
	int rc;

	*hostname = *machine_id = NULL;
	if ((rc = sql_table_exists(db, SCHEMA_T_HOST)) == -1)
		return db_error(db, "the schema");
	if (rc == 0)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT hostname, machine_id FROM "
	    SCHEMA_T_HOST " WHERE id = 1", -1, &s, NULL) != SQLITE_OK)
		return db_error(db, SCHEMA_T_HOST);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*hostname = dbread_column_dup(s, 0);
		*machine_id = dbread_column_dup(s, 1);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    db_error(db, SCHEMA_T_HOST);
}

int
db_counters(sqlite3 *db, bool *recorded, struct db_counter **out, size_t *n)
{
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	*recorded = false;
	if (sql_table_exists(db, SCHEMA_T_COUNTERS) != 1)
		return 0;
	*recorded = true;
	if (sqlite3_prepare_v2(db, "SELECT name, device, value, through_ns "
	    "FROM " SCHEMA_T_COUNTERS, -1, &s, NULL) != SQLITE_OK)
		return db_error(db, SCHEMA_T_COUNTERS);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(s, 0);
		struct db_counter *k;

		*out = dbread_grow(*out, *n, sizeof(**out));
		k = &(*out)[(*n)++];
		if (name != NULL && (k->name = strdup((const char *)name)) ==
		    NULL)
			errx(EXIT_FAILURE, "out of memory");
		k->device = sqlite3_column_int(s, 1);
		k->value = sqlite3_column_double(s, 2);
		k->through_ns = sqlite3_column_int64(s, 3);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_error(db, SCHEMA_T_COUNTERS);
}

void
db_counters_free(struct db_counter *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(k[i].name);
	free(k);
}
