/*
 * plot_priv: what the chart drawers of this folder (plot.c, plot_bars.c)
 * share: the font, the text and tick helpers, and the writing of one
 * drawing as both PNG and SVG.
 */
#ifndef SPYREMON_PLOT_PRIV_H
#define SPYREMON_PLOT_PRIV_H

#include <cairo.h>

#define PLOT_FONT	"sans-serif"
#define PLOT_TITLE_SIZE	18.0
#define PLOT_LABEL_SIZE	12.0

/* Draws a chart of arg on cr. */
typedef void plot_draw_fn(cairo_t *cr, const void *arg);

/*
 * Draw fn(arg) on a w by h canvas into png_path and svg_path.  0, or -1
 * after printing why.
 */
int plot_render(plot_draw_fn *fn, const void *arg, int w, int h,
    const char *png_path, const char *svg_path);

/*
 * Show s at (x, y) in the current font at size, its box placed so that
 * (align_x, align_y) of it (0..1, left/top to right/bottom) is there.
 */
void plot_text(cairo_t *cr, double x, double y, double size, double align_x,
    double align_y, const char *s);

/* A tick step of 1, 2 or 5 times a power of ten giving at most max ticks. */
double plot_nice_step(double span, int max);

#endif
