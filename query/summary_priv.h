/*
 * summary_priv: what the files that compute a summary share and nobody
 * else calls (the contract of the summary itself is in summary.h): the
 * state of one computation, and each file's part of it.
 *
 * Bottom up: summary_query.c reads the catalog and builds the statements;
 * summary_card.c adds a row's values to its card and finishes the
 * figures; summary_idle.c learns the idle power; summary.c walks the
 * window's pieces, past a damaged page too.  Functions returning int give
 * 0, or -1 as summary.h says.
 */
#ifndef SPYREMON_SUMMARY_PRIV_H
#define SPYREMON_SUMMARY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "bestsrc.h"
#include "energy.h"
#include "summary.h"

/* No interval is longer than 60 s (spyremond.yaml(5)). */
#define SUMMARY_MAX_INTERVAL_NS	(60 * 1000000000LL)

/* The metrics read, in the order of the SELECT's columns after the fixed three. */
enum {
	K_PWR, K_GTEMP, K_BUSY, K_BW0,
	K_ACTMEM = K_BW0 + SUMMARY_NBW, K_PEAKMEM, K_N
};

/* A metric's column, or absent. */
struct summary_col {
	bool	 present;
	char	 col[64];
	int	 decimals;
};

/* A stretch of time with a value: an idle aiu-smi row, a file row's power. */
struct summary_span {
	int64_t	 lo, hi;
	double	 v;
};

/* Per card, while the samples are read. */
struct summary_acc {
	struct summary_card *c;
	struct energy_acc pwr, busy, bw[SUMMARY_NBW];
	double	*pvals;			/* power values, for p95 */
	size_t	 npvals, pcap;
	int64_t	 last_ts;		/* 0 before the first sample */
	int64_t	 last_ival;
	bool	 bw_busy_seen[SUMMARY_NBW];	/* a value while busy > 0 */
	bool	 bw_busy_nonzero[SUMMARY_NBW];
	bool	*unrel_seen;		/* per unreliable column */
	double	*idle;			/* idle power values */
	size_t	 nidle, icap;
	/* the rule's file rows: idle when an aiu-smi idle row covers them */
	struct summary_span *ispan, *fpwr;
	size_t	 nispan, iscap, nfpwr, fpcap;
	const struct summary_idle_card *known;	/* from the cache, or NULL */
};

/* One computation of a summary. */
struct summary_ctx {
	sqlite3	*db;
	struct summary *s;
	struct summary_col k[K_N];
	struct summary_col *unrel;	/* the catalog's unreliable metrics */
	char	**unrel_key;
	size_t	 nunrel;
	struct bestsrc b;		/* the rule (bestsrc.h) */
	const char **names;		/* b's columns: k[], then unrel[] */
	struct summary_acc *a;		/* parallel to s->cards */
	struct { int device; int64_t lo, hi; } *coarse;
	size_t	 ncoarse;
	int64_t	 lo, hi;		/* the piece being read (db_window_pieces) */
	int64_t	 clip_lo;		/* where its rows' intervals are cut: lo,
					   or for a piece a step began its
					   from_ns (every row of its epoch is
					   the window's, the first one's
					   interval reaching back over the
					   step included) */
	int64_t	 span_ns;		/* the pieces' time together */
};

/* ---- the catalog, the statements and a row's values (summary_query.c) ---- */

/* Out of memory: errno ENOMEM, -1. */
int summary_nomem(void);
/* The columns of the metrics read, and the unreliable ones, into x. */
int summary_load_catalog(struct summary_ctx *x);
/* The coarse runs of imported samples that overlap the window. */
int summary_load_coarse(struct summary_ctx *x);
/* Whether device's sample stamped ts is in a coarse run. */
bool summary_is_coarse(const struct summary_ctx *x, int device, int64_t ts);
/* The columns the rule chooses among: k[] in order, then unrel[]. */
int summary_rule_columns(struct summary_ctx *x);
/*
 * The window's samples: ts, device, interval, the K_N values and whether
 * each unreliable column holds one, as the rule selects them, then
 * whether the row is of its card's row source, then how many of its
 * values are not finite numbers (bestsrc_bad); bound ?1 (after), ?2
 * (overlapping before) and ?3 (stamped before), of one epoch
 * (db_bind_epoch).  Idle (the look-back span, ?1 < ts <= ?2): ts,
 * device, interval, pwr; with the rule also the row's source, and file
 * rows whatever aiu-smi's busy, by device and time, since an aiu-smi
 * row's busy tells whether the file rows its interval covers were idle.
 * NULL on failure.
 */
sqlite3_stmt *summary_select(struct summary_ctx *x, bool idle);
/*
 * The row's interval in ns into *ival_ns: false unless both its stamp
 * and its interval are integers and the interval is within [0,
 * SUMMARY_MAX_INTERVAL_NS] (a database written elsewhere may hold
 * anything).
 */
bool summary_row_interval(sqlite3_stmt *s, int64_t *ival_ns);
/* Column i of s as mant / 10^scale with c's decimals; false if NULL. */
bool summary_row_value(sqlite3_stmt *s, int i, const struct summary_col *c,
    int64_t *mant, int *scale);
/* mant / 10^scale as a double. */
double summary_as_double(int64_t mant, int scale);

/* ---- each card's figures (summary_card.c) ---- */

/* Append x to v[0..*n), growing it; false out of memory. */
bool summary_push(double **v, size_t *n, size_t *cap, double x);
/* Note an uncovered stretch (lo, hi) of c if longer than two intervals. */
void summary_gap(struct summary_card *c, int64_t lo, int64_t hi,
    int64_t ival);
/* One sample row of summary_select(x, false), added to its card. */
int summary_add_row(struct summary_ctx *x, sqlite3_stmt *s);
/* The figures that come from the accumulators, once every row is in. */
void summary_finish(struct summary_ctx *x);
/* Free what x holds (not x->s). */
void summary_ctx_free(struct summary_ctx *x);

/* ---- the idle power (summary_idle.c) ---- */

/*
 * The idle power of each card: the median of its power values with busy
 * 0 over the look-back; under the rule, a card whose power comes from
 * its file rows takes those of them that an aiu-smi row with busy 0
 * covers.
 */
int summary_learn_idle(struct summary_ctx *x);
/* Point each card at its cached idle figures; false if the cache does not fit. */
bool summary_idle_from_cache(struct summary_ctx *x,
    const struct summary_idle_cache *cache);

#endif
