/*
 * compare: two windows side by side, with verdicts (compare.c says how);
 * "spyremon compare", and the baseline section of "spyremon report".
 */
#ifndef SPYREMON_COMPARE_H
#define SPYREMON_COMPARE_H

#include <stdbool.h>
#include <stdio.h>

#include <sqlite3.h>
#include <yajl/yajl_gen.h>

#include "proto.h"
#include "runsteps.h"
#include "stats.h"
#include "tracelist.h"
#include "winsum.h"

struct cmp_fig {
	char	 name[40];
	const char *unit;
	int	 card;		/* -1: all cards */
	bool	 has;		/* both windows have it */
	double	 base, new;
	bool	 tested;
	struct stats_sample sb, sn;
	struct stats_welch w;
	const char *verdict;	/* "higher", "within noise", ... or "-" */
};

struct cmp {
	struct winsum base, new;
	bool	 traces;
	struct runsteps rb, rn;
	double	 min_change;
	struct cmp_fig *f;
	size_t	 n, cap;
	size_t	 step_time, step_energy;	/* their index in f, with traces */
	char	 regression[3][160];
	size_t	 nreg;
};

/*
 * Load both windows (and with trace_base, the traces of both runs, each
 * a trace or the ranks' traces of one run, whose steps are taken
 * together; with align, each trace's first event at its window's begin,
 * as export --align-window does) and work out the figures.  Free with
 * compare_free, also on failure.
 */
int compare_load(sqlite3 *db, const struct winsum_from *from,
    const char *base, const char *new, const struct trace_list *trace_base,
    const struct trace_list *trace_new, bool align, int64_t lookback,
    double min_change, struct cmp *c);

/* CLIENT_EXIT_INCOMPLETE if either window is (winsum.h), else OK. */
int compare_settled(const struct cmp *c);

void compare_free(struct cmp *c);

/* The windows' ids, times and metadata side by side (a Markdown table). */
void compare_write_windows(FILE *fp, const struct cmp *c, bool markdown);

/* The figures with their verdicts (a Markdown table). */
void compare_write_figures(FILE *fp, const struct cmp *c, bool markdown);

/* A figure's change relative to its base, %; NAN from a base of 0. */
double compare_rel(const struct cmp_fig *f);

/* A figure as a JSON object, its interval and test where it has them. */
void compare_gen_fig(yajl_gen g, const struct cmp_fig *f);

#endif
