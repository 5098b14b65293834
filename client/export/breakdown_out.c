/*
 * breakdown_out: a trace's breakdown as a table, csv or json
 * (breakdown_out.h).
 *
 * Times are written in µs, the trace's unit, exactly (the ns after the
 * point); shares are of the window's span, in %, so that a card's
 * classes add up to 100 and its idle causes to its idle share.
 */
#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "breakdown_cards.h"
#include "breakdown_evidence.h"
#include "breakdown_out.h"
#include "client.h"
#include "format.h"
#include "json.h"
#include "jsonw.h"
#include "table.h"

/* The classes in the tables' order, with their json and csv names. */
static const struct {
	enum ops_category cat;
	const char *key;
} classes[] = {
	{ OPS_COMPUTE, "compute" }, { OPS_MEMORY, "data_movement" },
	{ OPS_COMM, "communication" }, { OPS_OTHER, "other" },
	{ OPS_IDLE, "idle" },
};
#define NCLASSES	(sizeof(classes) / sizeof(classes[0]))

static const char *const idle_keys[BD_NIDLE] = {
	"host_wait", "launch_gap", "sync", "unexplained",
};

/* The counters of window w (bd_run's numbering) and card, or NULL. */
static const struct steps_mean *
counters_of(const struct bd_run *r, size_t w, int64_t card)
{
	return bd_run_counters(r, w, card);
}

static double
pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static void
put_pct(yajl_gen g, const char *key, double v)
{
	char buf[32];

	jsonw_str(g, key);
	snprintf(buf, sizeof(buf), "%.4f", v);
	jsonw_number(g, buf);
}

/* A window's members: span, classes, overlap, idle causes, counters. */
static void
json_window(yajl_gen g, const struct bd_run *r, int64_t card,
    const struct bd_window *w, const struct steps_mean *m)
{
	char key[48], why[256];

	json_put_us(g, "start_us", w->lo);
	json_put_us(g, "span_us", w->tm.span);
	for (size_t i = 0; i < NCLASSES; i++) {
		snprintf(key, sizeof(key), "%s_us", classes[i].key);
		json_put_us(g, key, w->tm.t[classes[i].cat]);
		snprintf(key, sizeof(key), "%s_pct", classes[i].key);
		put_pct(g, key, pct(w->tm.t[classes[i].cat], w->tm.span));
	}
	json_put_us(g, "non_compute_us", w->tm.span - w->tm.t[OPS_COMPUTE] -
	    w->tm.t[OPS_IDLE]);
	put_pct(g, "non_compute_pct", pct(w->tm.span - w->tm.t[OPS_COMPUTE] -
	    w->tm.t[OPS_IDLE], w->tm.span));
	json_put_us(g, "comm_compute_overlap_us", w->tm.comm_compute);
	jsonw_str(g, "idle_causes");
	yajl_gen_map_open(g);
	for (int c = 0; c < BD_NIDLE; c++) {
		snprintf(key, sizeof(key), "%s_us", idle_keys[c]);
		json_put_us(g, key, w->idle[c]);
	}
	put_pct(g, "classified_pct", bd_classified_pct(w->idle));
	yajl_gen_map_close(g);
	bd_evidence_json(g, r, card, w, m);
	jsonw_put_str(g, "verdict", bd_verdict_name(bd_verdict(&w->tm,
	    w->idle, why, sizeof(why))));
	jsonw_put_str(g, "verdict_rule", why);
}

/* HTA's temporal breakdown: numpy's round(100 * t / span, 2). */
static void
put_hta_pct(yajl_gen g, const char *key, int64_t t, int64_t span)
{
	char buf[32];

	jsonw_str(g, key);
	snprintf(buf, sizeof(buf), "%.2f", span != 0 ?
	    rint(100.0 * (double)t / (double)span * 100) / 100 : 0.0);
	jsonw_number(g, buf);
}

static void
json_hta(yajl_gen g, const struct breakdown_request *rq,
    const struct bd_result *res)
{
	const struct trace_info *in = &rq->t->info;

	jsonw_str(g, "hta");
	if (!res->has_hta) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_map_open(g);
	jsonw_put_int(g, "rank", in->has_rank ? in->rank : 0);
	json_put_us(g, "span_us", res->hta.span);
	json_put_us(g, "idle_us", res->hta.idle);
	json_put_us(g, "compute_us", res->hta.compute);
	json_put_us(g, "non_compute_us", res->hta.non_compute);
	put_hta_pct(g, "idle_pct", res->hta.idle, res->hta.span);
	put_hta_pct(g, "compute_pct", res->hta.compute, res->hta.span);
	put_hta_pct(g, "non_compute_pct", res->hta.non_compute, res->hta.span);
	jsonw_put_bool(g, "rounded_to_us", res->hta_rounded);
	jsonw_put_bool(g, "last_step_dropped", res->hta_last_step_dropped);
	jsonw_put_uint(g, "step_names", rq->nstep_names);
	jsonw_str(g, "streams");
	yajl_gen_array_open(g);
	for (size_t i = 0; res->streams_hta && i < res->nstreams; i++) {
		const struct bd_stream *s = &res->streams[i];

		yajl_gen_map_open(g);
		jsonw_put_int(g, "stream", s->stream);
		json_put_us(g, "host_wait_us", s->idle[BD_HOST_WAIT]);
		json_put_us(g, "kernel_wait_us", s->idle[BD_LAUNCH_GAP]);
		json_put_us(g, "other_us", s->idle[BD_SYNC] +
		    s->idle[BD_UNEXPLAINED]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static int64_t
stream_idle(const struct bd_stream *s)
{
	int64_t sum = 0;

	for (int c = 0; c < BD_NIDLE; c++)
		sum += s->idle[c];
	return sum;
}

static void
write_json(const struct breakdown_request *rq, const struct bd_result *res,
    size_t nsteps, const struct bd_run *cn, const struct bd_across *xc)
{
	yajl_gen g = steps_json_open(rq->t, rq->tagged, rq->host);
	char buf[32];

	jsonw_str(g, "launch_gap_us");
	jsonw_number(g, fmt_us(rq->launch_gap_ns, buf, sizeof(buf)));
	jsonw_str(g, "cards");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < res->ncards; i++) {
		const struct bd_card *c = &res->cards[i];

		yajl_gen_map_open(g);
		jsonw_put_int(g, "card", c->card);
		jsonw_put_uint(g, "events", c->events);
		json_window(g, cn, c->card, &c->total, counters_of(cn,
		    nsteps + i, c->card));
		jsonw_str(g, "steps");
		yajl_gen_array_open(g);
		for (size_t s = 0; s < nsteps; s++) {
			yajl_gen_map_open(g);
			jsonw_put_str(g, "step", c->steps[s].name);
			json_window(g, cn, c->card, &c->steps[s],
			    counters_of(cn, s, c->card));
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	jsonw_put_str(g, "streams_from", res->streams_hta ? "args.stream" :
	    "tid");
	jsonw_str(g, "streams");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < res->nstreams; i++) {
		const struct bd_stream *s = &res->streams[i];
		char key[48];

		yajl_gen_map_open(g);
		jsonw_put_int_or_null(g, "card", s->has_card, s->card);
		jsonw_put_int(g, "stream", s->stream);
		jsonw_put_uint(g, "events", s->events);
		json_put_us(g, "idle_us", stream_idle(s));
		for (int k = 0; k < BD_NIDLE; k++) {
			snprintf(key, sizeof(key), "%s_us", idle_keys[k]);
			json_put_us(g, key, s->idle[k]);
		}
		put_pct(g, "classified_pct", bd_classified_pct(s->idle));
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	jsonw_put_uint(g, "sync_calls", res->sync_calls);
	json_hta(g, rq, res);
	bd_cards_json(g, xc);
	yajl_gen_map_close(g);
	json_gen_flush(g, rq->out);
	yajl_gen_free(g);
}

/* csv: one row per card window and per stream; times in µs. */
static void
csv_head(const struct breakdown_request *rq)
{
	fputs("section,card,step,stream,start_us,span_us", rq->out);
	for (size_t i = 0; i < NCLASSES; i++)
		fprintf(rq->out, ",%s_us", classes[i].key);
	fputs(",comm_compute_overlap_us", rq->out);
	for (int c = 0; c < BD_NIDLE; c++)
		fprintf(rq->out, ",%s_us", idle_keys[c]);
	fputs(",classified_pct,samples,busy_pct,power_W,covered_pct,verdict,"
	    "verdict_rule", rq->out);
	bd_cards_csv_head(rq->out);
	bd_evidence_csv_head(rq->out);
	fputc('\n', rq->out);
}

/* The counters' cells, each empty when unknown, and the row's end. */
static void
csv_counters(FILE *fp, const struct steps_mean *m, int64_t span)
{
	if (m == NULL) {
		fputs(",0,,,", fp);
		return;
	}
	fprintf(fp, ",%" PRIu64 ",", m->samples);
	if (m->has_busy)
		fprintf(fp, "%.9g", m->busy_pct);
	fputc(',', fp);
	if (m->has_pwr)
		fprintf(fp, "%.9g", m->pwr_w);
	fprintf(fp, ",%.4f", pct(m->covered_ns, span));
}

static void
csv_lead(const struct breakdown_request *rq)
{
	if (!rq->tagged)
		return;
	fmt_csv_cell(rq->out, rq->host);
	if (rq->t->info.has_rank)
		fprintf(rq->out, ",%" PRId64 ",", rq->t->info.rank);
	else
		fputs(",,", rq->out);
}

static void
csv_window(const struct breakdown_request *rq, const struct bd_run *r,
    int64_t card, const struct bd_window *w, bool step,
    const struct steps_mean *m)
{
	char buf[32], why[256];

	csv_lead(rq);
	fprintf(rq->out, "%s,%" PRId64 ",", step ? "step" : "card", card);
	if (step)
		fmt_csv_cell(rq->out, w->name);
	fprintf(rq->out, ",,%s", fmt_us(w->lo, buf, sizeof(buf)));
	fprintf(rq->out, ",%s", fmt_us(w->tm.span, buf, sizeof(buf)));
	for (size_t i = 0; i < NCLASSES; i++)
		fprintf(rq->out, ",%s", fmt_us(w->tm.t[classes[i].cat], buf,
		    sizeof(buf)));
	fprintf(rq->out, ",%s", fmt_us(w->tm.comm_compute, buf, sizeof(buf)));
	for (int c = 0; c < BD_NIDLE; c++)
		fprintf(rq->out, ",%s", fmt_us(w->idle[c], buf, sizeof(buf)));
	fprintf(rq->out, ",%.4f", bd_classified_pct(w->idle));
	csv_counters(rq->out, m, w->tm.span);
	fprintf(rq->out, ",%s,", bd_verdict_name(bd_verdict(&w->tm, w->idle,
	    why, sizeof(why))));
	fmt_csv_cell(rq->out, why);
	bd_cards_csv_none(rq->out);
	bd_evidence_csv_cells(rq->out, r, card, w, m);
	fputc('\n', rq->out);
}

/* A step's across-cards row: its name, start and span, then bdcards'. */
static void
csv_across(const struct breakdown_request *rq, const struct bd_step *st,
    const struct bd_xstep *x)
{
	char buf[32];

	csv_lead(rq);
	fprintf(rq->out, "across,%" PRId64 ",", x->straggler);
	fmt_csv_cell(rq->out, st->name);
	fprintf(rq->out, ",,%s", fmt_us(st->lo, buf, sizeof(buf)));
	fprintf(rq->out, ",%s", fmt_us(st->hi - st->lo, buf,
	    sizeof(buf)));
	/* the classes, overlap, causes, counters and verdict: not a card's */
	for (size_t i = 0; i < NCLASSES + 1 + BD_NIDLE + 7; i++)
		fputc(',', rq->out);
	bd_cards_csv_cells(rq->out, x, NULL);
	bd_evidence_csv_none(rq->out);
	fputc('\n', rq->out);
}

static void
write_csv(const struct breakdown_request *rq, const struct bd_result *res,
    size_t nsteps, const struct bd_run *cn, const struct bd_across *xc)
{
	char buf[32];

	if (steps_csv_head(rq->out, rq->tagged, rq->first))
		csv_head(rq);
	for (size_t i = 0; i < res->ncards; i++) {
		int64_t card = res->cards[i].card;

		csv_window(rq, cn, card, &res->cards[i].total, false,
		    counters_of(cn, nsteps + i, card));
		for (size_t s = 0; s < nsteps; s++)
			csv_window(rq, cn, card, &res->cards[i].steps[s], true,
			    counters_of(cn, s, card));
	}
	for (size_t i = 0; i < res->nstreams; i++) {
		const struct bd_stream *s = &res->streams[i];

		csv_lead(rq);
		fputs("stream,", rq->out);
		if (s->has_card)
			fprintf(rq->out, "%" PRId64, s->card);
		fprintf(rq->out, ",,%" PRId64 ",,", s->stream);
		fputs(",,,,,", rq->out);
		fprintf(rq->out, "%s,", fmt_us(stream_idle(s), buf, sizeof(buf)));
		for (int c = 0; c < BD_NIDLE; c++)
			fprintf(rq->out, ",%s", fmt_us(s->idle[c], buf,
			    sizeof(buf)));
		fprintf(rq->out, ",%.4f,,,,,,", bd_classified_pct(s->idle));
		bd_cards_csv_none(rq->out);
		bd_evidence_csv_none(rq->out);
		fputc('\n', rq->out);
	}
	for (size_t s = 0; xc != NULL && s < xc->nsteps; s++)
		csv_across(rq, &cn->steps[s], &xc->steps[s]);
}

static const struct table_col window_cols[] = {
	{ "CARD", NULL, TABLE_RIGHT }, { "STEP", NULL, TABLE_LEFT },
	{ "SPAN", "ms", TABLE_RIGHT }, { "COMPUTE", "%", TABLE_RIGHT },
	{ "DATA", "%", TABLE_RIGHT }, { "COMM", "%", TABLE_RIGHT },
	{ "OTHER", "%", TABLE_RIGHT }, { "IDLE", "%", TABLE_RIGHT },
	{ "COMM+COMP", "%", TABLE_RIGHT }, { "HOST-WAIT", "%", TABLE_RIGHT },
	{ "LAUNCH", "%", TABLE_RIGHT }, { "SYNC", "%", TABLE_RIGHT },
	{ "UNEXPL", "%", TABLE_RIGHT },
};
static const struct table_col counter_cols[] = {
	{ "CARD", NULL, TABLE_RIGHT }, { "STEP", NULL, TABLE_LEFT },
	{ "SAMPLES", NULL, TABLE_RIGHT }, { "COVERED", "%", TABLE_RIGHT },
	{ "BUSY", "%", TABLE_RIGHT }, { "POWER", "W", TABLE_RIGHT },
	{ "VERDICT", NULL, TABLE_LEFT }, { "BY", NULL, TABLE_LEFT },
};
static const struct table_col stream_cols[] = {
	{ "CARD", NULL, TABLE_RIGHT }, { "STREAM", NULL, TABLE_RIGHT },
	{ "EVENTS", NULL, TABLE_RIGHT }, { "IDLE", "ms", TABLE_RIGHT },
	{ "HOST-WAIT", "ms", TABLE_RIGHT }, { "LAUNCH", "ms", TABLE_RIGHT },
	{ "SYNC", "ms", TABLE_RIGHT }, { "UNEXPL", "ms", TABLE_RIGHT },
	{ "CLASSIFIED", "%", TABLE_RIGHT },
};
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static void
cell_pct(struct table *tb, int64_t part, int64_t whole)
{
	char buf[32];

	table_fixed(buf, sizeof(buf), pct(part, whole), 1);
	table_cell(tb, buf);
}

static void
cell_ms(struct table *tb, int64_t ns)
{
	char buf[32];

	table_fixed(buf, sizeof(buf), (double)ns / 1e6, 3);
	table_cell(tb, buf);
}

static void
table_window(struct table *tb, int64_t card, const struct bd_window *w)
{
	table_row(tb);
	table_cellf(tb, "%" PRId64, card);
	table_cell(tb, w->name);
	cell_ms(tb, w->tm.span);
	for (size_t i = 0; i < NCLASSES; i++)
		cell_pct(tb, w->tm.t[classes[i].cat], w->tm.span);
	cell_pct(tb, w->tm.comm_compute, w->tm.span);
	for (int c = 0; c < BD_NIDLE; c++)
		cell_pct(tb, w->idle[c], w->tm.span);
}

/* A row of the counters' table. */
static void
table_counters(struct table *tb, int64_t card, const struct bd_window *w,
    const struct steps_mean *m)
{
	char buf[32], why[256];
	enum bd_verdict v = bd_verdict(&w->tm, w->idle, why, sizeof(why));

	table_row(tb);
	table_cellf(tb, "%" PRId64, card);
	table_cell(tb, w->name);
	table_cellf(tb, "%" PRIu64, m != NULL ? m->samples : 0);
	if (m != NULL) {
		cell_pct(tb, m->covered_ns, w->tm.span);
		table_fixed(buf, sizeof(buf), m->busy_pct, 1);
		table_cell(tb, m->has_busy ? buf : "");
		table_fixed(buf, sizeof(buf), m->pwr_w, 1);
		table_cell(tb, m->has_pwr ? buf : "");
	} else {
		table_cell(tb, "");
		table_cell(tb, "");
		table_cell(tb, "");
	}
	table_cell(tb, bd_verdict_name(v));
	table_cell(tb, why);
}

static void
write_table(const struct breakdown_request *rq, const struct bd_result *res,
    size_t nsteps, const struct bd_run *cn, const struct bd_across *xc)
{
	struct table *tb = table_new(window_cols, NELEM(window_cols));
	FILE *out = rq->out;
	char buf[32];

	for (size_t i = 0; i < res->ncards; i++) {
		for (size_t s = 0; s < nsteps; s++)
			table_window(tb, res->cards[i].card,
			    &res->cards[i].steps[s]);
		table_window(tb, res->cards[i].card, &res->cards[i].total);
	}
	fprintf(out, "Time by class, %% of each span (a card's total: its "
	    "first device event to its last):\n");
	table_write(tb, out, 0);
	table_free(tb);
	tb = table_new(counter_cols, NELEM(counter_cols));
	for (size_t i = 0; i < res->ncards; i++) {
		int64_t card = res->cards[i].card;

		for (size_t s = 0; s < nsteps; s++)
			table_counters(tb, card, &res->cards[i].steps[s],
			    counters_of(cn, s, card));
		table_counters(tb, card, &res->cards[i].total,
		    counters_of(cn, nsteps + i, card));
	}
	fprintf(out, "\nCounters over each span (stored samples, as --steps "
	    "reads them), and what bound it:\n");
	table_write(tb, out, table_width());
	table_free(tb);
	if (cn->links != NULL)
		bd_evidence_table(out, cn, nsteps);
	bd_cards_table(out, xc);
	tb = table_new(stream_cols, NELEM(stream_cols));
	for (size_t i = 0; i < res->nstreams; i++) {
		const struct bd_stream *s = &res->streams[i];

		table_row(tb);
		if (s->has_card)
			table_cellf(tb, "%" PRId64, s->card);
		else
			table_cell(tb, "-");
		table_cellf(tb, "%" PRId64, s->stream);
		table_cellf(tb, "%" PRIu64, s->events);
		cell_ms(tb, stream_idle(s));
		for (int c = 0; c < BD_NIDLE; c++)
			cell_ms(tb, s->idle[c]);
		table_fixed(buf, sizeof(buf), bd_classified_pct(s->idle), 1);
		table_cell(tb, buf);
	}
	fprintf(out, "\nIdle time by stream (%s; launch gap under %s µs):\n",
	    res->streams_hta ? "args.stream, by HTA's rules" :
	    "one per track", fmt_us(rq->launch_gap_ns, buf, sizeof(buf)));
	table_write(tb, out, 0);
	table_free(tb);
	if (res->has_hta)
		fprintf(out, "\nHolistic Trace Analysis's temporal breakdown: "
		    "idle %.2f %%, compute %.2f %%, non-compute %.2f %% of "
		    "%.3f ms%s\n", pct(res->hta.idle, res->hta.span),
		    pct(res->hta.compute, res->hta.span),
		    pct(res->hta.non_compute, res->hta.span),
		    (double)res->hta.span / 1e6, res->hta_last_step_dropped ?
		    " (its last step left out, as HTA does)" : "");
}

struct bd_trace **
breakdown_new(size_t n)
{
	struct bd_trace **bt;

	if ((bt = calloc(n + 1, sizeof(*bt))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n; i++)
		bt[i] = bd_trace_new();
	return bt;
}

int
breakdown_finish(const struct trace_target *ts, size_t n,
    struct bd_trace **bt)
{
	int rc = CLIENT_EXIT_OK;

	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++)
		rc = bd_trace_finish(bt[i], ts[i].path, ts[i].info.has_base,
		    false);
	return rc;
}

void
breakdown_free(struct bd_trace **bt, size_t n)
{
	for (size_t i = 0; bt != NULL && i < n; i++)
		bd_trace_free(bt[i]);
	free(bt);
}

int
breakdown_report(const struct breakdown_request *rq)
{
	struct bd_run run;
	struct bd_across across;
	const struct bd_across *xc = NULL;
	int rc;

	memset(&across, 0, sizeof(across));
	if ((rc = bd_run_load(rq->db, rq->sr, rq->bt, rq->nstep_names,
	    rq->launch_gap_ns, rq->innermost, &run)) != CLIENT_EXIT_OK)
		goto out;
	if (bd_run_across(&run, &across))
		xc = &across;
	if (rq->format == STEPS_JSON)
		write_json(rq, &run.res, run.nsteps, &run, xc);
	else if (rq->format == STEPS_CSV)
		write_csv(rq, &run.res, run.nsteps, &run, xc);
	else
		write_table(rq, &run.res, run.nsteps, &run, xc);
	if (run.res.unpaired > 0)
		fprintf(stderr, "spyremon: %s: %" PRIu64 " begin or end events "
		    "of the device without their other half, left out\n",
		    rq->t->path, run.res.unpaired);
	if (run.res.no_card > 0)
		fprintf(stderr, "spyremon: %s: %" PRIu64 " device events "
		    "without a card (no args.device nor pid), left out\n",
		    rq->t->path, run.res.no_card);
out:
	bd_across_free(&across);
	if (rq->keep != NULL && rc == CLIENT_EXIT_OK)
		*rq->keep = run;
	else
		bd_run_free(&run);
	return rc;
}
