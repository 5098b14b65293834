/*
 * collect: what "spyremon metrics" exposes, read from the database in one
 * read transaction (one consistent snapshot).
 *
 * Per card, the newest sample, unless it is stale: older, at the time of
 * the scrape, than 3 times its own interval plus the daemon's
 * flush_interval (rows reach the database once per flush, so a fresh
 * row can be that much older).  The per-card values are the
 * reliable catalog columns that IBM's exporter also names (table
 * collect_values); the columns the catalog marks unreliable (rsvmem,
 * pt_act) are left out, never labelled.  The daemon's counters (schema
 * version 5 on: samples stored, child restarts, rejected lines and each
 * card's energy) are read from the counters table, which spyremond writes
 * in the same transactions as the samples; an older database has none.
 */
#ifndef SPYREMON_COLLECT_H
#define SPYREMON_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* A sample is stale once it is older than this many of its intervals. */
#define COLLECT_STALE_INTERVALS	3

/* How a catalog column becomes a Prometheus value. */
enum collect_conv {
	CONV_AS_IS,		/* the column's natural unit is the metric's */
	CONV_PERCENT,		/* % -> ratio */
	CONV_GIBPS_INTERVAL,	/* GiB/s -> bytes moved in the sample's interval */
	CONV_MIB,		/* MiB -> bytes */
};

struct collect_value {
	const char *key;	/* aiu-smi's column */
	const char *name;	/* the Prometheus family */
	const char *unit;	/* OpenMetrics unit: the name's last part */
	enum collect_conv conv;
	const char *help;
};

extern const struct collect_value collect_values[];
extern const size_t collect_nvalues;

struct collect_card {
	int device;		/* aiu-smi's ID */
	char *bus_id;		/* from the device map, "" if unknown */
	const char *type;	/* "pf", "vf", or "" if not in the inventory */
	int64_t ts_ns;		/* the newest sample */
	uint32_t interval_ms;
	double *v;		/* collect_nvalues values, converted */
	bool *have;		/* false: column absent, unreliable or NULL */
	bool have_energy;
	double energy_j;	/* the counters table's running integral */
	int64_t energy_ts_ns;	/* up to when it integrates */
};

struct collect_window {
	int64_t id;
	char *tag;
	int64_t begin_ns;
};

struct collect {
	int64_t now_ns;
	int64_t flush_ns;		/* the daemon's flush_interval */
	char *hostname, *machine_id;	/* NULL before schema version 5 */
	struct collect_card *cards;	/* fresh cards, by device */
	size_t ncards, nstale;
	int64_t newest_ts_ns;		/* of any sample up to now_ns, 0 if none */
	bool have_counters;		/* schema version 5 on */
	double samples_total, child_restarts, rejected_lines;
	double damaged;			/* damaged databases kept aside */
	double db_errors;		/* SQLite failures the store met */
	int64_t database_bytes;		/* the file plus its -wal */
	struct collect_window *open;	/* open windows, oldest first */
	size_t nopen;
};

/*
 * Read the snapshot of db (opened with db_open from path) as of now_ns,
 * for a daemon flushing every flush_ns, into *c.  Returns CLIENT_EXIT_OK or CLIENT_EXIT_DATABASE after printing
 * why; free with collect_free either way.
 */
int collect_read(sqlite3 *db, const char *path, int64_t now_ns,
    int64_t flush_ns, struct collect *c);

void collect_free(struct collect *c);

#endif
