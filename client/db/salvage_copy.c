/* salvage_copy: copying what can be read (contract in salvage_copy.h). */
#include "salvage_copy.h"

#include <err.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "metrics.h"
#include "salvage_walk.h"
#include "schema.h"

#define FLUSH_ROWS	4096	/* rows buffered between flushes */

static void
oom(void)
{
	errx(CLIENT_EXIT_FAILED, "out of memory");
}

bool
salvage_int_value(int64_t v, int decimals, struct store_value *out)
{
	out->mant = v;
	out->scale = (int8_t)(decimals < 0 ? 0 : decimals > METRIC_MAX_SCALE ?
	    METRIC_MAX_SCALE : decimals);
	out->present = true;
	return true;
}

bool
salvage_real_value(double v, int decimals, struct store_value *out)
{
	char text[40], *p;
	int64_t mant = 0;
	int exp10 = 0, scale, digits = 0;
	bool neg = false, frac = false;

	if (!isfinite(v))
		return false;
	/* the shortest text that reads back as v */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(text, sizeof(text), "%.*e", prec - 1, v);
		if (strtod(text, NULL) == v)
			break;
	}
	p = text;
	if (*p == '-') {
		neg = true;
		p++;
	}
	for (; *p != '\0' && *p != 'e'; p++) {
		if (*p == '.') {
			frac = true;
			continue;
		}
		mant = mant * 10 + (*p - '0');
		digits++;
		if (frac)
			exp10--;
	}
	if (*p == 'e')
		exp10 += (int)strtol(p + 1, NULL, 10);
	(void)digits;
	/* v = mant * 10^exp10; natural = v / 10^decimals */
	scale = decimals - exp10;
	while (scale < 0 && mant != 0 &&
	    !__builtin_mul_overflow(mant, 10, &mant))
		scale++;
	if (scale < 0)
		scale = 0;	/* 0, or too large to scale: as near as it goes */
	while (scale > METRIC_MAX_SCALE) {
		mant /= 10;
		scale--;
	}
	out->mant = neg ? -mant : mant;
	out->scale = (int8_t)scale;
	out->present = true;
	return true;
}

/* The columns of src's table, in order; *n of them (0: no such table). */
static char **
columns_of(sqlite3 *db, const char *table, size_t *n)
{
	sqlite3_stmt *s;
	char **v = NULL;

	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)",
	    -1, &s, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if ((v = reallocarray(v, *n + 1, sizeof(*v))) == NULL ||
		    (v[*n] = strdup((const char *)sqlite3_column_text(s, 0))) ==
		    NULL)
			oom();
		(*n)++;
	}
	sqlite3_finalize(s);
	return v;
}

static void
columns_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* "\"a\", \"b\", ..." for a select list; sqlite3_free it. */
static char *
select_list(char *const *cols, size_t n)
{
	sqlite3_str *q = sqlite3_str_new(NULL);

	for (size_t i = 0; i < n; i++)
		sqlite3_str_appendf(q, "%s\"%w\"", i > 0 ? ", " : "", cols[i]);
	return sqlite3_str_finish(q);
}

/* The pages of table that dbstat finds it cannot read; -1 if unknown. */
static int64_t
damaged_pages(sqlite3 *db, const char *table)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM dbstat WHERE name = "
	    "?1 AND pagetype = 'corrupted'", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static struct salvage_table *
new_table(struct salvage *s, const char *name)
{
	struct salvage_table *t;

	if (s->nt == SALVAGE_MAX_TABLES)
		errx(CLIENT_EXIT_FAILED, "too many tables");
	t = &s->t[s->nt++];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->damaged_pages = damaged_pages(s->src, name);
	return t;
}

/*
 * Run ks over t's table and fill t from it: -1 if a row could not be
 * stored (the new database failed), 0 otherwise; a table that cannot be
 * read at all is t->failed, with why.
 */
static int
scan_into(struct keyscan *ks, struct salvage_table *t)
{
	if (keyscan_run(ks) == -1) {
		snprintf(t->err, sizeof(t->err), "%s", ks->err);
		t->failed = true;
	}
	t->saved = ks->rows;
	t->ranges = ks->nlost;
	t->lost = keyscan_lost_estimate(ks);
	for (size_t i = 0; i < ks->nlost; i++)
		if (!ks->lost[i].have_prev || !ks->lost[i].have_next)
			t->lost_unknown = true;
	return ks->stopped ? -1 : 0;
}

/* ---- the catalog ---- */

static int
metric_row(void *ctx, sqlite3_value **v, int n)
{
	struct salvage *s = ctx;
	const char *key = (const char *)sqlite3_value_text(v[0]);
	const char *unit = (const char *)sqlite3_value_text(v[1]);
	const char *col = (const char *)sqlite3_value_text(v[3]);
	struct salvage_metric *m;
	int id;

	if (n < 4 || key == NULL || col == NULL)
		return 0;	/* nothing to go by: not copied */
	if (storedb_metric(s->dst, key, unit != NULL ? unit : "", &id) == -1)
		return -1;
	if ((m = reallocarray(s->cat, s->ncat + 1, sizeof(*m))) == NULL)
		oom();
	s->cat = m;
	m = &s->cat[s->ncat++];
	if ((m->col = strdup(col)) == NULL)
		oom();
	m->id = id;
	m->decimals = sqlite3_value_int(v[2]);
	return 0;
}

int
salvage_metrics(struct salvage *s)
{
	struct salvage_table *t = new_table(s, SCHEMA_T_METRICS);
	struct keyscan ks = { .db = s->src, .table = SCHEMA_T_METRICS,
	    .key = "rowid", .cols = "key, unit, decimals, col",
	    .row = metric_row, .ctx = s };
	int rc;

	t->present = true;
	rc = scan_into(&ks, t);
	keyscan_free(&ks);
	return rc;
}

/* ---- samples ---- */

static const struct salvage_metric *
catalog_col(struct salvage *s, const char *col)
{
	const struct metric_def *d;
	struct salvage_metric *m;
	int id;

	for (size_t i = 0; i < s->ncat; i++)
		if (strcmp(s->cat[i].col, col) == 0)
			return &s->cat[i];
	/*
	 * Its catalog row is lost: a column named after a key this build
	 * knows is that metric (such a key's column is its name).
	 */
	if ((d = metric_def_find(col)) == NULL ||
	    storedb_metric(s->dst, col, d->unit, &id) == -1)
		return NULL;
	if ((m = reallocarray(s->cat, s->ncat + 1, sizeof(*m))) == NULL)
		oom();
	s->cat = m;
	m = &s->cat[s->ncat++];
	if ((m->col = strdup(col)) == NULL)
		oom();
	m->id = id;
	m->decimals = d->decimals;
	return m;
}

/* The fixed columns, in the select list's order (NULL where absent). */
static const char *const fixed_cols[] = {
	SCHEMA_C_TS, SCHEMA_C_DEVICE, SCHEMA_C_INTERVAL, SCHEMA_C_SKEW,
	SCHEMA_C_SRC, SCHEMA_C_SEQ, SCHEMA_C_ARRIVAL, SCHEMA_C_EPOCH,
};
#define NFIXED	(sizeof(fixed_cols) / sizeof(fixed_cols[0]))

/* Store one row of the select list's values. */
static int
append_values(struct salvage *s, sqlite3_value **v)
{
	struct store_sample smp = { 0 };
	size_t nv = 0;
	int64_t iv;

	smp.ts_ns = sqlite3_value_int64(v[0]);
	smp.device = sqlite3_value_int(v[1]);
	iv = sqlite3_value_int64(v[2]);
	smp.interval_ms = iv < 0 ? 0 : iv > UINT32_MAX ? UINT32_MAX :
	    (uint32_t)iv;
	if ((smp.have_skew = sqlite3_value_type(v[3]) != SQLITE_NULL))
		smp.skew_s = sqlite3_value_int(v[3]);
	smp.src = sqlite3_value_type(v[4]) == SQLITE_NULL ? SCHEMA_SRC_SMI :
	    sqlite3_value_int(v[4]);
	if ((smp.have_seq = sqlite3_value_type(v[5]) != SQLITE_NULL))
		smp.seq = (uint32_t)sqlite3_value_int64(v[5]);
	smp.arrival_ns = sqlite3_value_type(v[6]) == SQLITE_NULL ? 0 :
	    sqlite3_value_int64(v[6]);
	/* the host clock's epoch it was stamped in (schema 12) */
	if ((smp.have_epoch = sqlite3_value_type(v[7]) != SQLITE_NULL))
		smp.epoch = sqlite3_value_int64(v[7]);
	for (size_t i = 0; i < s->ncols; i++) {
		sqlite3_value *x = v[NFIXED + i];
		int dec = s->cols[i]->decimals;
		bool ok;

		switch (sqlite3_value_type(x)) {
		case SQLITE_INTEGER:
			ok = salvage_int_value(sqlite3_value_int64(x), dec,
			    &s->values[nv]);
			break;
		case SQLITE_FLOAT:
			ok = salvage_real_value(sqlite3_value_double(x), dec,
			    &s->values[nv]);
			break;
		default:
			ok = false;	/* NULL: no value */
		}
		if (ok)
			s->ids[nv++] = s->cols[i]->id;
	}
	smp.nvalues = nv;
	smp.metric = s->ids;
	smp.values = s->values;
	storedb_append(s->dst, &smp);
	if (++s->appended % FLUSH_ROWS == 0 && storedb_flush(s->dst) == -1)
		return -1;
	return 0;
}

/* The rows the page walk found, up to key before (all: every one). */
static int
drain(struct salvage *s, bool all, int64_t before)
{
	while (s->merge_row && (all ||
	    sqlite3_column_int64(s->merge, 0) < before)) {
		for (int p = 0; p < s->nsel; p++)
			s->mvals[p] = sqlite3_column_value(s->merge, p);
		if (append_values(s, s->mvals) == -1)
			return -1;
		s->recovered++;
		s->merge_row = sqlite3_step(s->merge) == SQLITE_ROW;
	}
	return 0;
}

static int
sample_row(void *ctx, sqlite3_value **v, int n)
{
	struct salvage *s = ctx;

	if (n != s->nsel || drain(s, false, sqlite3_value_int64(v[0])) == -1)
		return -1;
	return append_values(s, v);
}

/* The first read, when the page walk may follow: rows only counted. */
static int
count_row(void *ctx, sqlite3_value **v, int n)
{
	(void)ctx;
	(void)v;
	(void)n;
	return 0;
}

/* Where the fixed columns are in the table's, for the page walk. */
static void
shape_of(char *const *cols, size_t ncols, struct walk_shape *sh)
{
	int *at[] = { &sh->ts, &sh->device, &sh->interval, &sh->skew,
	    &sh->src };

	sh->tcols = (int)ncols;
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		*at[i] = -1;
		for (size_t k = 0; k < ncols; k++)
			if (strcmp(cols[k], fixed_cols[i]) == 0)
				*at[i] = (int)k;
	}
}

/*
 * The select list: the fixed columns (NULL where the table lacks one),
 * then each metric column that has a metric here; s->sel_col says where
 * each is in the table.  sqlite3_free it.
 */
static char *
samples_select(struct salvage *s, struct salvage_table *t, char *const *cols,
    size_t ncols)
{
	sqlite3_str *q = sqlite3_str_new(NULL);

	if ((s->sel_col = calloc(NFIXED + ncols, sizeof(*s->sel_col))) ==
	    NULL)
		oom();
	for (size_t i = 0; i < NFIXED; i++) {
		int at = -1;

		for (size_t k = 0; k < ncols && at < 0; k++)
			if (strcmp(cols[k], fixed_cols[i]) == 0)
				at = (int)k;
		sqlite3_str_appendf(q, "%s%s%w\"", i > 0 ? ", " : "",
		    at >= 0 ? "\"" : "NULL AS \"", fixed_cols[i]);
		s->sel_col[s->nsel++] = at;
	}
	for (size_t k = 0; k < ncols; k++) {
		const struct salvage_metric *m;
		bool fixed = false;

		for (size_t i = 0; i < NFIXED && !fixed; i++)
			fixed = strcmp(cols[k], fixed_cols[i]) == 0;
		if (fixed)
			continue;
		if ((m = catalog_col(s, cols[k])) == NULL) {
			/* no catalog row, no known key: nowhere to go */
			if ((s->dropped = reallocarray(s->dropped,
			    s->ndropped + 1, sizeof(*s->dropped))) == NULL ||
			    (s->dropped[s->ndropped] = strdup(cols[k])) == NULL)
				oom();
			s->ndropped++;
			t->dropped_cols++;
			continue;
		}
		s->cols[s->ncols++] = m;
		s->sel_col[s->nsel++] = (int)k;
		sqlite3_str_appendf(q, ", \"%w\"", cols[k]);
	}
	return sqlite3_str_finish(q);
}

int
salvage_samples(struct salvage *s)
{
	struct salvage_table *t = new_table(s, SCHEMA_T_SAMPLES);
	struct keyscan ks = { .db = s->src, .table = SCHEMA_T_SAMPLES,
	    .key = SCHEMA_C_TS, .row = sample_row, .ctx = s };
	struct walk_shape shape;
	size_t ncols;
	char **cols = columns_of(s->src, SCHEMA_T_SAMPLES, &ncols), *list;
	int rc = 0;

	if (!(t->present = ncols > 0))
		return 0;
	s->cols = calloc(ncols, sizeof(*s->cols));
	s->ids = calloc(ncols, sizeof(*s->ids));
	s->values = calloc(ncols, sizeof(*s->values));
	if (s->cols == NULL || s->ids == NULL || s->values == NULL)
		oom();
	shape_of(cols, ncols, &shape);
	list = samples_select(s, t, cols, ncols);
	columns_free(cols, ncols);
	if (list == NULL ||
	    (s->mvals = calloc((size_t)s->nsel, sizeof(*s->mvals))) == NULL)
		oom();
	ks.cols = list;
	/*
	 * Where the file may be walked, a first read finds the ranges SQL
	 * cannot read, and the walk the rows in them; the second read then
	 * copies, with those rows merged in key order.
	 */
	if (s->walk_path != NULL) {
		struct keyscan first = ks;

		first.row = count_row;
		if (keyscan_run(&first) == 0 && first.nlost > 0)
			rc = salvage_walk(s, first.lost, first.nlost, &shape);
		keyscan_free(&first);
	}
	if (rc == 0)
		rc = scan_into(&ks, t);
	if (rc == 0 && drain(s, true, 0) == -1)
		rc = -1;
	if (rc == 0 && storedb_flush(s->dst) == -1)
		rc = -1;
	t->recovered = s->recovered;
	t->saved += s->recovered;
	t->lost = t->lost > s->recovered ? t->lost - s->recovered : 0;
	s->lost = ks.lost;	/* kept for the windows */
	s->nlost = ks.nlost;
	ks.lost = NULL;
	keyscan_free(&ks);
	sqlite3_free(list);
	return rc;
}

/* ---- every other table ---- */

struct copy_ctx {
	struct salvage *s;
	struct store_copy *copy;
	bool windows;
	int id_col, tag_col, begin_col, end_col;	/* windows' */
};

static int
copy_row(void *ctx, sqlite3_value **v, int n)
{
	struct copy_ctx *c = ctx;
	struct salvage *s = c->s;
	struct salvage_window *w;

	if (storedb_copy_row(c->copy, v, (size_t)n) == -1)
		return -1;
	if (!c->windows || c->id_col < 0 || c->begin_col < 0)
		return 0;
	if ((w = reallocarray(s->win, s->nwin + 1, sizeof(*w))) == NULL)
		oom();
	s->win = w;
	w = &s->win[s->nwin++];
	memset(w, 0, sizeof(*w));
	w->id = sqlite3_value_int64(v[c->id_col]);
	w->begin_ns = sqlite3_value_int64(v[c->begin_col]);
	w->end_ns = c->end_col >= 0 ? sqlite3_value_int64(v[c->end_col]) : 0;
	if (c->tag_col >= 0 && sqlite3_value_text(v[c->tag_col]) != NULL &&
	    (w->tag = strdup((const char *)sqlite3_value_text(
	    v[c->tag_col]))) == NULL)
		oom();
	return 0;
}

static int
col_index(char *const *cols, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(cols[i], name) == 0)
			return (int)i;
	return -1;
}

/*
 * The key to read a table by: the rowid, or for a WITHOUT ROWID table
 * the first column of its primary key (counters' is text: its device
 * then, read in one sorted pass that any damage ends).
 */
static const char *
key_of(const char *table)
{
	if (strcmp(table, SCHEMA_T_SUMMARY) == 0 ||
	    strcmp(table, SCHEMA_T_SUMMARY_BW) == 0)
		return "window_id";
	if (strcmp(table, SCHEMA_T_COUNTERS) == 0)
		return "device";
	return "rowid";
}

static int
copy_table(struct salvage *s, const char *table)
{
	struct salvage_table *t = new_table(s, table);
	struct copy_ctx c = { .s = s };
	struct keyscan ks = { .db = s->src, .table = table,
	    .key = key_of(table), .row = copy_row, .ctx = &c };
	size_t ncols;
	char **cols = columns_of(s->src, table, &ncols), *list;
	int rc = 0;

	if (!(t->present = ncols > 0))
		return 0;
	if (storedb_copy_begin(s->dst, table, ncols, (const char *const *)cols,
	    &c.copy, &t->dropped_cols) == -1) {
		columns_free(cols, ncols);
		return -1;
	}
	if ((c.windows = strcmp(table, SCHEMA_T_WINDOWS) == 0)) {
		c.id_col = col_index(cols, ncols, "id");
		c.tag_col = col_index(cols, ncols, "tag");
		c.begin_col = col_index(cols, ncols, "begin_ns");
		c.end_col = col_index(cols, ncols, "end_ns");
	}
	if ((list = select_list(cols, ncols)) == NULL)
		oom();
	ks.cols = list;
	rc = scan_into(&ks, t);
	keyscan_free(&ks);
	sqlite3_free(list);
	if (storedb_copy_end(c.copy) == -1)
		rc = -1;
	columns_free(cols, ncols);
	return rc;
}

int
salvage_tables(struct salvage *s)
{
	const char *table;

	for (size_t i = 0; (table = storedb_copy_table(i)) != NULL; i++)
		if (copy_table(s, table) == -1)
			return -1;
	return 0;
}

void
salvage_windows_mark(struct salvage *s)
{
	for (size_t i = 0; i < s->nwin; i++) {
		struct salvage_window *w = &s->win[i];
		int64_t end = w->end_ns > 0 ? w->end_ns : INT64_MAX;

		for (size_t k = 0; k < s->nlost && !w->samples_lost; k++)
			w->samples_lost = s->lost[k].from <= end &&
			    s->lost[k].to >= w->begin_ns;
	}
}

void
salvage_free(struct salvage *s)
{
	for (size_t i = 0; i < s->ncat; i++)
		free(s->cat[i].col);
	free(s->cat);
	free(s->cols);
	free(s->ids);
	free(s->values);
	free(s->sel_col);
	free(s->mvals);
	salvage_walk_free(s);
	free(s->lost);
	for (size_t i = 0; i < s->nwin; i++)
		free(s->win[i].tag);
	free(s->win);
	for (size_t i = 0; i < s->ndropped; i++)
		free(s->dropped[i]);
	free(s->dropped);
}
