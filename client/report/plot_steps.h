/*
 * plot_steps: a stacked bar chart, drawn with cairo as plot.h's charts are
 * and written as PNG and SVG: bars in groups (a step's, one bar per card),
 * each bar the stack of its classes' values from the bottom up, a legend
 * of the classes, each bar's label (its card) under it where it fits in
 * the bar's slot, and the group's name under the group (thinned so that
 * no two overlap).
 */
#ifndef SPYREMON_PLOT_STEPS_H
#define SPYREMON_PLOT_STEPS_H

#include <stddef.h>

#define PLOT_STEPS_MAX_CLASSES	8
#define PLOT_STEPS_HEIGHT	560

struct plot_step_bar {
	const char *group;	/* bars in a row with the same group are one */
	const char *label;	/* under the bar: its card ("c0", "r1c0") */
	double	 v[PLOT_STEPS_MAX_CLASSES];	/* each class's value, >= 0 */
};

struct plot_steps {
	const char *title;
	const char *y_title;		/* "time in the step (ms)" */
	const char *x_title;		/* under the groups' names */
	const char *const *classes;	/* the legend, bottom class first */
	const double (*rgb)[3];		/* each class's colour */
	size_t	 nclasses;
	const struct plot_step_bar *bars;
	size_t	 nbars;
};

/* Draw c into png_path and svg_path.  0, or -1 after printing why. */
int plot_steps_write(const struct plot_steps *c, const char *png_path,
    const char *svg_path);

#endif
