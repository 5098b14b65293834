/*
 * report_ops: report.md's "Where the energy went": the energy of the
 * first trace's operators, categories and idle time per card, shared from
 * the stored samples by analysis/opsenergy.h, with its error stated.
 */
#ifndef SPYREMON_REPORT_OPS_H
#define SPYREMON_REPORT_OPS_H

#include <stdio.h>

#include "report.h"

#define REPORT_OPS_TOP	10	/* operators listed; export --ops has all */

/*
 * With a trace: share the energy over its span into r->ops (a trace with
 * no device event gives none, and the section says so).  CLIENT_EXIT_OK,
 * or another CLIENT_EXIT_* after saying why.
 */
int report_ops_load(struct report *r);

#define REPORT_OPS_PLOT	"energy_categories"	/* its .png and .svg */

/*
 * With operators on some card: the chart of each card's energy by
 * category, stacked, into r->tmp (REPORT_OPS_PLOT), r->ops_plot set.
 * CLIENT_EXIT_OK, or CLIENT_EXIT_FAILED after saying why.
 */
int report_ops_plot(struct report *r);

/* The section, if r has a trace. */
void report_ops_md(FILE *fp, const struct report *r);

#endif
