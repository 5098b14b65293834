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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema.h"
#include "sql.h"
#include "summary.h"
#include "timeparse.h"

/*
 * Compute window id's summary into *sm (free with summary_free), reading
 * inside the caller's read transaction.  A read that meets a damaged page
 * still succeeds (summary.h: sm->damaged).
 */
static int
compute(struct store *st, int64_t id, int64_t idle_lookback_ns,
    int64_t now_ns, struct summary *sm)
{
	struct store_window *w;
	int rc;

	memset(sm, 0, sizeof(*sm));
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
	    idle_lookback_ns, now_ns, &st->idle, sm);
	store_windows_free(w, 1);
	return rc;
}

/*
 * Keep note, the sentence for a summary a damaged page cut, in window
 * id's end_note (after what it holds, once), and count and log it.
 */
static int
note_damaged(struct store *st, int64_t id, const char *note)
{
	sqlite3_stmt *s;
	int rc;

	log_warnx("%s: window %" PRId64 ": %s", st->path, id, note);
	if (sql_prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET "
	    SCHEMA_C_END_NOTE " = CASE WHEN " SCHEMA_C_END_NOTE " IS NULL OR "
	    SCHEMA_C_END_NOTE " = '' THEN ?1 ELSE " SCHEMA_C_END_NOTE
	    " || '; ' || ?1 END WHERE id = ?2 AND (" SCHEMA_C_END_NOTE
	    " IS NULL OR instr(" SCHEMA_C_END_NOTE ", ?3) = 0)", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, note, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, id);
	sqlite3_bind_text(s, 3, SUMMARY_DAMAGE_MARK, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	return sql_finish(st, s, rc, "note the damage in the window");
}

/*
 * Window id was carried into a fresh database from a damaged one
 * (writer_recover.c): the sentence saying where its earlier rows are into note,
 * else "".
 */
static void
carried_note(struct store *st, int64_t id, char *note, size_t len)
{
	char at[32];
	struct tm tm;
	time_t t;

	note[0] = '\0';
	for (size_t i = 0; i < st->ncarried; i++) {
		if (st->carried[i].id != id)
			continue;
		t = (time_t)(st->carried[i].since_ns / NSEC_PER_SEC);
		gmtime_r(&t, &tm);
		strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(note, len, "the rows before %s " SUMMARY_DAMAGE_MARK
		    "%s): %s; the copy holds what is left of them", at,
		    st->carried_kept, st->carried_why);
		return;
	}
}

/*
 * Write summary sm, with complete_ns = now_ns if complete, inside the
 * caller's write transaction; a damaged read's sentence into note.
 */
static int
store_one(struct store *st, const struct summary *sm, int64_t now_ns,
    bool complete, char *note, size_t len)
{
	sqlite3_stmt *s;
	int rc;

	rc = summary_write(st->db, sm);
	/* what could be read is stored, and why the rest is not: complete */
	if (sm->damaged)
		summary_damage_note(sm, st->path, note, len);
	else
		carried_note(st, sm->window_id, note, len);
	if (rc == 0 && note[0] != '\0')
		rc = note_damaged(st, sm->window_id, note);
	if (rc == 0 && complete) {
		rc = sql_prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET "
		    SCHEMA_C_COMPLETE " = ?1 WHERE id = ?2 AND "
		    SCHEMA_C_INCOMPLETE " IS NULL", &s);
		if (rc == 0) {
			sqlite3_bind_int64(s, 1, now_ns);
			sqlite3_bind_int64(s, 2, sm->window_id);
			rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
			sqlite3_finalize(s);
		}
	}
	return rc;
}

/* End the read transaction, whatever a damaged page did to it. */
static void
end_read(struct store *st)
{
	if (sqlite3_get_autocommit(st->db))
		return;
	/* after a damaged page its COMMIT may fail: the snapshot ends anyway */
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK &&
	    !sqlite3_get_autocommit(st->db))
		(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/*
 * Summarize the n windows of ids (complete_ns = now_ns if complete): the
 * samples are read in one read transaction, then every summary is written
 * in one write transaction: all of them are stored, or none.  (Reading
 * apart: once a read in a write transaction met a damaged page, SQLite
 * fails every write after it in that transaction.)  notes (NULL: not
 * kept) gets each window's damage sentence, "" if none.
 */
static int
summarize(struct store *st, const int64_t *ids, size_t n,
    int64_t idle_lookback_ns, int64_t now_ns, bool complete,
    char (*notes)[STORE_NOTE_LEN])
{
	char scratch[STORE_NOTE_LEN];
	struct summary *sm;
	size_t done = 0;
	int rc = 0;

	if (!sqlite3_get_autocommit(st->db)) {
		log_warnx("%s: summarize window %" PRId64 ": a transaction is "
		    "already open", st->path, ids[0]);
		return -1;
	}
	if ((sm = calloc(n, sizeof(*sm))) == NULL) {
		log_warn("%s: summarize window %" PRId64, st->path, ids[0]);
		return -1;
	}
	if (sql_exec(st, "summarize window", "BEGIN") == -1) {
		free(sm);
		return -1;
	}
	for (; done < n && rc == 0; done++)
		if ((rc = compute(st, ids[done], idle_lookback_ns, now_ns,
		    &sm[done])) == -1)
			sql_warn(st, "summarize window");
		else if (sm[done].damaged) {
			/* counted as damage: the daemon's writer moves to a
			 * fresh database and completes the window there */
			sql_note(st, "summarize window", SQLITE_CORRUPT,
			    sm[done].damage);
			if (st->w != NULL && !st->damage_stays) {
				log_warnx("%s: summarize window %" PRId64 ": %s",
				    st->path, ids[done], sm[done].damage);
				rc = -1;
			}
		}
	end_read(st);
	if (rc == 0)
		rc = sql_exec(st, "summarize window", "BEGIN IMMEDIATE");
	for (size_t i = 0; i < n && rc == 0; i++) {
		char *note = notes != NULL ? notes[i] : scratch;

		note[0] = '\0';
		rc = store_one(st, &sm[i], now_ns, complete, note,
		    STORE_NOTE_LEN);
	}
	if (rc == 0 && !sqlite3_get_autocommit(st->db))
		rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) ==
		    SQLITE_OK ? 0 : -1;
	if (rc == -1 && !sqlite3_get_autocommit(st->db)) {
		sql_warn(st, "summarize window");
		(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	}
	for (size_t i = 0; i < done; i++)
		summary_free(&sm[i]);
	free(sm);
	return rc;
}

int
storedb_window_summarize(struct store *st, int64_t id, int64_t idle_lookback_ns,
    int64_t now_ns)
{
	return summarize(st, &id, 1, idle_lookback_ns, now_ns, false, NULL);
}

int
store_db_windows_finish(struct store *st, const int64_t *ids, size_t n,
    int64_t idle_lookback_ns, int64_t now_ns, char (*notes)[STORE_NOTE_LEN])
{
	return n == 0 ? 0 :
	    summarize(st, ids, n, idle_lookback_ns, now_ns, true, notes);
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
		    complete, NULL) == -1)
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
