/*
 * Tests of the completions load (loadgen.h): the request body as vLLM's
 * OpenAI-compatible server takes it (model, a prompt of the words asked
 * for, max_tokens, ignore_eos), the usage read from an answer, the model
 * list of /v1/models, and the excerpt of a body quoted in an error; each
 * malformed answer refused with what is missing.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "loadgen.h"

static size_t
words(const char *s)
{
	size_t n = 0;
	bool in = false;

	if (s == NULL)
		return 0;
	for (; *s != '\0'; s++) {
		if (*s != ' ' && !in)
			n++;
		in = *s != ' ';
	}
	return n;
}

static void
test_body(void **state)
{
	const char *mp[] = { "model", NULL }, *pp[] = { "prompt", NULL };
	const char *xp[] = { "max_tokens", NULL }, *ep[] = { "ignore_eos", NULL };
	size_t len;
	char *b = loadgen_body("ibm/granite \"8b\"", 12, 25, &len);
	yajl_val o, v;

	(void)state;
	assert_non_null(b);
	assert_int_equal(strlen(b), len);
	assert_non_null(o = yajl_tree_parse(b, NULL, 0));
	assert_non_null(v = yajl_tree_get(o, mp, yajl_t_string));
	assert_string_equal(YAJL_GET_STRING(v), "ibm/granite \"8b\"");
	assert_non_null(v = yajl_tree_get(o, pp, yajl_t_string));
	assert_int_equal(words(YAJL_GET_STRING(v)), 12);
	assert_non_null(v = yajl_tree_get(o, xp, yajl_t_number));
	assert_int_equal(YAJL_GET_INTEGER(v), 25);
	assert_non_null(v = yajl_tree_get(o, ep, yajl_t_true));
	yajl_tree_free(o);
	free(b);

	/* a prompt is at least one word */
	b = loadgen_prompt(0);
	assert_string_equal(b, "hello");
	free(b);
	b = loadgen_prompt(3);
	assert_string_equal(b, "hello hello hello");
	free(b);
}

static void
test_completion(void **state)
{
	char why[LOADGEN_WHY];
	double p, c;
	const char *ok = "{\"id\":\"cmpl-1\",\"choices\":[{\"text\":\" a\","
	    "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":12,"
	    "\"completion_tokens\":25,\"total_tokens\":37}}";

	(void)state;
	assert_int_equal(loadgen_parse_completion(ok, strlen(ok), &p, &c, why,
	    sizeof(why)), 0);
	assert_true(p == 12 && c == 25);
	assert_int_equal(loadgen_parse_completion("{\"usage\":{"
	    "\"prompt_tokens\":3}}", 31, &p, &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "usage.completion_tokens"));
	assert_int_equal(loadgen_parse_completion("{\"choices\":[]}", 14, &p,
	    &c, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "usage.prompt_tokens"));
	assert_int_equal(loadgen_parse_completion("Internal Server Error", 21,
	    &p, &c, why, sizeof(why)), -1);
	assert_string_equal(why, "the answer is not a JSON object");
	assert_int_equal(loadgen_parse_completion("{\"usage\":{\"prompt_tokens"
	    "\":-1,\"completion_tokens\":2}}", 52, &p, &c, why, sizeof(why)),
	    -1);
	assert_non_null(strstr(why, "not a count"));
	/* the length given, not the NUL: a body cut short is not read past */
	assert_int_equal(loadgen_parse_completion(ok, 20, &p, &c, why,
	    sizeof(why)), -1);
}

static void
test_models(void **state)
{
	const char *body = "{\"object\":\"list\",\"data\":[{\"id\":\"granite\","
	    "\"object\":\"model\"},{\"id\":\"llama\",\"object\":\"model\"}]}";
	char first[64], list[128], why[LOADGEN_WHY];
	bool found;

	(void)state;
	assert_int_equal(loadgen_parse_models(body, strlen(body), NULL, first,
	    sizeof(first), &found, list, sizeof(list), why, sizeof(why)), 0);
	assert_string_equal(first, "granite");
	assert_false(found);
	assert_string_equal(list, "granite, llama");
	assert_int_equal(loadgen_parse_models(body, strlen(body), "llama",
	    first, sizeof(first), &found, list, sizeof(list), why,
	    sizeof(why)), 0);
	assert_true(found);
	assert_int_equal(loadgen_parse_models(body, strlen(body), "gpt",
	    first, sizeof(first), &found, list, sizeof(list), why,
	    sizeof(why)), 0);
	assert_false(found);
	assert_int_equal(loadgen_parse_models("{\"data\":[]}", 11, NULL, first,
	    sizeof(first), &found, list, sizeof(list), why, sizeof(why)), -1);
	assert_string_equal(why, "the server lists no model");
	assert_int_equal(loadgen_parse_models("{\"models\":1}", 12, NULL, first,
	    sizeof(first), &found, list, sizeof(list), why, sizeof(why)), -1);
	assert_non_null(strstr(why, "\"data\""));
}

static void
test_excerpt(void **state)
{
	char out[LOADGEN_EXCERPT + 8], big[400];

	(void)state;
	loadgen_excerpt("{\"detail\":\n\"Not Found\"}\n", 24, out, sizeof(out));
	assert_string_equal(out, "{\"detail\": \"Not Found\"}");
	memset(big, 'x', sizeof(big));
	loadgen_excerpt(big, sizeof(big), out, sizeof(out));
	assert_int_equal(strlen(out), LOADGEN_EXCERPT + 3);
	assert_string_equal(out + LOADGEN_EXCERPT, "...");
	loadgen_excerpt("", 0, out, sizeof(out));
	assert_string_equal(out, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_completion),
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_excerpt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
