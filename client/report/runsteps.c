/*
 * runsteps: a trace's active steps with time and energy (runsteps.h).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "db.h"
#include "runsteps.h"
#include "summary.h"

static int
bystart(const void *a, const void *b)
{
	const struct runstep *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (x->dur_ns < y->dur_ns) - (x->dur_ns > y->dur_ns);
}

/* Drop the steps that enclose another (sorted by start, longer first). */
static void
innermost(struct runsteps *rs)
{
	size_t k = 0;

	for (size_t i = 0; i < rs->n; i++) {
		const struct runstep *s = &rs->s[i];
		bool encloses = false;

		for (size_t j = i + 1; j < rs->n &&
		    rs->s[j].start_ns < s->start_ns + s->dur_ns; j++)
			if (rs->s[j].start_ns + rs->s[j].dur_ns <=
			    s->start_ns + s->dur_ns && (j != i)) {
				encloses = true;
				break;
			}
		if (!encloses)
			rs->s[k++] = *s;
	}
	rs->n = k;
}

int
runsteps_load(sqlite3 *db, const char *path, const char *align_window,
    struct runsteps *out)
{
	struct trace_clock_options o = { .align_window = align_window };
	const struct trace_info *in;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = trace_target_load(db, path, &o, &out->t)) != CLIENT_EXIT_OK)
		return rc;
	in = &out->t.info;
	if (in->nsteps == 0) {
		warnx("%s: no steps: no X event's whole name matches %s",
		    path, TRACE_STEP_PATTERN);
		return CLIENT_EXIT_FAILED;
	}
	if ((out->s = calloc(in->nsteps, sizeof(*out->s))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < in->nsteps; i++) {
		out->s[i].name = in->steps[i].name;
		out->s[i].start_ns = in->steps[i].ts_ns + out->t.shift_ns;
		out->s[i].dur_ns = in->steps[i].dur_ns;
	}
	out->n = in->nsteps;
	qsort(out->s, out->n, sizeof(*out->s), bystart);
	innermost(out);
	out->first_ns = out->s[0].start_ns;
	out->last_ns = out->s[0].start_ns + out->s[0].dur_ns;
	for (size_t i = 0; i < out->n; i++) {
		struct runstep *s = &out->s[i];
		struct summary sm;
		int64_t covered = 0;

		if (s->start_ns + s->dur_ns > out->last_ns)
			out->last_ns = s->start_ns + s->dur_ns;
		if (summary_compute(db, 0, s->start_ns, s->start_ns + s->dur_ns,
		    0, 0, &sm) == -1)
			return db_error(db, "the samples of a step");
		for (size_t c = 0; c < sm.ncards; c++) {
			if (!sm.cards[c].has_power)
				continue;
			s->has_energy = true;
			s->energy_j += summary_energy(&sm.cards[c]);
			if (sm.cards[c].covered_ns > covered)
				covered = sm.cards[c].covered_ns;
		}
		if (covered > 0)
			s->power_w = s->energy_j / ((double)covered / 1e9);
		summary_free(&sm);
	}
	return CLIENT_EXIT_OK;
}

void
runsteps_free(struct runsteps *rs)
{
	free(rs->s);
	trace_target_free(&rs->t);
	memset(rs, 0, sizeof(*rs));
}
