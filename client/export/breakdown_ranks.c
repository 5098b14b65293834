/*
 * breakdown_ranks: every rank's cards side by side (breakdown_ranks.h).
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "bdranks.h"
#include "breakdown_cards.h"
#include "breakdown_evidence.h"
#include "breakdown_out.h"
#include "breakdown_ranks.h"
#include "client.h"
#include "format.h"
#include "json.h"
#include "jsonw.h"
#include "table.h"

/* The empty cells of a csv row between span_us and the across columns. */
#define CSV_GAP		17

/* The steps that some ranks lack named on the table and stderr, at most. */
#define PARTIAL_NAMED	8

static void
json_cards(yajl_gen g, const struct breakdown_ranks_request *rq,
    const struct bd_ranks *x)
{
	jsonw_str(g, "cards");
	yajl_gen_array_open(g);
	for (size_t k = 0; k < x->ncards; k++) {
		const struct bd_rcard *c = &x->cards[k];
		const struct breakdown_rank *r = &rq->r[c->rank];

		yajl_gen_map_open(g);
		jsonw_put_str(g, "label", c->label);
		jsonw_put_str(g, "host", r->host);
		jsonw_put_int_or_null(g, "rank", r->t->info.has_rank,
		    r->t->info.rank);
		jsonw_put_str(g, "trace", r->t->path);
		jsonw_put_int(g, "card", c->card);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void
json_partial(yajl_gen g, const struct bd_ranks *x)
{
	jsonw_str(g, "partial_steps");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < x->npartial; i++) {
		yajl_gen_map_open(g);
		jsonw_put_str(g, "step", x->partial[i].name);
		jsonw_str(g, "in");
		yajl_gen_array_open(g);
		for (size_t j = 0; j < x->nranks; j++)
			if (x->partial[i].in[j])
				jsonw_str(g, x->rank_label[j]);
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

/* The array's element: across_ranks, null when x is NULL. */
static void
write_json(const struct breakdown_ranks_request *rq, const struct bd_ranks *x)
{
	yajl_gen g = json_gen_new(true);

	yajl_gen_map_open(g);
	jsonw_str(g, "across_ranks");
	if (x == NULL) {
		yajl_gen_null(g);
		goto out;
	}
	yajl_gen_map_open(g);
	json_cards(g, rq, x);
	bd_cards_json_members(g, &x->across, x);
	json_partial(g, x);
	yajl_gen_map_close(g);
out:
	yajl_gen_map_close(g);
	json_gen_flush(g, rq->out);
	yajl_gen_free(g);
}

static void
write_csv(const struct breakdown_ranks_request *rq, const struct bd_ranks *x)
{
	FILE *fp = rq->out;

	for (size_t s = 0; s < x->across.nsteps; s++) {
		const struct bd_xstep *st = &x->across.steps[s];
		const struct bd_rcard *c = bd_ranks_card(x, st->straggler);
		const struct breakdown_rank *r = &rq->r[c->rank];

		fmt_csv_cell(fp, r->host);
		if (r->t->info.has_rank)
			fprintf(fp, ",%" PRId64, r->t->info.rank);
		else
			fputc(',', fp);
		fprintf(fp, ",across_ranks,%" PRId64 ",", c->card);
		fmt_csv_cell(fp, st->name);
		fputs(",,,", fp);
		for (int i = 0; i < CSV_GAP; i++)
			fputc(',', fp);
		bd_cards_csv_cells(fp, st, x);
		bd_evidence_csv_none(fp);
		fputc('\n', fp);
	}
	for (size_t i = 0; i < x->npartial; i++) {
		fputs(",,across_ranks_partial,,", fp);
		fmt_csv_cell(fp, x->partial[i].name);
		fputs(",,,", fp);
		for (int k = 0; k < CSV_GAP; k++)
			fputc(',', fp);
		bd_cards_csv_none(fp);
		bd_evidence_csv_none(fp);
		fputc('\n', fp);
	}
}

static const struct table_col card_cols[] = {
	{ "LABEL", NULL, TABLE_LEFT }, { "HOST", NULL, TABLE_LEFT },
	{ "RANK", NULL, TABLE_RIGHT }, { "CARD", NULL, TABLE_RIGHT },
	{ "TRACE", NULL, TABLE_LEFT },
};
#define NCARD_COLS	(sizeof(card_cols) / sizeof(card_cols[0]))

/* "NAME (in r0, r1)", for the table and stderr. */
static void
print_partial(FILE *fp, const struct bd_ranks *x, const struct bd_rstep *p)
{
	size_t n = 0;

	fprintf(fp, "%s (in ", p->name);
	for (size_t j = 0; j < x->nranks; j++)
		if (p->in[j])
			fprintf(fp, "%s%s", n++ ? ", " : "", x->rank_label[j]);
	fputc(')', fp);
}

static void
print_partials(FILE *fp, const struct bd_ranks *x)
{
	for (size_t i = 0; i < x->npartial && i < PARTIAL_NAMED; i++) {
		fputs(i ? ", " : "", fp);
		print_partial(fp, x, &x->partial[i]);
	}
	if (x->npartial > PARTIAL_NAMED)
		fprintf(fp, " and %zu more", x->npartial - PARTIAL_NAMED);
}

static void
write_table(const struct breakdown_ranks_request *rq, const struct bd_ranks *x)
{
	struct table *tb = table_new(card_cols, NCARD_COLS);
	FILE *fp = rq->out;

	for (size_t k = 0; k < x->ncards; k++) {
		const struct bd_rcard *c = &x->cards[k];
		const struct breakdown_rank *r = &rq->r[c->rank];

		table_row(tb);
		table_cell(tb, c->label);
		table_cell(tb, r->host);
		if (r->t->info.has_rank)
			table_cellf(tb, "%" PRId64, r->t->info.rank);
		else
			table_cell(tb, "-");
		table_cellf(tb, "%" PRId64, c->card);
		table_cell(tb, r->t->path);
	}
	fprintf(fp, "\nAcross the ranks: %zu cards of %zu traces, steps "
	    "matched by name:\n", x->ncards, x->nranks);
	table_write(tb, fp, 0);
	table_free(tb);
	fprintf(fp, "\nAcross the ranks' cards, per step (step time: from "
	    "the step's start in the card's own\ntrace to the end of its "
	    "last device work; the straggler ends last; DIFFERS-IN: the\n"
	    "class the straggler spent the most time more in than the "
	    "fastest card):\n");
	bd_cards_table_block(fp, &x->across, x);
	if (x->npartial > 0) {
		fprintf(fp, "Left out, in some traces only: %zu step%s: ",
		    x->npartial, x->npartial == 1 ? "" : "s");
		print_partials(fp, x);
		fputc('\n', fp);
	}
}

void
breakdown_ranks_report(const struct breakdown_ranks_request *rq)
{
	struct bd_rank *rk;
	struct bd_ranks x;

	if ((rk = calloc(rq->n + 1, sizeof(*rk))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < rq->n; i++)
		rk[i] = (struct bd_rank){ .run = &rq->r[i].run,
		    .host = rq->host_labels ? rq->r[i].host : NULL,
		    .has_rank = rq->r[i].t->info.has_rank,
		    .rank = rq->r[i].t->info.rank };
	if (!bd_ranks_across(rk, rq->n, &x)) {
		if (rq->format == STEPS_JSON)
			write_json(rq, NULL);
	} else {
		if (rq->format == STEPS_JSON)
			write_json(rq, &x);
		else if (rq->format == STEPS_CSV)
			write_csv(rq, &x);
		else
			write_table(rq, &x);
		if (x.npartial > 0) {
			fprintf(stderr, "spyremon: across the ranks: %zu step%s "
			    "in some traces only, left out: ", x.npartial,
			    x.npartial == 1 ? "" : "s");
			print_partials(stderr, &x);
			fputc('\n', stderr);
		}
		bd_ranks_free(&x);
	}
	free(rk);
}
