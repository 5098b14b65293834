/*
 * store_priv: the store's internals, shared by store.c (the daemon's
 * calls), storebuf.c (the row buffer), storedb.c and the other files on
 * the connection's side (migrate.c: schema, migrations; catalog.c: catalog;
 * retention.c: deleting old samples; ...) and the writer thread's files,
 * and visible to the unit tests, which inspect the connection and build
 * old schema versions.
 * Nothing outside the store module and its tests includes this.
 */
#ifndef SPYREMON_STORE_PRIV_H
#define SPYREMON_STORE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "daemonid.h"
#include "log.h"
#include "rowring.h"
#include "sql.h"
#include "store.h"
#include "storedb.h"
#include "summary.h"

struct metric_def;

/* Rows per retention DELETE at first; adapted so a statement takes a few ms. */
#define RETENTION_CHUNK_INITIAL	500
#define RETENTION_CHUNK_MIN	64
#define RETENTION_CHUNK_MAX	65536

/* Pages returned to the filesystem per PRAGMA incremental_vacuum. */
#define RETENTION_VACUUM_PAGES	64

/*
 * What an older layout's rows get, in a migration (migrate.c) and in a
 * copy into a new database (store_copy.c) alike: windows summarized
 * before complete_ns existed count as complete from their summary, and
 * summaries written before power_n was kept have power_n 0 (their spread
 * unknown) and power_sd NULL.
 */
#define WINDOWS_COMPLETE_FROM_SUMMARY \
	"UPDATE " SCHEMA_T_WINDOWS " SET " SCHEMA_C_COMPLETE " = summarized_ns" \
	" WHERE end_ns IS NOT NULL AND summarized_ns IS NOT NULL;\n"
#define SUMMARY_UNSPREAD_POWER_N	"0"

/* One metric column of samples, in catalog id order. */
struct store_col {
	int id;
	int decimals;
	char *key;
	char *col;
};

struct store_catalog {
	struct store_col *cols;
	size_t n;
	int *slot_of_id;	/* id -> index into cols, -1 if none; max_id + 1 */
	int max_id;
};

enum cell_kind { CELL_NULL, CELL_INT, CELL_REAL };

/* The cell arrays of struct store's pool. */
enum { POOL_VALUES, POOL_KINDS };

/* A value as it will be bound: an integer scaled by 10^decimals, or a double. */
union store_cell {
	int64_t i;
	double d;
};

struct pending_row {
	int64_t ts_ns;
	int device;
	int src;			/* SCHEMA_SRC_* */
	bool have_seq;
	uint32_t seq;
	int64_t arrival_ns;		/* 0: none */
	int64_t clock_net_ns;		/* store_sample's */
	int64_t epoch;			/* the host clock's epoch it was stamped in */
	uint32_t interval_ms;
	bool have_skew;
	int32_t skew_s;
};

/* A stream's newest row appended: its device, source, stamp and interval. */
struct device_last {
	int device;
	int src;
	int64_t ts_ns;
	uint32_t interval_ms;
};

/*
 * A device's energy: joules integrated up to through_ns (aiu-smi's rows)
 * and through_file_ns (its metric file's rows, 0 until one carried pwr
 * in this run); batch_file: the write in progress has a file row of the
 * device with pwr.  The table keeps the greater of the two stamps.
 */
struct store_energy {
	int device;
	double joules;
	int64_t through_ns;
	int64_t through_file_ns;
	int64_t clock_net_ns;	/* the host clock's steps the stamps are in */
	/*
	 * After the stamps moved with a step, until a row of the new clock
	 * comes: the stamp counted through by the old clock (0: none).
	 */
	int64_t before_ns, before_file_ns;
	bool batch_file;
	bool dirty;		/* changed by the write in progress */
};

/*
 * The counters' committed state (e), the state a write in progress
 * computes (tent, adopted once its transaction commits), and the deltas
 * the daemon added that are not yet written.
 */
struct store_counters {
	struct store_energy *e, *tent;
	size_t n, cap, ntent, tentcap;
	uint64_t add[STORE_NCOUNTERS];
	uint64_t taken[STORE_NCOUNTERS];	/* of add, in the open transaction */
	bool written;		/* tent and add are in the open transaction */
};

enum retention_phase { RET_AGE, RET_SIZE, RET_VACUUM, RET_CHECKPOINT };

/*
 * Progress of one retention pass.  A pass walks samples in primary-key
 * order from the oldest row; cursor is the ts_ns below which every row has
 * been examined in the current phase.
 */
struct retention_state {
	enum retention_phase phase;
	int64_t cursor;
	unsigned chunk;
	uint64_t pass_deleted;	/* rows deleted so far in this pass */
	bool vacuumed;		/* pages were freed this pass: checkpoint */
	bool warned_windows;	/* size pressure reached window rows this pass */
};

struct writer;

/* A step of the host clock as clock_steps records it: id, the epoch it starts. */
struct store_epoch_step {
	int64_t id, at_ns, size_ns, mono_ns;
};

struct store {
	sqlite3 *db;
	char *path;
	struct summary_idle_cache idle;	/* the connection's (summary.h) */
	size_t max_pending;

	struct store_catalog cat;
	sqlite3_stmt *insert;	/* columns: fixed eight, then cat.cols in order */
	sqlite3_stmt *begin, *commit, *rollback;
	bool in_tx;		/* inside storedb_tx_begin .. storedb_tx_commit */

	/*
	 * Buffered rows: struct pending_row headers, with cells POOL_VALUES
	 * (union store_cell) and POOL_KINDS (enum cell_kind, a byte each),
	 * one per catalog column; stride >= cat.n.  Grown by doubling up to
	 * max_pending, never shrunk, so steady state allocates nothing.
	 */
	struct rowring pool;

	struct device_last *devs;
	size_t ndevs, devs_cap;

	uint64_t rows_written, rows_dropped, rows_deleted, flushes_failed;
	uint64_t rows_nudged;	/* atomic: stored a few ns after their key */
	int64_t newest_ts_ns;
	/* a damaged log found at open, for status (store_open_with) */
	bool damaged;
	char damaged_found[256], damaged_kept[1024];

	struct store_counters ctr;
	struct retention_state ret;
	/* (mu) the newest steps of the host clock, oldest first */
	struct store_clock_step clock_steps[STORE_CLOCK_STEPS];
	size_t nclock_steps;
	/*
	 * (mu) The host clock's epoch now (store_clock_epoch), the
	 * database's last at open (epoch_open: the daemon before's last),
	 * and the newest step recorded since open (its id 0 if none), which
	 * a recreated database gets again so that its epochs go on.
	 */
	int64_t epoch, epoch_open;
	struct store_epoch_step last_step;
	struct ratelimit rl_flush, rl_drop, rl_retention;
	/* sql.c's record of the connection's last failure (dbmu): its code
	 * and message, kept past the ROLLBACK that clears SQLite's own, and
	 * the last line logged, for the rate limit of repeated ones */
	int err_code;
	char err_msg[96];
	char err_last[160];
	struct ratelimit rl_sql;
	/*
	 * Every failure sql.c records, counted for status whatever the
	 * rate limit logs: all of them, and those that say the file is
	 * damaged (SQLITE_CORRUPT, SQLITE_NOTADB); errmu guards the last
	 * one's line and time (realtime), read by store_get_stats.
	 * errors_counted: how many of them the counters table has (the
	 * writer's, under dbmu).
	 */
	atomic_uint_fast64_t sql_errors, sql_corrupt;
	uint64_t errors_counted;
	pthread_mutex_t errmu;
	char err_status[200];
	int64_t err_status_ns;
	/*
	 * A damaged page met while running (writer_recover.c): the windows carried
	 * into the fresh database (their rows before since_ns are in the
	 * copy kept as carried_kept), whose summaries say so (dbmu).
	 */
	struct store_carried {
		int64_t id;
		int64_t since_ns;
	} *carried;
	size_t ncarried;
	char carried_kept[1024];
	char carried_why[96];
	bool damaged_running;	/* (mu) the damage was met while running */
	bool damage_stays;	/* (dbmu) the damaged file could not be
				   moved aside: summaries that meet damage
				   are stored in it, as storedb's are */

	/*
	 * The writer thread (writer.c) of store_open's store; NULL for
	 * storedb_open's, which runs on its caller's thread alone.  mu
	 * guards everything above but the connection and the statements,
	 * which dbmu guards; dbmu is never taken while holding mu.  The
	 * catalog changes only under both, so the writer reads it under
	 * dbmu and the event loop under mu.  Both are always there, so
	 * that code shared by the two takes them the same way.
	 */
	struct writer *w;
	pthread_mutex_t mu, dbmu;
	unsigned dbmu_waiting;	/* (mu) threads but the writer waiting for
				   dbmu: the writer lets them go first */
	size_t inflight;	/* rows the writer took and has not settled */
	dev_t dev;		/* the database file, to notice its replacement */
	ino_t ino;
	uint64_t file_bytes;	/* the writer's: its size after the last flush */
	uint64_t appended;	/* rows appended since open */
	int64_t sync_min_through;	/* a row stamped this late nudges the writer */
	/* store_host: storedb_host as read before the writer started (-1: failed) */
	int host_rc;
	char host[256], machine_id[256];
	/* store_daemon.c: this daemon, once recorded in the daemon table,
	 * and what its start found of the one before (set before the
	 * writer thread starts) */
	bool daemon_recorded;
	struct daemonid self;
	struct store_prev_daemon prev;
};

/* ---- store_daemon.c ---- */

/*
 * As the daemon's store starts, on the connection: judge the daemon
 * recorded before (into st->prev; its newest sample if it died), then
 * record this one.  -1 logged.
 */
int store_db_daemon_start(struct store *st);
/* Record this daemon (st->self) in the daemon table again: a database
 * made anew.  -1 logged. */
int store_db_daemon_record(struct store *st);
/* Inside a flush's transaction: this daemon is alive at now_ns.  An
 * SQLite result code; SQLITE_OK at once where it is not recorded. */
int store_db_daemon_alive(struct store *st, int64_t now_ns);
/* This daemon stops cleanly now (the writer stopped); failure logged. */
void store_db_daemon_stopped(struct store *st);

/* ---- counters.c ---- */

/* Read the stored energy state; 0 or -1 (logged). */
int store_counters_load(struct store *st);
void store_counters_free(struct store *st);

/* True if store_counter_add left deltas to write. */
bool store_counters_pending(const struct store *st);

/*
 * Inside the open transaction, after the buffered rows were inserted
 * (rows of them new): integrate their energy and write every changed
 * counter.  Returns an SQLite result code; the committed state is
 * untouched until store_counters_committed.
 */
int store_counters_write(struct store *st, const struct rowring *ring,
    uint64_t rows, int64_t now_ns);

/* The transaction of the last store_counters_write failed: the deltas it
 * took stay to be written. */
void store_counters_abandoned(struct store *st);

/* The transaction of the last store_counters_write committed. */
void store_counters_committed(struct store *st);

/* ---- the row buffer (storebuf.c) ----
 * The rows appended and not yet taken by a flush; under st->mu in the
 * daemon, whose writer thread takes them. */

/* Set up st->pool empty, shaped for the rows. */
void store_buf_init(struct store *st);
/*
 * Buffer s (store_append's contract); *ts_ns: the stamp it was given.
 * False if no room could be made for it (dropped and counted).
 */
bool store_buf_append(struct store *st, const struct store_sample *s,
    int64_t *ts_ns);
/* Drop device's buffered rows of src after after_ns, keeping the others in
 * order, and let its next row be stamped anything after after_ns. */
void store_buf_remove_after(struct store *st, int device, int src,
    int64_t after_ns);

/* ---- the connection's side of each change ----
 * What the writer thread runs for the daemon's calls, beside storedb.h's;
 * each runs on the connection alone, -1 logged. */

/* Write ring's rows in one transaction; *skipped counts duplicates dropped
 * (storedb.c). */
int store_db_rows_write(struct store *st, const struct rowring *ring,
    size_t *skipped);
/* The DELETE of storedb_delete_after_src, written rows only (storedb.c). */
int store_db_delete_after(struct store *st, int device, int src,
    int64_t after_ns);
/*
 * Add metric key to the catalog (storedb_metric's contract), first writing
 * the buffered rows, in one transaction (storedb.c).
 */
int store_db_metric_add(struct store *st, const char *key, const char *unit,
    int *id);
/*
 * Insert win (open, with until_pid) into the windows table, with clock
 * (NULL: unknown) at its begin and the child's restarts so far, in its own
 * transaction; win->id 0 takes the next id (sqlite3_last_insert_rowid).
 */
int store_db_window_insert(struct store *st, const struct store_window *win,
    const struct clocksync *clock, unsigned restarts);
/*
 * End open window win->id at win->end_ns, in epoch win->end_epoch (-1:
 * not recorded), as storedb_window_end_meta does (store_windows.c).
 */
int store_db_window_end(struct store *st, const struct store_window *win,
    enum store_ended_by by, const struct clocksync *clock,
    const char *meta_json);
/*
 * Record step c of the host clock (clock_steps; a row of its id already
 * there is replaced), in its own transaction (store_windows.c).
 */
int store_db_clock_step(struct store *st, const struct store_epoch_step *c);
/*
 * The database's newest clock_steps row into st->last_step (all 0 if
 * none), and its STORE_CLOCK_STEPS newest steps into st->clock_steps,
 * oldest first, which retention by age then goes on measuring by.
 */
int store_db_load_steps(struct store *st);
/*
 * One bounded step of summarizing the windows due (store_summary.c),
 * marking each complete too if complete: 1 if windows are left for the
 * next step, 0 if none, -1 on error.
 */
int store_db_summarize_due(struct store *st, int64_t now_ns, int64_t settle_ns,
    int64_t idle_lookback_ns, bool complete);
/*
 * Summarize the n ended windows of ids and mark them complete at now_ns,
 * in one transaction (store_summary.c).  A summary whose read met a
 * damaged page stores what could be read, and the window is complete
 * with the sentence saying what was lost in its end_note
 * (summary_damage_note), which notes[i] gets too ("" for the others).
 */
#define STORE_NOTE_LEN	1536
int store_db_windows_finish(struct store *st, const int64_t *ids, size_t n,
    int64_t idle_lookback_ns, int64_t now_ns, char (*notes)[STORE_NOTE_LEN]);
/*
 * Mark every ended window that is neither complete nor marked incomplete
 * as incomplete: the daemon that ended it stopped before it was complete.
 */
int store_db_windows_abandoned(struct store *st);
/* The highest window id ever given (0 if none). */
int store_db_max_window_id(struct store *st, int64_t *id);
/* Window id's clock state at its begin and child restarts as stored (zero
 * and unknown where absent); -1 logged. */
int store_db_window_begin_state(struct store *st, int64_t id,
    struct clocksync *clock, unsigned *restarts);
/*
 * After st->path was deleted or replaced (st->mu and st->dbmu held): finish
 * the old connection (store_db_retire), then create the database if the
 * path is gone or adopt the spyremon database there; 0 done, -1 failed
 * (logged; try again), 1 refused: the path holds something else, why says
 * what, nothing opened it and st->db is NULL until a later call succeeds.
 */
int store_db_reopen(struct store *st, char *why, size_t len);

/* ---- dbfile.c ---- */
/*
 * Checkpoint the WAL of st->db into the file it has open, close it and
 * remove the emptied -wal and -shm at st->path, so that no later
 * connection applies them to another file; st->db NULL after.  -1 (logged,
 * connection kept) if the log cannot be finished yet.  NULL db: 0.
 */
int store_db_retire(struct store *st);
/*
 * What path holds, read without following or blocking and without
 * writing: 0 nothing, 2 a spyremon database this build can use, 1
 * anything else (why names it, e.g. "not an SQLite database").
 */
int store_path_check(const char *path, char *why, size_t len);
/*
 * Copy path, path-wal and path-shm (those that exist), byte for byte and
 * synced, to new files path.damaged-<UTC time>{,-wal,-shm} beside them
 * (a "-N" after the time if that name is taken); the originals are only
 * read.  0 with the main copy's name in kept; -1 logged, no copy left.
 */
int store_keep_aside(const char *path, char *kept, size_t len);

/*
 * A damaged page was met while running: copy the database aside as
 * store_keep_aside does (kept: the main copy's name), then finish and
 * close the connection and remove the file, its -wal and -shm from the
 * path, so that the next open makes a fresh database there.  -1 logged
 * if no copy could be made (nothing removed, the connection kept).
 */
int store_db_move_damaged(struct store *st, char *kept, size_t len);
/*
 * Read, through a connection of its own (read-only, so the writer's
 * page cache hides nothing), the next slice of the samples table of the
 * database at path after *cursor (INT64_MIN: from its start), so that a
 * damaged page no write touches is found; *cursor moves on, and back to
 * the start after the last row.  1 with SQLite's message in why if a
 * page is damaged, else 0 (also when the file cannot be opened now).
 */
int store_check_slice(const char *path, int64_t *cursor, char *why,
    size_t len);

/* ---- writer.c and the files below it (writer_priv.h) ----
 * The writer reaches the connection's side only through these pointers
 * (filled in by store.c), so that it calls into no other store file.
 * store.h's calls that only queue a change or read what the thread keeps
 * (store_flush, store_window_*, store_windows_abandon and
 * store_windows_summarize_due, store_device_map, store_card,
 * store_smi_version, store_unreliable_metrics) are defined there; -1 from
 * them only when out of memory.  The writer_* calls below are the rest of
 * what store.c asks of the writer. */
struct writer_ops {
	int (*rows_write)(struct store *, const struct rowring *, size_t *);
	int (*delete_after)(struct store *, int, int, int64_t);
	int (*device_map)(struct store *, int, const char *, const char *,
	    int64_t);
	int (*card)(struct store *, const struct card *, int64_t);
	int (*smi_version)(struct store *, const char *, int64_t);
	int (*window_insert)(struct store *, const struct store_window *,
	    const struct clocksync *, unsigned);
	int (*window_end)(struct store *, const struct store_window *,
	    enum store_ended_by, const struct clocksync *, const char *);
	int (*clock_step)(struct store *, const struct store_epoch_step *);
	int (*window_restarts)(struct store *, int64_t, unsigned);
	int (*window_run)(struct store *, int64_t, int64_t);
	int (*window_note)(struct store *, int64_t, const char *);
	int (*window_begin_state)(struct store *, int64_t, struct clocksync *,
	    unsigned *);
	int (*windows_abandoned)(struct store *);
	int (*summarize_due)(struct store *, int64_t, int64_t, int64_t, bool);
	int (*windows_finish)(struct store *, const int64_t *, size_t,
	    int64_t, int64_t, char (*)[STORE_NOTE_LEN]);
	int (*reopen)(struct store *, char *, size_t);
	int (*move_damaged)(struct store *, char *, size_t);
	int (*window_get)(struct store *, int64_t, struct store_window **);
	int (*max_window_id)(struct store *, int64_t *);
	int (*retention_step)(struct store *, const struct store_retention *,
	    int64_t, uint64_t);
};

/*
 * Start the thread with ops, taking over the open windows, the highest
 * window id and the unreliable metrics read before it started; -1 logged.
 */
int writer_start(struct store *st, const struct writer_ops *ops,
    struct store_window *open, size_t nopen, int64_t max_window_id,
    char **unreliable, size_t nunreliable);
/*
 * Take st->dbmu from a thread other than the writer's (st->mu not held):
 * the writer, between two steps of its work, lets it go first.
 */
void writer_lock_db(struct store *st);
/* store_windows_open: the windows stored open, with the queued changes;
 * st->dbmu held (writer_lock_db), so that the thread changes none. */
int writer_windows_open(struct store *st, struct store_window **out,
    size_t *n);
/* Queue the record of step c of the host clock (st->mu not held). */
void writer_clock_step(struct store *st, const struct store_epoch_step *c);
/* Queue the deletion; st->mu held. */
int writer_delete_after(struct store *st, int device, int src,
    int64_t after_ns);
/* The writer's part of store_get_stats; st->mu held. */
void writer_stats(struct store *st, struct store_stats *out);
/* Run a PASSIVE checkpoint from the thread every ns from now on. */
void writer_set_checkpoint(struct store *st, uint64_t ns);
/* Under st->mu: a row reached a pending request's time: wake the thread. */
void writer_sync_nudge(struct store *st);
/* Stop the thread and store what it had queued on this one; st->w NULL after. */
void writer_stop(struct store *st);

/* ---- migrate.c ---- */

/*
 * Open st->path (creating it), configure it, and migrate its schema from
 * the layout it holds to version to (1..SCHEMA_VERSION), all of it in one
 * transaction that sets user_version last: a failure leaves the file as
 * it was.  A database newer than to, one of a newer build, or one with
 * tables but no version is refused.  The caller closes st->db, also
 * after a failure.
 */
int store_db_open(struct store *st, int to);

/* ---- catalog.c ---- */

/* Write the host row (this host's name and machine ID), in the caller's
 * transaction. */
int store_host_record(struct store *st);

/* Put every metric this build knows in a new catalog and create the view. */
int store_catalog_seed(struct store *st);

/*
 * Add metric d to the catalog and its column to samples, inside the
 * caller's transaction.  The view is not rebuilt: store_view_rebuild.
 */
int store_catalog_insert(struct store *st, const struct metric_def *d);

/* (Re)create the sample_values view from the catalog. */
int store_view_rebuild(struct store *st);

/*
 * Write s into db's window_summary tables (summary_write.c), replacing what window
 * s->window_id had, and set the window's summarized_ns, inside the
 * caller's transaction.
 */
int summary_write(sqlite3 *db, const struct summary *s);

/*
 * Read the catalog into *cat (zeroed first) through query/'s reader
 * (db_catalog_read); on failure *cat is empty.
 */
int store_catalog_load(struct store *st, struct store_catalog *cat);

/* Free cat's contents and leave it empty. */
void store_catalog_free(struct store_catalog *cat);

/* The column of metric key, or NULL. */
const struct store_col *store_catalog_find(const struct store_catalog *cat,
    const char *key);

/*
 * The INSERT into samples that binds the fixed four columns, then cat's in
 * order; NULL (logged) on failure.
 */
sqlite3_stmt *store_insert_prepare(struct store *st,
    const struct store_catalog *cat);

/*
 * Create a new database at path holding schema version version
 * (1..SCHEMA_VERSION) exactly as that version's migration left it, and
 * close it.  For testing migrations.
 */
int store_create_version(const char *path, int version);

/* The SQL retention runs, so tests can check the query plans. */
extern const char retention_sql_bound[];
extern const char retention_sql_delete_free[];
extern const char retention_sql_delete_any[];

/* The DELETE of store_delete_after: ?1 after_ns, ?2 device. */
extern const char store_sql_delete_after[];

#endif
