/*
 * ops: the per-operator table of "spyremon export --trace FILE --ops":
 * for each operator (device event name) its calls, device time, share
 * of the span, energy, energy net of idle, mean power, error bound and
 * whether it is exact to the sampling or an estimate, with TOPS and
 * TOPS/W where the trace gives flops; then the same per category
 * (compute, memory copy, communication, other, idle); then per card, its
 * span's energy, busy, idle and host-only time, idle power and how
 * closely operators plus idle add up to its energy.  The figures are
 * opsenergy.h's.
 */
#ifndef SPYREMON_OPS_H
#define SPYREMON_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "db.h"
#include "steps.h"
#include "target.h"

struct ops_request_out {
	const struct trace_target *t;
	const struct db_catalog *cat;
	const char *device_sql;		/* "" or " AND device IN (...)" */
	const char *step_pattern;	/* --step-pattern, or NULL */
	int64_t	 idle_lookback_ns;
	enum steps_format format;	/* the table, csv or json, as --steps */
	FILE	*out;
	/* one of several tables, as steps_request's tagged, host, first */
	bool	 tagged;
	const char *host;
	bool	 first;
	struct ops_events *events;	/* NULL, or the trace's, gathered (opsenergy.h) */
};

/*
 * Write the tables to rq->out.  Returns CLIENT_EXIT_OK, or another
 * CLIENT_EXIT_* after printing why (a trace without device events is an
 * error).
 */
int ops_report(sqlite3 *db, const struct ops_request_out *rq);

#endif
