/*
 * attrib: a card's energy shared among its device events (attrib.h).
 *
 * The samples, events and host events are sorted by start; the samples
 * are then walked in order, each with the events that may overlap it:
 * those started before its end and not ended before its start, kept in
 * an active list in order of start, so that their union within the
 * sample is one pass.  Every figure is a double: a sample's energy is
 * split exactly into its parts up to rounding, which keeps the sum of
 * the parts within 1e-12 of the span's energy, relatively, for any
 * realistic count of samples.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "attrib.h"

#define NS_PER_S	1e9

static int
cmp_sample(const void *a, const void *b)
{
	const struct attrib_sample *x = a, *y = b;

	if (x->lo_ns != y->lo_ns)
		return (x->lo_ns > y->lo_ns) - (x->lo_ns < y->lo_ns);
	return (x->hi_ns > y->hi_ns) - (x->hi_ns < y->hi_ns);
}

static int
cmp_event(const void *a, const void *b)
{
	const struct attrib_event *x = a, *y = b;

	if (x->lo_ns != y->lo_ns)
		return (x->lo_ns > y->lo_ns) - (x->lo_ns < y->lo_ns);
	return (x->hi_ns > y->hi_ns) - (x->hi_ns < y->hi_ns);
}

static int
cmp_iv(const void *a, const void *b)
{
	const struct attrib_iv *x = a, *y = b;

	if (x->lo_ns != y->lo_ns)
		return (x->lo_ns > y->lo_ns) - (x->lo_ns < y->lo_ns);
	return (x->hi_ns > y->hi_ns) - (x->hi_ns < y->hi_ns);
}

double
attrib_part_bound(double share_j, double w_ns, double len_ns,
    double sample_j, double lo_w, double hi_w)
{
	double w = w_ns / NS_PER_S, rest = (len_ns - w_ns) / NS_PER_S;
	double lo, hi;

	if (len_ns <= 0 || w_ns <= 0 || w_ns >= len_ns)
		return 0;
	lo = fmax(w * lo_w, sample_j - rest * hi_w);
	hi = fmin(w * hi_w, sample_j - rest * lo_w);
	if (lo > hi)	/* a mean outside [lo_w, hi_w] by rounding */
		lo = hi = (lo + hi) / 2;
	return fmax(0, fmax(share_j - lo, hi - share_j));
}

/* The range of power that sample k's neighbours and itself show. */
static void
spread_at(const struct attrib_sample *s, size_t k, double *lo, double *hi)
{
	*lo = fmin(s[k].power_w, fmin(s[k - 1].power_w, s[k + 1].power_w));
	*hi = fmax(s[k].power_w, fmax(s[k - 1].power_w, s[k + 1].power_w));
}

/* How many of v[0..n), sorted, lie strictly within (a, b). */
static size_t
count_within(const int64_t *v, size_t n, int64_t a, int64_t b)
{
	size_t lo = 0, hi = n, first;

	while (lo < hi) {		/* the first > a */
		size_t m = lo + (hi - lo) / 2;

		if (v[m] > a)
			hi = m;
		else
			lo = m + 1;
	}
	first = lo;
	hi = n;
	while (lo < hi) {		/* the first >= b */
		size_t m = lo + (hi - lo) / 2;

		if (v[m] >= b)
			hi = m;
		else
			lo = m + 1;
	}
	return lo - first;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Samples j and k (j before k) meet, to a tenth of k's length. */
static bool
adjacent(const struct attrib_sample *s, size_t j, size_t k)
{
	int64_t gap = s[k].lo_ns - s[j].hi_ns;

	return (gap < 0 ? -gap : gap) <= (s[k].hi_ns - s[k].lo_ns) / 10;
}

/* The length of the union of iv[0..n), sorted by start. */
static int64_t
union_len(const struct attrib_iv *iv, size_t n)
{
	int64_t total = 0, lo = 0, hi = 0;
	bool open = false;

	for (size_t i = 0; i < n; i++) {
		if (open && iv[i].lo_ns <= hi) {
			if (iv[i].hi_ns > hi)
				hi = iv[i].hi_ns;
			continue;
		}
		if (open)
			total += hi - lo;
		lo = iv[i].lo_ns;
		hi = iv[i].hi_ns;
		open = true;
	}
	return open ? total + hi - lo : total;
}

/*
 * iv[0..mid) and iv[mid..n), each sorted by start, merged into out: the
 * active lists keep their intervals in order of start, and clipping to
 * a sample keeps that order, so the device and host runs need no sort.
 */
static void
merge_runs(const struct attrib_iv *iv, size_t mid, size_t n,
    struct attrib_iv *out)
{
	size_t i = 0, j = mid, k = 0;

	while (i < mid && j < n)
		out[k++] = iv[j].lo_ns < iv[i].lo_ns ? iv[j++] : iv[i++];
	while (i < mid)
		out[k++] = iv[i++];
	while (j < n)
		out[k++] = iv[j++];
}

/*
 * An active list over intervals sorted by start: idx[0..n) are those
 * started before the current sample's end and not ended by its start.
 */
struct active {
	size_t	*idx;
	size_t	 n, next;
};

/*
 * Bring in what starts before b, drop what ends at or before a; lo and
 * hi give interval i's bounds.
 */
static void
active_advance(struct active *ac, size_t total, int64_t a, int64_t b,
    int64_t (*lo)(const void *, size_t), int64_t (*hi)(const void *, size_t),
    const void *base)
{
	size_t kept = 0;

	while (ac->next < total && lo(base, ac->next) < b)
		ac->idx[ac->n++] = ac->next++;
	for (size_t i = 0; i < ac->n; i++)
		if (hi(base, ac->idx[i]) > a)
			ac->idx[kept++] = ac->idx[i];
	ac->n = kept;
}

static int64_t
event_lo(const void *base, size_t i)
{
	return ((const struct attrib_event *)base)[i].lo_ns;
}

static int64_t
event_hi(const void *base, size_t i)
{
	return ((const struct attrib_event *)base)[i].hi_ns;
}

static int64_t
iv_lo(const void *base, size_t i)
{
	return ((const struct attrib_iv *)base)[i].lo_ns;
}

static int64_t
iv_hi(const void *base, size_t i)
{
	return ((const struct attrib_iv *)base)[i].hi_ns;
}

/* The clipped device events of a sample, and their overlap. */
struct part {
	size_t	 ev;
	uint32_t op;
	int64_t	 ov;
};

struct work {
	struct active dev, host;
	struct attrib_iv *clip;		/* device, then host, clipped */
	struct attrib_iv *merged;	/* the two, in order of start */
	struct part *parts;
	double	*op_time;		/* per operator, its time in this sample */
	double	*op_j;			/* per operator, its energy in this sample */
	uint32_t *touched;		/* the operators with some, in order met */
	uint8_t	*changes;		/* per sample, its events' starts and ends, up to 2 */
	double	*ev_j;			/* per event, its energy */
};

/*
 * The range of power within sample k for the bound: the card's floor
 * and ceiling, or where the sample changes at most once and its
 * adjacent neighbours not at all, the range of the three.
 */
static void
range_at(const struct work *w, const struct attrib_sample *s, size_t ns,
    size_t k, const struct attrib_card *out, double *lo, double *hi)
{
	*lo = out->floor_w;
	*hi = out->ceiling_w;
	if (k > 0 && k + 1 < ns && w->changes[k] <= 1 &&
	    w->changes[k - 1] == 0 && w->changes[k + 1] == 0 &&
	    adjacent(s, k - 1, k) && adjacent(s, k, k + 1))
		spread_at(s, k, lo, hi);
}

/* Share one sample, [a, b] of s[k], among the active events. */
static void
share_sample(struct work *w, const struct attrib_sample *s, size_t ns,
    size_t k, const struct attrib_event *e, const struct attrib_iv *host,
    int64_t a, int64_t b, struct attrib_card *out)
{
	double p = s[k].power_w, len = (double)(b - a), lo_w, hi_w;
	/*
	 * A sample clipped by the span still stands for its whole interval:
	 * its mean is over all of it, so a part is a part of the whole.
	 */
	double whole = (double)(s[k].hi_ns - s[k].lo_ns);
	double whole_j = p * whole / NS_PER_S, idle_p = p, busy_p = p;
	size_t nclip = 0, nparts = 0, ntouched = 0;
	int64_t busy, idle, sum_ov = 0, both;

	for (size_t i = 0; i < w->dev.n; i++) {
		const struct attrib_event *ev = &e[w->dev.idx[i]];
		int64_t lo = ev->lo_ns > a ? ev->lo_ns : a;
		int64_t hi = ev->hi_ns < b ? ev->hi_ns : b;

		if (hi <= lo)
			continue;
		w->clip[nclip++] = (struct attrib_iv){ lo, hi };
		w->parts[nparts++] = (struct part){ w->dev.idx[i], ev->op,
		    hi - lo };
		sum_ov += hi - lo;
	}
	busy = union_len(w->clip, nclip);
	idle = (b - a) - busy;
	for (size_t i = 0; i < w->host.n; i++) {
		const struct attrib_iv *hv = &host[w->host.idx[i]];
		int64_t lo = hv->lo_ns > a ? hv->lo_ns : a;
		int64_t hi = hv->hi_ns < b ? hv->hi_ns : b;

		if (hi > lo)
			w->clip[nclip++] = (struct attrib_iv){ lo, hi };
	}
	both = busy;
	if (nclip > nparts) {
		merge_runs(w->clip, nparts, nclip, w->merged);
		both = union_len(w->merged, nclip);
	}
	/*
	 * Idle time at the card's floor, the busy time the rest: the idle
	 * power no more than the mean, and no less than keeps the busy
	 * time's at or below the ceiling.  The floor, not the idle power
	 * learned: that is a median of samples said idle, which may hold
	 * some work.
	 */
	if (out->has_idle_w && busy > 0 && idle > 0) {
		idle_p = fmin(out->floor_w, p);
		busy_p = (p * len - idle_p * (double)idle) / (double)busy;
		if (busy_p > out->ceiling_w) {
			busy_p = out->ceiling_w;
			idle_p = (p * len - busy_p * (double)busy) /
			    (double)idle;
		}
	}
	range_at(w, s, ns, k, out, &lo_w, &hi_w);
	out->covered_ns += b - a;
	out->span_j += p * len / NS_PER_S;
	out->busy_ns += busy;
	out->idle_ns += idle;
	out->idle_j += idle_p * (double)idle / NS_PER_S;
	out->idle_bound_j += attrib_part_bound(idle_p * (double)idle /
	    NS_PER_S, (double)idle, whole, whole_j, lo_w, hi_w);
	out->host_only_ns += both - busy;
	out->host_only_j += idle_p * (double)(both - busy) / NS_PER_S;
	/*
	 * An operator's calls in one sample are one part of it: the bound
	 * holds for any part, and is tighter for the whole than summed over
	 * its calls.
	 */
	for (size_t i = 0; i < nparts; i++) {
		uint32_t o = w->parts[i].op;
		double t = (double)busy * (double)w->parts[i].ov /
		    (double)sum_ov;

		out->ops[o].time_ns += t;
		out->ops[o].energy_j += busy_p * t / NS_PER_S;
		w->ev_j[w->parts[i].ev] += busy_p * t / NS_PER_S;
		if (w->op_time[o] == 0)
			w->touched[ntouched++] = o;
		w->op_time[o] += t;
		w->op_j[o] += busy_p * t / NS_PER_S;
	}
	for (size_t j = 0; j < ntouched; j++) {
		uint32_t o = w->touched[j];

		out->ops[o].bound_j += attrib_part_bound(w->op_j[o],
		    w->op_time[o], whole, whole_j, lo_w, hi_w);
		if (w->op_time[o] < whole)
			out->ops[o].partial++;
		w->op_time[o] = 0;
		w->op_j[o] = 0;
	}
}

/*
 * The floor and ceiling of the card's power, from the samples over the
 * span and one on either side (so that samples stored later do not move
 * them), and each sample's count of changes (its events' starts and
 * ends within it, up to 2).  0, or -1 out of memory.
 */
static int
prepare(struct work *w, const struct attrib_sample *s, size_t ns,
    const struct attrib_event *e, size_t ne, int64_t span_lo,
    int64_t span_hi, struct attrib_card *out)
{
	int64_t *los, *his;
	size_t first = ns, last = 0;

	/* the samples over the span and one either side: not later ones */
	for (size_t k = 0; k < ns; k++)
		if (s[k].hi_ns > span_lo && s[k].lo_ns < span_hi) {
			first = first < k ? first : k;
			last = k;
		}
	out->ceiling_w = out->max_w > 0 ? out->max_w : ATTRIB_MAX_W;
	out->floor_w = out->has_idle_w ? out->idle_w : INFINITY;
	for (size_t k = first > 0 ? first - 1 : 0; first < ns &&
	    k <= last + 1 && k < ns; k++) {
		out->floor_w = fmin(out->floor_w, s[k].power_w);
		out->ceiling_w = fmax(out->ceiling_w, s[k].power_w);
	}
	if (!isfinite(out->floor_w))
		out->floor_w = 0;
	if (out->floor_w < 0)
		out->floor_w = 0;
	if ((los = calloc(ne + 1, sizeof(*los))) == NULL ||
	    (his = calloc(ne + 1, sizeof(*his))) == NULL) {
		free(los);
		return -1;
	}
	for (size_t i = 0; i < ne; i++) {
		los[i] = e[i].lo_ns;
		his[i] = e[i].hi_ns;
	}
	qsort(his, ne, sizeof(*his), cmp_i64);	/* los are sorted with e */
	for (size_t k = 0; k < ns; k++) {
		size_t n = count_within(los, ne, s[k].lo_ns, s[k].hi_ns) +
		    count_within(his, ne, s[k].lo_ns, s[k].hi_ns);

		w->changes[k] = n > 2 ? 2 : (uint8_t)n;
	}
	free(los);
	free(his);
	return 0;
}

int
attrib_card(struct attrib_sample *s, size_t ns, struct attrib_event *e,
    size_t ne, struct attrib_iv *host, size_t nhost, int64_t span_lo,
    int64_t span_hi, struct attrib_card *out)
{
	struct work w = { 0 };
	size_t nin = 0;
	double parts = 0;
	int rc = -1;

	sort_once(s, ns, sizeof(*s), cmp_sample);
	sort_once(e, ne, sizeof(*e), cmp_event);
	sort_once(host, nhost, sizeof(*host), cmp_iv);
	if ((w.dev.idx = calloc(ne + 1, sizeof(size_t))) == NULL ||
	    (w.host.idx = calloc(nhost + 1, sizeof(size_t))) == NULL ||
	    (w.clip = calloc(ne + nhost + 1, sizeof(*w.clip))) == NULL ||
	    (w.merged = calloc(ne + nhost + 1, sizeof(*w.merged))) == NULL ||
	    (w.parts = calloc(ne + 1, sizeof(*w.parts))) == NULL ||
	    (w.op_time = calloc(out->nops + 1, sizeof(*w.op_time))) == NULL ||
	    (w.op_j = calloc(out->nops + 1, sizeof(*w.op_j))) == NULL ||
	    (w.touched = calloc(ne + 1, sizeof(*w.touched))) == NULL ||
	    (w.changes = calloc(ns + 1, sizeof(*w.changes))) == NULL ||
	    (w.ev_j = calloc(ne + 1, sizeof(*w.ev_j))) == NULL ||
	    prepare(&w, s, ns, e, ne, span_lo, span_hi, out) != 0)
		goto out;
	/* calls, device time, and the union of the events in the span */
	for (size_t i = 0; i < ne; i++) {
		int64_t lo = e[i].lo_ns > span_lo ? e[i].lo_ns : span_lo;
		int64_t hi = e[i].hi_ns < span_hi ? e[i].hi_ns : span_hi;

		if (hi < lo || (hi == lo && (e[i].lo_ns < span_lo ||
		    e[i].lo_ns > span_hi)))
			continue;
		out->ops[e[i].op].calls++;
		out->ops[e[i].op].device_ns += hi - lo;
		if (e[i].flops >= 0) {
			out->ops[e[i].op].has_flops = true;
			out->ops[e[i].op].flops += e[i].flops;
		}
		if (nin == 0 || hi > out->last_ns)
			out->last_ns = hi;
		if (nin == 0)
			out->first_ns = lo;
		w.clip[nin++] = (struct attrib_iv){ lo, hi };
	}
	out->active_ns = union_len(w.clip, nin);
	for (size_t k = 0; k < ns; k++) {
		int64_t a = s[k].lo_ns > span_lo ? s[k].lo_ns : span_lo;
		int64_t b = s[k].hi_ns < span_hi ? s[k].hi_ns : span_hi;

		if (b <= a)
			continue;
		out->samples++;
		if (s[k].hi_ns - s[k].lo_ns > out->max_interval_ns)
			out->max_interval_ns = s[k].hi_ns - s[k].lo_ns;
		active_advance(&w.dev, ne, a, b, event_lo, event_hi, e);
		active_advance(&w.host, nhost, a, b, iv_lo, iv_hi, host);
		share_sample(&w, s, ns, k, e, host, a, b, out);
	}
	if (out->event_j != NULL && ne > 0)
		memcpy(out->event_j, w.ev_j, ne * sizeof(*w.ev_j));
	for (size_t i = 0; i < out->nops; i++)
		parts += out->ops[i].energy_j;
	parts += out->idle_j;
	out->closure = out->span_j > 0 ? fabs(parts - out->span_j) /
	    out->span_j : 0;
	rc = 0;
out:
	free(w.dev.idx);
	free(w.host.idx);
	free(w.clip);
	free(w.merged);
	free(w.parts);
	free(w.op_time);
	free(w.op_j);
	free(w.touched);
	free(w.changes);
	free(w.ev_j);
	return rc;
}
