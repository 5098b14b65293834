/*
 * serving: a window's serving figures, from the vLLM server's counters
 * kept at its begin and end (vllm.h): requests, prompt and generated
 * tokens in the window, tokens per second, and the cards' energy per
 * request, per generated token and per 1,000 tokens (prompt and
 * generated), gross and net of idle.  summary and report both take them
 * from serving_compute.
 */
#ifndef SPYREMON_SERVING_H
#define SPYREMON_SERVING_H

#include <stdbool.h>
#include <stdio.h>

#include <sqlite3.h>
#include <yajl/yajl_gen.h>

#include "proto.h"
#include "winsum.h"

enum serving_state {
	SERVING_NONE,		/* the window was not begun with --vllm */
	SERVING_NO_END,		/* no readings at its end: open, or mark end
				   could not read or keep them */
	SERVING_RESTARTED,	/* a counter went backwards, or the counters'
				   start time changed: no figures */
	SERVING_OK,
};

struct serving {
	enum serving_state state;
	char	 url[PROTO_META_VALUE_MAX + 1];
	char	 note[512];		/* why there are no figures */
	double	 requests, prompt_tokens, generation_tokens;	/* in the window */
	double	 seconds;		/* the window's length */
	double	 tokens_per_s, generation_per_s;
	double	 energy_j;		/* all cards */
	bool	 has_net;
	double	 net_j;
	/* per request (requests > 0), per generated token (> 0), per 1,000
	   tokens (prompt and generated, > 0); [0] gross, [1] net */
	bool	 has_per_request, has_per_gen, has_per_1k;
	double	 j_per_request[2], j_per_gen[2], j_per_1k[2];
};

/* The serving figures of ws, whose database is db: always fills *out. */
void serving_compute(sqlite3 *db, const struct winsum *ws,
    struct serving *out);

/*
 * The figures for a person: a paragraph (md false, for summary) or a
 * "## Serving" section (md true, for report.md).  Nothing for
 * SERVING_NONE.
 */
void serving_write(FILE *fp, const struct serving *s, bool md);

/* The member "serving" of summary --json; none for SERVING_NONE. */
void serving_gen_json(yajl_gen g, const struct serving *s);

#endif
