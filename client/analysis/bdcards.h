/*
 * bdcards: the cards of one trace side by side, step by step (the
 * "across cards" figures of export --breakdown and of report's "Why it
 * was slow"; bdranks.h feeds it the cards of several traces, a card's
 * number then its place among them); pure arithmetic on bdtrace.h's windows and the counters'
 * means, unit-tested on cards of its own (tests/unit/test_bdcards.c).
 * spyremon(1), "Breakdown", gives the rules to users.
 *
 * A card's step time is the time from the step's start to the end of its
 * last device work in the step (bd_temporal's work_end), 0 when it did
 * none: in a tensor-parallel step the others wait for the card that
 * finishes last.  The straggler is the card of the longest step time; on
 * a tie, the one with more busy time (the span less idle), then the lower
 * card number.  The fastest is the other end of the same order: the
 * shortest step time, on a tie less busy time, then the higher card
 * number; with two cards or more it is never the straggler.
 *
 * The class that makes the difference: of the eight classes (compute,
 * data movement, communication, other, and idle by its cause: host wait,
 * launch gap, sync, unexplained), the one in which the straggler spent
 * the most time more than the fastest card (the first in that order on a
 * tie); none when the straggler spent more in none.
 *
 * A spread is the largest figure less the smallest among the cards that
 * have it (step time; mean busy % and energy from the stored samples),
 * given only when two cards or more have it.
 */
#ifndef SPYREMON_BDCARDS_H
#define SPYREMON_BDCARDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bdtrace.h"

/* The classes compared, in the order above. */
#define BD_XCLASSES	8

/* Class k's name ("compute", "idle: host wait" ...) and key ("host_wait"). */
const char *bd_xclass_name(int k);
const char *bd_xclass_key(int k);

/* The time of w in class k (ns). */
int64_t bd_xclass_ns(const struct bd_window *w, int k);

/* A card in a step: its window and its counters over the same span. */
struct bd_xcard {
	int64_t	 card;
	const struct bd_window *w;
	bool	 has_busy, has_energy;
	double	 busy_pct, energy_j;
};

/* A figure across cards: has when two cards or more have it. */
struct bd_xrange {
	bool	 has;
	size_t	 n;			/* the cards that have it */
	double	 min, max;		/* the spread is max - min */
	int64_t	 min_card, max_card;	/* the first in card order on a tie */
};

struct bd_xstep {
	const char *name;
	int64_t	 straggler, fastest;
	struct bd_xrange time_ns;	/* max_card the straggler, min_card the fastest */
	struct bd_xrange busy_pct, energy_j;
	int	 diff;			/* the class that makes the difference, or -1 */
	int64_t	 diff_straggler_ns, diff_fastest_ns;
};

/* A card's step time (ns), as above. */
int64_t bd_xstep_time(const struct bd_window *w);

/* The figures of one step of the cards c[0..n), n >= 2, in card order. */
void bd_xstep(const struct bd_xcard *c, size_t n, struct bd_xstep *out);

/* The figures summed over a run's steps. */
struct bd_xrun {
	size_t	 nsteps, ncards;
	int64_t	*cards;			/* as given */
	size_t	*straggler;		/* how many steps each card was it */
	/* the mean spreads, over the steps that have each */
	size_t	 ntime, nbusy, nenergy;
	double	 time_ns, busy_pct, energy_j;
};

/*
 * The run of the steps st[0..nsteps) of the cards cards[0..ncards) into
 * *out; free it with bd_xrun_free.  Dies when out of memory.
 */
void bd_xrun(const struct bd_xstep *st, size_t nsteps, const int64_t *cards,
    size_t ncards, struct bd_xrun *out);
void bd_xrun_free(struct bd_xrun *r);

#endif
