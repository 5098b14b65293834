/*
 * bdrun: the breakdown of one trace of a run with its evidence, as every
 * command shows it (export --breakdown, report's "Why it was slow",
 * compare with traces): the trace's steps in --steps' order
 * (steps_order), bdtrace.h's classes per card over each step and over
 * each card's span, and, given a database, each card's counters over the
 * same windows as --steps sums them (steps_means) with its PCIe link;
 * with several cards, bdcards.h's figures of them side by side.
 */
#ifndef SPYREMON_BDRUN_H
#define SPYREMON_BDRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "bdcards.h"
#include "bdtrace.h"
#include "steps.h"

/* --launch-gap's default: HTA's 30 trace units, 30 µs on Kineto traces. */
#define BREAKDOWN_LAUNCH_GAP_NS	30000

/*
 * A card's PCIe link, as the daemon's inventory has it (the cards table,
 * the card's bus ID by device_map at the trace's start, else its end).
 */
struct bd_link {
	int64_t	 card;
	char	 speed[32];		/* sysfs' text; "" when unknown */
	int	 width;			/* lanes; 0 when unknown */
	bool	 has_gbps;
	double	 gbps;			/* per direction (pcielink.h) */
};

struct bd_run {
	struct bd_step *steps;		/* the windows, in --steps' order */
	size_t	 nsteps;
	struct bd_result res;
	/*
	 * The counters (steps_means' rows): window w < nsteps is step w,
	 * nsteps + i card i's span; none without a database.
	 */
	struct steps_mean *m;
	size_t	 nm;
	/* each card's link, in res.cards' order; none without a database */
	struct bd_link *links;
	size_t	 nlinks;
};

/*
 * The breakdown of bt, the trace of sr->t (innermost: steps as --steps
 * takes them; nstep_names: bd_step_names of the run's traces; threshold:
 * the launch gap, ns); with db, the counters of sr's cards.  Returns
 * CLIENT_EXIT_OK, or another CLIENT_EXIT_* after printing why (the samples
 * could not be read).  Free out with bd_run_free, also on failure.
 */
int bd_run_load(sqlite3 *db, const struct steps_request *sr,
    struct bd_trace *bt, size_t nstep_names, int64_t threshold,
    bool innermost, struct bd_run *out);

/* The counters of window w (bd_run's numbering) and card, or NULL. */
const struct steps_mean *bd_run_counters(const struct bd_run *r, size_t w,
    int64_t card);

/* The PCIe link of card, or NULL (no database). */
const struct bd_link *bd_run_link(const struct bd_run *r, int64_t card);

/*
 * The evidence of card's counters m (NULL: none) over a span, with its
 * link, as bd_contradicts weighs it.
 */
void bd_run_evidence(const struct bd_run *r, const struct steps_mean *m,
    int64_t card, struct bd_evidence *ev);

/*
 * The classes of several windows added up (card-ns): into *sum, zeroed
 * first when first; name and bounds from the first.
 */
void bd_window_add(struct bd_window *sum, const struct bd_window *w,
    bool first);

/* The share of idle time that has a cause (host wait, launch gap, sync), %. */
double bd_classified_pct(const int64_t idle[BD_NIDLE]);

/* The cards of a run side by side (bdcards.h), step by step and summed. */
struct bd_across {
	struct bd_xstep *steps;		/* one per step of the run */
	size_t	 nsteps;
	struct bd_xrun run;
};

/*
 * Card i of r (res.cards' index) in step s as bdcards.h takes it, its
 * key in the figures key, with its counters' mean busy % and energy.
 */
void bd_run_xcard(const struct bd_run *r, size_t s, size_t i, int64_t key,
    struct bd_xcard *out);

/*
 * The across-cards figures of r into *out, each card's counters its
 * steps_means row: false, with nothing to free, when r has fewer than two
 * cards; else free *out with bd_across_free.
 */
bool bd_run_across(const struct bd_run *r, struct bd_across *out);
void bd_across_free(struct bd_across *a);

void bd_run_free(struct bd_run *r);

#endif
