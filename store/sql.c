/*
 * sql: the SQLite plumbing every store file shares (contract in sql.h).
 * It knows the connection and the path of a store, and nothing else of it,
 * so that store.c, catalog.c and retention.c all call down into it and
 * never into each other for it.
 */
#include "store_priv.h"
#include "sql.h"

#include <stdio.h>
#include <string.h>

#include "timeparse.h"

void
sql_note(struct store *st, const char *what, int code, const char *msg)
{
	atomic_fetch_add(&st->sql_errors, 1);
	if (sql_is_damage(code))
		atomic_fetch_add(&st->sql_corrupt, 1);
	pthread_mutex_lock(&st->errmu);
	snprintf(st->err_status, sizeof(st->err_status), "%s: %s", what, msg);
	st->err_status_ns = now_realtime_ns();
	pthread_mutex_unlock(&st->errmu);
}

void
store_errors_stats(struct store *st, struct store_stats *out)
{
	out->errors = atomic_load(&st->sql_errors);
	out->errors_damage = atomic_load(&st->sql_corrupt);
	pthread_mutex_lock(&st->errmu);
	snprintf(out->last_error, sizeof(out->last_error), "%s",
	    st->err_status);
	out->last_error_ns = st->err_status_ns;
	pthread_mutex_unlock(&st->errmu);
}

/* Keep code and msg as the last failure, and log it under the rate limit. */
static void
warn(struct store *st, const char *what, int code, const char *msg)
{
	char line[sizeof(st->err_last)];
	unsigned suppressed = 0;

	st->err_code = code != SQLITE_OK ? code : SQLITE_ERROR;
	snprintf(st->err_msg, sizeof(st->err_msg), "%s", msg);
	snprintf(line, sizeof(line), "%s: %s", what, msg);
	/* counted whether or not the rate limit lets it be logged */
	sql_note(st, what, st->err_code, msg);
	if (strcmp(line, st->err_last) == 0 &&
	    !ratelimit_pass(&st->rl_sql, now_monotonic_ns(), &suppressed))
		return;
	if (strcmp(line, st->err_last) != 0) {
		/* another message: the run of the last one ends, a new begins */
		if (st->rl_sql.dropped > 0)
			log_warnx("%s: %s: %u more times, not logged", st->path,
			    st->err_last, st->rl_sql.dropped);
		st->rl_sql.begin_ns = 0;
		(void)ratelimit_pass(&st->rl_sql, now_monotonic_ns(), NULL);
		snprintf(st->err_last, sizeof(st->err_last), "%s", line);
	}
	if (suppressed > 0)
		log_warnx("%s: %s (%u more like it not logged)", st->path, line,
		    suppressed);
	else
		log_warnx("%s: %s", st->path, line);
}

void
sql_warn(struct store *st, const char *what)
{
	warn(st, what, sqlite3_extended_errcode(st->db), sqlite3_errmsg(st->db));
}

int
sql_exec(struct store *st, const char *what, const char *sql)
{
	char *err = NULL;
	int rc;

	if ((rc = sqlite3_exec(st->db, sql, NULL, NULL, &err)) == SQLITE_OK)
		return 0;
	warn(st, what, sqlite3_extended_errcode(st->db), err != NULL ? err :
	    sqlite3_errstr(rc));
	sqlite3_free(err);
	return -1;
}

int
sql_prepare(struct store *st, const char *sql, sqlite3_stmt **out)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) == SQLITE_OK)
		return 0;
	sql_warn(st, "prepare");
	*out = NULL;
	return -1;
}

int
sql_finish(struct store *st, sqlite3_stmt *s, int rc, const char *what)
{
	/* the connection keeps the failed step's error through the finalize */
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE)
		return 0;
	sql_warn(st, what);
	return -1;
}

int
sql_finish_lookup(struct store *st, sqlite3_stmt *s, int rc, const char *what)
{
	return sql_finish(st, s, rc == SQLITE_ROW ? SQLITE_DONE : rc, what);
}
