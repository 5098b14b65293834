/*
 * bdtrace: the breakdown of one profiler trace (breakdown.h's classes)
 * per card, per step and per stream, and Holistic Trace Analysis's
 * temporal and idle-time breakdowns of it, from the events of the
 * streaming reader (../trace/) as devevents.h takes them.
 *
 * Two sets of events are kept.  The cards' classes take devevents.h's
 * device events (a Spyre begin and end pair is one event) at their exact
 * ns, on the card of devevent_is_device, each category from
 * devevent_category (communication, compute, memory, other); an event's
 * launch is the host event with its args.correlation.  The per-stream
 * idle classes and the figures of HTA take HTA's own events, by its rules
 * to the letter (spyremon(1), "Breakdown"; tests/tools/hta_reference.py):
 * its rounding of float times to whole µs, its dropping of the last step,
 * its links by correlation.  A trace whose device events name no stream
 * (the Spyre runtime's) has its streams from the first set, one per
 * track (tid).
 */
#ifndef SPYREMON_BDTRACE_H
#define SPYREMON_BDTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "breakdown.h"

/* A window of the trace: a step, on the trace's own time base (ns). */
struct bd_step {
	const char *name;
	int64_t	 lo, hi;
};

/* A window's classes. */
struct bd_window {
	const char *name;		/* the step's, or "total" */
	int64_t	 lo, hi;		/* own ns */
	struct bd_temporal tm;
	int64_t	 idle[BD_NIDLE];	/* add up to tm.t[OPS_IDLE] */
	/* bd_trace_keep_pieces: the window's classes in time (bd_pieces) */
	struct bd_piece *pieces;
	size_t	 npieces;
};

struct bd_card {
	int64_t	 card;
	uint64_t events;
	struct bd_window total;		/* its first event's start to its last end */
	struct bd_window *steps;	/* one per step given, in order */
};

struct bd_stream {
	bool	 has_card;
	int64_t	 card;
	int64_t	 stream;		/* args.stream, or the track's number */
	uint64_t events;
	int64_t	 idle[BD_NIDLE];	/* ns; a negative gap is a launch gap */
};

struct bd_result {
	struct bd_card *cards;		/* by card number */
	size_t	 ncards;
	size_t	 nsteps;		/* each card's steps */
	struct bd_stream *streams;	/* by card, then stream */
	size_t	 nstreams;
	bool	 streams_hta;		/* the streams are HTA's (args.stream) */
	uint64_t sync_calls;		/* host synchronisation calls */
	uint64_t unpaired;		/* begins or ends of a pair left alone */
	uint64_t no_card;		/* device events without a card */
	/* HTA's figures of the trace (one rank), in ns */
	bool	 has_hta;		/* some event names a stream */
	struct bd_hta_temporal hta;
	bool	 hta_rounded;		/* float times taken to whole µs */
	bool	 hta_last_step_dropped;
};

struct bd_trace;
struct trace_event;

/*
 * Read the trace at path (has_base: its header has a base, so ts 0 was
 * clamped and is left out of the cards' events; step_pattern as
 * trace_options').  A trace without device events is an error unless
 * none_ok (its breakdown then has no card).  Returns CLIENT_EXIT_OK with
 * *out to free, or another CLIENT_EXIT_* after printing why, naming the
 * file.
 */
int bd_trace_read(const char *path, bool has_base, const char *step_pattern,
    bool none_ok, struct bd_trace **out);

/*
 * The same in the caller's own pass over the trace (one read for its
 * span and steps and for the breakdown): bd_trace_new, then
 * bd_trace_event as trace_options' on_event with the trace as its arg,
 * then bd_trace_finish once has_base is known (on a trace whose header
 * has a base, the events at ts 0 are left out; a begin and end pair one
 * of whose halves is at 0 is left out whole).  bd_trace_finish returns
 * CLIENT_EXIT_OK, or CLIENT_EXIT_FAILED after saying the trace at path
 * has no device events (unless none_ok); the trace is freed by the caller
 * either way.
 */
struct bd_trace *bd_trace_new(void);
void bd_trace_event(const struct trace_event *ev, void *arg);
int bd_trace_finish(struct bd_trace *t, const char *path, bool has_base,
    bool none_ok);

/*
 * How many distinct step names (ProfilerStep# and a digit, at the start
 * of a name or cat) the traces t[0..n) of one run hold together: HTA
 * drops the last step of each when there are two or more.
 */
size_t bd_step_names(struct bd_trace *const *t, size_t n);

/*
 * The breakdown of t into *res (release it with bd_result_free):
 * threshold is the launch gap (ns), steps[0..nsteps) the windows of each
 * card's rows, nstep_names bd_step_names' count for the run.
 */
void bd_trace_compute(struct bd_trace *t, int64_t threshold,
    const struct bd_step *steps, size_t nsteps, size_t nstep_names,
    struct bd_result *res);

/*
 * Have bd_trace_compute give each card's windows (its span and each
 * step) their pieces too, what a timeline draws (bd_pieces).
 */
void bd_trace_keep_pieces(struct bd_trace *t);

void bd_result_free(struct bd_result *res);
void bd_trace_free(struct bd_trace *t);

#endif
