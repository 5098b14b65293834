/*
 * direct_clock: the checks of a metric file writer's stamps against the
 * host clock and against the card's previous stamp, below direct.c, which
 * counts, logs and drops what they refuse (direct.h says the tolerances).
 */
#ifndef SPYREMON_DIRECT_CLOCK_H
#define SPYREMON_DIRECT_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Why stamp ms, read at realtime now_ns, cannot be the card's time, or
 * NULL if it can; good_ms is the previous good stamp, 0 if none.
 */
const char *direct_stamp_fault(uint64_t ms, uint64_t good_ms, int64_t now_ns);

/* True if a first read's stamp ms overflows or is ahead of the host clock. */
bool direct_baseline_off(uint64_t ms, int64_t now_ns);

#endif
