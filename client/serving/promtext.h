/*
 * promtext: a reader of the Prometheus text exposition format (0.0.4, and
 * the sample lines of OpenMetrics), for the counters a served model
 * exposes (vllm.h).  Pure: it takes the text read, no I/O.
 *
 * A sample line is NAME[{LABEL="VALUE",...}] VALUE [TIMESTAMP]; lines
 * starting with '#' and blank lines are skipped; label values may hold
 * \\, \" and \n escapes; values are decimal or hexadecimal floats, NaN,
 * +Inf and -Inf.  CRLF line ends are taken.
 */
#ifndef SPYREMON_PROMTEXT_H
#define SPYREMON_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>

/* One family's samples, summed over every label set. */
struct promtext_sum {
	const char *name;	/* the sample name sought, as written */
	double sum;		/* the sum of its samples' values */
	size_t n;		/* how many samples had that name; 0: absent */
};

#define PROMTEXT_WHY	160

/*
 * For each of sums[0..nsums), the sum of the values of the samples named
 * exactly sums[i].name over all label sets, and their count.  0 once the
 * whole text is read; -1 at the first malformed line, with why set to
 * "line N: what is wrong" (sums are then not to be used).
 */
int promtext_sums(const char *text, size_t len, struct promtext_sum *sums,
    size_t nsums, char *why, size_t whylen);

#endif
