/*
 * source_base: the helpers every source*.c file shares (source_base.h):
 * the sampling rates and the pace parameters they give, one-shot timers,
 * the last error, and a metric file's health.  It reads struct source and
 * calls only below it (pace, direct, health).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "direct.h"
#include "pace.h"
#include "source_base.h"
#include "timeparse.h"

#define HEALTH_STALE_NS		(30ULL * NSEC_PER_SEC)

void
source_set_error(struct source *src, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(src->stats.last_error, sizeof(src->stats.last_error), fmt, ap);
	va_end(ap);
}

void
source_format_seconds(uint64_t ns, char *buf, size_t len)
{
	char frac[16];
	size_t n;

	snprintf(frac, sizeof(frac), "%09llu",
	    (unsigned long long)(ns % NSEC_PER_SEC));
	for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(buf, len, "%llu%s%s", (unsigned long long)(ns / NSEC_PER_SEC),
	    n > 0 ? "." : "", frac);
}

int
source_arm_timer(struct source *src, sd_event_source **s, uint64_t usec,
    sd_event_time_handler_t cb)
{
	int r;

	if (*s == NULL)
		return sd_event_add_time(src->ev, s, CLOCK_MONOTONIC, usec, 1000,
		    cb, src);
	if ((r = sd_event_source_set_time(*s, usec)) < 0)
		return r;
	return sd_event_source_set_enabled(*s, SD_EVENT_ONESHOT);
}

/* ---- rates ---- */

/* The rate rows are stored at while a window is open. */
static uint64_t
fine_ns(const struct source *src)
{
	uint64_t w = src->cfg->source.window_interval_ns;

	return w > 0 && w < src->interval_ns ? w : src->interval_ns;
}

uint64_t
source_wanted_delay(const struct source *src)
{
	if (src->direct_all)
		return src->interval_ns;	/* the files give the fine rate */
	if (src->cfg->source.pre_window_ns > 0 || src->windows_open)
		return fine_ns(src);
	return src->interval_ns;
}

uint64_t
source_stored_interval(const struct source *src)
{
	return src->windows_open ? fine_ns(src) : src->interval_ns;
}

/* The pace parameters of rows held in a pre-window ring. */
static struct pace_params
ring_params(const struct source *src)
{
	struct pace_params prm = {
		.fine_ns = fine_ns(src),
		.coarse_ns = src->interval_ns,
		.pre_ns = src->cfg->source.pre_window_ns,
	};

	return prm;
}

struct pace_params
source_pace_params(const struct source *src)
{
	struct pace_params prm = ring_params(src);

	/* without a ring, the child's own rate is the stored one */
	if (prm.pre_ns == 0 || src->direct_all)
		prm.fine_ns = prm.coarse_ns = source_wanted_delay(src);
	return prm;
}

struct pace_params
source_direct_params(const struct source *src)
{
	struct pace_params prm = ring_params(src);

	/* without a ring, rows are paced at the rate they are stored at */
	if (prm.pre_ns == 0)
		prm.fine_ns = prm.coarse_ns = source_stored_interval(src);
	return prm;
}

void
source_describe_ring(const struct source *src, size_t n)
{
	struct pace_params prm = source_pace_params(src);
	size_t rows = pace_ring_rows(&prm, n);
	uint64_t covered = rows * prm.fine_ns;
	char secs[32];

	if (prm.pre_ns == 0 || prm.coarse_ns <= prm.fine_ns)
		return;
	source_format_seconds(covered, secs, sizeof(secs));
	if (covered < prm.pre_ns + prm.coarse_ns)
		log_warnx("the fine-rate ring holds only %ss per card at %zu "
		    "metrics (%d KiB); a window's start is covered at the fine "
		    "rate that far back at most", secs, n,
		    PACE_RING_DEVICE_BYTES / 1024);
	else
		log_info("fine-rate ring: %zu rows (%ss) per card", rows, secs);
}

/* ---- metric-file health ---- */

void
source_check_health(struct source *src, int device, uint64_t now_mono_ns)
{
	struct source_device *d = &src->dev[device];
	const struct direct_card_stats *dc = direct_card(src->direct, device);
	struct stat sb;
	int64_t mtime = 0;
	bool exists;
	char text[640];

	if (!d->seen || d->health.path[0] == '\0')
		return;
	if ((exists = stat(d->health.path, &sb) == 0))
		mtime = (int64_t)sb.st_mtim.tv_sec * (int64_t)NSEC_PER_SEC +
		    sb.st_mtim.tv_nsec;
	/* a FIFO or a device there is never opened here: named, that is all */
	if (exists && !S_ISREG(sb.st_mode)) {
		if (health_observe_not_file(&d->health, sb.st_mode,
		    now_mono_ns)) {
			health_describe(&d->health, text, sizeof(text));
			log_notice("device %d: %s", device, text);
		}
		return;
	}
	/*
	 * A file read directly is updated when its writer's own stamps move,
	 * whatever its mtime says: writes through a shared map need not move
	 * the mtime, and status must not call a file stale that gives new
	 * samples.
	 */
	if (exists && dc != NULL && dc->state == DIRECT_READING &&
	    dc->newest_ts_ns != 0)
		mtime = dc->newest_ts_ns;
	if (health_observe(&d->health, exists, mtime, now_mono_ns,
	    HEALTH_STALE_NS)) {
		health_describe(&d->health, text, sizeof(text));
		log_notice("device %d: %s", device, text);
	}
}
