/*
 * metrics: the columns aiu-smi is known to print (see SPYRE.md), with the
 * unit, metric group, printed precision and reliability of each.
 *
 * The store seeds its catalog from this table; the simulator prints its
 * header from it.  Keys that aiu-smi prints but this table lacks are not
 * errors: the store adds them to its catalog when they first appear.
 */
#ifndef SPYREMON_METRICS_H
#define SPYREMON_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Values are kept as integers scaled by 10^decimals (the digits printed
 * after the point); 10^18 is the largest power of ten an int64_t holds.
 */
#define METRIC_MAX_SCALE	18
extern const int64_t metric_pow10[METRIC_MAX_SCALE + 1];	/* 10^i */

struct metric_def {
	const char *key;	/* header key, the cell's first word */
	const char *unit;	/* the rest of the header cell */
	char group;		/* '*' always shown, else D R M U P S */
	int decimals;		/* digits aiu-smi prints after the point */
	bool reliable;		/* false: known wrong on current builds */
	const char *description;
};

extern const struct metric_def metric_defs[];
extern const size_t metric_ndefs;

/* The definition of key, or NULL if aiu-smi is not known to print it. */
const struct metric_def *metric_def_find(const char *key);

/* True if group letter g is selected by the -g argument groups ("A" = all). */
bool metric_group_selected(const char *groups, char g);

#endif
