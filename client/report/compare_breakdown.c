/*
 * compare_breakdown: two runs' breakdowns side by side
 * (compare_breakdown.h).
 */
#include <err.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bdrun.h"
#include "client.h"
#include "compare_breakdown.h"

static const struct {
	const char *name, *key;
	bool	 cause;
	int	 which;		/* enum ops_category, or enum bd_idle */
} rows[CMP_BD_ROWS] = {
	{ "compute", "compute", false, OPS_COMPUTE },
	{ "data movement", "data_movement", false, OPS_MEMORY },
	{ "communication", "communication", false, OPS_COMM },
	{ "other", "other", false, OPS_OTHER },
	{ "idle", "idle", false, OPS_IDLE },
	{ "idle: host wait", "host_wait", true, BD_HOST_WAIT },
	{ "idle: launch gap", "launch_gap", true, BD_LAUNCH_GAP },
	{ "idle: sync", "sync", true, BD_SYNC },
	{ "idle: unexplained", "unexplained", true, BD_UNEXPLAINED },
};

/* The per-step values of one run: v[row][step], ms. */
struct side {
	double	*v[CMP_BD_ROWS];
	size_t	 n, cap;
};

static void
side_push(struct side *sd, const struct bd_window *all)
{
	if (sd->n == sd->cap) {
		sd->cap = sd->cap ? 2 * sd->cap : 64;
		for (int r = 0; r < CMP_BD_ROWS; r++)
			if ((sd->v[r] = reallocarray(sd->v[r], sd->cap,
			    sizeof(double))) == NULL)
				errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	for (int r = 0; r < CMP_BD_ROWS; r++)
		sd->v[r][sd->n] = (double)(rows[r].cause ?
		    all->idle[rows[r].which] : all->tm.t[rows[r].which]) / 1e6;
	sd->n++;
}

/*
 * The cards of the runs r[0..nt) of rs side by side into *x (its has
 * false with fewer than two cards).
 */
static void
across_side(const struct runsteps *rs, const struct bd_run *r,
    struct cmp_bd_xside *x)
{
	struct bd_rank *rk;
	struct bd_ranks xr;
	double *v;
	size_t n = 0, most = 0;

	memset(x, 0, sizeof(*x));
	if ((rk = calloc(rs->nt + 1, sizeof(*rk))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t t = 0; t < rs->nt; t++)
		rk[t] = (struct bd_rank){ .run = &r[t],
		    .has_rank = rs->t[t].info.has_rank,
		    .rank = rs->t[t].info.rank };
	x->has = bd_ranks_across(rk, rs->nt, &xr);
	free(rk);
	if (!x->has)
		return;
	x->ncards = xr.ncards;
	x->nsteps = xr.across.nsteps;
	if ((v = calloc(x->nsteps + 1, sizeof(*v))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t m = 0; m < xr.across.nsteps; m++) {
		const struct bd_xrange *t = &xr.across.steps[m].time_ns;

		if (t->has)
			v[n++] = (t->max - t->min) / 1e6;
	}
	x->spread = stats_of(v, n);
	free(v);
	for (size_t k = 0; k < xr.across.run.ncards; k++)
		if (xr.across.run.straggler[k] > x->straggler_steps) {
			x->straggler_steps = xr.across.run.straggler[k];
			most = k;
		}
	if (x->straggler_steps > 0) {
		const struct bd_rcard *c = bd_ranks_card(&xr,
		    xr.across.run.cards[most]);

		if (rs->nt == 1)
			snprintf(x->straggler, sizeof(x->straggler), "c%" PRId64,
			    c->card);
		else
			snprintf(x->straggler, sizeof(x->straggler), "%s",
			    c->label);
	}
	bd_ranks_free(&xr);
}

/*
 * Every step of every trace of rs, all cards of its trace summed, and
 * the cards of all its traces side by side.
 */
static int
load_side(const struct runsteps *rs, struct side *sd, struct cmp_bd_xside *x)
{
	struct bd_trace **bt;
	struct bd_run *runs;
	size_t names;
	int rc = CLIENT_EXIT_OK;

	if ((bt = calloc(rs->nt + 1, sizeof(*bt))) == NULL ||
	    (runs = calloc(rs->nt + 1, sizeof(*runs))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t t = 0; t < rs->nt && rc == CLIENT_EXIT_OK; t++)
		rc = bd_trace_read(rs->t[t].path, rs->t[t].info.has_base, NULL,
		    true, &bt[t]);
	names = rc == CLIENT_EXIT_OK ? bd_step_names(bt, rs->nt) : 0;
	for (size_t t = 0; t < rs->nt && rc == CLIENT_EXIT_OK; t++) {
		struct steps_request sr = { .t = &rs->t[t], .device_sql = "" };
		const struct bd_run *run = &runs[t];

		rc = bd_run_load(NULL, &sr, bt[t], names,
		    BREAKDOWN_LAUNCH_GAP_NS, true, &runs[t]);
		for (size_t s = 0; s < run->nsteps && rc == CLIENT_EXIT_OK;
		    s++) {
			struct bd_window all;

			memset(&all, 0, sizeof(all));
			for (size_t c = 0; c < run->res.ncards; c++)
				bd_window_add(&all, &run->res.cards[c].steps[s],
				    c == 0);
			side_push(sd, &all);
		}
	}
	if (rc == CLIENT_EXIT_OK)
		across_side(rs, runs, x);
	for (size_t t = 0; t < rs->nt; t++) {
		bd_run_free(&runs[t]);
		bd_trace_free(bt[t]);
	}
	free(runs);
	free(bt);
	return rc;
}

int
compare_breakdown_load(const struct runsteps *base,
    const struct runsteps *new, struct cmp_breakdown *out)
{
	struct side sd[2];
	int rc;

	memset(out, 0, sizeof(*out));
	memset(sd, 0, sizeof(sd));
	out->grew = -1;
	rc = load_side(base, &sd[0], &out->across.side[0]);
	if (rc == CLIENT_EXIT_OK)
		rc = load_side(new, &sd[1], &out->across.side[1]);
	if (out->across.side[0].has && out->across.side[1].has)
		out->across.w = stats_welch(&out->across.side[0].spread,
		    &out->across.side[1].spread);
	for (int r = 0; r < CMP_BD_ROWS; r++) {
		struct cmp_bd_row *p = &out->row[r];

		p->name = rows[r].name;
		p->key = rows[r].key;
		for (int k = 0; k < 2; k++)
			p->s[k] = stats_of(sd[k].v[r], sd[k].n);
		p->w = stats_welch(&p->s[0], &p->s[1]);
		if (r < 5 && p->w.diff > 0 && (out->grew < 0 || p->w.diff >
		    out->row[out->grew].w.diff))
			out->grew = r;
		free(sd[0].v[r]);
		free(sd[1].v[r]);
	}
	out->nsteps[0] = sd[0].n;
	out->nsteps[1] = sd[1].n;
	return rc;
}

void
compare_breakdown_write(FILE *fp, const struct cmp_breakdown *b)
{
	fprintf(fp, "%-20s %11s %11s %11s %25s %9s\n", "CLASS", "BASE ms",
	    "NEW ms", "CHANGE ms", "95% INTERVAL ms", "p");
	for (int r = 0; r < CMP_BD_ROWS; r++) {
		const struct cmp_bd_row *p = &b->row[r];
		char iv[64] = "-", pv[16] = "-";

		if (p->w.valid) {
			snprintf(iv, sizeof(iv), "[%.3f, %.3f]", p->w.ci_lo,
			    p->w.ci_hi);
			snprintf(pv, sizeof(pv), "%.2g", p->w.p);
		}
		fprintf(fp, "%-20s %11.3f %11.3f %+11.3f %25s %9s\n", p->name,
		    p->s[0].mean, p->s[1].mean, p->w.diff, iv, pv);
	}
	if (b->grew >= 0)
		fprintf(fp, "Grew most: %s, %+.3f ms per step.\n",
		    b->row[b->grew].name, b->row[b->grew].w.diff);
	else
		fprintf(fp, "No class grew.\n");
}

void
compare_breakdown_across_write(FILE *fp, const struct cmp_breakdown *b,
    bool markdown)
{
	const struct cmp_bd_across *x = &b->across;
	static const char *const run[2] = { "base", "new" };

	if (!x->side[0].has && !x->side[1].has)
		return;
	if (markdown)
		fprintf(fp, "| run | cards | steps | mean spread ms | sd ms | "
		    "straggler most often |\n"
		    "|---|---:|---:|---:|---:|---|\n");
	else
		fprintf(fp, "%-5s %6s %6s %15s %11s  %s\n", "RUN", "CARDS",
		    "STEPS", "MEAN SPREAD ms", "SD ms", "STRAGGLER MOST OFTEN");
	for (int k = 0; k < 2; k++) {
		const struct cmp_bd_xside *sd = &x->side[k];
		char most[BD_LABEL_MAX + 48] = "-", mean[32] = "-", dev[32] = "-";

		if (sd->has && sd->spread.n > 0) {
			snprintf(mean, sizeof(mean), "%.3f", sd->spread.mean);
			snprintf(dev, sizeof(dev), "%.3f", sd->spread.sd);
		}
		if (sd->has && sd->straggler_steps > 0)
			snprintf(most, sizeof(most), "%s (%zu of %zu steps)",
			    sd->straggler, sd->straggler_steps, sd->nsteps);
		else if (!sd->has)
			snprintf(most, sizeof(most), "one card: none");
		if (markdown)
			fprintf(fp, "| %s | %zu | %zu | %s | %s | %s |\n", run[k],
			    sd->has ? sd->ncards : 1, sd->nsteps, mean, dev,
			    most);
		else
			fprintf(fp, "%-5s %6zu %6zu %15s %11s  %s\n", run[k],
			    sd->has ? sd->ncards : 1, sd->nsteps, mean, dev,
			    most);
	}
	if (markdown)
		fprintf(fp, "\n");
	if (!x->side[0].has || !x->side[1].has)
		fprintf(fp, "No change: one run has a single card.\n");
	else if (!x->w.valid)
		fprintf(fp, "Spread change: %+.3f ms per step (no interval: "
		    "a run of fewer than two steps, or no variance).\n",
		    x->w.diff);
	else
		fprintf(fp, "Spread change: %+.3f ms per step, 95 %% interval "
		    "[%.3f, %.3f], p %.2g.\n", x->w.diff, x->w.ci_lo,
		    x->w.ci_hi, x->w.p);
}

/* One run's cards side by side as a JSON object, or null. */
static void
across_side_json(yajl_gen g, const struct cmp_bd_xside *sd)
{
	if (!sd->has) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_map_open(g);
	jsonw_put_uint(g, "cards", sd->ncards);
	jsonw_put_uint(g, "steps", sd->nsteps);
	jsonw_put_double_or_null(g, "spread_ms", sd->spread.n > 0,
	    sd->spread.mean);
	jsonw_put_double_or_null(g, "spread_sd_ms", sd->spread.n > 1,
	    sd->spread.sd);
	jsonw_put_str_or_null(g, "straggler_most", sd->straggler_steps > 0 ?
	    sd->straggler : NULL);
	jsonw_put_uint(g, "straggler_most_steps", sd->straggler_steps);
	yajl_gen_map_close(g);
}

void
compare_breakdown_json(yajl_gen g, const struct cmp_breakdown *b)
{
	const struct cmp_bd_across *x = &b->across;
	bool both = x->side[0].has && x->side[1].has;

	yajl_gen_map_open(g);
	jsonw_put_uint(g, "base_steps", b->nsteps[0]);
	jsonw_put_uint(g, "new_steps", b->nsteps[1]);
	jsonw_str(g, "classes");
	yajl_gen_array_open(g);
	for (int r = 0; r < CMP_BD_ROWS; r++) {
		const struct cmp_bd_row *p = &b->row[r];

		yajl_gen_map_open(g);
		jsonw_put_str(g, "class", p->key);
		jsonw_put_bool(g, "idle_cause", r >= 5);
		jsonw_put_double_or_null(g, "base_ms", true, p->s[0].mean);
		jsonw_put_double_or_null(g, "base_sd_ms", true, p->s[0].sd);
		jsonw_put_double_or_null(g, "new_ms", true, p->s[1].mean);
		jsonw_put_double_or_null(g, "new_sd_ms", true, p->s[1].sd);
		jsonw_put_double_or_null(g, "change_ms", true, p->w.diff);
		jsonw_put_double_or_null(g, "change_lo_ms", p->w.valid,
		    p->w.ci_lo);
		jsonw_put_double_or_null(g, "change_hi_ms", p->w.valid,
		    p->w.ci_hi);
		jsonw_put_double_or_null(g, "p", p->w.valid, p->w.p);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	jsonw_put_str_or_null(g, "grew_most", b->grew >= 0 ?
	    b->row[b->grew].key : NULL);
	jsonw_str(g, "across_cards");
	yajl_gen_map_open(g);
	jsonw_str(g, "base");
	across_side_json(g, &x->side[0]);
	jsonw_str(g, "new");
	across_side_json(g, &x->side[1]);
	jsonw_put_double_or_null(g, "spread_change_ms", both, x->w.diff);
	jsonw_put_double_or_null(g, "spread_change_lo_ms", both && x->w.valid,
	    x->w.ci_lo);
	jsonw_put_double_or_null(g, "spread_change_hi_ms", both && x->w.valid,
	    x->w.ci_hi);
	jsonw_put_double_or_null(g, "spread_change_p", both && x->w.valid,
	    x->w.p);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}
