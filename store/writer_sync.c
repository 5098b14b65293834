/*
 * writer_sync: requests that the samples covering a time be stored, and
 * the completion of ended windows (contracts in store.h, store_sync and
 * store_sync_window, and in writer_priv.h).
 *
 * A sample stamped t covers [t - interval, t], so the samples that cover
 * a time T are all in once each stream (a card's aiu-smi rows, or its
 * metric file's) has a row that starts at or after T: stamps only grow,
 * so no later row can reach back over T.  A row merely stamped at or after
 * T is not enough: one that came late (stamped just after T) can be
 * followed by one on time whose span still starts before T, and a reader
 * right after the end then misses it.  A request waits in three steps,
 * each visible in its state:
 *
 *   1. rows: every live stream has appended a row that starts at or after
 *      through_ns.  A stream is live if its newest row is recent enough
 *      that its next one is due (within two of its intervals and
 *      SYNC_SLACK_NS); a stream that stopped (a card gone, aiu-smi
 *      restarting) is waited for only until the deadline, so a request
 *      never waits for rows that will not come.  While no stream is live
 *      (before any card's first row, as a daemon starts) a card's first
 *      row may still reach back over a through_ns since the thread
 *      started: such a request waits for one, again until the deadline.
 *      store_append nudges the thread when a row starts at or after the
 *      earliest pending through_ns.
 *   2. commit: the rows appended until step 1 was met (seq) are committed:
 *      the next flush, which step 1 asks for at once.
 *   3. for a window: its summary and complete_ns in one transaction.
 *
 * Then the request is gone, and the event loop learns of it through an
 * eventfd.  Tickets only grow, so a ticket not among the requests is done.
 */
#include "store_priv.h"
#include "writer_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "schema.h"
#include "timeparse.h"

/*
 * How long past two of its intervals a silent stream still counts as live,
 * and how long past two of the longest live interval rows are waited for:
 * long enough for aiu-smi or the loop held up by a loaded host (with 1 s
 * of grace, a read right after mark end once missed one row per card at a
 * load of 9 on 2 cores: the covering rows came after the deadline), short
 * enough that a card that stopped delays a completion by seconds only.
 */
#define SYNC_SLACK_NS		(10 * NSEC_PER_SEC)
#define SYNC_GRACE_NS		(5 * NSEC_PER_SEC)

int
writer_sync_init(struct writer *w)
{
	w->next_ticket = 1;
	w->started_ns = now_realtime_ns();
	w->sync_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->sync_fd == -1) {
		log_warn("eventfd");
		return -1;
	}
	return 0;
}

void
writer_sync_free(struct writer *w)
{
	free(w->syncs);
	w->syncs = NULL;
	w->nsyncs = w->syncs_cap = 0;
	if (w->sync_fd != -1)
		close(w->sync_fd);
	w->sync_fd = -1;
}

/* Stream d has a row that starts at or after through_ns: it covers no more of it. */
static bool
stream_past(const struct device_last *d, int64_t through_ns)
{
	return d->ts_ns - (int64_t)(d->interval_ms * NSEC_PER_MSEC) >= through_ns;
}

/* Stream d is still sending rows, as far as a request for through_ns goes. */
static bool
stream_live(const struct device_last *d, int64_t through_ns)
{
	int64_t horizon = 2 * (int64_t)d->interval_ms * NSEC_PER_MSEC +
	    SYNC_SLACK_NS;

	return d->ts_ns >= through_ns - horizon;
}

/* Under st->mu: the earliest through_ns still waiting for rows, into st. */
static void
update_min_through(struct store *st)
{
	struct writer *w = st->w;
	int64_t min = INT64_MAX;

	for (size_t i = 0; i < w->nsyncs; i++)
		if (!w->syncs[i].rows_in && w->syncs[i].through_ns < min)
			min = w->syncs[i].through_ns;
	st->sync_min_through = min;
}

uint64_t
writer_sync_add(struct store *st, int64_t through_ns, int64_t window_id)
{
	struct writer *w = st->w;
	struct sync_req *r;
	uint64_t longest = 0;

	if (w->nsyncs == w->syncs_cap) {
		size_t cap = w->syncs_cap > 0 ? w->syncs_cap * 2 : 8;

		if ((r = reallocarray(w->syncs, cap, sizeof(*r))) == NULL) {
			log_warn("%s: a request to store samples", st->path);
			return 0;
		}
		w->syncs = r;
		w->syncs_cap = cap;
	}
	for (size_t i = 0; i < st->ndevs; i++)
		if (stream_live(&st->devs[i], through_ns) &&
		    st->devs[i].interval_ms > longest)
			longest = st->devs[i].interval_ms;
	r = &w->syncs[w->nsyncs++];
	*r = (struct sync_req){
		.ticket = w->next_ticket++,
		.through_ns = through_ns,
		.window_id = window_id,
		.deadline_ns = now_monotonic_ns() + 2 * longest * NSEC_PER_MSEC +
		    SYNC_GRACE_NS,
	};
	w->sync_check = true;
	update_min_through(st);
	pthread_cond_signal(&w->cv);
	return r->ticket;
}

/* Under st->mu: the live streams of r still short of its through_ns, as text. */
static size_t
streams_short(const struct store *st, const struct sync_req *r, char *buf,
    size_t len)
{
	size_t n = 0, used = 0;

	if (len > 0)
		buf[0] = '\0';
	for (size_t i = 0; i < st->ndevs; i++) {
		const struct device_last *d = &st->devs[i];

		if (!stream_live(d, r->through_ns) || stream_past(d, r->through_ns))
			continue;
		n++;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%d%s",
			    n > 1 ? ", " : "", d->device,
			    d->src == SCHEMA_SRC_FILE ? " (metric file)" : "");
	}
	return n;
}

/*
 * Under st->mu: the rows covering r's through_ns are all appended: every
 * live stream has one that starts at or after it.  With none live, a
 * card's first row may still reach back over a time since the thread
 * started; a time before that is covered by an earlier run's rows.
 */
static bool
rows_covered(const struct store *st, const struct sync_req *r)
{
	bool any_live = false;

	for (size_t i = 0; i < st->ndevs; i++) {
		const struct device_last *d = &st->devs[i];

		if (!stream_live(d, r->through_ns))
			continue;
		if (!stream_past(d, r->through_ns))
			return false;
		any_live = true;
	}
	return any_live || r->through_ns < st->w->started_ns;
}

bool
writer_sync_eval(struct store *st, bool force, uint64_t *next_ns)
{
	struct writer *w = st->w;
	uint64_t now = now_monotonic_ns();
	bool any = false;

	*next_ns = UINT64_MAX;
	w->sync_check = false;
	for (size_t i = 0; i < w->nsyncs; i++) {
		struct sync_req *r = &w->syncs[i];

		if (r->rows_in)
			continue;
		if (force || now >= r->deadline_ns || rows_covered(st, r)) {
			r->rows_in = true;
			r->seq = st->appended;
			any = true;
		} else if (r->deadline_ns < *next_ns)
			*next_ns = r->deadline_ns;
	}
	update_min_through(st);
	return any;
}

void
writer_sync_nudge(struct store *st)
{
	st->w->sync_check = true;
	st->sync_min_through = INT64_MAX;	/* once until the thread looks */
	pthread_cond_signal(&st->w->cv);
}

/* Tell the event loop that requests are done. */
static void
signal_done(struct writer *w)
{
	uint64_t one = 1;

	if (write(w->sync_fd, &one, sizeof(one)) == -1 && errno != EAGAIN)
		log_warn("eventfd");
}

/* Under st->mu: remember a completed window's damage note (the newest). */
static void
keep_note(struct writer *w, uint64_t ticket, int64_t window_id,
    const char note[STORE_NOTE_LEN])
{
	struct done_note *d = &w->notes[w->notes_next++ % NOTES_KEPT];

	d->ticket = ticket;
	d->window_id = window_id;
	memcpy(d->note, note, sizeof(d->note));
	d->note[sizeof(d->note) - 1] = '\0';
}

bool
store_sync_note(struct store *st, uint64_t ticket, int64_t window_id,
    char *buf, size_t len)
{
	struct writer *w = st->w;
	bool found = false;

	pthread_mutex_lock(&st->mu);
	for (size_t i = 0; i < NOTES_KEPT && !found; i++) {
		const struct done_note *d = &w->notes[i];

		if (d->note[0] == '\0' ||
		    !((ticket != 0 && d->ticket == ticket) ||
		    (window_id > 0 && d->window_id == window_id)))
			continue;
		snprintf(buf, len, "%s", d->note);
		found = true;
	}
	pthread_mutex_unlock(&st->mu);
	return found;
}

/*
 * The windows finished in one transaction at most: enough that a storm of
 * short windows costs a commit per batch, not per window; few enough that
 * the transaction stays short.
 */
#define FINISH_BATCH	64

void
writer_sync_finish(struct store *st)
{
	struct writer *w = st->w;
	bool done = false;

	for (;;) {
		uint64_t tickets[FINISH_BATCH], id_ticket[FINISH_BATCH];
		int64_t ids[FINISH_BATCH];
		char notes[FINISH_BATCH][STORE_NOTE_LEN];
		size_t nt = 0, nids = 0;
		int64_t lookback;

		pthread_mutex_lock(&st->mu);
		for (size_t i = 0; i < w->nsyncs && nt < FINISH_BATCH; i++) {
			const struct sync_req *r = &w->syncs[i];

			if (!r->rows_in || r->seq > w->committed_seq ||
			    w->jobs_failed)
				continue;
			tickets[nt++] = r->ticket;
			if (r->window_id > 0) {
				id_ticket[nids] = r->ticket;
				ids[nids++] = r->window_id;
			}
		}
		lookback = w->lookback_ns;
		pthread_mutex_unlock(&st->mu);
		if (nt == 0)
			break;
		if (w->ops.windows_finish(st, ids, nids, lookback,
		    now_realtime_ns(), notes) != 0)
			break;		/* the next flush tries again */
		pthread_mutex_lock(&st->mu);
		for (size_t i = 0; i < nids; i++)
			if (notes[i][0] != '\0')
				keep_note(w, id_ticket[i], ids[i], notes[i]);
		for (size_t t = 0; t < nt; t++)
			for (size_t i = 0; i < w->nsyncs; i++)
				if (w->syncs[i].ticket == tickets[t]) {
					w->syncs[i] = w->syncs[--w->nsyncs];
					break;
				}
		pthread_mutex_unlock(&st->mu);
		done = true;
	}
	if (done)
		signal_done(w);
}

/* ---- the public calls (store.h) ---- */

int
store_sync(struct store *st, int64_t through_ns, uint64_t *ticket)
{
	pthread_mutex_lock(&st->mu);
	*ticket = writer_sync_add(st, through_ns, 0);
	pthread_mutex_unlock(&st->mu);
	return *ticket != 0 ? 0 : -1;
}

uint64_t
store_sync_window(struct store *st, int64_t window_id)
{
	uint64_t ticket = 0;

	pthread_mutex_lock(&st->mu);
	for (size_t i = 0; i < st->w->nsyncs; i++)
		if (st->w->syncs[i].window_id == window_id)
			ticket = st->w->syncs[i].ticket;
	pthread_mutex_unlock(&st->mu);
	return ticket;
}

bool
store_sync_pending(struct store *st, uint64_t ticket, char *why, size_t len,
    int64_t *through_ns)
{
	struct writer *w = st->w;
	const struct sync_req *r = NULL;
	char streams[160];
	bool pending;

	if (len > 0)
		why[0] = '\0';
	pthread_mutex_lock(&st->mu);
	for (size_t i = 0; i < w->nsyncs && r == NULL; i++)
		if (w->syncs[i].ticket == ticket)
			r = &w->syncs[i];
	pending = r != NULL;
	if (r != NULL && through_ns != NULL)
		*through_ns = r->through_ns;
	if (r == NULL || len == 0)
		;
	else if (w->failing_since_ns != 0)
		snprintf(why, len, "writes are failing (%s)", w->why);
	else if (!r->rows_in && streams_short(st, r, streams,
	    sizeof(streams)) > 0)
		snprintf(why, len, "waiting for the first sample after the end "
		    "from card %s", streams);
	else if (!r->rows_in)
		snprintf(why, len, "waiting for the first sample after the end "
		    "from any card");
	else if (r->rows_in && r->seq > w->committed_seq)
		snprintf(why, len, "%zu rows are still to be written",
		    st->pool.n + st->inflight);
	else
		snprintf(why, len, "the window's summary is still to be "
		    "written");
	pthread_mutex_unlock(&st->mu);
	return pending;
}

int
store_sync_fd(struct store *st)
{
	return st->w->sync_fd;
}

void
store_sync_ack(struct store *st)
{
	uint64_t n;

	(void)read(st->w->sync_fd, &n, sizeof(n));
}

void
store_set_idle_lookback(struct store *st, int64_t lookback_ns)
{
	pthread_mutex_lock(&st->mu);
	st->w->lookback_ns = lookback_ns;
	pthread_mutex_unlock(&st->mu);
}

bool
store_is_file(struct store *st, uint64_t dev, uint64_t ino)
{
	bool same;

	pthread_mutex_lock(&st->mu);
	same = (uint64_t)st->dev == dev && (uint64_t)st->ino == ino;
	pthread_mutex_unlock(&st->mu);
	return same;
}
