/*
 * export_derived: what export makes of the traces with the samples
 * (export_priv.h's export_run_derived): --merge or --merge-dir, each trace
 * merged with the samples of its span (merge.h) or the ranks' traces
 * combined into one (combine.h), then --steps, --ops and --breakdown
 * (steps.h, ops.h, breakdown_out.h).
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "breakdown_out.h"
#include "breakdown_ranks.h"
#include "client.h"
#include "export_priv.h"
#include "merge.h"
#include "ops.h"
#include "output.h"
#include "steps.h"
#include "summarycmd.h"
#include "table.h"
#include "target.h"

/*
 * The span whose samples trace i's --merge takes, in the trace's time
 * (target.h), pad included: the trace's own, or its database's first
 * window from its begin to its end, each as stamped in its epoch of the
 * host clock, brought into the trace's time.
 */
static void
trace_span(const struct job *j, size_t i, int64_t *lo, int64_t *hi)
{
	const struct trace_target *t = &j->ts[i];
	const struct span *sp = NULL;
	int64_t pad = j->o->pad_ns;

	*lo = INT64_MAX;
	*hi = INT64_MIN;
	for (size_t k = 0; k < j->nspans; k++) {
		int64_t a, b;

		sp = &j->spans[k];
		if (sp->trace == t) {
			*lo = sp->lo_ns;
			*hi = sp->hi_ns;
			break;
		}
		if (sp->trace != NULL || sp->src != &j->src[j->which[i]])
			continue;
		if (*lo != INT64_MAX && (sp->win == NULL ||
		    sp->win != j->spans[k - 1].win))
			break;
		/* from its begin (a later piece reaches back before its
		 * step) to its end */
		a = db_trace_time(&t->epochs, sp->lo_ns, sp->epoch);
		b = db_trace_time(&t->epochs, sp->hi_ns, sp->epoch);
		if (*lo == INT64_MAX)
			*lo = a;
		*hi = b > *hi ? b : *hi;
	}
	if (*lo == INT64_MAX) {
		*lo = j->spans[0].lo_ns;
		*hi = j->spans[0].hi_ns;
	}
	*lo -= pad;
	*hi += pad;
}

/* --merge of one trace, into out; host (or NULL) names its cards' host. */
static int
merge_one(const struct job *j, size_t i, const char *out, const char *host)
{
	const struct options *o = j->o;
	const struct source *src = &j->src[j->which[i]];
	struct merge_request mr = {
		.t = &j->ts[i],
		.cols = src->cols,
		.ncols = j->ncols,
		.map = &src->map,
		.host = host,
		.device_sql = j->device_sql,
		.out_path = out,
		.progress = isatty(STDERR_FILENO) == 1,
		.as = o->merge_as == -1 ? MERGE_AS_COUNTERS :
		    (enum merge_as)o->merge_as,
		.ts_integer = !j->ts[i].info.ts_fraction,
		.ts_decimals = j->ts[i].info.ts_decimals < 1 ? 3 :
		    j->ts[i].info.ts_decimals > 9 ? 9 : j->ts[i].info.ts_decimals,
		.metadata_ts = j->ts[i].info.metadata_timed > 0,
		.idle_lookback_ns = summary_idle_lookback(j->cl),
		.events = j->evs[i],
	};
	struct db_coarse coarse = { 0 };
	struct merge_stats st;
	struct bd_run run = { 0 };
	int64_t lo, hi;
	int rc;

	trace_span(j, i, &mr.lo_ns, &mr.hi_ns);
	/* --breakdown-track: the classes as --breakdown has them */
	if (o->breakdown_track) {
		struct steps_request sr = { .t = &j->ts[i] };

		bd_run_load(NULL, &sr, j->bt[i], bd_step_names(j->bt,
		    o->traces.n), o->launch_gap_ns < 0 ?
		    BREAKDOWN_LAUNCH_GAP_NS : o->launch_gap_ns,
		    o->clock.step_pattern == NULL, &run);
		mr.breakdown = &run.res;
	}
	/* imported coarse samples are said in the summary: at their stamps,
	 * over every epoch's */
	lo = db_trace_stamp(&j->ts[i].epochs, mr.lo_ns, &(int64_t){ 0 });
	hi = db_trace_stamp(&j->ts[i].epochs, mr.hi_ns, &(int64_t){ 0 });
	if ((rc = db_coarse_load(src->db, lo < hi ? lo : hi, (hi > lo ? hi :
	    lo) + DB_MAX_INTERVAL_NS, &coarse)) == CLIENT_EXIT_OK) {
		mr.coarse = &coarse;
		rc = merge_write(src->db, &mr, &st);
		if (rc == CLIENT_EXIT_OK && !o->quiet)
			merge_stats_print(stderr, out, &st);
	}
	db_coarse_free(&coarse);
	bd_run_free(&run);
	return rc;
}

/* --ops of trace i (ops.h), as steps_request's sr says. */
static int
ops_one(const struct job *j, size_t i, const struct steps_request *sr)
{
	struct ops_request_out rq = {
		.t = sr->t, .cat = sr->cat, .device_sql = sr->device_sql,
		.step_pattern = j->o->clock.step_pattern,
		.idle_lookback_ns = summary_idle_lookback(j->cl),
		.format = sr->format, .out = sr->out, .tagged = sr->tagged,
		.host = sr->host, .first = sr->first, .events = j->evs[i],
	};

	return ops_report(j->src[j->which[i]].db, &rq);
}

/* --breakdown of trace i (breakdown_out.h), as steps_request's sr says. */
static int
breakdown_one(const struct job *j, struct bd_trace *const *bt, size_t i,
    const struct steps_request *sr, struct bd_run *keep)
{
	struct breakdown_request rq = {
		.db = j->src[j->which[i]].db, .sr = sr,
		.t = sr->t, .bt = bt[i],
		.nstep_names = bd_step_names(bt, j->o->traces.n),
		.launch_gap_ns = j->o->launch_gap_ns < 0 ?
		    BREAKDOWN_LAUNCH_GAP_NS : j->o->launch_gap_ns,
		.innermost = sr->innermost, .format = sr->format,
		.out = sr->out, .tagged = sr->tagged, .host = sr->host,
		.first = sr->first, .keep = keep,
	};

	return breakdown_report(&rq);
}

/*
 * --breakdown of several traces, after each one's: every rank's cards
 * side by side (breakdown_ranks.h), from the breakdowns r[0..n) kept.
 */
static void
breakdown_across_ranks(const struct job *j, struct breakdown_rank *r,
    size_t n, enum steps_format format, FILE *out)
{
	struct breakdown_ranks_request rq = {
		.r = r, .n = n, .host_labels = j->multi, .format = format,
		.out = out,
	};

	if (format == STEPS_JSON)
		fputs(",\n", out);
	breakdown_ranks_report(&rq);
}

/*
 * --steps, --ops or --breakdown of every trace, into one output; several
 * (steps.h, tagged) go into a JSON array, or under a heading per table.
 */
static int
run_steps(const struct job *j)
{
	const struct options *o = j->o;
	bool tagged = o->traces.n > 1 || j->multi;
	struct bd_trace **bt = j->bt;
	struct breakdown_rank *ranks = NULL;
	enum steps_format format = (enum steps_format)o->steps_format;
	FILE *out;
	int rc = CLIENT_EXIT_OK;

	if (o->breakdown && (rc = breakdown_finish(j->ts, o->traces.n, bt)) !=
	    CLIENT_EXIT_OK)
		return rc;
	if ((out = output_open(o->output)) == NULL)
		return CLIENT_EXIT_FAILED;
	if (o->steps_format == -1)
		format = table_for_terminal(out) ? STEPS_TABLE : STEPS_CSV;
	/* the ranks' breakdowns are kept for the figures across them */
	if (o->breakdown && o->traces.n > 1 &&
	    (ranks = calloc(o->traces.n, sizeof(*ranks))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < o->traces.n && rc == CLIENT_EXIT_OK; i++) {
		const struct source *src = &j->src[j->which[i]];
		const struct trace_target *t = &j->ts[i];
		struct steps_request sr = {
			.t = t,
			.cat = &src->cat,
			.device_sql = j->device_sql,
			.format = format,
			.out = out,
			.innermost = o->clock.step_pattern == NULL,
			.tagged = tagged,
			.host = hosts_name(j->hs.dbs, j->nsrc, j->which[i]),
			.first = i == 0,
		};

		if (tagged && sr.format == STEPS_JSON)
			fputs(i == 0 ? "[\n" : ",\n", out);
		if (tagged && sr.format == STEPS_TABLE) {
			fprintf(out, "%s%s: host %s, rank ", i ? "\n" : "",
			    t->path, sr.host);
			if (t->info.has_rank)
				fprintf(out, "%" PRId64 "\n", t->info.rank);
			else
				fprintf(out, "-\n");
		}
		if (ranks != NULL) {
			ranks[i].t = t;
			ranks[i].host = sr.host;
		}
		rc = o->ops ? ops_one(j, i, &sr) : o->breakdown ?
		    breakdown_one(j, bt, i, &sr, ranks != NULL ?
		    &ranks[i].run : NULL) : steps_report(src->db, &sr);
	}
	if (ranks != NULL && rc == CLIENT_EXIT_OK)
		breakdown_across_ranks(j, ranks, o->traces.n, format, out);
	if (tagged && format == STEPS_JSON && rc == CLIENT_EXIT_OK)
		fputs("]\n", out);
	for (size_t i = 0; ranks != NULL && i < o->traces.n; i++)
		bd_run_free(&ranks[i].run);
	free(ranks);
	return output_close(out, o->output, rc);
}

/* --merge OUT of several traces: one trace, each a group of processes. */
static int
run_combined(const struct job *j)
{
	const struct options *o = j->o;
	struct merge_rank *r;
	int rc;

	if ((r = calloc(o->traces.n, sizeof(*r))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < o->traces.n; i++) {
		const struct source *src = &j->src[j->which[i]];

		r[i].t = &j->ts[i];
		r[i].db = src->db;
		r[i].cols = src->cols;
		r[i].map = &src->map;
		r[i].host = hosts_name(j->hs.dbs, j->nsrc, j->which[i]);
		trace_span(j, i, &r[i].lo_ns, &r[i].hi_ns);
	}
	rc = merge_combined_write(r, o->traces.n, j->ncols, j->device_sql,
	    o->merge);
	free(r);
	/* one file mixes the ranks: say what it is for, and what is not */
	if (rc == CLIENT_EXIT_OK && !o->quiet)
		fprintf(stderr, "%s: %zu traces combined into one, each rank's "
		    "events and cards a group of processes, for trace viewers "
		    "(Perfetto, chrome://tracing); per-rank analyzers (Holistic "
		    "Trace Analysis) read one file per rank: --merge-dir DIR\n",
		    output_name(o->merge), o->traces.n);
	return rc;
}

int
export_run_derived(struct job *j)
{
	const struct options *o = j->o;
	char **outs = NULL;
	int rc = CLIENT_EXIT_OK;

	/* the track's events, complete once the headers are known */
	if (o->breakdown_track && (rc = breakdown_finish(j->ts, o->traces.n,
	    j->bt)) != CLIENT_EXIT_OK)
		return rc;
	if (o->merge_dir != NULL) {
		rc = export_merge_dir_names(o->merge_dir, o, &outs);
		for (size_t i = 0; i < o->traces.n && rc == CLIENT_EXIT_OK; i++)
			rc = merge_one(j, i, outs[i], j->multi ?
			    j->src[j->which[i]].host : NULL);
		for (size_t i = 0; outs != NULL && i < o->traces.n; i++)
			free(outs[i]);
		free(outs);
	} else if (o->merge != NULL && o->traces.n == 1) {
		rc = merge_one(j, 0, o->merge, j->multi ?
		    j->src[j->which[0]].host : NULL);
	} else if (o->merge != NULL) {
		rc = run_combined(j);
	}
	if (rc != CLIENT_EXIT_OK || (!o->steps && !o->ops && !o->breakdown))
		return rc;
	return run_steps(j);
}
