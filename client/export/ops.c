/*
 * ops: operators' energy as a table, csv or json (ops.h): each row's
 * figures from opsenergy.h's, operators by energy, the greatest first,
 * then name, their sums by category, each card's span, and the notes
 * below the tables.  The cells and their writers are ops_out.c's; a
 * card's energy is the exact decimal of energy.h.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "format.h"
#include "opsenergy.h"
#include "ops.h"
#include "ops_out.h"

static const char *const section_names[S_N] = { "op", "category", "card" };

/* ---- the rows ---- */

static const char *
basis_of(const struct ops_figures *f)
{
	if (f->unsampled)
		return "unsampled";
	return f->bound_j > 0 ? "estimate" : "exact";
}

/* The cells shared by operators, categories and cards. */
static void
common_cells(struct ops_out *r, const struct ops_figures *f, double cards)
{
	memset(r->row, 0, sizeof(r->row));
	if (f->name != NULL)
		ops_out_text(r, C_NAME, f->name);
	snprintf(r->row[C_CALLS], OPS_CELL, "%" PRIu64, f->calls);
	ops_out_num(r, C_DEVICE, f->device_ns / 1e6, 1);
	if (r->span_ns > 0 && cards > 0)
		ops_out_num(r, C_TIME_PCT, 100 * f->device_ns /
		    (r->span_ns * cards), 1);
	ops_out_num(r, C_ENERGY, f->energy_j, -1);
	if (r->total_j > 0)
		ops_out_num(r, C_ENERGY_PCT, 100 * f->energy_j / r->total_j, 1);
	if (f->has_net)
		ops_out_num(r, C_NET, f->net_j, -1);
	if (f->time_ns > 0)
		ops_out_num(r, C_MEAN_W, f->energy_j / (f->time_ns / 1e9), 1);
	ops_out_num(r, C_ERROR, f->bound_j, -1);
	ops_out_text(r, C_BASIS, basis_of(f));
}

/* Operator i's energy by the cards' counters, and its calls in it. */
static bool
op_counter(const struct ops_result *res, size_t i, double *j, uint64_t *calls)
{
	bool any = false;

	*j = 0;
	*calls = 0;
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];

		if (!c->has_counter || c->fit.intervals == 0)
			continue;
		any = true;
		*j += c->counter_j[i];
		*calls += c->counter_calls[i];
	}
	return any;
}

static void
op_cells(struct ops_out *r, const struct ops_figures *f)
{
	common_cells(r, f, (double)r->res->ncards);
	if (f->has_counter) {
		ops_out_num(r, C_COUNTER_J, f->counter_j, -1);
		snprintf(r->row[C_COUNTER_CALLS], OPS_CELL, "%" PRIu64,
		    f->counter_calls);
	}
	ops_out_text(r, C_SECTION, section_names[S_OP]);
	ops_out_text(r, C_CATEGORY, ops_category_name(f->category));
	if (f->has_flops) {
		ops_out_num(r, C_FLOPS, f->flops, 0);
		if (r->rq->format == STEPS_TABLE)
			snprintf(r->row[C_FLOPS], OPS_CELL, "%.3g", f->flops);
		if (f->device_ns > 0)
			ops_out_num(r, C_TOPS, f->flops / f->device_ns / 1e3,
			    3);
		if (f->energy_j > 0)
			ops_out_num(r, C_TOPS_W, f->flops / f->energy_j / 1e12,
			    3);
	}
}

/* ---- the figures ---- */

/* Operator i over every card. */
static void
op_figures(const struct ops_out *r, size_t i, struct ops_figures *f)
{
	const struct ops_result *res = r->res;

	memset(f, 0, sizeof(*f));
	f->name = res->names[i].name;
	f->category = res->names[i].category;
	f->card = -1;
	f->has_net = true;
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];
		const struct attrib_op *o = &c->a.ops[i];

		f->calls += o->calls;
		f->device_ns += (double)o->device_ns;
		f->time_ns += o->time_ns;
		f->energy_j += o->energy_j;
		f->bound_j += o->bound_j;
		f->partial += o->partial;
		f->has_flops = f->has_flops || o->has_flops;
		f->flops += o->flops;
		if (o->time_ns > 0 && !c->has_idle_w)
			f->has_net = false;
		else if (o->time_ns > 0)
			f->net_j += o->energy_j - c->idle_w * o->time_ns / 1e9;
	}
	f->unsampled = f->device_ns > 0 && f->time_ns == 0;
	f->has_counter = op_counter(res, i, &f->counter_j, &f->counter_calls);
}

static void
add_figures(struct ops_figures *to, const struct ops_figures *f)
{
	to->calls += f->calls;
	to->device_ns += f->device_ns;
	to->time_ns += f->time_ns;
	to->energy_j += f->energy_j;
	to->bound_j += f->bound_j;
	to->net_j += f->net_j;
	to->has_net = to->has_net && f->has_net;
}

/* Operators by energy (energy[], all cards), the greatest first, then by name. */
struct op_order {
	const struct ops_result *res;
	const double *energy;
};

static int
cmp_op(const void *a, const void *b, void *arg)
{
	const struct op_order *o = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (o->energy[x] != o->energy[y])
		return o->energy[x] < o->energy[y] ? 1 : -1;
	return strcmp(o->res->names[x].name, o->res->names[y].name);
}

/* The operators' rows; their sums by category into cat[]. */
static void
op_rows(struct ops_out *r, struct ops_figures cat[OPS_NCAT])
{
	const struct ops_result *res = r->res;
	struct op_order how = { .res = res };
	double *energy;
	size_t *order;

	if ((order = calloc(res->nnames + 1, sizeof(*order))) == NULL ||
	    (energy = calloc(res->nnames + 1, sizeof(*energy))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < res->nnames; i++) {
		order[i] = i;
		for (size_t k = 0; k < res->ncards; k++)
			energy[i] += res->cards[k].a.ops[i].energy_j;
	}
	how.energy = energy;
	qsort_r(order, res->nnames, sizeof(*order), cmp_op, &how);
	ops_out_section(r, "ops");
	for (size_t i = 0; i < res->nnames; i++) {
		struct ops_figures f;

		op_figures(r, order[i], &f);
		/* only on cards without samples: the notes count those */
		if (f.calls == 0)
			continue;
		add_figures(&cat[f.category], &f);
		if (f.bound_j > 0)
			r->nestimates++;
		if (f.unsampled)
			r->nunsampled++;
		if (f.calls > 0 && f.device_ns / (double)f.calls <
		    (double)r->max_interval_ns)
			r->nunder++;
		op_cells(r, &f);
		ops_out_emit(r, S_OP);
		if (f.has_counter && r->rq->format == STEPS_TABLE)
			ops_out_counter_row(r, &f);
	}
	ops_out_section_end(r);
	free(order);
	free(energy);
}

static void
category_rows(struct ops_out *r, struct ops_figures cat[OPS_NCAT])
{
	const struct ops_result *res = r->res;
	struct ops_figures *idle = &cat[OPS_IDLE];

	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];

		idle->device_ns += (double)c->a.idle_ns;
		idle->time_ns += (double)c->a.idle_ns;
		idle->energy_j += c->a.idle_j;
		idle->bound_j += c->a.idle_bound_j;
		if (!c->has_idle_w)
			idle->has_net = false;
		else
			idle->net_j += c->a.idle_j - c->idle_w *
			    (double)c->a.idle_ns / 1e9;
	}
	ops_out_section(r, "categories");
	for (int i = 0; i < OPS_NCAT; i++) {
		cat[i].name = ops_category_name((enum ops_category)i);
		common_cells(r, &cat[i], (double)res->ncards);
		ops_out_text(r, C_SECTION, section_names[S_CATEGORY]);
		if (i == OPS_IDLE)
			r->row[C_CALLS][0] = '\0';
		ops_out_emit(r, S_CATEGORY);
	}
	ops_out_section_end(r);
}

static void
card_rows(struct ops_out *r)
{
	const struct ops_result *res = r->res;

	ops_out_section(r, "cards");
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];
		struct ops_figures f = {
			.card = c->device, .calls = c->events,
			.device_ns = (double)c->a.active_ns,
			.time_ns = (double)c->a.covered_ns,
			.energy_j = c->has_energy ? strtod(c->energy_j, NULL) : 0,
			.has_net = c->has_idle_w,
		};
		char name[32];

		/* the card's energy is exact to the sampling: error 0 */
		if (c->has_idle_w)
			f.net_j = f.energy_j - c->idle_w *
			    (double)c->a.covered_ns / 1e9;
		else
			snprintf(r->no_idle + strlen(r->no_idle),
			    sizeof(r->no_idle) - strlen(r->no_idle), "%s%d",
			    r->no_idle[0] ? ", " : "", c->device);
		common_cells(r, &f, 1);
		ops_out_text(r, C_SECTION, section_names[S_CARD]);
		snprintf(name, sizeof(name), "card %d", c->device);
		ops_out_text(r, C_NAME, name);
		snprintf(r->row[C_CARD], OPS_CELL, "%d", c->device);
		if (r->rq->format != STEPS_TABLE && c->has_energy)
			ops_out_text(r, C_ENERGY, c->energy_j);
		snprintf(r->row[C_SAMPLES], OPS_CELL, "%" PRIu64, c->a.samples);
		ops_out_num(r, C_INTERVAL, (double)c->a.max_interval_ns / 1e6,
		    0);
		ops_out_num(r, C_COVERED, (double)c->a.covered_ns / 1e6, 1);
		ops_out_num(r, C_DEV_SPAN,
		    (double)(c->a.last_ns - c->a.first_ns) / 1e6, 1);
		ops_out_num(r, C_IDLE_MS, (double)c->a.idle_ns / 1e6, 1);
		ops_out_num(r, C_IDLE_J, c->a.idle_j, -1);
		ops_out_num(r, C_HOST_MS, (double)c->a.host_only_ns / 1e6, 1);
		ops_out_num(r, C_HOST_J, c->a.host_only_j, -1);
		if (c->has_idle_w)
			ops_out_num(r, C_IDLE_W, c->idle_w, 1);
		if (r->rq->format == STEPS_TABLE)
			snprintf(r->row[C_CLOSURE], OPS_CELL, "%.1e",
			    c->closure);
		else
			ops_out_exact(c->closure, r->row[C_CLOSURE]);
		if (c->closure > r->worst_closure)
			r->worst_closure = c->closure;
		if (c->a.samples > 0) {
			ops_out_num(r, C_FLOOR_W, c->a.floor_w, 1);
			ops_out_num(r, C_CEILING_W, c->a.ceiling_w, 1);
		}
		if (c->has_counter && c->fit.intervals > 0) {
			ops_out_num(r, C_COUNTER_J,
			    c->fit.j_per_count * c->fit.counts, -1);
			ops_out_exact(c->fit.j_per_count,
			    r->row[C_COUNTER_SCALE]);
			ops_out_exact(c->fit.residual_j,
			    r->row[C_COUNTER_RES_J]);
			ops_out_exact(c->fit.residual_rel,
			    r->row[C_COUNTER_RES]);
		}
		if (c->has_counter) {
			snprintf(r->row[C_COUNTER_IV], OPS_CELL, "%zu",
			    c->fit.intervals);
			snprintf(r->row[C_COUNTER_BACK], OPS_CELL, "%zu",
			    c->fit.backwards);
		}
		ops_out_emit(r, S_CARD);
	}
	ops_out_section_end(r);
}

/* ---- notes and the frame ---- */

static void
notes(struct ops_out *r)
{
	bool table = r->rq->format == STEPS_TABLE;
	FILE *fp = table ? r->rq->out : stderr;
	const char *lead = table ? "" : "spyremon: ";
	const struct ops_result *res = r->res;
	char iv[FMT_BUFLEN];

	if (table)
		putc('\n', fp);
	fprintf(fp, "%soperators and idle add up to each card's energy over "
	    "the span to %.1e of it, or closer\n", lead, r->worst_closure);
	if (r->nestimates > 0)
		fprintf(fp, "%s%zu operator%s estimates: %s calls take part of "
		    "a sample, whose power may differ from its mean; ERROR bounds "
		    "each, taking the card's power to lie between its floor and "
		    "its maximum (spyremon(1), Operators)\n", lead,
		    r->nestimates,
		    r->nestimates == 1 ? " is an" : "s are",
		    r->nestimates == 1 ? "its" : "their");
	if (r->nunder > 0) {
		fmt_span(r->max_interval_ns, iv, sizeof(iv));
		fprintf(fp, "%s%zu operator%s calls shorter than the sampling "
		    "interval (up to %s) on average: sample faster by lowering "
		    "source.window_interval in spyremond.yaml, with a window "
		    "open during the run\n", lead, r->nunder,
		    r->nunder == 1 ? " has" : "s have", iv);
	}
	if (r->nunsampled > 0)
		fprintf(fp, "%s%zu operator%s no sample under %s calls: "
		    "unsampled, no energy\n", lead, r->nunsampled,
		    r->nunsampled == 1 ? " has" : "s have",
		    r->nunsampled == 1 ? "its" : "their");
	if (res->unsampled > 0)
		fprintf(fp, "%s%" PRIu64 " device event%s on %s without "
		    "samples in the span (the first: card %" PRId64 "): left "
		    "out; the trace's device N is the database's card N\n",
		    lead, res->unsampled, res->unsampled == 1 ? "" : "s",
		    res->unsampled_cards == 1 ? "a card" : "cards",
		    res->unsampled_card);
	if (res->no_card > 0)
		fprintf(fp, "%s%" PRIu64 " device event%s with neither pid nor "
		    "args.device: left out\n", lead, res->no_card,
		    res->no_card == 1 ? "" : "s");
	if (res->unpaired > 0)
		fprintf(fp, "%s%" PRIu64 " begin or end device event%s without "
		    "%s other half: left out\n", lead, res->unpaired,
		    res->unpaired == 1 ? "" : "s",
		    res->unpaired == 1 ? "its" : "their");
	if (r->no_idle[0] != '\0')
		fprintf(fp, "%sno idle power learned for card%s %s (no "
		    "sample with busy 0 in windows.idle_lookback before the "
		    "span): no net energy\n", lead,
		    strchr(r->no_idle, ',') != NULL ? "s" : "", r->no_idle);
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];

		if (c->has_counter && c->fit.intervals == 0)
			fprintf(fp, "%scard %d's charge counter: no interval "
			    "between calls to fit (%zu where it went backwards, "
			    "%zu that end before they begin)\n", lead, c->device,
			    c->fit.backwards, c->fit.untimed);
		else if (c->has_counter)
			fprintf(fp, "%scard %d's charge counter: %.6g J per "
			    "count, fitted through 0 to the samples over %zu "
			    "intervals between calls, residual %.3g J (%.1f %% "
			    "of their RMS energy); left out: %zu where it went "
			    "backwards, %zu that end before they begin\n", lead,
			    c->device, c->fit.j_per_count, c->fit.intervals,
			    c->fit.residual_j, 100 * c->fit.residual_rel,
			    c->fit.backwards, c->fit.untimed);
	}
	if (res->bad_values > 0)
		fprintf(stderr, "spyremon: %" PRIu64 " stored values out of "
		    "range were left out\n", res->bad_values);
}


int
ops_report(sqlite3 *db, const struct ops_request_out *rq)
{
	const struct trace_target *t = rq->t;
	struct ops_request in = {
		.path = t->path, .info = &t->info, .shift_ns = t->shift_ns,
		.span_lo = t->start_ns, .span_hi = t->end_ns,
		.clock = &t->epochs,
		.step_pattern = rq->step_pattern, .cat = rq->cat,
		.device_sql = rq->device_sql,
		.idle_lookback_ns = rq->idle_lookback_ns,
		.events = rq->events,
	};
	struct ops_result res;
	struct ops_out r = {
		.rq = rq, .res = &res,
		.span_ns = (double)(t->end_ns - t->start_ns),
	};
	struct ops_figures cat[OPS_NCAT] = { 0 };
	int rc;

	if ((rc = ops_load(db, &in, &res)) != CLIENT_EXIT_OK) {
		ops_result_free(&res);
		return rc;
	}
	for (size_t k = 0; k < res.ncards; k++) {
		if (res.cards[k].has_energy)
			r.total_j += strtod(res.cards[k].energy_j, NULL);
		if (res.cards[k].a.max_interval_ns > r.max_interval_ns)
			r.max_interval_ns = res.cards[k].a.max_interval_ns;
	}
	for (int i = 0; i < OPS_NCAT; i++)
		cat[i].has_net = true;
	ops_out_begin(&r);
	op_rows(&r, cat);
	category_rows(&r, cat);
	card_rows(&r);
	ops_out_finish(&r);
	notes(&r);
	ops_out_free(&r);
	ops_result_free(&res);
	return CLIENT_EXIT_OK;
}
