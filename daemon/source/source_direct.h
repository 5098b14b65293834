/*
 * source_direct: the direct reads of new-format metric files (direct.h)
 * on a timer, through a pace of their own.  Above source_base.h only: a
 * change of the cards read directly is reported through
 * src->coverage_changed, which the owner (source.c) handles.
 */
#ifndef SPYREMON_SOURCE_DIRECT_H
#define SPYREMON_SOURCE_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

struct source;

/*
 * Set up direct reads (with source.direct not off): the metric table, the
 * reader, its pace and its timer.  0, or -1 (logged).
 */
int source_direct_start(struct source *src);

/* Re-arm the timer at the period now wanted and pass params to its pace. */
void source_direct_rates(struct source *src);

/* Tell the direct rows' pace that windows opened or closed at now_ns. */
void source_direct_window(struct source *src, bool open, int64_t now_ns);

/* Store every partial aggregate of direct rows, and stop the timer. */
void source_direct_stop(struct source *src);

/* Free what source_direct_start made. */
void source_direct_free(struct source *src);

#endif
