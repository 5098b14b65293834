/*
 * dstamp: what a card's recent direct rows carried that pace does not
 * keep (the section's sequence number and the read time), found again by
 * the stamp pace stores them under.
 */
#ifndef SPYREMON_DSTAMP_H
#define SPYREMON_DSTAMP_H

#include <stdbool.h>
#include <stdint.h>

#define DSTAMP_RING	16

struct dstamp {
	int64_t ts_ns;			/* 0: unused */
	uint32_t seq;
	int64_t arrival_ns;
};

/* A card's last DSTAMP_RING rows; zeroed is empty. */
struct dstamp_ring {
	struct dstamp e[DSTAMP_RING];
	unsigned head;
	int64_t last_ts_ns;		/* the newest row's stamp, or 0 */
};

/*
 * Remember a row stamped ts_ns.  Returns the stamp the store will store
 * it under after the previous row (store_stamp_after: two updates
 * written in one ms share a ms stamp), so that every remembered stamp
 * names one row.
 */
int64_t dstamp_put(struct dstamp_ring *r, int64_t ts_ns, uint32_t seq,
    int64_t arrival_ns);

/* The newest row remembered under stamp ts_ns, or NULL. */
const struct dstamp *dstamp_get(const struct dstamp_ring *r, int64_t ts_ns);

#endif
