/*
 * Tests of the sharing of a card's energy among its device events
 * (attrib.h), with samples and events made here and answers worked out
 * by hand in the comments: proportional sharing of one sample, events
 * that run at once, idle and host-only time, samples outside the span
 * (neighbours only), events that no sample covers, the bound against
 * the truth of a power that changes within a sample, by hand and over a
 * power known every millisecond, slow and fast, and the closure of
 * operators plus idle on the span's energy to 1e-9 over many random
 * samples and events.
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

#include "attrib.h"

#define MS	1000000LL

/* A pseudo-random generator of its own, so the test is the same anywhere. */
static uint64_t
next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* a == b to 1e-12 relative (or absolute, near 0) */
static void
near(double a, double b)
{
	double tol = 1e-12 * fmax(1, fmax(fabs(a), fabs(b)));

	if (fabs(a - b) > tol)
		fail_msg("%.17g is not %.17g", a, b);
}

static struct attrib_card
card_of(size_t nops)
{
	struct attrib_card c = { .nops = nops };

	c.ops = calloc(nops, sizeof(*c.ops));
	assert_non_null(c.ops);
	return c;
}

/*
 * Samples (0, 100] 100 W and (100, 200] 200 W; A [0, 50], B [50, 150]
 * (ms), A of 2e9 flops.  Sample 1, 10 J: A 50 ms and B 50 ms, no idle:
 * 5 J each.
 * Sample 2, 20 J: B 50 ms 10 J, idle 50 ms 10 J.  A 5, B 15, idle 10, of
 * 30 J.  Bounds, with a maximum of 300 W and a floor of 100 W (the
 * lowest sample): sample 1 is at the floor, so each part of it drew
 * exactly 100 W: 0.  In sample 2 a half of 20 J lies within [max(0.05 x
 * 100, 20 - 0.05 x 300), min(0.05 x 300, 20 - 0.05 x 100)] = [5, 15]:
 * 5 J off 10 at most; B 5, idle 5.  Neither sample has two neighbours,
 * so no spread narrows it.
 */
static void
test_proportional(void **state)
{
	struct attrib_sample s[] = {
		{ 100 * MS, 200 * MS, 200 }, { 0, 100 * MS, 100 },
	};
	struct attrib_event e[] = {
		{ 50 * MS, 150 * MS, 1, -1 }, { 0, 50 * MS, 0, 2e9 },
	};
	struct attrib_card c = card_of(2);
	double ej[2];

	(void)state;
	c.max_w = 300;
	c.event_j = ej;
	assert_int_equal(attrib_card(s, 2, e, 2, NULL, 0, 0, 200 * MS, &c), 0);
	near(c.span_j, 30);
	near(c.ops[0].energy_j, 5);
	near(c.ops[1].energy_j, 15);
	near(c.idle_j, 10);
	/* each event's own share, the events sorted by start */
	assert_int_equal(e[0].op, 0);
	near(ej[0], 5);
	near(ej[1], 15);
	assert_int_equal(c.idle_ns, 50 * MS);
	assert_int_equal(c.busy_ns, 150 * MS);
	assert_int_equal(c.active_ns, 150 * MS);
	assert_int_equal(c.first_ns, 0);
	assert_int_equal(c.last_ns, 150 * MS);
	assert_int_equal(c.covered_ns, 200 * MS);
	assert_int_equal(c.samples, 2);
	assert_int_equal(c.max_interval_ns, 100 * MS);
	assert_int_equal(c.ops[0].calls, 1);
	assert_int_equal(c.ops[1].calls, 1);
	assert_int_equal(c.ops[1].device_ns, 100 * MS);
	near(c.ops[1].time_ns, 100 * MS);
	near(c.floor_w, 100);
	near(c.ceiling_w, 300);
	near(c.ops[0].bound_j, 0);
	near(c.ops[1].bound_j, 5);
	near(c.idle_bound_j, 5);
	assert_true(c.closure < 1e-15);
	assert_true(c.ops[0].has_flops && c.ops[0].flops == 2e9);
	assert_false(c.ops[1].has_flops);
	free(c.ops);
}

/*
 * One sample (0, 100] at 100 W, 10 J; A [0, 60] and B [40, 100] run at
 * once over [40, 60]: busy 100 ms, overlaps 60 and 60, so each takes
 * half: 5 J and 50 ms.  Its only sample has no neighbour: spread 0.
 */
static void
test_concurrent(void **state)
{
	struct attrib_sample s[] = { { 0, 100 * MS, 100 } };
	struct attrib_event e[] = {
		{ 0, 60 * MS, 0, -1 }, { 40 * MS, 100 * MS, 1, -1 },
	};
	struct attrib_card c = card_of(2);

	(void)state;
	assert_int_equal(attrib_card(s, 1, e, 2, NULL, 0, 0, 100 * MS, &c), 0);
	near(c.ops[0].energy_j, 5);
	near(c.ops[1].energy_j, 5);
	near(c.ops[0].time_ns, 50 * MS);
	assert_int_equal(c.ops[0].device_ns, 60 * MS);
	assert_int_equal(c.active_ns, 100 * MS);
	near(c.idle_j, 0);
	assert_int_equal(c.idle_ns, 0);
	near(c.ops[0].bound_j, 0);
	free(c.ops);
}

/*
 * (0, 100] at 100 W; A [0, 20]; a host event [10, 50].  Busy 20 ms, 2 J;
 * idle 80 ms, 8 J, of which host-only [20, 50]: 30 ms, 3 J.
 */
static void
test_idle_and_host(void **state)
{
	struct attrib_sample s[] = { { 0, 100 * MS, 100 } };
	struct attrib_event e[] = { { 0, 20 * MS, 0, -1 } };
	struct attrib_iv h[] = { { 10 * MS, 50 * MS } };
	struct attrib_card c = card_of(1);

	(void)state;
	assert_int_equal(attrib_card(s, 1, e, 1, h, 1, 0, 100 * MS, &c), 0);
	near(c.ops[0].energy_j, 2);
	near(c.idle_j, 8);
	assert_int_equal(c.idle_ns, 80 * MS);
	assert_int_equal(c.host_only_ns, 30 * MS);
	near(c.host_only_j, 3);
	free(c.ops);
}

/*
 * The span [50, 500] ms over samples (0, 100] 100 W, (100, 200] 200 W,
 * (200, 300] 300 W: 100 x 0.05 + 200 x 0.1 + 300 x 0.1 = 55 J.  A [60,
 * 240] takes 40 of the first sample's 50 ms in the span (4 J), the
 * middle sample whole (20 J, exact) and 40 ms of the last (12 J): 36 J;
 * idle 10 + 60 ms, 1 + 18 J.  Its bound, the maximum 400 W: the first
 * sample is at the floor (100 W), so exact; of the last, whose mean is
 * over all its 100 ms, 30 J, A's 40 ms lie within [max(4, 30 - 0.06 x
 * 400), min(16, 30 - 0.06 x 100)] = [6, 16]: 6 J off 12 at most.  B
 * [400, 410], in the span but in no sample, is counted with no energy.
 */
static void
test_span_clip_and_gaps(void **state)
{
	struct attrib_sample s[] = {
		{ 0, 100 * MS, 100 }, { 100 * MS, 200 * MS, 200 },
		{ 200 * MS, 300 * MS, 300 },
	};
	struct attrib_event e[] = {
		{ 60 * MS, 240 * MS, 0, -1 }, { 400 * MS, 410 * MS, 1, -1 },
	};
	struct attrib_card c = card_of(2);

	(void)state;
	c.max_w = 400;
	assert_int_equal(attrib_card(s, 3, e, 2, NULL, 0, 50 * MS, 500 * MS,
	    &c), 0);
	near(c.span_j, 55);
	near(c.ops[0].energy_j, 36);
	near(c.idle_j, 19);
	assert_int_equal(c.covered_ns, 250 * MS);
	assert_int_equal(c.ops[1].calls, 1);
	assert_int_equal(c.ops[1].device_ns, 10 * MS);
	near(c.ops[1].energy_j, 0);
	near(c.ops[1].time_ns, 0);
	/* busy is what samples cover; active, the events' union, is not */
	assert_int_equal(c.busy_ns, 180 * MS);
	assert_int_equal(c.active_ns, 190 * MS);
	assert_int_equal(c.first_ns, 60 * MS);
	assert_int_equal(c.last_ns, 410 * MS);
	near(c.ops[0].bound_j, 6);
	assert_int_equal(c.ops[0].partial, 2);
	free(c.ops);
}

/*
 * A span that ends inside a sample: 100 W until 170 ms, then 300 W,
 * sampled as (100, 200] at 160 W; the span [100, 170] holds A [100, 170]
 * alone, which drew 7 J.  It takes the clipped sample whole, 160 x 0.07
 * = 11.2 J, yet that is no whole sample: 4.2 J off, within its bound
 * (300 - 100) x 0.07 x 0.03 / 0.1 = 4.2 J, not the 0 of an exact share.
 */
static void
test_span_clips_a_sample(void **state)
{
	struct attrib_sample s[] = {
		{ 0, 100 * MS, 100 }, { 100 * MS, 200 * MS, 160 },
		{ 200 * MS, 300 * MS, 300 },
	};
	struct attrib_event e[] = { { 100 * MS, 170 * MS, 0, -1 } };
	struct attrib_card c = card_of(1);

	(void)state;
	assert_int_equal(attrib_card(s, 3, e, 1, NULL, 0, 100 * MS, 170 * MS,
	    &c), 0);
	near(c.ops[0].energy_j, 11.2);
	near(c.ops[0].bound_j, 4.2);
	assert_true(fabs(c.ops[0].energy_j - 7) <= c.ops[0].bound_j + 1e-9);
	assert_int_equal(c.ops[0].partial, 1);
	free(c.ops);
}

/*
 * The truth: 100 W until 150 ms, then 300 W, sampled every 100 ms as
 * the means 100, 200 and 300 W: the floor 100 W, the ceiling 300 W.  A
 * [110, 140] drew 3 J; it is given 200 x 0.03 = 6 J, 3 J off, at its
 * bound: 30 ms of a sample of 20 J lie within [max(3, 20 - 0.07 x
 * 300), min(9, 20 - 0.07 x 100)] = [3, 9].  B [150, 190] drew 12 J, is
 * given 8, within [max(4, 20 - 0.06 x 300), min(12, 20 - 0.06 x 100)] =
 * [4, 12]: bound 4.  The middle sample changes four times, so no spread
 * narrows these.  C [0, 100], a whole sample, is exact: bound 0.  D's
 * two calls [210, 220] and [250, 260] in the last sample, at the
 * ceiling, drew 300 W: exact, 6 J, though in part of a sample.
 */
static void
test_bound_contains_truth(void **state)
{
	struct attrib_sample s[] = {
		{ 0, 100 * MS, 100 }, { 100 * MS, 200 * MS, 200 },
		{ 200 * MS, 300 * MS, 300 },
	};
	struct attrib_event e[] = {
		{ 110 * MS, 140 * MS, 0, -1 }, { 150 * MS, 190 * MS, 1, -1 },
		{ 0, 100 * MS, 2, -1 }, { 210 * MS, 220 * MS, 3, -1 },
		{ 250 * MS, 260 * MS, 3, -1 },
	};
	double truth[] = { 3, 12, 10, 6 };
	struct attrib_card c = card_of(4);

	(void)state;
	assert_int_equal(attrib_card(s, 3, e, 5, NULL, 0, 0, 300 * MS, &c), 0);
	near(c.ops[3].energy_j, 6);
	near(c.ops[3].bound_j, 0);
	assert_int_equal(c.ops[3].partial, 1);
	near(c.ops[0].energy_j, 6);
	near(c.ops[0].bound_j, 3);
	near(c.ops[1].energy_j, 8);
	near(c.ops[1].bound_j, 4);
	near(c.ops[2].energy_j, 10);
	near(c.ops[2].bound_j, 0);
	assert_int_equal(c.ops[2].partial, 0);
	for (int i = 0; i < 4; i++)
		assert_true(fabs(c.ops[i].energy_j - truth[i]) <=
		    c.ops[i].bound_j + 1e-12);
	free(c.ops);
}


/*
 * A power known every millisecond over 4 s, a step of up to jump W
 * every `every` ms, sampled as 100 ms means; calls of 3 ms and 1 ms every
 * 10 ms over the first 2 s, of 40 ms every 100 ms after.  Each call
 * alone is shared and compared with the truth: how many fall within
 * their bound.  The operators' totals are compared too (*op_outside).
 */
static int
calls_within(int every, double jump, int *ncalls, int *op_outside)
{
	enum { T = 4000, IV = 100, NE = 419 };
	static double p[T];
	struct attrib_sample s[T / IV];
	struct attrib_event e[NE];
	struct attrib_op o[3];
	uint64_t x = 88172645463325252ULL;
	double cur = 200, truth[3] = { 0 };
	int ne = 0, within = 0;

	for (int i = 0; i < T; i++) {
		if (i % every == 0)
			cur = fmin(350, fmax(50, cur + ((double)(next(&x) % 2001) /
			    1000 - 1) * jump));
		p[i] = cur;
	}
	for (int t = 0; t < 2000; t += 10) {
		e[ne++] = (struct attrib_event){ t * MS, (t + 3) * MS, 0,
		    -1 };
		e[ne++] = (struct attrib_event){ (t + 4) * MS,
		    (t + 5) * MS, 1, -1 };
	}
	for (int t = 2005; t < 3900; t += 100)
		e[ne++] = (struct attrib_event){ t * MS, (t + 40) * MS, 2,
		    -1 };
	assert_int_equal(ne, NE);
	for (int i = 0; i <= ne; i++) {
		struct attrib_card c = { .ops = o, .nops = 3, .max_w = 350,
		    .has_idle_w = true, .idle_w = 50 };
		struct attrib_event *ev = i < ne ? &e[i] : e;
		double tr[3] = { 0 };

		for (int k = 0; k < T / IV; k++) {
			double m = 0;

			for (int j = 0; j < IV; j++)
				m += p[k * IV + j];
			s[k] = (struct attrib_sample){ k * IV * MS,
			    (k + 1) * IV * MS, m / IV };
		}
		for (int k = i < ne ? i : 0; k < (i < ne ? i + 1 : ne); k++)
			for (int64_t t = e[k].lo_ns / MS; t < e[k].hi_ns / MS; t++)
				tr[e[k].op] += p[t] / 1000;
		memset(o, 0, sizeof(o));
		assert_int_equal(attrib_card(s, T / IV, ev, i < ne ? 1 : NE,
		    NULL, 0, 0, T * MS, &c), 0);
		if (i < ne) {
			within += fabs(o[ev->op].energy_j - tr[ev->op]) <=
			    o[ev->op].bound_j + 1e-12;
			continue;
		}
		*op_outside = 0;
		for (int k = 0; k < 3; k++) {
			truth[k] = tr[k];
			*op_outside += fabs(o[k].energy_j - truth[k]) >
			    o[k].bound_j + 1e-12;
		}
	}
	*ncalls = ne;
	return within;
}

/*
 * The power lies within [50, 350] W, the floor (the idle power given)
 * and the ceiling (the maximum given), so every call is within its
 * bound where power moves slowly against the sampling (a step every 100
 * or 250 ms), and so are the operators' totals at any pace.  Where it
 * moves on its own faster than the sampling (every 10 ms, or noise
 * every millisecond, which a 100 ms mean hides), the calls that start
 * a sample and end in it (one change, between neighbours with none)
 * are narrowed to the three samples' range, whose assumption, that
 * power changes only where events start or end, does not hold here: 7
 * and 9 of the 419 fall outside.
 */
static void
test_bound_against_known_power(void **state)
{
	int n, out, in;

	(void)state;
	in = calls_within(250, 60, &n, &out);
	assert_int_equal(in, n);
	assert_int_equal(out, 0);
	in = calls_within(100, 100, &n, &out);
	assert_int_equal(in, n);
	assert_int_equal(out, 0);
	in = calls_within(10, 60, &n, &out);
	assert_int_equal(in, n - 7);
	assert_int_equal(out, 0);
	in = calls_within(1, 150, &n, &out);
	assert_int_equal(in, n - 9);
	assert_int_equal(out, 0);
}

/*
 * A sample that changes once, between neighbours that do not change,
 * is narrowed to their range: 40 W idle, then from 150 ms A at 80 W
 * until 300 ms, sampled as 40, 60 and 80 W means, then (300, 400] at
 * 10 W, the floor (the span [100, 300] and a sample either side); the
 * maximum 200 W.  A's 50 ms of the middle sample take its mean, 3 J (it
 * drew 4), and the next sample whole, 8 J.  Its range is the three
 * samples' [40, 80] W, not the card's [10, 200] W: A's 50 ms of 6 J lie
 * within [max(2, 6 - 4), min(4, 6 - 2)] = [2, 4], not [max(0.5, 6 -
 * 10), min(10, 6 - 0.5)] = [0.5, 5.5]; bound 1 J, not 2.5.  A sample
 * further off, (400, 500] at 5 W, is no floor.  Gemm-like
 * calls, 3 ms at 68 W every 10 ms for 100 ms in 25 W idle, are sampled
 * as a 37.9 W mean, then 25 W: with an idle power known (30 W, too
 * high), idle takes the floor, 25 W, and the calls the rest, their
 * truth, where the mean would give them 44 % too little.
 */
static void
test_idle_first_and_spread(void **state)
{
	struct attrib_sample s[] = {
		{ 0, 100 * MS, 40 }, { 100 * MS, 200 * MS, 60 },
		{ 200 * MS, 300 * MS, 80 }, { 300 * MS, 400 * MS, 10 },
		{ 400 * MS, 500 * MS, 5 },
	};
	struct attrib_event e[] = { { 150 * MS, 300 * MS, 0, -1 } };
	struct attrib_sample g[] = { { 0, 100 * MS, 37.9 },
		{ 100 * MS, 200 * MS, 37.9 } };
	struct attrib_event ge[20];
	struct attrib_card c = card_of(1);

	(void)state;
	c.max_w = 200;
	assert_int_equal(attrib_card(s, 5, e, 1, NULL, 0, 100 * MS, 300 * MS,
	    &c), 0);
	near(c.ops[0].energy_j, 11);
	near(c.idle_j, 3);
	near(c.floor_w, 10);
	near(c.ceiling_w, 200);
	near(c.ops[0].bound_j, 1);
	free(c.ops);

	c = card_of(1);
	c.has_idle_w = true;
	c.idle_w = 30;
	g[1].power_w = 25;	/* the floor, where the calls stop */
	for (int i = 0; i < 10; i++)
		ge[i] = (struct attrib_event){ i * 10 * MS,
		    (i * 10 + 3) * MS, 0, -1 };
	assert_int_equal(attrib_card(g, 2, ge, 10, NULL, 0, 0, 200 * MS,
	    &c), 0);
	near(c.floor_w, 25);
	near(c.ops[0].energy_j, 10 * 0.003 * 68);
	near(c.idle_j, 0.17 * 25);
	assert_true(c.ops[0].bound_j > 0);
	free(c.ops);
}

/*
 * 20000 samples of 1 to 100 ms with gaps, at 50 to 350 W with three
 * digits, 50000 events of 1 us to 30 ms among 40 operators, some running
 * at once: the operators plus idle are the span's energy to 1e-9, and
 * the span's energy is the plain sum of power times clipped interval.
 */
static void
test_closure(void **state)
{
	enum { NS = 20000, NE = 50000, NOPS = 40 };
	struct attrib_sample *s = calloc(NS, sizeof(*s));
	struct attrib_event *e = calloc(NE, sizeof(*e));
	double *ej = calloc(NE, sizeof(*ej));
	struct attrib_card c = card_of(NOPS);
	uint64_t x = 88172645463325252ULL;
	int64_t t = 0, lo = 7 * MS, hi;
	double want = 0, got = 0, want_ops = 0;

	(void)state;
	assert_non_null(s);
	assert_non_null(e);
	assert_non_null(ej);
	c.event_j = ej;
	for (size_t k = 0; k < NS; k++) {
		int64_t ival = (int64_t)(1 + next(&x) % 100) * MS;

		if (next(&x) % 50 == 0)
			t += (int64_t)(next(&x) % 300) * MS;
		s[k] = (struct attrib_sample){ t, t + ival,
		    (double)(50000 + next(&x) % 300000) / 1000 };
		t += ival;
	}
	hi = t - 13 * MS;
	for (size_t k = 0; k < NS; k++) {
		int64_t a = s[k].lo_ns > lo ? s[k].lo_ns : lo;
		int64_t b = s[k].hi_ns < hi ? s[k].hi_ns : hi;

		if (b > a)
			want += s[k].power_w * (double)(b - a) / 1e9;
	}
	for (size_t i = 0; i < NE; i++) {
		int64_t start = (int64_t)(next(&x) % (uint64_t)t);

		e[i] = (struct attrib_event){ start, start + 1000 +
		    (int64_t)(next(&x) % (30 * MS)), (uint32_t)(next(&x) % NOPS),
		    -1 };
	}
	assert_int_equal(attrib_card(s, NS, e, NE, NULL, 0, lo, hi, &c), 0);
	for (size_t i = 0; i < NE; i++)
		got += ej[i];
	for (size_t i = 0; i < NOPS; i++)
		want_ops += c.ops[i].energy_j;
	assert_true(fabs(got - want_ops) <= 1e-9 * want_ops);
	got = want_ops + c.idle_j;
	assert_true(fabs(got - c.span_j) <= 1e-9 * c.span_j);
	assert_true(fabs(c.span_j - want) <= 1e-9 * want);
	assert_true(c.closure <= 1e-9);
	assert_int_equal(c.busy_ns + c.idle_ns, c.covered_ns);
	free(s);
	free(e);
	free(ej);
	free(c.ops);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proportional),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_idle_and_host),
		cmocka_unit_test(test_span_clip_and_gaps),
		cmocka_unit_test(test_span_clips_a_sample),
		cmocka_unit_test(test_bound_contains_truth),
		cmocka_unit_test(test_bound_against_known_power),
		cmocka_unit_test(test_idle_first_and_spread),
		cmocka_unit_test(test_closure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
