/*
 * export_priv: what export.c (the command's flow), export_opts.c (its
 * command line) and export_derived.c (the outputs of traces) share.
 */
#ifndef SPYREMON_EXPORT_PRIV_H
#define SPYREMON_EXPORT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "bdtrace.h"
#include "client.h"
#include "db.h"
#include "export.h"
#include "hosts.h"
#include "opsenergy.h"
#include "target.h"
#include "tracelist.h"

#define MAX_TRACES	TRACELIST_MAX	/* more traces, or --host-map, are refused */

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
	OPT_HOST_MAP,
	OPT_MERGE_DIR,
	OPT_MERGE_AS,
	OPT_PARTIAL,
	OPT_TABLE,
	OPT_BY_SOURCE,
	OPT_OPS,
	OPT_BREAKDOWN,
	OPT_LAUNCH_GAP,
	OPT_BREAKDOWN_TRACK,
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
	struct trace_list traces;	/* --trace, in order, directories expanded */
	struct trace_clock_options clock;
	struct hosts_map maps[MAX_TRACES];	/* --host-map, in order */
	size_t nmaps;
	const char *merge;	/* --merge OUT: several traces combined */
	const char *merge_dir;	/* --merge-dir DIR: one merged trace each */
	bool include_unreliable;
	int merge_as;		/* --merge-as: enum merge_as; -1 not given */
	bool steps;
	bool ops;		/* --ops: energy per operator */
	bool breakdown;		/* --breakdown: where the time went */
	bool breakdown_track;	/* --breakdown-track: that as a merged trace's track */
	int64_t launch_gap_ns;	/* --launch-gap; -1: not given (30 µs) */
	int steps_format;	/* of --steps, --ops or --breakdown; -1: table on a terminal, else csv */
	bool partial;		/* --partial: as far as it goes is the answer */
	bool quiet;		/* --quiet: no merge summary on stderr */
	bool by_source;		/* --by-source: each stored row, not paired */
};

/* The command line (cmd.h): its usage, long options and option taker. */
extern const char export_usage[];
extern const struct option export_longopts[];
int export_option(void *opts, int ch, char *arg);

/* The options that exclude or need others: an exit status. */
int export_check_options(const struct options *o);

/*
 * --merge-dir DIR: DIR/NAME for each trace, NAME being its file name, in
 * *outs (each and the array to be freed).  Two traces of one name, and a
 * name that is the trace itself, are refused before anything is written.
 */
int export_merge_dir_names(const char *dir, const struct options *o,
    char ***outs);

/* A list of device IDs, "0,1", as SQL: " AND device IN (0,1)". */
int export_device_clause(const char *list, char *sql, size_t len);

/*
 * The metrics to write, in *cols: those of --metrics in the order given
 * (list is cut up by strtok), or the whole catalog in catalog order, less
 * the unreliable metrics when reliable_only.
 */
int export_pick_metrics(const struct db_catalog *cat, char *list,
    bool reliable_only, const struct db_metric ***cols, size_t *n);

/* One database of the export, and what is read from it. */
struct source {
	sqlite3 *db;			/* of the hosts_set, not owned */
	const char *path;		/* its file */
	const char *host;		/* the rows' host; NULL with one database */
	struct db_catalog cat;
	struct db_devmap map;
	const struct db_metric **cols;	/* the export's metrics, in this database */
	struct db_window *ws;		/* --window's, oldest first */
	size_t nws;
	struct db_coarse coarse;	/* its coarse runs, export_coarse_span's */
	sqlite3_stmt *s;		/* the samples, made on first need */
};

/*
 * The span of one export: a window's, a trace's, or --from/--to's (win
 * and trace NULL), in the database of src.
 */
struct span {
	struct source *src;
	const struct db_window *win;
	const struct trace_target *trace;
	int64_t lo_ns, hi_ns;	/* before the pad */
	/* a window's piece in one epoch of the host clock (db_window_pieces);
	 * -1: any epoch */
	int64_t epoch;
};

struct event_sinks;

/* The whole export: the databases, the traces and the spans. */
struct job {
	const struct options *o;
	struct client *cl;
	int settled;			/* CLIENT_EXIT_OK, or _INCOMPLETE (settle.h) */
	struct hosts_set hs;
	struct source *src;		/* hs.n of them */
	size_t nsrc;
	bool multi;			/* several databases: rows carry a host */
	size_t ncols;
	struct trace_target *ts;	/* o->traces.n */
	struct ops_events **evs;	/* each trace's device events, read with it */
	struct bd_trace **bt;		/* --breakdown: their events */
	struct event_sinks *sinks;	/* both of a trace, when both read */
	size_t *which;			/* each trace's source */
	struct span *spans;
	size_t nspans, spans_cap;
	char device_sql[1024];
};

/*
 * --merge or --merge-dir, then --steps, --ops or --breakdown, of j's
 * traces and spans.  Returns CLIENT_EXIT_OK, or another CLIENT_EXIT_*
 * after printing why.
 */
int export_run_derived(struct job *j);

#endif
