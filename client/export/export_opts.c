/*
 * export_opts: the command line of "spyremon export" (export_priv.h).
 */
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "cmd.h"
#include "export_priv.h"
#include "merge.h"
#include "schema.h"
#include "steps.h"
#include "timeparse.h"

const char export_usage[] =
	    "usage: spyremon export --window TAG|ID [--all] [options]\n"
	    "       spyremon export --from TIME [--to TIME] [options]\n"
	    "       spyremon export --trace FILE|DIR ... [--window TAG|ID]\n"
	    "                       [trace options] [options]\n"
	    "\n"
	    "Writes every sample whose interval overlaps the window, the span\n"
	    "FROM..TO or each trace's span: one card at one time, a card's\n"
	    "aiu-smi row and metric-file row of one tick paired into one.  TIME\n"
	    "is ISO 8601, epoch ns, or a duration ago such as 10m.  Several --db\n"
	    "(one per host): each row carries its host, and each trace reads its\n"
	    "own host's database.\n"
	    "\n"
	    "selection:\n"
	    "  -w, --window TAG|ID         the window; a tag: the newest with it\n"
	    "      --all                   with a tag, every window with it\n"
	    "      --from TIME             the span from TIME ...\n"
	    "      --to TIME               ... to TIME (default now)\n"
	    "      --trace FILE|DIR        a profiler trace's span; again, or a\n"
	    "                              TensorBoard log DIR: the ranks of a run\n"
	    "options:\n"
	    "  -f, --format FORMAT         csv (default), aiusmi or jsonl\n"
	    "  -o, --output FILE           write FILE, whole or not at all\n"
	    "  -m, --metrics KEY,...       only these metrics, in this order\n"
	    "  -d, --device ID,...         only these cards\n"
	    "      --pad DURATION          widen the span on both sides\n"
	    "      --by-source             csv, jsonl: each stored row of each\n"
	    "                              source, not one sample per card per tick\n"
	    "      --partial               a window whose daemon died: what is\n"
	    "                              stored, exit 0 (spyremon(1))\n"
	    "trace options (--window then chooses the samples):\n"
	    "      --trace-start TIME      the time of the trace's ts = 0\n"
	    "      --align-window TAG|ID   the trace begins at this window's begin\n"
	    "      --step-pattern REGEX    the names of step events (trace info)\n"
	    "      --host-map TRACE=HOST   the host a trace ran on, with several --db\n"
	    "      --merge OUT[.gz]        the trace with counter tracks added\n"
	    "      --merge-dir DIR         one merged trace per trace, into DIR\n"
	    "      --merge-as counters|hta the samples as counter tracks (default,\n"
	    "                              for viewers) or as X slices that\n"
	    "                              Holistic Trace Analysis keeps\n"
	    "      --include-unreliable    merge the unreliable metrics too\n"
	    "      --breakdown-track       merge each card's time by class, as\n"
	    "                              --breakdown has it, as a track of slices\n"
	    "                              per step (not with --merge-as hta)\n"
	    "  -q, --quiet                 no line on stderr of what a merge added\n"
	    "      --steps                 power and energy per step, not samples\n"
	    "      --ops                   energy per operator, category and card,\n"
	    "                              with error bounds, not samples; by the\n"
	    "                              card's charge counter too where a Spyre\n"
	    "                              device trace carries it (attr Power)\n"
	    "      --breakdown             each card's time by class (compute, data\n"
	    "                              movement, communication, other, idle) and\n"
	    "                              its idle time by cause, per step and per\n"
	    "                              stream, with HTA's figures, and with\n"
	    "                              several cards each step's straggler and\n"
	    "                              spreads across cards (with several\n"
	    "                              traces, across every rank's cards, steps\n"
	    "                              matched by name); not samples\n"
	    "      --launch-gap D          --breakdown, --breakdown-track: a gap\n"
	    "                              shorter is a launch gap\n"
	    "                              (default 30, in the trace's µs; or 10us)\n"
	    "      --json, --csv           --steps, --ops or --breakdown as JSON or CSV\n"
	    "                              (default: an aligned table on a terminal,\n"
	    "                              else CSV)\n"
	    "      --table                 the aligned table, on a pipe too\n";

/*
 * --launch-gap D: a bare number is in the trace's unit (µs, as HTA's
 * threshold), else a duration with its unit.
 */
static int
launch_gap(struct options *o, const char *arg)
{
	uint64_t ns;
	int64_t v;

	if (trace_parse_decimal(arg, strlen(arg), 3, &v) == 0 &&
	    strpbrk(arg, "eE+-") == NULL && v >= 0) {
		o->launch_gap_ns = v;
		return CLIENT_EXIT_OK;
	}
	if (parse_duration(arg, &ns) == -1 || ns > INT64_MAX) {
		warnx("--launch-gap: %s is not a duration (30, 30us, 1ms)", arg);
		return CLIENT_EXIT_USAGE;
	}
	o->launch_gap_ns = (int64_t)ns;
	return CLIENT_EXIT_OK;
}

static int
goes_with(const char *opt, const char *with)
{
	warnx("%s goes with %s", opt, with);
	return CLIENT_EXIT_USAGE;
}

int
export_check_options(const struct options *o)
{
	bool traced = o->traces.n > 0, merged = o->merge != NULL ||
	    o->merge_dir != NULL, derived = merged || o->steps || o->ops ||
	    o->breakdown;
	const char *mode = o->ops ? "--ops" : o->breakdown ? "--breakdown" :
	    "--steps";

	if (o->from != NULL && (o->window != NULL || traced)) {
		warnx("--from does not go with --window or --trace");
		return CLIENT_EXIT_USAGE;
	}
	if (o->window == NULL && o->from == NULL && !traced) {
		warnx("export takes --window, --from or --trace");
		return CLIENT_EXIT_USAGE;
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
			    o->merge_dir != NULL ? "--merge-dir" : mode,
			    "--trace");
		if (o->nmaps > 0)
			return goes_with("--host-map", "--trace");
	}
	if (o->merge != NULL && o->merge_dir != NULL) {
		warnx("--merge and --merge-dir exclude each other");
		return CLIENT_EXIT_USAGE;
	}
	if (o->clock.trace_start != NULL && o->clock.align_window != NULL) {
		warnx("--trace-start and --align-window exclude each other");
		return CLIENT_EXIT_USAGE;
	}
	if (o->include_unreliable && !merged)
		return goes_with("--include-unreliable", "--merge or --merge-dir");
	if (o->merge_as != -1 && !merged)
		return goes_with("--merge-as", "--merge or --merge-dir");
	if (o->merge_as == MERGE_AS_HTA && o->merge != NULL &&
	    o->traces.n > 1) {
		warnx("--merge-as hta is for one file per rank, as HTA reads "
		    "them: --merge-dir DIR (--merge of several traces is one "
		    "file for trace viewers)");
		return CLIENT_EXIT_USAGE;
	}
	if (o->quiet && !merged)
		return goes_with("--quiet", "--merge or --merge-dir");
	if (o->by_source && (derived || o->format == EXPORT_AIUSMI)) {
		warnx("--by-source is for csv and jsonl samples: aiusmi is "
		    "aiu-smi's own text, one row per card per interval");
		return CLIENT_EXIT_USAGE;
	}
	if (o->steps && o->ops) {
		warnx("--steps and --ops exclude each other");
		return CLIENT_EXIT_USAGE;
	}
	if (o->breakdown && (o->steps || o->ops)) {
		warnx("--breakdown excludes --steps and --ops");
		return CLIENT_EXIT_USAGE;
	}
	if (o->breakdown_track && !merged)
		return goes_with("--breakdown-track", "--merge or --merge-dir");
	if (o->breakdown_track && o->merge_as == MERGE_AS_HTA) {
		warnx("--breakdown-track is for trace viewers; --merge-as hta "
		    "keeps the merged trace as HTA reads it, without it");
		return CLIENT_EXIT_USAGE;
	}
	if (o->breakdown_track && o->merge != NULL && o->traces.n > 1) {
		warnx("--breakdown-track: one merged trace per trace "
		    "(--merge-dir DIR, or --merge of one trace)");
		return CLIENT_EXIT_USAGE;
	}
	if (o->launch_gap_ns != -1 && !o->breakdown && !o->breakdown_track)
		return goes_with("--launch-gap", "--breakdown or "
		    "--breakdown-track");
	if (o->steps_format != -1 && !o->steps && !o->ops && !o->breakdown)
		return goes_with(o->steps_format == STEPS_JSON ? "--json" :
		    o->steps_format == STEPS_CSV ? "--csv" : "--table",
		    "--steps, --ops or --breakdown");
	if (derived && o->format_given) {
		warnx("--format is for samples; --merge, --merge-dir, "
		    "--steps, --ops and --breakdown write their own");
		return CLIENT_EXIT_USAGE;
	}
	if (merged && !o->steps && !o->ops && !o->breakdown &&
	    o->output != NULL) {
		warnx("%s names its output; --output is for --steps, --ops, "
		    "--breakdown or samples", o->merge != NULL ? "--merge" :
		    "--merge-dir");
		return CLIENT_EXIT_USAGE;
	}
	return CLIENT_EXIT_OK;
}

const struct option export_longopts[] = {
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
	{ "ops", no_argument, NULL, OPT_OPS },
	{ "breakdown", no_argument, NULL, OPT_BREAKDOWN },
	{ "breakdown-track", no_argument, NULL, OPT_BREAKDOWN_TRACK },
	{ "launch-gap", required_argument, NULL, OPT_LAUNCH_GAP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "table", no_argument, NULL, OPT_TABLE },
	{ "host-map", required_argument, NULL, OPT_HOST_MAP },
	{ "merge-dir", required_argument, NULL, OPT_MERGE_DIR },
	{ "merge-as", required_argument, NULL, OPT_MERGE_AS },
	{ "partial", no_argument, NULL, OPT_PARTIAL },
	{ "quiet", no_argument, NULL, 'q' },
	{ "by-source", no_argument, NULL, OPT_BY_SOURCE },
	{ NULL, 0, NULL, 0 },
};

int
export_option(void *opts, int ch, char *arg)
{
	struct options *o = opts;
	uint64_t pad;
	int rc;

	switch (ch) {
	case 'w':
		o->window = arg;
		break;
	case OPT_ALL:
		o->all = true;
		break;
	case OPT_FROM:
		o->from = arg;
		break;
	case OPT_TO:
		o->to = arg;
		break;
	case 'f':
		if (export_format_parse(arg, &o->format) == -1) {
			warnx("--format %s: say csv, aiusmi or jsonl",
			    arg);
			return CLIENT_EXIT_USAGE;
		}
		o->format_given = true;
		break;
	case 'o':
		o->output = arg;
		break;
	case 'm':
		o->metrics = arg;
		break;
	case 'd':
		o->devices = arg;
		break;
	case OPT_PAD:
		if (parse_duration(arg, &pad) == -1 ||
		    pad > (uint64_t)INT64_MAX / 4) {
			warnx("--pad %s: not a duration such as 2s",
			    arg);
			return CLIENT_EXIT_USAGE;
		}
		o->pad_ns = (int64_t)pad;
		break;
	case OPT_TRACE:
		if ((rc = trace_list_add(&o->traces, "--trace", arg,
		    MAX_TRACES, stderr)) != CLIENT_EXIT_OK)
			return rc;
		break;
	case OPT_TRACE_START:
		o->clock.trace_start = arg;
		break;
	case OPT_ALIGN_WINDOW:
		o->clock.align_window = arg;
		break;
	case OPT_STEP_PATTERN:
		o->clock.step_pattern = arg;
		break;
	case OPT_MERGE:
		o->merge = arg;
		break;
	case OPT_INCLUDE_UNRELIABLE:
		o->include_unreliable = true;
		break;
	case OPT_STEPS:
		o->steps = true;
		break;
	case OPT_OPS:
		o->ops = true;
		break;
	case OPT_BREAKDOWN:
		o->breakdown = true;
		break;
	case OPT_BREAKDOWN_TRACK:
		o->breakdown_track = true;
		break;
	case OPT_LAUNCH_GAP:
		return launch_gap(o, arg);
	case OPT_JSON:
	case OPT_CSV:
	case OPT_TABLE:
		if (o->steps_format != -1) {
			warnx("--json, --csv and --table exclude each other");
			return CLIENT_EXIT_USAGE;
		}
		o->steps_format = ch == OPT_JSON ? STEPS_JSON : ch == OPT_CSV ?
		    STEPS_CSV : STEPS_TABLE;
		break;
	case OPT_HOST_MAP:
		if (o->nmaps == MAX_TRACES) {
			warnx("--host-map: at most %d", MAX_TRACES);
			return CLIENT_EXIT_USAGE;
		}
		if (hosts_map_parse(arg, &o->maps[o->nmaps]) == -1)
			return CLIENT_EXIT_USAGE;
		o->nmaps++;
		break;
	case OPT_MERGE_AS:
		if (strcmp(arg, "counters") == 0)
			o->merge_as = MERGE_AS_COUNTERS;
		else if (strcmp(arg, "hta") == 0)
			o->merge_as = MERGE_AS_HTA;
		else {
			warnx("--merge-as: '%s' is not counters or hta", arg);
			return CLIENT_EXIT_USAGE;
		}
		break;
	case OPT_MERGE_DIR:
		o->merge_dir = arg;
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_PARTIAL:
		o->partial = true;
		break;
	case OPT_BY_SOURCE:
		o->by_source = true;
		break;
	}
	return CLIENT_EXIT_OK;
}

/* A list of device IDs, "0,1", as SQL: " AND device IN (0,1)". */
int
export_device_clause(const char *list, char *sql, size_t len)
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

int
export_merge_dir_names(const char *dir, const struct options *o, char ***outs)
{
	struct stat a, b;
	char **p;

	if (stat(dir, &a) == -1) {
		warn("--merge-dir %s", dir);
		return CLIENT_EXIT_USAGE;
	}
	if (!S_ISDIR(a.st_mode)) {
		warnx("--merge-dir %s: not a directory", dir);
		return CLIENT_EXIT_USAGE;
	}
	if ((*outs = p = calloc(o->traces.n + 1, sizeof(*p))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < o->traces.n; i++) {
		const char *slash = strrchr(o->traces.paths[i], '/');
		const char *name = slash != NULL ? slash + 1 : o->traces.paths[i];

		if (asprintf(&p[i], "%s/%s", dir, name) == -1)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		for (size_t k = 0; k < i; k++)
			if (strcmp(p[k], p[i]) == 0) {
				warnx("--merge-dir: %s and %s would both be "
				    "written as %s", o->traces.paths[k],
				    o->traces.paths[i], p[i]);
				return CLIENT_EXIT_USAGE;
			}
		if (stat(p[i], &a) == 0 && stat(o->traces.paths[i], &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			warnx("--merge-dir %s: %s would be written over "
			    "itself: choose another directory", dir,
			    o->traces.paths[i]);
			return CLIENT_EXIT_USAGE;
		}
	}
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
int
export_pick_metrics(const struct db_catalog *cat, char *list, bool reliable_only,
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

