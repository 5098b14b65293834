/*
 * export_fmt: the text of an export, one writer per format (contract in
 * export.h).
 *
 * Samples: one per card per tick, each card's two streams paired by
 * pair.h (or, --by-source, each row as stored).  aiusmi is what aiu-smi -s
 * prints, and nothing else: its #MetricFiles block, its header with only
 * the columns it printed, and one row per sample.
 *
 * Values: csv and jsonl write each value exactly (fmt_value_exact), aiusmi
 * as aiu-smi prints it (fmt_value_fixed).  A missing value, NULL in the
 * database (aiu-smi printed "-"), is an empty cell in csv, "-" in aiusmi
 * and null in jsonl.  No output depends on the locale: see format.h.
 *
 * Every line is built in memory and written with one unlocked fwrite, and
 * dates are formatted once per second of stamps: an export of an hour of
 * eight cards is mostly this loop.  A jsonl line is built the same way,
 * byte for byte the text yajl_gen would write, with its keys escaped once:
 * a yajl call per token took more time than the whole of a csv line.
 */
#include <err.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "export.h"
#include "format.h"
#include "pragma.h"
#include "summary.h"
#include "timeparse.h"

static void	put_char(struct export_writer *, char);
static void	put_json_str(struct export_writer *, const char *);

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

/* The keys of jsonl's "values", escaped once rather than on every row. */
static int
make_json_keys(struct export_writer *w)
{
	if ((w->json_keys = calloc(w->ncols, sizeof(*w->json_keys))) == NULL)
		return -1;
	for (size_t i = 0; i < w->ncols; i++) {
		w->line.len = 0;
		put_json_str(w, w->cols[i]->key);
		put_char(w, ':');
		if ((w->json_keys[i] = strndup(w->line.p, w->line.len)) == NULL)
			return -1;
	}
	w->line.len = 0;
	return 0;
}

int
export_writer_init(struct export_writer *w)
{
	w->json_keys = NULL;
	w->line.len = 0;
	w->line.cap = 256 + w->ncols * 32;
	if ((w->line.p = malloc(w->line.cap)) == NULL)
		return -1;
	if (w->format == EXPORT_JSONL && make_json_keys(w) == -1)
		return -1;
	return 0;
}

void
export_writer_free(struct export_writer *w)
{
	if (w->json_keys != NULL)
		for (size_t i = 0; i < w->ncols; i++)
			free(w->json_keys[i]);
	free(w->json_keys);
	w->json_keys = NULL;
	free(w->line.p);
	w->line.p = NULL;
	db_coarse_free(&w->coarse);
}

/*
 * One count per coarse run, over a range of the primary key: only the
 * coarse samples are read, and an export without any costs one query.
 */
int
export_coarse_span(sqlite3 *db, struct export_writer *w, int64_t lo_ns,
    int64_t hi_ns, const char *device_sql)
{
	int rc;

	if ((rc = db_count_file_rows(db, lo_ns, hi_ns, device_sql,
	    &w->nfile)) != CLIENT_EXIT_OK)
		return rc;
	if ((rc = db_coarse_load(db, lo_ns, hi_ns + DB_MAX_INTERVAL_NS,
	    &w->coarse)) != CLIENT_EXIT_OK || w->coarse.n == 0)
		return rc;
	return db_count_coarse(db, lo_ns, hi_ns, device_sql, &w->coarse,
	    &w->ncoarse);
}

static bool
row_coarse(const struct export_writer *w, const struct pair_sample *r)
{
	return w->ncoarse > 0 && db_coarse_has(&w->coarse, r->device,
	    r->ts_ns);
}

/* ---- building a line ---- */

/* Room for n more bytes in the line. */
static void
reserve(struct export_writer *w, size_t n)
{
	size_t cap;
	char *p;

	if (w->line.len + n <= w->line.cap)
		return;
	cap = (w->line.len + n) * 2;
	if ((p = realloc(w->line.p, cap)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	w->line.p = p;
	w->line.cap = cap;
}

static void
put(struct export_writer *w, const char *s, size_t n)
{
	reserve(w, n);
	memcpy(w->line.p + w->line.len, s, n);
	w->line.len += n;
}

static void
put_str(struct export_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

/* Most of a line is single characters: no memcpy for them. */
static void
put_char(struct export_writer *w, char c)
{
	reserve(w, 1);
	w->line.p[w->line.len++] = c;
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
	if (w->host != NULL)
		put_str(w, "host,");
	if (w->window_column)
		put_str(w, "window,");
	if (w->trace.on)
		put_str(w, "trace_rank,trace_host,");
	if (w->trace_time)
		put_str(w, "trace_ns,");
	put_str(w, "epoch_ns,time_utc,device,bus_id,interval_ms");
	for (size_t i = 0; i < w->ncols; i++) {
		put_char(w, ',');
		put_cell(w, w->cols[i]->key);
	}
	if (w->ncoarse > 0)
		put_str(w, ",coarse");
	if (w->nfile > 0)
		put_str(w, ",source");
	flush_line(w);
}

/* aiu-smi's header: each metric's cell is "key unit", or "key" without a unit. */
static void
aiusmi_header(struct export_writer *w)
{
	put_str(w, "ID,Date (YYYYMMDD),Time (HH:MM:SS)");
	for (size_t i = 0; i < w->ncols; i++) {
		char cell[256];

		if (w->shown != NULL && !w->shown[i])
			continue;
		snprintf(cell, sizeof(cell), "%s%s%s", w->cols[i]->key,
		    w->cols[i]->unit[0] != '\0' ? " " : "", w->cols[i]->unit);
		put_char(w, ',');
		put_cell(w, cell);
	}
	flush_line(w);
}

/*
 * aiu-smi's #MetricFiles block: "# ID FILE" per card of the span, with the
 * file aiu-smi named for it ("-" if it named none).
 */
static void
metric_files(struct export_writer *w)
{
	const char *f;

	fputs("#MetricFiles\n", w->out);
	for (size_t i = 0; i < w->ncards; i++) {
		f = db_devmap_file(w->map, w->cards[i].device,
		    w->cards[i].ts_ns);
		fprintf(w->out, "# %d %s\n", w->cards[i].device,
		    f[0] != '\0' ? f : "-");
	}
}

void
export_begin_span(struct export_writer *w, const struct db_window *win,
    bool several, bool first)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN];

	if (first && w->ncoarse > 0)
		fprintf(stderr, "spyremon: %" PRId64 " samples of this export "
		    "were imported from an aiu-smi log: whole-second local "
		    "times (coarse)\n", w->ncoarse);
	if (first && w->nfile > 0 && w->format == EXPORT_AIUSMI)
		fprintf(stderr, "spyremon: %" PRId64 " rows of this export "
		    "were read from the cards' metric files, paired with "
		    "aiu-smi's; csv and jsonl name each sample's source\n",
		    w->nfile);
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
		if (w->host != NULL)
			fprintf(w->out, "#host %s\n", w->host);
		if (w->trace.on) {
			fprintf(w->out, "#trace %s rank ", w->trace.path);
			if (w->trace.has_rank)
				fprintf(w->out, "%" PRId64, w->trace.rank);
			else
				fputc('-', w->out);
			fprintf(w->out, " host %s\n", w->trace.host[0] != '\0' ?
			    w->trace.host : "-");
		}
		if (first || several || w->trace.on || w->host != NULL) {
			metric_files(w);
			aiusmi_header(w);
		}
		break;
	case EXPORT_JSONL:
		break;
	}
}

/* ---- rows ---- */

static bool
value_of(const struct pair_sample *r, size_t i, double *v)
{
	if (r->from[i] == PAIR_NONE)
		return false;
	*v = r->v[i];
	return true;
}

/* The streams whose rows made r: what csv's source and jsonl's say. */
static const char *
sources_of(const struct pair_sample *r)
{
	if (r->file_ns != 0 && r->smi_ns != 0)
		return "file+aiu-smi";
	return r->file_ns != 0 ? "file" : "aiu-smi";
}

/*
 * The whole seconds of ts as aiusmi's Date,Time cells or as the start of
 * csv's time_utc, cached: consecutive rows mostly share their second.
 */
struct second_cache {
	time_t t;
	bool valid;
	size_t len;		/* strlen(text) */
	char text[64];
};

static const struct second_cache *
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
		c->len = strlen(c->text);
		c->t = t;
		c->valid = true;
	}
	return c;
}

/* ISO 8601 UTC with nanoseconds, as format_time_utc writes it. */
static void
put_time_utc(struct export_writer *w, int64_t ts_ns)
{
	static struct second_cache cache;
	const struct second_cache *sec = second_text(&cache, ts_ns, false);
	int64_t frac = ts_ns % (int64_t)NSEC_PER_SEC;
	char digits[9];

	if (frac < 0)
		frac += (int64_t)NSEC_PER_SEC;
	put(w, sec->text, sec->len);
	for (int i = 8; i >= 0; i--) {
		digits[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	put(w, digits, sizeof(digits));
	put_char(w, 'Z');
}

static void
csv_row(struct export_writer *w, const struct pair_sample *r,
    int64_t window_id)
{
	char buf[FMT_BUFLEN];
	size_t n;
	double v;

	if (w->host != NULL) {
		put_cell(w, w->host);
		put_char(w, ',');
	}
	if (w->window_column) {
		put_int(w, window_id);
		put_char(w, ',');
	}
	if (w->trace.on) {
		if (w->trace.has_rank)
			put_int(w, w->trace.rank);
		put_char(w, ',');
		put_cell(w, w->trace.host);
		put_char(w, ',');
	}
	if (w->trace_time) {
		put_int(w, r->ts_ns + w->trace_shift_ns);
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
		if (value_of(r, i, &v) && (n = fmt_value_exact(v,
		    w->cols[i]->decimals, buf, sizeof(buf))) > 0)
			put(w, buf, n);
	}
	if (w->ncoarse > 0)
		put_str(w, row_coarse(w, r) ? ",1" : ",0");
	if (w->nfile > 0) {
		put_char(w, ',');
		put_str(w, sources_of(r));
	}
	flush_line(w);
}

/* aiu-smi's ID, Date and Time cells; the date and time are local, like aiu-smi's. */
static void
aiusmi_row(struct export_writer *w, const struct pair_sample *r)
{
	static struct second_cache cache;
	const struct second_cache *sec;
	char buf[FMT_BUFLEN];
	size_t n;
	double v;

	put_int(w, r->device);
	put_char(w, ',');
	sec = second_text(&cache, r->ts_ns, true);
	put(w, sec->text, sec->len);
	for (size_t i = 0; i < w->ncols; i++) {
		if (w->shown != NULL && !w->shown[i])
			continue;
		put_char(w, ',');
		if (value_of(r, i, &v) && (n = fmt_value_fixed(v,
		    w->cols[i]->decimals, buf, sizeof(buf))) > 0)
			put(w, buf, n);
		else
			put_char(w, '-');
	}
	flush_line(w);
}

/*
 * s as a JSON string, escaped as yajl_gen_string escapes it: '"', '\\'
 * and control characters; bytes from 0x7f up pass as they are.
 */
static void
put_json_str(struct export_writer *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *run = s, *p;
	char u[6] = { '\\', 'u', '0', '0' };

	put_char(w, '"');
	for (p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(w, run, (size_t)(p - run));
		run = p + 1;
		switch (c) {
		case '"':
		case '\\':
			put_char(w, '\\');
			put_char(w, (char)c);
			break;
		case '\b':
			put(w, "\\b", 2);
			break;
		case '\f':
			put(w, "\\f", 2);
			break;
		case '\n':
			put(w, "\\n", 2);
			break;
		case '\r':
			put(w, "\\r", 2);
			break;
		case '\t':
			put(w, "\\t", 2);
			break;
		default:
			u[4] = hex[c >> 4];
			u[5] = hex[c & 0xf];
			put(w, u, sizeof(u));
			break;
		}
	}
	put(w, run, (size_t)(p - run));
	put_char(w, '"');
}

/*
 * One object, built in the line buffer as for csv: the same text yajl_gen
 * writes (no spaces), at a fraction of the cost of a call per token.
 */
static void
jsonl_row(struct export_writer *w, const struct pair_sample *r,
    int64_t window_id)
{
	char buf[FMT_BUFLEN];
	size_t n;
	double v;

	put_char(w, '{');
	if (w->host != NULL) {
		put_str(w, "\"host\":");
		put_json_str(w, w->host);
		put_char(w, ',');
	}
	if (window_id != 0) {
		put_str(w, "\"window\":");
		put_int(w, window_id);
		put_char(w, ',');
	}
	if (w->trace.on) {
		put_str(w, "\"rank\":");
		if (w->trace.has_rank)
			put_int(w, w->trace.rank);
		else
			put_str(w, "null");
		put_str(w, w->host != NULL ? ",\"trace_host\":" :
		    ",\"host\":");
		put_json_str(w, w->trace.host);
		put_char(w, ',');
	}
	put_str(w, "\"ts_ns\":");
	put_int(w, r->ts_ns);
	if (w->trace_time) {
		put_str(w, ",\"trace_ns\":");
		put_int(w, r->ts_ns + w->trace_shift_ns);
	}
	put_str(w, ",\"time\":\"");
	put_time_utc(w, r->ts_ns);
	put_str(w, "\",\"device\":");
	put_int(w, r->device);
	put_str(w, ",\"bus_id\":");
	put_json_str(w, db_devmap_bus_id(w->map, r->device, r->ts_ns));
	put_str(w, ",\"interval_ms\":");
	put_int(w, r->interval_ms);
	if (row_coarse(w, r))
		put_str(w, ",\"coarse\":true");
	if (w->nfile > 0) {
		put_str(w, ",\"source\":\"");
		put_str(w, sources_of(r));
		put_char(w, '"');
	}
	put_str(w, ",\"values\":{");
	for (size_t i = 0; i < w->ncols; i++) {
		if (i > 0)
			put_char(w, ',');
		put_str(w, w->json_keys[i]);
		if (value_of(r, i, &v) && (n = fmt_value_exact(v,
		    w->cols[i]->decimals, buf, sizeof(buf))) > 0)
			put(w, buf, n);
		else
			put_str(w, "null");
	}
	put_str(w, "}}");
	flush_line(w);
}

void
export_write_row(struct export_writer *w, const struct pair_sample *r,
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

int
export_write_samples(struct export_writer *w, sqlite3 *db, sqlite3_stmt *s,
    int64_t lo_ns, int64_t hi_ns, int64_t window_id, const char *out_name,
    int64_t *rows, int64_t *file_rows, struct export_damage *dmg)
{
	struct pair_reader *p;
	struct pair_sample r;
	int64_t from = lo_ns, last = 0, below = hi_ns + DB_MAX_INTERVAL_NS;
	int rc;

	memset(dmg, 0, sizeof(*dmg));
	*rows = *file_rows = 0;
	/* the rows before the span that the first rows in it pair with */
	db_bind_read_from(s, w->by_source ? INT64_MIN : pair_read_from(db,
	    lo_ns));
	for (;;) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, from);
		sqlite3_bind_int64(s, 2, hi_ns);
		sqlite3_bind_int64(s, 3, below);
		p = pair_open(s, w->ncols, w->by_source, lo_ns);
		while ((rc = pair_next(p, &r)) == 1) {
			export_write_row(w, &r, window_id);
			(*rows)++;
			if (ferror_unlocked(w->out)) {
				warn("%s", out_name);
				pair_close(p);
				return CLIENT_EXIT_FAILED;
			}
			last = r.ts_ns;
			dmg->interval_ms = r.interval_ms;
			if (r.device >= 0 && r.device < 64)
				dmg->devs |= 1ull << r.device;
		}
		*file_rows += pair_file_rows(p);
		pair_close(p);
		if (rc == 0)
			return CLIENT_EXIT_OK;
		if (!sql_is_damage(sqlite3_errcode(db)))
			return db_error(db, "the samples");
		if (dmg->damaged)	/* a second damaged stretch: said once */
			return CLIENT_EXIT_OK;
		/* a damaged page: go on after it */
		dmg->damaged = true;
		dmg->from_ns = last != 0 ? last : lo_ns;
		if (summary_after_damage(db, dmg->from_ns, below,
		    &dmg->to_ns) == -1)
			return db_error(db, "the samples");
		if (dmg->to_ns == 0 || dmg->to_ns >= below)
			return CLIENT_EXIT_OK;
		/*
		 * from its far side on alone (binding clears the error
		 * sqlite3_errcode gave above, so it comes after)
		 */
		db_bind_read_from(s, INT64_MIN);
		from = dmg->to_ns;
	}
}
