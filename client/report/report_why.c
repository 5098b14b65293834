/*
 * report_why: "Why it was slow" in report.md (report_why.h).
 *
 * The figures are export --breakdown's, from the same analysis calls
 * (bd_trace_read, bd_run_load, bd_run_across, bd_ranks_across) with its
 * defaults: the innermost steps, the launch gap of
 * BREAKDOWN_LAUNCH_GAP_NS.  Shares are of each span.
 */
#include <err.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bdranks.h"
#include "client.h"
#include "pcielink.h"
#include "plot_steps.h"
#include "report_why.h"

/* The classes of the chart, bottom up: the busy ones, then idle by cause. */
static const char *const chart_classes[] = {
	"compute", "data movement", "communication", "other",
	"idle: host wait", "idle: launch gap", "idle: sync",
	"idle: unexplained",
};
static const double chart_rgb[][3] = {
	{ 0.000, 0.447, 0.698 },	/* compute: blue */
	{ 0.000, 0.620, 0.451 },	/* data movement: bluish green */
	{ 0.835, 0.369, 0.000 },	/* communication: vermillion */
	{ 0.800, 0.475, 0.655 },	/* other: reddish purple */
	{ 0.902, 0.624, 0.000 },	/* host wait: orange */
	{ 0.941, 0.894, 0.259 },	/* launch gap: yellow */
	{ 0.337, 0.706, 0.914 },	/* sync: sky blue */
	{ 0.780, 0.780, 0.780 },	/* unexplained: light grey */
};
#define NCHART	(sizeof(chart_classes) / sizeof(chart_classes[0]))

static const enum ops_category busy_cats[] = {
	OPS_COMPUTE, OPS_MEMORY, OPS_COMM, OPS_OTHER,
};

static double
pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* The breakdown of trace t with its counters, as export --breakdown's. */
static int
load_one(struct report *r, const struct trace_target *t, struct bd_trace **bt,
    struct bd_run *run)
{
	struct steps_request sr;
	int rc;

	if ((rc = bd_trace_read(t->path, t->info.has_base, NULL, true, bt)) !=
	    CLIENT_EXIT_OK)
		return rc;
	sr = (struct steps_request){ .t = t, .cat = &r->cat, .device_sql = "",
	    .innermost = true };
	return bd_run_load(r->db, &sr, *bt, bd_step_names(bt, 1),
	    BREAKDOWN_LAUNCH_GAP_NS, true, run);
}

/* Trace i's breakdown: the first's, or another rank's. */
static const struct bd_run *
rank_run(const struct report *r, size_t i)
{
	return i == 0 ? &r->why : &r->why_other[i - 1];
}

/* Every trace as bdranks.h takes it (one database: no host). */
static struct bd_rank *
rank_list(const struct report *r)
{
	struct bd_rank *rk;

	if ((rk = calloc(r->why_nother + 2, sizeof(*rk))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i <= r->why_nother; i++)
		rk[i] = (struct bd_rank){ .run = rank_run(r, i),
		    .has_rank = r->rs.t[i].info.has_rank,
		    .rank = r->rs.t[i].info.rank };
	return rk;
}

int
report_why_load(struct report *r)
{
	size_t n = r->rs.nt > 0 ? r->rs.nt - 1 : 0;
	int rc;

	if (!r->has_trace)
		return CLIENT_EXIT_OK;
	r->has_why = true;	/* freed also after a failure */
	if ((r->why_other_bt = calloc(n + 1, sizeof(*r->why_other_bt))) ==
	    NULL || (r->why_other = calloc(n + 1, sizeof(*r->why_other))) ==
	    NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	r->why_nother = n;
	rc = load_one(r, &r->rs.t[0], &r->why_bt, &r->why);
	/* the other ranks', for their cards beside the first's */
	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++)
		rc = load_one(r, &r->rs.t[i + 1], &r->why_other_bt[i],
		    &r->why_other[i]);
	if (rc == CLIENT_EXIT_OK) {
		struct bd_rank *rk = rank_list(r);

		bd_ranks_match(rk, n + 1, &r->why_ranks);
		r->why_matched = true;
		free(rk);
	}
	return rc;
}

void
report_why_free(struct report *r)
{
	if (!r->has_why)
		return;
	if (r->why_matched)
		bd_ranks_free(&r->why_ranks);
	r->why_matched = false;
	bd_run_free(&r->why);
	bd_trace_free(r->why_bt);
	for (size_t i = 0; i < r->why_nother; i++) {
		bd_run_free(&r->why_other[i]);
		bd_trace_free(r->why_other_bt[i]);
	}
	free(r->why_other);
	free(r->why_other_bt);
	r->why_other = NULL;
	r->why_other_bt = NULL;
	r->why_nother = 0;
	r->has_why = false;
}

/*
 * The steps shown: the first REPORT_WHY_STEPS of those every trace has
 * (one trace: all its steps).
 */
static size_t
shown_steps(const struct report *r)
{
	size_t n = r->why_ranks.nmatched;

	return n < REPORT_WHY_STEPS ? n : REPORT_WHY_STEPS;
}

/* Whether the section covers several traces, its cards named by rank. */
static bool
ranked(const struct report *r)
{
	return r->why_ranks.nranks > 1;
}

/* Card k's run (bdranks.h's order of cards: trace by trace). */
static const struct bd_run *
card_run(const struct report *r, size_t k)
{
	return rank_run(r, r->why_ranks.cards[k].rank);
}

/* Card k's place in its run's cards. */
static const struct bd_card *
card_of(const struct report *r, size_t k)
{
	return &card_run(r, k)->res.cards[r->why_ranks.cards[k].index];
}

/* Card k's step: its own run's place of the m-th step every trace has. */
static size_t
card_step(const struct report *r, size_t k, size_t m)
{
	return bd_ranks_step(&r->why_ranks, m, r->why_ranks.cards[k].rank);
}

/* Card k's window of the m-th step every trace has. */
static const struct bd_window *
card_window(const struct report *r, size_t k, size_t m)
{
	return &card_of(r, k)->steps[card_step(r, k, m)];
}

/*
 * Card k's name in the tables: its number with one trace ("0"), else its
 * label (bdranks.h: "r1c0"); prefix before a number ("c" under a bar).
 */
static const char *
card_label(const struct report *r, size_t k, const char *prefix, char *buf,
    size_t len)
{
	if (ranked(r))
		return r->why_ranks.cards[k].label;
	snprintf(buf, len, "%s%" PRId64, prefix, card_of(r, k)->card);
	return buf;
}

int
report_why_plot(struct report *r)
{
	const struct bd_ranks *x = &r->why_ranks;
	struct plot_step_bar *bars;
	struct plot_steps c;
	char png[PATH_MAX + 32], svg[PATH_MAX + 32], title[256];
	char (*label)[BD_LABEL_MAX];
	size_t ns, n = 0;
	int rc;

	if (!r->has_why || !r->why_matched || x->ncards == 0)
		return CLIENT_EXIT_OK;
	ns = shown_steps(r);
	if ((bars = calloc(ns * x->ncards + 1, sizeof(*bars))) == NULL ||
	    (label = calloc(x->ncards + 1, sizeof(*label))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t k = 0; k < x->ncards; k++) {
		char buf[32];

		snprintf(label[k], sizeof(label[k]), "%s",
		    card_label(r, k, "c", buf, sizeof(buf)));
	}
	for (size_t s = 0; s < ns; s++)
		for (size_t k = 0; k < x->ncards; k++) {
			const struct bd_window *w = card_window(r, k, s);
			struct plot_step_bar *b = &bars[n++];

			b->group = w->name;
			b->label = label[k];
			for (size_t j = 0; j < 4; j++)
				b->v[j] = (double)w->tm.t[busy_cats[j]] / 1e6;
			for (int j = 0; j < BD_NIDLE; j++)
				b->v[4 + j] = (double)w->idle[j] / 1e6;
		}
	snprintf(title, sizeof(title), "Window %" PRId64 " '%s': time by class "
	    "per step and card", r->ws.w.id, r->ws.w.tag);
	c = (struct plot_steps){
		.title = title, .y_title = "time in the step (ms)",
		.x_title = ranked(r) ? (ns < x->nmatched ? "the first steps "
		    "all traces have; in each, one bar per card, trace by "
		    "trace (rRcN under it where it fits)" : "the steps all "
		    "traces have; in each, one bar per card, trace by trace "
		    "(rRcN under it where it fits)") : ns < x->nmatched ?
		    "the first steps; in each, one bar per card in card order "
		    "(cN under it where it fits)" : "step; in each, one bar "
		    "per card in card order (cN under it where it fits)",
		.classes = chart_classes, .rgb = chart_rgb, .nclasses = NCHART,
		.bars = bars, .nbars = n,
	};
	snprintf(png, sizeof(png), "%s/breakdown.png", r->tmp);
	snprintf(svg, sizeof(svg), "%s/breakdown.svg", r->tmp);
	rc = plot_steps_write(&c, png, svg) == 0 ? CLIENT_EXIT_OK :
	    CLIENT_EXIT_FAILED;
	r->why_plot = rc == CLIENT_EXIT_OK;
	free(label);
	free(bars);
	return rc;
}

/* A row of the classes' table. */
static void
class_row(FILE *fp, const char *card, const struct bd_window *w)
{
	char why[256];
	enum bd_verdict v = bd_verdict(&w->tm, w->idle, why, sizeof(why));

	fprintf(fp, "| %s | %s | %.3f |", w->name, card,
	    (double)w->tm.span / 1e6);
	for (size_t k = 0; k < 4; k++)
		fprintf(fp, " %.1f |", pct(w->tm.t[busy_cats[k]], w->tm.span));
	fprintf(fp, " %.1f |", pct(w->tm.t[OPS_IDLE], w->tm.span));
	for (int k = 0; k < BD_NIDLE; k++)
		fprintf(fp, " %.1f |", pct(w->idle[k], w->tm.span));
	fprintf(fp, " **%s** | %s |\n", bd_verdict_name(v), why);
}

/* A cell of a mean with decimals digits, empty when unknown. */
static void
num_cell(FILE *fp, bool has, double v, int decimals)
{
	if (has)
		fprintf(fp, " %.*f |", decimals, v);
	else
		fprintf(fp, " |");
}

/*
 * A row of the evidence table; a contradiction is added to list (n of
 * them so far, at most max kept).
 */
static void
evidence_row(FILE *fp, const struct bd_run *run, int64_t card,
    const char *label, const struct bd_window *w, const struct steps_mean *m,
    char (*list)[320], size_t *n, size_t max)
{
	struct bd_evidence ev;
	char why[256];

	fprintf(fp, "| %s | %s | %" PRIu64 " |", w->name, label,
	    m != NULL ? m->samples : 0);
	if (m == NULL) {
		fprintf(fp, " | | | | | | | | | | | no samples |\n");
		return;
	}
	bd_run_evidence(run, m, card, &ev);
	fprintf(fp, " %.1f |", pct(m->covered_ns, w->tm.span));
	num_cell(fp, m->has_busy, m->busy_pct, 1);
	num_cell(fp, m->has_pwr, m->pwr_w, 1);
	num_cell(fp, m->has_pwr, 100 * m->pwr_w / BD_CARD_POWER_W, 0);
	num_cell(fp, m->has_gtemp, m->gtemp_c, 1);
	for (int b = 0; b < STEPS_NBW; b++)
		num_cell(fp, m->has_bw[b], m->bw_gibps[b], 3);
	for (int b = STEPS_RXPCI; b <= STEPS_TXPCI; b++) {
		if (!ev.has_link && m->has_bw[b])
			fprintf(fp, " link unknown |");
		else
			num_cell(fp, m->has_bw[b], pcie_link_pct(m->bw_gibps[b],
			    ev.link_gbps), 2);
	}
	if (bd_contradicts(&w->tm, &ev, why, sizeof(why))) {
		fprintf(fp, " **contradicts** |\n");
		if (*n < max)
			snprintf(list[*n], sizeof(list[0]), "%s, card %s: %s",
			    w->name, label, why);
		(*n)++;
	} else
		fprintf(fp, " %s |\n", pct(m->covered_ns, w->tm.span) < 50 ?
		    "samples cover under half the span" : "agrees");
}

static void
md_verdicts(FILE *fp, const struct report *r, size_t ns)
{
	const struct bd_ranks *x = &r->why_ranks;
	struct bd_window all;
	char why[256], buf[32];
	enum bd_verdict v;

	for (size_t k = 0; k < x->ncards; k++)
		bd_window_add(&all, &card_of(r, k)->total, k == 0);
	v = bd_verdict(&all.tm, all.idle, why, sizeof(why));
	fprintf(fp, "**The run: %s** (every card's span added up, %.3f card-ms: "
	    "%s).  Idle time with a cause (host wait, launch gap, sync): "
	    "%.1f %% of %.3f ms idle.\n\n", bd_verdict_name(v),
	    (double)all.tm.span / 1e6, why, bd_classified_pct(all.idle),
	    (double)all.tm.t[OPS_IDLE] / 1e6);
	fprintf(fp, "| step | card | span ms | compute %% | data movement %% | "
	    "communication %% | other %% | idle %% | host wait %% | launch gap "
	    "%% | sync %% | unexplained %% | verdict | rule |\n"
	    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	    "---|\n");
	for (size_t k = 0; k < x->ncards; k++) {
		const char *card = card_label(r, k, "", buf, sizeof(buf));

		for (size_t s = 0; s < ns; s++)
			class_row(fp, card, card_window(r, k, s));
		class_row(fp, card, &card_of(r, k)->total);
	}
	if (ns < x->nmatched)
		fprintf(fp, "\nThe first %zu of %zu steps%s; `export --trace ... "
		    "--breakdown` lists every one.\n", ns, x->nmatched,
		    ranked(r) ? " every trace has" : "");
	fprintf(fp, "\n");
}

/* Each card's PCIe link, as the daemon's inventory has it. */
static void
md_links(FILE *fp, const struct report *r)
{
	char buf[32];

	fprintf(fp, "PCIe links, per direction (GT/s x lanes x encoding / 8, "
	    "from the daemon's inventory):");
	for (size_t k = 0; k < r->why_ranks.ncards; k++) {
		const struct bd_link *l = bd_run_link(card_run(r, k),
		    card_of(r, k)->card);

		fprintf(fp, "%s card %s ", k ? ";" : "", card_label(r, k, "",
		    buf, sizeof(buf)));
		if (l == NULL)
			fprintf(fp, "link unknown");
		else if (l->has_gbps)
			fprintf(fp, "%s x%d, %.3f GB/s", l->speed, l->width,
			    l->gbps);
		else
			fprintf(fp, "link unknown");
	}
	fprintf(fp, ".\n\n");
}

static void
md_evidence(FILE *fp, const struct report *r, size_t ns)
{
	const struct bd_ranks *x = &r->why_ranks;
	char list[8][320], buf[32];
	size_t n = 0;

	fprintf(fp, "### Evidence from the counters\n\n");
	fprintf(fp, "Each card's stored samples over the same spans, as "
	    "`export --steps` sums them: the share of the span the samples "
	    "cover, the mean busy %%, the mean power and its share of the "
	    "card's %d W, the mean temperature, the memory and PCIe "
	    "bandwidths (time-weighted means, GiB/s as aiu-smi gives them) "
	    "and PCIe each way as a share of what the card's link carries "
	    "(GiB/s against GB/s).\n\n", BD_CARD_POWER_W);
	md_links(fp, r);
	fprintf(fp, "| step | card | samples | covered %% | busy %% | power W "
	    "| of %d W %% | temp °C | rdmem GiB/s | wrmem GiB/s | rxpci GiB/s "
	    "| txpci GiB/s | rx %% of link | tx %% of link | against the "
	    "trace |\n"
	    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	    "---:|---|\n", BD_CARD_POWER_W);
	for (size_t k = 0; k < x->ncards; k++) {
		const struct bd_run *run = card_run(r, k);
		int64_t card = card_of(r, k)->card;
		const char *label = card_label(r, k, "", buf, sizeof(buf));

		for (size_t s = 0; s < ns; s++)
			evidence_row(fp, run, card, label, card_window(r, k, s),
			    bd_run_counters(run, card_step(r, k, s), card),
			    list, &n, 8);
		evidence_row(fp, run, card, label, &card_of(r, k)->total,
		    bd_run_counters(run, run->nsteps + x->cards[k].index,
		    card), list, &n, 8);
	}
	fprintf(fp, "\nThe counters contradict the trace where the mean busy "
	    "is under %d %% while the trace has the card computing %d %% or "
	    "more of the span (its events may not be this card's, or the "
	    "samples not of this run); where the mean busy is %d %% or "
	    "more while the trace has the card idle %d %% or more (work the "
	    "trace does not show); or where the trace has data movement %d %% "
	    "or more of the span while memory moves under %g GiB/s (rdmem + "
	    "wrmem) and PCIe each way under %d %% of the link (the link "
	    "unknown: under %g GiB/s), data the counters do not see move.  ",
	    BD_BUSY_LOW_PCT, BD_COMPUTE_HIGH_PCT, BD_BUSY_HIGH_PCT,
	    BD_IDLE_HIGH_PCT, BD_DATA_HIGH_PCT, BD_QUIET_GIBPS,
	    BD_PCIE_LOW_PCT, BD_QUIET_GIBPS);
	if (n == 0)
		fprintf(fp, "No span here does.\n\n");
	else {
		fprintf(fp, "%zu span%s here do%s:\n\n", n, n > 1 ? "s" : "",
		    n > 1 ? "" : "es");
		for (size_t i = 0; i < n && i < 8; i++)
			fprintf(fp, "- %s\n", list[i]);
		if (n > 8)
			fprintf(fp, "- and %zu more\n", n - 8);
		fprintf(fp, "\n");
	}
}

/* A counter's ends and spread as one cell: "10.0 (c0) to 70.0 (c3): 60.0". */
static void
range_cell(FILE *fp, const struct bd_xrange *x, int decimals,
    const struct bd_ranks *rk)
{
	char a[32], b[32];

	if (!x->has) {
		fprintf(fp, " |");
		return;
	}
	fprintf(fp, " %.*f (%s) to %.*f (%s): %.*f |", decimals, x->min,
	    bd_ranks_card_name(rk, x->min_card, false, a, sizeof(a)), decimals,
	    x->max, bd_ranks_card_name(rk, x->max_card, false, b, sizeof(b)),
	    decimals, x->max - x->min);
}

/* The ranks' cards side by side into *x, or false (one trace, one card). */
static bool
across_ranks(const struct report *r, struct bd_ranks *x)
{
	struct bd_rank *rk;
	bool ok;

	if (r->why_nother == 0)
		return false;
	rk = rank_list(r);
	ok = bd_ranks_across(rk, r->why_nother + 1, x);
	free(rk);
	return ok;
}

/* The ranks' paragraph: how the cards are named, the steps left out. */
static void
md_ranks(FILE *fp, const struct report *r, const struct bd_ranks *x)
{
	fprintf(fp, "The cards of all %zu traces (the ranks of the run), each "
	    "named by its trace's rank and its card (r1c0: rank 1's card 0; "
	    "tI, the I-th trace from 0, where the traces have no ranks of "
	    "their own or share one), steps matched by name; each card's "
	    "step time runs from its own trace's step start, and on a tie "
	    "the earlier trace comes before the later.", x->nranks);
	for (size_t k = 0; k < x->ncards; k++)
		fprintf(fp, "%s %s `%s`", k ? "," : "  Cards:", x->cards[k].label,
		    r->rs.t[x->cards[k].rank].path);
	fprintf(fp, ".");
	if (x->npartial > 0) {
		fprintf(fp, "  Left out, in some traces only: %zu step%s (",
		    x->npartial, x->npartial == 1 ? "" : "s");
		for (size_t i = 0; i < x->npartial && i < 8; i++)
			fprintf(fp, "%s%s", i ? ", " : "", x->partial[i].name);
		fprintf(fp, "%s).", x->npartial > 8 ? ", ..." : "");
	}
	fprintf(fp, "\n\n");
}

/*
 * "Across cards": with two cards or more, each step's straggler and
 * spreads; with several traces, over every rank's cards.
 */
static void
md_across(FILE *fp, const struct report *r, size_t ns)
{
	struct bd_ranks rx;
	struct bd_across own, *ap;
	const struct bd_ranks *rk = NULL;
	const struct bd_xrun *x;
	char buf[32];

	if (across_ranks(r, &rx)) {
		rk = &rx;
		ap = &rx.across;
	} else if (bd_run_across(&r->why, &own))
		ap = &own;
	else
		return;
	x = &ap->run;
	fprintf(fp, "### Across cards\n\n");
	fprintf(fp, "A card's step time runs from the step's start to the end "
	    "of its last device work in it; the straggler is the card that "
	    "ends last (on a tie the busier, then the lower card), the "
	    "fastest the one that ends first.  The spreads are the largest "
	    "less the smallest across the cards, with the card at each end; "
	    "the class that makes the difference is the one the straggler "
	    "spent the most time more in than the fastest card.\n\n");
	if (rk != NULL)
		md_ranks(fp, r, rk);
	bd_xrun_write(fp, x, rk, true);
	fputc('\n', fp);
	if (ap->nsteps > 0)
		fprintf(fp, "| step | straggler | fastest | straggler's "
		    "step ms | fastest's step ms | spread ms | busy %% "
		    "(low to high: spread) | energy J (low to high: spread) | "
		    "differs most in | straggler's ms in it | fastest's ms "
		    "in it |\n"
		    "|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|\n");
	for (size_t s = 0; s < ns && s < ap->nsteps; s++) {
		const struct bd_xstep *t = &ap->steps[s];
		char b2[32];

		fprintf(fp, "| %s | %s | %s | %.3f | %.3f | %.3f |", t->name,
		    bd_ranks_card_name(rk, t->straggler, true, buf,
		    sizeof(buf)), bd_ranks_card_name(rk, t->fastest, true, b2,
		    sizeof(b2)),
		    t->time_ns.max / 1e6, t->time_ns.min / 1e6,
		    (t->time_ns.max - t->time_ns.min) / 1e6);
		range_cell(fp, &t->busy_pct, 1, rk);
		range_cell(fp, &t->energy_j, 3, rk);
		if (t->diff < 0)
			fprintf(fp, " none | | |\n");
		else
			fprintf(fp, " %s | %.3f | %.3f |\n",
			    bd_xclass_name(t->diff),
			    (double)t->diff_straggler_ns / 1e6,
			    (double)t->diff_fastest_ns / 1e6);
	}
	fprintf(fp, "\n");
	if (rk != NULL)
		bd_ranks_free(&rx);
	else
		bd_across_free(&own);
}

/*
 * With several traces: which they are, how their cards are named, which
 * steps are compared.
 */
static void
md_traces(FILE *fp, const struct report *r)
{
	const struct bd_ranks *x = &r->why_ranks;

	fprintf(fp, "Every card of the %zu traces (the ranks of the run:",
	    x->nranks);
	for (size_t i = 0; i < x->nranks; i++)
		fprintf(fp, "%s %s `%s`", i ? "," : "", x->rank_label[i],
		    r->rs.t[i].path);
	fprintf(fp, "), each card named by its trace's rank and its number "
	    "(r1c0: rank 1's card 0; tI, the I-th trace from 0, where the "
	    "traces have no ranks of their own or share one); the steps are "
	    "those every trace has, matched by name (the k-th step named N "
	    "of one trace is the k-th named N of each other)");
	if (x->npartial > 0)
		fprintf(fp, ", %zu step%s that only some have left out",
		    x->npartial, x->npartial == 1 ? "" : "s");
	fprintf(fp, ".  The run's verdict adds up every card of every "
	    "trace.\n\n");
}

void
report_why_md(FILE *fp, const struct report *r)
{
	size_t ns;

	if (!r->has_why || !r->why_matched)
		return;
	fprintf(fp, "## Why it was slow\n\n");
	if (r->why_ranks.ncards == 0) {
		if (ranked(r))
			fprintf(fp, "None of the %zu traces has a device event: "
			    "no card's time can be classified.\n\n",
			    r->why_ranks.nranks);
		else
			fprintf(fp, "`%s` has no device event: no card's time "
			    "can be classified.\n\n", r->rs.t[0].path);
		return;
	}
	ns = shown_steps(r);
	fprintf(fp, "Each card's time in each step of ");
	if (ranked(r))
		fprintf(fp, "the run's traces");
	else
		fprintf(fp, "`%s`", r->rs.t[0].path);
	fprintf(fp, ", as `export --trace ... --breakdown` gives it "
	    "(spyremon(1), \"Breakdown\"): "
	    "compute, data movement, communication, other, and idle by its "
	    "cause (host wait: the next event's launch began after the card "
	    "went idle; launch gap: a gap under %d µs; sync: the host in a "
	    "synchronisation call; else unexplained), in %% of the span.  A "
	    "span is host-bound when idle %d %% or more of it with host wait "
	    "and launch gaps %d %% or more of the idle time, idle when so "
	    "idle for other causes, else bound by compute, data movement or "
	    "communication when one is %d %% or more of it, else mixed.\n\n",
	    BREAKDOWN_LAUNCH_GAP_NS / 1000,
	    BD_VERDICT_IDLE_PCT, BD_VERDICT_HOST_PCT, BD_VERDICT_BOUND_PCT);
	if (ranked(r))
		md_traces(fp, r);
	md_verdicts(fp, r, ns);
	if (r->why_plot)
		fprintf(fp, "![Time by class per step and card](breakdown.png)"
		    "\n\n");
	md_across(fp, r, ns);
	md_evidence(fp, r, ns);
}
