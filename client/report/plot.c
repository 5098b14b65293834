/*
 * plot: charts with cairo, as PNG and SVG from one drawing function
 * (plot.h).
 */
#include <err.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <cairo-svg.h>
#include <fontconfig/fontconfig.h>
#include <png.h>
#include <zlib.h>

#include "plot.h"
#include "plot_priv.h"

#define FONT		PLOT_FONT
#define TITLE_SIZE	PLOT_TITLE_SIZE
#define LABEL_SIZE	PLOT_LABEL_SIZE
#define PANEL_GAP	40	/* between a panel's plot area and the next title */
#define MAX_TICKS	10
#define LINE_WIDTH	1.6	/* the cards' lines */

/*
 * Ten colours that stay apart for the colour-blind (Okabe-Ito, then two
 * of Tableau's); card k gets colour k mod 10.
 */
static const double palette[10][3] = {
	{ 0.000, 0.447, 0.698 },	/* blue */
	{ 0.835, 0.369, 0.000 },	/* vermillion */
	{ 0.000, 0.620, 0.451 },	/* bluish green */
	{ 0.800, 0.475, 0.655 },	/* reddish purple */
	{ 0.902, 0.624, 0.000 },	/* orange */
	{ 0.337, 0.706, 0.914 },	/* sky blue */
	{ 0.941, 0.894, 0.259 },	/* yellow */
	{ 0.000, 0.000, 0.000 },	/* black */
	{ 0.549, 0.337, 0.294 },	/* brown */
	{ 0.498, 0.498, 0.498 },	/* grey */
};

void
plot_card_rgb(int card, double rgb[3])
{
	int k = card < 0 ? 0 : card % 10;

	memcpy(rgb, palette[k], sizeof(palette[k]));
}

int
plot_height(size_t npanels)
{
	return PLOT_TOP + PLOT_BOTTOM + (int)npanels * PLOT_PANEL_HEIGHT;
}

double
plot_nice_step(double span, int max)
{
	double raw = span / max, p = pow(10, floor(log10(raw)));

	if (raw <= p)
		return p;
	if (raw <= 2 * p)
		return 2 * p;
	if (raw <= 5 * p)
		return 5 * p;
	return 10 * p;
}

void
plot_text(cairo_t *cr, double x, double y, double size, double align_x,
    double align_y, const char *s)
{
	cairo_text_extents_t te;

	cairo_set_font_size(cr, size);
	cairo_text_extents(cr, s, &te);
	cairo_move_to(cr, x - te.width * align_x - te.x_bearing,
	    y - te.height * align_y - te.y_bearing);
	cairo_show_text(cr, s);
}

void
plot_begin(cairo_t *cr, double width, const char *title)
{
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
	    CAIRO_FONT_WEIGHT_BOLD);
	plot_text(cr, width / 2, 18, TITLE_SIZE, 0.5, 0, title);
	cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
	    CAIRO_FONT_WEIGHT_NORMAL);
}

void
plot_y_grid(cairo_t *cr, double px0, double px1, double py0, double py1,
    double y0, double y1, double step)
{
	double ys = (py1 - py0) / (y1 - y0);
	char buf[64];

	cairo_set_line_width(cr, 1);
	for (double v = ceil(y0 / step) * step; v <= y1 + step * 1e-9;
	    v += step) {
		double y = py1 - (v - y0) * ys;

		cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
		cairo_move_to(cr, px0, y);
		cairo_line_to(cr, px1, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(buf, sizeof(buf), "%g", fabs(v) < step * 1e-6 ? 0 : v);
		plot_text(cr, px0 - 6, y, LABEL_SIZE, 1, 0.5, buf);
	}
}

void
plot_y_title(cairo_t *cr, double x, double py0, double py1, const char *title)
{
	cairo_save(cr);
	cairo_translate(cr, x, (py0 + py1) / 2);
	cairo_rotate(cr, -M_PI / 2);
	plot_text(cr, 0, 0, LABEL_SIZE, 0.5, 0.5, title);
	cairo_restore(cr);
}

void
plot_legend_entry(cairo_t *cr, double x, double y, const double rgb[3],
    const char *name)
{
	cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
	cairo_rectangle(cr, x, y - 6, 22, 12);
	cairo_fill(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	plot_text(cr, x + 28, y, LABEL_SIZE, 0, 0.5, name);
}

/* The value range of a panel, padded; y0 == y1 made a range. */
static void
y_range(const struct plot_panel *p, double *y0, double *y1)
{
	bool any = false;

	*y0 = 0;
	*y1 = 1;
	for (size_t l = 0; l < p->nlines; l++)
		for (size_t i = 0; i < p->lines[l].n; i++) {
			double v = p->lines[l].v[i];

			if (!isfinite(v))
				continue;
			if (!any || v < *y0)
				*y0 = v;
			if (!any || v > *y1)
				*y1 = v;
			any = true;
		}
	if (p->y_from_zero && *y0 > 0)
		*y0 = 0;
	if (*y1 - *y0 < 1e-9) {
		*y1 += fabs(*y1) > 0 ? fabs(*y1) * 0.1 : 1;
		*y0 -= fabs(*y0) > 0 && !p->y_from_zero ? fabs(*y0) * 0.1 : 0;
	}
	*y1 += (*y1 - *y0) * 0.05;
}

/*
 * The values whose interval starts in one pixel column, drawn as one
 * vertical bar: an hour at 100 ms is 36 000 values across some 960
 * columns, and drawing each would take seconds and make SVGs of tens of
 * megabytes, for the same picture.  The bar spans every value in the
 * column, and the last value before it, so that it joins the line: the
 * column's minimum and maximum (min/max decimation), which keeps exactly
 * the envelope that a line through every value shows.  A value that runs
 * on past its column goes on as a horizontal segment; one longer than a
 * column is a step: a riser from the value before, and a run.
 *
 * Every piece is a vertical or horizontal segment of its own, a line
 * wide and with no joins, lengthened by half a line at each end so that
 * the pieces meet as a stroked polyline's would.  cairo strokes such a
 * path as a union of boxes, several times faster than a polyline with
 * joins, and the SVG holds two points per column instead of four.
 */
struct column {
	bool	 open;
	double	 px;			/* floor of the first x */
	double	 xfirst, xlast;		/* the first value's start, the last one's end */
	double	 yfirst, ymin, ymax, ylast;
	int	 nvalues;
};

/* A vertical (x0 == x1) or horizontal segment, lengthened at both ends. */
static void
segment(cairo_t *cr, double x0, double y0, double x1, double y1)
{
	double h = LINE_WIDTH / 2;

	if (x0 == x1) {
		cairo_move_to(cr, x0, fmin(y0, y1) - h);
		cairo_line_to(cr, x0, fmax(y0, y1) + h);
	} else {
		cairo_move_to(cr, fmin(x0, x1) - h, y0);
		cairo_line_to(cr, fmax(x0, x1) + h, y0);
	}
}

/* Add column c to the path; *pen: a value before c joins it, at *yprev. */
static void
column_flush(cairo_t *cr, struct column *c, bool *pen, double *yprev)
{
	if (!c->open)
		return;
	if (c->nvalues == 1 && c->xlast - c->xfirst > 1) {
		if (*pen && *yprev != c->yfirst)
			segment(cr, c->xfirst, *yprev, c->xfirst, c->yfirst);
		segment(cr, c->xfirst, c->yfirst, c->xlast, c->yfirst);
	} else {
		double y0 = c->ymin, y1 = c->ymax;

		if (*pen) {
			y0 = fmin(y0, *yprev);
			y1 = fmax(y1, *yprev);
		}
		segment(cr, c->px + 0.5, y0, c->px + 0.5, y1);
		/* the last value's run past the column */
		if (c->xlast > c->px + 1 + LINE_WIDTH / 2)
			segment(cr, c->px + 1, c->ylast, c->xlast, c->ylast);
	}
	*yprev = c->ylast;
	*pen = true;
	c->open = false;
}

static void
draw_panel(cairo_t *cr, const struct plot_chart *c, const struct plot_panel *p,
    double top, bool last)
{
	double px0 = PLOT_LEFT, px1 = PLOT_WIDTH - PLOT_RIGHT;
	double py0 = top + 30, py1 = top + PLOT_PANEL_HEIGHT - PANEL_GAP;
	double y0, y1, step, xs, ys;
	char buf[64];

	y_range(p, &y0, &y1);
	xs = (px1 - px0) / (c->x1 - c->x0);
	ys = (py1 - py0) / (y1 - y0);
#define X(t)	(px0 + ((t) - c->x0) * xs)
#define Y(v)	(py1 - ((v) - y0) * ys)
	/* title, frame */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
	    CAIRO_FONT_WEIGHT_BOLD);
	snprintf(buf, sizeof(buf), "%s (%s)", p->title, p->unit);
	plot_text(cr, px0, top + 8, 14, 0, 0, buf);
	cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
	    CAIRO_FONT_WEIGHT_NORMAL);
	/* the steps, shaded under everything, one grey darker than the next */
	for (size_t i = 0; i < c->nshade; i++) {
		double a = fmax(c->shade0[i], c->x0), b = fmin(c->shade1[i], c->x1);

		cairo_set_source_rgba(cr, 0.55, 0.55, 0.55, i % 2 ? 0.12 : 0.24);
		if (b > a) {
			cairo_rectangle(cr, X(a), py0, fmax(X(b) - X(a), 1),
			    py1 - py0);
			cairo_fill(cr);
		}
	}
	plot_y_grid(cr, px0, px1, py0, py1, y0, y1, plot_nice_step(y1 - y0, 6));
	/* x ticks */
	step = plot_nice_step(c->x1 - c->x0, MAX_TICKS);
	for (double t = ceil(c->x0 / step) * step; t <= c->x1 + step * 1e-9;
	    t += step) {
		cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
		cairo_move_to(cr, X(t), py0);
		cairo_line_to(cr, X(t), py1);
		cairo_stroke(cr);
		if (last) {
			cairo_set_source_rgb(cr, 0, 0, 0);
			snprintf(buf, sizeof(buf), "%g", fabs(t) < step *
			    1e-6 ? 0 : t);
			plot_text(cr, X(t), py1 + 6, LABEL_SIZE, 0.5, 0, buf);
		}
	}
	/* the window's begin and end */
	cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
	cairo_set_line_width(cr, 1.5);
	{
		const double dash[] = { 6, 4 };

		cairo_set_dash(cr, dash, 2, 0);
		for (int k = 0; k < 2; k++) {
			double t = k ? c->mark1 : c->mark0;

			if (t < c->x0 || t > c->x1)
				continue;
			cairo_move_to(cr, X(t), py0);
			cairo_line_to(cr, X(t), py1);
			cairo_stroke(cr);
		}
		cairo_set_dash(cr, NULL, 0, 0);
	}
	/* the lines, clipped to the plot area */
	cairo_save(cr);
	cairo_rectangle(cr, px0, py0, px1 - px0, py1 - py0);
	cairo_clip(cr);
	/* separate segments: butt caps, and miter for cairo's box stroker */
	cairo_set_line_width(cr, LINE_WIDTH);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER);
	for (size_t l = 0; l < p->nlines; l++) {
		const struct plot_line *ln = &p->lines[l];
		struct column col = { .open = false };
		double rgb[3], yprev = 0;
		bool pen = false;

		plot_card_rgb(ln->card, rgb);
		cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
		for (size_t i = 0; i < ln->n; i++) {
			double x0 = X(ln->t0[i]), x1 = X(ln->t1[i]);
			double y = Y(ln->v[i]);

			/*
			 * A missing value breaks the line, and so does a gap
			 * longer than an interval (stamps jitter by a few ms).
			 */
			if (!isfinite(ln->v[i]) || (i > 0 &&
			    ln->t0[i] - ln->t1[i - 1] > fmax(ln->t1[i] -
			    ln->t0[i], ln->t1[i - 1] - ln->t0[i - 1]))) {
				column_flush(cr, &col, &pen, &yprev);
				pen = false;
				if (!isfinite(ln->v[i]))
					continue;
			}
			if (col.open && floor(x0) == col.px) {
				col.ymin = fmin(col.ymin, y);
				col.ymax = fmax(col.ymax, y);
				col.ylast = y;
				col.xlast = x1;
				col.nvalues++;
				continue;
			}
			column_flush(cr, &col, &pen, &yprev);
			col = (struct column){ .open = true, .px = floor(x0),
			    .xfirst = x0, .xlast = x1, .yfirst = y, .ymin = y,
			    .ymax = y, .ylast = y, .nvalues = 1 };
		}
		column_flush(cr, &col, &pen, &yprev);
		cairo_stroke(cr);
	}
	cairo_restore(cr);
	/* frame */
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, px0, py0, px1 - px0, py1 - py0);
	cairo_stroke(cr);
	/* legend */
	for (size_t l = 0; l < p->nlines; l++) {
		double rgb[3], ly = py0 + 10 + 20 * (double)l;

		plot_card_rgb(p->lines[l].card, rgb);
		snprintf(buf, sizeof(buf), "card %d", p->lines[l].card);
		plot_legend_entry(cr, px1 + 14, ly, rgb, buf);
	}
	if (p->nlines == 0)
		plot_text(cr, (px0 + px1) / 2, (py0 + py1) / 2, LABEL_SIZE, 0.5,
		    0.5, "no samples");
	if (c->nshade > 0) {
		double ly = py0 + 10 + 20 * (double)p->nlines;

		cairo_set_source_rgba(cr, 0.55, 0.55, 0.55, 0.35);
		cairo_rectangle(cr, px1 + 14, ly - 5, 22, 10);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		plot_text(cr, px1 + 42, ly, LABEL_SIZE, 0, 0.5, "steps");
	}
#undef X
#undef Y
}

static void
draw(cairo_t *cr, const void *arg)
{
	const struct plot_chart *c = arg;
	int h = plot_height(c->npanels);
	char buf[128];

	plot_begin(cr, PLOT_WIDTH, c->title);
	for (size_t i = 0; i < c->npanels; i++)
		draw_panel(cr, c, &c->panels[i], PLOT_TOP + (double)i *
		    PLOT_PANEL_HEIGHT, i + 1 == c->npanels);
	cairo_set_source_rgb(cr, 0, 0, 0);
	snprintf(buf, sizeof(buf), "time (s) from the window's begin, %s; "
	    "dashed: the window's begin and end", c->time_origin);
	plot_text(cr, (PLOT_LEFT + PLOT_WIDTH - PLOT_RIGHT) / 2.0, h - 20,
	    LABEL_SIZE, 0.5, 0, buf);
}

/*
 * The RGB24 image surface s as an 8-bit RGB PNG: the pixels and the
 * chunks that cairo_surface_write_to_png writes (IHDR, bKGD white, IDAT,
 * IEND), compressed faster.  zlib's default level spends several times
 * the time of the fastest for a few per cent of size on charts, which are
 * mostly runs of one colour.  0, or -1 after printing why.
 */
static int
write_png(cairo_surface_t *s, const char *path)
{
	const unsigned char *data = cairo_image_surface_get_data(s);
	int w = cairo_image_surface_get_width(s);
	int h = cairo_image_surface_get_height(s);
	int stride = cairo_image_surface_get_stride(s);
	png_structp png;
	png_infop info;
	png_color_16 white = { .red = 255, .green = 255, .blue = 255,
	    .gray = 255 };
	unsigned char *row;
	FILE *fp;

	cairo_surface_flush(s);
	if ((row = malloc((size_t)w * 3)) == NULL)
		errx(1, "out of memory");
	if ((fp = fopen(path, "wb")) == NULL) {
		warn("%s", path);
		free(row);
		return -1;
	}
	if ((png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL,
	    NULL)) == NULL || (info = png_create_info_struct(png)) == NULL)
		errx(1, "out of memory");
	if (setjmp(png_jmpbuf(png))) {
		/* libpng printed why */
		png_destroy_write_struct(&png, &info);
		fclose(fp);
		free(row);
		warnx("%s: cannot write the PNG", path);
		return -1;
	}
	png_init_io(png, fp);
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8,
	    PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
	    PNG_FILTER_TYPE_DEFAULT);
	png_set_bKGD(png, info, &white);
	/*
	 * The fastest level, each row filtered against the one above (rows
	 * of a chart mostly repeat): about 4 times faster than
	 * cairo_surface_write_to_png (zlib's default level, libpng's adaptive
	 * filters), for 8 % more bytes.
	 */
	png_set_compression_level(png, Z_BEST_SPEED);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
	png_write_info(png, info);
	for (int y = 0; y < h; y++) {
		const uint32_t *px = (const uint32_t *)(const void *)(data +
		    (size_t)y * (size_t)stride);

		/* RGB24: 0x00RRGGBB in native order */
		for (int x = 0; x < w; x++) {
			row[3 * x] = (unsigned char)(px[x] >> 16);
			row[3 * x + 1] = (unsigned char)(px[x] >> 8);
			row[3 * x + 2] = (unsigned char)px[x];
		}
		png_write_row(png, row);
	}
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	free(row);
	if (fclose(fp) == EOF) {
		warn("%s", path);
		return -1;
	}
	return 0;
}

int
plot_write_with(void (*draw_fn)(cairo_t *, const void *), const void *arg,
    int width, int height, const char *png_path, const char *svg_path)
{
	cairo_surface_t *s;
	cairo_status_t st;
	cairo_t *cr;

	s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
	cr = cairo_create(s);
	draw_fn(cr, arg);
	cairo_destroy(cr);
	if (write_png(s, png_path) == -1) {
		cairo_surface_destroy(s);
		return -1;
	}
	cairo_surface_destroy(s);
	s = cairo_svg_surface_create(svg_path, width, height);
	cr = cairo_create(s);
	draw_fn(cr, arg);
	cairo_destroy(cr);
	cairo_surface_finish(s);
	st = cairo_surface_status(s);
	cairo_surface_destroy(s);
	if (st != CAIRO_STATUS_SUCCESS) {
		warnx("%s: %s", svg_path, cairo_status_to_string(st));
		return -1;
	}
	return 0;
}

int
plot_write(const struct plot_chart *c, const char *png_path,
    const char *svg_path)
{
	return plot_write_with(draw, c, PLOT_WIDTH, plot_height(c->npanels),
	    png_path, svg_path);
}

void
plot_done(void)
{
	cairo_debug_reset_static_data();
	FcFini();
}
