/*
 * report_ops: "Where the energy went" in report.md (report_ops.h).
 *
 * The figures are export --ops' (the same ops_load): an operator's are
 * summed over the cards, and the table lists the REPORT_OPS_TOP of them
 * that took the most energy, so that a reader sees where it went and
 * export --ops gives the rest.
 */
#include <err.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "plot_bars.h"
#include "report_ops.h"
#include "summarycmd.h"

int
report_ops_load(struct report *r)
{
	const struct trace_target *t;
	struct ops_request rq;

	if (!r->has_trace)
		return CLIENT_EXIT_OK;
	t = &r->rs.t[0];
	rq = (struct ops_request){
		.path = t->path, .info = &t->info, .shift_ns = t->shift_ns,
		.span_lo = t->start_ns, .span_hi = t->end_ns, .cat = &r->cat,
		.clock = &t->epochs,
		.device_sql = "", .none_ok = true,
		.idle_lookback_ns = summary_idle_lookback(r->cl),
	};
	r->has_ops = true;	/* freed also after a failure */
	return ops_load(r->db, &rq, &r->ops);
}

int
report_ops_plot(struct report *r)
{
	/* the categories' colours: plot.h's palette, idle light grey */
	static const double rgb[OPS_NCAT][3] = {
		[OPS_COMPUTE] = { 0.000, 0.447, 0.698 },
		[OPS_MEMORY] = { 0.902, 0.624, 0.000 },
		[OPS_COMM] = { 0.000, 0.620, 0.451 },
		[OPS_OTHER] = { 0.800, 0.475, 0.655 },
		[OPS_IDLE] = { 0.800, 0.800, 0.800 },
	};
	const struct ops_result *res = &r->ops;
	const char *series[OPS_NCAT];
	char png[PATH_MAX + 32], svg[PATH_MAX + 32], title[256];
	char (*labels)[24];
	const char **groups;
	double *v;
	int rc;

	if (!r->has_trace || !r->has_ops || res->device_events == 0 ||
	    res->ncards == 0)
		return CLIENT_EXIT_OK;
	if ((v = calloc(res->ncards * OPS_NCAT, sizeof(*v))) == NULL ||
	    (labels = calloc(res->ncards, sizeof(*labels))) == NULL ||
	    (groups = calloc(res->ncards, sizeof(*groups))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (int k = 0; k < OPS_NCAT; k++)
		series[k] = ops_category_name((enum ops_category)k);
	for (size_t g = 0; g < res->ncards; g++) {
		const struct ops_card *c = &res->cards[g];

		for (size_t i = 0; i < c->a.nops; i++)
			v[g * OPS_NCAT + res->names[i].category] +=
			    c->a.ops[i].energy_j;
		v[g * OPS_NCAT + OPS_IDLE] += c->a.idle_j;
		snprintf(labels[g], sizeof(labels[g]), "card %d", c->device);
		groups[g] = labels[g];
	}
	snprintf(title, sizeof(title), "Window %" PRId64 " '%s': energy per "
	    "card by category", r->ws.w.id, r->ws.w.tag);
	snprintf(png, sizeof(png), "%s/%s.png", r->tmp, REPORT_OPS_PLOT);
	snprintf(svg, sizeof(svg), "%s/%s.svg", r->tmp, REPORT_OPS_PLOT);
	rc = plot_bars_write(&(struct plot_bars){ .title = title,
	    .unit = "J", .groups = groups, .ngroups = res->ncards,
	    .series = series, .rgb = rgb, .nseries = OPS_NCAT, .v = v },
	    png, svg) == 0 ? CLIENT_EXIT_OK : CLIENT_EXIT_FAILED;
	r->ops_plot = rc == CLIENT_EXIT_OK;
	free(v);
	free(labels);
	free(groups);
	return rc;
}

/* One operator over every card. */
struct op_sum {
	size_t	 name;
	uint64_t calls;
	int64_t	 device_ns;
	double	 time_ns, energy_j, bound_j;
};

static int
by_energy(const void *a, const void *b)
{
	const struct op_sum *x = a, *y = b;

	return (x->energy_j < y->energy_j) - (x->energy_j > y->energy_j);
}

static const char *
basis(const struct op_sum *o)
{
	if (o->device_ns > 0 && o->time_ns == 0)
		return "unsampled";
	return o->bound_j > 0 ? "estimate" : "exact";
}

static void
op_table(FILE *fp, const struct ops_result *res, double total_j)
{
	struct op_sum *o;
	size_t n = res->nnames;

	if ((o = calloc(n > 0 ? n : 1, sizeof(*o))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n; i++) {
		o[i].name = i;
		for (size_t k = 0; k < res->ncards; k++) {
			const struct attrib_op *a = &res->cards[k].a.ops[i];

			o[i].calls += a->calls;
			o[i].device_ns += a->device_ns;
			o[i].time_ns += a->time_ns;
			o[i].energy_j += a->energy_j;
			o[i].bound_j += a->bound_j;
		}
	}
	qsort(o, n, sizeof(*o), by_energy);
	fprintf(fp, "| operator | category | calls | device ms | energy J | "
	    "± J | share %% | basis |\n|---|---|---:|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < n && i < REPORT_OPS_TOP; i++) {
		const struct ops_name *nm = &res->names[o[i].name];

		fprintf(fp, "| `%s` | %s | %" PRIu64 " | %.3f | %.3f | %.3f | "
		    "%.1f | %s |\n", nm->name, ops_category_name(nm->category),
		    o[i].calls, (double)o[i].device_ns / 1e6, o[i].energy_j,
		    o[i].bound_j, total_j > 0 ? 100 * o[i].energy_j / total_j :
		    0, basis(&o[i]));
	}
	if (n > REPORT_OPS_TOP)
		fprintf(fp, "\n%zu operators in all; `export --trace ... --ops` "
		    "lists every one.\n", n);
	fprintf(fp, "\n");
	free(o);
}

static void
card_table(FILE *fp, const struct ops_result *res)
{
	fprintf(fp, "| card | energy J | busy ms | idle ms | idle J | idle "
	    "share of energy %% | host-only J | samples |\n"
	    "|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];

		fprintf(fp, "| %d | %.3f | %.1f | %.1f | %.3f ± %.3f | %.1f | "
		    "%.3f | %" PRIu64 " |\n", c->device, c->a.span_j,
		    (double)c->a.busy_ns / 1e6, (double)c->a.idle_ns / 1e6,
		    c->a.idle_j, c->a.idle_bound_j, c->a.span_j > 0 ?
		    100 * c->a.idle_j / c->a.span_j : 0, c->a.host_only_j,
		    c->a.samples);
	}
	fprintf(fp, "\n");
}

void
report_ops_md(FILE *fp, const struct report *r)
{
	const struct ops_result *res = &r->ops;
	int64_t max_iv = 0;
	double total_j = 0;

	if (!r->has_trace || !r->has_ops)
		return;
	fprintf(fp, "## Where the energy went\n\n");
	if (res->device_events == 0) {
		fprintf(fp, "`%s` has no device event (no kernel, memory copy "
		    "or other event on a device stream, nor Spyre's begin and "
		    "end events with the card's cycle stamps): the run's work "
		    "was on the host, so no operator's energy on a card can be "
		    "told.\n\n", r->rs.t[0].path);
		return;
	}
	for (size_t k = 0; k < res->ncards; k++) {
		total_j += res->cards[k].a.span_j;
		if (res->cards[k].a.max_interval_ns > max_iv)
			max_iv = res->cards[k].a.max_interval_ns;
	}
	fprintf(fp, "The device events of `%s`, %" PRIu64 " of them: each "
	    "sample's energy is shared among the events on its card that "
	    "overlap it, in proportion to their overlap, and the card's time "
	    "with no device event is idle (host-only: idle while a host "
	    "event runs).  The operators that took the most energy, all "
	    "cards summed:\n\n", r->rs.t[0].path, res->device_events);
	op_table(fp, res, total_j);
	card_table(fp, res);
	if (r->ops_plot)
		fprintf(fp, "![Energy per card by category (J), stacked]"
		    "(%s.png)\n\n(SVG: [%s.svg](%s.svg).)\n\n",
		    REPORT_OPS_PLOT, REPORT_OPS_PLOT, REPORT_OPS_PLOT);
	fprintf(fp, "How exact: an operator's energy is exact to the "
	    "sampling where its calls cover whole samples; where they cover "
	    "part of one (samples here up to %.0f ms apart) it is an "
	    "estimate: the idle time takes the card's idle power and the "
	    "busy time the rest of the sample's energy.  The ± bounds it by "
	    "physics: a card draws no less than its floor (its lowest sample "
	    "or idle power) and no more than its maximum (75 W, or a higher "
	    "sample), and a sample's parts add up to its energy; where a "
	    "sample changes once between still neighbours, the three "
	    "samples' range narrows it.  On a known power schedule every "
	    "operator came out within its bound, and those of ten samples or "
	    "more within 2 %% (docs/traces.md, \"Against a known answer\"); "
	    "calls much shorter than a sample get a wide ±: for those, "
	    "sample finer.  The operators and idle add up to each card's "
	    "energy (closure within 1e-9).\n\n", (double)max_iv / 1e6);
}
