/*
 * Tests of the calls' energy from the card's charge counter
 * (devcounter.h), with readings and samples made here: the increment
 * across a wrap at 2^32, the order by cycle stamp, a counter that goes
 * backwards (left out), intervals no sample covers (left out), an exact
 * scale and a fit with a residual worked out by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "devcounter.h"

#define MS	1000000LL
#define S	1000000000LL

static void
near(double got, double want)
{
	if (fabs(got - want) > 1e-9 * fmax(1, fabs(want)))
		fail_msg("%.17g is not %.17g", got, want);
}

/* 50 W over [0, 1 s]: 5, 10, 15 J between readings of 5000, 10000,
 * 15000 counts, one of them across the wrap: 1 mJ per count, exactly. */
static void
test_exact_scale_across_wrap(void **state)
{
	struct attrib_sample s[] = { { 0, S, 50 } };
	struct devcounter_reading r[] = {
		{ .counter = 4294962296u, .cycles = 10, .t_ns = 0, .call = 0 },
		{ .counter = 0, .cycles = 20, .t_ns = 100 * MS, .call = 1 },
		{ .counter = 10000, .cycles = 30, .t_ns = 300 * MS, .call = 2 },
		{ .counter = 25000, .cycles = 40, .t_ns = 600 * MS, .call = 3 },
	};
	struct devcounter_fit f;

	(void)state;
	devcounter_fit(r, 4, s, 1, &f);
	assert_int_equal(r[0].counts, 5000);
	assert_int_equal(r[1].counts, 10000);
	assert_int_equal(r[2].counts, 15000);
	assert_int_equal(r[3].counts, 0);
	assert_int_equal(f.intervals, 3);
	assert_int_equal(f.backwards, 0);
	near(f.j_per_count, 1e-3);
	near(f.residual_j, 0);
	near(f.sampled_j, 30);
	near(f.counts, 30000);
}

/* Readings given out of order are taken by cycle stamp; one whose
 * counter is below the one before is left out, not read as a wrap. */
static void
test_order_and_backwards(void **state)
{
	struct attrib_sample s[] = { { 0, S, 10 } };
	struct devcounter_reading r[] = {
		{ .counter = 300, .cycles = 3, .t_ns = 300 * MS, .call = 2 },
		{ .counter = 100, .cycles = 1, .t_ns = 100 * MS, .call = 0 },
		{ .counter = 50, .cycles = 2, .t_ns = 200 * MS, .call = 1 },
		{ .counter = 400, .cycles = 4, .t_ns = 400 * MS, .call = 3 },
		/* read with call 3, at its cycle: no interval of its own */
		{ .counter = 400, .cycles = 4, .t_ns = 450 * MS, .call = 4 },
	};
	struct devcounter_fit f;

	(void)state;
	devcounter_fit(r, 5, s, 1, &f);
	assert_int_equal(r[3].used, 0);
	assert_int_equal(r[0].call, 0);
	assert_int_equal(r[1].call, 1);
	assert_int_equal(f.backwards, 1);
	assert_int_equal(r[0].used, 0);
	assert_int_equal(r[1].counts, 250);
	assert_int_equal(f.intervals, 2);
	/* 1 J over each 100 ms, 250 and 100 counts */
	near(f.j_per_count, (250.0 + 100.0) / (250.0 * 250 + 100.0 * 100));
}

/*
 * 1 W held; readings at 0, 1 and 4 s of counters 0, 1 and 3: E = 1 and
 * 3 J against 1 and 2 counts.  k = (1 + 6) / (1 + 4) = 1.4 J per count;
 * residuals -0.4 and 0.2 J, RMS sqrt(0.1); E's RMS sqrt(5), so relative
 * sqrt(0.02).  An interval past the samples is left out.
 */
static void
test_fit_residual(void **state)
{
	struct attrib_sample s[] = { { 0, 2 * S, 1 }, { 2 * S, 4 * S, 1 } };
	struct devcounter_reading r[] = {
		{ .counter = 0, .cycles = 1, .t_ns = 0, .call = 0 },
		{ .counter = 1, .cycles = 2, .t_ns = 1 * S, .call = 1 },
		{ .counter = 3, .cycles = 3, .t_ns = 4 * S, .call = 2 },
		{ .counter = 9, .cycles = 4, .t_ns = 6 * S, .call = 3 },
	};
	struct devcounter_fit f;

	(void)state;
	devcounter_fit(r, 4, s, 2, &f);
	assert_int_equal(f.intervals, 2);
	assert_int_equal(f.unsampled, 1);
	near(f.j_per_count, 1.4);
	near(f.residual_j, sqrt(0.1));
	near(f.residual_rel, sqrt(0.02));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_scale_across_wrap),
		cmocka_unit_test(test_order_and_backwards),
		cmocka_unit_test(test_fit_residual),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
