/*
 * report_why: report.md's "Why it was slow": the trace's breakdown
 * (analysis/bdrun.h, the figures of export --breakdown; with several
 * traces every trace's, cards labelled and steps matched by name as
 * bdranks.h does, over the steps every trace has) as the run's
 * verdict and each step's per card with its rule and numbers, a stacked
 * bar chart of the classes per step and card (breakdown.png and .svg),
 * with several cards the cards side by side (bdcards.h: each step's
 * straggler, spreads and the class that makes the difference; with
 * several traces over every rank's cards, bdranks.h), the
 * counters as evidence (mean busy %, power against the card's
 * BD_CARD_POWER_W, temperature, memory and PCIe bandwidths, PCIe against
 * the card's link, the samples' coverage), and where they contradict the
 * trace (breakdown.h, bd_contradicts).
 */
#ifndef SPYREMON_REPORT_WHY_H
#define SPYREMON_REPORT_WHY_H

#include <stdio.h>

#include "report.h"

#define REPORT_WHY_STEPS	24	/* steps shown; export --breakdown has all */

/*
 * With a trace: its breakdown and counters into r->why, the other
 * traces' into r->why_other, and every trace's cards and steps matched
 * into r->why_ranks.  CLIENT_EXIT_OK,
 * or another CLIENT_EXIT_* after saying why (the trace or the samples
 * could not be read).
 */
int report_why_load(struct report *r);

/* breakdown.png and breakdown.svg in r->tmp, if the trace has device events. */
int report_why_plot(struct report *r);

/* The section, if r has a trace. */
void report_why_md(FILE *fp, const struct report *r);

/* Free what report_why_load kept. */
void report_why_free(struct report *r);

#endif
