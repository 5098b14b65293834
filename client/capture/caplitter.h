/*
 * caplitter: what a capture writes for the time being, and how none of it
 * outlives the capture.
 *
 * A capture's temporary files are its output directory while it is being
 * written (DIR.tmp-XXXXXX beside --output DIR, holding CAPLITTER_MARK,
 * which names the capture's pid), the entries of that directory whose
 * names begin with '.' (a trace being copied, the report being written),
 * the temporary file of an export it runs, and the trace a process wrote
 * for it (named spyremon-capture-PID-..., PID the capture's).
 *
 * SIGINT, SIGTERM and SIGHUP remove them: the output keeps what is
 * complete (renamed into place if it holds a trace), a trace not yet
 * copied is removed, and the capture then dies of the signal.  What a
 * capture that could not do that (SIGKILL, a crash) left, and the traces
 * a process wrote after its capture was gone, are removed by the next
 * capture: beside its own --output and in its job's trace folder, where
 * the capture named in them is no longer running.
 */
#ifndef SPYREMON_CAPLITTER_H
#define SPYREMON_CAPLITTER_H

#include <stdbool.h>

#include "capture.h"

#define CAPLITTER_MARK	".spyremon-capture.pid"

/*
 * From now until caplitter_done, SIGINT, SIGTERM and SIGHUP remove c's
 * temporary files; and mark c->tmp (just made) as this capture's.  False
 * after saying why.
 */
bool caplitter_arm(struct capture *c);

/* The end: the mark is removed from the output, wherever it is. */
void caplitter_done(struct capture *c);

/*
 * Remove what captures no longer running left beside c->output and in
 * the folders process c->pid writes traces to, saying what.
 */
void caplitter_sweep(const struct capture *c);

#endif
