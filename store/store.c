/*
 * store: the daemon's store (contract in store.h): opening and closing it,
 * the rows, the catalog, the open windows and the status.  Every call here
 * is the event loop's side of the writer thread: it touches memory under
 * st->mu (the row buffer, storebuf.c) or queues a change for the thread,
 * and only store_metric with a key the catalog lacks waits for the
 * connection.  The calls that only queue a change or read what the thread
 * keeps (the other window calls, the inventory, store_flush, the
 * unreliable metrics) are the writer's own, in writer_jobs.c, writer.c
 * and writer_status.c.  What the thread runs on the connection is in
 * storedb.c, store_windows.c, store_summary.c, smiversion.c and
 * retention.c; it reaches them through the table below.
 */
#include "store_priv.h"
#include "storedb.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "schema.h"
#include "timeparse.h"
#include "walcheck.h"

/* Scheduled checkpoints when store_options gives none: at most this much
 * of the log is ever at risk of damage. */
#define CHECKPOINT_DEFAULT_NS	(10 * NSEC_PER_SEC)

/* The connection's side of each change, for the thread (writer.c). */
static const struct writer_ops ops = {
	.rows_write = store_db_rows_write,
	.delete_after = store_db_delete_after,
	.device_map = storedb_device_map,
	.card = storedb_card,
	.smi_version = storedb_smi_version,
	.window_insert = store_db_window_insert,
	.window_end = store_db_window_end,
	.clock_step = store_db_clock_step,
	.window_restarts = storedb_window_set_restarts,
	.window_run = storedb_window_set_run,
	.window_note = storedb_window_add_note,
	.window_begin_state = store_db_window_begin_state,
	.windows_abandoned = store_db_windows_abandoned,
	.summarize_due = store_db_summarize_due,
	.move_damaged = store_db_move_damaged,
	.window_get = storedb_window_get,
	.windows_finish = store_db_windows_finish,
	.reopen = store_db_reopen,
	.max_window_id = store_db_max_window_id,
	.retention_step = storedb_retention_step,
};

/* Hand the open connection to a writer thread; -1 logged. */
static int
start(struct store *st)
{
	struct store_window *open;
	char **unreliable;
	size_t nopen, nunreliable;
	int64_t max_id;

	st->host_rc = storedb_host(st, st->host, st->machine_id,
	    sizeof(st->host));
	/* before anything of this daemon is written: the last sample is
	 * the last of the daemon before */
	if (store_db_daemon_start(st) == -1)
		return -1;
	/* a window ended before the daemon that ended it stopped and was not
	 * complete by then never will be */
	if (store_db_windows_abandoned(st) == -1)
		return -1;
	if (storedb_windows_open(st, &open, &nopen) == -1)
		return -1;
	if (store_db_max_window_id(st, &max_id) == -1 ||
	    storedb_unreliable_metrics(st, &unreliable, &nunreliable) == -1) {
		store_windows_free(open, nopen);
		return -1;
	}
	return writer_start(st, &ops, open, nopen, max_id, unreliable,
	    nunreliable);
}

/*
 * Before SQLite opens path: is its log damaged, and then are the
 * originals kept aside?  0 go on (found says what was found, "" if
 * nothing; kept the copy), STORE_OPEN_DAMAGED refused, -1 logged.
 */
static int
check_log(const char *path, enum store_on_damage on_damage, char *found,
    size_t flen, char *kept, size_t klen)
{
	struct walcheck c;

	found[0] = kept[0] = '\0';
	if (walcheck_db(path, &c) == -1) {
		log_warn("%s-wal: cannot read the write-ahead log", path);
		return -1;
	}
	if (c.verdict == WALCHECK_CLEAN)
		return 0;
	walcheck_describe(&c, found, flen);
	if (on_damage == STORE_DAMAGE_REFUSE) {
		log_warnx("%s: DAMAGED: %s; not opened, nothing touched "
		    "(on_damaged_database: refuse)", path, found);
		return STORE_OPEN_DAMAGED;
	}
	if (store_keep_aside(path, kept, klen) == -1) {
		log_warnx("%s: DAMAGED: %s; not opened, nothing touched: the "
		    "originals could not be kept aside", path, found);
		return STORE_OPEN_DAMAGED;
	}
	log_warnx("%s: DAMAGED: %s; the originals are kept as %s (and its "
	    "-wal, -shm); starting on what can be kept", path, found, kept);
	return 0;
}

int
store_open_with(const char *path, const struct store_options *o,
    struct store **out)
{
	char found[sizeof((*out)->damaged_found)];
	char kept[sizeof((*out)->damaged_kept)];
	int rc;

	*out = NULL;
	if ((rc = check_log(path, o->on_damage, found, sizeof(found), kept,
	    sizeof(kept))) != 0)
		return rc;
	if (storedb_open(path, o->max_pending, out) == -1)
		return -1;
	if (found[0] != '\0') {
		(*out)->damaged = true;
		snprintf((*out)->damaged_found, sizeof((*out)->damaged_found),
		    "%s", found);
		snprintf((*out)->damaged_kept, sizeof((*out)->damaged_kept),
		    "%s", kept);
		store_counter_add(*out, STORE_COUNTER_DAMAGED, 1);
	}
	if (start(*out) == -1) {
		storedb_close(*out);
		*out = NULL;
		return -1;
	}
	writer_set_checkpoint(*out, o->checkpoint_interval_ns > 0 ?
	    o->checkpoint_interval_ns : CHECKPOINT_DEFAULT_NS);
	return 0;
}

int
store_open(const char *path, size_t max_pending, struct store **out)
{
	struct store_options o = { .max_pending = max_pending,
	    .on_damage = STORE_DAMAGE_KEEP_ASIDE };

	return store_open_with(path, &o, out);
}

void
store_close(struct store *st)
{
	if (st == NULL)
		return;
	writer_stop(st);
	/* readers then know its open windows go on at the next start */
	store_db_daemon_stopped(st);
	storedb_close(st);
}

/* ---- rows ---- */

void
store_append(struct store *st, const struct store_sample *s)
{
	int64_t ts_ns;

	pthread_mutex_lock(&st->mu);
	/* a row that starts at or after a pending sync's time may complete it */
	if (store_buf_append(st, s, &ts_ns) && ts_ns -
	    (int64_t)(s->interval_ms * NSEC_PER_MSEC) >= st->sync_min_through)
		writer_sync_nudge(st);
	pthread_mutex_unlock(&st->mu);
}

int
store_delete_after_src(struct store *st, int device, int src, int64_t after_ns)
{
	int rc;

	/* rows written or being written go by a queued job */
	pthread_mutex_lock(&st->mu);
	rc = writer_delete_after(st, device, src, after_ns);
	store_buf_remove_after(st, device, src, after_ns);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int
store_delete_after(struct store *st, int device, int64_t after_ns)
{
	return store_delete_after_src(st, device, SCHEMA_SRC_SMI, after_ns);
}

int
store_metric(struct store *st, const char *key, const char *unit, int *id)
{
	const struct store_col *c;
	int rc;

	pthread_mutex_lock(&st->mu);
	c = store_catalog_find(&st->cat, key);
	if (c != NULL)
		*id = c->id;
	pthread_mutex_unlock(&st->mu);
	if (c != NULL)
		return 0;
	/*
	 * A key the catalog lacks (a new aiu-smi) changes the schema: the
	 * one store call that waits for the connection, once per new key.
	 * Holding dbmu is enough: the writer touches the rows and the
	 * catalog only while it holds dbmu, and the caller is the only
	 * other thread that does (st->mu is left to the counters).
	 */
	writer_lock_db(st);
	rc = store_db_metric_add(st, key, unit, id);
	pthread_mutex_unlock(&st->dbmu);
	return rc;
}

/* ---- windows ---- */

int
store_windows_open(struct store *st, struct store_window **out, size_t *n)
{
	int rc;

	writer_lock_db(st);
	rc = writer_windows_open(st, out, n);
	pthread_mutex_unlock(&st->dbmu);
	return rc;
}

/* ---- status ---- */

int64_t
store_clock_stepped(struct store *st, int64_t size_ns, int64_t at_ns)
{
	struct store_epoch_step c = { .at_ns = at_ns, .size_ns = size_ns,
	    .mono_ns = (int64_t)now_monotonic_ns() };
	int64_t epoch;

	pthread_mutex_lock(&st->mu);
	c.id = epoch = ++st->epoch;
	st->last_step = c;
	if (st->nclock_steps == STORE_CLOCK_STEPS) {	/* forget the oldest */
		memmove(st->clock_steps, st->clock_steps + 1,
		    (STORE_CLOCK_STEPS - 1) * sizeof(st->clock_steps[0]));
		st->nclock_steps--;
	}
	st->clock_steps[st->nclock_steps++] =
	    (struct store_clock_step){ .size_ns = size_ns, .at_ns = at_ns };
	pthread_mutex_unlock(&st->mu);
	/* recorded in order with the rows and windows queued around it */
	if (st->w != NULL)
		writer_clock_step(st, &c);
	else
		(void)store_db_clock_step(st, &c);
	return epoch;
}

int64_t
store_clock_epoch(struct store *st)
{
	int64_t epoch;

	pthread_mutex_lock(&st->mu);
	epoch = st->epoch;
	pthread_mutex_unlock(&st->mu);
	return epoch;
}

void
store_get_stats(struct store *st, struct store_stats *out)
{
	char wal[4096];
	struct stat sb;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&st->mu);
	out->rows_written = st->rows_written;
	out->rows_dropped = st->rows_dropped;
	out->rows_nudged = __atomic_load_n(&st->rows_nudged, __ATOMIC_RELAXED);
	out->rows_deleted = st->rows_deleted;
	out->flushes_failed = st->flushes_failed;
	out->pending = st->pool.n + st->inflight;
	out->newest_ts_ns = st->newest_ts_ns;
	out->file_bytes = st->file_bytes;
	store_errors_stats(st, out);
	out->damaged = st->damaged;
	out->damaged_running = st->damaged_running;
	snprintf(out->damaged_found, sizeof(out->damaged_found), "%s",
	    st->damaged_found);
	snprintf(out->damaged_kept, sizeof(out->damaged_kept), "%s",
	    st->damaged_kept);
	writer_stats(st, out);
	pthread_mutex_unlock(&st->mu);
	/* the log's size now, not at the last checkpoint: it may be growing */
	snprintf(wal, sizeof(wal), "%s-wal", st->path);
	out->wal_bytes = stat(wal, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

int
store_host(struct store *st, char *hostname, char *machine_id, size_t len)
{
	/* the connection is the thread's: the copy read before it started */
	snprintf(hostname, len, "%s", st->host);
	snprintf(machine_id, len, "%s", st->machine_id);
	return st->host_rc;
}
