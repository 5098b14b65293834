/* windows_read: the windows table, read (contracts in dbread.h). */
#include "dbread.h"

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pragma.h"
#include "schema.h"

void
db_window_filter_name(struct db_window_filter *f, const char *name)
{
	char *end;

	if (*name >= '0' && *name <= '9') {
		errno = 0;
		f->id = strtoll(name, &end, 10);
		if (errno == 0 && *end == '\0') {
			f->by_id = true;
			return;
		}
	}
	f->by_id = false;
	f->tag = name;
}

/* Column i of s's row, malloc'd, "" for NULL; NULL when out of memory. */
static char *
text_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return strdup(t != NULL ? (const char *)t : "");
}

/* The row s is on into *w; -2 when out of memory (*w holds nothing). */
static int
window_from_row(sqlite3_stmt *s, struct db_window *w)
{
	memset(w, 0, sizeof(*w));
	w->id = sqlite3_column_int64(s, 0);
	w->uid = (uint32_t)sqlite3_column_int64(s, 2);
	w->pid = sqlite3_column_int(s, 3);
	w->begin_ns = sqlite3_column_int64(s, 4);
	w->open = sqlite3_column_type(s, 5) == SQLITE_NULL;
	w->end_ns = w->open ? 0 : sqlite3_column_int64(s, 5);
	w->auto_closed = sqlite3_column_int(s, 6) != 0;
	w->until_pid = sqlite3_column_int(s, 8);
	snprintf(w->ended_by, sizeof(w->ended_by), "%s",
	    (const char *)sqlite3_column_text(s, 9));
	w->tag = text_dup(s, 1);
	w->meta = text_dup(s, 7);
	w->end_note = text_dup(s, 10);
	w->run_ns = sqlite3_column_type(s, 11) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(s, 11);
	w->begin_epoch = sqlite3_column_type(s, 12) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(s, 12);
	w->end_epoch = sqlite3_column_type(s, 13) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(s, 13);
	if (w->tag == NULL || w->meta == NULL || w->end_note == NULL) {
		free(w->tag);
		free(w->meta);
		free(w->end_note);
		return -2;
	}
	return 0;
}

int
db_windows_read(sqlite3 *db, const struct db_window_filter *f,
    struct db_window **out, size_t *n)
{
	struct db_window *w = NULL, *grown;
	size_t count = 0, cap = 0;
	bool ended, note, run, epochs;
	char sql[896];
	sqlite3_stmt *s;
	int rc, err = 0;

	*out = NULL;
	*n = 0;
	/*
	 * until_pid and ended_by came with schema version 4, end_note with
	 * 10, run_ns with 11, the epochs with 12; asked of the table, as some
	 * builds wrote version 5 without version 4's columns
	 * (spyremon-schema(5), "Versions")
	 */
	ended = sql_column_exists(db, SCHEMA_T_WINDOWS, "ended_by");
	note = sql_column_exists(db, SCHEMA_T_WINDOWS, SCHEMA_C_END_NOTE);
	run = sql_column_exists(db, SCHEMA_T_WINDOWS, SCHEMA_C_RUN);
	epochs = sql_column_exists(db, SCHEMA_T_WINDOWS, SCHEMA_C_END_EPOCH);
	snprintf(sql, sizeof(sql), "SELECT id, tag, uid, pid, begin_ns, end_ns, "
	    "auto_closed, meta, %s, %s, %s, %s, %s, %s FROM " SCHEMA_T_WINDOWS
	    " WHERE "
	    "(?1 IS NULL OR id = ?1) AND (?2 IS NULL OR tag = ?2) AND "
	    "(?3 IS NULL OR end_ns IS NULL OR end_ns >= ?3) AND "
	    "(?4 IS NULL OR end_ns IS NULL) "
	    "ORDER BY begin_ns %s, id %s",
	    ended ? "coalesce(until_pid, 0)" : "0",
	    ended ? "coalesce(ended_by, '')" : "''",
	    note ? "coalesce(" SCHEMA_C_END_NOTE ", '')" : "''",
	    run ? SCHEMA_C_RUN : "NULL",
	    epochs ? SCHEMA_C_BEGIN_EPOCH : "NULL",
	    epochs ? SCHEMA_C_END_EPOCH : "NULL",
	    f->newest_first ? "DESC" : "ASC", f->newest_first ? "DESC" : "ASC");
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (f->by_id)
		sqlite3_bind_int64(s, 1, f->id);
	if (f->tag != NULL)
		sqlite3_bind_text(s, 2, f->tag, -1, SQLITE_STATIC);
	if (f->have_since)
		sqlite3_bind_int64(s, 3, f->since_ns);
	if (f->open_only)
		sqlite3_bind_int(s, 4, 1);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (count == cap) {
			cap = cap == 0 ? 8 : cap * 2;
			if ((grown = reallocarray(w, cap, sizeof(*w))) == NULL) {
				err = -2;
				break;
			}
			w = grown;
		}
		if ((err = window_from_row(s, &w[count])) != 0)
			break;
		count++;
	}
	sqlite3_finalize(s);
	if (err == 0 && rc != SQLITE_DONE)
		err = -3;
	if (err != 0) {
		db_windows_free(w, count);
		return err;
	}
	*out = w;
	*n = count;
	return 0;
}

int
db_window_baseline(sqlite3 *db, const char *workload, int64_t before_ns,
    int64_t *id)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT id FROM " SCHEMA_T_WINDOWS " WHERE "
	    "begin_ns < ?1 AND end_ns IS NOT NULL AND json_valid(meta) AND "
	    "json_extract(meta, '$.workload') = ?2 AND "
	    "lower(json_extract(meta, '$.baseline')) IN ('1', 'true', 'yes') "
	    "ORDER BY begin_ns DESC, id DESC LIMIT 1", -1, &s, NULL) !=
	    SQLITE_OK)
		return db_error(db, "the windows");
	sqlite3_bind_int64(s, 1, before_ns);
	sqlite3_bind_text(s, 2, workload, -1, SQLITE_STATIC);
	*id = 0;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    db_error(db, "the windows");
}

int
db_windows(sqlite3 *db, const struct db_window_filter *f,
    struct db_window **out, size_t *n)
{
	int rc = db_windows_read(db, f, out, n);

	if (rc == -2)
		errx(EXIT_FAILURE, "out of memory");
	return rc == 0 ? 0 : db_error(db, "the windows");
}

void
db_window_clear(struct db_window *w)
{
	free(w->tag);
	free(w->meta);
	free(w->end_note);
	w->tag = w->meta = w->end_note = NULL;
}

void
db_windows_free(struct db_window *w, size_t n)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		db_window_clear(&w[i]);
	free(w);
}

/* Columns i..i+2 of s: a clock's sync state, not known where NULL. */
static void
clock_at(sqlite3_stmt *s, int i, struct clocksync *c)
{
	memset(c, 0, sizeof(*c));
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return;
	c->known = true;
	c->synced = sqlite3_column_int(s, i) != 0;
	c->est_error_us = sqlite3_column_int64(s, i + 1);
	c->max_error_us = sqlite3_column_int64(s, i + 2);
}

int
db_window_facts(sqlite3 *db, int64_t id, struct db_window_facts *f)
{
	sqlite3_stmt *s;
	int rc;

	memset(f, 0, sizeof(*f));
	if (!sql_column_exists(db, SCHEMA_T_WINDOWS, "ended_by"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT coalesce(ended_by, ''), "
	    "coalesce(until_pid, 0), clock_begin_synced, clock_begin_est_us, "
	    "clock_begin_max_us, clock_end_synced, clock_end_est_us, "
	    "clock_end_max_us, child_restarts FROM windows WHERE id = ?1",
	    -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the window");
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		f->recorded = true;
		snprintf(f->ended_by, sizeof(f->ended_by), "%s",
		    (const char *)sqlite3_column_text(s, 0));
		f->until_pid = sqlite3_column_int(s, 1);
		clock_at(s, 2, &f->clock_begin);
		clock_at(s, 5, &f->clock_end);
		f->restarts_known = sqlite3_column_type(s, 8) != SQLITE_NULL;
		f->restarts = sqlite3_column_int64(s, 8);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : db_error(db, "the window");
}

int
db_window_state(sqlite3 *db, int64_t id, struct db_window_state *out)
{
	sqlite3_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(db, "SELECT tag, begin_ns, end_ns, "
	    SCHEMA_C_COMPLETE ", " SCHEMA_C_INCOMPLETE " FROM "
	    SCHEMA_T_WINDOWS " WHERE id = ?1", -1, &s, NULL) != SQLITE_OK) {
		/* before schema 9: no completeness recorded */
		out->found = out->ended = out->complete = true;
		return 0;
	}
	out->known = true;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		out->found = true;
		snprintf(out->tag, sizeof(out->tag), "%s",
		    (const char *)sqlite3_column_text(s, 0));
		out->begin_ns = sqlite3_column_int64(s, 1);
		out->ended = sqlite3_column_type(s, 2) != SQLITE_NULL;
		out->end_ns = sqlite3_column_int64(s, 2);
		out->complete = sqlite3_column_type(s, 3) != SQLITE_NULL;
		if (sqlite3_column_type(s, 4) != SQLITE_NULL)
			snprintf(out->incomplete, sizeof(out->incomplete), "%s",
			    (const char *)sqlite3_column_text(s, 4));
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(db, "the window's state");
	return 0;
}

size_t
db_windows_pending(sqlite3 *db, int64_t *ids, size_t max)
{
	sqlite3_stmt *s;
	size_t n = 0;

	/* before schema 9 the statement fails: nothing is pending then */
	if (sqlite3_prepare_v2(db, "SELECT id FROM " SCHEMA_T_WINDOWS
	    " WHERE end_ns IS NOT NULL AND " SCHEMA_C_COMPLETE " IS NULL AND "
	    SCHEMA_C_INCOMPLETE " IS NULL ORDER BY id DESC LIMIT ?1", -1, &s,
	    NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(s, 1, (int64_t)max);
	while (n < max && sqlite3_step(s) == SQLITE_ROW)
		ids[n++] = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}
