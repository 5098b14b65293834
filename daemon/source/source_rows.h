/*
 * source_rows: the aiu-smi child's output, line by line, into rows for
 * pace; a #MetricFiles entry also names the card's file to the direct
 * reader (direct.h).  Above source_base.h only.
 */
#ifndef SPYREMON_SOURCE_ROWS_H
#define SPYREMON_SOURCE_ROWS_H

#include <stddef.h>
#include <stdint.h>

struct source;

/* Parse bytes of the child's stdout, read at stamp_ns. */
void source_stdout_bytes(struct source *src, const char *buf, size_t n,
    int64_t stamp_ns);

/* Log the child's stderr, line by line, rate-limited. */
void source_stderr_bytes(struct source *src, const char *buf, size_t n);

/* Forget any header and unfinished lines: a new child starts. */
void source_rows_reset(struct source *src);

#endif
