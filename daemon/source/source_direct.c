/*
 * source_direct: the source's direct reads of new-format metric files.
 *
 * A timer on CLOCK_MONOTONIC reads every known card (direct.c) once per
 * period: the fine rate (source.window_interval) while a window is open or
 * a fine-rate ring is kept (source.pre_window > 0), source.interval
 * otherwise.  It is re-armed from the time it was scheduled for, not from
 * when it ran, so reads do not drift; ticks missed while the daemon was
 * busy are skipped, not caught up in a burst.
 *
 * Direct rows go through a pace of their own, with the same rates as
 * aiu-smi's rows would have, so windows get every read and the time
 * between them aggregates.  pace keeps no sequence number or read time;
 * the last DSTAMP_RING of each card are remembered by stamp (dstamp.h)
 * and put back on the rows pace stores (an aggregate carries its last
 * read's).
 *
 * Cards are those of aiu-smi's #MetricFiles block, under aiu-smi's device
 * IDs.  When the set of cards read directly changes, that is reported to
 * the owner (src->coverage_changed), which applies the source's rates
 * again: aiu-smi runs at source.interval while every card is read
 * directly, and as before otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "clockstep.h"
#include "config.h"
#include "direct.h"
#include "dstamp.h"
#include "metricfile.h"
#include "pace.h"
#include "schema.h"
#include "source_base.h"
#include "source_direct.h"
#include "timeparse.h"

static uint64_t
direct_period(const struct source *src)
{
	struct pace_params prm = source_direct_params(src);

	return prm.fine_ns;
}

/* A row from the direct rows' pace: put back what pace does not keep. */
static void
store_direct_row(void *arg, const struct store_sample *s)
{
	struct source *src = arg;
	struct store_sample row = *s;
	const struct dstamp *d;

	row.src = SCHEMA_SRC_FILE;
	if (s->device >= 0 && s->device < SOURCE_MAX_DEVICES &&
	    (d = dstamp_get(&src->dring[s->device], s->ts_ns)) != NULL) {
		row.have_seq = true;
		row.seq = d->seq;
		row.arrival_ns = d->arrival_ns;
	}
	store_append(src->st, &row);
	src->stats.rows++;
}

static int
replace_direct_rows(void *arg, int device, int64_t after_ns)
{
	struct source *src = arg;

	return store_delete_after_src(src->st, device, SCHEMA_SRC_FILE,
	    after_ns);
}

/* A new sample read from a file: remember its stamp, hand it to pace. */
/*
 * The epoch of the host clock file row s was stamped in.  The writer
 * stamped it before the daemon read it (arrival_ns): read within a
 * minute after the last step, with a stamp nearer the old clock's time of
 * the read than the new one's, it was stamped before the step, in the
 * epoch before.
 */
static int64_t
direct_epoch(const struct source *src, const struct store_sample *s)
{
	int64_t old;

	if (src->step_at_ns == 0 || s->arrival_ns < src->step_at_ns ||
	    s->arrival_ns - src->step_at_ns > 60 * (int64_t)NSEC_PER_SEC ||
	    src->clock_epoch == 0)
		return src->clock_epoch;
	old = s->arrival_ns - src->step_size_ns;
	return llabs(s->ts_ns - old) < llabs(s->ts_ns - s->arrival_ns) ?
	    src->clock_epoch - 1 : src->clock_epoch;
}

static void
direct_row(void *arg, const struct store_sample *s)
{
	struct source *src = arg;
	struct store_sample row = *s;

	if (s->device >= 0 && s->device < SOURCE_MAX_DEVICES)
		row.ts_ns = dstamp_put(&src->dring[s->device], s->ts_ns,
		    s->seq, s->arrival_ns);
	if (row.ts_ns > src->stats.newest_ts_ns)
		src->stats.newest_ts_ns = row.ts_ns;
	row.clock_net_ns = src->clock_net_ns;
	row.have_epoch = true;
	row.epoch = direct_epoch(src, s);
	pace_row(src->dpace, &row);
}

static int
direct_metric(void *arg, const char *key, const char *unit, bool max, int *id)
{
	struct source *src = arg;

	if (store_metric(src->st, key, unit, id) == -1)
		return -1;
	if (max)
		pace_set_max(src->dpace, *id);
	return 0;
}

/*
 * True if coverage all, differing from the applied one, may be applied
 * now: it has held SOURCE_SWITCH_SETTLE_NS, and the last switch is
 * SOURCE_SWITCH_HOLD_NS past (see source.h).
 */
static bool
switch_due(struct source *src, bool all, uint64_t now)
{
	if (all == src->direct_all) {
		src->direct_seen_mono_ns = 0;
		return false;
	}
	if (src->direct_seen_mono_ns == 0)
		src->direct_seen_mono_ns = now;
	if (now - src->direct_seen_mono_ns < SOURCE_SWITCH_SETTLE_NS)
		return false;
	return src->direct_switched_mono_ns == 0 ||
	    now - src->direct_switched_mono_ns >= SOURCE_SWITCH_HOLD_NS;
}

static int
on_direct_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;
	uint64_t now = now_monotonic_ns(), period = src->direct_period_ns / 1000;
	bool all, ticked, changed;

	(void)s;
	/* a step is seen before rows of the new clock are read (counters.c) */
	(void)clockstep_check();
	if ((ticked = direct_tick(src->direct, now)))
		/* the files' health at once: status says one thing of a file */
		for (int i = 0; i < SOURCE_MAX_DEVICES; i++)
			source_check_health(src, i, now);
	all = direct_covers_all(src->direct);
	/* the first state is said at once; a switch once due (source.h) */
	if (switch_due(src, all, now) || (ticked && !src->direct_said &&
	    all == src->direct_all)) {
		changed = all != src->direct_all;
		if (changed) {
			src->direct_switched_mono_ns = now;
			src->direct_seen_mono_ns = 0;
		}
		src->direct_all = all;
		src->direct_said = true;
		if (all)
			log_info("every card's metric file is read "
			    "directly; aiu-smi runs at source.interval");
		else if (src->cfg->source.direct == CONFIG_DIRECT_ON)
			/* on asks for direct reads: missing them is
			 * worth a warning, not a note */
			log_warnx("source.direct is on, but not every "
			    "card's metric file can be read directly "
			    "(spyremon status says why); aiu-smi runs "
			    "as without direct reads");
		else
			log_info("not every card's metric file can be "
			    "read directly; aiu-smi runs as without "
			    "direct reads");
		if (changed)
			src->coverage_changed(src, all ?
			    "every card is read directly" :
			    "a card is no longer read directly");
	}
	/* from the scheduled time; skip ticks already past */
	usec += period;
	if (usec * 1000 < now)
		usec += ((now / 1000 - usec) / period + 1) * period;
	src->direct_next_usec = usec;
	source_arm_timer(src, &src->direct_timer, usec, on_direct_timer);
	return 0;
}

/* The metric table: the reference's search path, else the built-in one. */
static const struct mf_table *
load_table(struct source *src)
{
	char path[512], err[512];

	if (mf_table_find(getenv("SECTION_TYPE_CONFIG_FILE"), getenv("HOME"),
	    path, sizeof(path)) == -1)
		return mf_table_builtin();
	if ((src->table = malloc(sizeof(*src->table))) == NULL ||
	    mf_table_load(path, src->table, err, sizeof(err)) == -1) {
		log_warnx("%s; using the built-in metric table 1.0.0.1",
		    src->table != NULL ? err : "out of memory");
		free(src->table);
		src->table = NULL;
		return mf_table_builtin();
	}
	log_info("metric table %s, version %s", path, src->table->version);
	return src->table;
}

int
source_direct_start(struct source *src)
{
	struct direct_sink dsink = { direct_row, direct_metric, src };
	struct pace_sink psink = { store_direct_row, replace_direct_rows, src };
	struct pace_params prm = source_direct_params(src);
	uint64_t now;

	if ((src->dpace = pace_new(&prm, &psink)) == NULL ||
	    (src->direct = direct_new(load_table(src), &dsink)) == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	src->direct_period_ns = direct_period(src);
	sd_event_now(src->ev, CLOCK_MONOTONIC, &now);
	src->direct_next_usec = now + src->direct_period_ns / 1000;
	if (source_arm_timer(src, &src->direct_timer, src->direct_next_usec,
	    on_direct_timer) < 0) {
		log_warnx("cannot set up the metric files' timer");
		return -1;
	}
	return 0;
}

void
source_direct_rates(struct source *src)
{
	struct pace_params prm;
	uint64_t period, now;

	if (src->direct == NULL)
		return;
	prm = source_direct_params(src);
	pace_set_params(src->dpace, &prm);
	period = direct_period(src);
	if (period == src->direct_period_ns)
		return;
	src->direct_period_ns = period;
	/* a faster rate starts now, not at the end of the slower period */
	sd_event_now(src->ev, CLOCK_MONOTONIC, &now);
	if (src->direct_next_usec > now + period / 1000) {
		src->direct_next_usec = now + period / 1000;
		source_arm_timer(src, &src->direct_timer, src->direct_next_usec,
		    on_direct_timer);
	}
}

void
source_direct_window(struct source *src, bool open, int64_t now_ns)
{
	if (src->dpace != NULL)
		pace_set_window(src->dpace, open, now_ns);
}

void
source_direct_stop(struct source *src)
{
	src->direct_timer = sd_event_source_disable_unref(src->direct_timer);
	if (src->dpace != NULL)
		pace_flush(src->dpace);
}

void
source_direct_free(struct source *src)
{
	sd_event_source_disable_unref(src->direct_timer);
	src->direct_timer = NULL;
	direct_free(src->direct);
	src->direct = NULL;
	pace_free(src->dpace);
	src->dpace = NULL;
	free(src->table);
	src->table = NULL;
}
