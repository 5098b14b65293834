/*
 * compare_serving: energy per request and per generated token of two
 * served windows, with the change's interval from batch means (method
 * in compare_serving.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "compare_serving.h"
#include "dbread.h"
#include "jsonw.h"
#include "summary.h"

#define ALPHA	0.05

/* The longest sample interval of ws's cards, in ns (0: not known). */
static int64_t
longest_interval(const struct winsum *ws)
{
	int64_t m = 0;

	for (size_t i = 0; i < ws->s.ncards; i++)
		if (ws->s.cards[i].max_interval_ms * 1000000 > m)
			m = ws->s.cards[i].max_interval_ms * 1000000;
	return m;
}

/*
 * The energy of all cards in each of k equal parts of ws into e[0..k);
 * *k lowered so that a part spans two of its longest sample interval.
 */
static int
parts(sqlite3 *db, const struct winsum *ws, double *e, size_t *k)
{
	int64_t b = ws->w.begin_ns, len = ws->end_ns - ws->w.begin_ns;
	int64_t iv = longest_interval(ws);

	if (iv > 0 && (int64_t)*k * 2 * iv > len)
		*k = (size_t)(len / (2 * iv));
	if (*k < 2) {
		*k = 0;
		return CLIENT_EXIT_OK;
	}
	for (size_t i = 0; i < *k; i++) {
		int64_t lo = b + (int64_t)((double)len * (double)i / (double)*k);
		int64_t hi = i + 1 == *k ? ws->end_ns :
		    b + (int64_t)((double)len * (double)(i + 1) / (double)*k);
		struct summary sm;

		if (summary_compute(db, 0, lo, hi, 0, 0, &sm) == -1)
			return db_error(db, "the samples of a part of a window");
		e[i] = 0;
		for (size_t c = 0; c < sm.ncards; c++)
			if (sm.cards[c].has_power)
				e[i] += summary_energy(&sm.cards[c]);
		summary_free(&sm);
	}
	return CLIENT_EXIT_OK;
}

/* The batch estimates of energy per count: k * e_i / count. */
static struct stats_sample
estimates(const double *e, size_t k, double count)
{
	double v[CMP_SERVING_BATCHES];

	for (size_t i = 0; i < k; i++)
		v[i] = (double)k * e[i] / count;
	return stats_of(v, k);
}

static double
rel(const struct cmp_serving_fig *f)
{
	return f->base != 0 ? 100.0 * (f->new - f->base) / fabs(f->base) : NAN;
}

int
compare_serving_load(sqlite3 *db, const struct winsum *base,
    const struct winsum *new, double min_change, struct cmp_serving *out)
{
	double eb[CMP_SERVING_BATCHES], en[CMP_SERVING_BATCHES];
	int rc;

	memset(out, 0, sizeof(*out));
	serving_compute(db, base, &out->sb);
	serving_compute(db, new, &out->sn);
	out->any = out->sb.state != SERVING_NONE ||
	    out->sn.state != SERVING_NONE;
	out->fig[0].name = "energy per request";
	out->fig[0].key = "per_request";
	out->fig[1].name = "energy per generated token";
	out->fig[1].key = "per_generation_token";
	for (int i = 0; i < CMP_SERVING_NFIG; i++)
		out->fig[i].verdict = "-";
	if (out->sb.state != SERVING_OK || out->sn.state != SERVING_OK)
		return CLIENT_EXIT_OK;
	out->kb = out->kn = CMP_SERVING_BATCHES;
	if ((rc = parts(db, base, eb, &out->kb)) != CLIENT_EXIT_OK ||
	    (rc = parts(db, new, en, &out->kn)) != CLIENT_EXIT_OK)
		return rc;
	for (int i = 0; i < CMP_SERVING_NFIG; i++) {
		struct cmp_serving_fig *f = &out->fig[i];
		double cb = i == 0 ? out->sb.requests : out->sb.generation_tokens;
		double cn = i == 0 ? out->sn.requests : out->sn.generation_tokens;

		if (!(i == 0 ? out->sb.has_per_request && out->sn.has_per_request :
		    out->sb.has_per_gen && out->sn.has_per_gen))
			continue;
		f->has = true;
		f->base = i == 0 ? out->sb.j_per_request[0] : out->sb.j_per_gen[0];
		f->new = i == 0 ? out->sn.j_per_request[0] : out->sn.j_per_gen[0];
		if (out->kb < 2 || out->kn < 2)
			continue;
		f->tested = true;
		f->sb = estimates(eb, out->kb, cb);
		f->sn = estimates(en, out->kn, cn);
		f->w = stats_welch(&f->sb, &f->sn);
		if (f->w.valid && f->w.p < ALPHA && fabs(rel(f)) >= min_change)
			f->verdict = f->new > f->base ? "higher" : "lower";
		else
			f->verdict = "within noise";
	}
	return CLIENT_EXIT_OK;
}

/* One window's state for a person: its counts, or why there are none. */
static void
write_state(FILE *fp, const char *which, const struct serving *s)
{
	if (s->state == SERVING_OK)
		fprintf(fp, "- %s: %.0f requests, %.0f prompt and %.0f generated "
		    "tokens in %.3f s\n", which, s->requests, s->prompt_tokens,
		    s->generation_tokens, s->seconds);
	else if (s->state == SERVING_NONE)
		fprintf(fp, "- %s: not begun with --vllm: no serving figure\n",
		    which);
	else
		fprintf(fp, "- %s: no serving figure: %s\n", which, s->note);
}

void
compare_serving_write(FILE *fp, const struct cmp_serving *s)
{
	if (!s->any)
		return;
	fprintf(fp, "\nServing (the vLLM server's counters over each window, "
	    "the energy of all cards):\n");
	write_state(fp, "base", &s->sb);
	write_state(fp, "new", &s->sn);
	for (int i = 0; i < CMP_SERVING_NFIG; i++) {
		const struct cmp_serving_fig *f = &s->fig[i];

		if (!f->has)
			continue;
		fprintf(fp, "- %s: base %.6g J", f->name, f->base);
		if (f->tested)
			fprintf(fp, " ± %.3g", stats_ci95(&f->sb));
		fprintf(fp, ", new %.6g J", f->new);
		if (f->tested)
			fprintf(fp, " ± %.3g", stats_ci95(&f->sn));
		fprintf(fp, "; change %+.6g J (%+.1f %%)", f->new - f->base,
		    rel(f));
		if (f->tested && f->w.valid)
			fprintf(fp, ", 95 %% interval [%+.6g, %+.6g] J",
			    f->w.ci_lo, f->w.ci_hi);
		fprintf(fp, ": %s\n", f->verdict);
	}
	if (s->fig[0].tested || s->fig[1].tested)
		fprintf(fp, "Intervals: batch means over %zu and %zu equal parts "
		    "of the windows (each part's energy times their number over "
		    "the window's count), Welch's test at the 5 %% level; they "
		    "take the load as steady over each window.\n", s->kb, s->kn);
	else if (s->fig[0].has || s->fig[1].has)
		fprintf(fp, "No interval: a window is too short to cut into two "
		    "parts of two sample intervals each.\n");
}

static void
gen_state(yajl_gen g, const char *key, const struct serving *s)
{
	static const char *const names[] = {
		[SERVING_NONE] = "none", [SERVING_NO_END] = "no_end",
		[SERVING_RESTARTED] = "restarted", [SERVING_OK] = "ok",
	};

	jsonw_str(g, key);
	yajl_gen_map_open(g);
	jsonw_put_str(g, "state", names[s->state]);
	if (s->state == SERVING_OK) {
		jsonw_str(g, "requests");
		(void)jsonw_double(g, s->requests);
		jsonw_str(g, "prompt_tokens");
		(void)jsonw_double(g, s->prompt_tokens);
		jsonw_str(g, "generation_tokens");
		(void)jsonw_double(g, s->generation_tokens);
	} else if (s->note[0] != '\0')
		jsonw_put_str(g, "note", s->note);
	yajl_gen_map_close(g);
}

void
compare_serving_json(yajl_gen g, const struct cmp_serving *s)
{
	if (!s->any)
		return;
	jsonw_str(g, "serving");
	yajl_gen_map_open(g);
	gen_state(g, "base", &s->sb);
	gen_state(g, "new", &s->sn);
	jsonw_put_uint(g, "base_batches", s->kb);
	jsonw_put_uint(g, "new_batches", s->kn);
	jsonw_str(g, "figures");
	yajl_gen_array_open(g);
	for (int i = 0; i < CMP_SERVING_NFIG; i++) {
		const struct cmp_serving_fig *f = &s->fig[i];

		if (!f->has)
			continue;
		yajl_gen_map_open(g);
		jsonw_put_str(g, "figure", f->key);
		jsonw_put_str(g, "unit", "J");
		jsonw_str(g, "base");
		(void)jsonw_double(g, f->base);
		jsonw_str(g, "new");
		(void)jsonw_double(g, f->new);
		jsonw_str(g, "change");
		(void)jsonw_double(g, f->new - f->base);
		jsonw_str(g, "rel_change_pct");
		(void)jsonw_double(g, rel(f));
		jsonw_put_str(g, "verdict", f->verdict);
		if (f->tested) {
			jsonw_str(g, "base_ci95");
			(void)jsonw_double(g, stats_ci95(&f->sb));
			jsonw_str(g, "new_ci95");
			(void)jsonw_double(g, stats_ci95(&f->sn));
		}
		if (f->tested && f->w.valid) {
			jsonw_str(g, "change_ci95");
			yajl_gen_array_open(g);
			(void)jsonw_double(g, f->w.ci_lo);
			(void)jsonw_double(g, f->w.ci_hi);
			yajl_gen_array_close(g);
			jsonw_str(g, "p");
			(void)jsonw_double(g, f->w.p);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}
