/*
 * storedb: the store for a caller that owns the connection: "spyremon
 * import", the test tools, the benchmarks and the unit tests.  Every call
 * runs on the caller's thread and writes at once (rows: at the next
 * storedb_flush); there is no writer thread, no queue and no completion
 * of windows.  The daemon uses store.h instead, whose writer thread calls
 * these same functions.  The types, and what is stored, are store.h's;
 * int results are 0, or -1 after logging the SQLite error.
 */
#ifndef SPYREMON_STOREDB_H
#define SPYREMON_STOREDB_H

#include <sqlite3.h>

#include "store.h"

/* store_open's database, on the caller's thread; close with storedb_close. */
int storedb_open(const char *path, size_t max_pending, struct store **out);
/* Flush, checkpoint and close; NULL is a no-op; rows not written are logged. */
void storedb_close(struct store *st);

/* store_metric: a new key flushes the rows and changes the schema at once. */
int storedb_metric(struct store *st, const char *key, const char *unit, int *id);
/*
 * The unit the catalog gives key, in buf (len bytes): 1, 0 if the catalog
 * has no such key, -1 after logging a read error.
 */
int storedb_metric_unit(struct store *st, const char *key, char *buf,
    size_t len);
/* store_append: buffer one row (copied), stamped strictly later per stream. */
void storedb_append(struct store *st, const struct store_sample *s);
/* Write every buffered row in one transaction; on failure they stay buffered. */
int storedb_flush(struct store *st);

/*
 * Hold one transaction (BEGIN IMMEDIATE, after flushing what is buffered)
 * until storedb_tx_commit or storedb_tx_rollback, so that the rows, device
 * map changes and import records written in between are stored all
 * together or not at all.  storedb_metric is refused inside it.  A failed
 * flush or commit rolls it back; rolling back discards the buffered rows
 * too, and inside it a row whose key is already stored fails the flush.
 */
int storedb_tx_begin(struct store *st);
int storedb_tx_commit(struct store *st);
void storedb_tx_rollback(struct store *st);

/* store_delete_after(_src): one DELETE at once, and the buffered rows. */
int storedb_delete_after(struct store *st, int device, int64_t after_ns);
int storedb_delete_after_src(struct store *st, int device, int src,
    int64_t after_ns);

/* store_device_map, store_card, store_smi_version, written at once. */
int storedb_device_map(struct store *st, int device, const char *metric_file,
    const char *bus_id, int64_t ts_ns);
int storedb_card(struct store *st, const struct card *c, int64_t ts_ns);
int storedb_smi_version(struct store *st, const char *version, int64_t ts_ns);

/* store_window_begin, each in its own transaction; *id is the row's id. */
int storedb_window_begin(struct store *st, const char *tag, uint32_t uid,
    int32_t pid, int64_t begin_ns, const char *meta_json,
    const struct clocksync *clock, int32_t until_pid, int64_t *id);
/* store_window_end in its own transaction; -1 if id is not open. */
int storedb_window_end(struct store *st, int64_t id, int64_t end_ns,
    enum store_ended_by by, const struct clocksync *clock);
/*
 * storedb_window_end, and meta_json (a JSON object of strings; NULL:
 * none) merged into the window's meta by json_patch, in one statement.
 */
int storedb_window_end_meta(struct store *st, int64_t id, int64_t end_ns,
    enum store_ended_by by, const struct clocksync *clock,
    const char *meta_json);
/* store_window_set_restarts in its own transaction. */
int storedb_window_set_run(struct store *st, int64_t id, int64_t run_ns);
int storedb_window_set_restarts(struct store *st, int64_t id,
    unsigned restarts);

/* store_window_add_note in its own transaction. */
int storedb_window_add_note(struct store *st, int64_t id, const char *note);
/* Window id as stored (free with store_windows_free(*out, 1)), or NULL. */
int storedb_window_get(struct store *st, int64_t id, struct store_window **out);
/* Every open window as stored, oldest first; free with store_windows_free. */
int storedb_windows_open(struct store *st, struct store_window **out,
    size_t *n);
/* The catalog's unreliable metrics as stored; free with store_strings_free. */
int storedb_unreliable_metrics(struct store *st, char ***keys, size_t *n);

/*
 * Compute window id's summary (summary.h) from the samples and store it,
 * replacing any earlier one, in one transaction; now_ns is when.  The
 * window must have ended.
 */
int storedb_window_summarize(struct store *st, int64_t id,
    int64_t idle_lookback_ns, int64_t now_ns);
/*
 * Summarize every window that ended at least settle_ns before now_ns and
 * has no summary yet, and mark it complete: its rows were all written as
 * they came.  0, or -1 if one failed (the others are still done).
 */
int storedb_windows_summarize_due(struct store *st, int64_t now_ns,
    int64_t settle_ns, int64_t idle_lookback_ns);

/*
 * Run one bounded step of retention at now_ns, spending at most about
 * budget_ns: delete samples older than max_age (except those inside
 * windows that ended less than windows_max_age ago), then the oldest
 * samples while the file exceeds max_size, then give freed pages back to
 * the filesystem (retention.c).  Returns 1 if more work remains (call
 * again soon), 0 when done, -1 on error.
 */
int storedb_retention_step(struct store *st, const struct store_retention *r,
    int64_t now_ns, uint64_t budget_ns);

/* A step of the host clock: its size (+ forward), the clock just after. */
struct store_clock_step {
	int64_t size_ns;
	int64_t at_ns;
};

/*
 * The stamp before which rows are older than age_ns at now_ns, each in
 * the clock that stamped it: now_ns - age_ns, moved back over the steps
 * steps[0..n) (oldest first) that came after it.  INT64_MIN if none is.
 */
int64_t storedb_age_cutoff(int64_t now_ns, uint64_t age_ns,
    const struct store_clock_step *steps, size_t n);

/* store_get_stats, with file_bytes read from the connection now. */
void storedb_get_stats(struct store *st, struct store_stats *out);
/* store_host as stored (catalog.c). */
int storedb_host(struct store *st, char *hostname, char *machine_id,
    size_t len);

/* ---- imported samples (store_import.c) ---- */

/* One run of a device's samples loaded by "spyremon import". */
struct store_import {
	const char *path;	/* the file, as given */
	const char *format;	/* "aiusmi" or "csv" */
	int device;
	int64_t first_ns;	/* the run's first and last ts_ns */
	int64_t last_ns;
	bool coarse;		/* whole-second local stamps, from aiu-smi's log */
	int64_t imported_ns;
};

/* Add imp to the imports table (inside a transaction if one is open). */
int storedb_import_record(struct store *st, const struct store_import *imp);

/* What a device's span [first_ns, last_ns] already holds. */
struct store_taken {
	int64_t samples;	/* rows of the device stamped inside the span */
	int64_t oldest_ns;	/* the oldest of them; 0 if none */
	bool imported;		/* an earlier import's run of the device overlaps */
	int64_t import_first_ns, import_last_ns;	/* that run */
};

/* Fill *out for device's span [first_ns, last_ns] (written rows only). */
int storedb_span_taken(struct store *st, int device, int64_t first_ns,
    int64_t last_ns, struct store_taken *out);

/* ---- rows copied as they are, for "spyremon db salvage" (store_copy.c) ---- */

struct store_copy;

/* The i-th table copied row by row (all but samples and metrics), or NULL. */
const char *storedb_copy_table(size_t i);

/*
 * Prepare to copy rows of table, one of storedb_copy_table's, whose source
 * columns are cols[0..ncols): INSERT OR REPLACE of the columns this schema
 * has; *dropped counts the others.  A column the source lacks gets what a
 * migration of its layout would give it.  0 with *out, or -1 (logged).
 */
int storedb_copy_begin(struct store *st, const char *table, size_t ncols,
    const char *const *cols, struct store_copy **out, size_t *dropped);
/* Store one row, vals[i] the value of cols[i]: 0, or -1 (logged). */
int storedb_copy_row(struct store_copy *c, sqlite3_value *const *vals,
    size_t nvals);
/*
 * Finish and free c (NULL: 0): windows copied from a layout without
 * complete_ns get it as a migration gives it.  0, or -1 (logged).
 */
int storedb_copy_end(struct store_copy *c);

#endif
