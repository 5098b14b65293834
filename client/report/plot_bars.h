/*
 * plot_bars: a stacked bar chart, one bar per group (a card), each cut
 * into the same series (categories of energy), drawn with cairo as PNG
 * and SVG (plot.h's writer).  Each segment whose height allows it is
 * labelled with its value, and each bar with its total on top; the
 * legend lists the series top to bottom as they stack.
 */
#ifndef SPYREMON_PLOT_BARS_H
#define SPYREMON_PLOT_BARS_H

#include <stddef.h>

struct plot_bars {
	const char *title;
	const char *unit;		/* of the values: "J" */
	const char *const *groups;	/* the bars' labels: "card 0" */
	size_t	 ngroups;
	const char *const *series;	/* the segments' names, bottom first */
	const double (*rgb)[3];		/* each series' colour, 0..1 */
	size_t	 nseries;
	const double *v;		/* v[g * nseries + k] >= 0 */
};

/* The chart's width for ngroups bars, and its height. */
int plot_bars_width(size_t ngroups);
#define PLOT_BARS_HEIGHT	520

/* Draw b into png_path and svg_path.  0, or -1 after printing why. */
int plot_bars_write(const struct plot_bars *b, const char *png_path,
    const char *svg_path);

#endif
