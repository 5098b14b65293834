/*
 * store_summary: computing and keeping the summaries of ended windows
 * (contract in store.h; the figures in summary.h).
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

/*
 * Compute window id's summary and store it, with complete_ns = now_ns if
 * complete, in one transaction.
 */
static int
summarize(struct store *st, int64_t id, int64_t idle_lookback_ns,
    int64_t now_ns, bool complete)
{
	struct store_window *w;
	struct summary sm;
	sqlite3_stmt *s;
	int rc;

	if (!sqlite3_get_autocommit(st->db)) {
		log_warnx("%s: summarize window %" PRId64 ": a transaction is "
		    "already open", st->path, id);
		return -1;
	}
	/* the database's row: with a writer, this runs in its thread */
	if (store_db_window_get(st, id, &w) == -1)
		return -1;
	if (w == NULL || w->end_ns == 0) {
		log_warnx("%s: summarize window %" PRId64 ": %s", st->path, id,
		    w == NULL ? "no such window" : "it is still open");
		store_windows_free(w, 1);
		return -1;
	}
	/* one read transaction: the summary is of one snapshot */
	if (sql_exec(st, "summarize window", "BEGIN IMMEDIATE") == -1) {
		store_windows_free(w, 1);
		return -1;
	}
	rc = summary_compute(st->db, id, w->begin_ns, w->end_ns,
	    idle_lookback_ns, now_ns, &sm);
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
	if (rc == 0)
		rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) ==
		    SQLITE_OK ? 0 : -1;
	if (rc == -1) {
		sql_warn(st, "summarize window");
		(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	}
	summary_free(&sm);
	store_windows_free(w, 1);
	return rc;
}

int
store_window_summarize(struct store *st, int64_t id, int64_t idle_lookback_ns,
    int64_t now_ns)
{
	return summarize(st, id, idle_lookback_ns, now_ns, false);
}

int
store_db_window_finish(struct store *st, int64_t id, int64_t idle_lookback_ns,
    int64_t now_ns)
{
	return summarize(st, id, idle_lookback_ns, now_ns, true);
}

int
store_db_windows_abandoned(struct store *st)
{
	sqlite3_stmt *s;
	int rc, n;

	if (sql_prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET "
	    SCHEMA_C_INCOMPLETE " = ?1 WHERE end_ns IS NOT NULL AND "
	    SCHEMA_C_COMPLETE " IS NULL AND " SCHEMA_C_INCOMPLETE " IS NULL",
	    &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, STORE_WHY_ABANDONED, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		sql_warn(st, "mark windows incomplete");
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE && (n = sqlite3_changes(st->db)) > 0)
		log_warnx("%s: %d ended window%s never complete: spyremond "
		    "stopped before it had stored all of %s samples", st->path,
		    n, n == 1 ? " is" : "s are", n == 1 ? "its" : "their");
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_windows_summarize_due(struct store *st, int64_t now_ns,
    int64_t settle_ns, int64_t idle_lookback_ns)
{
	if (st->w != NULL)
		return writer_summarize_due(st, settle_ns, idle_lookback_ns);
	return store_db_summarize_due(st, now_ns, settle_ns, idle_lookback_ns);
}

int
store_db_summarize_due(struct store *st, int64_t now_ns, int64_t settle_ns,
    int64_t idle_lookback_ns)
{
	sqlite3_stmt *s;
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int rc, failed = 0;

	if (sql_prepare(st, "SELECT id FROM " SCHEMA_T_WINDOWS
	    " WHERE summarized_ns IS NULL AND end_ns IS NOT NULL AND "
	    "end_ns <= ?1 ORDER BY id", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, now_ns - settle_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			int64_t *p = realloc(ids, nc * sizeof(*p));

			if (p == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			ids = p;
			cap = nc;
		}
		ids[n++] = sqlite3_column_int64(s, 0);
	}
	if (rc != SQLITE_DONE)
		sql_warn(st, "windows to summarize");
	sqlite3_finalize(s);
	/* without a writer thread every row was written as it came: the
	 * windows are complete; with one, these were left from before */
	for (size_t i = 0; i < n; i++)
		if (summarize(st, ids[i], idle_lookback_ns, now_ns,
		    st->w == NULL) == -1)
			failed = 1;
	free(ids);
	return rc != SQLITE_DONE || failed ? -1 : (int)(n > 0);
}
