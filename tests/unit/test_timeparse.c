/*
 * Tests of timeparse: durations, sizes and points in time, their limits,
 * and that what format_* writes parses back to the same value.  Expected
 * times come from libc (timegm, mktime), not from the code under test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "timeparse.h"

#define SEC	NSEC_PER_SEC
#define MIN	(60 * SEC)
#define HOUR	(60 * MIN)
#define DAY	(24 * HOUR)
#define KIB	1024ULL
#define MIB	(1024 * KIB)
#define GIB	(1024 * MIB)
#define TIB	(1024 * GIB)

/* An untouched output keeps this value: failures must not write *out. */
#define POISON	0x5a5a5a5a5a5a5a5aULL

struct u64_case {
	const char *s;
	uint64_t want;
};

static void
assert_duration(const char *s, uint64_t want)
{
	uint64_t ns = POISON;

	if (parse_duration(s, &ns) != 0)
		fail_msg("parse_duration(\"%s\") failed", s);
	if (ns != want)
		fail_msg("parse_duration(\"%s\") = %llu, want %llu", s,
		    (unsigned long long)ns, (unsigned long long)want);
}

static void
assert_duration_rejected(const char *s)
{
	uint64_t ns = POISON;

	if (parse_duration(s, &ns) != -1)
		fail_msg("parse_duration(\"%s\") accepted: %llu", s, (unsigned long long)ns);
	assert_int_equal(ns, POISON);
}

static void
assert_size(const char *s, uint64_t want)
{
	uint64_t bytes = POISON;

	if (parse_size(s, &bytes) != 0)
		fail_msg("parse_size(\"%s\") failed", s);
	if (bytes != want)
		fail_msg("parse_size(\"%s\") = %llu, want %llu", s,
		    (unsigned long long)bytes, (unsigned long long)want);
}

static void
assert_size_rejected(const char *s)
{
	uint64_t bytes = POISON;

	if (parse_size(s, &bytes) != -1)
		fail_msg("parse_size(\"%s\") accepted: %llu", s, (unsigned long long)bytes);
	assert_int_equal(bytes, POISON);
}

static void
assert_time(const char *s, int64_t want)
{
	int64_t ns = (int64_t)POISON;

	if (parse_time(s, &ns) != 0)
		fail_msg("parse_time(\"%s\") failed", s);
	if (ns != want)
		fail_msg("parse_time(\"%s\") = %lld, want %lld", s, (long long)ns,
		    (long long)want);
}

static void
assert_time_rejected(const char *s)
{
	int64_t ns = (int64_t)POISON;

	if (parse_time(s, &ns) != -1)
		fail_msg("parse_time(\"%s\") accepted: %lld", s, (long long)ns);
	assert_int_equal(ns, (int64_t)POISON);
}

/* Seconds since the epoch of a UTC calendar time, by libc. */
static int64_t
utc(int y, int mon, int d, int h, int mi, int s)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mon - 1, .tm_mday = d,
	    .tm_hour = h, .tm_min = mi, .tm_sec = s };

	return (int64_t)timegm(&tm);
}

/* Seconds since the epoch of a local calendar time, by libc. */
static int64_t
local(int y, int mon, int d, int h, int mi, int s)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mon - 1, .tm_mday = d,
	    .tm_hour = h, .tm_min = mi, .tm_sec = s, .tm_isdst = -1 };

	return (int64_t)mktime(&tm);
}

static void
test_duration_units(void **state)
{
	static const struct u64_case cases[] = {
		{ "1ns", 1 }, { "1us", 1000 }, { "1ms", 1000000 },
		{ "1s", SEC }, { "1m", MIN }, { "1h", HOUR }, { "1d", DAY },
		{ "1w", 7 * DAY }, { "0s", 0 }, { "250ms", 250000000 },
		{ "007s", 7 * SEC }, { "90m", 90 * MIN }, { "100ms", SEC / 10 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_duration(cases[i].s, cases[i].want);
}

static void
test_duration_fractions_and_sums(void **state)
{
	static const struct u64_case cases[] = {
		{ "1.5s", 1500000000 }, { "0.5ms", 500000 }, { "2.25h", 135 * MIN },
		{ "0.001us", 1 }, { "1.000000001s", SEC + 1 }, { "1.5m", 90 * SEC },
		{ "1h30m", 90 * MIN }, { "1m30s", 90 * SEC }, { "2d12h", 60 * HOUR },
		{ "1w1d1h1m1s1ms1us1ns", 8 * DAY + HOUR + MIN + SEC + 1001001 },
		{ "1.5h30m", 2 * HOUR },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_duration(cases[i].s, cases[i].want);
}

static void
test_duration_limits(void **state)
{
	(void)state;
	assert_duration("18446744073709551615ns", UINT64_MAX);
	assert_duration("18446744073709551614ns1ns", UINT64_MAX);
	assert_duration("307445734m", 307445734ULL * MIN);
	assert_duration_rejected("18446744073709551616ns");
	assert_duration_rejected("99999999999999999999ns");
	assert_duration_rejected("18446744073709551615ns1ns");
	assert_duration_rejected("307445735m");
	assert_duration_rejected("30501w");
	assert_duration_rejected("18446744073.709551616s");
}

static void
test_duration_rejects(void **state)
{
	static const char *const bad[] = {
		"", "10", "s", "-1s", "+1s", "1.5ns", "0.0001us", "1x", "1S",
		"1 s", " 1s", "1s ", "1.2.3s", "1..2s", ".s", "1sec", "1min",
		"1h30", "h1", "1e3s", "0x10s", "1s,2s",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_duration_rejected(bad[i]);
	assert_duration_rejected(NULL);
}

static void
test_size(void **state)
{
	static const struct u64_case cases[] = {
		{ "0", 0 }, { "4096", 4096 }, { "4096B", 4096 },
		{ "1KiB", KIB }, { "512KiB", 512 * KIB }, { "1MiB", MIB },
		{ "1GiB", GIB }, { "1TiB", TIB }, { "1K", KIB }, { "1M", MIB },
		{ "1G", GIB }, { "1T", TIB }, { "1kB", 1000 }, { "100MB", 100000000 },
		{ "1GB", 1000000000 }, { "2TB", 2000000000000ULL },
		{ "1.5KiB", 1536 }, { "0.5GiB", 512 * MIB }, { "1.5kB", 1500 },
		{ "18446744073709551615", UINT64_MAX },
		{ "16777215TiB", 16777215 * TIB },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_size(cases[i].s, cases[i].want);
}

static void
test_size_rejects(void **state)
{
	static const char *const bad[] = {
		"", "B", "KiB", "-1", "+1", "1.5", "0.5B", "1.0001kB", "1 KiB",
		"1KiB ", "1KB", "1kiB", "1PiB", "1Kib", "1b", "1e6",
		"18446744073709551616", "16777216TiB", "1KiB1KiB", "1.2.3",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_size_rejected(bad[i]);
	assert_size_rejected(NULL);
}

static void
test_time_epoch(void **state)
{
	(void)state;
	assert_time("0", 0);
	assert_time("1700000000123456789", 1700000000123456789LL);
	assert_time("9223372036854775807", INT64_MAX);
	assert_time("0000000000000000001", 1);
	assert_time("2026", 2026);	/* all digits: ns, not a year */
	assert_time_rejected("9223372036854775808");
	assert_time_rejected("10000000000000000000");
	assert_time_rejected("-1");
	assert_time_rejected("1e9");
}

static void
test_time_utc(void **state)
{
	int64_t t = utc(2026, 12, 2, 10, 26, 12);

	(void)state;
	assert_time("1970-01-01T00:00:00Z", 0);
	assert_time("2026-12-02T10:26:12Z", t * (int64_t)SEC);
	assert_time("2026-12-02 10:26:12Z", t * (int64_t)SEC);
	assert_time("2026-12-02T10:26Z", (t - 12) * (int64_t)SEC);
	assert_time("2026-12-02Z", utc(2026, 12, 2, 0, 0, 0) * (int64_t)SEC);
	assert_time("2024-02-29T00:00:00Z", utc(2024, 2, 29, 0, 0, 0) * (int64_t)SEC);
	assert_time("2000-02-29T12:00:00Z", utc(2000, 2, 29, 12, 0, 0) * (int64_t)SEC);
	assert_time("1969-12-31T23:59:59Z", -(int64_t)SEC);
	assert_time("1900-01-01T00:00:00Z", utc(1900, 1, 1, 0, 0, 0) * (int64_t)SEC);
	assert_time("2016-12-31T23:59:60Z", utc(2017, 1, 1, 0, 0, 0) * (int64_t)SEC);
}

static void
test_time_fractions(void **state)
{
	int64_t t = utc(2026, 12, 2, 10, 26, 12) * (int64_t)SEC;

	(void)state;
	assert_time("2026-12-02T10:26:12.123456789Z", t + 123456789);
	assert_time("2026-12-02T10:26:12.5Z", t + 500000000);
	assert_time("2026-12-02T10:26:12,25Z", t + 250000000);
	assert_time("2026-12-02T10:26:12.000001Z", t + 1000);
	assert_time("1969-12-31T23:59:59.5Z", -500000000);
	assert_time("2262-04-11T23:47:16.854775807Z", INT64_MAX);
	assert_time("1677-09-21T00:12:44Z", utc(1677, 9, 21, 0, 12, 44) * (int64_t)SEC);
	assert_time("1677-09-21T00:12:43.145224192Z", INT64_MIN);
}

static void
test_time_offsets(void **state)
{
	int64_t t = utc(2026, 12, 2, 10, 26, 12) * (int64_t)SEC;

	(void)state;
	assert_time("2026-12-02T11:26:12+01:00", t);
	assert_time("2026-12-02T11:26:12+0100", t);
	assert_time("2026-12-02T04:56:12-05:30", t);
	assert_time("2026-12-02T10:26:12+00:00", t);
	assert_time("2026-12-02T10:26:12-00:00", t);
	assert_time("2026-12-03T00:26:12.75+14:00", t + 750000000);
	assert_time("2026-12-01T23:26:12-11:00", t);
}

/* Under a zone with DST, local times must agree with mktime's. */
static void
test_time_local(void **state)
{
	static const char *const zones[] = { "UTC0", "EST5EDT,M3.2.0,M11.1.0",
	    "CET-1CEST,M3.5.0,M10.5.0/3", "<+0530>-5:30" };
	char *saved = getenv("TZ") != NULL ? strdup(getenv("TZ")) : NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		setenv("TZ", zones[i], 1);
		tzset();
		assert_time("2026-12-02T10:26:12", local(2026, 12, 2, 10, 26, 12) * (int64_t)SEC);
		assert_time("2026-07-01T10:26:12.5",
		    local(2026, 7, 1, 10, 26, 12) * (int64_t)SEC + 500000000);
		assert_time("2026-07-01 00:00", local(2026, 7, 1, 0, 0, 0) * (int64_t)SEC);
		assert_time("2026-03-01", local(2026, 3, 1, 0, 0, 0) * (int64_t)SEC);
	}
	/* mktime's error value is a real time one second before the epoch */
	setenv("TZ", "UTC0", 1);
	tzset();
	assert_time("1969-12-31T23:59:59", -(int64_t)SEC);
	if (saved != NULL)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);
}

static void
test_time_rejects(void **state)
{
	static const char *const bad[] = {
		"", "2026-12", "2026-12-", "26-12-02", "2026/12/02",
		"2026-1-02", "2026-12-2", "2026-00-01", "2026-13-01", "2026-12-00",
		"2026-12-32", "2026-02-29", "2025-02-29Z", "2100-02-29Z",
		"2026-04-31T00:00Z", "2026-06-31", "2026-12-02T", "2026-12-02T10",
		"2026-12-02T10:2", "2026-12-02T24:00Z", "2026-12-02T10:60Z",
		"2026-12-02T10:26:61Z", "2026-12-02T10:26:12.Z",
		"2026-12-02T10:26:12.1234567891Z", "2026-12-02T10:26:12Zjunk",
		"2026-12-02T10:26:12 Z", "2026-12-02T10:26:12+25:00",
		"2026-12-02T10:26:12+01:60", "2026-12-02T10:26:12+1",
		"2026-12-02T10:26:12+01", "2026-12-02t10:26:12z", "now",
		"2262-04-11T23:47:16.854775808Z", "1677-09-21T00:12:43.145224191Z",
		"2300-01-01T00:00:00Z",
		"9999-12-31T23:59:59Z", "1677-09-21T00:12:43Z", "1000-01-01Z",
		"x2026-12-02",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_time_rejected(bad[i]);
	assert_time_rejected(NULL);
}

static void
assert_formats(void (*format)(uint64_t, char *, size_t), uint64_t v, const char *want)
{
	char buf[64];

	memset(buf, 'X', sizeof(buf));
	format(v, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void
test_format_duration(void **state)
{
	(void)state;
	assert_formats(format_duration, 0, "0s");
	assert_formats(format_duration, 1, "1ns");
	assert_formats(format_duration, 1500, "1500ns");
	assert_formats(format_duration, 1000000, "1ms");
	assert_formats(format_duration, 100000000, "100ms");
	assert_formats(format_duration, 1500000000, "1500ms");
	assert_formats(format_duration, SEC, "1s");
	assert_formats(format_duration, MIN, "1m");
	assert_formats(format_duration, 90 * MIN, "90m");
	assert_formats(format_duration, DAY, "1d");
	assert_formats(format_duration, 14 * DAY, "14d");
	assert_formats(format_duration, 7 * DAY + 1, "604800000000001ns");
	assert_formats(format_duration, UINT64_MAX, "18446744073709551615ns");
}

static void
test_format_size(void **state)
{
	(void)state;
	assert_formats(format_size, 0, "0B");
	assert_formats(format_size, 100, "100B");
	assert_formats(format_size, 1000, "1000B");
	assert_formats(format_size, KIB, "1KiB");
	assert_formats(format_size, 512 * KIB, "512KiB");
	assert_formats(format_size, 1536 * MIB, "1536MiB");
	assert_formats(format_size, GIB, "1GiB");
	assert_formats(format_size, 2048 * TIB, "2048TiB");
	assert_formats(format_size, UINT64_MAX, "18446744073709551615B");
}

static void
test_format_time(void **state)
{
	char buf[64];

	(void)state;
	format_time_utc(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00.000000000Z");
	format_time_utc(-1, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T23:59:59.999999999Z");
	format_time_utc(utc(2026, 12, 2, 10, 26, 12) * (int64_t)SEC + 123456789,
	    buf, sizeof(buf));
	assert_string_equal(buf, "2026-12-02T10:26:12.123456789Z");
	format_time_utc(INT64_MAX, buf, sizeof(buf));
	assert_string_equal(buf, "2262-04-11T23:47:16.854775807Z");
	format_time_utc(INT64_MIN, buf, sizeof(buf));
	assert_string_equal(buf, "1677-09-21T00:12:43.145224192Z");
}

/* A fixed pseudo-random sequence (xorshift64) for the round trips. */
static uint64_t
next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void
test_round_trips(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	char buf[64];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		uint64_t r = next_random(&seed);
		/* vary the magnitude, and favour values that end in whole units */
		uint64_t v = r >> (r % 64);
		uint64_t d = i % 3 == 0 ? v - v % SEC : i % 3 == 1 ? v - v % KIB : v;
		int64_t t = (int64_t)r;
		uint64_t back;
		int64_t tback;

		format_duration(d, buf, sizeof(buf));
		if (parse_duration(buf, &back) != 0 || back != d)
			fail_msg("duration %llu -> \"%s\" does not read back",
			    (unsigned long long)d, buf);
		format_size(d, buf, sizeof(buf));
		if (parse_size(buf, &back) != 0 || back != d)
			fail_msg("size %llu -> \"%s\" does not read back",
			    (unsigned long long)d, buf);
		if (i % 4 == 0)
			t /= 1000;	/* and times near the epoch */
		format_time_utc(t, buf, sizeof(buf));
		if (parse_time(buf, &tback) != 0 || tback != t)
			fail_msg("time %lld -> \"%s\" does not read back",
			    (long long)t, buf);
	}
}

static void
test_clocks(void **state)
{
	uint64_t m0, m1;
	int64_t r;

	(void)state;
	r = now_realtime_ns();
	assert_true(r > utc(2020, 1, 1, 0, 0, 0) * (int64_t)SEC);
	m0 = now_monotonic_ns();
	m1 = now_monotonic_ns();
	assert_true(m1 >= m0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_fractions_and_sums),
		cmocka_unit_test(test_duration_limits),
		cmocka_unit_test(test_duration_rejects),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_size_rejects),
		cmocka_unit_test(test_time_epoch),
		cmocka_unit_test(test_time_utc),
		cmocka_unit_test(test_time_fractions),
		cmocka_unit_test(test_time_offsets),
		cmocka_unit_test(test_time_local),
		cmocka_unit_test(test_time_rejects),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_format_time),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_clocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
