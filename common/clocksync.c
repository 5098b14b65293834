/*
 * clocksync: the host clock's sync state from adjtimex(2) (clocksync.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

#include "clocksync.h"

int (*clocksync_adjtimex)(struct timex *tx) = adjtimex;

void
clocksync_read(struct clocksync *out)
{
	struct timex tx;
	int state;

	memset(out, 0, sizeof(*out));
	memset(&tx, 0, sizeof(tx));
	tx.modes = 0;		/* read only */
	if ((state = clocksync_adjtimex(&tx)) == -1)
		return;
	out->known = true;
	out->synced = state != TIME_ERROR && (tx.status & STA_UNSYNC) == 0;
	out->est_error_us = tx.esterror;
	out->max_error_us = tx.maxerror;
}

/* What the kernel reports before any NTP daemon has set the clock. */
static int
fake_unsync(struct timex *tx)
{
	tx->status = STA_UNSYNC;
	tx->esterror = 16000000;
	tx->maxerror = 16000000;
	return TIME_ERROR;
}

static int
fake_sync(struct timex *tx)
{
	tx->status = STA_PLL;
	tx->esterror = 1000;
	tx->maxerror = 50000;
	return TIME_OK;
}

int
(*clocksync_fake(const char *name))(struct timex *tx)
{
	if (name == NULL)
		return NULL;
	if (strcmp(name, "unsync") == 0)
		return fake_unsync;
	if (strcmp(name, "sync") == 0)
		return fake_sync;
	return NULL;
}

void
clocksync_describe(const struct clocksync *c, char *buf, size_t len)
{
	if (!c->known) {
		snprintf(buf, len, "unknown (not recorded)");
		return;
	}
	snprintf(buf, len, "%s (est. error %.3f ms, max %.3f ms)",
	    c->synced ? "synchronized" : "NOT synchronized",
	    (double)c->est_error_us / 1e3, (double)c->max_error_us / 1e3);
}
