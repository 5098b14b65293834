/*
 * steporder: the steps a per-step table has, in its order (steps.h):
 * by start, the longer first, and without the ProfilerStep#N that
 * enclose an iteration_N; --steps and --breakdown take the same.
 */
#include <err.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "steps.h"

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

size_t
steps_order(const struct trace_info *in, bool inner,
    const struct trace_step ***out, size_t *dropped)
{
	const struct trace_step **order;
	size_t n = in->nsteps;

	if ((order = calloc(in->nsteps + 1, sizeof(*order))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < in->nsteps; i++)
		order[i] = &in->steps[i];
	qsort(order, in->nsteps, sizeof(*order), stepcmp);
	*dropped = inner ? innermost(order, &n) : 0;
	*out = order;
	return n;
}
