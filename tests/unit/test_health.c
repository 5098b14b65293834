/* Tests of health: the metric file state machine and its descriptions. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "health.h"

#define SEC		1000000000ULL
#define STALE_AFTER	(30 * SEC)
#define PATH		"/tmp/metrics.0000:13:00.0"
#define ZERO_PHRASE	"counters are all zero: was the workload started " \
			"with SENLIB_DEVEL_CONFIG_FILE?"

static bool
observe(struct health *h, bool exists, int64_t mtime, uint64_t now)
{
	return health_observe(h, exists, mtime, now, STALE_AFTER);
}

static void
assert_describes(const struct health *h, const char *want)
{
	char buf[1024];

	health_describe(h, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void
test_init(void **state)
{
	struct health h;
	char longpath[700];

	(void)state;
	memset(&h, 0x5a, sizeof(h));
	health_init(&h, PATH);
	assert_string_equal(h.path, PATH);
	assert_int_equal(h.file, HEALTH_FILE_UNKNOWN);
	assert_int_equal(h.rows, 0);
	assert_int_equal(h.zero_rows, 0);
	assert_false(health_counters_zero(&h));
	assert_describes(&h, "metric file " PATH " not checked yet");

	memset(longpath, 'p', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	health_init(&h, longpath);
	assert_int_equal(strlen(h.path), sizeof(h.path) - 1);
	assert_memory_equal(h.path, longpath, sizeof(h.path) - 1);
}

static void
test_missing(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	assert_true(observe(&h, false, 0, 5 * SEC));
	assert_int_equal(h.file, HEALTH_FILE_MISSING);
	assert_false(observe(&h, false, 0, 6 * SEC));
	assert_int_equal(h.file, HEALTH_FILE_MISSING);
	/* however long it stays missing, it does not become stale */
	assert_false(observe(&h, false, 0, 1000 * SEC));
	assert_int_equal(h.file, HEALTH_FILE_MISSING);
	assert_describes(&h, "metric file " PATH " missing: is the workload "
	    "running with SENLIB_DEVEL_CONFIG_FILE set?");
}

static void
test_first_seen_is_fresh(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	/* an old mtime does not matter: first sight counts as a change now */
	assert_true(observe(&h, true, 12345, 7 * SEC));
	assert_int_equal(h.file, HEALTH_FILE_FRESH);
	assert_int_equal(h.mtime_ns, 12345);
	assert_int_equal(h.changed_mono_ns, 7 * SEC);
	assert_describes(&h, "metric file " PATH " fresh");
}

static void
test_fresh_to_stale(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	assert_true(observe(&h, true, 100, 10 * SEC));
	assert_false(observe(&h, true, 100, 10 * SEC + STALE_AFTER - 1));
	assert_int_equal(h.file, HEALTH_FILE_FRESH);
	assert_true(observe(&h, true, 100, 10 * SEC + STALE_AFTER));
	assert_int_equal(h.file, HEALTH_FILE_STALE);
	assert_describes(&h, "metric file " PATH " not updated for 30s: the "
	    "workload may have stopped");
	assert_false(observe(&h, true, 100, 100 * SEC));
	assert_int_equal(h.file, HEALTH_FILE_STALE);
	assert_int_equal(h.changed_mono_ns, 10 * SEC);
	/* the age grows with each check */
	assert_describes(&h, "metric file " PATH " not updated for 90s: the "
	    "workload may have stopped");
}

static void
test_stale_to_fresh(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	observe(&h, true, 100, 0);
	assert_true(observe(&h, true, 100, STALE_AFTER));
	assert_int_equal(h.file, HEALTH_FILE_STALE);
	/* any change of mtime counts, even backwards */
	assert_true(observe(&h, true, 50, STALE_AFTER + SEC));
	assert_int_equal(h.file, HEALTH_FILE_FRESH);
	assert_int_equal(h.mtime_ns, 50);
	assert_int_equal(h.changed_mono_ns, STALE_AFTER + SEC);
}

/* Each mtime move restarts the clock, without a change of state. */
static void
test_fresh_stays_fresh(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	observe(&h, true, 100, 0);
	assert_false(observe(&h, true, 200, 20 * SEC));
	assert_int_equal(h.changed_mono_ns, 20 * SEC);
	assert_false(observe(&h, true, 200, 20 * SEC + STALE_AFTER - 1));
	assert_int_equal(h.file, HEALTH_FILE_FRESH);
	assert_false(observe(&h, true, 300, 45 * SEC));
	assert_false(observe(&h, true, 300, 45 * SEC + STALE_AFTER - 1));
	assert_int_equal(h.file, HEALTH_FILE_FRESH);
	assert_true(observe(&h, true, 300, 45 * SEC + STALE_AFTER));
	assert_int_equal(h.file, HEALTH_FILE_STALE);
}

static void
test_deleted_and_recreated(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	observe(&h, true, 100, 0);
	assert_true(observe(&h, false, 0, SEC));
	assert_int_equal(h.file, HEALTH_FILE_MISSING);
	/* back again, even with the old mtime: it was written anew */
	assert_true(observe(&h, true, 100, 2 * SEC));
	assert_int_equal(h.file, HEALTH_FILE_FRESH);
	assert_int_equal(h.changed_mono_ns, 2 * SEC);
	/* a stale file that disappears is missing */
	observe(&h, true, 100, 2 * SEC + STALE_AFTER);
	assert_int_equal(h.file, HEALTH_FILE_STALE);
	assert_true(observe(&h, false, 0, 3 * SEC + STALE_AFTER));
	assert_int_equal(h.file, HEALTH_FILE_MISSING);
}

static void
test_zero_rows(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	for (int i = 0; i < HEALTH_ZERO_ROWS - 1; i++) {
		health_note_row(&h, true);
		assert_false(health_counters_zero(&h));
	}
	health_note_row(&h, true);
	assert_true(health_counters_zero(&h));
	assert_int_equal(h.zero_rows, HEALTH_ZERO_ROWS);
	health_note_row(&h, true);
	assert_true(health_counters_zero(&h));
	/* one row with a non-zero counter resets the run */
	health_note_row(&h, false);
	assert_false(health_counters_zero(&h));
	assert_int_equal(h.zero_rows, 0);
	for (int i = 0; i < HEALTH_ZERO_ROWS - 1; i++)
		health_note_row(&h, true);
	assert_false(health_counters_zero(&h));
	assert_int_equal(h.rows, HEALTH_ZERO_ROWS + 2 + HEALTH_ZERO_ROWS - 1);
}

static void
make_zero(struct health *h)
{
	for (int i = 0; i < HEALTH_ZERO_ROWS; i++)
		health_note_row(h, true);
}

static void
test_describe_zero(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	observe(&h, true, 100, 0);
	assert_describes(&h, "metric file " PATH " fresh");
	make_zero(&h);
	assert_describes(&h, "metric file " PATH " fresh; " ZERO_PHRASE);
	observe(&h, true, 100, STALE_AFTER + 4 * SEC);
	assert_describes(&h, "metric file " PATH " not updated for 34s: the "
	    "workload may have stopped; " ZERO_PHRASE);
	observe(&h, false, 0, STALE_AFTER + 5 * SEC);
	assert_describes(&h, "metric file " PATH " missing: is the workload "
	    "running with SENLIB_DEVEL_CONFIG_FILE set?; " ZERO_PHRASE);
	health_note_row(&h, false);
	assert_describes(&h, "metric file " PATH " missing: is the workload "
	    "running with SENLIB_DEVEL_CONFIG_FILE set?");
}

/* A FIFO or a device at the path: named as such, and a file again after. */
static void
test_not_a_file(void **state)
{
	struct health h;

	(void)state;
	health_init(&h, PATH);
	assert_true(observe(&h, true, 100, 1 * SEC));
	assert_true(health_observe_not_file(&h, S_IFIFO | 0644, 2 * SEC));
	assert_int_equal(h.file, HEALTH_FILE_NOT_FILE);
	assert_describes(&h, "metric file " PATH " is a FIFO, not a regular "
	    "file: no reader can use it (who put it there?)");
	assert_false(health_observe_not_file(&h, S_IFIFO, 3 * SEC));
	assert_true(health_observe_not_file(&h, S_IFCHR, 4 * SEC));
	assert_describes(&h, "metric file " PATH " is a character device, not "
	    "a regular file: no reader can use it (who put it there?)");
	/* a file put back: fresh, as one that appears */
	assert_true(observe(&h, true, 100, 5 * SEC));
	assert_int_equal(h.file, HEALTH_FILE_FRESH);
}

static void
test_describe_short_buffer(void **state)
{
	struct health h;
	char buf[512];

	(void)state;
	health_init(&h, PATH);
	make_zero(&h);
	memset(buf, 'x', sizeof(buf));
	health_describe(&h, buf, 10);
	assert_string_equal(buf, "metric fi");
	/* nothing is written past len, whatever part did not fit */
	for (size_t i = 10; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'x');
	health_describe(&h, buf, 1);
	assert_string_equal(buf, "");
	buf[0] = 'x';
	health_describe(&h, buf, 0);
	assert_int_equal(buf[0], 'x');
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_first_seen_is_fresh),
		cmocka_unit_test(test_fresh_to_stale),
		cmocka_unit_test(test_stale_to_fresh),
		cmocka_unit_test(test_fresh_stays_fresh),
		cmocka_unit_test(test_deleted_and_recreated),
		cmocka_unit_test(test_zero_rows),
		cmocka_unit_test(test_describe_zero),
		cmocka_unit_test(test_describe_short_buffer),
		cmocka_unit_test(test_not_a_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
