/*
 * steps: the per-step table of "spyremon export --trace FILE --steps":
 * for each step of the trace (trace_info.steps) and each card, its
 * duration, the mean and maximum power, the energy, the mean busy % and
 * memory and PCIe bandwidths, then a total row per card over the whole
 * span.
 *
 * Power is taken as piecewise constant over each sample's interval
 * (t - d, t], so the energy of a step is the exact integral of that
 * function over the step, each interval clipped to it; means are weighted
 * by the time each sample covers within the step.  A step shorter than
 * the sampling interval is marked under-sampled.
 */
#ifndef SPYREMON_STEPS_H
#define SPYREMON_STEPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>
#include <yajl/yajl_gen.h>

#include "db.h"
#include "target.h"

enum steps_format {
	STEPS_TABLE,		/* aligned columns, for a terminal */
	STEPS_CSV,		/* a header whose first column is "step" */
	STEPS_JSON,		/* {"trace":..., "steps":[...], "total":[...]} */
};

struct steps_request {
	const struct trace_target *t;
	const struct db_catalog *cat;
	const char *device_sql;		/* "" or " AND device IN (...)" */
	enum steps_format format;
	FILE	*out;
	/*
	 * Leave out steps that enclose other steps, as ProfilerStep#N
	 * encloses the iteration_N recorded inside it: for the default
	 * pattern, which matches both.
	 */
	bool	 innermost;
	/*
	 * One of several tables (several traces, or several databases), each
	 * written by its own call: tagged adds the database's host and the
	 * trace's rank (csv: leading host,rank columns, the header only when
	 * first; json: "host" and "rank" members of the trace's object).
	 * The caller puts the JSON objects in an array and the tables under
	 * headings.
	 */
	bool	 tagged;
	const char *host;		/* the database's host, when tagged */
	bool	 first;
};

/*
 * Write the table to rq->out.  Returns CLIENT_EXIT_OK, or another
 * CLIENT_EXIT_* after printing why (a trace without steps is an error
 * that names --step-pattern).
 */
int steps_report(sqlite3 *db, const struct steps_request *rq);

/* The bandwidths of a steps_mean, in the table's order. */
enum steps_bw { STEPS_RDMEM, STEPS_WRMEM, STEPS_RXPCI, STEPS_TXPCI, STEPS_NBW };

/* One card's samples over one window, as a row of the table has them. */
struct steps_mean {
	size_t	 window;		/* its index in steps_means' lo, hi */
	int	 device;
	uint64_t samples;		/* of the card's row source */
	int64_t	 covered_ns;		/* the window's time power samples cover */
	bool	 has_pwr, has_busy;
	double	 pwr_w, busy_pct;	/* time-weighted means */
	bool	 has_energy;
	double	 energy_j;		/* power's integral: --steps' energy_J */
	/* rdmem, wrmem, rxpci, txpci: time-weighted means, GiB/s */
	bool	 has_bw[STEPS_NBW];
	double	 bw_gibps[STEPS_NBW];
	bool	 has_gtemp;
	double	 gtemp_c;		/* the card's temperature, time-weighted */
};

/*
 * For each window [lo[i], hi[i]] (absolute ns) and each card with samples
 * in rq->t's span, the mean power, busy %, bandwidths and temperature and
 * the time covered, by the
 * same sums as the table's rows: *out (to free) gets *nout of them, by
 * window then card.  Returns CLIENT_EXIT_OK, or another CLIENT_EXIT_*
 * after printing why.
 */
int steps_means(sqlite3 *db, const struct steps_request *rq,
    const int64_t *lo, const int64_t *hi, size_t n, struct steps_mean **out,
    size_t *nout);

/*
 * The steps of in that the table has, in *out (to free) in order of
 * start, the longer first; innermost: leave out the ProfilerStep#N that
 * enclose an iteration_N (counted in *dropped).  Returns their count.
 * In steporder.c.
 */
size_t steps_order(const struct trace_info *in, bool innermost,
    const struct trace_step ***out, size_t *dropped);

/*
 * Into an open JSON map: "trace" (t's path) and, when tagged (several
 * traces), "host" and "rank" (null if t has none): the head that
 * --steps and --ops give each trace's object.
 */
void steps_json_trace(yajl_gen g, const struct trace_target *t, bool tagged,
    const char *host);

/*
 * The opening of a trace's --csv or --json output, as --steps, --ops and
 * --breakdown write it.  steps_csv_head: whether the output starts with
 * the header (with several tagged traces, only the first's), "host,rank,"
 * then already written to fp when tagged.  steps_json_open: a new
 * generator with the trace's object open and its head (steps_json_trace)
 * written; dies when out of memory.
 */
bool steps_csv_head(FILE *fp, bool tagged, bool first);
yajl_gen steps_json_open(const struct trace_target *t, bool tagged,
    const char *host);

#endif
