/*
 * salvage_walk: samples rows read from the file's own leaf pages
 * (pagewalk.h) for the key ranges that SQL could not read: the leaves
 * under a damaged interior page, which no b-tree reaches any more.
 *
 * Only pages that no tree reaches and that are not on the freelist are
 * read (dbstat lists every page a tree reaches, damaged ones too), and
 * only when the database has no -wal file with frames (the main file then
 * holds every page as it is).  A record is taken for a row of samples
 * only if it has the table's shape (at least 8 columns, no more than the
 * table; ts_ns, device and interval_ms integers in range, smi_skew_s and
 * src NULL or integers) and its ts_ns lies in a range that SQL could not
 * read, so that no row is copied twice and no row of another table or
 * index is taken for one.  The rows found wait in an in-memory table and
 * are merged, in key order, into the second read of samples.
 */
#ifndef SPYREMON_SALVAGE_WALK_H
#define SPYREMON_SALVAGE_WALK_H

#include <stdbool.h>

#include "pagewalk.h"
#include "salvage_copy.h"

/* Where samples' fixed columns are in the table (-1: absent). */
struct walk_shape {
	int tcols;		/* the table's columns */
	int ts, device, interval, skew, src;
};

/* True if the record v[0..n) can be a row of samples of that shape. */
bool salvage_walk_plausible(const struct pw_value *v, int n,
    const struct walk_shape *shape);

/*
 * Walk s->walk_path for rows of samples in lost[0..nlost) (the first
 * read's); leave them in s->merge.  0, or -1 only when memory runs out;
 * a walk that cannot run says why in s->walk_note.
 */
int salvage_walk(struct salvage *s, const struct keyscan_lost *lost,
    size_t nlost, const struct walk_shape *shape);

/* Free what salvage_walk left. */
void salvage_walk_free(struct salvage *s);

#endif
