/*
 * clockstep: steps of the host clock (CLOCK_REALTIME set back or forward:
 * chrony or ntpd correcting a VM, date -s), which stamps every row.
 *
 * A step is seen two ways: the kernel's notice (a CLOCK_REALTIME timerfd
 * armed with TFD_TIMER_CANCEL_ON_SET reads ECANCELED on a discontinuous
 * change), and the offset CLOCK_REALTIME minus CLOCK_MONOTONIC, compared
 * at every check (every CLOCKSTEP_CHECK_NS, and whenever a reader asks):
 * a change beyond what the kernel may slew in the time since the last
 * check (CLOCKSTEP_SLEW_PPM) by more than CLOCKSTEP_MIN_NS is a step.
 * Each step is logged once (when, by how much, which way), counted, and
 * handed to a callback.  There is one host clock, so the module is one
 * per process.
 */
#ifndef SPYREMON_CLOCKSTEP_H
#define SPYREMON_CLOCKSTEP_H

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#define CLOCKSTEP_MIN_NS	(500LL * 1000000LL)	/* beyond slew: a step */
#define CLOCKSTEP_SLEW_PPM	500			/* the kernel's most */
#define CLOCKSTEP_CHECK_NS	(100ULL * 1000000ULL)	/* the offset's check */

struct clockstep_stats {
	uint64_t steps;		/* steps seen since the daemon started */
	int64_t net_ns;		/* their sizes summed: + forward, - back */
	int64_t last_ns;	/* the last one's size; 0 if none */
	int64_t last_at_ns;	/* CLOCK_REALTIME just after it; 0 if none */
	bool kernel;		/* the kernel's notice is watched */
};

/* Called with each step's size (+ forward) and the new clock's time. */
typedef void clockstep_fn(void *arg, int64_t size_ns, int64_t at_ns);

/*
 * Watch the host clock from ev's loop (NULL: checks only when asked, as
 * in tests), calling fn(arg) at each step.  -1 (logged) if the timers
 * cannot be added; without the kernel's notice the offset is still checked.
 */
int clockstep_start(sd_event *ev, clockstep_fn *fn, void *arg);

/* Stop watching (the counts stay). */
void clockstep_stop(void);

/*
 * A host clock behind last_write_ns (the daemon before's last write to the
 * database) by more than CLOCKSTEP_MIN_NS was stepped back while no
 * daemon ran: logged, counted and handed on as a step.  True if so.
 */
bool clockstep_behind(int64_t last_write_ns);

/* Check the offset now: a step is logged, counted and handed on; true if one. */
bool clockstep_check(void);

/*
 * True if the offset (CLOCK_REALTIME minus CLOCK_MONOTONIC) moved from
 * off_then, read at monotonic mono_then, to off_now at mono_now by more
 * than slew allows plus CLOCKSTEP_MIN_NS.
 */
bool clockstep_moved(int64_t off_then, uint64_t mono_then, int64_t off_now,
    uint64_t mono_now);

/* CLOCK_REALTIME and CLOCK_MONOTONIC read as one, into *real, *mono. */
void clockstep_read(int64_t *real, uint64_t *mono);

/* The steps so far. */
void clockstep_get_stats(struct clockstep_stats *out);

#endif
