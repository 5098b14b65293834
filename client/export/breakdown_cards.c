/*
 * breakdown_cards: the across-cards block of export --breakdown
 * (breakdown_cards.h).
 */
#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "bdranks.h"
#include "breakdown_cards.h"
#include "breakdown_out.h"
#include "format.h"
#include "json.h"
#include "jsonw.h"
#include "table.h"

/* ns held in a double (exact: whole ns) back as an integer. */
static int64_t
whole_ns(double ns)
{
	return (int64_t)llround(ns);
}

/* A card: its number, or with rk its label (bdranks.h). */
static void
put_card(yajl_gen g, const char *key, int64_t card, const struct bd_ranks *rk)
{
	const struct bd_rcard *c = rk != NULL ? bd_ranks_card(rk, card) : NULL;

	if (rk == NULL)
		jsonw_put_int(g, key, card);
	else
		jsonw_put_str(g, key, c != NULL ? c->label : "");
}

/* A range of times: min_us, min_card, max_us, max_card, spread_us. */
static void
json_time(yajl_gen g, const struct bd_xrange *r, const struct bd_ranks *rk)
{
	jsonw_str(g, "step_time");
	yajl_gen_map_open(g);
	json_put_us(g, "min_us", whole_ns(r->min));
	put_card(g, "min_card", r->min_card, rk);
	json_put_us(g, "max_us", whole_ns(r->max));
	put_card(g, "max_card", r->max_card, rk);
	json_put_us(g, "spread_us", whole_ns(r->max) - whole_ns(r->min));
	yajl_gen_map_close(g);
}

/* A figure to 9 significant digits, as the csv has it. */
static void
put_g(yajl_gen g, const char *key, double v)
{
	char buf[48];

	jsonw_str(g, key);
	snprintf(buf, sizeof(buf), "%.9g", v);
	if (jsonw_number(g, buf))
		warnx("across cards: %s is not a number", key);
}

/* A range of a counter: null unless two cards have it. */
static void
json_range(yajl_gen g, const char *key, const struct bd_xrange *r,
    const struct bd_ranks *rk)
{
	jsonw_str(g, key);
	if (!r->has) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_map_open(g);
	jsonw_put_uint(g, "cards", r->n);
	put_g(g, "min", r->min);
	put_card(g, "min_card", r->min_card, rk);
	put_g(g, "max", r->max);
	put_card(g, "max_card", r->max_card, rk);
	put_g(g, "spread", r->max - r->min);
	yajl_gen_map_close(g);
}

static void
json_step(yajl_gen g, const struct bd_xstep *x, const struct bd_ranks *rk)
{
	yajl_gen_map_open(g);
	jsonw_put_str(g, "step", x->name);
	put_card(g, "straggler", x->straggler, rk);
	put_card(g, "fastest", x->fastest, rk);
	json_time(g, &x->time_ns, rk);
	json_range(g, "busy_pct", &x->busy_pct, rk);
	json_range(g, "energy_J", &x->energy_j, rk);
	jsonw_str(g, "differs_in");
	if (x->diff < 0)
		yajl_gen_null(g);
	else {
		yajl_gen_map_open(g);
		jsonw_put_str(g, "class", bd_xclass_key(x->diff));
		json_put_us(g, "straggler_us", x->diff_straggler_ns);
		json_put_us(g, "fastest_us", x->diff_fastest_ns);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

void
bd_cards_json_members(yajl_gen g, const struct bd_across *a,
    const struct bd_ranks *rk)
{
	const struct bd_xrun *r = &a->run;
	char buf[48];

	jsonw_put_str(g, "straggler_rule", rk != NULL ? "the card whose "
	    "device work in the step ends last, from its own rank's step "
	    "start; on a tie more busy time, then the earlier trace, then "
	    "the lower card" : "the card whose device work in the step ends "
	    "last; on a tie more busy time, then the lower card");
	jsonw_str(g, "steps");
	yajl_gen_array_open(g);
	for (size_t s = 0; s < a->nsteps; s++)
		json_step(g, &a->steps[s], rk);
	yajl_gen_array_close(g);
	jsonw_str(g, "run");
	yajl_gen_map_open(g);
	jsonw_put_uint(g, "steps", r->nsteps);
	jsonw_str(g, "straggler_steps");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->ncards; i++) {
		yajl_gen_map_open(g);
		put_card(g, "card", r->cards[i], rk);
		jsonw_put_uint(g, "steps", r->straggler[i]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	jsonw_str(g, "mean_spread");
	yajl_gen_map_open(g);
	jsonw_str(g, "step_time_us");
	if (r->ntime == 0)
		yajl_gen_null(g);
	else {
		snprintf(buf, sizeof(buf), "%.3f", r->time_ns / 1000);
		jsonw_number(g, buf);
	}
	if (r->nbusy > 0)
		put_g(g, "busy_pct", r->busy_pct);
	else
		jsonw_put_null(g, "busy_pct");
	if (r->nenergy > 0)
		put_g(g, "energy_J", r->energy_j);
	else
		jsonw_put_null(g, "energy_J");
	yajl_gen_map_close(g);
	if (rk != NULL)
		jsonw_put_uint(g, "partial_steps", rk->npartial);
	yajl_gen_map_close(g);
}

void
bd_cards_json(yajl_gen g, const struct bd_across *a)
{
	jsonw_str(g, "across_cards");
	if (a == NULL) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_map_open(g);
	bd_cards_json_members(g, a, NULL);
	yajl_gen_map_close(g);
}

static const char *const csv_cols[] = {
	"straggler", "fastest", "step_time_min_us", "step_time_min_card",
	"step_time_max_us", "step_time_max_card", "step_time_spread_us",
	"busy_min_pct", "busy_min_card", "busy_max_pct", "busy_max_card",
	"busy_spread_pct", "energy_min_J", "energy_min_card", "energy_max_J",
	"energy_max_card", "energy_spread_J", "differs_in",
	"differs_straggler_us", "differs_fastest_us",
};
#define NCSV	(sizeof(csv_cols) / sizeof(csv_cols[0]))

void
bd_cards_csv_head(FILE *fp)
{
	for (size_t i = 0; i < NCSV; i++)
		fprintf(fp, ",%s", csv_cols[i]);
}

void
bd_cards_csv_none(FILE *fp)
{
	for (size_t i = 0; i < NCSV; i++)
		fputc(',', fp);
}

/* A card's cell after a comma: its number, or with rk its label. */
static void
csv_card(FILE *fp, int64_t card, const struct bd_ranks *rk)
{
	const struct bd_rcard *c = rk != NULL ? bd_ranks_card(rk, card) : NULL;

	fputc(',', fp);
	if (rk == NULL)
		fprintf(fp, "%" PRId64, card);
	else if (c != NULL)
		fmt_csv_cell(fp, c->label);
}

/* A counter's five cells, empty unless two cards have it. */
static void
csv_range(FILE *fp, const struct bd_xrange *r, const struct bd_ranks *rk)
{
	if (!r->has) {
		fputs(",,,,,", fp);
		return;
	}
	fprintf(fp, ",%.9g", r->min);
	csv_card(fp, r->min_card, rk);
	fprintf(fp, ",%.9g", r->max);
	csv_card(fp, r->max_card, rk);
	fprintf(fp, ",%.9g", r->max - r->min);
}

void
bd_cards_csv_cells(FILE *fp, const struct bd_xstep *x,
    const struct bd_ranks *rk)
{
	const struct bd_xrange *t = &x->time_ns;
	char a[32], b[32], c[32];

	csv_card(fp, x->straggler, rk);
	csv_card(fp, x->fastest, rk);
	fprintf(fp, ",%s", fmt_us(whole_ns(t->min), a, sizeof(a)));
	csv_card(fp, t->min_card, rk);
	fprintf(fp, ",%s", fmt_us(whole_ns(t->max), b, sizeof(b)));
	csv_card(fp, t->max_card, rk);
	fprintf(fp, ",%s", fmt_us(whole_ns(t->max) - whole_ns(t->min),
	    c, sizeof(c)));
	csv_range(fp, &x->busy_pct, rk);
	csv_range(fp, &x->energy_j, rk);
	if (x->diff < 0)
		fputs(",,,", fp);
	else
		fprintf(fp, ",%s,%s,%s", bd_xclass_key(x->diff),
		    fmt_us(x->diff_straggler_ns, a, sizeof(a)),
		    fmt_us(x->diff_fastest_ns, b, sizeof(b)));
}

static const struct table_col cols[] = {
	{ "STEP", NULL, TABLE_LEFT }, { "STRAGGLER", NULL, TABLE_RIGHT },
	{ "FASTEST", NULL, TABLE_RIGHT }, { "TIME-MAX", "ms", TABLE_RIGHT },
	{ "TIME-MIN", "ms", TABLE_RIGHT }, { "SPREAD", "ms", TABLE_RIGHT },
	{ "BUSY-MIN", "% card", TABLE_RIGHT },
	{ "BUSY-MAX", "% card", TABLE_RIGHT },
	{ "SPREAD", "%", TABLE_RIGHT },
	{ "ENERGY-MIN", "J card", TABLE_RIGHT },
	{ "ENERGY-MAX", "J card", TABLE_RIGHT },
	{ "SPREAD", "J", TABLE_RIGHT }, { "DIFFERS-IN", NULL, TABLE_LEFT },
	{ "STRAGGLER", "ms", TABLE_RIGHT }, { "FASTEST", "ms", TABLE_RIGHT },
};
#define NCOLS	(sizeof(cols) / sizeof(cols[0]))

static void
cell_ms(struct table *tb, double ns)
{
	char buf[32];

	table_fixed(buf, sizeof(buf), ns / 1e6, 3);
	table_cell(tb, buf);
}

/* A counter's min, max (each with its card) and spread, or three blanks. */
static void
cells_range(struct table *tb, const struct bd_xrange *r, int decimals,
    const struct bd_ranks *rk)
{
	char who[32];

	char buf[32];

	if (!r->has) {
		table_cell(tb, "");
		table_cell(tb, "");
		table_cell(tb, "");
		return;
	}
	table_fixed(buf, sizeof(buf), r->min, decimals);
	table_cellf(tb, "%s %s", buf, bd_ranks_card_name(rk, r->min_card,
	    false, who, sizeof(who)));
	table_fixed(buf, sizeof(buf), r->max, decimals);
	table_cellf(tb, "%s %s", buf, bd_ranks_card_name(rk, r->max_card,
	    false, who, sizeof(who)));
	table_fixed(buf, sizeof(buf), r->max - r->min, decimals);
	table_cell(tb, buf);
}

void
bd_cards_table_block(FILE *fp, const struct bd_across *a,
    const struct bd_ranks *rk)
{
	const struct bd_xrun *r = &a->run;
	struct table *tb = table_new(cols, NCOLS);
	char who[32];

	for (size_t s = 0; s < a->nsteps; s++) {
		const struct bd_xstep *x = &a->steps[s];

		table_row(tb);
		table_cell(tb, x->name);
		table_cell(tb, bd_ranks_card_name(rk, x->straggler, true, who,
		    sizeof(who)));
		table_cell(tb, bd_ranks_card_name(rk, x->fastest, true, who,
		    sizeof(who)));
		cell_ms(tb, x->time_ns.max);
		cell_ms(tb, x->time_ns.min);
		cell_ms(tb, x->time_ns.max - x->time_ns.min);
		cells_range(tb, &x->busy_pct, 1, rk);
		cells_range(tb, &x->energy_j, 3, rk);
		table_cell(tb, bd_xclass_name(x->diff));
		if (x->diff >= 0) {
			cell_ms(tb, (double)x->diff_straggler_ns);
			cell_ms(tb, (double)x->diff_fastest_ns);
		}
	}
	if (a->nsteps > 0)
		table_write(tb, fp, 0);
	else
		fprintf(fp, "no steps\n");
	table_free(tb);
	bd_xrun_write(fp, r, rk, false);
}

void
bd_cards_table(FILE *fp, const struct bd_across *a)
{
	if (a == NULL)
		return;
	fprintf(fp, "\nAcross cards, per step (step time: from the step's "
	    "start to the end of a card's last\ndevice work; the straggler "
	    "ends last; DIFFERS-IN: the class the straggler spent the\nmost "
	    "time more in than the fastest card, with both cards' time in "
	    "it):\n");
	bd_cards_table_block(fp, a, NULL);
}
