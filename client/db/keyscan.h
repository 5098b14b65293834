/*
 * keyscan: every row of one table of a damaged database that can still be
 * read, in the order of an integer key, past the pages that cannot.
 *
 * A forward read (key >= from, ascending) hands over rows until SQLite
 * fails on a page.  Then keyscan_resume looks for the next key from which
 * a seek reads again: probes at growing distances past the last key read
 * (1, 2, 4, ... apart), then a bisection between the last probe that
 * failed and the first that read, so a damaged leaf costs about 2 log2 of
 * the key space in probes, not a scan.  The rows between the damage and
 * that key are then read backward (descending, from the key down) until
 * SQLite fails again: in a WITHOUT ROWID table the row that divides two
 * leaves sits on their parent and is read that way.  What is left between
 * the last row read forward and the first read backward is one lost range.
 *
 * The search itself (keyscan_resume) sees the table only through a probe,
 * so it is tested without SQLite.
 */
#ifndef SPYREMON_KEYSCAN_H
#define SPYREMON_KEYSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* What a seek to the first row with key >= from gave. */
enum keyscan_probe {
	KEYSCAN_ROW,	/* a row, read */
	KEYSCAN_END,	/* no row at or past from */
	KEYSCAN_ERROR,	/* SQLite failed on a page */
};

/* the probe: its result, and on KEYSCAN_ROW the key of the row in *key */
typedef enum keyscan_probe (*keyscan_probe_fn)(void *ctx, int64_t from,
    int64_t *key);

/*
 * The smallest key from >= lo found to probe without an error, probing
 * lo, lo+1, lo+3, lo+7, ... (saturating at INT64_MAX), then bisecting
 * between the last that failed and the first that did not.  *from, the
 * probe's result and its *key; KEYSCAN_ERROR if even INT64_MAX fails.
 * *probes counts the probes made.
 */
enum keyscan_probe keyscan_resume(keyscan_probe_fn probe, void *ctx,
    int64_t lo, int64_t *from, int64_t *key, unsigned *probes);

/* Keys [from, to] were not read: rows between prev and next are lost. */
struct keyscan_lost {
	int64_t from, to;	/* inclusive */
	bool have_prev, have_next;
	int64_t prev, next;	/* the rows read on either side */
};

/*
 * One row: vals[0..n) the columns of the select list, in key order.
 * 0, or -1 to stop the scan (the scan then fails).
 */
typedef int (*keyscan_row_fn)(void *ctx, sqlite3_value **vals, int n);

struct keyscan {
	/* in */
	sqlite3 *db;
	const char *table;
	const char *key;	/* an integer column, or "rowid" */
	const char *cols;	/* the select list; the key need not be in it */
	keyscan_row_fn row;
	void *ctx;
	/* out */
	uint64_t rows;		/* handed to row */
	bool have_keys;
	int64_t min_key, max_key;	/* of the rows read */
	struct keyscan_lost *lost;	/* the lost ranges, in key order */
	size_t nlost;
	unsigned probes;
	bool stopped;		/* row returned -1 */
	char err[256];		/* why it failed, when it returns -1 */
};

/*
 * Read every row of ks->table that can be read, in key order, handing
 * each to ks->row; fill the out fields.  0, or -1 with ks->err when a
 * statement cannot be prepared (the schema cannot be read) or row stopped
 * it.  Free with keyscan_free.
 */
int keyscan_run(struct keyscan *ks);

/*
 * The rows lost in ks's lost ranges, estimated from the spacing of the
 * rows read (their key span, less the gaps, over the intervals between
 * them): for each range, the rows that spacing puts between the rows read
 * on either side, less one.  Ranges at an end of the table are not
 * counted.
 */
uint64_t keyscan_lost_estimate(const struct keyscan *ks);

/*
 * The estimate for one gap from prev to next, given intervals between
 * rows read over span keys: rows that spacing puts in it, less one; 0 if
 * none.
 */
uint64_t keyscan_gap_rows(uint64_t intervals, double span, int64_t prev,
    int64_t next);

void keyscan_free(struct keyscan *ks);

#endif
