/*
 * counters: the store's running totals in the counters table (schema
 * version 5), written in the same transaction as the rows they count, so
 * a reader of one snapshot sees totals that match its samples, and a
 * restart continues from the stored values: each counter only grows.
 *
 *   samples          rows written (imports included)
 *   child_restarts   added by the daemon (store_counter_add)
 *   rejected_lines   added by the daemon (store_counter_add)
 *   damaged_databases  databases whose damaged log was kept aside at
 *                    open (store_open_with), counted in the file opened
 *   database_errors  SQLite failures the daemon's store met (sql_note),
 *                    written with the next flush that succeeds
 *   energy_joules    per device: the integral of pwr over time
 *
 * Energy: a row stamped t, with interval i and power pwr, adds pwr * i
 * when t is after the device's through_ns, which then moves to t; a row at
 * or before through_ns adds nothing.  A step of the host clock moves
 * through_ns with it: each row says the steps summed when it was read
 * (clock_net_ns), and a row of another sum moves the stamps by the
 * difference first, so rows after a step back count at once (not an hour
 * later) and rows read before the step compare with the old clock.
 * A row stamped by the old clock can still come after the move (a metric
 * file written before the step and read after it): until the first row
 * of the new clock, a row after the old clock's stamp and nearer to it
 * than to the new one counts against the old stamp and leaves the new
 * one alone.  The rows read between a step and the moment it is seen
 * (at most CLOCKSTEP_CHECK_NS, at once with the kernel's notice) are
 * compared with the clock before it: after a step back they add nothing.  So the total is the sum of pwr
 * times interval over the rows as stored, which is what a reader
 * integrating the samples table gets, while rows that replace stored ones
 * when a window opens (the fine rows of a span that coarse rows already
 * covered) and rows of an old log imported later are not counted again,
 * and the total never goes back.  A row without pwr moves through_ns and
 * adds nothing.
 *
 * Two sources (bestsrc.h): a card read from its metric file also has
 * aiu-smi rows, both with pwr; its energy counts one of them at a time.
 * Each source keeps its own through stamp (the two clocks differ).  A
 * file row with pwr always counts.  An aiu-smi row's pwr counts only when
 * the same write has no file row of the card with pwr and the card's last
 * file row with pwr is older than ENERGY_FILE_LAPSE aiu-smi intervals
 * before the row (or there was none since the daemon started): so the
 * total follows the file while it is read, and aiu-smi before and after.
 */
#include "store_priv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "schema.h"
#include "sql.h"

/* How many of its own intervals an aiu-smi row waits out a quiet file. */
#define ENERGY_FILE_LAPSE	3

static const char *const scalar_names[STORE_NCOUNTERS] = {
	[STORE_COUNTER_CHILD_RESTARTS] = COUNTER_CHILD_RESTARTS,
	[STORE_COUNTER_REJECTED_LINES] = COUNTER_REJECTED_LINES,
	[STORE_COUNTER_DAMAGED] = COUNTER_DAMAGED,
	[STORE_COUNTER_ERRORS] = COUNTER_ERRORS,
};

int
store_counters_load(struct store *st)
{
	struct store_counters *c = &st->ctr;
	sqlite3_stmt *s;
	int rc;

	if (sql_prepare(st, "SELECT device, value, through_ns FROM "
	    SCHEMA_T_COUNTERS " WHERE name = '" COUNTER_ENERGY "' "
	    "ORDER BY device", &s) == -1)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct store_energy *e;

		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 8;

			if ((e = realloc(c->e, cap * sizeof(*e))) == NULL) {
				sqlite3_finalize(s);
				log_warn("%s: counters", st->path);
				return -1;
			}
			c->e = e;
			c->cap = cap;
		}
		e = &c->e[c->n++];
		/* stamps of this daemon's clock, no step seen yet */
		*e = (struct store_energy){
			.device = sqlite3_column_int(s, 0),
			.joules = sqlite3_column_double(s, 1),
			.through_ns = sqlite3_column_int64(s, 2),
		};
	}
	return sql_finish(st, s, rc, "read counters");
}

void
store_counters_free(struct store *st)
{
	free(st->ctr.e);
	free(st->ctr.tent);
	memset(&st->ctr, 0, sizeof(st->ctr));
}

/* add[] is shared with the daemon's event loop: under st->mu. */
static void
lock(struct store *st)
{
	pthread_mutex_lock(&st->mu);
}

static void
unlock(struct store *st)
{
	pthread_mutex_unlock(&st->mu);
}

void
store_counter_add(struct store *st, enum store_counter which, uint64_t delta)
{
	lock(st);
	if (which < STORE_NCOUNTERS)
		st->ctr.add[which] += delta;
	unlock(st);
}

bool
store_counters_pending(const struct store *st)
{
	for (int i = 0; i < STORE_NCOUNTERS; i++)
		if (st->ctr.add[i] > 0)
			return true;
	return false;
}

/* The tentative state of device, added if new; NULL when out of memory. */
static struct store_energy *
tent_get(struct store_counters *c, int device)
{
	struct store_energy *e;

	for (size_t i = 0; i < c->ntent; i++)
		if (c->tent[i].device == device)
			return &c->tent[i];
	if (c->ntent == c->tentcap) {
		size_t cap = c->tentcap ? c->tentcap * 2 : 8;

		if ((e = realloc(c->tent, cap * sizeof(*e))) == NULL)
			return NULL;
		c->tent = e;
		c->tentcap = cap;
	}
	e = &c->tent[c->ntent++];
	memset(e, 0, sizeof(*e));
	e->device = device;
	return e;
}

/* The slot of pwr in the catalog, -1 if it has none. */
static int
pwr_slot(const struct store *st)
{
	for (size_t i = 0; i < st->cat.n; i++)
		if (strcmp(st->cat.cols[i].key, "pwr") == 0)
			return (int)i;
	return -1;
}

static int
upsert(struct store *st, const char *name, int device, double value,
    int64_t through_ns, bool add)
{
	sqlite3_stmt *s;
	int rc;

	if (sql_prepare(st, add ?
	    "INSERT INTO " SCHEMA_T_COUNTERS " (name, device, value, through_ns) "
	    "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name, device) DO UPDATE SET "
	    "value = value + excluded.value, through_ns = excluded.through_ns" :
	    "INSERT INTO " SCHEMA_T_COUNTERS " (name, device, value, through_ns) "
	    "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name, device) DO UPDATE SET "
	    "value = excluded.value, through_ns = excluded.through_ns", &s) == -1)
		return SQLITE_ERROR;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, device);
	sqlite3_bind_double(s, 3, value);
	sqlite3_bind_int64(s, 4, through_ns);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Move e's stamps into the clock r was read by (above). */
static void
follow_clock(struct store_energy *e, const struct pending_row *r)
{
	int64_t d = r->clock_net_ns - e->clock_net_ns;

	if (d == 0)
		return;
	e->before_ns = e->through_ns;
	e->before_file_ns = e->through_file_ns;
	if (e->through_ns != 0)
		e->through_ns += d;
	if (e->through_file_ns != 0)
		e->through_file_ns += d;
	e->clock_net_ns = r->clock_net_ns;
}

/*
 * Whether a row stamped ts, after its stamps moved with a step (*before
 * not 0), is of the old clock (above); a row of the new clock ends that.
 */
static bool
old_clock_row(int64_t ts, int64_t through, int64_t *before)
{
	if (*before == 0)
		return false;
	if (ts > *before && ts - *before < llabs(ts - through))
		return true;
	if (ts > through)
		*before = 0;
	return false;
}

int
store_counters_write(struct store *st, const struct rowring *ring,
    uint64_t rows, int64_t now_ns)
{
	struct store_counters *c = &st->ctr;
	int slot = pwr_slot(st), rc;

	c->ntent = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct store_energy *e = tent_get(c, c->e[i].device);

		if (e == NULL)
			return SQLITE_NOMEM;
		*e = c->e[i];
		e->dirty = false;
		e->batch_file = false;
	}
	/* which devices have a new file row with pwr in this write */
	for (size_t i = 0; i < ring->n && slot >= 0; i++) {
		size_t k = rowring_at(ring, i);
		const struct pending_row *r = rowring_row(ring, k);
		const unsigned char *kinds = rowring_cells(ring, POOL_KINDS, k);
		struct store_energy *e = tent_get(c, r->device);

		if (e == NULL)
			return SQLITE_NOMEM;
		follow_clock(e, r);
		if (r->src == SCHEMA_SRC_FILE && kinds[slot] != CELL_NULL &&
		    r->ts_ns > e->through_file_ns)
			e->batch_file = true;
	}
	for (size_t i = 0; i < ring->n; i++) {
		size_t k = rowring_at(ring, i);
		const struct pending_row *r = rowring_row(ring, k);
		struct store_energy *e = tent_get(c, r->device);
		const unsigned char *kinds = rowring_cells(ring, POOL_KINDS, k);
		bool file = r->src == SCHEMA_SRC_FILE;
		bool has_pwr = slot >= 0 && kinds[slot] != CELL_NULL;
		int64_t *through, *before;
		bool counts, old;

		if (e == NULL)
			return SQLITE_NOMEM;
		follow_clock(e, r);
		through = file ? &e->through_file_ns : &e->through_ns;
		before = file ? &e->before_file_ns : &e->before_ns;
		old = old_clock_row(r->ts_ns, *through, before);
		if (!old && r->ts_ns <= *through)
			continue;
		counts = file || (!e->batch_file && (e->through_file_ns == 0 ||
		    r->ts_ns - e->through_file_ns > ENERGY_FILE_LAPSE *
		    (int64_t)r->interval_ms * 1000000));
		if (slot >= 0 && counts) {
			const union store_cell *cells =
			    rowring_cells(ring, POOL_VALUES, k);
			unsigned char kind = kinds[slot];
			const union store_cell *cell = &cells[slot];
			double w = kind == CELL_INT ? (double)cell->i :
			    kind == CELL_REAL ? cell->d : 0;

			w /= (double)metric_pow10[st->cat.cols[slot].decimals];
			e->joules += w * (double)r->interval_ms / 1e3;
		}
		/* a file row without pwr leaves the file's stamp alone */
		if (!file || has_pwr)
			*(old ? before : through) = r->ts_ns;
		e->dirty = true;
	}
	for (size_t i = 0; i < c->ntent; i++)
		if (c->tent[i].dirty &&
		    (rc = upsert(st, COUNTER_ENERGY, c->tent[i].device,
		    c->tent[i].joules, c->tent[i].through_ns >
		    c->tent[i].through_file_ns ? c->tent[i].through_ns :
		    c->tent[i].through_file_ns, false)) != SQLITE_OK)
			return rc;
	if (rows > 0 && (rc = upsert(st, COUNTER_SAMPLES, -1, (double)rows,
	    now_ns, true)) != SQLITE_OK)
		return rc;
	lock(st);
	memcpy(c->taken, c->add, sizeof(c->taken));
	unlock(st);
	for (int i = 0; i < STORE_NCOUNTERS; i++)
		if (c->taken[i] > 0 && (rc = upsert(st, scalar_names[i], -1,
		    (double)c->taken[i], now_ns, true)) != SQLITE_OK)
			return rc;
	c->written = true;
	return SQLITE_OK;
}

void
store_counters_committed(struct store *st)
{
	struct store_counters *c = &st->ctr;
	struct store_energy *t = c->e;
	size_t cap = c->cap;

	if (!c->written)
		return;
	c->written = false;
	/* the tentative state becomes the state */
	c->e = c->tent;
	c->n = c->ntent;
	c->cap = c->tentcap;
	c->tent = t;
	c->tentcap = cap;
	c->ntent = 0;
	/* what the loop added meanwhile stays for the next write */
	lock(st);
	for (int i = 0; i < STORE_NCOUNTERS; i++)
		c->add[i] -= c->taken[i];
	unlock(st);
	memset(c->taken, 0, sizeof(c->taken));
}

void
store_counters_abandoned(struct store *st)
{
	st->ctr.written = false;
	memset(st->ctr.taken, 0, sizeof(st->ctr.taken));
}
