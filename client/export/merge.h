/*
 * merge: a copy of a profiler trace with the cards' telemetry added as
 * counter tracks, for Perfetto and chrome://tracing
 * ("spyremon export --trace IN --merge OUT").
 *
 * The original bytes are copied through as a stream, untouched; the new
 * events are appended after the original's last event, right before the
 * ']' that closes the events array (trace_info.events_close), so every
 * original event keeps its bytes and its index, and every byte before
 * that ']' is the original's.  Per card, one process (an M process_name
 * event, on a pid no event of the trace uses) holds one counter track per
 * metric, named with its unit, such as "pwr (W)".  A sample stamped t
 * covering d becomes a C event at t - d, on the trace's own time base
 * (target.h), and after a card's last sample a final event at the end of
 * its interval holds the last values; every counter time is clipped to
 * the trace's span.  Times take the original's type: whole microseconds
 * (rounded to the nearest, a half up) where every ts of the original is
 * an integer, else with as many decimals as the original's ts have at
 * most (ts_decimals: fewer than three rounded the same way, more padded
 * with zeros, for the times are whole nanoseconds); the M
 * events carry a ts, the trace's first, where the original's M events
 * have one, so that a reader that puts every event's ts in one column
 * finds no event without it.  After the cards' events, each device
 * event's energy on slices of their own (merge_ops.h), and, when asked,
 * each card's time by class (--breakdown's) as a track (merge_bd.h).
 *
 * With MERGE_AS_HTA (--merge-as hta) the samples are X slices instead, on
 * the same processes: one per sample interval of a card, from t - d (or
 * the end of the card's slice before, so that slices never overlap) to t,
 * clipped into the trace's span and to start no earlier than its first
 * slice an analyzer keeps (has_first_slice), so that no analyzer's start
 * of time moves; cat MERGE_HTA_CAT, name "Spyre N sample", and in args the
 * card's latest value of each metric, under its track's name ("pwr (W)").
 * A dur is written as the ts are: whole microseconds (the rounded end
 * less the rounded start) or with their decimals.  Neither the energy
 * slices nor the breakdown's track are written then: the file is for
 * HTA's analyses, to which they would only be more slices to skip
 * (export refuses --breakdown-track with --merge-as hta).
 */
#ifndef SPYREMON_MERGE_H
#define SPYREMON_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "db.h"
#include "target.h"

/* What the cards' samples become (--merge-as). */
enum merge_as {
	MERGE_AS_COUNTERS,	/* C counter tracks, for trace viewers */
	MERGE_AS_HTA,		/* X slices an analyzer's dataframe keeps */
};

/*
 * The category of the slices of MERGE_AS_HTA: Holistic Trace Analysis
 * keeps only events with a dur and a cat, and once a trace has profiler
 * steps only those whose cat it takes for CPU events (matching
 * ^cpu_op, ^user_annotation$ or ^(.+)_runtime); this one matches the last
 * and no other pattern of its analyses.
 */
#define MERGE_HTA_CAT		"spyre_sample_runtime"

struct ops_events;
struct bd_result;

struct merge_request {
	const struct trace_target *t;		/* the trace; read, placed */
	const struct db_metric *const *cols;	/* the counter tracks, in order */
	size_t	 ncols;
	const struct db_devmap *map;		/* for the processes' names */
	const char *host;			/* NULL, or the cards' host in their names */
	int64_t	 sort_base;			/* 0: the cards' sort indexes from MERGE_SORT_INDEX */
	const char *device_sql;			/* "" or " AND device IN (...)" */
	int64_t	 lo_ns, hi_ns;			/* samples overlapping (lo, hi) */
	const char *out_path;			/* a name ending in .gz: gzip */
	bool	 progress;			/* report progress on stderr */
	enum merge_as as;			/* counters, or slices for HTA */
	bool	 ts_integer;			/* times as whole microseconds */
	int	 ts_decimals;			/* else with this many decimals, 1..9 */
	bool	 metadata_ts;			/* M events with a ts (the trace's first) */
	const struct db_coarse *coarse;		/* NULL, or the imported coarse runs */
	int64_t	 idle_lookback_ns;		/* the energy slices' idle power (merge_ops.h); 0: the default */
	struct ops_events *events;		/* NULL, or the trace's device events, gathered */
	const struct bd_result *breakdown;	/* NULL, or its classes as a track (merge_bd.h) */
};

/* What a merge added, for the summary a person reads. */
struct merge_stats {
	uint64_t events;		/* M and C events written */
	uint64_t samples;		/* rows drawn */
	uint64_t coarse;		/* of those, imported coarse ones */
	size_t	 cards, tracks;		/* tracks: with at least one event */
	enum merge_as as;
	uint64_t slices;		/* MERGE_AS_HTA: X events written */
	int64_t	 lo_ns, hi_ns;		/* absolute span the tracks cover */
	int64_t	 min_iv_ms, max_iv_ms;	/* the rows' intervals */
	uint64_t energy_slices;		/* X events of merge_ops.h, in events */
	size_t	 energy_cards;		/* their processes */
	uint64_t breakdown_slices;	/* X events of merge_bd.h, in events */
};

/*
 * Write the merged trace to rq->out_path, whole or not at all (output.h),
 * and what was added in *st.
 * Returns CLIENT_EXIT_OK, or another CLIENT_EXIT_* after printing why; a
 * trace that changed since it was read, or is corrupt, fails with the
 * byte offset.
 */
int merge_write(sqlite3 *db, const struct merge_request *rq,
    struct merge_stats *st);

/*
 * One line on fp for a person: out, then what *st says was added, or that
 * nothing was.
 */
void merge_stats_print(FILE *fp, const char *out,
    const struct merge_stats *st);

/* One trace (rank) of a combined merge, with its host's database. */
struct merge_rank {
	const struct trace_target *t;
	sqlite3	*db;
	const struct db_metric *const *cols;	/* in db, the same keys for all */
	const struct db_devmap *map;
	const char *host;			/* the database's host */
	int64_t	 lo_ns, hi_ns;			/* samples overlapping (lo, hi) */
};

/*
 * Several traces, each with its host's cards, as one Chrome trace at
 * out_path ("export --trace A --trace B --merge OUT"), whole or not at
 * all; see combine.c for its layout.  Returns a CLIENT_EXIT_*.
 */
int merge_combined_write(const struct merge_rank *r, size_t n, size_t ncols,
    const char *device_sql, const char *out_path);

#endif
