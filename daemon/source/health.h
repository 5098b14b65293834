/*
 * health: is each card's metric file there, is the workload updating it,
 * and are the counters all zero?  The usual cause of all-zero samples is a
 * workload started without SENLIB_DEVEL_CONFIG_FILE, and this module says
 * so.  Pure state machine: the caller supplies stat results and the clock.
 */
#ifndef SPYREMON_HEALTH_H
#define SPYREMON_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum health_file {
	HEALTH_FILE_UNKNOWN,	/* not checked yet */
	HEALTH_FILE_MISSING,	/* no such file */
	HEALTH_FILE_STALE,	/* exists, mtime not advancing */
	HEALTH_FILE_FRESH,	/* exists, mtime advancing */
	HEALTH_FILE_NOT_FILE,	/* a FIFO, device, socket or folder at the path */
};

struct health {
	char path[512];
	enum health_file file;
	int64_t mtime_ns;		/* last mtime seen */
	uint64_t changed_mono_ns;	/* monotonic time mtime last moved */
	uint64_t checked_mono_ns;	/* monotonic time of the last check */
	uint64_t zero_rows;		/* consecutive rows whose counters were all 0 */
	uint64_t rows;			/* rows seen */
	mode_t type;			/* NOT_FILE: what is there (S_IFMT bits) */
};

/* Number of consecutive all-zero rows after which counters count as zero. */
#define HEALTH_ZERO_ROWS 10

/* Start tracking path (copied). */
void health_init(struct health *h, const char *path);

/*
 * Record one check of the file: exists (and its mtime) at monotonic now.
 * An existing file is FRESH when first seen (also after being missing) and
 * whenever its mtime differs from the last one seen; it is STALE once its
 * mtime has not moved for stale_after_ns.
 * Returns true if the file state changed, so the caller can log it once.
 */
bool health_observe(struct health *h, bool exists, int64_t mtime_ns,
    uint64_t now_mono_ns, uint64_t stale_after_ns);

/*
 * Record one check that found something other than a regular file at the
 * path (type: its S_IFMT bits, from stat): NOT_FILE, which no reader can
 * use.  Returns true if the file state changed.
 */
bool health_observe_not_file(struct health *h, mode_t type,
    uint64_t now_mono_ns);

/* Record one data row of this card: all_zero if every counter read 0. */
void health_note_row(struct health *h, bool all_zero);

/* True once HEALTH_ZERO_ROWS consecutive rows were all zero. */
bool health_counters_zero(const struct health *h);

/*
 * One line for a person: state of the file and, if needed, what to do.
 * A STALE file's age is measured to the last health_observe.
 */
void health_describe(const struct health *h, char *buf, size_t len);

#endif
