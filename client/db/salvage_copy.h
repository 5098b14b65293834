/*
 * salvage_copy: the rows of a damaged database that can still be read
 * (keyscan.h), copied table by table into a database the store created
 * (storedb.h): the metric catalog first (storedb_metric, so each metric's
 * column exists in the new samples table), then the samples in key order
 * (storedb_append: values as the natural value, so the new catalog's
 * decimals apply), then every other table of the schema row for row
 * (storedb_copy_*), inside one transaction that salvage.c commits.
 */
#ifndef SPYREMON_SALVAGE_COPY_H
#define SPYREMON_SALVAGE_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "keyscan.h"
#include "storedb.h"

#define SALVAGE_MAX_TABLES	16

/* What one table gave. */
struct salvage_table {
	const char *name;
	bool present;		/* the damaged database has it */
	bool failed;		/* it could not be read at all (err) */
	uint64_t saved;		/* rows copied */
	uint64_t recovered;	/* of them, read from pages no tree reaches */
	uint64_t lost;		/* rows estimated lost, between rows read */
	size_t ranges;		/* key ranges that could not be read */
	bool lost_unknown;	/* a range at an end: no estimate */
	int64_t damaged_pages;	/* its pages SQLite cannot read (dbstat);
				   -1 if dbstat could not tell */
	size_t dropped_cols;	/* columns with nowhere to go */
	char err[256];
};

/* A window, as far as the report needs it. */
struct salvage_window {
	int64_t id, begin_ns, end_ns;	/* end 0: open */
	char *tag;
	bool samples_lost;	/* a lost range of samples overlaps it */
};

struct salvage {
	sqlite3 *src;		/* the damaged database, read-only */
	struct store *dst;	/* the new one */
	struct salvage_table t[SALVAGE_MAX_TABLES];	/* metrics, samples,
							   then the others */
	size_t nt;
	/* the samples' lost key ranges, for the windows */
	struct keyscan_lost *lost;
	size_t nlost;
	struct salvage_window *win;
	size_t nwin;
	char **dropped;		/* sample columns with no metric to go to */
	size_t ndropped;
	/* the catalog read: each source column, its new id and old decimals */
	struct salvage_metric {
		char *col;
		int id;
		int decimals;
	} *cat;
	size_t ncat;
	/* the samples' metric columns being copied, in select order */
	const struct salvage_metric **cols;
	size_t ncols;
	int *ids;		/* ncols, for store_sample.metric */
	struct store_value *values;	/* ncols */
	uint64_t appended;
	/* the select list of samples: each place's column in the table */
	int *sel_col;		/* -1: a fixed column the table lacks */
	int nsel, table_cols;
	/* the page walk (salvage_walk.h) */
	const char *walk_path;	/* the file to walk; NULL: none */
	char walk_note[160];	/* why not, or what stopped it */
	bool walked;
	uint64_t recovered;	/* samples rows found by it and copied */
	sqlite3 *mem;		/* what it found, in memory */
	sqlite3_stmt *merge;	/* those rows in key order */
	bool merge_row;		/* merge is on a row */
	sqlite3_value **mvals;	/* nsel, a merged row's values */
};

/*
 * Copy the metric catalog: every key read gets its metric in dst (outside
 * any transaction).  0, or -1 if dst failed.
 */
int salvage_metrics(struct salvage *s);

/* Copy the samples (inside the caller's transaction); 0 or -1. */
int salvage_samples(struct salvage *s);

/* Copy every other table of the schema; 0 or -1 (dst failed). */
int salvage_tables(struct salvage *s);

/* Mark the windows that a lost range of samples overlaps. */
void salvage_windows_mark(struct salvage *s);

void salvage_free(struct salvage *s);

/*
 * A stored sample value (the natural value times 10^decimals) as a
 * store_value: an integer as it is, with scale decimals; a REAL by its
 * shortest decimal text that reads back the same.  False for NaN or an
 * infinity.
 */
bool salvage_int_value(int64_t v, int decimals, struct store_value *out);
bool salvage_real_value(double v, int decimals, struct store_value *out);

#endif
