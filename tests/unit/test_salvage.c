/*
 * Tests of the pieces of "spyremon db check" and "db salvage" that need
 * no daemon: integrity_check's messages (intcheck.c), the search for the
 * next readable key past damage (keyscan_resume, against a model of a
 * table), the estimate of rows lost in a gap, a stored value turned back
 * into a natural one (salvage_copy.c), and keyscan_run on a table that
 * SQLite wrote and whose leaf pages were then overwritten: every row but
 * those on the damaged pages is read, once, in key order; and the page
 * walk's decoding of leaf pages SQLite wrote (every value as SQL reads
 * it), of pages damaged (nothing), and its test of a record's shape.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "intcheck.h"
#include "keyscan.h"
#include "pagewalk.h"
#include "salvage_copy.h"
#include "salvage_walk.h"
#include "tmpdb.h"

/* ---- intcheck ---- */

static void
test_intcheck(void **state)
{
	struct intcheck_msg m;

	(void)state;
	assert_true(intcheck_is_header("*** in database main ***"));
	assert_false(intcheck_is_header("Page 3: x"));
	assert_true(intcheck_parse("Page 20: btreeInitPage() returns error "
	    "code 11", &m));
	assert_int_equal(m.page, 20);
	assert_int_equal(m.tree, 0);
	assert_false(m.unused);
	assert_true(intcheck_parse("Tree 4 page 12 cell 3: Rowid 7 out of "
	    "order", &m));
	assert_int_equal(m.tree, 4);
	assert_int_equal(m.page, 12);
	assert_true(intcheck_parse("Page 31 is never used", &m));
	assert_int_equal(m.page, 31);
	assert_true(m.unused);
	assert_true(intcheck_parse("row 5 missing from index samples_file",
	    &m));
	assert_string_equal(m.index, "samples_file");
	assert_int_equal(m.page, 0);
	assert_true(intcheck_parse("wrong # of entries in index "
	    "windows_begin", &m));
	assert_string_equal(m.index, "windows_begin");
	assert_false(intcheck_parse("database disk image is malformed", &m));
	assert_false(intcheck_parse("Page x: what", &m));
}

/* ---- keyscan_resume, on a model: keys 0, 10, 20, ..., some unreadable ---- */

struct model {
	int64_t nkeys;		/* keys 0, 10, ..., 10 (nkeys - 1) */
	int64_t bad_lo, bad_hi;	/* a seek to from in [lo, hi] fails */
};

static enum keyscan_probe
model_probe(void *ctx, int64_t from, int64_t *key)
{
	const struct model *m = ctx;
	int64_t k;

	if (from >= m->bad_lo && from <= m->bad_hi)
		return KEYSCAN_ERROR;
	if (from > 10 * (m->nkeys - 1))
		return KEYSCAN_END;
	k = from <= 0 ? 0 : (from + 9) / 10 * 10;
	*key = k;
	return KEYSCAN_ROW;
}

static void
test_resume(void **state)
{
	struct model m = { .nkeys = 1000, .bad_lo = 101, .bad_hi = 250 };
	int64_t from, key;
	unsigned probes = 0;

	(void)state;
	/* from just past the last row read before the damage */
	assert_int_equal(keyscan_resume(model_probe, &m, 101, &from, &key,
	    &probes), KEYSCAN_ROW);
	assert_int_equal(from, 251);
	assert_int_equal(key, 260);
	assert_true(probes < 20);
	/* nothing wrong: the first probe reads */
	probes = 0;
	assert_int_equal(keyscan_resume(model_probe, &m, 5, &from, &key,
	    &probes), KEYSCAN_ROW);
	assert_int_equal(from, 5);
	assert_int_equal(key, 10);
	assert_int_equal(probes, 1);
	/* damage to the end of the table: past it there is no row */
	m.bad_hi = 10 * 999;
	probes = 0;
	assert_int_equal(keyscan_resume(model_probe, &m, 101, &from, &key,
	    &probes), KEYSCAN_END);
	assert_int_equal(from, 10 * 999 + 1);
	/* from the smallest key, across the whole range, in few probes */
	m.bad_lo = INT64_MIN;
	m.bad_hi = 1000;
	probes = 0;
	assert_int_equal(keyscan_resume(model_probe, &m, INT64_MIN, &from,
	    &key, &probes), KEYSCAN_ROW);
	assert_int_equal(from, 1001);
	assert_int_equal(key, 1010);
	assert_true(probes <= 2 * 64 + 2);
	/* every seek fails: saturates at INT64_MAX and says so */
	m.bad_hi = INT64_MAX;
	probes = 0;
	assert_int_equal(keyscan_resume(model_probe, &m, 0, &from, &key,
	    &probes), KEYSCAN_ERROR);
	assert_true(probes <= 65);
}

static void
test_gap_rows(void **state)
{
	(void)state;
	/* 100 intervals over 1000 (one row per 10): 100 -> 200 held 9 */
	assert_int_equal(keyscan_gap_rows(100, 1000, 100, 200), 9);
	/* neighbours: nothing lost */
	assert_int_equal(keyscan_gap_rows(100, 1000, 100, 110), 0);
	assert_int_equal(keyscan_gap_rows(0, 0, 0, 10), 0);
	assert_int_equal(keyscan_gap_rows(100, 1000, 200, 100), 0);
}

/* ---- values ---- */

static void
test_values(void **state)
{
	struct store_value v;

	(void)state;
	assert_true(salvage_int_value(12345, 3, &v));
	assert_int_equal(v.mant, 12345);
	assert_int_equal(v.scale, 3);
	assert_true(v.present);
	/* 12.5 stored with 1 decimal: 1.25 */
	assert_true(salvage_real_value(12.5, 1, &v));
	assert_int_equal(v.mant, 125);
	assert_int_equal(v.scale, 2);
	/* 0.1 with 3 decimals: 0.0001 */
	assert_true(salvage_real_value(0.1, 3, &v));
	assert_int_equal(v.mant, 1);
	assert_int_equal(v.scale, 4);
	assert_true(salvage_real_value(-2.75, 0, &v));
	assert_int_equal(v.mant, -275);
	assert_int_equal(v.scale, 2);
	/* a whole number as REAL: 123000 with 3 decimals is 123 */
	assert_true(salvage_real_value(123000.0, 3, &v));
	assert_int_equal(v.mant * 1000 / 1000, v.mant);
	assert_int_equal(v.scale, 0);
	assert_int_equal(v.mant, 123);
	assert_true(salvage_real_value(0.0, 2, &v));
	assert_int_equal(v.mant, 0);
	assert_false(salvage_real_value(0.0 / 0.0, 2, &v));
	assert_false(salvage_real_value(1.0 / 0.0, 2, &v));
}

/* ---- keyscan_run on a table SQLite wrote, two leaves overwritten ---- */

#define ROWS	3000

struct got {
	int64_t *keys;
	size_t n;
};

static int
collect(void *ctx, sqlite3_value **vals, int n)
{
	struct got *g = ctx;

	assert_int_equal(n, 2);
	g->keys[g->n++] = sqlite3_value_int64(vals[0]);
	/* the value column came along: ts * 3 */
	assert_int_equal(sqlite3_value_int64(vals[1]),
	    sqlite3_value_int64(vals[0]) * 3);
	return 0;
}

static void
exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static void
damage_page(const char *path, int64_t page, int64_t size)
{
	FILE *f = fopen(path, "r+b");
	unsigned char *junk = malloc((size_t)size);

	assert_non_null(f);
	assert_non_null(junk);
	memset(junk, 0xff, (size_t)size);
	assert_int_equal(fseek(f, (long)((page - 1) * size), SEEK_SET), 0);
	assert_int_equal(fwrite(junk, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	free(junk);
}

static void
run_damaged(const char *create, size_t *lost_rows, struct got *g,
    struct keyscan *ks)
{
	struct tmpdb t;
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t pages[2], cells[2], nleaves = 0, size = 4096;
	char sql[256];

	assert_int_equal(tmpdb_make(&t, "test_salvage"), 0);
	assert_int_equal(sqlite3_open(t.path, &db), SQLITE_OK);
	exec(db, create);
	snprintf(sql, sizeof(sql), "WITH RECURSIVE n(i) AS (SELECT 1 UNION "
	    "ALL SELECT i + 1 FROM n WHERE i < %d) INSERT INTO s SELECT "
	    "i * 1000, i * 3000, hex(randomblob(24)) FROM n", ROWS);
	exec(db, sql);
	/* the leaves a third and two thirds in, in key order */
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT pageno, ncell FROM "
	    "dbstat WHERE name = 's' AND pagetype = 'leaf' ORDER BY path",
	    -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW)
		nleaves++;
	sqlite3_reset(s);
	for (int64_t i = 0, k = 0; sqlite3_step(s) == SQLITE_ROW; i++)
		if (i == nleaves / 3 || i == 2 * nleaves / 3) {
			pages[k] = sqlite3_column_int64(s, 0);
			cells[k++] = sqlite3_column_int64(s, 1);
		}
	sqlite3_finalize(s);
	sqlite3_close(db);
	assert_true(nleaves >= 10);
	damage_page(t.path, pages[0], size);
	damage_page(t.path, pages[1], size);
	*lost_rows = (size_t)(cells[0] + cells[1]);

	assert_int_equal(sqlite3_open_v2(t.path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	g->keys = calloc(ROWS, sizeof(*g->keys));
	g->n = 0;
	ks->db = db;
	ks->table = "s";
	ks->cols = "ts, v";
	ks->row = collect;
	ks->ctx = g;
	assert_int_equal(keyscan_run(ks), 0);
	sqlite3_close(db);
	assert_int_equal(tmpdb_remove(&t), 0);
}

static void
check_scan(const struct keyscan *ks, const struct got *g, size_t lost_rows)
{
	assert_int_equal(g->n, ROWS - lost_rows);
	assert_int_equal(ks->rows, g->n);
	for (size_t i = 1; i < g->n; i++)
		assert_true(g->keys[i] > g->keys[i - 1]);
	assert_int_equal(ks->nlost, 2);
	for (size_t i = 0; i < ks->nlost; i++) {
		assert_true(ks->lost[i].have_prev && ks->lost[i].have_next);
		assert_true(ks->lost[i].prev < ks->lost[i].from);
		assert_true(ks->lost[i].to < ks->lost[i].next);
	}
	/* the estimate is near what was on the pages */
	assert_true(keyscan_lost_estimate(ks) + 2 >= lost_rows);
	assert_true(keyscan_lost_estimate(ks) <= lost_rows + 2);
}

static void
test_scan_without_rowid(void **state)
{
	struct keyscan ks = { .key = "ts" };
	struct got g;
	size_t lost;

	(void)state;
	run_damaged("PRAGMA page_size = 4096; CREATE TABLE s (ts INTEGER NOT "
	    "NULL, v INTEGER, pad TEXT, PRIMARY KEY (ts)) WITHOUT ROWID",
	    &lost, &g, &ks);
	check_scan(&ks, &g, lost);
	keyscan_free(&ks);
	free(g.keys);
}

static void
test_scan_rowid(void **state)
{
	struct keyscan ks = { .key = "rowid" };
	struct got g;
	size_t lost;

	(void)state;
	run_damaged("PRAGMA page_size = 4096; CREATE TABLE s (ts INTEGER "
	    "PRIMARY KEY, v INTEGER, pad TEXT)", &lost, &g, &ks);
	check_scan(&ks, &g, lost);
	keyscan_free(&ks);
	free(g.keys);
}

/* ---- pagewalk on pages SQLite wrote ---- */

#define WROWS	400

struct decoded {
	int64_t ts[WROWS], dev[WROWS];
	double f[WROWS];
	char txt[WROWS][16];
	bool null_skew[WROWS];
	int ncols[WROWS];
	size_t n;
};

static void
take(void *ctx, const unsigned char *rec, size_t len)
{
	struct decoded *d = ctx;
	struct pw_value v[16];
	int n = pagewalk_record(rec, len, v, 16);

	assert_true(n >= 0);
	assert_true(d->n < WROWS);
	d->ncols[d->n] = n;
	assert_int_equal(v[0].type, SQLITE_INTEGER);
	d->ts[d->n] = v[0].i;
	d->dev[d->n] = v[1].i;
	d->null_skew[d->n] = v[3].type == SQLITE_NULL;
	/* a whole REAL is stored as an integer, as SQLite reads it back */
	assert_true(v[5].type == SQLITE_FLOAT || v[5].type == SQLITE_INTEGER);
	d->f[d->n] = v[5].type == SQLITE_FLOAT ? v[5].d : (double)v[5].i;
	assert_int_equal(v[6].type, SQLITE_TEXT);
	snprintf(d->txt[d->n], sizeof(d->txt[0]), "%.*s", (int)v[6].n,
	    (const char *)v[6].p);
	d->n++;
}

static void
test_pagewalk(void **state)
{
	struct tmpdb t;
	struct pagewalk_file f;
	struct decoded d = { 0 };
	sqlite3 *db;
	sqlite3_stmt *s;
	unsigned char *page;
	char sql[512];
	int64_t leaves = 0;

	(void)state;
	assert_int_equal(tmpdb_make(&t, "test_pagewalk"), 0);
	assert_int_equal(sqlite3_open(t.path, &db), SQLITE_OK);
	/* values of every size: small and 6-byte integers, negatives, 0/1 */
	snprintf(sql, sizeof(sql), "PRAGMA page_size = 1024; CREATE TABLE s "
	    "(ts INTEGER NOT NULL, device INTEGER NOT NULL, iv INTEGER, skew "
	    "INTEGER, src INTEGER, f REAL, t TEXT, PRIMARY KEY (ts, device)) "
	    "WITHOUT ROWID; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT "
	    "i + 1 FROM n WHERE i < %d) INSERT INTO s SELECT "
	    "1700000000000000000 + i * 97, i %% 3, 50, CASE WHEN i %% 2 THEN "
	    "NULL ELSE -i END, i %% 2, i * 0.25 - 3, 'r' || i FROM n; "
	    "CREATE TABLE fill (x); INSERT INTO fill VALUES (zeroblob(5000));"
	    "DELETE FROM fill;", WROWS);
	exec(db, sql);
	sqlite3_close(db);
	assert_int_equal(pagewalk_open(t.path, &f), 0);
	assert_int_equal(f.page_size, 1024);
	/* the freelist (fill's freed pages) is skipped; walk every leaf */
	/* leaves and the interior pages between them: every row */
	assert_int_equal(pagewalk_pages(&f, take, &d), WROWS);
	pagewalk_close(&f);
	/* each row once, as SQL has it (sorted by key: the walk's order is
	 * the file's) */
	assert_int_equal(sqlite3_open(t.path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT ts, device, skew IS "
	    "NULL, f, t FROM s WHERE ts = ?1 AND device = ?2", -1, &s, NULL),
	    SQLITE_OK);
	assert_int_equal(d.n, WROWS);
	for (size_t i = 0; i < d.n; i++) {
		assert_int_equal(d.ncols[i], 7);
		sqlite3_bind_int64(s, 1, d.ts[i]);
		sqlite3_bind_int64(s, 2, d.dev[i]);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(s, 2), d.null_skew[i]);
		assert_true(sqlite3_column_double(s, 3) == d.f[i]);
		assert_string_equal((const char *)sqlite3_column_text(s, 4),
		    d.txt[i]);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	/* a leaf with a cell pointer off the page yields nothing */
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT pageno FROM dbstat "
	    "WHERE name = 's' AND pagetype = 'leaf' LIMIT 1", -1, &s, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	leaves = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	page = malloc(1024);
	assert_non_null(page);
	{
		FILE *fp = fopen(t.path, "rb");

		assert_non_null(fp);
		assert_int_equal(fseek(fp, (long)((leaves - 1) * 1024),
		    SEEK_SET), 0);
		assert_int_equal(fread(page, 1, 1024, fp), 1024);
		fclose(fp);
	}
	memset(&d, 0, sizeof(d));
	assert_true(pagewalk_index_page(page, 1024, 1024, 0, take, &d) > 0);
	page[8] = 0x7f;		/* the first cell pointer: past the page */
	page[9] = 0xff;
	memset(&d, 0, sizeof(d));
	assert_int_equal(pagewalk_index_page(page, 1024, 1024, 0, take, &d),
	    -1);
	assert_int_equal(d.n, 0);
	memset(page, 0xff, 1024);
	assert_int_equal(pagewalk_index_page(page, 1024, 1024, 0, take, &d),
	    -1);
	free(page);
	assert_int_equal(tmpdb_remove(&t), 0);
}

static void
test_record_bad(void **state)
{
	/* header 3 bytes: types 1 (1-byte int) and 13 (empty text)... */
	static const unsigned char ok[] = { 3, 1, 13, 0x85 };
	/* ...a body one byte short, and a header longer than the record */
	static const unsigned char shortb[] = { 3, 1, 15, 0x85 };
	static const unsigned char longh[] = { 9, 1, 1 };
	static const unsigned char reserved[] = { 2, 10 };
	struct pw_value v[4];

	(void)state;
	assert_int_equal(pagewalk_record(ok, sizeof(ok), v, 4), 2);
	assert_int_equal(v[0].type, SQLITE_INTEGER);
	assert_int_equal(v[0].i, -123);
	assert_int_equal(v[1].type, SQLITE_TEXT);
	assert_int_equal(v[1].n, 0);
	assert_int_equal(pagewalk_record(shortb, sizeof(shortb), v, 4), -1);
	assert_int_equal(pagewalk_record(longh, sizeof(longh), v, 4), -1);
	assert_int_equal(pagewalk_record(reserved, sizeof(reserved), v, 4),
	    -1);
}

static void
test_plausible(void **state)
{
	struct walk_shape sh = { .tcols = 10, .ts = 0, .device = 1,
	    .interval = 2, .skew = 3, .src = 4 };
	struct pw_value v[10];

	(void)state;
	memset(v, 0, sizeof(v));
	for (int i = 0; i < 10; i++)
		v[i].type = SQLITE_NULL;
	v[0].type = v[1].type = v[2].type = SQLITE_INTEGER;
	v[0].i = 1700000000000000000;
	v[1].i = 2;
	v[2].i = 100;
	assert_true(salvage_walk_plausible(v, 8, &sh));
	assert_true(salvage_walk_plausible(v, 10, &sh));
	/* too few columns (an index's entry), or more than the table */
	assert_false(salvage_walk_plausible(v, 4, &sh));
	assert_false(salvage_walk_plausible(v, 11, &sh));
	/* a summary's row: its third column a time, not an interval */
	v[2].i = 1700000000000000000;
	assert_false(salvage_walk_plausible(v, 8, &sh));
	v[2].i = 100;
	v[3].type = SQLITE_TEXT;
	assert_false(salvage_walk_plausible(v, 8, &sh));
	v[3].type = SQLITE_NULL;
	v[1].i = -1;
	assert_false(salvage_walk_plausible(v, 8, &sh));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intcheck),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_gap_rows),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_scan_without_rowid),
		cmocka_unit_test(test_scan_rowid),
		cmocka_unit_test(test_pagewalk),
		cmocka_unit_test(test_record_bad),
		cmocka_unit_test(test_plausible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
