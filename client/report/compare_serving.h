/*
 * compare_serving: the serving figures of two windows begun with --vllm
 * (serving.h) side by side in "spyremon compare": requests and tokens,
 * and the energy per request and per generated token of each, with the
 * change and its 95 % interval.
 *
 * The interval comes from batch means: each window is cut into K equal
 * parts (K = CMP_SERVING_BATCHES, fewer when a part would hold less than
 * two of its longest sample interval), the cards' energy of each part
 * E_k is read from the samples, and K * E_k / count is one estimate of
 * the energy per request (per generated token); their mean is the sum
 * of the parts' energy over the count.  The parts' estimates give each
 * window's 95 % interval (Student's t) and Welch's test and interval of
 * the change.  It assumes the load steady over the window, its requests
 * and tokens spread evenly over the parts (as a constant load is): the
 * interval says how steady the cards' energy was, not how the server's
 * counts fell.
 */
#ifndef SPYREMON_COMPARE_SERVING_H
#define SPYREMON_COMPARE_SERVING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>
#include <yajl/yajl_gen.h>

#include "serving.h"
#include "stats.h"
#include "winsum.h"

#define CMP_SERVING_BATCHES	10
#define CMP_SERVING_NFIG	2	/* per request, per generated token */

struct cmp_serving_fig {
	const char *name;	/* "energy per request", ... */
	const char *key;	/* its JSON name: "per_request", ... */
	bool	 has;		/* both windows have it */
	double	 base, new;	/* J, from the summaries (serving.h) */
	bool	 tested;	/* both have batch means */
	struct stats_sample sb, sn;	/* the batch estimates */
	struct stats_welch w;
	const char *verdict;	/* "higher", "lower", "within noise", "-" */
};

struct cmp_serving {
	bool	 any;		/* either window was begun with --vllm */
	struct serving sb, sn;
	size_t	 kb, kn;	/* the parts each window was cut into */
	struct cmp_serving_fig fig[CMP_SERVING_NFIG];
};

/*
 * The serving figures of base and new (read from db), a verdict for a
 * change of at least min_change % that Welch's test finds at the 5 %
 * level.  CLIENT_EXIT_OK, or a database error said.
 */
int compare_serving_load(sqlite3 *db, const struct winsum *base,
    const struct winsum *new, double min_change, struct cmp_serving *out);

/* The figures as a table with a line on the method; nothing if !any. */
void compare_serving_write(FILE *fp, const struct cmp_serving *s);

/* The member "serving" of compare --json; none if !any. */
void compare_serving_json(yajl_gen g, const struct cmp_serving *s);

#endif
