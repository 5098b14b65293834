/*
 * Tests of the liveness check (daemonid.h): the start time read from a
 * stat line whose command name holds spaces and parentheses; the caller
 * itself is alive; the same pid with another start time (a reused pid), a
 * child that has exited and been reaped, and another boot ID are gone;
 * another host and another PID namespace cannot be checked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemonid.h"

static void
test_parse_stat(void **state)
{
	int64_t t = -5;

	(void)state;
	/* field 22 is 98765; the name hides ") 1 2 3" */
	assert_int_equal(daemonid_parse_stat("4242 (odd) 1 2 3 (x) S 1 4242 "
	    "4242 0 -1 4194560 100 0 0 0 3 1 0 0 20 0 1 0 98765 1234 56\n",
	    &t), 0);
	assert_int_equal(t, 98765);
	/* the last field */
	assert_int_equal(daemonid_parse_stat("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 "
	    "0 0 0 20 0 1 0 77", &t), 0);
	assert_int_equal(t, 77);
	assert_int_equal(daemonid_parse_stat("1 (a) S 1 1", &t), -1);
	assert_int_equal(daemonid_parse_stat("no parenthesis", &t), -1);
	assert_int_equal(daemonid_parse_stat("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 "
	    "0 0 0 20 0 1 0 x7 1", &t), -1);
}

static void
test_self_alive(void **state)
{
	struct daemonid me;
	char why[256];

	(void)state;
	daemonid_self(&me);
	assert_int_equal(me.pid, (int32_t)getpid());
	assert_true(me.start_ticks > 0);
	assert_int_equal(strlen(me.boot_id), 36);
	assert_int_equal(daemonid_check(&me, &me, why, sizeof(why)),
	    DAEMONID_ALIVE);
}

static void
test_reused_pid(void **state)
{
	struct daemonid me, rec;
	char why[256];

	(void)state;
	daemonid_self(&me);
	rec = me;
	rec.start_ticks = me.start_ticks - 1;
	assert_int_equal(daemonid_check(&rec, &me, why, sizeof(why)),
	    DAEMONID_GONE);
	assert_non_null(strstr(why, "another process"));
}

static void
test_exited(void **state)
{
	struct daemonid me, rec;
	char why[256];
	pid_t pid;

	(void)state;
	daemonid_self(&me);
	if ((pid = fork()) == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	rec = me;
	rec.pid = (int32_t)pid;
	assert_int_equal(daemonid_check(&rec, &me, why, sizeof(why)),
	    DAEMONID_GONE);
	assert_non_null(strstr(why, "no process"));
}

static void
test_rebooted(void **state)
{
	struct daemonid me, rec;
	char why[256];

	(void)state;
	daemonid_self(&me);
	rec = me;
	/* alive by pid and start time, but from another boot */
	memcpy(rec.boot_id, "00000000-0000-4000-8000-000000000000", 37);
	assert_int_equal(daemonid_check(&rec, &me, why, sizeof(why)),
	    DAEMONID_GONE);
	assert_non_null(strstr(why, "booted"));
}

static void
test_elsewhere(void **state)
{
	struct daemonid me, rec;
	char why[256];

	(void)state;
	daemonid_self(&me);
	rec = me;
	snprintf(rec.hostname, sizeof(rec.hostname), "otherhost");
	snprintf(rec.machine_id, sizeof(rec.machine_id), "0123abcd");
	if (me.machine_id[0] == '\0')
		rec.machine_id[0] = '\0';	/* names decide then */
	assert_int_equal(daemonid_check(&rec, &me, why, sizeof(why)),
	    DAEMONID_UNKNOWN);
	assert_non_null(strstr(why, "otherhost"));
	rec = me;
	rec.pidns = me.pidns + 1;
	assert_int_equal(daemonid_check(&rec, &me, why, sizeof(why)),
	    DAEMONID_UNKNOWN);
	assert_non_null(strstr(why, "namespace"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_self_alive),
		cmocka_unit_test(test_reused_pid),
		cmocka_unit_test(test_exited),
		cmocka_unit_test(test_rebooted),
		cmocka_unit_test(test_elsewhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
