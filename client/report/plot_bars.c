/*
 * plot_bars: stacked bars with cairo (plot_bars.h).
 */
#include <math.h>
#include <stdio.h>

#include <cairo.h>

#include "plot.h"
#include "plot_bars.h"

#define TOP		60	/* the title */
#define BOTTOM		50	/* the bars' labels */
#define LEFT		90	/* the y axis' labels */
#define RIGHT		190	/* the legend */
#define SLOT		160	/* per bar */
#define BAR		90	/* a bar's width */
#define LABEL_SIZE	12.0
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
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
	    CAIRO_FONT_WEIGHT_BOLD);
	plot_text(cr, w / 2.0, 18, 18.0, 0.5, 0, b->title);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
	    CAIRO_FONT_WEIGHT_NORMAL);
	/* grid and y ticks */
	cairo_set_line_width(cr, 1);
	for (double v = 0; v <= ymax + step * 1e-9; v += step) {
		cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
		cairo_move_to(cr, px0, Y(v));
		cairo_line_to(cr, px1, Y(v));
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(buf, sizeof(buf), "%g", v);
		plot_text(cr, px0 - 6, Y(v), LABEL_SIZE, 1, 0.5, buf);
	}
	snprintf(buf, sizeof(buf), "energy (%s)", b->unit);
	cairo_save(cr);
	cairo_translate(cr, 22, (py0 + py1) / 2);
	cairo_rotate(cr, -M_PI / 2);
	plot_text(cr, 0, 0, LABEL_SIZE, 0.5, 0.5, buf);
	cairo_restore(cr);
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
		double ly = py0 + 10 + 22 * (double)i;

		cairo_set_source_rgb(cr, b->rgb[k][0], b->rgb[k][1],
		    b->rgb[k][2]);
		cairo_rectangle(cr, px1 + 20, ly - 6, 22, 12);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		plot_text(cr, px1 + 48, ly, LABEL_SIZE, 0, 0.5, b->series[k]);
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
