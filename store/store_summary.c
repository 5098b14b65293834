/*
 * store_summary: computing and keeping the summaries of ended windows
 * (contracts in storedb.h and store_priv.h; the figures in summary.h).
 *
 * A summary is written in its own transaction, like a window change, so
 * it is never half there; the event loop never runs it while a flush's
 * transaction is open.
 */
#include "store_priv.h"

#include <inttypes.h>
#include <stdlib.h>

#include "schema.h"
#include "sql.h"
#include "summary.h"
#include "timeparse.h"

/*
 * Compute window id's summary and write it, with complete_ns = now_ns if
 * complete, inside the caller's transaction (which reads one snapshot).
 */
static int
summarize_in_tx(struct store *st, int64_t id, int64_t idle_lookback_ns,
    int64_t now_ns, bool complete)
{
	struct store_window *w;
	struct summary sm;
	sqlite3_stmt *s;
	int rc;

	/* the database's row: in the daemon, this runs in the writer thread */
	if (storedb_window_get(st, id, &w) == -1)
		return -1;
	if (w == NULL || w->end_ns == 0) {
		log_warnx("%s: summarize window %" PRId64 ": %s", st->path, id,
		    w == NULL ? "no such window" : "it is still open");
		store_windows_free(w, 1);
		return -1;
	}
	rc = summary_compute_cached(st->db, id, w->begin_ns, w->end_ns,
	    idle_lookback_ns, now_ns, &st->idle, &sm);
	if (rc == 0)
		rc = summary_write(st->db, &sm);
	if (rc == 0 && complete) {
		rc = sql_prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET "
		    SCHEMA_C_COMPLETE " = ?1 WHERE id = ?2 AND "
		    SCHEMA_C_INCOMPLETE " IS NULL", &s);
		if (rc == 0) {
			sqlite3_bind_int64(s, 1, now_ns);
			sqlite3_bind_int64(s, 2, id);
			rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
			sqlite3_finalize(s);
		}
	}
	summary_free(&sm);
	store_windows_free(w, 1);
	return rc;
}

/*
 * Summarize the n windows of ids (complete_ns = now_ns if complete) in one
 * transaction: all of them are stored, or none.
 */
static int
summarize(struct store *st, const int64_t *ids, size_t n,
    int64_t idle_lookback_ns, int64_t now_ns, bool complete)
{
	int rc = 0;

	if (!sqlite3_get_autocommit(st->db)) {
		log_warnx("%s: summarize window %" PRId64 ": a transaction is "
		    "already open", st->path, ids[0]);
		return -1;
	}
	if (sql_exec(st, "summarize window", "BEGIN IMMEDIATE") == -1)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = summarize_in_tx(st, ids[i], idle_lookback_ns, now_ns,
		    complete);
	if (rc == 0)
		rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) ==
		    SQLITE_OK ? 0 : -1;
	if (rc == -1) {
		sql_warn(st, "summarize window");
		(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	}
	return rc;
}

int
storedb_window_summarize(struct store *st, int64_t id, int64_t idle_lookback_ns,
    int64_t now_ns)
{
	return summarize(st, &id, 1, idle_lookback_ns, now_ns, false);
}

int
store_db_windows_finish(struct store *st, const int64_t *ids, size_t n,
    int64_t idle_lookback_ns, int64_t now_ns)
{
	return n == 0 ? 0 :
	    summarize(st, ids, n, idle_lookback_ns, now_ns, true);
}

int
store_db_windows_abandoned(struct store *st)
{
	sqlite3_stmt *s;
	int n;

	if (sql_prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET "
	    SCHEMA_C_INCOMPLETE " = ?1 WHERE end_ns IS NOT NULL AND "
	    SCHEMA_C_COMPLETE " IS NULL AND " SCHEMA_C_INCOMPLETE " IS NULL",
	    &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, STORE_WHY_ABANDONED, -1, SQLITE_STATIC);
	if (sql_finish(st, s, sqlite3_step(s), "mark windows incomplete") == -1)
		return -1;
	if ((n = sqlite3_changes(st->db)) > 0)
		log_warnx("%s: %d ended window%s never complete: spyremond "
		    "stopped before it had stored all of %s samples", st->path,
		    n, n == 1 ? " is" : "s are", n == 1 ? "its" : "their");
	return 0;
}

/*
 * The windows left to summarize are done in steps: at most
 * SUMMARIZE_STEP_MAX of them, and no more once SUMMARIZE_STEP_NS has gone
 * by, so that the writer thread stores rows, runs jobs and honours a stop
 * between steps however long the backlog (176,859 windows after a storm
 * took minutes when done in one go).  Each window is its own transaction.
 */
#define SUMMARIZE_STEP_MAX	64
#define SUMMARIZE_STEP_NS	(50 * NSEC_PER_MSEC)

int
store_db_summarize_due(struct store *st, int64_t now_ns, int64_t settle_ns,
    int64_t idle_lookback_ns, bool complete)
{
	sqlite3_stmt *s;
	int64_t ids[SUMMARIZE_STEP_MAX + 1];
	uint64_t t0 = now_monotonic_ns();
	size_t n = 0, done = 0;
	int rc, failed = 0;

	if (sql_prepare(st, "SELECT id FROM " SCHEMA_T_WINDOWS
	    " WHERE summarized_ns IS NULL AND end_ns IS NOT NULL AND "
	    "end_ns <= ?1 ORDER BY id LIMIT ?2", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, now_ns - settle_ns);
	sqlite3_bind_int(s, 2, SUMMARIZE_STEP_MAX + 1);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		ids[n++] = sqlite3_column_int64(s, 0);
	if (rc != SQLITE_DONE)
		sql_warn(st, "windows to summarize");
	sqlite3_finalize(s);
	/* complete: every row was written as it came (storedb.h's store);
	 * the writer thread's windows due were left from before */
	while (done < n && done < SUMMARIZE_STEP_MAX &&
	    (done == 0 || now_monotonic_ns() - t0 < SUMMARIZE_STEP_NS))
		if (summarize(st, &ids[done++], 1, idle_lookback_ns, now_ns,
		    complete) == -1)
			failed = 1;
	if (rc != SQLITE_DONE || failed)
		return -1;
	return done < n ? 1 : 0;
}

int
storedb_windows_summarize_due(struct store *st, int64_t now_ns,
    int64_t settle_ns, int64_t idle_lookback_ns)
{
	int rc;

	while ((rc = store_db_summarize_due(st, now_ns, settle_ns,
	    idle_lookback_ns, true)) == 1)
		;
	return rc;
}
