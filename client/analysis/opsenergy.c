/*
 * opsenergy: operators' energy from a trace and the stored samples
 * (opsenergy.h).
 *
 * The trace's events are gathered in one pass of the streaming reader,
 * ours or (ops_events) another's, placed on the samples' clock after it:
 * each device event as an interval on its card under its operator's
 * index (names are interned in a hash table), each host event as an
 * interval of its own.  The samples are then read once, span and a
 * margin, and each card's share worked out by attrib_card().  Memory
 * grows with the device and host events, 24 and 16 bytes each.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "client.h"
#include "opsenergy.h"
#include "summary.h"
#include "timeparse.h"

/*
 * The margin read on both sides of the span: samples there are the
 * neighbours of the first and last ones for the bound, not energy.
 */
#define NEIGHBOUR_PAD_NS	DB_MAX_INTERVAL_NS

/* A trace card's device events, and a DB card's samples. */
struct bucket {
	int64_t	 card;
	struct vec events;	/* struct attrib_event */
	struct vec samples;	/* struct attrib_sample */
	struct vec readings;	/* struct devcounter_reading */
	struct energy_acc acc;	/* the span's exact integral */
	bool	 used;		/* matched with a card of the result */
};

struct gather {
	const struct ops_request *rq;
	struct ops_result *out;
	struct vec names;	/* struct ops_name */
	uint32_t *slots;	/* hash table of indices + 1, 0 empty */
	size_t	 nslots;
	struct vec host;	/* struct attrib_iv */
	struct bucket *b;
	size_t	 nb;
	struct bucket *last;	/* of the previous event: most runs are long */
	struct devevent_pairs pairs;	/* B/E device events' open begins */
	/*
	 * Gathering while another reader reads the trace (ops_events): times
	 * on the trace's own clock, no host events unless host, and events
	 * at own time 0, which a base makes Kineto's clamped ones, kept until
	 * the base is known (zero_no_card counts those without a card).
	 */
	bool	 collect, host_off;
	uint64_t zero_no_card;
};

static uint64_t
hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void
rehash(struct gather *g)
{
	size_t n = g->nslots ? 2 * g->nslots : 1024;
	const struct ops_name *names = g->names.p;

	free(g->slots);
	if ((g->slots = calloc(n, sizeof(*g->slots))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	g->nslots = n;
	for (size_t i = 0; i < g->names.n; i++) {
		size_t k = hash_name(names[i].name) & (n - 1);

		while (g->slots[k] != 0)
			k = (k + 1) & (n - 1);
		g->slots[k] = (uint32_t)i + 1;
	}
}

/* The index of name, added with its category if new. */
static uint32_t
intern(struct gather *g, const char *name, const char *cat)
{
	struct ops_name *nm;
	size_t k;

	if (2 * (g->names.n + 1) > g->nslots)
		rehash(g);
	k = hash_name(name) & (g->nslots - 1);
	for (; g->slots[k] != 0; k = (k + 1) & (g->nslots - 1)) {
		nm = (struct ops_name *)g->names.p + g->slots[k] - 1;
		if (strcmp(nm->name, name) == 0)
			return g->slots[k] - 1;
	}
	if (g->names.n >= UINT32_MAX - 1)
		errx(CLIENT_EXIT_FAILED, "too many operator names");
	nm = vec_push(&g->names);
	memset(nm, 0, sizeof(*nm));
	if ((nm->name = strdup(name)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	nm->category = devevent_category(name, cat);
	g->slots[k] = (uint32_t)g->names.n;
	return (uint32_t)g->names.n - 1;
}

static struct bucket *
bucket_of(struct gather *g, int64_t card)
{
	struct bucket *b;

	if (g->last != NULL && g->last->card == card)
		return g->last;
	for (size_t i = 0; i < g->nb; i++)
		if (g->b[i].card == card)
			return g->last = &g->b[i];
	if ((g->b = reallocarray(g->b, g->nb + 1, sizeof(*g->b))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	b = &g->b[g->nb++];
	memset(b, 0, sizeof(*b));
	b->card = card;
	b->events.size = sizeof(struct attrib_event);
	b->samples.size = sizeof(struct attrib_sample);
	b->readings.size = sizeof(struct devcounter_reading);
	energy_init(&b->acc);
	return g->last = b;
}

/* trace_options.on_event: keep the device and host events. */
static void
on_event(const struct trace_event *ev, void *arg)
{
	struct gather *g = arg;
	int64_t lo, hi, card, dur = ev->has_dur ? ev->dur_ns : 0;
	int64_t shift = g->collect ? 0 : g->rq->shift_ns;
	bool has_card;

	/* as the reader's tally: ts 0 under a base was clamped by Kineto */
	if (!ev->has_ts || (!g->collect && g->rq->info->has_base &&
	    ev->ts_ns == 0))
		return;
	if (__builtin_add_overflow(ev->ts_ns, shift, &lo) ||
	    __builtin_add_overflow(lo, dur, &hi))
		return;
	if (devevent_is_device(ev, &has_card, &card)) {
		struct attrib_event *e;
		int64_t begin;
		uint32_t op;

		if (ev->ph == 'B' || ev->ph == 'E') {
			/* a pair is one event, from its begin to its end */
			if (!has_card || !devevent_pair(&g->pairs, ev, card,
			    &begin))
				return;
			if (__builtin_add_overflow(begin, shift, &lo) ||
			    lo > hi)
				return;
		}
		g->out->device_events++;
		if (!has_card) {
			g->out->no_card++;
			g->zero_no_card += g->collect && ev->ts_ns == 0;
			return;
		}
		op = intern(g, ev->name, ev->cat);
		e = vec_push(&bucket_of(g, card)->events);
		*e = (struct attrib_event){ lo, hi, op,
		    ev->has_flops ? ev->flops : -1 };
		if (ev->has_counter) {
			struct devcounter_reading *rd =
			    vec_push(&bucket_of(g, card)->readings);

			*rd = (struct devcounter_reading){ .counter =
			    ev->counter, .cycles = ev->cycle_stamp, .t_ns = lo,
			    .call = op };
		}
	} else if (!g->host_off && devevent_is_host(ev)) {
		struct attrib_iv *h = vec_push(&g->host);

		g->out->host_events++;
		*h = (struct attrib_iv){ lo, hi };
	}
}

/* A trace without device events: an error unless rq->none_ok. */
static int
check_events(const struct gather *g)
{
	if (g->out->device_events == 0 && !g->rq->none_ok) {
		warnx("%s: no device events: no complete event of cat kernel, "
		    "gpu_memcpy, gpu_memset or cuda_sync, nor with a stream in "
		    "its args, nor begin and end with the card's cycle stamps "
		    "(spyremon(1), export --ops)", g->rq->path);
		return CLIENT_EXIT_FAILED;
	}
	return CLIENT_EXIT_OK;
}

static int
gather_events(struct gather *g)
{
	const struct ops_request *rq = g->rq;
	struct trace_options opts = {
		.step_pattern = rq->step_pattern, .on_event = on_event, .arg = g,
	};
	struct trace_info info;
	struct trace_error err;
	char why[320];
	int rc;

	rc = trace_read(rq->path, &opts, &info, &err);
	trace_info_free(&info);
	g->out->unpaired = g->pairs.unpaired + devevent_pairs_open(&g->pairs);
	devevent_pairs_free(&g->pairs);
	if (rc != TRACE_OK) {
		warnx("%s: %s", rq->path, trace_strerror(&err, why,
		    sizeof(why)));
		return rc == TRACE_ERR_IO ? CLIENT_EXIT_USAGE :
		    CLIENT_EXIT_FAILED;
	}
	return check_events(g);
}

/*
 * Events gathered on the trace's own clock (ops_events), placed: under a
 * base those at own time 0 go, as the reader's tally drops them; the rest
 * shift by rq->shift_ns, and one that would overflow goes too.
 */
static int
place_collected(struct gather *g)
{
	const struct ops_request *rq = g->rq;
	bool base = rq->info->has_base;
	int64_t sh = rq->shift_ns;
	size_t k;

	g->out->unpaired = g->pairs.unpaired + devevent_pairs_open(&g->pairs);
	devevent_pairs_free(&g->pairs);
	if (base) {
		g->out->device_events -= g->zero_no_card;
		g->out->no_card -= g->zero_no_card;
	}
	for (size_t i = 0; i < g->nb; i++) {
		struct attrib_event *e = g->b[i].events.p;
		struct devcounter_reading *rd = g->b[i].readings.p;

		k = 0;
		for (size_t j = 0; j < g->b[i].events.n; j++)
			if ((base && (e[j].lo_ns == 0 || e[j].hi_ns == 0)) ||
			    __builtin_add_overflow(e[j].lo_ns, sh, &e[j].lo_ns) ||
			    __builtin_add_overflow(e[j].hi_ns, sh, &e[j].hi_ns))
				g->out->device_events--;
			else
				e[k++] = e[j];
		g->b[i].events.n = k;
		k = 0;
		for (size_t j = 0; j < g->b[i].readings.n; j++)
			if (!(base && rd[j].t_ns == 0) &&
			    !__builtin_add_overflow(rd[j].t_ns, sh, &rd[j].t_ns))
				rd[k++] = rd[j];
		g->b[i].readings.n = k;
	}
	k = 0;
	for (size_t j = 0; j < g->host.n; j++) {
		struct attrib_iv *h = (struct attrib_iv *)g->host.p + j;

		if ((base && h->lo_ns == 0) ||
		    __builtin_add_overflow(h->lo_ns, sh, &h->lo_ns) ||
		    __builtin_add_overflow(h->hi_ns, sh, &h->hi_ns))
			g->out->host_events--;
		else
			((struct attrib_iv *)g->host.p)[k++] = *h;
	}
	g->host.n = k;
	return check_events(g);
}

struct ops_events {
	struct gather g;
	struct ops_result counts;	/* the gathering's tallies */
};

struct ops_events *
ops_events_new(bool host)
{
	struct ops_events *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	c->g.collect = true;
	c->g.host_off = !host;
	c->g.out = &c->counts;
	c->g.names.size = sizeof(struct ops_name);
	c->g.host.size = sizeof(struct attrib_iv);
	return c;
}

void
ops_events_on_event(const struct trace_event *ev, void *arg)
{
	on_event(ev, &((struct ops_events *)arg)->g);
}

static void
gather_free(struct gather *g)
{
	for (size_t i = 0; i < g->nb; i++) {
		free(g->b[i].events.p);
		free(g->b[i].samples.p);
		free(g->b[i].readings.p);
	}
	free(g->b);
	free(g->slots);
	free(g->host.p);
	devevent_pairs_free(&g->pairs);
}

void
ops_events_free(struct ops_events *c)
{
	if (c == NULL)
		return;
	gather_free(&c->g);
	for (size_t i = 0; i < c->g.names.n; i++)
		free(((struct ops_name *)c->g.names.p)[i].name);
	free(c->g.names.p);
	free(c);
}

/* Column i of s, of metric m, in W; false for NULL or a bad value. */
static bool
power_of(sqlite3_stmt *s, int i, const struct db_metric *m,
    struct ops_result *out, int64_t *mant, int *scale)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER:
		*mant = sqlite3_column_int64(s, i);
		*scale = m->decimals;
		return true;
	case SQLITE_FLOAT:
		if (energy_real_value(sqlite3_column_double(s, i), m->decimals,
		    mant, scale))
			return true;
		out->bad_values++;
		return false;
	default:
		return false;
	}
}

static double
pow10_of(int scale)
{
	double v = 1;

	while (scale-- > 0)
		v *= 10;
	return v;
}

/* The power samples of every card, span and margin, into buckets. */
static int
gather_samples(sqlite3 *db, struct gather *g, struct bucket **cards,
    size_t *ncards)
{
	const struct ops_request *rq = g->rq;
	const struct db_metric *pwr = db_catalog_find(rq->cat, "pwr");
	struct vec v = { .size = sizeof(struct bucket) };
	int64_t lo = rq->span_lo - NEIGHBOUR_PAD_NS;
	int64_t hi = rq->span_hi + NEIGHBOUR_PAD_NS;
	struct db_trace_cursor k;
	sqlite3_stmt *s;
	int rc;

	*cards = NULL;
	*ncards = 0;
	if (pwr == NULL) {
		warnx("the database has no power metric (pwr): no energy to "
		    "share");
		return CLIENT_EXIT_FAILED;
	}
	if ((s = db_select_samples(db, &pwr, 1, rq->device_sql, false)) ==
	    NULL)
		return db_error(db, "the samples");
	/* each epoch of the host clock's, in the trace's time */
	db_trace_cursor_open(&k, s, rq->clock, lo, hi, DB_MAX_INTERVAL_NS);
	while ((rc = db_trace_cursor_step(&k)) == SQLITE_ROW) {
		int64_t ts = db_trace_cursor_ts(&k);
		int64_t ival = sqlite3_column_int64(s, 2), mant;
		int dev = sqlite3_column_int(s, 1), scale;
		struct bucket *b = NULL;
		struct attrib_sample *sm;

		if (!power_of(s, 3, pwr, g->out, &mant, &scale))
			continue;
		/* a damaged row must not overflow: no interval exceeds 60 s */
		ival = ival < 0 ? 0 : ival > DB_MAX_INTERVAL_NS / 1000000 ?
		    DB_MAX_INTERVAL_NS : ival * 1000000;
		for (size_t i = 0; i < v.n && b == NULL; i++)
			if (((struct bucket *)v.p)[i].card == dev)
				b = (struct bucket *)v.p + i;
		if (b == NULL) {
			b = vec_push(&v);
			memset(b, 0, sizeof(*b));
			b->card = dev;
			b->samples.size = sizeof(struct attrib_sample);
			energy_init(&b->acc);
		}
		sm = vec_push(&b->samples);
		*sm = (struct attrib_sample){ ts - ival, ts,
		    (double)mant / pow10_of(scale) };
		energy_add(&b->acc, mant, scale, ts - ival, ts, rq->span_lo,
		    rq->span_hi);
	}
	db_trace_cursor_close(&k);
	sqlite3_finalize(s);
	*cards = v.p;
	*ncards = v.n;
	return rc == SQLITE_DONE ? CLIENT_EXIT_OK : db_error(db, "the samples");
}

static int
cmp_bucket(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;

	return (x->card > y->card) - (x->card < y->card);
}

/*
 * The idle power of each card, as its summary over the span learns it:
 * *sum (free with summary_free, also on failure).  A summary learns it
 * over (begin - look-back, end] but also sums every metric over [begin,
 * end], which on an hour's span costs more than all the sharing: so the
 * summary asked for is of the span's end alone, with the look-back
 * stretched by the span, which learns over the same samples.  Its cards
 * are those with a sample at the span's end; one whose samples stop
 * before has no idle power, and its idle time takes the samples' mean.
 */
static int
learn_idle(sqlite3 *db, const struct ops_request *rq, struct summary *sum)
{
	int64_t lookback = rq->idle_lookback_ns < 0 ? 0 : rq->idle_lookback_ns;
	int64_t epoch, end = db_trace_stamp(rq->clock, rq->span_hi, &epoch);

	/* at the span's end as its epoch of the host clock stamped it */
	if (summary_compute(db, 0, end, end, lookback +
	    (rq->span_hi - rq->span_lo), now_realtime_ns(), sum) != 0)
		return db_error(db, "the idle power");
	return CLIENT_EXIT_OK;
}

/*
 * Each call's energy from the card's charge counter, where its events
 * carry one: the scale fitted to the card's samples (sorted by now).
 */
static void
counter_energy(struct ops_card *c, struct bucket *ev,
    const struct bucket *dbc)
{
	struct devcounter_reading *r = ev->readings.p;

	if (ev->readings.n < 2)
		return;
	if ((c->counter_j = calloc(c->a.nops + 1, sizeof(double))) == NULL ||
	    (c->counter_calls = calloc(c->a.nops + 1, sizeof(uint64_t))) ==
	    NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	devcounter_fit(r, ev->readings.n, dbc->samples.p, dbc->samples.n,
	    &c->fit);
	c->has_counter = true;
	for (size_t i = 0; i < ev->readings.n; i++)
		if (r[i].used) {
			c->counter_j[r[i].call] += c->fit.j_per_count *
			    (double)r[i].counts;
			c->counter_calls[r[i].call]++;
		}
}

/* Share each card's energy among its events. */
static int
share(struct gather *g, struct bucket *dbc, size_t ndbc,
    const struct summary *sum)
{
	struct ops_result *out = g->out;

	sort_once(dbc, ndbc, sizeof(*dbc), cmp_bucket);
	if ((out->cards = calloc(ndbc + 1, sizeof(*out->cards))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < ndbc; i++) {
		struct ops_card *c = &out->cards[out->ncards++];
		struct bucket *ev = NULL;
		double parts = 0, exact;

		c->device = (int)dbc[i].card;
		for (size_t k = 0; k < g->nb && ev == NULL; k++)
			if (g->b[k].card == dbc[i].card)
				ev = &g->b[k];
		if (ev != NULL) {
			ev->used = true;
			c->events = ev->events.n;
		}
		c->a.nops = out->nnames;
		c->a.max_w = g->rq->max_w;
		for (size_t k = 0; k < sum->ncards; k++)
			if (sum->cards[k].device == c->device &&
			    sum->cards[k].has_idle) {
				c->has_idle_w = c->a.has_idle_w = true;
				c->idle_w = c->a.idle_w = sum->cards[k].idle_w;
			}
		if (ev != NULL && g->rq->keep_events &&
		    (c->a.event_j = calloc(ev->events.n + 1,
		    sizeof(double))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		if ((c->a.ops = calloc(out->nnames + 1, sizeof(*c->a.ops))) ==
		    NULL || attrib_card(dbc[i].samples.p, dbc[i].samples.n,
		    ev != NULL ? ev->events.p : NULL,
		    ev != NULL ? ev->events.n : 0, g->host.p, g->host.n,
		    out->span_lo, out->span_hi, &c->a) != 0)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		if (ev != NULL)
			counter_energy(c, ev, &dbc[i]);
		if (c->a.event_j != NULL) {
			/* the events' order is the shares' */
			c->kept = ev->events.p;
			c->nkept = ev->events.n;
			c->event_j = c->a.event_j;
			ev->events.p = NULL;
			ev->events.n = 0;
		}
		c->has_energy = energy_integral(&dbc[i].acc, c->energy_j,
		    sizeof(c->energy_j));
		for (size_t k = 0; k < c->a.nops; k++)
			parts += c->a.ops[k].energy_j;
		parts += c->a.idle_j;
		exact = c->has_energy ? strtod(c->energy_j, NULL) : 0;
		c->closure = exact > 0 ? (parts > exact ? parts - exact :
		    exact - parts) / exact : c->a.closure;
	}
	for (size_t k = 0; k < g->nb; k++)
		if (!g->b[k].used && g->b[k].events.n > 0) {
			if (out->unsampled == 0)
				out->unsampled_card = g->b[k].card;
			out->unsampled += g->b[k].events.n;
			out->unsampled_cards++;
		}
	return CLIENT_EXIT_OK;
}

int
ops_load(sqlite3 *db, const struct ops_request *rq, struct ops_result *out)
{
	struct gather g = {
		.rq = rq, .out = out,
		.names = { .size = sizeof(struct ops_name) },
		.host = { .size = sizeof(struct attrib_iv) },
	};
	struct bucket *dbc = NULL;
	struct summary sum = { 0 };
	size_t ndbc = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	/* a collector taken over already is empty: read the trace then */
	if (rq->events != NULL && rq->events->g.collect) {
		/* taken over: the collector is left empty */
		*out = rq->events->counts;
		g = rq->events->g;
		g.rq = rq;
		g.out = out;
		g.last = NULL;
		memset(&rq->events->g, 0, sizeof(rq->events->g));
	}
	out->span_lo = rq->span_lo;
	out->span_hi = rq->span_hi;
	rc = g.collect ? place_collected(&g) : gather_events(&g);
	out->names = g.names.p;
	out->nnames = g.names.n;
	/* none (rq->none_ok): nothing to share */
	if (rc == CLIENT_EXIT_OK && out->device_events > 0)
		rc = gather_samples(db, &g, &dbc, &ndbc);
	if (rc == CLIENT_EXIT_OK && out->device_events > 0)
		rc = learn_idle(db, rq, &sum);
	if (rc == CLIENT_EXIT_OK && out->device_events > 0)
		rc = share(&g, dbc, ndbc, &sum);
	summary_free(&sum);
	gather_free(&g);
	for (size_t i = 0; i < ndbc; i++)
		free(dbc[i].samples.p);
	free(dbc);
	return rc;
}

void
ops_result_free(struct ops_result *r)
{
	for (size_t i = 0; i < r->nnames; i++)
		free(r->names[i].name);
	free(r->names);
	for (size_t i = 0; i < r->ncards; i++) {
		free(r->cards[i].a.ops);
		free(r->cards[i].counter_j);
		free(r->cards[i].counter_calls);
		free(r->cards[i].kept);
		free(r->cards[i].event_j);
	}
	free(r->cards);
	memset(r, 0, sizeof(*r));
}
