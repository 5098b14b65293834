/*
 * Ingest ceiling of the store, and its cost on disk.
 *
 *   make bench
 *   build/bench-ingest [rows] [dir]        (defaults: 100000 rows, $TMPDIR or /tmp)
 *
 * For 8 cards and every metric of metric_defs, in batches of 800 rows (one
 * second at 8 cards x 100 Hz), it times (a) storedb_append + storedb_flush and
 * (b) raw prepared INSERTs of the same rows, already scaled, into the same
 * schema, one transaction per batch, with the same pragmas.  Each is run 7
 * times on a fresh database, alternating, and the medians and their ratio
 * are printed, then the bytes per stored value of the store's database.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "csvparse.h"
#include "log.h"
#include "metrics.h"
#include "storedb.h"
#include "timeparse.h"

#define CARDS	8
#define BATCH	800
#define REPEATS	7
#define T0	(1750000000LL * (int64_t)NSEC_PER_SEC)

struct rows {
	size_t n;
	size_t nm;			/* metrics per row */
	struct store_value *values;	/* n * nm, as printed */
	int64_t *scaled;		/* n * nm, as the store binds them */
};

static const char *dir;
static char path[512];

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Uniform over the metric's usual range: the costly case for varints. */
static void
plausible(const struct metric_def *d, uint64_t *rng, struct store_value *v,
    int64_t *scaled)
{
	double hi = 100.0, lo = 0.0, x, scale = 1.0;

	if (strcmp(d->key, "hostcpu") == 0)
		hi = 800.0;
	else if (strcmp(d->unit, "W") == 0)
		lo = 20.0, hi = 75.0;
	else if (strcmp(d->unit, "C") == 0)
		lo = 30.0, hi = 90.0;
	else if (strcmp(d->unit, "GiB/s") == 0)
		hi = 40.0;
	else if (strcmp(d->unit, "Mreq/s") == 0)
		hi = 400.0;
	else if (strcmp(d->unit, "MiB") == 0)
		hi = 65536.0;
	x = lo + (hi - lo) * (double)(xorshift(rng) >> 11) /
	    (double)(1ULL << 53);
	for (int i = 0; i < d->decimals; i++)
		scale *= 10.0;
	v->mant = (int64_t)(x * scale);
	v->scale = (int8_t)d->decimals;
	v->present = true;
	*scaled = v->mant;
}

static void
rows_make(struct rows *r, size_t n)
{
	uint64_t rng = 88172645463325252ULL;

	r->n = n;
	r->nm = metric_ndefs;
	r->values = calloc(n * r->nm, sizeof(*r->values));
	r->scaled = calloc(n * r->nm, sizeof(*r->scaled));
	if (r->values == NULL || r->scaled == NULL)
		fatal(1, "calloc");
	for (size_t i = 0; i < n * r->nm; i++)
		plausible(&metric_defs[i % r->nm], &rng, &r->values[i],
		    &r->scaled[i]);
}

static void
db_remove(void)
{
	char p[600];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

static struct store *
store_fresh(int *ids)
{
	struct store *st;

	db_remove();
	if (storedb_open(path, BATCH * 4, &st) == -1)
		fatalx(1, "storedb_open %s", path);
	for (size_t i = 0; i < metric_ndefs; i++)
		if (storedb_metric(st, metric_defs[i].key, metric_defs[i].unit,
		    &ids[i]) == -1)
			fatalx(1, "storedb_metric");
	return st;
}

/* (a) rows/s through storedb_append + storedb_flush; *bpv: bytes per value. */
static double
run_store(const struct rows *r, double *bpv)
{
	int ids[64];
	struct store *st = store_fresh(ids);
	struct store_stats ss;
	uint64_t t0, t1;

	t0 = now_monotonic_ns();
	for (size_t i = 0; i < r->n; i++) {
		struct store_sample s = {
			.ts_ns = T0 + (int64_t)(i / CARDS) * 10000000,
			.device = (int)(i % CARDS), .interval_ms = 10,
			.nvalues = r->nm, .metric = ids,
			.values = &r->values[i * r->nm],
		};

		storedb_append(st, &s);
		if ((i + 1) % BATCH == 0 && storedb_flush(st) == -1)
			fatalx(1, "storedb_flush");
	}
	if (storedb_flush(st) == -1)
		fatalx(1, "storedb_flush");
	t1 = now_monotonic_ns();
	storedb_get_stats(st, &ss);
	*bpv = (double)ss.file_bytes / (double)(r->n * r->nm);
	storedb_close(st);
	return (double)r->n / ((double)(t1 - t0) / 1e9);
}

static void
exec_or_die(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		fatalx(1, "%s: %s", sql, sqlite3_errmsg(db));
}

/* The store's own INSERT, columns in catalog order. */
static sqlite3_stmt *
raw_insert(sqlite3 *db)
{
	sqlite3_stmt *cols, *ins;
	sqlite3_str *q = sqlite3_str_new(db), *v = sqlite3_str_new(db);
	char *qs, *vs, *sql;

	if (sqlite3_prepare_v2(db, "SELECT col FROM metrics ORDER BY id", -1,
	    &cols, NULL) != SQLITE_OK)
		fatalx(1, "catalog: %s", sqlite3_errmsg(db));
	sqlite3_str_appendall(q, "INSERT INTO samples (ts_ns, device, "
	    "interval_ms, smi_skew_s");
	sqlite3_str_appendall(v, ") VALUES (?, ?, ?, ?");
	while (sqlite3_step(cols) == SQLITE_ROW) {
		sqlite3_str_appendf(q, ", \"%w\"", sqlite3_column_text(cols, 0));
		sqlite3_str_appendall(v, ", ?");
	}
	sqlite3_finalize(cols);
	qs = sqlite3_str_finish(q);
	vs = sqlite3_str_finish(v);
	sql = sqlite3_mprintf("%s%s)", qs, vs);
	if (sqlite3_prepare_v2(db, sql, -1, &ins, NULL) != SQLITE_OK)
		fatalx(1, "%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_free(qs);
	sqlite3_free(vs);
	sqlite3_free(sql);
	return ins;
}

static void
raw_row(sqlite3_stmt *ins, const struct rows *r, size_t i)
{
	sqlite3_bind_int64(ins, 1, T0 + (int64_t)(i / CARDS) * 10000000);
	sqlite3_bind_int(ins, 2, (int)(i % CARDS));
	sqlite3_bind_int(ins, 3, 10);
	sqlite3_bind_null(ins, 4);
	for (size_t j = 0; j < r->nm; j++)
		sqlite3_bind_int64(ins, (int)j + 5, r->scaled[i * r->nm + j]);
	if (sqlite3_step(ins) != SQLITE_DONE)
		fatalx(1, "insert: %s", sqlite3_errmsg(sqlite3_db_handle(ins)));
	sqlite3_reset(ins);
}

/* (b) rows/s of raw prepared inserts, one transaction per batch. */
static double
run_raw(const struct rows *r)
{
	int ids[64];
	sqlite3_stmt *ins;
	uint64_t t0, t1;
	sqlite3 *db;

	storedb_close(store_fresh(ids));
	if (sqlite3_open(path, &db) != SQLITE_OK)
		fatalx(1, "open %s", path);
	exec_or_die(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
	    " PRAGMA cache_size = -2000; PRAGMA journal_size_limit = 16777216;");
	ins = raw_insert(db);
	t0 = now_monotonic_ns();
	exec_or_die(db, "BEGIN IMMEDIATE");
	for (size_t i = 0; i < r->n; i++) {
		raw_row(ins, r, i);
		if ((i + 1) % BATCH == 0)
			exec_or_die(db, "COMMIT; BEGIN IMMEDIATE");
	}
	exec_or_die(db, "COMMIT");
	t1 = now_monotonic_ns();
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return (double)r->n / ((double)(t1 - t0) / 1e9);
}

/* The same rows as aiu-smi prints them: a header, then "ID,Date,Time,v...". */
static char *
rows_csv(const struct rows *r, size_t *len)
{
	size_t cap = 256 + r->n * (r->nm * 12 + 32), o = 0;
	char *buf = malloc(cap);

	if (buf == NULL)
		fatal(1, "malloc");
	o += (size_t)snprintf(buf + o, cap - o, "ID,Date (YYYYMMDD),Time (HH:MM:SS)");
	for (size_t j = 0; j < r->nm; j++)
		o += (size_t)snprintf(buf + o, cap - o, ",%s %s",
		    metric_defs[j].key, metric_defs[j].unit);
	buf[o++] = '\n';
	for (size_t i = 0; i < r->n; i++) {
		o += (size_t)snprintf(buf + o, cap - o, "%d,20250615,12:00:00",
		    (int)(i % CARDS));
		for (size_t j = 0; j < r->nm; j++) {
			const struct store_value *v = &r->values[i * r->nm + j];
			int64_t p = 1;

			for (int k = 0; k < v->scale; k++)
				p *= 10;
			if (v->scale == 0)
				o += (size_t)snprintf(buf + o, cap - o, ",%lld",
				    (long long)v->mant);
			else
				o += (size_t)snprintf(buf + o, cap - o,
				    ",%lld.%0*lld", (long long)(v->mant / p),
				    v->scale, (long long)(v->mant % p));
		}
		buf[o++] = '\n';
	}
	*len = o;
	return buf;
}

struct parse_state {
	struct store *st;
	struct csv_parser p;
	struct csv_result res;
	int col_metric[CSV_COLS_MAX];
	int ids[CSV_COLS_MAX];
	struct store_value vals[CSV_COLS_MAX];
	int64_t stamp;
	size_t rows;
};

/* What the daemon's source does with each line: map the header, store rows. */
static void
parse_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct parse_state *ps = arg;
	struct store_sample s = { 0 };
	size_t n = 0;

	if (overlong)
		fatalx(1, "overlong line");
	switch (csv_parse_line(&ps->p, line, len, &ps->res)) {
	case CSV_HEADER:
		for (int c = 0; c < ps->p.ncols; c++) {
			ps->col_metric[c] = -1;
			if (ps->p.cols[c].role == CSV_ROLE_METRIC &&
			    storedb_metric(ps->st, ps->p.cols[c].key,
			    ps->p.cols[c].unit, &ps->col_metric[c]) == -1)
				fatalx(1, "storedb_metric");
		}
		return;
	case CSV_ROW:
		break;
	default:
		fatalx(1, "unexpected line: %s", ps->res.error);
	}
	for (int c = 0; c < ps->p.ncols; c++) {
		const struct csv_value *v = &ps->res.u.row.values[c];

		if (ps->col_metric[c] < 0)
			continue;
		ps->ids[n] = ps->col_metric[c];
		ps->vals[n].mant = v->mant;
		ps->vals[n].scale = v->scale;
		ps->vals[n].present = v->present;
		n++;
	}
	s.ts_ns = ps->stamp + (int64_t)ps->rows;
	s.device = ps->res.u.row.device;
	s.interval_ms = 10;
	s.nvalues = n;
	s.metric = ps->ids;
	s.values = ps->vals;
	storedb_append(ps->st, &s);
	if (++ps->rows % BATCH == 0 && storedb_flush(ps->st) == -1)
		fatalx(1, "storedb_flush");
}

/* (c) rows/s from CSV text through csvparse and the store, in reads of one interval. */
static double
run_parse(const char *csv, size_t len, size_t nrows)
{
	struct parse_state *ps = calloc(1, sizeof(*ps));
	struct csv_lines *lb = calloc(1, sizeof(*lb));
	size_t off = 0, interval_bytes;
	uint64_t t0, t1;

	if (ps == NULL || lb == NULL)
		fatal(1, "calloc");
	db_remove();
	if (storedb_open(path, BATCH * 4, &ps->st) == -1)
		fatalx(1, "storedb_open %s", path);
	csv_parser_init(&ps->p);
	/* one read per interval, as the daemon sees the pipe at 100 Hz */
	interval_bytes = len / (nrows / CARDS);
	t0 = now_monotonic_ns();
	while (off < len) {
		size_t n = len - off < interval_bytes ? len - off : interval_bytes;

		ps->stamp = T0 + (int64_t)(off / interval_bytes) * 10000000;
		csv_lines_feed(lb, csv + off, n, parse_line, ps);
		off += n;
	}
	if (storedb_flush(ps->st) == -1)
		fatalx(1, "storedb_flush");
	t1 = now_monotonic_ns();
	if (ps->rows != nrows)
		fatalx(1, "parsed %zu rows of %zu", ps->rows, nrows);
	storedb_close(ps->st);
	free(ps);
	free(lb);
	return (double)nrows / ((double)(t1 - t0) / 1e9);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

int
main(int argc, char **argv)
{
	double a[REPEATS], b[REPEATS], c[REPEATS], bpv = 0.0, ma, mb, mc;
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	struct rows r;
	char tmpl[480], *csv;
	size_t csvlen;

	log_init("bench-ingest", 0);
	dir = argc > 2 ? argv[2] : getenv("TMPDIR") != NULL ?
	    getenv("TMPDIR") : "/tmp";
	snprintf(tmpl, sizeof(tmpl), "%s/bench-ingest.XXXXXX", dir);
	if (n == 0 || mkdtemp(tmpl) == NULL)
		fatal(1, "usage: bench-ingest [rows] [dir]: %s", tmpl);
	snprintf(path, sizeof(path), "%s/ingest.db", tmpl);
	rows_make(&r, n);
	csv = rows_csv(&r, &csvlen);
	for (int k = 0; k < REPEATS; k++) {
		c[k] = run_parse(csv, csvlen, n);
		a[k] = run_store(&r, &bpv);
		b[k] = run_raw(&r);
		printf("run %d: parse+store %.0f rows/s, store %.0f rows/s, "
		    "raw %.0f rows/s\n", k + 1, c[k], a[k], b[k]);
	}
	ma = median(a, REPEATS);
	mb = median(b, REPEATS);
	mc = median(c, REPEATS);
	printf("%zu rows x %zu metrics, %d cards, batches of %d rows\n", n,
	    r.nm, CARDS, BATCH);
	printf("median storedb_append+storedb_flush: %.0f rows/s (%.0f values/s)\n",
	    ma, ma * (double)r.nm);
	printf("median CSV parse + store:        %.0f rows/s\n", mc);
	printf("median raw prepared inserts:     %.0f rows/s\n", mb);
	printf("ratio store/raw: %.2f; parse+store/raw: %.2f\n", ma / mb, mc / mb);
	printf("bytes per stored value: %.2f\n", bpv);
	db_remove();
	rmdir(tmpl);
	free(csv);
	free(r.values);
	free(r.scaled);
	return 0;
}
