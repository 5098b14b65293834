/*
 * runsteps: the active steps of a profiler trace placed on the samples'
 * clock (target.h), each with its time and the energy of all cards
 * over it, for "spyremon compare" and "spyremon report".
 *
 * The steps are the trace's steps (the step pattern, TRACE_STEP_PATTERN by
 * default) less those that enclose another step, as ProfilerStep#N
 * encloses iteration_N; torch.profiler writes only the active steps of
 * its schedule, so these are the active iterations.  A step's energy is
 * the exact integral of each card's power over it (summary.h), summed
 * over the cards; a step that no sample covers has none.
 */
#ifndef SPYREMON_RUNSTEPS_H
#define SPYREMON_RUNSTEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "target.h"

struct runstep {
	const char *name;	/* the trace's; valid while the target is */
	int64_t	 start_ns, dur_ns;
	bool	 has_energy;
	double	 energy_j;	/* all cards */
	double	 power_w;	/* energy / time covered, all cards */
};

struct runsteps {
	struct trace_target t;
	struct runstep *s;	/* by start */
	size_t	 n;
	int64_t	 first_ns, last_ns;	/* the steps' span */
};

/*
 * Load the trace at path (absolute time from the trace, or with
 * align_window its first event at that window's begin) and measure its
 * steps in db.  CLIENT_EXIT_OK, or another CLIENT_EXIT_* after saying why
 * (a trace without steps is an error).
 */
int runsteps_load(sqlite3 *db, const char *path, const char *align_window,
    struct runsteps *out);

void runsteps_free(struct runsteps *rs);

#endif
