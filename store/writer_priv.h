/*
 * writer_priv: what the writer thread's files share, and the calls each
 * offers the ones above it.  Bottom up: writer_jobs.c, the queue of
 * changes other than rows, and writer_sync.c, the requests that what
 * covers a time be stored; writer_status.c, what the thread is doing, for
 * status; writer_flush.c, the jobs then the rows at a flush;
 * writer_recover.c, a database deleted, replaced or damaged under the
 * thread; writer.c, the thread's loop, start and stop.  Not for the rest
 * of the store: it reaches the thread through the writer_* calls of
 * store_priv.h.
 */
#ifndef SPYREMON_WRITER_PRIV_H
#define SPYREMON_WRITER_PRIV_H

#include "store_priv.h"

#include <stdatomic.h>

#include "clocksync.h"
#include "inventory.h"

#define ENDED_KEPT		64	/* ended windows remembered for messages */
/* What status calls the write of the rows (writer_flush.c, writer_status.c). */
#define WRITER_WHAT_ROWS	"write rows"

enum job_kind {
	JOB_WINDOW_BEGIN, JOB_WINDOW_END, JOB_DELETE_AFTER, JOB_DEVICE_MAP,
	JOB_CARD, JOB_WINDOW_RESTARTS, JOB_WINDOW_RUN, JOB_WINDOW_NOTE,
	JOB_SMI_VERSION, JOB_WINDOWS_ABANDONED, JOB_CLOCK_STEP,
};

struct job {
	struct job *next;
	enum job_kind kind;
	struct store_window win;	/* WINDOW_BEGIN (all), WINDOW_END (id, end_ns, meta_json: NULL or the pairs merged), RESTARTS (id) */
	struct clocksync clock;		/* WINDOW_BEGIN, WINDOW_END: known or not */
	enum store_ended_by by;		/* WINDOW_END */
	unsigned restarts;		/* WINDOW_RESTARTS */
	int device, src;		/* DELETE_AFTER (both), DEVICE_MAP */
	int64_t ns;			/* DELETE_AFTER: after; DEVICE_MAP, CARD, SMI_VERSION: since; WINDOW_RUN: run */
	char *metric_file, *bus_id;	/* DEVICE_MAP */
	char *version;			/* SMI_VERSION */
	char *note;			/* WINDOW_NOTE (win.id too) */
	struct card card;		/* CARD */
	struct store_epoch_step step;	/* CLOCK_STEP */
};

/*
 * A request for the samples that cover through_ns to be stored
 * (writer_sync.c): first every live stream must have appended a row
 * stamped at or after through_ns (or the deadline passes); then the rows
 * appended until then (seq) must be committed; then, for a window, its
 * summary and complete_ns.
 */
struct sync_req {
	uint64_t ticket;
	int64_t through_ns;
	int64_t window_id;		/* > 0: complete this window too */
	uint64_t deadline_ns;		/* monotonic: stop waiting for rows then */
	bool rows_in;			/* every row it needs is appended ... */
	uint64_t seq;			/* ... among the first seq rows */
};

/* An open window as stored: what a recreated database must get back. */
struct open_win {
	struct store_window win;
	struct clocksync clock;		/* at its begin */
	unsigned restarts;
};

/* A window completed with part of its rows unreadable: what its sync says. */
#define NOTES_KEPT		16
struct done_note {
	uint64_t ticket;		/* its completion's, 0 if none */
	int64_t window_id;
	char note[STORE_NOTE_LEN];	/* "" unused */
};

struct writer {
	pthread_t th;
	pthread_cond_t cv;		/* with st->mu: work for the thread */
	bool stop, flush_req, have_ret;
	atomic_bool stopping;		/* stop, read without st->mu by
					   summarize_step's progress handler */
	bool summarize_req;		/* summarize the windows due, then clear */
	int64_t settle_ns, idle_lookback_ns;	/* of the last summarize_req */
	struct job *head, *tail;	/* queued, not yet run */
	bool jobs_failed;		/* the last attempt failed: wait for a flush */
	size_t njobs;
	struct store_retention ret;
	uint64_t next_retention_ns;	/* monotonic */
	uint64_t checkpoint_every_ns;	/* 0: none scheduled */
	uint64_t next_checkpoint_ns;	/* monotonic */
	struct rowring spare;		/* an empty ring, handed to the loop at a take */
	struct writer_ops ops;

	/* under st->mu, for status */
	uint64_t busy_since_ns;		/* monotonic start of the running write, 0 idle */
	const char *busy_what;		/* what it is, for status */
	uint64_t failing_since_ns;	/* first failure of the current run of them, 0 none */
	char why[160];			/* the last failure */
	char refused[96];		/* the thread's own: what the path held, last logged */
	uint64_t recreated;
	uint64_t ckpt_blocked_since_ns;	/* monotonic: the first scheduled
					   checkpoint of a run that left frames */
	int64_t ckpt_behind;		/* frames the last one left; -1 none yet */
	int64_t next_window_id;
	char **unreliable;
	size_t nunreliable;
	struct store_window ended[ENDED_KEPT];	/* tag, end_ns, auto_closed */
	size_t nended;

	/* the thread's own: what a recreated database must get back */
	struct open_win *open;		/* windows whose begin was stored */
	size_t nopen;
	struct job **maps;		/* the newest DEVICE_MAP job per device */
	size_t nmaps;
	struct job **cards;		/* the newest CARD job per bus ID */
	size_t ncards;
	struct job *version;		/* the newest SMI_VERSION job, or NULL */

	/* requests to store what covers a time (writer_sync.c), under st->mu */
	struct sync_req *syncs;
	size_t nsyncs, syncs_cap;
	uint64_t next_ticket;
	bool sync_check;		/* a row reached a request's through_ns */
	uint64_t sync_next_ns;		/* monotonic: the earliest deadline, or UINT64_MAX */
	uint64_t taken_seq;		/* rows appended when the last batch was taken */
	uint64_t committed_seq;		/* rows appended before the last commit */
	int sync_fd;			/* eventfd: a request was done */
	struct done_note notes[NOTES_KEPT];	/* the last windows completed
						   with a damage note */
	size_t notes_next;
	int64_t started_ns;		/* realtime: the thread's start */
	int64_t lookback_ns;		/* windows.idle_lookback, for completions */

	/* damage met while running (writer_recover.c) */
	uint64_t corrupt_seen;		/* st->sql_corrupt when last looked at */
	bool damage_gave_up;		/* no copy could be made: not again */
	int64_t check_cursor;		/* the next slice store_check_slice reads */
};

/* ---- writer_jobs.c ---- */

/* Free n windows' strings and the array; NULL is a no-op. */
void writer_windows_free(struct store_window *w, size_t n);

/* Free n strings and the array; NULL is a no-op. */
void writer_strings_free(char **s, size_t n);

/* Free a job and its strings; NULL is a no-op. */
void writer_job_free(struct job *j);

/* Keep j (run) as the newest of its device or card in list; true if kept. */
bool writer_job_remember(struct job ***list, size_t *n, struct job *j);

/* Free n open windows and the array; NULL is a no-op. */
void writer_open_free(struct open_win *o, size_t n);

/* Run job j on the connection (dbmu held); 0, or -1 to retry it later. */
int writer_job_run(struct store *st, struct job *j);

/* ---- writer_sync.c ---- */

/* Set up and free the requests' state; writer_sync_init -1 logged. */
int writer_sync_init(struct writer *w);
void writer_sync_free(struct writer *w);

/* Under st->mu: queue a request (window_id 0 for a span); its ticket. */
uint64_t writer_sync_add(struct store *st, int64_t through_ns,
    int64_t window_id);

/*
 * Under st->mu: mark the requests whose rows are all appended (or whose
 * deadline passed, or all of them if force); true if any newly is, so a
 * flush must follow.  *next_ns: the earliest deadline still waited for,
 * UINT64_MAX if none.
 */
bool writer_sync_eval(struct store *st, bool force, uint64_t *next_ns);


/*
 * After a flush (dbmu held, st->mu not): complete the windows of the
 * requests whose rows are committed and tell the loop of each request
 * done.  A completion that fails stays for the next flush.
 */
void writer_sync_finish(struct store *st);

/* ---- writer_status.c ---- */

/* A write starts: what, as status names it (takes st->mu, as all three). */
void writer_status_busy(struct store *st, const char *what);
/* The end of a run of work that keeps no failure of its own (completions). */
void writer_status_idle(struct store *st);
/* How the write went; a failure's cause is what the failing call
 * recorded, else SQLite's last error on the connection. */
void writer_status_outcome(struct store *st, bool ok, const char *what);
/* Under st->mu: writes stop for a reason that is not SQLite's. */
void writer_status_stopped(struct writer *w, const char *why);

/* ---- writer_flush.c ---- */

/* Run the queued jobs in order (dbmu held); false if one failed (kept first). */
bool writer_flush_jobs(struct store *st);

/*
 * Run the queued jobs, then write the loop's rows in one transaction
 * (dbmu held); on failure the rows go back in front of the loop's.
 */
void writer_flush(struct store *st);

/* ---- writer_recover.c ---- */

/*
 * If the file at st->path is gone or another one, or st->db is closed
 * because it was, finish the old connection against its own file and open
 * what the path holds now (dbmu held): a new database if nothing, the
 * spyremon database there with all its contents, or nothing if it is
 * anything else: that file is left untouched and writes stop (the log says
 * so once per reason, status always) until the path holds nothing or a
 * spyremon database.  The pending rows stay and go into the file opened
 * with the next flush.  True if st->db is there to write.
 */
bool writer_recover_replaced(struct store *st);

/*
 * A damaged page was met (st->sql_corrupt grew: a write, a summary or the
 * scheduled check): log it at once, copy the file aside byte for byte
 * (store_keep_aside, as for a damaged log at start) and go on in a fresh
 * database at the path, with the open windows and those waiting for their
 * completion, whose summaries then say where their earlier rows are
 * (dbmu held).  Without a copy nothing is removed, and it is not tried
 * again.
 */
void writer_recover_damaged(struct store *st);

/*
 * The scheduled check for damage no read reaches: a slice of the samples
 * through a connection of its own (store_check_slice); damage found is
 * counted like any other, and the caller moves on.
 */
void writer_recover_check(struct store *st);

#endif
