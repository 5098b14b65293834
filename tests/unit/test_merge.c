/*
 * Tests of the merge's pure pieces: ns written as exact decimal µs, the
 * choice of the cards' pids, the counter tracks' args keys, the cards'
 * process names, and the members a combined merge finds in an event's
 * text.  Expected strings are written out by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "merge_priv.h"

struct us_case {
	int64_t ns;
	const char *want;
};

static void
test_fmt_us(void **state)
{
	static const struct us_case cases[] = {
		{ 0, "0.000" },
		{ 1, "0.001" },
		{ 999, "0.999" },
		{ 1000, "1.000" },
		{ 1500, "1.500" },
		{ 123456789, "123456.789" },
		{ -1, "-0.001" },
		{ -1000, "-1.000" },
		{ -123456789, "-123456.789" },
		/* an epoch time in ns: 17 µs digits, none lost to a double */
		{ 1712195495406752768LL, "1712195495406752.768" },
		{ 1712195495406752769LL, "1712195495406752.769" },
		{ INT64_MAX, "9223372036854775.807" },
		{ INT64_MIN, "-9223372036854775.808" },
	};
	char buf[MERGE_US_BUFLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = merge_fmt_us(cases[i].ns, buf);

		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
}

/* The original's decimals: fewer rounded to the nearest, a half up; more padded. */
static void
test_fmt_us_prec(void **state)
{
	static const struct {
		int64_t ns;
		int dec;
		const char *want;
	} cases[] = {
		{ 1500, 0, "2" },
		{ 1499, 0, "1" },
		{ -1500, 0, "-1" },
		{ -1501, 0, "-2" },
		{ 123456789, 1, "123456.8" },
		{ 123449999, 1, "123450.0" },
		{ 123456749, 2, "123456.75" },
		{ 50, 1, "0.1" },
		{ 123456789, 3, "123456.789" },
		{ 123456789, 6, "123456.789000" },
		{ 1712195495406752768LL, 1, "1712195495406752.8" },
	};
	char buf[MERGE_US_PREC_BUFLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = merge_fmt_us_prec(cases[i].ns, cases[i].dec, buf);

		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
}

static void
test_first_pid(void **state)
{
	int64_t first = 0;

	(void)state;
	/* one above the highest */
	assert_int_equal(merge_first_pid(true, 1074, 2, &first), 0);
	assert_int_equal(first, 1075);
	/* no integer pid at all (only string pids, or none) */
	first = 0;
	assert_int_equal(merge_first_pid(false, 0, 4, &first), 0);
	assert_int_equal(first, 1);
	/* only negative or zero pids: still 1, never 0 or below */
	assert_int_equal(merge_first_pid(true, -1, 1, &first), 0);
	assert_int_equal(first, 1);
	assert_int_equal(merge_first_pid(true, 0, 1, &first), 0);
	assert_int_equal(first, 1);
	/* the last card may take MERGE_PID_MAX itself, not one more */
	assert_int_equal(merge_first_pid(true, MERGE_PID_MAX - 2, 2, &first),
	    0);
	assert_int_equal(first, MERGE_PID_MAX - 1);
	assert_int_equal(merge_first_pid(true, MERGE_PID_MAX - 2, 3, &first),
	    -1);
	assert_int_equal(merge_first_pid(true, MERGE_PID_MAX, 1, &first), -1);
	assert_int_equal(merge_first_pid(true, INT64_MAX, 1, &first), -1);
	/* so many cards that a wrap-around could hide the overflow */
	assert_int_equal(merge_first_pid(true, 10, SIZE_MAX, &first), -1);
}

static void
test_series_key(void **state)
{
	static char key[] = "pwr", w[] = "W", gib[] = "GiB/s", mib[] = "MiB",
	    none[] = "";
	struct db_metric m = { .key = key, .unit = w, .reliable = true };
	char buf[64];

	(void)state;
	merge_series_key(&m, buf, sizeof(buf));
	assert_string_equal(buf, "(W)");
	m.unit = gib;
	merge_series_key(&m, buf, sizeof(buf));
	assert_string_equal(buf, "(GiB/s)");
	m.unit = mib;
	m.reliable = false;
	merge_series_key(&m, buf, sizeof(buf));
	assert_string_equal(buf, "(MiB, unreliable)");
	m.unit = none;
	merge_series_key(&m, buf, sizeof(buf));
	assert_string_equal(buf, "(unreliable)");
	m.reliable = true;
	merge_series_key(&m, buf, sizeof(buf));
	assert_string_equal(buf, "value");
}

static void
test_card_name(void **state)
{
	char buf[128];

	(void)state;
	merge_card_name(0, "0000:13:00.0", buf, sizeof(buf));
	assert_string_equal(buf, "Spyre 0 \xc2\xb7 0000:13:00.0");
	merge_card_name(7, "", buf, sizeof(buf));
	assert_string_equal(buf, "Spyre 7");
	merge_card_name(3, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "Spyre 3");
}

/* value k of v as text, or "(absent)" */
static void
value_is(const struct merge_json_value *v, const char *want)
{
	char got[256];

	if (v->p == NULL)
		snprintf(got, sizeof(got), "(absent)");
	else
		snprintf(got, sizeof(got), "%.*s", (int)v->n, v->p);
	assert_string_equal(got, want);
}

/*
 * The top-level members a combined merge rewrites, found in an event's
 * text: past strings holding quotes, braces and brackets, past nested
 * objects holding the same keys, with any spacing; the last of a repeated
 * key; and not an object at all.
 */
static void
test_json_scan(void **state)
{
	static const char *const keys[] = { "pid", "ts", "ph", "name", "args" };
	struct merge_json_value v[5];
	const char *ev =
	    "{\"ph\":\"X\",\"name\":\"a \\\"}{[\\\\\",\"args\":{\"pid\":7,"
	    "\"ts\":[1,{\"ts\":2}],\"name\":\"in\"},\"pid\" : \"Spans\" ,"
	    "\"ts\":\t1212075548353.304e0, \"dur\":-1.5}";
	const char *twice = "{\"ts\":1,\"ts\":2}";

	(void)state;
	assert_int_equal(merge_json_scan(ev, strlen(ev), keys, 5, v), 0);
	value_is(&v[0], "\"Spans\"");
	value_is(&v[1], "1212075548353.304e0");
	value_is(&v[2], "\"X\"");
	value_is(&v[3], "\"a \\\"}{[\\\\\"");
	value_is(&v[4], "{\"pid\":7,\"ts\":[1,{\"ts\":2}],\"name\":\"in\"}");
	/* inside args: its own members */
	assert_int_equal(merge_json_scan(v[4].p, v[4].n, keys + 3, 1, v), 0);
	value_is(&v[0], "\"in\"");
	assert_int_equal(merge_json_scan(twice, strlen(twice), keys + 1, 1, v),
	    0);
	value_is(&v[0], "2");
	assert_int_equal(merge_json_scan(" { } ", 5, keys, 5, v), 0);
	value_is(&v[0], "(absent)");
	assert_int_equal(merge_json_scan("[1]", 3, keys, 5, v), -1);
	assert_int_equal(merge_json_scan("{\"pid\"}", 7, keys, 5, v), -1);
	assert_int_equal(merge_json_scan("{\"pid\":1", 8, keys, 5, v), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_us),
		cmocka_unit_test(test_fmt_us_prec),
		cmocka_unit_test(test_first_pid),
		cmocka_unit_test(test_series_key),
		cmocka_unit_test(test_card_name),
		cmocka_unit_test(test_json_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
