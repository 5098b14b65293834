/*
 * runsteps: the active steps of profiler traces placed on the samples'
 * clock (target.h), each with its time and the energy of all cards over
 * it, for "spyremon compare" and "spyremon report".
 *
 * Several traces are the ranks of one run (tracelist.h): each keeps its
 * own steps, and together they span from the first step of any to the
 * end of the last.  A trace's steps are its steps (the step pattern,
 * TRACE_STEP_PATTERN by default) less those that enclose another step of
 * the same trace, as ProfilerStep#N encloses iteration_N; torch.profiler
 * writes only the active steps of its schedule, so these are the active
 * iterations.  A step's energy is the exact integral of each card's power
 * over it, as export --steps sums it (steps_means, in the trace's time
 * across steps of the host clock), summed over the cards; a step that no
 * sample covers has none.
 */
#ifndef SPYREMON_RUNSTEPS_H
#define SPYREMON_RUNSTEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "target.h"
#include "tracelist.h"

struct runstep {
	const char *name;	/* the trace's; valid while the target is */
	size_t	 trace;		/* which of the runsteps' traces */
	int64_t	 start_ns, dur_ns;
	bool	 has_energy;
	double	 energy_j;	/* all cards */
	double	 power_w;	/* energy / time covered, all cards */
};

struct runsteps {
	struct trace_target *t;	/* the traces, in the order given */
	size_t	 nt;
	struct runstep *s;	/* by trace, then by start */
	size_t	 n;
	int64_t	 first_ns, last_ns;	/* the steps' span, all traces */
};

/*
 * Load the traces of l (absolute time from each trace, or with
 * align_window each one's first event at that window's begin) and
 * measure their steps in db.  CLIENT_EXIT_OK, or another CLIENT_EXIT_*
 * after saying why (a trace without steps is an error).
 */
int runsteps_load(sqlite3 *db, const struct trace_list *l,
    const char *align_window, struct runsteps *out);

/* The steps of trace i: *first is the index of the first, the count returned. */
size_t runsteps_of(const struct runsteps *rs, size_t i, size_t *first);

/*
 * The name of trace i for people: "rank R" from its distributedInfo,
 * else "trace I" (counting from 0, in the order given).
 */
void runsteps_label(const struct runsteps *rs, size_t i, char *buf,
    size_t len);

void runsteps_free(struct runsteps *rs);

#endif
