/*
 * bestsrc: the rule that takes each metric of a card from one of its two
 * streams of rows, as SQL (query/bestsrc.c), and the window summary that
 * follows it (query/summary.c).
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

#include "bestsrc.h"
#include "summary.h"

#define MS	1000000LL
#define T0	1750000000000000000LL

static void
exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

/* A database of schema version v: with a src column from 6 on. */
static sqlite3 *
make_db(int v)
{
	sqlite3 *db;
	char sql[512];

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d;"
	    "CREATE TABLE metrics (id INTEGER PRIMARY KEY, key TEXT, unit TEXT,"
	    " col TEXT, decimals INTEGER, reliable INTEGER);"
	    "INSERT INTO metrics VALUES (1, 'pwr', 'W', 'pwr', 1, 1),"
	    " (2, 'busy', '%%', 'busy', 0, 1);"
	    "CREATE TABLE samples (ts_ns INTEGER, device INTEGER,"
	    " interval_ms INTEGER, pwr INTEGER, busy INTEGER%s,"
	    " PRIMARY KEY (ts_ns, device)) WITHOUT ROWID;%s", v,
	    v >= 6 ? ", src INTEGER" : "", v >= 7 ? "CREATE INDEX samples_file "
	    "ON samples (ts_ns, interval_ms, src) WHERE src IS NOT NULL;" : "");
	exec(db, sql);
	return db;
}

/*
 * Card 0 over [0, 1 s): aiu-smi rows every 100 ms at 50 W, busy 30 (the
 * first five) then 0, and file rows every 10 ms at 100 W (the pwr the
 * rule takes); card 1: aiu-smi rows only, 70 W, busy 0.  After 1 s,
 * card 0 has aiu-smi rows only, at 40 W.
 */
static void
fill(sqlite3 *db)
{
	sqlite3_stmt *s;

	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO samples "
	    "(ts_ns, device, interval_ms, pwr, busy, src) VALUES (?1, ?2, ?3, "
	    "?4, ?5, ?6)", -1, &s, NULL), SQLITE_OK);
	for (int k = 1; k <= 20; k++) {
		int64_t ts = T0 + k * 100 * MS;

		sqlite3_bind_int64(s, 1, ts + 3 * MS);	/* arrival: later */
		sqlite3_bind_int(s, 2, 0);
		sqlite3_bind_int(s, 3, 100);
		sqlite3_bind_int(s, 4, k <= 10 ? 500 : 400);
		sqlite3_bind_int(s, 5, k <= 5 ? 30 : 0);
		sqlite3_bind_null(s, 6);
		assert_int_equal(sqlite3_step(s), SQLITE_DONE);
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, ts);
		sqlite3_bind_int(s, 2, 1);
		sqlite3_bind_int(s, 4, 700);
		sqlite3_bind_int(s, 5, 0);
		assert_int_equal(sqlite3_step(s), SQLITE_DONE);
		sqlite3_reset(s);
	}
	for (int k = 1; k <= 100; k++) {
		sqlite3_bind_int64(s, 1, T0 + k * 10 * MS);
		sqlite3_bind_int(s, 2, 0);
		sqlite3_bind_int(s, 3, 10);
		sqlite3_bind_int(s, 4, 1000);
		sqlite3_bind_null(s, 5);
		sqlite3_bind_int(s, 6, 1);
		assert_int_equal(sqlite3_step(s), SQLITE_DONE);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
}

static const char *const cols[] = { "pwr", "busy", NULL };

/* The rows over (lo, hi): ts, device, pwr, busy, src, row source. */
static sqlite3_stmt *
select_rule(sqlite3 *db)
{
	struct bestsrc b;
	sqlite3_str *q = sqlite3_str_new(db);
	sqlite3_stmt *s;
	char *sql;

	assert_int_equal(bestsrc_init(db, &b, cols, 3), 0);
	bestsrc_with(q, &b, "ts_ns > ?1 AND ts_ns - interval_ms * 1000000 < ?2");
	sqlite3_str_appendall(q, "SELECT ts_ns, device");
	for (size_t i = 0; i < 3; i++) {
		sqlite3_str_appendall(q, ", ");
		bestsrc_col(q, &b, i);
	}
	sqlite3_str_appendall(q, ", ");
	bestsrc_src(q, &b);
	sqlite3_str_appendall(q, ", ");
	bestsrc_row(q, &b);
	bestsrc_from(q, &b);
	sqlite3_str_appendall(q, " WHERE ts_ns > ?1 AND ts_ns - interval_ms * "
	    "1000000 < ?2 ORDER BY ts_ns, device");
	sql = sqlite3_str_finish(q);
	assert_non_null(sql);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_free(sql);
	return s;
}

struct tally {
	int rows[2][2];		/* [device][src] */
	int pwr[2][2];		/* of them, with pwr */
	int busy[2][2];
	int rowsrc[2][2];	/* of them, of the card's row source */
	int unnamed;		/* third column (NULL name): always NULL */
};

static void
run(sqlite3_stmt *s, int64_t lo, int64_t hi, struct tally *t)
{
	memset(t, 0, sizeof(*t));
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, lo);
	sqlite3_bind_int64(s, 2, hi);
	while (sqlite3_step(s) == SQLITE_ROW) {
		int d = sqlite3_column_int(s, 1), src = sqlite3_column_int(s, 5);

		assert_true(d == 0 || d == 1);
		assert_true(src == 0 || src == 1);
		t->rows[d][src]++;
		t->pwr[d][src] += sqlite3_column_type(s, 2) != SQLITE_NULL;
		t->busy[d][src] += sqlite3_column_type(s, 3) != SQLITE_NULL;
		t->unnamed += sqlite3_column_type(s, 4) != SQLITE_NULL;
		t->rowsrc[d][src] += sqlite3_column_int(s, 6);
	}
}

/*
 * Where card 0 has file rows, its pwr comes from them alone and its busy
 * from aiu-smi; its row source is the file.  Card 1 and card 0 over a
 * span without file rows read as stored.
 */
static void
test_rule(void **state)
{
	sqlite3 *db = make_db(*(int *)*state);
	sqlite3_stmt *s;
	struct tally t;

	fill(db);
	s = select_rule(db);
	run(s, T0, T0 + 1000 * MS, &t);
	assert_int_equal(t.rows[0][1], 100);
	assert_int_equal(t.pwr[0][1], 100);
	assert_int_equal(t.busy[0][1], 0);
	assert_int_equal(t.rowsrc[0][1], 100);
	assert_int_equal(t.rows[0][0], 10);	/* the 10th ends at 1.003 s */
	assert_int_equal(t.pwr[0][0], 0);
	assert_int_equal(t.busy[0][0], 10);
	assert_int_equal(t.rowsrc[0][0], 0);
	assert_int_equal(t.rows[1][0], 10);
	assert_int_equal(t.pwr[1][0], 10);
	assert_int_equal(t.busy[1][0], 10);
	assert_int_equal(t.rowsrc[1][0], 10);
	assert_int_equal(t.rows[1][1], 0);
	assert_int_equal(t.unnamed, 0);

	/* after 1.01 s card 0 has no file row: aiu-smi's pwr counts */
	run(s, T0 + 1010 * MS, T0 + 2000 * MS, &t);
	assert_int_equal(t.rows[0][1], 0);
	assert_int_equal(t.rows[0][0], 10);
	assert_int_equal(t.pwr[0][0], 10);
	assert_int_equal(t.rowsrc[0][0], 10);

	/*
	 * A file row of card 1 without pwr: its rows are now the card's
	 * row source, but its pwr stays aiu-smi's, and the file's is not
	 * taken as well.
	 */
	exec(db, "INSERT INTO samples (ts_ns, device, interval_ms, src) "
	    "VALUES (1750000001550000000, 1, 10, 1)");
	run(s, T0 + 1010 * MS, T0 + 2000 * MS, &t);
	assert_int_equal(t.rows[1][1], 1);
	assert_int_equal(t.pwr[1][1], 0);
	assert_int_equal(t.rows[1][0], 10);
	assert_int_equal(t.pwr[1][0], 10);
	assert_int_equal(t.rowsrc[1][0], 0);
	assert_int_equal(t.rowsrc[1][1], 1);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/*
 * A database before schema 6 has no src, and one of schema 7 may have no
 * file row: the plain statement, as before (each value only if it is a
 * finite number).
 */
static void
test_no_src_column(void **state)
{
	sqlite3 *db = make_db(*(int *)*state);
	sqlite3_stmt *s;
	struct tally t;

	struct bestsrc b;

	assert_int_equal(bestsrc_init(db, &b, cols, 3), 0);
	assert_false(b.on);
	exec(db, "INSERT INTO samples (ts_ns, device, interval_ms, pwr, busy) "
	    "VALUES (1750000000100000000, 0, 100, 500, 30), "
	    "(1750000000200000000, 0, 100, NULL, 0)");
	s = select_rule(db);
	assert_string_equal(sqlite3_sql(s), "SELECT ts_ns, device, CASE WHEN "
	    "typeof(\"pwr\") IN ('integer', 'real') AND \"pwr\" BETWEEN -1e308 "
	    "AND 1e308 THEN \"pwr\" END, CASE WHEN typeof(\"busy\") IN "
	    "('integer', 'real') AND \"busy\" BETWEEN -1e308 AND 1e308 THEN "
	    "\"busy\" END, NULL, 0, 1 FROM samples WHERE ts_ns > ?1 AND ts_ns - "
	    "interval_ms * 1000000 < ?2 ORDER BY ts_ns, device");
	run(s, T0, T0 + 1000 * MS, &t);
	assert_int_equal(t.rows[0][0], 2);
	assert_int_equal(t.pwr[0][0], 1);
	assert_int_equal(t.rowsrc[0][0], 2);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/*
 * The window summary over (0, 1 s]: card 0's energy is its file rows'
 * 100 W over the window (100 J), not 150 J of both streams; its samples
 * and coverage are its file rows'; its busy mean is aiu-smi's; its idle
 * power is the median of the file rows that aiu-smi's idle rows cover.
 * Card 1's figures are its aiu-smi rows'.
 */
static void
test_summary(void **state)
{
	sqlite3 *db = make_db(*(int *)*state);
	struct summary sum;

	fill(db);
	assert_int_equal(summary_compute(db, 1, T0, T0 + 1000 * MS,
	    SUMMARY_IDLE_LOOKBACK_NS, T0, &sum), 0);
	assert_int_equal(sum.ncards, 2);
	assert_int_equal(sum.cards[0].device, 0);
	assert_string_equal(sum.cards[0].energy_j, "100");
	assert_int_equal(sum.cards[0].samples, 100);
	assert_int_equal(sum.cards[0].covered_ns, 1000 * MS);
	assert_int_equal(sum.cards[0].gaps, 0);
	assert_int_equal(sum.cards[0].max_interval_ms, 10);
	assert_true(sum.cards[0].has_busy);
	/* busy 30 over (3, 503] ms of the 1 s */
	assert_true(sum.cards[0].busy_mean > 14.9 &&
	    sum.cards[0].busy_mean < 15.1);
	assert_true(sum.cards[0].power_min == 100 &&
	    sum.cards[0].power_max == 100);
	/* idle: file rows inside aiu-smi rows 6..10 (busy 0): 100 W */
	assert_true(sum.cards[0].has_idle);
	assert_true(sum.cards[0].idle_w == 100);
	assert_int_equal(sum.cards[0].idle_samples, 40);
	assert_int_equal(sum.cards[1].device, 1);
	assert_string_equal(sum.cards[1].energy_j, "70");
	assert_int_equal(sum.cards[1].samples, 10);
	assert_true(sum.cards[1].idle_w == 70);
	summary_free(&sum);
	sqlite3_close(db);
}

/* Card 1's aiu-smi rows at watts, busy 0, every 100 ms over (at, at + 1 s]. */
static void
idle_rows(sqlite3 *db, int64_t at, int watts)
{
	sqlite3_stmt *s;

	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO samples "
	    "(ts_ns, device, interval_ms, pwr, busy) VALUES (?1, 1, 100, ?2, "
	    "0)", -1, &s, NULL), SQLITE_OK);
	for (int k = 1; k <= 10; k++) {
		sqlite3_bind_int64(s, 1, at + k * 100 * MS);
		sqlite3_bind_int(s, 2, watts * 10);
		assert_int_equal(sqlite3_step(s), SQLITE_DONE);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
}

/* Card 1's idle figures of the window (b, e], through cache or not. */
static const struct summary_card *
card1(sqlite3 *db, int64_t b, int64_t e, int64_t lookback,
    struct summary_idle_cache *cache, struct summary *sum)
{
	assert_int_equal(summary_compute_cached(db, 1, b, e, lookback, T0,
	    cache, sum), 0);
	for (size_t i = 0; i < sum->ncards; i++)
		if (sum->cards[i].device == 1) {
			assert_true(sum->cards[i].has_idle);
			return &sum->cards[i];
		}
	fail_msg("no card 1 in the summary of (%lld, %lld]", (long long)b,
	    (long long)e);
	return NULL;
}

/*
 * The idle span is rounded down to whole seconds at both ends, so windows
 * in the same seconds share it: the figures learned for one are given to
 * the next as they are, and equal what learning them again gives; a window
 * in another second, or with another look-back, learns its own, equal to
 * the uncached computation too.
 */
static void
test_idle_cache(void **state)
{
	sqlite3 *db = make_db(7);
	struct summary_idle_cache cache = { .valid = false };
	struct summary a, b, fresh;
	const struct summary_card *c, *f;
	const int64_t L = SUMMARY_IDLE_LOOKBACK_NS;

	(void)state;
	fill(db);
	c = card1(db, T0, T0 + 1000 * MS, L, &cache, &a);
	assert_true(c->idle_w == 70);
	assert_int_equal(c->idle_samples, 10);
	assert_true(cache.valid);
	assert_int_equal(cache.misses, 1);
	summary_free(&a);

	/* 200 ms in, 500 ms past that second: the same span, served */
	c = card1(db, T0 + 200 * MS, T0 + 1500 * MS, L, &cache, &b);
	f = card1(db, T0 + 200 * MS, T0 + 1500 * MS, L, NULL, &fresh);
	assert_int_equal(cache.hits, 1);
	assert_true(c->idle_w == f->idle_w);
	assert_int_equal(c->idle_samples, f->idle_samples);
	assert_true(c->net_energy_j == f->net_energy_j);
	summary_free(&b);
	summary_free(&fresh);

	/* idle at 10 W in the next seconds: another span, learned again */
	idle_rows(db, T0 + 3000 * MS, 10);
	c = card1(db, T0 + 3000 * MS, T0 + 4000 * MS, L, &cache, &b);
	f = card1(db, T0 + 3000 * MS, T0 + 4000 * MS, L, NULL, &fresh);
	assert_int_equal(cache.misses, 2);
	assert_int_equal(c->idle_samples, 30);
	assert_int_equal(f->idle_samples, 30);
	assert_true(c->idle_w == 70 && f->idle_w == 70);
	assert_true(c->net_energy_j == f->net_energy_j);
	assert_int_equal(cache.hi, T0 + 4000 * MS);
	summary_free(&b);
	summary_free(&fresh);

	/* the same window with a 1 s look-back: learned again, 10 W */
	c = card1(db, T0 + 3000 * MS, T0 + 4000 * MS, 1000 * MS, &cache, &b);
	assert_int_equal(cache.misses, 3);
	assert_int_equal(c->idle_samples, 10);
	assert_true(c->idle_w == 10);
	summary_free(&b);
	summary_idle_cache_clear(&cache);
	assert_false(cache.valid);
	sqlite3_close(db);
}

/*
 * Schema 7: the rule reads the span's file rows through their index, and
 * is off, one probe of it, while the database has none.
 */
static void
test_index_probe(void **state)
{
	sqlite3 *db = make_db(7);
	struct bestsrc b;
	sqlite3_str *q;
	sqlite3_stmt *s;
	char *sql;
	bool seen = false;

	(void)state;
	exec(db, "INSERT INTO samples VALUES (1750000000100000000, 0, 100, "
	    "500, 30, NULL)");
	assert_int_equal(bestsrc_init(db, &b, cols, 3), 0);
	assert_true(b.indexed);
	assert_false(b.on);
	exec(db, "INSERT INTO samples VALUES (1750000000010000000, 0, 10, "
	    "1000, NULL, 1)");
	assert_int_equal(bestsrc_init(db, &b, cols, 3), 0);
	assert_true(b.on);
	q = sqlite3_str_new(db);
	sqlite3_str_appendall(q, "EXPLAIN QUERY PLAN ");
	bestsrc_with(q, &b, "ts_ns > ?1 AND ts_ns < ?2");
	sqlite3_str_appendall(q, "SELECT * FROM best");
	sql = sqlite3_str_finish(q);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW)
		seen |= strstr((const char *)sqlite3_column_text(s, 3),
		    "samples_file") != NULL;
	assert_true(seen);
	sqlite3_finalize(s);
	sqlite3_free(sql);
	sqlite3_close(db);
}

int
main(void)
{
	static int v5 = 5, v6 = 6, v7 = 7;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_rule, &v6),
		cmocka_unit_test_prestate(test_rule, &v7),
		cmocka_unit_test_prestate(test_no_src_column, &v5),
		cmocka_unit_test_prestate(test_no_src_column, &v7),
		cmocka_unit_test_prestate(test_summary, &v6),
		cmocka_unit_test_prestate(test_summary, &v7),
		cmocka_unit_test(test_index_probe),
		cmocka_unit_test(test_idle_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
