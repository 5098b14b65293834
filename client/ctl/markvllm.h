/*
 * markvllm: a vLLM server's counters at a window's begin and end (mark
 * begin --vllm URL, mark end), kept as vllm.h says: the end's readings go
 * in the end request, merged into the window's metadata by the daemon.
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
 * The metadata the end adds to the window: e's readings as vllm.end.*
 * pairs in *m (m->n 0 when there are none to add), and in ptr[2i],
 * ptr[2i+1] pointers to them, for capwin_end_meta.
 */
void markvllm_end_meta(const struct markvllm_end *e, struct markvllm_meta *m,
    const char *ptr[2 * VLLM_NMETA]);

/*
 * After window ended_id ended: whether the end's readings were there to
 * keep.  CLIENT_EXIT_OK when they were, or when the window has no vLLM
 * server; else CLIENT_EXIT_FAILED after saying why.
 */
int markvllm_end_check(const struct markvllm_end *e, int64_t ended_id);

#endif
