/*
 * breakdown_out: the tables of "spyremon export --trace FILE --breakdown":
 * per card, over its whole span and over each step, the time in each
 * class (compute, data movement, communication, other, idle) and the
 * overlap of communication with compute; the idle time by cause (host
 * wait, launch gap, sync, unexplained); per stream its idle time by
 * cause; and Holistic Trace Analysis's temporal breakdown of the rank.
 * Beside each span, the card's counters over it as --steps reads them
 * (mean busy % and power, and the time its samples cover).  With several
 * cards, the cards side by side (breakdown_cards.h); with several traces,
 * after them all, every rank's cards (breakdown_ranks.h).
 * The figures are ../analysis/bdtrace.h's; spyremon(1), "Breakdown",
 * gives the rules.
 */
#ifndef SPYREMON_BREAKDOWN_OUT_H
#define SPYREMON_BREAKDOWN_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "bdrun.h"
#include "bdtrace.h"
#include "steps.h"
#include "target.h"

struct breakdown_request {
	sqlite3	*db;			/* the samples, for the counters */
	const struct steps_request *sr;	/* their cards and metrics */
	const struct trace_target *t;
	struct bd_trace *bt;		/* t's events (bd_trace_read) */
	size_t	 nstep_names;		/* bd_step_names of the run's traces */
	int64_t	 launch_gap_ns;
	bool	 innermost;		/* steps as --steps takes them */
	enum steps_format format;
	FILE	*out;
	/* one of several tables, as steps_request's tagged, host, first */
	bool	 tagged;
	const char *host;
	bool	 first;
	/* not NULL: the breakdown is left here for the caller (bd_run_free) */
	struct bd_run *keep;
};

/*
 * The events of n traces in the pass that reads each for its span and
 * steps: breakdown_new gives n collectors, each one the arg of
 * bd_trace_event as that pass's on_event (trace_clock_options);
 * breakdown_finish completes them once the traces' headers are known.
 * It returns CLIENT_EXIT_OK or another CLIENT_EXIT_* after printing why.
 * Free them with breakdown_free, also on failure.
 */
struct bd_trace **breakdown_new(size_t n);
int breakdown_finish(const struct trace_target *ts, size_t n,
    struct bd_trace **bt);
void breakdown_free(struct bd_trace **bt, size_t n);

/*
 * Write the tables to rq->out.  Returns CLIENT_EXIT_OK, or another
 * CLIENT_EXIT_* after printing why (the samples could not be read).
 */
int breakdown_report(const struct breakdown_request *rq);

#endif
