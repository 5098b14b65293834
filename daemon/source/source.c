/*
 * source: the aiu-smi child and the rows it prints, as the rest of the
 * daemon sees them.  This file holds the public face, the sampling rates
 * and the fine-rate ring around profiling windows, the card inventory and
 * the metric-file health; source_rows.c parses, source_child.c runs the
 * process (see source_priv.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "direct.h"
#include "pace.h"
#include "source_priv.h"
#include "timeparse.h"

#define HEALTH_CHECK_NS		(5ULL * NSEC_PER_SEC)
#define HEALTH_STALE_NS		(30ULL * NSEC_PER_SEC)

/* ---- shared helpers ---- */

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

static struct pace_params
pace_params_now(const struct source *src)
{
	struct pace_params prm = {
		.fine_ns = fine_ns(src),
		.coarse_ns = src->interval_ns,
		.pre_ns = src->cfg->source.pre_window_ns,
	};

	/* without a ring, the child's own rate is the stored one */
	if (prm.pre_ns == 0 || src->direct_all)
		prm.fine_ns = prm.coarse_ns = source_wanted_delay(src);
	return prm;
}

struct pace_params
source_direct_params(const struct source *src)
{
	struct pace_params prm = {
		.fine_ns = fine_ns(src),
		.coarse_ns = src->interval_ns,
		.pre_ns = src->cfg->source.pre_window_ns,
	};

	if (prm.pre_ns == 0)
		prm.fine_ns = prm.coarse_ns = src->windows_open ? fine_ns(src) :
		    src->interval_ns;
	return prm;
}

void
source_apply_rates(struct source *src, const char *why)
{
	struct pace_params prm = pace_params_now(src);

	pace_set_params(src->pace, &prm);
	source_direct_rates(src);
	if (src->pid != 0 && src->child_interval_ns != source_wanted_delay(src) &&
	    !src->restart_at_once) {
		src->restart_at_once = true;
		source_kill(src, why);
	}
}

static void
store_row(void *arg, const struct store_sample *s)
{
	struct source *src = arg;

	store_append(src->st, s);
	src->stats.rows++;
}

static int
replace_rows(void *arg, int device, int64_t after_ns)
{
	struct source *src = arg;

	return store_delete_after(src->st, device, after_ns);
}

/*
 * Tell pace the windows opened, which replays the ring, unless done.  It
 * runs from the event loop right after the request that opened them, so
 * that request's reply does not wait for it; rows read meanwhile are in
 * the ring and replayed too.
 */
static void
replay_now(struct source *src)
{
	if (src->replay_ev == NULL)
		return;
	src->replay_ev = sd_event_source_disable_unref(src->replay_ev);
	pace_set_window(src->pace, true, src->opened_ns);
}

static int
on_replay(sd_event_source *s, void *arg)
{
	(void)s;
	replay_now(arg);
	return 0;
}

void
source_describe_ring(const struct source *src, size_t n)
{
	struct pace_params prm = pace_params_now(src);
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

static int
on_health_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;
	uint64_t now = now_monotonic_ns();

	for (int i = 0; i < SOURCE_MAX_DEVICES; i++)
		source_check_health(src, i, now);
	source_arm_timer(src, &src->health_timer, usec + HEALTH_CHECK_NS / 1000,
	    on_health_timer);
	(void)s;
	return 0;
}

/* ---- inventory ---- */

static void
scan_inventory(struct source *src)
{
	struct card *cards = NULL;
	size_t n = 0;
	int64_t now = now_realtime_ns();

	if (inventory_scan(src->cfg->sysfs_root, &cards, &n) == -1) {
		log_warn("cannot list PCI devices under %s/bus/pci/devices",
		    src->cfg->sysfs_root);
		return;
	}
	if (n == 0)
		log_notice("no Spyre card (PCI 1014:06a7 or 1014:06a8) under %s",
		    src->cfg->sysfs_root);
	for (size_t i = 0; i < n; i++) {
		log_info("card %s: %s, NUMA node %d, driver %s, link %s x%d",
		    cards[i].bus_id, cards[i].vf ? "VF" : "PF",
		    cards[i].numa_node, cards[i].driver[0] ? cards[i].driver :
		    "none", cards[i].link_speed[0] ? cards[i].link_speed :
		    "unknown", cards[i].link_width);
		store_card(src->st, &cards[i], now);
	}
	free(src->cards);
	src->cards = cards;
	src->ncards = n;
	src->stats.ncards = n;
}

/* ---- public ---- */

static int
pace_start(struct source *src)
{
	struct pace_params prm = pace_params_now(src);
	struct pace_sink sink = { store_row, replace_rows, src };

	if ((src->pace = pace_new(&prm, &sink)) == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	return 0;
}

int
source_start(sd_event *ev, const struct config *cfg, struct store *st,
    struct source **out)
{
	struct source *src;
	uint64_t now;

	if ((src = calloc(1, sizeof(*src))) == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	src->ev = sd_event_ref(ev);
	src->cfg = cfg;
	src->st = st;
	src->interval_ns = cfg->source.interval_ns;
	src->out_fd = src->err_fd = src->ver_fd = -1;
	src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
	src->bad_rl = (struct ratelimit)RATELIMIT_INIT(10 * NSEC_PER_SEC, 10);
	src->stderr_rl = (struct ratelimit)RATELIMIT_INIT(10 * NSEC_PER_SEC, 20);
	src->skew_rl = (struct ratelimit)RATELIMIT_INIT(600 * NSEC_PER_SEC, 1);
	src->cached_date = -1;
	csv_parser_init(&src->parser);
	if (pace_start(src) == -1) {
		source_free(src);
		return -1;
	}

	if (cfg->source.direct != CONFIG_DIRECT_OFF &&
	    source_direct_start(src) == -1) {
		source_free(src);
		return -1;
	}
	scan_inventory(src);
	sd_event_now(ev, CLOCK_MONOTONIC, &now);
	if (source_watch_silence(src) < 0 ||
	    source_arm_timer(src, &src->health_timer, now + HEALTH_CHECK_NS / 1000,
	    on_health_timer) < 0) {
		log_warnx("cannot set up aiu-smi's timers");
		source_free(src);
		return -1;
	}
	source_spawn(src);
	*out = src;
	return 0;
}

void
source_set_interval(struct source *src, uint64_t interval_ns)
{
	src->interval_ns = interval_ns;
	source_apply_rates(src, "sampling interval changed");
}

void
source_set_windows_open(struct source *src, bool open)
{
	if (open == src->windows_open)
		return;
	src->windows_open = open;
	if (open) {
		src->opened_ns = now_realtime_ns();
		source_direct_window(src, true, src->opened_ns);
		if (sd_event_add_defer(src->ev, &src->replay_ev, on_replay,
		    src) < 0)
			pace_set_window(src->pace, true, src->opened_ns);
	} else {
		replay_now(src);
		pace_set_window(src->pace, false, now_realtime_ns());
		source_direct_window(src, false, now_realtime_ns());
	}
	source_apply_rates(src, open ? "a profiling window opened" :
	    "the last profiling window closed");
}

void
source_reconfigure(struct source *src, const struct config *cfg)
{
	bool differs = config_source_differs(src->cfg, cfg);

	if ((cfg->source.direct == CONFIG_DIRECT_OFF) != (src->direct == NULL))
		log_warnx("source.direct: %s takes effect only on restart; "
		    "the metric files are %sread directly",
		    config_direct_name(cfg->source.direct),
		    src->direct == NULL ? "not " : "still ");
	src->cfg = cfg;
	scan_inventory(src);
	if (differs && src->pid != 0 && !src->restart_at_once) {
		src->restart_at_once = true;
		source_kill(src, "command line changed");
	} else if (differs && src->pid == 0) {
		/* waiting out a back-off: the new command deserves a try now */
		src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
		source_schedule_restart(src, 0);
	}
	source_apply_rates(src, "window_interval or pre_window changed");
}

void
source_stop(struct source *src, uint64_t grace_ns)
{
	src->stopping = true;
	src->restart_timer = sd_event_source_disable_unref(src->restart_timer);
	replay_now(src);
	source_direct_stop(src);
	source_stop_child(src, grace_ns);
	source_stop_version(src);
}

void
source_free(struct source *src)
{
	if (src == NULL)
		return;
	if (src->pid != 0)
		source_stop(src, SOURCE_KILL_GRACE_NS);
	source_stop_version(src);
	sd_event_source_disable_unref(src->restart_timer);
	sd_event_source_disable_unref(src->kill_timer);
	sd_event_source_disable_unref(src->silence_timer);
	sd_event_source_disable_unref(src->out_io);
	sd_event_source_disable_unref(src->err_io);
	sd_event_source_disable_unref(src->child_ev);
	sd_event_source_disable_unref(src->health_timer);
	sd_event_source_disable_unref(src->replay_ev);
	source_direct_free(src);
	sd_event_unref(src->ev);
	pace_free(src->pace);
	free(src->cards);
	free(src);
}

void
source_get_stats(const struct source *src, struct source_stats *out)
{
	struct pace_stats ps;

	*out = src->stats;
	out->windows_open = src->windows_open;
	out->stored_interval_ns = src->windows_open ? fine_ns(src) :
	    src->interval_ns;
	if (src->pace != NULL) {
		pace_get_stats(src->pace, &ps);
		out->ring_bytes = ps.ring_bytes;
	}
}

const struct source_device *
source_device(const struct source *src, int device)
{
	if (device < 0 || device >= SOURCE_MAX_DEVICES || !src->dev[device].seen)
		return NULL;
	return &src->dev[device];
}

const struct direct_card_stats *
source_direct_card(const struct source *src, int device)
{
	return direct_card(src->direct, device);
}

const struct card *
source_cards(const struct source *src, size_t *n)
{
	*n = src->ncards;
	return src->cards;
}
