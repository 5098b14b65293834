/*
 * Tests of pace: pass-through, aggregation (exact decimal means, NULLs,
 * maxima), the stored cadence, replaying the ring when a window opens,
 * the ring's bounds, flushing; and of store_delete_after, alone and with
 * pace writing into a real store.
 *
 * Rows are fed on a 100 ms grid: row k is stamped T0 + k * 100 ms, so the
 * expected rows below are worked out from k by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "metrics.h"
#include "pace.h"
#include "storedb.h"
#include "store_priv.h"
#include "tmpdb.h"

#define MS		1000000LL
#define SEC		(1000 * MS)
#define T0		(1750000000LL * SEC)
#define TS(k)		(T0 + (int64_t)(k) * 100 * MS)

/* metric ids as the store would hand them out */
#define PWR		11
#define BUSY		12
#define PEAK		13
#define EXTRA		14

#define REC_ROWS	4096
#define REC_VALUES	8

/* ---- a sink that records what would be stored ---- */

struct rec_row {
	int64_t ts;
	int device;
	uint32_t interval_ms;
	bool have_skew;
	int32_t skew;
	size_t n;
	int ids[REC_VALUES];
	struct store_value v[REC_VALUES];
};

/* The stored series: rows in arrival order, minus those deleted. */
struct rec {
	struct rec_row rows[REC_ROWS];
	size_t n;
	size_t emitted;
	int ndeletes;
	int del_device[16];
	int64_t del_after[16];
	bool fail_delete;
};

static void
rec_row(void *arg, const struct store_sample *s)
{
	struct rec *r = arg;
	struct rec_row *o;

	assert_true(r->n < REC_ROWS);
	o = &r->rows[r->n++];
	r->emitted++;
	o->ts = s->ts_ns;
	o->device = s->device;
	o->interval_ms = s->interval_ms;
	o->have_skew = s->have_skew;
	o->skew = s->skew_s;
	o->n = s->nvalues < REC_VALUES ? s->nvalues : REC_VALUES;
	for (size_t i = 0; i < o->n; i++) {
		o->ids[i] = s->metric[i];
		o->v[i] = s->values[i];
	}
}

static int
rec_delete_after(void *arg, int device, int64_t after_ns)
{
	struct rec *r = arg;
	size_t kept = 0;

	assert_true(r->ndeletes < 16);
	r->del_device[r->ndeletes] = device;
	r->del_after[r->ndeletes++] = after_ns;
	if (r->fail_delete)
		return -1;
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].device != device || r->rows[i].ts <= after_ns)
			r->rows[kept++] = r->rows[i];
	r->n = kept;
	return 0;
}

static struct rec *
rec_new(void)
{
	struct rec *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	return r;
}

static struct pace *
pace_make(struct rec *r, int64_t fine_ms, int64_t coarse_ms, int64_t pre_ms)
{
	struct pace_params prm = { (uint64_t)(fine_ms * MS),
	    (uint64_t)(coarse_ms * MS), (uint64_t)(pre_ms * MS) };
	struct pace_sink sink = { rec_row, rec_delete_after, r };
	struct pace *p = pace_new(&prm, &sink);

	assert_non_null(p);
	return p;
}

/* The value of metric id in row o; absent if the row lacks it. */
static struct store_value
rec_value(const struct rec_row *o, int id)
{
	struct store_value none = { 0, 0, false };

	for (size_t i = 0; i < o->n; i++)
		if (o->ids[i] == id)
			return o->v[i];
	return none;
}

static void
assert_value(const struct rec_row *o, int id, int64_t mant, int scale)
{
	struct store_value v = rec_value(o, id);

	if (!v.present)
		fail_msg("metric %d absent at ts %" PRId64, id, o->ts);
	if (v.mant != mant || v.scale != scale)
		fail_msg("metric %d at ts %" PRId64 ": %" PRId64 "e-%d, want "
		    "%" PRId64 "e-%d", id, o->ts, v.mant, v.scale, mant, scale);
}

/* Rows of device in r, in order, into out; returns how many. */
static size_t
rec_device(const struct rec *r, int device, const struct rec_row **out,
    size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n && n < max; i++)
		if (r->rows[i].device == device)
			out[n++] = &r->rows[i];
	return n;
}

/*
 * No two stored rows of device overlap: each row's [ts - interval, ts]
 * starts at or after the previous row's ts.  With contiguous, also no gap.
 */
static void
assert_series(const struct rec *r, int device, bool contiguous)
{
	static const struct rec_row *rows[REC_ROWS];
	size_t n = rec_device(r, device, rows, REC_ROWS);

	for (size_t i = 1; i < n; i++) {
		int64_t start = rows[i]->ts - rows[i]->interval_ms * MS;

		if (start < rows[i - 1]->ts)
			fail_msg("device %d: row at %" PRId64 " (%u ms) overlaps "
			    "the row at %" PRId64, device, rows[i]->ts,
			    rows[i]->interval_ms, rows[i - 1]->ts);
		if (contiguous && start != rows[i - 1]->ts)
			fail_msg("device %d: gap before the row at %" PRId64,
			    device, rows[i]->ts);
	}
}

/* ---- feeding rows ---- */

static void
feed(struct pace *p, int device, int64_t ts, uint32_t ms, size_t n,
    const int *ids, const struct store_value *v)
{
	struct store_sample s = {
		.ts_ns = ts, .device = device, .interval_ms = ms,
		.have_skew = true, .skew_s = (int32_t)(ts / SEC % 7),
		.nvalues = n, .metric = ids, .values = v,
	};

	pace_row(p, &s);
}

/* Row k of the grid: pwr k/10 W, busy k % 100, peak 1000 + k. */
static void
feed_k(struct pace *p, int device, int k)
{
	static const int ids[] = { PWR, BUSY, PEAK };
	struct store_value v[] = {
		{ k, 1, true }, { k % 100, 0, true }, { 1000 + k, 0, true },
	};

	feed(p, device, TS(k), 100, 3, ids, v);
}

static void
feed_range(struct pace *p, int device, int from, int to)
{
	for (int k = from; k <= to; k++)
		feed_k(p, device, k);
}

/* Feed two rows of metric PWR (and nothing else) at 100 ms; one aggregate. */
static const struct rec_row *
mean_of_two(struct rec *r, struct pace *p, int k, struct store_value a,
    struct store_value b)
{
	static const int ids[] = { PWR };
	size_t before = r->n;

	feed(p, 0, TS(k), 100, 1, ids, &a);
	assert_int_equal(r->n, before);
	feed(p, 0, TS(k + 1), 100, 1, ids, &b);
	assert_int_equal(r->n, before + 1);
	return &r->rows[before];
}

/* ---- tests ---- */

static void
test_passthrough(void **state)
{
	static const int ids[] = { PWR, BUSY, PEAK, EXTRA };
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 100, 10000);
	struct pace_stats ps;

	(void)state;
	for (int k = 1; k <= 50; k++) {
		struct store_value v[] = {
			{ k * 7, (int8_t)(k % 4), true },
			{ -k, 0, k % 3 != 0 },
			{ INT64_MAX - k, 18, true },
			{ k, 2, false },
		};
		const struct rec_row *o;

		if (k == 20)
			pace_set_window(p, true, TS(k));
		if (k == 30)
			pace_set_window(p, false, TS(k));
		feed(p, k % 2, TS(k), 100, 4, ids, v);
		assert_int_equal(r->n, (size_t)k);
		o = &r->rows[k - 1];
		assert_int_equal(o->ts, TS(k));
		assert_int_equal(o->device, k % 2);
		assert_int_equal(o->interval_ms, 100);
		assert_true(o->have_skew);
		assert_int_equal(o->skew, TS(k) / SEC % 7);
		assert_int_equal(o->n, 4);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(o->ids[i], ids[i]);
			assert_int_equal(o->v[i].present, v[i].present);
			if (!v[i].present)
				continue;
			assert_int_equal(o->v[i].mant, v[i].mant);
			assert_int_equal(o->v[i].scale, v[i].scale);
		}
	}
	assert_int_equal(r->ndeletes, 0);
	pace_flush(p);
	assert_int_equal(r->emitted, 50);
	pace_get_stats(p, &ps);
	assert_int_equal(ps.ring_rows, 0);
	pace_free(p);
	free(r);
}

static void
test_mean_rounding(void **state)
{
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 200, 0);
	const struct rec_row *o;

	(void)state;
	/* 1 and 2: 1.5 rounds away from zero to 2 */
	o = mean_of_two(r, p, 1, (struct store_value){ 1, 0, true },
	    (struct store_value){ 2, 0, true });
	assert_value(o, PWR, 2, 0);
	assert_int_equal(o->interval_ms, 200);
	assert_int_equal(o->ts, TS(2));
	/* -1 and -2: -1.5 rounds to -2 */
	o = mean_of_two(r, p, 3, (struct store_value){ -1, 0, true },
	    (struct store_value){ -2, 0, true });
	assert_value(o, PWR, -2, 0);
	/* 1.24 and 1.25: 1.245 rounds to 1.25 at scale 2 */
	o = mean_of_two(r, p, 5, (struct store_value){ 124, 2, true },
	    (struct store_value){ 125, 2, true });
	assert_value(o, PWR, 125, 2);
	/* 1.23 and 1.24: 1.235 -> 1.24; 1.22 and 1.23: 1.225 -> 1.23 */
	o = mean_of_two(r, p, 7, (struct store_value){ 123, 2, true },
	    (struct store_value){ 124, 2, true });
	assert_value(o, PWR, 124, 2);
	/* 1.5 and 2.25 meet at scale 2: (150 + 225) / 2 = 187.5 -> 1.88 */
	o = mean_of_two(r, p, 9, (struct store_value){ 15, 1, true },
	    (struct store_value){ 225, 2, true });
	assert_value(o, PWR, 188, 2);
	/* the larger scale first: the same */
	o = mean_of_two(r, p, 11, (struct store_value){ 225, 2, true },
	    (struct store_value){ 15, 1, true });
	assert_value(o, PWR, 188, 2);
	/* 2^53 + 1 and 2^53 + 3: a double would lose the odd unit */
	o = mean_of_two(r, p, 13,
	    (struct store_value){ 9007199254740993LL, 0, true },
	    (struct store_value){ 9007199254740995LL, 0, true });
	assert_value(o, PWR, 9007199254740994LL, 0);
	/* sums beyond 64 bits: (INT64_MAX + INT64_MAX - 1) / 2, half up */
	o = mean_of_two(r, p, 15, (struct store_value){ INT64_MAX, 0, true },
	    (struct store_value){ INT64_MAX - 1, 0, true });
	assert_value(o, PWR, INT64_MAX, 0);
	o = mean_of_two(r, p, 17, (struct store_value){ INT64_MIN, 0, true },
	    (struct store_value){ INT64_MIN + 1, 0, true });
	assert_value(o, PWR, INT64_MIN, 0);
	/*
	 * 9e18 and 0.5: the exact mean 4.5e18 + 0.25 does not fit 64 bits at
	 * scale 1, so it is rounded once at scale 0 (rounding 0.5 to 1 first
	 * would give 4.5e18 + 1)
	 */
	o = mean_of_two(r, p, 19,
	    (struct store_value){ 9000000000000000000LL, 0, true },
	    (struct store_value){ 5, 1, true });
	assert_value(o, PWR, 4500000000000000000LL, 0);
	pace_free(p);
	free(r);
}

static void
test_mean_nulls_and_max(void **state)
{
	static const int ids[] = { PWR, BUSY, PEAK };
	static const int ids4[] = { PWR, BUSY, PEAK, EXTRA };
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 300, 0);
	struct store_value rows4[2][4] = {
		{ { 10, 0, true }, { 0, 0, false }, { 5, 0, true },
		    { 3, 0, true } },
		{ { 21, 0, true }, { 0, 0, false }, { 7, 0, true },
		    { 4, 0, true } },
	};
	struct store_value rows[3][3] = {
		{ { 10, 0, true }, { 0, 0, false }, { 5, 0, true } },
		{ { 0, 0, false }, { 0, 0, false }, { 95, 1, true } },
		{ { 21, 0, true }, { 0, 0, false }, { 7, 0, true } },
	};
	const struct rec_row *o;

	(void)state;
	pace_set_max(p, PEAK);
	for (int k = 0; k < 3; k++)
		feed(p, 0, TS(k + 1), 100, 3, ids, rows[k]);
	assert_int_equal(r->n, 1);
	o = &r->rows[0];
	/* mean over the present values only: (10 + 21) / 2 = 15.5 -> 16 */
	assert_value(o, PWR, 16, 0);
	assert_false(rec_value(o, BUSY).present);
	/* max of 5, 9.5, 7 is 9.5, as printed */
	assert_value(o, PEAK, 95, 1);
	assert_int_equal(o->interval_ms, 300);
	assert_int_equal(o->ts, TS(3));
	assert_int_equal(o->skew, TS(3) / SEC % 7);

	/* rows lacking metrics; a metric first seen mid-aggregate */
	feed(p, 0, TS(4), 100, 1, ids, rows[0]);
	feed(p, 0, TS(5), 100, 4, ids4, rows4[0]);
	feed(p, 0, TS(6), 100, 4, ids4, rows4[1]);
	assert_int_equal(r->n, 2);
	o = &r->rows[1];
	assert_value(o, PWR, 14, 0);		/* 41 / 3 = 13.67 */
	assert_value(o, PEAK, 7, 0);
	assert_value(o, EXTRA, 4, 0);		/* 3.5 */
	assert_false(rec_value(o, BUSY).present);
	pace_free(p);
	free(r);
}

static void
test_cadence(void **state)
{
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 1000, 3000);
	const struct rec_row *o;

	(void)state;
	/* two devices interleaved: 10 rows of 100 ms make one coarse row */
	for (int k = 1; k <= 35; k++) {
		feed_k(p, 0, k);
		feed_k(p, 1, k);
	}
	assert_int_equal(r->n, 6);
	for (size_t i = 0; i < 6; i++) {
		int last = (int)(i / 2 + 1) * 10;

		o = &r->rows[i];
		assert_int_equal(o->device, (int)(i % 2));
		assert_int_equal(o->ts, TS(last));
		assert_int_equal(o->interval_ms, 1000);
		/* pwr: mean of (last-9 .. last) / 10 W = (last - 4.5) / 10 */
		assert_value(o, PWR, last - 4, 1);
		assert_value(o, PEAK, 1000 + last - 4, 0);
	}
	assert_series(r, 0, true);
	assert_series(r, 1, true);
	pace_free(p);
	free(r);

	/* 300 ms rows: three make 900 ms, which is within 150 ms of 1 s */
	r = rec_new();
	p = pace_make(r, 300, 1000, 3000);
	pace_set_max(p, PEAK);
	for (int k = 1; k <= 7; k++)
		feed(p, 0, T0 + k * 300 * MS, 300, 0, NULL, NULL);
	assert_int_equal(r->n, 2);
	assert_int_equal(r->rows[0].ts, T0 + 900 * MS);
	assert_int_equal(r->rows[0].interval_ms, 900);
	assert_int_equal(r->rows[1].ts, T0 + 1800 * MS);
	/* a short row after a restart counts for what it is */
	feed(p, 0, T0 + 2200 * MS, 100, 0, NULL, NULL);
	feed(p, 0, T0 + 2500 * MS, 300, 0, NULL, NULL);
	assert_int_equal(r->n, 2);
	feed(p, 0, T0 + 2800 * MS, 300, 0, NULL, NULL);
	assert_int_equal(r->n, 3);
	assert_int_equal(r->rows[2].ts, T0 + 2800 * MS);
	assert_int_equal(r->rows[2].interval_ms, 1000);
	assert_series(r, 0, true);
	pace_free(p);
	free(r);
}

static void
test_window_replay(void **state)
{
	static const struct rec_row *rows[REC_ROWS];
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 1000, 3000);
	struct pace_stats ps;
	size_t n;

	(void)state;
	pace_set_max(p, PEAK);
	for (int k = 1; k <= 105; k++) {
		feed_k(p, 0, k);
		feed_k(p, 1, k);
	}
	assert_int_equal(r->n, 20);	/* coarse rows at 10, 20, .. 100 */
	/*
	 * At 10.55 s a window opens: 3 s back is 7.55 s, and the newest
	 * coarse row at or before that ends at row 70.  Rows 71..105 replace
	 * the coarse rows 80, 90, 100 and the partial aggregate 101..105.
	 */
	pace_set_window(p, true, TS(105) + 50 * MS);
	assert_int_equal(r->ndeletes, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r->del_device[i], i);
		assert_int_equal(r->del_after[i], TS(70));
	}
	n = rec_device(r, 0, rows, REC_ROWS);
	assert_int_equal(n, 7 + 35);
	for (int k = 71; k <= 105; k++) {
		const struct rec_row *o = rows[6 + k - 70];

		assert_int_equal(o->ts, TS(k));
		assert_int_equal(o->interval_ms, 100);
		assert_value(o, PWR, k, 1);
		assert_value(o, BUSY, k % 100, 0);
		assert_int_equal(o->skew, TS(k) / SEC % 7);
	}
	/* the fine rows reach back to the cut-off */
	assert_true(rows[7]->ts - rows[7]->interval_ms * MS <=
	    TS(105) + 50 * MS - 3 * SEC);
	pace_get_stats(p, &ps);
	assert_int_equal(ps.replayed, 70);
	assert_int_equal(ps.replaced, 2);
	assert_true(ps.window_open);

	/* while open every row is stored at once */
	for (int k = 106; k <= 120; k++) {
		feed_k(p, 0, k);
		assert_int_equal(r->rows[r->n - 1].ts, TS(k));
		feed_k(p, 1, k);
	}
	/* repeating the state does nothing */
	pace_set_window(p, true, TS(120));
	assert_int_equal(r->ndeletes, 2);

	/*
	 * closed at 12.05 s: row 121, stamped after the close, still covers
	 * the end from 12.0 s, and row 122 is the first that starts after
	 * it (at 12.1 s); both are stored as they are, so that every row
	 * over the end is a fine one.  Then coarse again, the first
	 * aggregate made of 123..132.
	 */
	pace_set_window(p, false, TS(120) + 50 * MS);
	feed_range(p, 0, 121, 145);
	n = rec_device(r, 0, rows, REC_ROWS);
	assert_int_equal(n, 7 + 50 + 2 + 2);
	assert_int_equal(rows[n - 4]->ts, TS(121));
	assert_int_equal(rows[n - 4]->interval_ms, 100);
	assert_int_equal(rows[n - 3]->ts, TS(122));
	assert_int_equal(rows[n - 3]->interval_ms, 100);
	assert_int_equal(rows[n - 2]->ts, TS(132));
	assert_int_equal(rows[n - 2]->interval_ms, 1000);
	assert_value(rows[n - 2], PWR, 128, 1);	/* 127.5 / 10 W, away */
	assert_value(rows[n - 2], PEAK, 1132, 0);
	assert_int_equal(rows[n - 1]->ts, TS(142));
	assert_series(r, 0, true);
	assert_series(r, 1, true);

	/*
	 * Open again at 14.55 s: 3 s back is 11.55 s.  Rows 116..122 were
	 * stored one by one, so the replay starts after 122, not 115.
	 */
	pace_set_window(p, true, TS(145) + 50 * MS);
	assert_int_equal(r->ndeletes, 3);	/* device 1 had nothing after 120 */
	assert_int_equal(r->del_device[2], 0);
	assert_int_equal(r->del_after[2], TS(122));
	n = rec_device(r, 0, rows, REC_ROWS);
	assert_int_equal(n, 7 + 50 + 2 + 23);
	for (size_t i = 7; i < n; i++)
		assert_int_equal(rows[i]->interval_ms, 100);
	assert_series(r, 0, true);
	assert_series(r, 1, true);
	pace_free(p);
	free(r);
}

/*
 * The host clock is stepped back an hour, and a window opens once the
 * ring holds only rows stamped by the new clock: its replay must not
 * delete the rows stored before the step (stamped after every row in the
 * ring); the partial aggregate is stored instead, and nothing is lost.
 */
static void
test_window_after_step_back(void **state)
{
	static const struct rec_row *rows[REC_ROWS];
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 1000, 3000);
	int64_t back = -3600 * SEC;
	size_t n;
	int before = 0;

	(void)state;
	feed_range(p, 0, 1, 105);
	assert_int_equal(r->n, 10);	/* coarse rows at 10, 20, .. 100 */
	pace_clock_stepped(p, back);
	for (int k = 106; k <= 170; k++) {
		static const int ids[] = { PWR };
		struct store_value v = { k, 1, true };

		feed(p, 0, TS(k) + back, 100, 1, ids, &v);
	}
	pace_set_window(p, true, TS(170) + back + 50 * MS);
	for (int i = 0; i < r->ndeletes; i++)
		assert_true(r->del_after[i] >= TS(100));
	n = rec_device(r, 0, rows, REC_ROWS);
	for (size_t i = 0; i < n; i++)
		if (rows[i]->ts >= TS(10) && rows[i]->ts <= TS(100))
			before++;
	assert_int_equal(before, 10);
	/* and rows after the step are stored, through the partial one */
	assert_int_equal(rows[n - 1]->ts, TS(170) + back);
	pace_free(p);
	free(r);
}

static void
test_window_fresh_start(void **state)
{
	static const struct rec_row *rows[REC_ROWS];
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 1000, 3000);
	size_t n;

	(void)state;
	/* 1.5 s of rows: the ring holds them all, from the very first */
	feed_range(p, 0, 1, 15);
	assert_int_equal(r->n, 1);
	pace_set_window(p, true, TS(15));
	assert_int_equal(r->ndeletes, 1);
	assert_int_equal(r->del_after[0], TS(1) - 1);
	n = rec_device(r, 0, rows, REC_ROWS);
	assert_int_equal(n, 15);
	for (int k = 1; k <= 15; k++)
		assert_int_equal(rows[k - 1]->ts, TS(k));
	assert_series(r, 0, true);

	/* a window opening before any row replays nothing */
	pace_free(p);
	free(r);
	r = rec_new();
	p = pace_make(r, 100, 1000, 3000);
	pace_set_window(p, true, TS(0));
	feed_range(p, 0, 1, 3);
	assert_int_equal(r->ndeletes, 0);
	assert_int_equal(r->n, 3);
	pace_free(p);
	free(r);
}

static void
test_new_metric_in_ring(void **state)
{
	static const int ids[] = { PWR, EXTRA };
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 1000, 3000);

	(void)state;
	for (int k = 1; k <= 25; k++) {
		struct store_value v[] = { { k, 1, true }, { 2 * k, 0, true } };

		feed(p, 0, TS(k), 100, k <= 15 ? 1 : 2, ids, v);
	}
	assert_int_equal(r->n, 2);
	/* the coarse row of 11..20: 1.55 W -> 1.6; extra from 16: 36 */
	assert_value(&r->rows[1], PWR, 16, 1);
	assert_value(&r->rows[1], EXTRA, 36, 0);
	pace_set_window(p, true, TS(25));
	assert_int_equal(r->n, 25);
	for (int k = 1; k <= 25; k++) {
		const struct rec_row *o = &r->rows[k - 1];

		assert_int_equal(o->ts, TS(k));
		assert_value(o, PWR, k, 1);
		if (k <= 15)
			assert_false(rec_value(o, EXTRA).present);
		else
			assert_value(o, EXTRA, 2 * k, 0);
	}
	pace_free(p);
	free(r);
}

/* Feed row k with n_metrics metrics (ids 100..), pwr-like value k. */
static void
feed_wide(struct pace *p, int device, int k, size_t n_metrics)
{
	int ids[PACE_MAX_METRICS];
	struct store_value v[PACE_MAX_METRICS];

	for (size_t i = 0; i < n_metrics; i++) {
		ids[i] = 100 + (int)i;
		v[i] = (struct store_value){ k, 0, true };
	}
	feed(p, device, TS(k), 100, n_metrics, ids, v);
}

static void
test_ring_bound(void **state)
{
	static const struct rec_row *rows[REC_ROWS];
	struct rec *r = rec_new();
	/* 10 s before a window wants 125 rows; 128 metrics fit 27 in 32 KiB */
	struct pace *p = pace_make(r, 100, 1000, 10000);
	struct pace_params prm = { 100 * MS, 1000 * MS, 10000 * MS };
	struct pace_stats ps;
	size_t n;

	(void)state;
	assert_int_equal(pace_ring_rows(&prm, 23), 125);
	assert_int_equal(pace_ring_rows(&prm, 128), 32768 / (24 + 9 * 128));
	for (int k = 1; k <= 105; k++)
		feed_wide(p, 0, k, 128);
	pace_get_stats(p, &ps);
	assert_int_equal(ps.ring_capacity, 27);
	assert_int_equal(ps.ring_rows, 27);
	assert_true(ps.ring_bytes <= 32768 + 128 * 48 + 256);
	/*
	 * The ring holds rows 79..105; none of its boundaries (80, 90, 100)
	 * is 10 s old, so the oldest one is used.
	 */
	pace_set_window(p, true, TS(105));
	assert_int_equal(r->ndeletes, 1);
	assert_int_equal(r->del_after[0], TS(80));
	n = rec_device(r, 0, rows, REC_ROWS);
	assert_int_equal(n, 8 + 25);
	assert_series(r, 0, true);
	pace_free(p);
	free(r);

	/* 70 devices: only the first 64 get a ring */
	r = rec_new();
	p = pace_make(r, 100, 1000, 3000);
	for (int k = 1; k <= 60; k++)
		for (int d = 0; d < 70; d++)
			feed_k(p, d, k);
	pace_get_stats(p, &ps);
	assert_int_equal(ps.devices, 70);
	assert_int_equal(ps.ring_capacity, 47);
	assert_int_equal(ps.ring_rows, 64 * 47);
	pace_free(p);
	free(r);
}

static void
test_aggregate_beyond_ring(void **state)
{
	static const struct rec_row *rows[REC_ROWS];
	struct rec *r = rec_new();
	/* 10 s aggregates, a ring of 27 rows: 5 s of rows reach past it */
	struct pace *p = pace_make(r, 100, 10000, 1000);
	size_t n;

	(void)state;
	for (int k = 1; k <= 50; k++)
		feed_wide(p, 0, k, 128);
	assert_int_equal(r->n, 0);
	pace_set_window(p, true, TS(50));
	assert_int_equal(r->ndeletes, 0);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->rows[0].ts, TS(50));
	assert_int_equal(r->rows[0].interval_ms, 5000);
	assert_value(&r->rows[0], 100, 26, 0);	/* 25.5, away from zero */
	feed_wide(p, 0, 51, 128);
	n = rec_device(r, 0, rows, REC_ROWS);
	assert_int_equal(n, 2);
	assert_int_equal(rows[1]->interval_ms, 100);
	assert_series(r, 0, true);
	pace_free(p);
	free(r);
}

static void
test_delete_fails(void **state)
{
	static const struct rec_row *rows[REC_ROWS];
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 1000, 3000);
	size_t n;

	(void)state;
	feed_range(p, 0, 1, 45);
	r->fail_delete = true;
	pace_set_window(p, true, TS(45));
	assert_int_equal(r->ndeletes, 1);
	/* nothing replaced: the partial aggregate 41..45 is stored instead */
	n = rec_device(r, 0, rows, REC_ROWS);
	assert_int_equal(n, 5);
	assert_int_equal(rows[4]->ts, TS(45));
	assert_int_equal(rows[4]->interval_ms, 500);
	feed_k(p, 0, 46);
	assert_int_equal(r->n, 6);
	assert_series(r, 0, true);
	pace_free(p);
	free(r);
}

static void
test_flush(void **state)
{
	struct rec *r = rec_new();
	struct pace *p = pace_make(r, 100, 1000, 3000);

	(void)state;
	pace_flush(p);
	assert_int_equal(r->n, 0);
	feed_range(p, 0, 1, 13);
	feed_range(p, 1, 1, 4);
	assert_int_equal(r->n, 1);
	pace_flush(p);
	assert_int_equal(r->n, 3);
	assert_int_equal(r->rows[1].device, 0);
	assert_int_equal(r->rows[1].ts, TS(13));
	assert_int_equal(r->rows[1].interval_ms, 300);
	assert_value(&r->rows[1], PWR, 12, 1);	/* mean of 1.1, 1.2, 1.3 W */
	assert_int_equal(r->rows[2].device, 1);
	assert_int_equal(r->rows[2].interval_ms, 400);
	pace_flush(p);
	assert_int_equal(r->n, 3);
	/* the next aggregate starts afresh: 14..23 */
	feed_range(p, 0, 14, 23);
	assert_int_equal(r->n, 4);
	assert_int_equal(r->rows[3].ts, TS(23));
	assert_int_equal(r->rows[3].interval_ms, 1000);
	assert_series(r, 0, true);

	/*
	 * A flushed row is a boundary: at 4.4 s, 3 s back is 1.4 s, and the
	 * newest stored row by then is the one flushed at 1.3 s.
	 */
	feed_range(p, 0, 24, 44);
	pace_set_window(p, true, TS(44));
	assert_int_equal(r->ndeletes, 1);
	assert_int_equal(r->del_after[0], TS(13));
	assert_series(r, 0, true);
	pace_free(p);
	free(r);
}

/* ---- store_delete_after, and pace writing into a store ---- */

struct fx {
	struct tmpdb db;
	struct store *st;
	int pwr, busy;
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->db, "test_pace"), 0);
	assert_int_equal(storedb_open(f->db.path, 10000, &f->st), 0);
	assert_int_equal(storedb_metric(f->st, "pwr", "W", &f->pwr), 0);
	assert_int_equal(storedb_metric(f->st, "busy", "%", &f->busy), 0);
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
append(struct fx *f, int device, int64_t ts, uint32_t ms, int64_t pwr)
{
	struct store_value v = { pwr, 1, true };
	struct store_sample s = { .ts_ns = ts, .device = device,
	    .interval_ms = ms, .nvalues = 1, .metric = &f->pwr, .values = &v };

	storedb_append(f->st, &s);
}

static int64_t
q_int(struct fx *f, const char *fmt, ...)
{
	sqlite3_stmt *s;
	va_list ap;
	char *sql;
	int64_t v;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (sqlite3_prepare_v2(f->st->db, sql, -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW)
		fail_msg("%s: %s", sql, sqlite3_errmsg(f->st->db));
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_free(sql);
	return v;
}

static void
test_store_delete_after(void **state)
{
	struct fx *f = *state;
	struct store_stats ss;
	sqlite3_stmt *s;
	char *eqp;

	for (int k = 1; k <= 5; k++) {
		append(f, 0, TS(k), 100, k);
		append(f, 1, TS(k), 100, k);
	}
	assert_int_equal(storedb_flush(f->st), 0);
	for (int k = 6; k <= 10; k++) {
		append(f, 1, TS(k), 100, k);
		append(f, 0, TS(k), 100, k);
	}
	/* device 0 after row 3: two rows written, five buffered */
	assert_int_equal(storedb_delete_after(f->st, 0, TS(3)), 0);
	storedb_get_stats(f->st, &ss);
	assert_int_equal(ss.pending, 5);
	/* the device may go on right after 3, without being pushed past 10 */
	append(f, 0, TS(3) + 50 * MS, 50, 35);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE "
	    "device = 0"), 4);
	assert_int_equal(q_int(f, "SELECT max(ts_ns) FROM samples WHERE "
	    "device = 0"), TS(3) + 50 * MS);
	assert_int_equal(q_int(f, "SELECT round(value * 10) FROM sample_values "
	    "WHERE metric = 'pwr' AND device = 0 AND ts_ns = %lld",
	    (long long)(TS(3) + 50 * MS)), 35);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE "
	    "device = 1"), 10);
	assert_int_equal(q_int(f, "SELECT round(sum(value * 10)) FROM "
	    "sample_values WHERE metric = 'pwr' AND device = 1"), 55);
	/* nothing after: nothing removed, still 0 */
	assert_int_equal(storedb_delete_after(f->st, 0, TS(100)), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 14);

	/* one primary-key range search */
	eqp = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", store_sql_delete_after);
	assert_int_equal(sqlite3_prepare_v2(f->st->db, eqp, -1, &s, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	print_message("  %s\n", (const char *)sqlite3_column_text(s, 3));
	assert_string_equal((const char *)sqlite3_column_text(s, 3),
	    "SEARCH samples USING PRIMARY KEY (ts_ns>?)");
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	sqlite3_free(eqp);
}

static void
store_sink_row(void *arg, const struct store_sample *s)
{
	storedb_append(arg, s);
}

static int
store_sink_delete(void *arg, int device, int64_t after_ns)
{
	return storedb_delete_after(arg, device, after_ns);
}

static void
test_pace_into_store(void **state)
{
	struct fx *f = *state;
	struct pace_params prm = { 100 * MS, 1000 * MS, 2000 * MS };
	struct pace_sink sink = { store_sink_row, store_sink_delete, f->st };
	struct pace *p = pace_new(&prm, &sink);
	int ids[2] = { f->pwr, f->busy };
	sqlite3_stmt *s;

	assert_non_null(p);
	for (int k = 1; k <= 60; k++) {
		for (int d = 0; d < 2; d++) {
			struct store_value v[2] = { { k, 1, true },
			    { d, 0, true } };
			struct store_sample smp = { .ts_ns = TS(k), .device = d,
			    .interval_ms = 100, .nvalues = 2, .metric = ids,
			    .values = v };

			pace_row(p, &smp);
		}
		if (k == 55)
			assert_int_equal(storedb_flush(f->st), 0);
	}
	/* 2 s back from 6.05 s: the coarse rows 50 (written) and 60 go */
	pace_set_window(p, true, TS(60) + 50 * MS);
	assert_int_equal(storedb_flush(f->st), 0);
	for (int d = 0; d < 2; d++) {
		int64_t prev = 0, n = 0;

		assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE "
		    "device = %d", d), 4 + 20);
		assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE "
		    "device = %d AND interval_ms = 100 AND ts_ns > %lld", d,
		    (long long)TS(40)), 20);
		assert_int_equal(q_int(f, "SELECT round(sum(value * 10)) FROM "
		    "sample_values WHERE metric = 'pwr' AND device = %d AND "
		    "ts_ns > %lld", d, (long long)TS(40)), (41 + 60) * 20 / 2);
		assert_int_equal(sqlite3_prepare_v2(f->st->db, "SELECT ts_ns, "
		    "interval_ms FROM samples WHERE device = ?1 ORDER BY ts_ns",
		    -1, &s, NULL), SQLITE_OK);
		sqlite3_bind_int(s, 1, d);
		while (sqlite3_step(s) == SQLITE_ROW) {
			int64_t ts = sqlite3_column_int64(s, 0);
			int64_t start = ts - sqlite3_column_int64(s, 1) * MS;

			if (n++ > 0)
				assert_int_equal(start, prev);
			prev = ts;
		}
		sqlite3_finalize(s);
		assert_int_equal(prev, TS(60));
	}
	pace_flush(p);
	pace_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passthrough),
		cmocka_unit_test(test_mean_rounding),
		cmocka_unit_test(test_mean_nulls_and_max),
		cmocka_unit_test(test_cadence),
		cmocka_unit_test(test_window_replay),
		cmocka_unit_test(test_window_fresh_start),
		cmocka_unit_test(test_window_after_step_back),
		cmocka_unit_test(test_new_metric_in_ring),
		cmocka_unit_test(test_ring_bound),
		cmocka_unit_test(test_aggregate_beyond_ring),
		cmocka_unit_test(test_delete_fails),
		cmocka_unit_test(test_flush),
		cmocka_unit_test_setup_teardown(test_store_delete_after, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_pace_into_store, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
