/*
 * summarycmd: "spyremon summary --window TAG|ID [--json|--csv]": a
 * window's per-card summary (summary.h) and its data-quality notes
 * (winsum.h); a table on a terminal, JSON or CSV for programs.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "format.h"
#include "hosts.h"
#include "json.h"
#include "jsonw.h"
#include "output.h"
#include "serving.h"
#include "summarycmd.h"
#include "table.h"
#include "timeparse.h"
#include "window_json.h"
#include "winsum.h"

enum { OPT_JSON = CLIENT_OPT_FIRST_FREE, OPT_CSV, OPT_WINDOW, OPT_TABLE,
	OPT_OUTPUT, OPT_PARTIAL };
/* F_PLAIN: the text of old, for pipes; F_TABLE: for a person. */
enum sformat { F_DEFAULT, F_PLAIN, F_TABLE, F_JSON, F_CSV };

/* "%.*f" of v, or "-" without a value. */
static void
num(char *buf, size_t len, bool has, double v, int digits)
{
	if (has)
		snprintf(buf, len, "%.*f", digits, v);
	else
		snprintf(buf, len, "-");
}

#define NCOLS	14

/* The plain table's columns, as they always were. */
static const struct table_col plain_cols[NCOLS] = {
	{ "CARD", NULL, TABLE_LEFT }, { "SAMPLES", NULL, TABLE_LEFT },
	{ "COVER%", NULL, TABLE_LEFT }, { "GAPS", NULL, TABLE_LEFT },
	{ "ENERGY_J", NULL, TABLE_LEFT }, { "NET_J", NULL, TABLE_LEFT },
	{ "IDLE_W", NULL, TABLE_LEFT }, { "PWR_MEAN", NULL, TABLE_LEFT },
	{ "PWR_MIN", NULL, TABLE_LEFT }, { "PWR_MAX", NULL, TABLE_LEFT },
	{ "PWR_P95", NULL, TABLE_LEFT }, { "GTEMP_MAX", NULL, TABLE_LEFT },
	{ "BUSY_MEAN", NULL, TABLE_LEFT }, { "ACTMEM_PEAK", NULL, TABLE_LEFT },
};

/* For a person: units under the names; POWER is the mean. */
static const struct table_col human_cols[NCOLS] = {
	{ "CARD", NULL, TABLE_RIGHT }, { "SAMPLES", NULL, TABLE_RIGHT },
	{ "COVER", "%", TABLE_RIGHT }, { "GAPS", NULL, TABLE_RIGHT },
	{ "ENERGY", "J", TABLE_RIGHT }, { "NET", "J", TABLE_RIGHT },
	{ "IDLE", "W", TABLE_RIGHT }, { "POWER", "W", TABLE_RIGHT },
	{ "MIN", "W", TABLE_RIGHT }, { "MAX", "W", TABLE_RIGHT },
	{ "P95", "W", TABLE_RIGHT }, { "GTEMP", "C", TABLE_RIGHT },
	{ "BUSY", "%", TABLE_RIGHT }, { "ACTMEM", "MiB", TABLE_RIGHT },
};

static const struct table_col plain_bw_cols[5] = {
	{ "BANDWIDTH", NULL, TABLE_LEFT }, { "CARD", NULL, TABLE_LEFT },
	{ "MEAN_GiB/s", NULL, TABLE_LEFT }, { "MAX_GiB/s", NULL, TABLE_LEFT },
	{ "BYTES", NULL, TABLE_LEFT },
};

static const struct table_col human_bw_cols[5] = {
	{ "BANDWIDTH", NULL, TABLE_LEFT }, { "CARD", NULL, TABLE_RIGHT },
	{ "MEAN", "GiB/s", TABLE_RIGHT }, { "MAX", "GiB/s", TABLE_RIGHT },
	{ "MOVED", "GiB", TABLE_RIGHT },
};

/* A figure for a person: table_fixed, or "-" without a value. */
static void
human_num(struct table *t, bool has, double v, int digits)
{
	char buf[SUMMARY_CELL];

	if (!has)
		snprintf(buf, sizeof(buf), "-");
	else if (digits < 0)
		table_sig(buf, sizeof(buf), v);
	else
		table_fixed(buf, sizeof(buf), v, digits);
	table_cell(t, buf);
}

/* Card c's row of the table for a person (-1 digits: table_sig). */
static void
human_row(struct table *t, const struct winsum *ws,
    const struct summary_card *c)
{
	int64_t dur = winsum_duration(ws);

	table_row(t);
	table_cellf(t, "%d", c->device);
	table_cellf(t, "%" PRId64, c->samples);
	human_num(t, dur > 0, 100.0 * (double)c->covered_ns /
	    (double)(dur > 0 ? dur : 1), 1);
	table_cellf(t, "%" PRId64, c->gaps);
	human_num(t, c->has_power, summary_energy(c), -1);
	human_num(t, c->has_idle, c->net_energy_j, -1);
	human_num(t, c->has_idle, c->idle_w, 1);
	human_num(t, c->has_power, c->power_mean, 1);
	human_num(t, c->has_power, c->power_min, 1);
	human_num(t, c->has_power, c->power_max, 1);
	human_num(t, c->has_power, c->power_p95, 1);
	human_num(t, c->has_gtemp, c->gtemp_max, 1);
	human_num(t, c->has_busy, c->busy_mean, 1);
	human_num(t, c->has_actmem, c->actmem_peak, 0);
}

void
summary_card_cells(const struct winsum *ws, const struct summary_card *c,
    char cells[][SUMMARY_CELL])
{
	int64_t dur = winsum_duration(ws);

	snprintf(cells[0], SUMMARY_CELL, "%d", c->device);
	snprintf(cells[1], SUMMARY_CELL, "%" PRId64, c->samples);
	num(cells[2], SUMMARY_CELL, dur > 0, 100.0 * (double)c->covered_ns /
	    (double)(dur > 0 ? dur : 1), 1);
	snprintf(cells[3], SUMMARY_CELL, "%" PRId64, c->gaps);
	/* the exact decimal, rounded to mJ for the table */
	num(cells[4], SUMMARY_CELL, c->has_power, summary_energy(c), 3);
	num(cells[5], SUMMARY_CELL, c->has_idle, c->net_energy_j, 3);
	num(cells[6], SUMMARY_CELL, c->has_idle, c->idle_w, 2);
	num(cells[7], SUMMARY_CELL, c->has_power, c->power_mean, 2);
	num(cells[8], SUMMARY_CELL, c->has_power, c->power_min, 1);
	num(cells[9], SUMMARY_CELL, c->has_power, c->power_max, 1);
	num(cells[10], SUMMARY_CELL, c->has_power, c->power_p95, 1);
	num(cells[11], SUMMARY_CELL, c->has_gtemp, c->gtemp_max, 1);
	num(cells[12], SUMMARY_CELL, c->has_busy, c->busy_mean, 1);
	num(cells[13], SUMMARY_CELL, c->has_actmem, c->actmem_peak, 0);
}

void
summary_write_header(FILE *fp, const struct winsum *ws)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN], span[FMT_BUFLEN];

	format_time_utc(ws->w.begin_ns, b, sizeof(b));
	format_time_utc(ws->end_ns, e, sizeof(e));
	fmt_span(winsum_duration(ws), span, sizeof(span));
	fprintf(fp, "window %" PRId64 " '%s': %s to %s%s (%s)", ws->w.id,
	    ws->w.tag, b, ws->w.open && !ws->orphan ? "now" : e,
	    ws->orphan ? " (its last sample), never ended: its daemon is gone" :
	    ws->w.open ? ", open" : "", span);
	if (ws->ended_by[0] != '\0')
		fprintf(fp, ", ended by %s", ws->ended_by);
	if (ws->until_pid > 0)
		fprintf(fp, " (tied to process %" PRId32 ")", ws->until_pid);
	fprintf(fp, "\n");
	if (strcmp(ws->w.meta, "{}") != 0)
		fprintf(fp, "metadata: %s\n", ws->w.meta);
}

void
summary_write_idle(FILE *fp, const struct winsum *ws)
{
	char lb[FMT_BUFLEN];

	fmt_span(ws->s.idle_lookback_ns, lb, sizeof(lb));
	fprintf(fp, "Net energy = energy - idle power x time covered.  Idle "
	    "power: the median power of the card's samples with busy 0, from "
	    "%s before the window's begin to its end, in whole seconds "
	    "(windows.idle_lookback):",
	    lb);
	for (size_t i = 0; i < ws->s.ncards; i++) {
		const struct summary_card *c = &ws->s.cards[i];

		if (c->has_idle)
			fprintf(fp, "%s card %d %.2f W of %" PRId64 " samples",
			    i ? ";" : "", c->device, c->idle_w, c->idle_samples);
		else
			fprintf(fp, "%s card %d none (no sample with busy 0)",
			    i ? ";" : "", c->device);
	}
	fprintf(fp, ".\n");
}

/* The table of each card, then of each bandwidth, plain or for a person. */
static void
write_table(FILE *fp, const struct winsum *ws, const struct serving *sv,
    bool human)
{
	const struct summary *s = &ws->s;
	char cells[SUMMARY_NCOLS][SUMMARY_CELL];
	struct table *t;
	double net;

	summary_write_header(fp, ws);
	fprintf(fp, "\n");
	t = table_new(human ? human_cols : plain_cols, NCOLS);
	for (size_t i = 0; i < s->ncards; i++) {
		if (human) {
			human_row(t, ws, &s->cards[i]);
			continue;
		}
		summary_card_cells(ws, &s->cards[i], cells);
		table_row(t);
		for (int k = 0; k < NCOLS; k++)
			table_cell(t, cells[k]);
	}
	if (human)
		table_write(t, fp, 0);
	else
		table_write_plain(t, fp);
	table_free(t);
	if (s->ncards > 1) {
		fprintf(fp, "all cards: energy %.3f J", winsum_energy(ws));
		if (winsum_net_energy(ws, &net))
			fprintf(fp, ", net of idle %.3f J", net);
		fprintf(fp, "\n");
	}
	t = table_new(human ? human_bw_cols : plain_bw_cols, 5);
	for (size_t i = 0; i < s->ncards; i++)
		for (int b = 0; b < SUMMARY_NBW; b++) {
			const struct summary_bw *w = &s->cards[i].bw[b];

			if (!w->has)
				continue;
			table_row(t);
			table_cell(t, summary_bw_keys[b]);
			table_cellf(t, "%d", s->cards[i].device);
			if (human) {
				human_num(t, true, w->mean, 2);
				human_num(t, true, w->max, 2);
				human_num(t, true, w->bytes / (1024.0 * 1024.0 *
				    1024.0), 2);
			} else {
				table_cellf(t, "%.3f", w->mean);
				table_cellf(t, "%.3f", w->max);
				table_cellf(t, "%.0f", w->bytes);
			}
		}
	if (table_rows(t) > 0) {
		fprintf(fp, "\n");
		if (human)
			table_write(t, fp, 0);
		else
			table_write_plain(t, fp);
	}
	table_free(t);
	for (size_t i = 0; i < s->ncards; i++)
		if (s->cards[i].has_peakmem) {
			fprintf(fp, "\npeakmem peak:");
			for (size_t j = 0; j < s->ncards; j++)
				if (s->cards[j].has_peakmem)
					fprintf(fp, " card %d %.0f MiB;",
					    s->cards[j].device,
					    s->cards[j].peakmem_peak);
			fprintf(fp, "\n");
			break;
		}
	fprintf(fp, "\n");
	summary_write_idle(fp, ws);
	if (sv->state != SERVING_NONE) {
		fprintf(fp, "\n");
		serving_write(fp, sv, false);
	}
	fprintf(fp, "\nNotes on the data:\n");
	for (size_t i = 0; i < ws->nnotes; i++)
		fprintf(fp, "- %s\n", ws->notes[i]);
}

static void
gen_card(yajl_gen g, const struct winsum *ws, const struct summary_card *c)
{
	int64_t dur = winsum_duration(ws);

	yajl_gen_map_open(g);
	jsonw_put_int(g, "card", c->device);
	jsonw_put_int(g, "samples", c->samples);
	jsonw_put_int(g, "covered_ns", c->covered_ns);
	jsonw_put_double_or_null(g, "coverage",
	    dur > 0, (double)c->covered_ns / (double)dur);
	jsonw_put_int(g, "gaps", c->gaps);
	jsonw_put_int(g, "gap_ns", c->gap_ns);
	jsonw_put_int(g, "max_interval_ms", c->max_interval_ms);
	/* the exact decimal text the summary keeps */
	jsonw_str(g, "energy_j");
	(void)jsonw_number(g, c->has_power ? c->energy_j : NULL);
	jsonw_put_double_or_null(g, "net_energy_j",
	    c->has_idle, c->net_energy_j);
	jsonw_put_double_or_null(g, "idle_w", c->has_idle, c->idle_w);
	jsonw_put_int(g, "idle_samples", c->idle_samples);
	jsonw_put_double_or_null(g, "power_mean_w",
	    c->has_power, c->power_mean);
	jsonw_put_double_or_null(g, "power_min_w", c->has_power, c->power_min);
	jsonw_put_double_or_null(g, "power_max_w", c->has_power, c->power_max);
	jsonw_put_double_or_null(g, "power_p95_w", c->has_power, c->power_p95);
	jsonw_put_double_or_null(g, "power_sd_w", c->has_power, c->power_sd);
	jsonw_put_double_or_null(g, "gtemp_max_c", c->has_gtemp, c->gtemp_max);
	jsonw_put_double_or_null(g, "busy_mean_pct", c->has_busy, c->busy_mean);
	jsonw_put_double_or_null(g, "actmem_peak_mib",
	    c->has_actmem, c->actmem_peak);
	jsonw_put_double_or_null(g, "peakmem_peak_mib",
	    c->has_peakmem, c->peakmem_peak);
	jsonw_put_int(g, "coarse_samples", c->coarse_samples);
	jsonw_str(g, "bandwidth");
	yajl_gen_map_open(g);
	for (int b = 0; b < SUMMARY_NBW; b++) {
		if (!c->bw[b].has)
			continue;
		jsonw_str(g, summary_bw_keys[b]);
		yajl_gen_map_open(g);
		jsonw_put_double_or_null(g, "mean_gib_s", true, c->bw[b].mean);
		jsonw_put_double_or_null(g, "max_gib_s", true, c->bw[b].max);
		jsonw_put_double_or_null(g, "bytes", true, c->bw[b].bytes);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	jsonw_put_str(g, "zero_while_busy", c->zero_while_busy);
	jsonw_put_str(g, "unreliable", c->unreliable);
	jsonw_put_int(g, "bad_values", c->bad_values);
	yajl_gen_map_close(g);
}

void
summary_gen_json(yajl_gen g, const struct winsum *ws)
{
	summary_gen_json_host(g, ws, NULL, NULL);
}

void
summary_gen_json_host(yajl_gen g, const struct winsum *ws, const char *host,
    const struct serving *sv)
{
	struct window_json wj = {
		.members = WJ_TIMES | WJ_END | WJ_OPEN | WJ_ENDING | WJ_CLOCKS |
		    WJ_RESTARTS | WJ_META,
		.id = ws->w.id, .tag = ws->w.tag, .begin_ns = ws->w.begin_ns,
		.has_end = true, .end_ns = ws->end_ns, .open = ws->w.open,
		.ended_by = ws->ended_by, .until_pid = ws->until_pid,
		.clock_begin = &ws->clock_begin, .clock_end = &ws->clock_end,
		.has_restarts = ws->restarts_known, .restarts = ws->restarts,
		.meta_json = ws->w.meta,
	};

	yajl_gen_map_open(g);
	if (host != NULL)
		jsonw_put_str(g, "host", host);
	jsonw_str(g, "window");
	window_json(g, &wj);
	jsonw_put_bool(g, "stored", !ws->live);
	jsonw_put_int(g, "computed_ns", ws->s.computed_ns);
	jsonw_put_int(g, "idle_lookback_ns", ws->s.idle_lookback_ns);
	jsonw_put_str(g, "idle_method", "median power of the card's samples "
	    "with busy 0 from idle_lookback before begin to end");
	jsonw_str(g, "cards");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ws->s.ncards; i++)
		gen_card(g, ws, &ws->s.cards[i]);
	yajl_gen_array_close(g);
	jsonw_str(g, "notes");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ws->nnotes; i++)
		jsonw_str(g, ws->notes[i]);
	yajl_gen_array_close(g);
	if (sv != NULL)
		serving_gen_json(g, sv);
	yajl_gen_map_close(g);
}

/* csv_cell: s as one CSV cell, always quoted. */
static void
csv_quoted(FILE *fp, const char *s)
{
	putc('"', fp);
	for (const char *p = s; *p != '\0'; p++)
		fprintf(fp, *p == '"' ? "\"\"" : "%c", *p);
	putc('"', fp);
}

/* The CSV header; host set: a leading host column. */
static void
csv_header(FILE *fp, bool host)
{
	if (host)
		fprintf(fp, "host,");
	fprintf(fp, "window_id,tag,card,duration_s,samples,covered_s,gaps,"
	    "gap_s,energy_j,net_energy_j,idle_w,power_mean_w,power_min_w,"
	    "power_max_w,power_p95_w,gtemp_max_c,busy_mean_pct,"
	    "actmem_peak_mib,peakmem_peak_mib,coarse_samples");
	for (int b = 0; b < SUMMARY_NBW; b++)
		fprintf(fp, ",%s_mean_gib_s,%s_max_gib_s,%s_bytes",
		    summary_bw_keys[b], summary_bw_keys[b], summary_bw_keys[b]);
	fprintf(fp, ",zero_while_busy\n");
}

/* A CSV row per card; host (NULL for one database) is a leading column. */
static void
write_csv(FILE *fp, const struct winsum *ws, const char *host)
{
	for (size_t i = 0; i < ws->s.ncards; i++) {
		const struct summary_card *c = &ws->s.cards[i];
		char v[16][SUMMARY_CELL];

		num(v[0], SUMMARY_CELL, c->has_idle, c->net_energy_j, 9);
		num(v[1], SUMMARY_CELL, c->has_idle, c->idle_w, 6);
		num(v[2], SUMMARY_CELL, c->has_power, c->power_mean, 6);
		num(v[3], SUMMARY_CELL, c->has_power, c->power_min, 6);
		num(v[4], SUMMARY_CELL, c->has_power, c->power_max, 6);
		num(v[5], SUMMARY_CELL, c->has_power, c->power_p95, 6);
		num(v[6], SUMMARY_CELL, c->has_gtemp, c->gtemp_max, 3);
		num(v[7], SUMMARY_CELL, c->has_busy, c->busy_mean, 6);
		num(v[8], SUMMARY_CELL, c->has_actmem, c->actmem_peak, 0);
		num(v[9], SUMMARY_CELL, c->has_peakmem, c->peakmem_peak, 0);
		for (int k = 0; k < 10; k++)
			if (strcmp(v[k], "-") == 0)
				v[k][0] = '\0';	/* an empty cell, as export writes */
		if (host != NULL) {
			csv_quoted(fp, host);
			putc(',', fp);
		}
		/* proto_tag_valid allows any printable ASCII: quote it */
		fprintf(fp, "%" PRId64 ",", ws->w.id);
		csv_quoted(fp, ws->w.tag);
		fprintf(fp, ",%d,%.9f,%" PRId64 ",%.9f,%" PRId64 ",%.9f,%s,"
		    "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%" PRId64, c->device,
		    (double)(winsum_duration(ws)) / 1e9, c->samples,
		    (double)c->covered_ns / 1e9, c->gaps,
		    (double)c->gap_ns / 1e9, c->has_power ? c->energy_j : "",
		    v[0], v[1],
		    v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
		    c->coarse_samples);
		for (int b = 0; b < SUMMARY_NBW; b++)
			if (c->bw[b].has)
				fprintf(fp, ",%.6f,%.6f,%.0f", c->bw[b].mean,
				    c->bw[b].max, c->bw[b].bytes);
			else
				fprintf(fp, ",,,");
		fprintf(fp, ",\"%s\"\n", c->zero_while_busy);
	}
}

/* windows.idle_lookback of the config in force, or its default. */
int64_t
summary_idle_lookback(struct client *cl)
{
	struct config_errors errs = { 0 };
	struct config *cfg = NULL;
	bool defaulted;
	int64_t v = SUMMARY_IDLE_LOOKBACK_NS;

	if (cl->cfg != NULL)
		return (int64_t)cl->cfg->windows.idle_lookback_ns;
	/* a config that cannot be read leaves the default: --db bypasses it */
	if (config_load_default(cl->config_path, &cfg, &errs, &defaulted) == 0 &&
	    cfg != NULL)
		v = (int64_t)cfg->windows.idle_lookback_ns;
	config_errors_free(&errs);
	config_free(cfg);
	return v;
}

/*
 * The summaries of the n databases: with one, as it always was; with
 * several, each carries its host (hosts.h): a heading per table and a
 * total, csv's leading host column, a JSON array of objects with "host".
 */
static void
write_all(FILE *fp, enum sformat fmt, const struct winsum *ws,
    const struct serving *sv, size_t n, const struct hosts_set *hs)
{
	const char *host;
	double total = 0;
	yajl_gen g;

	if (fmt == F_JSON) {
		g = json_gen_new(true);
		if (n > 1)
			yajl_gen_array_open(g);
		for (size_t i = 0; i < n; i++)
			summary_gen_json_host(g, &ws[i], n > 1 ?
			    hosts_name(hs->dbs, n, i) : NULL, &sv[i]);
		if (n > 1)
			yajl_gen_array_close(g);
		json_gen_flush(g, fp);
		yajl_gen_free(g);
		return;
	}
	if (fmt == F_CSV)
		csv_header(fp, n > 1);
	for (size_t i = 0; i < n; i++) {
		host = n > 1 ? hosts_name(hs->dbs, n, i) : NULL;
		if (fmt == F_CSV) {
			write_csv(fp, &ws[i], host);
			continue;
		}
		if (host != NULL)
			fprintf(fp, "%shost %s (%s)\n", i ? "\n" : "", host,
			    hs->dbs[i].path);
		write_table(fp, &ws[i], &sv[i], fmt == F_TABLE);
		total += winsum_energy(&ws[i]);
	}
	if (fmt != F_CSV && n > 1)
		fprintf(fp, "\nall %zu hosts: energy %.3f J\n", n, total);
}

struct summary_opts {
	enum sformat fmt;
	const char *window;
	const char *output;
	bool partial;
};

static int
summary_option(void *opts, int ch, char *arg)
{
	struct summary_opts *o = opts;

	if (ch == OPT_WINDOW)
		o->window = arg;
	else if (ch == OPT_OUTPUT)
		o->output = arg;
	else if (o->fmt != F_DEFAULT) {
		warnx("--json, --csv and --table exclude each other");
		return CLIENT_EXIT_USAGE;
	} else if (ch == OPT_JSON)
		o->fmt = F_JSON;
	else if (ch == OPT_CSV)
		o->fmt = F_CSV;
	else if (ch == OPT_TABLE)
		o->fmt = F_TABLE;
	else if (ch == OPT_PARTIAL)
		o->partial = true;
	return CLIENT_EXIT_OK;
}

static int
summary_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct summary_opts *o = opts;
	enum sformat fmt = o->fmt;
	const char *window = o->window;
	const char *const *paths;
	struct hosts_set hs;
	struct winsum *ws;
	struct serving *sv;
	FILE *fp = NULL;
	size_t n, nloaded = 0;
	bool incomplete = false, damaged = false;
	int rc;

	(void)argc;
	(void)argv;
	cl->partial = o->partial;
	if (window == NULL) {
		warnx("summary needs --window");
		return CLIENT_EXIT_USAGE;
	}
	if (client_databases(cl, &paths, &n) == -1)
		return CLIENT_EXIT_FAILED;
	if ((rc = hosts_open(paths, n, &hs)) != CLIENT_EXIT_OK) {
		hosts_close(&hs);
		return rc;
	}
	if (n > 1)
		hosts_note_names(hs.dbs, n, stderr);
	if ((ws = calloc(n, sizeof(*ws))) == NULL ||
	    (sv = calloc(n, sizeof(*sv))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++) {
		struct winsum_from from = { .cl = cl, .path = paths[i] };

		if ((rc = winsum_load(hs.db[i], &from, window,
		    summary_idle_lookback(cl), &ws[i])) == CLIENT_EXIT_OK)
			serving_compute(hs.db[i], &ws[i], &sv[i]);
		else if (n > 1)
			warnx("%s: no summary of window %s from this database",
			    paths[i], window);
		nloaded = i + 1;
	}
	if (rc == CLIENT_EXIT_OK && (fp = output_open(o->output)) == NULL)
		rc = CLIENT_EXIT_FAILED;
	if (rc == CLIENT_EXIT_OK) {
		if (fmt == F_DEFAULT)
			fmt = table_for_terminal(fp) ? F_TABLE : F_PLAIN;
		write_all(fp, fmt, ws, sv, n, &hs);
		rc = output_close(fp, o->output, rc);
	}
	for (size_t i = 0; i < nloaded; i++) {
		if (rc == CLIENT_EXIT_OK)
			incomplete = incomplete || ws[i].settled != CLIENT_EXIT_OK;
		if (ws[i].settled == CLIENT_EXIT_PARTIAL)
			damaged = true;
		winsum_free(&ws[i]);
	}
	free(ws);
	free(sv);
	hosts_close(&hs);
	if (rc != CLIENT_EXIT_OK)
		return rc;
	/* rows that could not be read are not waited for: 6 whatever --partial */
	if (damaged)
		return CLIENT_EXIT_PARTIAL;
	return client_exit(cl, incomplete ? CLIENT_EXIT_INCOMPLETE :
	    CLIENT_EXIT_OK);
}

static const struct option summary_longopts[] = {
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "table", no_argument, NULL, OPT_TABLE },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "partial", no_argument, NULL, OPT_PARTIAL },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_spec summary_cmd = {
	.name = "summary",
	.usage =
	    "usage: spyremon summary --window TAG|ID [--json | --csv | --table]\n"
	    "                        [--output FILE] [--partial]\n"
	    "\n"
	    "The window's summary per card: duration, samples, coverage, gaps,\n"
	    "energy (also net of idle), power, temperature, busy, bandwidths and\n"
	    "memory peaks, with notes on the quality of the data.  With several\n"
	    "--db (one per host), the window of each, each row carrying its host.\n"
	    "\n"
	    "      --window TAG|ID   the window; a tag: the newest with it\n"
	    "      --json            one JSON object instead of the table\n"
	    "      --csv             one CSV row per card\n"
	    "      --table           the aligned tables with units, on a pipe\n"
	    "                        too (the default on a terminal)\n"
	    "      --output FILE     write FILE, whole or not at all\n"
	    "      --partial         a window whose daemon died: summed to its\n"
	    "                        last sample, exit 0\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE) |
	    CMD_EXIT(CLIENT_EXIT_PARTIAL) | CMD_EXIT(CLIENT_EXIT_INCOMPLETE),
	.longopts = summary_longopts,
	.opts_size = sizeof(struct summary_opts),
	.option = summary_option,
	.run = summary_run,
};
