/*
 * catalog: the store's schema, its migrations, the metric catalog and the
 * sample_values view (tables documented in spyremon-schema(5)).
 *
 * The schema version is PRAGMA user_version.  migrations[k - 1] takes a
 * database from version k - 1 to k inside one transaction, so a crash or an
 * error mid-way leaves the previous version intact.
 *
 * Every metric is a REAL column of samples named after its key when the
 * key is a plain lower-case identifier (else m<id>).  The catalog records
 * each metric's decimals: the store binds values as integers scaled by
 * 10^decimals whenever that is exact (see store.c).
 */
#include "store_priv.h"
#include "daemonid.h"
#include "dbread.h"

#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"
#include "schema.h"
#include "sql.h"
#include "timeparse.h"

#define BUSY_TIMEOUT_MS		250
/* A new database, and so its -wal and -shm, which SQLite gives its mode */
#define DB_MODE			0640
#define DB_GROUP		"spyremon"	/* the group of the control socket, too */
#define CACHE_SIZE_KIB		2000
#define JOURNAL_SIZE_LIMIT	(16 * 1024 * 1024)
/* Pages in the log after a commit that make it checkpoint (PASSIVE), in the
 * committing thread: SQLite's default, stated so that each checkpoint's
 * work stays bounded by it whatever the build's default. */
#define WAL_AUTOCHECKPOINT_PAGES	1000
#define COL_NAME_MAX		48

static const char schema_v1[] =
	"CREATE TABLE " SCHEMA_T_METRICS " ("
	"id INTEGER PRIMARY KEY, "
	"key TEXT NOT NULL UNIQUE, "
	"unit TEXT NOT NULL, "
	"grp TEXT NOT NULL, "
	"description TEXT NOT NULL, "
	"reliable INTEGER NOT NULL, "
	"decimals INTEGER NOT NULL, "
	"col TEXT NOT NULL UNIQUE, "
	"added_ns INTEGER NOT NULL);\n"
	"CREATE TABLE " SCHEMA_T_SAMPLES " ("
	SCHEMA_C_TS " INTEGER NOT NULL, "
	SCHEMA_C_DEVICE " INTEGER NOT NULL, "
	SCHEMA_C_INTERVAL " INTEGER NOT NULL, "
	SCHEMA_C_SKEW " INTEGER, "
	"PRIMARY KEY (" SCHEMA_C_TS ", " SCHEMA_C_DEVICE ")) WITHOUT ROWID;\n"
	"CREATE TABLE " SCHEMA_T_CARDS " ("
	"bus_id TEXT PRIMARY KEY, "
	"function TEXT NOT NULL, "
	"numa_node INTEGER, "
	"driver TEXT, "
	"link_speed TEXT, "
	"link_width INTEGER, "
	"first_seen_ns INTEGER NOT NULL, "
	"last_seen_ns INTEGER NOT NULL);\n";

/* windows_begin serves retention's "which windows cover this row" probe. */
static const char schema_v2[] =
	"CREATE TABLE " SCHEMA_T_DEVICE_MAP " ("
	"device INTEGER NOT NULL, "
	"metric_file TEXT NOT NULL, "
	"bus_id TEXT NOT NULL, "
	"since_ns INTEGER NOT NULL, "
	"PRIMARY KEY (device, since_ns));\n"
	"CREATE TABLE " SCHEMA_T_WINDOWS " ("
	"id INTEGER PRIMARY KEY, "
	"tag TEXT NOT NULL, "
	"uid INTEGER NOT NULL, "
	"pid INTEGER NOT NULL, "
	"begin_ns INTEGER NOT NULL, "
	"end_ns INTEGER, "
	"auto_closed INTEGER NOT NULL DEFAULT 0, "
	"meta TEXT NOT NULL DEFAULT '{}');\n"
	"CREATE INDEX windows_begin ON " SCHEMA_T_WINDOWS " (begin_ns);\n";

/*
 * Samples loaded by "spyremon import", one row per device and run of
 * samples that share coarse.  imports_device serves the check that a new
 * import overlaps no earlier one and the client's search for coarse ranges.
 */
static const char schema_v3[] =
	"CREATE TABLE " SCHEMA_T_IMPORTS " ("
	"id INTEGER PRIMARY KEY, "
	"path TEXT NOT NULL, "
	"format TEXT NOT NULL, "
	"device INTEGER NOT NULL, "
	"first_ns INTEGER NOT NULL, "
	"last_ns INTEGER NOT NULL, "
	"coarse INTEGER NOT NULL, "
	"imported_ns INTEGER NOT NULL);\n"
	"CREATE INDEX imports_device ON " SCHEMA_T_IMPORTS " (device, first_ns);\n";

/*
 * Window summaries (summary.h), kept when retention deletes the samples;
 * per window, how it ended, the process it ended with, and the host
 * clock's sync state (adjtimex(2)) at its begin and end.
 */
static const char schema_v4[] =
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN ended_by TEXT;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN until_pid INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN summarized_ns INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN clock_begin_synced INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN clock_begin_est_us INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN clock_begin_max_us INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN clock_end_synced INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN clock_end_est_us INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN clock_end_max_us INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN child_restarts INTEGER;\n"
	"CREATE TABLE " SCHEMA_T_SUMMARY " ("
	"window_id INTEGER NOT NULL, "
	"device INTEGER NOT NULL, "
	"computed_ns INTEGER NOT NULL, "
	"begin_ns INTEGER NOT NULL, "
	"end_ns INTEGER NOT NULL, "
	"idle_lookback_ns INTEGER NOT NULL, "
	"samples INTEGER NOT NULL, "
	"covered_ns INTEGER NOT NULL, "
	"gaps INTEGER NOT NULL, "
	"gap_ns INTEGER NOT NULL, "
	"max_interval_ms INTEGER NOT NULL, "
	"busy_samples INTEGER NOT NULL, "
	"coarse_samples INTEGER NOT NULL, "
	"energy_j TEXT, "
	"power_mean REAL, power_min REAL, power_max REAL, power_p95 REAL, "
	"power_n INTEGER NOT NULL, power_sd REAL, "
	"gtemp_max REAL, busy_mean REAL, actmem_peak REAL, peakmem_peak REAL, "
	"idle_w REAL, idle_samples INTEGER NOT NULL, net_energy_j REAL, "
	"zero_while_busy TEXT NOT NULL, "
	"unreliable TEXT NOT NULL, "
	"PRIMARY KEY (window_id, device)) WITHOUT ROWID;\n"
	"CREATE TABLE " SCHEMA_T_SUMMARY_BW " ("
	"window_id INTEGER NOT NULL, "
	"device INTEGER NOT NULL, "
	"metric TEXT NOT NULL, "
	"mean REAL NOT NULL, "
	"max REAL NOT NULL, "
	"bytes REAL NOT NULL, "
	"PRIMARY KEY (window_id, device, metric)) WITHOUT ROWID;\n";

/*
 * The host that created the database (one row, filled by fill_host), and
 * the daemon's running totals (counters.c).
 */
static const char schema_v5[] =
	"CREATE TABLE " SCHEMA_T_HOST " ("
	"id INTEGER PRIMARY KEY CHECK (id = 1), "
	"hostname TEXT NOT NULL, "
	"machine_id TEXT NOT NULL, "
	"created_ns INTEGER NOT NULL);\n"
	"CREATE TABLE " SCHEMA_T_COUNTERS " ("
	"name TEXT NOT NULL, "
	"device INTEGER NOT NULL, "
	"value REAL NOT NULL, "
	"through_ns INTEGER NOT NULL, "
	"PRIMARY KEY (name, device)) WITHOUT ROWID;\n";

/*
 * Rows read straight from the cards' new-format metric files sit beside
 * aiu-smi's in samples: src says which, seq is the file section's sequence
 * number, and arrival_ns the time the daemon read it (ts_ns is then the
 * writer's own last-update time).
 */
static const char schema_v6[] =
	"ALTER TABLE " SCHEMA_T_SAMPLES " ADD COLUMN " SCHEMA_C_SRC " INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_SAMPLES " ADD COLUMN " SCHEMA_C_SEQ " INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_SAMPLES " ADD COLUMN " SCHEMA_C_ARRIVAL
	" INTEGER;\n";

/*
 * The rows read from metric files, by time, in an index of their own:
 * aiu-smi's rows (src NULL) are not in it, so it costs nothing on a host
 * without direct reads, and it tells a reader at once whether a database
 * has any, and which cards have some in a span, and their newest, without
 * reading the table (bestsrc.h): it covers the overlap rule's columns.
 */
static const char schema_v7[] =
	"CREATE INDEX " SCHEMA_I_FILE " ON " SCHEMA_T_SAMPLES " (" SCHEMA_C_TS
	", " SCHEMA_C_INTERVAL ", " SCHEMA_C_SRC ") WHERE " SCHEMA_C_SRC
	" IS NOT NULL;\n";

/*
 * What the configured aiu-smi says it is ("aiu-smi -v", its first line),
 * from the time it said so; a row only where it changed.
 */
static const char schema_v8[] =
	"CREATE TABLE " SCHEMA_T_SMI_VERSIONS " ("
	"since_ns INTEGER PRIMARY KEY, "
	"version TEXT NOT NULL);\n";

/*
 * Whether every sample of an ended window is stored: complete_ns is when
 * the daemon committed the last of them (up to the first sample of each
 * card stamped after the end) and the window's summary, incomplete why it
 * never will (its daemon stopped first).  A window summarized by an
 * earlier build was summarized only once its samples had settled, so it
 * counts as complete from then.
 */
static const char schema_v9[] =
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN " SCHEMA_C_COMPLETE
	" INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN " SCHEMA_C_INCOMPLETE
	" TEXT;\n"
	"UPDATE " SCHEMA_T_WINDOWS " SET " SCHEMA_C_COMPLETE " = summarized_ns"
	" WHERE end_ns IS NOT NULL AND summarized_ns IS NOT NULL;\n";

/*
 * The spyremond that writes the database (one row, replaced at each
 * start; daemonid.h): its pid, start time in clock ticks after boot, boot
 * ID, PID namespace, host name and machine ID, when it started, when it
 * last wrote (alive_ns, moved by every flush), and when it stopped
 * cleanly (NULL while it runs, or if it was killed or crashed).  A reader
 * tells from it whether the daemon that holds an open window is gone; the
 * next start ends such windows, and end_note says why.
 */
static const char schema_v10[] =
	"CREATE TABLE " SCHEMA_T_DAEMON " ("
	"id INTEGER PRIMARY KEY CHECK (id = 1), "
	"pid INTEGER NOT NULL, "
	"start_ticks INTEGER NOT NULL, "
	"boot_id TEXT NOT NULL, "
	"pidns INTEGER NOT NULL, "
	"hostname TEXT NOT NULL, "
	"machine_id TEXT NOT NULL, "
	"started_ns INTEGER NOT NULL, "
	"alive_ns INTEGER NOT NULL, "
	"stopped_ns INTEGER);\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN " SCHEMA_C_END_NOTE
	" TEXT;\n";

static int	seed_catalog(struct store *);
static int	fill_host(struct store *);

struct migration {
	const char *sql;
	int (*fill)(struct store *);	/* then this, if not NULL */
};

static const struct migration migrations[SCHEMA_VERSION] = {
	{ schema_v1, seed_catalog },
	{ schema_v2, NULL },
	{ schema_v3, NULL },
	{ schema_v4, NULL },
	{ schema_v5, fill_host },
	{ schema_v6, NULL },
	{ schema_v7, NULL },
	{ schema_v8, NULL },
	{ schema_v9, NULL },
	{ schema_v10, NULL },
};

/* The first column of the single row sql returns, as an integer. */
static int
query_int(struct store *st, const char *sql, int64_t *out)
{
	sqlite3_stmt *s;
	int rc;

	if (sql_prepare(st, sql, &s) == -1)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	else
		sql_warn(st, sql);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* ---- the host ---- */

/*
 * Record this host in a database created (or migrated to version 5) here:
 * gethostname(2) and machine-id(5), so that databases copied from many
 * hosts still say where they come from.
 */
static int
fill_host(struct store *st)
{
	char host[256] = "", mid[64];
	sqlite3_stmt *s;

	if (gethostname(host, sizeof(host) - 1) == -1)
		host[0] = '\0';
	/* machine-id(5); "" in a container without one */
	daemonid_read_word("/etc/machine-id", mid, sizeof(mid));
	if (sql_prepare(st, "INSERT INTO " SCHEMA_T_HOST " (id, hostname, "
	    "machine_id, created_ns) VALUES (1, ?1, ?2, ?3)", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, mid, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, now_realtime_ns());
	return sql_finish(st, s, sqlite3_step(s), "record the host");
}

int
storedb_host(struct store *st, char *hostname, char *machine_id, size_t len)
{
	sqlite3_stmt *s;
	int rc;

	hostname[0] = machine_id[0] = '\0';
	if (sql_prepare(st, "SELECT hostname, machine_id FROM " SCHEMA_T_HOST
	    " WHERE id = 1", &s) == -1)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *h = (const char *)sqlite3_column_text(s, 0);
		const char *m = (const char *)sqlite3_column_text(s, 1);

		snprintf(hostname, len, "%s", h != NULL ? h : "");
		snprintf(machine_id, len, "%s", m != NULL ? m : "");
	}
	return sql_finish_lookup(st, s, rc, "read the host");
}

/* ---- the metric catalog ---- */

static bool
plain_column_name(const char *key)
{
	static const char *const fixed[] = {
		SCHEMA_C_TS, SCHEMA_C_DEVICE, SCHEMA_C_INTERVAL, SCHEMA_C_SKEW,
		SCHEMA_C_SRC, SCHEMA_C_SEQ, SCHEMA_C_ARRIVAL,
	};
	size_t i, len = strlen(key);

	if (len == 0 || len > 31 || key[0] < 'a' || key[0] > 'z')
		return false;
	for (i = 1; i < len; i++)
		if (!((key[i] >= 'a' && key[i] <= 'z') ||
		    (key[i] >= '0' && key[i] <= '9') || key[i] == '_'))
			return false;
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (strcmp(key, fixed[i]) == 0)
			return false;
	return true;
}

static int
column_taken(struct store *st, const char *col, bool *taken)
{
	sqlite3_stmt *s;
	int rc;

	if (sql_prepare(st, "SELECT 1 FROM " SCHEMA_T_METRICS
	    " WHERE col = ?1 COLLATE NOCASE", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, col, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (sql_finish_lookup(st, s, rc, "catalog lookup") == -1)
		return -1;
	*taken = rc == SQLITE_ROW;
	return 0;
}

/*
 * The column for a new metric: its key if that is a plain identifier, else
 * m<id>.  A plain key can equal another metric's m<id>, so a taken name
 * gets a numeric suffix.
 */
static int
column_name(struct store *st, const char *key, int64_t id, char *buf,
    size_t len)
{
	bool taken;
	int k;

	if (plain_column_name(key)) {
		snprintf(buf, len, "%s", key);
		if (column_taken(st, buf, &taken) == -1)
			return -1;
		if (!taken)
			return 0;
	}
	for (k = 0;; k++) {
		if (k == 0)
			snprintf(buf, len, "m%" PRId64, id);
		else
			snprintf(buf, len, "m%" PRId64 "_%d", id, k);
		if (column_taken(st, buf, &taken) == -1)
			return -1;
		if (!taken)
			return 0;
	}
}

/* Add metric d to the catalog and its column to samples. */
int
store_catalog_insert(struct store *st, const struct metric_def *d)
{
	char col[COL_NAME_MAX], grp[2] = { d->group, '\0' }, *sql;
	sqlite3_stmt *s;
	int64_t id;
	int rc;

	if (query_int(st, "SELECT coalesce(max(id), 0) + 1 FROM "
	    SCHEMA_T_METRICS, &id) == -1 ||
	    column_name(st, d->key, id, col, sizeof(col)) == -1)
		return -1;
	sql = sqlite3_mprintf("ALTER TABLE " SCHEMA_T_SAMPLES
	    " ADD COLUMN \"%w\" REAL", col);
	if (sql == NULL)
		return -1;
	rc = sql_exec(st, "add metric column", sql);
	sqlite3_free(sql);
	if (rc == -1 || sql_prepare(st, "INSERT INTO " SCHEMA_T_METRICS
	    " (id, key, unit, grp, description, reliable, decimals, col,"
	    " added_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, d->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, d->unit, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, grp, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, d->description, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 6, d->reliable);
	sqlite3_bind_int(s, 7, d->decimals);
	sqlite3_bind_text(s, 8, col, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 9, now_realtime_ns());
	return sql_finish(st, s, sqlite3_step(s), "add metric");
}

/*
 * (Re)create sample_values: one UNION ALL arm per metric column, each a
 * plain filter on samples, so a ts_ns range on the view is pushed into
 * every arm and served by the primary key.  Dividing by the exact power of
 * ten gives the correctly rounded natural value of an integer.
 */
int
store_view_rebuild(struct store *st)
{
	sqlite3_stmt *s;
	sqlite3_str *q;
	char *sql;
	int rc, arms = 0;

	if (sql_prepare(st, "SELECT key, col, decimals FROM " SCHEMA_T_METRICS
	    " ORDER BY id", &s) == -1)
		return -1;
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendall(q, "DROP VIEW IF EXISTS " SCHEMA_V_VALUES ";\n"
	    "CREATE VIEW " SCHEMA_V_VALUES " (ts_ns, device, metric, value) AS");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(s, 0);
		const char *col = (const char *)sqlite3_column_text(s, 1);

		sqlite3_str_appendf(q, "%s\n SELECT " SCHEMA_C_TS ", "
		    SCHEMA_C_DEVICE ", %Q, \"%w\" / 1e%d FROM " SCHEMA_T_SAMPLES
		    " WHERE \"%w\" IS NOT NULL", arms++ > 0 ? " UNION ALL" : "",
		    key, col, sqlite3_column_int(s, 2), col);
	}
	if (arms == 0)
		sqlite3_str_appendall(q, " SELECT 0, 0, '', 0.0 WHERE 0");
	sqlite3_finalize(s);
	sql = sqlite3_str_finish(q);
	if (rc != SQLITE_DONE || sql == NULL) {
		sql_warn(st, "read catalog");
		sqlite3_free(sql);
		return -1;
	}
	rc = sql_exec(st, "create view " SCHEMA_V_VALUES, sql);
	sqlite3_free(sql);
	return rc;
}

static int
seed_catalog(struct store *st)
{
	for (size_t i = 0; i < metric_ndefs; i++)
		if (store_catalog_insert(st, &metric_defs[i]) == -1)
			return -1;
	return store_view_rebuild(st);
}

void
store_catalog_free(struct store_catalog *cat)
{
	for (size_t i = 0; i < cat->n; i++) {
		free(cat->cols[i].key);
		free(cat->cols[i].col);
	}
	free(cat->cols);
	free(cat->slot_of_id);
	memset(cat, 0, sizeof(*cat));
}

static int
catalog_add_col(struct store_catalog *cat, int id, const char *key,
    const char *col, int decimals)
{
	struct store_col *c;

	c = reallocarray(cat->cols, cat->n + 1, sizeof(*c));
	if (c == NULL)
		return -1;
	cat->cols = c;
	c = &cat->cols[cat->n];
	c->id = id;
	c->decimals = decimals;
	c->key = strdup(key);
	c->col = strdup(col);
	cat->n++;
	if (id > cat->max_id)
		cat->max_id = id;
	return c->key != NULL && c->col != NULL ? 0 : -1;
}

static int
catalog_index(struct store_catalog *cat)
{
	cat->slot_of_id = malloc(((size_t)cat->max_id + 1) * sizeof(int));
	if (cat->slot_of_id == NULL)
		return -1;
	for (int id = 0; id <= cat->max_id; id++)
		cat->slot_of_id[id] = -1;
	for (size_t i = 0; i < cat->n; i++)
		cat->slot_of_id[cat->cols[i].id] = (int)i;
	return 0;
}

int
store_catalog_load(struct store *st, struct store_catalog *cat)
{
	struct db_catalog read;
	int rc;

	memset(cat, 0, sizeof(*cat));
	if ((rc = db_catalog_read(st->db, &read)) == -1) {
		sql_warn(st, "prepare");
		return -1;
	}
	for (size_t i = 0; rc == 0 && i < read.n; i++) {
		const struct db_metric *m = &read.m[i];

		if (m->id < 1 || m->id > 1000000 ||
		    catalog_add_col(cat, (int)m->id, m->key, m->col,
		    m->decimals) == -1)
			rc = -1;
	}
	db_catalog_free(&read);
	if (rc != 0 || catalog_index(cat) == -1) {
		log_warnx("%s: cannot load the metric catalog", st->path);
		store_catalog_free(cat);
		return -1;
	}
	return 0;
}

const struct store_col *
store_catalog_find(const struct store_catalog *cat, const char *key)
{
	for (size_t i = 0; i < cat->n; i++)
		if (strcmp(cat->cols[i].key, key) == 0)
			return &cat->cols[i];
	return NULL;
}

/* INSERT into samples with the fixed columns, then cat's columns in order. */
sqlite3_stmt *
store_insert_prepare(struct store *st, const struct store_catalog *cat)
{
	sqlite3_stmt *s = NULL;
	sqlite3_str *q;
	char *sql;
	size_t i;

	q = sqlite3_str_new(st->db);
	sqlite3_str_appendall(q, "INSERT INTO " SCHEMA_T_SAMPLES " ("
	    SCHEMA_C_TS ", " SCHEMA_C_DEVICE ", " SCHEMA_C_INTERVAL ", "
	    SCHEMA_C_SKEW ", " SCHEMA_C_SRC ", " SCHEMA_C_SEQ ", "
	    SCHEMA_C_ARRIVAL);
	for (i = 0; i < cat->n; i++)
		sqlite3_str_appendf(q, ", \"%w\"", cat->cols[i].col);
	sqlite3_str_appendall(q, ") VALUES (?, ?, ?, ?, ?, ?, ?");
	for (i = 0; i < cat->n; i++)
		sqlite3_str_appendall(q, ", ?");
	sqlite3_str_appendall(q, ")");
	sql = sqlite3_str_finish(q);
	if (sql != NULL)
		(void)sql_prepare(st, sql, &s);
	sqlite3_free(sql);
	return s;
}

/* ---- opening, migrating ---- */

/* Settings that only a new, empty database can take. */
static int
configure_new(struct store *st)
{
	return sql_exec(st, "configure new database",
	    "PRAGMA page_size = 4096; PRAGMA auto_vacuum = INCREMENTAL;");
}

static int
configure(struct store *st)
{
	char sql[256];
	sqlite3_stmt *s;
	bool wal = false;

	if (sql_prepare(st, "PRAGMA journal_mode = WAL", &s) == -1)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		wal = sqlite3_stricmp((const char *)sqlite3_column_text(s, 0),
		    "wal") == 0;
	sqlite3_finalize(s);
	if (!wal) {
		sql_warn(st, "cannot switch to WAL mode");
		return -1;
	}
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = NORMAL; "
	    "PRAGMA cache_size = -%d; PRAGMA journal_size_limit = %d; "
	    "PRAGMA wal_autocheckpoint = %d;",
	    CACHE_SIZE_KIB, JOURNAL_SIZE_LIMIT, WAL_AUTOCHECKPOINT_PAGES);
	return sql_exec(st, "configure database", sql);
}

static int
migrate_step(struct store *st, int version)
{
	const struct migration *m = &migrations[version - 1];
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version);
	if (sql_exec(st, "begin migration", "BEGIN IMMEDIATE") == -1)
		return -1;
	if (sql_exec(st, "migrate schema", m->sql) == -1 ||
	    (m->fill != NULL && m->fill(st) == -1) ||
	    sql_exec(st, "set schema version", sql) == -1 ||
	    sql_exec(st, "commit migration", "COMMIT") == -1) {
		if (!sqlite3_get_autocommit(st->db))
			(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		log_warnx("%s: cannot migrate the schema to version %d",
		    st->path, version);
		return -1;
	}
	return 0;
}

static int
migrate(struct store *st, int from, int to)
{
	for (int v = from + 1; v <= to; v++)
		if (migrate_step(st, v) == -1)
			return -1;
	if (from > 0 && from < to)
		log_info("%s: schema migrated from version %d to %d", st->path,
		    from, to);
	return 0;
}

/*
 * Check what path holds.  *version is its schema version, 0 for a new
 * database.  Refuses databases of a newer build and databases that have
 * tables but no version (some other program's).
 */
static int
schema_version(struct store *st, int64_t *version)
{
	int64_t ntables;

	if (sql_pragma_int(st->db, "user_version", version) == -1) {
		sql_warn(st, "read schema version");
		return -1;
	}
	if (query_int(st, "SELECT count(*) FROM sqlite_master", &ntables) == -1)
		return -1;
	if (*version > SCHEMA_VERSION) {
		log_warnx("%s: schema version %" PRId64 " is newer than this "
		    "build's %d; refusing to use it", st->path, *version,
		    SCHEMA_VERSION);
		return -1;
	}
	if (*version < 0 || (*version == 0 && ntables > 0)) {
		log_warnx("%s: not a spyremon database (it has tables but no "
		    "spyremon schema version); refusing to use it", st->path);
		return -1;
	}
	return 0;
}

/*
 * Create the database file, empty (which SQLite takes for a new database),
 * with DB_MODE whatever the umask: SQLite would make it 0644 less the
 * umask, world-readable when the daemon is started by hand.  An existing
 * file is left as it is; other errors are SQLite's to report.
 */
static void
create_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    DB_MODE);
	struct group *gr;

	if (fd == -1)
		return;
	/*
	 * Run as root by hand, the group is the one the unit gives it and
	 * the control socket gets, so that its members still read it.
	 */
	if (geteuid() == 0 && (gr = getgrnam(DB_GROUP)) != NULL &&
	    fchown(fd, (uid_t)-1, gr->gr_gid) == -1)
		log_warn("%s: chown to group %s", path, DB_GROUP);
	if (fchmod(fd, DB_MODE) == -1)
		log_warn("%s: chmod", path);
	close(fd);
}

int
store_db_open(struct store *st, int to)
{
	int64_t version;
	int rc;

	/*
	 * The daemon has one thread and keeps no memory statistics: SQLite's
	 * mutexes and allocation counters would cost on every insert.  The
	 * config call fails harmlessly once SQLite is initialised.
	 */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	create_file(st->path);
	summary_idle_cache_clear(&st->idle);	/* learned from another file */
	rc = sqlite3_open_v2(st->path, &st->db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	    NULL);
	if (rc != SQLITE_OK) {
		log_warnx("%s: cannot open database: %s", st->path,
		    st->db != NULL ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
		return -1;
	}
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	if (schema_version(st, &version) == -1 ||
	    (version == 0 && configure_new(st) == -1) ||
	    configure(st) == -1)
		return -1;
	if (to != 0 && version > to) {
		log_warnx("%s: already at schema version %" PRId64, st->path,
		    version);
		return -1;
	}
	return migrate(st, (int)version, to);
}
