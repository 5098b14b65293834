/*
 * storebuf: the rows buffered in memory until a flush writes them (the
 * event loop's side of the store; contract in store_priv.h).
 *
 * Values are kept as they will be bound: integers scaled by 10^decimals
 * whenever that is exact; with REAL affinity SQLite keeps whole numbers
 * in the compact integer encoding (0 to 8 bytes depending on magnitude),
 * which is what makes one wide row per card per interval cost a few
 * bytes per value.  Nothing here touches the connection: the daemon's
 * event loop calls these under st->mu while the writer thread writes.
 */
#include "store_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "timeparse.h"

#define POOL_INITIAL_ROWS	64

/* The shape of the buffered rows (struct store's pool). */
static const struct rowring_spec pool_spec = {
	.row_bytes = sizeof(struct pending_row),
	.cell_bytes = { sizeof(union store_cell), sizeof(unsigned char) },
	.cell_fill = { 0, CELL_NULL },
};

void
store_buf_init(struct store *st)
{
	rowring_init(&st->pool, &pool_spec, 1);
}

static void
note_dropped(struct store *st)
{
	unsigned suppressed;

	st->rows_dropped++;
	if (ratelimit_pass(&st->rl_drop, now_monotonic_ns(), &suppressed))
		log_warnx("%s: buffer full (%zu rows) while writes fail: "
		    "dropping the oldest rows (%" PRIu64 " so far)", st->path,
		    st->max_pending, st->rows_dropped);
}

/* The index of a free row at the tail, making room as the contract says. */
static int
pool_reserve(struct store *st, size_t *k)
{
	struct rowring *pool = &st->pool;
	/* rows the writer has taken count against the bound */
	size_t cap, limit = st->max_pending > st->inflight ?
	    st->max_pending - st->inflight : 1;

	if (rowring_full(pool) && pool->cap < limit) {
		cap = pool->cap > 0 ? pool->cap * 2 : POOL_INITIAL_ROWS;
		if (cap > limit)
			cap = limit;
		if (rowring_resize(pool, cap, pool->stride) == -1 &&
		    ratelimit_pass(&st->rl_drop, now_monotonic_ns(), NULL))
			log_warn("%s: cannot grow the row buffer", st->path);
	}
	if (rowring_full(pool) || pool->n >= limit) {
		note_dropped(st);
		if (pool->cap == 0)
			return -1;
		rowring_drop_oldest(pool);
	}
	*k = rowring_push(pool);
	return 0;
}

/*
 * ts_ns made strictly increasing per device and source by
 * store_stamp_after: the two sources stamp differently (arrival against
 * the writer's time), so one's rows may fall between the other's.  A
 * stamp that is already stored is moved at the write (storedb.c).
 */
static int64_t
device_ts(struct store *st, int device, int src, int64_t ts_ns,
    uint32_t interval_ms)
{
	struct device_last *d = NULL;
	size_t i;

	for (i = 0; i < st->ndevs; i++)
		if (st->devs[i].device == device && st->devs[i].src == src)
			d = &st->devs[i];
	if (d == NULL) {
		if (st->ndevs == st->devs_cap) {
			size_t cap = st->devs_cap > 0 ? st->devs_cap * 2 : 16;

			d = reallocarray(st->devs, cap, sizeof(*d));
			if (d == NULL)
				return ts_ns;
			st->devs = d;
			st->devs_cap = cap;
		}
		d = &st->devs[st->ndevs++];
		d->device = device;
		d->src = src;
		d->ts_ns = ts_ns;
		d->interval_ms = interval_ms;
		return ts_ns;
	}
	if (store_stamp_after(d->ts_ns, ts_ns) != ts_ns) {
		log_debug("device %d: timestamp %" PRId64 " not after %" PRId64
		    "; stored as %" PRId64, device, ts_ns, d->ts_ns,
		    d->ts_ns + 1);
		ts_ns = d->ts_ns + 1;
	}
	d->ts_ns = ts_ns;
	d->interval_ms = interval_ms;
	return ts_ns;
}

static double
pow10_double(int e)
{
	double p = 1.0;

	while (e-- > 0)
		p *= 10.0;
	return p;
}

/* mant / 10^scale as the column stores it: scaled by 10^decimals. */
static enum cell_kind
cell_set(union store_cell *c, const struct store_value *v, int decimals)
{
	int e = decimals - v->scale;

	if (e >= 0) {
		if (e <= METRIC_MAX_SCALE && !__builtin_mul_overflow(v->mant, metric_pow10[e],
		    &c->i))
			return CELL_INT;
		c->d = (double)v->mant * pow10_double(e);
		return CELL_REAL;
	}
	if (-e <= METRIC_MAX_SCALE && v->mant % metric_pow10[-e] == 0) {
		c->i = v->mant / metric_pow10[-e];
		return CELL_INT;
	}
	c->d = (double)v->mant / pow10_double(-e);
	return CELL_REAL;
}

bool
store_buf_append(struct store *st, const struct store_sample *s,
    int64_t *ts_ns)
{
	struct pending_row *r;
	union store_cell *cells;
	unsigned char *kinds;
	size_t k, i;
	int id, slot;

	if (pool_reserve(st, &k) == -1)
		return false;
	r = rowring_row(&st->pool, k);
	r->ts_ns = device_ts(st, s->device, s->src, s->ts_ns,
	    s->interval_ms);
	r->device = s->device;
	r->src = s->src;
	r->have_seq = s->have_seq;
	r->seq = s->seq;
	r->arrival_ns = s->arrival_ns;
	r->clock_net_ns = s->clock_net_ns;
	r->epoch = s->have_epoch ? s->epoch : st->epoch;
	r->interval_ms = s->interval_ms;
	r->have_skew = s->have_skew;
	r->skew_s = s->skew_s;
	cells = rowring_cells(&st->pool, POOL_VALUES, k);
	kinds = rowring_cells(&st->pool, POOL_KINDS, k);
	memset(kinds, CELL_NULL, st->cat.n);
	for (i = 0; i < s->nvalues; i++) {
		id = s->metric[i];
		if (id < 0 || id > st->cat.max_id ||
		    (slot = st->cat.slot_of_id[id]) < 0 || !s->values[i].present)
			continue;
		kinds[slot] = (unsigned char)cell_set(&cells[slot],
		    &s->values[i], st->cat.cols[slot].decimals);
	}
	if (r->ts_ns > st->newest_ts_ns)
		st->newest_ts_ns = r->ts_ns;
	st->appended++;
	*ts_ns = r->ts_ns;
	return true;
}

void
store_buf_remove_after(struct store *st, int device, int src,
    int64_t after_ns)
{
	struct rowring *pool = &st->pool;
	size_t kept = 0;

	for (size_t i = 0; i < pool->n; i++) {
		size_t from = rowring_at(pool, i);
		const struct pending_row *r = rowring_row(pool, from);

		if (r->device == device && r->src == src && r->ts_ns > after_ns)
			continue;
		if (kept != i)
			rowring_copy(pool, rowring_at(pool, kept), from,
			    st->cat.n);
		kept++;
	}
	pool->n = kept;
	/* the device's next row may be stamped anything after after_ns */
	for (size_t i = 0; i < st->ndevs; i++)
		if (st->devs[i].device == device && st->devs[i].src == src &&
		    st->devs[i].ts_ns > after_ns)
			st->devs[i].ts_ns = after_ns;
}
