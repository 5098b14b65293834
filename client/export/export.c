/*
 * export: the samples of windows, of a span of time or of profiler traces,
 * from the database; with traces, also the merged trace (merge.h) and the
 * per-step table (steps.h).
 *
 * Everything is read in one read transaction (db.h), with one query per
 * span over a range of the samples table's primary key, in key order; the
 * wide table is read directly, not the sample_values view, and values are
 * written as they are read, so memory does not grow with the export.
 *
 * With --output the text is written whole or not at all (output.h).
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "export.h"
#include "format.h"
#include "merge.h"
#include "output.h"
#include "schema.h"
#include "steps.h"
#include "target.h"

#define OUT_BUFSIZE	(256 * 1024)
#define HELP_SHOWN	(-1)	/* parse_options printed --help */
#define MAX_TRACES	256	/* --trace given more often is refused */

enum {
	OPT_ALL = CLIENT_OPT_FIRST_FREE,
	OPT_FROM,
	OPT_TO,
	OPT_PAD,
	OPT_TRACE,
	OPT_TRACE_START,
	OPT_ALIGN_WINDOW,
	OPT_STEP_PATTERN,
	OPT_MERGE,
	OPT_INCLUDE_UNRELIABLE,
	OPT_STEPS,
	OPT_JSON,
	OPT_CSV,
};

struct options {
	const char *window;	/* --window: an id (all digits) or a tag */
	bool all;
	const char *from, *to;
	enum export_format format;
	const char *output;	/* NULL or "-": stdout */
	char *metrics;		/* --metrics, as given */
	char *devices;		/* --device, as given */
	int64_t pad_ns;
	bool format_given;
	const char *traces[MAX_TRACES];	/* --trace, in order */
	size_t ntraces;
	struct trace_clock_options clock;
	const char *merge;	/* --merge OUT */
	bool include_unreliable;
	bool steps;
	int steps_format;	/* -1: table on a terminal, else csv */
};

/*
 * The span of one export: a window's, a trace's, or --from/--to's (win
 * and trace NULL).
 */
struct span {
	const struct db_window *win;
	const struct trace_target *trace;
	int64_t lo_ns, hi_ns;	/* before the pad */
};

static int
usage(FILE *fp, int code)
{
	fprintf(fp,
	    "usage: spyremon export --window TAG|ID [--all] [options]\n"
	    "       spyremon export --from TIME [--to TIME] [options]\n"
	    "       spyremon export --trace FILE [--trace FILE ...] [--window TAG|ID]\n"
	    "                       [trace options] [options]\n"
	    "options: [--format csv|aiusmi|jsonl] [--output FILE]\n"
	    "         [--metrics KEY,...] [--device ID,...] [--pad DURATION]\n"
	    "trace options: [--trace-start TIME | --align-window TAG|ID]\n"
	    "         [--step-pattern REGEX] [--merge OUT[.gz]] [--include-unreliable]\n"
	    "         [--steps [--json | --csv]]\n"
	    "\n"
	    "Writes every sample whose interval overlaps the window (or the span\n"
	    "FROM..TO, TO defaulting to now, or each trace's span), widened by the\n"
	    "pad on both sides.  A TAG matching several windows means the newest,\n"
	    "or with --all each.  TIME is ISO 8601, epoch ns, or a duration ago\n"
	    "such as 10m.  With a trace, --merge writes the trace with counter\n"
	    "tracks added, and --steps a table of power and energy per step,\n"
	    "instead of the samples; --window then chooses the samples.\n");
	return code;
}

static int
goes_with(const char *opt, const char *with)
{
	warnx("%s goes with %s", opt, with);
	return usage(stderr, CLIENT_EXIT_USAGE);
}

/* The options that exclude or need others. */
static int
check_options(const struct options *o)
{
	bool traced = o->ntraces > 0, derived = o->merge != NULL || o->steps;

	if (o->from != NULL && (o->window != NULL || traced)) {
		warnx("--from does not go with --window or --trace");
		return usage(stderr, CLIENT_EXIT_USAGE);
	}
	if (o->window == NULL && o->from == NULL && !traced) {
		warnx("export takes --window, --from or --trace");
		return usage(stderr, CLIENT_EXIT_USAGE);
	}
	if (o->to != NULL && o->from == NULL)
		return goes_with("--to", "--from");
	if (o->all && (o->window == NULL || traced))
		return goes_with("--all", "--window, without --trace");
	if (!traced) {
		if (o->clock.trace_start != NULL)
			return goes_with("--trace-start", "--trace");
		if (o->clock.align_window != NULL)
			return goes_with("--align-window", "--trace");
		if (o->clock.step_pattern != NULL)
			return goes_with("--step-pattern", "--trace");
		if (derived)
			return goes_with(o->merge != NULL ? "--merge" :
			    "--steps", "--trace");
	}
	if (o->clock.trace_start != NULL && o->clock.align_window != NULL) {
		warnx("--trace-start and --align-window exclude each other");
		return CLIENT_EXIT_USAGE;
	}
	if (derived && o->ntraces > 1) {
		warnx("%s takes one --trace", o->merge != NULL ? "--merge" :
		    "--steps");
		return CLIENT_EXIT_USAGE;
	}
	if (o->include_unreliable && o->merge == NULL)
		return goes_with("--include-unreliable", "--merge");
	if (o->steps_format != -1 && !o->steps)
		return goes_with(o->steps_format == STEPS_JSON ? "--json" :
		    "--csv", "--steps");
	if (derived && o->format_given) {
		warnx("--format is for samples; --merge and --steps write "
		    "their own");
		return CLIENT_EXIT_USAGE;
	}
	if (o->merge != NULL && !o->steps && o->output != NULL) {
		warnx("--merge names its output; --output is for --steps or "
		    "samples");
		return CLIENT_EXIT_USAGE;
	}
	return CLIENT_EXIT_OK;
}

/* Parse the command line into o; an exit status if it is not usable. */
static int
parse_options(struct client *cl, int argc, char *argv[], struct options *o)
{
	static const struct option longopts[] = {
		CLIENT_LONGOPTS,
		{ "window", required_argument, NULL, 'w' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "to", required_argument, NULL, OPT_TO },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "device", required_argument, NULL, 'd' },
		{ "pad", required_argument, NULL, OPT_PAD },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "trace-start", required_argument, NULL, OPT_TRACE_START },
		{ "align-window", required_argument, NULL, OPT_ALIGN_WINDOW },
		{ "step-pattern", required_argument, NULL, OPT_STEP_PATTERN },
		{ "merge", required_argument, NULL, OPT_MERGE },
		{ "include-unreliable", no_argument, NULL,
		    OPT_INCLUDE_UNRELIABLE },
		{ "steps", no_argument, NULL, OPT_STEPS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t pad;
	int ch;

	while ((ch = getopt_long(argc, argv, CLIENT_SHORTOPTS "w:f:o:m:d:",
	    longopts, NULL)) != -1) {
		if (client_common_option(cl, ch, optarg))
			continue;
		switch (ch) {
		case 'w':
			o->window = optarg;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case OPT_FROM:
			o->from = optarg;
			break;
		case OPT_TO:
			o->to = optarg;
			break;
		case 'f':
			if (export_format_parse(optarg, &o->format) == -1) {
				warnx("--format %s: say csv, aiusmi or jsonl",
				    optarg);
				return CLIENT_EXIT_USAGE;
			}
			o->format_given = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'm':
			o->metrics = optarg;
			break;
		case 'd':
			o->devices = optarg;
			break;
		case OPT_PAD:
			if (parse_duration(optarg, &pad) == -1 ||
			    pad > (uint64_t)INT64_MAX / 4) {
				warnx("--pad %s: not a duration such as 2s",
				    optarg);
				return CLIENT_EXIT_USAGE;
			}
			o->pad_ns = (int64_t)pad;
			break;
		case OPT_TRACE:
			if (o->ntraces == MAX_TRACES) {
				warnx("--trace: at most %d traces", MAX_TRACES);
				return CLIENT_EXIT_USAGE;
			}
			o->traces[o->ntraces++] = optarg;
			break;
		case OPT_TRACE_START:
			o->clock.trace_start = optarg;
			break;
		case OPT_ALIGN_WINDOW:
			o->clock.align_window = optarg;
			break;
		case OPT_STEP_PATTERN:
			o->clock.step_pattern = optarg;
			break;
		case OPT_MERGE:
			o->merge = optarg;
			break;
		case OPT_INCLUDE_UNRELIABLE:
			o->include_unreliable = true;
			break;
		case OPT_STEPS:
			o->steps = true;
			break;
		case OPT_JSON:
			o->steps_format = STEPS_JSON;
			break;
		case OPT_CSV:
			o->steps_format = STEPS_CSV;
			break;
		case 'h':
			return usage(stdout, HELP_SHOWN);
		default:
			return usage(stderr, CLIENT_EXIT_USAGE);
		}
	}
	if (optind != argc)
		return usage(stderr, CLIENT_EXIT_USAGE);
	return check_options(o);
}

/* A list of device IDs, "0,1", as SQL: " AND device IN (0,1)". */
static int
device_clause(const char *list, char *sql, size_t len)
{
	const char *p = list;
	size_t used;

	used = (size_t)snprintf(sql, len, " AND " SCHEMA_C_DEVICE " IN (");
	for (;;) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || *p == '-' || *p == '+' || errno != 0 ||
		    v > INT_MAX || (*end != ',' && *end != '\0') ||
		    used + 16 >= len) {
			warnx("--device %s: give device IDs such as 0,1", list);
			return CLIENT_EXIT_USAGE;
		}
		used += (size_t)snprintf(sql + used, len - used, "%s%ld",
		    p == list ? "" : ",", v);
		if (*end == '\0')
			break;
		p = end + 1;
	}
	snprintf(sql + used, len - used, ")");
	return CLIENT_EXIT_OK;
}

static void
list_known(const struct db_catalog *cat)
{
	fprintf(stderr, "spyremon: known metrics:");
	for (size_t i = 0; i < cat->n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", cat->m[i].key);
	fputc('\n', stderr);
}

/*
 * The metrics to write, in *cols: those of --metrics in the order given,
 * or the whole catalog in catalog order, less the unreliable metrics when
 * reliable_only.
 */
static int
pick_metrics(const struct db_catalog *cat, char *list, bool reliable_only,
    const struct db_metric ***cols, size_t *n)
{
	const struct db_metric **c;
	char *key, *save = NULL;

	if ((c = calloc(cat->n + 1, sizeof(*c))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	*cols = c;
	*n = 0;
	if (list == NULL) {
		for (size_t i = 0; i < cat->n; i++)
			if (cat->m[i].reliable || !reliable_only)
				c[(*n)++] = &cat->m[i];
		return CLIENT_EXIT_OK;
	}
	for (key = strtok_r(list, ",", &save); key != NULL;
	    key = strtok_r(NULL, ",", &save)) {
		const struct db_metric *m = db_catalog_find(cat, key);

		if (m == NULL) {
			warnx("--metrics: unknown metric '%s'", key);
			list_known(cat);
			return CLIENT_EXIT_USAGE;
		}
		for (size_t i = 0; i < *n; i++) {
			if (c[i] == m) {
				warnx("--metrics: '%s' is listed twice", key);
				return CLIENT_EXIT_USAGE;
			}
		}
		c[(*n)++] = m;
	}
	if (*n == 0) {
		warnx("--metrics: name at least one metric");
		return CLIENT_EXIT_USAGE;
	}
	return CLIENT_EXIT_OK;
}

/* The windows --window names, oldest first, in *ws. */
static int
pick_windows(sqlite3 *db, const struct options *o, struct db_window **ws,
    size_t *n)
{
	struct db_window_filter f = { .newest_first = true };
	int rc;

	db_window_filter_name(&f, o->window);
	if ((rc = db_windows(db, &f, ws, n)) != CLIENT_EXIT_OK)
		return rc;
	if (*n == 0) {
		if (f.by_id)
			warnx("no window %s", o->window);
		else
			warnx("no window is tagged '%s'", o->window);
		return CLIENT_EXIT_FAILED;
	}
	if (*n > 1 && !o->all) {
		fprintf(stderr, "spyremon: tag %s matches %zu windows; "
		    "exporting the newest (id %" PRId64 "); use --all for all\n",
		    o->window, *n, (*ws)[0].id);
		for (size_t i = 1; i < *n; i++) {
			free((*ws)[i].tag);
			free((*ws)[i].meta);
		}
		*n = 1;
	}
	/* newest first, so that [0] was the newest; now oldest first */
	for (size_t i = 0; i < *n / 2; i++) {
		struct db_window t = (*ws)[i];

		(*ws)[i] = (*ws)[*n - 1 - i];
		(*ws)[*n - 1 - i] = t;
	}
	return CLIENT_EXIT_OK;
}

/*
 * Write the rows of one span; *rows counts them.  A write error stops
 * the export at once.
 */
static int
export_span(sqlite3 *db, sqlite3_stmt *s, struct export_writer *w,
    const struct span *sp, const struct options *o, int64_t *rows)
{
	struct export_row r = { .stmt = s, .first_value = 3 };
	int64_t lo = sp->lo_ns - o->pad_ns, hi = sp->hi_ns + o->pad_ns;
	int rc;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, lo);
	sqlite3_bind_int64(s, 2, hi);
	sqlite3_bind_int64(s, 3, hi + DB_MAX_INTERVAL_NS);
	*rows = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		r.ts_ns = sqlite3_column_int64(s, 0);
		r.device = sqlite3_column_int(s, 1);
		r.interval_ms = sqlite3_column_int64(s, 2);
		export_write_row(w, &r, sp->win != NULL ? sp->win->id : 0);
		(*rows)++;
		if (ferror_unlocked(w->out)) {
			warn("%s", output_name(o->output));
			return CLIENT_EXIT_FAILED;
		}
	}
	return rc == SQLITE_DONE ? CLIENT_EXIT_OK : db_error(db, "the samples");
}

static void
note_empty(const struct span *sp)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN];

	fmt_time_ms(sp->lo_ns, b, sizeof(b));
	fmt_time_ms(sp->hi_ns, e, sizeof(e));
	if (sp->win != NULL)
		fprintf(stderr, "spyremon: no samples in window %" PRId64
		    " (%s), %s .. %s\n", sp->win->id, sp->win->tag, b, e);
	else
		fprintf(stderr, "spyremon: no samples in %s .. %s\n", b, e);
}

/* Write every span; the output is open. */
static int
write_spans(sqlite3 *db, sqlite3_stmt *s, struct export_writer *w,
    const struct span *spans, size_t n, const struct options *o)
{
	int64_t rows;
	int rc = CLIENT_EXIT_OK;

	w->trace.on = o->ntraces > 1 && o->window == NULL;
	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++) {
		if (w->trace.on) {
			w->trace.path = spans[i].trace->path;
			w->trace.has_rank = spans[i].trace->info.has_rank;
			w->trace.rank = spans[i].trace->info.rank;
			w->trace.host = spans[i].trace->host;
		}
		export_begin_span(w, spans[i].win, o->all, i == 0);
		rc = export_span(db, s, w, &spans[i], o, &rows);
		if (rc == CLIENT_EXIT_OK && rows == 0)
			note_empty(&spans[i]);
	}
	return rc;
}

static int
bad_time(const char *opt, const char *arg)
{
	warnx("--%s %s: not a time (ISO 8601, epoch ns, or a duration ago "
	    "such as 10m)", opt, arg);
	return CLIENT_EXIT_USAGE;
}

/* Say so when a trace and the window chosen for its samples are apart. */
static void
warn_apart(const struct trace_target *t, const struct span *win)
{
	char gap[FMT_BUFLEN];

	if (t->end_ns < win->lo_ns) {
		fmt_span(win->lo_ns - t->end_ns, gap, sizeof(gap));
		fprintf(stderr, "spyremon: warning: %s ends %s before window "
		    "%" PRId64 " (%s) begins: they do not overlap\n", t->path,
		    gap, win->win->id, win->win->tag);
	} else if (t->start_ns > win->hi_ns) {
		fmt_span(t->start_ns - win->hi_ns, gap, sizeof(gap));
		fprintf(stderr, "spyremon: warning: %s starts %s after window "
		    "%" PRId64 " (%s) ends: they do not overlap\n", t->path,
		    gap, win->win->id, win->win->tag);
	}
}

/*
 * The spans: one per window, --from/--to's, or one per trace.  A trace
 * that no sample overlaps is an error, unless a window chooses the
 * samples.
 */
static int
make_spans(sqlite3 *db, const struct options *o, const struct db_window *ws,
    size_t nws, const struct trace_target *ts, struct span **spans,
    size_t *n)
{
	int64_t now = now_realtime_ns();
	struct span *sp;
	int rc;

	*n = o->window != NULL ? nws : o->ntraces > 0 ? o->ntraces : 1;
	if ((*spans = sp = calloc(*n, sizeof(*sp))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (o->window == NULL && o->ntraces > 0) {
		for (size_t i = 0; i < o->ntraces; i++) {
			if ((rc = trace_target_check_samples(db, &ts[i],
			    o->pad_ns)) != CLIENT_EXIT_OK)
				return rc;
			sp[i].trace = &ts[i];
			sp[i].lo_ns = ts[i].start_ns;
			sp[i].hi_ns = ts[i].end_ns;
		}
		return CLIENT_EXIT_OK;
	}
	if (o->window == NULL) {
		sp->hi_ns = now;
		if (client_parse_time(o->from, &sp->lo_ns) == -1)
			return bad_time("from", o->from);
		if (o->to != NULL && client_parse_time(o->to, &sp->hi_ns) == -1)
			return bad_time("to", o->to);
		if (sp->hi_ns < sp->lo_ns) {
			warnx("--to is before --from");
			return CLIENT_EXIT_USAGE;
		}
		return CLIENT_EXIT_OK;
	}
	for (size_t i = 0; i < nws; i++) {
		sp[i].win = &ws[i];
		sp[i].lo_ns = ws[i].begin_ns;
		sp[i].hi_ns = ws[i].open ? now : ws[i].end_ns;
		if (ws[i].open)
			fprintf(stderr, "spyremon: window %" PRId64 " (%s) is "
			    "still open; exporting up to now\n", ws[i].id,
			    ws[i].tag);
		for (size_t j = 0; j < o->ntraces; j++)
			warn_apart(&ts[j], &sp[i]);
	}
	return CLIENT_EXIT_OK;
}

/* Select and write the samples of the spans. */
static int
run_samples(sqlite3 *db, const struct options *o, struct export_writer *w,
    const struct span *spans, size_t nspans, const char *device_sql)
{
	sqlite3_stmt *s;
	int rc;

	if ((s = db_select_samples(db, w->cols, w->ncols, device_sql,
	    true)) == NULL)
		return db_error(db, "the samples");
	if ((w->out = output_open(o->output)) == NULL) {
		sqlite3_finalize(s);
		return CLIENT_EXIT_FAILED;
	}
	setvbuf(w->out, NULL, _IOFBF, OUT_BUFSIZE);
	if (export_writer_init(w) == -1)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	/* imported coarse samples are counted first: the header says so */
	rc = CLIENT_EXIT_OK;
	for (size_t i = 0; i < nspans && rc == CLIENT_EXIT_OK; i++)
		rc = export_coarse_span(db, w, spans[i].lo_ns - o->pad_ns,
		    spans[i].hi_ns + o->pad_ns, device_sql);
	if (rc == CLIENT_EXIT_OK)
		rc = write_spans(db, s, w, spans, nspans, o);
	export_writer_free(w);
	sqlite3_finalize(s);
	return output_close(w->out, o->output, rc);
}

/* --merge and --steps, for the one trace; the span gives the samples. */
static int
run_derived(sqlite3 *db, const struct options *o, const struct export_writer *w,
    const struct db_catalog *cat, const struct trace_target *t,
    const struct span *sp, const char *device_sql)
{
	struct merge_request mr = {
		.t = t,
		.cols = w->cols,
		.ncols = w->ncols,
		.map = w->map,
		.device_sql = device_sql,
		.lo_ns = sp->lo_ns - o->pad_ns,
		.hi_ns = sp->hi_ns + o->pad_ns,
		.out_path = o->merge,
		.progress = isatty(STDERR_FILENO) == 1,
	};
	struct steps_request sr = {
		.t = t,
		.cat = cat,
		.device_sql = device_sql,
		.format = (enum steps_format)o->steps_format,
		.innermost = o->clock.step_pattern == NULL,
	};
	int rc;

	if (o->merge != NULL && (rc = merge_write(db, &mr)) != CLIENT_EXIT_OK)
		return rc;
	if (!o->steps)
		return CLIENT_EXIT_OK;
	if ((sr.out = output_open(o->output)) == NULL)
		return CLIENT_EXIT_FAILED;
	if (o->steps_format == -1)
		sr.format = sr.out == stdout && isatty(STDOUT_FILENO) == 1 ?
		    STEPS_TABLE : STEPS_CSV;
	rc = steps_report(db, &sr);
	return output_close(sr.out, o->output, rc);
}

/* Read and place every --trace; *ts has o->ntraces entries. */
static int
load_traces(sqlite3 *db, const struct options *o, struct trace_target **ts)
{
	struct stat sb;
	int rc;

	if (o->ntraces == 0)
		return CLIENT_EXIT_OK;
	if (o->merge != NULL && (stat(o->traces[0], &sb) == 0 &&
	    !S_ISREG(sb.st_mode))) {
		warnx("%s: --merge reads the trace twice (once for its span, "
		    "once to copy it), so it must be a file, not a pipe",
		    o->traces[0]);
		return CLIENT_EXIT_USAGE;
	}
	if ((*ts = calloc(o->ntraces, sizeof(**ts))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < o->ntraces; i++)
		if ((rc = trace_target_load(db, o->traces[i], &o->clock,
		    &(*ts)[i])) != CLIENT_EXIT_OK)
			return rc;
	return CLIENT_EXIT_OK;
}

int
cmd_export(struct client *cl, int argc, char *argv[])
{
	struct options o = { .format = EXPORT_CSV, .steps_format = -1 };
	struct export_writer w = { .format = EXPORT_CSV };
	struct db_catalog cat = { 0 };
	struct db_devmap map = { 0 };
	struct db_window *ws = NULL;
	struct trace_target *ts = NULL;
	struct span *spans = NULL;
	const struct db_metric **cols = NULL;
	size_t nws = 0, nspans = 0;
	char device_sql[1024] = "";
	const char *path;
	sqlite3 *db;
	int rc;

	if ((rc = parse_options(cl, argc, argv, &o)) != CLIENT_EXIT_OK)
		return rc == HELP_SHOWN ? CLIENT_EXIT_OK : rc;
	if (o.devices != NULL && (rc = device_clause(o.devices, device_sql,
	    sizeof(device_sql))) != CLIENT_EXIT_OK)
		return rc;
	if ((path = client_database(cl)) == NULL)
		return CLIENT_EXIT_FAILED;
	if ((rc = db_open(path, &db)) != CLIENT_EXIT_OK)
		return rc;
	if ((rc = db_catalog_load(db, &cat)) == CLIENT_EXIT_OK &&
	    (rc = db_devmap_load(db, &map)) == CLIENT_EXIT_OK &&
	    (rc = pick_metrics(&cat, o.metrics, o.merge != NULL &&
	    !o.include_unreliable, &cols, &w.ncols)) == CLIENT_EXIT_OK &&
	    (o.window == NULL ||
	    (rc = pick_windows(db, &o, &ws, &nws)) == CLIENT_EXIT_OK) &&
	    (rc = load_traces(db, &o, &ts)) == CLIENT_EXIT_OK &&
	    (rc = make_spans(db, &o, ws, nws, ts, &spans, &nspans)) ==
	    CLIENT_EXIT_OK) {
		w.format = o.format;
		w.cols = cols;
		w.map = &map;
		w.window_column = o.all;
		if (o.merge != NULL || o.steps)
			rc = run_derived(db, &o, &w, &cat, &ts[0], &spans[0],
			    device_sql);
		else
			rc = run_samples(db, &o, &w, spans, nspans, device_sql);
	}
	free(spans);
	for (size_t i = 0; ts != NULL && i < o.ntraces; i++)
		trace_target_free(&ts[i]);
	free(ts);
	db_windows_free(ws, nws);
	free(cols);
	db_devmap_free(&map);
	db_catalog_free(&cat);
	db_close(db);
	return rc;
}
