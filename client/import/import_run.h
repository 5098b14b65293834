/*
 * import_run: the reading behind "spyremon import" (import_run.c), shared
 * with the command (import.c), which opens the store and writes.
 *
 * The first pass parses and checks every line, keeping each row's key;
 * import_run_check (import_check.c) then sorts the keys, refuses repeated
 * and out-of-order rows, infers the interval and sums up the spans.  The
 * second pass parses the same lines again and appends the rows to r->st, inside the caller's
 * transaction.
 *
 * Functions returning int give CLIENT_EXIT_OK, or another exit status
 * after printing every error as "spyremon: FILE:LINE: message".
 */
#ifndef SPYREMON_IMPORT_RUN_H
#define SPYREMON_IMPORT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "csvparse.h"
#include "import_parse.h"
#include "storedb.h"

#define IMPORT_FLUSH_ROWS	4096	/* rows buffered between flushes */
#define IMPORT_MAX_ERRORS	20	/* bad lines shown; the rest are counted */

struct import_opts {
	const char *file;
	const char *tz;			/* --tz; NULL: TZ or the local zone */
	uint32_t interval_ms;		/* --interval; 0: inferred */
	struct import_devmap *map;	/* --device-map */
	size_t nmap;
};

/* A data row as the first pass saw it. */
struct import_key {
	int64_t ts_ns;
	size_t line;
	int device;
	uint32_t interval_ms;
	bool coarse;
	bool repeat;		/* the same sample again (several spans): skipped */
};

struct import_metric {
	char key[CSV_KEY_MAX];
	char unit[CSV_UNIT_MAX];	/* as the header states it; "" if none */
	size_t	 line;			/* of the header that first named it */
	int id;			/* storedb_metric's */
};

/* A device's mapping to a metric file and bus ID, as read so far. */
struct import_dev {
	int device;
	bool mapped;		/* by #MetricFiles */
	char file[CSV_PATH_MAX];
	char bus[IMPORT_BUSID_MAX];
	bool recorded;		/* pass 2: rec_* went to device_map */
	char rec_file[CSV_PATH_MAX];
	char rec_bus[IMPORT_BUSID_MAX];
	bool unmapped;		/* pass 1: a row had no bus ID to go by */
	bool have_last;		/* pass 1: last_s is the previous row's */
	int64_t last_s;
};

/* A device's rows, or one run of them that share coarse. */
struct import_span {
	int device;
	int64_t first_ns, last_ns;
	bool coarse;
};

struct import_run {
	const struct import_opts *o;
	const char *dbpath;		/* set by the caller */
	char *abspath;			/* the file's real path, for imports */
	FILE *fp;
	enum import_format format;
	bool have_format;
	int pass;
	size_t lineno, nerrors;
	bool stop;			/* a fault that ends the pass at once */
	int status;			/* the exit status such a fault gives */

	struct csv_lines lb;
	struct csv_parser parser;	/* aiu-smi's CSV */
	struct csv_result res;
	struct import_csv_header ch;	/* spyremon's csv */
	bool have_csv_header;
	struct import_csv_row crow;
	int col_metric[CSV_COLS_MAX];	/* column -> metrics index, -1: none */

	struct import_metric *metrics;
	size_t nmetrics;
	struct import_key *keys;	/* in file order */
	size_t nkeys, capkeys;
	size_t *order;			/* keys by device, ts_ns, line */
	size_t next_key;		/* pass 2 */
	size_t pending;			/* pass 2: appended since a flush */
	struct import_dev *devs;
	size_t ndevs;
	struct store *st;		/* set by the caller for pass 2 */
	int ids[CSV_COLS_MAX];
	struct store_value vals[CSV_COLS_MAX];

	/* import_run_check's results */
	struct import_span *spans;	/* one per device, by device */
	size_t nspans;
	struct import_span *runs;	/* by device, then time */
	size_t nruns;
	size_t nrows, ncoarse, nrepeats;
	int64_t first_ns, last_ns;
	uint32_t interval_ms;		/* aiu-smi's: given or inferred */
	bool interval_inferred;
	const char *zone;		/* for the summary */
	int *unmapped;			/* aiu-smi devices without a bus ID */
	size_t nunmapped;
};

void import_run_init(struct import_run *r, const struct import_opts *o);

/* Open o->file; CLIENT_EXIT_FAILED if it cannot be read. */
int import_run_open(struct import_run *r);

/* Read the file from its start: pass 1 checks, pass 2 appends to r->st. */
int import_run_pass(struct import_run *r, int pass);

/*
 * Report a bad line (in the second pass: say the file changed, and stop);
 * import_run_errors then sums them up.
 */
void import_run_error(struct import_run *r, size_t line, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));
int import_run_errors(struct import_run *r);

/* After pass 1: sort, refuse repeats and disorder, infer, sum up. */
int import_run_check(struct import_run *r);

/* The line of device's row stamped ts_ns; 0 if the file has none. */
size_t import_run_line_of(const struct import_run *r, int device,
    int64_t ts_ns);

/* Close the file and free everything but r->st. */
void import_run_free(struct import_run *r);

#endif
