/*
 * Tests of the Prometheus text reader (promtext.h) and of the vLLM
 * counters kept as window metadata (vllm.h): sums over label sets, the
 * format's comments, escapes, special values and timestamps, and each
 * kind of malformed line refused with its line number.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "promtext.h"
#include "vllm.h"

static int
sums_of(const char *text, struct promtext_sum *s, size_t n, char *why)
{
	return promtext_sums(text, strlen(text), s, n, why, PROMTEXT_WHY);
}

/* As vLLM's server writes it: one sample per finish reason, summed. */
static void
test_vllm_text(void **state)
{
	const char *text =
	    "# HELP vllm:request_success_total Count of requests.\n"
	    "# TYPE vllm:request_success_total counter\n"
	    "vllm:request_success_total{finished_reason=\"stop\","
	    "model_name=\"m\"} 3.0\n"
	    "vllm:request_success_total{finished_reason=\"length\","
	    "model_name=\"m\"} 4.0\n"
	    "vllm:request_success_created{finished_reason=\"stop\","
	    "model_name=\"m\"} 1.7e+09\n"
	    "vllm:prompt_tokens_total{model_name=\"m\"} 1234.0\n"
	    "vllm:prompt_tokens_total_x{model_name=\"m\"} 99.0\n";
	struct promtext_sum s[3] = {
		{ .name = "vllm:request_success_total" },
		{ .name = "vllm:prompt_tokens_total" },
		{ .name = "vllm:generation_tokens_total" },
	};
	char why[PROMTEXT_WHY];

	(void)state;
	assert_int_equal(sums_of(text, s, 3, why), 0);
	assert_int_equal(s[0].n, 2);
	assert_true(s[0].sum == 7.0);
	assert_int_equal(s[1].n, 1);
	assert_true(s[1].sum == 1234.0);
	assert_int_equal(s[2].n, 0);
	assert_true(s[2].sum == 0.0);
}

/* Escapes, spaces, no labels, an empty set, timestamps, CRLF, specials. */
static void
test_forms(void **state)
{
	const char *text =
	    "\n  # a comment\r\n"
	    "a{l=\"x\\\"}y\\\\ \\n\",m=\"{\"} 1\r\n"
	    "a 2 1700000000000\n"
	    "a{} 0x10\n"
	    "a{ l = \"v\" , } 1e2\n"
	    "b +Inf\n"
	    "c NaN\n"
	    "d -Inf -5";
	struct promtext_sum s[4] = {
		{ .name = "a" }, { .name = "b" }, { .name = "c" }, { .name = "d" },
	};
	char why[PROMTEXT_WHY];

	(void)state;
	assert_int_equal(sums_of(text, s, 4, why), 0);
	assert_int_equal(s[0].n, 4);
	assert_true(s[0].sum == 119.0);
	assert_true(isinf(s[1].sum) && s[1].sum > 0);
	assert_true(isnan(s[2].sum));
	assert_true(isinf(s[3].sum) && s[3].sum < 0);
}

/* Each malformed line is refused with its number and what is wrong. */
static void
test_bad(void **state)
{
	static const struct { const char *text, *why; } cases[] = {
		{ "a 1\n9a 1\n", "line 2: a metric name expected" },
		{ "a{l=x} 1\n", "line 1: a label value must be quoted" },
		{ "a{l=\"x} 1\n", "line 1: a label value is not closed" },
		{ "a{l=\"\\q\"} 1\n", "line 1: a bad escape in a label value" },
		{ "a{l\"x\"} 1\n", "line 1: '=' expected after a label name" },
		{ "a{l=\"x\" m=\"y\"} 1\n",
		    "line 1: ',' or '}' expected after a label" },
		{ "a{=\"x\"} 1\n", "line 1: a label name expected" },
		{ "a\n", "line 1: a value expected after the name" },
		{ "a one\n", "line 1: the value is not a number" },
		{ "a nan\n", "line 1: the value is not a number" },
		{ "a infinity\n", "line 1: the value is not a number" },
		{ "a 1 2 3\n", "line 1: junk after the value" },
		{ "a 1 x\n", "line 1: junk after the value" },
	};
	struct promtext_sum s = { .name = "a" };
	char why[PROMTEXT_WHY];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(sums_of(cases[i].text, &s, 1, why), -1);
		assert_string_equal(why, cases[i].why);
	}
	assert_int_equal(promtext_sums("a 1\n\0", 5, &s, 1, why,
	    sizeof(why)), -1);
	assert_string_equal(why, "line 2: a NUL byte");
}

/* The counters kept as metadata are read back exactly. */
static void
test_meta_round_trip(void **state)
{
	struct vllm_counters c = { .v = { 12, 3456, 78901 },
	    .has_created = true, .created = 1796549153.571990 }, back;
	char keys[VLLM_NMETA][PROTO_META_KEY_MAX + 1];
	char values[VLLM_NMETA][PROTO_META_VALUE_MAX + 1];
	char json[2048];
	size_t n, off;

	(void)state;
	n = vllm_meta(&c, "end", keys, values);
	assert_int_equal(n, 4);
	assert_string_equal(keys[0], "vllm.end.requests");
	assert_string_equal(values[0], "12");
	assert_string_equal(keys[2], "vllm.end.generation_tokens");
	off = (size_t)snprintf(json, sizeof(json), "{\"vllm.url\":\"u\"");
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(json + off, sizeof(json) - off,
		    ",\"%s\":\"%s\"", keys[i], values[i]);
	snprintf(json + off, sizeof(json) - off, "}");
	assert_true(vllm_from_meta(json, "end", &back));
	for (int i = 0; i < VLLM_NCOUNTERS; i++)
		assert_true(back.v[i] == c.v[i]);
	assert_true(back.has_created && back.created == c.created);
	assert_false(vllm_from_meta(json, "begin", &back));
	assert_false(vllm_from_meta("{\"vllm.begin.requests\":\"x\"}",
	    "begin", &back));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vllm_text),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_meta_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
