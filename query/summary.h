/*
 * summary: what a profiling window's samples say, per card, in a few
 * figures that are kept when retention deletes the samples themselves
 * (the window_summary tables of spyremon-schema(5)).
 *
 * summary_compute reads the samples through any connection, the
 * daemon's or a reader's; the store writes its result (store/summary_write.c, from store_summary.c:
 * a window's completion in the daemon, storedb_window_summarize and
 * storedb_windows_summarize_due otherwise), and summary_load reads it back.
 *
 * The figures, over the window [begin, end], of the samples whose interval
 * (ts - interval, ts] overlaps it:
 *   duration, samples, covered time (each interval clipped to the window;
 *   coverage = covered / duration), and gaps: stretches longer than two
 *   intervals that no sample covers, at the window's edges too;
 *   energy: the exact integral of power, each value held over its
 *   interval clipped to the window (energy.h), as "export --steps" does;
 *   power mean (time-weighted), minimum, maximum and p95 (nearest rank over
 *   the samples' values) and the samples' standard deviation, gtemp maximum, busy mean (time-weighted);
 *   per bandwidth metric (GiB/s) the time-weighted mean, the maximum and
 *   the bytes moved (the integral times 2^30);
 *   the peaks of actmem and peakmem;
 *   idle power: the median power of the card's samples with busy 0 in
 *   [begin - idle look-back, end], and the energy net of it
 *   (energy - idle * covered time of power);
 *   data quality: bandwidth columns that stay 0 while busy > 0, unreliable
 *   columns (the catalog's reliable 0) that hold values, coarse (imported
 *   from an aiu-smi log) samples.
 * A figure with no value in the window is absent (its has_ flag false).
 *
 * Functions returning int give 0, or -1 with the error left in the
 * connection (sqlite3_errmsg) or, out of memory, SQLITE_NOMEM set.
 */
#ifndef SPYREMON_SUMMARY_H
#define SPYREMON_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "energy.h"

/* The bandwidth metrics summarized, in this order. */
#define SUMMARY_NBW	6
extern const char *const summary_bw_keys[SUMMARY_NBW];

/* Default of summary.idle_lookback: where a card's idle power is learned. */
#define SUMMARY_IDLE_LOOKBACK_NS	(3600 * 1000000000LL)

struct summary_bw {
	bool	 has;
	double	 mean, max;	/* GiB/s */
	double	 bytes;		/* moved over the window */
};

struct summary_card {
	int	 device;
	int64_t	 samples;
	int64_t	 covered_ns;
	int64_t	 gaps, gap_ns;	/* uncovered stretches > 2 intervals */
	int64_t	 max_interval_ms;
	int64_t	 busy_samples;	/* with busy > 0 */
	int64_t	 coarse_samples;
	bool	 has_power;
	char	 energy_j[ENERGY_BUFLEN];	/* exact decimal */
	double	 power_mean, power_min, power_max, power_p95;
	int64_t	 power_n;	/* samples with a power value */
	double	 power_sd;	/* their standard deviation (n - 1), for tests */
	bool	 has_gtemp;
	double	 gtemp_max;
	bool	 has_busy;
	double	 busy_mean;
	struct summary_bw bw[SUMMARY_NBW];
	bool	 has_actmem, has_peakmem;
	double	 actmem_peak, peakmem_peak;	/* MiB */
	bool	 has_idle;
	double	 idle_w;
	int64_t	 idle_samples;	/* the samples the median was taken of */
	double	 net_energy_j;
	char	 zero_while_busy[64];	/* "rdmem,wrmem", "" if none */
	char	 unreliable[64];	/* "rsvmem,pt_act", "" if none */
	int64_t	 bad_values;	/* values not finite numbers, left out; rows
				   whose stamp or interval is not an integer
				   in range count once, whole (not stored: 0
				   in a summary read from the database) */
};

struct summary {
	int64_t	 window_id;
	/* its span; for a window a step of the host clock crossed, end_ns
	 * is begin_ns plus the time of its pieces (db_window_pieces) */
	int64_t	 begin_ns, end_ns;
	int64_t	 computed_ns;		/* when it was computed */
	int64_t	 idle_lookback_ns;
	bool	 stored;		/* read from the database */
	/*
	 * A read of the samples met a damaged page (pragma.h,
	 * sql_is_damage): the figures are of the rows that could be read,
	 * before the damage and after it (found by reading back from the
	 * window's end), and damage holds SQLite's message.  unread_rows:
	 * about how many rows of the window could not be read, from the
	 * span between and each card's interval; -1 if it cannot be told
	 * (no row of the window could be read).  Not stored: the store
	 * keeps the sentence in the window's end_note.
	 */
	bool	 damaged;
	int64_t	 unread_rows;
	char	 damage[96];
	struct summary_card *cards;	/* by device */
	size_t	 ncards;
};

/*
 * Compute window id's summary over [begin_ns, end_ns] from db's samples
 * into *out (zeroed first; free with summary_free), piece by piece
 * across the epochs of the host clock the window spans
 * (db_window_pieces_of).  now_ns is recorded as computed_ns.
 */
int summary_compute(sqlite3 *db, int64_t id, int64_t begin_ns,
    int64_t end_ns, int64_t idle_lookback_ns, int64_t now_ns,
    struct summary *out);

/*
 * A card's idle power is learned from its samples with busy 0 stamped in
 * (begin - look-back, end], each bound rounded down to a whole
 * SUMMARY_IDLE_STEP_NS (summary_idle_span): every window that begins and
 * ends within the same seconds as another learns it from the very same
 * samples.  Learning it reads every sample of the look-back (an hour of
 * them by default), while the rest of a summary reads only the window's;
 * so the writer keeps the figures it learned for one span and gives them,
 * unchanged and exact, to the next window of that span with no card it
 * lacks: a storm of short windows learns it about once a second, not once
 * per window.  Zero-initialise; one connection's, in one thread.
 */
#define SUMMARY_IDLE_STEP_NS	1000000000LL

/* The idle span of s, (*lo, *hi]. */
void summary_idle_span(const struct summary *s, int64_t *lo, int64_t *hi);

struct summary_idle_cache {
	bool	 valid;
	int64_t	 lo, hi;		/* the span it was learned over */
	uint64_t hits, misses;		/* windows it served, and did not */
	struct summary_idle_card {
		int	 device;
		bool	 has;
		double	 idle_w;
		int64_t	 samples;
	} *cards;
	size_t	 ncards;
};

/*
 * The sentence a reader shows, and the store keeps as end_note, for a
 * window s whose samples a damaged file (named file) cut: "about N rows
 * of this window could not be read (damaged store: FILE): MESSAGE".
 * SUMMARY_DAMAGE_MARK is in every such sentence and in no other note.
 */
#define SUMMARY_DAMAGE_MARK	"of this window could not be read (damaged store: "
void summary_damage_note(const struct summary *s, const char *file,
    char *buf, size_t len);
/*
 * A read of the samples stamped after after_ns stopped at a damaged page:
 * the earliest stamp below below_ns that can be read back from below_ns,
 * into *first (below_ns if the read back meets no damage, 0 if none can
 * be read).  Go on reading from after *first, not at it: an index b-tree
 * keeps rows in its interior pages too, and the earliest one read back
 * may be the interior's key just past the damaged leaf, whose seek would
 * lead into that leaf again.  -1 for any other failure.
 */
int summary_after_damage(sqlite3 *db, int64_t after_ns, int64_t below_ns,
    int64_t *first);

/* The damage sentence among a window's end_note (NULL: none) into buf
 * (len 0: not wanted); false if it holds none. */
bool summary_damage_find(const char *end_note, char *buf, size_t len);

/* summary_compute, taking the idle figures from cache when it fits (and
 * keeping newly learned ones in it); a NULL cache learns them every time. */
int summary_compute_cached(sqlite3 *db, int64_t id, int64_t begin_ns,
    int64_t end_ns, int64_t idle_lookback_ns, int64_t now_ns,
    struct summary_idle_cache *cache, struct summary *out);

/* ---- the cache itself (summary_idle.c) ---- */

/* Forget what cache holds (it is then empty, and may be used again). */
void summary_idle_cache_clear(struct summary_idle_cache *cache);
/* True if cache may serve s (its span and cards, as above). */
bool summary_idle_cache_fits(const struct summary_idle_cache *cache,
    const struct summary *s);
/* The cached figures of device, or NULL. */
const struct summary_idle_card *summary_idle_cache_card(
    const struct summary_idle_cache *cache, int device);
/* Keep the idle figures s learned in cache (left empty if short of memory). */
void summary_idle_cache_keep(const struct summary *s,
    struct summary_idle_cache *cache);

/*
 * The columns of window_summary after window_id, in the order the store
 * writes them and summary_load reads them.
 */
#define SUMMARY_CARD_COLUMNS \
	"device, computed_ns, begin_ns, end_ns, idle_lookback_ns, samples, " \
	"covered_ns, gaps, gap_ns, max_interval_ms, busy_samples, " \
	"coarse_samples, energy_j, power_mean, power_min, power_max, " \
	"power_p95, power_n, power_sd, gtemp_max, busy_mean, actmem_peak, peakmem_peak, " \
	"idle_w, idle_samples, net_energy_j, zero_while_busy, unreliable"

/*
 * The stored summary of window id into *out (*found false, *out empty,
 * if it has none, also in a database of a schema before 4).
 */
int summary_load(sqlite3 *db, int64_t id, struct summary *out, bool *found);

/*
 * The stored energy of window id, all cards, into *j; false if it has no
 * summary (open, not yet summarized, or a database before schema 4).
 */
bool summary_stored_energy(sqlite3 *db, int64_t id, double *j);

/* The energy of card c as a double (0 if it has none). */
double summary_energy(const struct summary_card *c);

/* Free what s holds and leave it empty; NULL is a no-op. */
void summary_free(struct summary *s);

#endif
