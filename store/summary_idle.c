/*
 * summary_idle: the idle power each card had, as learned for one window's
 * summary, kept for the next ones that end close by (contract in
 * summary.h, struct summary_idle_cache).
 */
#include <stdlib.h>

#include "summary.h"

void
summary_idle_cache_clear(struct summary_idle_cache *cache)
{
	free(cache->cards);
	*cache = (struct summary_idle_cache){ .valid = false };
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
	int64_t d;

	if (!cache->valid)
		return false;
	d = s->end_ns - cache->end_ns;
	if (cache->lookback_ns != s->idle_lookback_ns ||
	    d > SUMMARY_IDLE_REUSE_NS || d < -SUMMARY_IDLE_REUSE_NS)
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
	cache->end_ns = s->end_ns;
	cache->lookback_ns = s->idle_lookback_ns;
	cache->valid = true;
}
