/*
 * writer: the thread that owns the daemon's SQLite connection (contract
 * in store.h: store_open starts it).
 *
 * The event loop only ever touches memory: rows go into the store's ring
 * under st->mu, window changes, device maps, cards, aiu-smi's version and
 * deletions become
 * jobs on a queue, and store_flush only wakes this thread.  The thread
 * takes the whole ring in one pointer swap (the loop gets an empty spare),
 * writes it in one transaction, and settles: on success the taken ring
 * becomes the next spare; on failure its rows go back in front of the
 * loop's, within the same max_pending bound as ever (past it the oldest
 * are dropped and counted).  Rows taken and not yet settled count against
 * that bound, so memory stays where it was without a thread.
 *
 * Jobs run in the order they were queued and before the rows that follow
 * them; a job that fails stops the round and is retried first on the next
 * flush, so a window row reaches the database after a lock clears, never
 * out of order.  Retention runs here too, a bounded step at a time between
 * flushes, so neither a checkpoint nor a long DELETE is ever on the loop.
 *
 * Checkpoints run here on a schedule too (writer_set_checkpoint), besides
 * SQLite's own every 1000 pages: PASSIVE ones, which copy what no reader
 * still needs and wait for nobody, between this thread's own writes, so
 * that the log holds at most an interval of changes, and a damaged log
 * costs at most that much.  One that leaves frames behind (a reader holds
 * an old snapshot) is remembered, and status says when none has copied
 * every frame for an interval, with the size the log has grown to.
 *
 * Before every flush the file is checked: deleted (its path gone) or
 * replaced (another inode), the old connection is finished against its
 * own file first; then the database is created again at the path, or the
 * spyremon database found there is used, with the open windows, the device
 * map, the cards, aiu-smi's version and every pending row.  Any other file
 * there is left alone and nothing is written until it is gone.
 *
 * What touches the connection comes from storedb.c, store_windows.c,
 * store_summary.c, smiversion.c and retention.c through struct writer_ops
 * (filled in by store.c), so this file calls none of them: no circle
 * between the files.
 */
#include "store_priv.h"
#include "writer_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clocksync.h"
#include "inventory.h"
#include "timeparse.h"

/* A write still running after this long is a stall: status says so. */
#define STALL_NS		(1 * NSEC_PER_SEC)
#define WHAT_ROWS		"write rows"
#define RETENTION_EVERY_NS	(60 * NSEC_PER_SEC)
#define RETENTION_BUDGET_NS	(20 * NSEC_PER_MSEC)
/* More retention work: the next step after this pause, if nothing else is due. */
#define RETENTION_AGAIN_NS	(10 * NSEC_PER_MSEC)

/* ---- status ---- */

/* Record the start (busy) or the outcome of a write, under st->mu. */
static void
note_busy(struct store *st, const char *what)
{
	st->err_code = 0;	/* what this write fails with, if it does */
	pthread_mutex_lock(&st->mu);
	st->w->busy_since_ns = now_monotonic_ns();
	st->w->busy_what = what;
	pthread_mutex_unlock(&st->mu);
}

/* The end of a run of work that keeps no failure of its own (completions). */
static void
note_idle(struct store *st)
{
	pthread_mutex_lock(&st->mu);
	st->w->busy_since_ns = 0;
	pthread_mutex_unlock(&st->mu);
}

static void
note_outcome(struct store *st, bool ok, const char *what)
{
	struct writer *w = st->w;
	/* what the failing call recorded, before a ROLLBACK cleared it */
	int code = (st->err_code != 0 ? st->err_code :
	    sqlite3_extended_errcode(st->db)) & 0xff;
	const char *msg = st->err_code != 0 ? st->err_msg :
	    sqlite3_errmsg(st->db);
	const char *kind;

	pthread_mutex_lock(&st->mu);
	w->busy_since_ns = 0;
	if (ok)
		w->failing_since_ns = 0;
	else {
		if (w->failing_since_ns == 0)
			w->failing_since_ns = now_monotonic_ns();
		kind = code == SQLITE_BUSY || code == SQLITE_LOCKED ? "locked" :
		    code == SQLITE_FULL ? "disk full" :
		    code == SQLITE_IOERR ? "I/O error" : "error";
		snprintf(w->why, sizeof(w->why), "%s: %s: %s", kind, what, msg);
	}
	pthread_mutex_unlock(&st->mu);
}

void
writer_stats(struct store *st, struct store_stats *out)
{
	struct writer *w = st->w;
	uint64_t now = now_monotonic_ns();

	out->threaded = true;
	out->jobs_queued = w->njobs;
	out->recreated = w->recreated;
	out->checkpoint_interval_ns = w->checkpoint_every_ns;
	out->checkpoint_frames_behind = w->ckpt_behind;
	if (w->ckpt_blocked_since_ns != 0) {
		out->checkpoint_blocked_ns = now - w->ckpt_blocked_since_ns;
		out->checkpoint_blocked =
		    out->checkpoint_blocked_ns >= w->checkpoint_every_ns;
	}
	if (w->failing_since_ns != 0) {
		out->stalled = true;
		out->stalled_ns = now - w->failing_since_ns;
		snprintf(out->why, sizeof(out->why), "%s", w->why);
	} else if (w->busy_since_ns != 0 && now - w->busy_since_ns > STALL_NS) {
		out->stalled = true;
		out->stalled_ns = now - w->busy_since_ns;
		if (w->busy_what == NULL || strcmp(w->busy_what, WHAT_ROWS) == 0)
			snprintf(out->why, sizeof(out->why), "a write has not "
			    "returned (slow disk, or a long checkpoint)");
		else
			snprintf(out->why, sizeof(out->why), "busy: %s (%zu "
			    "window completions and %zu changes waiting)",
			    w->busy_what, w->nsyncs, w->njobs);
	}
}

int
store_unreliable_metrics(struct store *st, char ***keys, size_t *n)
{
	struct writer *w = st->w;

	*keys = NULL;
	*n = 0;
	if (w->nunreliable == 0)
		return 0;
	if ((*keys = calloc(w->nunreliable, sizeof(**keys))) == NULL)
		return -1;
	for (size_t i = 0; i < w->nunreliable; i++)
		if (((*keys)[i] = strdup(w->unreliable[i])) == NULL) {
			writer_strings_free(*keys, i);
			*keys = NULL;
			return -1;
		}
	*n = w->nunreliable;
	return 0;
}

/* ---- rows ---- */

/* Copy the row at position from of src to position to of dst, ncells cells. */
static void
row_copy(struct rowring *dst, size_t to, const struct rowring *src,
    size_t from, size_t ncells)
{
	memcpy(rowring_row(dst, to), rowring_row(src, from), src->spec.row_bytes);
	for (int a = 0; a < ROWRING_CELL_ARRAYS; a++)
		if (src->cells[a] != NULL && dst->cells[a] != NULL)
			memcpy(rowring_cells(dst, a, to),
			    rowring_cells(src, a, from),
			    ncells * src->spec.cell_bytes[a]);
}

/*
 * Under st->mu: take the loop's rows (O(1)); the loop goes on with the
 * spare, or an empty ring that grows as it needs.
 */
static void
take(struct store *st, struct rowring *batch)
{
	struct writer *w = st->w;

	*batch = st->pool;
	if (w->spare.cap > 0 && w->spare.stride >= st->cat.n) {
		st->pool = w->spare;
		rowring_init(&w->spare, &batch->spec, 1);
	} else {
		rowring_free(&w->spare);
		rowring_init(&st->pool, &batch->spec, batch->stride);
	}
	rowring_clear(&st->pool);
	st->inflight = batch->n;
	w->taken_seq = st->appended;
}

/* Drop from batch the rows a deletion queued after the take removes. */
static void
prune(struct writer *w, struct rowring *batch, size_t ncols)
{
	for (const struct job *j = w->head; j != NULL; j = j->next) {
		size_t kept = 0;

		if (j->kind != JOB_DELETE_AFTER)
			continue;
		for (size_t i = 0; i < batch->n; i++) {
			size_t from = rowring_at(batch, i);
			const struct pending_row *r = rowring_row(batch, from);

			if (r->device == j->device && r->src == j->src &&
			    r->ts_ns > j->ns)
				continue;
			if (kept != i)
				rowring_copy(batch, rowring_at(batch, kept), from,
				    ncols);
			kept++;
		}
		batch->n = kept;
	}
}

/*
 * Under st->mu: after a failed write, put batch's rows back in front of
 * the loop's, keeping at most max_pending (the oldest are dropped and
 * counted).  Rows the loop could not buffer meanwhile were dropped already.
 */
static void
give_back(struct store *st, struct rowring *batch)
{
	struct rowring merged;
	size_t total, skip = 0, stride;

	prune(st->w, batch, st->cat.n);
	total = batch->n + st->pool.n;
	stride = st->pool.stride > batch->stride ? st->pool.stride : batch->stride;
	if (total > st->max_pending)
		skip = total - st->max_pending;
	rowring_init(&merged, &st->pool.spec, stride);
	if (rowring_resize(&merged, total - skip > 0 ? total - skip : 1,
	    stride) == -1) {
		st->rows_dropped += batch->n;
		log_warnx("%s: out of memory: %zu rows dropped", st->path,
		    batch->n);
		rowring_free(batch);
		return;
	}
	for (size_t i = 0; i < batch->n + st->pool.n; i++) {
		const struct rowring *src = i < batch->n ? batch : &st->pool;
		size_t at = i < batch->n ? i : i - batch->n;

		if (skip > 0) {
			skip--;
			st->rows_dropped++;
			continue;
		}
		row_copy(&merged, rowring_push(&merged), src,
		    rowring_at(src, at), st->cat.n);
	}
	rowring_free(&st->pool);
	st->pool = merged;
	rowring_free(batch);
}

/* Keep batch, written, as the next spare (under st->mu). */
static void
keep_spare(struct writer *w, struct rowring *batch)
{
	rowring_clear(batch);
	if (w->spare.cap == 0) {
		rowring_free(&w->spare);
		w->spare = *batch;
	} else
		rowring_free(batch);
}

static bool run_jobs(struct store *st);

/*
 * Run the queued jobs, then write the loop's rows in one transaction
 * (dbmu held).  The rows are taken only with no job queued: a deletion
 * queued after them must run before they are written.
 */
static void
flush(struct store *st)
{
	struct writer *w = st->w;
	struct rowring batch;
	size_t skipped = 0;
	uint64_t errors = atomic_load(&st->sql_errors);
	bool ok, counters;

	/* the failures met since the last flush go into the counters table */
	if (errors > st->errors_counted) {
		store_counter_add(st, STORE_COUNTER_ERRORS,
		    errors - st->errors_counted);
		st->errors_counted = errors;
	}
	for (;;) {
		if (!run_jobs(st))
			return;
		pthread_mutex_lock(&st->mu);
		if (w->head == NULL)
			break;
		pthread_mutex_unlock(&st->mu);
	}
	take(st, &batch);
	counters = store_counters_pending(st);
	pthread_mutex_unlock(&st->mu);
	if (batch.n == 0 && !counters) {
		pthread_mutex_lock(&st->mu);
		st->inflight = 0;
		w->committed_seq = w->taken_seq;
		keep_spare(w, &batch);
		pthread_mutex_unlock(&st->mu);
		return;
	}
	note_busy(st, WHAT_ROWS);
	ok = w->ops.rows_write(st, &batch, &skipped) == 0;
	note_outcome(st, ok, WHAT_ROWS);
	pthread_mutex_lock(&st->mu);
	st->inflight = 0;
	if (ok) {
		st->rows_written += batch.n - skipped;
		st->rows_dropped += skipped;
		w->committed_seq = w->taken_seq;
		keep_spare(w, &batch);
	} else {
		st->flushes_failed++;
		give_back(st, &batch);
	}
	pthread_mutex_unlock(&st->mu);
}

/* ---- a database deleted or replaced under us ---- */

/* Put back what the new database must hold, in this order. */
static void
restore(struct store *st)
{
	struct writer *w = st->w;

	for (size_t i = 0; i < w->nopen; i++)
		if (w->ops.window_insert(st, &w->open[i].win, &w->open[i].clock,
		    w->open[i].restarts) == -1)
			log_warnx("%s: window %" PRId64 " could not be stored "
			    "again", st->path, w->open[i].win.id);
	for (size_t i = 0; i < w->nmaps; i++)
		(void)w->ops.device_map(st, w->maps[i]->device,
		    w->maps[i]->metric_file, w->maps[i]->bus_id, w->maps[i]->ns);
	for (size_t i = 0; i < w->ncards; i++)
		(void)w->ops.card(st, &w->cards[i]->card, w->cards[i]->ns);
	if (w->version != NULL)
		(void)w->ops.smi_version(st, w->version->version,
		    w->version->ns);
}

/* Under st->mu: writes stop for a reason that is not SQLite's. */
static void
note_stopped(struct writer *w, const char *why)
{
	w->busy_since_ns = 0;
	if (w->failing_since_ns == 0)
		w->failing_since_ns = now_monotonic_ns();
	snprintf(w->why, sizeof(w->why), "%s", why);
}

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
static bool
check_replaced(struct store *st)
{
	struct writer *w = st->w;
	struct stat sb;
	char why[96], msg[sizeof(w->why)];
	int64_t max_id = 0;
	bool gone;
	int rc;

	gone = stat(st->path, &sb) == -1;
	if (gone && errno != ENOENT)
		return st->db != NULL;	/* unreadable for a moment: not proof */
	if (st->db != NULL) {
		if (!gone && sb.st_dev == st->dev && sb.st_ino == st->ino)
			return true;
		log_warnx("%s: the database file was %s under the daemon",
		    st->path, gone ? "deleted" : "replaced");
	}
	why[0] = '\0';
	pthread_mutex_lock(&st->mu);
	rc = w->ops.reopen(st, why, sizeof(why));
	if (rc == 1) {
		snprintf(msg, sizeof(msg), "refused: the path now holds %s; "
		    "it is left untouched and nothing is written", why);
		note_stopped(w, msg);
	} else if (rc == -1)
		note_stopped(w, "cannot open the database again (see the log)");
	else {
		w->recreated++;
		w->refused[0] = '\0';
		/* a restored database may hold later windows: no id given twice */
		if (w->ops.max_window_id(st, &max_id) == 0 &&
		    max_id > w->next_window_id)
			w->next_window_id = max_id;
	}
	pthread_mutex_unlock(&st->mu);
	if (rc == 1) {
		if (strcmp(w->refused, why) != 0)
			log_warnx("%s: now holds %s, not a spyremon database: "
			    "left untouched; samples are buffered (then dropped "
			    "and counted) until it is moved away", st->path, why);
		snprintf(w->refused, sizeof(w->refused), "%s", why);
		return false;
	}
	if (rc == -1)
		return false;
	restore(st);
	if (gone)
		log_notice("%s: created again", st->path);
	else
		log_notice("%s: the spyremon database now at the path is "
		    "used, with all its contents", st->path);
	return true;
}

/* ---- a damaged page met while running ---- */

/* Add id to the windows carried into the fresh database (dbmu held). */
static void
carry(struct store *st, int64_t id, int64_t since_ns)
{
	struct store_carried *c;

	for (size_t i = 0; i < st->ncarried; i++)
		if (st->carried[i].id == id)
			return;
	if ((c = reallocarray(st->carried, st->ncarried + 1,
	    sizeof(*c))) == NULL)
		return;		/* its summary then does not say where the rest is */
	st->carried = c;
	c[st->ncarried++] = (struct store_carried){ id, since_ns };
}

/*
 * A damaged page was met (st->sql_corrupt grew: a write, a summary or the
 * scheduled check): log it at once, copy the file aside byte for byte
 * (store_keep_aside, as for a damaged log at start) and go on in a fresh
 * database at the path, with the open windows and those waiting for their
 * completion, whose summaries then say where their earlier rows are
 * (dbmu held).  Without a copy nothing is removed, and it is not tried
 * again.
 */
static void
switch_damaged(struct store *st)
{
	struct writer *w = st->w;
	struct store_window **pend = NULL;
	int64_t *ids = NULL;
	size_t npend = 0;
	char kept[sizeof(st->carried_kept)], why[sizeof(st->err_status)];
	int64_t now = now_realtime_ns();

	w->corrupt_seen = atomic_load(&st->sql_corrupt);
	if (st->db == NULL || w->damage_gave_up)
		return;
	pthread_mutex_lock(&st->errmu);
	snprintf(why, sizeof(why), "%s", st->err_status);
	pthread_mutex_unlock(&st->errmu);
	log_warnx("%s: DAMAGED: %s; keeping the file aside and going on in a "
	    "fresh database", st->path, why);
	/* the windows waiting for their completion, as the old file has them */
	pthread_mutex_lock(&st->mu);
	if (w->nsyncs > 0 && (ids = calloc(w->nsyncs, sizeof(*ids))) != NULL &&
	    (pend = calloc(w->nsyncs, sizeof(*pend))) == NULL) {
		free(ids);
		ids = NULL;
	}
	for (size_t i = 0; ids != NULL && i < w->nsyncs; i++)
		if (w->syncs[i].window_id > 0)
			ids[npend++] = w->syncs[i].window_id;
	pthread_mutex_unlock(&st->mu);
	for (size_t i = 0; i < npend; i++) {
		if (w->ops.window_get(st, ids[i], &pend[i]) == -1 ||
		    pend[i] == NULL)
			log_warnx("%s: window %" PRId64 " cannot be read from "
			    "the damaged file: it is not carried over", st->path,
			    ids[i]);
		if (pend[i] != NULL && pend[i]->end_ns == 0) {
			writer_windows_free(pend[i], 1);	/* open: restore's */
			pend[i] = NULL;
		}
	}
	if (w->ops.move_damaged(st, kept, sizeof(kept)) == -1) {
		log_warnx("%s: the damaged database could not be kept aside: "
		    "writes go on into it", st->path);
		w->damage_gave_up = true;
		st->damage_stays = true;	/* windows complete in it */
		goto out;
	}
	log_warnx("%s: DAMAGED: the original is kept as %s (and -wal, -shm)",
	    st->path, kept);
	snprintf(st->carried_kept, sizeof(st->carried_kept), "%s", kept);
	snprintf(st->carried_why, sizeof(st->carried_why), "%.*s",
	    (int)sizeof(st->carried_why) - 1, strstr(why, ": ") != NULL ?
	    strstr(why, ": ") + 2 : why);
	pthread_mutex_lock(&st->mu);
	st->damaged = true;
	st->damaged_running = true;
	snprintf(st->damaged_found, sizeof(st->damaged_found), "%.*s",
	    (int)sizeof(st->damaged_found) - 1, why);
	snprintf(st->damaged_kept, sizeof(st->damaged_kept), "%s", kept);
	pthread_mutex_unlock(&st->mu);
	/* the path is empty now: made anew with the open windows */
	if (!check_replaced(st))
		goto out;
	for (size_t i = 0; i < w->nopen; i++)
		carry(st, w->open[i].win.id, now);
	for (size_t i = 0; i < npend; i++) {
		struct store_window open;

		if (pend[i] == NULL)
			continue;
		open = *pend[i];
		open.end_ns = 0;
		if (w->ops.window_insert(st, &open, NULL, 0) == -1 ||
		    w->ops.window_end(st, pend[i],
		    pend[i]->auto_closed ? STORE_ENDED_MAX_OPEN :
		    STORE_ENDED_MARK, NULL, NULL) == -1)
			log_warnx("%s: window %" PRId64 " could not be carried "
			    "over", st->path, open.id);
		else
			carry(st, open.id, now);
	}
	store_counter_add(st, STORE_COUNTER_DAMAGED, 1);
	w->check_cursor = INT64_MIN;
out:
	for (size_t i = 0; i < npend; i++)
		if (pend[i] != NULL)
			writer_windows_free(pend[i], 1);
	free(pend);
	free(ids);
	w->corrupt_seen = atomic_load(&st->sql_corrupt);
}

/*
 * The scheduled check for damage no read reaches: a slice of the samples
 * through a connection of its own (store_check_slice); damage found is
 * counted like any other, and the caller moves on.
 */
static void
check_step(struct store *st)
{
	char why[96];

	if (store_check_slice(st->path, &st->w->check_cursor, why,
	    sizeof(why)) == 1)
		sql_note(st, "check the samples", SQLITE_CORRUPT, why);
}

/* ---- the thread ---- */

/* Run the queued jobs in order (dbmu held); false if one failed (kept first). */
static bool
run_jobs(struct store *st)
{
	struct writer *w = st->w;
	struct job *j;
	bool ok = true;

	for (;;) {
		pthread_mutex_lock(&st->mu);
		j = w->head;
		pthread_mutex_unlock(&st->mu);
		if (j == NULL)
			break;
		note_busy(st, "store a window or inventory change");
		ok = writer_job_run(st, j) == 0;
		note_outcome(st, ok, "store a window or inventory change");
		pthread_mutex_lock(&st->mu);
		w->jobs_failed = !ok;
		if (!ok) {
			pthread_mutex_unlock(&st->mu);
			break;
		}
		w->head = j->next;
		if (w->head == NULL)
			w->tail = NULL;
		w->njobs--;
		pthread_mutex_unlock(&st->mu);
		if ((j->kind == JOB_DEVICE_MAP &&
		    writer_job_remember(&w->maps, &w->nmaps, j)) ||
		    (j->kind == JOB_CARD && writer_job_remember(&w->cards, &w->ncards, j)))
			continue;
		if (j->kind == JOB_SMI_VERSION) {
			writer_job_free(w->version);
			w->version = j;
			continue;
		}
		writer_job_free(j);
	}
	return ok;
}

static void
retention_step(struct store *st, const struct store_retention *r)
{
	int more;

	note_busy(st, "retention");
	more = st->w->ops.retention_step(st, r, now_realtime_ns(),
	    RETENTION_BUDGET_NS);
	note_outcome(st, more != -1, "retention");
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

	note_busy(st, "checkpoint");
	rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
	    &logged, &copied);
	note_idle(st);
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
	note_busy(st, "summarize the windows left from before");
	sqlite3_progress_handler(st->db, SUMMARIZE_PROGRESS_OPS,
	    summarize_interrupted, w);
	rc = w->ops.summarize_due(st, now_realtime_ns(), settle_ns,
	    idle_lookback_ns, false);
	sqlite3_progress_handler(st->db, 0, NULL, NULL);
	if (atomic_load(&w->stopping))
		return;		/* left for the next start */
	note_outcome(st, rc != -1, "summarize windows");
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
	flush(st);
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
			if (check_replaced(st)) {
				flush(st);
				update_size(st);
				note_busy(st, "complete ended windows (their "
				    "summaries)");
				writer_sync_finish(st);
				note_idle(st);
			}
		} else if (st->db == NULL)
			;		/* nothing to write to */
		else if (do_jobs)
			(void)run_jobs(st);
		else if (do_retention)
			retention_step(st, &r);
		else if (do_checkpoint) {
			checkpoint_step(st);
			check_step(st);
		}
		/* after the flush: the rows up to a window's end are in */
		if (do_summarize && st->db != NULL)
			summarize_step(st, settle_ns, idle_lookback_ns);
		/* a damaged page met by any of it: a fresh database, at once */
		if (atomic_load(&st->sql_corrupt) != w->corrupt_seen) {
			switch_damaged(st);
			if (st->db != NULL) {
				/* the completions waiting go on in it now */
				flush(st);
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
		(void)run_jobs(st);
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
