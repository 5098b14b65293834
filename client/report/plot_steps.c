/*
 * plot_steps: stacked bars with cairo (plot_steps.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cairo.h>

#include "plot.h"
#include "plot_steps.h"
#include "plot_priv.h"

#define LEFT		90
#define RIGHT		210	/* the legend */
#define TOP		60
#define BOTTOM		80	/* cards, groups' names, the axis title */
#define BAR_GAP		0.15	/* of a bar's slot, each side */
#define GROUP_GAP	0.5	/* of a bar's slot, between groups */

/* The groups: runs of bars with the same group name. */
static size_t
ngroups(const struct plot_steps *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nbars; i++)
		if (i == 0 || strcmp(c->bars[i].group, c->bars[i - 1].group) != 0)
			n++;
	return n;
}

static double
bar_total(const struct plot_steps *c, const struct plot_step_bar *b)
{
	double t = 0;

	for (size_t k = 0; k < c->nclasses; k++)
		t += b->v[k] > 0 ? b->v[k] : 0;
	return t;
}

/* Whether a bar's label fits under it: no wider than its slot, less a gap. */
static bool
bar_label_fits(cairo_t *cr, const char *label, double slot)
{
	cairo_text_extents_t te;

	cairo_set_font_size(cr, PLOT_LABEL_SIZE - 2);
	cairo_text_extents(cr, label, &te);
	return te.width <= slot - 2;
}

static void
draw_bars(cairo_t *cr, const void *arg)
{
	const struct plot_steps *c = arg;
	double px0 = LEFT, px1 = PLOT_WIDTH - RIGHT;
	double py0 = TOP + 10, py1 = PLOT_STEPS_HEIGHT - BOTTOM;
	double ymax = 0, slot, x, gx0 = 0, label_end = -1e9;
	size_t ng = ngroups(c);

	plot_begin(cr, PLOT_WIDTH, c->title);
	for (size_t i = 0; i < c->nbars; i++)
		ymax = fmax(ymax, bar_total(c, &c->bars[i]));
	if (ymax <= 0)
		ymax = 1;
	ymax *= 1.05;
#define Y(v)	(py1 - (v) / ymax * (py1 - py0))
	plot_y_grid(cr, px0, px1, py0, py1, 0, ymax, plot_nice_step(ymax, 6));
	plot_y_title(cr, 22, py0, py1, c->y_title);
	/* the bars: a slot each, and half a slot between groups */
	slot = (px1 - px0) / ((double)c->nbars + GROUP_GAP *
	    (double)(ng > 0 ? ng : 1));
	x = px0 + slot * GROUP_GAP / 2;
	for (size_t i = 0; i < c->nbars; i++) {
		const struct plot_step_bar *b = &c->bars[i];
		double y = 0, bx = x + slot * BAR_GAP, bw = slot * (1 - 2 *
		    BAR_GAP);

		if (i == 0 || strcmp(c->bars[i - 1].group, b->group) != 0)
			gx0 = x;
		for (size_t k = 0; k < c->nclasses; k++) {
			double v = b->v[k] > 0 ? b->v[k] : 0;

			if (v <= 0)
				continue;
			cairo_set_source_rgb(cr, c->rgb[k][0], c->rgb[k][1],
			    c->rgb[k][2]);
			cairo_rectangle(cr, bx, Y(y + v), bw, Y(y) - Y(y + v));
			cairo_fill(cr);
			y += v;
		}
		cairo_set_source_rgb(cr, 0, 0, 0);
		if (b->label != NULL && bar_label_fits(cr, b->label, slot))
			plot_text(cr, bx + bw / 2, py1 + 5, PLOT_LABEL_SIZE - 2,
			    0.5, 0, b->label);
		x += slot;
		/* the group's end: its name under it, if it clears the last */
		if (i + 1 < c->nbars && strcmp(c->bars[i + 1].group,
		    b->group) == 0)
			continue;
		{
			double mid = (gx0 + x) / 2;
			cairo_text_extents_t te;

			cairo_set_font_size(cr, PLOT_LABEL_SIZE);
			cairo_text_extents(cr, b->group, &te);
			if (mid - te.width / 2 > label_end + 8) {
				plot_text(cr, mid, py1 + 22, PLOT_LABEL_SIZE,
				    0.5, 0, b->group);
				label_end = mid + te.width / 2;
			}
		}
		x += slot * GROUP_GAP;
	}
	/* frame, x title */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_rectangle(cr, px0, py0, px1 - px0, py1 - py0);
	cairo_stroke(cr);
	plot_text(cr, (px0 + px1) / 2, py1 + 48, PLOT_LABEL_SIZE,
	    0.5, 0, c->x_title);
	/* legend, the top class first as the stacks show it */
	for (size_t k = c->nclasses; k-- > 0;)
		plot_legend_entry(cr, px1 + 14, py0 + 10 + 22 *
		    (double)(c->nclasses - 1 - k), c->rgb[k], c->classes[k]);
	if (c->nbars == 0)
		plot_text(cr, (px0 + px1) / 2, (py0 + py1) / 2, PLOT_LABEL_SIZE,
		    0.5, 0.5, "no steps");
#undef Y
}

int
plot_steps_write(const struct plot_steps *c, const char *png_path,
    const char *svg_path)
{
	return plot_write_with(draw_bars, c, PLOT_WIDTH, PLOT_STEPS_HEIGHT,
	    png_path, svg_path);
}
