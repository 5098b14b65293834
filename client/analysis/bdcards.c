/*
 * bdcards: the cards side by side, step by step (bdcards.h).
 */
#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "bdcards.h"
#include "client.h"

static const struct {
	const char *name, *key;
	bool	 idle;
	int	 which;			/* an ops_category, or an enum bd_idle */
} xclasses[BD_XCLASSES] = {
	{ "compute", "compute", false, OPS_COMPUTE },
	{ "data movement", "data_movement", false, OPS_MEMORY },
	{ "communication", "communication", false, OPS_COMM },
	{ "other", "other", false, OPS_OTHER },
	{ "idle: host wait", "host_wait", true, BD_HOST_WAIT },
	{ "idle: launch gap", "launch_gap", true, BD_LAUNCH_GAP },
	{ "idle: sync", "sync", true, BD_SYNC },
	{ "idle: unexplained", "unexplained", true, BD_UNEXPLAINED },
};

const char *
bd_xclass_name(int k)
{
	return k >= 0 && k < BD_XCLASSES ? xclasses[k].name : "none";
}

const char *
bd_xclass_key(int k)
{
	return k >= 0 && k < BD_XCLASSES ? xclasses[k].key : "none";
}

int64_t
bd_xclass_ns(const struct bd_window *w, int k)
{
	return xclasses[k].idle ? w->idle[xclasses[k].which] :
	    w->tm.t[xclasses[k].which];
}

int64_t
bd_xstep_time(const struct bd_window *w)
{
	return w->tm.work_end - w->lo;
}

static int64_t
busy_ns(const struct bd_window *w)
{
	return w->tm.span - w->tm.t[OPS_IDLE];
}

/* Whether card a is slower than card b by bdcards.h's order. */
static bool
slower(const struct bd_xcard *a, const struct bd_xcard *b)
{
	int64_t ta = bd_xstep_time(a->w), tb = bd_xstep_time(b->w);
	int64_t ba = busy_ns(a->w), bb = busy_ns(b->w);

	if (ta != tb)
		return ta > tb;
	if (ba != bb)
		return ba > bb;
	return a->card < b->card;
}

/* Add card's value v to r. */
static void
range_add(struct bd_xrange *r, double v, int64_t card)
{
	if (r->n == 0 || v < r->min) {
		r->min = v;
		r->min_card = card;
	}
	if (r->n == 0 || v > r->max) {
		r->max = v;
		r->max_card = card;
	}
	r->n++;
	r->has = r->n >= 2;
}

void
bd_xstep(const struct bd_xcard *c, size_t n, struct bd_xstep *out)
{
	size_t s = 0, f = 0;
	int64_t best = 0;

	memset(out, 0, sizeof(*out));
	out->diff = -1;
	if (n == 0)
		return;
	out->name = c[0].w->name;
	for (size_t i = 1; i < n; i++) {
		if (slower(&c[i], &c[s]))
			s = i;
		if (slower(&c[f], &c[i]))
			f = i;
	}
	out->straggler = c[s].card;
	out->fastest = c[f].card;
	for (size_t i = 0; i < n; i++) {
		range_add(&out->time_ns, (double)bd_xstep_time(c[i].w),
		    c[i].card);
		if (c[i].has_busy)
			range_add(&out->busy_pct, c[i].busy_pct, c[i].card);
		if (c[i].has_energy)
			range_add(&out->energy_j, c[i].energy_j, c[i].card);
	}
	/* on a tie of step times the order, not the first card, decides */
	out->time_ns.max_card = out->straggler;
	out->time_ns.min_card = out->fastest;
	if (s == f)
		return;
	for (int k = 0; k < BD_XCLASSES; k++) {
		int64_t d = bd_xclass_ns(c[s].w, k) - bd_xclass_ns(c[f].w, k);

		if (d > best) {
			best = d;
			out->diff = k;
		}
	}
	if (out->diff >= 0) {
		out->diff_straggler_ns = bd_xclass_ns(c[s].w, out->diff);
		out->diff_fastest_ns = bd_xclass_ns(c[f].w, out->diff);
	}
}

/* Add r's spread to the sum *sum of *n steps. */
static void
spread_add(const struct bd_xrange *r, double *sum, size_t *n)
{
	if (!r->has)
		return;
	*sum += r->max - r->min;
	(*n)++;
}

void
bd_xrun(const struct bd_xstep *st, size_t nsteps, const int64_t *cards,
    size_t ncards, struct bd_xrun *out)
{
	memset(out, 0, sizeof(*out));
	out->nsteps = nsteps;
	out->ncards = ncards;
	if ((out->cards = calloc(ncards + 1, sizeof(*out->cards))) == NULL ||
	    (out->straggler = calloc(ncards + 1,
	    sizeof(*out->straggler))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (ncards > 0)
		memcpy(out->cards, cards, ncards * sizeof(*cards));
	for (size_t s = 0; s < nsteps; s++) {
		for (size_t i = 0; i < ncards; i++)
			if (cards[i] == st[s].straggler)
				out->straggler[i]++;
		spread_add(&st[s].time_ns, &out->time_ns, &out->ntime);
		spread_add(&st[s].busy_pct, &out->busy_pct, &out->nbusy);
		spread_add(&st[s].energy_j, &out->energy_j, &out->nenergy);
	}
	if (out->ntime > 0)
		out->time_ns /= (double)out->ntime;
	if (out->nbusy > 0)
		out->busy_pct /= (double)out->nbusy;
	if (out->nenergy > 0)
		out->energy_j /= (double)out->nenergy;
}

void
bd_xrun_free(struct bd_xrun *r)
{
	free(r->cards);
	free(r->straggler);
	memset(r, 0, sizeof(*r));
}
