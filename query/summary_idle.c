/*
 * summary_idle: a card's idle power, learned from its samples with busy 0
 * over the look-back (summary_priv.h), the span it is learned over, and
 * the figures learned for one span, kept for the next windows of the
 * same span (contract in summary.h, struct summary_idle_cache).
 */
#include <stdlib.h>

#include "pragma.h"
#include "summary.h"
#include "summary_priv.h"

void
summary_idle_span(const struct summary *s, int64_t *lo, int64_t *hi)
{
	int64_t a = s->begin_ns - s->idle_lookback_ns;

	*lo = a - a % SUMMARY_IDLE_STEP_NS;
	*hi = s->end_ns - s->end_ns % SUMMARY_IDLE_STEP_NS;
}

void
summary_idle_cache_clear(struct summary_idle_cache *cache)
{
	free(cache->cards);
	cache->cards = NULL;
	cache->ncards = 0;
	cache->valid = false;
}

const struct summary_idle_card *
summary_idle_cache_card(const struct summary_idle_cache *cache, int device)
{
	for (size_t i = 0; i < cache->ncards; i++)
		if (cache->cards[i].device == device)
			return &cache->cards[i];
	return NULL;
}

bool
summary_idle_cache_fits(const struct summary_idle_cache *cache,
    const struct summary *s)
{
	int64_t lo, hi;

	if (!cache->valid)
		return false;
	summary_idle_span(s, &lo, &hi);
	if (lo != cache->lo || hi != cache->hi)
		return false;
	for (size_t i = 0; i < s->ncards; i++)
		if (summary_idle_cache_card(cache, s->cards[i].device) == NULL)
			return false;
	return true;
}

void
summary_idle_cache_keep(const struct summary *s,
    struct summary_idle_cache *cache)
{
	summary_idle_cache_clear(cache);
	if (s->ncards == 0 ||
	    (cache->cards = calloc(s->ncards, sizeof(*cache->cards))) == NULL)
		return;
	for (size_t i = 0; i < s->ncards; i++)
		cache->cards[i] = (struct summary_idle_card){
			.device = s->cards[i].device,
			.has = s->cards[i].has_idle,
			.idle_w = s->cards[i].idle_w,
			.samples = s->cards[i].idle_samples,
		};
	cache->ncards = s->ncards;
	summary_idle_span(s, &cache->lo, &cache->hi);
	cache->valid = true;
}

/* ---- learning it ---- */

static bool
push_span(struct summary_span **v, size_t *n, size_t *cap,
    struct summary_span x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct summary_span *p = realloc(*v, nc * sizeof(*p));

		if (p == NULL)
			return false;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return true;
}

/*
 * With the rule: keep an aiu-smi row's interval (busy 0: the query's
 * condition) and a file row's power, to be matched by idle_file_rows.
 */
static int
note_idle(struct summary_ctx *x, struct summary_acc *a, sqlite3_stmt *s)
{
	int64_t ts = sqlite3_column_int64(s, 0);
	int64_t ival;
	int64_t mant;
	int scale;

	if (!summary_row_interval(s, &ival))
		return 0;
	if (sqlite3_column_int(s, 4) == 0)
		return push_span(&a->ispan, &a->nispan, &a->iscap,
		    (struct summary_span){ ts - ival, ts, 0 }) ? 0 : -1;
	if (!summary_row_value(s, 3, &x->k[K_PWR], &mant, &scale))
		return 0;
	return push_span(&a->fpwr, &a->nfpwr, &a->fpcap,
	    (struct summary_span){ ts, ts, summary_as_double(mant, scale) }) ?
	    0 : -1;
}

/*
 * A file row is idle when an aiu-smi row with busy 0 covers its stamp:
 * both lists are in time order (the query's), so one merge walk.
 */
static int
idle_file_rows(struct summary_acc *a)
{
	size_t j = 0;

	for (size_t i = 0; i < a->nfpwr; i++) {
		int64_t t = a->fpwr[i].hi;

		while (j < a->nispan && a->ispan[j].hi < t)
			j++;
		if (j < a->nispan && a->ispan[j].lo < t &&
		    !summary_push(&a->idle, &a->nidle, &a->icap, a->fpwr[i].v))
			return -1;
	}
	return 0;
}

/*
 * The idle power of each card: the median of its power values with busy
 * 0; under the rule, a card whose power comes from its file rows takes
 * those of them that an aiu-smi row with busy 0 covers.
 */
int
summary_learn_idle(struct summary_ctx *x)
{
	sqlite3_stmt *s;
	int64_t lo, hi;
	int rc;

	if (!x->k[K_PWR].present || !x->k[K_BUSY].present)
		return 0;
	if ((s = summary_select(x, true)) == NULL)
		return -1;
	summary_idle_span(x->s, &lo, &hi);
	sqlite3_bind_int64(s, 1, lo);
	sqlite3_bind_int64(s, 2, hi);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int device = sqlite3_column_int(s, 1);
		int64_t mant;
		int scale;
		size_t i;

		for (i = 0; i < x->s->ncards; i++)
			if (x->s->cards[i].device == device)
				break;
		if (i == x->s->ncards)
			continue;
		if (x->b.on && note_idle(x, &x->a[i], s) == -1) {
			sqlite3_finalize(s);
			return summary_nomem();
		}
		if ((x->b.on && sqlite3_column_int(s, 4) != 0) ||
		    !summary_row_value(s, 3, &x->k[K_PWR], &mant, &scale))
			continue;
		if (!summary_push(&x->a[i].idle, &x->a[i].nidle, &x->a[i].icap,
		    summary_as_double(mant, scale))) {
			sqlite3_finalize(s);
			return summary_nomem();
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE && sql_is_damage(sqlite3_errcode(x->db))) {
		/*
		 * The look-back is cut: no idle figures rather than wrong
		 * ones.  The window's own rows are whole (not damaged).
		 */
		for (size_t i = 0; i < x->s->ncards; i++)
			x->a[i].nidle = x->a[i].nfpwr = x->a[i].nispan = 0;
		return 0;
	}
	if (rc != SQLITE_DONE)
		return -1;
	for (size_t i = 0; i < x->s->ncards; i++)
		if (idle_file_rows(&x->a[i]) == -1)
			return summary_nomem();
	return 0;
}

/* Point each card at its cached idle figures; false if the cache does not fit. */
bool
summary_idle_from_cache(struct summary_ctx *x,
    const struct summary_idle_cache *cache)
{
	if (!summary_idle_cache_fits(cache, x->s))
		return false;
	for (size_t i = 0; i < x->s->ncards; i++)
		x->a[i].known = summary_idle_cache_card(cache,
		    x->s->cards[i].device);
	return true;
}
