/*
 * bdrun: a trace's breakdown with its counters (bdrun.h).
 */
#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "bdrun.h"
#include "client.h"

/* The counters of every step and every card's span (bd_run's numbering). */
static int
read_counters(sqlite3 *db, const struct steps_request *sr, struct bd_run *r)
{
	int64_t *lo, *hi, shift = sr->t->shift_ns;
	size_t n = r->nsteps + r->res.ncards;
	int rc;

	if ((lo = calloc(n + 1, sizeof(*lo))) == NULL ||
	    (hi = calloc(n + 1, sizeof(*hi))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct bd_window *w = i < r->nsteps ? NULL :
		    &r->res.cards[i - r->nsteps].total;

		lo[i] = (w != NULL ? w->lo : r->steps[i].lo) + shift;
		hi[i] = (w != NULL ? w->hi : r->steps[i].hi) + shift;
	}
	rc = steps_means(db, sr, lo, hi, n, &r->m, &r->nm);
	free(lo);
	free(hi);
	return rc;
}

int
bd_run_load(sqlite3 *db, const struct steps_request *sr,
    struct bd_trace *bt, size_t nstep_names, int64_t threshold,
    bool innermost, struct bd_run *out)
{
	const struct trace_step **order;
	size_t dropped;

	memset(out, 0, sizeof(*out));
	out->nsteps = steps_order(&sr->t->info, innermost, &order, &dropped);
	if ((out->steps = calloc(out->nsteps + 1, sizeof(*out->steps))) ==
	    NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < out->nsteps; i++)
		out->steps[i] = (struct bd_step){ order[i]->name,
		    order[i]->ts_ns, order[i]->ts_ns + (order[i]->dur_ns > 0 ?
		    order[i]->dur_ns : 0) };
	free(order);
	bd_trace_compute(bt, threshold, out->steps, out->nsteps, nstep_names,
	    &out->res);
	return db != NULL ? read_counters(db, sr, out) : CLIENT_EXIT_OK;
}

const struct steps_mean *
bd_run_counters(const struct bd_run *r, size_t w, int64_t card)
{
	size_t a = 0, b = r->nm, m;

	/* steps_means gives the rows by window, then card */
	while (a < b) {
		m = a + (b - a) / 2;
		if (r->m[m].window < w)
			a = m + 1;
		else
			b = m;
	}
	for (; a < r->nm && r->m[a].window == w; a++)
		if (r->m[a].device == card)
			return &r->m[a];
	return NULL;
}

void
bd_window_add(struct bd_window *sum, const struct bd_window *w, bool first)
{
	if (first) {
		memset(sum, 0, sizeof(*sum));
		sum->name = w->name;
		sum->lo = w->lo;
		sum->hi = w->hi;
	}
	sum->tm.span += w->tm.span;
	for (int c = 0; c < OPS_NCAT; c++)
		sum->tm.t[c] += w->tm.t[c];
	sum->tm.comm_compute += w->tm.comm_compute;
	for (int c = 0; c < BD_NIDLE; c++)
		sum->idle[c] += w->idle[c];
}

double
bd_classified_pct(const int64_t idle[BD_NIDLE])
{
	int64_t sum = 0;

	for (int c = 0; c < BD_NIDLE; c++)
		sum += idle[c];
	return sum != 0 ? 100.0 * (double)(sum - idle[BD_UNEXPLAINED]) /
	    (double)sum : 100;
}

void
bd_run_xcard(const struct bd_run *r, size_t s, size_t i, int64_t key,
    struct bd_xcard *out)
{
	const struct steps_mean *m = bd_run_counters(r, s,
	    r->res.cards[i].card);

	*out = (struct bd_xcard){ .card = key, .w = &r->res.cards[i].steps[s] };
	if (m != NULL) {
		out->has_busy = m->has_busy;
		out->busy_pct = m->busy_pct;
		out->has_energy = m->has_energy;
		out->energy_j = m->energy_j;
	}
}

bool
bd_run_across(const struct bd_run *r, struct bd_across *out)
{
	size_t nc = r->res.ncards;
	struct bd_xcard *c;
	int64_t *cards;

	memset(out, 0, sizeof(*out));
	if (nc < 2)
		return false;
	if ((c = calloc(nc, sizeof(*c))) == NULL ||
	    (cards = calloc(nc, sizeof(*cards))) == NULL ||
	    (out->steps = calloc(r->nsteps + 1, sizeof(*out->steps))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	out->nsteps = r->nsteps;
	for (size_t i = 0; i < nc; i++)
		cards[i] = r->res.cards[i].card;
	for (size_t s = 0; s < r->nsteps; s++) {
		for (size_t i = 0; i < nc; i++)
			bd_run_xcard(r, s, i, cards[i], &c[i]);
		bd_xstep(c, nc, &out->steps[s]);
	}
	bd_xrun(out->steps, out->nsteps, cards, nc, &out->run);
	free(c);
	free(cards);
	return true;
}

void
bd_across_free(struct bd_across *a)
{
	free(a->steps);
	bd_xrun_free(&a->run);
	memset(a, 0, sizeof(*a));
}

void
bd_run_free(struct bd_run *r)
{
	free(r->steps);
	free(r->m);
	bd_result_free(&r->res);
	memset(r, 0, sizeof(*r));
}
