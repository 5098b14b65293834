/*
 * merge_bd: each card's time by class, as export --breakdown classifies
 * it, as a track of a merged trace ("export --trace IN --merge OUT
 * --breakdown-track", merge.h), so that a trace viewer shows it under
 * the steps.
 *
 * One process, "spyremon breakdown" (" · host" after it as the cards'
 * names have it), on the next free pid after the cards' and their energy
 * processes and sorted after them, holds one thread per card, "Spyre N
 * classes", in the cards' order.  On it, one X event of cat
 * "spyremon_breakdown" per piece of each step (../analysis/breakdown.h's
 * bd_pieces: a maximal run of one class), or of the card's span (its
 * first event's start to its last end) in a trace without steps: named
 * after its class ("compute", "data movement", "communication",
 * "other", or for idle time its cause: "idle: host wait", "idle: launch
 * gap", "idle: sync", "idle: unexplained"), args step the step's name
 * ("total" for the card's span).  ts is the piece's start and dur its
 * rounded end less its rounded start, in the trace's own time written
 * as merge.h writes times, so that a step's slices touch end to start
 * and add up to its span; a piece that rounds to nothing is left out.
 * Steps that overlap (--step-pattern may choose such) go on more threads,
 * "Spyre N classes 2" ..., each step on the first whose steps have ended.
 */
#ifndef SPYREMON_MERGE_BD_H
#define SPYREMON_MERGE_BD_H

#include "merge_priv.h"

/*
 * Write the track of rq->breakdown through put, after the st->cards
 * cards' and st->energy_cards energy processes and st->events events
 * already written (merge_ops.h); st->events and st->breakdown_slices
 * count them.  Returns a CLIENT_EXIT_* after printing any error.
 */
int merge_bd_write(const struct merge_request *rq, merge_put_fn put,
    void *arg, struct merge_stats *st);

#endif
