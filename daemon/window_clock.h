/*
 * window_clock: a window's times against the host clock's steps
 * (clockstep.h): the monotonic clock and the steps seen at its begin,
 * how long it ran to an end, and when windows.max_open is up for it.
 * Below windows.c; it knows nothing of the set of windows.
 */
#ifndef SPYREMON_WINDOW_CLOCK_H
#define SPYREMON_WINDOW_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "windows.h"

/*
 * The monotonic clock at realtime at_ns (before or after now), and
 * the host clock steps so far, into win.
 */
void window_clock_mark(struct window *win, int64_t at_ns);

/*
 * How long win ran to realtime end_ns (before or after now): by
 * the monotonic clock if its begin's is known, else between its stamps;
 * with the sentence for its end_note in note ("" if no host clock step
 * crossed it).
 */
int64_t window_clock_elapsed(const struct window *win, int64_t end_ns,
    char *note, size_t len);

/*
 * When win has been open for max_open_ns, by the host clock as it is now:
 * its begin moved by the steps of the clock seen since it began (a window
 * loaded at start counts them from then, the step back while no daemon
 * ran included), so that a step forward does not close it early, nor a
 * step back keep it open an hour longer.  INT64_MAX if that is past the
 * clock's range.
 */
int64_t window_clock_expiry(const struct window *win, uint64_t max_open_ns);

#endif
