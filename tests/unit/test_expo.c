/*
 * Tests of the exposition writer (expo.h), the renderer of a snapshot
 * (render.h) and the HTTP request parser (http.h).
 *
 * Expected texts are written out in full, as the OpenMetrics 1.0 and
 * Prometheus 0.0.4 specifications spell them: a counter's family without
 * "_total" in OpenMetrics and with it in 0.0.4, UNIT lines and "# EOF"
 * only in OpenMetrics, timestamps in seconds or milliseconds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect.h"
#include "expo.h"
#include "http.h"
#include "render.h"

/* What write(e) writes in fmt, as a malloc'd string. */
static char *
capture(enum expo_format fmt, bool ts, void (*write)(struct expo *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct expo e;

	assert_non_null(fp);
	expo_init(&e, fp, fmt, ts);
	write(&e);
	assert_int_equal(fclose(fp), 0);
	return buf;
}

static void
write_two_families(struct expo *e)
{
	struct expo_label l[2] = {
		{ "spyre", "0000:13:00.0" },
		{ "tag", "a\"b\\c\nd" },
	};

	expo_family(e, "spyre_energy_joules", EXPO_COUNTER, "joules",
	    "Energy \"so far\"\\ now.");
	expo_sample(e, l, 2, 12.5, 1700000000123456789LL);
	expo_family(e, "spyremon_window_open", EXPO_GAUGE, "", "Open.");
	expo_sample(e, NULL, 0, 1, 0);
	expo_finish(e);
}

static void
test_openmetrics(void **state)
{
	char *out = capture(EXPO_OPENMETRICS, true, write_two_families);

	(void)state;
	assert_string_equal(out,
	    "# HELP spyre_energy_joules Energy \\\"so far\\\"\\\\ now.\n"
	    "# TYPE spyre_energy_joules counter\n"
	    "# UNIT spyre_energy_joules joules\n"
	    "spyre_energy_joules_total{spyre=\"0000:13:00.0\","
	    "tag=\"a\\\"b\\\\c\\nd\"} 12.5 1700000000.123\n"
	    "# HELP spyremon_window_open Open.\n"
	    "# TYPE spyremon_window_open gauge\n"
	    "spyremon_window_open 1\n"
	    "# EOF\n");
	free(out);
}

static void
test_prometheus(void **state)
{
	char *out = capture(EXPO_PROMETHEUS, true, write_two_families);

	(void)state;
	assert_string_equal(out,
	    "# HELP spyre_energy_joules_total Energy \"so far\"\\\\ now.\n"
	    "# TYPE spyre_energy_joules_total counter\n"
	    "spyre_energy_joules_total{spyre=\"0000:13:00.0\","
	    "tag=\"a\\\"b\\\\c\\nd\"} 12.5 1700000000123\n"
	    "# HELP spyremon_window_open Open.\n"
	    "# TYPE spyremon_window_open gauge\n"
	    "spyremon_window_open 1\n");
	free(out);
}

static void
test_no_timestamps(void **state)
{
	char *out = capture(EXPO_PROMETHEUS, false, write_two_families);

	(void)state;
	assert_non_null(strstr(out, "tag=\"a\\\"b\\\\c\\nd\"} 12.5\n"));
	free(out);
}

static void
test_numbers(void **state)
{
	char b[40];

	(void)state;
	assert_string_equal(expo_number(0.1, b, sizeof(b)), "0.1");
	assert_string_equal(expo_number(42, b, sizeof(b)), "42");
	assert_string_equal(expo_number(10, b, sizeof(b)), "10");
	assert_string_equal(expo_number(1700000000.5, b, sizeof(b)),
	    "1700000000.5");
	assert_string_equal(expo_number(123456789012345, b, sizeof(b)),
	    "123456789012345");
	assert_string_equal(expo_number(-3.25, b, sizeof(b)), "-3.25");
	assert_string_equal(expo_number(1e21, b, sizeof(b)), "1e+21");
	assert_string_equal(expo_number(0.1 + 0.2, b, sizeof(b)),
	    "0.30000000000000004");
	assert_string_equal(expo_number(0.0 / 0.0, b, sizeof(b)), "NaN");
	assert_string_equal(expo_number(1.0 / 0.0, b, sizeof(b)), "+Inf");
	assert_string_equal(expo_number(-1.0 / 0.0, b, sizeof(b)), "-Inf");
}

/* A snapshot: one fresh card with power only, one open window. */
static void
write_snapshot(struct expo *e)
{
	double v[32] = { 0 };
	bool have[32] = { 0 };
	char bus[] = "0000:13:00.0", tag[] = "slurm-4711";
	struct collect_card card = {
		.device = 3, .bus_id = bus, .type = "pf",
		.ts_ns = 1700000000500000000LL, .interval_ms = 100,
		.v = v, .have = have, .have_energy = true, .energy_j = 7,
		.energy_ts_ns = 1700000000500000000LL,
	};
	struct collect_window w = { 4, tag, 1 };
	struct collect c = {
		.cards = &card, .ncards = 1, .newest_ts_ns = card.ts_ns,
		.have_counters = true, .samples_total = 10,
		.database_bytes = 4096, .open = &w, .nopen = 1,
	};

	assert_true(collect_nvalues <= 32);
	assert_string_equal(collect_values[0].key, "pwr");
	have[0] = true;
	v[0] = 55.5;
	render_metrics(&c, e);
}

static void
test_render(void **state)
{
	char *out = capture(EXPO_OPENMETRICS, true, write_snapshot);
	const char *lab = "{spyre=\"0000:13:00.0\",type=\"pf\",device=\"3\"}";
	char line[256];

	(void)state;
	snprintf(line, sizeof(line), "\nspyre_power_watts%s 55.5 "
	    "1700000000.500\n", lab);
	assert_non_null(strstr(out, line));
	snprintf(line, sizeof(line), "\nspyre_energy_joules_total%s 7 "
	    "1700000000.500\n", lab);
	assert_non_null(strstr(out, line));
	/* announced, but no sample: the card has no temperature */
	assert_non_null(strstr(out, "# TYPE spyre_temperature_celsius gauge\n"));
	assert_null(strstr(out, "\nspyre_temperature_celsius{"));
	assert_non_null(strstr(out, "\nspyremon_window_open{tag=\"slurm-4711\","
	    "id=\"4\"} 1\n"));
	assert_non_null(strstr(out, "\nspyremon_samples_total 10\n"));
	assert_non_null(strstr(out, "\nspyremon_last_sample_timestamp_seconds "
	    "1700000000.5\n"));
	assert_non_null(strstr(out, "# UNIT spyre_busy_ratio ratio\n"));
	assert_int_equal(strcmp(out + strlen(out) - 6, "# EOF\n"), 0);
	free(out);
}

static int
parse(const char *s, struct http_request *r)
{
	return http_parse(s, strlen(s), r);
}

static void
test_http_good(void **state)
{
	struct http_request r;

	(void)state;
	assert_int_equal(parse("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n"
	    "accept: text/plain\r\nAccept:  application/openmetrics-text \r\n"
	    "\r\n", &r), 0);
	assert_int_equal(r.method, HTTP_GET);
	assert_string_equal(r.path, "/metrics");
	assert_int_equal(r.minor, 1);
	assert_string_equal(r.accept, "text/plain,application/openmetrics-text");
	/* bare LF, HTTP/1.0, HEAD, leading empty line */
	assert_int_equal(parse("\r\nHEAD / HTTP/1.0\n\n", &r), 0);
	assert_int_equal(r.method, HTTP_HEAD);
	assert_string_equal(r.path, "/");
	assert_int_equal(r.minor, 0);
	assert_string_equal(r.accept, "");
}

static void
test_http_incomplete(void **state)
{
	struct http_request r;

	(void)state;
	assert_int_equal(parse("", &r), -1);
	assert_int_equal(parse("GET /metrics HTT", &r), -1);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: a\r\n", &r), -1);
}

static void
test_http_bad(void **state)
{
	struct http_request r;
	char *big;
	size_t n;

	(void)state;
	assert_int_equal(parse("POST /metrics HTTP/1.1\r\n\r\n", &r), 405);
	assert_int_equal(parse("GET /metrics HTTP/2.0\r\n\r\n", &r), 505);
	/* only 1.0 and 1.1 are answered as such */
	assert_int_equal(parse("GET /metrics HTTP/1.9\r\n\r\n", &r), 505);
	assert_int_equal(parse("GET /metrics HTTP/1.2\r\n\r\n", &r), 505);
	assert_int_equal(parse("GET /metrics HTTP/0.9\r\n\r\n", &r), 505);
	assert_int_equal(parse("GET /metrics HTTP/1.0\r\n\r\n", &r), 0);
	assert_int_equal(r.minor, 0);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\n\r\n", &r), 0);
	assert_int_equal(r.minor, 1);
	assert_int_equal(parse("GET /metrics\r\n\r\n", &r), 400);
	assert_int_equal(parse("GET metrics HTTP/1.1\r\n\r\n", &r), 400);
	assert_int_equal(parse("GET /metrics HTTP/1.1 x\r\n\r\n", &r), 400);
	assert_int_equal(parse("GET /a b HTTP/1.1\r\n\r\n", &r), 400);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n",
	    &r), 400);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nno colon\r\n\r\n",
	    &r), 400);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nA: b\r\n folded\r\n"
	    "\r\n", &r), 400);
	assert_int_equal(parse("G(T /metrics HTTP/1.1\r\n\r\n", &r), 400);

	/* a request line over the limit, even before its end arrives */
	n = HTTP_LINE_MAX + 100;
	big = malloc(n + 64);
	assert_non_null(big);
	memcpy(big, "GET /", 5);
	memset(big + 5, 'a', n);
	big[5 + n] = '\0';
	assert_int_equal(parse(big, &r), 414);
	strcpy(big + 5 + n, " HTTP/1.1\r\n\r\n");
	assert_int_equal(parse(big, &r), 414);
	free(big);

	/* too many headers; headers too large */
	big = malloc(HTTP_HEAD_MAX * 2);
	assert_non_null(big);
	strcpy(big, "GET /metrics HTTP/1.1\r\n");
	for (int i = 0; i <= HTTP_HEADERS_MAX; i++)
		strcat(big, "X: y\r\n");
	strcat(big, "\r\n");
	assert_int_equal(parse(big, &r), 431);
	strcpy(big, "GET /metrics HTTP/1.1\r\nX: ");
	n = strlen(big);
	memset(big + n, 'v', HTTP_HEAD_MAX);
	big[n + HTTP_HEAD_MAX] = '\0';
	assert_int_equal(parse(big, &r), 431);
	free(big);
}

static void
test_accept(void **state)
{
	(void)state;
	/* what Prometheus 2.42 sends */
	assert_true(http_wants_openmetrics("application/openmetrics-text;"
	    "version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
	    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
	assert_true(http_wants_openmetrics("application/openmetrics-text"));
	assert_true(http_wants_openmetrics("text/plain;q=0.3, "
	    "Application/OpenMetrics-Text; version=1.0.0; q=0.5"));
	assert_false(http_wants_openmetrics(""));
	assert_false(http_wants_openmetrics("*/*"));
	assert_false(http_wants_openmetrics("text/plain"));
	assert_false(http_wants_openmetrics("application/openmetrics-text;"
	    "version=0.0.1"));
	assert_false(http_wants_openmetrics("application/openmetrics-text;"
	    "q=0"));
	assert_false(http_wants_openmetrics("application/openmetrics-text;"
	    "q=0.2,text/plain;q=0.9"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_prometheus),
		cmocka_unit_test(test_no_timestamps),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_http_good),
		cmocka_unit_test(test_http_incomplete),
		cmocka_unit_test(test_http_bad),
		cmocka_unit_test(test_accept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
