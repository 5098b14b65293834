/*
 * window_json: a profiling window as JSON, the one shape that spyremon's
 * output (windows --json, summary --json) and spyremond's replies
 * (status, begin, end) share.  The members always come in the order of
 * struct window_json; a writer names in members the ones it knows, and
 * the others are left out.  Built on jsonw.
 */
#ifndef SPYREMON_WINDOW_JSON_H
#define SPYREMON_WINDOW_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>

#include "clocksync.h"

/* window_json.members: the optional members written.  id, tag, begin_ns always are. */
enum {
	WJ_OWNER	= 1 << 0,	/* uid, pid */
	WJ_USER		= 1 << 1,	/* user, between uid and pid */
	WJ_TIMES	= 1 << 2,	/* begin (and with WJ_END end) as UTC text */
	WJ_END		= 1 << 3,	/* end_ns */
	WJ_OPEN		= 1 << 4,	/* open */
	WJ_AUTO_CLOSED	= 1 << 5,	/* auto_closed */
	WJ_ENDING	= 1 << 6,	/* ended_by, until_pid */
	WJ_CLOCKS	= 1 << 7,	/* clock_begin, clock_end */
	WJ_RESTARTS	= 1 << 8,	/* child_restarts */
	WJ_COUNTS	= 1 << 9,	/* duration_ns, samples */
	WJ_HOST		= 1 << 10,	/* hostname, machine_id */
	WJ_ENERGY	= 1 << 11,	/* energy_j */
	WJ_META		= 1 << 12,	/* meta */
};

struct window_json {
	unsigned	 members;	/* WJ_* */
	int64_t		 id;
	const char	*tag;
	int64_t		 uid;
	const char	*user;
	int64_t		 pid;
	int64_t		 begin_ns;
	bool		 has_end;	/* end_ns (and end) known; else null */
	int64_t		 end_ns;
	bool		 open;
	bool		 auto_closed;
	const char	*ended_by;	/* NULL or "": null */
	int64_t		 until_pid;
	const struct clocksync *clock_begin, *clock_end; /* not known: null */
	bool		 has_restarts;	/* else child_restarts is null */
	int64_t		 restarts;
	int64_t		 duration_ns;
	int64_t		 samples;
	const char	*hostname;	/* NULL or "": null */
	const char	*machine_id;	/* NULL or "": null */
	bool		 has_energy;	/* else energy_j is null */
	double		 energy_j;
	/*
	 * meta: the pairs meta_pairs (key, value, key, ...) when nmeta > 0
	 * or meta_json is NULL; else the JSON text meta_json, an object as
	 * it is, anything else as a string when meta_text_as_string, else {}.
	 */
	const char *const *meta_pairs;
	size_t		 nmeta;
	const char	*meta_json;
	bool		 meta_text_as_string;
};

/* w's members, into the object being generated. */
void window_json_members(yajl_gen g, const struct window_json *w);

/* w as an object. */
void window_json(yajl_gen g, const struct window_json *w);

/* A clock's sync state as an object, or null when it is not known. */
void window_json_clock(yajl_gen g, const struct clocksync *c);

/*
 * How a window's end_note starts the sentence saying a step of the host
 * clock crossed the window (what its stamps span is not how long it ran).
 */
#define WINDOW_CLOCK_STEP_MARK	"the host clock was stepped"

#endif
