/*
 * collect: the snapshot "spyremon metrics" exposes (collect.h).
 */
#include "collect.h"

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "db.h"
#include "metrics.h"
#include "schema.h"
#include "timeparse.h"

/*
 * IBM's exporter's gauges, from the aiu-smi columns that carry the same
 * quantity, plus our busy ratio.  aiu-smi prints bandwidths in GiB/s over
 * the sample's interval; IBM's names say bytes, so the value is the bytes
 * moved during that interval (spyre_sample_interval_seconds gives it).
 */
const struct collect_value collect_values[] = {
	{ "pwr", "spyre_power_watts", "watts", CONV_AS_IS,
	    "Card power, the newest sample." },
	{ "gtemp", "spyre_temperature_celsius", "celsius", CONV_AS_IS,
	    "Card temperature, the newest sample." },
	{ "busy", "spyre_busy_ratio", "ratio", CONV_PERCENT,
	    "Fraction of the sample's interval the card was busy." },
	{ "rdmem", "spyre_read_memory_bytes", "bytes", CONV_GIBPS_INTERVAL,
	    "Bytes read from device memory during the sample's interval." },
	{ "wrmem", "spyre_write_memory_bytes", "bytes", CONV_GIBPS_INTERVAL,
	    "Bytes written to device memory during the sample's interval." },
	{ "rxpci", "spyre_rxpci_bytes", "bytes", CONV_GIBPS_INTERVAL,
	    "Bytes received over PCIe during the sample's interval." },
	{ "txpci", "spyre_txpci_bytes", "bytes", CONV_GIBPS_INTERVAL,
	    "Bytes sent over PCIe during the sample's interval." },
	{ "rdrdma", "spyre_rdma_read_bytes", "bytes", CONV_GIBPS_INTERVAL,
	    "Bytes read by RDMA during the sample's interval." },
	{ "wrrdma", "spyre_rdma_write_bytes", "bytes", CONV_GIBPS_INTERVAL,
	    "Bytes written by RDMA during the sample's interval." },
	{ "actmem", "spyre_avg_memory_bytes", "bytes", CONV_MIB,
	    "Device memory in use, the newest sample." },
	{ "peakmem", "spyre_peak_memory_bytes", "bytes", CONV_MIB,
	    "Peak device memory in use, the newest sample." },
};
const size_t collect_nvalues = sizeof(collect_values) /
    sizeof(collect_values[0]);

static void *
xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n > 0 ? n : 1, sz);

	if (p == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	return p;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s != NULL ? s : "");

	if (p == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	return p;
}


/* v rounded to a whole number, half away from zero (without libm) */
static double
whole(double v)
{
	if (v > 9e15 || v < -9e15)
		return v;	/* already whole */
	return (double)(int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

static double
convert(enum collect_conv conv, double v, uint32_t interval_ms)
{
	switch (conv) {
	case CONV_PERCENT:
		return v / 100;
	case CONV_GIBPS_INTERVAL:	/* whole bytes */
		return whole(v * 1073741824.0 * interval_ms / 1000);
	case CONV_MIB:
		return whole(v * 1048576.0);
	case CONV_AS_IS:
		break;
	}
	return v;
}

static int
cmp_card(const void *a, const void *b)
{
	const struct collect_card *x = a, *y = b;

	return (x->device > y->device) - (x->device < y->device);
}

/*
 * The statement reading samples newest first from ?1 on, up to ?2 (now:
 * a row stamped in the future is never published), with one column per
 * collect_values entry, absent or unreliable ones NULL
 * (db_select_newest).
 */
static sqlite3_stmt *
newest_stmt(sqlite3 *db, const struct db_catalog *cat)
{
	const struct db_metric *cols[sizeof(collect_values) /
	    sizeof(collect_values[0])];

	for (size_t i = 0; i < collect_nvalues; i++) {
		const struct db_metric *m = db_catalog_find(cat,
		    collect_values[i].key);

		cols[i] = m != NULL && m->reliable ? m : NULL;
	}
	return db_select_newest(db, cols, collect_nvalues);
}

static struct collect_card *
find_card(struct collect *c, int device)
{
	for (size_t i = 0; i < c->ncards; i++)
		if (c->cards[i].device == device)
			return &c->cards[i];
	return NULL;
}

/* Set each value of cd that row s has and cd does not. */
static void
take_values(struct collect_card *cd, sqlite3_stmt *s, uint32_t ival)
{
	for (size_t i = 0; i < collect_nvalues; i++) {
		if (cd->have[i] || sqlite3_column_type(s, 3 + (int)i) ==
		    SQLITE_NULL)
			continue;
		cd->have[i] = true;
		cd->v[i] = convert(collect_values[i].conv,
		    sqlite3_column_double(s, 3 + (int)i), ival);
	}
}

/*
 * Each device's newest sample among those stamped in the last
 * COLLECT_STALE_INTERVALS longest intervals (plus a flush).  The scan goes
 * back from the newest row and stops once rows are older than that many
 * of the longest interval seen so far: a device with nothing since is stale
 * (unless its interval is longer than every other device's).
 */
static int
read_cards(sqlite3 *db, struct collect *c)
{
	struct db_catalog cat = { 0 };
	struct db_devmap map = { 0 };
	sqlite3_stmt *s = NULL;
	int seen[256], seen_src[256];	/* a device, its newest row's source */
	bool other[256];		/* its other stream's newest row read */
	size_t nseen = 0;
	int64_t imax_ns = 0;
	int rc;

	if (db_catalog_load(db, &cat) != CLIENT_EXIT_OK)
		return CLIENT_EXIT_DATABASE;
	if (db_devmap_load(db, &map) != CLIENT_EXIT_OK) {
		db_catalog_free(&cat);
		return CLIENT_EXIT_DATABASE;
	}
	if ((s = newest_stmt(db, &cat)) == NULL) {
		rc = db_error(db, "samples");
		goto out;
	}
	sqlite3_bind_int64(s, 1, c->now_ns - c->flush_ns -
	    COLLECT_STALE_INTERVALS * DB_MAX_INTERVAL_NS);
	sqlite3_bind_int64(s, 2, c->now_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(s, 0);
		int dev = sqlite3_column_int(s, 1);
		uint32_t ival = (uint32_t)sqlite3_column_int64(s, 2);
		struct collect_card *cd;
		bool dup = false;

		if (imax_ns > 0 && ts < c->now_ns - c->flush_ns -
		    COLLECT_STALE_INTERVALS * imax_ns)
			break;
		bool file = sqlite3_column_int(s, 3 + (int)collect_nvalues) != 0;

		/*
		 * A metric file's rows come at a finer interval than
		 * aiu-smi's: only the newest aiu-smi row of each card bounds
		 * the scan, so that a card's values from aiu-smi are found
		 * behind its newer file rows.
		 */
		bool bound;
		size_t k;

		for (k = 0; k < nseen && !dup; k++)
			dup = seen[k] == dev;
		if (dup) {
			/*
			 * The newest row of the card's other stream: the
			 * values the rule takes from it.
			 */
			bound = seen_src[k - 1] != (int)file && !other[k - 1];
			if (bound && (cd = find_card(c, dev)) != NULL)
				take_values(cd, s, ival);
			other[k - 1] |= seen_src[k - 1] != (int)file;
			if (bound && !file && (int64_t)ival * 1000000 > imax_ns)
				imax_ns = (int64_t)ival * 1000000;
			continue;
		}
		if (nseen == sizeof(seen) / sizeof(seen[0]))
			break;
		seen_src[nseen] = file;
		other[nseen] = false;
		seen[nseen++] = dev;
		if (!file && (int64_t)ival * 1000000 > imax_ns)
			imax_ns = (int64_t)ival * 1000000;
		if (c->now_ns - ts > c->flush_ns + COLLECT_STALE_INTERVALS *
		    (int64_t)ival * 1000000) {
			c->nstale++;
			continue;
		}
		c->cards = realloc(c->cards, (c->ncards + 1) * sizeof(*cd));
		if (c->cards == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		cd = &c->cards[c->ncards++];
		memset(cd, 0, sizeof(*cd));
		cd->device = dev;
		cd->ts_ns = ts;
		cd->interval_ms = ival;
		cd->bus_id = xstrdup(db_devmap_bus_id(&map, dev, ts));
		cd->type = db_card_function(db, cd->bus_id);
		cd->v = xcalloc(collect_nvalues, sizeof(*cd->v));
		cd->have = xcalloc(collect_nvalues, sizeof(*cd->have));
		take_values(cd, s, ival);
	}
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? CLIENT_EXIT_OK :
	    db_error(db, "samples");
	if (c->ncards > 1)
		qsort(c->cards, c->ncards, sizeof(*c->cards), cmp_card);
out:
	sqlite3_finalize(s);
	db_devmap_free(&map);
	db_catalog_free(&cat);
	return rc;
}

/* The daemon's counters (schema version 5 on). */
static int
read_counters(sqlite3 *db, struct collect *c)
{
	struct db_counter *k;
	size_t n;
	int rc;

	rc = db_counters(db, &c->have_counters, &k, &n);
	for (size_t i = 0; i < n; i++) {
		const char *name = k[i].name;
		double v = k[i].value;
		struct collect_card *cd;

		if (name == NULL)
			continue;
		if (strcmp(name, COUNTER_SAMPLES) == 0)
			c->samples_total = v;
		else if (strcmp(name, COUNTER_CHILD_RESTARTS) == 0)
			c->child_restarts = v;
		else if (strcmp(name, COUNTER_REJECTED_LINES) == 0)
			c->rejected_lines = v;
		else if (strcmp(name, COUNTER_DAMAGED) == 0)
			c->damaged = v;
		else if (strcmp(name, COUNTER_ERRORS) == 0)
			c->db_errors = v;
		else if (strcmp(name, COUNTER_ENERGY) == 0 &&
		    (cd = find_card(c, k[i].device)) != NULL) {
			cd->have_energy = true;
			cd->energy_j = v;
			cd->energy_ts_ns = k[i].through_ns;
			if (cd->energy_ts_ns > c->now_ns)	/* never the future */
				cd->energy_ts_ns = c->now_ns;
		}
	}
	db_counters_free(k, n);
	return rc;
}

static int
read_newest(sqlite3 *db, struct collect *c)
{
	/* a row stamped in the future is not the newest sample: never published */
	return db_newest_stamp(db, c->now_ns, &c->newest_ts_ns);
}

static int
read_windows(sqlite3 *db, struct collect *c)
{
	struct db_window_filter f = { .have_since = true, .since_ns = c->now_ns };
	struct db_window *w;
	size_t n;

	if (db_windows(db, &f, &w, &n) != CLIENT_EXIT_OK)
		return CLIENT_EXIT_DATABASE;
	c->open = xcalloc(n, sizeof(*c->open));
	for (size_t i = 0; i < n; i++) {
		if (!w[i].open)
			continue;
		c->open[c->nopen].id = w[i].id;
		c->open[c->nopen].tag = xstrdup(w[i].tag);
		c->open[c->nopen].begin_ns = w[i].begin_ns;
		c->nopen++;
	}
	db_windows_free(w, n);
	return CLIENT_EXIT_OK;
}

static int64_t
file_bytes(const char *path, const char *suffix)
{
	char p[4096];
	struct stat sb;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

int
collect_read(sqlite3 *db, const char *path, int64_t now_ns, int64_t flush_ns,
    struct collect *c)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->now_ns = now_ns;
	c->flush_ns = flush_ns;
	if ((rc = db_host(db, &c->hostname, &c->machine_id)) != CLIENT_EXIT_OK ||
	    (rc = read_newest(db, c)) != CLIENT_EXIT_OK ||
	    (rc = read_cards(db, c)) != CLIENT_EXIT_OK ||
	    (rc = read_counters(db, c)) != CLIENT_EXIT_OK ||
	    (rc = read_windows(db, c)) != CLIENT_EXIT_OK)
		return rc;
	c->database_bytes = file_bytes(path, "") + file_bytes(path, "-wal");
	return CLIENT_EXIT_OK;
}

void
collect_free(struct collect *c)
{
	for (size_t i = 0; i < c->ncards; i++) {
		free(c->cards[i].bus_id);
		free(c->cards[i].v);
		free(c->cards[i].have);
	}
	free(c->cards);
	for (size_t i = 0; i < c->nopen; i++)
		free(c->open[i].tag);
	free(c->open);
	free(c->hostname);
	free(c->machine_id);
	memset(c, 0, sizeof(*c));
}
