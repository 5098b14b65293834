/*
 * plot_priv: what the chart drawers of this folder (plot.c, plot_bars.c,
 * plot_steps.c) share beyond plot.h's functions: the font and its sizes,
 * and the parts every chart has (plot.c draws them).
 */
#ifndef SPYREMON_PLOT_PRIV_H
#define SPYREMON_PLOT_PRIV_H

#include "plot.h"

#define PLOT_FONT	"sans-serif"
#define PLOT_TITLE_SIZE	18.0
#define PLOT_LABEL_SIZE	12.0

/* A white canvas width wide with title centred on top; the font normal. */
void plot_begin(cairo_t *cr, double width, const char *title);

/*
 * Grey grid lines across [px0, px1] and their values left of px0, every
 * step from the first multiple of step at or above y0 up to y1, the y
 * range [y0, y1] drawn from py1 (y0) up to py0 (y1).
 */
void plot_y_grid(cairo_t *cr, double px0, double px1, double py0, double py1,
    double y0, double y1, double step);

/* The y axis' title, turned upright, at x between py0 and py1. */
void plot_y_title(cairo_t *cr, double x, double py0, double py1,
    const char *title);

/* A legend's line at (x, y): a swatch of rgb and name beside it. */
void plot_legend_entry(cairo_t *cr, double x, double y, const double rgb[3],
    const char *name);

#endif
