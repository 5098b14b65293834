/*
 * attrib: a card's energy, from its samples, shared among the device
 * events (kernels, copies) that ran on it, with a bound on each share's
 * error.
 *
 * A sample's power is held over its interval (lo, hi], clipped to the
 * span, as the step energy holds it (energy.h): its energy is the power
 * times that time.  Within the sample, the time that some device event
 * covers (the union of the events, clipped to the sample) is busy, the
 * rest idle.  The idle time takes the power times itself; the busy time's
 * energy is shared among the events that overlap the sample in
 * proportion to their overlap (so events that run at once share it, and
 * one alone takes power times overlap).  The shares and the idle energy
 * of every sample add up to the sample's energy, so those of all
 * operators plus idle add up to the span's energy.
 *
 * A share is exact to the sampling when it takes whole samples: where an
 * event covers a sample only in part, the power it drew may differ from
 * the sample's mean.  With the card's idle power known, a sample's idle
 * time takes the card's floor (below; no more than the sample's mean, no
 * less than leaves the busy time above the card's maximum) and the busy
 * time the rest, shared as above; without it every part takes the mean.
 *
 * The bound is physics: the card's power lies between a floor (the
 * lowest of its idle power and the values of the samples over the span
 * and one either side) and a ceiling (its maximum power, max_w, or a
 * higher one of those samples' values), and the sample's
 * energy E over its length L is the sum of its parts.  So the energy of
 * a part w lies within [max(w floor, E - (L - w) ceiling), min(w
 * ceiling, E - (L - w) floor)], and its error is at most the farther
 * end of that from the share.  Where the sample has at most one change
 * (a start or end of an event within it) and its two neighbours none,
 * each level of power within it lasts into a neighbour, so the power
 * lies between the lowest and highest of the three samples' values: the
 * range is narrowed to those.  An operator's calls within one sample
 * are one part w of it (the bound holds for any part); its bound is the
 * sum over the samples it takes part of: a worst case, not a standard
 * error.  A bound of 0 means exact to the sampling.
 *
 * Pure: no database, no trace; the unit tests give it samples and events
 * of their own.
 */
#ifndef SPYREMON_ATTRIB_H
#define SPYREMON_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A sample: power_w held over (lo_ns, hi_ns]. */
struct attrib_sample {
	int64_t	 lo_ns, hi_ns;
	double	 power_w;
};

/*
 * A device event [lo_ns, hi_ns] of operator op (an index of the
 * caller's), with the floating-point operations it did (< 0: not said).
 */
struct attrib_event {
	int64_t	 lo_ns, hi_ns;
	uint32_t op;
	double	 flops;
};

/* A host event [lo_ns, hi_ns]: for the host-only time. */
struct attrib_iv {
	int64_t	 lo_ns, hi_ns;
};

/* One operator's figures on one card. */
struct attrib_op {
	uint64_t calls;		/* its events that overlap the span */
	int64_t	 device_ns;	/* their time within the span, summed */
	double	 time_ns;	/* the sampled busy time given to it */
	double	 energy_j;
	double	 bound_j;	/* |energy_j - the truth| <= bound_j */
	uint64_t partial;	/* samples it covers only in part */
	bool	 has_flops;	/* some of its events said their flops */
	double	 flops;		/* their sum */
};

/* The maximum power of a card, W, unless the caller says another. */
#define ATTRIB_MAX_W	75.0

/*
 * One card's figures; ops has the caller's nops entries.  The caller
 * sets ops, nops, max_w, has_idle_w, idle_w and event_j; attrib_card
 * the rest.
 */
struct attrib_card {
	struct attrib_op *ops;
	size_t	 nops;
	double	 max_w;		/* the card's maximum power; 0: ATTRIB_MAX_W */
	bool	 has_idle_w;
	double	 idle_w;	/* its idle power: the idle time takes the floor */
	double	*event_j;	/* NULL, or room for each event's energy, in sorted order */
	double	 floor_w, ceiling_w;	/* the bound's range of power */
	uint64_t samples;	/* samples overlapping the span */
	int64_t	 max_interval_ns;
	int64_t	 covered_ns;	/* time within the span that samples cover */
	double	 span_j;	/* the samples' energy within the span */
	int64_t	 active_ns;	/* the union of the events in the span, sampled or not */
	int64_t	 first_ns, last_ns;	/* the first event's start, the last one's end, in the span; 0 if none */
	int64_t	 busy_ns;	/* covered time with a device event */
	int64_t	 idle_ns;	/* covered time without one */
	double	 idle_j, idle_bound_j;
	int64_t	 host_only_ns;	/* idle time in which a host event runs */
	double	 host_only_j;	/* its energy (part of idle_j) */
	double	 closure;	/* |sum of ops + idle - span_j| / span_j, 0 if none */
};

/*
 * Share the energy of the samples s[0..ns) among the events e[0..ne) over
 * [span_lo, span_hi], host events host[0..nhost) giving the host-only
 * time.  out->ops must hold out->nops zeroed entries, every e[i].op below
 * nops; the rest of *out is filled, and out->event_j[i] with e[i]'s
 * share once e is sorted.  s, e and host are sorted in place.
 * Samples outside the span count only as neighbours for the bound.  0,
 * or -1 out of memory.
 */
int attrib_card(struct attrib_sample *s, size_t ns, struct attrib_event *e,
    size_t ne, struct attrib_iv *host, size_t nhost, int64_t span_lo,
    int64_t span_hi, struct attrib_card *out);

/*
 * The error bound, J, of share_j given to a part w_ns of a sample len_ns
 * long of energy sample_j whose power lies within [lo_w, hi_w]: the
 * farther end from share_j of the range the part's energy can take; 0
 * for the whole sample.
 */
double attrib_part_bound(double share_j, double w_ns, double len_ns,
    double sample_j, double lo_w, double hi_w);

#endif
