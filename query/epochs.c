/*
 * epochs: a window's samples across steps of the host clock (contracts in
 * dbread.h).  A step back while a window was open leaves its later
 * samples stamped among rows an older epoch of the clock stamped earlier;
 * the epochs recorded since schema 12 (the samples' epoch, the windows'
 * begin_epoch and end_epoch, clock_steps) tell them apart, and a window
 * is read as one piece per epoch it spans, each over that epoch's rows
 * only (spyremon-schema(5), windows).
 */
#include "dbread.h"
#include "dbread_priv.h"

#include <err.h>
#include <stdlib.h>

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
