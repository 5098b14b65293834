/*
 * breakdown: where a card's time went, class by class, and why it was
 * idle; pure arithmetic on device events and host intervals, unit-tested
 * on events of its own (tests/unit/test_breakdown.c).  spyremon(1),
 * "Breakdown", gives the rules to users; bdtrace.h finds the events in a
 * trace.
 *
 * Temporal classes: every ns of a window falls in exactly one class.
 * Where device events of several streams overlap, the class is the first
 * of communication, compute, memory (data movement), other that is
 * running; a ns with no device event is idle.  The time when
 * communication and compute run together is reported on its own too
 * (it is in communication).
 *
 * Idle classes: a card's idle time between two device events (a gap) is
 * host wait when the next event's launch on the host starts after the
 * gap began (the device waited for the host to ask); else launch gap when
 * the gap is shorter than the threshold; else, the part of it during
 * which the host was in a synchronisation call is sync, and the rest is
 * unexplained.  Per stream the same rule takes each event and the one
 * before it on its stream, with Holistic Trace Analysis's signed gaps
 * (an overlap is a negative gap), so that host wait, launch gap and
 * sync + unexplained are HTA's host wait, kernel wait and other.
 */
#ifndef SPYREMON_BREAKDOWN_H
#define SPYREMON_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devevents.h"

/* The idle classes, in the tables' order. */
enum bd_idle {
	BD_HOST_WAIT,		/* the next event's launch began after the gap did */
	BD_LAUNCH_GAP,		/* shorter than the threshold */
	BD_SYNC,		/* the host was in a synchronisation call */
	BD_UNEXPLAINED,
	BD_NIDLE,
};

/* An idle class's name: "host wait", "launch gap", "sync", "unexplained". */
const char *bd_idle_name(enum bd_idle c);

/*
 * A temporal class's name as the breakdown says it: "compute", "data
 * movement", "communication", "other", "idle".
 */
const char *bd_class_name(enum ops_category c);

/* A device event, in ns; launch is its host launch's start, if known. */
struct bd_event {
	int64_t	 start, end;
	enum ops_category cat;		/* OPS_COMPUTE ... OPS_OTHER */
	bool	 has_launch;
	int64_t	 launch;
};

/* A host interval (a synchronisation call), in ns. */
struct bd_iv {
	int64_t	 start, end;
};

/* A window's temporal classes (ns); they add up to span exactly. */
struct bd_temporal {
	int64_t	 span;
	int64_t	 t[OPS_NCAT];		/* OPS_IDLE is the idle time */
	int64_t	 comm_compute;		/* communication and compute at once */
	/*
	 * The end of the last device work inside the window (clipped to
	 * it), or its start when there is none: of one window, not a sum.
	 */
	int64_t	 work_end;
};

/* A classified piece of a card's idle time. */
struct bd_seg {
	int64_t	 start, end;
	enum bd_idle cls;
};

/*
 * The classes of [lo, hi) from the events ev[0..n) (any order, any
 * overlap; those outside the window count for their part inside).
 */
void bd_temporal(const struct bd_event *ev, size_t n, int64_t lo, int64_t hi,
    struct bd_temporal *out);

/*
 * A piece of a window in one class: its temporal class (bd_temporal's),
 * and for idle time its idle class (bd_idle_window's).
 */
struct bd_piece {
	int64_t	 start, end;
	enum ops_category cat;		/* OPS_COMPUTE ... OPS_IDLE */
	enum bd_idle idle;		/* cat OPS_IDLE: why */
};

/*
 * The pieces of [lo, hi), in time order, each a maximal run of one class
 * (a temporal class, or idle of one idle class): the events ev[0..n) as
 * bd_temporal takes them, the idle time cut by the idle pieces seg[0..n)
 * and the card's first and last (bd_idle_window's arguments).  They tile
 * [lo, hi) with no gap and no overlap, each temporal class's add up to
 * bd_temporal's, and the idle classes' to bd_idle_window's (idle time
 * inside [first, last) that no piece of seg covers, which events of
 * negative length alone can leave, is unexplained).  *out (to free) gets
 * them; returns their count.  Dies when out of memory.
 */
size_t bd_pieces(const struct bd_event *ev, size_t n, const struct bd_seg *seg,
    size_t nseg, int64_t first, int64_t last, int64_t lo, int64_t hi,
    struct bd_piece **out);

/*
 * Sort iv[0..n) by start and merge overlapping or touching intervals in
 * place; returns how many are left.
 */
size_t bd_merge(struct bd_iv *iv, size_t n);

/* The time of [lo, hi) covered by the merged intervals iv[0..n). */
int64_t bd_covered(const struct bd_iv *iv, size_t n, int64_t lo, int64_t hi);

/*
 * Whether a host event's name is a synchronisation call: it holds
 * "synchronize" (any case: cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, hipDeviceSynchronize, aten::synchronize ...) or
 * is aten::_local_scalar_dense (what .item() waits in).
 */
bool bd_is_sync_call(const char *name);

/*
 * The classified idle pieces of a card whose device events are ev[0..n)
 * (sorted here by start), between its first start and its last end:
 * each gap of the union of its events is classified by the event that
 * ends it (host wait, launch gap) or cut by the merged sync intervals
 * sync[0..nsync) into sync and unexplained.  threshold is the launch gap
 * (ns).  *out (to free) gets the pieces in time order; returns their
 * count.  Dies when out of memory.
 */
size_t bd_idle_segments(struct bd_event *ev, size_t n, int64_t threshold,
    const struct bd_iv *sync, size_t nsync, struct bd_seg **out);

/*
 * The idle classes of [lo, hi) (out, ns, added to): the pieces seg[0..n)
 * clipped to it, and the window's time before first or after last (the
 * card's first event's start and last event's end) as unexplained.
 */
void bd_idle_window(const struct bd_seg *seg, size_t n, int64_t first,
    int64_t last, int64_t lo, int64_t hi, int64_t out[BD_NIDLE]);

/*
 * The idle classes of one stream whose events are ev[0..n), sorted by
 * start (ties in the order HTA keeps): each event after the first and the
 * one before it give a signed gap, classified as above; out (ns) is added
 * to.  A negative gap is a launch gap, as HTA's kernel wait takes it.
 */
void bd_stream_idle(const struct bd_event *ev, size_t n, int64_t threshold,
    const struct bd_iv *sync, size_t nsync, int64_t out[BD_NIDLE]);

/* What bound a span, by bd_verdict's rules. */
enum bd_verdict {
	BD_COMPUTE_BOUND,
	BD_DATA_BOUND,		/* data movement */
	BD_COMM_BOUND,
	BD_HOST_BOUND,
	BD_IDLE,
	BD_MIXED,
	BD_NVERDICT,
};

/* The thresholds of bd_verdict, in % (spyremon(1), "Breakdown"). */
#define BD_VERDICT_IDLE_PCT	50	/* idle at least this share of the span */
#define BD_VERDICT_HOST_PCT	50	/* host wait and launch gaps, of the idle time */
#define BD_VERDICT_BOUND_PCT	50	/* one class at least this share of the span */

/* A verdict's name: "compute-bound", "data-movement-bound", ... */
const char *bd_verdict_name(enum bd_verdict v);

/*
 * The verdict of a span of classes tm and idle causes idle, by the first
 * rule that holds: idle at least BD_VERDICT_IDLE_PCT % of the span is
 * host-bound when host wait and launch gaps are at least
 * BD_VERDICT_HOST_PCT % of the idle time, else idle; compute, data
 * movement or communication, the largest (compute first on a tie), at
 * least BD_VERDICT_BOUND_PCT % of the span is bound by it; else mixed.
 * The rule that decided, with its numbers, as one line in why.
 */
enum bd_verdict bd_verdict(const struct bd_temporal *tm,
    const int64_t idle[BD_NIDLE], char *why, size_t len);

/*
 * A card's counters over a span, as bd_contradicts weighs them; each
 * figure only where its has_ is true.  Bandwidths in GiB/s, as aiu-smi
 * gives them; the link's capacity per direction in GB/s (pcielink.h).
 */
struct bd_evidence {
	bool	 has_busy;
	double	 busy_pct;
	bool	 has_mem;		/* rdmem and wrmem both */
	double	 mem_gibps;		/* rdmem + wrmem */
	bool	 has_pcie;		/* rxpci and txpci both */
	double	 rx_gibps, tx_gibps;
	bool	 has_link;
	double	 link_gbps;
};

/*
 * Where a card's counters contradict the trace (spyremon(1),
 * "Breakdown"), by the first rule that holds:
 * - mean busy under BD_BUSY_LOW_PCT % while the trace has the card
 *   computing at least BD_COMPUTE_HIGH_PCT % of the span (the events may
 *   not be this card's, or the samples not of this run);
 * - mean busy at least BD_BUSY_HIGH_PCT % while the trace has the card
 *   idle at least BD_IDLE_HIGH_PCT % of the span (work the trace does
 *   not show);
 * - the trace has data movement at least BD_DATA_HIGH_PCT % of the span
 *   while memory moves under BD_QUIET_GIBPS (rdmem + wrmem) and PCIe
 *   each way under BD_PCIE_LOW_PCT % of the link, or, the link unknown,
 *   under BD_QUIET_GIBPS (data the counters do not see move).
 * A rule whose counters are unknown does not apply.
 */
#define BD_BUSY_LOW_PCT		10
#define BD_COMPUTE_HIGH_PCT	50
#define BD_BUSY_HIGH_PCT	50
#define BD_IDLE_HIGH_PCT	90
#define BD_DATA_HIGH_PCT	50
#define BD_PCIE_LOW_PCT		1
#define BD_QUIET_GIBPS		0.1

/* The card's power budget, W: a Spyre card's 75 W. */
#define BD_CARD_POWER_W		75

/*
 * Whether the counters ev of a span contradict its classes tm by the
 * rules above; if so, the rule with its numbers as one line in why.
 */
bool bd_contradicts(const struct bd_temporal *tm, const struct bd_evidence *ev,
    char *why, size_t len);

/*
 * Holistic Trace Analysis's rule for compute: a name is not compute when
 * it starts with nccl, hip, hccl, dma, runFunction, Stream Wait Event,
 * job_exe, packet, pe_exe, cpum_exe_subgraph or
 * collective_subgraph_execution, or holds ncclKernel, Memcpy, Memset,
 * dma or Sync, or starts with cuda and holds LaunchKernel after it; case
 * matters.
 */
bool bd_hta_is_compute(const char *name);

/* An event of HTA's temporal breakdown: [start, end) in ns, end may be < start. */
struct bd_hta_event {
	int64_t	 start, end;
	bool	 compute;
};

/* HTA's temporal breakdown (ns): idle, compute and non-compute of the span. */
struct bd_hta_temporal {
	int64_t	 span, idle, compute, non_compute;
};

/*
 * HTA's get_temporal_breakdown over ev[0..n) (sorted here by start): the
 * span from the first start to the last end, idle the span less the
 * union of all, compute the union of the compute events, non-compute the
 * rest; a union's interval made of one event of negative length counts
 * negative, as in HTA.
 */
void bd_hta_temporal(struct bd_hta_event *ev, size_t n,
    struct bd_hta_temporal *out);

#endif
