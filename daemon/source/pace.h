/*
 * pace: the rate at which rows are stored, decoupled from the rate at
 * which aiu-smi samples.
 *
 * aiu-smi runs at the fine rate.  While no profiling window is open, pace
 * stores one row per device per coarse interval: the aggregate of that
 * device's fine rows since its previous stored row.  While a window is
 * open, every fine row is stored as it arrives.  When a window opens, the
 * fine rows of the last pre_ns, kept in a ring per device, replace the
 * coarse rows that covered them, so a window opened a little late is
 * still covered at the fine rate and no two stored rows of a device
 * overlap in time.
 *
 * An aggregate row has the last fine row's ts_ns and skew, and as
 * interval_ms the sum of the fine rows' intervals, so it covers
 * [ts - interval, ts] exactly as one aiu-smi row taken at that delay
 * would.  Each metric is the mean of its present values (absent if none
 * is present); metrics marked with pace_set_max take the maximum instead.
 * The mean is exact decimal arithmetic: the values are brought to the
 * largest scale among them, summed exactly in 128 bits, and the sum is
 * divided by their number once, rounding half away from zero, at that
 * scale, or at the largest lower scale at which the mean fits 64 bits.
 * (Only a value with more than 28 significant digits at the common scale,
 * such as a 19-digit value among values with 10 more decimals, is rounded
 * to a lower common scale first.)
 * An aggregate is stored once its fine rows' intervals add up to at least
 * coarse_ns - fine_ns / 2.
 *
 * When coarse_ns <= fine_ns, or pre_ns is 0, no ring is kept; with
 * coarse_ns <= fine_ns every row is stored exactly as it arrived.
 *
 * Pure: no clock, no I/O.  Rows leave through the sink.
 *
 * Memory: a ring row takes PACE_ROW_FIXED_BYTES plus 9 bytes per metric.
 * A ring holds (pre_ns + coarse_ns) / fine_ns * 9 / 8 + 2 rows, but never
 * more than PACE_RING_DEVICE_BYTES, and only the first PACE_RING_DEVICES
 * devices get one (others have their partial aggregate stored as a row
 * when a window opens): at most 64 * 32 KiB = 2 MiB of rings.  With the
 * defaults (10 s before a window, 1 s coarse, 100 ms fine: 125 rows) and
 * the 23 metrics of "-g A", a ring is 125 * 231 B = 28 KiB per card.  The
 * partial aggregates take 48 bytes per metric per device.
 */
#ifndef SPYREMON_PACE_H
#define SPYREMON_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define PACE_MAX_DEVICES	256	/* device IDs 0..255 */
#define PACE_MAX_METRICS	128	/* distinct metric ids */
#define PACE_RING_DEVICES	64
#define PACE_RING_DEVICE_BYTES	(32 * 1024)
#define PACE_ROW_FIXED_BYTES	32

struct pace;

struct pace_params {
	uint64_t fine_ns;	/* the delay aiu-smi samples at */
	uint64_t coarse_ns;	/* stored rate while no window is open */
	uint64_t pre_ns;	/* fine rows kept for a window that opens; 0: none */
};

/*
 * Where rows go.  row receives each stored row (valid during the call
 * only), in increasing ts_ns per device, except right after a successful
 * delete_after, when rows follow from just after after_ns.  delete_after
 * removes the device's stored rows with ts_ns > after_ns and returns
 * 0, or -1 if it could not (then nothing was replaced).
 */
struct pace_sink {
	void (*row)(void *arg, const struct store_sample *s);
	int (*delete_after)(void *arg, int device, int64_t after_ns);
	void *arg;
};

struct pace_stats {
	size_t devices;		/* devices seen */
	size_t ring_rows;	/* fine rows held in rings */
	size_t ring_bytes;	/* memory of rings and partial aggregates */
	size_t ring_capacity;	/* rows per ring, at the current width */
	uint64_t replayed;	/* fine rows stored when windows opened */
	uint64_t replaced;	/* times stored rows were deleted for them */
	bool window_open;
};

/* A pace with params that sends rows to sink (copied); NULL on ENOMEM. */
struct pace *pace_new(const struct pace_params *params,
    const struct pace_sink *sink);

/* Free; partial aggregates are dropped (pace_flush first).  NULL is a no-op. */
void pace_free(struct pace *p);

/*
 * Change the rates.  Partial aggregates carry on under the new ones; rings
 * are resized, keeping their newest rows.
 */
void pace_set_params(struct pace *p, const struct pace_params *params);

/* The fine rows a ring holds under params when rows have nmetrics metrics. */
size_t pace_ring_rows(const struct pace_params *params, size_t nmetrics);

/* Aggregate metric_id by its maximum, not its mean (peakmem). */
void pace_set_max(struct pace *p, int metric_id);

/*
 * One fine row (copied).  A row of a device outside 0..PACE_MAX_DEVICES-1,
 * or one that finds no memory for its device, is passed to the sink as it
 * is.  Values of metrics beyond the first PACE_MAX_METRICS distinct ids
 * are left out of aggregates and of the ring.
 */
void pace_row(struct pace *p, const struct store_sample *s);

/*
 * Say whether any window is open, at now_ns (the caller's clock, the one
 * the rows are stamped with).  On opening, for each device: let c0 be its
 * newest stored row ending at or before now_ns - pre_ns whose fine rows
 * are all in the ring (or, failing that, the oldest such row; or the start
 * of the ring if every row before it was stored); the rows stored after c0
 * are deleted and the ring's rows after c0 stored one by one.  A device
 * whose partial aggregate reaches back beyond its ring has that aggregate
 * stored as a row instead.  On closing, each device's fine rows go on
 * being stored as they arrive up to and including its first row that
 * starts at or after now_ns, so that every row covering the window's end
 * is a fine row and is stored within two fine intervals (the store's
 * completion waits for that row); aggregation starts afresh after it.
 * Repeating the current state does nothing.
 */
void pace_set_window(struct pace *p, bool open, int64_t now_ns);

/*
 * The host clock was stepped by step_ns (+ forward): the end of the last
 * window moves with it, and after a step back, a window that opens does
 * not replay fine rows stamped before what was stored before the step
 * (the replay's delete would reach the rows stored then; the partial
 * aggregate is stored instead), so nothing stored is lost.
 */
void pace_clock_stepped(struct pace *p, int64_t step_ns);

/* Store every partial aggregate now (the child ended, or stopping). */
void pace_flush(struct pace *p);

void pace_get_stats(const struct pace *p, struct pace_stats *out);

#endif
