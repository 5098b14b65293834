/*
 * Tests of the trace reader: exact decimal times, each time dialect on
 * small traces written here, header keys after the events, the skips (M
 * events, ts == 0 under a base), step names, errors with byte offsets
 * (which must not depend on how the bytes were chunked), and gzip input.
 * Expected values are worked out by hand from the traces in this file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "trace.h"

#define POISON	0x5a5a5a5a5a5a5a5aLL
#define BASE	1735632360000000000LL

/* --- trace_parse_decimal --------------------------------------------- */

static void
assert_decimal(const char *s, int scale, int64_t want)
{
	int64_t v = POISON;
	int rc = trace_parse_decimal(s, strlen(s), scale, &v);

	if (rc != 0)
		fail_msg("parse(\"%s\", %d) failed: %d", s, scale, rc);
	if (v != want)
		fail_msg("parse(\"%s\", %d) = %lld, want %lld", s, scale,
		    (long long)v, (long long)want);
}

static void
assert_decimal_fails(const char *s, int want_rc)
{
	int64_t v = POISON;
	int rc = trace_parse_decimal(s, strlen(s), 3, &v);

	if (rc != want_rc)
		fail_msg("parse(\"%s\") = %d (value %lld), want %d", s, rc,
		    (long long)v, want_rc);
	assert_int_equal(v, POISON);
}

static void
test_decimal_fractions(void **state)
{
	(void)state;
	assert_decimal("4203669603018.756", 3, 4203669603018756LL);
	assert_decimal("1712195495406752.768", 3, 1712195495406752768LL);
	assert_decimal("68.0", 3, 68000);
	assert_decimal("1.5", 3, 1500);
	assert_decimal("0.001", 3, 1);
	/* more than three digits: nearest ns, halves away from zero */
	assert_decimal("1.23449", 3, 1234);
	assert_decimal("1.2345", 3, 1235);
	assert_decimal("1.23456", 3, 1235);
	assert_decimal("0.0005", 3, 1);
	assert_decimal("0.0004999", 3, 0);
	assert_decimal("1712195495406752.7685", 3, 1712195495406752769LL);
	assert_decimal("1.000000000000000000000000000001", 3, 1000);
	assert_decimal("0.00000000000000000000000000000000000000009", 3, 0);
	assert_decimal("999.9999", 3, 1000000);
}

static void
test_decimal_integers(void **state)
{
	(void)state;
	assert_decimal("0", 3, 0);
	assert_decimal("1682725898236567", 3, 1682725898236567000LL);
	assert_decimal("1735632360000000000", 0, BASE);
	assert_decimal("9223372036854775.807", 3, INT64_MAX);
	assert_decimal("9223372036854775807", 0, INT64_MAX);
	assert_decimal("123456789012345678", 0, 123456789012345678LL);
	assert_decimal("1234567890123456789", 0, 1234567890123456789LL);
	assert_decimal("1234567890123456.78", 3, 1234567890123456780LL);
	assert_decimal("12345678901234567.8", 2, 1234567890123456780LL);
	assert_decimal("12", -1, 1);
	assert_decimal("15", -1, 2);
	assert_decimal_fails("9223372036854775.808", -2);
	assert_decimal_fails("9223372036854775808", -2);
	assert_decimal_fails("99999999999999999999999", -2);
}

static void
test_decimal_exponents(void **state)
{
	(void)state;
	assert_decimal("1.7e15", 3, 1700000000000000000LL);
	assert_decimal("1.7E+15", 3, 1700000000000000000LL);
	assert_decimal("17e14", 3, 1700000000000000000LL);
	assert_decimal("1712195495406752768e-3", 3, 1712195495406752768LL);
	assert_decimal("1712195495406752768E-6", 3, 1712195495406753LL);
	assert_decimal("2e0", 3, 2000);
	assert_decimal("5e-4", 3, 1);
	assert_decimal("4e-4", 3, 0);
	assert_decimal("1e-100000000", 3, 0);
	assert_decimal("0e99999999", 3, 0);
	assert_decimal("0.0e400", 3, 0);
	assert_decimal_fails("1e400", -2);
	assert_decimal_fails("1e16", -2);
	assert_decimal_fails("1e99999999999999999999", -2);
}

static void
test_decimal_negative(void **state)
{
	(void)state;
	assert_decimal("-5", 3, -5000);
	assert_decimal("-0", 3, 0);
	assert_decimal("-1.5", 3, -1500);
	assert_decimal("-0.0005", 3, -1);
	assert_decimal("-1.2344", 3, -1234);
	assert_decimal("-9223372036854775.807", 3, -INT64_MAX);
	assert_decimal("-2.5e-3", 3, -3);
}

static void
test_decimal_syntax(void **state)
{
	static const char *const bad[] = {
		"", "-", "1.", ".5", "1e", "1e+", "1e-", "abc", "1.5x",
		"--1", "+1", "1..2", "1e5.0", " 1", "0x10", "1,5",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_decimal_fails(bad[i], -1);
}

/* --- reading traces from memory -------------------------------------- */

/*
 * Read json in chunks of chunk bytes (0: all at once); returns the
 * result code, with *info and *err filled.
 */
static int
read_mem_opts(const char *json, size_t chunk, const struct trace_options *opts,
    struct trace_info *info, struct trace_error *err)
{
	struct trace_reader *r;
	size_t len = strlen(json), off;
	int rc;

	memset(info, 0, sizeof(*info));
	if ((rc = trace_reader_new(opts, &r, err)) != TRACE_OK)
		return rc;
	if (chunk == 0)
		chunk = len;
	for (off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		if ((rc = trace_reader_feed(r, json + off, n, err)) != TRACE_OK)
			break;
	}
	if (rc == TRACE_OK)
		rc = trace_reader_finish(r, info, err);
	trace_reader_free(r);
	return rc;
}

static int
read_mem(const char *json, struct trace_info *info, struct trace_error *err)
{
	return read_mem_opts(json, 0, NULL, info, err);
}

/* Read json, which must succeed, into *info. */
static void
read_ok(const char *json, struct trace_info *info)
{
	struct trace_error err;
	char msg[512];

	if (read_mem(json, info, &err) != TRACE_OK)
		fail_msg("reading %s: %s", json, trace_strerror(&err, msg,
		    sizeof(msg)));
}

static void
test_dialect_base(void **state)
{
	struct trace_info in;

	(void)state;
	read_ok("{\"schemaVersion\": 1, \"baseTimeNanoseconds\": 1735632360000000000,"
	    " \"displayTimeUnit\": \"ms\", \"traceEvents\": ["
	    "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1.5, \"dur\": 2},"
	    "{\"ph\": \"i\", \"name\": \"b\", \"ts\": 10, \"s\": \"g\"},"
	    "{\"ph\": \"X\", \"name\": \"c\", \"ts\": 4.25, \"dur\": 0.5}]}", &in);
	assert_int_equal(in.dialect, TRACE_DIALECT_BASE);
	assert_true(in.has_base);
	assert_int_equal(in.base_ns, BASE);
	assert_true(in.absolute);
	assert_int_equal(in.start_ns, BASE + 1500);
	assert_int_equal(in.end_ns, BASE + 10000);
	assert_int_equal(in.first_own_ns, 1500);
	assert_int_equal(in.last_own_ns, 10000);
	assert_int_equal(in.events, 3);
	assert_string_equal(in.display_time_unit, "ms");
	assert_true(in.ts_fraction);
	trace_info_free(&in);
}

static void
test_header_after_events(void **state)
{
	struct trace_info in;

	(void)state;
	read_ok("{\"traceEvents\": ["
	    "{\"ph\": \"X\", \"ts\": 100, \"dur\": 50},"
	    "{\"ph\": \"X\", \"ts\": 20, \"dur\": 10}],"
	    " \"distributedInfo\": {\"rank\": 3, \"world_size\": 8},"
	    " \"baseTimeNanoseconds\": 1735632360000000000}", &in);
	assert_int_equal(in.dialect, TRACE_DIALECT_BASE);
	assert_true(in.absolute);
	assert_int_equal(in.start_ns, BASE + 20000);
	assert_int_equal(in.end_ns, BASE + 150000);
	assert_true(in.has_rank);
	assert_int_equal(in.rank, 3);
	assert_true(in.has_world_size);
	assert_int_equal(in.world_size, 8);
	trace_info_free(&in);
}

static void
test_zero_ts_skipped_under_base(void **state)
{
	static const char *const traces[] = {
		"{\"baseTimeNanoseconds\": 1735632360000000000, \"traceEvents\": [",
		"{\"traceEvents\": [",
	};
	static const char events[] =
	    "{\"ph\": \"X\", \"name\": \"ProfilerStep#1\", \"ts\": 0, \"dur\": 900000},"
	    "{\"ph\": \"X\", \"name\": \"ProfilerStep#2\", \"ts\": 5, \"dur\": 1},"
	    "{\"ph\": \"i\", \"ts\": 0.000}]";
	struct trace_info in;
	char json[512];

	(void)state;
	/* under a base: the two ts == 0 events and their step are skipped */
	snprintf(json, sizeof(json), "%s%s}", traces[0], events);
	read_ok(json, &in);
	assert_int_equal(in.events, 1);
	assert_int_equal(in.clamped_events, 2);
	assert_int_equal(in.start_ns, BASE + 5000);
	assert_int_equal(in.end_ns, BASE + 6000);
	assert_int_equal(in.nsteps, 1);
	assert_string_equal(in.steps[0].name, "ProfilerStep#2");
	trace_info_free(&in);

	/* without a base ts == 0 is a time like any other */
	snprintf(json, sizeof(json), "%s%s}", traces[1], events);
	read_ok(json, &in);
	assert_int_equal(in.events, 3);
	assert_int_equal(in.clamped_events, 0);
	assert_int_equal(in.first_own_ns, 0);
	assert_int_equal(in.last_own_ns, 900000000);
	assert_int_equal(in.nsteps, 2);
	assert_false(in.absolute);
	trace_info_free(&in);
}

static void
test_dialect_absolute_int(void **state)
{
	struct trace_info in;

	(void)state;
	read_ok("{\"schemaVersion\": 1, \"traceEvents\": ["
	    "{\"ph\": \"X\", \"ts\": 1682725898236567, \"dur\": 68.0},"
	    "{\"ph\": \"X\", \"ts\": 1682725897226747, \"dur\": 3367344.0}]}", &in);
	assert_int_equal(in.dialect, TRACE_DIALECT_ABSOLUTE);
	assert_false(in.has_base);
	assert_true(in.absolute);
	assert_false(in.ts_fraction);
	assert_int_equal(in.start_ns, 1682725897226747000LL);
	assert_int_equal(in.end_ns, 1682725900594091000LL);
	trace_info_free(&in);
}

static void
test_dialect_absolute_float_ns_unit(void **state)
{
	struct trace_info in;

	(void)state;
	/* 1712195495406752.768 is not exact as a double: text keeps it */
	read_ok("{\"traceEvents\": ["
	    "{\"ph\": \"X\", \"ts\": 1712195495406752.768, \"dur\": 0.001},"
	    "{\"ph\": \"f\", \"ts\": 1712195495406753.001, \"id\": 1}],"
	    " \"displayTimeUnit\": \"ns\"}", &in);
	assert_int_equal(in.dialect, TRACE_DIALECT_ABSOLUTE);
	assert_true(in.ts_fraction);
	assert_string_equal(in.display_time_unit, "ns");
	assert_int_equal(in.start_ns, 1712195495406752768LL);
	assert_int_equal(in.end_ns, 1712195495406753001LL);
	trace_info_free(&in);
}

static void
test_metadata_and_ends(void **state)
{
	struct trace_info in;

	(void)state;
	/* the M events lie outside the others: they must not count */
	read_ok("{\"baseTimeNanoseconds\": 1000, \"traceEvents\": ["
	    "{\"ph\": \"M\", \"name\": \"process_name\", \"ts\": 1, \"pid\": 7,"
	    " \"args\": {\"name\": \"x\"}},"
	    "{\"ph\": \"X\", \"ts\": 10, \"dur\": 5, \"pid\": 3},"
	    "{\"ph\": \"B\", \"ts\": 12, \"dur\": 100, \"pid\": 3},"
	    "{\"ph\": \"X\", \"ts\": 11, \"dur\": -4, \"pid\": \"Spans\"},"
	    "{\"ph\": \"M\", \"name\": \"thread_name\", \"ts\": 99999}]}", &in);
	assert_int_equal(in.metadata_events, 2);
	assert_int_equal(in.events, 3);
	/* X ends at ts + dur; B's dur means nothing; a negative dur ends at ts */
	assert_int_equal(in.start_ns, 1000 + 10000);
	assert_int_equal(in.end_ns, 1000 + 15000);
	assert_int_equal(in.npids, 2);
	assert_true(in.has_max_pid);
	assert_int_equal(in.max_pid, 7);
	assert_int_equal(in.negative_durs, 1);
	trace_info_free(&in);

	/* a step with a negative dur lasts 0, and is counted */
	read_ok("{\"traceEvents\": ["
	    "{\"ph\": \"X\", \"name\": \"ProfilerStep#1\", "
	    "\"ts\": 1700000000000000, \"dur\": -0.05},"
	    "{\"ph\": \"X\", \"name\": \"ProfilerStep#2\", "
	    "\"ts\": 1700000000000001, \"dur\": -0}]}", &in);
	assert_int_equal(in.nsteps, 2);
	assert_int_equal(in.steps[0].dur_ns, 0);
	assert_int_equal(in.negative_durs, 1);
	assert_int_equal(in.end_ns, 1700000000000001000LL);
	trace_info_free(&in);
}

static void
test_dialect_legacy(void **state)
{
	struct trace_info in;

	(void)state;
	read_ok("[{\"name\": \"aten::zeros\", \"ph\": \"X\", \"ts\": 181, \"dur\": 38},"
	    " {\"name\": \"iteration_2\", \"ph\": \"X\", \"ts\": 236, \"dur\": 37163},"
	    " {\"name\": \"aten::empty\", \"ph\": \"X\", \"ts\": 238, \"dur\": 0}]\n",
	    &in);
	assert_int_equal(in.dialect, TRACE_DIALECT_LEGACY);
	assert_false(in.absolute);
	assert_true(in.has_span);
	assert_int_equal(in.first_own_ns, 181000);
	assert_int_equal(in.last_own_ns, 37399000);
	assert_int_equal(in.events, 3);
	assert_int_equal(in.nsteps, 1);
	assert_string_equal(in.steps[0].name, "iteration_2");
	assert_int_equal(in.steps[0].ts_ns, 236000);
	assert_int_equal(in.steps[0].dur_ns, 37163000);
	assert_int_equal(in.events_open, 0);
	trace_info_free(&in);
}

static void
test_dialect_relative_object(void **state)
{
	struct trace_info in;

	(void)state;
	read_ok("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 5, \"dur\": 1}]}", &in);
	assert_int_equal(in.dialect, TRACE_DIALECT_RELATIVE);
	assert_false(in.absolute);
	assert_true(in.has_span);
	trace_info_free(&in);

	/* no events at all: nothing to tell the time from */
	read_ok("{\"traceEvents\": [{\"ph\": \"M\", \"ts\": 1}]}", &in);
	assert_false(in.has_span);
	assert_false(in.absolute);
	assert_int_equal(in.events, 0);
	trace_info_free(&in);
}

static void
test_same_timestamp(void **state)
{
	struct trace_info in;

	(void)state;
	read_ok("{\"traceEvents\": ["
	    "{\"ph\": \"i\", \"ts\": 1700000000000000},"
	    "{\"ph\": \"X\", \"ts\": 1700000000000000, \"dur\": 0},"
	    "{\"ph\": \"C\", \"ts\": 1700000000000000}]}", &in);
	assert_true(in.absolute);
	assert_int_equal(in.events, 3);
	assert_int_equal(in.start_ns, 1700000000000000000LL);
	assert_int_equal(in.end_ns, in.start_ns);
	trace_info_free(&in);
}

static void
test_devices_and_pids(void **state)
{
	struct trace_info in;

	(void)state;
	read_ok("{\"deviceProperties\": [{\"id\": 0, \"name\": \"AIU 0\", \"x\": [1]},"
	    " {\"name\": \"AIU 1\", \"id\": 1}, {\"id\": 2}],"
	    " \"traceEvents\": ["
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 1, \"ts\": 1700000000000000},"
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0, \"ts\": 1700000000000001},"
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 1, \"ts\": 1700000000000002},"
	    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"pid\": 4037, \"ts\": 1700000000000003},"
	    "{\"ph\": \"X\", \"cat\": \"kernels\", \"pid\": 9, \"ts\": 1700000000000003}]}",
	    &in);
	assert_int_equal(in.ndevices, 3);
	assert_true(in.devices[0].has_id);
	assert_int_equal(in.devices[0].id, 0);
	assert_string_equal(in.devices[0].name, "AIU 0");
	assert_int_equal(in.devices[1].id, 1);
	assert_string_equal(in.devices[1].name, "AIU 1");
	assert_null(in.devices[2].name);
	assert_int_equal(in.nkernel_pids, 2);
	assert_int_equal(in.kernel_pids[0], 0);
	assert_int_equal(in.kernel_pids[1], 1);
	assert_int_equal(in.npids, 4);
	assert_int_equal(in.max_pid, 4037);
	assert_false(in.has_rank);
	trace_info_free(&in);
}

static void
test_many_pids_bounded(void **state)
{
	size_t n = TRACE_MAX_PIDS + 10, cap = n * 48 + 64, len;
	struct trace_info in;
	char *json = malloc(cap);

	(void)state;
	assert_non_null(json);
	len = (size_t)snprintf(json, cap, "{\"traceEvents\": [");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(json + len, cap - len,
		    "%s{\"ph\": \"i\", \"ts\": 1, \"pid\": %zu}", i ? "," : "",
		    1000 + i);
	snprintf(json + len, cap - len, "]}");
	read_ok(json, &in);
	assert_int_equal(in.npids, TRACE_MAX_PIDS);
	assert_true(in.pids_truncated);
	assert_int_equal(in.max_pid, 1000 + n - 1);
	trace_info_free(&in);
	free(json);
}

/* --- steps ----------------------------------------------------------- */

static const char steps_trace[] =
    "{\"baseTimeNanoseconds\": 1000000, \"traceEvents\": ["
    "{\"ph\": \"X\", \"name\": \"ProfilerStep#12\", \"ts\": 1, \"dur\": 2},"
    "{\"ph\": \"X\", \"name\": \"ProfilerStep#\", \"ts\": 1, \"dur\": 2},"
    "{\"ph\": \"X\", \"name\": \"ProfilerStep#1x\", \"ts\": 1, \"dur\": 2},"
    "{\"ph\": \"X\", \"name\": \"xiteration_1\", \"ts\": 1, \"dur\": 2},"
    "{\"ph\": \"i\", \"name\": \"iteration_9\", \"ts\": 2},"
    "{\"name\": \"iteration_3\", \"dur\": 4.5, \"ts\": 3, \"ph\": \"X\"},"
    "{\"ph\": \"X\", \"name\": \"train_7\", \"ts\": 4, \"dur\": 1},"
    "{\"ph\": \"X\", \"name\": \"ProfilerStep#12\", \"ts\": 8, \"dur\": 1}]}";

static void
test_steps_default(void **state)
{
	struct trace_info in;

	(void)state;
	read_ok(steps_trace, &in);
	assert_int_equal(in.nsteps, 3);
	assert_string_equal(in.steps[0].name, "ProfilerStep#12");
	assert_string_equal(in.steps[1].name, "iteration_3");
	assert_int_equal(in.steps[1].ts_ns, 3000);
	assert_int_equal(in.steps[1].dur_ns, 4500);
	/* the same name again: from the cache, the same answer */
	assert_string_equal(in.steps[2].name, "ProfilerStep#12");
	assert_int_equal(in.steps[2].ts_ns, 8000);
	trace_info_free(&in);
}

static void
test_steps_pattern(void **state)
{
	struct trace_options opts = { .step_pattern = "train_[0-9]+|xiter.*" };
	struct trace_error err;
	struct trace_info in;

	(void)state;
	assert_int_equal(read_mem_opts(steps_trace, 0, &opts, &in, &err),
	    TRACE_OK);
	assert_int_equal(in.nsteps, 2);
	assert_string_equal(in.steps[0].name, "xiteration_1");
	assert_string_equal(in.steps[1].name, "train_7");
	trace_info_free(&in);

	/* whole names only */
	opts.step_pattern = "train";
	assert_int_equal(read_mem_opts(steps_trace, 0, &opts, &in, &err),
	    TRACE_OK);
	assert_int_equal(in.nsteps, 0);
	trace_info_free(&in);

	opts.step_pattern = "train_[0-9";
	assert_int_equal(read_mem_opts(steps_trace, 0, &opts, &in, &err),
	    TRACE_ERR_PATTERN);
	assert_non_null(strstr(err.msg, "train_[0-9"));
}

static void
test_steps_long_name(void **state)
{
	struct trace_options opts = { .step_pattern = "a+" };
	size_t cap = TRACE_NAME_MAX + 256;
	struct trace_error err;
	struct trace_info in;
	char *json = malloc(cap), *p;

	(void)state;
	assert_non_null(json);
	p = json + sprintf(json, "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"name\": \"");
	memset(p, 'a', TRACE_NAME_MAX);
	strcpy(p + TRACE_NAME_MAX, "\"}, {\"ph\": \"X\", \"ts\": 2, \"name\": \"aaa\"}]}");
	assert_int_equal(read_mem_opts(json, 0, &opts, &in, &err), TRACE_OK);
	assert_int_equal(in.nsteps, 1);
	assert_string_equal(in.steps[0].name, "aaa");
	trace_info_free(&in);
	free(json);
}

static void
test_steps_bounded(void **state)
{
	size_t n = TRACE_MAX_STEPS + 1, cap = n * 64 + 64, len;
	struct trace_error err;
	struct trace_info in;
	char *json = malloc(cap), msg[512];

	(void)state;
	assert_non_null(json);
	len = (size_t)snprintf(json, cap, "{\"traceEvents\": [");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(json + len, cap - len,
		    "%s{\"ph\": \"X\", \"ts\": %zu, \"name\": \"iteration_%zu\"}",
		    i ? "," : "", i + 1, i);
	snprintf(json + len, cap - len, "]}");
	assert_int_equal(read_mem(json, &in, &err), TRACE_ERR_LIMIT);
	trace_strerror(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, "more than 100000 step events"));
	assert_true(err.has_offset);

	/* one fewer is fine: cut ",{...}]}" to "]}" */
	strcpy(strrchr(json, '{') - 1, "]}");
	read_ok(json, &in);
	assert_int_equal(in.nsteps, TRACE_MAX_STEPS);
	trace_info_free(&in);
	free(json);
}

/* --- chunking and the merge's offsets ----------------------------------- */

struct seen {
	const char *json;
	size_t n;
	bool bad;
};

static void
check_event_bytes(const struct trace_event *ev, void *arg)
{
	struct seen *s = arg;

	s->n++;
	if (s->json[ev->offset] != '{' ||
	    s->json[ev->offset + ev->length - 1] != '}')
		s->bad = true;
}

static void
test_chunking_and_offsets(void **state)
{
	static const char json[] =
	    " {\"deviceProperties\": [{\"id\": 0, \"name\": \"d\\u00e9v\"}],"
	    " \"traceEvents\" : [ {\"ph\": \"X\", \"name\": \"iteration_1\","
	    " \"ts\": 1712195495406752.768, \"dur\": 12.5, \"args\": {\"k\": [1, {\"ts\": 0}]}},"
	    " {\"ph\": \"M\", \"pid\": 12, \"ts\": 0},"
	    " {\"ph\": \"i\", \"ts\": 1712195495406753}  ],"
	    " \"distributedInfo\": {\"rank\": 1, \"world_size\": 2}} ";
	struct trace_info whole, in;
	struct trace_error err;
	struct seen seen = { .json = json };
	struct trace_options opts = { .on_event = check_event_bytes, .arg = &seen };

	(void)state;
	assert_int_equal(read_mem_opts(json, 0, &opts, &whole, &err), TRACE_OK);
	assert_int_equal(seen.n, 3);
	assert_false(seen.bad);
	assert_int_equal(json[whole.events_open], '[');
	assert_int_equal(json[whole.events_close], ']');
	assert_int_equal(whole.nelements, 3);
	assert_int_equal(whole.bytes, strlen(json));
	assert_string_equal(whole.devices[0].name, "d\xc3\xa9v");
	assert_int_equal(whole.start_ns, 1712195495406752768LL);
	assert_int_equal(whole.end_ns, 1712195495406765268LL);
	for (size_t chunk = 1; chunk < 40; chunk++) {
		seen.n = 0;
		assert_int_equal(read_mem_opts(json, chunk, &opts, &in, &err),
		    TRACE_OK);
		assert_int_equal(seen.n, 3);
		assert_false(seen.bad);
		assert_int_equal(in.start_ns, whole.start_ns);
		assert_int_equal(in.end_ns, whole.end_ns);
		assert_int_equal(in.events_open, whole.events_open);
		assert_int_equal(in.events_close, whole.events_close);
		assert_int_equal(in.nsteps, 1);
		assert_int_equal(in.steps[0].dur_ns, 12500);
		assert_int_equal(in.rank, 1);
		trace_info_free(&in);
	}
	trace_info_free(&whole);
}

/* What on_event saw of each event: cat, tid and the args read. */
struct args_seen {
	size_t	 n;
	char	 cat[4][TRACE_CAT_MAX];
	bool	 has_tid[4], has_stream[4], has_device[4], has_flops[4];
	bool	 has_cycles[4], has_corr[4], ts_float[4];
	uint64_t track[4];
	int64_t	 tid[4], device[4], stream_id[4], corr[4];
	double	 flops[4];
};

static void
keep_args(const struct trace_event *ev, void *arg)
{
	struct args_seen *s = arg;

	if (s->n == 4)
		return;
	snprintf(s->cat[s->n], TRACE_CAT_MAX, "%s", ev->cat);
	s->has_tid[s->n] = ev->has_tid;
	s->tid[s->n] = ev->tid;
	s->has_stream[s->n] = ev->has_stream;
	s->has_device[s->n] = ev->has_device;
	s->device[s->n] = ev->device;
	s->has_flops[s->n] = ev->has_flops;
	s->flops[s->n] = ev->flops;
	s->has_cycles[s->n] = ev->has_cycles;
	s->track[s->n] = ev->track;
	s->stream_id[s->n] = ev->stream_id;
	s->has_corr[s->n] = ev->has_correlation;
	s->corr[s->n] = ev->correlation;
	s->ts_float[s->n] = ev->ts_float;
	s->n++;
}

/*
 * cat, tid and args' stream (also as HTA's number), correlation, device,
 * flops and cycle stamps (also in attr, as the Spyre runtime writes
 * them); nested members are not args'; whether ts was a float.
 */
static void
test_event_args(void **state)
{
	static const char json[] =
	    "{\"traceEvents\": ["
	    " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 2,"
	    "  \"tid\": 7, \"ts\": 1712195495406752, \"dur\": 3,"
	    "  \"args\": {\"device\": 2, \"stream\": 7, \"grid\": [1, 1],"
	    "  \"flops\": 2.5e9, \"correlation\": 42}},"
	    " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\","
	    "  \"tid\": \"main\", \"ts\": 1712195495406752.0, \"dur\": 3,"
	    "  \"args\": {\"x\": {\"stream\": 1, \"device\": 3, \"flops\": 9,"
	    "  \"correlation\": 5}, \"flops\": 12}},"
	    " {\"ph\": \"X\", \"cat\": \"mtia_ccp_events\", \"name\": \"w\","
	    "  \"ts\": 1712195495406752, \"args\": {\"stream\": \"108\","
	    "  \"device\": 1.5, \"flops\": \"many\"}},"
	    " {\"ph\": \"B\", \"name\": \"add_11 Cmpt Exec\", \"pid\": 0,"
	    "  \"tid\": 15514734831341844875, \"ts\": 1712195495406753,"
	    "  \"attr\": {\"Power\": \"3620872431\", \"TS1\": \"2552537956\","
	    "  \"stream\": \"0x0\"}}]}";
	struct args_seen seen = { 0 };
	struct trace_options opts = { .on_event = keep_args, .arg = &seen };
	struct trace_info in;
	struct trace_error err;

	(void)state;
	for (size_t chunk = 0; chunk < 30; chunk += 7) {
		memset(&seen, 0, sizeof(seen));
		assert_int_equal(read_mem_opts(json, chunk, &opts, &in, &err),
		    TRACE_OK);
		trace_info_free(&in);
		assert_int_equal(seen.n, 4);
		assert_string_equal(seen.cat[0], "kernel");
		assert_true(seen.has_tid[0] && seen.tid[0] == 7);
		assert_true(seen.has_stream[0]);
		assert_true(seen.has_device[0] && seen.device[0] == 2);
		assert_true(seen.has_flops[0] && seen.flops[0] == 2.5e9);
		assert_string_equal(seen.cat[1], "cpu_op");
		assert_false(seen.has_tid[1]);
		assert_false(seen.has_stream[1]);
		assert_false(seen.has_device[1]);
		assert_true(seen.has_flops[1] && seen.flops[1] == 12);
		assert_string_equal(seen.cat[2], "mtia_ccp_events");
		assert_true(seen.has_stream[2]);
		assert_false(seen.has_device[2]);
		assert_false(seen.has_flops[2]);
		assert_false(seen.has_cycles[0] || seen.has_cycles[2]);
		/* a tid past int64: no tid, but a track; the stamps in attr */
		assert_false(seen.has_tid[3]);
		assert_true(seen.has_cycles[3]);
		assert_true(seen.track[3] != 0 && seen.track[3] != seen.track[0]);
		assert_true(seen.track[0] != 0 && seen.track[2] == 0);
		/* stream as a number: 7, none, "108", "0x0" */
		assert_true(seen.stream_id[0] == 7 && seen.stream_id[1] == -1);
		assert_true(seen.stream_id[2] == 108 && seen.stream_id[3] == -1);
		assert_true(seen.has_corr[0] && seen.corr[0] == 42);
		assert_false(seen.has_corr[1] || seen.has_corr[2]);
		assert_true(seen.ts_float[1]);
		assert_false(seen.ts_float[0] || seen.ts_float[2]);
	}
}

/* --- errors ---------------------------------------------------------- */

/*
 * Read json whole and in small chunks: the same error, at the same offset,
 * just past the token at fault.
 */
static void
assert_error(const char *json, int want_rc, bool want_offset, uint64_t offset,
    const char *want_text)
{
	struct trace_error err;
	struct trace_info in;
	char msg[512];

	for (size_t chunk = 0; chunk < 8; chunk++) {
		int rc = read_mem_opts(json, chunk, NULL, &in, &err);

		trace_strerror(&err, msg, sizeof(msg));
		if (rc != want_rc)
			fail_msg("%s: rc %d, want %d (%s)", json, rc, want_rc, msg);
		if (err.has_offset != want_offset ||
		    (want_offset && err.offset != offset))
			fail_msg("%s, chunks of %zu: %s, want offset %llu", json,
			    chunk, msg, (unsigned long long)offset);
		if (strstr(msg, want_text) == NULL)
			fail_msg("%s: \"%s\" lacks \"%s\"", json, msg, want_text);
		trace_info_free(&in);
	}
}

static void
test_truncated(void **state)
{
	static const char json[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1";

	(void)state;
	assert_error(json, TRACE_ERR_SYNTAX, true, strlen(json), "premature EOF");
	assert_error(json, TRACE_ERR_SYNTAX, true, strlen(json),
	    "(at byte 36)");
	assert_error("[", TRACE_ERR_SYNTAX, true, 1, "premature EOF");
}

static void
test_corrupt(void **state)
{
	(void)state;
	/* the second comma is byte 28; errors of ours are past the token */
	assert_error("{\"traceEvents\": [{\"ph\": \"X\",, \"ts\": 1}]}",
	    TRACE_ERR_SYNTAX, true, 29, "parse error");
	/* the 'j' is byte 30 */
	assert_error("{\"traceEvents\": [{\"ph\": \"X\"}] junk",
	    TRACE_ERR_SYNTAX, true, 31, "invalid char");
	/* the second '{' is byte 31 */
	assert_error("{\"traceEvents\": [{\"ph\": \"X\"}]} {}",
	    TRACE_ERR_SYNTAX, true, 32, "trailing garbage");
	/* the 'a' is byte 36 */
	assert_error("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1ab}]}",
	    TRACE_ERR_SYNTAX, true, 37, "invalid char");
}

static void
test_not_a_trace(void **state)
{
	(void)state;
	assert_error("", TRACE_ERR_EMPTY, false, 0, "empty");
	assert_error(" \n\t ", TRACE_ERR_EMPTY, false, 0, "white space");
	assert_error("42", TRACE_ERR_FORMAT, true, 2, "top-level value is a number");
	assert_error("\"x\"", TRACE_ERR_FORMAT, true, 3, "a string");
	assert_error("{\"schemaVersion\": 1}", TRACE_ERR_FORMAT, false, 0,
	    "no traceEvents");
	assert_error("{\"traceEvents\": {}}", TRACE_ERR_FORMAT, true, 17,
	    "not an array");
	assert_error("{\"traceEvents\": [{}, 7]}", TRACE_ERR_FORMAT, true, 22,
	    "event 2 is a number");
	assert_error("[{}, [1]]", TRACE_ERR_FORMAT, true, 6, "an array");
	assert_error("[{}, null]", TRACE_ERR_FORMAT, true, 9, "null");
	assert_error("{\"traceEvents\": [], \"traceEvents\": []}", TRACE_ERR_FORMAT,
	    true, 36, "twice");
	assert_error("{\"traceEvents\": [{\"ts\": 1e300}]}", TRACE_ERR_LIMIT, true,
	    29, "ts 1e300 is out of range");
	assert_error("{\"traceEvents\": [{\"ts\": 9223372036854775, \"dur\": 1,"
	    " \"ph\": \"X\"}]}", TRACE_ERR_LIMIT, true, 62, "ts + dur");
}

/* --- files ----------------------------------------------------------- */

static char *
temp_path(void)
{
	char *path;
	int fd;

	if (asprintf(&path, "%s/test_trace.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") == -1)
		fail_msg("asprintf");
	if ((fd = mkstemp(path)) == -1)
		fail_msg("mkstemp %s", path);
	close(fd);
	return path;
}

static void
write_gz(const char *path, const char *data, size_t len)
{
	gzFile gz = gzopen(path, "wb");

	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, data, (unsigned)len), (int)len);
	assert_int_equal(gzclose(gz), Z_OK);
}

static void
write_plain(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static void *
slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = malloc(1 << 20);

	assert_non_null(fp);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, fp);
	fclose(fp);
	return buf;
}

/* A trace big enough to span many chunks of the reader and of zlib. */
static char *
big_trace(size_t events, size_t *len)
{
	size_t cap = events * 120 + 256, n;
	char *json = malloc(cap);

	assert_non_null(json);
	n = (size_t)snprintf(json, cap, "{\"traceEvents\": [");
	for (size_t i = 0; i < events; i++)
		n += (size_t)snprintf(json + n, cap - n,
		    "%s{\"ph\": \"X\", \"name\": \"op%zu\", \"ts\": %zu.250,"
		    " \"dur\": 3, \"pid\": 1, \"args\": {}}", i ? ", " : "",
		    i % 50, 1700000000000000 + i);
	n += (size_t)snprintf(json + n, cap - n, "]}");
	*len = n;
	return json;
}

static void
test_gzip_file(void **state)
{
	size_t len, glen;
	char *json = big_trace(20000, &len), *path = temp_path(), msg[512];
	struct trace_info in;
	struct trace_error err;
	unsigned char *gz;

	(void)state;
	/* a .json name on gzip content: the magic bytes decide */
	write_gz(path, json, len);
	assert_int_equal(trace_read(path, NULL, &in, &err), TRACE_OK);
	assert_true(in.compressed);
	assert_int_equal(in.bytes, len);
	assert_int_equal(in.events, 20000);
	assert_int_equal(in.start_ns, 1700000000000000250LL);
	/* the last event: (1700000000000000 + 19999).250 µs + 3 µs */
	assert_int_equal(in.end_ns, 1700000000020002250LL);
	trace_info_free(&in);

	/* cut the compressed file in half: an error in uncompressed terms */
	gz = slurp(path, &glen);
	write_plain(path, gz, glen / 2);
	assert_int_not_equal(trace_read(path, NULL, &in, &err), TRACE_OK);
	trace_strerror(&err, msg, sizeof(msg));
	assert_true(err.compressed);
	assert_true(err.has_offset);
	assert_true(err.offset > 0 && err.offset < len);
	assert_non_null(strstr(msg, "of the uncompressed stream"));
	trace_info_free(&in);

	/* cut in the trailer: all the JSON is there, but the file is cut */
	write_plain(path, gz, glen - 3);
	assert_int_equal(trace_read(path, NULL, &in, &err), TRACE_ERR_IO);
	trace_strerror(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, "cut short"));
	assert_int_equal(err.offset, len);
	trace_info_free(&in);

	/* corrupt the deflate data */
	memset(gz + glen / 3, 0xff, 64);
	write_plain(path, gz, glen);
	assert_int_not_equal(trace_read(path, NULL, &in, &err), TRACE_OK);
	trace_strerror(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, "of the uncompressed stream"));
	trace_info_free(&in);

	/* the same trace plain */
	write_plain(path, json, len);
	assert_int_equal(trace_read(path, NULL, &in, &err), TRACE_OK);
	assert_false(in.compressed);
	assert_int_equal(in.events, 20000);
	trace_info_free(&in);

	/* plain and cut: the offset is the file's length */
	write_plain(path, json, len / 2);
	assert_int_equal(trace_read(path, NULL, &in, &err), TRACE_ERR_SYNTAX);
	assert_int_equal(err.offset, len / 2);
	assert_false(err.compressed);
	trace_info_free(&in);

	unlink(path);
	free(path);
	free(json);
	free(gz);
}

static void
test_empty_and_missing_files(void **state)
{
	char *path = temp_path();
	struct trace_error err;
	struct trace_info in;

	(void)state;
	assert_int_equal(trace_read(path, NULL, &in, &err), TRACE_ERR_EMPTY);
	assert_non_null(strstr(err.msg, "empty"));
	write_gz(path, "", 0);
	assert_int_equal(trace_read(path, NULL, &in, &err), TRACE_ERR_EMPTY);
	unlink(path);
	assert_int_equal(trace_read(path, NULL, &in, &err), TRACE_ERR_IO);
	assert_non_null(strstr(err.msg, "No such file"));
	assert_int_equal(trace_read("/", NULL, &in, &err), TRACE_ERR_IO);
	free(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decimal_fractions),
		cmocka_unit_test(test_decimal_integers),
		cmocka_unit_test(test_decimal_exponents),
		cmocka_unit_test(test_decimal_negative),
		cmocka_unit_test(test_decimal_syntax),
		cmocka_unit_test(test_dialect_base),
		cmocka_unit_test(test_header_after_events),
		cmocka_unit_test(test_zero_ts_skipped_under_base),
		cmocka_unit_test(test_dialect_absolute_int),
		cmocka_unit_test(test_dialect_absolute_float_ns_unit),
		cmocka_unit_test(test_metadata_and_ends),
		cmocka_unit_test(test_dialect_legacy),
		cmocka_unit_test(test_dialect_relative_object),
		cmocka_unit_test(test_same_timestamp),
		cmocka_unit_test(test_devices_and_pids),
		cmocka_unit_test(test_many_pids_bounded),
		cmocka_unit_test(test_steps_default),
		cmocka_unit_test(test_steps_pattern),
		cmocka_unit_test(test_steps_long_name),
		cmocka_unit_test(test_steps_bounded),
		cmocka_unit_test(test_chunking_and_offsets),
		cmocka_unit_test(test_event_args),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_not_a_trace),
		cmocka_unit_test(test_gzip_file),
		cmocka_unit_test(test_empty_and_missing_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
