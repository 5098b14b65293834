/*
 * export: samples of a span of time written as CSV, as aiu-smi's own CSV,
 * or as JSON lines.  The command (export.c) picks the spans and metrics;
 * the writers (export_fmt.c) turn rows into text.
 *
 * A sample stamped t with interval d covers (t - d, t); it is exported
 * for a span (lo, hi) when the two overlap, the rule of DB_OVERLAPS_SQL.
 */
#ifndef SPYREMON_EXPORT_H
#define SPYREMON_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "db.h"

enum export_format {
	EXPORT_CSV,		/* epoch_ns,time_utc,device,bus_id,interval_ms,<key>... */
	EXPORT_AIUSMI,		/* aiu-smi -s: ID,Date (YYYYMMDD),Time (HH:MM:SS),<key unit>... */
	EXPORT_JSONL,		/* one object per sample */
};

struct export_writer {
	enum export_format format;
	FILE *out;
	const struct db_metric *const *cols;	/* the metrics, in output order */
	size_t ncols;
	const struct db_devmap *map;
	bool window_column;	/* csv: a leading "window" column (--all) */
	/*
	 * Several traces (--trace, more than once): each row says which
	 * trace's span it is exported for, by the trace's rank and host
	 * (csv columns trace_rank,trace_host; jsonl "rank","host"; aiusmi a
	 * "#trace PATH rank R host H" line and a header per trace).  The
	 * caller sets the members before each span.
	 */
	/*
	 * Several databases (--db more than once, hosts.h): the host of the
	 * rows that follow, set by the caller before each span: csv's leading
	 * "host" column, jsonl's "host" member (a trace's own host is then
	 * "trace_host"), and for aiusmi a "#host H" line and a header per
	 * span.  NULL with one database: none of these.
	 */
	const char *host;
	bool damaged;		/* a span's rows met a damaged page (said) */
	struct {
		bool on;
		const char *path;
		bool has_rank;
		int64_t rank;
		const char *host;	/* "" if unknown */
	} trace;
	/*
	 * Samples imported from aiu-smi logs, stamped with its whole-second
	 * local times: their runs and their number in the export, set by
	 * export_coarse_span.  When ncoarse is not 0 the export says so: a
	 * note on stderr, csv's trailing coarse column (0 or 1), jsonl's
	 * "coarse":true on those rows, aiusmi's "#coarse" line.
	 */
	struct db_coarse coarse;
	int64_t ncoarse;
	/*
	 * Rows read from the cards' metric files (src 1), counted by
	 * export_coarse_span.  When not 0, every row names its source
	 * (bestsrc.h): csv's trailing "source" column and jsonl's "source"
	 * member ("aiu-smi" or "file"), and aiusmi's "#source" line and a
	 * note on stderr; a value the rule takes from the card's other
	 * stream is empty, as if missing.
	 */
	int64_t nfile;
	/* made by export_writer_init: */
	struct {
		char *p;	/* the line being built */
		size_t len, cap;
	} line;
	char **json_keys;	/* jsonl: each column's "key": as JSON text */
};

/* One sample, as read from samples: values[i] belongs to cols[i]. */
struct export_row {
	int64_t ts_ns;
	int device;
	int64_t interval_ms;
	sqlite3_stmt *stmt;	/* the row; values are columns first_value.. */
	int first_value;
	int src;		/* SCHEMA_SRC_* */
};

/* Set up w (its format, out, cols, ncols and map set); -1 on ENOMEM. */
int export_writer_init(struct export_writer *w);
void export_writer_free(struct export_writer *w);

/*
 * Before the first export_begin_span, once per span: load the coarse runs
 * that the span (lo_ns, hi_ns), as padded, may export into w->coarse, and
 * add to w->ncoarse the number of its samples (of the devices device_sql,
 * export.c's " AND device IN (...)" or "", allows) that lie in them, and
 * to w->nfile the number of its rows read from metric files.
 * Returns CLIENT_EXIT_OK or CLIENT_EXIT_DATABASE.
 */
int export_coarse_span(sqlite3 *db, struct export_writer *w, int64_t lo_ns,
    int64_t hi_ns, const char *device_sql);

/*
 * Begin the rows of window win (NULL for a span given by time); first is
 * true for the first span.  The first span gets the header (csv, aiusmi).
 * For aiusmi with several (--all), every window gets a line
 * "#window ID TAG BEGIN END" and its own header, as aiu-smi writes a new
 * header when its columns change.
 */
void export_begin_span(struct export_writer *w, const struct db_window *win,
    bool several, bool first);

/*
 * Write one row.  window_id, if not 0, is the window the row is exported
 * for: the csv "window" column (if window_column) and jsonl's "window".
 */
void export_write_row(struct export_writer *w, const struct export_row *r,
    int64_t window_id);

/* Parse "csv", "aiusmi" or "jsonl"; -1 if none. */
int export_format_parse(const char *s, enum export_format *out);

#endif
