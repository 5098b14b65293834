/*
 * compare: "spyremon compare BASE NEW [--trace-base F --trace-new F]
 * [--align] [--json] [--fail-on-regression PCT] [--min-change PCT]".
 * Each trace option may name a TensorBoard log directory or be given
 * again: a run's ranks, whose steps are taken together (runsteps.h).
 *
 * Per card and figure of the two windows' summaries: base, new, change
 * and relative change.  A figure with a spread gets a verdict: mean power
 * per card (the stored mean and standard deviation of its samples) and,
 * with traces, the step time and the energy per step over the active
 * steps (mean and 95 % interval).  The verdict is "higher" or "lower"
 * ("slower" or "faster" for step time) when Welch's t-test rejects equal
 * means at the 5 % level AND the means differ by at least --min-change
 * (default 2 %); otherwise "within noise".  Samples taken every 100 ms
 * are not independent, so the test alone would call a 0.1 % drift
 * significant; the minimum change is what a person would call a change.
 *
 * With --fail-on-regression PCT the exit status is CLIENT_EXIT_REGRESSION
 * when the energy of all cards, or with traces the mean step time or
 * energy per step, rose by more than PCT % (and, for the step figures,
 * the verdict is not "within noise").
 *
 * Windows begun with --vllm: energy per request and per generated token,
 * the change and its interval (compare_serving.h).  With traces, last,
 * the operators whose energy changed most (compare_ops.h), and the
 * breakdown of where the time went per step and, for runs of two cards
 * or more, the cards' step-time spread (compare_breakdown.h).
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "client.h"
#include "cmd.h"
#include "compare.h"
#include "compare_breakdown.h"
#include "compare_ops.h"
#include "compare_serving.h"
#include "format.h"
#include "json.h"
#include "jsonw.h"
#include "runsteps.h"
#include "stats.h"
#include "summarycmd.h"
#include "timeparse.h"
#include "winsum.h"

enum {
	OPT_JSON = CLIENT_OPT_FIRST_FREE, OPT_TRACE_BASE, OPT_TRACE_NEW,
	OPT_FAIL, OPT_MIN_CHANGE, OPT_ALIGN, OPT_PARTIAL,
};

#define DEFAULT_MIN_CHANGE	2.0	/* % */
#define TOP_OPS			10	/* operators shown, by change */
#define ALPHA			0.05

static void
add_fig(struct cmp *c, const char *name, const char *unit, int card,
    bool has, double base, double new)
{
	struct cmp_fig *f;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 32;
		if ((c->f = realloc(c->f, c->cap * sizeof(*c->f))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	f = &c->f[c->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->unit = unit;
	f->card = card;
	f->has = has;
	f->base = base;
	f->new = new;
	f->verdict = "-";
}

/* The verdict of the last figure, from its two samples. */
static void
judge(struct cmp *c, const struct stats_sample *b, const struct stats_sample *n,
    const char *up, const char *down)
{
	struct cmp_fig *f = &c->f[c->n - 1];
	double r = compare_rel(f);

	f->tested = true;
	f->sb = *b;
	f->sn = *n;
	f->w = stats_welch(b, n);
	if (f->w.valid && f->w.p < ALPHA && fabs(r) >= c->min_change)
		f->verdict = f->new > f->base ? up : down;
	else if (!f->w.valid && fabs(r) >= c->min_change && b->n > 0 &&
	    n->n > 0 && b->sd == 0 && n->sd == 0)
		/* constant on both sides: any change is real */
		f->verdict = f->new > f->base ? up : down;
	else
		f->verdict = "within noise";
}

static const struct summary_card *
card_of(const struct winsum *ws, int device)
{
	for (size_t i = 0; i < ws->s.ncards; i++)
		if (ws->s.cards[i].device == device)
			return &ws->s.cards[i];
	return NULL;
}

/*
 * The figures of a card, in the order shown: where in struct summary_card
 * the flag that it is there and the value are (CARD_FIG_ENERGY: by
 * summary_energy()).  Only mean power has a spread kept (power_sd,
 * power_n), so it alone is tested.
 */
#define CARD_FIG_ENERGY	((size_t)-1)
static const struct card_fig {
	const char *name, *unit;
	size_t has, value;
	bool tested;
} card_figs[] = {
	{ "power_mean", "W", offsetof(struct summary_card, has_power),
	    offsetof(struct summary_card, power_mean), true },
	{ "power_max", "W", offsetof(struct summary_card, has_power),
	    offsetof(struct summary_card, power_max), false },
	{ "power_p95", "W", offsetof(struct summary_card, has_power),
	    offsetof(struct summary_card, power_p95), false },
	{ "energy", "J", offsetof(struct summary_card, has_power),
	    CARD_FIG_ENERGY, false },
	{ "energy_net", "J", offsetof(struct summary_card, has_idle),
	    offsetof(struct summary_card, net_energy_j), false },
	{ "busy_mean", "%", offsetof(struct summary_card, has_busy),
	    offsetof(struct summary_card, busy_mean), false },
	{ "gtemp_max", "C", offsetof(struct summary_card, has_gtemp),
	    offsetof(struct summary_card, gtemp_max), false },
	{ "actmem_peak", "MiB", offsetof(struct summary_card, has_actmem),
	    offsetof(struct summary_card, actmem_peak), false },
};
#define CARD_FIGS	(sizeof(card_figs) / sizeof(card_figs[0]))

/* Whether card x has figure f. */
static bool
card_fig_has(const struct card_fig *f, const struct summary_card *x)
{
	return *(const bool *)((const char *)x + f->has);
}

/* Figure f of card x. */
static double
card_fig_value(const struct card_fig *f, const struct summary_card *x)
{
	if (f->value == CARD_FIG_ENERGY)
		return summary_energy(x);
	return *(const double *)((const char *)x + f->value);
}

/* The figures of every card either window has. */
static void
card_figures(struct cmp *c)
{
	const struct winsum *b = &c->base, *n = &c->new;
	int devs[512];
	size_t nd = 0;

	for (int k = 0; k < 2; k++) {
		const struct winsum *w = k ? n : b;

		for (size_t i = 0; i < w->s.ncards && nd < 512; i++) {
			bool seen = false;

			for (size_t j = 0; j < nd; j++)
				seen = seen || devs[j] == w->s.cards[i].device;
			if (!seen)
				devs[nd++] = w->s.cards[i].device;
		}
	}
	for (size_t i = 0; i < nd; i++)
		for (size_t j = i + 1; j < nd; j++)
			if (devs[j] < devs[i]) {
				int t = devs[i];

				devs[i] = devs[j];
				devs[j] = t;
			}
	for (size_t i = 0; i < nd; i++) {
		const struct summary_card *x = card_of(b, devs[i]);
		const struct summary_card *y = card_of(n, devs[i]);
		bool both = x != NULL && y != NULL;
		int d = devs[i];

		for (size_t k = 0; k < CARD_FIGS; k++) {
			const struct card_fig *cf = &card_figs[k];

			add_fig(c, cf->name, cf->unit, d, both &&
			    card_fig_has(cf, x) && card_fig_has(cf, y),
			    both ? card_fig_value(cf, x) : 0,
			    both ? card_fig_value(cf, y) : 0);
			if (cf->tested && c->f[c->n - 1].has) {
				struct stats_sample sb = { x->power_mean,
				    x->power_sd, (size_t)x->power_n };
				struct stats_sample sn = { y->power_mean,
				    y->power_sd, (size_t)y->power_n };

				judge(c, &sb, &sn, "higher", "lower");
			}
		}
		for (int k = 0; k < SUMMARY_NBW; k++) {
			char name[32];

			snprintf(name, sizeof(name), "%s_mean",
			    summary_bw_keys[k]);
			if (both && x->bw[k].has && y->bw[k].has)
				add_fig(c, name, "GiB/s", d, true,
				    x->bw[k].mean, y->bw[k].mean);
		}
	}
}

static void
step_figures(struct cmp *c)
{
	struct runsteps *b = &c->rb, *n = &c->rn;
	double *vb, *vn;
	size_t kb = 0, kn = 0;
	struct stats_sample sb, sn;

	if ((vb = calloc(b->n + 1, sizeof(double))) == NULL ||
	    (vn = calloc(n->n + 1, sizeof(double))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < b->n; i++)
		vb[i] = (double)b->s[i].dur_ns / 1e6;
	for (size_t i = 0; i < n->n; i++)
		vn[i] = (double)n->s[i].dur_ns / 1e6;
	sb = stats_of(vb, b->n);
	sn = stats_of(vn, n->n);
	add_fig(c, "step_time", "ms", -1, true, sb.mean, sn.mean);
	judge(c, &sb, &sn, "slower", "faster");
	c->step_time = &c->f[c->n - 1] - c->f;
	for (size_t i = 0; i < b->n; i++)
		if (b->s[i].has_energy)
			vb[kb++] = b->s[i].energy_j;
	for (size_t i = 0; i < n->n; i++)
		if (n->s[i].has_energy)
			vn[kn++] = n->s[i].energy_j;
	sb = stats_of(vb, kb);
	sn = stats_of(vn, kn);
	add_fig(c, "step_energy", "J", -1, kb > 0 && kn > 0, sb.mean, sn.mean);
	if (kb > 0 && kn > 0)
		judge(c, &sb, &sn, "higher", "lower");
	c->step_energy = &c->f[c->n - 1] - c->f;
	free(vb);
	free(vn);
}

/* The regressions past pct into c->regressions; true if any. */
static bool
regressed(struct cmp *c, double pct)
{
	double eb = winsum_energy(&c->base), en = winsum_energy(&c->new);

	c->nreg = 0;
	if (eb > 0 && 100.0 * (en - eb) / eb > pct)
		snprintf(c->regression[c->nreg++], sizeof(c->regression[0]),
		    "energy of all cards rose %.1f %% (%.3f J to %.3f J)",
		    100.0 * (en - eb) / eb, eb, en);
	if (c->traces) {
		const size_t k[2] = { c->step_time, c->step_energy };

		for (int i = 0; i < 2; i++) {
			const struct cmp_fig *f = &c->f[k[i]];

			if (f->has && f->base > 0 && compare_rel(f) > pct &&
			    strcmp(f->verdict, "within noise") != 0)
				snprintf(c->regression[c->nreg++],
				    sizeof(c->regression[0]), "mean %s rose "
				    "%.1f %% (%.4g %s to %.4g %s), %s", f->name,
				    compare_rel(f), f->base, f->unit, f->new, f->unit,
				    f->verdict);
		}
	}
	return c->nreg > 0;
}

int
compare_settled(const struct cmp *c)
{
	/* unreadable rows (6) outrank a window not yet complete (7) */
	if (c->base.settled == CLIENT_EXIT_PARTIAL ||
	    c->new.settled == CLIENT_EXIT_PARTIAL)
		return CLIENT_EXIT_PARTIAL;
	return c->base.settled != CLIENT_EXIT_OK ? c->base.settled :
	    c->new.settled;
}

int
compare_load(sqlite3 *db, const struct winsum_from *from, const char *base,
    const char *new, const struct trace_list *trace_base,
    const struct trace_list *trace_new,
    bool align, int64_t lookback, double min_change, struct cmp *c)
{
	char ib[32], in[32];
	int rc;

	memset(c, 0, sizeof(*c));
	c->min_change = min_change;
	if ((rc = winsum_load(db, from, base, lookback, &c->base)) !=
	    CLIENT_EXIT_OK ||
	    (rc = winsum_load(db, from, new, lookback, &c->new)) !=
	    CLIENT_EXIT_OK)
		return rc;
	if (trace_base != NULL) {
		c->traces = true;
		/* by id: a tag may name several windows */
		snprintf(ib, sizeof(ib), "%" PRId64, c->base.w.id);
		snprintf(in, sizeof(in), "%" PRId64, c->new.w.id);
		if ((rc = runsteps_load(db, trace_base, align ? ib : NULL,
		    &c->rb)) != CLIENT_EXIT_OK ||
		    (rc = runsteps_load(db, trace_new, align ? in : NULL,
		    &c->rn)) != CLIENT_EXIT_OK)
			return rc;
	}
	card_figures(c);
	add_fig(c, "energy", "J", -1, c->base.s.ncards > 0 &&
	    c->new.s.ncards > 0, winsum_energy(&c->base),
	    winsum_energy(&c->new));
	if (c->traces)
		step_figures(c);
	return CLIENT_EXIT_OK;
}

void
compare_free(struct cmp *c)
{
	winsum_free(&c->base);
	winsum_free(&c->new);
	runsteps_free(&c->rb);
	runsteps_free(&c->rn);
	free(c->f);
	memset(c, 0, sizeof(*c));
}

static double
parse_pct(const char *opt, const char *s, bool *ok)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	*ok = errno == 0 && end != s && *end == '\0' && v >= 0 && v < 1e6;
	if (!*ok)
		warnx("%s %s: not a percentage such as 5 or 2.5", opt, s);
	return v;
}

/* What compare's command line asks for. */
struct compare_args {
	struct trace_list tb, tn;	/* --trace-base, --trace-new */
	bool	 json, align, partial;
	double	 fail_pct;		/* -1: no --fail-on-regression */
	double	 min_change;
};

/* Compare windows base and new as r asks. */
static int
compare_run(struct client *cl, const char *base, const char *new,
    const struct compare_args *r)
{
	const char *path;
	struct winsum_from from;
	bool reg;
	struct cmp c;
	struct cmp_ops ops;
	struct cmp_breakdown bd;
	struct cmp_serving sv;
	sqlite3 *db;
	int rc;

	if ((r->tb.n == 0) != (r->tn.n == 0)) {
		warnx("--trace-base and --trace-new go together");
		return CLIENT_EXIT_USAGE;
	}
	if (r->align && r->tb.n == 0) {
		warnx("--align places --trace-base and --trace-new");
		return CLIENT_EXIT_USAGE;
	}
	if ((path = client_database(cl)) == NULL)
		return CLIENT_EXIT_FAILED;
	if ((rc = db_open(path, &db)) != CLIENT_EXIT_OK)
		return rc;
	from = (struct winsum_from){ .cl = cl, .path = path };
	rc = compare_load(db, &from, base, new, r->tb.n > 0 ? &r->tb : NULL,
	    r->tn.n > 0 ? &r->tn : NULL, r->align, summary_idle_lookback(cl),
	    r->min_change, &c);
	memset(&ops, 0, sizeof(ops));
	if (rc == CLIENT_EXIT_OK && c.traces)
		rc = compare_ops_load(db, &c.rb, &c.rn,
		    summary_idle_lookback(cl), &ops);
	if (rc == CLIENT_EXIT_OK && c.traces)
		rc = compare_breakdown_load(&c.rb, &c.rn, &bd);
	if (rc == CLIENT_EXIT_OK)
		rc = compare_serving_load(db, &c.base, &c.new, r->min_change,
		    &sv);
	db_close(db);
	if (rc != CLIENT_EXIT_OK) {
		compare_ops_free(&ops);
		compare_free(&c);
		return rc;
	}
	reg = r->fail_pct >= 0 && regressed(&c, r->fail_pct);
	if (r->json) {
		yajl_gen g = json_gen_new(true);

		yajl_gen_map_open(g);
		jsonw_str(g, "base");
		summary_gen_json(g, &c.base);
		jsonw_str(g, "new");
		summary_gen_json(g, &c.new);
		jsonw_str(g, "min_change_pct");
		(void)jsonw_double(g, r->min_change);
		jsonw_str(g, "figures");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < c.n; i++)
			if (c.f[i].has)
				compare_gen_fig(g, &c.f[i]);
		yajl_gen_array_close(g);
		compare_serving_json(g, &sv);
		if (c.traces) {
			jsonw_str(g, "operators");
			compare_ops_json(g, &ops, TOP_OPS);
			jsonw_str(g, "breakdown");
			compare_breakdown_json(g, &bd);
		}
		jsonw_str(g, "regressions");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < c.nreg; i++)
			jsonw_str(g, c.regression[i]);
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
		json_gen_flush(g, stdout);
		yajl_gen_free(g);
	} else {
		compare_write_windows(stdout, &c, false);
		printf("\n");
		compare_write_figures(stdout, &c, false);
		printf("\nVerdicts: Welch's t-test at the 5 %% level and a change "
		    "of at least %g %%; power over the samples, step figures "
		    "over the active steps (mean ± 95 %% interval).\n",
		    r->min_change);
		compare_serving_write(stdout, &sv);
		if (c.traces) {
			printf("\nOperators, the greatest changes of energy first "
			    "(all cards, every trace of each run; the interval "
			    "adds the two error bounds; device time is the "
			    "traces' own, exact):\n");
			compare_ops_write(stdout, &ops, TOP_OPS);
			printf("\nWhere the time went, each run's mean per step "
			    "(all cards summed; the change's 95 %% interval by "
			    "Welch, the steps as samples):\n");
			compare_breakdown_write(stdout, &bd);
			if (bd.across.side[0].has || bd.across.side[1].has) {
				printf("\nAcross cards, each run's cards side "
				    "by side (every trace's, steps matched by "
				    "name): the step-time spread, the "
				    "straggler's step time less the fastest "
				    "card's, its mean per step and the change's "
				    "95 %% interval by Welch; the card that "
				    "was the straggler in the most steps:\n");
				compare_breakdown_across_write(stdout, &bd,
				    false);
			}
		}
		for (int k = 0; k < 2; k++) {
			const struct winsum *w = k ? &c.new : &c.base;

			printf("\nNotes on the %s window's data:\n", k ? "new" :
			    "base");
			for (size_t i = 0; i < w->nnotes; i++)
				printf("- %s\n", w->notes[i]);
		}
	}
	for (size_t i = 0; i < c.nreg; i++)
		fprintf(stderr, "spyremon: regression: %s\n", c.regression[i]);
	rc = compare_settled(&c);
	compare_ops_free(&ops);
	compare_free(&c);
	/* a regression is the verdict CI waits for: it outranks the rest */
	return reg ? CLIENT_EXIT_REGRESSION : rc;
}

static int
compare_option(void *opts, int ch, char *arg)
{
	struct compare_args *r = opts;
	bool ok;

	switch (ch) {
	case OPT_JSON:
		r->json = true;
		break;
	case OPT_TRACE_BASE:
		return trace_list_add(&r->tb, "--trace-base", arg,
		    TRACELIST_MAX, stderr);
	case OPT_TRACE_NEW:
		return trace_list_add(&r->tn, "--trace-new", arg,
		    TRACELIST_MAX, stderr);
	case OPT_FAIL:
		r->fail_pct = parse_pct("--fail-on-regression", arg, &ok);
		if (!ok)
			return CLIENT_EXIT_USAGE;
		break;
	case OPT_ALIGN:
		r->align = true;
		break;
	case OPT_PARTIAL:
		r->partial = true;
		break;
	case OPT_MIN_CHANGE:
		r->min_change = parse_pct("--min-change", arg, &ok);
		if (!ok)
			return CLIENT_EXIT_USAGE;
		break;
	}
	return CLIENT_EXIT_OK;
}

static int
compare_cmd_run(struct client *cl, void *opts, int argc, char *argv[])
{
	const struct compare_args *r = opts;

	(void)argc;
	cl->partial = r->partial;
	return client_exit(cl, compare_run(cl, argv[0], argv[1], r));
}

static void
compare_done(void *opts)
{
	struct compare_args *r = opts;

	trace_list_free(&r->tb);
	trace_list_free(&r->tn);
}

static const struct option compare_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "trace-base", required_argument, NULL, OPT_TRACE_BASE },
	{ "trace-new", required_argument, NULL, OPT_TRACE_NEW },
	{ "fail-on-regression", required_argument, NULL, OPT_FAIL },
	{ "min-change", required_argument, NULL, OPT_MIN_CHANGE },
	{ "align", no_argument, NULL, OPT_ALIGN },
	{ "partial", no_argument, NULL, OPT_PARTIAL },
	{ NULL, 0, NULL, 0 },
};

static const struct compare_args compare_cmd_defaults = {
	.fail_pct = -1,
	.min_change = DEFAULT_MIN_CHANGE,
};

const struct cmd_spec compare_cmd = {
	.name = "compare",
	.usage =
	    "usage: spyremon compare BASE NEW [--trace-base FILE|DIR ...\n"
	    "                        --trace-new FILE|DIR ... [--align]] [--json]\n"
	    "                        [--fail-on-regression PCT] [--min-change PCT]\n"
	    "                        [--partial]\n"
	    "\n"
	    "Compares two windows (tags or ids): per card and figure the base, new,\n"
	    "change and relative change, with a verdict (Welch's t-test) for mean\n"
	    "power and, with traces, step time and energy per step, then the ten\n"
	    "operators whose energy changed most, each change with its interval,\n"
	    "and each class of the breakdown's mean time per step, its change and\n"
	    "interval, and the class that grew most; for runs of two cards or\n"
	    "more, each run's mean step-time spread across its cards, its change\n"
	    "and interval, and the card that was the straggler most often.\n"
	    "\n"
	    "      --trace-base FILE|DIR     the base run's trace; again, or a\n"
	    "                                TensorBoard log DIR: its ranks\n"
	    "      --trace-new FILE|DIR      the new run's, likewise\n"
	    "      --align                   place each trace at its window's begin\n"
	    "      --json                    one JSON object instead of the table\n"
	    "      --fail-on-regression PCT  exit " CMD_STR(CLIENT_EXIT_REGRESSION)
	    " when energy or step time rose\n"
	    "                                by more than PCT %\n"
	    "      --min-change PCT          smaller changes are within noise\n"
	    "                                (default 2)\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE) |
	    CMD_EXIT(CLIENT_EXIT_REGRESSION) | CMD_EXIT(CLIENT_EXIT_PARTIAL) |
	    CMD_EXIT(CLIENT_EXIT_INCOMPLETE),
	.longopts = compare_longopts,
	.operands = 2,
	.opts_size = sizeof(struct compare_args),
	.defaults = &compare_cmd_defaults,
	.option = compare_option,
	.run = compare_cmd_run,
	.done = compare_done,
};
