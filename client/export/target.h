/*
 * target: a profiler trace given to "spyremon export --trace", read
 * once (trace.h) and placed on the samples' clock.
 *
 * A trace's own times (trace_info) become absolute CLOCK_REALTIME ns by
 * adding shift_ns, which comes from the trace itself when it has absolute
 * time, else from --trace-start (the absolute time of ts = 0) or
 * --align-window (its first event at the window's begin).  Its times
 * follow the host clock as it was at its start: a sample stamped after a
 * step of that clock is brought into them by the steps between (epochs).
 * A trace without
 * absolute time and neither option is an error that names both: the
 * clock is never guessed.
 *
 * Functions returning int give CLIENT_EXIT_OK, or another CLIENT_EXIT_*
 * after printing the error, which names the file (and for a corrupt
 * trace the byte offset).
 */
#ifndef SPYREMON_TRACETARGET_H
#define SPYREMON_TRACETARGET_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "dbread.h"
#include "trace.h"

/* Where a trace's absolute time came from. */
enum trace_clock {
	TRACE_CLOCK_OWN,	/* the trace's base or absolute ts */
	TRACE_CLOCK_START,	/* --trace-start */
	TRACE_CLOCK_WINDOW,	/* --align-window */
};

struct trace_target {
	const char *path;		/* as given; not owned */
	struct trace_info info;
	enum trace_clock clock;
	int64_t	 shift_ns;		/* absolute ns = own ns + shift_ns */
	int64_t	 start_ns, end_ns;	/* the absolute span */
	char	 host[256];		/* the trace's host_name, or from its file name; "" */
	/*
	 * Its time across steps of the host clock (dbread.h): the samples
	 * of each epoch shifted into it, as every reader of the trace's
	 * samples takes them (db_trace_cursor)
	 */
	struct db_trace_clock epochs;
};

/* How to place traces without absolute time, and which events are steps. */
struct trace_clock_options {
	const char *trace_start;	/* --trace-start TIME, or NULL */
	const char *align_window;	/* --align-window TAG|ID, or NULL */
	const char *step_pattern;	/* --step-pattern REGEX, or NULL */
	/* NULL, or given every event of the read (trace_options.on_event) */
	void	(*on_event)(const struct trace_event *ev, void *arg);
	void	*arg;
};

/*
 * Read the trace at path and place it: fills *t (release it with
 * trace_target_free, also on failure).  The window of --align-window is
 * looked up in db.  A trace with no timed events is an error.
 */
int trace_target_load(sqlite3 *db, const char *path,
    const struct trace_clock_options *o, struct trace_target *t);

/*
 * Fail unless some sample's interval overlaps t's span widened by pad_ns,
 * saying how far the nearest samples are, and in which direction.
 */
int trace_target_check_samples(sqlite3 *db, const struct trace_target *t,
    int64_t pad_ns);

/*
 * The two halves of trace_target_load, for a caller that must know the
 * trace's host before choosing its database: read fills t (info and
 * host; release it with trace_target_free, also on failure), place sets
 * its clock and span.
 */
int trace_target_read(const char *path, const struct trace_clock_options *o,
    struct trace_target *t);
int trace_target_place(sqlite3 *db, const struct trace_clock_options *o,
    struct trace_target *t);

void trace_target_free(struct trace_target *t);

/* The own time of absolute time abs_ns: what the trace's ts would be, in ns. */
static inline int64_t
trace_target_own(const struct trace_target *t, int64_t abs_ns)
{
	return abs_ns - t->shift_ns;
}

#endif
