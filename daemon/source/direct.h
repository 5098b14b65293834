/*
 * direct: read the cards' new-format metric files (see metricfile.h)
 * straight from a memory map, without aiu-smi.
 *
 * One read of a card: copy the file out of the map, between two reads of
 * the magic and of each section's sequence number and last-update time; a
 * '!' in either means the writer is at work (read again at the next tick);
 * a sequence number or time that moved during the copy is a torn read,
 * retried at once up to DIRECT_RETRIES times (counted).  A section whose
 * sequence number and time did not move but whose bytes did is a writer
 * updating without the '!' protocol, and so is a section stamped after the
 * file header's last update (which the writer updates after the sections,
 * once it is seen to move at all): the read is dropped as torn (counted)
 * and the next tick tries again.  A writer that stalls half-way through an
 * update, without '!', before the reader saw the previous update, cannot
 * be caught: nothing in the layout (no checksum) tells its words from the
 * old ones.  A reader faster than the writer always holds the previous
 * update; and the first read after a file is (re)mapped, which holds none,
 * is only the baseline that later reads are checked against: not stored.
 *
 * A read whose sections all kept their sequence number and time is the
 * same sample again and is not stored; a jump of a sequence number by more
 * than one counts the updates in between as missed.  A new sample becomes
 * one row, stamped with the newest changed section's last-update time (the
 * writer's clock, whole ms), with that section's sequence number and the
 * read time (arrival_ns); its interval is the writer's time since the
 * sample before (the file's interval field has no documented unit).
 *
 * The writer's clock is checked before a stamp is taken as the card's
 * time: a new sample whose stamp overflows nanoseconds, is more than
 * DIRECT_CLOCK_AHEAD_NS ahead of the host clock or more than
 * DIRECT_CLOCK_BEHIND_NS behind it at the read, is behind the card's
 * previous good stamp, or lies more than DIRECT_SPAN_MAX_MS after it, is
 * dropped and counted (clock_dropped, with the reason in clock_why and
 * logged, rate-limited); it becomes the baseline of the next read all the
 * same.  A stamp that is only behind the previous one, or only too far
 * after it, but agrees with the host clock becomes the new previous stamp,
 * so a writer whose clock was stepped loses one row, not all of them.  When
 * the host clock itself was stepped since the previous good stamp's read
 * (its offset to CLOCK_MONOTONIC moved: clockstep.h), no row is lost: a
 * stamp in step with the previous one moved by the step, or one stamped
 * before the step and read after it, or else one that agrees with the new
 * host clock, is kept (counted in across_step), the checks restart from it,
 * and the row's interval leaves the step out.  The
 * baseline read's stamp counts as the previous one unless it overflows or
 * is ahead of the host clock.  Values are stored as the file gives them:
 * KiB, MiB and GiB amounts in bytes under "<name>_bytes", fdec1 in units,
 * int as is.
 *
 * Files are found by stat(2) at most every DIRECT_RESTAT_NS (and after
 * any failure): a file whose inode or size changed is mapped again.  Any
 * user may create the path before the workload does: it is opened only
 * without blocking and kept only if the descriptor is a regular file
 * (regfile.h); a FIFO, a device, a socket or a folder there is the state
 * DIRECT_NOT_FILE, whose reason names what it is, and is never read.  A
 * file cut short under the map (SIGBUS, caught around the copy only) is a
 * failed read, and the file is mapped again.  The
 * file is in the host's byte order; one whose size field only matches
 * byte-swapped is read swapped (logged once).  A card whose file is in the
 * old format, of a layout version outside 1.0.x, bad, or missing is not
 * read directly; direct_card says why, and the caller keeps it on aiu-smi.
 * The old format is a state of the file, not a failed read: it is not
 * counted in errors, and the file is looked at again (copied and decoded)
 * only when stat(2), at most every DIRECT_RESTAT_NS, shows another inode,
 * size or mtime, or after DIRECT_OLD_RECHECK_NS (a file rewritten in place
 * through a map need not move its mtime), not at every tick.
 * The module does I/O on the files only, and reads CLOCK_REALTIME right
 * after each copy for arrival_ns; no event loop, no store: rows and metric
 * ids go through the sink.
 */
#ifndef SPYREMON_DIRECT_H
#define SPYREMON_DIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metricfile.h"
#include "store.h"

#define DIRECT_RETRIES		3
#define DIRECT_RESTAT_NS	(250ULL * 1000000ULL)
#define DIRECT_OLD_RECHECK_NS	(30ULL * 1000000000ULL)	/* an unchanged old-format file */
#define DIRECT_FILE_MAX		65536	/* larger files are refused */
#define DIRECT_MAX_CARDS	256
#define DIRECT_CLOCK_AHEAD_NS	(2LL * 1000000000LL)	/* stamp ahead of the host clock */
#define DIRECT_CLOCK_BEHIND_NS	(60LL * 1000000000LL)	/* stamp behind it at the read */
#define DIRECT_SPAN_MAX_MS	(600ULL * 1000ULL)	/* stamp after the previous one */

enum direct_state {
	DIRECT_UNKNOWN,		/* not read yet */
	DIRECT_READING,		/* read directly */
	DIRECT_MISSING,		/* no file at its path */
	DIRECT_OLD_FORMAT,	/* first four bytes zero: aiu-smi only; not an error */
	DIRECT_VERSION,		/* layout version outside 1.0.x */
	DIRECT_BAD,		/* truncated, bad size, bad magic or layout */
	DIRECT_NOT_FILE,	/* a FIFO, device, socket or folder at the path */
};

struct direct_card_stats {
	int device;
	char path[512];
	enum direct_state state;
	char why[1024];		/* for status when not READING */
	uint64_t reads;		/* copies of the file taken */
	uint64_t rows;		/* new samples handed on */
	uint64_t duplicates;	/* reads of a sample already handed on */
	uint64_t missed;	/* updates skipped by the sequence numbers */
	uint64_t retries;	/* reads retried at once: torn during the copy */
	uint64_t torn;		/* reads dropped: torn, retried next tick */
	uint64_t updating;	/* reads that found '!' */
	uint64_t errors;	/* reads of a bad file (not of an old-format one) */
	uint64_t reopened;	/* files mapped again (re-created) */
	uint64_t clock_dropped;	/* new samples dropped: the writer's stamp is off */
	uint64_t across_step;	/* new samples kept across a host clock step */
	char clock_why[256];	/* the last such stamp, why; "" if none */
	int64_t newest_ts_ns;	/* newest stamp handed on, 0 if none */
	uint32_t interval;	/* the file's update interval, as it says */
	char metrics[512];	/* the keys the newest row carries, space-separated */
	bool swapped;		/* the file is in the other byte order */
};

struct direct_sink {
	/* A new sample (valid during the call only). */
	void (*row)(void *arg, const struct store_sample *s);
	/* The store's id of metric key (unit, aggregated by max or mean);
	 * 0, or -1 to leave the metric out. */
	int (*metric)(void *arg, const char *key, const char *unit, bool max,
	    int *id);
	void *arg;
};

struct direct;

/* A reader with metric table t (kept by pointer) and sink (copied). */
struct direct *direct_new(const struct mf_table *t,
    const struct direct_sink *sink);

/* Unmap and free; NULL is a no-op. */
void direct_free(struct direct *d);

/* Read device's file at path from now on (a new path starts afresh). */
void direct_add(struct direct *d, int device, const char *path);

/*
 * Read every card once; mono_ns is CLOCK_MONOTONIC now.  Returns true if
 * any card started or stopped being read directly.
 */
bool direct_tick(struct direct *d, uint64_t mono_ns);

/* True if device's file is being read directly. */
bool direct_reading(const struct direct *d, int device);

/* True if at least one card is known and every known card is read directly. */
bool direct_covers_all(const struct direct *d);

/* The stats of device, or NULL if it is not known. */
const struct direct_card_stats *direct_card(const struct direct *d,
    int device);

/* "reading", "old format", ... */
const char *direct_state_name(enum direct_state s);

#endif
