/*
 * steps: power, energy and load per step of a trace (steps.h).
 *
 * The samples of each span (a step, or the whole trace for the totals)
 * are read with the overlap rule of DB_OVERLAPS_SQL, one query per span
 * over a range of the primary key, and summed per card by energy.h in
 * integer arithmetic, so that the energy written is the exact integral of
 * the stored values and does not depend on the order of the rows.  The
 * totals are read first: they name the cards, and every step then has a
 * row for each card, with empty values where the card has no sample.
 *
 * CSV and JSON rows are written as they are made; the table is kept
 * whole to size its columns.  The notes (under-sampled steps, steps with
 * no sample, values that are not numbers) follow as footnotes of the
 * table, or as lines on stderr.
 */
#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <sqlite3.h>
#include <yajl/yajl_gen.h>

#include "client.h"
#include "db.h"
#include "energy.h"
#include "format.h"
#include "json.h"
#include "schema.h"
#include "steps.h"
#include "table.h"
#include "timeparse.h"

#define MEAN_DIGITS	9	/* after the point, of a mean in csv and json */
#define NAME_WIDTH	40	/* longest step name the table shows whole */

/*
 * The metrics summed, by aiu-smi key; absent ones give empty cells.  Those
 * before M_GTEMP are the table's; gtemp is for steps_means alone.
 */
enum metric {
	M_PWR, M_BUSY, M_RDMEM, M_WRMEM, M_RXPCI, M_TXPCI, M_GTEMP, M_N
};
#define M_TABLE	M_GTEMP


/* The columns, in output order (columns[] names them). */
enum col {
	C_STEP, C_DEVICE, C_START, C_START_NS, C_DUR, C_SAMPLES, C_INTERVAL,
	C_COVERED, C_PWR_MEAN, C_PWR_MAX, C_ENERGY, C_BUSY, C_RD, C_WR, C_RX,
	C_TX, C_UNDER, C_N
};

/*
 * One card's sums over one span.  Its samples are its rows of its row
 * source (bestsrc.h), as summary and windows count them.
 */
struct cell {
	uint64_t samples;		/* those rows overlapping the span */
	int64_t	 max_interval_ns;	/* the longest of their intervals */
	struct energy_acc m[M_N];
};

/* The text of one row's cells; "" is empty (csv) or null (json). */
struct row {
	char	 c[C_N][ENERGY_BUFLEN];
	const char *step;		/* C_STEP's text, not copied */
};

struct report {
	const struct steps_request *rq;
	sqlite3 *db;
	sqlite3_stmt *s;
	const struct db_metric *met[M_N];	/* NULL: not in the database */
	int	*devs;				/* the cards, ascending */
	size_t	 ndevs;
	struct cell *cells;			/* per card, for this span */
	struct cell *totals;
	yajl_gen g;
	struct table *table;	/* for a person, kept whole to size it */
	/* for the notes */
	size_t	 nunder, nempty, rows_written;
	int64_t	 under_interval_ns;
	char	 first_empty[NAME_WIDTH + 32];
	uint64_t bad_values;
	/*
	 * The longest interval of a sample that may overlap a span: at first
	 * DB_MAX_INTERVAL_NS, then the longest among the samples of the trace,
	 * which every step lies in; most steps then read a few rows, not 60 s
	 * of them.
	 */
	int64_t	 reach_ns;
};

static const char *const steps_metric_keys[M_N] = {
	"pwr", "busy", "rdmem", "wrmem", "rxpci", "txpci", "gtemp",
};

/* ---- writing the rows ---- */

enum kind { K_STR, K_NUM, K_BOOL };

static const struct column {
	const char *name;	/* csv header and json key */
	enum kind kind;
} columns[C_N] = {
	[C_STEP] = { "step", K_STR },
	[C_DEVICE] = { "device", K_NUM },
	[C_START] = { "start", K_STR },
	[C_START_NS] = { "start_ns", K_NUM },
	[C_DUR] = { "dur_ms", K_NUM },
	[C_SAMPLES] = { "samples", K_NUM },
	[C_INTERVAL] = { "interval_ms", K_NUM },
	[C_COVERED] = { "covered_ms", K_NUM },
	[C_PWR_MEAN] = { "pwr_mean_W", K_NUM },
	[C_PWR_MAX] = { "pwr_max_W", K_NUM },
	[C_ENERGY] = { "energy_J", K_NUM },
	[C_BUSY] = { "busy_mean_pct", K_NUM },
	[C_RD] = { "mem_bw_rd_GiBps", K_NUM },
	[C_WR] = { "mem_bw_wr_GiBps", K_NUM },
	[C_RX] = { "pci_bw_rx_GiBps", K_NUM },
	[C_TX] = { "pci_bw_tx_GiBps", K_NUM },
	[C_UNDER] = { "undersampled", K_BOOL },
};

/*
 * The table for a person: the columns of the csv it shows (-1 ends),
 * under short names with their units; the bandwidths by aiu-smi's keys.
 * start_ns, interval_ms and covered_ms are for programs; a note says
 * the interval where it matters.
 */
static const int table_shows[] = {
	C_STEP, C_DEVICE, C_START, C_DUR, C_SAMPLES, C_PWR_MEAN, C_PWR_MAX,
	C_ENERGY, C_BUSY, C_RD, C_WR, C_RX, C_TX, C_UNDER,
};
static const struct table_col table_cols[] = {
	{ "STEP", NULL, TABLE_LEFT }, { "CARD", NULL, TABLE_RIGHT },
	{ "START", NULL, TABLE_LEFT }, { "DUR", "ms", TABLE_RIGHT },
	{ "SAMPLES", NULL, TABLE_RIGHT }, { "POWER", "W", TABLE_RIGHT },
	{ "MAX", "W", TABLE_RIGHT }, { "ENERGY", "J", TABLE_RIGHT },
	{ "BUSY", "%", TABLE_RIGHT }, { "RDMEM", "GiB/s", TABLE_RIGHT },
	{ "WRMEM", "GiB/s", TABLE_RIGHT }, { "RXPCI", "GiB/s", TABLE_RIGHT },
	{ "TXPCI", "GiB/s", TABLE_RIGHT }, { "NOTE", NULL, TABLE_LEFT },
};
#define TABLE_NCOLS	(sizeof(table_cols) / sizeof(table_cols[0]))

/* Digits after the point of a mean in the table, by metric. */
static const int table_digits[M_N] = {
	[M_PWR] = 1, [M_BUSY] = 1, [M_RDMEM] = 2, [M_WRMEM] = 2,
	[M_RXPCI] = 2, [M_TXPCI] = 2, [M_GTEMP] = 1,
};

/* ---- one row as text ---- */

/* ns as UTC with nanoseconds: 2024-04-04T01:51:35.406752768Z */
static void
iso_ns(int64_t ns, char *buf, size_t len)
{
	int64_t sec = ns / NSEC_PER_SEC, frac = ns % NSEC_PER_SEC;
	struct tm tm;
	time_t t;

	if (frac < 0) {
		frac += NSEC_PER_SEC;
		sec--;
	}
	t = (time_t)sec;
	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)frac);
}

/* A mean: MEAN_DIGITS digits (csv, json), or table_digits. */
static void
mean_text(const struct report *r, const struct cell *c, int m, bool table,
    char *buf)
{
	if (r->met[m] == NULL)
		buf[0] = '\0';
	else if (table)
		energy_mean(&c->m[m], table_digits[m], false, buf,
		    ENERGY_BUFLEN);
	else
		energy_mean(&c->m[m], MEAN_DIGITS, true, buf, ENERGY_BUFLEN);
}

/*
 * The cells of the row of card d (-1: none) over [lo, lo + dur]; c NULL
 * or without samples gives empty values.  Counts what the notes need.
 */
static void
steps_make_row(struct report *r, const char *step, int d, const struct cell *c,
    int64_t lo, int64_t dur, struct row *w)
{
	bool table = r->rq->format == STEPS_TABLE;
	bool has = c != NULL && c->samples > 0;
	bool under = has && dur < c->max_interval_ns;

	memset(w, 0, sizeof(*w));
	w->step = step;
	if (d >= 0)
		snprintf(w->c[C_DEVICE], ENERGY_BUFLEN, "%d", r->devs[d]);
	if (table)
		fmt_clock_ms(lo, w->c[C_START], ENERGY_BUFLEN);
	else
		iso_ns(lo, w->c[C_START], ENERGY_BUFLEN);
	snprintf(w->c[C_START_NS], ENERGY_BUFLEN, "%" PRId64, lo);
	energy_decimal(dur, 1, 6, table ? 1 : 6, !table, w->c[C_DUR],
	    ENERGY_BUFLEN);
	snprintf(w->c[C_SAMPLES], ENERGY_BUFLEN, "%" PRIu64,
	    c != NULL ? c->samples : 0);
	if (!has) {
		if (table)
			snprintf(w->c[C_UNDER], ENERGY_BUFLEN, "no samples");
		else if (r->rq->format == STEPS_CSV)
			snprintf(w->c[C_UNDER], ENERGY_BUFLEN, "0");
		else
			snprintf(w->c[C_UNDER], ENERGY_BUFLEN, "false");
		if (r->nempty++ == 0 && d >= 0)
			snprintf(r->first_empty, sizeof(r->first_empty),
			    "%.*s on device %d", NAME_WIDTH, step, r->devs[d]);
		else if (r->nempty == 1)
			snprintf(r->first_empty, sizeof(r->first_empty),
			    "%.*s", NAME_WIDTH, step);
		return;
	}
	energy_decimal(c->max_interval_ns, 1, 6, table ? 0 : 6, true,
	    w->c[C_INTERVAL], ENERGY_BUFLEN);
	if (r->met[M_PWR] != NULL && c->m[M_PWR].nvalues > 0) {
		const struct energy_acc *p = &c->m[M_PWR];

		energy_decimal(p->covered_ns, 1, 6, 6, true, w->c[C_COVERED],
		    ENERGY_BUFLEN);
		energy_max(p, table ? table_digits[M_PWR] : -1,
		    w->c[C_PWR_MAX], ENERGY_BUFLEN);
		if (energy_integral(p, w->c[C_ENERGY], ENERGY_BUFLEN) &&
		    table)
			table_sig(w->c[C_ENERGY], ENERGY_BUFLEN,
			    strtod(w->c[C_ENERGY], NULL));
	}
	mean_text(r, c, M_PWR, table, w->c[C_PWR_MEAN]);
	mean_text(r, c, M_BUSY, table, w->c[C_BUSY]);
	mean_text(r, c, M_RDMEM, table, w->c[C_RD]);
	mean_text(r, c, M_WRMEM, table, w->c[C_WR]);
	mean_text(r, c, M_RXPCI, table, w->c[C_RX]);
	mean_text(r, c, M_TXPCI, table, w->c[C_TX]);
	if (under) {
		r->nunder++;
		if (c->max_interval_ns > r->under_interval_ns)
			r->under_interval_ns = c->max_interval_ns;
	}
	if (table)
		snprintf(w->c[C_UNDER], ENERGY_BUFLEN, "%s", under ?
		    "under-sampled" : "");
	else if (r->rq->format == STEPS_CSV)
		snprintf(w->c[C_UNDER], ENERGY_BUFLEN, "%d", under);
	else
		snprintf(w->c[C_UNDER], ENERGY_BUFLEN, "%s", under ? "true" :
		    "false");
}

/* ---- writers ---- */

static void
csv_row(const struct steps_request *rq, const struct row *w)
{
	FILE *fp = rq->out;

	if (rq->tagged) {
		fmt_csv_cell(fp, rq->host);
		putc(',', fp);
		if (rq->t->info.has_rank)
			fprintf(fp, "%" PRId64, rq->t->info.rank);
		putc(',', fp);
	}
	fmt_csv_cell(fp, w->step);
	for (int i = C_STEP + 1; i < C_N; i++) {
		putc(',', fp);
		fputs(w->c[i], fp);
	}
	putc('\n', fp);
}

/* Write what the generator holds, keeping its state (mid-document). */
static void
json_drain(yajl_gen g, FILE *fp)
{
	const unsigned char *buf;
	size_t len;

	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok) {
		fwrite(buf, 1, len, fp);
		yajl_gen_clear(g);
	}
}

static void
json_row(yajl_gen g, const struct row *w)
{
	yajl_gen_map_open(g);
	for (int i = 0; i < C_N; i++) {
		const char *v = i == C_STEP ? w->step : w->c[i];

		jsonw_str(g, columns[i].name);
		if (v[0] == '\0')
			yajl_gen_null(g);
		else if (columns[i].kind == K_STR)
			jsonw_str(g, v);
		else if (columns[i].kind == K_BOOL)
			yajl_gen_bool(g, strcmp(v, "true") == 0);
		else
			(void)jsonw_number(g, v);
	}
	yajl_gen_map_close(g);
}

/* A step name for the table: printable, cut at NAME_WIDTH. */
static void
table_name(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s), i;

	snprintf(buf, len, "%s", s);
	if (n > NAME_WIDTH)
		snprintf(buf + NAME_WIDTH - 3, len - (NAME_WIDTH - 3), "...");
	for (i = 0; buf[i] != '\0'; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
}

/* Keep a row of the table for a person: the columns it shows. */
static void
table_add(struct report *r, const struct row *w)
{
	char name[NAME_WIDTH + 1];

	if (r->table == NULL)
		r->table = table_new(table_cols, TABLE_NCOLS);
	table_name(w->step, name, sizeof(name));
	table_row(r->table);
	for (size_t i = 0; i < TABLE_NCOLS; i++)
		table_cell(r->table, table_shows[i] == C_STEP ? name :
		    w->c[table_shows[i]]);
}

static void
steps_emit(struct report *r, const struct row *w)
{
	switch (r->rq->format) {
	case STEPS_TABLE:
		table_add(r, w);
		break;
	case STEPS_CSV:
		csv_row(r->rq, w);
		break;
	case STEPS_JSON:
		json_row(r->g, w);
		if (++r->rows_written % 256 == 0)
			json_drain(r->g, r->rq->out);
		break;
	}
}

/* ---- the report ---- */

/* The notes: footnotes of the table, else lines on stderr. */
static void
steps_notes(struct report *r)
{
	FILE *fp = r->rq->format == STEPS_TABLE ? r->rq->out : stderr;
	const char *lead = r->rq->format == STEPS_TABLE ? "" : "spyremon: ";
	char missing[128] = "", iv[FMT_BUFLEN];
	bool any = false;

	if (r->nunder > 0) {
		fmt_span(r->under_interval_ns, iv, sizeof(iv));
		fprintf(fp, "%s%s%zu row%s under-sampled: shorter than the "
		    "sampling interval (up to %s), so their values come "
		    "mostly from outside the step; sample faster by lowering "
		    "source.window_interval in spyremond.yaml below the "
		    "steps' length, with a window open during the run\n",
		    r->rq->format == STEPS_TABLE ? "\n" : "", lead, r->nunder,
		    r->nunder == 1 ? "" : "s", iv);
		any = true;
	}
	if (r->nempty > 0)
		fprintf(fp, "%s%s%zu row%s without samples (the first: %s): "
		    "no sample overlaps the step, so the values are empty\n",
		    r->rq->format == STEPS_TABLE && !any ? "\n" : "", lead,
		    r->nempty, r->nempty == 1 ? "" : "s", r->first_empty);
	any = any || r->nempty > 0;
	for (int m = 0; m < M_TABLE && r->ndevs > 0; m++) {
		bool seen = false;

		for (size_t d = 0; d < r->ndevs && r->met[m] != NULL; d++)
			seen = seen || r->totals[d].m[m].nvalues > 0;
		if (!seen)
			snprintf(missing + strlen(missing), sizeof(missing) -
			    strlen(missing), "%s%s", missing[0] ? ", " : "",
			    steps_metric_keys[m]);
	}
	if (missing[0] != '\0')
		fprintf(fp, "%s%sno values of %s during the trace (a metric "
		    "group not collected?): those columns are empty\n",
		    r->rq->format == STEPS_TABLE && !any ? "\n" : "", lead,
		    missing);
	if (r->bad_values > 0)
		fprintf(stderr, "spyremon: %" PRIu64 " stored values out of "
		    "range were left out\n", r->bad_values);
}

static void
steps_begin(struct report *r)
{
	FILE *fp = r->rq->out;

	switch (r->rq->format) {
	case STEPS_TABLE:
		break;
	case STEPS_CSV:
		if (!steps_csv_head(fp, r->rq->tagged, r->rq->first))
			break;
		for (int i = 0; i < C_N; i++)
			fprintf(fp, "%s%s", i ? "," : "", columns[i].name);
		putc('\n', fp);
		break;
	case STEPS_JSON:
		r->g = steps_json_open(r->rq->t, r->rq->tagged, r->rq->host);
		jsonw_str(r->g, "steps");
		yajl_gen_array_open(r->g);
		break;
	}
}

/* ---- reading the samples ---- */

static void
cells_reset(struct cell *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		c[i].samples = 0;
		c[i].max_interval_ns = 0;
		for (int m = 0; m < M_N; m++)
			energy_init(&c[i].m[m]);
	}
}

/* Column i of the row as a value: false for NULL or a bad value. */
static bool
value_of(struct report *r, int i, const struct db_metric *dm, int64_t *mant,
    int *scale)
{
	switch (sqlite3_column_type(r->s, i)) {
	case SQLITE_INTEGER:
		*mant = sqlite3_column_int64(r->s, i);
		*scale = dm->decimals;
		return true;
	case SQLITE_FLOAT:
		if (energy_real_value(sqlite3_column_double(r->s, i), dm->decimals,
		    mant, scale))
			return true;
		r->bad_values++;
		return false;
	default:
		return false;
	}
}

static int
devcmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The index of device in r->devs; with add, inserted if new; -1 if not. */
static ssize_t
dev_index(struct report *r, int device, bool add)
{
	int *p = NULL;
	size_t i;

	if (r->ndevs > 0)
		p = bsearch(&device, r->devs, r->ndevs, sizeof(int), devcmp);
	if (p != NULL)
		return p - r->devs;
	if (!add)
		return -1;
	if ((r->devs = reallocarray(r->devs, r->ndevs + 1, sizeof(int))) ==
	    NULL || (r->totals = reallocarray(r->totals, r->ndevs + 1,
	    sizeof(struct cell))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (i = r->ndevs; i > 0 && r->devs[i - 1] > device; i--) {
		r->devs[i] = r->devs[i - 1];
		r->totals[i] = r->totals[i - 1];
	}
	r->devs[i] = device;
	cells_reset(&r->totals[i], 1);
	r->ndevs++;
	return (ssize_t)i;
}

/*
 * Sum the samples that overlap [lo, hi] (the trace's time) into cells,
 * one per card; with add (the totals), cards are added as they are met.
 * A sample that overlaps the span is stamped before hi + r->reach_ns,
 * the longest interval there may be, which bounds the range of keys
 * read.  Across steps of the host clock, each epoch's samples are read
 * at their stamps and shifted into the trace's time (target.h).
 */
static int
sum_span(struct report *r, int64_t lo, int64_t hi, bool add)
{
	struct db_trace_cursor k;
	int rc;

	if (!add)
		cells_reset(r->cells, r->ndevs);
	/* each epoch of the host clock's samples, in the trace's time */
	db_trace_cursor_open(&k, r->s, &r->rq->t->epochs, lo, hi, r->reach_ns);
	while ((rc = db_trace_cursor_step(&k)) == SQLITE_ROW) {
		int64_t ts = db_trace_cursor_ts(&k);
		int64_t ival = sqlite3_column_int64(r->s, 2);
		ssize_t d = dev_index(r, sqlite3_column_int(r->s, 1), add);
		struct cell *c;

		if (d == -1)
			continue;
		/* a damaged row must not overflow: no interval exceeds 60 s */
		ival = ival < 0 ? 0 : ival > DB_MAX_INTERVAL_NS / 1000000 ?
		    DB_MAX_INTERVAL_NS : ival * 1000000;
		c = add ? &r->totals[d] : &r->cells[d];
		/* row figures: the card's row source only (bestsrc.h) */
		if (sqlite3_column_int(r->s, 4 + M_N) != 0) {
			c->samples++;
			if (ival > c->max_interval_ns)
				c->max_interval_ns = ival;
		}
		for (int m = 0; m < M_N; m++) {
			int64_t mant;
			int scale;

			if (r->met[m] != NULL && value_of(r, 3 + m, r->met[m],
			    &mant, &scale))
				energy_add(&c->m[m], mant, scale, ts - ival, ts,
				    lo, hi);
		}
	}
	db_trace_cursor_close(&k);
	return rc == SQLITE_DONE ? CLIENT_EXIT_OK : db_error(r->db,
	    "the samples");
}

/* The rows of one step: one per card, or one without a card if none. */
static int
step_rows(struct report *r, const struct trace_step *st)
{
	const struct trace_target *t = r->rq->t;
	int64_t lo, hi, dur = st->dur_ns > 0 ? st->dur_ns : 0;
	struct row w;
	int rc;

	if (__builtin_add_overflow(st->ts_ns, t->shift_ns, &lo) ||
	    __builtin_add_overflow(lo, dur, &hi)) {
		warnx("%s: step %s is out of range on the samples' clock",
		    t->path, st->name);
		return CLIENT_EXIT_FAILED;
	}
	if ((rc = sum_span(r, lo, hi, false)) != CLIENT_EXIT_OK)
		return rc;
	if (r->ndevs == 0) {
		steps_make_row(r, st->name, -1, NULL, lo, dur, &w);
		steps_emit(r, &w);
	}
	for (size_t d = 0; d < r->ndevs; d++) {
		steps_make_row(r, st->name, (int)d, &r->cells[d], lo, dur, &w);
		steps_emit(r, &w);
	}
	return CLIENT_EXIT_OK;
}

/* Every step, then the totals. */
static int
run(struct report *r)
{
	const struct trace_target *t = r->rq->t;
	const struct trace_info *in = &t->info;
	const struct trace_step **order;
	size_t nsteps, dropped = 0;
	int64_t span = t->end_ns - t->start_ns;
	struct row w;
	int rc;

	if ((rc = sum_span(r, t->start_ns, t->end_ns, true)) != CLIENT_EXIT_OK)
		return rc;
	r->reach_ns = 0;
	for (size_t d = 0; d < r->ndevs; d++)
		if (r->totals[d].max_interval_ns > r->reach_ns)
			r->reach_ns = r->totals[d].max_interval_ns;
	if ((r->cells = calloc(r->ndevs + 1, sizeof(*r->cells))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	nsteps = steps_order(in, r->rq->innermost, &order, &dropped);
	if (dropped > 0)
		fprintf(stderr, "spyremon: %zu ProfilerStep#N steps enclose an "
		    "iteration_N: the table has the iteration_N; "
		    "--step-pattern chooses others\n", dropped);
	steps_begin(r);
	for (size_t i = 0; i < nsteps && rc == CLIENT_EXIT_OK; i++)
		rc = step_rows(r, order[i]);
	free(order);
	if (rc != CLIENT_EXIT_OK)
		return rc;
	if (r->g != NULL) {
		yajl_gen_array_close(r->g);
		jsonw_str(r->g, "total");
		yajl_gen_array_open(r->g);
	}
	if (r->ndevs == 0) {
		steps_make_row(r, "total", -1, NULL, t->start_ns, span, &w);
		steps_emit(r, &w);
	}
	for (size_t d = 0; d < r->ndevs; d++) {
		steps_make_row(r, "total", (int)d, &r->totals[d], t->start_ns, span,
		    &w);
		steps_emit(r, &w);
	}
	if (r->g != NULL) {
		yajl_gen_array_close(r->g);
		yajl_gen_map_close(r->g);
		json_gen_flush(r->g, r->rq->out);
	}
	if (r->table != NULL)
		table_write(r->table, r->rq->out, 0);
	steps_notes(r);
	return CLIENT_EXIT_OK;
}

void
steps_json_trace(yajl_gen g, const struct trace_target *t, bool tagged,
    const char *host)
{
	jsonw_str(g, "trace");
	jsonw_str(g, t->path);
	if (!tagged)
		return;
	jsonw_str(g, "host");
	jsonw_str(g, host);
	jsonw_str(g, "rank");
	if (t->info.has_rank)
		yajl_gen_integer(g, t->info.rank);
	else
		yajl_gen_null(g);
}

bool
steps_csv_head(FILE *fp, bool tagged, bool first)
{
	if (tagged && !first)
		return false;
	if (tagged)
		fputs("host,rank,", fp);
	return true;
}

yajl_gen
steps_json_open(const struct trace_target *t, bool tagged, const char *host)
{
	yajl_gen g = json_gen_new(true);

	yajl_gen_map_open(g);
	steps_json_trace(g, t, tagged, host);
	return g;
}

int
steps_report(sqlite3 *db, const struct steps_request *rq)
{
	struct report r = {
		.rq = rq, .db = db, .reach_ns = DB_MAX_INTERVAL_NS,
	};
	int rc;

	if (rq->t->info.nsteps == 0) {
		warnx("%s: no steps: no X event's whole name matches the step "
		    "pattern (by default %s); name the steps with "
		    "--step-pattern REGEX", rq->t->path, TRACE_STEP_PATTERN);
		return CLIENT_EXIT_FAILED;
	}
	for (int m = 0; m < M_N; m++)
		r.met[m] = db_catalog_find(rq->cat, steps_metric_keys[m]);
	if ((r.s = db_select_samples(db, r.met, M_N, rq->device_sql,
	    false)) == NULL)
		return db_error(db, "the samples");
	rc = run(&r);
	sqlite3_finalize(r.s);
	if (r.g != NULL)
		yajl_gen_free(r.g);
	table_free(r.table);
	free(r.cells);
	free(r.totals);
	free(r.devs);
	return rc;
}

/* A mean of a as a double, if it has values. */
static bool
mean_of(const struct energy_acc *a, double *out)
{
	char buf[ENERGY_BUFLEN];

	if (a->nvalues == 0 || !energy_mean(a, MEAN_DIGITS, true, buf,
	    sizeof(buf)))
		return false;
	*out = strtod(buf, NULL);
	return true;
}

/* The integral of a (joules of power) as a double, if it has one. */
static bool
integral_of(const struct energy_acc *a, double *out)
{
	char buf[ENERGY_BUFLEN];

	if (a->nvalues == 0 || !energy_integral(a, buf, sizeof(buf)))
		return false;
	*out = strtod(buf, NULL);
	return true;
}

int
steps_means(sqlite3 *db, const struct steps_request *rq, const int64_t *lo,
    const int64_t *hi, size_t n, struct steps_mean **out, size_t *nout)
{
	struct report r = {
		.rq = rq, .db = db, .reach_ns = DB_MAX_INTERVAL_NS,
	};
	const struct trace_target *t = rq->t;
	struct steps_mean *v = NULL;
	int rc;

	*out = NULL;
	*nout = 0;
	for (int m = 0; m < M_N; m++)
		r.met[m] = db_catalog_find(rq->cat, steps_metric_keys[m]);
	if ((r.s = db_select_samples(db, r.met, M_N, rq->device_sql,
	    false)) == NULL)
		return db_error(db, "the samples");
	/* the cards of the trace's span, then each window's sums */
	rc = sum_span(&r, t->start_ns, t->end_ns, true);
	/* then reach back no further than the longest interval, as run() */
	r.reach_ns = 0;
	for (size_t d = 0; rc == CLIENT_EXIT_OK && d < r.ndevs; d++)
		if (r.totals[d].max_interval_ns > r.reach_ns)
			r.reach_ns = r.totals[d].max_interval_ns;
	if (rc == CLIENT_EXIT_OK && ((r.cells = calloc(r.ndevs + 1,
	    sizeof(*r.cells))) == NULL || (v = calloc(n * r.ndevs + 1,
	    sizeof(*v))) == NULL))
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++) {
		if ((rc = sum_span(&r, lo[i], hi[i], false)) != CLIENT_EXIT_OK)
			break;
		for (size_t d = 0; d < r.ndevs; d++) {
			struct steps_mean *e = &v[(*nout)++];
			const struct cell *c = &r.cells[d];

			e->window = i;
			e->device = r.devs[d];
			e->samples = c->samples;
			e->covered_ns = c->m[M_PWR].covered_ns;
			e->has_pwr = r.met[M_PWR] != NULL &&
			    mean_of(&c->m[M_PWR], &e->pwr_w);
			e->has_busy = r.met[M_BUSY] != NULL &&
			    mean_of(&c->m[M_BUSY], &e->busy_pct);
			e->has_energy = e->has_pwr &&
			    integral_of(&c->m[M_PWR], &e->energy_j);
			for (int m = M_RDMEM; m <= M_TXPCI; m++)
				e->has_bw[m - M_RDMEM] = r.met[m] != NULL &&
				    mean_of(&c->m[m], &e->bw_gibps[m - M_RDMEM]);
			e->has_gtemp = r.met[M_GTEMP] != NULL &&
			    mean_of(&c->m[M_GTEMP], &e->gtemp_c);
		}
	}
	sqlite3_finalize(r.s);
	free(r.cells);
	free(r.totals);
	free(r.devs);
	if (rc != CLIENT_EXIT_OK) {
		free(v);
		*nout = 0;
		return rc;
	}
	*out = v;
	return CLIENT_EXIT_OK;
}
