/*
 * breakdown_ranks: "spyremon export --breakdown" over the ranks of one
 * run (several traces: the options given again, or a log directory):
 * after each trace's own breakdown, every card of every rank side by
 * side, step by step (../analysis/bdranks.h; spyremon(1), "Breakdown"),
 * each card named by its label.
 *
 * JSON: the last element of the traces' array, an object whose one
 * member is across_ranks: cards (label, host, rank, trace, card),
 * straggler_rule, steps and run as across_cards has them with labels for
 * card numbers, and partial_steps (step, in: the labels of the ranks that
 * have it).  CSV: a row per step that every rank has (section
 * across_ranks; host, rank and card the straggler's; start_us and
 * span_us empty, each rank having its own), a row per step that some
 * lack (across_ranks_partial, only its name).  Table: the cards with
 * their labels, the steps as the across-cards block has them, and the
 * steps that some ranks lack.  Those steps are also named on standard
 * error.
 */
#ifndef SPYREMON_BREAKDOWN_RANKS_H
#define SPYREMON_BREAKDOWN_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bdrun.h"
#include "steps.h"
#include "target.h"

/* A rank: its trace, its host as the rows name it, its breakdown. */
struct breakdown_rank {
	const struct trace_target *t;
	const char *host;
	struct bd_run run;
};

struct breakdown_ranks_request {
	const struct breakdown_rank *r;
	size_t	 n;
	bool	 host_labels;		/* several databases: labels name hosts */
	enum steps_format format;
	FILE	*out;			/* after the traces' own, tagged */
};

/*
 * Write the figures: none when the ranks have fewer than two cards, in
 * JSON an across_ranks of null.
 */
void breakdown_ranks_report(const struct breakdown_ranks_request *rq);

#endif
