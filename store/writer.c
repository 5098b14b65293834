/*
 * writer: the thread that owns the daemon's SQLite connection (contract
 * in store.h: store_open starts it), its loop and what it runs between
 * flushes.
 *
 * The event loop only ever touches memory: rows go into the store's ring
 * under st->mu, window changes, device maps, cards, aiu-smi's version and
 * deletions become jobs on a queue (writer_jobs.c), and store_flush only
 * wakes this thread.  A flush runs the jobs, then writes the rows
 * (writer_flush.c), after the file under the connection is checked
 * (writer_recover.c); what it does and how it went is kept for status
 * (writer_status.c).  Retention runs here too, a bounded step at a time
 * between flushes, so neither a checkpoint nor a long DELETE is ever on
 * the loop.
 *
 * Checkpoints run here on a schedule too (writer_set_checkpoint), besides
 * SQLite's own every 1000 pages: PASSIVE ones, which copy what no reader
 * still needs and wait for nobody, between this thread's own writes, so
 * that the log holds at most an interval of changes, and a damaged log
 * costs at most that much.  One that leaves frames behind (a reader holds
 * an old snapshot) is remembered, and status says when none has copied
 * every frame for an interval, with the size the log has grown to.
 *
 * What touches the connection comes from storedb.c, store_windows.c,
 * store_summary.c, smiversion.c and retention.c through struct writer_ops
 * (filled in by store.c), so none of the writer's files calls them: no
 * circle between the files.
 */
#include "store_priv.h"
#include "writer_priv.h"

#include <stdlib.h>

#include "timeparse.h"

#define RETENTION_EVERY_NS	(60 * NSEC_PER_SEC)
#define RETENTION_BUDGET_NS	(20 * NSEC_PER_MSEC)
/* More retention work: the next step after this pause, if nothing else is due. */
#define RETENTION_AGAIN_NS	(10 * NSEC_PER_MSEC)

/* ---- the thread ---- */

static void
retention_step(struct store *st, const struct store_retention *r)
{
	int more;

	writer_status_busy(st, "retention");
	more = st->w->ops.retention_step(st, r, now_realtime_ns(),
	    RETENTION_BUDGET_NS);
	writer_status_outcome(st, more != -1, "retention");
	pthread_mutex_lock(&st->mu);
	st->w->next_retention_ns = now_monotonic_ns() + (more == 1 ?
	    RETENTION_AGAIN_NS : RETENTION_EVERY_NS);
	pthread_mutex_unlock(&st->mu);
}

/*
 * A scheduled checkpoint: PASSIVE, so it copies the frames no reader still
 * needs and waits for no one; the frames it leaves are what a reader's
 * snapshot holds back (or another connection's checkpoint, running).
 */
static void
checkpoint_step(struct store *st)
{
	struct writer *w = st->w;
	int logged = 0, copied = 0, rc;
	uint64_t now;

	writer_status_busy(st, "checkpoint");
	rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
	    &logged, &copied);
	writer_status_idle(st);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)	/* counted for status */
		sql_note(st, "checkpoint", sqlite3_extended_errcode(st->db),
		    sqlite3_errmsg(st->db));
	now = now_monotonic_ns();
	pthread_mutex_lock(&st->mu);
	w->next_checkpoint_ns = now + w->checkpoint_every_ns;
	if (rc == SQLITE_OK && copied >= logged) {
		w->ckpt_blocked_since_ns = 0;
		w->ckpt_behind = 0;
	} else {
		if (w->ckpt_blocked_since_ns == 0)
			w->ckpt_blocked_since_ns = now;
		w->ckpt_behind = rc == SQLITE_OK ? logged - copied : logged;
	}
	pthread_mutex_unlock(&st->mu);
}

void
writer_set_checkpoint(struct store *st, uint64_t ns)
{
	pthread_mutex_lock(&st->mu);
	st->w->checkpoint_every_ns = ns;
	st->w->next_checkpoint_ns = now_monotonic_ns() + ns;
	pthread_cond_signal(&st->w->cv);
	pthread_mutex_unlock(&st->mu);
}

/*
 * A summary of a window left from before may have to learn the idle power
 * afresh: that reads every sample of the look-back, up to 30 days of them.
 * A stop does not wait for it: every SUMMARIZE_PROGRESS_OPS virtual
 * machine steps SQLite asks whether to go on, and a stop interrupts the
 * summary, whose transaction is rolled back (the window is summarized at
 * the next start).
 */
#define SUMMARIZE_PROGRESS_OPS	10000

static int
summarize_interrupted(void *arg)
{
	struct writer *w = arg;

	return atomic_load(&w->stopping);
}

/*
 * Summarize the windows due (store_windows_summarize_due), one bounded
 * step at a time, only while writes go through: with the database locked or full it would fail as
 * well, and the next flush tick asks again.
 */
static void
summarize_step(struct store *st, int64_t settle_ns, int64_t idle_lookback_ns)
{
	struct writer *w = st->w;
	bool healthy;
	int rc;

	pthread_mutex_lock(&st->mu);
	healthy = !w->jobs_failed && w->failing_since_ns == 0;
	pthread_mutex_unlock(&st->mu);
	if (!healthy)
		return;
	writer_status_busy(st, "summarize the windows left from before");
	sqlite3_progress_handler(st->db, SUMMARIZE_PROGRESS_OPS,
	    summarize_interrupted, w);
	rc = w->ops.summarize_due(st, now_realtime_ns(), settle_ns,
	    idle_lookback_ns, false);
	sqlite3_progress_handler(st->db, 0, NULL, NULL);
	if (atomic_load(&w->stopping))
		return;		/* left for the next start */
	writer_status_outcome(st, rc != -1, "summarize windows");
	if (rc == 1) {
		/* more are left: the next step after what is queued meanwhile */
		pthread_mutex_lock(&st->mu);
		w->summarize_req = true;
		pthread_mutex_unlock(&st->mu);
	}
}

static void
update_size(struct store *st)
{
	int64_t pages, page_size;

	if (sql_pragma_int(st->db, "page_count", &pages) == 0 &&
	    sql_pragma_int(st->db, "page_size", &page_size) == 0) {
		pthread_mutex_lock(&st->mu);
		st->file_bytes = (uint64_t)pages * (uint64_t)page_size;
		pthread_mutex_unlock(&st->mu);
	}
}

/*
 * Under st->mu: the thread has nothing to do before its next deadline.
 * Without a connection (the path holds another file) only a flush, to
 * look at the path again, or the stop is work.
 */
static bool
idle(const struct store *st, const struct writer *w, uint64_t now)
{
	if (st->db == NULL)
		return !w->stop && !w->flush_req;
	return !w->stop && !w->flush_req && !w->summarize_req &&
	    !w->sync_check && !(w->head != NULL && !w->jobs_failed) &&
	    !(w->have_ret && now >= w->next_retention_ns) &&
	    !(w->checkpoint_every_ns > 0 && now >= w->next_checkpoint_ns) &&
	    now < w->sync_next_ns;
}

/*
 * A clean stop finishes the job: the rows appended until now (the source
 * has stopped), then every window whose end they cover (dbmu held).
 */
static void
finish(struct store *st)
{
	if (st->db == NULL)
		return;
	pthread_mutex_lock(&st->mu);
	(void)writer_sync_eval(st, true, &st->w->sync_next_ns);
	pthread_mutex_unlock(&st->mu);
	writer_flush(st);
	writer_sync_finish(st);
}

static void *
writer_main(void *arg)
{
	struct store *st = arg;
	struct writer *w = st->w;
	struct store_retention r;
	struct timespec until;
	bool do_flush, do_jobs, do_retention, do_summarize, do_sync;
	bool do_checkpoint;
	int64_t settle_ns, idle_lookback_ns;
	uint64_t now, wake;

	pthread_mutex_lock(&st->mu);
	for (;;) {
		now = now_monotonic_ns();
		/* a queued change is stored at once, unless it just failed */
		while (idle(st, w, now)) {
			wake = st->db == NULL ? UINT64_MAX : w->sync_next_ns;
			if (st->db != NULL && w->have_ret &&
			    w->next_retention_ns < wake)
				wake = w->next_retention_ns;
			if (st->db != NULL && w->checkpoint_every_ns > 0 &&
			    w->next_checkpoint_ns < wake)
				wake = w->next_checkpoint_ns;
			if (wake != UINT64_MAX) {
				until.tv_sec = (time_t)(wake / NSEC_PER_SEC);
				until.tv_nsec = (long)(wake % NSEC_PER_SEC);
				pthread_cond_timedwait(&w->cv, &st->mu, &until);
			} else
				pthread_cond_wait(&w->cv, &st->mu);
			now = now_monotonic_ns();
		}
		if (w->stop)
			break;
		/* the rows that cover a pending time are in: store them now */
		do_sync = writer_sync_eval(st, false, &w->sync_next_ns);
		do_flush = w->flush_req || do_sync;
		w->flush_req = false;
		do_jobs = !do_flush && w->head != NULL && !w->jobs_failed;
		do_retention = !do_flush && !do_jobs && w->have_ret &&
		    now >= w->next_retention_ns;
		do_checkpoint = !do_flush && !do_jobs && !do_retention &&
		    w->checkpoint_every_ns > 0 && now >= w->next_checkpoint_ns;
		do_summarize = w->summarize_req;
		w->summarize_req = false;
		settle_ns = w->settle_ns;
		idle_lookback_ns = w->idle_lookback_ns;
		r = w->ret;
		pthread_mutex_unlock(&st->mu);

		pthread_mutex_lock(&st->dbmu);
		if (do_flush) {
			if (writer_recover_replaced(st)) {
				writer_flush(st);
				update_size(st);
				writer_status_busy(st, "complete ended windows (their "
				    "summaries)");
				writer_sync_finish(st);
				writer_status_idle(st);
			}
		} else if (st->db == NULL)
			;		/* nothing to write to */
		else if (do_jobs)
			(void)writer_flush_jobs(st);
		else if (do_retention)
			retention_step(st, &r);
		else if (do_checkpoint) {
			checkpoint_step(st);
			writer_recover_check(st);
		}
		/* after the flush: the rows up to a window's end are in */
		if (do_summarize && st->db != NULL)
			summarize_step(st, settle_ns, idle_lookback_ns);
		/* a damaged page met by any of it: a fresh database, at once */
		if (atomic_load(&st->sql_corrupt) != w->corrupt_seen) {
			writer_recover_damaged(st);
			if (st->db != NULL) {
				/* the completions waiting go on in it now */
				writer_flush(st);
				writer_sync_finish(st);
			}
		}
		pthread_mutex_unlock(&st->dbmu);
		pthread_mutex_lock(&st->mu);
		/* a mutex is not fair: without this the next step could
		 * take dbmu again before a waiting event loop wakes */
		while (st->dbmu_waiting > 0)
			pthread_cond_wait(&w->cv, &st->mu);
	}
	pthread_mutex_unlock(&st->mu);
	pthread_mutex_lock(&st->dbmu);
	finish(st);
	pthread_mutex_unlock(&st->dbmu);
	return NULL;
}

void
writer_lock_db(struct store *st)
{
	pthread_mutex_lock(&st->mu);
	st->dbmu_waiting++;
	pthread_mutex_unlock(&st->mu);
	pthread_mutex_lock(&st->dbmu);
	pthread_mutex_lock(&st->mu);
	st->dbmu_waiting--;
	pthread_cond_signal(&st->w->cv);
	pthread_mutex_unlock(&st->mu);
}

/* Wake the thread to run the queue and write the rows. */
int
store_flush(struct store *st)
{
	pthread_mutex_lock(&st->mu);
	st->w->flush_req = true;
	pthread_cond_signal(&st->w->cv);
	pthread_mutex_unlock(&st->mu);
	return 0;
}

void
store_set_retention(struct store *st, const struct store_retention *r)
{
	pthread_mutex_lock(&st->mu);
	if (!st->w->have_ret)
		st->w->next_retention_ns = now_monotonic_ns();
	st->w->ret = *r;
	st->w->have_ret = true;
	pthread_cond_signal(&st->w->cv);
	pthread_mutex_unlock(&st->mu);
}

int
writer_start(struct store *st, const struct writer_ops *ops,
    struct store_window *open, size_t nopen, int64_t max_window_id,
    char **unreliable, size_t nunreliable)
{
	struct writer *w;
	pthread_condattr_t ca;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		log_warn("%s: writer", st->path);
		writer_windows_free(open, nopen);
		writer_strings_free(unreliable, nunreliable);
		return -1;
	}
	w->ops = *ops;
	w->sync_next_ns = UINT64_MAX;
	w->ckpt_behind = -1;
	if (writer_sync_init(w) == -1) {
		writer_windows_free(open, nopen);
		writer_strings_free(unreliable, nunreliable);
		free(w);
		return -1;
	}
	if (nopen > 0 && (w->open = calloc(nopen, sizeof(*w->open))) == NULL) {
		log_warn("%s: writer", st->path);
		writer_windows_free(open, nopen);
		writer_strings_free(unreliable, nunreliable);
		writer_sync_free(w);
		free(w);
		return -1;
	}
	/* the tag and meta move over; the clock at the begin and the restarts
	 * are read here, before the thread owns the connection, so that a
	 * recreated database gets them back too (unknown if that read fails) */
	for (size_t i = 0; i < nopen; i++) {
		w->open[i].win = open[i];
		(void)ops->window_begin_state(st, open[i].id,
		    &w->open[i].clock, &w->open[i].restarts);
	}
	free(open);
	w->nopen = nopen;
	w->next_window_id = max_window_id;
	w->unreliable = unreliable;
	w->nunreliable = nunreliable;
	rowring_init(&w->spare, &st->pool.spec, 1);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	st->w = w;
	update_size(st);
	if (pthread_create(&w->th, NULL, writer_main, st) != 0) {
		log_warnx("%s: cannot start the writer thread", st->path);
		st->w = NULL;
		pthread_cond_destroy(&w->cv);
		writer_open_free(w->open, w->nopen);
		writer_strings_free(w->unreliable, w->nunreliable);
		writer_sync_free(w);
		free(w);
		return -1;
	}
	return 0;
}

void
writer_stop(struct store *st)
{
	struct writer *w = st->w;

	pthread_mutex_lock(&st->mu);
	w->stop = true;
	atomic_store(&w->stopping, true);
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&st->mu);
	pthread_join(w->th, NULL);
	/* what is still queued is written now, in this thread */
	if (st->db != NULL)
		(void)writer_flush_jobs(st);
	for (struct job *j = w->head, *next; j != NULL; j = next) {
		next = j->next;
		log_warnx("%s: a window or inventory change could not be "
		    "stored", st->path);
		writer_job_free(j);
	}
	st->w = NULL;
	pthread_cond_destroy(&w->cv);
	rowring_free(&w->spare);
	writer_open_free(w->open, w->nopen);
	for (size_t i = 0; i < w->nmaps; i++)
		writer_job_free(w->maps[i]);
	for (size_t i = 0; i < w->ncards; i++)
		writer_job_free(w->cards[i]);
	free(w->maps);
	free(w->cards);
	writer_job_free(w->version);
	for (size_t i = 0; i < ENDED_KEPT; i++)
		free(w->ended[i].tag);
	writer_strings_free(w->unreliable, w->nunreliable);
	writer_sync_free(w);
	free(w);
}
