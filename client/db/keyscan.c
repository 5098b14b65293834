/* keyscan: reading a damaged table past its bad pages (contract in keyscan.h). */
#include "keyscan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a + b, or INT64_MAX past it */
static int64_t
add_sat(int64_t a, uint64_t b)
{
	uint64_t room = (uint64_t)INT64_MAX - (uint64_t)a;	/* mod 2^64 */

	return b >= room ? INT64_MAX : (int64_t)((uint64_t)a + b);
}

enum keyscan_probe
keyscan_resume(keyscan_probe_fn probe, void *ctx, int64_t lo, int64_t *from,
    int64_t *key, unsigned *probes)
{
	enum keyscan_probe r, good_r;
	int64_t bad = lo, good, good_key, k = 0, p = lo;
	uint64_t step = 1;
	bool any_bad = false;

	/* gallop: lo, lo+1, lo+3, lo+7, ... until a probe reads */
	for (;;) {
		(*probes)++;
		if ((r = probe(ctx, p, &k)) != KEYSCAN_ERROR)
			break;
		bad = p;
		any_bad = true;
		if (p == INT64_MAX) {
			*from = INT64_MAX;
			return KEYSCAN_ERROR;
		}
		p = add_sat(lo, step);
		step = step > UINT64_MAX / 2 ? UINT64_MAX : step * 2;
	}
	good = p;
	good_r = r;
	good_key = k;
	/* bisect: bad fails, good reads; the first that reads after bad */
	/* the distance as unsigned: from INT64_MIN it exceeds INT64_MAX */
	while (any_bad && (uint64_t)good - (uint64_t)bad > 1) {
		int64_t mid = (int64_t)((uint64_t)bad +
		    ((uint64_t)good - (uint64_t)bad) / 2);

		(*probes)++;
		if ((r = probe(ctx, mid, &k)) == KEYSCAN_ERROR)
			bad = mid;
		else {
			good = mid;
			good_r = r;
			good_key = k;
		}
	}
	*from = good;
	*key = good_key;
	return good_r;
}

uint64_t
keyscan_gap_rows(uint64_t intervals, double span, int64_t prev, int64_t next)
{
	double in_gap;

	if (intervals == 0 || span <= 0 || next <= prev)
		return 0;
	in_gap = round((double)intervals / span *
	    ((double)next - (double)prev)) - 1.0;
	return in_gap > 0 ? (uint64_t)in_gap : 0;
}

uint64_t
keyscan_lost_estimate(const struct keyscan *ks)
{
	/* the spacing of rows where they could be read: the gaps left out */
	double span = (double)ks->max_key - (double)ks->min_key;
	uint64_t intervals = ks->rows > 0 ? ks->rows - 1 : 0, n = 0;

	if (!ks->have_keys)
		return 0;
	for (size_t i = 0; i < ks->nlost; i++)
		if (ks->lost[i].have_prev && ks->lost[i].have_next &&
		    intervals > 0) {
			span -= (double)ks->lost[i].next - (double)ks->lost[i].prev;
			intervals--;
		}
	for (size_t i = 0; i < ks->nlost; i++)
		if (ks->lost[i].have_prev && ks->lost[i].have_next)
			n += keyscan_gap_rows(intervals, span,
			    ks->lost[i].prev, ks->lost[i].next);
	return n;
}

/* ---- the SQL side ---- */

struct scan {
	struct keyscan *ks;
	sqlite3_stmt *fwd, *probe, *back;
	int ncols;
	sqlite3_value **vals;	/* ncols, for the row being handed over */
};

static void
note_key(struct keyscan *ks, int64_t k)
{
	if (!ks->have_keys || k < ks->min_key)
		ks->min_key = k;
	if (!ks->have_keys || k > ks->max_key)
		ks->max_key = k;
	ks->have_keys = true;
}

/* Prepare sql (sqlite3_mprintf's, freed here) into *out. */
static int
prepare(struct keyscan *ks, char *sql, sqlite3_stmt **out)
{
	int rc;

	if (sql == NULL) {
		snprintf(ks->err, sizeof(ks->err), "out of memory");
		return -1;
	}
	rc = sqlite3_prepare_v2(ks->db, sql, -1, out, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		snprintf(ks->err, sizeof(ks->err), "%s: %s", ks->table,
		    sqlite3_errmsg(ks->db));
		return -1;
	}
	return 0;
}

static enum keyscan_probe
probe_sql(void *ctx, int64_t from, int64_t *key)
{
	struct scan *sc = ctx;
	int rc;

	sqlite3_reset(sc->probe);
	sqlite3_bind_int64(sc->probe, 1, from);
	if ((rc = sqlite3_step(sc->probe)) == SQLITE_ROW)
		*key = sqlite3_column_int64(sc->probe, 0);
	sqlite3_reset(sc->probe);
	return rc == SQLITE_ROW ? KEYSCAN_ROW : rc == SQLITE_DONE ?
	    KEYSCAN_END : KEYSCAN_ERROR;
}

static int
hand_over(struct scan *sc, sqlite3_value **vals, int64_t key)
{
	struct keyscan *ks = sc->ks;

	if (ks->row(ks->ctx, vals, sc->ncols) == -1) {
		ks->stopped = true;
		snprintf(ks->err, sizeof(ks->err), "%s: a row could not be "
		    "stored", ks->table);
		return -1;
	}
	ks->rows++;
	note_key(ks, key);
	return 0;
}

/*
 * Forward from from: 1 at the end of the table, 0 after SQLite failed
 * (*read: rows read, the last *last), -1 if a row stopped it.
 */
static int
forward(struct scan *sc, int64_t from, uint64_t *read, int64_t *last)
{
	int rc;

	*read = 0;
	sqlite3_reset(sc->fwd);
	sqlite3_bind_int64(sc->fwd, 1, from);
	while ((rc = sqlite3_step(sc->fwd)) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(sc->fwd, 0);

		for (int i = 0; i < sc->ncols; i++)
			sc->vals[i] = sqlite3_column_value(sc->fwd, i + 1);
		if (hand_over(sc, sc->vals, k) == -1) {
			sqlite3_reset(sc->fwd);
			return -1;
		}
		(*read)++;
		*last = k;
	}
	sqlite3_reset(sc->fwd);
	return rc == SQLITE_DONE ? 1 : 0;
}

/* The rows read backward: their values, copied, handed over ascending. */
struct held {
	sqlite3_value **vals;	/* n rows of ncols */
	int64_t *keys;
	size_t n, cap;
};

static void
held_free(struct held *h, int ncols)
{
	for (size_t i = 0; i < h->n * (size_t)ncols; i++)
		sqlite3_value_free(h->vals[i]);
	free(h->vals);
	free(h->keys);
	memset(h, 0, sizeof(*h));
}

static int
held_add(struct held *h, sqlite3_stmt *s, int ncols)
{
	if (h->n == h->cap) {
		size_t cap = h->cap > 0 ? h->cap * 2 : 64;
		sqlite3_value **v = reallocarray(h->vals, cap * (size_t)ncols,
		    sizeof(*v));
		int64_t *k;

		if (v == NULL)
			return -1;
		h->vals = v;
		if ((k = reallocarray(h->keys, cap, sizeof(*k))) == NULL)
			return -1;
		h->keys = k;
		h->cap = cap;
	}
	h->keys[h->n] = sqlite3_column_int64(s, 0);
	for (int i = 0; i < ncols; i++) {
		sqlite3_value *v = sqlite3_value_dup(sqlite3_column_value(s,
		    i + 1));

		if (v == NULL) {
			for (int j = 0; j < i; j++)
				sqlite3_value_free(h->vals[h->n *
				    (size_t)ncols + (size_t)j]);
			return -1;
		}
		h->vals[h->n * (size_t)ncols + (size_t)i] = v;
	}
	h->n++;
	return 0;
}

static int
add_lost(struct keyscan *ks, const struct keyscan_lost *l)
{
	struct keyscan_lost *n = reallocarray(ks->lost, ks->nlost + 1,
	    sizeof(*n));

	if (n == NULL) {
		snprintf(ks->err, sizeof(ks->err), "out of memory");
		return -1;
	}
	ks->lost = n;
	ks->lost[ks->nlost++] = *l;
	return 0;
}

/*
 * Keys l->from..l->to were skipped: read them backward from the top until
 * SQLite fails, hand those rows over in key order, and record what is
 * left below them as lost.
 */
static int
fill_back(struct scan *sc, struct keyscan_lost *l)
{
	struct keyscan *ks = sc->ks;
	struct held h = { 0 };
	int rc = 0, step;

	sqlite3_reset(sc->back);
	sqlite3_bind_int64(sc->back, 1, l->from);
	sqlite3_bind_int64(sc->back, 2, l->to);
	while ((step = sqlite3_step(sc->back)) == SQLITE_ROW)
		if (held_add(&h, sc->back, sc->ncols) == -1) {
			snprintf(ks->err, sizeof(ks->err), "out of memory");
			rc = -1;
			break;
		}
	sqlite3_reset(sc->back);
	for (size_t i = h.n; rc == 0 && i-- > 0;)
		rc = hand_over(sc, &h.vals[i * (size_t)sc->ncols], h.keys[i]);
	if (rc == 0 && step != SQLITE_DONE) {
		/* what the backward read did not reach is lost */
		if (h.n > 0) {
			l->to = h.keys[h.n - 1] - 1;
			l->have_next = true;
			l->next = h.keys[h.n - 1];
		}
		if (l->to >= l->from)
			rc = add_lost(ks, l);
	}
	held_free(&h, sc->ncols);
	return rc;
}

/* Prepare the three statements; 0 or -1 with ks->err. */
static int
scan_prepare(struct scan *sc)
{
	struct keyscan *ks = sc->ks;

	if (prepare(ks, sqlite3_mprintf("SELECT %s, %s FROM \"%w\" WHERE "
	    "%s >= ?1 ORDER BY %s", ks->key, ks->cols, ks->table, ks->key,
	    ks->key), &sc->fwd) == -1 ||
	    prepare(ks, sqlite3_mprintf("SELECT %s FROM \"%w\" WHERE %s >= ?1 "
	    "ORDER BY %s LIMIT 1", ks->key, ks->table, ks->key, ks->key),
	    &sc->probe) == -1 ||
	    prepare(ks, sqlite3_mprintf("SELECT %s, %s FROM \"%w\" WHERE %s "
	    "BETWEEN ?1 AND ?2 ORDER BY %s DESC", ks->key, ks->cols, ks->table,
	    ks->key, ks->key), &sc->back) == -1)
		return -1;
	sc->ncols = sqlite3_column_count(sc->fwd) - 1;
	if ((sc->vals = calloc((size_t)sc->ncols + 1, sizeof(*sc->vals))) ==
	    NULL) {
		snprintf(ks->err, sizeof(ks->err), "out of memory");
		return -1;
	}
	return 0;
}

int
keyscan_run(struct keyscan *ks)
{
	struct scan sc = { .ks = ks };
	int64_t from = INT64_MIN, last = 0, resume, key = 0, lost_from, search;
	bool have_last = false, resumed = false;
	uint64_t read;
	int rc = -1, r;

	ks->rows = 0;
	ks->nlost = 0;
	ks->have_keys = false;
	ks->stopped = false;
	ks->err[0] = '\0';
	if (scan_prepare(&sc) == -1)
		goto out;
	for (;;) {
		int64_t pass_last = 0;

		if ((r = forward(&sc, from, &read, &pass_last)) == -1)
			goto out;
		if (read > 0) {
			have_last = true;
			last = pass_last;
		}
		if (r == 1)
			break;
		/*
		 * SQLite failed past the last row read; or at the seek; or on
		 * the row a probe found at from, which the probe could read but
		 * the full read cannot: that row is lost with the rest.
		 */
		if (read > 0) {
			if (last == INT64_MAX)
				break;
			lost_from = search = last + 1;
		} else if (resumed) {
			lost_from = from;
			search = key < INT64_MAX ? key + 1 : INT64_MAX;
		} else
			lost_from = search = from;
		r = keyscan_resume(probe_sql, &sc, search, &resume, &key,
		    &ks->probes);
		struct keyscan_lost l = { .from = lost_from, .to = INT64_MAX,
		    .have_prev = have_last, .prev = last };

		/* a probe that read at once leaves no range (and no resume-1) */
		bool gap = r == KEYSCAN_ERROR || resume > lost_from;

		if (r != KEYSCAN_ERROR && gap)
			l.to = resume - 1;
		if (r == KEYSCAN_ROW) {
			l.have_next = true;
			l.next = key;
		}
		if (resume == INT64_MAX && r == KEYSCAN_ROW &&
		    key == INT64_MAX && resumed && from == INT64_MAX)
			break;		/* nothing past the last key */
		if (gap && fill_back(&sc, &l) == -1)
			goto out;
		if (r != KEYSCAN_ROW)
			break;
		from = resume;
		resumed = true;
	}
	rc = 0;
out:
	sqlite3_finalize(sc.fwd);
	sqlite3_finalize(sc.probe);
	sqlite3_finalize(sc.back);
	free(sc.vals);
	return rc;
}

void
keyscan_free(struct keyscan *ks)
{
	free(ks->lost);
	ks->lost = NULL;
	ks->nlost = 0;
}
