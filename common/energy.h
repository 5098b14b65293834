/*
 * energy: exact integrals and time-weighted means of a piecewise constant
 * quantity, such as a card's power, over a span of time.
 *
 * A sample's value v = mant / 10^scale holds over its interval (lo, hi].
 * Over a span [span_lo, span_hi] the integral is the sum of v times the
 * length of each interval clipped to the span, and the mean is that sum
 * divided by the time the values cover within the span (gaps and missing
 * values count for nothing, in the sum and in the time alike).
 *
 * Everything is integer arithmetic: the sum is kept as a 128-bit count of
 * 10^-scale units times nanoseconds, so the integral of power in W, in
 * joules, is a decimal with scale + 9 digits after the point and is
 * written exactly; a mean is a quotient, written rounded half away from
 * zero to as many digits as asked.  Nothing depends on the order in which
 * values are added.
 */
#ifndef SPYREMON_ENERGY_H
#define SPYREMON_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The 128-bit integer of the sums; __extension__ keeps -Wpedantic quiet. */
__extension__ typedef __int128 energy_int;

/* Most digits after the point that a value may have (its scale). */
#define ENERGY_SCALE_MAX	18

/* Room for every string energy_decimal writes with digits <= 40. */
#define ENERGY_BUFLEN		96

/*
 * sum is the sum of mant * 10^(scale - the value's scale) * overlap_ns,
 * in units of 10^-scale (value) * ns; the greatest value overlapping the
 * span is max_mant / 10^max_scale.
 */
struct energy_acc {
	energy_int sum;
	int	 scale;
	int64_t	 covered_ns;	/* sum of overlap_ns */
	uint64_t nvalues;	/* values overlapping the span */
	bool	 has_max;
	int64_t	 max_mant;
	int	 max_scale;
	bool	 overflow;	/* past 128 bits: sum and means are void */
};

/* Empty: no values, scale 0. */
void energy_init(struct energy_acc *a);

/*
 * The length in ns of (lo, hi] clipped to [span_lo, span_hi], 0 if they
 * do not meet or either is empty (hi <= lo).
 */
int64_t energy_overlap(int64_t lo, int64_t hi, int64_t span_lo,
    int64_t span_hi);

/*
 * Add the value mant / 10^scale (0 <= scale <= ENERGY_SCALE_MAX), held
 * over (lo_ns, hi_ns], to the integral over [span_lo, span_hi].  A value
 * counts (nvalues, the maximum) when its interval overlaps the span,
 * hi_ns > span_lo && lo_ns < span_hi: the rule of DB_OVERLAPS_SQL, under
 * which an empty span at t takes the values whose interval holds t; it
 * adds to the sum and the covered time only its overlap.  Returns that
 * overlap in ns.  A sum that would leave 128 bits sets overflow.
 */
int64_t energy_add(struct energy_acc *a, int64_t mant, int scale,
    int64_t lo_ns, int64_t hi_ns, int64_t span_lo, int64_t span_hi);

/*
 * num / (den * 10^scale) as a decimal with digits digits after the point,
 * rounded half away from zero, into buf; with trim, trailing zeros of the
 * fraction are dropped, and the point with them.  den > 0, 0 <= scale <=
 * 38, 0 <= digits <= 40.  False (buf "") if the arguments are out of
 * range, the arithmetic would leave 128 bits, or buf is too small.
 */
bool energy_decimal(energy_int num, int64_t den, int scale, int digits,
    bool trim, char *buf, size_t len);

/*
 * The integral in value-seconds (joules for watts), exactly, trailing
 * zeros dropped.  False if there is no value or on overflow.
 */
bool energy_integral(const struct energy_acc *a, char *buf, size_t len);

/*
 * The integral rounded to digits digits after the point, zeros kept (for
 * aligned columns).  False as for energy_integral.
 */
bool energy_integral_fixed(const struct energy_acc *a, int digits,
    char *buf, size_t len);

/*
 * The time-weighted mean, rounded to digits digits after the point, with
 * trailing zeros dropped if trim.  False if no time is covered (no value,
 * or an empty span) or on overflow.
 */
bool energy_mean(const struct energy_acc *a, int digits, bool trim,
    char *buf, size_t len);

/*
 * The greatest value, to digits digits after the point (-1: exactly as
 * it was given, its scale's digits).  False if there is no value.
 */
bool energy_max(const struct energy_acc *a, int digits, char *buf,
    size_t len);

/*
 * A REAL cell x of the database (a natural value times 10^decimals,
 * stored as REAL when it had more digits than decimals) as mant /
 * 10^scale: the shortest decimal that reads back as x.  False if x is not
 * finite or out of range.
 */
bool energy_real_value(double x, int decimals, int64_t *mant, int *scale);

#endif
