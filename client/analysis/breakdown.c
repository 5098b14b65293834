/*
 * breakdown: temporal classes and idle classes of device events
 * (breakdown.h).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrays.h"
#include "breakdown.h"
#include "client.h"
#include "pcielink.h"

static const char *const idle_names[BD_NIDLE] = {
	[BD_HOST_WAIT] = "host wait",
	[BD_LAUNCH_GAP] = "launch gap",
	[BD_SYNC] = "sync",
	[BD_UNEXPLAINED] = "unexplained",
};

const char *
bd_idle_name(enum bd_idle c)
{
	return c < BD_NIDLE ? idle_names[c] : "?";
}

static const char *const class_names[OPS_NCAT] = {
	[OPS_COMPUTE] = "compute",
	[OPS_MEMORY] = "data movement",
	[OPS_COMM] = "communication",
	[OPS_OTHER] = "other",
	[OPS_IDLE] = "idle",
};

const char *
bd_class_name(enum ops_category c)
{
	return c < OPS_NCAT ? class_names[c] : "?";
}

/* One end of an event in the sweep: +1 at its start, -1 at its end. */
struct point {
	int64_t	 t;
	int	 delta;
	enum ops_category cat;
};

static int
pointcmp(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

/* The class of a ns with count[c] events of each category running. */
static enum ops_category
winner(const int64_t count[OPS_NCAT])
{
	static const enum ops_category order[] = {
		OPS_COMM, OPS_COMPUTE, OPS_MEMORY, OPS_OTHER,
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (count[order[i]] > 0)
			return order[i];
	return OPS_IDLE;
}

/*
 * The sweep under bd_temporal and bd_pieces: each stretch [a, b) of
 * [lo, hi) in which the same events run, in time order, given to take
 * with count[c], how many of category c run.
 */
typedef void (*stretch_fn)(void *arg, int64_t a, int64_t b,
    const int64_t count[OPS_NCAT]);

static void
sweep(const struct bd_event *ev, size_t n, int64_t lo, int64_t hi,
    stretch_fn take, void *arg)
{
	struct point *p;
	int64_t count[OPS_NCAT] = { 0 }, t;
	size_t np = 0;

	if (hi <= lo)
		return;
	if ((p = calloc(2 * n + 1, sizeof(*p))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int64_t s = ev[i].start > lo ? ev[i].start : lo;
		int64_t e = ev[i].end < hi ? ev[i].end : hi;

		if (s >= e || ev[i].cat >= OPS_IDLE)
			continue;
		p[np++] = (struct point){ s, 1, ev[i].cat };
		p[np++] = (struct point){ e, -1, ev[i].cat };
	}
	sort_once(p, np, sizeof(*p), pointcmp);
	t = lo;
	for (size_t i = 0; i <= np; i++) {
		int64_t next = i < np ? p[i].t : hi;

		if (next > t) {
			take(arg, t, next, count);
			t = next;
		}
		if (i < np)
			count[p[i].cat] += p[i].delta;
	}
	free(p);
}

static void
add_stretch(void *arg, int64_t a, int64_t b, const int64_t count[OPS_NCAT])
{
	struct bd_temporal *out = arg;

	out->t[winner(count)] += b - a;
	if (count[OPS_COMM] > 0 && count[OPS_COMPUTE] > 0)
		out->comm_compute += b - a;
}

void
bd_temporal(const struct bd_event *ev, size_t n, int64_t lo, int64_t hi,
    struct bd_temporal *out)
{
	memset(out, 0, sizeof(*out));
	out->work_end = lo;
	if (hi <= lo)
		return;
	out->span = hi - lo;
	for (size_t i = 0; i < n; i++) {
		int64_t e = ev[i].end < hi ? ev[i].end : hi;

		if (ev[i].cat < OPS_IDLE && ev[i].start < e && lo < e &&
		    e > out->work_end)
			out->work_end = e;
	}
	sweep(ev, n, lo, hi, add_stretch, out);
}

/* bd_pieces' pieces as they grow, and where its idle pieces are. */
struct pieces {
	struct bd_piece *v;
	size_t	 n, cap;
	const struct bd_seg *seg;
	size_t	 nseg, next;		/* seg[next] the first not behind */
	int64_t	 first, last;
};

static void
piece_add(struct pieces *p, int64_t start, int64_t end, enum ops_category cat,
    enum bd_idle idle)
{
	struct bd_piece *last = p->n > 0 ? &p->v[p->n - 1] : NULL;

	if (end <= start)
		return;
	if (cat != OPS_IDLE)
		idle = BD_UNEXPLAINED;	/* not one: the same for every class */
	if (last != NULL && last->end == start && last->cat == cat &&
	    last->idle == idle) {
		last->end = end;
		return;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct bd_piece *v = reallocarray(p->v, cap, sizeof(*v));

		if (v == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct bd_piece){ start, end, cat, idle };
}

/* Idle time [a, b) inside [first, last), cut by the idle pieces. */
static void
idle_inside(struct pieces *p, int64_t a, int64_t b)
{
	int64_t t = a;

	while (p->next < p->nseg && p->seg[p->next].end <= a)
		p->next++;
	for (size_t i = p->next; i < p->nseg && p->seg[i].start < b; i++) {
		int64_t s = p->seg[i].start > t ? p->seg[i].start : t;
		int64_t e = p->seg[i].end < b ? p->seg[i].end : b;

		if (e <= s)
			continue;
		piece_add(p, t, s, OPS_IDLE, BD_UNEXPLAINED);
		piece_add(p, s, e, OPS_IDLE, p->seg[i].cls);
		t = e;
	}
	piece_add(p, t, b, OPS_IDLE, BD_UNEXPLAINED);
}

static void
piece_stretch(void *arg, int64_t a, int64_t b, const int64_t count[OPS_NCAT])
{
	struct pieces *p = arg;
	enum ops_category cat = winner(count);
	int64_t in_lo, in_hi;

	if (cat != OPS_IDLE) {
		piece_add(p, a, b, cat, BD_UNEXPLAINED);
		return;
	}
	/* outside the card's events, unexplained, as bd_idle_window has it */
	in_lo = a > p->first ? a : p->first;
	in_hi = b < p->last ? b : p->last;
	piece_add(p, a, in_lo < b ? in_lo : b, OPS_IDLE, BD_UNEXPLAINED);
	if (in_lo < in_hi)
		idle_inside(p, in_lo, in_hi);
	piece_add(p, in_hi > a ? in_hi : a, b, OPS_IDLE, BD_UNEXPLAINED);
}

size_t
bd_pieces(const struct bd_event *ev, size_t n, const struct bd_seg *seg,
    size_t nseg, int64_t first, int64_t last, int64_t lo, int64_t hi,
    struct bd_piece **out)
{
	struct pieces p = { .seg = seg, .nseg = nseg, .first = first,
	    .last = last };

	sweep(ev, n, lo, hi, piece_stretch, &p);
	*out = p.v;
	return p.n;
}

static int
ivcmp(const void *a, const void *b)
{
	const struct bd_iv *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

size_t
bd_merge(struct bd_iv *iv, size_t n)
{
	size_t k = 0;

	sort_once(iv, n, sizeof(*iv), ivcmp);
	for (size_t i = 0; i < n; i++) {
		if (iv[i].end <= iv[i].start)
			continue;
		if (k > 0 && iv[i].start <= iv[k - 1].end) {
			if (iv[i].end > iv[k - 1].end)
				iv[k - 1].end = iv[i].end;
		} else
			iv[k++] = iv[i];
	}
	return k;
}

/* The first of the merged iv[0..n) that ends after t. */
static size_t
first_after(const struct bd_iv *iv, size_t n, int64_t t)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (iv[m].end <= t)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

int64_t
bd_covered(const struct bd_iv *iv, size_t n, int64_t lo, int64_t hi)
{
	int64_t sum = 0;

	for (size_t i = first_after(iv, n, lo); i < n && iv[i].start < hi;
	    i++) {
		int64_t s = iv[i].start > lo ? iv[i].start : lo;
		int64_t e = iv[i].end < hi ? iv[i].end : hi;

		if (e > s)
			sum += e - s;
	}
	return sum;
}

bool
bd_is_sync_call(const char *name)
{
	return strcasestr(name, "synchronize") != NULL ||
	    strcmp(name, "aten::_local_scalar_dense") == 0;
}

static int
eventcmp(const void *a, const void *b)
{
	const struct bd_event *x = a, *y = b;

	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->end > y->end) - (x->end < y->end);
}

struct segs {
	struct bd_seg *v;
	size_t	 n, cap;
};

static void
seg_add(struct segs *s, int64_t start, int64_t end, enum bd_idle cls)
{
	if (end <= start)
		return;
	if (s->n > 0 && s->v[s->n - 1].cls == cls &&
	    s->v[s->n - 1].end == start) {
		s->v[s->n - 1].end = end;
		return;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct bd_seg *v = reallocarray(s->v, cap, sizeof(*v));

		if (v == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct bd_seg){ start, end, cls };
}

/* The gap [a, b) before next, as pieces of its classes. */
static void
classify_gap(struct segs *s, int64_t a, int64_t b, const struct bd_event *next,
    int64_t threshold, const struct bd_iv *sync, size_t nsync)
{
	int64_t t = a;

	if (next->has_launch && next->launch > a) {
		seg_add(s, a, b, BD_HOST_WAIT);
		return;
	}
	if (b - a < threshold) {
		seg_add(s, a, b, BD_LAUNCH_GAP);
		return;
	}
	for (size_t i = first_after(sync, nsync, a); i < nsync &&
	    sync[i].start < b; i++) {
		int64_t ss = sync[i].start > a ? sync[i].start : a;
		int64_t se = sync[i].end < b ? sync[i].end : b;

		seg_add(s, t, ss, BD_UNEXPLAINED);
		seg_add(s, ss, se, BD_SYNC);
		t = se;
	}
	seg_add(s, t, b, BD_UNEXPLAINED);
}

size_t
bd_idle_segments(struct bd_event *ev, size_t n, int64_t threshold,
    const struct bd_iv *sync, size_t nsync, struct bd_seg **out)
{
	struct segs s = { 0 };
	int64_t end;

	*out = NULL;
	if (n == 0)
		return 0;
	sort_once(ev, n, sizeof(*ev), eventcmp);
	end = ev[0].end;
	for (size_t i = 1; i < n; i++) {
		if (ev[i].start > end)
			classify_gap(&s, end, ev[i].start, &ev[i], threshold,
			    sync, nsync);
		if (ev[i].end > end)
			end = ev[i].end;
	}
	*out = s.v;
	return s.n;
}

void
bd_idle_window(const struct bd_seg *seg, size_t n, int64_t first,
    int64_t last, int64_t lo, int64_t hi, int64_t out[BD_NIDLE])
{
	if (hi <= lo)
		return;
	/* outside the card's events: nothing ended or began there */
	if (first > lo)
		out[BD_UNEXPLAINED] += (first < hi ? first : hi) - lo;
	if (last < hi)
		out[BD_UNEXPLAINED] += hi - (last > lo ? last : lo);
	if (first >= hi || last <= lo)
		return;
	for (size_t i = 0; i < n; i++) {
		int64_t s = seg[i].start > lo ? seg[i].start : lo;
		int64_t e = seg[i].end < hi ? seg[i].end : hi;

		if (e > s)
			out[seg[i].cls] += e - s;
	}
}

void
bd_stream_idle(const struct bd_event *ev, size_t n, int64_t threshold,
    const struct bd_iv *sync, size_t nsync, int64_t out[BD_NIDLE])
{
	for (size_t i = 1; i < n; i++) {
		int64_t prev = ev[i - 1].end, gap = ev[i].start - prev, in;

		if (ev[i].has_launch && ev[i].launch > prev)
			out[BD_HOST_WAIT] += gap;
		else if (gap < threshold)
			out[BD_LAUNCH_GAP] += gap;
		else {
			in = bd_covered(sync, nsync, prev, ev[i].start);
			out[BD_SYNC] += in;
			out[BD_UNEXPLAINED] += gap - in;
		}
	}
}

static const char *const verdict_names[BD_NVERDICT] = {
	[BD_COMPUTE_BOUND] = "compute-bound",
	[BD_DATA_BOUND] = "data-movement-bound",
	[BD_COMM_BOUND] = "communication-bound",
	[BD_HOST_BOUND] = "host-bound",
	[BD_IDLE] = "idle",
	[BD_MIXED] = "mixed",
};

const char *
bd_verdict_name(enum bd_verdict v)
{
	return v < BD_NVERDICT ? verdict_names[v] : "?";
}

static double
share(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

enum bd_verdict
bd_verdict(const struct bd_temporal *tm, const int64_t idle[BD_NIDLE],
    char *why, size_t len)
{
	static const struct {
		enum ops_category cat;
		enum bd_verdict v;
		const char *name;
	} bound[] = {
		{ OPS_COMPUTE, BD_COMPUTE_BOUND, "compute" },
		{ OPS_COMM, BD_COMM_BOUND, "communication" },
		{ OPS_MEMORY, BD_DATA_BOUND, "data movement" },
	};
	double idle_pct = share(tm->t[OPS_IDLE], tm->span);
	double host = share(idle[BD_HOST_WAIT] + idle[BD_LAUNCH_GAP],
	    tm->t[OPS_IDLE]);
	size_t best = 0;

	if (tm->span <= 0) {
		snprintf(why, len, "an empty span");
		return BD_IDLE;
	}
	if (idle_pct >= BD_VERDICT_IDLE_PCT) {
		bool by_host = host >= BD_VERDICT_HOST_PCT;

		snprintf(why, len, "idle %.1f %% >= %d %%; host wait + launch "
		    "gap %.1f %% of idle %s %d %%", idle_pct,
		    BD_VERDICT_IDLE_PCT, host, by_host ? ">=" : "<",
		    BD_VERDICT_HOST_PCT);
		return by_host ? BD_HOST_BOUND : BD_IDLE;
	}
	for (size_t i = 1; i < sizeof(bound) / sizeof(bound[0]); i++)
		if (tm->t[bound[i].cat] > tm->t[bound[best].cat])
			best = i;
	if (share(tm->t[bound[best].cat], tm->span) >= BD_VERDICT_BOUND_PCT) {
		snprintf(why, len, "%s %.1f %% >= %d %%",
		    bound[best].name, share(tm->t[bound[best].cat], tm->span),
		    BD_VERDICT_BOUND_PCT);
		return bound[best].v;
	}
	snprintf(why, len, "none >= %d %%: compute %.1f, data movement "
	    "%.1f, communication %.1f, other %.1f, idle %.1f %%",
	    BD_VERDICT_BOUND_PCT,
	    share(tm->t[OPS_COMPUTE], tm->span),
	    share(tm->t[OPS_MEMORY], tm->span),
	    share(tm->t[OPS_COMM], tm->span),
	    share(tm->t[OPS_OTHER], tm->span), idle_pct);
	return BD_MIXED;
}

/* Whether a PCIe bandwidth is quiet: under 1 % of the link, or near 0. */
static bool
pcie_quiet(const struct bd_evidence *ev, double gibps)
{
	return ev->has_link ? pcie_link_pct(gibps, ev->link_gbps) <
	    BD_PCIE_LOW_PCT : gibps < BD_QUIET_GIBPS;
}

/* The PCIe figures of the third rule, for its line. */
static void
pcie_words(const struct bd_evidence *ev, char *buf, size_t len)
{
	if (ev->has_link)
		snprintf(buf, len, "PCIe rx %.2f %%, tx %.2f %% < %d %% of "
		    "the link", pcie_link_pct(ev->rx_gibps, ev->link_gbps),
		    pcie_link_pct(ev->tx_gibps, ev->link_gbps),
		    BD_PCIE_LOW_PCT);
	else
		snprintf(buf, len, "PCIe rx %.3f, tx %.3f GiB/s < %g GiB/s "
		    "(link unknown)", ev->rx_gibps, ev->tx_gibps,
		    BD_QUIET_GIBPS);
}

bool
bd_contradicts(const struct bd_temporal *tm, const struct bd_evidence *ev,
    char *why, size_t len)
{
	double compute = share(tm->t[OPS_COMPUTE], tm->span);
	double idle = share(tm->t[OPS_IDLE], tm->span);
	double data = share(tm->t[OPS_MEMORY], tm->span);
	char pcie[128];

	if (tm->span <= 0)
		return false;
	if (ev->has_busy && ev->busy_pct < BD_BUSY_LOW_PCT &&
	    compute >= BD_COMPUTE_HIGH_PCT) {
		snprintf(why, len, "mean busy %.1f %% < %d %% while the trace "
		    "has compute %.1f %% >= %d %% of the span", ev->busy_pct,
		    BD_BUSY_LOW_PCT, compute, BD_COMPUTE_HIGH_PCT);
		return true;
	}
	if (ev->has_busy && ev->busy_pct >= BD_BUSY_HIGH_PCT &&
	    idle >= BD_IDLE_HIGH_PCT) {
		snprintf(why, len, "mean busy %.1f %% >= %d %% while the trace "
		    "has the card idle %.1f %% >= %d %% of the span",
		    ev->busy_pct, BD_BUSY_HIGH_PCT, idle, BD_IDLE_HIGH_PCT);
		return true;
	}
	if (ev->has_mem && ev->has_pcie && data >= BD_DATA_HIGH_PCT &&
	    ev->mem_gibps < BD_QUIET_GIBPS && pcie_quiet(ev, ev->rx_gibps) &&
	    pcie_quiet(ev, ev->tx_gibps)) {
		pcie_words(ev, pcie, sizeof(pcie));
		snprintf(why, len, "the trace has data movement %.1f %% >= %d "
		    "%% of the span while memory moves %.3f GiB/s < %g GiB/s "
		    "and %s", data, BD_DATA_HIGH_PCT, ev->mem_gibps,
		    BD_QUIET_GIBPS, pcie);
		return true;
	}
	return false;
}

static bool
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool
bd_hta_is_compute(const char *name)
{
	static const char *const prefixes[] = {
		"nccl", "hip", "hccl", "dma", "runFunction",
		"Stream Wait Event", "job_exe", "packet", "pe_exe",
		"cpum_exe_subgraph", "collective_subgraph_execution",
	};
	static const char *const inside[] = {
		"ncclKernel", "Memcpy", "Memset", "dma", "Sync",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts(name, prefixes[i]))
			return false;
	for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++)
		if (strstr(name, inside[i]) != NULL)
			return false;
	return !(starts(name, "cuda") && strstr(name + 4, "LaunchKernel"));
}

static int
htacmp(const void *a, const void *b)
{
	const struct bd_hta_event *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* HTA's union of the events of ev[0..n) (sorted) that pass. */
static int64_t
hta_union(const struct bd_hta_event *ev, size_t n, bool compute_only)
{
	int64_t total = 0, cs = 0, ce = 0;
	bool open = false;

	for (size_t i = 0; i < n; i++) {
		if (compute_only && !ev[i].compute)
			continue;
		if (!open || ev[i].start > ce) {
			if (open)
				total += ce - cs;
			cs = ev[i].start;
			ce = ev[i].end;
			open = true;
		} else if (ev[i].end > ce)
			ce = ev[i].end;
	}
	return open ? total + ce - cs : total;
}

void
bd_hta_temporal(struct bd_hta_event *ev, size_t n,
    struct bd_hta_temporal *out)
{
	int64_t lo, hi;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	sort_once(ev, n, sizeof(*ev), htacmp);
	lo = ev[0].start;
	hi = ev[0].end;
	for (size_t i = 1; i < n; i++)
		if (ev[i].end > hi)
			hi = ev[i].end;
	out->span = hi - lo;
	out->idle = out->span - hta_union(ev, n, false);
	out->compute = hta_union(ev, n, true);
	out->non_compute = out->span - out->idle - out->compute;
}
