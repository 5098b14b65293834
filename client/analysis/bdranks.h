/*
 * bdranks: the cards of every rank of one run side by side, step by step
 * (bdcards.h's figures over all the cards of all the traces): export
 * --breakdown with several traces, report's "Across cards".  Pure
 * arithmetic on the ranks' bdrun.h breakdowns, unit-tested in
 * tests/unit/test_bdcards.c; spyremon(1), "Breakdown", gives the rules.
 *
 * Steps are matched across the ranks by name: the k-th step named N of
 * one trace (in --steps' order) is the k-th step named N of each other.
 * A step that every rank has is compared over every card of every rank,
 * in the first trace's order; a step that some ranks lack is counted and
 * named with the ranks that have it, and left out of every figure.  Each
 * card's step time runs from its own rank's step start (bdcards.h), so
 * the ranks' clocks need not agree; each card's counters are its rank's
 * (its own database's).
 *
 * The cards are in the traces' order, then in card order within a trace.
 * A card's key in the figures (bd_xcard's card, bd_xstep's straggler ...)
 * is its place in that order, so a tie that bdcards.h settles by "the
 * lower card" goes to the earlier trace, then the lower card number.
 *
 * Labels: a rank is "rR", R its trace's distributedInfo rank, when every
 * trace has a rank and no two traces of one host share one; else every
 * rank is "tI", I its trace's place among those given (from 0).  With
 * several databases the host comes first: "HOST:rR", HOST as the rows
 * name it (hosts.h).  A card is its rank's label and "cC", C its number
 * in the trace: "r1c0", "HOST:t2c3".
 */
#ifndef SPYREMON_BDRANKS_H
#define SPYREMON_BDRANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bdrun.h"

/* The longest label kept (a host name and more); longer ones are cut. */
#define BD_LABEL_MAX	320

/* A rank of the run: a trace's breakdown and what names it. */
struct bd_rank {
	const struct bd_run *run;
	const char *host;		/* its database's name; NULL with one */
	bool	 has_rank;		/* distributedInfo's rank */
	int64_t	 rank;
};

/* A card of the run. */
struct bd_rcard {
	size_t	 rank;			/* its rank's place among those given */
	size_t	 index;			/* its place in that trace's res.cards */
	int64_t	 card;			/* its number in that trace */
	char	 label[BD_LABEL_MAX];
};

/* A step that some ranks lack. */
struct bd_rstep {
	const char *name;
	bool	*in;			/* per rank: whether it has the step */
	size_t	 nin;			/* how many have it */
};

struct bd_ranks {
	size_t	 nranks;
	char	(*rank_label)[BD_LABEL_MAX];	/* per rank */
	struct bd_rcard *cards;		/* the keys' cards */
	size_t	 ncards;
	/* the steps all ranks have, in the first trace's order (bd_ranks_step) */
	size_t	*at;
	size_t	 nmatched;
	struct bd_across across;	/* their figures */
	struct bd_rstep *partial;	/* the others */
	size_t	 npartial;
};

/*
 * The ranks r[0..n) labelled, their cards listed and their steps matched
 * into *out, without the figures (out->across empty); free *out with
 * bd_ranks_free.  Dies when out of memory.
 */
void bd_ranks_match(const struct bd_rank *r, size_t n, struct bd_ranks *out);

/* Rank j's step (its place in --steps' order) in the m-th step all have. */
size_t bd_ranks_step(const struct bd_ranks *x, size_t m, size_t j);

/*
 * bd_ranks_match and the across-cards figures of the ranks r[0..n) into
 * *out: false, with nothing to free, when they have fewer than two cards
 * in all; else free *out with bd_ranks_free.  Dies when out of memory.
 */
bool bd_ranks_across(const struct bd_rank *r, size_t n, struct bd_ranks *out);

/* The card of key (a figure's card), or NULL for none. */
const struct bd_rcard *bd_ranks_card(const struct bd_ranks *x, int64_t key);

/*
 * A figure's card as the outputs name it: without x (one trace) "3" in a
 * cell of its own (alone) or "c3" after a figure, into buf; with x its
 * label ("r1c0"), or "" for none.
 */
const char *bd_ranks_card_name(const struct bd_ranks *x, int64_t key,
    bool alone, char *buf, size_t len);

/*
 * The run's line of r to fp: how many steps each card was the straggler
 * in, then the mean spreads, cards named as bd_ranks_card_name names them
 * with x.  As a sentence ("The straggler in 4 steps: card 0 3, card 1 1.
 * Mean spread: ...") for a report, else as a table's run line ("Straggler
 * in 4 steps: ...; mean spread: ..."), ending the line either way.
 */
void bd_xrun_write(FILE *fp, const struct bd_xrun *r,
    const struct bd_ranks *x, bool sentence);

void bd_ranks_free(struct bd_ranks *x);

#endif
