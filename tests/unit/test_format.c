/*
 * Tests of the client's output formatting: metric values at the catalog's
 * precision (whole and fractional stored values, signs, rounding), spans,
 * and times.  Expected strings are written out by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format.h"

#define SEC	1000000000LL

struct value_case {
	double stored;
	int decimals;
	const char *want;
};

static void
test_value_fixed(void **state)
{
	static const struct value_case cases[] = {
		{ 267, 1, "26.7" },
		{ 96, 0, "96" },
		{ 0, 3, "0.000" },
		{ 22767, 3, "22.767" },
		{ 103, 3, "0.103" },
		{ -5, 1, "-0.5" },
		{ -1234, 2, "-12.34" },
		{ 6578, 0, "6578" },
		{ 12345678901234.0, 4, "1234567890.1234" },
		{ 1, 18, "0.000000000000000001" },
		/* a fraction beyond the catalog's precision is rounded */
		{ 1234.6, 3, "1.235" },
		{ 2674.9, 2, "26.75" },
	};
	char buf[FMT_BUFLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(fmt_value_fixed(cases[i].stored,
		    cases[i].decimals, buf, sizeof(buf)), strlen(cases[i].want));
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_value_exact(void **state)
{
	static const struct value_case cases[] = {
		{ 267, 1, "26.7" },
		{ 0, 3, "0.000" },
		{ -5, 1, "-0.5" },
		{ 256000, 3, "256.000" },
		/* a fraction is kept: the shortest decimal of stored / 10^d */
		{ 1234.5, 3, "1.2345" },
		{ 2674.25, 2, "26.7425" },
		{ 0.5, 0, "0.5" },
	};
	char buf[FMT_BUFLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(fmt_value_exact(cases[i].stored,
		    cases[i].decimals, buf, sizeof(buf)), strlen(cases[i].want));
		assert_string_equal(buf, cases[i].want);
	}
}

/*
 * Whole stored values, written two digits at a time, against printf of
 * the integer and fractional parts: around every power of ten, at every
 * scale, both signs, up to the largest mantissa a double holds exactly.
 */
static void
test_value_digits(void **state)
{
	char got[FMT_BUFLEN], want[FMT_BUFLEN];
	int64_t top = (int64_t)1 << 53;

	(void)state;
	/* 10^0 .. 10^15, then 2^53 */
	for (int64_t e = 0, p = 1; e <= 16; e++, p = e < 16 ? p * 10 : top) {
		for (int64_t delta = -12; delta <= 12; delta++) {
			int64_t m = p + delta;

			if (m < 0 || m > top)
				continue;
			for (int d = 0; d <= 18; d++)
				for (int sign = 1; sign >= -1; sign -= 2) {
					uint64_t pw = 1, mag = (uint64_t)m;
					size_t n;

					for (int k = 0; k < d; k++)
						pw *= 10;
					if (d > 0)
						snprintf(want, sizeof(want),
						    "%s%" PRIu64 ".%0*" PRIu64,
						    sign < 0 && m != 0 ? "-" : "",
						    mag / pw, d, mag % pw);
					else
						snprintf(want, sizeof(want),
						    "%s%" PRIu64, sign < 0 &&
						    m != 0 ? "-" : "", mag);
					n = fmt_value_fixed((double)(sign * m),
					    d, got, sizeof(got));
					assert_string_equal(got, want);
					assert_int_equal(n, strlen(want));
				}
		}
	}
}

static void
test_value_refused(void **state)
{
	char buf[FMT_BUFLEN] = "untouched";

	(void)state;
	assert_false(fmt_value_fixed(NAN, 1, buf, sizeof(buf)));
	assert_false(fmt_value_exact(INFINITY, 1, buf, sizeof(buf)));
	assert_false(fmt_value_fixed(1, 19, buf, sizeof(buf)));
	assert_false(fmt_value_exact(1, -1, buf, sizeof(buf)));
	assert_string_equal(buf, "untouched");
}

static void
test_span(void **state)
{
	static const struct {
		int64_t ns;
		const char *want;
	} cases[] = {
		{ 0, "0.000s" },
		{ -5 * SEC, "0.000s" },
		{ 42000000, "0.042s" },
		{ 49333000000LL, "49.333s" },
		{ 59999999999LL, "59.999s" },
		{ 60 * SEC, "1m00.000s" },
		{ 125120000000LL, "2m05.120s" },
		{ 3725 * SEC, "1h02m05s" },
		{ (3 * 86400 + 4 * 3600 + 5 * 60 + 59) * SEC, "3d04h05m" },
	};
	char buf[FMT_BUFLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fmt_span(cases[i].ns, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_age(void **state)
{
	static const struct {
		int64_t ns;
		const char *want;
	} cases[] = {
		{ 0, "0.0s" },
		{ -5 * SEC, "0.0s" },
		{ 42000000, "0.0s" },
		{ 300000000, "0.3s" },
		{ 12399999999LL, "12.3s" },
		{ 59999999999LL, "59.9s" },
		{ 60 * SEC, "1m00s" },
		{ 125120000000LL, "2m05s" },
		{ 3725 * SEC, "1h02m" },
		{ (3 * 86400 + 4 * 3600 + 5 * 60 + 59) * SEC, "3d04h" },
	};
	char buf[FMT_BUFLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fmt_age(cases[i].ns, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
}

/* "ago", or ahead of the clock past FMT_AHEAD_NS: never "0.0s" for an hour */
static void
test_ago(void **state)
{
	static const struct {
		int64_t ns;
		const char *want;
	} cases[] = {
		{ 300000000, "0.3s ago" },
		{ 3725 * SEC, "1h02m ago" },
		{ -1 * SEC, "0.0s ago" },	/* the writer's clock a little ahead */
		{ -2 * SEC, "0.0s ago" },
		{ -3600 * SEC, "1h00m ahead of the host clock (stepped back?)" },
	};
	char buf[FMT_BUFLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fmt_ago(cases[i].ns, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_times(void **state)
{
	char buf[FMT_BUFLEN];

	(void)state;
	fmt_time_ms(1796209858087984227LL, buf, sizeof(buf));
	assert_string_equal(buf, "2026-12-02T11:10:58.087Z");
	fmt_clock_ms(1796209858087984227LL, buf, sizeof(buf));
	assert_string_equal(buf, "11:10:58.087Z");
	fmt_time_ms(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
	/* before the epoch, seconds are floored */
	fmt_time_ms(-1, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T23:59:59.999Z");

	assert_true(fmt_same_utc_day(1796209858087984227LL,
	    1796209858087984227LL + 12 * 3600 * SEC));
	assert_false(fmt_same_utc_day(1796209858087984227LL,
	    1796209858087984227LL + 13 * 3600 * SEC));
	assert_false(fmt_same_utc_day(-1, 0));
	assert_true(fmt_same_utc_day(-1, -86400 * SEC));
}

static void
test_size(void **state)
{
	char buf[FMT_BUFLEN];

	(void)state;
	fmt_size_approx(812, buf, sizeof(buf));
	assert_string_equal(buf, "812 B");
	fmt_size_approx(57344, buf, sizeof(buf));
	assert_string_equal(buf, "56.0 KiB");
	fmt_size_approx(1536 * 1024, buf, sizeof(buf));
	assert_string_equal(buf, "1.50 MiB");
	fmt_size_approx(300ULL << 30, buf, sizeof(buf));
	assert_string_equal(buf, "300 GiB");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_fixed),
		cmocka_unit_test(test_value_exact),
		cmocka_unit_test(test_value_digits),
		cmocka_unit_test(test_value_refused),
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_age),
		cmocka_unit_test(test_ago),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
