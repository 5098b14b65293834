/*
 * Tests of what the writer thread and the SQL plumbing say when writes
 * fail (writer_status.c, sql.c): status names the real cause of a failed
 * window change (the disk is full), not the code SQLite is left with
 * after the rollback; the same failure logged again and again is logged
 * a few times a minute, then once with the count of those not logged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "log.h"
#include "sql.h"
#include "store.h"
#include "store_priv.h"
#include "tmpdb.h"

struct fx {
	struct tmpdb db;
	struct store *st;
	int pwr;
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->db, "test_writer"), 0);
	assert_int_equal(store_open(f->db.path, 1000, &f->st), 0);
	assert_int_equal(store_metric(f->st, "pwr", "W", &f->pwr), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	store_close(f->st);
	assert_int_equal(tmpdb_remove(&f->db), 0);
	free(f);
	return 0;
}

/* A window whose meta needs new pages in a file that may not grow. */
static void
test_full_cause_named(void **state)
{
	struct fx *f = *state;
	struct store_stats ss = { 0 };
	char sql[64], *meta;
	int64_t pages, id;
	size_t n = 64 * 1024;

	/* the thread's connection, while it waits */
	writer_lock_db(f->st);
	assert_int_equal(sql_pragma_int(f->st->db, "page_count", &pages), 0);
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
	    (long long)pages);
	assert_int_equal(sql_exec(f->st, "test", sql), 0);
	pthread_mutex_unlock(&f->st->dbmu);
	assert_non_null(meta = malloc(n));
	memset(meta, 'a', n);
	memcpy(meta, "{\"x\":\"", 6);
	memcpy(meta + n - 3, "\"}", 3);
	assert_int_equal(store_window_begin(f->st, "big", 0, 1,
	    1750000000000000000LL, meta, NULL, 0, &id), 0);
	free(meta);
	/* the thread tries it at once; a bounded wait for its outcome */
	for (int i = 0; i < 5000 && !ss.stalled; i++) {
		struct timespec ms = { 0, 1000000 };

		(void)nanosleep(&ms, NULL);
		store_get_stats(f->st, &ss);
	}
	assert_true(ss.stalled);
	print_message("status: %s\n", ss.why);
	assert_non_null(strstr(ss.why, "disk full"));
	assert_null(strstr(ss.why, "not an error"));
}

/* Lines on fd, read from the start, that contain needle. */
static int
count_lines(FILE *fp, const char *needle)
{
	char line[512];
	int n = 0;

	rewind(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	return n;
}

/* 50 identical failures: 3 lines, then one line counting the other 47. */
static void
test_repeated_failure_limited(void **state)
{
	struct fx *f = *state;
	FILE *err;
	int saved;

	assert_non_null(err = tmpfile());
	fflush(stderr);
	assert_true((saved = dup(STDERR_FILENO)) >= 0);
	assert_true(dup2(fileno(err), STDERR_FILENO) >= 0);
	writer_lock_db(f->st);
	for (int i = 0; i < 50; i++)
		assert_int_equal(sql_exec(f->st, "read", "SELECT * FROM nowhere"),
		    -1);
	assert_int_equal(sql_exec(f->st, "read", "SELECT * FROM elsewhere"), -1);
	pthread_mutex_unlock(&f->st->dbmu);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	assert_int_equal(count_lines(err, "no such table: nowhere"), 4);
	assert_int_equal(count_lines(err, "47 more times, not logged"), 1);
	assert_int_equal(count_lines(err, "no such table: elsewhere"), 1);
	/* the failure is kept for status, past SQLite's own record */
	assert_non_null(strstr(f->st->err_msg, "no such table: elsewhere"));
	fclose(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_cause_named, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_repeated_failure_limited,
		    setup, teardown),
	};

	log_init("test_writer", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
