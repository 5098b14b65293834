/*
 * pace: fine rows in, coarse or fine rows out (contract in pace.h).
 *
 * Each device has a ring of its recent fine rows and one partial
 * aggregate.  A ring row is marked "stored" when a stored row ends at it:
 * an aggregate emitted with it as its last row, or the row itself stored
 * while a window is open.  Those marks are the boundaries at which stored
 * coarse rows can be swapped for the fine rows they were made of.
 *
 * Metrics are kept by slot: the index of their id among the ids seen so
 * far, in order of first appearance.  A metric a row lacks and a value
 * aiu-smi printed as "-" are both absent, which the store keeps as NULL.
 */
#include "pace.h"
#include "rowring.h"

#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "timeparse.h"

#define ABSENT		INT8_MIN	/* scale of a cell with no value */
#define ROW_SKEW	0x01
#define ROW_STORED	0x02
#define ROW_EPOCH	0x04		/* its sample had an epoch */
#define NONE		(-2)		/* no boundary; -1 is "before the ring" */
#define MAX_KIND_IDS	16

__extension__ typedef __int128 wide;

#define TERM_MAX	((wide)1 << 95)

struct fine_row {
	int64_t ts_ns;
	uint32_t interval_ms;
	int32_t skew_s;
	uint8_t flags;
	int32_t clock_net_ms;	/* store_sample's clock_net_ns, in ms */
	int64_t epoch;		/* store_sample's */
};

_Static_assert(sizeof(struct fine_row) == PACE_ROW_FIXED_BYTES,
    "PACE_ROW_FIXED_BYTES documents the ring's row size");

/*
 * A metric's partial aggregate: every value so far as an integer at scale,
 * summed (mean) or the largest (max).  maxabs bounds every term; terms are
 * kept within TERM_MAX so that 2^32 of them cannot overflow the sum.
 */
struct acc {
	wide sum;
	wide maxabs;
	uint32_t n;
	int8_t scale;
};

struct pace_dev {
	/*
	 * ring: fine rows, with cells 0 (RING_MANT, int64_t mantissas) and 1
	 * (RING_SCALE, int8_t scales, ABSENT where no value); ring.stride is
	 * also the aggregate's width
	 */
	struct rowring ring;
	bool ring_allowed;
	bool evicted;		/* a row was dropped from the ring's front */
	bool evicted_stored;	/* the newest dropped row ends a stored row */

	struct acc *acc;	/* stride of them */
	uint32_t acc_rows;
	uint64_t acc_ms;	/* the rows' intervals added up */
	struct fine_row acc_last;
	bool cover_due;		/* rows covering a window's end are still to come */
	int64_t replay_floor;	/* replay only rows after this (clock set back) */
};

struct pace {
	struct pace_params prm;
	struct pace_sink sink;
	bool window_open;
	int64_t closed_ns;	/* when the last window closed */

	int slot_id[PACE_MAX_METRICS];
	bool slot_max[PACE_MAX_METRICS];
	size_t nslots;
	int max_ids[MAX_KIND_IDS];
	size_t nmax_ids;

	struct pace_dev *dev[PACE_MAX_DEVICES];
	size_t ndevs, nrings;
	uint64_t replayed, replaced;

	/* scratch for one row */
	int64_t cur_mant[PACE_MAX_METRICS];
	int8_t cur_scale[PACE_MAX_METRICS];
	struct store_value out[PACE_MAX_METRICS];
};

/* ---- decimal arithmetic ---- */

/* n / d rounded half away from zero; d > 0. */
static wide
div_round(wide n, wide d)
{
	wide q = n / d, r = n % d;

	if (r < 0)
		r = -r;
	if (r >= d - r)
		q += n < 0 ? -1 : 1;
	return q;
}

static bool
fits_i64(wide x)
{
	return x >= INT64_MIN && x <= INT64_MAX;
}

static wide
magnitude(wide x)
{
	return x < 0 ? -x : x;
}

static void
acc_lower(struct acc *a)
{
	a->sum = div_round(a->sum, 10);
	a->maxabs = div_round(a->maxabs, 10);
	a->scale--;
}

/* Raise a's scale towards scale for as long as every term stays in bounds. */
static void
acc_raise(struct acc *a, int scale)
{
	while (a->scale < scale && a->maxabs <= TERM_MAX / 10) {
		a->sum *= 10;
		a->maxabs *= 10;
		a->scale++;
	}
}

static void
acc_add(struct acc *a, int64_t mant, int scale, bool is_max)
{
	wide x;

	if (a->n == 0) {
		a->sum = mant;
		a->maxabs = magnitude(mant);
		a->scale = (int8_t)scale;
		a->n = 1;
		return;
	}
	acc_raise(a, scale);
	for (;;) {
		/* |mant| < 2^63 and 10^18 < 2^60: no overflow here */
		if (scale > a->scale)
			x = div_round(mant, metric_pow10[scale - a->scale]);
		else
			x = (wide)mant * metric_pow10[a->scale - scale];
		if (magnitude(x) <= TERM_MAX)
			break;
		acc_lower(a);
	}
	if (!is_max)
		a->sum += x;
	else if (x > a->sum)
		a->sum = x;
	if (magnitude(x) > a->maxabs)
		a->maxabs = magnitude(x);
	a->n++;
}

/*
 * The aggregate at a's scale, or at the largest lower one at which it fits
 * 64 bits, rounded once from the exact sum.  At scale 0 it always fits: it
 * lies between the smallest and largest value, which fit at their scales.
 */
static struct store_value
acc_value(const struct acc *a, bool is_max)
{
	struct store_value v = { 0, 0, false };
	wide div = is_max ? 1 : a->n, q;
	int scale = a->scale;

	if (a->n == 0)
		return v;
	while (!fits_i64(q = div_round(a->sum, div)) && scale > 0) {
		div *= 10;
		scale--;
	}
	v.mant = (int64_t)q;
	v.scale = (int8_t)scale;
	v.present = true;
	return v;
}

/* ---- metric slots ---- */

static bool
is_max_id(const struct pace *p, int id)
{
	for (size_t i = 0; i < p->nmax_ids; i++)
		if (p->max_ids[i] == id)
			return true;
	return false;
}

/* The slot of metric id, added if new; -1 when the table is full. */
static int
slot_of(struct pace *p, int id, size_t hint)
{
	if (hint < p->nslots && p->slot_id[hint] == id)
		return (int)hint;
	for (size_t i = 0; i < p->nslots; i++)
		if (p->slot_id[i] == id)
			return (int)i;
	if (p->nslots == PACE_MAX_METRICS)
		return -1;
	p->slot_id[p->nslots] = id;
	p->slot_max[p->nslots] = is_max_id(p, id);
	return (int)p->nslots++;
}

/* ---- rings ---- */

static bool
passthrough(const struct pace_params *prm)
{
	return prm->coarse_ns <= prm->fine_ns;
}

static size_t
row_bytes(size_t stride)
{
	return sizeof(struct fine_row) + stride * (sizeof(int64_t) + 1);
}

static size_t
ring_capacity(const struct pace_params *prm, size_t stride)
{
	uint64_t want, fit;

	if (prm->pre_ns == 0 || passthrough(prm) || prm->fine_ns == 0)
		return 0;
	want = (prm->pre_ns + prm->coarse_ns) / prm->fine_ns * 9 / 8 + 2;
	fit = PACE_RING_DEVICE_BYTES / row_bytes(stride);
	return (size_t)(want < fit ? want : fit);
}

enum { RING_MANT, RING_SCALE };

static const struct rowring_spec ring_spec = {
	.row_bytes = sizeof(struct fine_row),
	.cell_bytes = { sizeof(int64_t), sizeof(int8_t) },
	.cell_fill = { 0, (unsigned char)ABSENT },
};

/* Row i of d's ring, 0 the oldest. */
static struct fine_row *
ring_row(const struct pace_dev *d, size_t i)
{
	return rowring_row(&d->ring, rowring_at(&d->ring, i));
}

static void
note_evicted(struct pace_dev *d, const struct fine_row *r)
{
	d->evicted = true;
	d->evicted_stored = (r->flags & ROW_STORED) != 0;
}

/*
 * Reshape d's ring to cap rows of stride cells and its aggregate to stride
 * metrics, keeping the newest rows and the aggregate's values.
 */
static int
dev_resize(struct pace_dev *d, size_t cap, size_t stride)
{
	size_t old_stride = d->ring.stride;
	size_t skip = d->ring.n > cap ? d->ring.n - cap : 0;
	struct fine_row last_skipped;
	struct acc *acc;

	if ((acc = calloc(stride > 0 ? stride : 1, sizeof(*acc))) == NULL)
		return -1;
	if (skip > 0)
		last_skipped = *ring_row(d, skip - 1);
	if (rowring_resize(&d->ring, cap, stride) == -1) {
		free(acc);
		return -1;
	}
	if (skip > 0)		/* the oldest rows, let go as if pushed out */
		note_evicted(d, &last_skipped);
	if (d->acc != NULL)
		memcpy(acc, d->acc, (old_stride < stride ? old_stride : stride) *
		    sizeof(*acc));
	free(d->acc);
	d->acc = acc;
	return 0;
}

static size_t
dev_capacity(const struct pace *p, const struct pace_dev *d, size_t stride)
{
	return d->ring_allowed ? ring_capacity(&p->prm, stride) : 0;
}

/* Append r with the cells in p's scratch, dropping the oldest if full. */
static void
ring_push(struct pace *p, struct pace_dev *d, const struct fine_row *r)
{
	size_t k;

	if (d->ring.cap == 0) {
		note_evicted(d, r);
		return;
	}
	if (rowring_full(&d->ring)) {
		note_evicted(d, ring_row(d, 0));
		rowring_drop_oldest(&d->ring);
	}
	k = rowring_push(&d->ring);
	*(struct fine_row *)rowring_row(&d->ring, k) = *r;
	memcpy(rowring_cells(&d->ring, RING_MANT, k), p->cur_mant,
	    d->ring.stride * sizeof(int64_t));
	memcpy(rowring_cells(&d->ring, RING_SCALE, k), p->cur_scale,
	    d->ring.stride);
}

/* ---- devices ---- */

static struct pace_dev *
dev_get(struct pace *p, int device)
{
	struct pace_dev *d = p->dev[device];

	if (d != NULL)
		return d;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->ring_allowed = p->nrings < PACE_RING_DEVICES;
	rowring_init(&d->ring, &ring_spec, 0);
	if (dev_resize(d, dev_capacity(p, d, p->nslots), p->nslots) == -1) {
		free(d);
		return NULL;
	}
	if (d->ring_allowed)
		p->nrings++;
	p->dev[device] = d;
	p->ndevs++;
	return d;
}

static void
dev_free(struct pace_dev *d)
{
	if (d == NULL)
		return;
	rowring_free(&d->ring);
	free(d->acc);
	free(d);
}

/* ---- output ---- */

static void
emit(struct pace *p, int device, const struct fine_row *r, size_t nvalues)
{
	struct store_sample s = {
		.ts_ns = r->ts_ns,
		.device = device,
		.interval_ms = r->interval_ms,
		.have_skew = (r->flags & ROW_SKEW) != 0,
		.skew_s = r->skew_s,
		.clock_net_ns = (int64_t)r->clock_net_ms * (int64_t)NSEC_PER_MSEC,
		.have_epoch = (r->flags & ROW_EPOCH) != 0,
		.epoch = r->epoch,
		.nvalues = nvalues,
		.metric = p->slot_id,
		.values = p->out,
	};

	p->sink.row(p->sink.arg, &s);
}

/* Mark the newest fine row as the end of a stored row. */
static void
mark_newest_stored(struct pace_dev *d)
{
	if (d->ring.n > 0)
		ring_row(d, d->ring.n - 1)->flags |= ROW_STORED;
	else
		d->evicted_stored = true;
}

static void
acc_reset(struct pace_dev *d)
{
	memset(d->acc, 0, d->ring.stride * sizeof(*d->acc));
	d->acc_rows = 0;
	d->acc_ms = 0;
}

static void
dev_emit_aggregate(struct pace *p, struct pace_dev *d, int device)
{
	struct fine_row r = d->acc_last;

	if (d->acc_rows == 0)
		return;
	for (size_t i = 0; i < d->ring.stride; i++)
		p->out[i] = acc_value(&d->acc[i], p->slot_max[i]);
	r.interval_ms = d->acc_ms > UINT32_MAX ? UINT32_MAX :
	    (uint32_t)d->acc_ms;
	emit(p, device, &r, d->ring.stride);
	mark_newest_stored(d);
	acc_reset(d);
}

static void
dev_emit_ring_row(struct pace *p, struct pace_dev *d, int device, size_t i)
{
	size_t k = rowring_at(&d->ring, i);
	const int64_t *mant = rowring_cells(&d->ring, RING_MANT, k);
	const int8_t *scale = rowring_cells(&d->ring, RING_SCALE, k);
	struct fine_row *r = rowring_row(&d->ring, k);

	for (size_t j = 0; j < d->ring.stride; j++) {
		int8_t sc = scale[j];

		p->out[j] = (struct store_value){ mant[j],
		    sc == ABSENT ? 0 : sc, sc != ABSENT };
	}
	emit(p, device, r, d->ring.stride);
	r->flags |= ROW_STORED;
}

static void
dev_accumulate(struct pace *p, struct pace_dev *d, const struct fine_row *r)
{
	for (size_t i = 0; i < d->ring.stride; i++)
		if (p->cur_scale[i] != ABSENT)
			acc_add(&d->acc[i], p->cur_mant[i], p->cur_scale[i],
			    p->slot_max[i]);
	d->acc_rows++;
	d->acc_ms += r->interval_ms;
	d->acc_last = *r;
}

static bool
aggregate_due(const struct pace *p, const struct pace_dev *d)
{
	return d->acc_ms * NSEC_PER_MSEC + p->prm.fine_ns / 2 >=
	    p->prm.coarse_ns || d->acc_rows == UINT32_MAX;
}

/* ---- opening a window ---- */

/*
 * The ring index after which d's fine rows replace what was stored: the
 * newest boundary at or before cutoff, else the oldest boundary; -1 is the
 * start of the ring, a boundary when every row before it was stored.
 * NONE when d's partial aggregate reaches back beyond the ring.
 */
static ptrdiff_t
replay_boundary(const struct pace_dev *d, int64_t cutoff)
{
	ptrdiff_t best = NONE, oldest = NONE;

	if (!d->evicted || d->evicted_stored)
		best = oldest = -1;
	for (size_t i = 0; i < d->ring.n; i++) {
		const struct fine_row *r = ring_row(d, i);

		if (!(r->flags & ROW_STORED))
			continue;
		if (oldest == NONE)
			oldest = (ptrdiff_t)i;
		if (r->ts_ns <= cutoff)
			best = (ptrdiff_t)i;
	}
	return best != NONE ? best : oldest;
}

static void
dev_open_window(struct pace *p, struct pace_dev *d, int device, int64_t cutoff)
{
	ptrdiff_t b = replay_boundary(d, cutoff), last = (ptrdiff_t)d->ring.n - 1;
	int64_t after;

	if (b == NONE) {
		dev_emit_aggregate(p, d, device);
		return;
	}
	/* rows stored one by one already are what a replay would store */
	while (b < last && (ring_row(d, (size_t)(b + 1))->flags & ROW_STORED))
		b++;
	if (b == last)
		return;
	after = b >= 0 ? ring_row(d, (size_t)b)->ts_ns :
	    ring_row(d, 0)->ts_ns - 1;
	/* rows stored before a step back are stamped after those to replay */
	if (after < d->replay_floor) {
		dev_emit_aggregate(p, d, device);
		return;
	}
	if (p->sink.delete_after(p->sink.arg, device, after) == -1) {
		dev_emit_aggregate(p, d, device);
		return;
	}
	for (size_t i = (size_t)(b + 1); i < d->ring.n; i++) {
		dev_emit_ring_row(p, d, device, i);
		p->replayed++;
	}
	acc_reset(d);
	p->replaced++;
}

/* ---- public ---- */

struct pace *
pace_new(const struct pace_params *params, const struct pace_sink *sink)
{
	struct pace *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->prm = *params;
	p->sink = *sink;
	return p;
}

void
pace_free(struct pace *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < PACE_MAX_DEVICES; i++)
		dev_free(p->dev[i]);
	free(p);
}

void
pace_set_params(struct pace *p, const struct pace_params *params)
{
	p->prm = *params;
	if (passthrough(&p->prm))
		pace_flush(p);
	for (size_t i = 0; i < PACE_MAX_DEVICES; i++) {
		struct pace_dev *d = p->dev[i];
		size_t cap;

		if (d == NULL)
			continue;
		cap = dev_capacity(p, d, d->ring.stride);
		/* on ENOMEM the old ring stays: it is only less deep */
		if (cap != d->ring.cap)
			(void)dev_resize(d, cap, d->ring.stride);
	}
}

size_t
pace_ring_rows(const struct pace_params *params, size_t nmetrics)
{
	return ring_capacity(params, nmetrics);
}

void
pace_set_max(struct pace *p, int metric_id)
{
	if (is_max_id(p, metric_id) || p->nmax_ids == MAX_KIND_IDS)
		return;
	p->max_ids[p->nmax_ids++] = metric_id;
	for (size_t i = 0; i < p->nslots; i++)
		if (p->slot_id[i] == metric_id)
			p->slot_max[i] = true;
}

/* Spread s's values over p's scratch cells, by slot. */
static void
load_cells(struct pace *p, const struct store_sample *s)
{
	memset(p->cur_scale, ABSENT, sizeof(p->cur_scale));
	for (size_t i = 0; i < s->nvalues; i++) {
		int slot = slot_of(p, s->metric[i], i);

		if (slot < 0 || !s->values[i].present)
			continue;
		p->cur_mant[slot] = s->values[i].mant;
		p->cur_scale[slot] = s->values[i].scale;
	}
}

void
pace_row(struct pace *p, const struct store_sample *s)
{
	struct fine_row r = { s->ts_ns, s->interval_ms, s->skew_s,
	    (uint8_t)((s->have_skew ? ROW_SKEW : 0) |
	    (s->have_epoch ? ROW_EPOCH : 0)),
	    (int32_t)(s->clock_net_ns / (int64_t)NSEC_PER_MSEC), s->epoch };
	struct pace_dev *d;

	if (s->device < 0 || s->device >= PACE_MAX_DEVICES) {
		p->sink.row(p->sink.arg, s);
		return;
	}
	if (passthrough(&p->prm)) {
		/* every row is stored as it is: a ring would replay nothing */
		if ((d = p->dev[s->device]) != NULL)
			dev_emit_aggregate(p, d, s->device);	/* rates just changed */
		p->sink.row(p->sink.arg, s);
		return;
	}
	load_cells(p, s);
	if ((d = dev_get(p, s->device)) == NULL) {
		p->sink.row(p->sink.arg, s);
		return;
	}
	if (d->ring.stride < p->nslots &&
	    dev_resize(d, dev_capacity(p, d, p->nslots), p->nslots) == -1) {
		/* out of memory: stored as it is, after what is pending */
		dev_emit_aggregate(p, d, s->device);
		p->sink.row(p->sink.arg, s);
		return;
	}
	if (p->window_open || d->cover_due) {
		/*
		 * the rows covering the end are stored as they are, through the
		 * first that starts at or after the close (one stamped just
		 * after it may be followed by one that still reaches back over
		 * it); none after that can
		 */
		if (!p->window_open && s->ts_ns -
		    (int64_t)(s->interval_ms * NSEC_PER_MSEC) >= p->closed_ns)
			d->cover_due = false;
		/* none pending, unless the rates just changed */
		dev_emit_aggregate(p, d, s->device);
		ring_push(p, d, &r);
		p->sink.row(p->sink.arg, s);
		mark_newest_stored(d);
		return;
	}
	ring_push(p, d, &r);
	dev_accumulate(p, d, &r);
	if (aggregate_due(p, d))
		dev_emit_aggregate(p, d, s->device);
}

void
pace_set_window(struct pace *p, bool open, int64_t now_ns)
{
	int64_t cutoff = now_ns - (int64_t)p->prm.pre_ns;

	if (open == p->window_open)
		return;
	p->window_open = open;
	if (!open) {
		p->closed_ns = now_ns;
		for (int i = 0; i < PACE_MAX_DEVICES; i++)
			if (p->dev[i] != NULL)
				p->dev[i]->cover_due = true;
		return;
	}
	for (int i = 0; i < PACE_MAX_DEVICES; i++)
		if (p->dev[i] != NULL)
			dev_open_window(p, p->dev[i], i, cutoff);
}

void
pace_clock_stepped(struct pace *p, int64_t step_ns)
{
	struct pace_dev *d;
	int64_t newest;

	p->closed_ns += step_ns;
	if (step_ns >= 0)
		return;
	for (int i = 0; i < PACE_MAX_DEVICES; i++) {
		if ((d = p->dev[i]) == NULL)
			continue;
		newest = d->acc_rows > 0 ? d->acc_last.ts_ns : INT64_MIN;
		for (size_t k = 0; k < d->ring.n; k++)
			if (ring_row(d, k)->ts_ns > newest)
				newest = ring_row(d, k)->ts_ns;
		if (newest > d->replay_floor)
			d->replay_floor = newest;
	}
}

void
pace_flush(struct pace *p)
{
	for (int i = 0; i < PACE_MAX_DEVICES; i++)
		if (p->dev[i] != NULL)
			dev_emit_aggregate(p, p->dev[i], i);
}

void
pace_get_stats(const struct pace *p, struct pace_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->devices = p->ndevs;
	out->ring_capacity = ring_capacity(&p->prm, p->nslots);
	out->replayed = p->replayed;
	out->replaced = p->replaced;
	out->window_open = p->window_open;
	for (size_t i = 0; i < PACE_MAX_DEVICES; i++) {
		const struct pace_dev *d = p->dev[i];

		if (d == NULL)
			continue;
		out->ring_rows += d->ring.n;
		out->ring_bytes += d->ring.cap * row_bytes(d->ring.stride) +
		    d->ring.stride * sizeof(struct acc) + sizeof(*d);
	}
}
