/*
 * Tests of clockstep: what counts as a step of the host clock (beyond
 * slew by more than CLOCKSTEP_MIN_NS, either way), and that a check
 * without a step reports none and counts none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "clockstep.h"

#define MS	1000000LL
#define SEC	(1000 * MS)

static void
test_moved(void **state)
{
	const int64_t off = 1750000000LL * SEC;

	(void)state;
	/* unchanged, or within the threshold */
	assert_false(clockstep_moved(off, 0, off, 100 * MS));
	assert_false(clockstep_moved(off, 0, off + 400 * MS, 100 * MS));
	assert_false(clockstep_moved(off, 0, off - 400 * MS, 100 * MS));
	/* steps, both ways */
	assert_true(clockstep_moved(off, 0, off + 600 * MS, 100 * MS));
	assert_true(clockstep_moved(off, 0, off - 2 * SEC, 100 * MS));
	assert_true(clockstep_moved(off, 0, off - 3600 * SEC, 100 * MS));
	/* a slew at 500 ppm for 1000 s moves 500 ms more: not a step */
	assert_false(clockstep_moved(off, 0, off + 900 * MS, 1000 * SEC));
	assert_true(clockstep_moved(off, 0, off + 1100 * MS, 1000 * SEC));
	/* a monotonic clock read before the earlier one allows no slew */
	assert_true(clockstep_moved(off, 10 * SEC, off + 600 * MS, 0));
}

static void
test_check_without_step(void **state)
{
	struct clockstep_stats st;

	(void)state;
	assert_int_equal(clockstep_start(NULL, NULL, NULL), 0);
	assert_false(clockstep_check());
	assert_false(clockstep_check());
	clockstep_get_stats(&st);
	assert_int_equal(st.steps, 0);
	assert_int_equal(st.net_ns, 0);
	assert_false(st.kernel);
	clockstep_stop();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moved),
		cmocka_unit_test(test_check_without_step),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
