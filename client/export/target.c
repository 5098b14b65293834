/*
 * target: a trace placed on the samples' clock (target.h).
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "db.h"
#include "format.h"
#include "timeparse.h"
#include "target.h"

/*
 * The file names of torch.profiler.tensorboard_trace_handler:
 * HOST_PID.TIME.pt.trace.json, gzip-compressed with a .gz.
 */
#define KINETO_FILE_RE	"^(.+)_[0-9]+\\.[0-9]+\\.pt\\.trace\\.json(\\.gz)?$"

/* The host in a Kineto file name, else "". */
static void
host_from_file_name(const char *path, char *host, size_t len)
{
	char *copy, *base;
	regmatch_t m[2];
	regex_t re;

	host[0] = '\0';
	if ((copy = strdup(path)) == NULL)
		return;
	base = basename(copy);
	if (regcomp(&re, KINETO_FILE_RE, REG_EXTENDED) == 0) {
		if (regexec(&re, base, 2, m, 0) == 0)
			snprintf(host, len, "%.*s", (int)(m[1].rm_eo -
			    m[1].rm_so), base + m[1].rm_so);
		regfree(&re);
	}
	free(copy);
}

/* The begin of the window --align-window names: the newest so named. */
static int
window_begin(sqlite3 *db, const char *name, int64_t *begin_ns)
{
	struct db_window_filter f = { .newest_first = true };
	struct db_window *ws;
	size_t n;
	int rc;

	db_window_filter_name(&f, name);
	if ((rc = db_windows(db, &f, &ws, &n)) != CLIENT_EXIT_OK)
		return rc;
	if (n == 0) {
		warnx("--align-window %s: no such window", name);
		return CLIENT_EXIT_FAILED;
	}
	if (n > 1)
		fprintf(stderr, "spyremon: tag %s matches %zu windows; aligning "
		    "with the newest (id %" PRId64 ")\n", name, n, ws[0].id);
	*begin_ns = ws[0].begin_ns;
	db_windows_free(ws, n);
	return CLIENT_EXIT_OK;
}

/* Set t's clock from the options, or from the trace itself. */
static int
place(sqlite3 *db, const struct trace_clock_options *o, struct trace_target *t)
{
	const struct trace_info *in = &t->info;
	char why[512];
	int64_t v;
	int rc;

	if (o->trace_start != NULL) {
		if (client_parse_time(o->trace_start, &v) == -1) {
			warnx("--trace-start %s: not a time (ISO 8601 or epoch "
			    "ns)", o->trace_start);
			return CLIENT_EXIT_USAGE;
		}
		t->clock = TRACE_CLOCK_START;
		t->shift_ns = v;
	} else if (o->align_window != NULL) {
		if ((rc = window_begin(db, o->align_window, &v)) !=
		    CLIENT_EXIT_OK)
			return rc;
		t->clock = TRACE_CLOCK_WINDOW;
		t->shift_ns = v - in->first_own_ns;
	} else if (in->absolute) {
		t->clock = TRACE_CLOCK_OWN;
		t->shift_ns = in->base_ns;
	} else {
		trace_explain_no_time(in, why, sizeof(why));
		warnx("%s: no absolute time: %s", t->path, why);
		return CLIENT_EXIT_FAILED;
	}
	if (t->clock != TRACE_CLOCK_OWN && in->absolute)
		fprintf(stderr, "spyremon: %s has its own absolute time; %s "
		    "overrides it\n", t->path, o->trace_start != NULL ?
		    "--trace-start" : "--align-window");
	if ((in->first_own_ns > 0 && t->shift_ns > INT64_MAX - in->last_own_ns) ||
	    (in->first_own_ns < 0 && t->shift_ns < INT64_MIN - in->first_own_ns)) {
		warnx("%s: its times are out of range on that clock", t->path);
		return CLIENT_EXIT_FAILED;
	}
	t->start_ns = in->first_own_ns + t->shift_ns;
	t->end_ns = in->last_own_ns + t->shift_ns;
	/* the epoch of the host clock it started in, and those after */
	db_trace_clock_free(&t->epochs);
	if ((rc = db_trace_clock_load(db, t->start_ns, &t->epochs)) != 0) {
		if (rc != DB_READ_FAILED)
			warnx("%s: its samples cannot be lined up", t->path);
		return rc == DB_READ_FAILED ? rc : CLIENT_EXIT_FAILED;
	}
	return CLIENT_EXIT_OK;
}

int
trace_target_read(const char *path, const struct trace_clock_options *o,
    struct trace_target *t)
{
	struct trace_options topts = { .step_pattern = o->step_pattern,
	    .on_event = o->on_event, .arg = o->arg };
	struct trace_error terr;
	char msg[512];

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->epochs.start_epoch = -1;
	switch (trace_read(path, &topts, &t->info, &terr)) {
	case TRACE_OK:
		break;
	case TRACE_ERR_PATTERN:
		warnx("--step-pattern: %s", trace_strerror(&terr, msg,
		    sizeof(msg)));
		return CLIENT_EXIT_USAGE;
	default:
		warnx("%s: %s", path, trace_strerror(&terr, msg, sizeof(msg)));
		return CLIENT_EXIT_FAILED;
	}
	if (!t->info.has_span) {
		warnx("%s: the trace has no timed events (%" PRIu64 " events "
		    "in all): it spans no time", path, t->info.nelements);
		return CLIENT_EXIT_FAILED;
	}
	if (t->info.host[0] != '\0')
		snprintf(t->host, sizeof(t->host), "%s", t->info.host);
	else
		host_from_file_name(path, t->host, sizeof(t->host));
	return CLIENT_EXIT_OK;
}

int
trace_target_place(sqlite3 *db, const struct trace_clock_options *o,
    struct trace_target *t)
{
	return place(db, o, t);
}

int
trace_target_load(sqlite3 *db, const char *path,
    const struct trace_clock_options *o, struct trace_target *t)
{
	int rc;

	if ((rc = trace_target_read(path, o, t)) != CLIENT_EXIT_OK)
		return rc;
	return trace_target_place(db, o, t);
}

void
trace_target_free(struct trace_target *t)
{
	trace_info_free(&t->info);
	db_trace_clock_free(&t->epochs);
}

int
trace_target_check_samples(sqlite3 *db, const struct trace_target *t,
    int64_t pad_ns)
{
	int64_t lo = t->start_ns - pad_ns, hi = t->end_ns + pad_ns;
	int64_t count, before = 0, after = 0;
	bool has_before, has_after;
	char gap[FMT_BUFLEN], when[FMT_BUFLEN];
	int rc;

	if ((rc = db_count_samples(db, lo, hi, &count)) != CLIENT_EXIT_OK)
		return rc;
	if (count > 0)
		return CLIENT_EXIT_OK;
	if ((rc = db_sample_before(db, lo, &has_before, &before)) !=
	    CLIENT_EXIT_OK ||
	    (rc = db_cover_after(db, hi, &has_after, &after)) !=
	    CLIENT_EXIT_OK)
		return rc;
	if (!has_before && !has_after) {
		warnx("%s: the database holds no samples to line up with the "
		    "trace", t->path);
	} else if (!has_after) {
		fmt_span(lo - before, gap, sizeof(gap));
		fmt_time_ms(before, when, sizeof(when));
		warnx("%s: trace starts %s after the newest sample (%s): "
		    "taken on another host, or is a clock off?", t->path, gap,
		    when);
	} else if (!has_before) {
		fmt_span(after - hi, gap, sizeof(gap));
		fmt_time_ms(after, when, sizeof(when));
		warnx("%s: trace ends %s before the oldest sample (%s): "
		    "removed by retention, taken on another host, or is a "
		    "clock off?", t->path, gap, when);
	} else {
		char gap2[FMT_BUFLEN];

		fmt_span(lo - before, gap, sizeof(gap));
		fmt_span(after - hi, gap2, sizeof(gap2));
		warnx("%s: no samples during the trace: the nearest end %s "
		    "before it starts and begin %s after it ends: was "
		    "spyremond running?", t->path, gap, gap2);
	}
	return CLIENT_EXIT_FAILED;
}
