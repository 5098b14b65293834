/*
 * mksamples: a database of given samples, written through the store as
 * the daemon writes them, for tests that need samples at known times with
 * known values (a trace's span, a power series with a known integral).
 *
 *   mksamples DB < LINES
 *
 * Each line is "TS_NS DEVICE INTERVAL_MS KEY=VALUE ...", VALUE a decimal
 * as aiu-smi prints it or "-" for a missing value: a row of aiu-smi's, or
 * of the card's metric file after "file "; "window TAG BEGIN_NS
 * END_NS [unsync] [META_JSON]" records a closed window (unsync: with the
 * host clock recorded as not synchronized at both ends); "map DEVICE
 * BUS_ID" maps a device to a bus ID from time 0; "nosummary" leaves the
 * windows without summaries; "retention NOW_NS MAX_AGE_NS
 * WINDOWS_MAX_AGE_NS" summarizes the windows so far, then runs the
 * daemon's retention to the end at NOW_NS; "#" lines are ignored.  Rows of one device
 * must come in time order.  At the end the windows are summarized as the
 * daemon does (idle look-back 1 h).  Exits 1 with "LINE: message" on bad
 * input.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clocksync.h"
#include "log.h"
#include "metrics.h"
#include "schema.h"
#include "storedb.h"
#include "timeparse.h"

#define MAX_VALUES	64

static int lineno;

static void
bad(const char *what)
{
	fprintf(stderr, "mksamples: line %d: %s\n", lineno, what);
	exit(1);
}

/* "12.5" as mant 125, scale 1. */
static struct store_value
parse_value(const char *s)
{
	struct store_value v = { 0 };
	const char *p = s;
	bool neg = false, point = false;

	if (strcmp(s, "-") == 0)
		return v;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (*p == '\0')
		bad("empty value");
	for (; *p != '\0'; p++) {
		if (*p == '.' && !point) {
			point = true;
			continue;
		}
		if (*p < '0' || *p > '9' || v.mant > INT64_MAX / 10 - 10)
			bad("bad value");
		v.mant = v.mant * 10 + (*p - '0');
		if (point)
			v.scale++;
	}
	if (neg)
		v.mant = -v.mant;
	v.present = true;
	return v;
}

static void
sample_line(struct store *st, char *line)
{
	struct store_value vals[MAX_VALUES];
	int ids[MAX_VALUES];
	struct store_sample s = { .metric = ids, .values = vals };
	char *tok, *save = NULL;
	long long ts, dev, ival;

	if (strncmp(line, "file ", 5) == 0) {
		s.src = SCHEMA_SRC_FILE;
		line += 5;
	}
	if (sscanf(line, "%lld %lld %lld", &ts, &dev, &ival) != 3)
		bad("want TS_NS DEVICE INTERVAL_MS KEY=VALUE ...");
	s.ts_ns = ts;
	s.device = (int)dev;
	s.interval_ms = (uint32_t)ival;
	strtok_r(line, " \t\n", &save);
	strtok_r(NULL, " \t\n", &save);
	strtok_r(NULL, " \t\n", &save);
	while ((tok = strtok_r(NULL, " \t\n", &save)) != NULL) {
		char *eq = strchr(tok, '=');

		if (eq == NULL || s.nvalues == MAX_VALUES)
			bad("want KEY=VALUE");
		*eq = '\0';
		if (storedb_metric(st, tok, "", &ids[s.nvalues]) == -1)
			bad("storedb_metric failed");
		vals[s.nvalues++] = parse_value(eq + 1);
	}
	storedb_append(st, &s);
}

int
main(int argc, char *argv[])
{
	struct store *st;
	char line[4096], tag[256], bus[64];
	long long a, b, c;
	int64_t id;
	int dev, used;
	bool summarize = true;

	if (argc != 2) {
		fprintf(stderr, "usage: mksamples DB < LINES\n");
		return 2;
	}
	log_init("mksamples", 0);
	if (storedb_open(argv[1], 1 << 20, &st) == -1)
		return 1;
	while (fgets(line, sizeof(line), stdin) != NULL) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "window %255s %lld %lld%n", tag, &a, &b,
		    &used) == 3) {
			struct clocksync unsync = { .known = true,
			    .est_error_us = 16000000, .max_error_us = 16000000 };
			char *rest = line + used;
			const char *meta;
			bool bad_clock = false;

			rest[strcspn(rest, "\n")] = '\0';
			rest += strspn(rest, " ");
			if (strncmp(rest, "unsync", 6) == 0) {
				bad_clock = true;
				rest += 6 + strspn(rest + 6, " ");
			}
			meta = *rest != '\0' ? rest : "{}";
			if (storedb_flush(st) == -1 ||
			    storedb_window_begin(st, tag, 0, 0, a, meta,
			    bad_clock ? &unsync : NULL, 0, &id) == -1 ||
			    storedb_window_end(st, id, b, STORE_ENDED_MARK,
			    bad_clock ? &unsync : NULL) == -1)
				bad("cannot record the window");
		} else if (sscanf(line, "retention %lld %lld %lld", &a, &b,
		    &c) == 3) {
			struct store_retention r = { .max_age_ns = (uint64_t)b,
			    .windows_max_age_ns = (uint64_t)c };
			int more;

			if (storedb_flush(st) == -1 || (summarize &&
			    storedb_windows_summarize_due(st, now_realtime_ns(),
			    0, 3600 * (int64_t)1000000000) == -1))
				bad("cannot summarize the windows");
			while ((more = storedb_retention_step(st, &r, a,
			    1000000000)) == 1)
				;
			if (more == -1)
				bad("retention failed");
		} else if (strcmp(line, "nosummary\n") == 0) {
			summarize = false;
		} else if (sscanf(line, "map %d %63s", &dev, bus) == 2) {
			if (storedb_device_map(st, dev, "", bus, 0) == -1)
				bad("cannot record the map");
		} else
			sample_line(st, line);
	}
	if (storedb_flush(st) == -1)
		return 1;
	if (summarize && storedb_windows_summarize_due(st, now_realtime_ns(), 0,
	    3600 * (int64_t)1000000000) == -1)
		return 1;
	storedb_close(st);
	return 0;
}
