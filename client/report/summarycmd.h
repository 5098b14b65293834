/*
 * summarycmd: "spyremon summary", and the pieces of its output that the
 * report reuses.
 */
#ifndef SPYREMON_SUMMARYCMD_H
#define SPYREMON_SUMMARYCMD_H

#include <stdio.h>

#include <yajl/yajl_gen.h>

#include "client.h"
#include "winsum.h"

#define SUMMARY_CELL	48

/* The table's cells for card c: SUMMARY_NCOLS of them. */
#define SUMMARY_NCOLS	14
void summary_card_cells(const struct winsum *ws, const struct summary_card *c,
    char cells[][SUMMARY_CELL]);

/* "window 3 'tag': begin to end (span), ended by ..." and the metadata. */
void summary_write_header(FILE *fp, const struct winsum *ws);

/* The sentence that says how idle power was learned, per card. */
void summary_write_idle(FILE *fp, const struct winsum *ws);

/* The summary as one JSON object. */
void summary_gen_json(yajl_gen g, const struct winsum *ws);

/*
 * The same, with a leading "host" member unless host is NULL, and the
 * serving figures (serving.h) unless sv is NULL.
 */
struct serving;
void summary_gen_json_host(yajl_gen g, const struct winsum *ws,
    const char *host,
    const struct serving *sv);

/* windows.idle_lookback of the config in force, or its default. */
int64_t summary_idle_lookback(struct client *cl);

#endif
