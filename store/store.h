/*
 * store: the SQLite database of samples, as the daemon writes it.
 *
 * A writer thread owns the connection from store_open to store_close, and
 * no call but store_metric with a key the catalog lacks (and store_close)
 * waits for it: rows are buffered, and window changes, device maps, cards
 * and deletions queued, for the thread to store in order; store_flush only
 * wakes it.  Window ids are handed out at once.  Before each flush the
 * thread checks that the file at the path is still the database, and
 * creates it again (with the open windows and every pending row) if it was
 * deleted or replaced.  Retention runs in the thread once
 * store_set_retention gave its limits.  A caller that owns the connection
 * (import, the tools, the tests) uses storedb.h instead: the same store,
 * written on the caller's thread.
 *
 * Rows are buffered in memory and written in one transaction per flush
 * (the caller runs store_flush every flush_interval), so a crash loses at
 * most the rows not yet flushed, and store_close loses nothing.  The
 * database is in WAL mode with synchronous=NORMAL; statements are prepared
 * once (and again only when a new metric adds a column).
 *
 * Samples live in one wide table keyed by (ts_ns, device), WITHOUT ROWID,
 * so rows are clustered by time and a time-window read touches only its
 * rows.  Each metric is one column holding the value scaled by
 * 10^decimals as an integer (REAL only when the printed value has more
 * digits than the catalog's decimals), NULL when aiu-smi printed "-".
 * The view sample_values shows them in natural units.
 *
 * Functions returning int give 0 on success and -1 on failure, after
 * logging the SQLite error with log_warnx.
 */
#ifndef SPYREMON_STORE_H
#define SPYREMON_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct card;
struct clocksync;

/* One parsed cell, exactly as printed: mant / 10^scale. */
struct store_value {
	int64_t mant;
	int8_t scale;
	bool present;		/* false: aiu-smi printed "-"; stored as NULL */
};

struct store_sample {
	int64_t ts_ns;		/* arrival stamp, CLOCK_REALTIME */
	int device;		/* aiu-smi device ID */
	uint32_t interval_ms;	/* delay in force when the row was taken */
	bool have_skew;
	int32_t skew_s;		/* aiu-smi's own Date/Time minus ts, seconds */
	int src;		/* SCHEMA_SRC_SMI (0) or SCHEMA_SRC_FILE */
	bool have_seq;
	uint32_t seq;		/* the file section's sequence number */
	int64_t arrival_ns;	/* when a file row was read; 0: none */
	/*
	 * The host clock's steps (+ forward) summed from the daemon's start
	 * to when ts_ns was read, whole ms: the energy counter moves its
	 * stamps by a change of it (counters.c); 0 outside the daemon.
	 */
	int64_t clock_net_ns;
	/*
	 * The host clock's epoch ts_ns was read in (store_clock_epoch), if
	 * have_epoch; else the store's epoch when the row is appended (a
	 * row the daemon did not stamp: an import, a copy).
	 */
	bool have_epoch;
	int64_t epoch;
	size_t nvalues;
	const int *metric;	/* nvalues metric ids from store_metric() */
	const struct store_value *values;	/* nvalues values */
};

/* A zero max_age_ns or max_size disables that limit. */
struct store_retention {
	uint64_t max_age_ns;
	uint64_t max_size;
	uint64_t windows_max_age_ns;
};

/* A row whose key is stored is stored at most this many ns later. */
#define STORE_NUDGE_MAX		1000
/* A row this much before its device's previous keeps its own stamp. */
#define STORE_STEP_BACK_NS	(100LL * 1000000LL)

/*
 * The stamp a row stamped ts_ns is stored under after its device's and
 * source's previous row, stored under prev_ns: ts_ns, or prev_ns + 1 when
 * ts_ns is not after prev_ns but less than STORE_STEP_BACK_NS before it
 * (two rows read in one clock tick).  Further back is a step of the host
 * clock, and keeps its stamp: moving it would misdate every row until the
 * clock caught up.  The store applies it, and so does whoever must know
 * beforehand the stamp a row will have (dstamp.h).
 */
static inline int64_t
store_stamp_after(int64_t prev_ns, int64_t ts_ns)
{
	if (ts_ns <= prev_ns && prev_ns < INT64_MAX &&
	    prev_ns - ts_ns <= STORE_STEP_BACK_NS)
		return prev_ns + 1;
	return ts_ns;
}

struct store_stats {
	uint64_t rows_written;		/* since open */
	uint64_t rows_dropped;		/* buffer overflowed while the disk failed */
	uint64_t rows_nudged;		/* stored STORE_NUDGE_MAX ns at most after
					   their stamp, already stored (clock set back) */
	uint64_t rows_deleted;		/* by retention, since open */
	uint64_t flushes_failed;	/* since open */
	size_t pending;			/* buffered, not yet written */
	int64_t newest_ts_ns;		/* newest row written or buffered since open, 0 if none */
	uint64_t file_bytes;		/* page_count * page_size */
	/* the writer thread's */
	bool threaded;
	bool stalled;			/* writes fail, or one has run over 1 s */
	uint64_t stalled_ns;		/* for how long */
	char why[160];			/* what failed: "locked: ...", "disk full: ..." */
	size_t jobs_queued;		/* window and inventory changes not yet stored */
	uint64_t recreated;		/* times the file was deleted or replaced and made again */
	/* every SQLite failure met since open (summaries, rows, changes) */
	uint64_t errors;
	uint64_t errors_damage;		/* of them: the file is damaged */
	char last_error[200];		/* "what: message", "" if none */
	int64_t last_error_ns;		/* when (realtime), 0 if none */
	/* a damaged log found at open (walcheck.h), its originals kept aside */
	uint64_t damaged;		/* 0 or 1: at this open, or while running */
	bool damaged_running;		/* a damaged page met while running: the
					   file was moved aside, a fresh one made */
	char damaged_found[256];	/* what was found and what was kept */
	char damaged_kept[1024];	/* the main file's copy; -wal, -shm beside it */
	/* the scheduled checkpoints (writer.c) */
	uint64_t checkpoint_interval_ns;
	uint64_t wal_bytes;		/* the -wal file's size now */
	bool checkpoint_blocked;	/* none copied every frame for an interval */
	uint64_t checkpoint_blocked_ns;	/* since the first that did not, 0 if the last did */
	int64_t checkpoint_frames_behind;	/* frames the last one left, -1 none run */
};

/* The limits retention keeps to, in steps between the thread's flushes. */
void store_set_retention(struct store *st, const struct store_retention *r);

/* The newest steps of the host clock that retention remembers. */
#define STORE_CLOCK_STEPS	16

/*
 * The host clock was stepped by size_ns (+ forward) and read at_ns just
 * after: a new epoch of the clock starts, recorded in the clock_steps
 * table (queued for the thread; at once for storedb.h's store), and
 * returned: the rows stamped from now on carry it.  Retention by age
 * measures a row stamped before the step by the clock that stamped it
 * (retention.c); the STORE_CLOCK_STEPS newest steps count there, those
 * the database recorded before open included, an older one is forgotten.
 */
int64_t store_clock_stepped(struct store *st, int64_t size_ns, int64_t at_ns);

/*
 * The host clock's epoch now: the database's last (its newest
 * clock_steps row, 0 if none) at open, plus the steps since.
 */
int64_t store_clock_epoch(struct store *st);

/*
 * Open or create the database at path, creating parent-less files only
 * (the directory must exist), and migrate its schema forward to
 * SCHEMA_VERSION.  A database newer than this build is refused.  Then
 * start the writer thread: windows that ended before the last daemon
 * stopped and are not complete are marked incomplete.  max_pending
 * bounds the rows buffered while writes fail; past it the oldest
 * buffered rows are dropped and counted.
 */
int store_open(const char *path, size_t max_pending, struct store **out);

/* What to do with a database whose write-ahead log is damaged. */
enum store_on_damage {
	STORE_DAMAGE_KEEP_ASIDE,	/* copy the originals aside, start on
					   what SQLite's recovery keeps */
	STORE_DAMAGE_REFUSE,		/* touch nothing, do not open */
};

struct store_options {
	size_t max_pending;		/* as store_open's */
	enum store_on_damage on_damage;
	uint64_t checkpoint_interval_ns;	/* PASSIVE checkpoints this often
						   from the writer thread; 0: 10 s */
};

/* store_open_with refused a damaged database (on_damage, or no copy). */
#define STORE_OPEN_DAMAGED	(-2)

/*
 * store_open, after checking the log (walcheck.h) before SQLite opens
 * it.  A damaged one is logged in one line and either refused
 * (STORE_OPEN_DAMAGED, nothing touched) or copied aside byte for byte
 * (store_stats' damaged_kept; the counter "damaged_databases" counts it)
 * and the database opened on what recovery keeps; if the copies cannot
 * be made it is refused all the same.  store_open is this with
 * keep-aside.
 */
int store_open_with(const char *path, const struct store_options *o,
    struct store **out);

/* Stop the thread, storing what it had queued; flush, checkpoint and close;
 * NULL is a no-op.  Rows that still cannot be written are logged. */
void store_close(struct store *st);

/*
 * The id of metric key, adding it to the catalog (and a column to samples)
 * if it is new.  unit is the header's unit; for keys in metric_defs the
 * catalog's own unit, group and precision are used, and other keys get
 * group "?", an empty description, reliable 1 and 3 decimals.  Flushes
 * pending rows first if the schema has to change; on failure nothing
 * changes and the rows stay buffered.
 */
int store_metric(struct store *st, const char *key, const char *unit, int *id);

/*
 * Buffer one row.  Copies everything it needs.  Rows of one device and
 * source (src) must have strictly increasing ts_ns; a row that is not is stored at the last
 * ts_ns + 1 (and counted in the log).  Never fails; a full buffer drops the
 * oldest row.
 */
void store_append(struct store *st, const struct store_sample *s);

/*
 * Ask the thread to write every buffered row in one transaction, after
 * the changes queued before them; on failure the rows stay buffered.
 */
int store_flush(struct store *st);

/*
 * Remove device's aiu-smi rows with ts_ns > after_ns, buffered and written (one
 * DELETE on the primary key, queued), so that rows replacing them can follow:
 * the device's next row may be stamped anything after after_ns.  Returns
 * 0, or -1 with nothing removed.
 */
int store_delete_after(struct store *st, int device, int64_t after_ns);

/* The same for device's rows of source src only (SCHEMA_SRC_*);
 * store_delete_after is this with SCHEMA_SRC_SMI. */
int store_delete_after_src(struct store *st, int device, int src,
    int64_t after_ns);

/*
 * Record that aiu-smi maps device to metric_file (and bus_id, "" if
 * unknown) from ts_ns on.  Only changes from the mapping in force at ts_ns
 * are stored.
 */
int store_device_map(struct store *st, int device, const char *metric_file,
    const char *bus_id, int64_t ts_ns);

/*
 * Record that aiu-smi says it is version (the first line of its -v
 * output) from ts_ns on.  Only a change from the version in force at
 * ts_ns is stored.
 */
int store_smi_version(struct store *st, const char *version, int64_t ts_ns);

/* Insert or update a card of the inventory, seen at ts_ns. */
int store_card(struct store *st, const struct card *c, int64_t ts_ns);

void store_get_stats(struct store *st, struct store_stats *out);

/*
 * The host the database was created on (schema version 5): its host name
 * and machine ID, into buffers of len bytes ("" if not recorded), as read
 * when the store was opened.
 */
int store_host(struct store *st, char *hostname, char *machine_id,
    size_t len);

/* ---- the daemon's running totals (counters.c) ---- */

enum store_counter {
	STORE_COUNTER_CHILD_RESTARTS,	/* aiu-smi started again */
	STORE_COUNTER_REJECTED_LINES,	/* lines of its output not parsed */
	STORE_COUNTER_DAMAGED,		/* damaged databases kept aside */
	STORE_COUNTER_ERRORS,		/* SQLite failures the store met */
	STORE_NCOUNTERS
};

/*
 * Add delta to a counter of the counters table; written with the next
 * flush (which happens even with no rows buffered), kept until it is.
 * For storedb.h's store too.
 */
void store_counter_add(struct store *st, enum store_counter which,
    uint64_t delta);

/* ---- profiling windows (store_windows.c) ----
 * The thread writes each window change as soon as it is queued, in its own
 * transaction, never batched: a mark must survive a crash of the daemon. */

/* How a window ended (the windows table's ended_by). */
enum store_ended_by {
	STORE_ENDED_MARK,	/* "mark": a mark end request */
	STORE_ENDED_MAX_OPEN,	/* "max_open": open for windows.max_open */
	STORE_ENDED_EXIT,	/* "exit": its --until-exit process exited */
	STORE_ENDED_DAEMON_GONE,	/* "daemon_gone": the daemon that held
					   it died; ended at the last sample */
};

/*
 * What store_open found of the daemon that wrote the database before
 * (the daemon table, store_daemon.c).
 */
struct store_prev_daemon {
	bool died;		/* it stopped without a clean stop, and is gone */
	int32_t pid;
	int64_t alive_ns;	/* its last write */
	int64_t last_sample_ns;	/* the newest sample stored then, 0 if none */
	/*
	 * The last write of the daemon before, whatever its end (0: none
	 * recorded): a host clock behind it was stepped back meanwhile.
	 */
	int64_t last_write_ns;
	char note[384];		/* why its open windows end (their end_note) */
};

/*
 * Into *out: whether the daemon before this one died with its windows
 * open, which then end with STORE_ENDED_DAEMON_GONE at the last sample
 * stored.  A daemon that stopped cleanly, or one that cannot be checked
 * (another host), did not die: its windows stay open as before.
 */
void store_previous_daemon(struct store *st, struct store_prev_daemon *out);

struct store_window {
	int64_t id;
	char *tag;
	uint32_t uid;
	int32_t pid;
	int64_t begin_ns;
	int64_t end_ns;		/* 0 while open */
	bool auto_closed;
	char *meta_json;	/* a JSON object of strings, "{}" if none */
	int32_t until_pid;	/* ends when this process exits; 0 if none */
	/* the host clock's epochs its begin and end were stamped in; -1:
	 * not recorded (a window of an older build) */
	int64_t begin_epoch;
	int64_t end_epoch;
};

/*
 * Record a new open window; *id receives its id.  clock (NULL: unknown)
 * is the host clock's state at begin_ns; until_pid > 0 records the
 * process whose exit ends the window.
 */
int store_window_begin(struct store *st, const char *tag, uint32_t uid,
    int32_t pid, int64_t begin_ns, const char *meta_json,
    const struct clocksync *clock, int32_t until_pid, int64_t *id);

/*
 * Close window id at end_ns, ended by, with the clock's state then (NULL:
 * unknown); auto_closed is set for every end but STORE_ENDED_MARK, and
 * STORE_ENDED_DAEMON_GONE records store_prev_daemon's note as end_note.  With
 * complete, the window is completed once the rows over its end are in;
 * without (a window that spanned the time the daemon was not running),
 * store_windows_abandon marks it never complete, and nothing can complete
 * it in between.
 */
int store_window_end(struct store *st, int64_t id, int64_t end_ns,
    enum store_ended_by by, const struct clocksync *clock, bool complete);
/*
 * store_window_end, with meta_json (a JSON object of strings; NULL: none)
 * merged into the window's metadata in the same statement: the pairs an
 * end adds (spyremon mark end's vLLM counters).
 */
int store_window_end_meta(struct store *st, int64_t id, int64_t end_ns,
    enum store_ended_by by, const struct clocksync *clock, bool complete,
    const char *meta_json);

/*
 * Record that the source's child was restarted restarts times while
 * window id was open.
 */
int store_window_set_restarts(struct store *st, int64_t id, unsigned restarts);

/* Record how long window id ran by the daemon's monotonic clock. */
int store_window_set_run(struct store *st, int64_t id, int64_t run_ns);

/*
 * Add sentence note to window id's end_note (after what it holds, "; "
 * between), once: a sentence it already holds is not added again.
 */
int store_window_add_note(struct store *st, int64_t id, const char *note);

/*
 * Ask the thread to summarize every window that ended at least settle_ns
 * before its now and has no summary yet: those left from before this
 * start and those of a database from before summaries.  It works through
 * them in bounded steps between its other work (store_summary.c); now_ns
 * is not used.  0.
 */
int store_windows_summarize_due(struct store *st, int64_t now_ns,
    int64_t settle_ns, int64_t idle_lookback_ns);

/*
 * The windows ended so far that are not complete never will be (those the
 * daemon ends as it starts, for a process gone or max_open passed while it
 * was not running, ended without completion): the thread marks them
 * incomplete as it did those left ended by the last daemon.  0, or -1 if
 * out of memory.
 */
int store_windows_abandon(struct store *st);

/* ---- complete windows (writer_sync.c) ----
 *
 * A window that has ended is complete once every sample that overlaps it
 * is committed (for each card and source still sending, up to its first
 * row that starts at or after the end; with none sending yet, since the
 * store's start, up to a first such row) and its summary with it; the windows
 * table's complete_ns says when (spyremon-schema(5)).  store_window_end
 * asks for that at once, the writer thread flushes as soon as those rows
 * are in, and readers can wait for it over the control socket. */

/* incomplete's text for a window whose daemon stopped before it was complete. */
#define STORE_WHY_ABANDONED	"spyremond stopped before it had stored all " \
	"of the window's samples"

/*
 * Ask for the samples covering through_ns to be stored (as for a window's
 * end); *ticket names the request for store_sync_pending.  -1 without
 * memory.
 */
int store_sync(struct store *st, int64_t through_ns, uint64_t *ticket);

/* The ticket of window id's completion while it is pending, else 0. */
uint64_t store_sync_window(struct store *st, int64_t window_id);

/*
 * True while the request ticket is pending, with what it waits for in why
 * (a plain sentence fragment) and the time it stores through in
 * *through_ns (if not NULL); false once done.
 */
bool store_sync_pending(struct store *st, uint64_t ticket, char *why,
    size_t len, int64_t *through_ns);

/*
 * A window completed though part of its rows could not be read (a
 * damaged page): true with the sentence saying so (its end_note) in buf,
 * for the request ticket or window window_id (0: either unknown), among
 * the last 16 such windows; false for every other.
 */
bool store_sync_note(struct store *st, uint64_t ticket, int64_t window_id,
    char *buf, size_t len);

/* A descriptor that becomes readable when requests are done; store_sync_ack
 * clears it. */
int store_sync_fd(struct store *st);
void store_sync_ack(struct store *st);

/* The windows.idle_lookback that completed windows are summarized with. */
void store_set_idle_lookback(struct store *st, int64_t lookback_ns);

/* True if the database is the file with device dev and inode ino. */
bool store_is_file(struct store *st, uint64_t dev, uint64_t ino);

/* Every open window, queued or stored, oldest first; free with
 * store_windows_free. */
int store_windows_open(struct store *st, struct store_window **out, size_t *n);

/*
 * Window id, open or not, as far as the thread remembers it (its id, and
 * the end of one of the last 64 ended; tag "" otherwise): *out is
 * a new window (free with store_windows_free(*out, 1)), or NULL if no
 * such id was given.
 */
int store_window_get(struct store *st, int64_t id, struct store_window **out);

void store_windows_free(struct store_window *w, size_t n);

/*
 * The keys of the catalog's metrics marked unreliable, in id order, as
 * read at open; free with store_strings_free.
 */
int store_unreliable_metrics(struct store *st, char ***keys, size_t *n);

/* Free n strings and the array; NULL is a no-op. */
void store_strings_free(char **strings, size_t n);

#endif
