/*
 * merge_ops: the energy of each device event, for a merged trace
 * ("export --trace IN --merge OUT", merge.h).
 *
 * Adding args to the original's events would rewrite them, and a merge
 * keeps every original byte; so the energy goes on slices of their own.
 * Per card that has device events, one more process ("Spyre N · energy
 * per device event", on the next free pid after the cards' and sorted
 * after them) holds an X event mirroring each device event of the card:
 * the same ts and dur, name "energy", cat "spyremon_energy", and args
 * event (the device event's name), energy_J (its share of the card's
 * energy, as export --ops shares it: opsenergy.h) and mean_W (that over
 * its duration).  Not the device event's name: analyzers that know device
 * events by name (aiu-trace-analyzer) would take the slice for one.
 * Events that overlap go on lanes (tids 1, 2, ...) so that each lane's
 * slices nest.
 */
#ifndef SPYREMON_MERGE_OPS_H
#define SPYREMON_MERGE_OPS_H

#include <sqlite3.h>

#include "merge_priv.h"

/*
 * Write the energy slices of rq's trace through put (as merge_events_write
 * writes its events: "\n" before the first of the merge's, ",\n" before
 * each other), after the st->cards cards' processes and st->events events
 * already written; st->events and st->energy_slices count them.  A trace
 * without device events writes none.  Returns a CLIENT_EXIT_* after
 * printing any error.
 */
int merge_ops_write(sqlite3 *db, const struct merge_request *rq,
    merge_put_fn put, void *arg, struct merge_stats *st);

#endif
