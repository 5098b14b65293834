/*
 * bdrun: a trace's breakdown with its counters (bdrun.h).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdrun.h"
#include "client.h"
#include "dbread.h"
#include "pcielink.h"

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

/* Each card's PCIe link: its bus ID by the device map, its row of cards. */
static int
read_links(sqlite3 *db, const struct steps_request *sr, struct bd_run *r)
{
	struct db_devmap map;
	struct db_card *inv = NULL;
	size_t ninv = 0;
	int rc;

	if ((rc = db_devmap_load(db, &map)) != CLIENT_EXIT_OK)
		return rc;
	/* an inventory that cannot be read leaves every link unknown */
	if (db_cards(db, &inv, &ninv) != 0)
		ninv = 0;
	if ((r->links = calloc(r->res.ncards + 1, sizeof(*r->links))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	r->nlinks = r->res.ncards;
	for (size_t i = 0; i < r->nlinks; i++) {
		struct bd_link *l = &r->links[i];
		const char *bus;

		l->card = r->res.cards[i].card;
		bus = db_devmap_bus_id(&map, (int)l->card, sr->t->start_ns);
		if (bus[0] == '\0')
			bus = db_devmap_bus_id(&map, (int)l->card,
			    sr->t->end_ns);
		for (size_t k = 0; bus[0] != '\0' && k < ninv; k++) {
			if (inv[k].bus_id == NULL ||
			    strcmp(inv[k].bus_id, bus) != 0)
				continue;
			snprintf(l->speed, sizeof(l->speed), "%s",
			    inv[k].link_speed != NULL ? inv[k].link_speed : "");
			l->width = inv[k].link_width > 0 ? inv[k].link_width :
			    0;
			l->has_gbps = pcie_link_gbps(l->speed, l->width,
			    &l->gbps);
		}
	}
	db_cards_free(inv, ninv);
	db_devmap_free(&map);
	return CLIENT_EXIT_OK;
}

int
bd_run_load(sqlite3 *db, const struct steps_request *sr,
    struct bd_trace *bt, size_t nstep_names, int64_t threshold,
    bool innermost, struct bd_run *out)
{
	const struct trace_step **order;
	size_t dropped;
	int rc;

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
	if (db == NULL)
		return CLIENT_EXIT_OK;
	rc = read_counters(db, sr, out);
	return rc == CLIENT_EXIT_OK ? read_links(db, sr, out) : rc;
}

const struct bd_link *
bd_run_link(const struct bd_run *r, int64_t card)
{
	for (size_t i = 0; i < r->nlinks; i++)
		if (r->links[i].card == card)
			return &r->links[i];
	return NULL;
}

void
bd_run_evidence(const struct bd_run *r, const struct steps_mean *m,
    int64_t card, struct bd_evidence *ev)
{
	const struct bd_link *l = bd_run_link(r, card);

	memset(ev, 0, sizeof(*ev));
	if (l != NULL && l->has_gbps) {
		ev->has_link = true;
		ev->link_gbps = l->gbps;
	}
	if (m == NULL)
		return;
	ev->has_busy = m->has_busy;
	ev->busy_pct = m->busy_pct;
	ev->has_mem = m->has_bw[STEPS_RDMEM] && m->has_bw[STEPS_WRMEM];
	ev->mem_gibps = m->bw_gibps[STEPS_RDMEM] + m->bw_gibps[STEPS_WRMEM];
	ev->has_pcie = m->has_bw[STEPS_RXPCI] && m->has_bw[STEPS_TXPCI];
	ev->rx_gibps = m->bw_gibps[STEPS_RXPCI];
	ev->tx_gibps = m->bw_gibps[STEPS_TXPCI];
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
	free(r->links);
	bd_result_free(&r->res);
	memset(r, 0, sizeof(*r));
}
