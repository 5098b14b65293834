/*
 * capserve: which polling process gets the trace request, when the trace
 * is planned for, and what each process's polls say about its trace.
 * Pure logic on times and events, with no I/O: capture.c feeds it what
 * the socket and the file system show.
 *
 * The plan.  Kineto's profiler thread looks at a pending request once a
 * second (CAPSERVE_TICK_NS, its kControllerIntervalMsecs): it takes a
 * timed request at the first look less than a tick before start minus
 * warm-up, and refuses it if that look falls after start minus warm-up.
 * So the first process served gets start = now + extra + warm-up + tick +
 * CAPSERVE_MARGIN_NS, in whole ms, and later polls are served only while
 * they leave a tick and some slack before start minus warm-up; extra is a
 * poll interval when several processes are expected, so that all of them
 * poll in time and trace the same span.  By iterations there is no time
 * to plan: each process starts at its next step.
 *
 * What polls say.  A process polls with type 0 from the moment it takes a
 * request (warm-up) until its trace is written, and with the ACTIVITIES
 * bit otherwise, also while a request waits for its start.  The trace is
 * renamed into place before the type goes back.  So, for a served
 * process whose trace is not there yet, a poll with the bit after the
 * planned start means it never took the request (refused), or took it
 * and wrote nothing where asked (it was seen busy).
 *
 * Asking again.  Of the profiler thread's looks, the one that takes a
 * timed request is the last before start minus warm-up, up to a tick
 * before it: a thread that has run before looks at a phase of its own, so
 * that look may come any time in that last second, and a host so loaded
 * that the thread wakes later than that makes it refuse.  A lone process
 * that refused is asked once more (retries), with a new plan.
 */
#ifndef SPYREMON_CAPSERVE_H
#define SPYREMON_CAPSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kipc.h"

#define CAPSERVE_TICK_NS	(1000LL * 1000000LL)	/* Kineto's controller interval */
#define CAPSERVE_MARGIN_NS	(250LL * 1000000LL)	/* slack on top of the tick */
#define CAPSERVE_MAX_PROCS	256

enum capproc_state {
	CAPPROC_SERVED,		/* given the request; its trace is due */
	CAPPROC_DONE,		/* its trace is there */
	CAPPROC_REFUSED,	/* it never started the trace */
	CAPPROC_NO_TRACE,	/* it traced, or may have, and wrote nothing */
};

struct capproc {
	int32_t	 pid;		/* the process that polled (its pids[0]) */
	int64_t	 served_ns;
	int64_t	 last_poll_ns;
	bool	 busy_seen;	/* polled with type 0 since it was served */
	enum capproc_state state;
	char	 why[160];	/* REFUSED, NO_TRACE: for a person */
};

struct capserve {
	/* set by the caller */
	int32_t	 target;	/* --pid: polls whose pids hold it are ours */
	uid_t	 uid;		/* only polls from this uid, unless any_uid */
	bool	 any_uid;
	bool	 by_iterations;
	int64_t	 duration_ns;
	int64_t	 warmup_ns;
	int64_t	 extra_ns;	/* wait for other processes before the start */
	int64_t	 quiet_ns;	/* a served process silent this long is given up */
	int64_t	 pending_ns;	/* by iterations: a request not started this long is refused */
	size_t	 max_procs;
	unsigned retries;	/* a lone process that refused is asked again */
	bool	 unseen;	/* dynolog answers the polls: capserve sees none */
	/* the plan, set at the first serve */
	int64_t	 start_ns, end_ns, serve_until_ns;
	/* what happened */
	struct capproc procs[CAPSERVE_MAX_PROCS];
	size_t	 nprocs;
	size_t	 busy_polls;	/* ours, unserved, with type 0 (a trace of its own) */
	size_t	 late_polls;	/* ours, after serve_until_ns */
	size_t	 other_polls;	/* not ours: answered with nothing */
	int32_t	 other_pid;	/* the last of those */
	int32_t	 first_busy_pid;
	unsigned retried;
};

enum capserve_answer {
	CAPSERVE_NOTHING,	/* reply with an empty config */
	CAPSERVE_REQUEST,	/* reply with the trace request */
	CAPSERVE_AGAIN,		/* the lone process refused: the request, newly planned */
};

/*
 * A poll r from pid (the kernel's word) of uid at now; trace_there says
 * whether that process's trace file exists already.  Returns what to
 * answer; the plan is made at the first CAPSERVE_REQUEST, and made anew at
 * CAPSERVE_AGAIN (the process stays the one served).
 */
enum capserve_answer capserve_poll(struct capserve *c, int32_t pid, uid_t uid,
    const struct kipc_request *r, int64_t now, bool trace_there);

/* Plan for a request handed over at now without polls (dynolog's path). */
void capserve_plan(struct capserve *c, int64_t now);

/* Record a process served outside the socket (dynolog's path). */
struct capproc *capserve_add(struct capserve *c, int32_t pid, int64_t now);

/* The trace of process pid is there. */
void capserve_found(struct capserve *c, int32_t pid);

/*
 * Time passes: a served process that is gone (alive false) or has not
 * polled for quiet_ns after its planned end is given up; by iterations,
 * one not started pending_ns after it was served is refused.  alive is
 * asked only for served processes.
 */
void capserve_tick(struct capserve *c, int64_t now,
    bool (*alive)(int32_t pid));

/*
 * The request's config text for the plan, into buf (len bytes), asking
 * for a trace to file (ACTIVITIES_LOG_FILE) with trace_id: by iterations
 * (n steps from the next) or timed (PROFILE_START_TIME,
 * ACTIVITIES_DURATION_MSECS, ACTIVITIES_WARMUP_PERIOD_SECS).  Its length,
 * 0 if it does not fit.
 */
size_t capserve_config(const struct capserve *c, const char *file, long n,
    const char *trace_id, char *buf, size_t len);

/* The process served as pid, or NULL. */
struct capproc *capserve_find(struct capserve *c, int32_t pid);

/* True once every served process is DONE, REFUSED or NO_TRACE. */
bool capserve_settled(const struct capserve *c);

/* True once serving is over: the plan's serve_until_ns has passed. */
bool capserve_closed(const struct capserve *c, int64_t now);

#endif
