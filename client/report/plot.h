/*
 * plot: line charts of samples over time, drawn once with cairo and
 * written both as PNG (to paste into an issue) and as SVG.
 *
 * A chart is one or more panels stacked over a shared time axis (seconds
 * from the window's begin, with the begin's UTC time in the axis title).
 * Each panel has a title, a y axis with its unit, one line per card, and
 * a legend.  A card has the same colour in every chart (plot_card_rgb).
 * The profiler's steps are shaded, alternately darker and lighter so that
 * steps that touch stay apart; the window's begin and end are dashed
 * vertical lines.  Each value is drawn as held over its sample's interval
 * (a step line), the way the energy is integrated.
 */
#ifndef SPYREMON_PLOT_H
#define SPYREMON_PLOT_H

#include <stdbool.h>
#include <stddef.h>

/* cairo's context, as cairo.h declares it: only plot*.c include that */
typedef struct _cairo cairo_t;

/* One card's values in a panel: at t[i] (s) the value v[i] began. */
struct plot_line {
	int	 card;
	const double *t0, *t1;	/* each value holds over [t0[i], t1[i]] */
	const double *v;
	size_t	 n;
};

struct plot_panel {
	const char *title;	/* "Power" */
	const char *unit;	/* "W" */
	const struct plot_line *lines;
	size_t	 nlines;
	bool	 y_from_zero;	/* start the y axis at 0 */
};

struct plot_chart {
	const char *title;
	const char *time_origin;	/* "2026-12-02T19:00:00Z" */
	double	 x0, x1;		/* the x range, s */
	double	 mark0, mark1;		/* the window's begin and end, s */
	const double *shade0, *shade1;	/* steps, s */
	size_t	 nshade;
	const struct plot_panel *panels;
	size_t	 npanels;
};

/* The chart's size in pixels (PNG) and points (SVG). */
#define PLOT_WIDTH		1200
#define PLOT_PANEL_HEIGHT	300
#define PLOT_TOP		60	/* the title */
#define PLOT_BOTTOM		60	/* the time axis' labels and title */
#define PLOT_LEFT		90	/* the y axis' labels */
#define PLOT_RIGHT		150	/* the legend */

/* The chart's height for npanels panels. */
int plot_height(size_t npanels);

/* The colour of card (components 0..1), the same in every chart. */
void plot_card_rgb(int card, double rgb[3]);

/*
 * Draw c into png_path and svg_path.  0, or -1 after printing why (the
 * files may then be partly written; the caller removes its directory).
 */
int plot_write(const struct plot_chart *c, const char *png_path,
    const char *svg_path);

/*
 * Draw with draw(cr, arg) on a canvas width by height (pixels, points) into
 * png_path and svg_path: what plot_write does, for charts of other
 * shapes (plot_bars.h).  0, or -1 after printing why.
 */
int plot_write_with(void (*draw)(cairo_t *, const void *), const void *arg,
    int width, int height, const char *png_path, const char *svg_path);

/* A tick step of 1, 2 or 5 times a power of ten giving at most max ticks. */
double plot_nice_step(double span, int max);

/*
 * Text s at (x, y) in points of size: align_x and align_y 0 put its left
 * or top there, 0.5 its middle, 1 its right or bottom.
 */
void plot_text(cairo_t *cr, double x, double y, double size, double align_x,
    double align_y, const char *s);

/*
 * Give back what cairo and fontconfig keep for the process's lifetime
 * (font caches), so that a leak checker sees only real leaks.  No plot
 * may be drawn after it.
 */
void plot_done(void);

#endif
