/*
 * pair: a card's aiu-smi row and metric-file row of one tick paired into
 * one sample (query/pair.c), over the statement of db_select_samples.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "dbread.h"
#include "pair.h"

#define MS	1000000LL
#define T0	1750000000000000000LL

static void
exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static sqlite3 *
make_db(void)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	exec(db, "PRAGMA user_version = 7;"
	    "CREATE TABLE samples (ts_ns INTEGER, device INTEGER,"
	    " interval_ms INTEGER, pwr INTEGER, busy INTEGER, src INTEGER,"
	    " PRIMARY KEY (ts_ns, device)) WITHOUT ROWID;"
	    "CREATE INDEX samples_file ON samples (ts_ns, interval_ms, src)"
	    " WHERE src IS NOT NULL;");
	return db;
}

/* A row: src 1 is a file row (pwr only), else aiu-smi's (pwr and busy). */
static void
row(sqlite3 *db, int64_t ts, int dev, int iv, int pwr, int busy, int src)
{
	char sql[256];

	if (src)
		snprintf(sql, sizeof(sql), "INSERT INTO samples VALUES (%lld, "
		    "%d, %d, %d, NULL, 1)", (long long)ts, dev, iv, pwr);
	else
		snprintf(sql, sizeof(sql), "INSERT INTO samples VALUES (%lld, "
		    "%d, %d, %d, %d, NULL)", (long long)ts, dev, iv, pwr, busy);
	exec(db, sql);
}

static char k_pwr[] = "pwr", u_w[] = "W", k_busy[] = "busy", u_pct[] = "%";
static const struct db_metric m_pwr = { 1, k_pwr, u_w, k_pwr, 1, true };
static const struct db_metric m_busy = { 2, k_busy, u_pct, k_busy, 0, true };
static const struct db_metric *const cols[] = { &m_pwr, &m_busy };

#define MAXS	400

struct got {
	struct pair_sample s[MAXS];	/* v and from not kept: see from0 */
	double pwr[MAXS], busy[MAXS];	/* -1: missing */
	unsigned char from0[MAXS], from1[MAXS];
	size_t n;
};

/*
 * Every sample over the span (T0, T0 + 10 s); with before, the rows
 * before it read too (pair_read_from), as export reads them.  *nfile
 * (if not NULL): the file rows the reader counted.
 */
static void
read_span(sqlite3 *db, bool by_source, bool before, struct got *g,
    int64_t *nfile)
{
	sqlite3_stmt *s = db_select_samples(db, cols, 2, "", true);
	struct pair_reader *p;
	struct pair_sample x;
	int rc;

	assert_non_null(s);
	if (before)
		db_bind_read_from(s, pair_read_from(db, T0));
	sqlite3_bind_int64(s, 1, T0);
	sqlite3_bind_int64(s, 2, T0 + 10000 * MS);
	sqlite3_bind_int64(s, 3, T0 + 10000 * MS + DB_MAX_INTERVAL_NS);
	p = pair_open(s, 2, by_source, before ? T0 : INT64_MIN);
	g->n = 0;
	while ((rc = pair_next(p, &x)) == 1) {
		assert_true(g->n < MAXS);
		g->s[g->n] = x;
		g->from0[g->n] = x.from[0];
		g->from1[g->n] = x.from[1];
		g->pwr[g->n] = x.from[0] ? x.v[0] : -1;
		g->busy[g->n] = x.from[1] ? x.v[1] : -1;
		if (g->n > 0)	/* in stamp order, then device */
			assert_true(g->s[g->n - 1].ts_ns < x.ts_ns ||
			    (g->s[g->n - 1].ts_ns == x.ts_ns &&
			    g->s[g->n - 1].device < x.device));
		g->n++;
	}
	assert_int_equal(rc, 0);
	if (nfile != NULL)
		*nfile = pair_file_rows(p);
	pair_close(p);
	sqlite3_finalize(s);
}

static void
read_all(sqlite3 *db, bool by_source, struct got *g)
{
	read_span(db, by_source, false, g, NULL);
}

/*
 * One rate: card 0 has file rows every 100 ms and aiu-smi rows 3 ms after
 * each; card 1 is on aiu-smi alone.  One sample per card per tick, the
 * file's stamp and power, aiu-smi's busy; card 1's power is aiu-smi's.
 */
static void
test_one_rate(void **state)
{
	sqlite3 *db = make_db();
	struct got *g = malloc(sizeof(*g));
	size_t n0 = 0, n1 = 0;

	(void)state;
	for (int k = 1; k <= 10; k++) {
		row(db, T0 + k * 100 * MS, 0, 100, 1000 + k, 0, 1);
		row(db, T0 + k * 100 * MS + 3 * MS, 0, 100, 500, 40 + k, 0);
		row(db, T0 + k * 100 * MS + 5 * MS, 1, 100, 700, 7, 0);
	}
	read_all(db, false, g);
	assert_int_equal(g->n, 20);
	for (size_t i = 0; i < g->n; i++) {
		const struct pair_sample *x = &g->s[i];

		if (x->device == 0) {
			n0++;
			assert_int_equal(x->ts_ns, T0 + (int64_t)n0 * 100 * MS);
			assert_int_equal(x->file_ns, x->ts_ns);
			assert_int_equal(x->smi_ns, x->ts_ns + 3 * MS);
			assert_true(x->row_source);
			assert_true(g->pwr[i] == 1000 + (double)n0);
			assert_int_equal(g->from0[i], PAIR_FILE);
			assert_true(g->busy[i] == 40 + (double)n0);
			assert_int_equal(g->from1[i], PAIR_SMI);
		} else {
			n1++;
			assert_int_equal(x->file_ns, 0);
			assert_true(g->pwr[i] == 700 && g->busy[i] == 7);
			assert_int_equal(g->from0[i], PAIR_SMI);
		}
	}
	assert_int_equal(n0, 10);
	assert_int_equal(n1, 10);
	/* --by-source: every stored row, pwr of card 0 from its file only */
	read_all(db, true, g);
	assert_int_equal(g->n, 30);
	for (size_t i = 0; i < g->n; i++)
		if (g->s[i].device == 0 && g->s[i].file_ns == 0)
			assert_true(g->pwr[i] == -1 && g->busy[i] > 40);
	free(g);
	sqlite3_close(db);
}

/*
 * An aiu-smi row before the card's first file row, and one whose file row
 * was missed (the one before it is joined already), are samples of their
 * own, without power; a late one (its stamp up to two file intervals on)
 * still joins; one three intervals on does not.
 */
static void
test_alone(void **state)
{
	sqlite3 *db = make_db();
	struct got *g = malloc(sizeof(*g));

	(void)state;
	row(db, T0 + 50 * MS, 0, 100, 500, 1, 0);	/* before any file row */
	row(db, T0 + 100 * MS, 0, 100, 1001, 0, 1);
	row(db, T0 + 103 * MS, 0, 100, 500, 2, 0);
	row(db, T0 + 200 * MS, 0, 100, 1002, 0, 1);
	row(db, T0 + 203 * MS, 0, 100, 500, 3, 0);
	/* no file row at 300 ms: this one finds 200's joined */
	row(db, T0 + 303 * MS, 0, 100, 500, 4, 0);
	row(db, T0 + 400 * MS, 0, 100, 1004, 0, 1);
	/* late: 190 ms after the file row at 400, under two intervals */
	row(db, T0 + 590 * MS, 0, 100, 500, 5, 0);
	row(db, T0 + 700 * MS, 0, 100, 1007, 0, 1);
	/* 300 ms after it: too old */
	row(db, T0 + 1000 * MS, 0, 100, 500, 6, 0);
	read_all(db, false, g);
	assert_int_equal(g->n, 7);
	/* 50: alone */
	assert_int_equal(g->s[0].ts_ns, T0 + 50 * MS);
	assert_true(g->pwr[0] == -1 && g->busy[0] == 1);
	assert_false(g->s[0].row_source);
	assert_true(g->pwr[1] == 1001 && g->busy[1] == 2);
	assert_true(g->pwr[2] == 1002 && g->busy[2] == 3);
	/* 303: alone */
	assert_int_equal(g->s[3].ts_ns, T0 + 303 * MS);
	assert_true(g->pwr[3] == -1 && g->busy[3] == 4);
	/* 400 joined by 590 */
	assert_int_equal(g->s[4].ts_ns, T0 + 400 * MS);
	assert_int_equal(g->s[4].smi_ns, T0 + 590 * MS);
	assert_true(g->pwr[4] == 1004 && g->busy[4] == 5);
	/* 700 alone, then 1000 alone */
	assert_true(g->pwr[5] == 1007 && g->busy[5] == -1);
	assert_int_equal(g->s[6].ts_ns, T0 + 1000 * MS);
	assert_true(g->pwr[6] == -1 && g->busy[6] == 6);
	free(g);
	sqlite3_close(db);
}

/*
 * File rows every 10 ms, aiu-smi's every 100 ms: one sample per file row,
 * aiu-smi's values on the file row in force at each aiu-smi row's stamp.
 */
static void
test_finer_file(void **state)
{
	sqlite3 *db = make_db();
	struct got *g = malloc(sizeof(*g));
	size_t joined = 0;

	(void)state;
	for (int k = 1; k <= 100; k++)
		row(db, T0 + k * 10 * MS, 2, 10, 1000 + k, 0, 1);
	for (int k = 1; k <= 9; k++)
		row(db, T0 + k * 100 * MS + 4 * MS, 2, 100, 500, 60 + k, 0);
	read_all(db, false, g);
	assert_int_equal(g->n, 100);
	for (size_t i = 0; i < g->n; i++) {
		assert_true(g->pwr[i] == 1001 + (double)i);
		if (g->busy[i] == -1)
			continue;
		joined++;
		/* the file row at k * 100 ms: index 10k - 1 */
		assert_int_equal((i + 1) % 10, 0);
		assert_true(g->busy[i] == 60 + (double)((i + 1) / 10));
	}
	assert_int_equal(joined, 9);
	free(g);
	sqlite3_close(db);
}

/*
 * The span's first aiu-smi rows and the file rows before it: read from
 * pair_read_from on, a row pairs as it would anywhere, and a sample
 * stamped before the span is not given out.  Card 0's file row 200 ms
 * before the span (interval 250 ms: the look-back is 500 ms) is joined by
 * the aiu-smi row 30 ms into it, so that row makes no sample of the span;
 * card 1's file row before the span was joined before it, so the span's
 * first aiu-smi row is alone (without power: the file is its source).  Read from the span alone, card 0's would
 * be alone too, without power: the edge this guards.
 */
static void
test_before_span(void **state)
{
	sqlite3 *db = make_db();
	struct got *g = malloc(sizeof(*g));
	int64_t nfile = -1;

	(void)state;
	row(db, T0 - 600 * MS, 0, 250, 999, 0, 1);	/* past the look-back */
	row(db, T0 - 200 * MS, 0, 250, 1000, 0, 1);
	row(db, T0 - 150 * MS, 1, 100, 2000, 0, 1);
	row(db, T0 - 120 * MS, 1, 100, 500, 7, 0);	/* joins -150 */
	row(db, T0 + 10 * MS, 1, 100, 500, 8, 0);
	row(db, T0 + 30 * MS, 0, 250, 500, 1, 0);	/* joins -200 */
	row(db, T0 + 50 * MS, 0, 250, 1001, 0, 1);
	row(db, T0 + 60 * MS, 0, 250, 500, 2, 0);	/* joins 50 */
	row(db, T0 + 80 * MS, 1, 100, 2001, 0, 1);
	assert_int_equal(pair_read_from(db, T0), T0 - 500 * MS);
	read_span(db, false, true, g, &nfile);
	assert_int_equal(g->n, 3);
	assert_int_equal(nfile, 2);
	assert_int_equal(g->s[0].ts_ns, T0 + 10 * MS);
	assert_int_equal(g->s[0].device, 1);
	assert_true(g->pwr[0] == -1 && g->busy[0] == 8);
	assert_int_equal(g->s[1].ts_ns, T0 + 50 * MS);
	assert_int_equal(g->s[1].smi_ns, T0 + 60 * MS);
	assert_true(g->pwr[1] == 1001 && g->busy[1] == 2);
	assert_int_equal(g->s[2].ts_ns, T0 + 80 * MS);
	assert_true(g->pwr[2] == 2001 && g->busy[2] == -1);
	/* the span alone: card 0's first aiu-smi row is left without power */
	read_all(db, false, g);
	assert_int_equal(g->n, 4);
	assert_int_equal(g->s[1].ts_ns, T0 + 30 * MS);
	assert_true(g->pwr[1] == -1 && g->busy[1] == 1);
	/* nothing before the span: where to read it from is its begin */
	assert_int_equal(pair_read_from(db, T0 - 700 * MS), T0 - 700 * MS);
	free(g);
	sqlite3_close(db);
}

/* A database without file rows: every row as it is, in order. */
static void
test_no_file_rows(void **state)
{
	sqlite3 *db = make_db();
	struct got *g = malloc(sizeof(*g));

	(void)state;
	for (int k = 1; k <= 5; k++) {
		row(db, T0 + k * 100 * MS, 0, 100, 500 + k, k, 0);
		row(db, T0 + k * 100 * MS, 1, 100, 600 + k, k, 0);
	}
	read_all(db, false, g);
	assert_int_equal(g->n, 10);
	for (size_t i = 0; i < g->n; i++) {
		assert_int_equal(g->s[i].device, (int)(i % 2));
		assert_true(g->pwr[i] == (i % 2 ? 600 : 500) + (double)(i / 2 + 1));
		assert_int_equal(g->s[i].file_ns, 0);
	}
	free(g);
	sqlite3_close(db);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_rate),
		cmocka_unit_test(test_alone),
		cmocka_unit_test(test_finer_file),
		cmocka_unit_test(test_no_file_rows),
		cmocka_unit_test(test_before_span),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
