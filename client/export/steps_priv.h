/*
 * steps_priv: what the two halves of the per-step table share: steps.c
 * reads and sums the samples, steps_out.c writes the rows.
 */
#ifndef SPYREMON_STEPS_PRIV_H
#define SPYREMON_STEPS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>
#include <yajl/yajl_gen.h>

#include "db.h"
#include "energy.h"
#include "steps.h"

#define MEAN_DIGITS	9	/* after the point, of a mean in csv and json */
#define NAME_WIDTH	40	/* longest step name the table shows whole */

/* The metrics of the table, by aiu-smi key; absent ones give empty cells. */
enum metric { M_PWR, M_BUSY, M_RDMEM, M_WRMEM, M_RXPCI, M_TXPCI, M_N };
extern const char *const steps_metric_keys[M_N];	/* "pwr", ... */

/* The columns, in output order (steps_out.c names them). */
enum col {
	C_STEP, C_DEVICE, C_START, C_START_NS, C_DUR, C_SAMPLES, C_INTERVAL,
	C_COVERED, C_PWR_MEAN, C_PWR_MAX, C_ENERGY, C_BUSY, C_RD, C_WR, C_RX,
	C_TX, C_UNDER, C_N
};

/* One card's sums over one span. */
struct cell {
	uint64_t samples;		/* rows overlapping the span */
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
	/* the table, kept whole: rows of C_N NUL-separated cells */
	char	**table;
	size_t	 nrows, cap;
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

/*
 * Make row *w of step (NULL-free text) for card index d, from its sums c
 * (d -1 and c NULL: a row without a card); the span is [lo, lo + dur).
 */
void steps_make_row(struct report *r, const char *step, int d,
    const struct cell *c, int64_t lo, int64_t dur, struct row *w);

/* Start the output: the csv header, or the json document. */
void steps_begin(struct report *r);

/* Write row w (csv, json) or keep it (table). */
void steps_emit(struct report *r, const struct row *w);

/* Write the kept table, its columns aligned. */
void steps_table_write(struct report *r);

/* The notes: footnotes of the table, else lines on stderr. */
void steps_notes(struct report *r);

#endif
