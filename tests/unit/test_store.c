/*
 * Tests of store: schema and migrations, ingest and read-back through
 * plain SQL, failure handling, retention, query plans and the on-disk cost
 * per value.  Every test works on its own database in a fresh directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "inventory.h"
#include "metrics.h"
#include "schema.h"
#include "storedb.h"
#include "store_priv.h"
#include "tmpdb.h"

#define SEC		1000000000LL
#define MSEC		1000000LL
#define T0		(1750000000LL * SEC)	/* June 2025 */
#define HOUR		(3600 * SEC)

struct fx {
	struct tmpdb db;
	struct store *st;
	int ids[64];		/* store_metric ids of metric_defs, in order */
};

/* ---- fixture and SQL helpers ---- */

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->db, "test_store"), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	storedb_close(f->st);
	assert_int_equal(tmpdb_remove(&f->db), 0);
	free(f);
	return 0;
}

static void
fx_open(struct fx *f, size_t max_pending)
{
	assert_int_equal(storedb_open(f->db.path, max_pending, &f->st), 0);
	assert_true(metric_ndefs <= sizeof(f->ids) / sizeof(f->ids[0]));
	for (size_t i = 0; i < metric_ndefs; i++)
		assert_int_equal(storedb_metric(f->st, metric_defs[i].key,
		    metric_defs[i].unit, &f->ids[i]), 0);
}

static void
fx_close(struct fx *f)
{
	storedb_close(f->st);
	f->st = NULL;
}

static int
def_index(const char *key)
{
	for (size_t i = 0; i < metric_ndefs; i++)
		if (strcmp(metric_defs[i].key, key) == 0)
			return (int)i;
	fail_msg("no metric %s", key);
	return -1;
}

static sqlite3 *
db_open(const struct fx *f)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open_v2(f->db.path, &db, SQLITE_OPEN_READWRITE,
	    NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 1000);
	return db;
}

static void
db_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

/* Run a printf-formatted query; the statement stands on its first row. */
static sqlite3_stmt *
q_row(sqlite3 *db, const char *fmt, ...)
{
	sqlite3_stmt *s;
	va_list ap;
	char *sql;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(s) != SQLITE_ROW)
		fail_msg("%s: no row", sql);
	sqlite3_free(sql);
	return s;
}

static int64_t
q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = q_row(db, "%s", sql);
	int64_t v = sqlite3_column_int64(s, 0);

	sqlite3_finalize(s);
	return v;
}

static const char *
q_text(sqlite3 *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *s = q_row(db, "%s", sql);
	const char *t = (const char *)sqlite3_column_text(s, 0);

	snprintf(buf, len, "%s", t != NULL ? t : "(null)");
	sqlite3_finalize(s);
	return buf;
}

/* The value of metric key at (ts, device) through sample_values. */
static double
view_value(sqlite3 *db, const char *key, int64_t ts, int device)
{
	sqlite3_stmt *s = q_row(db, "SELECT value, typeof(value) FROM "
	    SCHEMA_V_VALUES " WHERE ts_ns = %lld AND device = %d AND metric = %Q",
	    (long long)ts, device, key);
	double v = sqlite3_column_double(s, 0);

	assert_string_equal(sqlite3_column_text(s, 1), "real");
	sqlite3_finalize(s);
	return v;
}

static int64_t
view_count(sqlite3 *db, const char *key, int64_t ts, int device)
{
	sqlite3_stmt *s = q_row(db, "SELECT count(*) FROM " SCHEMA_V_VALUES
	    " WHERE ts_ns = %lld AND device = %d AND metric = %Q",
	    (long long)ts, device, key);
	int64_t n = sqlite3_column_int64(s, 0);

	sqlite3_finalize(s);
	return n;
}

static double
absd(double x)
{
	return x < 0 ? -x : x;
}

static struct store_value
val(int64_t mant, int scale)
{
	struct store_value v = { .mant = mant, .scale = (int8_t)scale,
	    .present = true };

	return v;
}

static void
append1(struct store *st, int64_t ts, int device, size_t n, const int *ids,
    const struct store_value *v)
{
	struct store_sample s = {
		.ts_ns = ts, .device = device, .interval_ms = 1000,
		.nvalues = n, .metric = ids, .values = v,
	};

	storedb_append(st, &s);
}

/* A row with only pwr, whose mantissa tells rows apart. */
static void
append_pwr(struct fx *f, int64_t ts, int device, int64_t mant)
{
	int id = f->ids[def_index("pwr")];
	struct store_value v = val(mant, 1);

	append1(f->st, ts, device, 1, &id, &v);
}

/*
 * A plausible value of metric d for a card: uniform over the metric's
 * usual range (uniform is the costly case: most values have the largest
 * magnitude), printed with d's decimals.
 */
static struct store_value
plausible(const struct metric_def *d, uint64_t *rng)
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
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	x = lo + (hi - lo) * (double)(*rng >> 11) / (double)(1ULL << 53);
	for (int i = 0; i < d->decimals; i++)
		scale *= 10.0;
	return val((int64_t)(x * scale), d->decimals);
}

/* rows rows of every metric for 8 cards, 1 s apart from T0, flushed per second of 800 rows. */
static void
fill_all_metrics(struct fx *f, int64_t t0, size_t rows)
{
	struct store_value v[64];
	uint64_t rng = 88172645463325252ULL;

	for (size_t r = 0; r < rows; r++) {
		for (size_t i = 0; i < metric_ndefs; i++)
			v[i] = plausible(&metric_defs[i], &rng);
		append1(f->st, t0 + (int64_t)(r / 8) * SEC, (int)(r % 8),
		    metric_ndefs, f->ids, v);
		if ((r + 1) % 800 == 0)
			assert_int_equal(storedb_flush(f->st), 0);
	}
	assert_int_equal(storedb_flush(f->st), 0);
}

/* ---- schema ---- */

static void
test_new_schema(void **state)
{
	struct fx *f = *state;
	char buf[64];
	sqlite3 *db;

	fx_open(f, 100);
	db = db_open(f);
	assert_int_equal(q_int(db, "PRAGMA user_version"), SCHEMA_VERSION);
	assert_string_equal(q_text(db, "PRAGMA journal_mode", buf,
	    sizeof(buf)), "wal");
	assert_int_equal(q_int(db, "PRAGMA page_size"), 4096);
	assert_int_equal(q_int(db, "PRAGMA auto_vacuum"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('metrics', 'samples', 'cards', 'device_map', 'windows', "
	    "'imports', 'sample_values')"), 7);
	sqlite3_close(db);
}

/* A new database and its -wal and -shm are 0640 under any umask. */
static void
test_new_mode(void **state)
{
	struct fx *f = *state;
	static const char *const suffix[] = { "", "-wal", "-shm" };
	char p[160];
	struct stat sb;
	mode_t old = umask(0);

	fx_open(f, 100);
	umask(old);
	append_pwr(f, T0, 0, 1);
	assert_int_equal(storedb_flush(f->st), 0);
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", f->db.path, suffix[i]);
		assert_int_equal(stat(p, &sb), 0);
		if ((sb.st_mode & 07777) != 0640)
			fail_msg("%s has mode %04o", p, sb.st_mode & 07777);
	}
}

static void
test_catalog_seeded(void **state)
{
	struct fx *f = *state;
	sqlite3_stmt *s;
	sqlite3 *db;

	fx_open(f, 100);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM metrics"),
	    (int64_t)metric_ndefs);
	for (size_t i = 0; i < metric_ndefs; i++) {
		const struct metric_def *d = &metric_defs[i];

		s = q_row(db, "SELECT id, unit, grp, decimals, reliable, col, "
		    "description FROM metrics WHERE key = %Q", d->key);
		assert_int_equal(sqlite3_column_int(s, 0), f->ids[i]);
		assert_string_equal(sqlite3_column_text(s, 1), d->unit);
		assert_int_equal(sqlite3_column_text(s, 2)[0], d->group);
		assert_int_equal(sqlite3_column_int(s, 3), d->decimals);
		assert_int_equal(sqlite3_column_int(s, 4), d->reliable);
		assert_string_equal(sqlite3_column_text(s, 5), d->key);
		assert_string_equal(sqlite3_column_text(s, 6), d->description);
		sqlite3_finalize(s);
		s = q_row(db, "SELECT count(*), max(type) FROM "
		    "pragma_table_info('samples') WHERE name = %Q", d->key);
		assert_int_equal(sqlite3_column_int(s, 0), 1);
		assert_string_equal(sqlite3_column_text(s, 1), "REAL");
		sqlite3_finalize(s);
	}
	assert_int_equal(q_int(db, "SELECT reliable FROM metrics WHERE "
	    "key = 'rsvmem'"), 0);
	assert_int_equal(q_int(db, "SELECT reliable FROM metrics WHERE "
	    "key = 'pt_act'"), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM metrics WHERE "
	    "reliable = 0"), 2);
	sqlite3_close(db);
}

/* ---- ingest and read-back ---- */

static void
test_values_read_back(void **state)
{
	struct fx *f = *state;
	const char *keys[] = { "pwr", "gtemp", "busy", "rdmem", "actmem" };
	int ids[5];
	struct store_value v[5];
	struct store_sample s = { .ts_ns = T0, .device = 3,
	    .interval_ms = 500, .have_skew = true, .skew_s = -2,
	    .nvalues = 5, .metric = ids, .values = v };
	sqlite3 *db;

	fx_open(f, 100);
	for (int i = 0; i < 5; i++)
		ids[i] = f->ids[def_index(keys[i])];
	v[0] = val(267, 1);		/* pwr "26.7" */
	v[1] = val(0, 0);
	v[1].present = false;		/* gtemp "-" */
	v[2] = val(100, 0);		/* busy "100" */
	v[3] = val(22767, 3);		/* rdmem "22.767" */
	v[4] = val(0, 0);		/* actmem "0" */
	storedb_append(f->st, &s);
	s.ts_ns = T0 + SEC;
	s.have_skew = false;
	v[0] = val(2675, 2);		/* pwr "26.75": more digits than catalog */
	v[1] = val(-55, 1);		/* gtemp "-5.5" */
	v[2] = val(7, 0);
	v[3] = val(12345, 5);		/* rdmem "0.12345" */
	v[4] = val(9000000000000000000LL, 0);	/* overflows when scaled: REAL */
	storedb_append(f->st, &s);
	s.ts_ns = T0 + 2 * SEC;
	s.nvalues = 1;
	v[0] = val(2670, 2);		/* pwr "26.70" */
	storedb_append(f->st, &s);
	assert_int_equal(storedb_flush(f->st), 0);

	db = db_open(f);
	assert_true(view_value(db, "pwr", T0, 3) == 26.7);
	assert_int_equal(view_count(db, "gtemp", T0, 3), 0);
	assert_int_equal(q_int(db, "SELECT gtemp IS NULL FROM samples WHERE "
	    "device = 3 ORDER BY ts_ns LIMIT 1"), 1);
	assert_true(view_value(db, "busy", T0, 3) == 100.0);
	assert_true(view_value(db, "rdmem", T0, 3) == 22.767);
	assert_true(view_value(db, "actmem", T0, 3) == 0.0);
	assert_int_equal(view_count(db, "wrmem", T0, 3), 0);
	assert_int_equal(q_int(db, "SELECT smi_skew_s FROM samples WHERE "
	    "device = 3 ORDER BY ts_ns LIMIT 1"), -2);
	assert_int_equal(q_int(db, "SELECT interval_ms FROM samples WHERE "
	    "device = 3 ORDER BY ts_ns LIMIT 1"), 500);

	assert_true(view_value(db, "pwr", T0 + SEC, 3) == 26.75);
	assert_true(view_value(db, "gtemp", T0 + SEC, 3) == -5.5);
	assert_true(absd(view_value(db, "rdmem", T0 + SEC, 3) - 0.12345) <
	    1e-15);
	assert_true(absd(view_value(db, "actmem", T0 + SEC, 3) / 9e18 - 1.0) <
	    1e-12);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "smi_skew_s IS NULL"), 2);
	assert_true(view_value(db, "pwr", T0 + 2 * SEC, 3) == 26.7);
	/* pwr is stored scaled by 10^decimals */
	assert_int_equal(q_int(db, "SELECT pwr FROM samples WHERE ts_ns = "
	    "1750000002000000000"), 267);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sample_values"), 10);
	sqlite3_close(db);
}

static void
test_unknown_metric(void **state)
{
	struct fx *f = *state;
	int pwr, idnew, idbad, idfix, idm, again;
	struct store_stats ss;
	int ids[2];
	struct store_value v[2] = { val(123, 1), val(15, 1) };
	char buf[64], mkey[16], want[24], sql[80];
	sqlite3_stmt *s;
	sqlite3 *db;

	fx_open(f, 100);
	pwr = f->ids[def_index("pwr")];
	append_pwr(f, T0, 0, 250);
	append_pwr(f, T0, 1, 251);
	assert_int_equal(storedb_metric(f->st, "newm", "V", &idnew), 0);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.pending, 0);	/* written before the schema changed */
	assert_int_equal(ss.rows_written, 2);
	for (size_t i = 0; i < metric_ndefs; i++)
		assert_int_not_equal(idnew, f->ids[i]);
	ids[0] = pwr;
	ids[1] = idnew;
	append1(f->st, T0 + SEC, 0, 2, ids, v);
	/*
	 * Ids are assigned in order, so the key "m<idnew + 2>" is a plain
	 * column name that the next metric, whose key is not, would want.
	 */
	snprintf(mkey, sizeof(mkey), "m%d", idnew + 2);
	assert_int_equal(storedb_metric(f->st, mkey, "", &idm), 0);
	assert_int_equal(idm, idnew + 1);
	assert_int_equal(storedb_metric(f->st, "Bad-Key", "x/s", &idbad), 0);
	assert_int_equal(idbad, idnew + 2);
	assert_int_equal(storedb_metric(f->st, "ts_ns", "", &idfix), 0);
	ids[1] = idbad;
	append1(f->st, T0 + 2 * SEC, 0, 2, ids, v);
	ids[1] = idfix;
	append1(f->st, T0 + 3 * SEC, 0, 2, ids, v);
	assert_int_equal(storedb_metric(f->st, "newm", "V", &again), 0);
	assert_int_equal(again, idnew);
	fx_close(f);

	db = db_open(f);
	s = q_row(db, "SELECT unit, grp, description, reliable, decimals, col, "
	    "id FROM metrics WHERE key = 'newm'");
	assert_string_equal(sqlite3_column_text(s, 0), "V");
	assert_string_equal(sqlite3_column_text(s, 1), "?");
	assert_string_equal(sqlite3_column_text(s, 2), "");
	assert_int_equal(sqlite3_column_int(s, 3), 1);
	assert_int_equal(sqlite3_column_int(s, 4), 3);
	assert_string_equal(sqlite3_column_text(s, 5), "newm");
	assert_int_equal(sqlite3_column_int(s, 6), idnew);
	sqlite3_finalize(s);
	snprintf(sql, sizeof(sql), "SELECT col FROM metrics WHERE key = '%s'",
	    mkey);
	assert_string_equal(q_text(db, sql, buf, sizeof(buf)), mkey);
	snprintf(want, sizeof(want), "%s_1", mkey);
	assert_string_equal(q_text(db, "SELECT col FROM metrics WHERE "
	    "key = 'Bad-Key'", buf, sizeof(buf)), want);
	snprintf(want, sizeof(want), "m%d", idfix);
	assert_string_equal(q_text(db, "SELECT col FROM metrics WHERE "
	    "key = 'ts_ns'", buf, sizeof(buf)), want);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "newm IS NULL AND ts_ns = 1750000000000000000"), 2);
	assert_true(view_value(db, "newm", T0 + SEC, 0) == 1.5);
	assert_true(view_value(db, "Bad-Key", T0 + 2 * SEC, 0) == 1.5);
	assert_true(view_value(db, "ts_ns", T0 + 3 * SEC, 0) == 1.5);
	assert_int_equal(view_count(db, "newm", T0, 0), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sample_values "
	    "WHERE metric = 'pwr'"), 5);
	sqlite3_close(db);

	/* the catalog persists: same ids, no new columns */
	fx_open(f, 100);
	assert_int_equal(storedb_metric(f->st, "Bad-Key", "", &again), 0);
	assert_int_equal(again, idbad);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM metrics"),
	    (int64_t)metric_ndefs + 4);
	sqlite3_close(db);
}

static void
test_timestamps_adjusted(void **state)
{
	struct fx *f = *state;
	const int64_t want[] = { T0 - SEC, T0, T0 + 1, T0 + 2, T0 + 3,
	    T0 + SEC };
	const int pwr[] = { 5, 1, 2, 3, 4, 6 };
	sqlite3_stmt *s;
	sqlite3 *db;
	int i = 0;

	fx_open(f, 100);
	append_pwr(f, T0, 0, 1);
	append_pwr(f, T0, 0, 2);		/* duplicate */
	append_pwr(f, T0 - SEC / 20, 0, 3);	/* back 50 ms: moved after */
	append_pwr(f, T0, 1, 9);		/* another device: untouched */
	append_pwr(f, T0 + 2, 0, 4);		/* not after the adjusted T0 + 2 */
	append_pwr(f, T0 - SEC, 0, 5);		/* clock stepped back: kept */
	append_pwr(f, T0 + SEC, 0, 6);
	assert_int_equal(storedb_flush(f->st), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 7);
	assert_int_equal(q_int(db, "SELECT ts_ns FROM samples WHERE "
	    "device = 1"), T0);
	if (sqlite3_prepare_v2(db, "SELECT ts_ns, pwr FROM samples WHERE "
	    "device = 0 ORDER BY ts_ns", -1, &s, NULL) != SQLITE_OK)
		fail();
	while (sqlite3_step(s) == SQLITE_ROW) {
		assert_true(i < 6);
		assert_int_equal(sqlite3_column_int64(s, 0), want[i]);
		assert_int_equal(sqlite3_column_int64(s, 1), pwr[i]);
		i++;
	}
	assert_int_equal(i, 6);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

static void
test_flush_busy_keeps_rows(void **state)
{
	struct fx *f = *state;
	struct store_stats ss;
	sqlite3 *db;
	int id;

	fx_open(f, 1000);
	db = db_open(f);
	db_exec(db, "BEGIN IMMEDIATE");
	for (int i = 0; i < 10; i++)
		append_pwr(f, T0 + i * SEC, 0, i);
	assert_int_equal(storedb_flush(f->st), -1);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.pending, 10);
	assert_int_equal(ss.flushes_failed, 1);
	assert_int_equal(ss.rows_written, 0);
	append_pwr(f, T0 + 10 * SEC, 0, 10);
	/* a new metric cannot be added either, and nothing changes */
	assert_int_equal(storedb_metric(f->st, "newm", "", &id), -1);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.pending, 11);
	db_exec(db, "COMMIT");
	assert_int_equal(q_int(db, "SELECT count(*) FROM metrics WHERE "
	    "key = 'newm'"), 0);
	assert_int_equal(storedb_flush(f->st), 0);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.pending, 0);
	assert_int_equal(ss.rows_written, 11);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 11);
	assert_int_equal(q_int(db, "SELECT count(DISTINCT pwr) FROM samples"),
	    11);
	assert_int_equal(storedb_metric(f->st, "newm", "", &id), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM metrics WHERE "
	    "key = 'newm'"), 1);
	sqlite3_close(db);
}

/*
 * A row whose key is already stored (the clock set back, across a restart
 * here) is stored a ns later, not dropped.
 */
static void
test_duplicate_key_nudged(void **state)
{
	struct fx *f = *state;
	struct store_stats ss;
	sqlite3 *db;

	fx_open(f, 100);
	append_pwr(f, T0, 0, 1);
	fx_close(f);
	fx_open(f, 100);
	append_pwr(f, T0 - SEC, 0, 2);
	append_pwr(f, T0, 0, 3);
	append_pwr(f, T0 + SEC, 0, 4);
	assert_int_equal(storedb_flush(f->st), 0);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.rows_written, 3);
	assert_int_equal(ss.rows_dropped, 0);
	assert_int_equal(ss.rows_nudged, 1);
	assert_int_equal(ss.pending, 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 4);
	assert_int_equal(q_int(db, "SELECT pwr FROM samples WHERE "
	    "ts_ns = 1750000000000000000"), 1);
	assert_int_equal(q_int(db, "SELECT pwr FROM samples WHERE "
	    "ts_ns = 1750000000000000001"), 3);
	sqlite3_close(db);
}

/* SQLITE_FULL in the middle of the inserts: the whole flush rolls back. */
static void
test_flush_full_keeps_rows(void **state)
{
	struct fx *f = *state;
	struct store_stats ss;
	char sql[64];
	int64_t pages;
	sqlite3 *db;

	fx_open(f, 100000);
	assert_int_equal(sql_pragma_int(f->st->db, "page_count", &pages), 0);
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
	    (long long)pages + 8);
	assert_int_equal(sql_exec(f->st, "test", sql), 0);
	for (int i = 0; i < 3000; i++)
		append_pwr(f, T0 + i * SEC, i % 8, i);
	assert_int_equal(storedb_flush(f->st), -1);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.pending, 3000);
	assert_int_equal(ss.flushes_failed, 1);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(sql_exec(f->st, "test",
	    "PRAGMA max_page_count = 1000000"), 0);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 3000);
	assert_int_equal(q_int(db, "SELECT count(DISTINCT pwr) FROM samples"),
	    3000);
	sqlite3_close(db);
}

static void
test_max_pending_drops_oldest(void **state)
{
	struct fx *f = *state;
	struct store_stats ss;
	sqlite3 *db;

	fx_open(f, 5);
	for (int i = 0; i < 8; i++)
		append_pwr(f, T0 + i * SEC, 0, i);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.pending, 5);
	assert_int_equal(ss.rows_dropped, 3);
	assert_int_equal(ss.newest_ts_ns, T0 + 7 * SEC);
	assert_int_equal(storedb_flush(f->st), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 5);
	assert_int_equal(q_int(db, "SELECT min(pwr) FROM samples"), 3);
	assert_int_equal(q_int(db, "SELECT max(pwr) FROM samples"), 7);
	sqlite3_close(db);
}

static void
test_close_flushes(void **state)
{
	struct fx *f = *state;
	char wal[160];
	struct stat sb;
	sqlite3 *db;

	fx_open(f, 10000);
	for (int i = 0; i < 1000; i++)
		append_pwr(f, T0 + i * SEC, i % 4, i);
	fx_close(f);
	snprintf(wal, sizeof(wal), "%s-wal", f->db.path);
	assert_true(stat(wal, &sb) == -1 || sb.st_size == 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 1000);
	sqlite3_close(db);
}

static void
test_device_map_and_cards(void **state)
{
	struct fx *f = *state;
	struct card c = { .bus_id = "0000:13:00.0", .vf = false,
	    .numa_node = -1, .driver = "", .link_speed = "16.0 GT/s PCIe",
	    .link_width = 16 };
	sqlite3_stmt *s;
	sqlite3 *db;

	fx_open(f, 10);
	assert_int_equal(storedb_device_map(f->st, 0, "/tmp/metrics.0000:13:00.0",
	    "0000:13:00.0", T0), 0);
	assert_int_equal(storedb_device_map(f->st, 0, "/tmp/metrics.0000:13:00.0",
	    "0000:13:00.0", T0 + SEC), 0);
	assert_int_equal(storedb_device_map(f->st, 1, "/tmp/metrics.0000:12:00.0",
	    NULL, T0 + SEC), 0);
	assert_int_equal(storedb_device_map(f->st, 0, "/tmp/metrics.0000:12:00.0",
	    "0000:12:00.0", T0 + 2 * SEC), 0);
	assert_int_equal(storedb_card(f->st, &c, T0), 0);
	c.numa_node = 1;
	snprintf(c.driver, sizeof(c.driver), "vfio-pci");
	c.vf = true;
	assert_int_equal(storedb_card(f->st, &c, T0 + HOUR), 0);

	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM device_map"), 3);
	assert_int_equal(q_int(db, "SELECT count(*) FROM device_map WHERE "
	    "device = 0"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM device_map WHERE "
	    "device = 1 AND bus_id = ''"), 1);
	assert_int_equal(q_int(db, "SELECT since_ns FROM device_map WHERE "
	    "device = 0 AND bus_id = '0000:12:00.0'"), T0 + 2 * SEC);
	assert_int_equal(q_int(db, "SELECT count(*) FROM cards"), 1);
	s = q_row(db, "SELECT function, numa_node, driver, link_speed, "
	    "link_width, first_seen_ns, last_seen_ns FROM cards");
	assert_string_equal(sqlite3_column_text(s, 0), "vf");
	assert_int_equal(sqlite3_column_int(s, 1), 1);
	assert_string_equal(sqlite3_column_text(s, 2), "vfio-pci");
	assert_string_equal(sqlite3_column_text(s, 3), "16.0 GT/s PCIe");
	assert_int_equal(sqlite3_column_int(s, 4), 16);
	assert_int_equal(sqlite3_column_int64(s, 5), T0);
	assert_int_equal(sqlite3_column_int64(s, 6), T0 + HOUR);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/* ---- migrations and refusals ---- */

static void
test_migrate_from_v1(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;

	assert_int_equal(store_create_version(f->db.path, 1), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "PRAGMA user_version"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('device_map', 'windows')"), 0);
	db_exec(db, "INSERT INTO samples (ts_ns, device, interval_ms, pwr) "
	    "VALUES (1750000000000000000, 2, 1000, 267)");
	sqlite3_close(db);

	fx_open(f, 10);
	db = db_open(f);
	assert_int_equal(q_int(db, "PRAGMA user_version"), SCHEMA_VERSION);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('device_map', 'windows')"), 2);
	assert_true(view_value(db, "pwr", T0, 2) == 26.7);
	sqlite3_close(db);
	assert_int_equal(storedb_device_map(f->st, 2, "/m", "b", T0), 0);
}

/* v2 -> v3 adds imports (and its index) and keeps everything else. */
static void
test_migrate_from_v2(void **state)
{
	struct fx *f = *state;
	struct store_import imp = { .path = "/tmp/log.csv", .format = "aiusmi",
	    .device = 2, .first_ns = T0, .last_ns = T0 + SEC, .coarse = true,
	    .imported_ns = T0 + HOUR };
	char buf[64];
	sqlite3 *db;

	assert_int_equal(store_create_version(f->db.path, 2), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "PRAGMA user_version"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('imports', 'imports_device')"), 0);
	db_exec(db, "INSERT INTO samples (ts_ns, device, interval_ms, pwr) "
	    "VALUES (1750000000000000000, 2, 1000, 267)");
	db_exec(db, "INSERT INTO device_map VALUES (2, '/m', 'b', 1)");
	db_exec(db, "INSERT INTO windows (tag, uid, pid, begin_ns) "
	    "VALUES ('w', 0, 1, 5)");
	sqlite3_close(db);

	fx_open(f, 10);
	db = db_open(f);
	assert_int_equal(q_int(db, "PRAGMA user_version"), SCHEMA_VERSION);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('imports', 'imports_device')"), 2);
	assert_true(view_value(db, "pwr", T0, 2) == 26.7);
	assert_string_equal(q_text(db, "SELECT bus_id FROM device_map",
	    buf, sizeof(buf)), "b");
	assert_string_equal(q_text(db, "SELECT tag FROM windows", buf,
	    sizeof(buf)), "w");
	assert_int_equal(q_int(db, "SELECT count(*) FROM imports"), 0);
	/* v3 -> v4: the summary tables; the window is there, unsummarized */
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('window_summary', 'window_summary_bw')"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM windows WHERE "
	    "summarized_ns IS NULL AND ended_by IS NULL AND until_pid IS NULL "
	    "AND clock_begin_synced IS NULL"), 1);
	sqlite3_close(db);

	assert_int_equal(storedb_import_record(f->st, &imp), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM imports WHERE "
	    "path = '/tmp/log.csv' AND format = 'aiusmi' AND device = 2 AND "
	    "first_ns = 1750000000000000000 AND "
	    "last_ns = 1750000001000000000 AND coarse = 1"), 1);
	sqlite3_close(db);
}

/*
 * v3 -> v8: v6 adds src, seq and arrival_ns to samples, NULL in old rows;
 * v7 the index of the rows with src; v8 the empty smi_versions table.
 */
static void
test_migrate_from_v3(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;

	assert_int_equal(store_create_version(f->db.path, 3), 0);
	db = db_open(f);
	db_exec(db, "INSERT INTO samples (ts_ns, device, interval_ms, pwr) "
	    "VALUES (1750000000000000000, 2, 1000, 267)");
	sqlite3_close(db);
	fx_open(f, 10);
	db = db_open(f);
	assert_int_equal(q_int(db, "PRAGMA user_version"), SCHEMA_VERSION);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "src IS NULL AND seq IS NULL AND arrival_ns IS NULL"), 1);
	/* v7: the index of file rows, empty until one is stored */
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples INDEXED BY "
	    "samples_file WHERE src IS NOT NULL"), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM smi_versions"), 0);
	assert_true(view_value(db, "pwr", T0, 2) == 26.7);
	sqlite3_close(db);
}

/*
 * Rows of the metric file and of aiu-smi for one device: each source's
 * stamps are kept as given even when they interleave, src, seq and
 * arrival_ns are stored, and replacing rows touches one source only.
 */
static void
test_sources(void **state)
{
	struct fx *f = *state;
	int id;
	struct store_value v = val(420, 1);
	struct store_sample s = { .device = 0, .interval_ms = 10,
	    .nvalues = 1, .metric = &id, .values = &v };
	sqlite3 *db;

	fx_open(f, 100);
	id = f->ids[def_index("pwr")];
	append_pwr(f, T0 + 5 * MSEC, 0, 1);		/* aiu-smi, at arrival */
	s.src = SCHEMA_SRC_FILE;
	s.have_seq = true;
	for (int i = 0; i < 3; i++) {		/* the writer's earlier times */
		s.ts_ns = T0 + i * MSEC;
		s.seq = 7 + (uint32_t)i;
		s.arrival_ns = T0 + 6 * MSEC;
		storedb_append(f->st, &s);
	}
	append_pwr(f, T0 + 6 * MSEC, 0, 2);
	assert_int_equal(storedb_flush(f->st), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE src = 1 "
	    "AND ts_ns - seq * 1000000 = 1750000000000000000 - 7000000 AND "
	    "arrival_ns = 1750000000006000000 AND pwr = 420"), 3);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "src IS NULL AND seq IS NULL AND arrival_ns IS NULL"), 2);
	assert_int_equal(storedb_delete_after_src(f->st, 0, SCHEMA_SRC_FILE,
	    T0), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 3);
	assert_int_equal(storedb_delete_after(f->st, 0, T0), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 1);
	sqlite3_close(db);
}

/*
 * Energy with two sources (bestsrc.h): a card's file rows with pwr count,
 * its aiu-smi rows in the same write do not, nor while the file's last
 * pwr is within three aiu-smi intervals; after that aiu-smi counts again.
 */
static void
test_counters_two_sources(void **state)
{
	struct fx *f = *state;
	int id;
	struct store_value v = val(1000, 1);	/* 100 W */
	struct store_sample s = { .device = 0, .interval_ms = 100,
	    .src = SCHEMA_SRC_FILE, .nvalues = 1, .metric = &id, .values = &v };
	sqlite3 *db;

#define ENERGY "SELECT value FROM counters WHERE name = 'energy_joules' " \
	"AND device = 0"
	fx_open(f, 100);
	id = f->ids[def_index("pwr")];
	append_pwr(f, T0 + SEC + 3 * MSEC, 0, 500);	/* 50 W over 1 s */
	for (int i = 1; i <= 10; i++) {
		s.ts_ns = T0 + i * 100 * MSEC;
		storedb_append(f->st, &s);
	}
	assert_int_equal(storedb_flush(f->st), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, ENERGY), 100);
	/* the file is quiet for 1 s: aiu-smi's row still does not count */
	append_pwr(f, T0 + 2 * SEC, 0, 500);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(q_int(db, ENERGY), 100);
	/* for 4 s: it does */
	append_pwr(f, T0 + 5 * SEC, 0, 500);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(q_int(db, ENERGY), 150);
	assert_int_equal(q_int(db, "SELECT through_ns FROM counters WHERE "
	    "name = 'energy_joules'"), T0 + 5 * SEC);
	sqlite3_close(db);
#undef ENERGY
}

/*
 * A transaction of the caller's: committed whole, or (a row already
 * stored) rolled back whole, device map and import record included.
 */
static void
test_tx_all_or_nothing(void **state)
{
	struct fx *f = *state;
	struct store_import imp = { .path = "a.csv", .format = "csv",
	    .device = 0, .first_ns = T0, .last_ns = T0 + SEC,
	    .imported_ns = T0 };
	struct store_taken t;
	sqlite3 *db;

	fx_open(f, 10);
	assert_int_equal(storedb_tx_begin(f->st), 0);
	assert_int_equal(storedb_tx_begin(f->st), -1);
	assert_int_equal(storedb_device_map(f->st, 0, "", "0000:13:00.0", T0), 0);
	append_pwr(f, T0, 0, 1);
	append_pwr(f, T0 + SEC, 0, 2);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(storedb_import_record(f->st, &imp), 0);
	/* another connection sees none of it before the commit */
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM device_map"), 0);
	assert_int_equal(storedb_tx_commit(f->st), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM imports"), 1);

	assert_int_equal(storedb_span_taken(f->st, 0, T0 - SEC, T0 + SEC, &t), 0);
	assert_int_equal(t.samples, 2);
	assert_int_equal(t.oldest_ns, T0);
	assert_true(t.imported);
	assert_int_equal(t.import_first_ns, T0);
	assert_int_equal(storedb_span_taken(f->st, 1, T0, T0 + SEC, &t), 0);
	assert_int_equal(t.samples, 0);
	assert_false(t.imported);
	assert_int_equal(storedb_span_taken(f->st, 0, T0 + 2 * SEC, T0 + HOUR,
	    &t), 0);
	assert_int_equal(t.samples, 0);
	assert_false(t.imported);

	/*
	 * A stored key inside the transaction fails it whole; the key is
	 * written by another connection, since the store itself moves a
	 * device's stamp that does not increase.
	 */
	db_exec(db, "INSERT INTO samples (ts_ns, device, interval_ms) VALUES "
	    "(1750000005000000000, 1, 1000)");
	assert_int_equal(storedb_tx_begin(f->st), 0);
	assert_int_equal(storedb_device_map(f->st, 0, "", "0000:14:00.0",
	    T0 + 2 * SEC), 0);
	imp.first_ns = imp.last_ns = T0 + 2 * SEC;
	assert_int_equal(storedb_import_record(f->st, &imp), 0);
	append_pwr(f, T0 + 2 * SEC, 0, 3);
	assert_int_equal(storedb_flush(f->st), 0);
	append_pwr(f, T0 + 3 * SEC, 0, 4);
	append_pwr(f, T0 + 5 * SEC, 1, 5);	/* stored already */
	assert_int_equal(storedb_flush(f->st), -1);
	assert_int_equal(storedb_tx_commit(f->st), -1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 3);
	assert_int_equal(q_int(db, "SELECT count(*) FROM device_map"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM imports"), 1);
	assert_int_equal(q_int(db, "SELECT pwr FROM samples WHERE "
	    "ts_ns = 1750000001000000000"), 2);
	/* nothing of it is left to write on close */
	fx_close(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 3);
	sqlite3_close(db);
}

/* Metrics join the catalog outside a transaction only. */
static void
test_tx_refuses_new_metric(void **state)
{
	struct fx *f = *state;
	int id;

	fx_open(f, 10);
	assert_int_equal(storedb_tx_begin(f->st), 0);
	assert_int_equal(storedb_metric(f->st, "newm", "", &id), -1);
	assert_int_equal(storedb_metric(f->st, "pwr", "W", &id), 0);
	storedb_tx_rollback(f->st);
	assert_int_equal(storedb_metric(f->st, "newm", "", &id), 0);
}

/* A mapping recorded before the newest one compares with the one then. */
static void
test_device_map_in_force(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;

	fx_open(f, 10);
	assert_int_equal(storedb_device_map(f->st, 0, "", "A", T0 + HOUR), 0);
	assert_int_equal(storedb_device_map(f->st, 0, "", "A", T0), 0);
	assert_int_equal(storedb_device_map(f->st, 0, "", "A", T0 + SEC), 0);
	assert_int_equal(storedb_device_map(f->st, 0, "", "A", T0 + 2 * HOUR), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM device_map"), 2);
	assert_int_equal(q_int(db, "SELECT min(since_ns) FROM device_map"), T0);
	sqlite3_close(db);
}

/*
 * aiu-smi's version: a row where it changes only, compared with the one
 * in force at the time given (restarts of the same aiu-smi add nothing).
 */
static void
test_smi_version(void **state)
{
	struct fx *f = *state;
	char sql[256];
	sqlite3 *db;

	fx_open(f, 10);
	assert_int_equal(storedb_smi_version(f->st, "aiu-smi 1.2.0", T0), 0);
	assert_int_equal(storedb_smi_version(f->st, "aiu-smi 1.2.0", T0 + SEC),
	    0);
	assert_int_equal(storedb_smi_version(f->st, "aiu-smi 1.3.0", T0 + HOUR),
	    0);
	assert_int_equal(storedb_smi_version(f->st, "aiu-smi 1.3.0",
	    T0 + 2 * HOUR), 0);
	/* back to the old one, then a restart of it */
	assert_int_equal(storedb_smi_version(f->st, "aiu-smi 1.2.0",
	    T0 + 3 * HOUR), 0);
	assert_int_equal(storedb_smi_version(f->st, "aiu-smi 1.2.0",
	    T0 + 4 * HOUR), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM smi_versions"), 3);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM smi_versions WHERE "
	    "(since_ns = %lld AND version = 'aiu-smi 1.2.0') OR "
	    "(since_ns = %lld AND version = 'aiu-smi 1.3.0') OR "
	    "(since_ns = %lld AND version = 'aiu-smi 1.2.0')", T0, T0 + HOUR,
	    T0 + 3 * HOUR);
	assert_int_equal(q_int(db, sql), 3);
	sqlite3_close(db);
}

static void
test_newer_refused(void **state)
{
	struct fx *f = *state;
	char sql[64];
	sqlite3 *db;

	fx_open(f, 10);
	fx_close(f);
	db = db_open(f);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
	    SCHEMA_VERSION + 1);
	db_exec(db, sql);
	sqlite3_close(db);
	assert_int_equal(storedb_open(f->db.path, 10, &f->st), -1);
	assert_null(f->st);
}

static void
test_foreign_refused(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;
	FILE *fp;

	assert_int_equal(sqlite3_open(f->db.path, &db), SQLITE_OK);
	db_exec(db, "CREATE TABLE recipes (name TEXT)");
	sqlite3_close(db);
	assert_int_equal(storedb_open(f->db.path, 10, &f->st), -1);
	assert_null(f->st);
	db = db_open(f);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master"), 1);
	assert_int_equal(q_int(db, "PRAGMA user_version"), 0);
	sqlite3_close(db);

	/* not SQLite at all */
	assert_non_null(fp = fopen(f->db.path, "w"));
	for (int i = 0; i < 200; i++)
		fputs("this is a text file, not a database\n", fp);
	fclose(fp);
	assert_int_equal(storedb_open(f->db.path, 10, &f->st), -1);
}

/* ---- retention ---- */

static void
run_retention(struct fx *f, const struct store_retention *r, int64_t now)
{
	int rc, steps = 0;

	while ((rc = storedb_retention_step(f->st, r, now, 50000000)) == 1)
		assert_true(++steps < 10000);
	assert_int_equal(rc, 0);
}

/* A profiling window, summarized at its end; end 0: still open. */
static void
add_window(sqlite3 *db, int64_t begin, int64_t end)
{
	char end_sql[32] = "NULL";
	sqlite3_stmt *s;

	if (end != 0)
		snprintf(end_sql, sizeof(end_sql), "%lld", (long long)end);
	s = q_row(db, "INSERT INTO windows (tag, uid, pid, begin_ns, end_ns, "
	    "summarized_ns) VALUES ('t', 0, 1, %lld, %s, %s) RETURNING id",
	    (long long)begin, end_sql, end_sql);
	sqlite3_finalize(s);
}

static void
test_retention_age_and_windows(void **state)
{
	struct fx *f = *state;
	const int64_t n = 3 * 3600;	/* seconds of data, 2 cards */
	const int64_t now = T0 + n * SEC;
	struct store_retention r = { .max_age_ns = HOUR,
	    .windows_max_age_ns = 10000 * SEC };
	/* at now, kept ended 9600 s ago, old 10600 s ago; open has no end */
	const int64_t kept_b = T0 + 600 * SEC, kept_e = T0 + 1200 * SEC;
	const int64_t old_b = T0 + 100 * SEC, old_e = T0 + 200 * SEC;
	const int64_t open_b = T0 + 2000 * SEC;
	int64_t want = 0, ts;
	struct store_stats ss;
	sqlite3 *db;

	fx_open(f, 100000);
	for (int64_t i = 0; i <= n; i++) {
		append_pwr(f, T0 + i * SEC, 0, i);
		append_pwr(f, T0 + i * SEC, 1, i);
	}
	assert_int_equal(storedb_flush(f->st), 0);
	db = db_open(f);
	add_window(db, kept_b, kept_e);
	add_window(db, old_b, old_e);
	add_window(db, open_b, 0);
	/* the documented rule: a row at ts (interval 1 s) survives if it is
	 * not older than max_age or lies within 1 s of a protected window */
	for (int64_t i = 0; i <= n; i++) {
		ts = T0 + i * SEC;
		if (ts >= now - HOUR ||
		    (ts >= kept_b - SEC && ts <= kept_e + SEC) ||
		    ts >= open_b - SEC)
			want += 2;
	}
	run_retention(f, &r, now);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), want);
	assert_int_equal(ss.rows_deleted, 2 * (n + 1) - want);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "ts_ns BETWEEN 1750000100000000000 AND 1750000200000000000"), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "ts_ns BETWEEN 1750000600000000000 AND 1750001200000000000"),
	    2 * 601);
	assert_true(want < 2 * (n + 1));

	/* the open window closes long ago: its rows stay until its
	 * summary is stored, then they go too */
	db_exec(db, "UPDATE windows SET end_ns = 1750002100000000000 "
	    "WHERE end_ns IS NULL");
	run_retention(f, &r, now + 3 * HOUR);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "ts_ns BETWEEN 1750002000000000000 AND 1750002100000000000"),
	    2 * 101);
	db_exec(db, "UPDATE windows SET summarized_ns = end_ns");
	run_retention(f, &r, now + 3 * HOUR);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 0);
	sqlite3_close(db);
}

/* Steps of the host clock move the age cutoff into the clock before them. */
static void
test_age_cutoff(void **state)
{
	const struct store_clock_step fwd = { HOUR, T0 + 4 * HOUR };
	const struct store_clock_step back = { -HOUR, T0 + 2 * HOUR };
	/* forward an hour at T0 + 3 h, then back an hour half an hour on */
	const struct store_clock_step both[] = { fwd,
	    { -HOUR, T0 + 3 * HOUR + 1800 * SEC } };

	(void)state;
	assert_true(storedb_age_cutoff(T0, HOUR, NULL, 0) == T0 - HOUR);
	/* just after a step forward an hour, rows an hour old by the clock
	 * that stamped them were stamped two hours before now */
	assert_true(storedb_age_cutoff(T0 + 4 * HOUR, HOUR, &fwd, 1) ==
	    T0 + 2 * HOUR);
	/* a cutoff after the step is in the clock after it */
	assert_true(storedb_age_cutoff(T0 + 6 * HOUR, HOUR, &fwd, 1) ==
	    T0 + 5 * HOUR);
	/* ten minutes after a step back an hour */
	assert_true(storedb_age_cutoff(T0 + 2 * HOUR + 600 * SEC, HOUR, &back,
	    1) == T0 + 2 * HOUR + 600 * SEC);
	/* ten minutes after both, two hours back crosses both, newest
	 * first: 80 min to the first step, 30 min, 10 min */
	assert_true(storedb_age_cutoff(T0 + 3 * HOUR + 2400 * SEC, 2 * HOUR,
	    both, 2) == T0 + 6000 * SEC);
	assert_true(storedb_age_cutoff(INT64_MIN + 5, HOUR, NULL, 0) ==
	    INT64_MIN);
}

/*
 * Retention by age after a step of the host clock: rows stamped before it
 * are aged by the clock that stamped them, so a step forward deletes no
 * row younger than max_age and a step back leaves none older.
 */
static void
test_retention_clock_steps(void **state)
{
	struct fx *f = *state;
	const int64_t n = 3 * 3600;	/* rows at T0 .. T0 + 3 h, 1 s apart */
	struct store_retention r = { .max_age_ns = HOUR };
	sqlite3 *db;

	fx_open(f, 100000);
	for (int64_t i = 0; i <= n; i++)
		append_pwr(f, T0 + i * SEC, 0, i);
	assert_int_equal(storedb_flush(f->st), 0);
	db = db_open(f);

	/* back an hour after the last row; ten minutes later the rows of the
	 * last 50 minutes of the old clock are younger than an hour */
	store_clock_stepped(f->st, -HOUR, T0 + 2 * HOUR);
	run_retention(f, &r, T0 + 2 * HOUR + 600 * SEC);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 3000 + 1);
	assert_int_equal(q_int(db, "SELECT min(ts_ns) FROM samples") ==
	    T0 + 2 * HOUR + 600 * SEC, 1);

	/* then forward two hours, with no time passed: the same rows are
	 * kept, though the clock now reads an hour past the last row */
	store_clock_stepped(f->st, 2 * HOUR, T0 + 4 * HOUR + 600 * SEC);
	run_retention(f, &r, T0 + 4 * HOUR + 600 * SEC);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples"), 3000 + 1);
	sqlite3_close(db);
}

static uint64_t
file_size(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return (uint64_t)sb.st_size;
}

static void
test_retention_max_size(void **state)
{
	struct fx *f = *state;
	struct store_retention r = { .max_age_ns = 365 * 24 * HOUR,
	    .windows_max_age_ns = 365 * 24 * HOUR };
	const size_t rows = 100000;
	const int64_t now = T0 + (int64_t)(rows / 8) * SEC;
	uint64_t before, used;
	int64_t pages, lo, hi, count;
	sqlite3 *db;

	fx_open(f, 1000);
	fill_all_metrics(f, T0, rows);
	db = db_open(f);
	/* the oldest 1000 s are a window: size pressure takes them last */
	add_window(db, T0, T0 + 1000 * SEC);
	db_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
	before = file_size(f->db.path);
	r.max_size = before / 2;
	run_retention(f, &r, now);

	assert_int_equal(sql_used_bytes(f->st->db, &used), 0);
	assert_true(used <= r.max_size);
	assert_int_equal(sql_pragma_int(f->st->db, "page_count", &pages), 0);
	assert_true((uint64_t)pages * 4096 <= r.max_size);
	assert_true(file_size(f->db.path) < before);
	assert_true(file_size(f->db.path) <= r.max_size);
	/* window rows intact; outside it the newest survive, contiguously */
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "ts_ns <= 1750001000000000000"), 8 * 1001);
	lo = q_int(db, "SELECT min(ts_ns) FROM samples WHERE "
	    "ts_ns > 1750001001000000000");
	hi = q_int(db, "SELECT max(ts_ns) FROM samples");
	count = q_int(db, "SELECT count(*) FROM samples WHERE "
	    "ts_ns > 1750001001000000000");
	assert_int_equal(hi, T0 + (int64_t)(rows / 8 - 1) * SEC);
	assert_true(lo > T0 + 1001 * SEC);
	assert_int_equal(count, ((hi - lo) / SEC + 1) * 8);

	/* a limit below the window's own size: window rows go too */
	r.max_size = 256 * 1024;
	run_retention(f, &r, now);
	assert_int_equal(sql_used_bytes(f->st->db, &used), 0);
	assert_true(used <= r.max_size);
	assert_true(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "ts_ns <= 1750001000000000000") < 8 * 1001);
	assert_true(q_int(db, "SELECT count(*) FROM samples") > 0);
	sqlite3_close(db);
}

static void
test_retention_budget(void **state)
{
	struct fx *f = *state;
	struct store_retention r = { .max_age_ns = HOUR,
	    .windows_max_age_ns = HOUR };
	struct store_stats ss;
	int rc;

	fx_open(f, 100000);
	for (int i = 0; i < 10000; i++)
		append_pwr(f, T0 + i * SEC, i % 4, i);
	assert_int_equal(storedb_flush(f->st), 0);
	rc = storedb_retention_step(f->st, &r, T0 + 100 * HOUR, 1);
	assert_int_equal(rc, 1);
	storedb_get_stats(f->st, &ss);
	assert_true(ss.rows_deleted > 0);
	assert_true(ss.rows_deleted <= RETENTION_CHUNK_INITIAL);
	run_retention(f, &r, T0 + 100 * HOUR);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.rows_deleted, 10000);
	/* nothing left to do: one call completes a pass */
	assert_int_equal(storedb_retention_step(f->st, &r, T0 + 100 * HOUR,
	    1000000000), 0);
}

/* ---- query plans and size ---- */

/* Every access to samples in sql's plan is a primary-key SEARCH; returns how many. */
static int
plan_searches(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	char *eqp = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
	const char *want = "SEARCH samples USING PRIMARY KEY (ts_ns";
	int n = 0;

	if (sqlite3_prepare_v2(db, eqp, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", eqp, sqlite3_errmsg(db));
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(s, 3);

		print_message("  %s\n", d);
		if (strstr(d, "samples") == NULL)
			continue;
		assert_true(strncmp(d, want, strlen(want)) == 0);
		n++;
	}
	sqlite3_finalize(s);
	sqlite3_free(eqp);
	return n;
}

static void
test_query_plans(void **state)
{
	struct fx *f = *state;
	int extra;
	sqlite3 *db;

	fx_open(f, 10);
	assert_int_equal(storedb_metric(f->st, "Odd Key", "", &extra), 0);
	db = db_open(f);
	assert_int_equal(plan_searches(db, "SELECT * FROM sample_values "
	    "WHERE ts_ns BETWEEN ?1 AND ?2"), (int)metric_ndefs + 1);
	assert_int_equal(plan_searches(db, "SELECT metric, value FROM "
	    "sample_values WHERE ts_ns >= ?1 AND ts_ns < ?2 AND device = 3"),
	    (int)metric_ndefs + 1);
	assert_int_equal(plan_searches(db, retention_sql_bound), 1);
	assert_int_equal(plan_searches(db, retention_sql_delete_free), 1);
	assert_int_equal(plan_searches(db, retention_sql_delete_any), 1);
	sqlite3_close(db);
}

static void
test_bytes_per_value(void **state)
{
	struct fx *f = *state;
	const size_t rows = 100000;
	int64_t pages, page_size;
	struct store_stats ss;
	double bpv;

	fx_open(f, 1000);
	fill_all_metrics(f, T0, rows);
	assert_int_equal(sql_pragma_int(f->st->db, "page_count", &pages), 0);
	assert_int_equal(sql_pragma_int(f->st->db, "page_size", &page_size),
	    0);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.rows_written, rows);
	assert_int_equal(ss.file_bytes, (uint64_t)(pages * page_size));
	bpv = (double)(pages * page_size) / (double)(rows * metric_ndefs);
	print_message("%zu rows x %zu metrics: %" PRId64 " bytes, %.2f bytes "
	    "per value\n", rows, metric_ndefs, pages * page_size, bpv);
	assert_true(bpv < 6.0);
}

/*
 * Version 5's running totals: energy sums pwr times interval over rows
 * newer than the device's last counted one (a row replacing stored time
 * adds nothing), samples counts rows
 * written, deltas from the daemon are written even without rows, and
 * everything continues after a reopen.  The host table names this host.
 */
static void
test_counters(void **state)
{
	struct fx *f = *state;
	char host[256] = "", buf[256];
	sqlite3 *db;

#define ENERGY "SELECT value FROM counters WHERE name = 'energy_joules' " \
	"AND device = 0"
#define SCALAR(n) "SELECT value FROM counters WHERE name = '" n "' " \
	"AND device = -1"
	fx_open(f, 10);
	append_pwr(f, T0, 0, 500);		/* 50 W over 1 s */
	append_pwr(f, T0 + SEC, 0, 1000);	/* 100 W over 1 s */
	assert_int_equal(storedb_flush(f->st), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, ENERGY), 150);
	assert_int_equal(q_int(db, "SELECT through_ns FROM counters WHERE "
	    "name = 'energy_joules'"), T0 + SEC);
	assert_int_equal(q_int(db, SCALAR("samples")), 2);
	sqlite3_close(db);

	/* the replaced second is not counted twice; the next one is */
	assert_int_equal(storedb_delete_after(f->st, 0, T0), 0);
	append_pwr(f, T0 + SEC / 2, 0, 2000);
	append_pwr(f, T0 + 2 * SEC, 0, 100);
	assert_int_equal(storedb_flush(f->st), 0);
	store_counter_add(f->st, STORE_COUNTER_CHILD_RESTARTS, 2);
	store_counter_add(f->st, STORE_COUNTER_REJECTED_LINES, 5);
	assert_int_equal(storedb_flush(f->st), 0);
	db = db_open(f);
	assert_int_equal(q_int(db, ENERGY), 160);
	assert_int_equal(q_int(db, SCALAR("samples")), 4);
	assert_int_equal(q_int(db, SCALAR("child_restarts")), 2);
	assert_int_equal(q_int(db, SCALAR("rejected_lines")), 5);
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	assert_string_equal(q_text(db, "SELECT hostname FROM host", buf,
	    sizeof(buf)), host);
	sqlite3_close(db);

	/* a restart continues from the stored totals */
	fx_close(f);
	fx_open(f, 10);
	append_pwr(f, T0 + 3 * SEC, 0, 100);
	store_counter_add(f->st, STORE_COUNTER_CHILD_RESTARTS, 1);
	fx_close(f);
	db = db_open(f);
	assert_int_equal(q_int(db, ENERGY), 170);
	assert_int_equal(q_int(db, SCALAR("samples")), 5);
	assert_int_equal(q_int(db, SCALAR("child_restarts")), 3);
	assert_int_equal(q_int(db, "SELECT count(*) FROM host"), 1);
	sqlite3_close(db);
#undef ENERGY
#undef SCALAR
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_catalog_seeded, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_values_read_back, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_unknown_metric, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_timestamps_adjusted, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_flush_busy_keeps_rows,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_key_nudged,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_full_keeps_rows,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_pending_drops_oldest,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_flushes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_device_map_and_cards,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v1, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v3, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sources, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_counters_two_sources,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v2, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tx_all_or_nothing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tx_refuses_new_metric,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_map_in_force, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_smi_version, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_newer_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_foreign_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_retention_age_and_windows,
		    setup, teardown),
		cmocka_unit_test(test_age_cutoff),
		cmocka_unit_test_setup_teardown(test_retention_clock_steps,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_max_size, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_retention_budget, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_query_plans, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bytes_per_value, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
