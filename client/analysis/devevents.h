/*
 * devevents: which events of a profiler trace ran on a device, on which
 * card, and of what kind; and which are the host's (spyremon(1), "export
 * --ops", gives the rules to users).
 *
 * A device event is a complete event (ph X) whose cat is one of
 * Kineto's device categories (kernel, gpu_memcpy, gpu_memset,
 * cuda_sync), or whose args carry a stream (the rule of Holistic Trace
 * Analysis, which takes in other accelerators' device events, as MTIA's
 * mtia_ccp_events) and whose cat is not the host's (cpu_op,
 * python_function, user_annotation, or a runtime's or driver's: a cat
 * ending in _runtime or _driver, whose launches name the stream too);
 * gpu_user_annotation is not one: it marks a span of a device's time,
 * not work.  The Spyre runtime's device events are begin and end pairs
 * (ph B, E) that carry the card's cycle stamps (args or attr TS1, or
 * cycles_ts): devevent_is_device takes each half, and the caller pairs
 * them (devevent_pairs).  Its card is args.device when an integer,
 * else its pid: Kineto puts a device's events under the device's index
 * as pid.  The trace's device N is the database's card N (aiu-smi's ID).
 *
 * A host event is any other complete event with a duration but the
 * spans that enclose others: profiler steps, user annotations and
 * Kineto's "Trace" span of the whole recording.
 */
#ifndef SPYREMON_DEVEVENTS_H
#define SPYREMON_DEVEVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

/* The categories of the per-category table, in its order. */
enum ops_category {
	OPS_COMPUTE,		/* kernels but the below */
	OPS_MEMORY,		/* copies and sets of memory, DMA */
	OPS_COMM,		/* collectives, peer sends and receives */
	OPS_OTHER,		/* synchronisation, waits */
	OPS_IDLE,		/* the card's time with no device event */
	OPS_NCAT,
};

/* A category's name: "compute", "memory copy", "communication", ... */
const char *ops_category_name(enum ops_category c);

/* Whether ev is a device event; its card in *card (false: no card). */
bool devevent_is_device(const struct trace_event *ev, bool *has_card,
    int64_t *card);

/*
 * The begins of B/E device events waiting for their ends.  An end closes
 * the latest open begin of the same card, track (tid) and name.
 */
struct devevent_pairs {
	struct devevent_open {
		int64_t	 card;
		uint64_t track;
		int64_t	 ts_ns;		/* own base */
		char	*name;
	} *open;
	size_t	 n, cap;
	uint64_t unpaired;		/* ends with no begin */
};

/*
 * Take the begin or end ev (a device event of card, ph B or E).  For an
 * end that closes a begin, true with that begin's own time in *begin_ns.
 * Dies when out of memory.
 */
bool devevent_pair(struct devevent_pairs *p, const struct trace_event *ev,
    int64_t card, int64_t *begin_ns);

/* Begins still open; release what p holds. */
size_t devevent_pairs_open(const struct devevent_pairs *p);
void devevent_pairs_free(struct devevent_pairs *p);

/* Whether ev is a host event (above). */
bool devevent_is_host(const struct trace_event *ev);

/*
 * The category of a device event from its name and cat, by the first
 * rule that holds, names compared without regard to case but for
 * "Sync": communication if the name holds nccl, rccl, hccl, allreduce,
 * all_reduce, allgather, all_gather, reducescatter, reduce_scatter,
 * alltoall, sendrecv, rdma or broadcast; memory copy if cat is gpu_memcpy or
 * gpu_memset, or the name holds memcpy, memset or dma; other if cat is
 * cuda_sync or the name holds "Sync" (so, as in HTA, not "async"),
 * "stream wait" or event_wait; compute otherwise.
 */
enum ops_category devevent_category(const char *name, const char *cat);

#endif
