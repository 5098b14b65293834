/*
 * status_brief: spyremon status by default, the reply in a screen
 * (status.h).
 *
 * Warnings that need someone come first, one line each: writes stalled,
 * rows dropped, aiu-smi not running, cards without a recent sample.  Then
 * a line each for the daemon, aiu-smi, the database and the open windows,
 * the number of cards (the lines that follow), and a table with a line
 * per card: aiu-smi's device ID, the bus ID, the
 * newest sample's age, and where the card's metrics come from, by the
 * best-source rule (spyremon-schema(5), "BEST SOURCE"): a card whose
 * metric file is read directly takes its power from the file, and busy,
 * temperature (gtemp), memory and PCIe bandwidth from aiu-smi, as every
 * command does; any other card takes everything from aiu-smi, and the
 * line says why.  Notes on the metric files' health close it, a line per
 * kind of problem.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "json.h"
#include "status.h"
#include "timeparse.h"

/*
 * A card with no sample at all is called out only once the daemon has run
 * this long: aiu-smi, a Python program, may take that long to start.
 */
#define FIRST_SAMPLE_GRACE_NS	(30LL * 1000000000LL)

/* Width a line is kept to where it lists things of no fixed number. */
#define LINE_WIDTH		78

/* Devices a note or warning names, in the order seen. */
struct devs {
	int64_t dev[256];
	size_t n;
};

/* The damage was met while the daemon ran (not at its start). */
static bool
running(yajl_val db)
{
	bool b = false;

	return json_bool(db, "damaged_while_running", &b) && b;
}

static void
devs_add(struct devs *d, int64_t dev)
{
	if (d->n < sizeof(d->dev) / sizeof(d->dev[0]))
		d->dev[d->n++] = dev;
}

/* "device 3", "devices 0, 2, 5", "devices 0-7, 9": runs of 3+ as ranges. */
static void
devs_text(const struct devs *d, char *buf, size_t len)
{
	size_t used;

	used = (size_t)snprintf(buf, len, "device%s ", d->n == 1 ? "" : "s");
	for (size_t i = 0; i < d->n && used < len; ) {
		size_t j = i;

		while (j + 1 < d->n && d->dev[j + 1] == d->dev[j] + 1)
			j++;
		if (j >= i + 2)
			used += (size_t)snprintf(buf + used, len - used,
			    "%s%" PRId64 "-%" PRId64, i > 0 ? ", " : "",
			    d->dev[i], d->dev[j]);
		else {
			j = i;
			used += (size_t)snprintf(buf + used, len - used,
			    "%s%" PRId64, i > 0 ? ", " : "", d->dev[i]);
		}
		i = j + 1;
	}
}

/* How long a card may go without a sample before it is called out. */
static int64_t
stale_after(yajl_val sampling)
{
	int64_t child;

	if (json_int(sampling, "child_interval_ns", &child) &&
	    child > STATUS_STALE_MIN_NS / STATUS_STALE_INTERVALS)
		return child * STATUS_STALE_INTERVALS;
	return STATUS_STALE_MIN_NS;
}

/* ---- warnings ---- */

static void
warn_database(yajl_val db)
{
	yajl_val w = json_object(db, "writer");
	const char *state = json_str(w, "state"), *why = json_str(w, "why");
	char span[FMT_BUFLEN];
	int64_t v;

	if (state != NULL && strcmp(state, "ok") != 0) {
		printf("WARNING: writes %s", state);
		if (json_int(w, "stalled_ns", &v)) {
			fmt_age(v, span, sizeof(span));
			printf(" for %s", span);
		}
		printf(": %s\n", why != NULL ? why : "(no reason given)");
	}
	if (json_int(db, "errors", &v) && v > 0) {
		int64_t dmg = 0;

		(void)json_int(db, "errors_damage", &dmg);
		printf("WARNING: %" PRId64 " database error%s since the daemon "
		    "started", v, v == 1 ? "" : "s");
		if (dmg > 0)
			printf(", %" PRId64 " of them damage (the file is "
			    "malformed)", dmg);
		printf("; the last: %s\n", json_str(db, "last_error") != NULL ?
		    json_str(db, "last_error") : "?");
	}
	if (json_int(db, "rows_dropped", &v) && v > 0)
		printf("WARNING: %" PRId64 " row%s dropped since the daemon "
		    "started: more were queued than could wait for the disk\n",
		    v, v == 1 ? "" : "s");
	w = json_object(db, "checkpoint");
	if ((state = json_str(w, "state")) != NULL && strcmp(state, "ok") != 0) {
		printf("WARNING: checkpoints blocked");
		if (json_int(w, "blocked_ns", &v)) {
			fmt_age(v, span, sizeof(span));
			printf(" for %s", span);
		}
		printf(" by a reader holding an old snapshot");
		if (json_int(w, "wal_bytes", &v) && v >= 0) {
			fmt_size_approx((uint64_t)v, span, sizeof(span));
			printf(": the write-ahead log is %s and grows", span);
		}
		putchar('\n');
	}
	if (json_int(db, "damaged_kept_aside", &v) && v > 0)
		printf("WARNING: DAMAGED %s: %s; the originals are kept "
		    "as %s\n", running(db) ?
		    "WHILE RUNNING" : "AT START",
		    json_str(db, "damaged_found") != NULL ?
		    json_str(db, "damaged_found") : "?",
		    json_str(db, "damaged_kept_as") != NULL ?
		    json_str(db, "damaged_kept_as") : "?");
}

static void
warn_child(yajl_val c)
{
	const char *state = json_str(c, "state"), *err = json_str(c, "last_error");

	if (state == NULL || strcmp(state, "running") == 0)
		return;
	printf("WARNING: aiu-smi is not running (%s; restarted with back-off)",
	    state);
	if (err != NULL && err[0] != '\0')
		printf(": %s", err);
	putchar('\n');
}

/* Cards with no sample for stale_ns (or none yet, after the grace). */
static void
warn_cards(yajl_val health, int64_t stale_ns, int64_t up_ns)
{
	struct devs old = { .n = 0 }, never = { .n = 0 };
	char list[512], span[FMT_BUFLEN];

	for (size_t i = 0; health != NULL && i < health->u.array.len; i++) {
		yajl_val h = health->u.array.values[i];
		yajl_val age = json_get(h, "newest_age_ns");
		int64_t dev, a;

		if (age == NULL || !json_int(h, "device", &dev))
			continue;	/* an older daemon: nothing to go by */
		if (json_int(h, "newest_age_ns", &a)) {
			if (a > stale_ns)
				devs_add(&old, dev);
		} else if (up_ns >= FIRST_SAMPLE_GRACE_NS)
			devs_add(&never, dev);
	}
	fmt_age(stale_ns, span, sizeof(span));
	if (old.n > 0) {
		devs_text(&old, list, sizeof(list));
		printf("WARNING: no sample for over %s from %s\n", span, list);
	}
	if (never.n > 0) {
		devs_text(&never, list, sizeof(list));
		printf("WARNING: no sample yet from %s\n", list);
	}
}

/* ---- a line each ---- */

static void
line_daemon(yajl_val d, int64_t now_ns)
{
	const char *v = json_str(d, "version"), *state = json_str(d, "state");
	char t[FMT_BUFLEN], up[FMT_BUFLEN];
	int64_t pid, started;

	printf("daemon:   spyremond %s", v != NULL ? v : "?");
	if (json_int(d, "pid", &pid))
		printf(", pid %" PRId64, pid);
	if (state != NULL && strcmp(state, "running") != 0)
		printf(", %s", state);
	if (json_int(d, "started_ns", &started)) {
		fmt_age(now_ns - started, up, sizeof(up));
		fmt_time_ms(started, t, sizeof(t));
		printf(", up %s (since %s)", up, t);
	}
	putchar('\n');
}

void
status_child_head(yajl_val c)
{
	const char *state = json_str(c, "state");
	int64_t pid, restarts;

	printf("%s", state != NULL ? state : "?");
	if (json_int(c, "pid", &pid))
		printf(", pid %" PRId64, pid);
	if (json_int(c, "restarts", &restarts))
		printf(", %" PRId64 " restart%s", restarts,
		    restarts == 1 ? "" : "s");
}

static void
line_child(yajl_val c)
{
	const char *ver = json_str(c, "smi_version");
	int64_t bad;

	printf("aiu-smi:  ");
	status_child_head(c);
	if (json_int(c, "bad_lines", &bad) && bad > 0)
		printf(", %" PRId64 " line%s rejected", bad, bad == 1 ? "" : "s");
	/* absent from an older daemon; null: no answer to -v (yet) */
	if (json_get(c, "smi_version") != NULL)
		printf("; aiu-smi -v: %s", ver != NULL ? ver : "not known yet");
	putchar('\n');
}

static void
line_database(yajl_val d)
{
	const char *path = json_str(d, "path");
	const char *state = json_str(json_object(d, "writer"), "state");
	char size[FMT_BUFLEN];
	int64_t v, pending = 0, changes = 0;

	printf("database: %s", path != NULL ? path : "?");
	if (json_int(d, "file_bytes", &v) && v >= 0) {
		fmt_size_approx((uint64_t)v, size, sizeof(size));
		printf(", %s", size);
	}
	if (state != NULL)
		printf("; writer %s", strcmp(state, "ok") == 0 ? "ok" : "STALLED");
	if (json_int(d, "rows_written", &v))
		printf(": %" PRId64 " rows written since start", v);
	(void)json_int(d, "pending", &pending);
	(void)json_int(json_object(d, "writer"), "queued_changes", &changes);
	printf(", %" PRId64, pending);
	if (changes > 0)
		printf(" rows and %" PRId64 " change%s", changes,
		    changes == 1 ? "" : "s");
	printf(" queued\n");
	if ((path = json_str(d, "path_after_restart")) != NULL)
		printf("  the configuration now names %s: a restart is needed "
		    "to write it\n", path);
}

/*
 * The host clock's steps since the daemon started, if any: "host clock:
 * stepped 2 times since start, the last back 3600.000s at ..."; none, no line.
 */
void
status_clock_line(yajl_val c, const char *indent)
{
	char when[FMT_BUFLEN];
	int64_t steps = 0, last = 0, at = 0, nudged = 0;

	if (!json_int(c, "steps", &steps) || steps <= 0)
		return;
	(void)json_int(c, "last_step_ns", &last);
	(void)json_int(c, "last_step_at_ns", &at);
	(void)json_int(c, "rows_nudged", &nudged);
	fmt_time_ms(at, when, sizeof(when));
	printf("%shost clock: stepped %" PRId64 " time%s since start, the "
	    "last %s %.3fs at %s; sampling went on", indent, steps,
	    steps == 1 ? "" : "s", last >= 0 ? "forward" : "back",
	    (double)(last >= 0 ? last : -last) / 1e9, when);
	if (nudged > 0)
		printf(" (%" PRId64 " row%s stored a few ns after a stamp "
		    "already stored)", nudged, nudged == 1 ? "" : "s");
	putchar('\n');
}

/* How many windows are open, and their tags (with IDs) as far as fit. */
static void
line_windows(yajl_val w)
{
	size_t n = w->u.array.len;
	int col;

	if (n == 0) {
		printf("windows:  none open\n");
		return;
	}
	col = printf("windows:  %zu open:", n);
	for (size_t i = 0; i < n; i++) {
		yajl_val x = w->u.array.values[i];
		const char *tag = json_str(x, "tag");
		char item[128];
		int64_t id = 0;
		int len;

		(void)json_int(x, "id", &id);
		len = snprintf(item, sizeof(item), "%s %s (id %" PRId64 ")",
		    i > 0 ? "," : "", tag != NULL ? tag : "?", id);
		if (i > 0 && col + len > LINE_WIDTH) {
			printf(", and %zu more", n - i);
			break;
		}
		col += printf("%s", item);
	}
	putchar('\n');
}

/* Is a card with bus ID bus among the health entries? */
static bool
has_bus(yajl_val health, const char *bus)
{
	for (size_t i = 0; health != NULL && i < health->u.array.len; i++) {
		const char *b = json_str(health->u.array.values[i], "bus_id");

		if (b != NULL && strcmp(b, bus) == 0)
			return true;
	}
	return false;
}

/* Is a card with bus ID bus in the PCI inventory (cards)? */
static bool
in_inventory(yajl_val cards, const char *bus)
{
	for (size_t i = 0; cards != NULL && i < cards->u.array.len; i++) {
		const char *b = json_str(cards->u.array.values[i], "bus_id");

		if (b != NULL && bus != NULL && strcmp(b, bus) == 0)
			return true;
	}
	return false;
}

/*
 * The cards' count and the rate rows are stored at now.  The cards are
 * the lines of the table below: aiu-smi's devices (health), then the
 * cards of the PCI inventory that aiu-smi has not named; where the two
 * sources disagree, the line says by how many.
 */
static void
line_cards(yajl_val health, yajl_val cards, yajl_val sampling,
    size_t nwindows)
{
	char now[FMT_BUFLEN], win[FMT_BUFLEN];
	size_t named = health != NULL ? health->u.array.len : 0;
	size_t not_pci = 0, not_named = 0;
	int64_t i, w;

	for (size_t k = 0; k < named; k++)
		if (!in_inventory(cards, json_str(health->u.array.values[k],
		    "bus_id")))
			not_pci++;
	for (size_t k = 0; cards != NULL && k < cards->u.array.len; k++) {
		const char *bus = json_str(cards->u.array.values[k], "bus_id");

		if (bus != NULL && !has_bus(health, bus))
			not_named++;
	}
	printf("cards:    %zu", named + not_named);
	if (not_pci > 0 && not_named > 0)
		printf(" (%zu of aiu-smi's not in sysfs; %zu in sysfs not named "
		    "by aiu-smi)", not_pci, not_named);
	else if (not_pci > 0)
		printf(" (%s%zu named by aiu-smi, not found in sysfs)",
		    not_pci == named ? "" : "of them ", not_pci);
	else if (not_named > 0)
		printf(" (%zu in sysfs not named by aiu-smi)", not_named);
	if (json_int(sampling, "interval_ns", &i) && i >= 0) {
		format_duration((uint64_t)i, now, sizeof(now));
		printf(", rows stored every %s now", now);
		if (json_int(sampling, "window_interval_ns", &w) && w >= 0) {
			format_duration((uint64_t)w, win, sizeof(win));
			if (nwindows > 0 && w == i)
				printf(" (a window is open)");
			else if (w != i)
				printf(" (%s while a window is open)", win);
		}
	}
	putchar('\n');
}

/* ---- the cards ---- */

static bool
gives(yajl_val metrics, const char *key)
{
	for (size_t i = 0; metrics != NULL && i < metrics->u.array.len; i++) {
		yajl_val v = metrics->u.array.values[i];

		if (YAJL_IS_STRING(v) && strcmp(v->u.string, key) == 0)
			return true;
	}
	return false;
}

/* Why a card with direct state state is not read directly, for a person. */
static const char *
why_not_direct(const char *state)
{
	static const struct {
		const char *state, *why;
	} whys[] = {
		{ "old format", "metric file in the old format" },
		{ "unsupported version", "metric file of another layout version" },
		{ "missing", "no metric file" },
		{ "bad file", "metric file unreadable; status -v says why" },
		{ "not a file", "a FIFO or a device at the metric file's path; "
		    "status -v says which" },
		{ "unknown", "metric file not read yet" },
	};

	for (size_t i = 0; state != NULL && i < sizeof(whys) / sizeof(whys[0]);
	    i++)
		if (strcmp(whys[i].state, state) == 0)
			return whys[i].why;
	return state;
}

/*
 * Where each metric of health entry h comes from, as every command takes
 * it (the best-source rule): "power: metric file; busy, temp, mem, PCIe:
 * aiu-smi" for a card read directly, or "all: aiu-smi (why)".  The file's
 * other values (tempr, the byte counters) are columns of their own that
 * no figure of the commands uses; status -v lists them.  mode is
 * source.direct, NULL if not said.
 */
static void
card_sources(yajl_val h, const char *mode, char *buf, size_t len)
{
	const char *src = json_str(h, "source");
	yajl_val dir = json_object(h, "direct");
	yajl_val given = json_array(dir, "file_metrics");
	const char *why;

	if (src != NULL && strcmp(src, "file") == 0) {
		/* a daemon that does not list them reads pwr from files */
		if (given == NULL || gives(given, "pwr"))
			snprintf(buf, len, "power: metric file; busy, temp, mem, "
			    "PCIe: aiu-smi");
		else
			snprintf(buf, len, "all: aiu-smi (the metric file, read "
			    "directly, gives no power)");
		return;
	}
	if (dir != NULL)
		why = why_not_direct(json_str(dir, "state"));
	else if (mode != NULL && strcmp(mode, "off") == 0)
		why = "source.direct: off";
	else
		why = NULL;
	if (why != NULL)
		snprintf(buf, len, "all: aiu-smi (%s)", why);
	else
		snprintf(buf, len, "all: aiu-smi");
}

static void
card_line(const char *dev, const char *bus, const char *age, const char *text)
{
	printf("%-3s %-12s %-10s %s\n", dev, bus, age, text);
}

/*
 * A line per aiu-smi device (in the health list), then one per card of
 * the inventory that aiu-smi has not named.
 */
static void
card_lines(yajl_val health, yajl_val cards, const char *mode)
{
	char dev[32], age[FMT_BUFLEN + 8], text[256];

	card_line("DEV", "BUS ID", "NEWEST", "SOURCES");
	for (size_t i = 0; health != NULL && i < health->u.array.len; i++) {
		yajl_val h = health->u.array.values[i];
		const char *bus = json_str(h, "bus_id");
		int64_t d, a;

		if (json_int(h, "device", &d))
			snprintf(dev, sizeof(dev), "%" PRId64, d);
		else
			snprintf(dev, sizeof(dev), "?");
		if (json_int(h, "newest_age_ns", &a))
			fmt_ago(a, age, sizeof(age));
		else
			snprintf(age, sizeof(age), json_get(h, "newest_age_ns") ?
			    "none yet" : "?");
		card_sources(h, mode, text, sizeof(text));
		card_line(dev, bus != NULL && bus[0] != '\0' ? bus : "?", age,
		    text);
	}
	for (size_t i = 0; cards != NULL && i < cards->u.array.len; i++) {
		const char *bus = json_str(cards->u.array.values[i], "bus_id");

		if (bus != NULL && !has_bus(health, bus))
			card_line("-", bus, "-", "not named by aiu-smi (yet): "
			    "no samples");
	}
}

/*
 * The notes on metric files, in the order printed: the health state that
 * calls for each (NULL: counters_zero instead), and the text around the
 * devices it names.
 */
static const struct health_note {
	const char *state, *before, *after;
} health_note[] = {
	{ "missing", "no metric file for ", ": is the workload running "
	    "with SENLIB_DEVEL_CONFIG_FILE set?" },
	{ "not a file", "the metric file path of ", " holds a FIFO, a device "
	    "or a folder, not a file: status -v says which" },
	{ "stale", "the metric file of ", " is not being updated: the "
	    "workload may have stopped" },
	{ NULL, "the counters of ", " are all zero: was the workload "
	    "started with SENLIB_DEVEL_CONFIG_FILE?" },
};
#define HEALTH_NOTES	(sizeof(health_note) / sizeof(health_note[0]))

/* Whether health entry h calls for note n. */
static bool
health_calls_for(yajl_val h, const struct health_note *n)
{
	const char *state = json_str(h, "state");
	bool z = false;

	if (n->state == NULL)
		return json_bool(h, "counters_zero", &z) && z;
	return state != NULL && strcmp(state, n->state) == 0;
}

/* A note per kind of metric-file problem, naming the devices. */
static void
health_notes(yajl_val health)
{
	struct devs named[HEALTH_NOTES];
	char list[512];

	for (size_t n = 0; n < HEALTH_NOTES; n++)
		named[n].n = 0;
	for (size_t i = 0; health != NULL && i < health->u.array.len; i++) {
		yajl_val h = health->u.array.values[i];
		int64_t dev;

		if (!json_int(h, "device", &dev))
			continue;
		for (size_t n = 0; n < HEALTH_NOTES; n++)
			if (health_calls_for(h, &health_note[n]))
				devs_add(&named[n], dev);
	}
	for (size_t n = 0; n < HEALTH_NOTES; n++) {
		if (named[n].n == 0)
			continue;
		devs_text(&named[n], list, sizeof(list));
		printf("note: %s%s%s\n", health_note[n].before, list,
		    health_note[n].after);
	}
}

void
status_print_brief(yajl_val reply)
{
	yajl_val daemon = json_object(reply, "daemon");
	yajl_val child = json_object(reply, "child");
	yajl_val sampling = json_object(reply, "sampling");
	yajl_val database = json_object(reply, "database");
	yajl_val cards = json_array(reply, "cards");
	yajl_val health = json_array(reply, "health");
	yajl_val windows = json_array(reply, "windows");
	int64_t now = now_realtime_ns(), started = now;

	(void)json_int(daemon, "started_ns", &started);
	if (database != NULL)
		warn_database(database);
	if (child != NULL)
		warn_child(child);
	warn_cards(health, stale_after(sampling), now - started);
	if (daemon != NULL)
		line_daemon(daemon, now);
	if (child != NULL)
		line_child(child);
	if (database != NULL)
		line_database(database);
	status_clock_line(json_object(reply, "clock"), "");
	if (windows != NULL)
		line_windows(windows);
	line_cards(health, cards, sampling, windows != NULL ? windows->u.array.len : 0);
	card_lines(health, cards, json_str(sampling, "direct"));
	health_notes(health);
}
