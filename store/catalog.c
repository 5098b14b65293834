/*
 * catalog: the metric catalog, the sample_values view and the host row
 * (tables documented in spyremon-schema(5); migrate.c creates them).
 *
 * Every metric is a REAL column of samples named after its key when the
 * key is a plain lower-case identifier (else m<id>).  The catalog records
 * each metric's decimals: the store binds values as integers scaled by
 * 10^decimals whenever that is exact (see store.c).
 */
#include "store_priv.h"
#include "daemonid.h"
#include "dbread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "schema.h"
#include "sql.h"
#include "timeparse.h"

#define COL_NAME_MAX		48

/* The first column of the single row sql returns, as an integer. */
static int
query_int(struct store *st, const char *sql, int64_t *out)
{
	sqlite3_stmt *s;
	int rc;

	if (sql_prepare(st, sql, &s) == -1)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	else
		sql_warn(st, sql);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* ---- the host ---- */

/*
 * gethostname(2) and machine-id(5) are recorded so that databases copied
 * from many hosts still say where they come from.
 */
int
store_host_record(struct store *st)
{
	char host[256] = "", mid[64];
	sqlite3_stmt *s;

	if (gethostname(host, sizeof(host) - 1) == -1)
		host[0] = '\0';
	/* machine-id(5); "" in a container without one */
	daemonid_read_word("/etc/machine-id", mid, sizeof(mid));
	if (sql_prepare(st, "INSERT INTO " SCHEMA_T_HOST " (id, hostname, "
	    "machine_id, created_ns) VALUES (1, ?1, ?2, ?3)", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, mid, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, now_realtime_ns());
	return sql_finish(st, s, sqlite3_step(s), "record the host");
}

int
storedb_host(struct store *st, char *hostname, char *machine_id, size_t len)
{
	sqlite3_stmt *s;
	int rc;

	hostname[0] = machine_id[0] = '\0';
	if (sql_prepare(st, "SELECT hostname, machine_id FROM " SCHEMA_T_HOST
	    " WHERE id = 1", &s) == -1)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *h = (const char *)sqlite3_column_text(s, 0);
		const char *m = (const char *)sqlite3_column_text(s, 1);

		snprintf(hostname, len, "%s", h != NULL ? h : "");
		snprintf(machine_id, len, "%s", m != NULL ? m : "");
	}
	return sql_finish_lookup(st, s, rc, "read the host");
}

/* ---- the metric catalog ---- */

static bool
plain_column_name(const char *key)
{
	static const char *const fixed[] = {
		SCHEMA_C_TS, SCHEMA_C_DEVICE, SCHEMA_C_INTERVAL, SCHEMA_C_SKEW,
		SCHEMA_C_SRC, SCHEMA_C_SEQ, SCHEMA_C_ARRIVAL,
	};
	size_t i, len = strlen(key);

	if (len == 0 || len > 31 || key[0] < 'a' || key[0] > 'z')
		return false;
	for (i = 1; i < len; i++)
		if (!((key[i] >= 'a' && key[i] <= 'z') ||
		    (key[i] >= '0' && key[i] <= '9') || key[i] == '_'))
			return false;
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (strcmp(key, fixed[i]) == 0)
			return false;
	return true;
}

static int
column_taken(struct store *st, const char *col, bool *taken)
{
	sqlite3_stmt *s;
	int rc;

	if (sql_prepare(st, "SELECT 1 FROM " SCHEMA_T_METRICS
	    " WHERE col = ?1 COLLATE NOCASE", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, col, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (sql_finish_lookup(st, s, rc, "catalog lookup") == -1)
		return -1;
	*taken = rc == SQLITE_ROW;
	return 0;
}

/*
 * The column for a new metric: its key if that is a plain identifier, else
 * m<id>.  A plain key can equal another metric's m<id>, so a taken name
 * gets a numeric suffix.
 */
static int
column_name(struct store *st, const char *key, int64_t id, char *buf,
    size_t len)
{
	bool taken;
	int k;

	if (plain_column_name(key)) {
		snprintf(buf, len, "%s", key);
		if (column_taken(st, buf, &taken) == -1)
			return -1;
		if (!taken)
			return 0;
	}
	for (k = 0;; k++) {
		if (k == 0)
			snprintf(buf, len, "m%" PRId64, id);
		else
			snprintf(buf, len, "m%" PRId64 "_%d", id, k);
		if (column_taken(st, buf, &taken) == -1)
			return -1;
		if (!taken)
			return 0;
	}
}

/* Add metric d to the catalog and its column to samples. */
int
store_catalog_insert(struct store *st, const struct metric_def *d)
{
	char col[COL_NAME_MAX], grp[2] = { d->group, '\0' }, *sql;
	sqlite3_stmt *s;
	int64_t id;
	int rc;

	if (query_int(st, "SELECT coalesce(max(id), 0) + 1 FROM "
	    SCHEMA_T_METRICS, &id) == -1 ||
	    column_name(st, d->key, id, col, sizeof(col)) == -1)
		return -1;
	sql = sqlite3_mprintf("ALTER TABLE " SCHEMA_T_SAMPLES
	    " ADD COLUMN \"%w\" REAL", col);
	if (sql == NULL)
		return -1;
	rc = sql_exec(st, "add metric column", sql);
	sqlite3_free(sql);
	if (rc == -1 || sql_prepare(st, "INSERT INTO " SCHEMA_T_METRICS
	    " (id, key, unit, grp, description, reliable, decimals, col,"
	    " added_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, d->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, d->unit, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, grp, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, d->description, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 6, d->reliable);
	sqlite3_bind_int(s, 7, d->decimals);
	sqlite3_bind_text(s, 8, col, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 9, now_realtime_ns());
	return sql_finish(st, s, sqlite3_step(s), "add metric");
}

/*
 * (Re)create sample_values: one UNION ALL arm per metric column, each a
 * plain filter on samples, so a ts_ns range on the view is pushed into
 * every arm and served by the primary key.  Dividing by the exact power of
 * ten gives the correctly rounded natural value of an integer.
 */
int
store_view_rebuild(struct store *st)
{
	sqlite3_stmt *s;
	sqlite3_str *q;
	char *sql;
	int rc, arms = 0;

	if (sql_prepare(st, "SELECT key, col, decimals FROM " SCHEMA_T_METRICS
	    " ORDER BY id", &s) == -1)
		return -1;
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendall(q, "DROP VIEW IF EXISTS " SCHEMA_V_VALUES ";\n"
	    "CREATE VIEW " SCHEMA_V_VALUES " (ts_ns, device, metric, value) AS");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(s, 0);
		const char *col = (const char *)sqlite3_column_text(s, 1);

		sqlite3_str_appendf(q, "%s\n SELECT " SCHEMA_C_TS ", "
		    SCHEMA_C_DEVICE ", %Q, \"%w\" / 1e%d FROM " SCHEMA_T_SAMPLES
		    " WHERE \"%w\" IS NOT NULL", arms++ > 0 ? " UNION ALL" : "",
		    key, col, sqlite3_column_int(s, 2), col);
	}
	if (arms == 0)
		sqlite3_str_appendall(q, " SELECT 0, 0, '', 0.0 WHERE 0");
	sqlite3_finalize(s);
	sql = sqlite3_str_finish(q);
	if (rc != SQLITE_DONE || sql == NULL) {
		sql_warn(st, "read catalog");
		sqlite3_free(sql);
		return -1;
	}
	rc = sql_exec(st, "create view " SCHEMA_V_VALUES, sql);
	sqlite3_free(sql);
	return rc;
}

int
store_catalog_seed(struct store *st)
{
	for (size_t i = 0; i < metric_ndefs; i++)
		if (store_catalog_insert(st, &metric_defs[i]) == -1)
			return -1;
	return store_view_rebuild(st);
}

void
store_catalog_free(struct store_catalog *cat)
{
	for (size_t i = 0; i < cat->n; i++) {
		free(cat->cols[i].key);
		free(cat->cols[i].col);
	}
	free(cat->cols);
	free(cat->slot_of_id);
	memset(cat, 0, sizeof(*cat));
}

static int
catalog_add_col(struct store_catalog *cat, int id, const char *key,
    const char *col, int decimals)
{
	struct store_col *c;

	c = reallocarray(cat->cols, cat->n + 1, sizeof(*c));
	if (c == NULL)
		return -1;
	cat->cols = c;
	c = &cat->cols[cat->n];
	c->id = id;
	c->decimals = decimals;
	c->key = strdup(key);
	c->col = strdup(col);
	cat->n++;
	if (id > cat->max_id)
		cat->max_id = id;
	return c->key != NULL && c->col != NULL ? 0 : -1;
}

static int
catalog_index(struct store_catalog *cat)
{
	cat->slot_of_id = malloc(((size_t)cat->max_id + 1) * sizeof(int));
	if (cat->slot_of_id == NULL)
		return -1;
	for (int id = 0; id <= cat->max_id; id++)
		cat->slot_of_id[id] = -1;
	for (size_t i = 0; i < cat->n; i++)
		cat->slot_of_id[cat->cols[i].id] = (int)i;
	return 0;
}

int
store_catalog_load(struct store *st, struct store_catalog *cat)
{
	struct db_catalog read;
	int rc;

	memset(cat, 0, sizeof(*cat));
	if ((rc = db_catalog_read(st->db, &read)) == -1) {
		sql_warn(st, "prepare");
		return -1;
	}
	for (size_t i = 0; rc == 0 && i < read.n; i++) {
		const struct db_metric *m = &read.m[i];

		if (m->id < 1 || m->id > 1000000 ||
		    catalog_add_col(cat, (int)m->id, m->key, m->col,
		    m->decimals) == -1)
			rc = -1;
	}
	db_catalog_free(&read);
	if (rc != 0 || catalog_index(cat) == -1) {
		log_warnx("%s: cannot load the metric catalog", st->path);
		store_catalog_free(cat);
		return -1;
	}
	return 0;
}

const struct store_col *
store_catalog_find(const struct store_catalog *cat, const char *key)
{
	for (size_t i = 0; i < cat->n; i++)
		if (strcmp(cat->cols[i].key, key) == 0)
			return &cat->cols[i];
	return NULL;
}

/* INSERT into samples with the fixed columns, then cat's columns in order. */
sqlite3_stmt *
store_insert_prepare(struct store *st, const struct store_catalog *cat)
{
	sqlite3_stmt *s = NULL;
	sqlite3_str *q;
	char *sql;
	size_t i;

	q = sqlite3_str_new(st->db);
	sqlite3_str_appendall(q, "INSERT INTO " SCHEMA_T_SAMPLES " ("
	    SCHEMA_C_TS ", " SCHEMA_C_DEVICE ", " SCHEMA_C_INTERVAL ", "
	    SCHEMA_C_SKEW ", " SCHEMA_C_SRC ", " SCHEMA_C_SEQ ", "
	    SCHEMA_C_ARRIVAL ", " SCHEMA_C_EPOCH);
	for (i = 0; i < cat->n; i++)
		sqlite3_str_appendf(q, ", \"%w\"", cat->cols[i].col);
	sqlite3_str_appendall(q, ") VALUES (?, ?, ?, ?, ?, ?, ?, ?");
	for (i = 0; i < cat->n; i++)
		sqlite3_str_appendall(q, ", ?");
	sqlite3_str_appendall(q, ")");
	sql = sqlite3_str_finish(q);
	if (sql != NULL)
		(void)sql_prepare(st, sql, &s);
	sqlite3_free(sql);
	return s;
}

