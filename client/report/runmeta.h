/*
 * runmeta: what a run recorded about itself with its window, read back for
 * the report: the reproducer (a copy of the script and its sha256), the
 * profiler's key_averages() table, the trace and how to place it, and the
 * expectation the user stated (spyremon.profile() in the Python helper
 * records them as metadata keys; spyremon(1), "report").  Files are named
 * by path, as a metadata value holds at most 256 bytes; each is read
 * whole, or not at all with the reason kept.
 */
#ifndef SPYREMON_RUNMETA_H
#define SPYREMON_RUNMETA_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "proto.h"
#include "sha256.h"
#include "winsum.h"

#define RUNMETA_FILE_MAX	(1 << 20)	/* bytes read of a named file */

/* The metadata keys spyremon.profile() records. */
#define RUNMETA_REPRODUCER	"reproducer"
#define RUNMETA_REPRODUCER_SHA	"reproducer_sha256"
#define RUNMETA_TABLE		"key_averages"
#define RUNMETA_TRACE		"trace"
#define RUNMETA_TRACE_ALIGN	"trace_align"	/* "window": no absolute time */
#define RUNMETA_EXPECT		"expect"

/* A file a metadata key names. */
struct runfile {
	char	 path[PATH_MAX];	/* "" if the key is not recorded */
	char	*text;			/* NUL-terminated; NULL if not read */
	size_t	 len;
	char	 why[PATH_MAX + 128];	/* why text is NULL, for a person */
};

/* "metric op value": a figure of the run against a number. */
enum expect_metric { EXPECT_STEP_MS, EXPECT_STEP_J, EXPECT_ENERGY_J };
enum expect_op { EXPECT_LE, EXPECT_LT, EXPECT_GE, EXPECT_GT };

struct expect {
	enum expect_metric metric;
	enum expect_op op;
	double	 value;
	char	 text[64];		/* as given, trimmed */
};

struct runmeta {
	struct runfile reproducer;
	char	 sha_recorded[PROTO_META_VALUE_MAX + 1];	/* "" if none */
	char	 sha_file[SHA256_HEXLEN];	/* of reproducer.text */
	struct runfile table;
	char	 trace[PATH_MAX];		/* "" if none */
	bool	 trace_align_window;
	bool	 has_expect;
	struct expect expect;
	char	 expect_from[32];		/* "--expect", "window metadata" */
};

/*
 * Read what ws's metadata names into m; expect_opt (--expect, or NULL)
 * wins over the recorded expectation.  -1 with err set only if an
 * expectation does not parse; a file that cannot be read is kept in its
 * why.
 */
int runmeta_load(const struct winsum *ws, const char *expect_opt,
    struct runmeta *m, char *err, size_t errlen);
void runmeta_free(struct runmeta *m);

/* Whether the reproducer was read and is the one whose digest was recorded. */
bool runmeta_reproducer_ok(const struct runmeta *m);

/*
 * Parse "step_ms<=120" (metrics step_ms, step_j, energy_j; operators <=,
 * <, >=, >; spaces allowed).  -1 with err naming the problem.
 */
int expect_parse(const char *s, struct expect *e, char *err, size_t errlen);
/* The metric's name and unit ("step_ms", "ms"). */
const char *expect_metric_name(enum expect_metric m);
const char *expect_metric_unit(enum expect_metric m);
/* Whether seen meets e. */
bool expect_met(const struct expect *e, double seen);

#endif
