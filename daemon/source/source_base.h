/*
 * source_base: what the source*.c files share, below all of them: struct
 * source, and the helpers that only read or stamp it (rates, timers, the
 * last error, metric-file health).  The files above it, bottom up:
 *
 *   source_rows.c   lines and rows: CSV to store_sample, through pace
 *   source_child.c  the aiu-smi process: spawn, output, exit, restart
 *   source_direct.c the cards' new-format metric files, read directly
 *                   (direct.c) on a timer, through a pace of their own
 *   source.c        the public face (source.h), which owns the rest
 *
 * Each calls only down: a change that the owner must act on (the cards
 * read directly now differ) is reported through a callback in struct
 * source that source.c sets.  Nothing outside daemon/source/ sees struct
 * source.
 */
#ifndef SPYREMON_SOURCE_BASE_H
#define SPYREMON_SOURCE_BASE_H

#include "csvparse.h"
#include "dstamp.h"
#include "log.h"
#include "source.h"
#include "store.h"

struct pace;
struct pace_params;
struct direct;
struct mf_table;

struct source {
	sd_event *ev;
	const struct config *cfg;
	struct store *st;
	struct pace *pace;
	uint64_t interval_ns;		/* source.interval, as last set */
	bool windows_open;
	int64_t opened_ns;		/* when the windows opened */
	sd_event_source *replay_ev;	/* pace is yet to hear of the opening */

	pid_t pid;			/* 0 when no child runs */
	int out_fd;			/* our end of the child's stdout pipe */
	int err_fd;			/* our end of the child's stderr pipe */
	sd_event_source *out_io, *err_io, *child_ev;
	sd_event_source *restart_timer, *kill_timer;
	sd_event_source *silence_timer, *health_timer;
	uint64_t child_interval_ns;
	uint64_t spawned_mono_ns;
	uint64_t last_row_mono_ns;	/* 0 until the child's first row */
	uint64_t resumed_mono_ns;	/* the loop last ran again after being held */
	uint64_t backoff_ns;
	bool stopping;			/* no more restarts */
	bool restart_at_once;		/* we killed it on purpose */
	bool started_once;
	pid_t ver_pid;			/* "aiu-smi -v" running, 0 if not */
	int ver_fd;			/* our end of its stdout pipe */
	sd_event_source *ver_child, *ver_timer;
	int64_t ver_since_ns;		/* when it started, CLOCK_REALTIME */

	struct csv_lines out_lines, err_lines;
	struct csv_parser parser;
	unsigned mapped_generation;
	int col_metric[CSV_COLS_MAX];	/* store metric id per column, -1 if not a metric */
	bool col_card[CSV_COLS_MAX];	/* the column says something of the card */
	bool header_mapped;
	int64_t read_stamp_ns;		/* when the bytes being parsed were read */
	/*
	 * The host clock's steps summed since the start, whole ms within
	 * +-24 days (pace keeps it per row in 32 bits): each row's
	 * clock_net_ns, so the store's energy counter follows a step.
	 */
	int64_t clock_net_ns;
	/*
	 * The host clock's epoch (store_clock_epoch) rows are stamped in
	 * now, and the last step's size and new time (0 if none since the
	 * start): a file row stamped by the old clock and read after the
	 * step is of the epoch before (source_direct.c).
	 */
	int64_t clock_epoch;
	int64_t step_size_ns, step_at_ns;
	struct csv_result res;		/* scratch: too big for the stack per line */
	int ids[CSV_COLS_MAX];
	struct store_value vals[CSV_COLS_MAX];

	int cached_date, cached_hour;	/* local Date/Time -> epoch cache */
	int64_t cached_hour_epoch;

	/* direct reads (source_direct.c); direct is NULL with direct: off */
	struct direct *direct;
	struct mf_table *table;		/* from section_types.json, or NULL */
	struct pace *dpace;		/* the rates of direct rows */
	sd_event_source *direct_timer;
	uint64_t direct_period_ns;
	uint64_t direct_next_usec;	/* the timer's next scheduled time */
	bool direct_all;		/* every known card is read directly */
	bool direct_said;		/* direct_all has been logged once */
	uint64_t direct_seen_mono_ns;	/* the coverage first differed, or 0 */
	uint64_t direct_switched_mono_ns; /* direct_all last changed, or 0 */
	struct dstamp_ring dring[SOURCE_MAX_DEVICES];	/* dstamp.h */

	/*
	 * Called by source_direct.c once the set of cards read directly has
	 * changed (direct_all), why saying how; source.c applies the rates
	 * again.  Set by source.c before the first read.
	 */
	void (*coverage_changed)(struct source *src, const char *why);

	struct source_device dev[SOURCE_MAX_DEVICES];
	struct card *cards;
	size_t ncards;
	struct source_stats stats;
	struct ratelimit bad_rl, stderr_rl, skew_rl;
};

/* The delay the child should sample at now. */
uint64_t source_wanted_delay(const struct source *src);

/* The pace parameters of aiu-smi's rows now. */
struct pace_params source_pace_params(const struct source *src);

/* The pace parameters of direct rows now. */
struct pace_params source_direct_params(const struct source *src);

/* The rate rows are stored at now (status). */
uint64_t source_stored_interval(const struct source *src);

/* Log what the ring covers now that rows have nmetrics metrics. */
void source_describe_ring(const struct source *src, size_t nmetrics);

/* Arm (or re-arm) a one-shot monotonic timer at usec; create it if needed. */
int source_arm_timer(struct source *src, sd_event_source **s, uint64_t usec,
    sd_event_time_handler_t cb);

/* Set stats.last_error, for status. */
void source_set_error(struct source *src, const char *fmt, ...) LOG_FMT(2, 3);

/* ns as seconds with only the digits needed: "0.01", "1", "2.5". */
void source_format_seconds(uint64_t ns, char *buf, size_t len);

/*
 * Check device's metric file now (stat: there, and is its mtime moving?),
 * logging a change of its health; a path first named is checked at once,
 * so that status never says "not checked yet" of a file being read.
 */
void source_check_health(struct source *src, int device, uint64_t now_mono_ns);

#endif
