/*
 * Tests of complete windows (store.h, writer_sync.c), with the writer
 * thread running as in the daemon: a window is complete once every card
 * that still sends has a row that starts at or after its end (and, before
 * any card's first row, once one has) and those rows are committed, and
 * its summary is stored with complete_ns; a card that stopped is waited
 * for only until the deadline; a clean close completes
 * what has ended; a window left unfinished by a daemon that stopped is
 * marked incomplete at the next start; a span asked for is stored.
 * Nothing sleeps: each test waits on the store's sync descriptor.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "schema.h"
#include "storedb.h"
#include "timeparse.h"
#include "tmpdb.h"

#define MSEC		1000000LL
#define T0		(1750000000LL * 1000000000LL)

struct fx {
	struct tmpdb db;
	struct store *st;
	int pwr;
	uint32_t interval_ms;	/* of the rows row() appends */
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->db, "test_sync"), 0);
	assert_int_equal(store_open(f->db.path, 1000, &f->st), 0);
	assert_int_equal(store_metric(f->st, "pwr", "W", &f->pwr), 0);
	f->interval_ms = 100;
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

/* Device's row stamped ts, f->interval_ms long, at 50.0 W. */
static void
row(struct fx *f, int device, int64_t ts)
{
	struct store_value v = { .mant = 500, .scale = 1, .present = true };
	struct store_sample s = { .ts_ns = ts, .device = device,
	    .interval_ms = f->interval_ms, .nvalues = 1, .metric = &f->pwr,
	    .values = &v };

	store_append(f->st, &s);
}

/* Wait (at most limit_ms) until the store says a request is done. */
static void
wait_done(struct fx *f, int limit_ms)
{
	struct pollfd p = { .fd = store_sync_fd(f->st), .events = POLLIN };

	assert_true(p.fd >= 0);
	assert_int_equal(poll(&p, 1, limit_ms), 1);
	store_sync_ack(f->st);
}

/* Nothing is done within ms milliseconds. */
static void
none_done(struct fx *f, int ms)
{
	struct pollfd p = { .fd = store_sync_fd(f->st), .events = POLLIN };

	assert_int_equal(poll(&p, 1, ms), 0);
}

/* The first column of the single row of sql on the database, read apart. */
static int64_t
q_int(const struct fx *f, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t v = -1;

	assert_int_equal(sqlite3_open_v2(f->db.path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_type(s, 0) == SQLITE_NULL ? -2 :
		    sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* Two cards' rows every 100 ms through T0 + 1 s, inside a window ended then. */
static int64_t
run_window(struct fx *f, int64_t end_ns)
{
	int64_t id;

	store_set_idle_lookback(f->st, 3600000 * MSEC);
	for (int k = 1; k <= 10; k++) {
		row(f, 0, T0 + k * 100 * MSEC);
		row(f, 1, T0 + k * 100 * MSEC);
	}
	assert_int_equal(store_window_begin(f->st, "w", 0, 1, T0 + 150 * MSEC,
	    "{}", NULL, 0, &id), 0);
	assert_int_equal(store_window_end(f->st, id, end_ns, STORE_ENDED_MARK,
	    NULL, true), 0);
	return id;
}

static void
test_complete_when_covered(void **state)
{
	struct fx *f = *state;
	char why[256];
	uint64_t ticket;
	int64_t id;

	/* 5 s rows: the deadline (15 s) is far beyond what the test takes */
	f->interval_ms = 5000;
	id = run_window(f, T0 + 1050 * MSEC);
	ticket = store_sync_window(f->st, id);
	assert_true(ticket != 0);
	none_done(f, 300);
	assert_true(store_sync_pending(f->st, ticket, why, sizeof(why), NULL));
	assert_string_equal(why, "waiting for the first sample after the end "
	    "from card 0, 1");
	/* stamped after the end, but its 5 s reach back over it */
	row(f, 0, T0 + 1100 * MSEC);
	row(f, 1, T0 + 1100 * MSEC);
	none_done(f, 300);
	assert_true(store_sync_pending(f->st, ticket, why, sizeof(why), NULL));
	assert_string_equal(why, "waiting for the first sample after the end "
	    "from card 0, 1");
	/* card 0's next row starts after the end */
	row(f, 0, T0 + 6100 * MSEC);
	none_done(f, 300);
	assert_true(store_sync_pending(f->st, ticket, why, sizeof(why), NULL));
	assert_string_equal(why, "waiting for the first sample after the end "
	    "from card 1");
	row(f, 1, T0 + 6100 * MSEC);
	wait_done(f, 5000);
	assert_false(store_sync_pending(f->st, ticket, NULL, 0, NULL));
	assert_int_equal(store_sync_window(f->st, id), 0);
	/* committed: every row over the end and the next, the summary, when */
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 24);
	assert_true(q_int(f, "SELECT complete_ns FROM windows") > 0);
	assert_int_equal(q_int(f, "SELECT incomplete IS NULL FROM windows"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM window_summary"), 2);
	assert_int_equal(q_int(f, "SELECT sum(samples) FROM window_summary"),
	    20);
}

/*
 * Ended before any card's first row (a daemon just started): no card is
 * sending yet, but the first rows may reach back over the end, so the
 * window waits for one that starts after it.  (A time before the store's
 * start waits for none: test_span's and the other tests' times are.)
 */
static void
test_before_the_first_row(void **state)
{
	struct fx *f = *state;
	char why[256];
	uint64_t ticket;
	int64_t id;

	int64_t t = now_realtime_ns();	/* after the store's start */

	assert_int_equal(store_window_begin(f->st, "w", 0, 1, t, "{}", NULL,
	    0, &id), 0);
	assert_int_equal(store_window_end(f->st, id, t + 20 * MSEC,
	    STORE_ENDED_MARK, NULL, true), 0);
	ticket = store_sync_window(f->st, id);
	assert_true(ticket != 0);
	none_done(f, 300);
	assert_true(store_sync_pending(f->st, ticket, why, sizeof(why), NULL));
	assert_string_equal(why, "waiting for the first sample after the end "
	    "from any card");
	/* the first rows, stamped after the end, reach back over it */
	row(f, 0, t + 90 * MSEC);
	row(f, 1, t + 90 * MSEC);
	none_done(f, 300);
	assert_true(store_sync_pending(f->st, ticket, why, sizeof(why), NULL));
	assert_string_equal(why, "waiting for the first sample after the end "
	    "from card 0, 1");
	row(f, 0, t + 190 * MSEC);
	row(f, 1, t + 190 * MSEC);
	wait_done(f, 5000);
	assert_false(store_sync_pending(f->st, ticket, NULL, 0, NULL));
	assert_true(q_int(f, "SELECT complete_ns FROM windows") > 0);
	assert_int_equal(q_int(f, "SELECT sum(samples) FROM window_summary"),
	    2);
}

static void
test_stopped_card_not_waited_for(void **state)
{
	struct fx *f = *state;
	uint64_t ticket;
	int64_t id = run_window(f, T0 + 1050 * MSEC);

	/* card 1 says nothing more: the deadline, about 5.2 s, completes it */
	ticket = store_sync_window(f->st, id);
	assert_true(ticket != 0);
	row(f, 0, T0 + 1100 * MSEC);
	wait_done(f, 10000);
	assert_false(store_sync_pending(f->st, ticket, NULL, 0, NULL));
	assert_true(q_int(f, "SELECT complete_ns FROM windows") > 0);
	assert_int_equal(q_int(f, "SELECT samples FROM window_summary WHERE "
	    "device = 1"), 9);
}

static void
test_close_completes(void **state)
{
	struct fx *f = *state;

	(void)run_window(f, T0 + 1050 * MSEC);
	store_close(f->st);
	f->st = NULL;
	assert_true(q_int(f, "SELECT complete_ns FROM windows") > 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM window_summary"), 2);
}

static void
test_abandoned_at_start(void **state)
{
	struct fx *f = *state;
	char why[256];
	int64_t id;

	/* on the caller's thread: the end is written, nothing completes it */
	store_close(f->st);
	assert_int_equal(storedb_open(f->db.path, 1000, &f->st), 0);
	{
		struct store_value v = { .mant = 500, .scale = 1,
		    .present = true };
		struct store_sample s = { .ts_ns = T0 + 100 * MSEC,
		    .interval_ms = f->interval_ms, .nvalues = 1,
		    .metric = &f->pwr, .values = &v };

		storedb_append(f->st, &s);
	}
	assert_int_equal(storedb_window_begin(f->st, "w", 0, 1, T0, "{}", NULL,
	    0, &id), 0);
	assert_int_equal(storedb_window_end(f->st, id, T0 + 200 * MSEC,
	    STORE_ENDED_MARK, NULL), 0);
	storedb_close(f->st);
	assert_int_equal(q_int(f, "SELECT complete_ns FROM windows"), -2);
	assert_int_equal(store_open(f->db.path, 1000, &f->st), 0);
	assert_int_equal(store_sync_window(f->st, id), 0);
	store_close(f->st);
	f->st = NULL;
	assert_int_equal(q_int(f, "SELECT complete_ns FROM windows"), -2);
	{
		sqlite3 *db;
		sqlite3_stmt *s;

		assert_int_equal(sqlite3_open_v2(f->db.path, &db,
		    SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT incomplete "
		    "FROM windows", -1, &s, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		snprintf(why, sizeof(why), "%s", sqlite3_column_text(s, 0));
		sqlite3_finalize(s);
		sqlite3_close(db);
	}
	assert_string_equal(why, STORE_WHY_ABANDONED);
}

static void
test_span(void **state)
{
	struct fx *f = *state;
	uint64_t ticket;
	int64_t through;

	row(f, 0, T0 + 100 * MSEC);
	assert_int_equal(store_sync(f->st, T0 + 150 * MSEC, &ticket), 0);
	assert_true(store_sync_pending(f->st, ticket, NULL, 0, &through));
	assert_int_equal(through, T0 + 150 * MSEC);
	/* stamped after 150 ms but starting before: a row on time may follow */
	row(f, 0, T0 + 200 * MSEC);
	none_done(f, 300);
	assert_true(store_sync_pending(f->st, ticket, NULL, 0, NULL));
	/* this one starts after it, so no later row reaches back over it */
	row(f, 0, T0 + 300 * MSEC);
	wait_done(f, 5000);
	assert_false(store_sync_pending(f->st, ticket, NULL, 0, NULL));
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_complete_when_covered,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_before_the_first_row,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stopped_card_not_waited_for,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_completes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_abandoned_at_start, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_span, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
