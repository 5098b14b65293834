/* dstamp: direct rows' sequence numbers and read times by stamp (dstamp.h). */
#include "dstamp.h"

#include <stddef.h>

#include "store.h"

int64_t
dstamp_put(struct dstamp_ring *r, int64_t ts_ns, uint32_t seq,
    int64_t arrival_ns)
{
	if (r->last_ts_ns != 0)
		ts_ns = store_stamp_after(r->last_ts_ns, ts_ns);
	r->last_ts_ns = ts_ns;
	r->e[r->head] = (struct dstamp){ ts_ns, seq, arrival_ns };
	r->head = (r->head + 1) % DSTAMP_RING;
	return ts_ns;
}

const struct dstamp *
dstamp_get(const struct dstamp_ring *r, int64_t ts_ns)
{
	/* newest first: after a step back a stamp may come again */
	for (unsigned k = 1; k <= DSTAMP_RING; k++) {
		const struct dstamp *d =
		    &r->e[(r->head + DSTAMP_RING - k) % DSTAMP_RING];

		if (d->ts_ns == ts_ns && ts_ns != 0)
			return d;
	}
	return NULL;
}
