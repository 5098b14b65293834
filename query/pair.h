/*
 * pair: the samples of a span as one row per card per tick, made of the
 * rows of a card's two streams (aiu-smi's and its metric file's) that
 * describe the same moment (spyremon-schema(5), "PAIRED SAMPLES").
 *
 * bestsrc.h says which stream each metric of a card comes from; this says
 * which rows of the two streams are one sample.  For a card whose row
 * source over the span is its metric file (bestsrc.h), each aiu-smi row
 * joins the card's newest file row stamped at or before it (the file's
 * value in force at the aiu-smi row's time), if that file row is less
 * than two of its own intervals older and no earlier aiu-smi row joined
 * it already.
 * The sample so made is stamped with the file row's stamp and interval;
 * each value comes from whichever of the two rows has it (bestsrc leaves
 * each metric to one stream, so never both).  A row that joins none, or
 * that none joins, is a sample of its own, as is every row of a card on
 * aiu-smi alone.  So a card read at the same rate from both streams has
 * one sample per interval, a card read finer from its file than from
 * aiu-smi has one per file row (the aiu-smi values on those the aiu-smi
 * rows joined), and a sample's power is the file's at its stamp.
 *
 * The samples come out in the order of their stamps, then device, as
 * db_select_samples(..., ordered) gives the rows; a row is held only until
 * no later row can join it (its stamp plus two intervals), so memory does
 * not grow with the span.
 */
#ifndef SPYREMON_PAIR_H
#define SPYREMON_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* Where a value of a sample came from. */
enum pair_from {
	PAIR_NONE = 0,		/* no stream had it: missing */
	PAIR_SMI = 1,		/* the aiu-smi row */
	PAIR_FILE = 2,		/* the metric-file row */
};

/* One sample: one card at one time. */
struct pair_sample {
	int64_t ts_ns;		/* the file row's stamp where it has one */
	int device;
	int64_t interval_ms;	/* of that same row */
	int64_t smi_ns;		/* the aiu-smi row's stamp, 0 if none */
	int64_t file_ns;	/* the file row's stamp, 0 if none */
	bool row_source;	/* it holds a row of its card's row source */
	const double *v;	/* ncols values; v[i] meaningful if from[i] */
	const unsigned char *from;	/* ncols enum pair_from */
};

struct pair_reader;

/*
 * Where to read a span beginning at lo_ns from (db_bind_read_from) so
 * that an aiu-smi row in it meets the file row it joins, stamped before
 * the span, and the rows that joined that one first: lo_ns less two of
 * the longest interval among the file rows stamped in the two longest
 * intervals (DB_MAX_INTERVAL_NS) before it.  lo_ns where there are none,
 * or they cannot be read (a damaged page: the span's rows are read as
 * they are).  One range of the file rows' index.
 */
int64_t pair_read_from(sqlite3 *db, int64_t lo_ns);

/*
 * A reader of the rows of s, a statement of db_select_samples over ncols
 * columns, ordered, bound and not yet stepped (the reader steps it; it
 * stays the caller's).  by_source: every row is a sample of its own, as
 * stored (the rows' own stamps; from[] says the row's stream).  A sample
 * stamped at or before after_ns (INT64_MIN: none) is not given out, nor
 * counted: its rows were read (pair_read_from) only to be joined.  Dies
 * when out of memory.
 */
struct pair_reader *pair_open(sqlite3_stmt *s, size_t ncols, bool by_source,
    int64_t after_ns);

/*
 * The next sample into *out, valid until the next call: 1; 0 at the
 * end; -1 when a step of the statement failed (sqlite3_errmsg says why).
 */
int pair_next(struct pair_reader *p, struct pair_sample *out);

/*
 * The rows read so far that came from metric files (by_source or not),
 * those stamped at or before after_ns left out.
 */
int64_t pair_file_rows(const struct pair_reader *p);

void pair_close(struct pair_reader *p);

#endif
