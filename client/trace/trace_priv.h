/*
 * trace_priv: the parts of the trace reader that trace.c shares with
 * trace_event.c, trace_util.c and trace_tally.c; not for other modules.
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
 * A JSON number s[0..len) (trace_util.c): as scale decimal places, into
 * TRACE_OK, or TRACE_ERR_SYNTAX or TRACE_ERR_LIMIT with msg naming what
 * ("ts 1x is not a number"); and as an integer (ids, ranks, pids),
 * false if it is not one.
 */
int trace_number_value(const char *s, size_t len, int scale,
    const char *what, int64_t *out, char *msg, size_t msglen);
bool trace_integer_value(const char *s, size_t len, int64_t *out);

/*
 * The keys the reader tells apart: the header's, distributedInfo's and a
 * deviceProperties entry's (trace.c), an event's members and those of
 * its args (trace_event.c).
 */
enum key {
	KEY_NONE,
	KEY_TRACE_EVENTS, KEY_BASE, KEY_DISPLAY_UNIT, KEY_DISTINFO, KEY_DEVICES,
	KEY_HOST,
	KEY_PH, KEY_TS, KEY_DUR, KEY_NAME, KEY_CAT, KEY_PID, KEY_TID, KEY_ARGS,
	KEY_STREAM, KEY_ARG_DEVICE, KEY_FLOPS, KEY_CYCLES, KEY_TS1, KEY_POWER,
	KEY_CORRELATION,
	KEY_RANK, KEY_WORLD_SIZE,
	KEY_ID, KEY_DEVICE_NAME,
};

/*
 * One event being read (trace_event.c): its members, kept as the parser
 * meets them, until its '}' makes a trace_event of them.
 */
struct event_draft {
	char	 ph;
	bool	 has_ts, has_dur, has_pid, is_kernel, name_truncated;
	bool	 has_tid, has_stream, has_device, has_flops, has_cycles;
	bool	 has_power, has_ts1, ts_float, has_correlation;
	int64_t	 stream_id, correlation;
	uint32_t power;
	uint64_t ts1;
	int64_t	 ts, dur, pid, tid, device;
	uint64_t track;
	double	 flops;
	char	 cat[TRACE_CAT_MAX];
	uint64_t offset;
	size_t	 name_len;
	char	 name[TRACE_NAME_MAX];
};

/* Start the draft of the event whose '{' is at offset. */
void event_draft_begin(struct event_draft *ev, uint64_t offset);

/*
 * The member, or KEY_NONE, that key k names in an event, and in its args;
 * a stream or cycle-stamp key in the args marks the draft as having one,
 * whatever its value.
 */
enum key event_draft_key(const unsigned char *k, size_t len);
enum key event_draft_args_key(struct event_draft *ev, const unsigned char *k,
    size_t len);

/*
 * A value s[0..len) of member key, of the event or of its args.  A ts
 * with a fraction or an exponent is noted in info (ts_fraction,
 * ts_decimals).  event_draft_number returns TRACE_OK, or TRACE_ERR_SYNTAX
 * or TRACE_ERR_LIMIT with msg set, for a ts or dur that is not a number
 * or out of range; other members that are not what they should be are
 * left out.
 */
int event_draft_number(struct event_draft *ev, enum key key, const char *s,
    size_t len, struct trace_info *info, char *msg, size_t msglen);
void event_draft_string(struct event_draft *ev, enum key key,
    const unsigned char *s, size_t len);
void event_draft_args_number(struct event_draft *ev, enum key key,
    const char *s, size_t len);
void event_draft_args_string(struct event_draft *ev, enum key key,
    const char *s, size_t len);

/*
 * The event that the draft makes, length bytes from its '{' through its
 * '}': a negative dur is taken as 0 and counted in info's negative_durs,
 * and an X event whose whole name m matches is a step.  out's strings
 * point into the draft.
 */
void event_draft_finish(const struct event_draft *ev, uint64_t length,
    struct step_matcher *m, struct trace_info *info, struct trace_event *out);

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
