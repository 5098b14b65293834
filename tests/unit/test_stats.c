/*
 * Tests of the statistics behind "spyremon compare" (client/report/stats.h):
 * Student's t CDF and 0.975 quantile against printed tables, the mean and
 * standard deviation, and Welch's test against values worked out by hand
 * (the textbook formulas, evaluated here with the table's quantiles).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>

#include <cmocka.h>

#include "stats.h"

static void
close_to(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.10g, want %.10g (+- %g)", got, want, tol);
}

/* t(0.975) of the tables, to their 3 decimals. */
static void
test_t975(void **state)
{
	static const struct {
		double df, t;
	} tab[] = {
		{ 1, 12.706 }, { 2, 4.303 }, { 5, 2.571 }, { 10, 2.228 },
		{ 30, 2.042 }, { 120, 1.980 }, { 1e6, 1.960 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		close_to(stats_t975(tab[i].df), tab[i].t, 0.0006);
		close_to(stats_t_cdf(tab[i].t, tab[i].df), 0.975, 2e-4);
		close_to(stats_t_cdf(-tab[i].t, tab[i].df), 0.025, 2e-4);
	}
	close_to(stats_t_cdf(0, 7), 0.5, 1e-12);
	/* df 1 is Cauchy: P(T <= 1) = 3/4 exactly */
	close_to(stats_t_cdf(1, 1), 0.75, 1e-10);
}

static void
test_sample(void **state)
{
	static const double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct stats_sample s = stats_of(v, 8);

	(void)state;
	close_to(s.mean, 5, 1e-12);
	/* sum of squares 32 over n - 1 = 7 */
	close_to(s.sd, sqrt(32.0 / 7), 1e-12);
	assert_int_equal(s.n, 8);
	/* half-width: t975(7) = 2.365 times sd / sqrt(8) */
	close_to(stats_ci95(&s), 2.365 * sqrt(32.0 / 7) / sqrt(8), 0.002);
}

/*
 * a: mean 10, sd 2, n 10; b: mean 12, sd 3, n 15.  va = 0.4, vb = 0.6,
 * se = 1, t = 2; df = 1 / (0.16 / 9 + 0.36 / 14) = 22.98; two-sided p of
 * t = 2 at 23 df is 0.0575 (tables: t(0.975, 23) = 2.069 > 2).
 */
static void
test_welch(void **state)
{
	struct stats_sample a = { 10, 2, 10 }, b = { 12, 3, 15 };
	struct stats_welch w = stats_welch(&a, &b);

	(void)state;
	assert_true(w.valid);
	close_to(w.diff, 2, 1e-12);
	close_to(w.t, 2, 1e-12);
	close_to(w.df, 1 / (0.16 / 9 + 0.36 / 14), 1e-9);
	close_to(w.p, 0.0575, 0.0005);
	close_to(w.ci_lo, 2 - 2.069, 0.002);
	close_to(w.ci_hi, 2 + 2.069, 0.002);
	/* swapped: the same test, the other sign */
	w = stats_welch(&b, &a);
	close_to(w.t, -2, 1e-12);
	close_to(w.p, 0.0575, 0.0005);
	/* no spread, or one value: no test */
	a.sd = b.sd = 0;
	assert_false(stats_welch(&a, &b).valid);
	a.sd = 1;
	a.n = 1;
	assert_false(stats_welch(&a, &b).valid);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_t975),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_welch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
