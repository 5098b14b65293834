/*
 * devcounter: each call's energy from the card's own charge counter, as
 * the Spyre runtime's device traces carry it (attr "Power", a 32-bit
 * accumulator, beside the cycle stamps TS1..TS5), scaled to joules
 * against the stored samples.
 *
 * A card's readings, one per call, are taken in the order of their cycle
 * stamps.  The counter's increment from one reading to the next, modulo
 * 2^32 (it wraps), is the charge of the interval between them, given to
 * the call whose reading opens it; the last reading opens none.  An
 * increment of 2^31 or more is no wrap but a reading out of order (the
 * counter moved backwards): its interval is left out and counted.  Two
 * readings at the same cycle are one moment: no interval between them.
 *
 * The scale is fitted by least squares through the origin: joules per
 * count k minimising the sum over intervals of (E - k * counts)^2, E the
 * samples' energy over the interval.  Through the origin because the
 * counter counts all the card's charge, idle included: no counts, no
 * energy, and an offset per interval would stand for energy that grows
 * with the number of calls rather than with time.  The residual is the
 * root mean square of E - k * counts, and relative to the root mean
 * square of E.
 *
 * Pure: the caller gives readings and samples (attrib.h's).
 */
#ifndef SPYREMON_DEVCOUNTER_H
#define SPYREMON_DEVCOUNTER_H

#include <stddef.h>
#include <stdint.h>

#include "attrib.h"

#define DEVCOUNTER_BACKWARDS	(1ULL << 31)	/* increments from here on */

/* One call's reading: the counter at cycle stamp cycles, time t_ns. */
struct devcounter_reading {
	uint32_t counter;
	uint64_t cycles;
	int64_t	 t_ns;		/* on the samples' clock */
	uint32_t call;		/* the caller's index of the call */
	/* filled by devcounter_fit */
	uint64_t counts;	/* the increment to the next reading */
	int64_t	 next_ns;	/* the next reading's time; t_ns if none */
	int	 used;		/* 1 if its interval took part in the fit */
};

struct devcounter_fit {
	size_t	 intervals;	/* in the fit */
	size_t	 backwards;	/* left out: the counter went backwards */
	size_t	 unsampled;	/* left out: no sample covers it whole */
	size_t	 untimed;	/* left out: it ends before it begins */
	double	 j_per_count;	/* the scale, 0 if nothing to fit */
	double	 residual_j;	/* RMS of E - k * counts */
	double	 residual_rel;	/* residual_j / RMS of E; 0 if E is 0 */
	double	 counts;	/* of the intervals in the fit */
	double	 sampled_j;	/* their samples' energy */
};

/*
 * The energy of the samples s[0..ns) (sorted by lo_ns) over [lo, hi],
 * each power held over its interval; *covered is set to the time within
 * [lo, hi] that samples cover.
 */
double devcounter_sampled_j(const struct attrib_sample *s, size_t ns,
    int64_t lo, int64_t hi, int64_t *covered);

/*
 * Order r[0..n) by cycle stamp, fill each reading's counts, next_ns and
 * used, and fit the scale against the samples s[0..ns), sorted by lo_ns:
 * intervals of some cycles and a positive time, covered whole by samples
 * and not backwards take part.
 */
void devcounter_fit(struct devcounter_reading *r, size_t n,
    const struct attrib_sample *s, size_t ns, struct devcounter_fit *out);

#endif
