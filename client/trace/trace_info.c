/*
 * trace_info: "spyremon trace info", what a profiler trace holds and which
 * wall-clock span it covers, before it is lined up with samples.
 *
 * A trace without absolute time is still described (exit 0): its events
 * and steps are useful, and the output says how to give it a time.  A
 * TensorBoard log directory (tracelist.h) is each of its traces in turn.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "cmd.h"
#include "json.h"
#include "timeparse.h"
#include "trace.h"
#include "tracelist.h"

/* Steps listed in the text output; --json lists them all. */
#define STEPS_SHOWN	10
/* Devices named in the text output. */
#define DEVICES_SHOWN	8

enum {
	OPT_JSON = CLIENT_OPT_FIRST_FREE,
	OPT_STEP_PATTERN,
};

/* ns as seconds with nine decimals: "-0.000001500 s". */
static void
format_seconds(int64_t ns, char *buf, size_t len)
{
	uint64_t mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	snprintf(buf, len, "%s%" PRIu64 ".%09" PRIu64 " s", ns < 0 ? "-" : "",
	    (uint64_t)(mag / NSEC_PER_SEC), (uint64_t)(mag % NSEC_PER_SEC));
}

/* A name from the trace, control characters shown as '?'. */
static void
print_name(const char *s, int width)
{
	int n = 0;

	for (; *s != '\0'; s++, n++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
	for (; n < width; n++)
		putchar(' ');
}

static void
print_span(const struct trace_info *in)
{
	char a[64], b[64], why[512];

	if (in->absolute) {
		format_time_utc(in->start_ns, a, sizeof(a));
		format_time_utc(in->end_ns, b, sizeof(b));
		printf("start       %s  %" PRId64 " ns\n", a, in->start_ns);
		printf("end         %s  %" PRId64 " ns\n", b, in->end_ns);
	} else {
		trace_explain_no_time(in, why, sizeof(why));
		printf("start       unknown: %s\n", why);
		if (in->has_span) {
			format_seconds(in->first_own_ns, a, sizeof(a));
			format_seconds(in->last_own_ns, b, sizeof(b));
			printf("ts range    %s to %s on the trace's own clock\n",
			    a, b);
		}
	}
	if (!in->has_span)
		return;
	format_seconds(in->last_own_ns - in->first_own_ns, a, sizeof(a));
	printf("duration    %s%s\n", a, in->last_own_ns == in->first_own_ns ?
	    " (all events share one timestamp: the span has zero length)" : "");
}

static void
print_steps(const struct trace_info *in)
{
	char off[64], dur[64];
	size_t i;

	printf("steps       %zu\n", in->nsteps);
	for (i = 0; i < in->nsteps && i < STEPS_SHOWN; i++) {
		format_seconds(in->steps[i].ts_ns - in->first_own_ns, off,
		    sizeof(off));
		format_seconds(in->steps[i].dur_ns, dur, sizeof(dur));
		printf("  ");
		print_name(in->steps[i].name, 24);
		printf(" at +%s  lasts %s\n", off, dur);
	}
	if (i < in->nsteps)
		printf("  ... %zu more (--json lists them all)\n", in->nsteps - i);
}

static void
print_devices(const struct trace_info *in)
{
	size_t i;

	printf("devices     %zu%s in deviceProperties", in->ndevices,
	    in->devices_truncated ? "+" : "");
	for (i = 0; i < in->ndevices && i < DEVICES_SHOWN; i++) {
		const struct trace_device *d = &in->devices[i];

		printf("%s", i == 0 ? ": " : ", ");
		if (d->has_id)
			printf("%" PRId64 " ", d->id);
		print_name(d->name ? d->name : "(unnamed)", 0);
	}
	printf("%s\n", i < in->ndevices ? ", ..." : "");
	printf("kernel pids ");
	if (in->nkernel_pids == 0)
		printf("none");
	for (i = 0; i < in->nkernel_pids; i++)
		printf("%s%" PRId64, i ? ", " : "", in->kernel_pids[i]);
	printf("%s\n", in->kernel_pids_truncated ? ", ..." : "");
	printf("pids        %zu%s distinct integer pids", in->npids,
	    in->pids_truncated ? "+" : "");
	if (in->has_max_pid)
		printf(", highest %" PRId64, in->max_pid);
	printf("\n");
}

static void
print_text(const char *path, const struct trace_info *in)
{
	printf("file        %s (%s%" PRIu64 " bytes%s)\n", path,
	    in->compressed ? "gzip, " : "", in->bytes,
	    in->compressed ? " uncompressed" : "");
	printf("dialect     %s: %s", trace_dialect_name(in->dialect),
	    trace_dialect_text(in->dialect));
	if (in->dialect == TRACE_DIALECT_ABSOLUTE)
		printf(", %s", in->ts_fraction ? "float" : "integer");
	if (in->display_time_unit[0] != '\0')
		printf("; displayTimeUnit \"%s\" only changes how viewers "
		    "show time", in->display_time_unit);
	printf("\n");
	if (in->has_base)
		printf("base        %" PRId64 " ns\n", in->base_ns);
	print_span(in);
	printf("events      %" PRIu64 " (skipped: %" PRIu64 " metadata",
	    in->events, in->metadata_events);
	if (in->clamped_events > 0)
		printf(", %" PRIu64 " at ts 0 under a base", in->clamped_events);
	if (in->untimed_events > 0)
		printf(", %" PRIu64 " without ts", in->untimed_events);
	printf(")\n");
	if (in->negative_durs > 0)
		printf("note        %" PRIu64 " event%s had a negative dur, "
		    "taken as 0\n", in->negative_durs,
		    in->negative_durs == 1 ? "" : "s");
	print_steps(in);
	printf("rank        ");
	if (in->has_rank)
		printf("%" PRId64, in->rank);
	else
		printf("unknown");
	if (in->has_world_size)
		printf(" of %" PRId64, in->world_size);
	printf("\n");
	if (in->host[0] != '\0') {
		printf("host        ");
		print_name(in->host, 0);
		printf("\n");
	}
	print_devices(in);
}

static void
gen_steps(yajl_gen g, const struct trace_info *in)
{
	jsonw_str(g, "steps");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < in->nsteps; i++) {
		const struct trace_step *s = &in->steps[i];

		yajl_gen_map_open(g);
		jsonw_str(g, "name");
		jsonw_str(g, s->name);
		jsonw_put_int_or_null(g, "start_ns", in->absolute,
		    in->base_ns + s->ts_ns);
		jsonw_put_int_or_null(g, "offset_ns", true, s->ts_ns - in->first_own_ns);
		jsonw_put_int_or_null(g, "dur_ns", true, s->dur_ns);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void
gen_devices(yajl_gen g, const struct trace_info *in)
{
	jsonw_str(g, "devices");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < in->ndevices; i++) {
		yajl_gen_map_open(g);
		jsonw_put_int_or_null(g, "id", in->devices[i].has_id, in->devices[i].id);
		jsonw_str(g, "name");
		if (in->devices[i].name != NULL)
			jsonw_str(g, in->devices[i].name);
		else
			yajl_gen_null(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	jsonw_str(g, "kernel_pids");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < in->nkernel_pids; i++)
		yajl_gen_integer(g, in->kernel_pids[i]);
	yajl_gen_array_close(g);
	jsonw_str(g, "pids");
	yajl_gen_integer(g, (long long)in->npids);
	jsonw_put_int_or_null(g, "max_pid", in->has_max_pid, in->max_pid);
}

static void
gen_header(yajl_gen g, const char *path, const struct trace_info *in)
{
	jsonw_str(g, "file");
	jsonw_str(g, path);
	jsonw_str(g, "compressed");
	yajl_gen_bool(g, in->compressed);
	jsonw_str(g, "bytes");
	yajl_gen_integer(g, (long long)in->bytes);
	jsonw_str(g, "dialect");
	jsonw_str(g, trace_dialect_name(in->dialect));
	jsonw_str(g, "dialect_text");
	jsonw_str(g, trace_dialect_text(in->dialect));
	jsonw_str(g, "ts_fraction");
	yajl_gen_bool(g, in->ts_fraction);
	jsonw_str(g, "ts_decimals");
	yajl_gen_integer(g, in->ts_decimals);
	jsonw_str(g, "display_time_unit");
	if (in->display_time_unit[0] != '\0')
		jsonw_str(g, in->display_time_unit);
	else
		yajl_gen_null(g);
	jsonw_put_int_or_null(g, "base_time_ns", in->has_base, in->base_ns);
}

static void
gen_info(yajl_gen g, const char *path, const struct trace_info *in)
{
	char why[512];

	yajl_gen_map_open(g);
	gen_header(g, path, in);
	jsonw_put_int_or_null(g, "start_ns", in->absolute, in->start_ns);
	jsonw_put_int_or_null(g, "end_ns", in->absolute, in->end_ns);
	jsonw_put_time(g, "start", in->absolute, in->start_ns);
	jsonw_put_time(g, "end", in->absolute, in->end_ns);
	if (!in->absolute) {
		trace_explain_no_time(in, why, sizeof(why));
		jsonw_str(g, "explanation");
		jsonw_str(g, why);
	}
	jsonw_put_int_or_null(g, "first_ts_ns", in->has_span, in->first_own_ns);
	jsonw_put_int_or_null(g, "last_ts_ns", in->has_span, in->last_own_ns);
	jsonw_put_int_or_null(g, "duration_ns", in->has_span,
	    in->last_own_ns - in->first_own_ns);
	jsonw_put_int_or_null(g, "events", true, (int64_t)in->events);
	jsonw_put_int_or_null(g, "metadata_events", true, (int64_t)in->metadata_events);
	jsonw_put_int_or_null(g, "clamped_events", true, (int64_t)in->clamped_events);
	jsonw_put_int_or_null(g, "untimed_events", true, (int64_t)in->untimed_events);
	jsonw_put_int_or_null(g, "negative_durs", true, (int64_t)in->negative_durs);
	gen_steps(g, in);
	jsonw_put_int_or_null(g, "rank", in->has_rank, in->rank);
	jsonw_put_int_or_null(g, "world_size", in->has_world_size, in->world_size);
	jsonw_str(g, "host");
	if (in->host[0] != '\0')
		jsonw_str(g, in->host);
	else
		yajl_gen_null(g);
	gen_devices(g, in);
	yajl_gen_map_close(g);
}

/* The traces as JSON: an object, or for a directory an array of them. */
static int
print_json(const struct trace_list *l, const struct trace_info *in,
    bool array)
{
	yajl_gen g;
	int rc;

	g = json_gen_new(true);
	if (array)
		yajl_gen_array_open(g);
	for (size_t i = 0; i < l->n; i++)
		gen_info(g, l->paths[i], &in[i]);
	if (array)
		yajl_gen_array_close(g);
	rc = json_gen_flush(g, stdout) == -1 ? CLIENT_EXIT_FAILED : CLIENT_EXIT_OK;
	yajl_gen_free(g);
	return rc;
}

struct info_opts {
	struct trace_options opts;
	bool json;
};

static int
info_option(void *opts, int ch, char *arg)
{
	struct info_opts *o = opts;

	if (ch == OPT_JSON)
		o->json = true;
	else if (ch == OPT_STEP_PATTERN)
		o->opts.step_pattern = arg;
	return CLIENT_EXIT_OK;
}

static int
info_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct info_opts *o = opts;
	struct trace_info *info = NULL;
	struct trace_error terr;
	struct trace_list l = { 0 };
	struct stat sb;
	char msg[512];
	bool json = o->json;
	int rc = CLIENT_EXIT_OK;

	(void)cl;
	(void)argc;
	if ((rc = trace_list_add(&l, NULL, argv[0], TRACELIST_MAX,
	    stderr)) != CLIENT_EXIT_OK)
		return rc;
	/* every trace read before any is shown: the whole answer or none */
	if ((info = calloc(l.n, sizeof(*info))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < l.n && rc == CLIENT_EXIT_OK; i++) {
		int trc = trace_read(l.paths[i], &o->opts, &info[i], &terr);

		if (trc != TRACE_OK) {
			warnx("%s: %s", l.paths[i], trace_strerror(&terr, msg,
			    sizeof(msg)));
			rc = trc == TRACE_ERR_PATTERN ? CLIENT_EXIT_USAGE :
			    CLIENT_EXIT_FAILED;
		}
	}
	if (rc == CLIENT_EXIT_OK && json)
		rc = print_json(&l, info, stat(argv[0], &sb) == 0 &&
		    S_ISDIR(sb.st_mode));
	else if (rc == CLIENT_EXIT_OK) {
		for (size_t i = 0; i < l.n; i++) {
			if (i > 0)
				printf("\n");
			print_text(l.paths[i], &info[i]);
		}
	}
	for (size_t i = 0; i < l.n; i++)
		trace_info_free(&info[i]);
	free(info);
	trace_list_free(&l);
	return rc;
}

static const struct option info_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "step-pattern", required_argument, NULL, OPT_STEP_PATTERN },
	{ NULL, 0, NULL, 0 },
};

static const struct cmd_spec info_spec = {
	.name = "trace info",
	.usage =
	    "usage: spyremon trace info [--json] [--step-pattern REGEX] FILE|DIR\n"
	    "\n"
	    "Describes a torch.profiler trace (.json, or gzip-compressed):\n"
	    "its time dialect, its absolute span, its events and steps, its\n"
	    "rank and devices; a DIR (a TensorBoard log directory) each of its\n"
	    "*.pt.trace.json[.gz] in turn.\n"
	    "\n"
	    "      --json                 JSON instead (a DIR: an array)\n"
	    "      --step-pattern REGEX   steps are X events whose whole name\n"
	    "                             matches REGEX (POSIX extended); default\n"
	    "                             " TRACE_STEP_PATTERN "\n",
	.exits = CMD_EXITS_BASE,
	.longopts = info_longopts,
	.operands = 1,
	.opts_size = sizeof(struct info_opts),
	.option = info_option,
	.run = info_run,
};

int
cmd_trace(struct client *cl, int argc, char *argv[])
{
	if (argc < 2)
		return cmd_usage_error("trace", "missing subcommand: info");
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		return cmd_help(&info_spec);
	if (strcmp(argv[1], "info") == 0)
		return cmd_run(cl, &info_spec, argc - 1, argv + 1);
	return cmd_usage_error("trace", "unknown subcommand '%s'; say info",
	    argv[1]);
}
