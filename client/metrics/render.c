/*
 * render: the families of "spyremon metrics" (render.h).
 */
#include "render.h"

#include <inttypes.h>
#include <stdio.h>

/* The labels IBM's exporter uses (spyre, type), plus aiu-smi's device. */
#define CARD_LABELS	3

static void
card_labels(const struct collect_card *cd, char *devbuf, size_t len,
    struct expo_label l[CARD_LABELS])
{
	snprintf(devbuf, len, "%d", cd->device);
	l[0] = (struct expo_label){ "spyre", cd->bus_id };
	l[1] = (struct expo_label){ "type", cd->type };
	l[2] = (struct expo_label){ "device", devbuf };
}

static void
render_cards(const struct collect *c, struct expo *e)
{
	struct expo_label l[CARD_LABELS];
	char dev[16];

	for (size_t k = 0; k < collect_nvalues; k++) {
		const struct collect_value *cv = &collect_values[k];

		expo_family(e, cv->name, EXPO_GAUGE, cv->unit, cv->help);
		for (size_t i = 0; i < c->ncards; i++) {
			const struct collect_card *cd = &c->cards[i];

			if (!cd->have[k])
				continue;
			card_labels(cd, dev, sizeof(dev), l);
			expo_sample(e, l, CARD_LABELS, cd->v[k], cd->ts_ns);
		}
	}
	expo_family(e, "spyre_sample_interval_seconds", EXPO_GAUGE, "seconds",
	    "The interval the newest sample covers, ending at its stamp.");
	for (size_t i = 0; i < c->ncards; i++) {
		card_labels(&c->cards[i], dev, sizeof(dev), l);
		expo_sample(e, l, CARD_LABELS,
		    c->cards[i].interval_ms / 1000.0, c->cards[i].ts_ns);
	}
	expo_family(e, "spyre_energy_joules", EXPO_COUNTER, "joules",
	    "Energy: power times interval, summed over the stored samples, "
	    "kept across daemon restarts.");
	for (size_t i = 0; i < c->ncards; i++) {
		const struct collect_card *cd = &c->cards[i];

		if (!cd->have_energy)
			continue;
		card_labels(cd, dev, sizeof(dev), l);
		expo_sample(e, l, CARD_LABELS, cd->energy_j, cd->energy_ts_ns);
	}
}

static void
render_daemon(const struct collect *c, struct expo *e)
{
	char id[32];

	expo_family(e, "spyremon_last_sample_timestamp_seconds", EXPO_GAUGE,
	    "seconds", "Unix time of the newest sample in the database.");
	if (c->newest_ts_ns > 0)
		expo_sample(e, NULL, 0, (double)(c->newest_ts_ns / 1000000) /
		    1000, 0);
	expo_family(e, "spyremon_database_bytes", EXPO_GAUGE, "bytes",
	    "Size of the database file and its write-ahead log.");
	expo_sample(e, NULL, 0, (double)c->database_bytes, 0);
	if (c->have_counters) {
		expo_family(e, "spyremon_samples", EXPO_COUNTER, "",
		    "Rows stored by spyremond, kept across restarts.");
		expo_sample(e, NULL, 0, c->samples_total, 0);
		expo_family(e, "spyremon_child_restarts", EXPO_COUNTER, "",
		    "Times spyremond started aiu-smi again.");
		expo_sample(e, NULL, 0, c->child_restarts, 0);
		expo_family(e, "spyremon_rejected_lines", EXPO_COUNTER, "",
		    "Lines of aiu-smi output that could not be parsed.");
		expo_sample(e, NULL, 0, c->rejected_lines, 0);
		expo_family(e, "spyremon_damaged_databases", EXPO_COUNTER, "",
		    "Times spyremond found the database damaged (its "
		    "write-ahead log at start, or a page while it ran) and "
		    "kept the originals aside.");
		expo_sample(e, NULL, 0, c->damaged, 0);
		expo_family(e, "spyremon_database_errors", EXPO_COUNTER, "",
		    "SQLite errors spyremond's store met (a damaged page, "
		    "a full disk, a lock), logged or not.");
		expo_sample(e, NULL, 0, c->db_errors, 0);
	}
	expo_family(e, "spyremon_window_open", EXPO_GAUGE, "",
	    "1 for each open profiling window, by tag and id; "
	    "absent once it ends.");
	for (size_t i = 0; i < c->nopen; i++) {
		struct expo_label l[2];

		snprintf(id, sizeof(id), "%" PRId64, c->open[i].id);
		l[0] = (struct expo_label){ "tag", c->open[i].tag };
		l[1] = (struct expo_label){ "id", id };
		expo_sample(e, l, 2, 1, 0);
	}
}

void
render_metrics(const struct collect *c, struct expo *e)
{
	render_cards(c, e);
	render_daemon(c, e);
	expo_finish(e);
}
