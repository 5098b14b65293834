/*
 * merge_ops: energy slices mirroring a trace's device events (merge_ops.h).
 *
 * The events and their shares come from ops_load (opsenergy.h), which
 * reads the trace once more and the card's power samples over its span:
 * the figures export --ops sums per operator.  Lanes are given greedily
 * in order of start: an event goes on the first lane whose last event
 * has ended, so a card whose streams never overlap has one lane.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "dbread.h"
#include "merge_ops.h"
#include "opsenergy.h"
#include "summary.h"
#include "target.h"

struct writer {
	const struct merge_request *rq;
	merge_put_fn put;
	void	*arg;
	struct merge_stats *st;
	struct merge_buf b;
};

static int
put_event(struct writer *w)
{
	return merge_buf_put(&w->b, w->put, w->arg, w->st);
}

/* The M events naming and sorting the energy process of card c at pid. */
static int
put_process(struct writer *w, int device, int64_t pid, int64_t sort)
{
	const struct merge_request *rq = w->rq;
	char name[160];
	const char *meta[2] = { "process_name", "process_sort_index" };

	snprintf(name, sizeof(name), "Spyre %d \xc2\xb7 energy per device "
	    "event%s%s", device, rq->host != NULL ? " \xc2\xb7 " : "",
	    rq->host != NULL ? rq->host : "");
	for (int k = 0; k < 2; k++) {
		merge_buf_meta(&w->b, rq, meta[k], pid, 0);
		if (k == 0) {
			merge_buf_fmt(&w->b, ",\"args\":{\"name\":");
			merge_buf_json(&w->b, name);
			merge_buf_add(&w->b, "}}", 2);
		} else
			merge_buf_fmt(&w->b, ",\"args\":{\"sort_index\":%"
			    PRId64 "}}", sort);
		if (put_event(w) == -1)
			return -1;
	}
	return 0;
}

/* The slices of card c, on pid. */
static int
put_slices(struct writer *w, const struct ops_result *res,
    const struct ops_card *c, int64_t pid)
{
	const struct trace_target *t = w->rq->t;
	int64_t *lane_end = NULL;
	size_t nlanes = 0;
	int rc = 0;

	if ((lane_end = calloc(c->nkept + 1, sizeof(*lane_end))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < c->nkept && rc == 0; i++) {
		const struct attrib_event *e = &c->kept[i];
		int64_t lo = trace_target_own(t, e->lo_ns);
		int64_t hi = trace_target_own(t, e->hi_ns);
		size_t lane = 0;

		while (lane < nlanes && lane_end[lane] > e->lo_ns)
			lane++;
		if (lane == nlanes)
			nlanes++;
		lane_end[lane] = e->hi_ns;
		w->b.len = 0;
		/*
		 * Named "energy", the device event's name in args: analyzers
		 * that know device events by their name (aiu-trace-analyzer's
		 * "Cmpt Exec", "DmaI") would take a slice of that name for one.
		 */
		merge_buf_fmt(&w->b, "{\"ph\":\"X\",\"cat\":\"spyremon_energy\","
		    "\"name\":\"energy\",\"pid\":%" PRId64 ",\"tid\":%zu,"
		    "\"ts\":", pid, lane + 1);
		merge_buf_us(&w->b, w->rq, lo);
		/* the rounded end less the rounded start, as the slices' */
		merge_buf_fmt(&w->b, ",\"dur\":");
		merge_buf_us(&w->b, w->rq,
		    merge_round_ns(hi, merge_decimals(w->rq)) -
		    merge_round_ns(lo, merge_decimals(w->rq)));
		merge_buf_fmt(&w->b, ",\"args\":{\"event\":");
		merge_buf_json(&w->b, res->names[e->op].name);
		merge_buf_fmt(&w->b, ",\"energy_J\":%.9g", c->event_j[i]);
		if (e->hi_ns > e->lo_ns)
			merge_buf_fmt(&w->b, ",\"mean_W\":%.9g", c->event_j[i] /
			    ((double)(e->hi_ns - e->lo_ns) / 1e9));
		merge_buf_add(&w->b, "}}", 2);
		if (put_event(w) == -1)
			rc = -1;
		else
			w->st->energy_slices++;
	}
	free(lane_end);
	return rc;
}

int
merge_ops_write(sqlite3 *db, const struct merge_request *rq,
    merge_put_fn put, void *arg, struct merge_stats *st)
{
	const struct trace_info *in = &rq->t->info;
	struct writer w = { .rq = rq, .put = put, .arg = arg, .st = st };
	struct db_catalog cat;
	struct ops_result res;
	struct ops_request orq;
	size_t nproc = 0, k = 0;
	int64_t first;
	int rc;

	if (db_catalog_load(db, &cat) != 0)
		return db_error(db, "the catalog");
	orq = (struct ops_request){
		.path = rq->t->path, .info = in, .shift_ns = rq->t->shift_ns,
		.span_lo = rq->t->start_ns, .span_hi = rq->t->end_ns,
		.clock = &rq->t->epochs, .cat = &cat, .device_sql = rq->device_sql, .none_ok = true,
		.keep_events = true, .events = rq->events, .idle_lookback_ns =
		    rq->idle_lookback_ns > 0 ? rq->idle_lookback_ns :
		    SUMMARY_IDLE_LOOKBACK_NS,
	};
	rc = ops_load(db, &orq, &res);
	for (size_t i = 0; rc == CLIENT_EXIT_OK && i < res.ncards; i++)
		nproc += res.cards[i].nkept > 0;
	if (rc == CLIENT_EXIT_OK && nproc > 0 && merge_first_pid(
	    in->has_max_pid, in->max_pid, st->cards + nproc, &first) == -1) {
		warnx("%s: the trace uses pid %" PRId64 ": no %zu pids above "
		    "it are free for the cards and their energy", rq->t->path,
		    in->max_pid, st->cards + nproc);
		rc = CLIENT_EXIT_FAILED;
	}
	for (size_t i = 0; rc == CLIENT_EXIT_OK && i < res.ncards; i++) {
		const struct ops_card *c = &res.cards[i];
		int64_t pid, sort;

		/* first is set once some card has slices (nproc > 0) */
		if (c->nkept == 0)
			continue;
		pid = first + (int64_t)(st->cards + k);
		sort = (rq->sort_base != 0 ? rq->sort_base : MERGE_SORT_INDEX) +
		    (int64_t)(st->cards + k);
		k++;
		if (put_process(&w, c->device, pid, sort) == -1 ||
		    put_slices(&w, &res, c, pid) == -1)
			rc = CLIENT_EXIT_FAILED;
	}
	st->energy_cards = k;
	free(w.b.p);
	ops_result_free(&res);
	db_catalog_free(&cat);
	return rc;
}
