/*
 * vllm: the counters of a vLLM server (its Prometheus /metrics) that
 * spyremon keeps with a window, and how they are kept: as window
 * metadata, "vllm.url" and "vllm.begin.*" given at the window's begin,
 * and the end's readings "vllm.end.*" given with its end, which the
 * daemon merges into the window's metadata.  Databases written before
 * ends carried metadata keep the end's readings as the metadata of a
 * window of no length tagged VLLM_END_TAG whose "vllm.window" names the
 * window; readers still take them from there.
 */
#ifndef SPYREMON_VLLM_H
#define SPYREMON_VLLM_H

#include <stdbool.h>
#include <stddef.h>

#include "proto.h"

#define VLLM_END_TAG		"vllm-end"
#define VLLM_TIMEOUT_MS		10000	/* to read /metrics */
#define VLLM_NCOUNTERS		3
#define VLLM_NMETA		(VLLM_NCOUNTERS + 2)	/* and url or window, created */

/* The counters, each summed over its label sets. */
struct vllm_counters {
	double v[VLLM_NCOUNTERS];	/* requests, prompt, generation tokens */
	bool has_created;
	double created;			/* the earliest *_created of them: the
					   process's counters' birth */
};

/* "requests", "prompt_tokens", "generation_tokens": the metadata suffixes. */
extern const char *const vllm_counter_keys[VLLM_NCOUNTERS];

/*
 * Read url's /metrics: 0 with *c filled, or -1 with why saying what failed
 * (no answer, a status but 200, malformed text, a counter missing).
 */
int vllm_read(const char *url, struct vllm_counters *c, char *why,
    size_t whylen);

/*
 * The metadata of c as key=value pairs with prefix "vllm.begin." or
 * "vllm.end." (phase "begin" or "end"): keys[i] and values[i] for i <
 * the count returned, each value at most PROTO_META_VALUE_MAX bytes.
 */
size_t vllm_meta(const struct vllm_counters *c, const char *phase,
    char keys[][PROTO_META_KEY_MAX + 1],
    char values[][PROTO_META_VALUE_MAX + 1]);

/*
 * The counters of phase from a window's metadata JSON text: true if all
 * of them are there and are numbers.
 */
bool vllm_from_meta(const char *meta_json, const char *phase,
    struct vllm_counters *c);

#endif
