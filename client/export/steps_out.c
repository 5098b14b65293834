/*
 * steps_out: the rows of the per-step table as csv, json or an aligned
 * table, and its notes (steps_priv.h).
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "format.h"
#include "json.h"
#include "steps_priv.h"
#include "timeparse.h"

enum kind { K_STR, K_NUM, K_BOOL };

static const struct column {
	const char *name;	/* csv header and json key */
	const char *head;	/* table header; NULL: not in the table */
	enum kind kind;
} columns[C_N] = {
	[C_STEP] = { "step", "STEP", K_STR },
	[C_DEVICE] = { "device", "DEV", K_NUM },
	[C_START] = { "start", "START", K_STR },
	[C_START_NS] = { "start_ns", NULL, K_NUM },
	[C_DUR] = { "dur_ms", "DUR_MS", K_NUM },
	[C_SAMPLES] = { "samples", "SAMPLES", K_NUM },
	[C_INTERVAL] = { "interval_ms", "INT_MS", K_NUM },
	[C_COVERED] = { "covered_ms", NULL, K_NUM },
	[C_PWR_MEAN] = { "pwr_mean_W", "PWR_W", K_NUM },
	[C_PWR_MAX] = { "pwr_max_W", "PWR_MAX_W", K_NUM },
	[C_ENERGY] = { "energy_J", "ENERGY_J", K_NUM },
	[C_BUSY] = { "busy_mean_pct", "BUSY_%", K_NUM },
	[C_RD] = { "mem_bw_rd_GiBps", "MEM_RD", K_NUM },
	[C_WR] = { "mem_bw_wr_GiBps", "MEM_WR", K_NUM },
	[C_RX] = { "pci_bw_rx_GiBps", "PCI_RX", K_NUM },
	[C_TX] = { "pci_bw_tx_GiBps", "PCI_TX", K_NUM },
	[C_UNDER] = { "undersampled", "NOTE", K_BOOL },
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

/* A mean: MEAN_DIGITS digits (csv, json), or the metric's own and one more. */
static void
mean_text(const struct report *r, const struct cell *c, int m, bool table,
    char *buf)
{
	if (r->met[m] == NULL)
		buf[0] = '\0';
	else if (table)
		energy_mean(&c->m[m], r->met[m]->decimals + 1, false, buf,
		    ENERGY_BUFLEN);
	else
		energy_mean(&c->m[m], MEAN_DIGITS, true, buf, ENERGY_BUFLEN);
}

/*
 * The cells of the row of card d (-1: none) over [lo, lo + dur]; c NULL
 * or without samples gives empty values.  Counts what the notes need.
 */
void
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
	energy_decimal(dur, 1, 6, table ? 3 : 6, !table, w->c[C_DUR],
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
		energy_max(p, table ? r->met[M_PWR]->decimals : -1,
		    w->c[C_PWR_MAX], ENERGY_BUFLEN);
		if (table)
			energy_integral_fixed(p, 3, w->c[C_ENERGY],
			    ENERGY_BUFLEN);
		else
			energy_integral(p, w->c[C_ENERGY], ENERGY_BUFLEN);
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

/* A csv field, quoted when it holds a comma, a quote or a line break. */
static void
csv_field(FILE *fp, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, fp);
		return;
	}
	putc('"', fp);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			putc('"', fp);
		putc(*s, fp);
	}
	putc('"', fp);
}

static void
csv_row(FILE *fp, const struct row *w)
{
	csv_field(fp, w->step);
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
			yajl_gen_number(g, v, strlen(v));
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

/* Keep a table row: its cells end to end, each with its NUL. */
static void
table_add(struct report *r, const struct row *w)
{
	char name[NAME_WIDTH + 1], *p;
	size_t size = 0;

	table_name(w->step, name, sizeof(name));
	for (int i = 0; i < C_N; i++)
		size += strlen(i == C_STEP ? name : w->c[i]) + 1;
	if (r->nrows == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		if ((r->table = reallocarray(r->table, r->cap,
		    sizeof(*r->table))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	if ((p = r->table[r->nrows++] = malloc(size)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (int i = 0; i < C_N; i++)
		p = stpcpy(p, i == C_STEP ? name : w->c[i]) + 1;
}

void
steps_emit(struct report *r, const struct row *w)
{
	switch (r->rq->format) {
	case STEPS_TABLE:
		table_add(r, w);
		break;
	case STEPS_CSV:
		csv_row(r->rq->out, w);
		break;
	case STEPS_JSON:
		json_row(r->g, w);
		if (++r->rows_written % 256 == 0)
			json_drain(r->g, r->rq->out);
		break;
	}
}

/* The kept table, aligned: names and notes left, numbers right. */
void
steps_table_write(struct report *r)
{
	size_t width[C_N] = { 0 };
	FILE *fp = r->rq->out;
	const char *cell[C_N];

	for (int i = 0; i < C_N; i++)
		if (columns[i].head != NULL)
			width[i] = strlen(columns[i].head);
	for (size_t k = 0; k < r->nrows; k++) {
		const char *p = r->table[k];

		for (int i = 0; i < C_N; i++, p += strlen(p) + 1)
			if (strlen(p) > width[i])
				width[i] = strlen(p);
	}
	for (size_t k = 0; k <= r->nrows; k++) {
		const char *p = k > 0 ? r->table[k - 1] : NULL;
		bool first = true;

		for (int i = 0; i < C_N; i++) {
			cell[i] = p != NULL ? p : columns[i].head;
			if (p != NULL)
				p += strlen(p) + 1;
		}
		/* the note is last: no padding after it */
		for (int i = 0; i < C_N; i++) {
			bool left = columns[i].kind != K_NUM;

			if (columns[i].head == NULL ||
			    (i == C_UNDER && cell[i][0] == '\0'))
				continue;
			fprintf(fp, "%s%*s%s", first ? "" : "  ",
			    left ? 0 : (int)(width[i] - strlen(cell[i])), "",
			    cell[i]);
			if (left && i != C_UNDER)
				fprintf(fp, "%*s", (int)(width[i] -
				    strlen(cell[i])), "");
			first = false;
		}
		putc('\n', fp);
	}
}

/* ---- the report ---- */

/* The notes: footnotes of the table, else lines on stderr. */
void
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
	for (int m = 0; m < M_N && r->ndevs > 0; m++) {
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

void
steps_begin(struct report *r)
{
	FILE *fp = r->rq->out;

	switch (r->rq->format) {
	case STEPS_TABLE:
		break;
	case STEPS_CSV:
		for (int i = 0; i < C_N; i++)
			fprintf(fp, "%s%s", i ? "," : "", columns[i].name);
		putc('\n', fp);
		break;
	case STEPS_JSON:
		if ((r->g = json_gen_new(true)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		yajl_gen_map_open(r->g);
		jsonw_str(r->g, "trace");
		jsonw_str(r->g, r->rq->t->path);
		jsonw_str(r->g, "steps");
		yajl_gen_array_open(r->g);
		break;
	}
}

