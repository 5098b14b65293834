/*
 * window_clock: a window's times against the host clock's steps (contract
 * in window_clock.h).  Each reads the steps seen so far (clockstep.h);
 * mark and elapsed first look for one not seen yet (clockstep_check).
 */
#include "window_clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "clockstep.h"
#include "window_json.h"

void
window_clock_mark(struct window *win, int64_t at_ns)
{
	struct clockstep_stats cs;
	int64_t real;
	uint64_t mono;

	(void)clockstep_check();
	clockstep_get_stats(&cs);
	clockstep_read(&real, &mono);
	/* at_ns may be before now or, as capture's begins are, after it */
	win->begin_mono_ns = mono + (uint64_t)(at_ns - real);
	win->steps_at_begin = cs.steps;
	win->net_step_at_begin = cs.net_ns;
}

int64_t
window_clock_elapsed(const struct window *win, int64_t end_ns, char *note,
    size_t len)
{
	struct clockstep_stats cs;
	int64_t real, elapsed, net;
	uint64_t mono, steps;

	(void)clockstep_check();
	clockstep_get_stats(&cs);
	clockstep_read(&real, &mono);
	note[0] = '\0';
	steps = cs.steps - win->steps_at_begin;
	net = cs.net_ns - win->net_step_at_begin;
	/* loaded from the store at start: its stamps less the steps since */
	if (win->begin_mono_ns == 0)
		elapsed = end_ns - win->begin_ns - net;
	else
		elapsed = (int64_t)(mono - win->begin_mono_ns) +
		    (end_ns - real);
	if (elapsed < 0)
		elapsed = 0;
	/* after a step back its end may be stamped before its begin */
	if (steps > 0)
		snprintf(note, len, WINDOW_CLOCK_STEP_MARK " %s by %.3fs "
		    "while it was open (%" PRIu64 " step%s): it ran %.3fs by "
		    "the monotonic clock; its %s, stamped by the host clock, "
		    "%s %.3fs %s", net >= 0 ? "forward" : "back",
		    (double)llabs(net) / 1e9, steps, steps == 1 ? "" : "s",
		    (double)elapsed / 1e9, end_ns >= win->begin_ns ?
		    "begin and end" : "end", end_ns >= win->begin_ns ? "are" :
		    "is", (double)llabs(end_ns - win->begin_ns) / 1e9,
		    end_ns >= win->begin_ns ? "apart" : "before its begin");
	return elapsed;
}

int64_t
window_clock_expiry(const struct window *win, uint64_t max_open_ns)
{
	struct clockstep_stats cs;
	int64_t begin;

	clockstep_get_stats(&cs);
	if (__builtin_add_overflow(win->begin_ns,
	    cs.net_ns - win->net_step_at_begin, &begin) ||
	    begin > INT64_MAX - (int64_t)max_open_ns)
		return INT64_MAX;
	return begin + (int64_t)max_open_ns;
}
