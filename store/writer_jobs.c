/*
 * writer_jobs: the changes other than rows that the event loop hands to the
 * writer thread (window begin, end and restarts, windows abandoned,
 * deletions, device maps, cards, aiu-smi's version), queued in order under
 * st->mu by the store.h calls defined here, and run on the connection by
 * the thread (writer.c); and the windows as the loop sees them meanwhile.
 * What a recreated database must get back is remembered here as the jobs
 * run: the open windows, and the newest device map and card of each.
 */
#include "store_priv.h"
#include "writer_priv.h"

#include <stdlib.h>
#include <string.h>

#include "clocksync.h"
#include "inventory.h"

void
writer_windows_free(struct store_window *w, size_t n)
{
	for (size_t i = 0; w != NULL && i < n; i++) {
		free(w[i].tag);
		free(w[i].meta_json);
	}
	free(w);
}

void
writer_strings_free(char **s, size_t n)
{
	for (size_t i = 0; s != NULL && i < n; i++)
		free(s[i]);
	free(s);
}

void
writer_job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->win.tag);
	free(j->win.meta_json);
	free(j->metric_file);
	free(j->bus_id);
	free(j->version);
	free(j->note);
	free(j);
}

/* Queue j (under st->mu) and wake the thread. */
static void
queue(struct store *st, struct job *j)
{
	struct writer *w = st->w;

	j->next = NULL;
	if (w->tail != NULL)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	w->njobs++;
	pthread_cond_signal(&w->cv);
}

/* Queue j, taking st->mu for it. */
static void
queue_locked(struct store *st, struct job *j)
{
	pthread_mutex_lock(&st->mu);
	queue(st, j);
	pthread_mutex_unlock(&st->mu);
}

static struct job *
job_new(struct store *st, enum job_kind kind)
{
	struct job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		log_warnx("%s: out of memory: a change is not stored", st->path);
	else
		j->kind = kind;
	return j;
}

/* The next id at once, the insert queued. */
int
store_window_begin(struct store *st, const char *tag, uint32_t uid,
    int32_t pid, int64_t begin_ns, const char *meta_json,
    const struct clocksync *clock, int32_t until_pid, int64_t *id)
{
	struct job *j = job_new(st, JOB_WINDOW_BEGIN);

	if (j == NULL || (j->win.tag = strdup(tag)) == NULL ||
	    (j->win.meta_json = strdup(meta_json != NULL ? meta_json : "{}")) ==
	    NULL) {
		writer_job_free(j);
		return -1;
	}
	j->win.uid = uid;
	j->win.pid = pid;
	j->win.begin_ns = begin_ns;
	j->win.until_pid = until_pid > 0 ? until_pid : 0;
	j->win.end_epoch = -1;
	if (clock != NULL)
		j->clock = *clock;
	pthread_mutex_lock(&st->mu);
	/* the loop sees a step before it stamps a begin (windows.c) */
	j->win.begin_epoch = st->epoch;
	*id = j->win.id = ++st->w->next_window_id;
	queue(st, j);
	pthread_mutex_unlock(&st->mu);
	return 0;
}

void
writer_clock_step(struct store *st, const struct store_epoch_step *c)
{
	struct job *j = job_new(st, JOB_CLOCK_STEP);

	if (j == NULL)
		return;
	j->step = *c;
	queue_locked(st, j);
}

int
store_window_end(struct store *st, int64_t id, int64_t end_ns,
    enum store_ended_by by, const struct clocksync *clock, bool complete)
{
	return store_window_end_meta(st, id, end_ns, by, clock, complete,
	    NULL);
}

/* Queued, with the request that completes the window if asked for. */
int
store_window_end_meta(struct store *st, int64_t id, int64_t end_ns,
    enum store_ended_by by, const struct clocksync *clock, bool complete,
    const char *meta_json)
{
	struct job *j = job_new(st, JOB_WINDOW_END);
	struct store_window *e;
	struct writer *w = st->w;

	if (j == NULL)
		return -1;
	if (meta_json != NULL && (j->win.meta_json = strdup(meta_json)) ==
	    NULL) {
		writer_job_free(j);
		return -1;
	}
	j->win.id = id;
	j->win.end_ns = end_ns;
	j->win.auto_closed = by != STORE_ENDED_MARK;
	j->by = by;
	if (clock != NULL)
		j->clock = *clock;
	pthread_mutex_lock(&st->mu);
	/* the daemon before's window ends at its last sample, in its epoch */
	j->win.end_epoch = by == STORE_ENDED_DAEMON_GONE ? st->epoch_open :
	    st->epoch;
	e = &w->ended[w->nended++ % ENDED_KEPT];
	free(e->tag);
	e->tag = strdup("");
	e->id = id;
	e->end_ns = end_ns;
	e->end_epoch = j->win.end_epoch;
	e->auto_closed = j->win.auto_closed;
	queue(st, j);
	/* complete once the rows that cover the end are stored */
	if (complete)
		(void)writer_sync_add(st, end_ns, id);
	pthread_mutex_unlock(&st->mu);
	return 0;
}

int
store_window_get(struct store *st, int64_t id, struct store_window **out)
{
	struct writer *w = st->w;
	struct store_window *sw;
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&st->mu);
	if (id > 0 && id <= w->next_window_id) {
		/* an ended window the loop remembers, or an older one */
		if ((sw = calloc(1, sizeof(*sw))) == NULL) {
			rc = -1;
			goto out;
		}
		sw->id = id;
		sw->begin_epoch = sw->end_epoch = -1;
		for (size_t i = 0; i < ENDED_KEPT && i < w->nended; i++)
			if (w->ended[i].id == id) {
				sw->tag = strdup(w->ended[i].tag);
				sw->end_ns = w->ended[i].end_ns;
				sw->end_epoch = w->ended[i].end_epoch;
				sw->auto_closed = w->ended[i].auto_closed;
			}
		if (sw->tag == NULL)
			sw->tag = strdup("");
		sw->meta_json = strdup("{}");
		if (sw->tag == NULL || sw->meta_json == NULL) {
			writer_windows_free(sw, 1);
			rc = -1;
			goto out;
		}
		*out = sw;
	}
out:
	pthread_mutex_unlock(&st->mu);
	return rc;
}

/* A copy of src with its own strings; -1 if out of memory. */
static int
window_copy(struct store_window *dst, const struct store_window *src)
{
	*dst = *src;
	dst->tag = strdup(src->tag != NULL ? src->tag : "");
	dst->meta_json = strdup(src->meta_json != NULL ? src->meta_json : "{}");
	if (dst->tag == NULL || dst->meta_json == NULL) {
		free(dst->tag);
		free(dst->meta_json);
		return -1;
	}
	return 0;
}

/* Under st->mu: window id's end is queued. */
static bool
end_queued(const struct writer *w, int64_t id)
{
	for (const struct job *j = w->head; j != NULL; j = j->next)
		if (j->kind == JOB_WINDOW_END && j->win.id == id)
			return true;
	return false;
}

static int
window_cmp(const void *a, const void *b)
{
	const struct store_window *x = a, *y = b;

	if (x->begin_ns != y->begin_ns)
		return x->begin_ns < y->begin_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int
writer_windows_open(struct store *st, struct store_window **out, size_t *n)
{
	struct writer *w = st->w;
	struct store_window *v = NULL;
	size_t count = 0, cap;
	int rc = 0;

	*out = NULL;
	*n = 0;
	/* the thread changes w->open only under dbmu (held), the queue under mu */
	pthread_mutex_lock(&st->mu);
	cap = w->nopen + w->njobs;
	if (cap > 0 && (v = calloc(cap, sizeof(*v))) == NULL)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < w->nopen; i++)
		if (!end_queued(w, w->open[i].win.id) &&
		    (rc = window_copy(&v[count], &w->open[i].win)) == 0)
			count++;
	for (const struct job *j = w->head; rc == 0 && j != NULL; j = j->next)
		if (j->kind == JOB_WINDOW_BEGIN && !end_queued(w, j->win.id) &&
		    (rc = window_copy(&v[count], &j->win)) == 0)
			count++;
	pthread_mutex_unlock(&st->mu);
	if (rc == -1) {
		log_warnx("%s: open windows: out of memory", st->path);
		writer_windows_free(v, count);
		return -1;
	}
	if (count > 0)
		qsort(v, count, sizeof(*v), window_cmp);
	*out = v;
	*n = count;
	return 0;
}

/* Queue the marking. */
int
store_windows_abandon(struct store *st)
{
	struct job *j = job_new(st, JOB_WINDOWS_ABANDONED);

	if (j == NULL)
		return -1;
	pthread_mutex_lock(&st->mu);
	queue(st, j);
	pthread_mutex_unlock(&st->mu);
	return 0;
}

int
store_window_set_restarts(struct store *st, int64_t id, unsigned restarts)
{
	struct job *j = job_new(st, JOB_WINDOW_RESTARTS);

	if (j == NULL)
		return -1;
	j->win.id = id;
	j->restarts = restarts;
	queue_locked(st, j);
	return 0;
}

int
store_window_set_run(struct store *st, int64_t id, int64_t run_ns)
{
	struct job *j = job_new(st, JOB_WINDOW_RUN);

	if (j == NULL)
		return -1;
	j->win.id = id;
	j->ns = run_ns;
	queue_locked(st, j);
	return 0;
}

int
store_window_add_note(struct store *st, int64_t id, const char *note)
{
	struct job *j = job_new(st, JOB_WINDOW_NOTE);

	if (j == NULL)
		return -1;
	if ((j->note = strdup(note)) == NULL) {
		log_warnx("%s: out of memory: a change is not stored", st->path);
		writer_job_free(j);
		return -1;
	}
	j->win.id = id;
	queue_locked(st, j);
	return 0;
}

/* After its next flush, the thread summarizes the windows due. */
int
store_windows_summarize_due(struct store *st, int64_t now_ns,
    int64_t settle_ns, int64_t idle_lookback_ns)
{
	struct writer *w = st->w;

	(void)now_ns;		/* the thread summarizes at its own now */
	pthread_mutex_lock(&st->mu);
	w->summarize_req = true;
	w->settle_ns = settle_ns;
	w->idle_lookback_ns = idle_lookback_ns;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&st->mu);
	return 0;
}

/* Under st->mu: drop the taken rows of device after after_ns (see settle). */
int
writer_delete_after(struct store *st, int device, int src, int64_t after_ns)
{
	struct job *j = job_new(st, JOB_DELETE_AFTER);

	if (j == NULL)
		return -1;
	j->device = device;
	j->src = src;
	j->ns = after_ns;
	queue(st, j);
	return 0;
}

int
store_device_map(struct store *st, int device, const char *metric_file,
    const char *bus_id, int64_t ts_ns)
{
	struct job *j = job_new(st, JOB_DEVICE_MAP);

	if (j == NULL || (j->metric_file = strdup(metric_file)) == NULL ||
	    (j->bus_id = strdup(bus_id != NULL ? bus_id : "")) == NULL) {
		writer_job_free(j);
		return -1;
	}
	j->device = device;
	j->ns = ts_ns;
	queue_locked(st, j);
	return 0;
}

int
store_card(struct store *st, const struct card *c, int64_t ts_ns)
{
	struct job *j = job_new(st, JOB_CARD);

	if (j == NULL)
		return -1;
	j->card = *c;
	j->ns = ts_ns;
	queue_locked(st, j);
	return 0;
}

int
store_smi_version(struct store *st, const char *version, int64_t ts_ns)
{
	struct job *j = job_new(st, JOB_SMI_VERSION);

	if (j == NULL || (j->version = strdup(version)) == NULL) {
		writer_job_free(j);
		return -1;
	}
	j->ns = ts_ns;
	queue_locked(st, j);
	return 0;
}

/* Keep j (run) as the newest of its device or card in list; true if kept. */
bool
writer_job_remember(struct job ***list, size_t *n, struct job *j)
{
	struct job **grown;

	for (size_t i = 0; i < *n; i++) {
		struct job *o = (*list)[i];

		if ((j->kind == JOB_DEVICE_MAP && o->device == j->device) ||
		    (j->kind == JOB_CARD && strcmp(o->card.bus_id,
		    j->card.bus_id) == 0)) {
			writer_job_free(o);
			(*list)[i] = j;
			return true;
		}
	}
	if ((grown = reallocarray(*list, *n + 1, sizeof(**list))) == NULL)
		return false;
	*list = grown;
	(*list)[(*n)++] = j;
	return true;
}

void
writer_open_free(struct open_win *o, size_t n)
{
	for (size_t i = 0; o != NULL && i < n; i++) {
		free(o[i].win.tag);
		free(o[i].win.meta_json);
	}
	free(o);
}

static void
open_add(struct writer *w, const struct store_window *win,
    const struct clocksync *clock)
{
	struct open_win *grown = reallocarray(w->open, w->nopen + 1,
	    sizeof(*grown));
	struct open_win *o;

	if (grown == NULL)
		return;
	w->open = grown;
	o = &w->open[w->nopen];
	memset(o, 0, sizeof(*o));
	o->win = *win;
	o->win.tag = strdup(win->tag);
	o->win.meta_json = strdup(win->meta_json);
	if (o->win.tag == NULL || o->win.meta_json == NULL) {
		free(o->win.tag);
		free(o->win.meta_json);
		return;
	}
	if (clock != NULL)
		o->clock = *clock;
	w->nopen++;
}

static struct open_win *
open_find(struct writer *w, int64_t id)
{
	for (size_t i = 0; i < w->nopen; i++)
		if (w->open[i].win.id == id)
			return &w->open[i];
	return NULL;
}

static void
open_remove(struct writer *w, int64_t id)
{
	struct open_win *o = open_find(w, id);

	if (o == NULL)
		return;
	free(o->win.tag);
	free(o->win.meta_json);
	*o = w->open[--w->nopen];
}

/* Run job j on the connection (dbmu held); 0, or -1 to retry it later. */
int
writer_job_run(struct store *st, struct job *j)
{
	struct writer *w = st->w;
	struct open_win *o;

	switch (j->kind) {
	case JOB_WINDOW_BEGIN:
		if (w->ops.window_insert(st, &j->win, &j->clock, 0) == -1)
			return -1;
		open_add(w, &j->win, &j->clock);
		return 0;
	case JOB_WINDOW_END:
		if (w->ops.window_end(st, &j->win, j->by, &j->clock,
		    j->win.meta_json) == -1)
			return -1;
		open_remove(w, j->win.id);
		return 0;
	case JOB_WINDOW_RESTARTS:
		if (w->ops.window_restarts(st, j->win.id, j->restarts) == -1)
			return -1;
		if ((o = open_find(w, j->win.id)) != NULL)
			o->restarts = j->restarts;
		return 0;
	case JOB_WINDOW_RUN:
		return w->ops.window_run(st, j->win.id, j->ns);
	case JOB_WINDOW_NOTE:
		return w->ops.window_note(st, j->win.id, j->note);
	case JOB_DELETE_AFTER:
		return w->ops.delete_after(st, j->device, j->src, j->ns);
	case JOB_DEVICE_MAP:
		return w->ops.device_map(st, j->device, j->metric_file,
		    j->bus_id, j->ns);
	case JOB_SMI_VERSION:
		return w->ops.smi_version(st, j->version, j->ns);
	case JOB_WINDOWS_ABANDONED:
		return w->ops.windows_abandoned(st);
	case JOB_CLOCK_STEP:
		return w->ops.clock_step(st, &j->step);
	case JOB_CARD:
	default:
		return w->ops.card(st, &j->card, j->ns);
	}
}
