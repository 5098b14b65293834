/*
 * layout: which columns aiu-smi prints for the selected groups, and the
 * header and row lines in CSV or as the text table of the aiu-smi RFC.
 */
#include "sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "metrics.h"

/* The S group: per-segment reserved memory, absent from metric_defs. */
static const char *const segment_keys[] = {
	"rsvseg0", "rsvseg1", "rsvseg2", "rsvseg3",
};

struct line {
	char *buf;
	size_t len, cap;
};

static void line_add(struct line *ln, const char *fmt, ...) LOG_FMT(2, 3);

/* Append to ln; a line that would overflow is cut, never overrun. */
static void
line_add(struct line *ln, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(ln->buf + ln->len, ln->cap - ln->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		ln->len += (size_t)n;
	if (ln->len >= ln->cap)
		ln->len = ln->cap - 1;
}

/* End the line with "\n", replacing its last byte if it is full. */
static size_t
line_end(struct line *ln)
{
	if (ln->len + 2 > ln->cap)
		ln->len = ln->cap - 2;
	ln->buf[ln->len++] = '\n';
	ln->buf[ln->len] = '\0';
	return ln->len;
}

static void
add_column(struct sim_layout *l, const char *key, const char *unit,
    int decimals)
{
	struct sim_column *col;
	int width = decimals >= 3 ? 8 : 6;

	if (l->ncols >= SIM_COLS_MAX)
		return;
	col = &l->cols[l->ncols++];
	col->key = key;
	col->unit = unit;
	col->decimals = decimals;
	col->width = (int)strlen(key) > width ? (int)strlen(key) : width;
	col->metric = sim_metric_by_key(key);
}

void
sim_layout_init(struct sim_layout *l, bool csv, const char *groups,
    bool changed)
{
	memset(l, 0, sizeof(*l));
	l->csv = csv;
	for (size_t i = 0; i < metric_ndefs; i++) {
		const struct metric_def *d = &metric_defs[i];

		if (changed && d->group == 'D')
			continue;
		if (metric_group_selected(groups, d->group))
			add_column(l, d->key, d->unit, d->decimals);
	}
	if (metric_group_selected(groups, 'S'))
		for (size_t i = 0; i < sizeof(segment_keys) /
		    sizeof(segment_keys[0]); i++)
			add_column(l, segment_keys[i], "MiB", 0);
	if (changed)
		add_column(l, "hbmtemp", "C", 1);
}

size_t
sim_layout_header(const struct sim_layout *l, char *buf, size_t len)
{
	struct line ln = { buf, 0, len };

	if (l->csv)
		line_add(&ln, "ID,Date (YYYYMMDD),Time (HH:MM:SS)");
	else
		line_add(&ln, "#ID %-8s  %-8s", "Date", "Time");
	for (int i = 0; i < l->ncols; i++) {
		const struct sim_column *col = &l->cols[i];

		if (l->csv)
			line_add(&ln, ",%s %s", col->key, col->unit);
		else
			line_add(&ln, " %*s", col->width, col->key);
	}
	return line_end(&ln);
}

static void
add_cell(struct line *ln, bool csv, const struct sim_column *col, double v)
{
	char cell[64];

	if (isnan(v))
		snprintf(cell, sizeof(cell), "-");
	else
		snprintf(cell, sizeof(cell), "%.*f", col->decimals,
		    v > 0 ? v : 0.0);
	if (csv)
		line_add(ln, ",%s", cell);
	else
		line_add(ln, " %*s", col->width, cell);
}

size_t
sim_layout_row(const struct sim_layout *l, const struct sim_model *m,
    int card, const char *date, const char *time, bool drop_last,
    char *buf, size_t len)
{
	struct line ln = { buf, 0, len };
	int ncells = drop_last ? l->ncols - 1 : l->ncols;

	if (l->csv)
		line_add(&ln, "%d,%s,%s", card, date, time);
	else
		line_add(&ln, "%3d %-8s  %-8s", card, date, time);
	for (int i = 0; i < ncells; i++)
		add_cell(&ln, l->csv, &l->cols[i],
		    sim_model_value(m, card, l->cols[i].metric));
	return line_end(&ln);
}
