/*
 * Tests of a window's samples across steps of the host clock (schema 12,
 * query/epochs.c): a window that a step back crossed is read as one piece
 * per epoch, with every row stamped while it was open and none that the
 * old clock stamped at the same times, by the selection every reader
 * uses (db_select_samples and db_bind_epoch) and by the summary; a window
 * within one epoch leaves out an older epoch's rows at its stamps; a
 * window without epochs is read within its stamps as before; retention
 * keeps the rows of a window a step crossed, closed or still open, and a
 * store opened again
 * goes on measuring ages by the steps recorded; a trace's time across the
 * step (db_trace_clock_load) reads each epoch's rows once, shifted.
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
#include "schema.h"
#include "storedb.h"
#include "store_priv.h"
#include "summary.h"
#include "tmpdb.h"

#define SEC	1000000000LL
#define T0	(1750000000LL * SEC)	/* June 2025 */
#define HOUR	(3600 * SEC)

struct fx {
	struct tmpdb db;
	struct store *st;
	int pwr;
	int64_t w1, w2;		/* across the step; within epoch 1 */
};

/* A row of card 0 stamped ts, 1 s interval, pwr watts. */
static void
row(struct fx *f, int64_t ts, int64_t watts)
{
	struct store_value v = { .mant = watts, .scale = 0, .present = true };
	struct store_sample s = { .ts_ns = ts, .device = 0,
	    .interval_ms = 1000, .nvalues = 1, .metric = &f->pwr,
	    .values = &v };

	storedb_append(f->st, &s);
}

/*
 * Rows of epoch 0 an hour before T0 (50 W, T0 - 1 h + 11 s .. + 20 s),
 * then from T0 + 1 s to + 10 s (100 W); w1 begins at T0 + 5.5 s; the
 * clock steps back 1 h at T0 + 10.5 s (epoch 1); rows of epoch 1 from
 * T0 - 1 h + 11 s to + 20 s (200 W), the stamps of the old rows; w1 ends
 * at T0 - 1 h + 15.5 s; w2 is open from T0 - 1 h + 12.5 s to + 14.5 s.
 */
static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int64_t old = T0 - HOUR;

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->db, "test_epochs"), 0);
	assert_int_equal(storedb_open(f->db.path, 100, &f->st), 0);
	assert_int_equal(storedb_metric(f->st, "pwr", "W", &f->pwr), 0);
	for (int k = 11; k <= 20; k++)
		row(f, old + k * SEC, 50);
	for (int k = 1; k <= 10; k++)
		row(f, T0 + k * SEC, 100);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(storedb_window_begin(f->st, "w1", 0, 1,
	    T0 + 5500 * 1000000LL, NULL, NULL, 0, &f->w1), 0);
	assert_int_equal(store_clock_stepped(f->st, -HOUR,
	    old + 10500 * 1000000LL), 1);
	for (int k = 11; k <= 20; k++)
		row(f, old + k * SEC + 1000, 200);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(storedb_window_end(f->st, f->w1,
	    old + 15500 * 1000000LL, STORE_ENDED_MARK, NULL), 0);
	assert_int_equal(storedb_window_begin(f->st, "w2", 0, 1,
	    old + 12500 * 1000000LL, NULL, NULL, 0, &f->w2), 0);
	assert_int_equal(storedb_window_end(f->st, f->w2,
	    old + 14500 * 1000000LL, STORE_ENDED_MARK, NULL), 0);
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

/* Window id as read. */
static struct db_window
window(struct fx *f, int64_t id)
{
	struct db_window_filter flt = { .by_id = true, .id = id };
	struct db_window *w, one;
	size_t n;

	assert_int_equal(db_windows_read(f->st->db, &flt, &w, &n), 0);
	assert_int_equal(n, 1);
	one = w[0];
	free(w);
	return one;
}

/* The rows of window id by its pieces, their pwr (W) summed into *sum. */
static int
rows_of(struct fx *f, int64_t id, double *sum)
{
	struct db_window w = window(f, id);
	const struct db_metric *cols[1];
	struct db_catalog cat;
	struct db_piece *p;
	sqlite3_stmt *s;
	size_t np;
	int n = 0;

	*sum = 0;
	assert_int_equal(db_catalog_read(f->st->db, &cat), 0);
	cols[0] = db_catalog_find(&cat, "pwr");
	assert_non_null(cols[0]);
	assert_int_equal(db_window_pieces(f->st->db, &w, w.end_ns, &p, &np),
	    0);
	assert_non_null(s = db_select_samples(f->st->db, cols, 1, "", true));
	for (size_t i = 0; i < np; i++) {
		db_bind_epoch(s, p[i].epoch);
		sqlite3_bind_int64(s, 1, p[i].from_ns);
		sqlite3_bind_int64(s, 2, p[i].hi_ns);
		sqlite3_bind_int64(s, 3, p[i].hi_ns + DB_MAX_INTERVAL_NS);
		while (sqlite3_step(s) == SQLITE_ROW) {
			double v = sqlite3_column_double(s, 3);

			for (int d = 0; d < cols[0]->decimals; d++)
				v /= 10;
			*sum += v;
			n++;
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	free(p);
	db_catalog_free(&cat);
	db_window_clear(&w);
	return n;
}

/* The step, the rows' epochs and the windows' as stored. */
static void
test_recorded(void **state)
{
	struct fx *f = *state;
	struct db_window w1 = window(f, f->w1), w2 = window(f, f->w2);

	assert_int_equal(w1.begin_epoch, 0);
	assert_int_equal(w1.end_epoch, 1);
	assert_true(w1.end_ns < w1.begin_ns);
	assert_int_equal(w2.begin_epoch, 1);
	assert_int_equal(w2.end_epoch, 1);
	assert_int_equal(store_clock_epoch(f->st), 1);
	db_window_clear(&w1);
	db_window_clear(&w2);
}

/* w1: its begin's epoch to the step, then the new epoch to its end. */
static void
test_pieces(void **state)
{
	struct fx *f = *state;
	struct db_window w = window(f, f->w1);
	struct db_piece *p;
	size_t n;

	assert_int_equal(db_window_pieces(f->st->db, &w, w.end_ns, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(p[0].epoch, 0);
	assert_int_equal(p[0].lo_ns, T0 + 5500 * 1000000LL);
	assert_int_equal(p[0].from_ns, p[0].lo_ns);
	assert_int_equal(p[0].hi_ns, T0 + 10500 * 1000000LL);
	assert_int_equal(p[1].epoch, 1);
	assert_int_equal(p[1].lo_ns, T0 - HOUR + 10500 * 1000000LL);
	assert_int_equal(p[1].from_ns, p[1].lo_ns - DB_EPOCH_REACH_NS);
	assert_int_equal(p[1].hi_ns, w.end_ns);
	free(p);
	/* without its epochs: within its stamps, any epoch */
	w.begin_epoch = w.end_epoch = -1;
	assert_int_equal(db_window_pieces(f->st->db, &w, w.end_ns, &p, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].epoch, -1);
	free(p);
	db_window_clear(&w);
}

/*
 * w1's rows: T0 + 6 .. 10 s of epoch 0 (the one over its begin too) and
 * T0 - 1 h + 11 .. 16 s of epoch 1 (the one over its end too), none of
 * the old rows at those stamps; w2's: epoch 1's over 12.5 .. 14.5 s.
 */
static void
test_selection(void **state)
{
	struct fx *f = *state;
	double sum;

	assert_int_equal(rows_of(f, f->w1, &sum), 11);
	assert_float_equal(sum, 5 * 100 + 6 * 200, 1e-9);
	assert_int_equal(rows_of(f, f->w2, &sum), 3);
	assert_float_equal(sum, 3 * 200, 1e-9);
}

/* The summary reads the same rows, over the time of both pieces. */
static void
test_summary(void **state)
{
	struct fx *f = *state;
	struct db_window w = window(f, f->w1);
	struct summary s;

	assert_int_equal(summary_compute(f->st->db, w.id, w.begin_ns,
	    w.end_ns, 0, T0, &s), 0);
	assert_int_equal(s.ncards, 1);
	assert_int_equal(s.cards[0].samples, 11);
	assert_int_equal(s.end_ns - s.begin_ns, 10 * SEC);
	/* 4.5 s at 100 W, then 5.5 s at 200 W: the first row after the
	 * step covers the half second before it too, whole, so that the
	 * pieces are covered as long as they last (but the 1 us the rows
	 * of epoch 1 are stamped after whole seconds) */
	assert_int_equal(s.cards[0].covered_ns, 10 * SEC - 1000);
	assert_float_equal(summary_energy(&s.cards[0]), 1550.0 - 200e-6,
	    1e-6);
	summary_free(&s);
	db_window_clear(&w);
	w = window(f, f->w2);
	assert_int_equal(summary_compute(f->st->db, w.id, w.begin_ns,
	    w.end_ns, 0, T0, &s), 0);
	assert_int_equal(s.cards[0].samples, 3);
	assert_float_equal(summary_energy(&s.cards[0]), 400.0, 1e-6);
	summary_free(&s);
	db_window_clear(&w);
}

/* The number of rows stamped before ts. */
static int64_t
rows_before(struct fx *f, int64_t ts)
{
	sqlite3_stmt *s;
	int64_t n;

	assert_int_equal(sqlite3_prepare_v2(f->st->db, "SELECT count(*) FROM "
	    "samples WHERE ts_ns < ?", -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_int64(s, 1, ts);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

/* Retention steps at now until the pass is done. */
static void
retain(struct fx *f, const struct store_retention *r, int64_t now)
{
	int rc, n = 0;

	while ((rc = storedb_retention_step(f->st, r, now, 50000000)) == 1)
		assert_true(++n < 10000);
	assert_int_equal(rc, 0);
}

/*
 * Opened again, the store has the step; 30 s after it, with rows kept a
 * second, every row the new clock stamped before now is old, but w1 (its
 * stamps an hour apart the wrong way) and w2 protect theirs: the hull of
 * w1's stretches holds every row of either epoch an hour before T0.
 */
static void
test_retention(void **state)
{
	struct fx *f = *state;
	struct store_retention r = { .max_age_ns = SEC,
	    .windows_max_age_ns = 10 * HOUR };

	storedb_close(f->st);
	assert_int_equal(storedb_open(f->db.path, 100, &f->st), 0);
	assert_int_equal(f->st->nclock_steps, 1);
	assert_int_equal(f->st->clock_steps[0].size_ns, -HOUR);
	assert_int_equal(store_clock_epoch(f->st), 1);
	assert_int_equal(sqlite3_exec(f->st->db, "UPDATE windows SET "
	    "summarized_ns = 1", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(rows_before(f, T0), 20);
	retain(f, &r, T0 - HOUR + 30 * SEC);
	assert_int_equal(rows_before(f, T0), 20);
	assert_int_equal(rows_before(f, INT64_MAX), 30);
	/* without w1 only w2's rows and their neighbours stay */
	assert_int_equal(sqlite3_exec(f->st->db, "DELETE FROM windows WHERE "
	    "tag = 'w1'", NULL, NULL, NULL), SQLITE_OK);
	retain(f, &r, T0 - HOUR + 30 * SEC);
	assert_int_equal(rows_before(f, T0), 8);
}

/*
 * A window still open across the step back protects the rows stamped
 * after it, though they are stamped an hour before its begin: with w1
 * open and w2 gone, 30 s after the step and rows kept a second, the ten
 * rows of epoch 1 stay, and the old clock's rows at their stamps with
 * them (the hull); before w1's begin stamp, none but these.
 */
static void
test_retention_open(void **state)
{
	struct fx *f = *state;
	struct store_retention r = { .max_age_ns = SEC,
	    .windows_max_age_ns = 10 * HOUR };

	assert_int_equal(sqlite3_exec(f->st->db, "DELETE FROM windows WHERE "
	    "tag = 'w2'; UPDATE windows SET end_ns = NULL, end_epoch = NULL "
	    "WHERE tag = 'w1'", NULL, NULL, NULL),
	    SQLITE_OK);
	retain(f, &r, T0 - HOUR + 30 * SEC);
	assert_int_equal(rows_before(f, T0), 20);
	assert_int_equal(rows_before(f, INT64_MAX), 30);
}

/*
 * A trace started at T0 + 2 s (epoch 0) and running on across the step
 * back: its time from T0 + 5.5 s to + 15.5 s is epoch 0's rows at their
 * stamps and epoch 1's an hour on, each read once, in increasing time,
 * and none of epoch 0's old rows at epoch 1's stamps.
 */
static void
test_trace_clock(void **state)
{
	struct fx *f = *state;
	const struct db_metric *cols[1];
	struct db_trace_clock c;
	struct db_trace_piece p[2];
	struct db_trace_cursor k;
	struct db_catalog cat;
	sqlite3_stmt *s;
	int64_t last = 0, e;
	double sum = 0;
	int n = 0, rc;

	assert_int_equal(db_trace_clock_load(f->st->db, T0 + 2 * SEC, &c), 0);
	assert_int_equal(c.start_epoch, 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.e[0].shift_ns, 0);
	assert_int_equal(c.e[1].shift_ns, HOUR);
	assert_int_equal(c.e[1].begin_ns, T0 + 10500 * 1000000LL);
	assert_int_equal(db_trace_time(&c, T0 - HOUR + 12 * SEC, 1),
	    T0 + 12 * SEC);
	assert_int_equal(db_trace_stamp(&c, T0 + 12 * SEC, &e),
	    T0 - HOUR + 12 * SEC);
	assert_int_equal(e, 1);
	assert_int_equal(db_trace_npieces(&c), 2);
	assert_int_equal(db_trace_pieces(&c, T0 + 5500 * 1000000LL,
	    T0 + 15500 * 1000000LL, p), 2);
	assert_int_equal(p[0].epoch, 0);
	assert_int_equal(p[0].lo_ns, T0 + 5500 * 1000000LL);
	assert_int_equal(p[1].epoch, 1);
	assert_int_equal(p[1].lo_ns, T0 - HOUR + 5500 * 1000000LL);
	assert_int_equal(p[1].shift_ns, HOUR);
	/* a span within epoch 0, far from the step: one piece */
	assert_int_equal(db_trace_pieces(&c, T0 - 3 * HOUR, T0 - 2 * HOUR,
	    p), 1);
	assert_int_equal(p[0].epoch, 0);

	assert_int_equal(db_catalog_read(f->st->db, &cat), 0);
	cols[0] = db_catalog_find(&cat, "pwr");
	assert_non_null(cols[0]);
	assert_non_null(s = db_select_samples(f->st->db, cols, 1, "", true));
	db_trace_cursor_open(&k, s, &c, T0 + 5500 * 1000000LL,
	    T0 + 15500 * 1000000LL, DB_MAX_INTERVAL_NS);
	while ((rc = db_trace_cursor_step(&k)) == SQLITE_ROW) {
		double v = sqlite3_column_double(s, 3);

		for (int d = 0; d < cols[0]->decimals; d++)
			v /= 10;
		assert_true(db_trace_cursor_ts(&k) > last);
		last = db_trace_cursor_ts(&k);
		sum += v;
		n++;
	}
	assert_int_equal(rc, SQLITE_DONE);
	db_trace_cursor_close(&k);
	sqlite3_finalize(s);
	db_catalog_free(&cat);
	/* T0 + 6 .. 10 s of epoch 0, T0 + 11 .. 16 s of epoch 1 */
	assert_int_equal(n, 11);
	assert_float_equal(sum, 5 * 100 + 6 * 200, 1e-9);
	assert_int_equal(last, T0 + 16 * SEC + 1000);
	db_trace_clock_free(&c);

	/* started after the step, at a time only epoch 1 ran on to: that
	 * epoch, and epoch 0's stamps an hour back */
	assert_int_equal(db_trace_clock_load(f->st->db, T0 + 12 * SEC, &c),
	    0);
	assert_int_equal(c.start_epoch, 1);
	assert_int_equal(c.e[0].shift_ns, -HOUR);
	assert_int_equal(c.e[1].shift_ns, 0);
	db_trace_clock_free(&c);
	/* a time both epochs showed: which one cannot be told */
	assert_int_equal(db_trace_clock_load(f->st->db, T0 - HOUR + 15 * SEC,
	    &c), 1);
	assert_int_equal(c.start_epoch, -1);
	/* no clock: one piece of any epoch, no shift */
	assert_int_equal(db_trace_pieces(NULL, 5, 9, p), 1);
	assert_int_equal(p[0].epoch, -1);
	assert_int_equal(p[0].shift_ns, 0);
	assert_int_equal(p[0].lo_ns, 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_selection, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_retention_open, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_trace_clock, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
