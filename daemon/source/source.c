/*
 * source: the aiu-smi child and the rows it prints, as the rest of the
 * daemon sees them.  This file holds the public face, applying the
 * sampling rates and replaying the fine-rate ring around profiling
 * windows, the card inventory and the metric-file health timer.  It owns the files below it (see
 * source_base.h): source_child.c runs the process, source_rows.c parses
 * its output, source_direct.c reads the metric files directly and reports
 * a change of the cards it covers back here (coverage_changed).
 */
#include <stdlib.h>

#include "config.h"
#include "direct.h"
#include "pace.h"
#include "source_base.h"
#include "source_child.h"
#include "source_direct.h"
#include "timeparse.h"

#define HEALTH_CHECK_NS		(5ULL * NSEC_PER_SEC)

/* ---- rates ---- */

/*
 * Bring pace, the direct reads and the child in line with the rates now
 * wanted; why is logged if the child is restarted for it.  Also what
 * source_direct.c reports a change of coverage to.
 */
static void
apply_rates(struct source *src, const char *why)
{
	struct pace_params prm = source_pace_params(src);

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
	struct pace_params prm = source_pace_params(src);
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
	src->clock_epoch = store_clock_epoch(st);
	src->interval_ns = cfg->source.interval_ns;
	src->out_fd = src->err_fd = src->ver_fd = -1;
	src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
	src->bad_rl = (struct ratelimit)RATELIMIT_INIT(10 * NSEC_PER_SEC, 10);
	src->stderr_rl = (struct ratelimit)RATELIMIT_INIT(10 * NSEC_PER_SEC, 20);
	src->skew_rl = (struct ratelimit)RATELIMIT_INIT(600 * NSEC_PER_SEC, 1);
	src->cached_date = -1;
	src->coverage_changed = apply_rates;
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
	apply_rates(src, "sampling interval changed");
}

void
source_set_windows_open(struct source *src, bool open, int64_t at_ns)
{
	if (open == src->windows_open)
		return;
	src->windows_open = open;
	if (open) {
		src->opened_ns = at_ns;
		source_direct_window(src, true, src->opened_ns);
		if (sd_event_add_defer(src->ev, &src->replay_ev, on_replay,
		    src) < 0)
			pace_set_window(src->pace, true, src->opened_ns);
	} else {
		replay_now(src);
		pace_set_window(src->pace, false, at_ns);
		source_direct_window(src, false, at_ns);
	}
	apply_rates(src, open ? "a profiling window opened" :
	    "the last profiling window closed");
}

void
source_clock_stepped(struct source *src, int64_t step_ns, int64_t at_ns,
    int64_t epoch)
{
	src->clock_epoch = epoch;
	src->step_size_ns = step_ns;
	src->step_at_ns = at_ns;
	/* whole ms, within what pace's 32 bits of ms hold */
	int64_t net = src->clock_net_ns + step_ns / (int64_t)NSEC_PER_MSEC *
	    (int64_t)NSEC_PER_MSEC;

	if (net > (int64_t)INT32_MAX * (int64_t)NSEC_PER_MSEC ||
	    net < (int64_t)INT32_MIN * (int64_t)NSEC_PER_MSEC)
		log_warnx("the host clock's steps sum to %.0fs: the energy "
		    "counter no longer follows them", (double)net / 1e9);
	else
		src->clock_net_ns = net;
	if (src->pace != NULL)
		pace_clock_stepped(src->pace, step_ns);
	if (src->dpace != NULL)
		pace_clock_stepped(src->dpace, step_ns);
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
	apply_rates(src, "window_interval or pre_window changed");
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
	out->stored_interval_ns = source_stored_interval(src);
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
