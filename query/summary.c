/*
 * summary: a window's summary computed (summary.h): the walk over its
 * pieces, one per epoch of the host clock it spans, each card's gaps
 * carried from piece to piece, and on past a damaged page, with the
 * sentence that says how many rows it cost.  What is read is
 * summary_query.c's, what a row adds to its card summary_card.c's, the
 * idle power summary_idle.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbread.h"
#include "schema.h"
#include "pragma.h"
#include "summary.h"
#include "summary_priv.h"

/* A read met a damaged page: keep SQLite's message (the first one). */
static void
note_damage(struct summary_ctx *x)
{
	if (!x->s->damaged)
		snprintf(x->s->damage, sizeof(x->s->damage), "%s",
		    sqlite3_errmsg(x->db));
	x->s->damaged = true;
}

/*
 * The read of the window's rows (s, bound) stopped at a damaged page
 * after the row stamped last_ts (0: before any).  Read the stamps back
 * from the window's far end down to the damage, and go on with s from
 * the earliest of them, so that the rows after the damage count too;
 * estimate the rows lost in between from each card's interval.
 */
static int
read_past_damage(struct summary_ctx *x, sqlite3_stmt *s, int64_t last_ts)
{
	int64_t lo = last_ts != 0 ? last_ts : x->lo, first = 0;
	int step;

	note_damage(x);
	x->s->unread_rows = -1;
	if (summary_after_damage(x->db, lo, x->hi + SUMMARY_MAX_INTERVAL_NS,
	    &first) == -1)
		return -1;
	if (first != 0 && first > lo) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, first);
		while ((step = sqlite3_step(s)) == SQLITE_ROW)
			if (summary_add_row(x, s) == -1)
				return -1;
		if (step != SQLITE_DONE &&
		    !sql_is_damage(sqlite3_errcode(x->db)))
			return -1;
	}
	/* the span no row could be read in, and each card's cadence */
	if (x->s->ncards > 0) {
		int64_t hi = first != 0 ? first : x->hi;

		if (hi > x->hi)
			hi = x->hi;
		if (lo < x->lo)
			lo = x->lo;
		x->s->unread_rows = 0;
		for (size_t i = 0; i < x->s->ncards; i++) {
			int64_t ival = x->s->cards[i].max_interval_ms * 1000000;

			if (ival > 0 && hi > lo)
				x->s->unread_rows += (hi - lo - 1) / ival;
		}
	}
	return 0;
}

int
summary_after_damage(sqlite3 *db, int64_t after_ns, int64_t below_ns,
    int64_t *first)
{
	sqlite3_stmt *back;
	int64_t at = 0;
	int step;

	*first = 0;
	if (sqlite3_prepare_v2(db, "SELECT " SCHEMA_C_TS " FROM "
	    SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_TS " > ?1 AND " SCHEMA_C_TS
	    " < ?2 ORDER BY " SCHEMA_C_TS " DESC", -1, &back, NULL) !=
	    SQLITE_OK)
		return -1;
	sqlite3_bind_int64(back, 1, after_ns);
	sqlite3_bind_int64(back, 2, below_ns);
	while ((step = sqlite3_step(back)) == SQLITE_ROW)
		at = sqlite3_column_int64(back, 0);
	sqlite3_finalize(back);
	if (step != SQLITE_DONE && !sql_is_damage(sqlite3_errcode(db)))
		return -1;
	/*
	 * Read back to the damage, or through to after_ns (then the damage
	 * is where this order does not lead: nothing after it to add).
	 */
	*first = step == SQLITE_DONE ? below_ns : at;
	return 0;
}

void
summary_damage_note(const struct summary *s, const char *file, char *buf,
    size_t len)
{
	if (s->unread_rows >= 0)
		snprintf(buf, len, "about %lld rows " SUMMARY_DAMAGE_MARK
		    "%s): %s", (long long)s->unread_rows, file, s->damage);
	else
		snprintf(buf, len, "rows " SUMMARY_DAMAGE_MARK "%s): %s", file,
		    s->damage);
}

bool
summary_damage_find(const char *end_note, char *buf, size_t len)
{
	const char *m, *from, *to;

	if (end_note == NULL || (m = strstr(end_note, SUMMARY_DAMAGE_MARK)) ==
	    NULL)
		return false;
	/* notes are joined with "; ": the sentence is the one around m */
	for (from = m; from > end_note && !(from[-1] == ' ' &&
	    from - 1 > end_note && from[-2] == ';'); from--)
		;
	if ((to = strstr(m, "; ")) == NULL)
		to = m + strlen(m);
	if (len > 0)
		snprintf(buf, len, "%.*s", (int)(to - from), from);
	return true;
}

int
summary_compute(sqlite3 *db, int64_t id, int64_t begin_ns, int64_t end_ns,
    int64_t idle_lookback_ns, int64_t now_ns, struct summary *out)
{
	return summary_compute_cached(db, id, begin_ns, end_ns,
	    idle_lookback_ns, now_ns, NULL, out);
}

int
summary_compute_cached(sqlite3 *db, int64_t id, int64_t begin_ns,
    int64_t end_ns, int64_t idle_lookback_ns, int64_t now_ns,
    struct summary_idle_cache *cache, struct summary *out)
{
	struct summary_ctx x = { .db = db, .s = out };
	struct db_piece *p = NULL;
	size_t np = 0;
	int64_t last_ts = 0;
	bool reused;
	sqlite3_stmt *s = NULL;
	int rc = -1, step = SQLITE_DONE;

	memset(out, 0, sizeof(*out));
	out->window_id = id;
	out->begin_ns = begin_ns;
	out->end_ns = end_ns < begin_ns ? begin_ns : end_ns;
	out->computed_ns = now_ns;
	out->idle_lookback_ns = idle_lookback_ns < 0 ? 0 : idle_lookback_ns;
	/* one piece per epoch of the host clock the window spans */
	if (db_window_pieces_of(db, id, begin_ns, end_ns, &p, &np) == -1)
		goto done;
	for (size_t i = 0; i < np; i++)
		x.span_ns += p[i].hi_ns > p[i].lo_ns ? p[i].hi_ns - p[i].lo_ns :
		    0;
	/* a step crossed it: as long as its pieces, from its begin */
	if (np > 1)
		out->end_ns = begin_ns + x.span_ns;
	if (summary_load_catalog(&x) == -1 || summary_load_coarse(&x) == -1 ||
	    summary_rule_columns(&x) == -1 ||
	    (s = summary_select(&x, false)) == NULL)
		goto done;
	for (size_t i = 0; i < np && step == SQLITE_DONE; i++) {
		x.lo = p[i].lo_ns;
		x.clip_lo = i > 0 ? p[i].from_ns : p[i].lo_ns;
		x.hi = p[i].hi_ns < p[i].lo_ns ? p[i].lo_ns : p[i].hi_ns;
		/* each card's gaps from the piece's start */
		for (size_t c = 0; i > 0 && c < out->ncards; c++) {
			if (x.a[c].last_ts != 0)
				summary_gap(x.a[c].c, x.a[c].last_ts,
				    p[i - 1].hi_ns, x.a[c].last_ival);
			x.a[c].last_ts = 0;
		}
		db_bind_epoch(s, p[i].epoch);
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, p[i].from_ns);
		sqlite3_bind_int64(s, 2, x.hi);
		sqlite3_bind_int64(s, 3, x.hi + SUMMARY_MAX_INTERVAL_NS);
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			last_ts = sqlite3_column_int64(s, 0);
			if (summary_add_row(&x, s) == -1)
				goto done;
		}
	}
	/* a damaged page: the figures of what can be read, and the damage */
	if (step != SQLITE_DONE && (!sql_is_damage(sqlite3_errcode(db)) ||
	    read_past_damage(&x, s, last_ts) == -1))
		goto done;
	reused = cache != NULL && summary_idle_from_cache(&x, cache);
	if (cache != NULL)
		reused ? cache->hits++ : cache->misses++;
	if (!reused && summary_learn_idle(&x) == -1)
		goto done;
	summary_finish(&x);
	if (cache != NULL && !reused)
		summary_idle_cache_keep(out, cache);
	rc = 0;
done:
	sqlite3_finalize(s);
	free(p);
	summary_ctx_free(&x);
	if (rc == -1)
		summary_free(out);
	return rc;
}
