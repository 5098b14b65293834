/*
 * report: "spyremon report" (report.c), and what report.md's writer
 * (report_md.c) reads of it.
 */
#ifndef SPYREMON_REPORT_H
#define SPYREMON_REPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "bdranks.h"
#include "bdrun.h"
#include "client.h"
#include "compare.h"
#include "db.h"
#include "opsenergy.h"
#include "runmeta.h"
#include "runsteps.h"
#include "tracelist.h"
#include "winsum.h"

enum { S_PWR, S_BUSY, S_GTEMP, S_RDMEM, S_WRMEM, S_RXPCI, S_TXPCI, S_N };
extern const char *const report_series_keys[S_N];

/*
 * One card's samples: times in s from the window's begin, and whether
 * each row came from the card's metric file (its values as the rule of
 * bestsrc.h selects them: NaN where the other stream gives the metric).
 */
struct cardseries {
	int	 card;
	double	*t0, *t1, *v[S_N];
	unsigned char *file;
	size_t	 n, cap;
	size_t	 nfile;		/* rows with file set */
};

struct series {
	struct cardseries *c;
	size_t	 n;
	bool	 has[S_N];	/* the metric is in the catalog */
	bool	 damaged;	/* the read stopped at a damaged page */
};

/*
 * The samples of the pieces p[0..np) (db_window_pieces; one piece of any
 * epoch for a span of stamps), the first reaching pad earlier and the
 * last pad later, into *out (free with report_series_free): times from
 * the first piece's begin, each piece drawn on from where the one before
 * ended, so a window a step of the host clock crossed is drawn as long
 * as it was open.  A damaged page ends the read (out->damaged).
 */
int report_series_load(sqlite3 *db, const struct db_catalog *cat,
    const struct db_piece *p, size_t np, int64_t pad, struct series *out);
void report_series_free(struct series *s);

struct report {
	sqlite3	*db;
	struct client *cl;
	const char *dir;		/* as given */
	char	 tmp[PATH_MAX];		/* the directory being written */
	struct winsum ws;
	bool	 has_trace;
	struct trace_list traces;	/* --trace, directories expanded */
	struct runsteps rs;		/* one trace or the ranks' of the run */
	bool	 has_base;
	bool	 base_found;		/* not given: its workload's baseline */
	struct cmp cmp;
	struct db_catalog cat;
	struct series ser;
	/* the window's pieces across epochs of the host clock, which the
	 * plots draw (db_window_pieces); aiusmi.csv's: those, or the steps'
	 * span in the trace's time, a piece per epoch (db_trace_pieces) */
	struct db_piece *wpieces, *apieces;
	size_t	 nwpieces, napieces;
	int64_t	 lo, hi;		/* aiusmi.csv's span: its pieces' hull */
	int64_t	 aiusmi_rows;		/* one per card per interval */
	int64_t	 aiusmi_file_rows;	/* metric-file rows paired into them */
	char	 plots[3][16];
	size_t	 nplots;
	struct runmeta run;		/* what the run recorded of itself */
	bool	 has_ops;
	struct ops_result ops;		/* the first trace's operators */
	bool	 ops_plot;		/* their chart by category was drawn */
	bool	 has_why;
	struct bd_trace *why_bt;	/* the first trace's events */
	struct bd_run why;		/* its breakdown and counters */
	/* with several traces, the other ranks' */
	struct bd_trace **why_other_bt;
	struct bd_run *why_other;
	size_t	 why_nother;
	/* every trace's cards labelled and their steps matched (bdranks.h) */
	struct bd_ranks why_ranks;
	bool	 why_matched;		/* why_ranks is set */
	bool	 why_plot;		/* breakdown.png and .svg written */
	char	 trace_why[PATH_MAX + 128];	/* why the recorded trace is not used */
};

/* Write r->tmp/report.md.  CLIENT_EXIT_OK, or another after saying why. */
int report_write_md(struct report *r);

#endif
