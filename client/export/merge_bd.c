/*
 * merge_bd: the breakdown's classes as a track of a merged trace
 * (merge_bd.h).  The pieces are the analysis layer's (bdtrace.h, with
 * bd_trace_keep_pieces); nothing is classified here.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdtrace.h"
#include "client.h"
#include "merge_bd.h"
#include "target.h"

#define BD_CAT		"spyremon_breakdown"

struct writer {
	const struct merge_request *rq;
	merge_put_fn put;
	void	*arg;
	struct merge_stats *st;
	struct merge_buf b;
};

/* The windows of card c: its steps, or its span in a trace without. */
static const struct bd_window *
windows_of(const struct bd_result *res, const struct bd_card *c, size_t *n)
{
	*n = res->nsteps > 0 ? res->nsteps : 1;
	return res->nsteps > 0 ? c->steps : &c->total;
}

/*
 * Each step's thread (lane[s], from 0): the first whose steps have all
 * ended when it starts.  Returns how many threads a card needs.
 */
static size_t
lanes(const struct bd_result *res, size_t *lane)
{
	int64_t *end;
	size_t n = 0;

	if (res->nsteps == 0 || res->ncards == 0) {
		lane[0] = 0;
		return 1;
	}
	if ((end = calloc(res->nsteps, sizeof(*end))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	/* the steps are the same windows on every card */
	for (size_t s = 0; s < res->nsteps; s++) {
		const struct bd_window *w = &res->cards[0].steps[s];
		size_t l = 0;

		while (l < n && end[l] > w->lo)
			l++;
		if (l == n)
			n++;
		end[l] = w->hi;		/* at least lo: bd_run's steps */
		lane[s] = l;
	}
	free(end);
	return n > 0 ? n : 1;
}

/* The M events of the process at pid, sorted at sort. */
static int
put_process(struct writer *w, int64_t pid, int64_t sort)
{
	const struct merge_request *rq = w->rq;

	merge_buf_meta(&w->b, rq, "process_name", pid, 0);
	merge_buf_fmt(&w->b, ",\"args\":{\"name\":");
	if (rq->host != NULL) {
		char name[320];

		snprintf(name, sizeof(name), "spyremon breakdown \xc2\xb7 %s",
		    rq->host);
		merge_buf_json(&w->b, name);
	} else
		merge_buf_json(&w->b, "spyremon breakdown");
	merge_buf_add(&w->b, "}}", 2);
	if (merge_buf_put(&w->b, w->put, w->arg, w->st) == -1)
		return -1;
	merge_buf_meta(&w->b, rq, "process_sort_index", pid, 0);
	merge_buf_fmt(&w->b, ",\"args\":{\"sort_index\":%" PRId64 "}}", sort);
	return merge_buf_put(&w->b, w->put, w->arg, w->st);
}

/* The M events of card's thread lane at tid. */
static int
put_thread(struct writer *w, int64_t pid, int64_t tid, int64_t card,
    size_t lane)
{
	char name[96];

	if (lane == 0)
		snprintf(name, sizeof(name), "Spyre %" PRId64 " classes", card);
	else
		snprintf(name, sizeof(name), "Spyre %" PRId64 " classes %zu",
		    card, lane + 1);
	merge_buf_meta(&w->b, w->rq, "thread_name", pid, tid);
	merge_buf_fmt(&w->b, ",\"args\":{\"name\":");
	merge_buf_json(&w->b, name);
	merge_buf_add(&w->b, "}}", 2);
	if (merge_buf_put(&w->b, w->put, w->arg, w->st) == -1)
		return -1;
	merge_buf_meta(&w->b, w->rq, "thread_sort_index", pid, tid);
	merge_buf_fmt(&w->b, ",\"args\":{\"sort_index\":%" PRId64 "}}", tid);
	return merge_buf_put(&w->b, w->put, w->arg, w->st);
}

/* The slices of window win on pid, tid. */
static int
put_slices(struct writer *w, const struct bd_window *win, int64_t pid,
    int64_t tid)
{
	int dec = merge_decimals(w->rq);

	for (size_t i = 0; i < win->npieces; i++) {
		const struct bd_piece *p = &win->pieces[i];
		int64_t lo = merge_round_ns(p->start, dec);
		int64_t hi = merge_round_ns(p->end, dec);

		if (hi <= lo)
			continue;
		w->b.len = 0;
		merge_buf_fmt(&w->b, "{\"ph\":\"X\",\"cat\":\"" BD_CAT "\","
		    "\"name\":\"%s%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
		    ",\"ts\":", p->cat == OPS_IDLE ? "idle: " :
		    bd_class_name(p->cat), p->cat == OPS_IDLE ?
		    bd_idle_name(p->idle) : "", pid, tid);
		merge_buf_us(&w->b, w->rq, p->start);
		merge_buf_fmt(&w->b, ",\"dur\":");
		merge_buf_us(&w->b, w->rq, hi - lo);
		merge_buf_fmt(&w->b, ",\"args\":{\"step\":");
		merge_buf_json(&w->b, win->name);
		merge_buf_add(&w->b, "}}", 2);
		if (merge_buf_put(&w->b, w->put, w->arg, w->st) == -1)
			return -1;
		w->st->breakdown_slices++;
	}
	return 0;
}

int
merge_bd_write(const struct merge_request *rq, merge_put_fn put, void *arg,
    struct merge_stats *st)
{
	const struct bd_result *res = rq->breakdown;
	const struct trace_info *in = &rq->t->info;
	struct writer w = { .rq = rq, .put = put, .arg = arg, .st = st };
	size_t before = st->cards + st->energy_cards, nlanes, *lane;
	int64_t first, pid;
	int rc = CLIENT_EXIT_OK;

	if (res == NULL || res->ncards == 0)
		return CLIENT_EXIT_OK;
	if (merge_first_pid(in->has_max_pid, in->max_pid, before + 1,
	    &first) == -1) {
		warnx("%s: the trace uses pid %" PRId64 ": no %zu pids above "
		    "it are free for the cards and the breakdown", rq->t->path,
		    in->max_pid, before + 1);
		return CLIENT_EXIT_FAILED;
	}
	pid = first + (int64_t)before;
	if ((lane = calloc(res->nsteps + 1, sizeof(*lane))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	nlanes = lanes(res, lane);
	if (put_process(&w, pid, (rq->sort_base != 0 ? rq->sort_base :
	    MERGE_SORT_INDEX) + (int64_t)before) == -1)
		rc = CLIENT_EXIT_FAILED;
	for (size_t i = 0; rc == CLIENT_EXIT_OK && i < res->ncards; i++) {
		const struct bd_card *c = &res->cards[i];
		const struct bd_window *win;
		size_t nwin;

		for (size_t l = 0; rc == CLIENT_EXIT_OK && l < nlanes; l++)
			if (put_thread(&w, pid, (int64_t)(i * nlanes + l + 1),
			    c->card, l) == -1)
				rc = CLIENT_EXIT_FAILED;
		win = windows_of(res, c, &nwin);
		for (size_t s = 0; rc == CLIENT_EXIT_OK && s < nwin; s++)
			if (put_slices(&w, &win[s], pid, (int64_t)(i * nlanes +
			    lane[res->nsteps > 0 ? s : 0] + 1)) == -1)
				rc = CLIENT_EXIT_FAILED;
	}
	free(lane);
	free(w.b.p);
	return rc;
}
