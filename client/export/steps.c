/*
 * steps: power, energy and load per step of a trace (steps.h).
 *
 * The samples of each span (a step, or the whole trace for the totals)
 * are read with the overlap rule of DB_OVERLAPS_SQL, one query per span
 * over a range of the primary key, and summed per card by energy.h in
 * integer arithmetic, so that the energy written is the exact integral of
 * the stored values and does not depend on the order of the rows.  The
 * totals are read first: they name the cards, and every step then has a
 * row for each card, with empty values where the card has no sample.
 *
 * CSV and JSON rows are written as they are made; the table is kept
 * whole to size its columns.
 */
#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "client.h"
#include "energy.h"
#include "format.h"
#include "json.h"
#include "schema.h"
#include "steps_priv.h"
#include "timeparse.h"

const char *const steps_metric_keys[M_N] = {
	"pwr", "busy", "rdmem", "wrmem", "rxpci", "txpci",
};

/* ---- reading the samples ---- */

static void
cells_reset(struct cell *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		c[i].samples = 0;
		c[i].max_interval_ns = 0;
		for (int m = 0; m < M_N; m++)
			energy_init(&c[i].m[m]);
	}
}

/*
 * A REAL cell x (the natural value times 10^decimals, stored so when it
 * had more digits than decimals) as mant / 10^scale: the shortest decimal
 * that reads back as x.  False if x is not finite or out of range.
 */
static bool
real_value(double x, int decimals, int64_t *mant, int *scale)
{
	char buf[48], *p;
	int prec, frac = 0, s;
	long e;
	int64_t m = 0;
	bool neg;

	if (!isfinite(x))
		return false;
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
	/* [-]D[.D...]e[+-]X...: up to 17 digits, frac after the point */
	p = buf;
	if ((neg = *p == '-'))
		p++;
	m = *p++ - '0';
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, frac++)
			m = m * 10 + (*p - '0');
	if (*p != 'e')
		return false;
	e = strtol(p + 1, NULL, 10);
	if (e > 400 || e < -400)
		return false;
	/* x = m * 10^(e - frac), and the value is x / 10^decimals */
	s = decimals + frac - (int)e;
	for (; s < 0; s++)
		if (__builtin_mul_overflow(m, 10, &m))
			return false;
	for (; s > ENERGY_SCALE_MAX; s--)
		m = (m + 5) / 10;
	*mant = neg ? -m : m;
	*scale = s;
	return true;
}

/* Column i of the row as a value: false for NULL or a bad value. */
static bool
value_of(struct report *r, int i, const struct db_metric *dm, int64_t *mant,
    int *scale)
{
	switch (sqlite3_column_type(r->s, i)) {
	case SQLITE_INTEGER:
		*mant = sqlite3_column_int64(r->s, i);
		*scale = dm->decimals;
		return true;
	case SQLITE_FLOAT:
		if (real_value(sqlite3_column_double(r->s, i), dm->decimals,
		    mant, scale))
			return true;
		r->bad_values++;
		return false;
	default:
		return false;
	}
}

static int
devcmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The index of device in r->devs; with add, inserted if new; -1 if not. */
static ssize_t
dev_index(struct report *r, int device, bool add)
{
	int *p = NULL;
	size_t i;

	if (r->ndevs > 0)
		p = bsearch(&device, r->devs, r->ndevs, sizeof(int), devcmp);
	if (p != NULL)
		return p - r->devs;
	if (!add)
		return -1;
	if ((r->devs = reallocarray(r->devs, r->ndevs + 1, sizeof(int))) ==
	    NULL || (r->totals = reallocarray(r->totals, r->ndevs + 1,
	    sizeof(struct cell))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (i = r->ndevs; i > 0 && r->devs[i - 1] > device; i--) {
		r->devs[i] = r->devs[i - 1];
		r->totals[i] = r->totals[i - 1];
	}
	r->devs[i] = device;
	cells_reset(&r->totals[i], 1);
	r->ndevs++;
	return (ssize_t)i;
}

/*
 * Sum the samples that overlap [lo, hi] into cells, one per card; with
 * add (the totals), cards are added as they are met.  A sample that
 * overlaps the span is stamped before hi + r->reach_ns, the longest
 * interval there may be, which bounds the range of keys read.
 */
static int
sum_span(struct report *r, int64_t lo, int64_t hi, bool add)
{
	int64_t top;
	int rc;

	if (__builtin_add_overflow(hi, r->reach_ns, &top))
		top = INT64_MAX;
	if (!add)
		cells_reset(r->cells, r->ndevs);
	sqlite3_reset(r->s);
	sqlite3_bind_int64(r->s, 1, lo);
	sqlite3_bind_int64(r->s, 2, hi);
	sqlite3_bind_int64(r->s, 3, top);
	while ((rc = sqlite3_step(r->s)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(r->s, 0);
		int64_t ival = sqlite3_column_int64(r->s, 2);
		ssize_t d = dev_index(r, sqlite3_column_int(r->s, 1), add);
		struct cell *c;

		if (d == -1)
			continue;
		/* a damaged row must not overflow: no interval exceeds 60 s */
		ival = ival < 0 ? 0 : ival > DB_MAX_INTERVAL_NS / 1000000 ?
		    DB_MAX_INTERVAL_NS : ival * 1000000;
		c = add ? &r->totals[d] : &r->cells[d];
		c->samples++;
		if (ival > c->max_interval_ns)
			c->max_interval_ns = ival;
		for (int m = 0; m < M_N; m++) {
			int64_t mant;
			int scale;

			if (r->met[m] != NULL && value_of(r, 3 + m, r->met[m],
			    &mant, &scale))
				energy_add(&c->m[m], mant, scale, ts - ival, ts,
				    lo, hi);
		}
	}
	return rc == SQLITE_DONE ? CLIENT_EXIT_OK : db_error(r->db,
	    "the samples");
}

/*
 * The steps in order of start, the longer first when two start together
 * (so a step comes before those it encloses), then of the trace.
 */
static int
stepcmp(const void *a, const void *b)
{
	const struct trace_step *x = *(const struct trace_step *const *)a;
	const struct trace_step *y = *(const struct trace_step *const *)b;

	if (x->ts_ns != y->ts_ns)
		return (x->ts_ns > y->ts_ns) - (x->ts_ns < y->ts_ns);
	if (x->dur_ns != y->dur_ns)
		return (x->dur_ns < y->dur_ns) - (x->dur_ns > y->dur_ns);
	return (x > y) - (x < y);
}

/* How many later steps innermost() looks at for one step. */
#define ENCLOSED_LOOKAHEAD	64

static bool
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * Drop the ProfilerStep#N steps of order[0..*n) (sorted by stepcmp) that
 * enclose an iteration_N step, keeping the order; returns how many were
 * dropped.  The profiler's ProfilerStep#N wraps the iteration_N that the
 * user's code records, both match the default pattern, and the inner one
 * is the step the code named.  Steps of one name that enclose each other
 * stay: a ProfilerStep#N of the CPU encloses the GPU's copy of it.
 */
static size_t
innermost(const struct trace_step **order, size_t *n)
{
	size_t kept = 0;

	for (size_t i = 0; i < *n; i++) {
		const struct trace_step *a = order[i];
		int64_t end = a->ts_ns + (a->dur_ns > 0 ? a->dur_ns : 0);
		bool encloses = false;

		if (!has_prefix(a->name, "ProfilerStep#")) {
			order[kept++] = a;
			continue;
		}
		for (size_t j = i + 1; j < *n && j <= i + ENCLOSED_LOOKAHEAD &&
		    order[j]->ts_ns <= end; j++) {
			const struct trace_step *b = order[j];

			if (has_prefix(b->name, "iteration_") &&
			    b->ts_ns + (b->dur_ns > 0 ? b->dur_ns : 0) <= end) {
				encloses = true;
				break;
			}
		}
		if (!encloses)
			order[kept++] = a;
	}
	kept = *n - kept;
	*n -= kept;
	return kept;
}

/* The rows of one step: one per card, or one without a card if none. */
static int
step_rows(struct report *r, const struct trace_step *st)
{
	const struct trace_target *t = r->rq->t;
	int64_t lo, hi, dur = st->dur_ns > 0 ? st->dur_ns : 0;
	struct row w;
	int rc;

	if (__builtin_add_overflow(st->ts_ns, t->shift_ns, &lo) ||
	    __builtin_add_overflow(lo, dur, &hi)) {
		warnx("%s: step %s is out of range on the samples' clock",
		    t->path, st->name);
		return CLIENT_EXIT_FAILED;
	}
	if ((rc = sum_span(r, lo, hi, false)) != CLIENT_EXIT_OK)
		return rc;
	if (r->ndevs == 0) {
		steps_make_row(r, st->name, -1, NULL, lo, dur, &w);
		steps_emit(r, &w);
	}
	for (size_t d = 0; d < r->ndevs; d++) {
		steps_make_row(r, st->name, (int)d, &r->cells[d], lo, dur, &w);
		steps_emit(r, &w);
	}
	return CLIENT_EXIT_OK;
}

/* Every step, then the totals. */
static int
run(struct report *r)
{
	const struct trace_target *t = r->rq->t;
	const struct trace_info *in = &t->info;
	const struct trace_step **order;
	size_t nsteps = in->nsteps, dropped = 0;
	int64_t span = t->end_ns - t->start_ns;
	struct row w;
	int rc;

	if ((rc = sum_span(r, t->start_ns, t->end_ns, true)) != CLIENT_EXIT_OK)
		return rc;
	r->reach_ns = 0;
	for (size_t d = 0; d < r->ndevs; d++)
		if (r->totals[d].max_interval_ns > r->reach_ns)
			r->reach_ns = r->totals[d].max_interval_ns;
	if ((r->cells = calloc(r->ndevs + 1, sizeof(*r->cells))) == NULL ||
	    (order = calloc(in->nsteps, sizeof(*order))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < in->nsteps; i++)
		order[i] = &in->steps[i];
	qsort(order, in->nsteps, sizeof(*order), stepcmp);
	if (r->rq->innermost && (dropped = innermost(order, &nsteps)) > 0)
		fprintf(stderr, "spyremon: %zu ProfilerStep#N steps enclose an "
		    "iteration_N: the table has the iteration_N; "
		    "--step-pattern chooses others\n", dropped);
	steps_begin(r);
	for (size_t i = 0; i < nsteps && rc == CLIENT_EXIT_OK; i++)
		rc = step_rows(r, order[i]);
	free(order);
	if (rc != CLIENT_EXIT_OK)
		return rc;
	if (r->g != NULL) {
		yajl_gen_array_close(r->g);
		jsonw_str(r->g, "total");
		yajl_gen_array_open(r->g);
	}
	if (r->ndevs == 0) {
		steps_make_row(r, "total", -1, NULL, t->start_ns, span, &w);
		steps_emit(r, &w);
	}
	for (size_t d = 0; d < r->ndevs; d++) {
		steps_make_row(r, "total", (int)d, &r->totals[d], t->start_ns, span,
		    &w);
		steps_emit(r, &w);
	}
	if (r->g != NULL) {
		yajl_gen_array_close(r->g);
		yajl_gen_map_close(r->g);
		json_gen_flush(r->g, r->rq->out);
	}
	if (r->rq->format == STEPS_TABLE)
		steps_table_write(r);
	steps_notes(r);
	return CLIENT_EXIT_OK;
}

int
steps_report(sqlite3 *db, const struct steps_request *rq)
{
	struct report r = {
		.rq = rq, .db = db, .reach_ns = DB_MAX_INTERVAL_NS,
	};
	int rc;

	if (rq->t->info.nsteps == 0) {
		warnx("%s: no steps: no X event's whole name matches the step "
		    "pattern (by default %s); name the steps with "
		    "--step-pattern REGEX", rq->t->path, TRACE_STEP_PATTERN);
		return CLIENT_EXIT_FAILED;
	}
	for (int m = 0; m < M_N; m++)
		r.met[m] = db_catalog_find(rq->cat, steps_metric_keys[m]);
	if ((r.s = db_select_samples(db, r.met, M_N, rq->device_sql,
	    false)) == NULL)
		return db_error(db, "the samples");
	rc = run(&r);
	sqlite3_finalize(r.s);
	if (r.g != NULL)
		yajl_gen_free(r.g);
	for (size_t k = 0; k < r.nrows; k++)
		free(r.table[k]);
	free(r.table);
	free(r.cells);
	free(r.totals);
	free(r.devs);
	return rc;
}
