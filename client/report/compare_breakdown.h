/*
 * compare_breakdown: "spyremon compare" with --trace-base and --trace-new,
 * where each run's time went: the breakdown of export --breakdown
 * (analysis/bdrun.h, its defaults: innermost steps, a 30 µs launch gap)
 * of every trace of each run, each step's time in each class (compute,
 * data movement, communication, other, idle) and each idle cause, all
 * cards of its trace summed.  Per class, each run's mean per step, the
 * change and its 95 % interval by Welch (stats.h) with each run's
 * per-step values as the samples, and the class that grew most.
 *
 * Across cards, for each run of two cards or more (every card of every
 * trace of the run side by side, bdranks.h, steps matched by name): each
 * step's step-time spread (the straggler's step time less the fastest
 * card's, bdcards.h), its mean over the steps, and the card that was the
 * straggler in the most steps (on a tie the first in bdranks.h's order);
 * with both runs so, the change of the mean spread and its 95 % interval
 * by Welch with each run's per-step spreads as the samples.  A card is
 * named "cN" with one trace, else by its bdranks.h label ("r1c0").
 */
#ifndef SPYREMON_COMPARE_BREAKDOWN_H
#define SPYREMON_COMPARE_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bdranks.h"
#include "jsonw.h"
#include "runsteps.h"
#include "stats.h"

/* The five classes, then the four idle causes. */
#define CMP_BD_ROWS	9

struct cmp_bd_row {
	const char *name;		/* "compute", ..., "idle: host wait" */
	const char *key;		/* "compute", ..., "host_wait" */
	struct stats_sample s[2];	/* ms per step: base, new */
	struct stats_welch w;		/* new - base */
};

/* One run's cards side by side. */
struct cmp_bd_xside {
	bool	 has;			/* two cards or more */
	size_t	 ncards, nsteps;	/* the steps every trace has */
	struct stats_sample spread;	/* step-time spread per step, ms */
	char	 straggler[BD_LABEL_MAX];	/* most often; "" for no step */
	size_t	 straggler_steps;
};

struct cmp_bd_across {
	struct cmp_bd_xside side[2];	/* base, new */
	struct stats_welch w;		/* new - base, with both sides */
};

struct cmp_breakdown {
	size_t	 nsteps[2];		/* the samples: base, new */
	struct cmp_bd_row row[CMP_BD_ROWS];
	int	 grew;			/* the class (0..4) that grew most, or -1 */
	struct cmp_bd_across across;
};

/*
 * The breakdowns of both runs' traces.  CLIENT_EXIT_OK, or another
 * CLIENT_EXIT_* after saying why (a trace that cannot be read).
 */
int compare_breakdown_load(const struct runsteps *base,
    const struct runsteps *new, struct cmp_breakdown *out);

/* The table for a person. */
void compare_breakdown_write(FILE *fp, const struct cmp_breakdown *b);

/*
 * The across-cards figures for a person, or as a Markdown table; nothing
 * when neither run has two cards.
 */
void compare_breakdown_across_write(FILE *fp, const struct cmp_breakdown *b,
    bool markdown);

/* As a JSON object (across cards: "across_cards"). */
void compare_breakdown_json(yajl_gen g, const struct cmp_breakdown *b);

#endif
