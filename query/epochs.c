/*
 * epochs: a window's samples across steps of the host clock (contracts in
 * dbread.h).  A step back while a window was open leaves its later
 * samples stamped among rows an older epoch of the clock stamped earlier;
 * the epochs recorded since schema 12 (the samples' epoch, the windows'
 * begin_epoch and end_epoch, clock_steps) tell them apart, and a window
 * is read as one piece per epoch it spans, each over that epoch's rows
 * only (spyremon-schema(5), windows).
 *
 * A profiler trace's stamps follow the clock as it was when the profiler
 * started, across any step after (db_trace_clock_load): each epoch's
 * samples are read at their stamps and brought into the trace's time by
 * the steps between.
 */
#include "dbread.h"
#include "dbread_priv.h"

#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pragma.h"
#include "schema.h"

/* The newest epoch db records (its newest clock_steps row), 0 if none. */
static int
newest_epoch(sqlite3 *db, int64_t *epoch)
{
	sqlite3_stmt *s;
	int rc;

	*epoch = 0;
	if (sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) FROM "
	    SCHEMA_T_CLOCK_STEPS, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*epoch = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/*
 * Step k's row (the step that starts epoch k): its at_ns and size_ns;
 * *found false if it is not recorded.  -1 if it cannot be read.
 */
static int
step_of(sqlite3_stmt *s, int64_t k, bool *found, int64_t *at_ns,
    int64_t *size_ns)
{
	int rc;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, k);
	*found = false;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*found = true;
		*at_ns = sqlite3_column_int64(s, 0);
		*size_ns = sqlite3_column_int64(s, 1);
	}
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* One piece of any epoch, (lo_ns, hi_ns), in *out. */
static void
one_piece(int64_t lo_ns, int64_t hi_ns, struct db_piece **out, size_t *n)
{
	*out = dbread_grow(NULL, 0, sizeof(**out));
	(*out)[0] = (struct db_piece){ lo_ns, hi_ns, lo_ns, -1 };
	*n = 1;
}

/* db_window_pieces, printing nothing: -1 with the error in db. */
static int
pieces(sqlite3 *db, const struct db_window *w, int64_t end_ns,
    struct db_piece **out, size_t *n)
{
	int64_t b = w->begin_epoch, x = w->end_epoch, at, size;
	sqlite3_stmt *s;
	bool found;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (b >= 0 && w->open && newest_epoch(db, &x) == -1)
		return -1;
	if (b < 0 || x < b) {
		/* not recorded (before schema 12): within its stamps */
		one_piece(w->begin_ns, end_ns, out, n);
		return 0;
	}
	if (x == b) {
		*out = dbread_grow(NULL, 0, sizeof(**out));
		(*out)[(*n)++] = (struct db_piece){ w->begin_ns, end_ns,
		    w->begin_ns, b };
		return 0;
	}
	if (sqlite3_prepare_v2(db, "SELECT at_ns, size_ns FROM "
	    SCHEMA_T_CLOCK_STEPS " WHERE id = ?1", -1, &s, NULL) != SQLITE_OK)
		return -1;
	for (int64_t k = b; k <= x && rc == 0; k++) {
		struct db_piece p = { w->begin_ns, end_ns, w->begin_ns, k };

		/* from the step that began epoch k, reaching back for the
		 * rows a file's writer stamped just before it */
		if (k > b && (rc = step_of(s, k, &found, &at, &size)) == 0) {
			p.lo_ns = found ? at : INT64_MIN / 4;
			p.from_ns = found ? at - DB_EPOCH_REACH_NS :
			    INT64_MIN / 4;
		}
		/* to the old clock's time at the step that ended it */
		if (rc == 0 && k < x &&
		    (rc = step_of(s, k + 1, &found, &at, &size)) == 0)
			p.hi_ns = found ? at - size : INT64_MAX / 4;
		*out = dbread_grow(*out, *n, sizeof(**out));
		(*out)[(*n)++] = p;
	}
	sqlite3_finalize(s);
	if (rc != 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int
db_window_pieces(sqlite3 *db, const struct db_window *w, int64_t end_ns,
    struct db_piece **out, size_t *n)
{
	if (pieces(db, w, end_ns, out, n) == -1)
		return db_error(db, "the host clock's steps");
	return 0;
}

int
db_window_count(sqlite3 *db, const struct db_window *w, int64_t end_ns,
    int64_t *count, int64_t *duration_ns)
{
	struct db_piece *p;
	size_t n;
	int rc;

	*count = 0;
	*duration_ns = end_ns - w->begin_ns;
	if ((rc = db_window_pieces(db, w, end_ns, &p, &n)) != 0)
		return rc;
	if (n > 1)
		*duration_ns = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (n > 1 && p[i].hi_ns > p[i].lo_ns)
			*duration_ns += p[i].hi_ns - p[i].lo_ns;
		rc = db_count_epoch_samples(db, p[i].from_ns, p[i].hi_ns,
		    p[i].epoch, count);
	}
	free(p);
	return rc;
}

int
db_window_pieces_of(sqlite3 *db, int64_t id, int64_t begin_ns,
    int64_t end_ns, struct db_piece **out, size_t *n)
{
	struct db_window_filter f = { .by_id = true, .id = id };
	struct db_window *w = NULL;
	size_t nw = 0;
	int rc;

	*out = NULL;
	*n = 0;
	/* a database without windows' epochs (older, or no windows) has
	 * one piece */
	if (id > 0 && sql_column_exists(db, SCHEMA_T_WINDOWS,
	    SCHEMA_C_BEGIN_EPOCH) && db_windows_read(db, &f, &w, &nw) != 0)
		return -1;
	if (nw == 1 && w[0].begin_ns == begin_ns && w[0].begin_epoch >= 0)
		rc = pieces(db, &w[0], end_ns, out, n);
	else {
		one_piece(begin_ns, end_ns < begin_ns ? begin_ns : end_ns, out,
		    n);
		rc = 0;
	}
	db_windows_free(w, nw);
	return rc;
}

/*
 * ---- a trace's time base across the steps (db_trace_clock_load) ----
 *
 * Epoch k of the clock showed the stamps from at_k (the new clock just
 * after step k; unbounded for the oldest) to the old clock's time at
 * step k + 1, at_{k+1} - size_{k+1}, or for the newest to its newest
 * sample.  A step back shows some times twice, in two epochs; a step
 * forward skips some, which the daemon stamps in the new epoch once it
 * sees the step.
 */

struct trace_step_row {
	int64_t at_ns, size_ns;
};

/* The steps 1..*n, by id, in *out (free it): -1 with the error in db. */
static int
read_steps(sqlite3 *db, struct trace_step_row **out, size_t *n,
    int64_t *missing)
{
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	*missing = 0;
	if (sqlite3_prepare_v2(db, "SELECT id, at_ns, size_ns FROM "
	    SCHEMA_T_CLOCK_STEPS " ORDER BY id", -1, &s, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_int64(s, 0) != (int64_t)*n + 1 &&
		    *missing == 0)
			*missing = (int64_t)*n + 1;
		*out = dbread_grow(*out, *n, sizeof(**out));
		(*out)[*n].at_ns = sqlite3_column_int64(s, 1);
		(*out)[*n].size_ns = sqlite3_column_int64(s, 2);
		(*n)++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* Epoch x's newest stamp at or after from_ns in *ts; *found false if none. */
static int
newest_of_epoch(sqlite3 *db, int64_t x, int64_t from_ns, bool *found,
    int64_t *ts)
{
	sqlite3_stmt *s;
	int rc;

	*found = false;
	if (sqlite3_prepare_v2(db, "SELECT " SCHEMA_C_TS " FROM "
	    SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_TS " >= ?1 AND "
	    SCHEMA_C_EPOCH " = ?2 ORDER BY " SCHEMA_C_TS " DESC LIMIT 1", -1,
	    &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, x);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*found = true;
		*ts = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/*
 * The epoch in force at start_ns among epochs 0..n, step k being st[k-1]
 * and the newest epoch's stamps ending at newest_ns: the one epoch that
 * showed start_ns; if none did, the first that begins after it (a step
 * forward skipped it: the new clock showed it before the daemon saw the
 * step), else the newest.  -1 if two showed it, with them in amb[].
 */
static int64_t
epoch_at(const struct trace_step_row *st, size_t n, int64_t newest_ns,
    int64_t start_ns, int64_t amb[2])
{
	int64_t found = -1, after = -1;

	for (size_t k = 0; k <= n; k++) {
		int64_t lo = k == 0 ? INT64_MIN : st[k - 1].at_ns;
		int64_t hi = k < n ? st[k].at_ns - st[k].size_ns : newest_ns;

		if (start_ns >= lo && start_ns <= hi) {
			if (found >= 0) {
				amb[0] = found;
				amb[1] = (int64_t)k;
				return -1;
			}
			found = (int64_t)k;
		} else if (start_ns < lo && after < 0)
			after = (int64_t)k;
	}
	if (found >= 0)
		return found;
	return after >= 0 ? after : (int64_t)n;
}

/* Say that the trace's epoch cannot be told: 1. */
static int
ambiguous(const struct trace_step_row *st, int64_t start_ns,
    const int64_t amb[2])
{
	char when[64], size[64], at[64];
	const struct trace_step_row *k = &st[amb[1] - 1];

	format_time_utc(start_ns, when, sizeof(when));
	/* to the ms, as a person reads a step: not format_duration's exact ns */
	snprintf(size, sizeof(size), "%.3f s", (double)(k->size_ns < 0 ?
	    -k->size_ns : k->size_ns) / 1e9);
	format_time_utc(k->at_ns, at, sizeof(at));
	warnx("a trace starting at %s cannot be placed among the steps of the "
	    "host clock: the clock showed that time twice, in epoch %" PRId64
	    " and, after it was stepped back by %s at %s, in epoch %" PRId64
	    "; which one the profiler started in is not recorded", when,
	    amb[0], size, at, amb[1]);
	return 1;
}

int
db_trace_clock_load(sqlite3 *db, int64_t start_ns, struct db_trace_clock *c)
{
	struct trace_step_row *st;
	int64_t missing, newest, e0, amb[2], cum, base;
	size_t n;
	bool found;

	memset(c, 0, sizeof(*c));
	c->start_epoch = -1;
	if (sql_table_exists(db, SCHEMA_T_CLOCK_STEPS) != 1 ||
	    !sql_column_exists(db, SCHEMA_T_SAMPLES, SCHEMA_C_EPOCH))
		return 0;
	if (read_steps(db, &st, &n, &missing) == -1)
		return db_error(db, "the host clock's steps");
	if (n == 0)
		return 0;
	if (missing != 0) {
		warnx("step %" PRId64 " of the host clock is not recorded "
		    "(clock_steps): a trace cannot be placed among the steps",
		    missing);
		free(st);
		return 1;
	}
	if (newest_of_epoch(db, (int64_t)n, st[n - 1].at_ns -
	    DB_EPOCH_REACH_NS, &found, &newest) == -1) {
		free(st);
		return db_error(db, "the samples of the newest epoch");
	}
	if (!found)
		newest = st[n - 1].at_ns;
	if ((e0 = epoch_at(st, n, newest, start_ns, amb)) == -1) {
		int rc = ambiguous(st, start_ns, amb);

		free(st);
		return rc;
	}
	/*
	 * A stamp of epoch k, less the steps after the start's epoch up to
	 * k (plus those from k to it, for an earlier k), is the trace's
	 * time; epoch k begins there at the step that began it.
	 */
	c->start_epoch = e0;
	c->n = n + 1;
	if ((c->e = calloc(c->n, sizeof(*c->e))) == NULL)
		errx(1, "out of memory");
	cum = 0;
	for (size_t k = 0; k <= n; k++) {
		if (k > 0)
			cum += st[k - 1].size_ns;
		c->e[k].epoch = (int64_t)k;
		c->e[k].shift_ns = -cum;
	}
	base = c->e[e0].shift_ns;
	for (size_t k = 0; k <= n; k++) {
		c->e[k].shift_ns -= base;
		if (k == 0)
			c->e[k].begin_ns = INT64_MIN;
		else
			c->e[k].begin_ns = st[k - 1].at_ns + c->e[k].shift_ns;
	}
	free(st);
	return 0;
}

void
db_trace_clock_free(struct db_trace_clock *c)
{
	free(c->e);
	memset(c, 0, sizeof(*c));
	c->start_epoch = -1;
}

int64_t
db_trace_time(const struct db_trace_clock *c, int64_t stamp_ns,
    int64_t epoch)
{
	if (c == NULL || c->start_epoch < 0 || epoch < 0 ||
	    (size_t)epoch >= c->n)
		return stamp_ns;
	return stamp_ns + c->e[epoch].shift_ns;
}

int64_t
db_trace_stamp(const struct db_trace_clock *c, int64_t trace_ns,
    int64_t *epoch)
{
	size_t k = 0;

	*epoch = -1;
	if (c == NULL || c->start_epoch < 0)
		return trace_ns;
	while (k + 1 < c->n && c->e[k + 1].begin_ns <= trace_ns)
		k++;
	*epoch = c->e[k].epoch;
	return trace_ns - c->e[k].shift_ns;
}

size_t
db_trace_pieces(const struct db_trace_clock *c, int64_t lo_ns, int64_t hi_ns,
    struct db_trace_piece *out)
{
	size_t n = 0;

	if (c == NULL || c->start_epoch < 0) {
		out[0] = (struct db_trace_piece){ lo_ns, hi_ns, -1, 0 };
		return 1;
	}
	for (size_t k = 0; k < c->n; k++) {
		const struct db_trace_epoch *e = &c->e[k];
		int64_t next = k + 1 < c->n ? c->e[k + 1].begin_ns : INT64_MAX;

		/*
		 * Its rows lie from its begin (less a file row stamped just
		 * before the daemon saw the step) to the next one's, each
		 * covering up to the longest interval before its stamp.
		 */
		if (k + 1 < c->n && lo_ns >= next + DB_EPOCH_REACH_NS)
			continue;
		if (k > 0 && hi_ns <= e->begin_ns - DB_EPOCH_REACH_NS -
		    DB_MAX_INTERVAL_NS)
			continue;
		out[n++] = (struct db_trace_piece){ lo_ns - e->shift_ns,
		    hi_ns - e->shift_ns, e->epoch, e->shift_ns };
	}
	if (n == 0)	/* the span is empty, or out of every epoch */
		out[n++] = (struct db_trace_piece){ lo_ns -
		    c->e[c->start_epoch].shift_ns, hi_ns -
		    c->e[c->start_epoch].shift_ns, c->start_epoch,
		    c->e[c->start_epoch].shift_ns };
	return n;
}

size_t
db_trace_npieces(const struct db_trace_clock *c)
{
	return c == NULL || c->start_epoch < 0 ? 1 : c->n;
}

int
db_trace_first_by_device(sqlite3 *db, const struct db_trace_clock *c,
    int64_t lo_ns, int64_t hi_ns, const char *device_sql,
    struct db_key **out, size_t *n)
{
	struct db_trace_piece *p;
	struct db_key *more;
	size_t np, nmore;
	int rc = 0;

	*out = NULL;
	*n = 0;
	p = dbread_grow(NULL, 0, db_trace_npieces(c) * sizeof(*p));
	np = db_trace_pieces(c, lo_ns, hi_ns, p);
	for (size_t i = 0; i < np && rc == 0; i++) {
		if ((rc = db_first_by_device(db, p[i].lo_ns, p[i].hi_ns,
		    p[i].epoch, device_sql, &more, &nmore)) != 0)
			break;
		/* by device; a card's first piece (its earliest epoch) wins */
		for (size_t k = 0; k < nmore; k++) {
			size_t at = 0;

			while (at < *n && (*out)[at].device < more[k].device)
				at++;
			if (at < *n && (*out)[at].device == more[k].device)
				continue;
			*out = dbread_grow(*out, *n, sizeof(**out));
			memmove(&(*out)[at + 1], &(*out)[at],
			    (*n - at) * sizeof(**out));
			(*out)[at] = more[k];
			(*n)++;
		}
		free(more);
	}
	free(p);
	if (rc != 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void
db_trace_cursor_open(struct db_trace_cursor *k, sqlite3_stmt *s,
    const struct db_trace_clock *c, int64_t lo_ns, int64_t hi_ns,
    int64_t reach_ns)
{
	memset(k, 0, sizeof(*k));
	k->s = s;
	k->reach_ns = reach_ns;
	k->p = dbread_grow(NULL, 0, db_trace_npieces(c) * sizeof(*k->p));
	k->np = db_trace_pieces(c, lo_ns, hi_ns, k->p);
}

int
db_trace_cursor_step(struct db_trace_cursor *k)
{
	int rc;

	for (;;) {
		if (!k->bound) {
			const struct db_trace_piece *p;
			int64_t top;

			if (k->i == k->np)
				return SQLITE_DONE;
			p = &k->p[k->i];
			if (__builtin_add_overflow(p->hi_ns, k->reach_ns, &top))
				top = INT64_MAX;
			db_bind_epoch(k->s, p->epoch);
			sqlite3_reset(k->s);
			sqlite3_bind_int64(k->s, 1, p->lo_ns);
			sqlite3_bind_int64(k->s, 2, p->hi_ns);
			sqlite3_bind_int64(k->s, 3, top);
			k->shift_ns = p->shift_ns;
			k->bound = true;
		}
		if ((rc = sqlite3_step(k->s)) != SQLITE_DONE)
			return rc;
		k->bound = false;
		k->i++;
	}
}

void
db_trace_cursor_close(struct db_trace_cursor *k)
{
	free(k->p);
	k->p = NULL;
	k->np = 0;
}
