/*
 * breakdown_evidence: the counters as evidence in export --breakdown:
 * each card's stored samples over each span (steps_means' through
 * ../analysis/bdrun.h), its mean busy %, power and its share of
 * BD_CARD_POWER_W, temperature, memory and PCIe bandwidths (GiB/s), the
 * card's PCIe link and each direction's share of it (null, empty or
 * "unknown" where the link is), and whether they contradict the trace
 * (bd_contradicts, with its rule).  Null in json and empty in csv where
 * unknown.
 */
#ifndef SPYREMON_BREAKDOWN_EVIDENCE_H
#define SPYREMON_BREAKDOWN_EVIDENCE_H

#include <stdint.h>
#include <stdio.h>

#include <yajl/yajl_gen.h>

#include "bdrun.h"

/* Into an open JSON map: "counters", the evidence of card's span w. */
void bd_evidence_json(yajl_gen g, const struct bd_run *r, int64_t card,
    const struct bd_window *w, const struct steps_mean *m);

/*
 * The evidence's csv columns after --breakdown's others, from the
 * bandwidths to the contradiction, each after a comma: the header's
 * names, a card's or step's cells, and a row of another section's (all
 * empty).
 */
void bd_evidence_csv_head(FILE *fp);
void bd_evidence_csv_cells(FILE *fp, const struct bd_run *r, int64_t card,
    const struct bd_window *w, const struct steps_mean *m);
void bd_evidence_csv_none(FILE *fp);

/*
 * For a person: the evidence's table of each card's steps and span, each
 * card's link, and the spans where the counters contradict the trace.
 */
void bd_evidence_table(FILE *out, const struct bd_run *r, size_t nsteps);

#endif
