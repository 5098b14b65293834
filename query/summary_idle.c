/*
 * summary_idle: the span a window's idle power is learned over, and the
 * figures learned for one span, kept for the next windows of the same
 * span (contract in summary.h, struct summary_idle_cache).
 */
#include <stdlib.h>

#include "summary.h"

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
