/*
 * samples_read: the samples as every reader selects them (one source per
 * metric per card, bestsrc.h), and the runs of imported coarse samples
 * (contracts in dbread.h).
 */
#include "dbread.h"
#include "dbread_priv.h"

#include <err.h>
#include <stdlib.h>

#include "bestsrc.h"
#include "metrics.h"
#include "pragma.h"
#include "schema.h"

static int
cmp_range(const void *a, const void *b)
{
	const struct db_coarse_range *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->first_ns != y->first_ns)
		return x->first_ns < y->first_ns ? -1 : 1;
	return 0;
}

/* Sort c's runs and merge those of a device that overlap. */
static void
coarse_merge(struct db_coarse *c)
{
	size_t k = 0;

	if (c->n == 0)
		return;
	qsort(c->r, c->n, sizeof(*c->r), cmp_range);
	for (size_t i = 1; i < c->n; i++) {
		struct db_coarse_range *last = &c->r[k];

		if (c->r[i].device == last->device &&
		    c->r[i].first_ns <= last->last_ns) {
			if (c->r[i].last_ns > last->last_ns)
				last->last_ns = c->r[i].last_ns;
		} else
			c->r[++k] = c->r[i];
	}
	c->n = k + 1;
}

int
db_coarse_load(sqlite3 *db, int64_t lo_ns, int64_t hi_ns, struct db_coarse *c)
{
	sqlite3_stmt *s;
	int rc, version = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s,
	    NULL) != SQLITE_OK)
		return db_error(db, "the schema version");
	if (sqlite3_step(s) == SQLITE_ROW)
		version = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (version < 3)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT device, first_ns, last_ns FROM "
	    SCHEMA_T_IMPORTS " WHERE coarse != 0 AND first_ns <= ?2 AND "
	    "last_ns >= ?1", -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the imports");
	sqlite3_bind_int64(s, 1, lo_ns);
	sqlite3_bind_int64(s, 2, hi_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_coarse_range *r;

		c->r = dbread_grow(c->r, c->n, sizeof(*r));
		r = &c->r[c->n++];
		r->device = sqlite3_column_int(s, 0);
		r->first_ns = sqlite3_column_int64(s, 1);
		r->last_ns = sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_error(db, "the imports");
	coarse_merge(c);
	return 0;
}

size_t
db_key_search(size_t n, struct db_key (*key_at)(const void *ctx, size_t i),
    const void *ctx, struct db_key k, bool inclusive)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct db_key m = key_at(ctx, mid);

		if (m.device < k.device || (m.device == k.device &&
		    (m.ts_ns < k.ts_ns || (!inclusive && m.ts_ns == k.ts_ns))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct db_key
coarse_key(const void *ctx, size_t i)
{
	const struct db_coarse_range *r = &((const struct db_coarse *)ctx)->r[i];

	return (struct db_key){ r->device, r->first_ns };
}

bool
db_coarse_has(const struct db_coarse *c, int device, int64_t ts_ns)
{
	/* the last run at or before (device, ts_ns) */
	size_t lo = db_key_search(c->n, coarse_key, c,
	    (struct db_key){ device, ts_ns }, false);

	return lo > 0 && c->r[lo - 1].device == device &&
	    c->r[lo - 1].last_ns >= ts_ns;
}

void
db_coarse_free(struct db_coarse *c)
{
	free(c->r);
	c->r = NULL;
	c->n = 0;
}

/*
 * DB_OVERLAPS_SQL with the rows read from :read_from on where it is bound
 * (db_bind_read_from), which takes the primary key's range too.
 */
#define READ_FROM_PARAM	":read_from"
#define DB_OVERLAPS_FROM_SQL \
	"ts_ns > coalesce(" READ_FROM_PARAM ", ?1) AND ts_ns < ?3 AND " \
	"ts_ns - interval_ms * 1000000 < ?2"

/* The epoch filter db_select_samples appends where samples have epochs. */
#define EPOCH_PARAM	":epoch"

const char *
db_epoch_sql(sqlite3 *db)
{
	return sql_column_exists(db, SCHEMA_T_SAMPLES, SCHEMA_C_EPOCH) ?
	    " AND (" EPOCH_PARAM " IS NULL OR " SCHEMA_C_EPOCH " = "
	    EPOCH_PARAM ")" : "";
}

/*
 * Bind the named parameter of s, resetting s (a statement stepped since
 * its last reset takes no binding): v if set, else NULL.  A no-op for a
 * statement without it.
 */
static void
bind_named(sqlite3_stmt *s, const char *name, bool set, int64_t v)
{
	int i = sqlite3_bind_parameter_index(s, name);

	if (i == 0)
		return;
	sqlite3_reset(s);
	if (set)
		sqlite3_bind_int64(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

void
db_bind_epoch(sqlite3_stmt *s, int64_t epoch)
{
	bind_named(s, EPOCH_PARAM, epoch >= 0, epoch);
}

/*
 * The rule (bestsrc.h) over cols' columns, into *b, and the start of a
 * query of the samples that match where: its WITH, then "SELECT ts_ns,
 * device, interval_ms".  *names gets the column names b points at, which
 * the caller frees once the query is built.  NULL if the database cannot
 * say which rows carry which stream.
 */
static sqlite3_str *
select_begin(sqlite3 *db, const struct db_metric *const *cols, size_t ncols,
    const char *where, struct bestsrc *b, const char ***names)
{
	sqlite3_str *q;

	if ((*names = calloc(ncols > 0 ? ncols : 1, sizeof(**names))) == NULL)
		errx(EXIT_FAILURE, "out of memory");
	for (size_t i = 0; i < ncols; i++)
		(*names)[i] = cols[i] != NULL ? cols[i]->col : NULL;
	if (bestsrc_init(db, b, *names, ncols) == -1) {
		free(*names);
		return NULL;
	}
	q = sqlite3_str_new(db);
	bestsrc_with(q, b, where);
	sqlite3_str_appendall(q, "SELECT " SCHEMA_C_TS ", " SCHEMA_C_DEVICE
	    ", " SCHEMA_C_INTERVAL);
	return q;
}

/* The statement q built (q is finished), or NULL if it does not prepare. */
static sqlite3_stmt *
prepare_built(sqlite3 *db, sqlite3_str *q)
{
	sqlite3_stmt *s = NULL;
	char *sql;

	if ((sql = sqlite3_str_finish(q)) == NULL)
		errx(EXIT_FAILURE, "out of memory");
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		s = NULL;
	sqlite3_free(sql);
	return s;
}

sqlite3_stmt *
db_select_samples(sqlite3 *db, const struct db_metric *const *cols,
    size_t ncols, const char *device_sql, bool ordered)
{
	sqlite3_str *q;
	const char **names;
	struct bestsrc b;

	if ((q = select_begin(db, cols, ncols, DB_OVERLAPS_SQL, &b,
	    &names)) == NULL)
		return NULL;
	for (size_t i = 0; i < ncols; i++) {
		sqlite3_str_appendall(q, ", ");
		bestsrc_col(q, &b, i);
	}
	sqlite3_str_appendall(q, ", ");
	bestsrc_src(q, &b);
	sqlite3_str_appendall(q, ", ");
	bestsrc_row(q, &b);
	bestsrc_from(q, &b);
	sqlite3_str_appendf(q, " WHERE " DB_OVERLAPS_FROM_SQL "%s%s%s",
	    device_sql, db_epoch_sql(db),
	    ordered ? " ORDER BY " SCHEMA_C_TS ", " SCHEMA_C_DEVICE : "");
	free(names);
	return prepare_built(db, q);
}

void
db_bind_read_from(sqlite3_stmt *s, int64_t from_ns)
{
	bind_named(s, READ_FROM_PARAM, from_ns != INT64_MIN, from_ns);
}

bool
db_span_open(sqlite3 *db, int64_t t)
{
	sqlite3_stmt *s;
	bool open = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM (SELECT device, max(ts_ns) "
	    "AS newest, max(interval_ms) AS iv FROM " SCHEMA_T_SAMPLES
	    " WHERE ts_ns > ?1 - ?2 GROUP BY device) WHERE newest < ?1 AND "
	    "newest >= ?1 - 2 * iv * 1000000 - ?3 LIMIT 1", -1, &s,
	    NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(s, 1, t);
	sqlite3_bind_int64(s, 2, 2 * DB_MAX_INTERVAL_NS);
	sqlite3_bind_int64(s, 3, 2 * (int64_t)NSEC_PER_SEC);
	open = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return open;
}

int
db_newest_by_device(sqlite3 *db, int64_t begin_ns, int64_t end_ns,
    struct db_key **out, size_t *n)
{
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT device, max(ts_ns) FROM "
	    SCHEMA_T_SAMPLES " WHERE ts_ns > ?1 AND ts_ns < ?3 GROUP BY device "
	    "ORDER BY device", -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, begin_ns);
	sqlite3_bind_int64(s, 3, end_ns + DB_MAX_INTERVAL_NS);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*out = dbread_grow(*out, *n, sizeof(**out));
		(*out)[(*n)++] = (struct db_key){ sqlite3_column_int(s, 0),
		    sqlite3_column_int64(s, 1) };
	}
	sqlite3_finalize(s);
	/* a read that failed (a damaged page) is no proof of no rows */
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* Bind the span (lo_ns, hi_ns) to DB_OVERLAPS_SQL's ?1, ?2 and ?3. */
static void
bind_overlaps(sqlite3_stmt *s, int64_t lo_ns, int64_t hi_ns)
{
	sqlite3_bind_int64(s, 1, lo_ns);
	sqlite3_bind_int64(s, 2, hi_ns);
	sqlite3_bind_int64(s, 3, hi_ns + DB_MAX_INTERVAL_NS);
}

/*
 * Add to *count the one value of sql, a count(*) of the samples matching
 * DB_OVERLAPS_SQL over (lo_ns, hi_ns), of epoch (-1: any) where sql has
 * db_epoch_sql's condition.
 */
static int
count_overlapping(sqlite3 *db, const char *sql, int64_t lo_ns, int64_t hi_ns,
    int64_t epoch, int64_t *count)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the samples");
	db_bind_epoch(s, epoch);
	bind_overlaps(s, lo_ns, hi_ns);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*count += sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : db_error(db, "the samples");
}

int
db_count_samples(sqlite3 *db, int64_t lo_ns, int64_t hi_ns, int64_t *count)
{
	*count = 0;
	return db_count_epoch_samples(db, lo_ns, hi_ns, -1, count);
}

int
db_count_epoch_samples(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    int64_t epoch, int64_t *count)
{
	sqlite3_str *q;
	struct bestsrc b;
	char *sql;
	int rc;

	if (bestsrc_init(db, &b, NULL, 0) == -1)
		return db_error(db, "the schema");
	q = sqlite3_str_new(db);
	if (!b.on)
		sqlite3_str_appendf(q, "SELECT count(*) FROM " SCHEMA_T_SAMPLES
		    " WHERE " DB_OVERLAPS_SQL "%s", db_epoch_sql(db));
	else {
		bestsrc_with(q, &b, DB_OVERLAPS_SQL);
		sqlite3_str_appendall(q, "SELECT count(*)");
		bestsrc_from(q, &b);
		sqlite3_str_appendf(q, " WHERE " DB_OVERLAPS_SQL "%s AND ",
		    db_epoch_sql(db));
		bestsrc_row(q, &b);
	}
	if ((sql = sqlite3_str_finish(q)) == NULL)
		errx(EXIT_FAILURE, "out of memory");
	rc = count_overlapping(db, sql, lo_ns, hi_ns, epoch, count);
	sqlite3_free(sql);
	return rc;
}

int
db_count_file_rows(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    const char *device_sql, int64_t *count)
{
	sqlite3_str *q;
	struct bestsrc b;
	char *sql;
	int rc;

	if (bestsrc_init(db, &b, NULL, 0) == -1)
		return db_error(db, "the schema");
	if (!b.on)
		return 0;
	q = sqlite3_str_new(db);
	sqlite3_str_appendall(q, "SELECT count(*)");
	bestsrc_file_rows(q, &b);
	sqlite3_str_appendf(q, DB_OVERLAPS_SQL "%s", device_sql);
	if ((sql = sqlite3_str_finish(q)) == NULL)
		errx(EXIT_FAILURE, "out of memory");
	rc = count_overlapping(db, sql, lo_ns, hi_ns, -1, count);
	sqlite3_free(sql);
	return rc;
}

int
db_count_coarse(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    const char *device_sql, const struct db_coarse *c, int64_t *count)
{
	sqlite3_stmt *s;
	int rc;

	if (c->n == 0)
		return 0;
	if ((rc = db_preparef(db, &s, "the samples", "SELECT count(*) FROM "
	    SCHEMA_T_SAMPLES " WHERE " DB_OVERLAPS_SQL " AND " SCHEMA_C_DEVICE
	    " = ?4 AND " SCHEMA_C_TS " BETWEEN ?5 AND ?6%s", device_sql)) != 0)
		return rc;
	bind_overlaps(s, lo_ns, hi_ns);
	for (size_t i = 0; i < c->n; i++) {
		sqlite3_bind_int(s, 4, c->r[i].device);
		sqlite3_bind_int64(s, 5, c->r[i].first_ns);
		sqlite3_bind_int64(s, 6, c->r[i].last_ns);
		if ((rc = sqlite3_step(s)) != SQLITE_ROW)
			break;
		*count += sqlite3_column_int64(s, 0);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : db_error(db, "the samples");
}

int
db_first_by_device(sqlite3 *db, int64_t lo_ns, int64_t hi_ns, int64_t epoch,
    const char *device_sql, struct db_key **out, size_t *n)
{
	int64_t hi3 = hi_ns > INT64_MAX - DB_MAX_INTERVAL_NS ? INT64_MAX :
	    hi_ns + DB_MAX_INTERVAL_NS;
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = db_preparef(db, &s, "the samples", "SELECT " SCHEMA_C_DEVICE
	    ", min(" SCHEMA_C_TS ") FROM " SCHEMA_T_SAMPLES " WHERE "
	    DB_OVERLAPS_SQL "%s%s GROUP BY " SCHEMA_C_DEVICE " ORDER BY "
	    SCHEMA_C_DEVICE, device_sql, db_epoch_sql(db))) != 0)
		return rc;
	db_bind_epoch(s, epoch);
	sqlite3_bind_int64(s, 1, lo_ns);
	sqlite3_bind_int64(s, 2, hi_ns);
	sqlite3_bind_int64(s, 3, hi3);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*out = dbread_grow(*out, *n, sizeof(**out));
		(*out)[(*n)++] = (struct db_key){ sqlite3_column_int(s, 0),
		    sqlite3_column_int64(s, 1) };
	}
	/*
	 * A damaged page: the cards read so far.  The read of the samples
	 * that follows meets the damage too and says so.
	 */
	if (rc != SQLITE_DONE && sql_is_damage(sqlite3_errcode(db)))
		rc = SQLITE_DONE;
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE)
		return 0;
	free(*out);
	*out = NULL;
	*n = 0;
	return db_error(db, "the samples");
}

sqlite3_stmt *
db_select_newest(sqlite3 *db, const struct db_metric *const *cols,
    size_t ncols)
{
	sqlite3_str *q;
	const char **names;
	struct bestsrc b;

	if ((q = select_begin(db, cols, ncols, SCHEMA_C_TS " > ?1 AND "
	    SCHEMA_C_TS " <= ?2", &b, &names)) == NULL)
		return NULL;
	for (size_t i = 0; i < ncols; i++) {
		sqlite3_str_appendall(q, ", ");
		if (names[i] == NULL) {
			sqlite3_str_appendall(q, "NULL");
			continue;
		}
		sqlite3_str_appendall(q, "(");
		bestsrc_col(q, &b, i);
		sqlite3_str_appendf(q, ") / %.1f",
		    (double)metric_pow10[cols[i]->decimals]);
	}
	free(names);
	sqlite3_str_appendall(q, ", ");
	bestsrc_src(q, &b);
	bestsrc_from(q, &b);
	sqlite3_str_appendall(q, " WHERE " SCHEMA_C_TS " > ?1 AND " SCHEMA_C_TS
	    " <= ?2 ORDER BY " SCHEMA_C_TS " DESC");
	return prepare_built(db, q);
}

int
db_newest_stamp(sqlite3 *db, int64_t now_ns, int64_t *ts_ns)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(db, "SELECT max(" SCHEMA_C_TS ") FROM "
	    SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_TS " <= ?1", -1, &s, NULL) !=
	    SQLITE_OK)
		return db_error(db, "samples");
	sqlite3_bind_int64(s, 1, now_ns);
	if (sqlite3_step(s) == SQLITE_ROW)
		*ts_ns = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return 0;
}

int
db_smi_printed(sqlite3 *db, const struct db_metric *const *cols, size_t ncols,
    int64_t lo_ns, int64_t hi_ns, const char *device_sql, bool *printed)
{
	const struct metric_def *d;
	sqlite3_str *q;
	sqlite3_stmt *s;
	int64_t version;
	char *sql;
	int rc;

	if (sql_pragma_int(db, "user_version", &version) == -1)
		return db_error(db, "the schema version");
	q = sqlite3_str_new(db);
	sqlite3_str_appendall(q, "SELECT 0");
	for (size_t i = 0; i < ncols; i++)
		sqlite3_str_appendf(q, ", max(\"%w\" IS NOT NULL)", cols[i]->col);
	/* before schema 6 every row is aiu-smi's */
	sqlite3_str_appendf(q, " FROM " SCHEMA_T_SAMPLES " WHERE "
	    DB_OVERLAPS_SQL "%s%s", version >= 6 ? " AND " SCHEMA_C_SRC
	    " IS NULL" : "", device_sql);
	if ((sql = sqlite3_str_finish(q)) == NULL)
		errx(EXIT_FAILURE, "out of memory");
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return db_error(db, "the samples");
	bind_overlaps(s, lo_ns, hi_ns);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		for (size_t i = 0; i < ncols; i++)
			printed[i] = printed[i] ||
			    sqlite3_column_int(s, 1 + (int)i) != 0 ||
			    ((d = metric_def_find(cols[i]->key)) != NULL &&
			    d->group == '*');
	else if (sql_is_damage(sqlite3_errcode(db))) {
		/*
		 * A damaged page: every column, as none can be ruled out;
		 * the read of the samples that follows says the damage.
		 */
		for (size_t i = 0; i < ncols; i++)
			printed[i] = true;
		rc = SQLITE_ROW;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : db_error(db, "the samples");
}
