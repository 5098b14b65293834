/*
 * writer_flush: what the writer thread commits at a flush, and in what
 * order (contracts in writer_priv.h): the queued jobs first, in the order
 * they were queued, then the loop's rows in one transaction.
 *
 * The thread takes the whole ring in one pointer swap (the loop gets an
 * empty spare), writes it in one transaction, and settles: on success the
 * taken ring becomes the next spare; on failure its rows go back in front
 * of the loop's, within the same max_pending bound as ever (past it the
 * oldest are dropped and counted).  Rows taken and not yet settled count
 * against that bound, so memory stays where it was without a thread.
 *
 * Jobs run before the rows that follow them; a job that fails stops the
 * round and is retried first on the next flush, so a window row reaches
 * the database after a lock clears, never out of order.  A job that a
 * recreated database must get back (a device map, a card, aiu-smi's
 * version) is kept once it ran (writer_jobs.c).
 */
#include "store_priv.h"
#include "writer_priv.h"

#include <string.h>

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

bool
writer_flush_jobs(struct store *st)
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
		writer_status_busy(st, "store a window or inventory change");
		ok = writer_job_run(st, j) == 0;
		writer_status_outcome(st, ok, "store a window or inventory change");
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


/* The rows are taken only with no job queued: a deletion queued after
 * them must run before they are written. */
void
writer_flush(struct store *st)
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
		if (!writer_flush_jobs(st))
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
	writer_status_busy(st, WRITER_WHAT_ROWS);
	ok = w->ops.rows_write(st, &batch, &skipped) == 0;
	writer_status_outcome(st, ok, WRITER_WHAT_ROWS);
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
