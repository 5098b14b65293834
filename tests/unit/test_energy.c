/*
 * Tests of the exact integrals and means (energy.h): constant power over
 * a step, a piecewise series with mixed precisions that runs past both
 * ends of the step and has a gap and a missing value, a step inside one
 * sample, an empty step, the decimal writer's rounding, overflow, and
 * REAL cells read as decimals (the fast path against the printf one).
 *
 * Expected values are computed here another way: as exact fractions in
 * 64-bit integers (milliwatt-nanoseconds) written out by hand, and the
 * module's decimal strings are read back with strtold and compared to
 * them, or compared as strings where the value is a short decimal.
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

#include "energy.h"

#define MS	1000000LL
#define SEC	1000000000LL

/* A sample: value mant / 10^scale over (ts - ival, ts]; null: missing. */
struct sample {
	int64_t ts, ival;
	int64_t mant;
	int scale;
	bool null;
};

/* |got - want| <= 1e-9 |want| (or 1e-18 absolute at 0). */
static void
assert_close(const char *got, long double want)
{
	char *end;
	long double v = strtold(got, &end);
	long double tol = fabsl(want) * 1e-9L;

	assert_true(*got != '\0' && *end == '\0');
	if (tol < 1e-18L)
		tol = 1e-18L;
	if (fabsl(v - want) > tol)
		fail_msg("%s is not %.15Lg to 1e-9", got, want);
}

static void
add_all(struct energy_acc *a, const struct sample *s, size_t n, int64_t lo,
    int64_t hi, bool reverse)
{
	for (size_t k = 0; k < n; k++) {
		const struct sample *x = &s[reverse ? n - 1 - k : k];

		if (!x->null)
			energy_add(a, x->mant, x->scale, x->ts - x->ival, x->ts,
			    lo, hi);
	}
}

/* P = 250.5 W for D = 1.234567891 s, sampled every 100 ms across it. */
static void
test_constant(void **state)
{
	const int64_t lo = 1700000000 * SEC + 123456789, D = 1234567891;
	char buf[ENERGY_BUFLEN], want[64];
	struct energy_acc a;
	int64_t covered = 0, prod;
	int n;

	(void)state;
	energy_init(&a);
	/* samples from before the step to after it, not aligned with it */
	for (int64_t ts = lo - 37 * MS; ts < lo + D + 100 * MS; ts += 100 * MS)
		covered += energy_add(&a, 2505, 1, ts - 100 * MS, ts, lo,
		    lo + D);
	assert_int_equal(covered, D);
	assert_int_equal(a.covered_ns, D);
	/* the first ends 37 ms before the step: 13 of the 14 overlap it */
	assert_int_equal(a.nvalues, 13);
	/* P x D = 2505 x 1234567891 tenths of W·ns = 3092592566955e-10 J */
	prod = 2505 * D;
	assert_int_equal(prod, 3092592566955LL);
	n = snprintf(want, sizeof(want), "%lld.%010lld",
	    (long long)(prod / 10000000000LL),
	    (long long)(prod % 10000000000LL));
	while (want[n - 1] == '0')
		want[--n] = '\0';
	assert_true(energy_integral(&a, buf, sizeof(buf)));
	assert_string_equal(buf, want);
	assert_string_equal(buf, "309.2592566955");
	assert_true(energy_mean(&a, 9, true, buf, sizeof(buf)));
	assert_string_equal(buf, "250.5");
	assert_true(energy_mean(&a, 3, false, buf, sizeof(buf)));
	assert_string_equal(buf, "250.500");
	assert_true(energy_max(&a, -1, buf, sizeof(buf)));
	assert_string_equal(buf, "250.5");
	assert_true(energy_integral_fixed(&a, 3, buf, sizeof(buf)));
	assert_string_equal(buf, "309.259");
}

/*
 * Step [S, E], E = S + 1020 ms + 7 ns.  Samples (interval, value, overlap):
 *   g  (S-130, S-30]    500      none: before the step
 *   a  (S-30, S+20]     100.5    20 ms (starts before S)
 *   b  (S+20, S+120]    200.25   100 ms
 *      (S+120, S+200]   no sample: a gap
 *   c  (S+200, S+250]   missing  none: a NULL
 *   d  (S+250, S+1000]  300      750 ms
 *      (S+1000, S+1000+7ns]  no sample: a 7 ns gap
 *   e  (E-20, E+80]     99.999   20 ms (ends after E)
 *   f  (E+100, E+200]   400      none: after the step
 * In mW·ns: 100500*20e6 + 200250*100e6 + 300000*750e6 + 99999*20e6
 *   = 2010000000000 + 20025000000000 + 225000000000000 + 1999980000000
 *   = 249034980000000 mW·ns = 249.03498 J over 890 ms covered.
 */
static const int64_t S = 1712195495 * SEC + 406752768;
#define E	(S + 1020 * MS + 7)
static const struct sample series[] = {
	{ S - 30 * MS, 100 * MS, 500, 0, false },
	{ S + 20 * MS, 50 * MS, 1005, 1, false },
	{ S + 120 * MS, 100 * MS, 20025, 2, false },
	{ S + 250 * MS, 50 * MS, 0, 0, true },
	{ S + 1000 * MS, 750 * MS, 300, 0, false },
	{ E + 80 * MS, 100 * MS, 99999, 3, false },
	{ E + 200 * MS, 100 * MS, 400, 0, false },
};

static void
check_series(const struct energy_acc *a)
{
	/* the hand-computed fraction: mW·ns, and ns covered */
	const int64_t num = 100500LL * 20 * MS + 200250LL * 100 * MS +
	    300000LL * 750 * MS + 99999LL * 20 * MS;
	const int64_t cov = (20 + 100 + 750 + 20) * MS;
	char buf[ENERGY_BUFLEN];

	assert_int_equal(num, 249034980000000LL);
	assert_int_equal(a->nvalues, 4);
	assert_int_equal(a->covered_ns, cov);
	assert_false(a->overflow);
	assert_true(energy_integral(a, buf, sizeof(buf)));
	assert_close(buf, (long double)num / 1e12L);
	assert_string_equal(buf, "249.03498");
	assert_true(energy_mean(a, 9, false, buf, sizeof(buf)));
	/* 249034980000000 / 890000000 / 1000 = 279.814584269662921... */
	assert_close(buf, (long double)num / (long double)cov / 1000.0L);
	assert_string_equal(buf, "279.814584270");
	assert_true(energy_max(a, -1, buf, sizeof(buf)));
	assert_string_equal(buf, "300");
	assert_true(energy_max(a, 3, buf, sizeof(buf)));
	assert_string_equal(buf, "300.000");
}

static void
test_piecewise(void **state)
{
	const size_t n = sizeof(series) / sizeof(series[0]);
	struct energy_acc a, r;

	(void)state;
	energy_init(&a);
	add_all(&a, series, n, S, E, false);
	check_series(&a);
	/* the order of the values changes nothing */
	energy_init(&r);
	add_all(&r, series, n, S, E, true);
	check_series(&r);
	assert_true(a.sum == r.sum && a.scale == r.scale);
}

/* The step lies inside one sample: its value times the step's length. */
static void
test_inside_one(void **state)
{
	const int64_t T = 1739836029 * SEC + 603018756;
	const int64_t lo = T - 700 * MS + 3, hi = T - 200 * MS;
	char buf[ENERGY_BUFLEN];
	struct energy_acc a;

	(void)state;
	energy_init(&a);
	assert_int_equal(energy_add(&a, 1234, 1, T - SEC, T, lo, hi),
	    hi - lo);
	/* the next sample starts at T, after the step */
	assert_int_equal(energy_add(&a, 9999, 1, T, T + SEC, lo, hi), 0);
	assert_int_equal(a.nvalues, 1);
	/* 123.4 W x 0.499999997 s = 1234 x 499999997 = 616999996298e-10 J */
	assert_int_equal(1234LL * (hi - lo), 616999996298LL);
	assert_true(energy_integral(&a, buf, sizeof(buf)));
	assert_string_equal(buf, "61.6999996298");
	assert_close(buf, 123.4L * 0.499999997L);
	assert_true(energy_mean(&a, 9, true, buf, sizeof(buf)));
	assert_string_equal(buf, "123.4");
}

/* An empty step: no energy, no mean, but the value that holds there. */
static void
test_zero_length(void **state)
{
	const int64_t t = 1682725897 * SEC + 226746880;
	char buf[ENERGY_BUFLEN];
	struct energy_acc a;

	(void)state;
	energy_init(&a);
	assert_int_equal(energy_add(&a, 777, 1, t - 100 * MS, t + 50 * MS, t,
	    t), 0);
	/* a sample ending at t does not hold t's value: (lo, hi] is open */
	assert_int_equal(energy_add(&a, 555, 1, t - 200 * MS, t - 100 * MS, t,
	    t), 0);
	assert_int_equal(a.nvalues, 1);
	assert_int_equal(a.covered_ns, 0);
	assert_true(energy_integral(&a, buf, sizeof(buf)));
	assert_string_equal(buf, "0");
	assert_false(energy_mean(&a, 9, true, buf, sizeof(buf)));
	assert_string_equal(buf, "");
	assert_true(energy_max(&a, -1, buf, sizeof(buf)));
	assert_string_equal(buf, "77.7");
	/* nothing at all: no integral either */
	energy_init(&a);
	assert_false(energy_integral(&a, buf, sizeof(buf)));
	assert_false(energy_max(&a, -1, buf, sizeof(buf)));
	assert_int_equal(energy_overlap(0, 10, 5, 5), 0);
	assert_int_equal(energy_overlap(0, 10, 10, 20), 0);
	assert_int_equal(energy_overlap(0, 10, -5, 3), 3);
}

struct dec_case {
	int64_t num, den;
	int scale, digits;
	bool trim;
	const char *want;
};

static void
test_decimal(void **state)
{
	static const struct dec_case cases[] = {
		{ 1, 3, 0, 9, false, "0.333333333" },
		{ 2, 3, 0, 9, false, "0.666666667" },
		{ -5, 1, 1, 0, false, "-1" },
		{ 5, 1, 1, 0, false, "1" },
		{ -4, 1, 1, 0, false, "0" },
		{ -4, 1, 1, 1, false, "-0.4" },
		{ 9999995, 1, 4, 3, false, "1000.000" },
		{ 9999995, 1, 4, 3, true, "1000" },
		{ 1, 1, 18, 18, false, "0.000000000000000001" },
		{ 12345, 1, 2, 6, true, "123.45" },
		{ 12345, 100, 0, 2, false, "123.45" },
		{ 0, 7, 3, 2, true, "0" },
		{ INT64_MAX, 1, 0, 0, false, "9223372036854775807" },
		{ INT64_MIN, INT64_MAX, 0, 2, false, "-1.00" },
	};
	char buf[ENERGY_BUFLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct dec_case *c = &cases[i];

		assert_true(energy_decimal(c->num, c->den, c->scale, c->digits,
		    c->trim, buf, sizeof(buf)));
		assert_string_equal(buf, c->want);
	}
	/* 2^127 - 1 with 38 digits after the point */
	assert_true(energy_decimal(((energy_int)INT64_MAX << 64) |
	    (energy_int)UINT64_MAX, 1, 38, 38, false, buf, sizeof(buf)));
	assert_string_equal(buf, "1.70141183460469231731687303715884105727");
	assert_false(energy_decimal(1, 0, 0, 0, false, buf, sizeof(buf)));
	assert_false(energy_decimal(1, 1, 39, 0, false, buf, sizeof(buf)));
	assert_false(energy_decimal(123456, 1, 0, 3, false, buf, 8));
	assert_true(energy_decimal(123456, 1, 0, 3, false, buf, 11));
	assert_string_equal(buf, "123456.000");
}

/* Sums past 128 bits are reported, not wrapped. */
static void
test_overflow(void **state)
{
	char buf[ENERGY_BUFLEN];
	struct energy_acc a;

	(void)state;
	energy_init(&a);
	/* (2^63 - 1) x 10^18 x 2^62 ns is beyond 2^127 */
	energy_add(&a, INT64_MAX, 0, 0, INT64_MAX / 2, 0, INT64_MAX);
	energy_add(&a, 1, 18, 0, 1, 0, INT64_MAX);
	assert_true(a.overflow);
	assert_false(energy_integral(&a, buf, sizeof(buf)));
	assert_false(energy_mean(&a, 9, true, buf, sizeof(buf)));
	/* a scale beyond ENERGY_SCALE_MAX is refused the same way */
	energy_init(&a);
	energy_add(&a, 1, ENERGY_SCALE_MAX + 1, 0, 10, 0, 10);
	assert_true(a.overflow);
}

/*
 * The slow path of energy_real_value as it was written first: the shortest
 * %e that reads back as x.  The fast path must give the same mant and
 * scale.
 */
static bool
reference_real(double x, int decimals, int64_t *mant, int *scale)
{
	char buf[48], *p;
	int prec, frac = 0, s;
	long e;
	int64_t m = 0;
	bool neg;

	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
	p = buf;
	if ((neg = *p == '-'))
		p++;
	m = *p++ - '0';
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, frac++)
			m = m * 10 + (*p - '0');
	e = strtol(p + 1, NULL, 10);
	s = decimals + frac - (int)e;
	for (; s < 0; s++)
		m *= 10;
	for (; s > ENERGY_SCALE_MAX; s--)
		m = (m + 5) / 10;
	*mant = neg ? -m : m;
	*scale = s;
	return true;
}

static void
check_real(double x, int decimals)
{
	int64_t m1, m2;
	int s1, s2;

	assert_true(energy_real_value(x, decimals, &m1, &s1));
	reference_real(x, decimals, &m2, &s2);
	if (m1 != m2 || s1 != s2)
		fail_msg("%.17g (decimals %d): %lld/10^%d, the reference "
		    "%lld/10^%d", x, decimals, (long long)m1, s1,
		    (long long)m2, s2);
}

/* REAL cells read as decimals, fast path and slow alike. */
static void
test_real_value(void **state)
{
	static const double fixed[] = {
		0, 1, -1, 120, 267.3, 0.1 + 0.2, 1e15, 123456789.123,
		-0.005, 4503599627370495.0, 4503599627370497.0, 1e-9, 3.14159,
	};
	uint64_t r = 12345;
	int64_t m;
	int s;

	(void)state;
	assert_true(energy_real_value(120, 1, &m, &s));
	assert_int_equal(m, 12);
	assert_int_equal(s, 0);
	assert_true(energy_real_value(267.3, 1, &m, &s));
	assert_int_equal(m, 2673);
	assert_int_equal(s, 2);
	assert_false(energy_real_value(1.0 / 0.0, 1, &m, &s));
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		for (int d = 0; d <= 3; d++)
			check_real(fixed[i], d);
	for (int i = 0; i < 200000; i++) {
		double x;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		/* decimals of a few digits, as aiu-smi prints, and any double */
		if (i % 2 == 0)
			x = (double)(int64_t)(r % 2000000000) / 1000.0 - 1e6;
		else
			x = (double)(r >> 11) / (double)(1ULL << 53) * 1e4;
		check_real(x, (int)(r % 4));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant),
		cmocka_unit_test(test_piecewise),
		cmocka_unit_test(test_inside_one),
		cmocka_unit_test(test_zero_length),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_real_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
