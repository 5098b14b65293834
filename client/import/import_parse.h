/*
 * import_parse: the parsing behind "spyremon import" (import_parse.c), apart
 * from the command (import.c) so that it is unit-tested without a
 * database.
 *
 * Two inputs are read.  aiu-smi's own CSV log ("aiu-smi -s -f FILE", or
 * spyremon's aiusmi export), parsed by csvparse (common/), stamps rows
 * with a whole-second local Date and Time.  spyremon's csv export carries
 * epoch_ns and every column the database needs; its cells are split here
 * and its numbers read by csv_parse_value.
 *
 * Functions that can fail return 0, or -1 with a message for the user in
 * err (err_len bytes), which names the column where one applies.
 */
#ifndef SPYREMON_IMPORT_H
#define SPYREMON_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "csvparse.h"

#define IMPORT_BUSID_MAX	64	/* a bus ID cell, including the NUL */
#define IMPORT_ERR_MAX		256
/* The longest interval a sample may cover, as DB_MAX_INTERVAL_NS (db.h). */
#define IMPORT_INTERVAL_MAX_MS	60000

enum import_format {
	IMPORT_AIUSMI,		/* ID,Date (YYYYMMDD),Time (HH:MM:SS),<key unit>... */
	IMPORT_CSV,		/* [label,...]epoch_ns,time_utc,device,bus_id,interval_ms,<key>...[,coarse] */
};

/* spyremon's csv header. */
struct import_csv_header {
	int nlabels;		/* leading cells before epoch_ns (window, ...), ignored */
	int nkeys;		/* metric columns, after interval_ms */
	bool coarse;		/* a trailing coarse column */
	int ncells;		/* cells in every row */
	char keys[CSV_COLS_MAX][CSV_KEY_MAX];
};

/* One row of spyremon's csv. */
struct import_csv_row {
	int64_t ts_ns;
	int device;
	char bus_id[IMPORT_BUSID_MAX];
	uint32_t interval_ms;
	bool coarse;
	struct csv_value values[CSV_COLS_MAX];	/* by key; absent: empty cell */
};

/*
 * The format that header line (the first line that is neither blank nor a
 * "#" comment) announces; -1 if neither.
 */
int import_detect(const char *line, size_t len, enum import_format *out,
    char *err, size_t err_len);

/* Parse spyremon's csv header into *h. */
int import_csv_header(const char *line, size_t len, struct import_csv_header *h,
    char *err, size_t err_len);

/*
 * Parse a row of spyremon's csv under h into *row.  time_utc must name the
 * same instant as epoch_ns, device be 0..9999, interval_ms be at most
 * IMPORT_INTERVAL_MAX_MS, coarse be 0 or 1; an empty value cell is a missing value.  Quoted cells
 * are refused (the export quotes only cells that hold a comma, a quote or
 * a line break, which no key or bus ID does).
 */
int import_csv_row(const struct import_csv_header *h, const char *line,
    size_t len, struct import_csv_row *row, char *err, size_t err_len);

/*
 * Make zone the local time zone of this process (setenv TZ, tzset).  zone
 * is an Olson name, such as Europe/Berlin, that names a file under
 * $TZDIR or /usr/share/zoneinfo, or a POSIX TZ string such as UTC0 or
 * CET-1CEST,M3.5.0,M10.5.0/3; NULL keeps TZ as the environment has it,
 * checking it the same way if it is set.  -1 if the zone is not one.
 */
int import_set_zone(const char *zone, char *err, size_t err_len);

/*
 * The Unix time of local date (YYYYMMDD) and time of day hms (seconds
 * since midnight) in the zone in force, by mktime with tm_isdst -1.  Of
 * the two moments that an hour repeated at the end of daylight saving
 * time gives, the earlier one after after_s is taken (else the earlier).
 * -1 if no such local time exists (the hour skipped when it begins).
 */
int import_local_time(int date, int hms, int64_t after_s, int64_t *out_s);

/*
 * The interval of a log from its stamps: the most common positive
 * difference, in whole seconds, between consecutive stamps of one device
 * (ties go to the shorter).  ts_s[i] and device[i] describe the n rows
 * sorted by device, then time.  0 if no device has two rows, -1 if out
 * of memory.
 */
int64_t import_infer_interval(const int64_t *ts_s, const int *device,
    size_t n);

/* A device ID and the bus ID --device-map gives it. */
struct import_devmap {
	int device;
	char bus_id[IMPORT_BUSID_MAX];
};

/*
 * Parse --device-map's "ID=BUSID,..." into *out (malloc'd, *n entries);
 * a device may be named once, and at most 256 devices.
 */
int import_devmap_parse(const char *arg, struct import_devmap **out,
    size_t *n, char *err, size_t err_len);

/*
 * The bus ID in the name of aiu-smi's metric file, as in
 * /tmp/metrics.0000:13:00.0; -1 if the name is not metrics.BUSID.
 */
int import_bus_from_path(const char *path, char *buf, size_t len);

#endif
