/*
 * ops_out: the cells of the per-operator tables and their writers
 * (ops_out.h): csv, json and the tables for a person.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "client.h"
#include "format.h"
#include "json.h"
#include "ops_out.h"
#include "steps.h"
#include "table.h"

enum kind { K_STR, K_NUM };

static const struct column {
	const char *name;	/* csv header and json key */
	enum kind kind;
} columns[C_N] = {
	[C_SECTION] = { "section", K_STR }, [C_NAME] = { "name", K_STR },
	[C_CATEGORY] = { "category", K_STR }, [C_CARD] = { "card", K_NUM },
	[C_CALLS] = { "calls", K_NUM }, [C_DEVICE] = { "device_ms", K_NUM },
	[C_TIME_PCT] = { "time_pct", K_NUM },
	[C_ENERGY] = { "energy_J", K_NUM },
	[C_ENERGY_PCT] = { "energy_pct", K_NUM },
	[C_NET] = { "net_J", K_NUM }, [C_MEAN_W] = { "mean_W", K_NUM },
	[C_ERROR] = { "error_J", K_NUM }, [C_BASIS] = { "basis", K_STR },
	[C_FLOPS] = { "flops", K_NUM }, [C_TOPS] = { "TOPS", K_NUM },
	[C_TOPS_W] = { "TOPS_per_W", K_NUM },
	[C_SAMPLES] = { "samples", K_NUM },
	[C_INTERVAL] = { "interval_ms", K_NUM },
	[C_COVERED] = { "covered_ms", K_NUM },
	[C_DEV_SPAN] = { "device_span_ms", K_NUM },
	[C_IDLE_MS] = { "idle_ms", K_NUM }, [C_IDLE_J] = { "idle_J", K_NUM },
	[C_HOST_MS] = { "host_only_ms", K_NUM },
	[C_HOST_J] = { "host_only_J", K_NUM },
	[C_IDLE_W] = { "idle_W", K_NUM }, [C_CLOSURE] = { "closure", K_NUM },
	[C_COUNTER_J] = { "counter_J", K_NUM },
	[C_COUNTER_CALLS] = { "counter_calls", K_NUM },
	[C_COUNTER_SCALE] = { "counter_J_per_count", K_NUM },
	[C_COUNTER_RES_J] = { "counter_residual_J", K_NUM },
	[C_COUNTER_RES] = { "counter_residual_rel", K_NUM },
	[C_COUNTER_IV] = { "counter_intervals", K_NUM },
	[C_COUNTER_BACK] = { "counter_backwards", K_NUM },
	[C_FLOOR_W] = { "floor_W", K_NUM },
	[C_CEILING_W] = { "ceiling_W", K_NUM },
};

/* The columns of each section, in json and in the table (-1 ends). */
static const int section_cols[S_N][C_N + 1] = {
	[S_OP] = { C_NAME, C_CATEGORY, C_CALLS, C_DEVICE, C_TIME_PCT,
	    C_ENERGY, C_ENERGY_PCT, C_NET, C_MEAN_W, C_ERROR, C_BASIS,
	    C_FLOPS, C_TOPS, C_TOPS_W, C_COUNTER_J, C_COUNTER_CALLS, -1 },
	[S_CATEGORY] = { C_NAME, C_CALLS, C_DEVICE, C_TIME_PCT, C_ENERGY,
	    C_ENERGY_PCT, C_NET, C_MEAN_W, C_ERROR, C_BASIS, -1 },
	[S_CARD] = { C_CARD, C_CALLS, C_SAMPLES, C_INTERVAL, C_COVERED,
	    C_DEV_SPAN, C_DEVICE, C_ENERGY, C_ENERGY_PCT, C_NET, C_MEAN_W, C_IDLE_MS,
	    C_IDLE_J, C_HOST_MS, C_HOST_J, C_IDLE_W, C_CLOSURE, C_COUNTER_J,
	    C_COUNTER_SCALE, C_COUNTER_RES_J, C_COUNTER_RES, C_COUNTER_IV,
	    C_COUNTER_BACK, C_FLOOR_W, C_CEILING_W, -1 },
};

/*
 * The table's columns: json's without the counter's (a table of its
 * own) and the bound's range of power.
 */
static bool
table_shows(int c)
{
	return c < C_COUNTER_J;
}

/* The table's headers of those columns, with units. */
static const struct table_col op_table[] = {
	{ "OPERATOR", NULL, TABLE_LEFT }, { "CATEGORY", NULL, TABLE_LEFT },
	{ "CALLS", NULL, TABLE_RIGHT }, { "DEVICE", "ms", TABLE_RIGHT },
	{ "SPAN", "%", TABLE_RIGHT }, { "ENERGY", "J", TABLE_RIGHT },
	{ "SHARE", "%", TABLE_RIGHT }, { "NET", "J", TABLE_RIGHT },
	{ "POWER", "W", TABLE_RIGHT }, { "ERROR", "±J", TABLE_RIGHT },
	{ "BASIS", NULL, TABLE_LEFT }, { "FLOPS", NULL, TABLE_RIGHT },
	{ "TOPS", NULL, TABLE_RIGHT }, { "TOPS/W", NULL, TABLE_RIGHT },
};
static const struct table_col category_table[] = {
	{ "CATEGORY", NULL, TABLE_LEFT }, { "CALLS", NULL, TABLE_RIGHT },
	{ "DEVICE", "ms", TABLE_RIGHT }, { "SPAN", "%", TABLE_RIGHT },
	{ "ENERGY", "J", TABLE_RIGHT }, { "SHARE", "%", TABLE_RIGHT },
	{ "NET", "J", TABLE_RIGHT }, { "POWER", "W", TABLE_RIGHT },
	{ "ERROR", "±J", TABLE_RIGHT }, { "BASIS", NULL, TABLE_LEFT },
};
static const struct table_col card_table[] = {
	{ "CARD", NULL, TABLE_RIGHT }, { "EVENTS", NULL, TABLE_RIGHT },
	{ "SAMPLES", NULL, TABLE_RIGHT }, { "INTERVAL", "ms", TABLE_RIGHT },
	{ "COVERED", "ms", TABLE_RIGHT }, { "DEVSPAN", "ms", TABLE_RIGHT },
	{ "BUSY", "ms", TABLE_RIGHT },
	{ "ENERGY", "J", TABLE_RIGHT }, { "SHARE", "%", TABLE_RIGHT },
	{ "NET", "J", TABLE_RIGHT }, { "POWER", "W", TABLE_RIGHT },
	{ "IDLE", "ms", TABLE_RIGHT },
	{ "IDLE", "J", TABLE_RIGHT }, { "HOST-ONLY", "ms", TABLE_RIGHT },
	{ "HOST-ONLY", "J", TABLE_RIGHT }, { "IDLE", "W", TABLE_RIGHT },
	{ "CLOSURE", NULL, TABLE_RIGHT },
};
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- numbers as text ---- */

/* v as the shortest decimal that reads back as v (csv, json). */
void
ops_out_exact(double v, char *buf)
{
	for (int p = 15; p <= 17; p++) {
		snprintf(buf, OPS_CELL, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* v for the table: four significant digits, or three past 0 for small values. */
static void
table_energy(double v, char *buf)
{
	if (fabs(v) >= 1 || v == 0)
		table_sig(buf, OPS_CELL, v);
	else
		snprintf(buf, OPS_CELL, "%.3g", v);
}

/* Cell c: v exactly, or for the table with decimals digits (-1: table_energy). */
void
ops_out_num(struct ops_out *r, int c, double v, int decimals)
{
	if (r->rq->format != STEPS_TABLE)
		ops_out_exact(v, r->row[c]);
	else if (decimals < 0 && fabs(v) < 1e-9 * r->total_j)
		table_energy(0, r->row[c]);	/* rounding's noise: 0 */
	else if (decimals < 0)
		table_energy(v, r->row[c]);
	else
		table_fixed(r->row[c], OPS_CELL, v, decimals);
}

void
ops_out_text(struct ops_out *r, int c, const char *s)
{
	snprintf(r->row[c], OPS_CELL, "%s", s);
}

/* ---- writers ---- */

static void
csv_row(struct ops_out *r)
{
	FILE *fp = r->rq->out;

	if (r->rq->tagged) {
		fmt_csv_cell(fp, r->rq->host);
		putc(',', fp);
		if (r->rq->t->info.has_rank)
			fprintf(fp, "%" PRId64, r->rq->t->info.rank);
		putc(',', fp);
	}
	for (int i = 0; i < C_N; i++) {
		if (i > 0)
			putc(',', fp);
		if (columns[i].kind == K_STR)
			fmt_csv_cell(fp, r->row[i]);
		else
			fputs(r->row[i], fp);
	}
	putc('\n', fp);
}

static void
json_row(struct ops_out *r, enum ops_section s)
{
	yajl_gen_map_open(r->g);
	for (const int *c = section_cols[s]; *c != -1; c++) {
		const char *v = r->row[*c];

		jsonw_str(r->g, columns[*c].name);
		if (v[0] == '\0')
			yajl_gen_null(r->g);
		else if (columns[*c].kind == K_STR)
			jsonw_str(r->g, v);
		else
			(void)jsonw_number(r->g, v);
	}
	yajl_gen_map_close(r->g);
}

/* A name for the table: printable, cut at OPS_NAME_WIDTH. */
static void
table_name(const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", OPS_NAME_WIDTH, s);
	if (strlen(s) > OPS_NAME_WIDTH)
		snprintf(buf + OPS_NAME_WIDTH - 3, len - (OPS_NAME_WIDTH - 3),
		    "...");
	for (size_t i = 0; buf[i] != '\0'; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
}

static void
table_add(struct ops_out *r, enum ops_section s)
{
	static const struct table_col *const heads[S_N] = {
		op_table, category_table, card_table,
	};
	static const size_t nheads[S_N] = {
		NELEM(op_table), NELEM(category_table), NELEM(card_table),
	};
	char name[OPS_NAME_WIDTH + 1];

	if (r->tables[s] == NULL)
		r->tables[s] = table_new(heads[s], nheads[s]);
	table_row(r->tables[s]);
	for (const int *c = section_cols[s]; *c != -1; c++) {
		if (!table_shows(*c))
			continue;
		if (*c == C_NAME) {
			table_name(r->row[*c], name, sizeof(name));
			table_cell(r->tables[s], name);
		} else {
			table_cell(r->tables[s], r->row[*c]);
		}
	}
}

void
ops_out_emit(struct ops_out *r, enum ops_section s)
{
	switch (r->rq->format) {
	case STEPS_TABLE:
		table_add(r, s);
		break;
	case STEPS_CSV:
		csv_row(r);
		break;
	case STEPS_JSON:
		json_row(r, s);
		break;
	}
}

void
ops_out_section(struct ops_out *r, const char *key)
{
	if (r->g == NULL)
		return;
	jsonw_str(r->g, key);
	yajl_gen_array_open(r->g);
}

void
ops_out_section_end(struct ops_out *r)
{
	if (r->g != NULL)
		yajl_gen_array_close(r->g);
}

static const struct table_col counter_table[] = {
	{ "OPERATOR", NULL, TABLE_LEFT }, { "CALLS", NULL, TABLE_RIGHT },
	{ "SAMPLED", "J", TABLE_RIGHT }, { "ERROR", "±J", TABLE_RIGHT },
	{ "COUNTER", "J", TABLE_RIGHT }, { "DIFF", "%", TABLE_RIGHT },
};

/* Operator f beside its energy by the counter, for the table. */
void
ops_out_counter_row(struct ops_out *r, const struct ops_figures *f)
{
	char name[OPS_NAME_WIDTH + 1], buf[OPS_CELL];

	if (r->counter == NULL)
		r->counter = table_new(counter_table, NELEM(counter_table));
	table_row(r->counter);
	table_name(f->name, name, sizeof(name));
	table_cell(r->counter, name);
	snprintf(buf, sizeof(buf), "%" PRIu64, f->counter_calls);
	table_cell(r->counter, buf);
	table_energy(f->energy_j, buf);
	table_cell(r->counter, buf);
	table_energy(f->bound_j, buf);
	table_cell(r->counter, buf);
	table_energy(f->counter_j, buf);
	table_cell(r->counter, buf);
	if (f->energy_j > 0)
		table_fixed(buf, OPS_CELL, 100 * (f->counter_j - f->energy_j) /
		    f->energy_j, 1);
	else
		buf[0] = '\0';
	table_cell(r->counter, buf);
}

void
ops_out_begin(struct ops_out *r)
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
		jsonw_str(r->g, "start_ns");
		yajl_gen_integer(r->g, r->res->span_lo);
		jsonw_str(r->g, "dur_ms");
		ops_out_exact(r->span_ns / 1e6, r->row[0]);
		(void)jsonw_number(r->g, r->row[0]);
		break;
	}
}

void
ops_out_finish(struct ops_out *r)
{
	static const char *const titles[S_N] = {
		"per operator", "per category", "per card",
	};

	if (r->g != NULL) {
		yajl_gen_map_close(r->g);
		json_gen_flush(r->g, r->rq->out);
	}
	for (int s = 0; s < S_N; s++) {
		if (r->tables[s] == NULL)
			continue;
		fprintf(r->rq->out, "%s%s\n", s ? "\n" : "", titles[s]);
		table_write(r->tables[s], r->rq->out, 0);
	}
	if (r->counter != NULL) {
		fprintf(r->rq->out, "\nper operator, by the cards' charge "
		    "counters (the calls whose interval to the next is fitted)\n");
		table_write(r->counter, r->rq->out, 0);
	}
}

void
ops_out_free(struct ops_out *r)
{
	if (r->g != NULL)
		yajl_gen_free(r->g);
	for (int s = 0; s < S_N; s++)
		table_free(r->tables[s]);
	table_free(r->counter);
}
