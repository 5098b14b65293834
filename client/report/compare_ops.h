/*
 * compare_ops: "spyremon compare" per operator, with --trace-base and
 * --trace-new: each run's operators as export --ops has them (opsenergy.h,
 * every trace of the run, all cards summed), side by side, the greatest
 * changes of energy first.
 *
 * An operator's energy is an estimate within its error bound (attrib.h),
 * so a change of energy is within the sum of the two bounds of the
 * difference: the interval [change - b, change + b].  Device time is the
 * trace's own, exact: its change has no interval.
 */
#ifndef SPYREMON_COMPARE_OPS_H
#define SPYREMON_COMPARE_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "jsonw.h"
#include "runsteps.h"

struct cmp_op {
	char	*name;
	uint64_t calls[2];		/* base, new */
	double	 energy_j[2], bound_j[2], device_ms[2];
};

struct cmp_ops {
	struct cmp_op *op;		/* by |change of energy|, greatest first */
	size_t	 n;
};

/*
 * The operators of both runs' traces over db's samples, each card's idle
 * power learned over lookback_ns.  CLIENT_EXIT_OK, or another
 * CLIENT_EXIT_* after saying why.  Free with compare_ops_free, also on
 * failure.
 */
int compare_ops_load(sqlite3 *db, const struct runsteps *base,
    const struct runsteps *new, int64_t lookback_ns, struct cmp_ops *out);

/* The first top operators as a table for a person. */
void compare_ops_write(FILE *fp, const struct cmp_ops *o, size_t top);

/* The first top operators as a JSON array. */
void compare_ops_json(yajl_gen g, const struct cmp_ops *o, size_t top);

void compare_ops_free(struct cmp_ops *o);

#endif
