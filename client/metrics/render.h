/*
 * render: a collect snapshot as metric families (names in spyremon(1),
 * METRICS).  Pure: writes through expo, reads nothing else.
 *
 * Per-card samples carry the stamp of the sample they come from (energy:
 * the stamp its integral reaches), so Prometheus stores each value at the
 * time it was measured, not at the scrape; the daemon-wide families carry
 * none.  Families are announced even when they have no sample (no fresh
 * card, no open window), so a scrape's metadata never depends on the data.
 */
#ifndef SPYREMON_RENDER_H
#define SPYREMON_RENDER_H

#include "collect.h"
#include "expo.h"

void render_metrics(const struct collect *c, struct expo *e);

#endif
