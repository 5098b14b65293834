/*
 * runsteps: the active steps of a run's traces with time and energy
 * (runsteps.h).
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "db.h"
#include "runsteps.h"
#include "steps.h"

static int
bystart(const void *a, const void *b)
{
	const struct runstep *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (x->dur_ns < y->dur_ns) - (x->dur_ns > y->dur_ns);
}

/*
 * Drop the steps of s[0..*n) (one trace's, sorted by start, longer first)
 * that enclose another.
 */
static void
innermost(struct runstep *s, size_t *n)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		bool encloses = false;

		for (size_t j = i + 1; j < *n &&
		    s[j].start_ns < s[i].start_ns + s[i].dur_ns; j++)
			if (s[j].start_ns + s[j].dur_ns <=
			    s[i].start_ns + s[i].dur_ns) {
				encloses = true;
				break;
			}
		if (!encloses)
			s[k++] = s[i];
	}
	*n = k;
}

/* Append the active steps of trace i to out->s. */
static int
add_steps(struct runsteps *out, size_t i)
{
	const struct trace_target *t = &out->t[i];
	const struct trace_info *in = &t->info;
	struct runstep *s;
	size_t n = in->nsteps;

	if (n == 0) {
		warnx("%s: no steps: no X event's whole name matches %s",
		    t->path, TRACE_STEP_PATTERN);
		return CLIENT_EXIT_FAILED;
	}
	if ((out->s = realloc(out->s, (out->n + n) * sizeof(*out->s))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	s = out->s + out->n;
	memset(s, 0, n * sizeof(*s));
	for (size_t k = 0; k < n; k++) {
		s[k].name = in->steps[k].name;
		s[k].trace = i;
		s[k].start_ns = in->steps[k].ts_ns + t->shift_ns;
		s[k].dur_ns = in->steps[k].dur_ns;
	}
	qsort(s, n, sizeof(*s), bystart);
	innermost(s, &n);
	out->n += n;
	return CLIENT_EXIT_OK;
}

/*
 * The energy of all cards over each step of trace i, s[0..n): the sums
 * of --steps (steps_means), each card's power integrated over the step
 * from its samples in the trace's time, across any step of the host
 * clock (target.h).
 */
static int
measure(sqlite3 *db, const struct db_catalog *cat,
    const struct trace_target *t, struct runstep *s, size_t n)
{
	struct steps_request rq = { .t = t, .cat = cat, .device_sql = "" };
	struct steps_mean *m;
	int64_t *lo, *hi, *covered;
	size_t nm;
	int rc;

	if ((lo = calloc(n + 1, sizeof(*lo))) == NULL ||
	    (hi = calloc(n + 1, sizeof(*hi))) == NULL ||
	    (covered = calloc(n + 1, sizeof(*covered))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t k = 0; k < n; k++) {
		lo[k] = s[k].start_ns;
		hi[k] = s[k].start_ns + s[k].dur_ns;
	}
	if ((rc = steps_means(db, &rq, lo, hi, n, &m, &nm)) == CLIENT_EXIT_OK) {
		for (size_t k = 0; k < nm; k++) {
			struct runstep *x = &s[m[k].window];

			if (!m[k].has_energy)
				continue;
			x->has_energy = true;
			x->energy_j += m[k].energy_j;
			if (m[k].covered_ns > covered[m[k].window])
				covered[m[k].window] = m[k].covered_ns;
		}
		for (size_t k = 0; k < n; k++)
			if (covered[k] > 0)
				s[k].power_w = s[k].energy_j /
				    ((double)covered[k] / 1e9);
		free(m);
	}
	free(lo);
	free(hi);
	free(covered);
	return rc;
}

int
runsteps_load(sqlite3 *db, const struct trace_list *l,
    const char *align_window, struct runsteps *out)
{
	struct trace_clock_options o = { .align_window = align_window };
	struct db_catalog cat;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((out->t = calloc(l->n + 1, sizeof(*out->t))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < l->n; i++) {
		out->nt = i + 1;
		if ((rc = trace_target_load(db, l->paths[i], &o, &out->t[i])) !=
		    CLIENT_EXIT_OK || (rc = add_steps(out, i)) != CLIENT_EXIT_OK)
			return rc;
	}
	if (out->n == 0)
		return CLIENT_EXIT_OK;
	out->first_ns = out->s[0].start_ns;
	out->last_ns = out->s[0].start_ns + out->s[0].dur_ns;
	for (size_t i = 0; i < out->n; i++) {
		struct runstep *s = &out->s[i];

		if (s->start_ns < out->first_ns)
			out->first_ns = s->start_ns;
		if (s->start_ns + s->dur_ns > out->last_ns)
			out->last_ns = s->start_ns + s->dur_ns;
	}
	if ((rc = db_catalog_load(db, &cat)) != CLIENT_EXIT_OK)
		return rc;
	for (size_t i = 0; i < out->nt && rc == CLIENT_EXIT_OK; i++) {
		size_t first, n = runsteps_of(out, i, &first);

		if (n > 0)
			rc = measure(db, &cat, &out->t[i], &out->s[first], n);
	}
	db_catalog_free(&cat);
	return rc;
}

size_t
runsteps_of(const struct runsteps *rs, size_t i, size_t *first)
{
	size_t k = 0, n = 0;

	while (k < rs->n && rs->s[k].trace < i)
		k++;
	*first = k;
	while (k + n < rs->n && rs->s[k + n].trace == i)
		n++;
	return n;
}

void
runsteps_label(const struct runsteps *rs, size_t i, char *buf, size_t len)
{
	const struct trace_info *in = &rs->t[i].info;

	if (in->has_rank)
		snprintf(buf, len, "rank %" PRId64, in->rank);
	else
		snprintf(buf, len, "trace %zu", i);
}

void
runsteps_free(struct runsteps *rs)
{
	free(rs->s);
	for (size_t i = 0; i < rs->nt; i++)
		trace_target_free(&rs->t[i]);
	free(rs->t);
	memset(rs, 0, sizeof(*rs));
}
