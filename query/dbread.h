/*
 * dbread: what every reader of spyremond's database reads from a
 * connection it has opened (spyremon-schema(5)): the metric catalog, the
 * device map and the cards, the windows and their state, the runs of
 * imported samples, the samples themselves through the one rule of
 * bestsrc.h, the host, aiu-smi's versions and the daemon's counters.
 * spyremon opens the database read-only (client/db.h) and reads
 * everything through these; the store reads its catalog and windows
 * through db_catalog_read and db_windows_read, which print nothing.
 *
 * Unless a function's contract says otherwise (the *_read ones, and those
 * that print nothing), functions returning int give 0, or DB_READ_FAILED
 * after printing the error on stderr as "cannot read <what>: <why>";
 * DB_READ_FAILED is the exit status spyremon(1) gives for a database it
 * cannot read, so a command returns it as it is.  They end the program
 * (status 1) when out of memory.
 */
#ifndef SPYREMON_DBREAD_H
#define SPYREMON_DBREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "clocksync.h"
#include "daemonid.h"
#include "proto.h"
#include "timeparse.h"

/* The status of a read that failed: spyremon's CLIENT_EXIT_DATABASE. */
#define DB_READ_FAILED		4

/*
 * The longest interval a sample can cover: source.interval and
 * source.window_interval are at most 60 s (spyremond.yaml(5)).  A sample
 * stamped t covers [t - interval, t], so the samples that overlap a span
 * ending at e are stamped before e + DB_MAX_INTERVAL_NS, which bounds the
 * primary-key range a query reads.
 */
#define DB_MAX_INTERVAL_NS	(60 * (int64_t)NSEC_PER_SEC)

/*
 * The rule, over samples, for "covers part of (?1, ?2)": the sample's
 * interval (ts_ns - interval_ms, ts_ns) overlaps the span (?1, ?2), with
 * ?3 = ?2 + DB_MAX_INTERVAL_NS.  The first two terms are a range of the
 * primary key.
 */
#define DB_OVERLAPS_SQL \
	"ts_ns > ?1 AND ts_ns < ?3 AND ts_ns - interval_ms * 1000000 < ?2"

struct db_metric {
	int64_t id;		/* its row in the catalog */
	char *key;		/* aiu-smi's key */
	char *unit;		/* "" if none */
	char *col;		/* its column in samples */
	int decimals;		/* stored = natural * 10^decimals; 0..18 */
	bool reliable;
};

struct db_catalog {
	struct db_metric *m;	/* in catalog order (by id) */
	size_t n;
};

struct db_devmap {
	struct db_devmap_entry *e;	/* by device, then since_ns */
	size_t n;
};

struct db_window {
	int64_t id;
	char *tag;
	uint32_t uid;
	int32_t pid;
	int64_t begin_ns;
	int64_t end_ns;		/* meaningful only if !open */
	bool open;
	bool auto_closed;
	char *meta;		/* the JSON object text, "{}" if none */
	int32_t until_pid;	/* ends when this process exits; 0 if none
				   (or the schema predates it, before 4) */
	char ended_by[16];	/* "mark", "max_open", "exit", "daemon_gone";
				   "" while open or before schema 4 */
	char *end_note;		/* why it ended so, "" if nothing says
				   (schema 10: daemon_gone's reason) */
	int64_t run_ns;		/* how long it ran by the monotonic clock of
				   the daemon that began and ended it; -1:
				   not known (schema 11) */
	int64_t begin_epoch;	/* the host clock's epochs its begin and end */
	int64_t end_epoch;	/* were stamped in; -1: not recorded (before
				   schema 12; end_epoch while open) */
};

/* Which windows db_windows returns; zero means no condition. */
struct db_window_filter {
	bool by_id;
	int64_t id;
	const char *tag;	/* NULL: any */
	bool have_since;
	int64_t since_ns;	/* open at some time at or after since_ns */
	bool newest_first;	/* else oldest first (by begin_ns, then id) */
	bool open_only;		/* only the windows not ended */
};

/*
 * The metric catalog, in *cat (free with db_catalog_free); a metric
 * stored with decimals outside 0..18 is refused.
 */
int db_catalog_load(sqlite3 *db, struct db_catalog *cat);

/*
 * The same, printing nothing and checking no decimals: 0; -1 when the
 * select cannot be prepared and -3 when a row cannot be read
 * (sqlite3_errmsg says why); -2 when out of memory.  *cat is empty after
 * a failure.  The store's catalog is read through this.
 */
int db_catalog_read(sqlite3 *db, struct db_catalog *cat);
const struct db_metric *db_catalog_find(const struct db_catalog *cat,
    const char *key);
void db_catalog_free(struct db_catalog *cat);

int db_devmap_load(sqlite3 *db, struct db_devmap *map);
/* The bus ID mapped to device at ts_ns, "" if none was. */
const char *db_devmap_bus_id(const struct db_devmap *map, int device,
    int64_t ts_ns);
/* The metric file aiu-smi named for device at ts_ns, "" if none. */
const char *db_devmap_file(const struct db_devmap *map, int device,
    int64_t ts_ns);
void db_devmap_free(struct db_devmap *map);

/* A card of the inventory (the cards table), with its devices. */
struct db_card {
	char *bus_id;
	int numa_node;		/* -1 if not known */
	char *link_speed;	/* "" if not known */
	int link_width;		/* 0 if not known */
	char *devices;		/* "0,1": aiu-smi's IDs mapped to it; NULL if none */
};

/*
 * The cards by bus ID, as many as could be read, in *out (free with
 * db_cards_free); -1, printing nothing, if the inventory cannot be read.
 */
int db_cards(sqlite3 *db, struct db_card **out, size_t *n);
void db_cards_free(struct db_card *c, size_t n);

/* The PCI function ("pf", "vf") of the card at bus_id in the inventory; "" if absent. */
const char *db_card_function(sqlite3 *db, const char *bus_id);

/*
 * Make f select the windows a command-line name means: the window with
 * that id when name is all digits, else those tagged name (f keeps the
 * pointer).
 */
void db_window_filter_name(struct db_window_filter *f, const char *name);

/* The windows f selects, in *out (free with db_windows_free). */
int db_windows(sqlite3 *db, const struct db_window_filter *f,
    struct db_window **out, size_t *n);
void db_windows_free(struct db_window *w, size_t n);
/* Free the strings of one window of such an array, leaving it empty. */
void db_window_clear(struct db_window *w);

/*
 * The same, printing nothing: 0; -1 when the select cannot be prepared
 * and -3 when a row cannot be read (sqlite3_errmsg says why); -2 when out
 * of memory.  *out is NULL and *n 0 after a failure.  The store reads its
 * windows through this.
 */
int db_windows_read(sqlite3 *db, const struct db_window_filter *f,
    struct db_window **out, size_t *n);

/*
 * The newest ended window begun before before_ns whose metadata says
 * workload is workload and baseline is "1", "true" or "yes" (a run
 * recorded as its workload's baseline): 0 with its id in *id, or 0 if
 * there is none (ids start at 1); else db_error's code.
 */
int db_window_baseline(sqlite3 *db, const char *workload, int64_t before_ns,
    int64_t *id);

/* What schema version 4 added to a window (spyremon-schema(5)). */
struct db_window_facts {
	bool recorded;		/* false before schema 4: the rest is zero */
	char ended_by[16];	/* "mark", "max_open", "exit", "" */
	int32_t until_pid;	/* 0 if none */
	struct clocksync clock_begin, clock_end;	/* known false if not recorded */
	bool restarts_known;
	int64_t restarts;
};

/*
 * The facts of window id in *f; a window that is not there is an error
 * ("the window").
 */
int db_window_facts(sqlite3 *db, int64_t id, struct db_window_facts *f);

/* An ended window's completeness as db's snapshot has it. */
struct db_window_state {
	bool found, ended, complete;
	bool known;		/* the schema records completeness (9 on) */
	char tag[PROTO_TAG_MAX + 1];
	int64_t begin_ns, end_ns;
	char incomplete[256];	/* why it never will be, "" if not said */
};

/*
 * Window id's state in *out; before schema 9, which records no
 * completeness, it is found, ended and complete, and known false.
 */
int db_window_state(sqlite3 *db, int64_t id, struct db_window_state *out);

/*
 * Up to max ids, newest first, of the windows ended but neither complete
 * nor said to be incomplete, in ids; how many.  None before schema 9.
 */
size_t db_windows_pending(sqlite3 *db, int64_t *ids, size_t max);

/*
 * True if some card whose samples reach within a few seconds of t has no
 * sample stamped at or after t: samples covering t may still be queued.
 */
bool db_span_open(sqlite3 *db, int64_t t);

/*
 * Runs of samples that "spyremon import" loaded from an aiu-smi log, whose
 * stamps are aiu-smi's whole-second local times (the imports table rows
 * with coarse 1).
 */
struct db_coarse_range {
	int device;
	int64_t first_ns, last_ns;	/* the run's first and last ts_ns */
};

struct db_coarse {
	struct db_coarse_range *r;	/* by device, then first_ns; disjoint */
	size_t n;
};

/*
 * Add to *c (zeroed, or filled by earlier calls) the coarse runs that
 * overlap [lo_ns, hi_ns], merging runs that overlap; a database of schema
 * version 2 has none.  Free with db_coarse_free.
 */
int db_coarse_load(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    struct db_coarse *c);

/* True if device's sample stamped ts_ns lies in one of c's runs. */
bool db_coarse_has(const struct db_coarse *c, int device, int64_t ts_ns);

/* (device, ts_ns): the order samples are keyed by. */
struct db_key {
	int device;
	int64_t ts_ns;
};

/*
 * In n entries sorted by key, entry i's key being key_at(ctx, i): the index
 * of the first entry whose key comes after k (at or after k if inclusive);
 * n if none does.
 */
size_t db_key_search(size_t n, struct db_key (*key_at)(const void *ctx,
    size_t i), const void *ctx, struct db_key k, bool inclusive);

void db_coarse_free(struct db_coarse *c);

/*
 * Per card with samples of epoch of the host clock (-1: any) overlapping
 * (lo_ns, hi_ns), with device_sql appended, its oldest stamp among them,
 * by device, in *out (free it).
 */
int db_first_by_device(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    int64_t epoch, const char *device_sql, struct db_key **out, size_t *n);

/*
 * Per card with samples stamped in (begin_ns, end_ns + DB_MAX_INTERVAL_NS),
 * its newest stamp, by device, in *out (free it).  -1, printing nothing
 * and with nothing in *out, if the select cannot be prepared or a row
 * cannot be read (a damaged page): no proof that there are none.
 */
int db_newest_by_device(sqlite3 *db, int64_t begin_ns, int64_t end_ns,
    struct db_key **out, size_t *n);

/*
 * ---- a window's samples across steps of the host clock (epochs.c; the
 * epoch's condition on a statement, db_epoch_sql and db_bind_epoch, is
 * samples_read.c's) ----
 */

/*
 * A file row may be stamped by its writer this long before the daemon
 * saw the step that began its epoch (it read the file after the step).
 */
#define DB_EPOCH_REACH_NS	((int64_t)NSEC_PER_SEC)

/*
 * A stretch (lo_ns, hi_ns) of a window within one epoch of the host
 * clock: its samples are those of epoch (-1: any) that overlap (from_ns,
 * hi_ns) by DB_OVERLAPS_SQL; from_ns is lo_ns, or DB_EPOCH_REACH_NS
 * before it for a piece that a step began.
 */
struct db_piece {
	int64_t lo_ns, hi_ns;
	int64_t from_ns;
	int64_t epoch;
};

/*
 * The pieces of window w read up to end_ns (its end, or the end a reader
 * gives an open one), in *out (free it): one per epoch from its
 * begin_epoch to its end_epoch (an open one's: the newest recorded), the
 * first from its begin to the old clock's time at the step that ended
 * that epoch, the last from the step that began it to end_ns, those
 * between from step to step; where a step is not recorded, unbounded
 * there.  A window whose epochs are not recorded (before schema 12) is
 * one piece, (begin, end_ns) in any epoch.
 */
int db_window_pieces(sqlite3 *db, const struct db_window *w, int64_t end_ns,
    struct db_piece **out, size_t *n);

/*
 * The same for window id as read from begin_ns to end_ns, printing
 * nothing: a window not there, or begun at another time, is one piece
 * (begin_ns, end_ns) of any epoch.  0, or -1 with the error in db.
 */
int db_window_pieces_of(sqlite3 *db, int64_t id, int64_t begin_ns,
    int64_t end_ns, struct db_piece **out, size_t *n);

/*
 * ---- a profiler trace's time across steps of the host clock (epochs.c)
 * ----
 *
 * A trace's stamps follow the host clock as it was when the profiler
 * started (torch.profiler converts its own clock to Unix time by a
 * conversion measured once, at the start) and go on at the rate of
 * time across any step after it.  A sample of epoch k is in the trace's
 * time at stamp + shift_ns, shift_ns being minus the sizes of the steps
 * after the epoch in force at the trace's start up to and including k
 * (plus those after k up to that epoch, for an earlier k): the epochs
 * then follow each other without overlap.
 */
struct db_trace_epoch {
	int64_t epoch;
	int64_t begin_ns;	/* where it begins in the trace's time
				   (INT64_MIN for epoch 0) */
	int64_t shift_ns;	/* stamp + shift_ns: the trace's time */
};

struct db_trace_clock {
	int64_t start_epoch;	/* in force at the trace's start; -1: no
				   step recorded, stamps are the trace's
				   times (e NULL) */
	struct db_trace_epoch *e;	/* epochs 0..n-1, by epoch */
	size_t	 n;
};

/*
 * The clock of a trace starting at start_ns (on the host clock of the
 * epoch it started in) in *c (free with db_trace_clock_free): the epoch
 * that showed start_ns, the newest one's stamps ending at its newest
 * sample; if none did, the first beginning after it (a step forward
 * skipped it), else the newest.  0, DB_READ_FAILED, or 1 after saying
 * why when it cannot be told (a step back showed start_ns in two epochs,
 * or a step is not recorded).  A database without steps gives
 * start_epoch -1.
 */
int db_trace_clock_load(sqlite3 *db, int64_t start_ns,
    struct db_trace_clock *c);
void db_trace_clock_free(struct db_trace_clock *c);

/* A stamp of epoch (-1: any, no shift) in the trace's time of c (NULL:
 * none recorded). */
int64_t db_trace_time(const struct db_trace_clock *c, int64_t stamp_ns,
    int64_t epoch);

/* The stamp of trace time trace_ns, in the epoch in force then (*epoch,
 * -1 without steps). */
int64_t db_trace_stamp(const struct db_trace_clock *c, int64_t trace_ns,
    int64_t *epoch);

/*
 * A span of a trace's time, as the stamps of one epoch: the samples of
 * epoch (-1: any) that overlap (lo_ns, hi_ns) by DB_OVERLAPS_SQL, each
 * stamp + shift_ns in the trace's time.
 */
struct db_trace_piece {
	int64_t lo_ns, hi_ns;
	int64_t epoch;
	int64_t shift_ns;
};

/*
 * The pieces of (lo_ns, hi_ns) in the time of c (NULL: no steps) into
 * out, room for db_trace_npieces(c): one per epoch whose samples may
 * overlap it, by epoch, the span at that epoch's stamps; how many.
 * Each sample is then read once, at its place in the trace's time.
 * Without steps, one piece of any epoch and no shift.
 */
size_t db_trace_pieces(const struct db_trace_clock *c, int64_t lo_ns,
    int64_t hi_ns, struct db_trace_piece *out);
size_t db_trace_npieces(const struct db_trace_clock *c);

/*
 * db_first_by_device over (lo_ns, hi_ns) of c's time (NULL: no steps),
 * piece after piece, each of its epoch: the cards with samples in the
 * span, by device, each with its first stamp in the earliest epoch it
 * has samples of there.  A card whose only rows at a piece's stamps are
 * of another epoch has none in the span.
 */
int db_trace_first_by_device(sqlite3 *db, const struct db_trace_clock *c,
    int64_t lo_ns, int64_t hi_ns, const char *device_sql,
    struct db_key **out, size_t *n);

/*
 * The rows of statement s (db_select_samples, or any taking ?1 ?2 ?3
 * and the epoch as it does) over a span of a trace's time, piece after
 * piece: open binds nothing yet (reach_ns: how far past the span a row
 * stamp may lie, DB_MAX_INTERVAL_NS or less); step gives SQLITE_ROW,
 * SQLITE_DONE or SQLite's error; ts is the row's stamp in the trace's
 * time (column 0 + the piece's shift).
 */
struct db_trace_cursor {
	sqlite3_stmt *s;
	struct db_trace_piece *p;
	size_t	 np, i;
	int64_t	 reach_ns, shift_ns;
	bool	 bound;
};
void db_trace_cursor_open(struct db_trace_cursor *k, sqlite3_stmt *s,
    const struct db_trace_clock *c, int64_t lo_ns, int64_t hi_ns,
    int64_t reach_ns);
int db_trace_cursor_step(struct db_trace_cursor *k);
static inline int64_t
db_trace_cursor_ts(const struct db_trace_cursor *k)
{
	return sqlite3_column_int64(k->s, 0) + k->shift_ns;
}
void db_trace_cursor_close(struct db_trace_cursor *k);

/*
 * The condition db_select_samples appends so that db_bind_epoch can
 * confine a span to one epoch: "" where samples have no epoch (before
 * schema 12).
 */
const char *db_epoch_sql(sqlite3 *db);

/*
 * Confine the spans s is bound to next to the samples of epoch (-1: any),
 * resetting s; a no-op for a statement without the condition.  It stays
 * bound until the next call.
 */
void db_bind_epoch(sqlite3_stmt *s, int64_t epoch);

/*
 * A statement selecting, for the span bound later as ?1 = lo, ?2 = hi, ?3
 * = hi + DB_MAX_INTERVAL_NS (or a smaller reach), the samples that
 * overlap it: columns ts_ns, device, interval_ms, then one per cols[i]
 * (NULL when cols[i] is NULL), then the row's source (0 aiu-smi, 1 its
 * metric file) and whether it is of its card's row source (1 or 0), with
 * device_sql ("" or " AND device IN (...)") appended, by time then device
 * when ordered.  Each value is NULL where the other stream is its card's
 * source for that metric over the span (bestsrc.h, the rule every
 * command follows).  db_bind_epoch confines it to one epoch of the host
 * clock.  NULL on error (db_error tells why); dies when out of memory.
 */
sqlite3_stmt *db_select_samples(sqlite3 *db, const struct db_metric *const *cols,
    size_t ncols, const char *device_sql, bool ordered);

/*
 * Read the rows of s (db_select_samples) stamped after from_ns (at most
 * ?1), not after ?1, from the next binding of its span on, while the
 * values and sources stay those of the span: the rows before a span that
 * rows in it pair with (pair.h).  INT64_MIN: after ?1 again.  Resets s.
 */
void db_bind_read_from(sqlite3_stmt *s, int64_t from_ns);

/*
 * The columns aiu-smi printed over (lo_ns, hi_ns), with device_sql
 * appended: set printed[i] (left set if it was) when an aiu-smi row
 * overlapping the span has a value of cols[i], or cols[i] is one that
 * aiu-smi always prints (group '*' of metrics.h).  One pass over the
 * span's rows.
 */
int db_smi_printed(sqlite3 *db, const struct db_metric *const *cols,
    size_t ncols, int64_t lo_ns, int64_t hi_ns, const char *device_sql,
    bool *printed);

/*
 * The newest sample stamped at or before ts_ns: its stamp in *stamp_ns,
 * *found false if there is none.
 */
int db_sample_before(sqlite3 *db, int64_t ts_ns, bool *found,
    int64_t *stamp_ns);

/*
 * Of the samples stamped at or after ts_ns, the earliest start of what
 * one describes (its ts_ns minus its interval) in *from_ns, *found false
 * if there is none.
 */
int db_cover_after(sqlite3 *db, int64_t ts_ns, bool *found,
    int64_t *from_ns);

/*
 * Add to *count the samples overlapping (lo_ns, hi_ns) that were read
 * from metric files, with device_sql ("" or " AND device IN (...)")
 * appended; nothing where no card has file rows (bestsrc.h).
 */
int db_count_file_rows(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    const char *device_sql, int64_t *count);

/*
 * Add to *count the samples overlapping (lo_ns, hi_ns), with device_sql
 * appended, that lie in c's coarse runs: one count per run, over a range
 * of the primary key.
 */
int db_count_coarse(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    const char *device_sql, const struct db_coarse *c, int64_t *count);

/*
 * A statement reading the samples stamped in (?1, ?2], newest first:
 * ts_ns, device, interval_ms, then per cols[i] its value in natural units
 * (the stored value / 10^decimals; NULL when cols[i] is NULL, or where
 * the card's other stream is its source over those rows, bestsrc.h),
 * then the row's source.  NULL on error (db_error tells why); dies when
 * out of memory.
 */
sqlite3_stmt *db_select_newest(sqlite3 *db,
    const struct db_metric *const *cols, size_t ncols);

/*
 * The newest stamp at or before now_ns into *ts_ns (0 if the samples are
 * empty; left alone if the select returns no row).
 */
int db_newest_stamp(sqlite3 *db, int64_t now_ns, int64_t *ts_ns);

/*
 * The number of samples whose interval overlaps (lo_ns, hi_ns), counted
 * as every command counts a card's samples: each card's rows of its row
 * source only (its metric-file rows where it has any in the span, else
 * its aiu-smi rows; bestsrc.h), summed over the cards.
 */
int db_count_samples(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    int64_t *count);

/* The same, of epoch of the host clock (-1: any), added to *count. */
int db_count_epoch_samples(sqlite3 *db, int64_t lo_ns, int64_t hi_ns,
    int64_t epoch, int64_t *count);

/*
 * The samples of window w read up to end_ns, counted so, over its pieces
 * (db_window_pieces), in *count, and how long it was open by them in
 * *duration_ns: end_ns less its begin, or for a window a step crossed,
 * the time of its pieces together.
 */
int db_window_count(sqlite3 *db, const struct db_window *w, int64_t end_ns,
    int64_t *count, int64_t *duration_ns);

/*
 * The host that created the database (schema version 5 on): *hostname and
 * *machine_id malloc'd, or both NULL for an older database.
 */
int db_host(sqlite3 *db, char **hostname, char **machine_id);

/* One of the daemon's running totals (the counters table). */
struct db_counter {
	char *name;		/* NULL if the row has none */
	int device;
	double value;
	int64_t through_ns;
};

/*
 * The daemon's counters in *out, as many as were read (free with
 * db_counters_free, also after a failure); *recorded false if the
 * database predates their table (schema 5).
 */
int db_counters(sqlite3 *db, bool *recorded, struct db_counter **out,
    size_t *n);
void db_counters_free(struct db_counter *k, size_t n);

/* A version aiu-smi gave (its -v answer), in force from since_ns. */
struct db_smi_version {
	int64_t	 since_ns;
	char	*version;
};

/*
 * The aiu-smi versions in force over [begin_ns, end_ns], oldest first:
 * the one at begin_ns, then each change.  *recorded is false if the
 * database predates their table (then *n is 0).  CLIENT_EXIT_OK, or
 * another after saying why.
 */
int db_smi_versions(sqlite3 *db, int64_t begin_ns, int64_t end_ns,
    struct db_smi_version **out, size_t *n, bool *recorded);
void db_smi_versions_free(struct db_smi_version *v, size_t n);

/* The spyremond that writes the database (the daemon table, schema 10). */
struct db_daemon {
	bool recorded;		/* false: no table, or no daemon started yet */
	struct daemonid id;
	int64_t started_ns;
	int64_t alive_ns;	/* its last write (every flush moves it) */
	bool stopped;		/* it stopped cleanly, at stopped_ns */
	int64_t stopped_ns;
};

/* Whether the daemon of a db_daemon still writes the database. */
enum db_daemon_liveness {
	DB_DAEMON_RUNS,		/* it runs, or no daemon is recorded */
	DB_DAEMON_STOPPED,	/* it stopped cleanly (stopped_ns) */
	DB_DAEMON_DIED,		/* gone without a clean stop: killed, crashed,
				   or the host rebooted */
	DB_DAEMON_UNKNOWN,	/* it did not stop cleanly, and cannot be
				   checked from here (another host) */
};

/*
 * The daemon row of db into *out (out->recorded false before schema 10
 * or before any daemon started): 0, or -1 on an SQL error (printing
 * nothing; sqlite3_errmsg tells).
 */
int db_daemon_read(sqlite3 *db, struct db_daemon *out);

/*
 * Judge d from the calling process (daemonid_check); why (len bytes) says
 * why for DIED and UNKNOWN, as a sentence fragment.
 */
enum db_daemon_liveness db_daemon_judge(const struct db_daemon *d, char *why,
    size_t len);

/* Print "cannot read <what>: <sqlite error>" and return CLIENT_EXIT_DATABASE. */
int db_error(sqlite3 *db, const char *what);

/*
 * Prepare the SQL that sqlite3_mprintf makes of fmt into *out: 0, or the
 * db_error status for what; dies when out of memory.
 */
int db_preparef(sqlite3 *db, sqlite3_stmt **out, const char *what,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The start of what the oldest stored sample describes, its ts_ns minus
 * its interval, in *from_ns; *found false if there is no sample.
 * Retention deletes from the oldest end, so everything before it is gone.
 */
int db_oldest_cover(sqlite3 *db, int64_t *from_ns, bool *found);

#endif
