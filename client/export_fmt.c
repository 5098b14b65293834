/*
 * export_fmt: the text of an export, one writer per format (contract in
 * export.h).
 *
 * Values: csv and jsonl write each value exactly (fmt_value_exact), aiusmi
 * as aiu-smi prints it (fmt_value_fixed).  A missing value, NULL in the
 * database (aiu-smi printed "-"), is an empty cell in csv, "-" in aiusmi
 * and null in jsonl.  No output depends on the locale: see format.h.
 *
 * A csv or aiusmi line is built in memory and written with one unlocked
 * fwrite, and dates are formatted once per second of stamps: an export of
 * an hour of eight cards is mostly this loop.
 */
#include <err.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "export.h"
#include "format.h"
#include "json.h"
#include "timeparse.h"

int
export_format_parse(const char *s, enum export_format *out)
{
	if (strcmp(s, "csv") == 0)
		*out = EXPORT_CSV;
	else if (strcmp(s, "aiusmi") == 0)
		*out = EXPORT_AIUSMI;
	else if (strcmp(s, "jsonl") == 0)
		*out = EXPORT_JSONL;
	else
		return -1;
	return 0;
}

int
export_writer_init(struct export_writer *w)
{
	w->g = NULL;
	w->line.len = 0;
	w->line.cap = 256 + w->ncols * 32;
	if ((w->line.p = malloc(w->line.cap)) == NULL)
		return -1;
	if (w->format == EXPORT_JSONL && (w->g = json_gen_new(false)) == NULL)
		return -1;
	return 0;
}

void
export_writer_free(struct export_writer *w)
{
	if (w->g != NULL)
		yajl_gen_free(w->g);
	w->g = NULL;
	free(w->line.p);
	w->line.p = NULL;
}

/* ---- building a line ---- */

static void
put(struct export_writer *w, const char *s, size_t n)
{
	if (w->line.len + n > w->line.cap) {
		size_t cap = (w->line.len + n) * 2;
		char *p;

		if ((p = realloc(w->line.p, cap)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		w->line.p = p;
		w->line.cap = cap;
	}
	memcpy(w->line.p + w->line.len, s, n);
	w->line.len += n;
}

static void
put_str(struct export_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

static void
put_char(struct export_writer *w, char c)
{
	put(w, &c, 1);
}

static void
put_int(struct export_writer *w, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + mag % 10);
		mag /= 10;
	} while (mag != 0);
	if (v < 0)
		*--p = '-';
	put(w, p, (size_t)(buf + sizeof(buf) - p));
}

/* One CSV cell, quoted if it holds a comma, a quote or a line break. */
static void
put_cell(struct export_writer *w, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		put_str(w, s);
		return;
	}
	put_char(w, '"');
	for (; *s; s++) {
		if (*s == '"')
			put_char(w, '"');
		put_char(w, *s);
	}
	put_char(w, '"');
}

/* Write the line built and start a new one. */
static void
flush_line(struct export_writer *w)
{
	put_char(w, '\n');
	fwrite_unlocked(w->line.p, 1, w->line.len, w->out);
	w->line.len = 0;
}

/* ---- headers ---- */

static void
csv_header(struct export_writer *w)
{
	if (w->window_column)
		put_str(w, "window,");
	put_str(w, "epoch_ns,time_utc,device,bus_id,interval_ms");
	for (size_t i = 0; i < w->ncols; i++) {
		put_char(w, ',');
		put_cell(w, w->cols[i]->key);
	}
	flush_line(w);
}

/* aiu-smi's header: each metric's cell is "key unit", or "key" without a unit. */
static void
aiusmi_header(struct export_writer *w)
{
	put_str(w, "ID,Date (YYYYMMDD),Time (HH:MM:SS)");
	for (size_t i = 0; i < w->ncols; i++) {
		char cell[256];

		snprintf(cell, sizeof(cell), "%s%s%s", w->cols[i]->key,
		    w->cols[i]->unit[0] != '\0' ? " " : "", w->cols[i]->unit);
		put_char(w, ',');
		put_cell(w, cell);
	}
	flush_line(w);
}

void
export_begin_span(struct export_writer *w, const struct db_window *win,
    bool several, bool first)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN];

	switch (w->format) {
	case EXPORT_CSV:
		if (first)
			csv_header(w);
		break;
	case EXPORT_AIUSMI:
		if (several && win != NULL) {
			format_time_utc(win->begin_ns, b, sizeof(b));
			if (win->open)
				snprintf(e, sizeof(e), "open");
			else
				format_time_utc(win->end_ns, e, sizeof(e));
			fprintf(w->out, "#window %" PRId64 " %s %s %s\n",
			    win->id, win->tag, b, e);
		}
		if (first || several)
			aiusmi_header(w);
		break;
	case EXPORT_JSONL:
		break;
	}
}

/* ---- rows ---- */

static bool
value_of(const struct export_row *r, size_t i, double *v)
{
	int c = r->first_value + (int)i;

	if (sqlite3_column_type(r->stmt, c) == SQLITE_NULL)
		return false;
	*v = sqlite3_column_double(r->stmt, c);
	return true;
}

/*
 * The whole seconds of ts as aiusmi's Date,Time cells or as the start of
 * csv's time_utc, cached: consecutive rows mostly share their second.
 */
struct second_cache {
	time_t t;
	bool valid;
	char text[64];
};

static const char *
second_text(struct second_cache *c, int64_t ts_ns, bool aiusmi)
{
	time_t t = (time_t)(ts_ns / (int64_t)NSEC_PER_SEC);
	struct tm tm;

	if (ts_ns < 0 && ts_ns % (int64_t)NSEC_PER_SEC != 0)
		t--;
	if (!c->valid || c->t != t) {
		/* aiu-smi's Date,Time in local time, or csv's ISO 8601 in UTC */
		if (aiusmi && localtime_r(&t, &tm) != NULL)
			strftime(c->text, sizeof(c->text), "%Y%m%d,%H:%M:%S", &tm);
		else if (!aiusmi && gmtime_r(&t, &tm) != NULL)
			strftime(c->text, sizeof(c->text), "%Y-%m-%dT%H:%M:%S.", &tm);
		else
			c->text[0] = '\0';
		c->t = t;
		c->valid = true;
	}
	return c->text;
}

/* ISO 8601 UTC with nanoseconds, as format_time_utc writes it. */
static void
put_time_utc(struct export_writer *w, int64_t ts_ns)
{
	static struct second_cache cache;
	int64_t frac = ts_ns % (int64_t)NSEC_PER_SEC;
	char digits[9];

	if (frac < 0)
		frac += (int64_t)NSEC_PER_SEC;
	put_str(w, second_text(&cache, ts_ns, false));
	for (int i = 8; i >= 0; i--) {
		digits[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	put(w, digits, sizeof(digits));
	put_char(w, 'Z');
}

static void
csv_row(struct export_writer *w, const struct export_row *r,
    int64_t window_id)
{
	char buf[FMT_BUFLEN];
	double v;

	if (w->window_column) {
		put_int(w, window_id);
		put_char(w, ',');
	}
	put_int(w, r->ts_ns);
	put_char(w, ',');
	put_time_utc(w, r->ts_ns);
	put_char(w, ',');
	put_int(w, r->device);
	put_char(w, ',');
	put_cell(w, db_devmap_bus_id(w->map, r->device, r->ts_ns));
	put_char(w, ',');
	put_int(w, r->interval_ms);
	for (size_t i = 0; i < w->ncols; i++) {
		put_char(w, ',');
		if (value_of(r, i, &v) &&
		    fmt_value_exact(v, w->cols[i]->decimals, buf, sizeof(buf)))
			put_str(w, buf);
	}
	flush_line(w);
}

/* aiu-smi's ID, Date and Time cells; the date and time are local, like aiu-smi's. */
static void
aiusmi_row(struct export_writer *w, const struct export_row *r)
{
	static struct second_cache cache;
	char buf[FMT_BUFLEN];
	double v;

	put_int(w, r->device);
	put_char(w, ',');
	put_str(w, second_text(&cache, r->ts_ns, true));
	for (size_t i = 0; i < w->ncols; i++) {
		put_char(w, ',');
		if (value_of(r, i, &v) &&
		    fmt_value_fixed(v, w->cols[i]->decimals, buf, sizeof(buf)))
			put_str(w, buf);
		else
			put_char(w, '-');
	}
	flush_line(w);
}

static void
jsonl_row(struct export_writer *w, const struct export_row *r,
    int64_t window_id)
{
	char buf[FMT_BUFLEN];
	yajl_gen g = w->g;
	double v;

	yajl_gen_map_open(g);
	if (window_id != 0) {
		json_gen_str(g, "window");
		yajl_gen_integer(g, window_id);
	}
	json_gen_str(g, "ts_ns");
	yajl_gen_integer(g, r->ts_ns);
	format_time_utc(r->ts_ns, buf, sizeof(buf));
	json_gen_str(g, "time");
	json_gen_str(g, buf);
	json_gen_str(g, "device");
	yajl_gen_integer(g, r->device);
	json_gen_str(g, "bus_id");
	json_gen_str(g, db_devmap_bus_id(w->map, r->device, r->ts_ns));
	json_gen_str(g, "interval_ms");
	yajl_gen_integer(g, r->interval_ms);
	json_gen_str(g, "values");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < w->ncols; i++) {
		json_gen_str(g, w->cols[i]->key);
		if (value_of(r, i, &v) &&
		    fmt_value_exact(v, w->cols[i]->decimals, buf, sizeof(buf)))
			yajl_gen_number(g, buf, strlen(buf));
		else
			yajl_gen_null(g);
	}
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	json_gen_flush(g, w->out);
}

void
export_write_row(struct export_writer *w, const struct export_row *r,
    int64_t window_id)
{
	switch (w->format) {
	case EXPORT_CSV:
		csv_row(w, r, window_id);
		break;
	case EXPORT_AIUSMI:
		aiusmi_row(w, r);
		break;
	case EXPORT_JSONL:
		jsonl_row(w, r, window_id);
		break;
	}
}
