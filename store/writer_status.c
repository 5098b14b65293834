/*
 * writer_status: what the writer thread is doing and how its writes went,
 * kept under st->mu for status (writer_stats, part of store_get_stats):
 * the write running and since when, the run of failures and the last one's
 * cause, the scheduled checkpoints held back, and the metrics the thread
 * was handed as unreliable.  The thread's other files record here; this
 * file calls none of them.
 */
#include "store_priv.h"
#include "writer_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeparse.h"

/* A write still running after this long is a stall: status says so. */
#define STALL_NS		(1 * NSEC_PER_SEC)

void
writer_status_busy(struct store *st, const char *what)
{
	st->err_code = 0;	/* what this write fails with, if it does */
	pthread_mutex_lock(&st->mu);
	st->w->busy_since_ns = now_monotonic_ns();
	st->w->busy_what = what;
	pthread_mutex_unlock(&st->mu);
}

void
writer_status_idle(struct store *st)
{
	pthread_mutex_lock(&st->mu);
	st->w->busy_since_ns = 0;
	pthread_mutex_unlock(&st->mu);
}

void
writer_status_outcome(struct store *st, bool ok, const char *what)
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
writer_status_stopped(struct writer *w, const char *why)
{
	w->busy_since_ns = 0;
	if (w->failing_since_ns == 0)
		w->failing_since_ns = now_monotonic_ns();
	snprintf(w->why, sizeof(w->why), "%s", why);
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
		if (w->busy_what == NULL ||
		    strcmp(w->busy_what, WRITER_WHAT_ROWS) == 0)
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
