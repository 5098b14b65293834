/*
 * source_priv: what the source*.c files share.
 *
 *   source.c        the public face: rates and the fine-rate ring,
 *                   inventory, metric-file health
 *   source_rows.c   lines and rows: CSV to store_sample, through pace
 *   source_child.c  the aiu-smi process: spawn, output, exit, restart
 *   source_direct.c the cards' new-format metric files, read directly
 *                   (direct.c) on a timer, through a pace of their own
 *
 * Nothing outside these files sees struct source.
 */
#ifndef SPYREMON_SOURCE_PRIV_H
#define SPYREMON_SOURCE_PRIV_H

#include "csvparse.h"
#include "log.h"
#include "source.h"
#include "store.h"

struct pace;
struct direct;
struct mf_table;

/* What a direct row carried that pace does not keep, by stamp. */
#define SOURCE_DRING	16
struct source_dstamp {
	int64_t ts_ns;
	uint32_t seq;
	int64_t arrival_ns;
};

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
	struct source_dstamp dring[SOURCE_MAX_DEVICES][SOURCE_DRING];
	unsigned dring_head[SOURCE_MAX_DEVICES];

	struct source_device dev[SOURCE_MAX_DEVICES];
	struct card *cards;
	size_t ncards;
	struct source_stats stats;
	struct ratelimit bad_rl, stderr_rl, skew_rl;
};

/* ---- source.c ---- */

/* Bring pace, the direct reads and the child in line with the rates now
 * wanted; why is logged if the child is restarted for it. */
void source_apply_rates(struct source *src, const char *why);

/* The delay the child should sample at now. */
uint64_t source_wanted_delay(const struct source *src);

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

/* The pace parameters of direct rows now. */
struct pace_params source_direct_params(const struct source *src);

/* ---- source_direct.c ---- */

/*
 * Set up direct reads (with source.direct not off): the metric table, the
 * reader, its pace and its timer.  0, or -1 (logged).
 */
int source_direct_start(struct source *src);

/* Re-arm the timer at the period now wanted and pass params to its pace. */
void source_direct_rates(struct source *src);

/* Read device's file at path (a #MetricFiles entry). */
void source_direct_add(struct source *src, int device, const char *path);

/* Tell the direct rows' pace that windows opened or closed at now_ns. */
void source_direct_window(struct source *src, bool open, int64_t now_ns);

/* Store every partial aggregate of direct rows, and stop the timer. */
void source_direct_stop(struct source *src);

/* Free what source_direct_start made. */
void source_direct_free(struct source *src);

/* ---- source_rows.c ---- */

/* Parse bytes of the child's stdout, read at stamp_ns. */
void source_stdout_bytes(struct source *src, const char *buf, size_t n,
    int64_t stamp_ns);

/* Log the child's stderr, line by line, rate-limited. */
void source_stderr_bytes(struct source *src, const char *buf, size_t n);

/* Forget any header and unfinished lines: a new child starts. */
void source_rows_reset(struct source *src);

/* ---- source_child.c ---- */

/* Start the child now; on failure, schedule a retry after the back-off. */
void source_spawn(struct source *src);

/* Ask the child to go (SIGTERM, SIGKILL after a grace); its exit follows. */
void source_kill(struct source *src, const char *why);

/* Start the child after delay_ns. */
void source_schedule_restart(struct source *src, uint64_t delay_ns);

/* Arm the silence check; -1 if the timer cannot be set up. */
int source_watch_silence(struct source *src);

/*
 * Stop the child synchronously: SIGTERM, SIGKILL after grace_ns, reading
 * its output meanwhile, then reap it.  No restart follows.
 */
void source_stop_child(struct source *src, uint64_t grace_ns);

/* Kill and reap a running "aiu-smi -v" (source_spawn starts one). */
void source_stop_version(struct source *src);

#endif
