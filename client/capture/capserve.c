/* capserve: who gets the trace request and what polls say (capserve.h). */
#include "capserve.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MS	1000000LL

struct capproc *
capserve_find(struct capserve *c, int32_t pid)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	return NULL;
}

void
capserve_plan(struct capserve *c, int64_t now)
{
	int64_t start;

	if (c->start_ns != 0)
		return;
	if (c->by_iterations) {
		/* nothing to plan: each process starts at its next step */
		c->start_ns = now;
		c->serve_until_ns = now + c->extra_ns;
		return;
	}
	start = now + c->extra_ns + c->warmup_ns + CAPSERVE_TICK_NS +
	    CAPSERVE_MARGIN_NS;
	/* PROFILE_START_TIME is in whole ms: round up */
	c->start_ns = (start + MS - 1) / MS * MS;
	c->end_ns = c->start_ns + c->duration_ns;
	/* a later process must still see one tick before start - warm-up */
	c->serve_until_ns = c->start_ns - c->warmup_ns - CAPSERVE_TICK_NS -
	    CAPSERVE_MARGIN_NS / 2;
}

struct capproc *
capserve_add(struct capserve *c, int32_t pid, int64_t now)
{
	struct capproc *p;

	if (c->nprocs == CAPSERVE_MAX_PROCS)
		return NULL;
	p = &c->procs[c->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->served_ns = now;
	p->last_poll_ns = now;
	p->state = CAPPROC_SERVED;
	return p;
}

bool
capserve_closed(const struct capserve *c, int64_t now)
{
	return c->start_ns != 0 && now > c->serve_until_ns;
}

/*
 * A served process polled; what it says of its trace, which is not there:
 * CAPSERVE_AGAIN if it refused and is asked again.
 */
static enum capserve_answer
served_poll(struct capserve *c, struct capproc *p, int32_t type, int64_t now)
{
	if (!(type & KIPC_ACTIVITIES)) {
		p->busy_seen = true;
		return CAPSERVE_NOTHING;
	}
	if (c->by_iterations ? !p->busy_seen :
	    now < c->start_ns + CAPSERVE_MARGIN_NS)
		return CAPSERVE_NOTHING;	/* the request may still be waiting */
	if (p->busy_seen) {
		p->state = CAPPROC_NO_TRACE;
		snprintf(p->why, sizeof(p->why), "traced (it polled busy), but "
		    "wrote no trace");
		return CAPSERVE_NOTHING;
	}
	if (!c->by_iterations && c->nprocs == 1 && c->retried < c->retries) {
		c->retried++;
		c->start_ns = 0;
		capserve_plan(c, now);
		p->served_ns = now;
		return CAPSERVE_AGAIN;
	}
	p->state = CAPPROC_REFUSED;
	snprintf(p->why, sizeof(p->why), "did not start the trace: it was "
	    "idle after the planned start%s", c->retried > 0 ? ", twice" : "");
	return CAPSERVE_NOTHING;
}

enum capserve_answer
capserve_poll(struct capserve *c, int32_t pid, uid_t uid,
    const struct kipc_request *r, int64_t now, bool trace_there)
{
	struct capproc *p;

	if (!kipc_request_has(r, c->target) || r->npids == 0 ||
	    r->pids[0] != pid || (!c->any_uid && uid != c->uid)) {
		c->other_polls++;
		c->other_pid = pid;
		return CAPSERVE_NOTHING;
	}
	if ((p = capserve_find(c, pid)) != NULL) {
		p->last_poll_ns = now;
		if (p->state != CAPPROC_SERVED)
			return CAPSERVE_NOTHING;
		if (trace_there) {
			capserve_found(c, pid);
			return CAPSERVE_NOTHING;
		}
		return served_poll(c, p, r->type, now);
	}
	if (!(r->type & KIPC_ACTIVITIES)) {
		if (c->busy_polls++ == 0)
			c->first_busy_pid = pid;
		return CAPSERVE_NOTHING;
	}
	if (capserve_closed(c, now) || c->nprocs >= c->max_procs) {
		c->late_polls++;
		return CAPSERVE_NOTHING;
	}
	capserve_plan(c, now);
	if (capserve_add(c, pid, now) == NULL)
		return CAPSERVE_NOTHING;
	return CAPSERVE_REQUEST;
}

void
capserve_found(struct capserve *c, int32_t pid)
{
	struct capproc *p = capserve_find(c, pid);

	if (p != NULL && p->state == CAPPROC_SERVED)
		p->state = CAPPROC_DONE;
}

void
capserve_tick(struct capserve *c, int64_t now, bool (*alive)(int32_t pid))
{
	for (size_t i = 0; i < c->nprocs; i++) {
		struct capproc *p = &c->procs[i];
		int64_t since;

		if (p->state != CAPPROC_SERVED)
			continue;
		if (!alive(p->pid)) {
			p->state = CAPPROC_NO_TRACE;
			snprintf(p->why, sizeof(p->why), "exited before its "
			    "trace was written");
			continue;
		}
		if (c->by_iterations && !p->busy_seen &&
		    now - p->served_ns > c->pending_ns) {
			p->state = CAPPROC_REFUSED;
			snprintf(p->why, sizeof(p->why), "did not start the "
			    "trace within %.0fs: a trace by iterations starts "
			    "at the job's next step, and this job counts none",
			    (double)c->pending_ns / 1e9);
			continue;
		}
		since = p->last_poll_ns > c->end_ns ? p->last_poll_ns :
		    c->end_ns;
		if (!c->by_iterations && c->quiet_ns > 0 &&
		    now - since > c->quiet_ns) {
			p->state = CAPPROC_NO_TRACE;
			if (c->unseen)
				snprintf(p->why, sizeof(p->why), "wrote no trace "
				    "within %.0fs of the trace's end (its polls go "
				    "to dynolog: whether it refused the start or is "
				    "still writing cannot be told)",
				    (double)(now - c->end_ns) / 1e9);
			else
				snprintf(p->why, sizeof(p->why), "wrote no trace, "
				    "and has not polled since %.0fs after the "
				    "trace's end", (double)(now - c->end_ns) / 1e9);
		}
	}
}

bool
capserve_settled(const struct capserve *c)
{
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i].state == CAPPROC_SERVED)
			return false;
	return true;
}

size_t
capserve_config(const struct capserve *c, const char *file, long n,
    const char *trace_id, char *buf, size_t len)
{
	int k;

	if (c->by_iterations)
		k = snprintf(buf, len, "ACTIVITIES_LOG_FILE=%s\n"
		    "PROFILE_START_ITERATION=0\n"
		    "PROFILE_START_ITERATION_ROUNDUP=1\n"
		    "ACTIVITIES_ITERATIONS=%ld\n"
		    "REQUEST_TRACE_ID=%s", file, n, trace_id);
	else
		k = snprintf(buf, len, "ACTIVITIES_LOG_FILE=%s\n"
		    "PROFILE_START_TIME=%" PRId64 "\n"
		    "ACTIVITIES_DURATION_MSECS=%" PRId64 "\n"
		    "ACTIVITIES_WARMUP_PERIOD_SECS=%" PRId64 "\n"
		    "REQUEST_TRACE_ID=%s", file, (int64_t)(c->start_ns / MS),
		    (int64_t)(c->duration_ns / MS),
		    (int64_t)(c->warmup_ns / (1000 * MS)), trace_id);
	return k > 0 && (size_t)k < len ? (size_t)k : 0;
}
