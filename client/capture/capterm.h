/*
 * capterm: capture's progress on a terminal: one line on standard error,
 * rewritten in place, and cleared before anything else is printed there.
 * With tty false (standard error is not a terminal) both do nothing.
 */
#ifndef SPYREMON_CAPTERM_H
#define SPYREMON_CAPTERM_H

#include <stdbool.h>

/* Show the progress line fmt, in place of the one before. */
void capterm_progress(bool tty, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Clear the progress line, so that a message takes its place. */
void capterm_clear(bool tty);

#endif
