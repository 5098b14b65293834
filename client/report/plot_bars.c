/*
 * plot_bars: stacked bars with cairo (plot_bars.h).
 */
#include <math.h>
#include <stdio.h>

#include <cairo.h>

#include "plot.h"
#include "plot_bars.h"
#include "plot_priv.h"

#define TOP		60	/* the title */
#define BOTTOM		50	/* the bars' labels */
#define LEFT		90	/* the y axis' labels */
#define RIGHT		190	/* the legend */
#define SLOT		160	/* per bar */
#define BAR		90	/* a bar's width */
#define LABEL_SIZE	PLOT_LABEL_SIZE
#define MIN_LABEL_PX	16	/* a segment this tall or more shows its value */

int
plot_bars_width(size_t ngroups)
{
	int w = LEFT + RIGHT + (int)ngroups * SLOT;

	return w < 640 ? 640 : w;
}

/* Black text on light colours, white on dark. */
static void
ink_for(cairo_t *cr, const double rgb[3])
{
	double y = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];

	if (y > 0.5)
		cairo_set_source_rgb(cr, 0, 0, 0);
	else
		cairo_set_source_rgb(cr, 1, 1, 1);
}

static double
total_of(const struct plot_bars *b, size_t g)
{
	double t = 0;

	for (size_t k = 0; k < b->nseries; k++)
		t += b->v[g * b->nseries + k];
	return t;
}

static void
draw(cairo_t *cr, const void *arg)
{
	const struct plot_bars *b = arg;
	int w = plot_bars_width(b->ngroups);
	double px0 = LEFT, px1 = w - RIGHT, py0 = TOP + 20;
	double py1 = PLOT_BARS_HEIGHT - BOTTOM, ymax = 0, step, ys, slot;
	char buf[64];

	for (size_t g = 0; g < b->ngroups; g++)
		ymax = fmax(ymax, total_of(b, g));
	if (!(ymax > 0))
		ymax = 1;
	step = plot_nice_step(ymax * 1.08, 6);
	ymax = ceil(ymax * 1.08 / step) * step;
	ys = (py1 - py0) / ymax;
	slot = (px1 - px0) / (double)(b->ngroups > 0 ? b->ngroups : 1);
#define Y(v)	(py1 - (v) * ys)
	plot_begin(cr, w, b->title);
	plot_y_grid(cr, px0, px1, py0, py1, 0, ymax, step);
	snprintf(buf, sizeof(buf), "energy (%s)", b->unit);
	plot_y_title(cr, 22, py0, py1, buf);
	/* the bars, bottom up */
	for (size_t g = 0; g < b->ngroups; g++) {
		double x = px0 + slot * ((double)g + 0.5) - BAR / 2.0, at = 0;

		for (size_t k = 0; k < b->nseries; k++) {
			double v = b->v[g * b->nseries + k], h = v * ys;

			if (!(v > 0))
				continue;
			cairo_set_source_rgb(cr, b->rgb[k][0], b->rgb[k][1],
			    b->rgb[k][2]);
			cairo_rectangle(cr, x, Y(at + v), BAR, h);
			cairo_fill(cr);
			if (h >= MIN_LABEL_PX) {
				ink_for(cr, b->rgb[k]);
				snprintf(buf, sizeof(buf), "%.4g", v);
				plot_text(cr, x + BAR / 2.0, Y(at + v / 2),
				    LABEL_SIZE, 0.5, 0.5, buf);
			}
			at += v;
		}
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(buf, sizeof(buf), "%.4g %s", at, b->unit);
		plot_text(cr, x + BAR / 2.0, Y(at) - 4, LABEL_SIZE, 0.5, 1,
		    buf);
		plot_text(cr, x + BAR / 2.0, py1 + 8, LABEL_SIZE + 1, 0.5, 0,
		    b->groups[g]);
	}
	/* axes */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_move_to(cr, px0, py0);
	cairo_line_to(cr, px0, py1);
	cairo_line_to(cr, px1, py1);
	cairo_stroke(cr);
	/* legend: top to bottom as the segments stack */
	for (size_t i = 0; i < b->nseries; i++) {
		size_t k = b->nseries - 1 - i;

		plot_legend_entry(cr, px1 + 20, py0 + 10 + 22 * (double)i,
		    b->rgb[k], b->series[k]);
	}
#undef Y
}

int
plot_bars_write(const struct plot_bars *b, const char *png_path,
    const char *svg_path)
{
	return plot_write_with(draw, b, plot_bars_width(b->ngroups),
	    PLOT_BARS_HEIGHT, png_path, svg_path);
}
