/*
 * ops: operators' energy as a table, csv or json (ops.h).
 *
 * Every row is made as text cells of one set of columns (section, name,
 * ...), which the csv writes whole, the json as the members of the row's
 * section, and the table as the columns that section shows.  csv and
 * json numbers are the shortest decimals that read back as the same
 * double (a card's energy is the exact decimal of energy.h); the table
 * rounds them for a person.  Operators come by energy, the greatest
 * first, then name.
 */
#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "client.h"
#include "format.h"
#include "json.h"
#include "opsenergy.h"
#include "ops.h"
#include "table.h"

#define NAME_WIDTH	40	/* longest operator name the table shows whole */
#define CELL		ENERGY_BUFLEN

enum section { S_OP, S_CATEGORY, S_CARD, S_N };

static const char *const section_names[S_N] = { "op", "category", "card" };

enum col {
	C_SECTION, C_NAME, C_CATEGORY, C_CARD, C_CALLS, C_DEVICE, C_TIME_PCT,
	C_ENERGY, C_ENERGY_PCT, C_NET, C_MEAN_W, C_ERROR, C_BASIS, C_FLOPS,
	C_TOPS, C_TOPS_W, C_SAMPLES, C_INTERVAL, C_COVERED, C_DEV_SPAN,
	C_IDLE_MS,
	C_IDLE_J, C_HOST_MS, C_HOST_J, C_IDLE_W, C_CLOSURE,
	C_COUNTER_J, C_COUNTER_CALLS, C_COUNTER_SCALE, C_COUNTER_RES_J,
	C_COUNTER_RES, C_COUNTER_IV, C_COUNTER_BACK, C_FLOOR_W, C_CEILING_W,
	C_N
};

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

/* One row's figures, before they are text. */
struct figures {
	const char *name;
	enum ops_category category;
	int	 card;			/* -1: all cards */
	uint64_t calls;
	double	 device_ns;
	double	 time_ns;		/* sampled time given to it */
	double	 energy_j, bound_j, net_j;
	bool	 has_net;
	uint64_t partial;
	bool	 unsampled;		/* device time but no sample */
	bool	 has_flops;
	double	 flops;
	bool	 has_counter;		/* some card's counter gives it */
	double	 counter_j;
	uint64_t counter_calls;
};

struct report {
	const struct ops_request_out *rq;
	const struct ops_result *res;
	double	 span_ns;
	double	 total_j;		/* all cards' span energy */
	yajl_gen g;
	struct table *tables[S_N];
	char	 row[C_N][CELL];
	/* for the notes */
	size_t	 nestimates, nunder, nunsampled;
	int64_t	 max_interval_ns;
	char	 no_idle[64];
	double	 worst_closure;
	struct table *counter;		/* the table of the counter's figures */
};

/* ---- numbers as text ---- */

/* v as the shortest decimal that reads back as v (csv, json). */
static void
exact_text(double v, char *buf)
{
	for (int p = 15; p <= 17; p++) {
		snprintf(buf, CELL, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* v for the table: four significant digits, or three past 0 for small values. */
static void
table_energy(double v, char *buf)
{
	if (fabs(v) >= 1 || v == 0)
		table_sig(buf, CELL, v);
	else
		snprintf(buf, CELL, "%.3g", v);
}

/* Cell c: v exactly, or for the table with decimals digits (-1: table_energy). */
static void
num(struct report *r, int c, double v, int decimals)
{
	if (r->rq->format != STEPS_TABLE)
		exact_text(v, r->row[c]);
	else if (decimals < 0 && fabs(v) < 1e-9 * r->total_j)
		table_energy(0, r->row[c]);	/* rounding's noise: 0 */
	else if (decimals < 0)
		table_energy(v, r->row[c]);
	else
		table_fixed(r->row[c], CELL, v, decimals);
}

static void
text(struct report *r, int c, const char *s)
{
	snprintf(r->row[c], CELL, "%s", s);
}

/* ---- the rows ---- */

static const char *
basis_of(const struct figures *f)
{
	if (f->unsampled)
		return "unsampled";
	return f->bound_j > 0 ? "estimate" : "exact";
}

/* The cells shared by operators, categories and cards. */
static void
common_cells(struct report *r, const struct figures *f, double cards)
{
	memset(r->row, 0, sizeof(r->row));
	if (f->name != NULL)
		text(r, C_NAME, f->name);
	snprintf(r->row[C_CALLS], CELL, "%" PRIu64, f->calls);
	num(r, C_DEVICE, f->device_ns / 1e6, 1);
	if (r->span_ns > 0 && cards > 0)
		num(r, C_TIME_PCT, 100 * f->device_ns / (r->span_ns * cards),
		    1);
	num(r, C_ENERGY, f->energy_j, -1);
	if (r->total_j > 0)
		num(r, C_ENERGY_PCT, 100 * f->energy_j / r->total_j, 1);
	if (f->has_net)
		num(r, C_NET, f->net_j, -1);
	if (f->time_ns > 0)
		num(r, C_MEAN_W, f->energy_j / (f->time_ns / 1e9), 1);
	num(r, C_ERROR, f->bound_j, -1);
	text(r, C_BASIS, basis_of(f));
}

/* Operator i's energy by the cards' counters, and its calls in it. */
static bool
op_counter(const struct ops_result *res, size_t i, double *j, uint64_t *calls)
{
	bool any = false;

	*j = 0;
	*calls = 0;
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];

		if (!c->has_counter || c->fit.intervals == 0)
			continue;
		any = true;
		*j += c->counter_j[i];
		*calls += c->counter_calls[i];
	}
	return any;
}

static void
op_cells(struct report *r, const struct figures *f)
{
	common_cells(r, f, (double)r->res->ncards);
	if (f->has_counter) {
		num(r, C_COUNTER_J, f->counter_j, -1);
		snprintf(r->row[C_COUNTER_CALLS], CELL, "%" PRIu64,
		    f->counter_calls);
	}
	text(r, C_SECTION, section_names[S_OP]);
	text(r, C_CATEGORY, ops_category_name(f->category));
	if (f->has_flops) {
		num(r, C_FLOPS, f->flops, 0);
		if (r->rq->format == STEPS_TABLE)
			snprintf(r->row[C_FLOPS], CELL, "%.3g", f->flops);
		if (f->device_ns > 0)
			num(r, C_TOPS, f->flops / f->device_ns / 1e3, 3);
		if (f->energy_j > 0)
			num(r, C_TOPS_W, f->flops / f->energy_j / 1e12, 3);
	}
}

/* ---- writers ---- */

static void
csv_row(struct report *r)
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
json_row(struct report *r, enum section s)
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

/* A name for the table: printable, cut at NAME_WIDTH. */
static void
table_name(const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", NAME_WIDTH, s);
	if (strlen(s) > NAME_WIDTH)
		snprintf(buf + NAME_WIDTH - 3, len - (NAME_WIDTH - 3), "...");
	for (size_t i = 0; buf[i] != '\0'; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
}

static void
table_add(struct report *r, enum section s)
{
	static const struct table_col *const heads[S_N] = {
		op_table, category_table, card_table,
	};
	static const size_t nheads[S_N] = {
		NELEM(op_table), NELEM(category_table), NELEM(card_table),
	};
	char name[NAME_WIDTH + 1];

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

static void
emit(struct report *r, enum section s)
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

/* ---- the figures ---- */

/* Operator i over every card. */
static void
op_figures(const struct report *r, size_t i, struct figures *f)
{
	const struct ops_result *res = r->res;

	memset(f, 0, sizeof(*f));
	f->name = res->names[i].name;
	f->category = res->names[i].category;
	f->card = -1;
	f->has_net = true;
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];
		const struct attrib_op *o = &c->a.ops[i];

		f->calls += o->calls;
		f->device_ns += (double)o->device_ns;
		f->time_ns += o->time_ns;
		f->energy_j += o->energy_j;
		f->bound_j += o->bound_j;
		f->partial += o->partial;
		f->has_flops = f->has_flops || o->has_flops;
		f->flops += o->flops;
		if (o->time_ns > 0 && !c->has_idle_w)
			f->has_net = false;
		else if (o->time_ns > 0)
			f->net_j += o->energy_j - c->idle_w * o->time_ns / 1e9;
	}
	f->unsampled = f->device_ns > 0 && f->time_ns == 0;
	f->has_counter = op_counter(res, i, &f->counter_j, &f->counter_calls);
}

static void
add_figures(struct figures *to, const struct figures *f)
{
	to->calls += f->calls;
	to->device_ns += f->device_ns;
	to->time_ns += f->time_ns;
	to->energy_j += f->energy_j;
	to->bound_j += f->bound_j;
	to->net_j += f->net_j;
	to->has_net = to->has_net && f->has_net;
}

/* Operators by energy (energy[], all cards), the greatest first, then by name. */
struct op_order {
	const struct ops_result *res;
	const double *energy;
};

static int
cmp_op(const void *a, const void *b, void *arg)
{
	const struct op_order *o = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (o->energy[x] != o->energy[y])
		return o->energy[x] < o->energy[y] ? 1 : -1;
	return strcmp(o->res->names[x].name, o->res->names[y].name);
}

static void
json_section(struct report *r, const char *key)
{
	if (r->g == NULL)
		return;
	jsonw_str(r->g, key);
	yajl_gen_array_open(r->g);
}

static void
json_section_end(struct report *r)
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
static void
counter_row(struct report *r, const struct figures *f)
{
	char name[NAME_WIDTH + 1], buf[CELL];

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
		table_fixed(buf, CELL, 100 * (f->counter_j - f->energy_j) /
		    f->energy_j, 1);
	else
		buf[0] = '\0';
	table_cell(r->counter, buf);
}

/* The operators' rows; their sums by category into cat[]. */
static void
op_rows(struct report *r, struct figures cat[OPS_NCAT])
{
	const struct ops_result *res = r->res;
	struct op_order how = { .res = res };
	double *energy;
	size_t *order;

	if ((order = calloc(res->nnames + 1, sizeof(*order))) == NULL ||
	    (energy = calloc(res->nnames + 1, sizeof(*energy))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < res->nnames; i++) {
		order[i] = i;
		for (size_t k = 0; k < res->ncards; k++)
			energy[i] += res->cards[k].a.ops[i].energy_j;
	}
	how.energy = energy;
	qsort_r(order, res->nnames, sizeof(*order), cmp_op, &how);
	json_section(r, "ops");
	for (size_t i = 0; i < res->nnames; i++) {
		struct figures f;

		op_figures(r, order[i], &f);
		/* only on cards without samples: the notes count those */
		if (f.calls == 0)
			continue;
		add_figures(&cat[f.category], &f);
		if (f.bound_j > 0)
			r->nestimates++;
		if (f.unsampled)
			r->nunsampled++;
		if (f.calls > 0 && f.device_ns / (double)f.calls <
		    (double)r->max_interval_ns)
			r->nunder++;
		op_cells(r, &f);
		emit(r, S_OP);
		if (f.has_counter && r->rq->format == STEPS_TABLE)
			counter_row(r, &f);
	}
	json_section_end(r);
	free(order);
	free(energy);
}

static void
category_rows(struct report *r, struct figures cat[OPS_NCAT])
{
	const struct ops_result *res = r->res;
	struct figures *idle = &cat[OPS_IDLE];

	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];

		idle->device_ns += (double)c->a.idle_ns;
		idle->time_ns += (double)c->a.idle_ns;
		idle->energy_j += c->a.idle_j;
		idle->bound_j += c->a.idle_bound_j;
		if (!c->has_idle_w)
			idle->has_net = false;
		else
			idle->net_j += c->a.idle_j - c->idle_w *
			    (double)c->a.idle_ns / 1e9;
	}
	json_section(r, "categories");
	for (int i = 0; i < OPS_NCAT; i++) {
		cat[i].name = ops_category_name((enum ops_category)i);
		common_cells(r, &cat[i], (double)res->ncards);
		text(r, C_SECTION, section_names[S_CATEGORY]);
		if (i == OPS_IDLE)
			r->row[C_CALLS][0] = '\0';
		emit(r, S_CATEGORY);
	}
	json_section_end(r);
}

static void
card_rows(struct report *r)
{
	const struct ops_result *res = r->res;

	json_section(r, "cards");
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];
		struct figures f = {
			.card = c->device, .calls = c->events,
			.device_ns = (double)c->a.active_ns,
			.time_ns = (double)c->a.covered_ns,
			.energy_j = c->has_energy ? strtod(c->energy_j, NULL) : 0,
			.has_net = c->has_idle_w,
		};
		char name[32];

		/* the card's energy is exact to the sampling: error 0 */
		if (c->has_idle_w)
			f.net_j = f.energy_j - c->idle_w *
			    (double)c->a.covered_ns / 1e9;
		else
			snprintf(r->no_idle + strlen(r->no_idle),
			    sizeof(r->no_idle) - strlen(r->no_idle), "%s%d",
			    r->no_idle[0] ? ", " : "", c->device);
		common_cells(r, &f, 1);
		text(r, C_SECTION, section_names[S_CARD]);
		snprintf(name, sizeof(name), "card %d", c->device);
		text(r, C_NAME, name);
		snprintf(r->row[C_CARD], CELL, "%d", c->device);
		if (r->rq->format != STEPS_TABLE && c->has_energy)
			text(r, C_ENERGY, c->energy_j);
		snprintf(r->row[C_SAMPLES], CELL, "%" PRIu64, c->a.samples);
		num(r, C_INTERVAL, (double)c->a.max_interval_ns / 1e6, 0);
		num(r, C_COVERED, (double)c->a.covered_ns / 1e6, 1);
		num(r, C_DEV_SPAN, (double)(c->a.last_ns - c->a.first_ns) / 1e6,
		    1);
		num(r, C_IDLE_MS, (double)c->a.idle_ns / 1e6, 1);
		num(r, C_IDLE_J, c->a.idle_j, -1);
		num(r, C_HOST_MS, (double)c->a.host_only_ns / 1e6, 1);
		num(r, C_HOST_J, c->a.host_only_j, -1);
		if (c->has_idle_w)
			num(r, C_IDLE_W, c->idle_w, 1);
		if (r->rq->format == STEPS_TABLE)
			snprintf(r->row[C_CLOSURE], CELL, "%.1e", c->closure);
		else
			exact_text(c->closure, r->row[C_CLOSURE]);
		if (c->closure > r->worst_closure)
			r->worst_closure = c->closure;
		if (c->a.samples > 0) {
			num(r, C_FLOOR_W, c->a.floor_w, 1);
			num(r, C_CEILING_W, c->a.ceiling_w, 1);
		}
		if (c->has_counter && c->fit.intervals > 0) {
			num(r, C_COUNTER_J, c->fit.j_per_count * c->fit.counts,
			    -1);
			exact_text(c->fit.j_per_count, r->row[C_COUNTER_SCALE]);
			exact_text(c->fit.residual_j, r->row[C_COUNTER_RES_J]);
			exact_text(c->fit.residual_rel, r->row[C_COUNTER_RES]);
		}
		if (c->has_counter) {
			snprintf(r->row[C_COUNTER_IV], CELL, "%zu",
			    c->fit.intervals);
			snprintf(r->row[C_COUNTER_BACK], CELL, "%zu",
			    c->fit.backwards);
		}
		emit(r, S_CARD);
	}
	json_section_end(r);
}

/* ---- notes and the frame ---- */

static void
notes(struct report *r)
{
	bool table = r->rq->format == STEPS_TABLE;
	FILE *fp = table ? r->rq->out : stderr;
	const char *lead = table ? "" : "spyremon: ";
	const struct ops_result *res = r->res;
	char iv[FMT_BUFLEN];

	if (table)
		putc('\n', fp);
	fprintf(fp, "%soperators and idle add up to each card's energy over "
	    "the span to %.1e of it, or closer\n", lead, r->worst_closure);
	if (r->nestimates > 0)
		fprintf(fp, "%s%zu operator%s estimates: %s calls take part of "
		    "a sample, whose power may differ from its mean; ERROR bounds "
		    "each, taking the card's power to lie between its floor and "
		    "its maximum (spyremon(1), Operators)\n", lead,
		    r->nestimates,
		    r->nestimates == 1 ? " is an" : "s are",
		    r->nestimates == 1 ? "its" : "their");
	if (r->nunder > 0) {
		fmt_span(r->max_interval_ns, iv, sizeof(iv));
		fprintf(fp, "%s%zu operator%s calls shorter than the sampling "
		    "interval (up to %s) on average: sample faster by lowering "
		    "source.window_interval in spyremond.yaml, with a window "
		    "open during the run\n", lead, r->nunder,
		    r->nunder == 1 ? " has" : "s have", iv);
	}
	if (r->nunsampled > 0)
		fprintf(fp, "%s%zu operator%s no sample under %s calls: "
		    "unsampled, no energy\n", lead, r->nunsampled,
		    r->nunsampled == 1 ? " has" : "s have",
		    r->nunsampled == 1 ? "its" : "their");
	if (res->unsampled > 0)
		fprintf(fp, "%s%" PRIu64 " device event%s on %s without "
		    "samples in the span (the first: card %" PRId64 "): left "
		    "out; the trace's device N is the database's card N\n",
		    lead, res->unsampled, res->unsampled == 1 ? "" : "s",
		    res->unsampled_cards == 1 ? "a card" : "cards",
		    res->unsampled_card);
	if (res->no_card > 0)
		fprintf(fp, "%s%" PRIu64 " device event%s with neither pid nor "
		    "args.device: left out\n", lead, res->no_card,
		    res->no_card == 1 ? "" : "s");
	if (res->unpaired > 0)
		fprintf(fp, "%s%" PRIu64 " begin or end device event%s without "
		    "%s other half: left out\n", lead, res->unpaired,
		    res->unpaired == 1 ? "" : "s",
		    res->unpaired == 1 ? "its" : "their");
	if (r->no_idle[0] != '\0')
		fprintf(fp, "%sno idle power learned for card%s %s (no "
		    "sample with busy 0 in windows.idle_lookback before the "
		    "span): no net energy\n", lead,
		    strchr(r->no_idle, ',') != NULL ? "s" : "", r->no_idle);
	for (size_t k = 0; k < res->ncards; k++) {
		const struct ops_card *c = &res->cards[k];

		if (c->has_counter && c->fit.intervals == 0)
			fprintf(fp, "%scard %d's charge counter: no interval "
			    "between calls to fit (%zu where it went backwards, "
			    "%zu that end before they begin)\n", lead, c->device,
			    c->fit.backwards, c->fit.untimed);
		else if (c->has_counter)
			fprintf(fp, "%scard %d's charge counter: %.6g J per "
			    "count, fitted through 0 to the samples over %zu "
			    "intervals between calls, residual %.3g J (%.1f %% "
			    "of their RMS energy); left out: %zu where it went "
			    "backwards, %zu that end before they begin\n", lead,
			    c->device, c->fit.j_per_count, c->fit.intervals,
			    c->fit.residual_j, 100 * c->fit.residual_rel,
			    c->fit.backwards, c->fit.untimed);
	}
	if (res->bad_values > 0)
		fprintf(stderr, "spyremon: %" PRIu64 " stored values out of "
		    "range were left out\n", res->bad_values);
}

static void
begin(struct report *r)
{
	FILE *fp = r->rq->out;

	switch (r->rq->format) {
	case STEPS_TABLE:
		break;
	case STEPS_CSV:
		if (r->rq->tagged && !r->rq->first)
			break;
		if (r->rq->tagged)
			fputs("host,rank,", fp);
		for (int i = 0; i < C_N; i++)
			fprintf(fp, "%s%s", i ? "," : "", columns[i].name);
		putc('\n', fp);
		break;
	case STEPS_JSON:
		if ((r->g = json_gen_new(true)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		yajl_gen_map_open(r->g);
		steps_json_trace(r->g, r->rq->t, r->rq->tagged, r->rq->host);
		jsonw_str(r->g, "start_ns");
		yajl_gen_integer(r->g, r->res->span_lo);
		jsonw_str(r->g, "dur_ms");
		exact_text(r->span_ns / 1e6, r->row[0]);
		(void)jsonw_number(r->g, r->row[0]);
		break;
	}
}

static void
finish(struct report *r)
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

int
ops_report(sqlite3 *db, const struct ops_request_out *rq)
{
	const struct trace_target *t = rq->t;
	struct ops_request in = {
		.path = t->path, .info = &t->info, .shift_ns = t->shift_ns,
		.span_lo = t->start_ns, .span_hi = t->end_ns,
		.clock = &t->epochs,
		.step_pattern = rq->step_pattern, .cat = rq->cat,
		.device_sql = rq->device_sql,
		.idle_lookback_ns = rq->idle_lookback_ns,
		.events = rq->events,
	};
	struct ops_result res;
	struct report r = {
		.rq = rq, .res = &res,
		.span_ns = (double)(t->end_ns - t->start_ns),
	};
	struct figures cat[OPS_NCAT] = { 0 };
	int rc;

	if ((rc = ops_load(db, &in, &res)) != CLIENT_EXIT_OK) {
		ops_result_free(&res);
		return rc;
	}
	for (size_t k = 0; k < res.ncards; k++) {
		if (res.cards[k].has_energy)
			r.total_j += strtod(res.cards[k].energy_j, NULL);
		if (res.cards[k].a.max_interval_ns > r.max_interval_ns)
			r.max_interval_ns = res.cards[k].a.max_interval_ns;
	}
	for (int i = 0; i < OPS_NCAT; i++)
		cat[i].has_net = true;
	begin(&r);
	op_rows(&r, cat);
	category_rows(&r, cat);
	card_rows(&r);
	finish(&r);
	notes(&r);
	if (r.g != NULL)
		yajl_gen_free(r.g);
	for (int s = 0; s < S_N; s++)
		table_free(r.tables[s]);
	table_free(r.counter);
	ops_result_free(&res);
	return CLIENT_EXIT_OK;
}
