/*
 * store_copy: rows copied as they are into the tables of a database the
 * store created, for "spyremon db salvage" (contract in storedb.h; the
 * tables are documented in spyremon-schema(5)).
 *
 * The daemon never calls these.  They are here so that a salvaged
 * database is written by the store, with the schema and the catalog of
 * this build: samples and the metric catalog go through storedb_metric
 * and storedb_append, every other table through a copy, column by
 * column, of the columns this schema has.  A column an older layout did
 * not have gets what a migration of that layout gives it (migrate.c,
 * store_priv.h): NULL or its default, power_n 0 in a summary, and
 * complete_ns from summarized_ns in a window.  A column this build does
 * not know cannot exist (migrations only add columns), and is counted if
 * it does.
 */
#include "store_priv.h"
#include "storedb.h"

#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "sql.h"

struct store_copy {
	struct store *st;
	sqlite3_stmt *insert;
	const char *table;
	bool complete_from_summary;	/* windows without complete_ns */
};

static bool
in_list(const char *name, size_t n, const char *const *list)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

/*
 * Into q and v, the columns of table that the source lacks and that a
 * migration fills with a value of its own; -1 (logged) for one that must
 * have a value and gets none, which no layout has yet.
 */
static int
older_layout(struct store *st, const char *table, size_t ncols,
    const char *const *cols, sqlite3_str *q, sqlite3_str *v, size_t *kept)
{
	sqlite3_stmt *s;
	int rc, bad = 0;

	if (sql_prepare(st, "SELECT name, \"notnull\", dflt_value IS NULL, pk "
	    "FROM pragma_table_info(?1)", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(s, 0);

		if (col == NULL || in_list(col, ncols, cols) ||
		    !sqlite3_column_int(s, 1) || !sqlite3_column_int(s, 2))
			continue;
		if (strcmp(table, SCHEMA_T_SUMMARY) == 0 &&
		    strcmp(col, "power_n") == 0) {
			sqlite3_str_appendf(q, "%s\"%w\"", *kept > 0 ? ", " : "",
			    col);
			sqlite3_str_appendf(v, "%s%s", *kept > 0 ? ", " : "",
			    SUMMARY_UNSPREAD_POWER_N);
			(*kept)++;
			continue;
		}
		log_warnx("%s: cannot copy rows of %s: its column %s has no "
		    "value in the source", st->path, table, col);
		bad = 1;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE && !bad ? 0 : -1;
}

/* The tables copied row by row: all but samples and metrics. */
static const char *const copied_tables[] = {
	SCHEMA_T_CARDS, SCHEMA_T_DEVICE_MAP, SCHEMA_T_WINDOWS,
	SCHEMA_T_IMPORTS, SCHEMA_T_HOST, SCHEMA_T_COUNTERS, SCHEMA_T_SUMMARY,
	SCHEMA_T_SUMMARY_BW, SCHEMA_T_SMI_VERSIONS, SCHEMA_T_DAEMON,
};

const char *
storedb_copy_table(size_t i)
{
	return i < sizeof(copied_tables) / sizeof(copied_tables[0]) ?
	    copied_tables[i] : NULL;
}

static bool
copied(const char *table)
{
	const char *t;

	for (size_t i = 0; (t = storedb_copy_table(i)) != NULL; i++)
		if (strcmp(t, table) == 0)
			return true;
	return false;
}

int
storedb_copy_begin(struct store *st, const char *table, size_t ncols,
    const char *const *cols, struct store_copy **out, size_t *dropped)
{
	struct store_copy *c;
	sqlite3_str *q, *v;
	char *sql, *vals;
	size_t kept = 0;
	int rc;

	*out = NULL;
	*dropped = 0;
	if (!copied(table)) {
		log_warnx("%s: rows of %s are not copied as they are",
		    st->path, table);
		return -1;
	}
	q = sqlite3_str_new(st->db);
	v = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "INSERT OR REPLACE INTO \"%w\" (", table);
	for (size_t i = 0; i < ncols; i++) {
		if (!sql_column_exists(st->db, table, cols[i])) {
			(*dropped)++;
			continue;
		}
		/* ?N is the source column's place: the caller binds them all */
		sqlite3_str_appendf(q, "%s\"%w\"", kept > 0 ? ", " : "",
		    cols[i]);
		sqlite3_str_appendf(v, "%s?%d", kept > 0 ? ", " : "", (int)i + 1);
		kept++;
	}
	if (kept > 0 && older_layout(st, table, ncols, cols, q, v, &kept) ==
	    -1) {
		sqlite3_free(sqlite3_str_finish(q));
		sqlite3_free(sqlite3_str_finish(v));
		return -1;
	}
	vals = sqlite3_str_finish(v);
	sqlite3_str_appendf(q, ") VALUES (%s)", vals != NULL ? vals : "");
	sqlite3_free(vals);
	sql = sqlite3_str_finish(q);
	if (sql == NULL || kept == 0 || (c = calloc(1, sizeof(*c))) == NULL) {
		log_warnx("%s: cannot copy rows of %s%s", st->path, table,
		    kept == 0 ? ": no column in common" : "");
		sqlite3_free(sql);
		return -1;
	}
	rc = sql_prepare(st, sql, &c->insert);
	sqlite3_free(sql);
	if (rc == -1) {
		free(c);
		return -1;
	}
	c->st = st;
	c->table = table;
	c->complete_from_summary = strcmp(table, SCHEMA_T_WINDOWS) == 0 &&
	    !in_list(SCHEMA_C_COMPLETE, ncols, cols);
	*out = c;
	return 0;
}

int
storedb_copy_row(struct store_copy *c, sqlite3_value *const *vals,
    size_t nvals)
{
	int rc, n = sqlite3_bind_parameter_count(c->insert);

	for (size_t i = 0; i < nvals && (int)i < n; i++)
		if ((rc = sqlite3_bind_value(c->insert, (int)i + 1, vals[i])) !=
		    SQLITE_OK && rc != SQLITE_RANGE) {
			sql_warn(c->st, "bind");
			return -1;
		}
	rc = sqlite3_step(c->insert);
	sqlite3_reset(c->insert);
	sqlite3_clear_bindings(c->insert);
	if (rc != SQLITE_DONE) {
		sql_warn(c->st, c->table);
		return -1;
	}
	return 0;
}

int
storedb_copy_end(struct store_copy *c)
{
	int rc = 0;

	if (c == NULL)
		return 0;
	sqlite3_finalize(c->insert);
	if (c->complete_from_summary)
		rc = sql_exec(c->st, "windows complete from their summary",
		    WINDOWS_COMPLETE_FROM_SUMMARY);
	free(c);
	return rc;
}
