/*
 * source: runs aiu-smi as a child, reads its CSV without blocking inside
 * the event loop, and hands every parsed row to the store.
 *
 * The child gets "-s -g <groups> -d <delay> [-i <ids>] <metric_files>"
 * after the configured command, PYTHONUNBUFFERED=1 in its environment, its
 * own process group, and SIGTERM when the daemon dies.  Each row is stamped
 * with CLOCK_REALTIME when the read that completed it returned.
 *
 * Rates: let fine be the smaller of source.window_interval and
 * source.interval.  With source.pre_window > 0 the child always runs at
 * fine and pace.h decides which rows are stored: aggregates at
 * source.interval, or every row while a window is open, so switching
 * costs nothing.  With source.pre_window 0 the child runs at
 * source.interval and is restarted at fine while a window is open (and
 * back when the last one closes); every row is stored, but each switch
 * waits for the child to stop and for the new one's first row, one delay
 * after it starts (plus about 1-2 s for aiu-smi, a Python program), and
 * the old child's unfinished interval is lost.  With the simulator
 * (t_windowrate): ring mode stores 100 ms rows from about 3 s before
 * begin with pre_window 3s, and the first row after begin within 100 ms;
 * restart mode stores its first 100 ms row about 105 ms after begin and
 * nothing for the 0-1 s before it.
 *
 * With source.direct not off, the cards' new-format metric files are also
 * read directly (source_direct.c, direct.h), as rows of their own
 * (src 1); while every card is read so, the child runs at source.interval.
 *
 * A child that exits is restarted after a back-off (1 s doubling to 60 s,
 * reset after a healthy minute); one that stays silent for 10 intervals
 * (never less than SOURCE_SILENCE_MIN) of the daemon's own running time
 * (a stop of the daemon is not the child's silence) is killed and
 * restarted.
 */
#ifndef SPYREMON_SOURCE_H
#define SPYREMON_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "health.h"
#include "inventory.h"

struct config;
struct source;
struct store;

#define SOURCE_BACKOFF_MIN_NS	(1ULL * 1000000000ULL)
#define SOURCE_BACKOFF_MAX_NS	(60ULL * 1000000000ULL)
#define SOURCE_HEALTHY_NS	(60ULL * 1000000000ULL)	/* resets the back-off */
#define SOURCE_SILENCE_INTERVALS 10
#define SOURCE_SILENCE_MIN_NS	(5ULL * 1000000000ULL)	/* aiu-smi may print at most 1/s */
/*
 * Switching aiu-smi's rate when every card's file becomes read directly,
 * or stops being: the new coverage must hold SOURCE_SWITCH_SETTLE_NS (a
 * workload re-creating its files is not a switch), and aiu-smi's rate
 * changes at most once per SOURCE_SWITCH_HOLD_NS (a file flipping between
 * formats restarts it once a minute at most).
 */
#define SOURCE_SWITCH_SETTLE_NS	(2ULL * 1000000000ULL)
#define SOURCE_SWITCH_HOLD_NS	(60ULL * 1000000000ULL)
#define SOURCE_STARTUP_GRACE_NS	(30ULL * 1000000000ULL)	/* Python start-up before the first line */
#define SOURCE_KILL_GRACE_NS	(2ULL * 1000000000ULL)	/* SIGTERM to SIGKILL */
#define SOURCE_MAX_DEVICES	256

/* Per-card state, by aiu-smi device ID. */
struct source_device {
	bool seen;			/* a row or a #MetricFiles entry named it */
	char bus_id[INV_BUSID_MAX];	/* from its metric file name, "" if unknown */
	struct health health;
	int64_t newest_ts_ns;
	uint64_t rows;
};

struct source_stats {
	pid_t pid;			/* running child, 0 if none */
	uint64_t interval_ns;		/* delay the child was started with */
	uint64_t stored_interval_ns;	/* rows are stored at this interval now */
	bool windows_open;		/* as last told by source_set_windows_open */
	unsigned restarts;		/* children started after the first */
	uint64_t rows_read;		/* rows parsed from aiu-smi */
	uint64_t rows;			/* rows handed to the store */
	size_t ring_bytes;		/* fine rows kept for windows, aggregates */
	uint64_t bad_lines;		/* lines rejected, overlong included */
	int64_t newest_ts_ns;		/* newest row's stamp, 0 if none */
	char last_error[256];		/* why the last child ended, "" if none */
	char smi_version[128];		/* "aiu-smi -v"'s first line, "" if unknown */
	size_t ncards;			/* cards in the sysfs inventory */
};

/*
 * Create a source that reads with cfg (which must outlive it, until
 * source_reconfigure swaps it) into st, scan the card inventory and record
 * it, and start the child.  A child that cannot be started is retried with
 * back-off, not an error.  Returns 0, or -1 (logged) if the event sources
 * cannot be set up.
 */
int source_start(sd_event *ev, const struct config *cfg, struct store *st,
    struct source **out);

/*
 * Change source.interval, the rate rows are stored at while no window is
 * open.  If that changes the delay the child samples at, the child is
 * restarted at once (no back-off).
 */
void source_set_interval(struct source *src, uint64_t interval_ns);

/*
 * Switch to cfg (same lifetime rule as source_start).  The child is
 * restarted only if its command line would change; the inventory is
 * rescanned.
 */
void source_reconfigure(struct source *src, const struct config *cfg);

/*
 * Say whether any profiling window is open, since at_ns (the stamp of the
 * begin or end that changed it, CLOCK_REALTIME).  While one is, every row
 * is stored (the fine rate, source.window_interval); otherwise rows are
 * stored at source.interval.  When a window opens, the fine rows of the
 * source.pre_window seconds before at_ns, kept in memory, are stored as
 * well, so a window opened a little late is still covered at the fine
 * rate, and rows are stored fine through the first that starts at or after
 * the end's at_ns.  The replay runs from the event loop just after this
 * call returns, so the request that opened the window is answered first.
 * (With
 * source.pre_window 0, the child is restarted at the new rate instead.)
 * Repeating the current state does nothing.
 */
void source_set_windows_open(struct source *src, bool open, int64_t at_ns);

/*
 * The host clock was stepped by step_ns (+ forward), read at_ns just
 * after, and its epoch is now epoch (store_clock_stepped's): the rows
 * stamped from now on carry it; tell both paces.
 */
void source_clock_stepped(struct source *src, int64_t step_ns, int64_t at_ns,
    int64_t epoch);

/*
 * Stop the child: SIGTERM to its process group, SIGKILL after grace_ns,
 * reap it, and store every complete line it wrote before exiting and
 * every partial aggregate.  Blocks for at most about grace_ns plus the
 * kill.  No restart follows.
 */
void source_stop(struct source *src, uint64_t grace_ns);

/* Stop (if needed) and free; NULL is a no-op. */
void source_free(struct source *src);

void source_get_stats(const struct source *src, struct source_stats *out);

/* The card state of device, or NULL if the device was never seen. */
const struct source_device *source_device(const struct source *src, int device);

/* How device's metric file is read directly, or NULL (not known, or
 * source.direct: off). */
struct direct_card_stats;
const struct direct_card_stats *source_direct_card(const struct source *src,
    int device);

/* The inventory from the last scan; *n receives its length. */
const struct card *source_cards(const struct source *src, size_t *n);

#endif
