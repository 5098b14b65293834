/*
 * import_check: what the rows of an imported file say as a whole, between
 * its two passes (contract in import_run.h).
 *
 * The keys are sorted by device, stamp and line.  Two rows with the same
 * device and stamp are the same sample: in an export of several spans
 * (a csv with columns before epoch_ns) the later one is a repeat and is
 * skipped, anywhere else it is an error.  The rows of a device must come
 * in time order, since the store keeps a device's stamps increasing.
 */
#include "import_run.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "db.h"
#include "format.h"
#include "timeparse.h"

static int
cmp_order(const void *a, const void *b, void *arg)
{
	const struct import_key *keys = arg;
	const struct import_key *x = &keys[*(const size_t *)a];
	const struct import_key *y = &keys[*(const size_t *)b];

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Mark repeated samples, or report them. */
static void
find_repeats(struct import_run *r)
{
	bool labelled = r->format == IMPORT_CSV && r->ch.nlabels > 0;
	char t[FMT_BUFLEN];
	size_t first = 0;

	for (size_t i = 1; i < r->nkeys; i++) {
		const struct import_key *a = &r->keys[r->order[first]];
		struct import_key *k = &r->keys[r->order[i]];

		if (k->device != a->device || k->ts_ns != a->ts_ns) {
			first = i;
			continue;
		}
		/* reported or not, the repeat is out of the later checks */
		k->repeat = true;
		if (labelled) {
			r->nrepeats++;
			continue;
		}
		if (r->format == IMPORT_AIUSMI)
			import_run_error(r, k->line, "device %d has a row "
			    "stamped %s at line %zu already: aiu-smi logs with "
			    "an interval under 1s cannot be imported",
			    k->device, fmt_time_ms(k->ts_ns, t, sizeof(t)),
			    a->line);
		else
			import_run_error(r, k->line, "device %d at %s repeats "
			    "line %zu", k->device,
			    fmt_time_ms(k->ts_ns, t, sizeof(t)), a->line);
	}
}

/*
 * In time order, a device's rows must also be in file order: a row that
 * comes later in the file but earlier in time is reported.
 */
static void
find_disorder(struct import_run *r)
{
	char a[FMT_BUFLEN], b[FMT_BUFLEN];
	const struct import_key *prev = NULL;

	for (size_t i = 0; i < r->nkeys; i++) {
		const struct import_key *k = &r->keys[r->order[i]];

		if (k->repeat)
			continue;
		if (prev != NULL && prev->device == k->device &&
		    prev->line > k->line)
			import_run_error(r, prev->line, "device %d at %s is "
			    "before line %zu (%s): the rows go back in time%s",
			    prev->device, fmt_time_ms(prev->ts_ns, a, sizeof(a)),
			    k->line, fmt_time_ms(k->ts_ns, b, sizeof(b)),
			    r->format == IMPORT_AIUSMI ? " (was the clock set "
			    "back, or is --tz wrong?)" : "");
		prev = k;
	}
}

/* aiu-smi's interval: --interval, or the most common step of the stamps. */
static int
set_interval(struct import_run *r)
{
	int64_t *ts, step;
	int *dev;
	size_t n = 0;

	r->interval_ms = r->o->interval_ms;
	if (r->interval_ms == 0) {
		ts = calloc(r->nkeys, sizeof(*ts));
		dev = calloc(r->nkeys, sizeof(*dev));
		if (ts == NULL || dev == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		for (size_t i = 0; i < r->nkeys; i++) {
			const struct import_key *k = &r->keys[r->order[i]];

			ts[n] = k->ts_ns / (int64_t)NSEC_PER_SEC;
			dev[n++] = k->device;
		}
		step = import_infer_interval(ts, dev, n);
		free(ts);
		free(dev);
		if (step == -1)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		if (step * 1000 > IMPORT_INTERVAL_MAX_MS) {
			warnx("%s: the rows are %llds apart, more than the 60s "
			    "that spyremon handles", r->o->file,
			    (long long)step);
			return CLIENT_EXIT_FAILED;
		}
		r->interval_inferred = step > 0;
		r->interval_ms = step > 0 ? (uint32_t)step * 1000 : 1000;
	}
	for (size_t i = 0; i < r->nkeys; i++)
		r->keys[i].interval_ms = r->interval_ms;
	return CLIENT_EXIT_OK;
}

static struct import_span *
push_span(struct import_span **arr, size_t *n, const struct import_key *k)
{
	struct import_span *s;

	if ((s = reallocarray(*arr, *n + 1, sizeof(*s))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	*arr = s;
	s = &s[(*n)++];
	s->device = k->device;
	s->first_ns = s->last_ns = k->ts_ns;
	s->coarse = k->coarse;
	return s;
}

/* Each device's span, its runs of equal coarse, and the totals. */
static void
sum_up(struct import_run *r)
{
	struct import_span *span = NULL, *run = NULL;

	for (size_t i = 0; i < r->nkeys; i++) {
		const struct import_key *k = &r->keys[r->order[i]];

		if (k->repeat)
			continue;
		if (span == NULL || span->device != k->device) {
			span = push_span(&r->spans, &r->nspans, k);
			run = push_span(&r->runs, &r->nruns, k);
		} else if (run->coarse != k->coarse)
			run = push_span(&r->runs, &r->nruns, k);
		span->last_ns = run->last_ns = k->ts_ns;
		if (r->nrows == 0 || k->ts_ns < r->first_ns)
			r->first_ns = k->ts_ns;
		if (r->nrows == 0 || k->ts_ns > r->last_ns)
			r->last_ns = k->ts_ns;
		r->nrows++;
		r->ncoarse += k->coarse;
	}
}

/* What the user should know of the bus IDs: unmapped devices, unused options. */
static void
check_bus_ids(struct import_run *r)
{
	for (size_t i = 0; i < r->ndevs; i++) {
		if (!r->devs[i].unmapped)
			continue;
		r->unmapped = reallocarray(r->unmapped, r->nunmapped + 1,
		    sizeof(*r->unmapped));
		if (r->unmapped == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		r->unmapped[r->nunmapped++] = r->devs[i].device;
	}
	for (size_t i = 0; i < r->o->nmap; i++) {
		bool found = false;

		for (size_t j = 0; j < r->nspans && !found; j++)
			found = r->spans[j].device == r->o->map[i].device;
		if (!found)
			warnx("--device-map: %s has no rows of device %d",
			    r->o->file, r->o->map[i].device);
	}
}

int
import_run_check(struct import_run *r)
{
	int rc;

	if ((r->order = calloc(r->nkeys, sizeof(*r->order))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < r->nkeys; i++)
		r->order[i] = i;
	qsort_r(r->order, r->nkeys, sizeof(*r->order), cmp_order, r->keys);
	r->pass = 0;
	find_repeats(r);
	find_disorder(r);
	if ((rc = import_run_errors(r)) != CLIENT_EXIT_OK)
		return rc;
	if (r->format == IMPORT_AIUSMI &&
	    (rc = set_interval(r)) != CLIENT_EXIT_OK)
		return rc;
	sum_up(r);
	check_bus_ids(r);
	return CLIENT_EXIT_OK;
}

static struct db_key
import_key_at(const void *ctx, size_t i)
{
	const struct import_run *r = ctx;
	const struct import_key *k = &r->keys[r->order[i]];

	return (struct db_key){ k->device, k->ts_ns };
}

size_t
import_run_line_of(const struct import_run *r, int device, int64_t ts_ns)
{
	size_t lo = db_key_search(r->nkeys, import_key_at, r,
	    (struct db_key){ device, ts_ns }, true);

	if (lo < r->nkeys) {
		const struct import_key *k = &r->keys[r->order[lo]];

		if (k->device == device && k->ts_ns == ts_ns && !k->repeat)
			return k->line;
	}
	return 0;
}
