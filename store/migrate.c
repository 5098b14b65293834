/*
 * migrate: the store's schema and its migrations (spyremon-schema(5)),
 * and opening a database: recognising the layout a file holds and
 * bringing it to this build's version.
 *
 * The schema version is PRAGMA user_version.  migrations[k - 1] takes a
 * database from version k - 1 to k.  Every migration a file needs runs in
 * one transaction that sets user_version last, so a crash or an error
 * mid-way leaves the file as it was, at its own version.
 *
 * A version number alone did not always say what a file holds: builds
 * made on separate lines of work gave the same number to different
 * changes.  So each migration names the table, index or column it
 * creates (its mark), and a file gets the migrations whose mark it lacks,
 * whatever its version says (layout_read and spyremon-schema(5),
 * "Versions").
 */
#include "store_priv.h"

#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schema.h"
#include "sql.h"

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
 * window_summary as version 4 creates it; summary_add_spread creates it
 * again for a file of the first builds that summarized windows.
 */
#define SUMMARY_TABLE_SQL \
	"CREATE TABLE " SCHEMA_T_SUMMARY " (" \
	"window_id INTEGER NOT NULL, " \
	"device INTEGER NOT NULL, " \
	"computed_ns INTEGER NOT NULL, " \
	"begin_ns INTEGER NOT NULL, " \
	"end_ns INTEGER NOT NULL, " \
	"idle_lookback_ns INTEGER NOT NULL, " \
	"samples INTEGER NOT NULL, " \
	"covered_ns INTEGER NOT NULL, " \
	"gaps INTEGER NOT NULL, " \
	"gap_ns INTEGER NOT NULL, " \
	"max_interval_ms INTEGER NOT NULL, " \
	"busy_samples INTEGER NOT NULL, " \
	"coarse_samples INTEGER NOT NULL, " \
	"energy_j TEXT, " \
	"power_mean REAL, power_min REAL, power_max REAL, power_p95 REAL, " \
	"power_n INTEGER NOT NULL, power_sd REAL, " \
	"gtemp_max REAL, busy_mean REAL, actmem_peak REAL, peakmem_peak REAL, " \
	"idle_w REAL, idle_samples INTEGER NOT NULL, net_energy_j REAL, " \
	"zero_while_busy TEXT NOT NULL, " \
	"unreliable TEXT NOT NULL, " \
	"PRIMARY KEY (window_id, device)) WITHOUT ROWID;\n"

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
	SUMMARY_TABLE_SQL
	"CREATE TABLE " SCHEMA_T_SUMMARY_BW " ("
	"window_id INTEGER NOT NULL, "
	"device INTEGER NOT NULL, "
	"metric TEXT NOT NULL, "
	"mean REAL NOT NULL, "
	"max REAL NOT NULL, "
	"bytes REAL NOT NULL, "
	"PRIMARY KEY (window_id, device, metric)) WITHOUT ROWID;\n";

/*
 * The host that created the database (one row, written by store_host_record), and
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
	WINDOWS_COMPLETE_FROM_SUMMARY;

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

/*
 * How long each window ran by the monotonic clock of the daemon that began
 * and ended it (NULL where not known): a step of the host clock while it
 * was open leaves its stamps further apart or closer than that, and
 * readers say so (spyremond(8), CLOCK STEPS).
 */
static const char schema_v11[] =
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN " SCHEMA_C_RUN
	" INTEGER;\n";

/*
 * The steps of the host clock the daemon saw, one row each: id is the
 * epoch of the clock that starts with it (epoch 0 is everything before
 * the first step recorded, and every row of an older database), at_ns
 * the new clock just after it, size_ns its size (+ forward; for a step
 * back while no daemon ran, at least this), mono_ns the daemon's
 * CLOCK_MONOTONIC when it saw it.  Each sample carries the epoch it was
 * stamped in (0 for the rows already there: no step was recorded before
 * them), and each window the epochs of its begin and end (NULL where not
 * recorded), so that the samples of a window a step back crossed are
 * found though their stamps mingle with older ones (spyremon-schema(5));
 * windows_crossed holds the windows a step crossed, for retention's
 * probe (retention.c).  ADD COLUMN with a constant default rewrites no
 * row.
 */
static const char schema_v12[] =
	"CREATE TABLE " SCHEMA_T_CLOCK_STEPS " ("
	"id INTEGER PRIMARY KEY, "
	"at_ns INTEGER NOT NULL, "
	"size_ns INTEGER NOT NULL, "
	"mono_ns INTEGER NOT NULL);\n"
	"ALTER TABLE " SCHEMA_T_SAMPLES " ADD COLUMN " SCHEMA_C_EPOCH
	" INTEGER NOT NULL DEFAULT 0;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN " SCHEMA_C_BEGIN_EPOCH
	" INTEGER;\n"
	"ALTER TABLE " SCHEMA_T_WINDOWS " ADD COLUMN " SCHEMA_C_END_EPOCH
	" INTEGER;\n"
	"CREATE INDEX windows_crossed ON " SCHEMA_T_WINDOWS " (begin_ns) "
	"WHERE " SCHEMA_C_END_EPOCH " > " SCHEMA_C_BEGIN_EPOCH ";\n";

/*
 * A migration: its SQL, then its fill (if not NULL), inside the caller's
 * transaction.  mark_table (a table or an index) and, if not NULL, its
 * column mark_col are there once the migration has run, and not before:
 * every migration adds an object of its own to be its mark.
 */
struct migration {
	const char *sql;
	int (*fill)(struct store *);
	const char *mark_table;
	const char *mark_col;
};

/* A new version is one line here, and SCHEMA_VERSION in query/schema.h. */
static const struct migration migrations[SCHEMA_VERSION] = {
	{ schema_v1, store_catalog_seed, SCHEMA_T_METRICS, NULL },
	{ schema_v2, NULL, SCHEMA_T_WINDOWS, NULL },
	{ schema_v3, NULL, SCHEMA_T_IMPORTS, NULL },
	{ schema_v4, NULL, SCHEMA_T_WINDOWS, "summarized_ns" },
	{ schema_v5, store_host_record, SCHEMA_T_HOST, NULL },
	{ schema_v6, NULL, SCHEMA_T_SAMPLES, SCHEMA_C_SRC },
	{ schema_v7, NULL, SCHEMA_I_FILE, NULL },
	{ schema_v8, NULL, SCHEMA_T_SMI_VERSIONS, NULL },
	{ schema_v9, NULL, SCHEMA_T_WINDOWS, SCHEMA_C_COMPLETE },
	{ schema_v10, NULL, SCHEMA_T_DAEMON, NULL },
	{ schema_v11, NULL, SCHEMA_T_WINDOWS, SCHEMA_C_RUN },
	{ schema_v12, NULL, SCHEMA_T_CLOCK_STEPS, NULL },
};

/*
 * What a file holds, read once by layout_read: its user_version, which
 * migrations' marks it has, and whether its window_summary lacks the
 * spread of power (power_n, power_sd), which the first builds that
 * summarized windows did not keep though they wrote version 5.
 */
struct layout {
	int64_t	 version;
	bool	 has[SCHEMA_VERSION];	/* has[k - 1]: migration k's mark */
	bool	 summary_lacks_spread;
};

/* Whether table (or index) has a row in sqlite_master, with column col. */
static const char mark_sql[] =
	"SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = ?1) AND "
	"(?2 IS NULL OR EXISTS (SELECT 1 FROM pragma_table_info(?1) "
	"WHERE name = ?2))";

static int
mark_present(struct store *st, sqlite3_stmt *s, const char *table,
    const char *col, bool *out)
{
	int rc;

	sqlite3_reset(s);
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, col, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(s)) != SQLITE_ROW) {
		sql_warn(st, "read the schema");
		return -1;
	}
	*out = sqlite3_column_int(s, 0) != 0;
	return 0;
}

/* The one place that asks a file which layout it holds. */
static int
layout_read(struct store *st, struct layout *l)
{
	sqlite3_stmt *s;
	bool summary = false, spread = false;
	int rc = 0;

	memset(l, 0, sizeof(*l));
	if (sql_pragma_int(st->db, "user_version", &l->version) == -1) {
		sql_warn(st, "read schema version");
		return -1;
	}
	if (sql_prepare(st, mark_sql, &s) == -1)
		return -1;
	for (int k = 1; rc == 0 && k <= SCHEMA_VERSION; k++)
		rc = mark_present(st, s, migrations[k - 1].mark_table,
		    migrations[k - 1].mark_col, &l->has[k - 1]);
	if (rc == 0)
		rc = mark_present(st, s, SCHEMA_T_SUMMARY, NULL, &summary);
	if (rc == 0)
		rc = mark_present(st, s, SCHEMA_T_SUMMARY, "power_n", &spread);
	sqlite3_finalize(s);
	l->summary_lacks_spread = summary && !spread;
	return rc;
}

/* Every migration up to version to is there, and nothing lacks. */
static bool
layout_current(const struct layout *l, int to)
{
	for (int k = 1; k <= to; k++)
		if (!l->has[k - 1])
			return false;
	return !l->summary_lacks_spread && l->version == to;
}

/*
 * window_summary again as version 4 makes it, its rows kept, with
 * power_n 0 and power_sd NULL: their spread was never kept, so spyremon
 * compare calls a change of their mean power within noise, untested.
 */
static const char summary_add_spread[] =
	"ALTER TABLE " SCHEMA_T_SUMMARY " RENAME TO window_summary_unspread;\n"
	SUMMARY_TABLE_SQL
	"INSERT INTO " SCHEMA_T_SUMMARY " (window_id, device, computed_ns, "
	"begin_ns, end_ns, idle_lookback_ns, samples, covered_ns, gaps, "
	"gap_ns, max_interval_ms, busy_samples, coarse_samples, energy_j, "
	"power_mean, power_min, power_max, power_p95, power_n, power_sd, "
	"gtemp_max, busy_mean, actmem_peak, peakmem_peak, idle_w, "
	"idle_samples, net_energy_j, zero_while_busy, unreliable) "
	"SELECT window_id, device, computed_ns, "
	"begin_ns, end_ns, idle_lookback_ns, samples, covered_ns, gaps, "
	"gap_ns, max_interval_ms, busy_samples, coarse_samples, energy_j, "
	"power_mean, power_min, power_max, power_p95, "
	SUMMARY_UNSPREAD_POWER_N ", NULL, "
	"gtemp_max, busy_mean, actmem_peak, peakmem_peak, idle_w, "
	"idle_samples, net_energy_j, zero_while_busy, unreliable "
	"FROM window_summary_unspread;\n"
	"DROP TABLE window_summary_unspread;\n";

/* Run migration k inside the open transaction. */
static int
migrate_step(struct store *st, int k)
{
	const struct migration *m = &migrations[k - 1];

	if (sql_exec(st, "migrate schema", m->sql) == 0 &&
	    (m->fill == NULL || m->fill(st) == 0))
		return 0;
	log_warnx("%s: cannot migrate the schema to version %d", st->path, k);
	return -1;
}

/* Say what a file whose version does not tell its layout gets or keeps. */
static void
layout_note(struct store *st, const struct layout *l, int to)
{
	for (int k = 1; k <= to; k++) {
		const struct migration *m = &migrations[k - 1];
		bool has = l->has[k - 1];

		if (has == (k <= l->version))
			continue;
		log_info("%s: schema version %" PRId64 " %s %s%s%s, which "
		    "version %d brings; %s", st->path, l->version,
		    has ? "already has" : "has no", m->mark_table,
		    m->mark_col != NULL ? "." : "",
		    m->mark_col != NULL ? m->mark_col : "", k,
		    has ? "kept as it is" : "migrating it too");
	}
	if (l->summary_lacks_spread)
		log_info("%s: %s has no power_n and power_sd (a build before "
		    "they were kept); adding them", st->path, SCHEMA_T_SUMMARY);
}

/*
 * Bring the file of layout l to version to in one transaction: the
 * summaries' spread if it lacks it, every migration whose mark is
 * missing, in order, then user_version.  On failure nothing is left of
 * it: the rollback restores the file as it was.
 */
static int
migrate(struct store *st, const struct layout *l, int to)
{
	char sql[64];
	int rc = 0;

	if (layout_current(l, to))
		return 0;
	if (l->version > 0)
		layout_note(st, l, to);
	if (sql_exec(st, "begin migration", "BEGIN IMMEDIATE") == -1)
		return -1;
	if (l->summary_lacks_spread)
		rc = sql_exec(st, "add the spread of power to the summaries",
		    summary_add_spread);
	for (int k = 1; rc == 0 && k <= to; k++)
		if (!l->has[k - 1])
			rc = migrate_step(st, k);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", to);
	if (rc == 0)
		rc = sql_exec(st, "set schema version", sql);
	if (rc == 0)
		rc = sql_exec(st, "commit migration", "COMMIT");
	if (rc != 0) {
		if (!sqlite3_get_autocommit(st->db))
			(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		if (l->version > 0)
			log_warnx("%s: the database is left as it was, at "
			    "schema version %" PRId64, st->path, l->version);
		return -1;
	}
	if (l->version > 0 && l->version < to)
		log_info("%s: schema migrated from version %" PRId64 " to %d",
		    st->path, l->version, to);
	return 0;
}

/* ---- opening ---- */

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

/*
 * Check what path holds: read its layout into *l (version 0 and no marks
 * for a new database).  Refuses databases of a newer build and databases
 * that have tables but no version (some other program's).
 */
static int
schema_check(struct store *st, struct layout *l)
{
	sqlite3_stmt *s;
	int rc;
	bool tables = false;

	if (layout_read(st, l) == -1 ||
	    sql_prepare(st, "SELECT EXISTS (SELECT 1 FROM sqlite_master)",
	    &s) == -1)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		tables = sqlite3_column_int(s, 0) != 0;
	if (sql_finish_lookup(st, s, rc, "read the schema") == -1)
		return -1;
	if (l->version > SCHEMA_VERSION) {
		log_warnx("%s: schema version %" PRId64 " is newer than this "
		    "build's %d; refusing to use it", st->path, l->version,
		    SCHEMA_VERSION);
		return -1;
	}
	if (l->version < 0 || (l->version == 0 && tables)) {
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
	struct layout l;
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
	if (schema_check(st, &l) == -1 ||
	    (l.version == 0 && configure_new(st) == -1) ||
	    configure(st) == -1)
		return -1;
	if (to != 0 && l.version > to) {
		log_warnx("%s: already at schema version %" PRId64, st->path,
		    l.version);
		return -1;
	}
	return migrate(st, &l, to);
}
