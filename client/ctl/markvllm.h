/*
 * markvllm: a vLLM server's counters at a window's begin and end (mark
 * begin --vllm URL, mark end), kept as vllm.h says.
 *
 * Functions returning int give CLIENT_EXIT_OK, or another CLIENT_EXIT_*
 * after printing why.
 */
#ifndef SPYREMON_MARKVLLM_H
#define SPYREMON_MARKVLLM_H

#include <stdbool.h>
#include <stdint.h>

#include "client.h"
#include "httpc.h"
#include "proto.h"
#include "vllm.h"

/* The metadata mark begin --vllm adds: vllm.url and the begin's counters. */
struct markvllm_meta {
	char key[VLLM_NMETA][PROTO_META_KEY_MAX + 1];
	char value[VLLM_NMETA][PROTO_META_VALUE_MAX + 1];
	size_t n;
};

/* Check url and read its counters into *m (CLIENT_EXIT_FAILED: no answer). */
int markvllm_begin(const char *url, struct markvllm_meta *m);

/* The end's readings, taken before the window is ended. */
struct markvllm_end {
	int64_t id;		/* the window they are for; 0: none */
	char url[PROTO_META_VALUE_MAX + 1];
	bool read;		/* counters holds them */
	struct vllm_counters counters;
	char why[HTTPC_WHY_LEN];	/* why they could not be read */
};

/*
 * Before mark end: find the window it will end (by id, by tag among the
 * caller's, or the caller's newest) in the daemon's status and, if its
 * metadata has vllm.url, read the server's counters.  Prints nothing; a
 * daemon that cannot be asked leaves e->id 0 (the end then says why).
 */
void markvllm_end_prepare(struct client *cl, const char *tag, bool have_id,
    int64_t id, struct markvllm_end *e);

/*
 * After window ended_id ended: keep e's readings (as a window of no
 * length tagged VLLM_END_TAG).  CLIENT_EXIT_OK when there is nothing to
 * keep.
 */
int markvllm_end_keep(struct client *cl, const struct markvllm_end *e,
    int64_t ended_id);

#endif
