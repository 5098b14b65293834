/*
 * ops_out: the cells of the per-operator tables and their writers, for
 * ops.c alone (the command's contract is in ops.h): the columns of the
 * three sections (operators, categories, cards), numbers as text, a row
 * written as csv, as the members of its section in json or as the
 * columns its table shows, and the frame of each format.
 *
 * Every row is made as text cells of one set of columns (section, name,
 * ...), which the csv writes whole, the json as the members of the row's
 * section, and the table as the columns that section shows.  csv and
 * json numbers are the shortest decimals that read back as the same
 * double; the table rounds them for a person.
 */
#ifndef SPYREMON_OPS_OUT_H
#define SPYREMON_OPS_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>

#include "opsenergy.h"
#include "ops.h"
#include "table.h"

#define OPS_NAME_WIDTH	40	/* longest operator name the table shows whole */
#define OPS_CELL	ENERGY_BUFLEN

enum ops_section { S_OP, S_CATEGORY, S_CARD, S_N };

enum ops_col {
	C_SECTION, C_NAME, C_CATEGORY, C_CARD, C_CALLS, C_DEVICE, C_TIME_PCT,
	C_ENERGY, C_ENERGY_PCT, C_NET, C_MEAN_W, C_ERROR, C_BASIS, C_FLOPS,
	C_TOPS, C_TOPS_W, C_SAMPLES, C_INTERVAL, C_COVERED, C_DEV_SPAN,
	C_IDLE_MS,
	C_IDLE_J, C_HOST_MS, C_HOST_J, C_IDLE_W, C_CLOSURE,
	C_COUNTER_J, C_COUNTER_CALLS, C_COUNTER_SCALE, C_COUNTER_RES_J,
	C_COUNTER_RES, C_COUNTER_IV, C_COUNTER_BACK, C_FLOOR_W, C_CEILING_W,
	C_N
};

/* One row's figures, before they are text. */
struct ops_figures {
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

/* One ops_report's output: the row being made, the tables, the notes' counts. */
struct ops_out {
	const struct ops_request_out *rq;
	const struct ops_result *res;
	double	 span_ns;
	double	 total_j;		/* all cards' span energy */
	yajl_gen g;
	struct table *tables[S_N];
	char	 row[C_N][OPS_CELL];
	/* for the notes */
	size_t	 nestimates, nunder, nunsampled;
	int64_t	 max_interval_ns;
	char	 no_idle[64];
	double	 worst_closure;
	struct table *counter;		/* the table of the counter's figures */
};

/* v as the shortest decimal that reads back as v (csv, json), into buf[OPS_CELL]. */
void ops_out_exact(double v, char *buf);
/*
 * Cell c of the row: v exactly, or for the table with decimals digits
 * (-1: an energy, four significant digits, 0 where it is rounding's
 * noise); text: s as it is.
 */
void ops_out_num(struct ops_out *o, int c, double v, int decimals);
void ops_out_text(struct ops_out *o, int c, const char *s);

/* The row, as section s's, in the request's format. */
void ops_out_emit(struct ops_out *o, enum ops_section s);
/* Operator f beside its energy by the counter, in the table of its own. */
void ops_out_counter_row(struct ops_out *o, const struct ops_figures *f);

/* json's array of one section, by key, and its end (nothing otherwise). */
void ops_out_section(struct ops_out *o, const char *key);
void ops_out_section_end(struct ops_out *o);

/*
 * The frame: begin writes csv's header or opens json's object with the
 * trace and the span; finish closes the object, or writes the tables
 * with their titles.
 */
void ops_out_begin(struct ops_out *o);
void ops_out_finish(struct ops_out *o);
/* Free what o holds (the json generator, the tables). */
void ops_out_free(struct ops_out *o);

#endif
