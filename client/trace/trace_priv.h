/*
 * trace_priv: the parts of the trace reader that trace.c shares with
 * trace_util.c and trace_tally.c; not for other modules.
 */
#ifndef SPYREMON_TRACE_PRIV_H
#define SPYREMON_TRACE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/*
 * Step names: a POSIX ERE matched against whole names, with a cache of
 * recent answers, since most names recur (aten::mm ...).  new returns
 * TRACE_OK, or TRACE_ERR_PATTERN or TRACE_ERR_NOMEM with *err set.
 */
struct step_matcher;
int step_matcher_new(const char *pattern, struct step_matcher **out,
    struct trace_error *err);
/* name is NUL-terminated at len. */
bool step_matcher_match(struct step_matcher *m, const char *name, size_t len);
void step_matcher_free(struct step_matcher *m);

/*
 * The tally of a trace's events into a trace_info.  init returns TRACE_OK
 * or TRACE_ERR_NOMEM.  event takes every element of the events array, M
 * events too, with is_step already decided; finish works out the dialect
 * and the span once the header is known (info.has_base, info.base_ns).
 * Both return TRACE_OK, or a TRACE_ERR_* with *why set to a constant
 * message.  The reader fills the header's fields of info itself.
 */
struct pid_set;
struct trace_tally {
	struct trace_info info;
	struct pid_set	*pids;
	bool		 has_last_pid;
	int64_t		 last_pid;
	/* extremes on the own base, without and with the ts == 0 events */
	bool		 has_nonzero, has_zero;
	int64_t		 first_nonzero, last_nonzero, last_zero;
	uint64_t	 nonzero_events, zero_events;
	size_t		 steps_cap;
};

int tally_init(struct trace_tally *t);
int tally_event(struct trace_tally *t, const struct trace_event *ev,
    const char **why);
int tally_finish(struct trace_tally *t, bool top_array, const char **why);
void tally_free(struct trace_tally *t);

#endif
