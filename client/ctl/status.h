/*
 * status: the default view of the daemon's status reply (spyremond(8),
 * "status") for spyremon status, beside the command and its -v view in
 * status.c.  It reads the reply tolerantly: a member missing (an older
 * daemon) is left out.
 */
#ifndef SPYREMON_STATUS_H
#define SPYREMON_STATUS_H

#include <yajl/yajl_tree.h>

/*
 * A card with no sample for this long, or for STATUS_STALE_INTERVALS of
 * the interval aiu-smi samples at if that is longer, is called out.
 */
#define STATUS_STALE_MIN_NS	(5LL * 1000000000LL)
#define STATUS_STALE_INTERVALS	3

/*
 * The default view: a line each for the daemon, aiu-smi, the database and
 * the windows, then one per card (device, bus ID, its newest sample's age,
 * where its metrics come from and why); warnings that matter first.  At
 * most about 14 lines plus the cards and the problems found.
 */
void status_print_brief(yajl_val reply);

/*
 * The line on the host clock's steps of status's "clock" object c, each
 * line after indent; no line if there was none.
 */
void status_clock_line(yajl_val c, const char *indent);

/*
 * The head of a line on aiu-smi, for both views: its state, its pid and
 * how often it was restarted, as far as the reply c says; no newline.
 */
void status_child_head(yajl_val c);

#endif
