/*
 * direct_clock: whether a metric file's stamp (the writer's clock, in ms)
 * may be taken as the card's time (contract in direct_clock.h; the
 * tolerances in direct.h).
 */
#include "direct.h"
#include "direct_clock.h"

#include "timeparse.h"

/*
 * Why stamp ms (the writer's clock), read at realtime now_ns, cannot be
 * the card's time, or NULL if it can (see direct.h); good_ms is the
 * previous good stamp, 0 if none.
 */
const char *
direct_stamp_fault(uint64_t ms, uint64_t good_ms, int64_t now_ns)
{
	int64_t ns;

	if (ms == 0 || ms > (uint64_t)INT64_MAX / NSEC_PER_MSEC)
		return "out of range (zero or overflowed)";
	ns = (int64_t)(ms * NSEC_PER_MSEC);
	if (ns > now_ns && ns - now_ns > DIRECT_CLOCK_AHEAD_NS)
		return "ahead of the host clock";
	if (ns < now_ns && now_ns - ns > DIRECT_CLOCK_BEHIND_NS)
		return "behind the host clock";
	if (good_ms != 0 && ms < good_ms)
		return "behind the previous stamp";
	if (good_ms != 0 && ms - good_ms > DIRECT_SPAN_MAX_MS)
		return "too long after the previous stamp (interval out of range)";
	return NULL;
}

/* True if baseline stamp ms overflows or is ahead of the host clock. */
bool
direct_baseline_off(uint64_t ms, int64_t now_ns)
{
	return ms > (uint64_t)INT64_MAX / NSEC_PER_MSEC ||
	    ((int64_t)(ms * NSEC_PER_MSEC) > now_ns &&
	    (int64_t)(ms * NSEC_PER_MSEC) - now_ns > DIRECT_CLOCK_AHEAD_NS);
}
