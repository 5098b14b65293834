/*
 * bdtrace: a trace's events gathered for the breakdown, and the
 * breakdown of them (bdtrace.h).
 */
#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "bdnames.h"
#include "bdtrace.h"
#include "client.h"
#include "devevents.h"
#include "trace.h"

/* A device event of the cards' set. */
struct aev {
	int64_t	 card;
	int64_t	 start, end;
	enum ops_category cat;
	bool	 has_corr, has_stream;
	int64_t	 corr;
	int64_t	 key;		/* args.stream, or the track's hash */
	uint64_t order;		/* in the trace */
};

/* A host event with a correlation id: a launch. */
struct launch {
	int64_t	 corr;
	int64_t	 ts;
	uint64_t order;
};

/* An event of HTA's set: one with ts, dur and cat, not of cat Trace. */
struct hrow {
	uint64_t idx;		/* its place in traceEvents */
	int64_t	 ts, dur;	/* as read, ns */
	int64_t	 stream, corr;	/* -1 when none */
	bool	 gpu, idle_cat, compute, step_name, has_card;
	int64_t	 card;
	/* worked out by compute */
	int64_t	 t0, t1;	/* HTA's times, ns */
	size_t	 mult;		/* times kept: 0 when dropped */
	int64_t	 link;		/* the launch's idx, -1 for none */
};

/*
 * The events at ts 0 are kept apart (the *0 vectors, no_card0) until
 * bd_trace_finish knows whether the header has a base: a trace with one
 * clamps earlier times to 0, so its events at 0 are left out.  The base
 * may come after the events (Kineto writes it last).
 */
struct bd_trace {
	bool	 has_base;
	bool	 keep_pieces;	/* bd_trace_keep_pieces */
	struct vec aev, launches, sync, rows;
	struct vec aev0, launches0, sync0;
	uint64_t no_card0;
	struct bd_names facts;		/* the rules' answers by name */
	struct devevent_pairs pairs;
	uint64_t element;	/* the next element's place */
	bool	 floating;	/* some ts a float, or missing */
	char	**names;	/* distinct step names */
	size_t	 nnames;
	uint64_t no_card;
};


static void
add_name(struct bd_trace *t, const char *s)
{
	char **v;

	if (!bd_is_step_name(s))
		return;
	for (size_t i = 0; i < t->nnames; i++)
		if (strcmp(t->names[i], s) == 0)
			return;
	if ((v = reallocarray(t->names, t->nnames + 1, sizeof(*v))) == NULL ||
	    (v[t->nnames] = strdup(s)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	t->names = v;
	t->nnames++;
}



/* HTA's event of ev, if it is one. */
static void
keep_row(struct bd_trace *t, const struct trace_event *ev, uint64_t idx)
{
	const struct bd_namefacts *facts;
	struct hrow *r;

	add_name(t, ev->name);
	add_name(t, ev->cat);
	if (!ev->has_ts || !ev->has_dur || ev->cat[0] == '\0' ||
	    strcmp(ev->cat, "Trace") == 0)
		return;
	facts = bd_names_facts(&t->facts, ev->name, ev->cat);
	r = vec_push(&t->rows);
	memset(r, 0, sizeof(*r));
	r->idx = idx;
	r->ts = ev->ts_ns;
	r->dur = ev->dur_ns;
	r->stream = ev->has_stream ? ev->stream_id : -1;
	r->corr = ev->has_correlation ? ev->correlation : -1;
	r->gpu = (r->stream >= 0 && r->corr >= 0) || facts->sync_name;
	r->idle_cat = facts->idle_cat;
	r->compute = facts->hta_compute;
	r->step_name = facts->step;
	r->has_card = ev->has_device || ev->has_pid;
	r->card = ev->has_device ? ev->device : ev->pid;
}

void
bd_trace_event(const struct trace_event *ev, void *arg)
{
	struct bd_trace *t = arg;
	uint64_t idx = t->element++;
	int64_t card, begin, start, end;
	bool has_card, zero;

	if (!ev->has_ts || ev->ts_float)
		t->floating = true;
	keep_row(t, ev, idx);
	if (!ev->has_ts)
		return;
	zero = ev->ts_ns == 0;
	start = ev->ts_ns;
	end = start + (ev->has_dur ? ev->dur_ns : 0);
	if (devevent_is_device(ev, &has_card, &card)) {
		struct aev *a;

		if (ev->ph == 'B' || ev->ph == 'E') {
			if (!has_card || !devevent_pair(&t->pairs, ev, card,
			    &begin) || begin > end)
				return;
			start = begin;
			zero = zero || begin == 0;
		}
		if (!has_card) {
			if (zero)
				t->no_card0++;
			else
				t->no_card++;
			return;
		}
		a = vec_push(zero ? &t->aev0 : &t->aev);
		*a = (struct aev){ .card = card, .start = start, .end = end,
		    .cat = bd_names_facts(&t->facts, ev->name, ev->cat)->category,
		    .has_corr = ev->has_correlation, .corr = ev->correlation,
		    .has_stream = ev->has_stream && ev->stream_id != -1,
		    .key = ev->has_stream && ev->stream_id != -1 ?
		    ev->stream_id : (int64_t)ev->track, .order = idx };
	} else if (devevent_is_host(ev)) {
		if (ev->has_correlation) {
			struct launch *l = vec_push(zero ? &t->launches0 :
			    &t->launches);

			*l = (struct launch){ ev->correlation, start, idx };
		}
		if (bd_names_facts(&t->facts, ev->name, ev->cat)->sync) {
			struct bd_iv *iv = vec_push(zero ? &t->sync0 : &t->sync);

			*iv = (struct bd_iv){ start, end };
		}
	}
}

struct bd_trace *
bd_trace_new(void)
{
	struct bd_trace *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	t->aev.size = t->aev0.size = sizeof(struct aev);
	t->launches.size = t->launches0.size = sizeof(struct launch);
	t->sync.size = t->sync0.size = sizeof(struct bd_iv);
	t->rows.size = sizeof(struct hrow);
	return t;
}

/* Append the n elements of size at p to v. */
static void
vec_append(struct vec *v, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		memcpy(vec_push(v), (const char *)p + i * v->size, v->size);
}

int
bd_trace_finish(struct bd_trace *t, const char *path, bool has_base,
    bool none_ok)
{
	t->has_base = has_base;
	if (!has_base) {
		vec_append(&t->aev, t->aev0.p, t->aev0.n);
		vec_append(&t->launches, t->launches0.p, t->launches0.n);
		vec_append(&t->sync, t->sync0.p, t->sync0.n);
		t->no_card += t->no_card0;
	}
	t->aev0.n = t->launches0.n = t->sync0.n = 0;
	t->no_card0 = 0;
	if (t->aev.n == 0 && !none_ok) {
		warnx("%s: no device events: no complete event of cat kernel, "
		    "gpu_memcpy, gpu_memset or cuda_sync, nor with a stream in "
		    "its args, nor begin and end with the card's cycle stamps "
		    "(spyremon(1), export --breakdown)", path);
		return CLIENT_EXIT_FAILED;
	}
	return CLIENT_EXIT_OK;
}

int
bd_trace_read(const char *path, bool has_base, const char *step_pattern,
    bool none_ok, struct bd_trace **out)
{
	struct bd_trace *t = bd_trace_new();
	struct trace_options opts = { .step_pattern = step_pattern,
	    .on_event = bd_trace_event, .arg = t };
	struct trace_info info;
	struct trace_error err;
	char why[320];
	int rc;

	*out = NULL;
	rc = trace_read(path, &opts, &info, &err);
	trace_info_free(&info);
	if (rc != TRACE_OK) {
		warnx("%s: %s", path, trace_strerror(&err, why, sizeof(why)));
		bd_trace_free(t);
		return rc == TRACE_ERR_IO ? CLIENT_EXIT_USAGE :
		    CLIENT_EXIT_FAILED;
	}
	if ((rc = bd_trace_finish(t, path, has_base, none_ok)) !=
	    CLIENT_EXIT_OK) {
		bd_trace_free(t);
		return rc;
	}
	*out = t;
	return CLIENT_EXIT_OK;
}

size_t
bd_step_names(struct bd_trace *const *t, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < t[i]->nnames; k++) {
			bool seen = false;

			for (size_t j = 0; j < i && !seen; j++)
				for (size_t m = 0; m < t[j]->nnames; m++)
					if (strcmp(t[j]->names[m],
					    t[i]->names[k]) == 0) {
						seen = true;
						break;
					}
			count += !seen;
		}
	return count;
}

/* ns as the double that Python reads from its decimal µs text. */
static double
as_double_us(int64_t ns)
{
	char buf[48];
	int64_t q = ns / 1000, r = ns % 1000;

	/*
	 * Below 2^53 ns is a double exactly and IEEE division rounds once:
	 * the nearest double to ns / 1000, as strtod gives of its text.
	 */
	if (ns > -(INT64_C(1) << 53) && ns < (INT64_C(1) << 53))
		return (double)ns / 1000.0;

	if (r < 0)
		r = -r;
	snprintf(buf, sizeof(buf), "%s%" PRId64 ".%03" PRId64,
	    ns < 0 && q == 0 ? "-" : "", q, r);
	return strtod(buf, NULL);
}

static int
i64cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* How many of v[0..n) (sorted) equal k. */
static size_t
count_of(const int64_t *v, size_t n, int64_t k)
{
	size_t a = 0, b = n, lo;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m] < k)
			a = m + 1;
		else
			b = m;
	}
	lo = a;
	b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m] <= k)
			a = m + 1;
		else
			b = m;
	}
	return a - lo;
}

/* The launches by correlation, then place in the trace. */
static int
launchcmp(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;

	if (x->corr != y->corr)
		return (x->corr > y->corr) - (x->corr < y->corr);
	return (x->order > y->order) - (x->order < y->order);
}

/* The last of l[0..n) (sorted) with correlation corr, or NULL. */
static const struct launch *
last_launch(const struct launch *l, size_t n, int64_t corr)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (l[m].corr <= corr)
			a = m + 1;
		else
			b = m;
	}
	return a > 0 && l[a - 1].corr == corr ? &l[a - 1] : NULL;
}

/* HTA's times, kept events and links (tests/tools/hta_reference.py). */
static void
hta_prepare(struct bd_trace *t, size_t nstep_names, struct bd_result *res)
{
	struct hrow *rows = t->rows.p;
	size_t n = t->rows.n, nkept = 0, ncpu = 0;
	struct launch *cpu;
	int64_t *kept, last = INT64_MIN, first = INT64_MAX;
	bool filter = nstep_names >= 2, has_cpu = false, has_step = false;

	for (size_t i = 0; i < n; i++) {
		struct hrow *r = &rows[i];

		if (t->floating) {
			double ts = as_double_us(r->ts), dur = as_double_us(r->dur);

			r->t0 = (int64_t)ceil(ts) * 1000;
			r->t1 = (int64_t)floor(ts + dur) * 1000;
		} else {
			r->t0 = r->ts;
			r->t1 = r->ts + r->dur;
		}
		if (r->gpu)
			continue;
		has_cpu = true;
		if (r->t0 < first)
			first = r->t0;
		if (r->step_name && r->t0 > last) {
			last = r->t0;
			has_step = true;
		}
	}
	res->hta_rounded = t->floating;
	filter = filter && has_cpu;
	res->hta_last_step_dropped = filter;
	if (!has_step)
		last = first;
	if ((kept = calloc(n + 1, sizeof(*kept))) == NULL ||
	    (cpu = calloc(n + 1, sizeof(*cpu))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct hrow *r = &rows[i];

		if (r->gpu)
			continue;
		r->mult = !filter || r->t0 < last;
		if (r->mult > 0)
			kept[nkept++] = r->corr;
		if (r->corr != -1)
			cpu[ncpu++] = (struct launch){ r->corr, 0, r->idx };
	}
	sort_once(kept, nkept, sizeof(*kept), i64cmp);
	sort_once(cpu, ncpu, sizeof(*cpu), launchcmp);
	for (size_t i = 0; i < n; i++) {
		struct hrow *r = &rows[i];
		const struct launch *l;

		r->link = -1;
		if (!r->gpu)
			continue;
		r->mult = filter ? count_of(kept, nkept, r->corr) : 1;
		if (r->corr == -1)
			continue;
		l = last_launch(cpu, ncpu, r->corr);
		r->link = l != NULL ? (int64_t)l->order : 0;
	}
	free(kept);
	free(cpu);
}

/* The kept row of place idx, or NULL. */
static const struct hrow *
row_at(const struct bd_trace *t, int64_t idx)
{
	const struct hrow *rows = t->rows.p;
	size_t a = 0, b = t->rows.n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if ((int64_t)rows[m].idx < idx)
			a = m + 1;
		else
			b = m;
	}
	return a < t->rows.n && (int64_t)rows[a].idx == idx &&
	    rows[a].mult > 0 ? &rows[a] : NULL;
}

/* A stream's event of HTA's set, in HTA's order. */
struct sev {
	int64_t	 stream;
	uint64_t order;
	const struct hrow *r;
};

static int
sevcmp(const void *a, const void *b)
{
	const struct sev *x = a, *y = b;

	if (x->stream != y->stream)
		return (x->stream > y->stream) - (x->stream < y->stream);
	if (x->r->t0 != y->r->t0)
		return (x->r->t0 > y->r->t0) - (x->r->t0 < y->r->t0);
	return (x->order > y->order) - (x->order < y->order);
}

static struct bd_stream *
add_stream(struct bd_result *res, size_t *cap)
{
	struct bd_stream *s;

	if (res->nstreams == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		if ((s = reallocarray(res->streams, *cap, sizeof(*s))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		res->streams = s;
	}
	s = &res->streams[res->nstreams++];
	memset(s, 0, sizeof(*s));
	return s;
}

/* HTA's temporal breakdown, and the streams from HTA's events. */
static void
hta_compute(struct bd_trace *t, int64_t threshold, const struct bd_iv *sync,
    size_t nsync, struct bd_result *res)
{
	const struct hrow *rows = t->rows.p;
	size_t n = t->rows.n, nt = 0, ns = 0, cap = 0;
	struct bd_hta_event *te;
	struct bd_event *ev;
	struct sev *se;

	for (size_t i = 0; i < n; i++)
		if (rows[i].stream != -1 && rows[i].idle_cat)
			ns += rows[i].mult;
	if ((te = calloc(n + 1, sizeof(*te))) == NULL ||
	    (se = calloc(ns + 1, sizeof(*se))) == NULL ||
	    (ev = calloc(ns + 1, sizeof(*ev))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	ns = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hrow *r = &rows[i];

		if (r->stream == -1 || r->mult == 0)
			continue;
		te[nt++] = (struct bd_hta_event){ r->t0, r->t1, r->compute };
		/* the kept device events come first, then the host's */
		for (size_t k = 0; r->idle_cat && k < r->mult; k++)
			se[ns++] = (struct sev){ r->stream,
			    (res->hta_last_step_dropped && !r->gpu ? n : 0) +
			    i, r };
	}
	res->has_hta = nt > 0;
	bd_hta_temporal(te, nt, &res->hta);
	sort_once(se, ns, sizeof(*se), sevcmp);
	res->streams_hta = ns > 0;
	for (size_t i = 0; i < ns;) {
		struct bd_stream *s = add_stream(res, &cap);
		size_t k = 0;

		s->stream = se[i].stream;
		s->has_card = se[i].r->has_card;
		s->card = se[i].r->card;
		for (; i < ns && se[i].stream == s->stream; i++, k++) {
			const struct hrow *l = row_at(t, se[i].r->link);

			ev[k] = (struct bd_event){ se[i].r->t0, se[i].r->t1,
			    OPS_COMPUTE, l != NULL, l != NULL ? l->t0 : 0 };
		}
		s->events = k;
		bd_stream_idle(ev, k, threshold, sync, nsync, s->idle);
	}
	free(te);
	free(se);
	free(ev);
}

static int
aevcmp(const void *a, const void *b)
{
	const struct aev *x = a, *y = b;

	if (x->card != y->card)
		return (x->card > y->card) - (x->card < y->card);
	return (x->order > y->order) - (x->order < y->order);
}

static int
bdevcmp(const void *a, const void *b)
{
	const struct bd_event *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* The streams of one card from its own events, one per track (Spyre). */
static void
card_streams(const struct aev *a, const struct bd_event *ev, size_t n,
    int64_t threshold, const struct bd_iv *sync, size_t nsync,
    struct bd_result *res, size_t *cap)
{
	struct bd_event *sv;
	int64_t *keys;
	size_t nkeys = 0;

	if ((keys = calloc(n, sizeof(*keys))) == NULL ||
	    (sv = calloc(n, sizeof(*sv))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		while (k < nkeys && keys[k] != a[i].key)
			k++;
		if (k == nkeys)
			keys[nkeys++] = a[i].key;
	}
	for (size_t k = 0; k < nkeys; k++) {
		struct bd_stream *s = add_stream(res, cap);
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (a[i].key == keys[k])
				sv[m++] = ev[i];
		sort_once(sv, m, sizeof(*sv), bdevcmp);
		s->has_card = true;
		s->card = a[0].card;
		s->stream = a[0].has_stream ? keys[k] : (int64_t)k;
		s->events = m;
		bd_stream_idle(sv, m, threshold, sync, nsync, s->idle);
	}
	free(keys);
	free(sv);
}

/*
 * The events of sorted[0..n) (by start; maxend[i] the latest end of
 * sorted[0..i]) that may overlap [lo, hi): from *from up to the one
 * returned, by two binary searches, so that each step's window costs the
 * events near it rather than all the card's.
 */
static size_t
near_events(const struct bd_event *sorted, const int64_t *maxend, size_t n,
    int64_t lo, int64_t hi, size_t *from)
{
	size_t a = 0, b = n, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (maxend[m] > lo)
			b = m;
		else
			a = m + 1;
	}
	*from = a;
	for (b = n; a < b;) {
		m = a + (b - a) / 2;
		if (sorted[m].start < hi)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The idle pieces of seg[0..n) (in time order, apart) that may overlap [lo, hi). */
static size_t
near_segs(const struct bd_seg *seg, size_t n, int64_t lo, int64_t hi,
    size_t *from)
{
	size_t a = 0, b = n, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (seg[m].end > lo)
			b = m;
		else
			a = m + 1;
	}
	*from = a;
	for (b = n; a < b;) {
		m = a + (b - a) / 2;
		if (seg[m].start < hi)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* One window of a card's events; with pieces, its pieces too. */
static void
window(const struct bd_event *ev, size_t n, const struct bd_seg *seg,
    size_t nseg, int64_t first, int64_t last, const char *name, int64_t lo,
    int64_t hi, bool pieces, struct bd_window *w)
{
	memset(w, 0, sizeof(*w));
	w->name = name;
	w->lo = lo;
	w->hi = hi;
	bd_temporal(ev, n, lo, hi, &w->tm);
	bd_idle_window(seg, nseg, first, last, lo, hi, w->idle);
	if (pieces)
		w->npieces = bd_pieces(ev, n, seg, nseg, first, last, lo, hi,
		    &w->pieces);
}

void
bd_trace_keep_pieces(struct bd_trace *t)
{
	t->keep_pieces = true;
}

void
bd_trace_compute(struct bd_trace *t, int64_t threshold,
    const struct bd_step *steps, size_t nsteps, size_t nstep_names,
    struct bd_result *res)
{
	struct aev *a = t->aev.p;
	struct launch *l = t->launches.p;
	struct bd_iv *sync = t->sync.p;
	size_t nsync, cap = 0;
	struct bd_event *ev, *sorted;
	int64_t *maxend;

	memset(res, 0, sizeof(*res));
	res->nsteps = nsteps;
	res->sync_calls = t->sync.n;
	res->unpaired = t->pairs.unpaired + devevent_pairs_open(&t->pairs);
	res->no_card = t->no_card;
	nsync = bd_merge(sync, t->sync.n);
	hta_prepare(t, nstep_names, res);
	hta_compute(t, threshold, sync, nsync, res);
	sort_once(l, t->launches.n, sizeof(*l), launchcmp);
	sort_once(a, t->aev.n, sizeof(*a), aevcmp);
	if ((ev = calloc(t->aev.n, sizeof(*ev))) == NULL ||
	    (sorted = calloc(t->aev.n, sizeof(*sorted))) == NULL ||
	    (res->cards = calloc(t->aev.n, sizeof(*res->cards))) == NULL ||
	    (maxend = calloc(t->aev.n, sizeof(*maxend))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < t->aev.n; i++) {
		const struct launch *x = a[i].has_corr ? last_launch(l,
		    t->launches.n, a[i].corr) : NULL;

		ev[i] = (struct bd_event){ a[i].start, a[i].end, a[i].cat,
		    x != NULL, x != NULL ? x->ts : 0 };
	}
	for (size_t i = 0; i < t->aev.n;) {
		struct bd_card *c = &res->cards[res->ncards++];
		struct bd_seg *seg;
		size_t j = i, nseg;
		int64_t first, last;

		while (j < t->aev.n && a[j].card == a[i].card)
			j++;
		c->card = a[i].card;
		c->events = j - i;
		first = ev[i].start;
		last = ev[i].end;
		for (size_t k = i; k < j; k++) {
			if (ev[k].start < first)
				first = ev[k].start;
			if (ev[k].end > last)
				last = ev[k].end;
		}
		memcpy(sorted, ev + i, (j - i) * sizeof(*ev));
		nseg = bd_idle_segments(sorted, j - i, threshold, sync, nsync,
		    &seg);
		window(ev + i, j - i, seg, nseg, first, last, "total", first,
		    last, t->keep_pieces, &c->total);
		if (nsteps > 0 && (c->steps = calloc(nsteps,
		    sizeof(*c->steps))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		/* sorted: the card's events by start (bd_idle_segments) */
		for (size_t k = 0; k < j - i; k++)
			maxend[k] = k > 0 && maxend[k - 1] > sorted[k].end ?
			    maxend[k - 1] : sorted[k].end;
		for (size_t s = 0; s < nsteps; s++) {
			size_t e0, e1, s0, s1;

			e1 = near_events(sorted, maxend, j - i, steps[s].lo,
			    steps[s].hi, &e0);
			s1 = near_segs(seg, nseg, steps[s].lo, steps[s].hi, &s0);
			window(sorted + e0, e1 - e0, seg + s0, s1 - s0, first,
			    last, steps[s].name, steps[s].lo, steps[s].hi,
			    t->keep_pieces, &c->steps[s]);
		}
		if (!res->streams_hta)
			card_streams(a + i, ev + i, j - i, threshold, sync,
			    nsync, res, &cap);
		free(seg);
		i = j;
	}
	free(ev);
	free(sorted);
	free(maxend);
}

void
bd_result_free(struct bd_result *res)
{
	for (size_t i = 0; i < res->ncards; i++) {
		free(res->cards[i].total.pieces);
		for (size_t s = 0; res->cards[i].steps != NULL &&
		    s < res->nsteps; s++)
			free(res->cards[i].steps[s].pieces);
		free(res->cards[i].steps);
	}
	free(res->cards);
	free(res->streams);
	memset(res, 0, sizeof(*res));
}

void
bd_trace_free(struct bd_trace *t)
{
	if (t == NULL)
		return;
	free(t->aev.p);
	free(t->launches.p);
	free(t->sync.p);
	free(t->aev0.p);
	free(t->launches0.p);
	free(t->sync0.p);
	bd_names_free(&t->facts);
	free(t->rows.p);
	devevent_pairs_free(&t->pairs);
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t);
}
