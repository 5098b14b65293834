/*
 * retention: deleting old samples in bounded steps (storedb_retention_step).
 *
 * A pass has four phases: rows older than max_age, then the oldest rows
 * while the file's used pages exceed max_size, then returning free pages to
 * the filesystem and a checkpoint so that the file actually shrinks.  Each
 * DELETE is its own short autocommit transaction over a primary-key range
 * of samples, sized to take a few milliseconds, so neither the event loop
 * nor readers ever wait long.
 *
 * Profiling windows protect their samples.  A window is protected while it
 * is open, not yet summarized (store_summary.c), or ended less than
 * windows_max_age ago.  It covers a row at ts of
 * interval D when ts lies in [begin - D, end + D], or is at least begin - D
 * while the window is open: the row just after the end describes
 * [ts - D, ts], which overlaps the window, and one row before the beginning
 * gives the baseline.  For a window a step of the host clock crossed, the
 * span is the hull of its stretches in each epoch (HULL_LO, HULL_HI); an
 * open window has been crossed by every step since it began, and reaches
 * to the end of time.  Spans covered by protected windows are skipped
 * without reading them; only rows near their edges are checked one by one
 * (and there, an open window protects what its begin stamp precedes).
 */
#include "store_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "timeparse.h"

/* A chunk that deletes faster than this grows, slower shrinks. */
#define CHUNK_FAST_NS	(2 * NSEC_PER_MSEC)
#define CHUNK_SLOW_NS	(8 * NSEC_PER_MSEC)

/* The ts_ns of the row ?3 rows after the first one in [?1, ?2). */
const char retention_sql_bound[] =
	"SELECT " SCHEMA_C_TS " FROM " SCHEMA_T_SAMPLES
	" WHERE " SCHEMA_C_TS " >= ?1 AND " SCHEMA_C_TS " < ?2"
	" ORDER BY " SCHEMA_C_TS " LIMIT 1 OFFSET ?3";

/*
 * The stamps window w's rows lie within: its begin and end, and for a
 * window a step of the host clock crossed (its end_epoch past its
 * begin_epoch, or any step since its begin while it is open), the steps
 * between too, each new clock's time after it and the old clock's before
 * it (epochs.c in query/ reads such a window so).  A hull: rows of other
 * epochs within it are protected with it.  An open window's end is the
 * end of time.
 */
#define INT64_MAX_SQL "9223372036854775807"
#define STEPS_OF(w) " FROM " SCHEMA_T_CLOCK_STEPS " c WHERE c.id > " w \
	"." SCHEMA_C_BEGIN_EPOCH " AND c.id <= coalesce(" w "." \
	SCHEMA_C_END_EPOCH ", " INT64_MAX_SQL "))"
#define END_OF(w) "coalesce(" w ".end_ns, " INT64_MAX_SQL ")"
#define HULL_LO(w) "min(" w ".begin_ns, coalesce((SELECT min(c.at_ns)" \
	STEPS_OF(w) ", " w ".begin_ns))"
#define HULL_HI(w) "max(" END_OF(w) ", coalesce((SELECT " \
	"max(c.at_ns - c.size_ns)" STEPS_OF(w) ", " END_OF(w) "))"
/* A row of samples covers up to its interval before its stamp. */
#define ROW_FROM SCHEMA_T_SAMPLES "." SCHEMA_C_TS " - " SCHEMA_T_SAMPLES 	"." SCHEMA_C_INTERVAL " * 1000000"
#define ROW_TO SCHEMA_T_SAMPLES "." SCHEMA_C_TS " + " SCHEMA_T_SAMPLES 	"." SCHEMA_C_INTERVAL " * 1000000"

/*
 * Rows in [?1, ?2) no protected window covers; ?3 is the window cutoff.
 * The windows a step crossed are few, and found through their own
 * partial index (windows_crossed), so the common probe stays a search of
 * windows_begin.
 */
const char retention_sql_delete_free[] =
	"DELETE FROM " SCHEMA_T_SAMPLES
	" WHERE " SCHEMA_C_TS " >= ?1 AND " SCHEMA_C_TS " < ?2"
	" AND NOT EXISTS (SELECT 1 FROM " SCHEMA_T_WINDOWS " w"
	" WHERE w.begin_ns <= " ROW_TO
	" AND (w.end_ns IS NULL OR ((w.end_ns > ?3 OR w.summarized_ns IS NULL)"
	" AND w.end_ns >= " ROW_FROM ")))"
	" AND NOT EXISTS (SELECT 1 FROM " SCHEMA_T_WINDOWS " w"
	" WHERE w." SCHEMA_C_END_EPOCH " > w." SCHEMA_C_BEGIN_EPOCH
	" AND (w.end_ns > ?3 OR w.summarized_ns IS NULL)"
	" AND " HULL_LO("w") " <= " ROW_TO " AND " HULL_HI("w") " >= "
	ROW_FROM ")";

/* Every row in [?1, ?2). */
const char retention_sql_delete_any[] =
	"DELETE FROM " SCHEMA_T_SAMPLES
	" WHERE " SCHEMA_C_TS " >= ?1 AND " SCHEMA_C_TS " < ?2";

static const char sql_protected[] =
	"SELECT " HULL_LO("w") " AS lo, coalesce(" HULL_HI("w") ", "
	"9223372036854775807) FROM " SCHEMA_T_WINDOWS " w WHERE w.end_ns IS "
	"NULL OR w.end_ns > ?1 OR w.summarized_ns IS NULL ORDER BY lo";

/* Inclusive span of ts_ns that protected windows cover. */
struct span {
	int64_t lo, hi;
};

struct retention_ctx {
	struct store *st;
	const struct store_retention *r;
	int64_t now_ns;
	int64_t age_cutoff_ns;		/* rows before are older than max_age */
	int64_t window_cutoff_ns;	/* windows ending at or before are not protected */
	struct span *spans;		/* sorted, disjoint */
	size_t nspans;
	sqlite3_stmt *bound, *del_free, *del_any;
};

static int64_t
sub_clamped(int64_t t, uint64_t d)
{
	if (d > (uint64_t)t - (uint64_t)INT64_MIN)
		return INT64_MIN;
	return (int64_t)((uint64_t)t - d);
}

int64_t
storedb_age_cutoff(int64_t now_ns, uint64_t age_ns,
    const struct store_clock_step *steps, size_t n)
{
	int64_t cutoff = sub_clamped(now_ns, age_ns);

	/*
	 * Newest first: a cutoff before a step's moment (in the clock after
	 * it) lies in the clock before it, which read size_ns less.
	 */
	for (size_t i = n; i-- > 0 && cutoff != INT64_MIN;) {
		if (cutoff >= steps[i].at_ns)
			break;
		if (steps[i].size_ns > 0)
			cutoff = sub_clamped(cutoff, (uint64_t)steps[i].size_ns);
		else if (cutoff <= INT64_MAX + steps[i].size_ns)
			cutoff -= steps[i].size_ns;
		else
			cutoff = INT64_MAX;
	}
	return cutoff;
}

static int
span_add(struct retention_ctx *c, int64_t lo, int64_t hi)
{
	struct span *v;

	if (hi < lo)
		return 0;
	if (c->nspans > 0 && lo <= c->spans[c->nspans - 1].hi) {
		if (hi > c->spans[c->nspans - 1].hi)
			c->spans[c->nspans - 1].hi = hi;
		return 0;
	}
	v = reallocarray(c->spans, c->nspans + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	c->spans = v;
	c->spans[c->nspans].lo = lo;
	c->spans[c->nspans++].hi = hi;
	return 0;
}

static int
spans_load(struct retention_ctx *c)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(c->st->db, sql_protected, -1, &s, NULL) !=
	    SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, c->window_cutoff_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (span_add(c, sqlite3_column_int64(s, 0),
		    sqlite3_column_int64(s, 1)) == -1) {
			rc = SQLITE_NOMEM;
			break;
		}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

static void
ctx_close(struct retention_ctx *c)
{
	sqlite3_finalize(c->bound);
	sqlite3_finalize(c->del_free);
	sqlite3_finalize(c->del_any);
	free(c->spans);
}

static int
ctx_open(struct retention_ctx *c, struct store *st,
    const struct store_retention *r, int64_t now_ns)
{
	sqlite3 *db = st->db;

	memset(c, 0, sizeof(*c));
	c->st = st;
	c->r = r;
	c->now_ns = now_ns;
	pthread_mutex_lock(&st->mu);
	c->age_cutoff_ns = storedb_age_cutoff(now_ns, r->max_age_ns,
	    st->clock_steps, st->nclock_steps);
	c->window_cutoff_ns = storedb_age_cutoff(now_ns, r->windows_max_age_ns,
	    st->clock_steps, st->nclock_steps);
	pthread_mutex_unlock(&st->mu);
	if (sqlite3_prepare_v2(db, retention_sql_bound, -1, &c->bound, NULL) !=
	    SQLITE_OK ||
	    sqlite3_prepare_v2(db, retention_sql_delete_free, -1, &c->del_free,
	    NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, retention_sql_delete_any, -1, &c->del_any,
	    NULL) != SQLITE_OK ||
	    spans_load(c) == -1) {
		sql_warn(st, "retention");
		ctx_close(c);
		return -1;
	}
	return 0;
}

/*
 * The next stretch [*lo, *hi) at or after cursor, below limit, that no
 * protected span reaches into; false if there is none.
 */
static bool
next_gap(const struct retention_ctx *c, int64_t cursor, int64_t limit,
    int64_t *lo, int64_t *hi)
{
	*lo = cursor;
	*hi = limit;
	for (size_t i = 0; i < c->nspans; i++) {
		if (c->spans[i].hi < *lo)
			continue;
		if (c->spans[i].lo <= *lo) {
			if (c->spans[i].hi == INT64_MAX)
				return false;
			*lo = c->spans[i].hi + 1;
			continue;
		}
		if (c->spans[i].lo < *hi)
			*hi = c->spans[i].lo;
		break;
	}
	return *lo < *hi;
}

/*
 * The end of a chunk of about chunk rows starting at lo: a bound in
 * (lo, hi].  *full if [lo, hi) holds more rows than that.
 */
static int
chunk_bound(struct retention_ctx *c, int64_t lo, int64_t hi, unsigned chunk,
    int64_t *bound, bool *full)
{
	int rc;

	sqlite3_bind_int64(c->bound, 1, lo);
	sqlite3_bind_int64(c->bound, 2, hi);
	sqlite3_bind_int64(c->bound, 3, chunk);
	rc = sqlite3_step(c->bound);
	*full = rc == SQLITE_ROW;
	*bound = hi;
	if (rc == SQLITE_ROW && sqlite3_column_int64(c->bound, 0) > lo)
		*bound = sqlite3_column_int64(c->bound, 0);
	else if (rc == SQLITE_ROW && lo < INT64_MAX)
		*bound = lo + 1;
	sqlite3_reset(c->bound);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sql_warn(c->st, "retention");
		return -1;
	}
	return 0;
}

static int
delete_range(struct retention_ctx *c, sqlite3_stmt *s, int64_t lo,
    int64_t hi, int *changes)
{
	int rc;

	sqlite3_bind_int64(s, 1, lo);
	sqlite3_bind_int64(s, 2, hi);
	if (s == c->del_free)
		sqlite3_bind_int64(s, 3, c->window_cutoff_ns);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		sql_warn(c->st, "retention: delete");
		return -1;
	}
	*changes = sqlite3_changes(c->st->db);
	/* status reads the count from the event loop */
	pthread_mutex_lock(&c->st->mu);
	c->st->rows_deleted += (uint64_t)*changes;
	pthread_mutex_unlock(&c->st->mu);
	c->st->ret.pass_deleted += (uint64_t)*changes;
	return 0;
}

/*
 * Grow the chunk while a full one is fast; shrink it below one that was
 * slow.  Chunks cut short by a limit say nothing about the full size.
 */
static void
chunk_adapt(struct retention_state *rs, unsigned used, bool full,
    uint64_t took_ns)
{
	if (took_ns < CHUNK_FAST_NS && full && used >= rs->chunk)
		rs->chunk = used < RETENTION_CHUNK_MAX / 2 ?
		    used * 2 : RETENTION_CHUNK_MAX;
	else if (took_ns > CHUNK_SLOW_NS)
		rs->chunk = used / 2 > RETENTION_CHUNK_MIN ?
		    used / 2 : RETENTION_CHUNK_MIN;
}

/*
 * Delete up to chunk unprotected rows from the cursor on, below limit, and
 * move the cursor past them.  *done once nothing is left below limit.
 */
static int
chunk_free(struct retention_ctx *c, int64_t limit, unsigned chunk, bool *done)
{
	struct retention_state *rs = &c->st->ret;
	uint64_t t0 = now_monotonic_ns();
	int64_t lo, hi, bound;
	bool full;
	int changes;

	if (!next_gap(c, rs->cursor, limit, &lo, &hi)) {
		rs->cursor = limit;
		*done = true;
		return 0;
	}
	if (chunk_bound(c, lo, hi, chunk, &bound, &full) == -1 ||
	    delete_range(c, c->del_free, lo, bound, &changes) == -1)
		return -1;
	chunk_adapt(rs, chunk, full, now_monotonic_ns() - t0);
	rs->cursor = bound;
	*done = bound >= limit;
	return 0;
}

/* The oldest chunk rows, protected or not; *done if there were none. */
static int
chunk_any(struct retention_ctx *c, unsigned chunk, bool *done)
{
	struct retention_state *rs = &c->st->ret;
	uint64_t t0 = now_monotonic_ns();
	unsigned suppressed;
	int64_t bound;
	bool full;
	int changes;

	if (!rs->warned_windows && ratelimit_pass(&c->st->rl_retention,
	    now_monotonic_ns(), &suppressed))
		log_warnx("%s: over max_size with only samples of profiling "
		    "windows left: deleting the oldest of those",
		    c->st->path);
	rs->warned_windows = true;
	if (chunk_bound(c, INT64_MIN, INT64_MAX, chunk, &bound, &full) == -1 ||
	    delete_range(c, c->del_any, INT64_MIN, bound, &changes) == -1)
		return -1;
	chunk_adapt(rs, chunk, full, now_monotonic_ns() - t0);
	*done = changes == 0;
	return 0;
}

static int
phase_age(struct retention_ctx *c, bool *done)
{
	int64_t cutoff = c->age_cutoff_ns;

	if (c->r->max_age_ns == 0 || cutoff == INT64_MIN) {
		*done = true;
		return 0;
	}
	return chunk_free(c, cutoff, c->st->ret.chunk, done);
}

/*
 * Rows whose deletion cannot free more than excess bytes, at most the
 * adaptive chunk: each row of samples takes at most 9 bytes per column
 * plus about 32 of record and cell overhead, so deleting this many
 * approaches max_size from above instead of overshooting it.
 */
static unsigned
size_chunk(const struct store *st, uint64_t excess)
{
	uint64_t rows = excess / (9 * (st->cat.n + 4) + 32) + 1;

	return rows < st->ret.chunk ? (unsigned)rows : st->ret.chunk;
}

static int
phase_size(struct retention_ctx *c, bool *done)
{
	unsigned chunk;
	bool end;
	uint64_t used;

	*done = false;
	if (c->r->max_size == 0) {
		*done = true;
		return 0;
	}
	if (sql_used_bytes(c->st->db, &used) == -1) {
		sql_warn(c->st, "retention: database size");
		return -1;
	}
	if (used <= c->r->max_size) {
		*done = true;
		return 0;
	}
	chunk = size_chunk(c->st, used - c->r->max_size);
	if (c->st->ret.cursor < INT64_MAX)
		return chunk_free(c, INT64_MAX, chunk, &end);
	return chunk_any(c, chunk, done);
}

/* Move free pages to the end of the file and cut them off. */
static int
phase_vacuum(struct retention_ctx *c, bool *done)
{
	sqlite3 *db = c->st->db;
	int64_t before, after;
	char sql[64];

	if (sql_pragma_int(db, "freelist_count", &before) == -1)
		return -1;
	*done = before == 0;
	if (*done)
		return 0;
	snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%d)",
	    RETENTION_VACUUM_PAGES);
	c->st->ret.vacuumed = true;
	if (sql_exec(c->st, "retention: vacuum", sql) == -1 ||
	    sql_pragma_int(db, "freelist_count", &after) == -1)
		return -1;
	*done = after == 0 || after >= before;
	return 0;
}

/*
 * In WAL mode the file only shrinks when a checkpoint copies the vacuumed
 * pages back; readers in the way just leave that to a later checkpoint.
 */
static int
phase_checkpoint(struct retention_ctx *c, bool *done)
{
	(void)sqlite3_wal_checkpoint_v2(c->st->db, NULL,
	    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	*done = true;
	return 0;
}

static void
pass_reset(struct retention_state *rs)
{
	rs->phase = RET_AGE;
	rs->cursor = INT64_MIN;
	rs->pass_deleted = 0;
	rs->warned_windows = false;
	rs->vacuumed = false;
}

/* Move to the next phase; true when the pass is complete. */
static bool
phase_next(struct store *st)
{
	struct retention_state *rs = &st->ret;

	rs->cursor = INT64_MIN;
	if (rs->phase == RET_AGE) {
		rs->phase = RET_SIZE;
		return false;
	}
	if (rs->phase == RET_SIZE) {
		rs->phase = RET_VACUUM;
		return false;
	}
	if (rs->phase == RET_VACUUM && rs->vacuumed) {
		rs->phase = RET_CHECKPOINT;
		return false;
	}
	if (rs->pass_deleted > 0)
		log_info("%s: retention deleted %" PRIu64 " samples", st->path,
		    rs->pass_deleted);
	pass_reset(rs);
	return true;
}

static int
phase_run(struct retention_ctx *c, bool *done)
{
	*done = false;
	switch (c->st->ret.phase) {
	case RET_AGE:
		return phase_age(c, done);
	case RET_SIZE:
		return phase_size(c, done);
	case RET_VACUUM:
		return phase_vacuum(c, done);
	default:
		return phase_checkpoint(c, done);
	}
}

/*
 * Phases run in order until the pass completes or budget_ns is spent; at
 * least one statement runs per call, so a tiny budget still progresses.
 * The checkpoint, the one long statement, always starts a call of its own.
 */
int
storedb_retention_step(struct store *st, const struct store_retention *r,
    int64_t now_ns, uint64_t budget_ns)
{
	struct retention_ctx c;
	uint64_t start = now_monotonic_ns();
	bool done;
	int rc = 1;

	if (ctx_open(&c, st, r, now_ns) == -1)
		return -1;
	for (int n = 0;; n++) {
		if (n > 0 && st->ret.phase == RET_CHECKPOINT)
			break;
		if (phase_run(&c, &done) == -1) {
			pass_reset(&st->ret);
			rc = -1;
			break;
		}
		if (done && phase_next(st)) {
			rc = 0;
			break;
		}
		if (now_monotonic_ns() - start >= budget_ns)
			break;
	}
	ctx_close(&c);
	return rc;
}
