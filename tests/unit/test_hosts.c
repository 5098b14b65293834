/*
 * Tests of which database each trace goes with (client/hosts.h): parsing
 * --host-map, the names rows carry, matching by --host-map (host name,
 * --db path, trace file name), by one database, by the trace's own host
 * (exactly or by its first label), and the errors: each names the traces
 * and the databases involved, and says how to map them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hosts.h"

/* The text a matching wrote to its error stream. */
struct errbuf {
	char	*text;
	size_t	 len;
	FILE	*fp;
};

static void
err_open(struct errbuf *e)
{
	memset(e, 0, sizeof(*e));
	e->fp = open_memstream(&e->text, &e->len);
	assert_non_null(e->fp);
}

static void
err_close(struct errbuf *e)
{
	fclose(e->fp);
	e->fp = NULL;
}

static void
err_has(const struct errbuf *e, const char *want)
{
	if (strstr(e->text, want) == NULL)
		fail_msg("the error does not say \"%s\":\n%s", want, e->text);
}

static const struct hosts_db two[] = {
	{ .path = "/data/a.db", .hostname = "node-a.rack1" },
	{ .path = "/data/b.db", .hostname = "node-b.rack1" },
};

static void
test_map_parse(void **state)
{
	struct hosts_map m;

	(void)state;
	assert_int_equal(hosts_map_parse("r0.json=node-a", &m), 0);
	assert_int_equal(m.trace_len, 7);
	assert_memory_equal(m.trace, "r0.json", 7);
	assert_string_equal(m.host, "node-a");
	/* split at the last '=': a host name has none, a file name may */
	assert_int_equal(hosts_map_parse("a=b.json=node-b", &m), 0);
	assert_int_equal(m.trace_len, 8);
	assert_memory_equal(m.trace, "a=b.json", 8);
	assert_string_equal(m.host, "node-b");
	assert_int_equal(hosts_map_parse("r0.json", &m), -1);
	assert_int_equal(hosts_map_parse("=node-a", &m), -1);
	assert_int_equal(hosts_map_parse("r0.json=", &m), -1);
}

static void
test_names(void **state)
{
	const struct hosts_db same[] = {
		{ .path = "a.db", .hostname = "localhost" },
		{ .path = "b.db", .hostname = "localhost" },
		{ .path = "c.db", .hostname = "node-c" },
		{ .path = "old.db", .hostname = NULL },
	};
	struct errbuf e;

	(void)state;
	assert_string_equal(hosts_name(two, 2, 0), "node-a.rack1");
	assert_string_equal(hosts_name(two, 2, 1), "node-b.rack1");
	assert_string_equal(hosts_name(same, 4, 0), "a.db");
	assert_string_equal(hosts_name(same, 4, 1), "b.db");
	assert_string_equal(hosts_name(same, 4, 2), "node-c");
	assert_string_equal(hosts_name(same, 4, 3), "old.db");
	err_open(&e);
	hosts_note_names(same, 4, e.fp);
	err_close(&e);
	err_has(&e, "a.db records host localhost, as another --db does");
	err_has(&e, "old.db records no host");
	assert_null(strstr(e.text, "c.db"));
	free(e.text);
}

/* One database takes every trace, whatever host it records. */
static void
test_one_db(void **state)
{
	const struct hosts_trace tr[] = {
		{ .path = "x.json", .host = "elsewhere" },
		{ .path = "y.json", .host = "" },
	};
	size_t out[2] = { 9, 9 };
	struct errbuf e;

	(void)state;
	err_open(&e);
	assert_int_equal(hosts_match(tr, 2, two, 1, NULL, 0, out, e.fp), 0);
	err_close(&e);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 0);
	assert_int_equal(e.len, 0);
	free(e.text);
}

static void
test_by_own_host(void **state)
{
	const struct hosts_trace tr[] = {
		{ .path = "r1.json", .host = "node-b.rack1" },	/* exact */
		{ .path = "r0.json", .host = "node-a" },	/* first label */
		{ .path = "r2.json", .host = "node-a.other" },	/* first label */
	};
	size_t out[3];
	struct errbuf e;

	(void)state;
	err_open(&e);
	assert_int_equal(hosts_match(tr, 3, two, 2, NULL, 0, out, e.fp), 0);
	err_close(&e);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[2], 0);
	free(e.text);
}

/* Traces without a host, or with one no or several databases fit. */
static void
test_unresolved(void **state)
{
	const struct hosts_db dbs[] = {
		{ .path = "a.db", .hostname = "node1.x" },
		{ .path = "b.db", .hostname = "node1.y" },
		{ .path = "c.db", .hostname = NULL },
	};
	const struct hosts_trace tr[] = {
		{ .path = "r0.json", .host = "", .has_rank = true, .rank = 0 },
		{ .path = "r1.json", .host = "node1" },
		{ .path = "r2.json", .host = "node9" },
		{ .path = "r3.json", .host = "node1.x" },
	};
	size_t out[4];
	struct errbuf e;

	(void)state;
	err_open(&e);
	assert_int_equal(hosts_match(tr, 4, dbs, 3, NULL, 0, out, e.fp), -1);
	err_close(&e);
	err_has(&e, "r0.json (rank 0): records no host");
	err_has(&e, "r1.json: records host node1, which fits a.db and b.db");
	err_has(&e, "r2.json: records host node9, which no database records");
	assert_null(strstr(e.text, "r3.json"));	/* an exact match */
	err_has(&e, "a.db (host node1.x), b.db (host node1.y), c.db (no host "
	    "recorded)");
	err_has(&e, "--host-map TRACE=HOST");
	free(e.text);
}

static void
test_map(void **state)
{
	const struct hosts_trace tr[] = {
		{ .path = "/runs/r0.json", .host = "node-b.rack1" },
		{ .path = "/runs/r1.json", .host = "" },
		{ .path = "r2.json", .host = "" },
	};
	struct hosts_map m[3];
	size_t out[3];
	struct errbuf e;

	(void)state;
	/* by host name, over the trace's own host; by file name; by path */
	assert_int_equal(hosts_map_parse("/runs/r0.json=node-a.rack1", &m[0]),
	    0);
	assert_int_equal(hosts_map_parse("r1.json=node-b.rack1", &m[1]), 0);
	assert_int_equal(hosts_map_parse("r2.json=/data/a.db", &m[2]), 0);
	err_open(&e);
	assert_int_equal(hosts_match(tr, 3, two, 2, m, 3, out, e.fp), 0);
	err_close(&e);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 0);
	free(e.text);
}

static void
test_map_errors(void **state)
{
	const struct hosts_db same[] = {
		{ .path = "a.db", .hostname = "localhost" },
		{ .path = "b.db", .hostname = "localhost" },
	};
	const struct hosts_trace tr[] = {
		{ .path = "x/r0.json", .host = "" },
		{ .path = "y/r0.json", .host = "" },
		{ .path = "r1.json", .host = "" },
	};
	struct hosts_map m[5];
	size_t out[3];
	struct errbuf e;

	(void)state;
	assert_int_equal(hosts_map_parse("r9.json=node-a.rack1", &m[0]), 0);
	assert_int_equal(hosts_map_parse("r0.json=node-a.rack1", &m[1]), 0);
	assert_int_equal(hosts_map_parse("r1.json=nowhere", &m[2]), 0);
	assert_int_equal(hosts_map_parse("x/r0.json=node-a.rack1", &m[3]), 0);
	assert_int_equal(hosts_map_parse("x/r0.json=node-b.rack1", &m[4]), 0);
	err_open(&e);
	assert_int_equal(hosts_match(tr, 3, two, 2, m, 5, out, e.fp), -1);
	err_close(&e);
	err_has(&e, "--host-map r9.json=node-a.rack1: no --trace names that "
	    "file");
	err_has(&e, "--host-map r0.json=node-a.rack1: several --trace files "
	    "have that name");
	err_has(&e, "--host-map r1.json=nowhere: no database records host "
	    "nowhere; the databases: /data/a.db (host node-a.rack1), "
	    "/data/b.db (host node-b.rack1)");
	err_has(&e, "--host-map: x/r0.json is mapped twice");
	/* y/r0.json, not mapped, has no host */
	err_has(&e, "y/r0.json: records no host");
	free(e.text);

	/* a host two databases record: name one by its path */
	assert_int_equal(hosts_map_parse("r1.json=localhost", &m[0]), 0);
	assert_int_equal(hosts_map_parse("x/r0.json=b.db", &m[1]), 0);
	assert_int_equal(hosts_map_parse("y/r0.json=a.db", &m[2]), 0);
	err_open(&e);
	assert_int_equal(hosts_match(tr, 3, same, 2, m, 3, out, e.fp), -1);
	err_close(&e);
	err_has(&e, "--host-map r1.json=localhost: a.db and b.db both record "
	    "host localhost: name one by its --db path");
	free(e.text);
	assert_int_equal(hosts_map_parse("r1.json=a.db", &m[0]), 0);
	err_open(&e);
	assert_int_equal(hosts_match(tr, 3, same, 2, m, 3, out, e.fp), 0);
	err_close(&e);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[2], 0);
	free(e.text);

	/* one database: a map to another host is still an error */
	assert_int_equal(hosts_map_parse("r1.json=node-b.rack1", &m[0]), 0);
	err_open(&e);
	assert_int_equal(hosts_match(tr, 3, two, 1, m, 1, out, e.fp), -1);
	err_close(&e);
	err_has(&e, "no database records host node-b.rack1");
	free(e.text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_parse),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_one_db),
		cmocka_unit_test(test_by_own_host),
		cmocka_unit_test(test_unresolved),
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_map_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
