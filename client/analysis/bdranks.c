/*
 * bdranks: the cards of every rank side by side (bdranks.h).
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdranks.h"
#include "client.h"

#define NONE	SIZE_MAX

/* A rank's step by its name and occurrence: the how-manieth of its name. */
struct named {
	const char *name;
	size_t	 occ;
	size_t	 step;			/* its place in --steps' order */
};

/* A rank's steps for matching: sorted by name and occurrence. */
struct step_index {
	struct named *by_name;
	size_t	*occ;			/* per step in order: its occurrence */
	size_t	 n;
};

static void *
zalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n + 1, size)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	return p;
}

static int
by_name_then_step(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	return (x->step > y->step) - (x->step < y->step);
}

static void
index_steps(const struct bd_run *r, struct step_index *ix)
{
	ix->n = r->nsteps;
	ix->by_name = zalloc(ix->n, sizeof(*ix->by_name));
	ix->occ = zalloc(ix->n, sizeof(*ix->occ));
	for (size_t s = 0; s < ix->n; s++)
		ix->by_name[s] = (struct named){ r->steps[s].name != NULL ?
		    r->steps[s].name : "", 0, s };
	qsort(ix->by_name, ix->n, sizeof(*ix->by_name), by_name_then_step);
	for (size_t i = 0; i < ix->n; i++) {
		if (i > 0 && strcmp(ix->by_name[i].name,
		    ix->by_name[i - 1].name) == 0)
			ix->by_name[i].occ = ix->by_name[i - 1].occ + 1;
		ix->occ[ix->by_name[i].step] = ix->by_name[i].occ;
	}
}

static int
by_name_then_occ(const void *key, const void *elem)
{
	const struct named *k = key, *e = elem;
	int c = strcmp(k->name, e->name);

	if (c != 0)
		return c;
	return (k->occ > e->occ) - (k->occ < e->occ);
}

/* The step of ix named name, occurrence occ, or NONE. */
static size_t
find_step(const struct step_index *ix, const char *name, size_t occ)
{
	struct named key = { name, occ, 0 };
	const struct named *hit = bsearch(&key, ix->by_name, ix->n,
	    sizeof(*ix->by_name), by_name_then_occ);

	return hit != NULL ? hit->step : NONE;
}

/* Whether two ranks are of the same host (both NULL: the one database). */
static bool
same_host(const struct bd_rank *a, const struct bd_rank *b)
{
	if (a->host == NULL || b->host == NULL)
		return a->host == b->host;
	return strcmp(a->host, b->host) == 0;
}

/* Whether every rank has a rank number of its own on its host. */
static bool
named_by_rank(const struct bd_rank *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!r[i].has_rank)
			return false;
		for (size_t j = 0; j < i; j++)
			if (r[j].rank == r[i].rank && same_host(&r[i], &r[j]))
				return false;
	}
	return true;
}

static void
label_ranks(const struct bd_rank *r, size_t n, struct bd_ranks *out)
{
	bool by_rank = named_by_rank(r, n);

	out->rank_label = zalloc(n, sizeof(*out->rank_label));
	for (size_t i = 0; i < n; i++) {
		char own[32];

		if (by_rank)
			snprintf(own, sizeof(own), "r%" PRId64, r[i].rank);
		else
			snprintf(own, sizeof(own), "t%zu", i);
		snprintf(out->rank_label[i], sizeof(out->rank_label[i]),
		    "%s%s%s", r[i].host != NULL ? r[i].host : "",
		    r[i].host != NULL ? ":" : "", own);
	}
}

static void
list_cards(const struct bd_rank *r, size_t n, struct bd_ranks *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		out->ncards += r[i].run->res.ncards;
	out->cards = zalloc(out->ncards, sizeof(*out->cards));
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < r[i].run->res.ncards; c++, k++) {
			struct bd_rcard *rc = &out->cards[k];

			rc->rank = i;
			rc->index = c;
			rc->card = r[i].run->res.cards[c].card;
			snprintf(rc->label, sizeof(rc->label), "%sc%" PRId64,
			    out->rank_label[i], rc->card);
		}
}

/* Add the step name, occurrence occ as one that some ranks lack. */
static void
add_partial(const struct step_index *ix, size_t n, const char *name,
    size_t occ, struct bd_ranks *out)
{
	struct bd_rstep *p = &out->partial[out->npartial++];

	p->name = name;
	p->in = zalloc(n, sizeof(*p->in));
	for (size_t j = 0; j < n; j++)
		if ((p->in[j] = find_step(&ix[j], name, occ) != NONE))
			p->nin++;
}

/*
 * Match the ranks' steps: at[m * n + j] is rank j's step of the m-th step
 * every rank has (the count returned); the others go to out->partial.
 */
static size_t
match_steps(const struct bd_rank *r, size_t n, const struct step_index *ix,
    size_t **at, struct bd_ranks *out)
{
	size_t total = 0, nm = 0;

	for (size_t j = 0; j < n; j++)
		total += ix[j].n;
	*at = zalloc(ix[0].n * n, sizeof(**at));
	out->partial = zalloc(total, sizeof(*out->partial));
	for (size_t s = 0; s < ix[0].n; s++) {
		const char *name = r[0].run->steps[s].name;
		size_t occ = ix[0].occ[s], found = 0;

		for (size_t j = 0; j < n; j++)
			if (((*at)[nm * n + j] = find_step(&ix[j], name, occ)) !=
			    NONE)
				found++;
		if (found == n)
			nm++;
		else
			add_partial(ix, n, name, occ, out);
	}
	/* the steps the first rank lacks, each once: by the first that has it */
	for (size_t j = 1; j < n; j++)
		for (size_t s = 0; s < ix[j].n; s++) {
			const char *name = r[j].run->steps[s].name;
			size_t occ = ix[j].occ[s], k = 0;

			while (k < j && find_step(&ix[k], name, occ) == NONE)
				k++;
			if (k == j)
				add_partial(ix, n, name, occ, out);
		}
	return nm;
}

void
bd_ranks_match(const struct bd_rank *r, size_t n, struct bd_ranks *out)
{
	struct step_index *ix;

	memset(out, 0, sizeof(*out));
	out->nranks = n;
	label_ranks(r, n, out);
	list_cards(r, n, out);
	if (n == 0) {
		out->at = zalloc(0, sizeof(*out->at));
		out->partial = zalloc(0, sizeof(*out->partial));
		return;
	}
	ix = zalloc(n, sizeof(*ix));
	for (size_t j = 0; j < n; j++)
		index_steps(r[j].run, &ix[j]);
	out->nmatched = match_steps(r, n, ix, &out->at, out);
	for (size_t j = 0; j < n; j++) {
		free(ix[j].by_name);
		free(ix[j].occ);
	}
	free(ix);
}

size_t
bd_ranks_step(const struct bd_ranks *x, size_t m, size_t j)
{
	return x->at[m * x->nranks + j];
}

bool
bd_ranks_across(const struct bd_rank *r, size_t n, struct bd_ranks *out)
{
	struct bd_xcard *xc;
	int64_t *keys;
	size_t nm;

	bd_ranks_match(r, n, out);
	if (n == 0 || out->ncards < 2) {
		bd_ranks_free(out);
		return false;
	}
	nm = out->nmatched;
	xc = zalloc(out->ncards, sizeof(*xc));
	keys = zalloc(out->ncards, sizeof(*keys));
	for (size_t k = 0; k < out->ncards; k++)
		keys[k] = (int64_t)k;
	out->across.steps = zalloc(nm, sizeof(*out->across.steps));
	out->across.nsteps = nm;
	for (size_t m = 0; m < nm; m++) {
		size_t k = 0;

		for (size_t j = 0; j < n; j++)
			for (size_t c = 0; c < r[j].run->res.ncards; c++, k++)
				bd_run_xcard(r[j].run, bd_ranks_step(out, m, j), c,
				    keys[k], &xc[k]);
		bd_xstep(xc, out->ncards, &out->across.steps[m]);
	}
	bd_xrun(out->across.steps, nm, keys, out->ncards, &out->across.run);
	free(xc);
	free(keys);
	return true;
}

const struct bd_rcard *
bd_ranks_card(const struct bd_ranks *x, int64_t key)
{
	return key >= 0 && (uint64_t)key < x->ncards ? &x->cards[key] : NULL;
}

const char *
bd_ranks_card_name(const struct bd_ranks *x, int64_t key, bool alone,
    char *buf, size_t len)
{
	const struct bd_rcard *c;

	if (x != NULL)
		return (c = bd_ranks_card(x, key)) != NULL ? c->label : "";
	snprintf(buf, len, "%s%" PRId64, alone ? "" : "c", key);
	return buf;
}

void
bd_xrun_write(FILE *fp, const struct bd_xrun *r, const struct bd_ranks *x,
    bool sentence)
{
	char who[32];

	fprintf(fp, "%s in %zu step%s:", sentence ? "The straggler" :
	    "Straggler", r->nsteps, r->nsteps == 1 ? "" : "s");
	for (size_t i = 0; i < r->ncards; i++)
		fprintf(fp, "%s %s%s %zu", i ? "," : "", x != NULL ? "" :
		    "card ", bd_ranks_card_name(x, r->cards[i], true, who,
		    sizeof(who)), r->straggler[i]);
	if (r->ntime > 0)
		fprintf(fp, "%s spread: step time %.3f ms", sentence ?
		    ".  Mean" : "; mean", r->time_ns / 1e6);
	else if (sentence)
		fputc('.', fp);
	if (r->nbusy > 0)
		fprintf(fp, ", busy %.1f %%", r->busy_pct);
	if (r->nenergy > 0)
		fprintf(fp, ", energy %.3f J", r->energy_j);
	fputs(sentence && r->ntime > 0 ? ".\n" : "\n", fp);
}

void
bd_ranks_free(struct bd_ranks *x)
{
	for (size_t i = 0; i < x->npartial; i++)
		free(x->partial[i].in);
	free(x->partial);
	free(x->at);
	free(x->cards);
	free(x->rank_label);
	bd_across_free(&x->across);
	memset(x, 0, sizeof(*x));
}
