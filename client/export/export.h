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
#include "pair.h"

enum export_format {
	EXPORT_CSV,		/* [trace_ns,]epoch_ns,time_utc,device,bus_id,interval_ms,<key>... */
	EXPORT_AIUSMI,		/* aiu-smi -s: #MetricFiles, ID,Date (YYYYMMDD),Time (HH:MM:SS),<key unit>... */
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
	/*
	 * The samples of traces (--trace without --window or an output of
	 * its own): each row's time in its trace's (target.h), its stamp
	 * plus trace_shift_ns, which the caller sets before each piece of
	 * the span (db_trace_pieces): csv's "trace_ns" column just before
	 * epoch_ns (the stamp as stored), jsonl's "trace_ns" member after
	 * "ts_ns".  aiusmi, aiu-smi's own text, keeps the stamps only.
	 */
	bool trace_time;
	int64_t trace_shift_ns;
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
	 * "coarse":true on those rows (aiusmi, aiu-smi's text, has none).
	 */
	struct db_coarse coarse;
	int64_t ncoarse;
	/*
	 * Rows read from the cards' metric files (src 1), counted by
	 * export_coarse_span.  When not 0, csv's trailing "source" column
	 * and jsonl's "source" member say which rows made each sample
	 * ("aiu-smi", "file" or "file+aiu-smi"; with by_source each row is a
	 * sample of its own), and aiusmi notes it on stderr only.
	 */
	int64_t nfile;
	/*
	 * Each stored row as a sample of its own (--by-source), rather than
	 * a card's two streams paired into one sample per tick (pair.h).
	 */
	bool by_source;
	/*
	 * aiusmi: which of cols aiu-smi printed (db_smi_printed), the only
	 * ones written; NULL: all.  The cards of the span, for the
	 * #MetricFiles block before each header: their devices and first
	 * stamps (the metric file then in force is map's), set by the caller
	 * before each span.
	 */
	const bool *shown;
	const struct db_key *cards;
	size_t ncards;
	/* made by export_writer_init: */
	struct {
		char *p;	/* the line being built */
		size_t len, cap;
	} line;
	char **json_keys;	/* jsonl: each column's "key": as JSON text */
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
 * Write one sample.  window_id, if not 0, is the window it is exported
 * for: the csv "window" column (if window_column) and jsonl's "window".
 */
void export_write_row(struct export_writer *w, const struct pair_sample *r,
    int64_t window_id);

/* Where a read of samples met a damaged page (export_write_samples). */
struct export_damage {
	bool	 damaged;
	int64_t	 from_ns;	/* the last row read before it (or lo_ns) */
	int64_t	 to_ns;		/* the first readable stamp after it, 0: none */
	int64_t	 interval_ms;	/* of the last row read */
	uint64_t devs;		/* the cards read, a bit per device ID < 64 */
};

/*
 * Write the samples of s, a statement of db_select_samples over w's
 * columns (ordered), over the span (lo_ns, hi_ns): each card's two
 * streams paired into one sample per tick (pair.h), or with w->by_source
 * each row as it is stored.  A row in the span pairs with its partner
 * stamped before it as anywhere else (pair_read_from); a sample is
 * written when it overlaps the span.  *rows gets the samples written,
 * *file_rows the rows of metric files in the span.  A damaged page is read around once:
 * the rows before it and after it are written, and *dmg says where it
 * was (the caller says so and exits with the partial-data status).
 * CLIENT_EXIT_OK; CLIENT_EXIT_FAILED after saying that out_name could not
 * be written; or the database's error.
 */
int export_write_samples(struct export_writer *w, sqlite3 *db,
    sqlite3_stmt *s, int64_t lo_ns, int64_t hi_ns, int64_t window_id,
    const char *out_name, int64_t *rows, int64_t *file_rows,
    struct export_damage *dmg);

/* Parse "csv", "aiusmi" or "jsonl"; -1 if none. */
int export_format_parse(const char *s, enum export_format *out);

#endif
