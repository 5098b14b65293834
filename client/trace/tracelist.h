/*
 * tracelist: the traces that trace options name (export's and report's
 * --trace, compare's --trace-base and --trace-new, trace info's FILE).
 *
 * A file, or anything that is not a directory (a pipe, a path that does
 * not exist yet), names itself: reading it says what is wrong with it.
 * A directory holds the ranks of one run: a TensorBoard log directory, as
 * torch.profiler.tensorboard_trace_handler writes one, a trace per
 * worker, whose traces are the regular files directly in it whose names
 * end in TRACELIST_SUFFIX or TRACELIST_SUFFIX ".gz"; or, where no file is
 * so named, a folder of traces named otherwise (HTA's rank-0.json.gz,
 * sampled_rank-0.json.gz, NAME_kineto.json.gz), whose traces are the
 * *.json and *.json.gz files that begin as one (an object with
 * "traceEvents" in its first 64 KiB, or an array of objects).  They are
 * sorted by name (byte order, so the order is the same on every host) and
 * read exactly as if each were given to an option of its own.  Which
 * files a directory gave is said in one line, and the JSON files it
 * skipped, each with why, in another; a directory with no trace is an
 * error that names it and the patterns.
 */
#ifndef SPYREMON_TRACELIST_H
#define SPYREMON_TRACELIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What tensorboard_trace_handler names its traces: WORKER.TIME.pt.trace.json. */
#define TRACELIST_SUFFIX	".pt.trace.json"

/* The most traces one command takes. */
#define TRACELIST_MAX		256

struct trace_list {
	char	**paths;	/* owned; a directory's as DIR/NAME */
	size_t	 n;
};

/*
 * Add the traces arg names to l, at most max in all.  opt ("--trace")
 * names the option in messages, or NULL for a command's operand; the line
 * naming a directory's traces goes to note (stderr; NULL: none).
 * CLIENT_EXIT_OK, or CLIENT_EXIT_FAILED (a directory that cannot be read
 * or holds no trace) or CLIENT_EXIT_USAGE (more than max) after saying
 * why; l is then unchanged.
 */
int trace_list_add(struct trace_list *l, const char *opt, const char *arg,
    size_t max, FILE *note);

/* Whether name is that of a trace in a log directory. */
bool trace_list_is_trace_name(const char *name);

/* Release what l holds and zero it. */
void trace_list_free(struct trace_list *l);

#endif
