/*
 * compare_write: the comparison written out (compare.h): the two windows
 * side by side, the figures with their verdicts as a table (plain or
 * Markdown, for report.md), and a figure as JSON, with a figure's
 * relative change, which compare.c's verdicts use too (so this file
 * calls nothing of compare.c).
 */
#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "client.h"
#include "compare.h"
#include "format.h"
#include "jsonw.h"
#include "runsteps.h"
#include "stats.h"
#include "timeparse.h"
#include "winsum.h"

double
compare_rel(const struct cmp_fig *f)
{
	return f->base != 0 ? 100.0 * (f->new - f->base) / fabs(f->base) :
	    f->new == 0 ? 0 : NAN;
}

static const char *
metastr(const struct winsum *w, const char *key, char *buf, size_t len)
{
	const char *v = winsum_meta(w, key, buf, len);

	return v != NULL ? v : "";
}

/* The keys of both windows' metadata, base's first. */
static size_t
meta_keys(const struct cmp *c, char keys[][PROTO_META_KEY_MAX + 1], size_t max)
{
	size_t n = 0;

	for (int k = 0; k < 2; k++) {
		yajl_val v = yajl_tree_parse(k ? c->new.w.meta : c->base.w.meta,
		    NULL, 0);

		if (v == NULL || !YAJL_IS_OBJECT(v)) {
			yajl_tree_free(v);
			continue;
		}
		for (size_t i = 0; i < v->u.object.len && n < max; i++) {
			bool seen = false;

			for (size_t j = 0; j < n; j++)
				seen = seen || strcmp(keys[j],
				    v->u.object.keys[i]) == 0;
			if (!seen)
				snprintf(keys[n++], PROTO_META_KEY_MAX + 1, "%s",
				    v->u.object.keys[i]);
		}
		yajl_tree_free(v);
	}
	return n;
}

static void
row3(FILE *fp, bool markdown, const char *x, const char *y, const char *z)
{
	if (markdown)
		fprintf(fp, "| %s | %s | %s |\n", x, y, z);
	else
		fprintf(fp, "%-16s %-36s %s\n", x, y, z);
}

/* "6 steps", or for the ranks of one run "12 steps of 2 traces". */
static void
trace_steps(const struct runsteps *rs, char *buf, size_t len)
{
	if (rs->nt > 1)
		snprintf(buf, len, "%zu steps of %zu traces", rs->n, rs->nt);
	else
		snprintf(buf, len, "%zu steps", rs->n);
}

void
compare_write_windows(FILE *fp, const struct cmp *c, bool markdown)
{
	char keys[2 * PROTO_META_MAX][PROTO_META_KEY_MAX + 1];
	char a[PROTO_META_VALUE_MAX + 1], b[PROTO_META_VALUE_MAX + 1];
	char t1[FMT_BUFLEN], t2[FMT_BUFLEN];
	size_t nk = meta_keys(c, keys, 2 * PROTO_META_MAX);

	if (markdown)
		fprintf(fp, "| | base | new |\n|---|---|---|\n");
	else
		row3(fp, false, "", "BASE", "NEW");
	snprintf(a, sizeof(a), "%" PRId64 " '%s'", c->base.w.id, c->base.w.tag);
	snprintf(b, sizeof(b), "%" PRId64 " '%s'", c->new.w.id, c->new.w.tag);
	row3(fp, markdown, "window", a, b);
	format_time_utc(c->base.w.begin_ns, t1, sizeof(t1));
	format_time_utc(c->new.w.begin_ns, t2, sizeof(t2));
	row3(fp, markdown, "begin", t1, t2);
	fmt_span(c->base.end_ns - c->base.w.begin_ns, t1, sizeof(t1));
	fmt_span(c->new.end_ns - c->new.w.begin_ns, t2, sizeof(t2));
	row3(fp, markdown, "duration", t1, t2);
	row3(fp, markdown, "cards", (snprintf(a, sizeof(a), "%zu",
	    c->base.s.ncards), a), (snprintf(b, sizeof(b), "%zu",
	    c->new.s.ncards), b));
	for (size_t i = 0; i < nk; i++) {
		char name[PROTO_META_KEY_MAX + 8];

		snprintf(name, sizeof(name), "meta %.*s", PROTO_META_KEY_MAX,
		    keys[i]);
		row3(fp, markdown, name, metastr(&c->base, keys[i], a, sizeof(a)),
		    metastr(&c->new, keys[i], b, sizeof(b)));
	}
	if (c->traces) {
		trace_steps(&c->rb, a, sizeof(a));
		trace_steps(&c->rn, b, sizeof(b));
		row3(fp, markdown, "trace", a, b);
	}
}

/* "12.34" or "12.34 ± 0.56" for a tested figure. */
static void
value_text(const struct cmp_fig *f, const struct stats_sample *s, double v,
    char *buf, size_t len)
{
	if (f->tested && s->n >= 2 && f->card < 0)
		snprintf(buf, len, "%.4g ± %.2g", v, stats_ci95(s));
	else
		snprintf(buf, len, "%.4g", v);
}

void
compare_write_figures(FILE *fp, const struct cmp *c, bool markdown)
{
	static const char *const heads[8] = {
		"FIGURE", "UNIT", "CARD", "BASE", "NEW", "CHANGE", "REL", "VERDICT",
	};
	char (*cells)[8][64];
	size_t w[8] = { 0 }, nr = 0;

	if ((cells = calloc(c->n + 1, sizeof(*cells))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < c->n; i++) {
		const struct cmp_fig *f = &c->f[i];

		if (!f->has)
			continue;
		snprintf(cells[nr][0], 64, "%s", f->name);
		snprintf(cells[nr][1], 64, "%s", f->unit);
		if (f->card >= 0)
			snprintf(cells[nr][2], 64, "%d", f->card);
		else
			snprintf(cells[nr][2], 64, "all");
		value_text(f, &f->sb, f->base, cells[nr][3], 64);
		value_text(f, &f->sn, f->new, cells[nr][4], 64);
		snprintf(cells[nr][5], 64, "%+.4g", f->new - f->base);
		if (isnan(compare_rel(f)))
			snprintf(cells[nr][6], 64, "-");
		else
			snprintf(cells[nr][6], 64, "%+.1f%%", compare_rel(f));
		if (f->tested && f->w.valid && f->w.p < 1e-4)
			snprintf(cells[nr][7], 64, "%s (p<0.0001)", f->verdict);
		else if (f->tested && f->w.valid)
			snprintf(cells[nr][7], 64, "%s (p=%.2g)", f->verdict,
			    f->w.p);
		else
			snprintf(cells[nr][7], 64, "%s", f->verdict);
		nr++;
	}
	for (int k = 0; k < 8; k++) {
		w[k] = strlen(heads[k]);
		for (size_t r = 0; r < nr; r++)
			if (strlen(cells[r][k]) > w[k])
				w[k] = strlen(cells[r][k]);
	}
	if (markdown) {
		fprintf(fp, "| figure | unit | card | base | new | change | rel. | verdict |\n");
		fprintf(fp, "|---|---|---|---:|---:|---:|---:|---|\n");
		for (size_t r = 0; r < nr; r++) {
			for (int k = 0; k < 8; k++)
				fprintf(fp, "| %s ", cells[r][k]);
			fprintf(fp, "|\n");
		}
	} else {
		for (int k = 0; k < 8; k++)
			fprintf(fp, k < 7 ? "%-*s  " : "%.*s\n", (int)w[k],
			    heads[k]);
		for (size_t r = 0; r < nr; r++)
			for (int k = 0; k < 8; k++)
				fprintf(fp, k < 7 ? "%-*s  " : "%.*s\n",
				    (int)w[k], cells[r][k]);
	}
	free(cells);
}

void
compare_gen_fig(yajl_gen g, const struct cmp_fig *f)
{
	yajl_gen_map_open(g);
	jsonw_str(g, "figure");
	jsonw_str(g, f->name);
	jsonw_str(g, "unit");
	jsonw_str(g, f->unit);
	jsonw_str(g, "card");
	if (f->card >= 0)
		yajl_gen_integer(g, f->card);
	else
		yajl_gen_null(g);
	jsonw_str(g, "base");
	(void)jsonw_double(g, f->base);
	jsonw_str(g, "new");
	(void)jsonw_double(g, f->new);
	jsonw_str(g, "change");
	(void)jsonw_double(g, f->new - f->base);
	jsonw_str(g, "rel_change_pct");
	if (isnan(compare_rel(f)))
		yajl_gen_null(g);
	else
		(void)jsonw_double(g, compare_rel(f));
	jsonw_str(g, "verdict");
	jsonw_str(g, f->verdict);
	if (f->tested) {
		jsonw_str(g, "base_ci95");
		(void)jsonw_double(g, stats_ci95(&f->sb));
		jsonw_str(g, "new_ci95");
		(void)jsonw_double(g, stats_ci95(&f->sn));
		jsonw_str(g, "base_n");
		yajl_gen_integer(g, (long long)f->sb.n);
		jsonw_str(g, "new_n");
		yajl_gen_integer(g, (long long)f->sn.n);
		if (f->w.valid) {
			jsonw_str(g, "welch_t");
			(void)jsonw_double(g, f->w.t);
			jsonw_str(g, "welch_df");
			(void)jsonw_double(g, f->w.df);
			jsonw_str(g, "p");
			(void)jsonw_double(g, f->w.p);
		}
	}
	yajl_gen_map_close(g);
}
