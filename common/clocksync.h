/*
 * clocksync: the host clock's synchronization state, as the kernel keeps
 * it for NTP (adjtimex(2)): whether the clock is synchronized, and the
 * estimated and maximum error.  Stored with each window's begin and end,
 * because samples of two hosts can only be lined up when both clocks are
 * known to be good.
 */
#ifndef SPYREMON_CLOCKSYNC_H
#define SPYREMON_CLOCKSYNC_H

#include <stdbool.h>
#include <stdint.h>

struct timex;

struct clocksync {
	bool	 known;		/* adjtimex answered */
	bool	 synced;	/* not TIME_ERROR, STA_UNSYNC clear */
	int64_t	 est_error_us;	/* the kernel's estimated error */
	int64_t	 max_error_us;	/* and its maximum error */
};

/*
 * The call clocksync_read makes, adjtimex(2) unless a test replaces it
 * (the seam that lets tests show an unsynchronized clock).  It must only
 * read: tx->modes is 0.
 */
extern int (*clocksync_adjtimex)(struct timex *tx);

/* Read the state into *out; out->known is false if the call failed. */
void clocksync_read(struct clocksync *out);

/*
 * A fake for clocksync_adjtimex chosen by name, for tests: "unsync" (a
 * clock never synchronized, errors 16 s), "sync" (synchronized, 1 ms and
 * 50 ms).  NULL for any other name.
 */
int (*clocksync_fake(const char *name))(struct timex *tx);

/* "synchronized (est. error 1.2 ms, max 50 ms)" or "NOT synchronized ..." */
void clocksync_describe(const struct clocksync *c, char *buf, size_t len);

#endif
