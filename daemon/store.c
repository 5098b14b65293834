/*
 * store: samples in SQLite (contract in store.h; tables documented in
 * spyremon-schema(5)).
 *
 * The schema version is PRAGMA user_version.  migrations[k - 1] takes a
 * database from version k - 1 to k inside one transaction, so a crash or an
 * error mid-way leaves the previous version intact.
 *
 * Every metric is a REAL column of samples named after its key when the
 * key is a plain lower-case identifier (else m<id>).  Values are bound as
 * integers scaled by 10^decimals whenever that is exact; with REAL affinity
 * SQLite keeps whole numbers in the compact integer encoding (0 to 8 bytes
 * depending on magnitude), which is what makes one wide row per card per
 * interval cost a few bytes per value.
 */
#include "store_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "metrics.h"
#include "schema.h"
#include "timeparse.h"

#define BUSY_TIMEOUT_MS		250
#define CACHE_SIZE_KIB		2000
#define JOURNAL_SIZE_LIMIT	(16 * 1024 * 1024)
#define POOL_INITIAL_ROWS	64
#define COL_NAME_MAX		48

/*
 * Keys aiu-smi prints that metric_defs lacks are catalogued with group
 * "?", an empty description, reliable 1 and 3 decimals: 3 covers every
 * precision aiu-smi is known to print, and a value with more digits is
 * still stored exactly enough (as REAL).
 */
#define UNKNOWN_GROUP		'?'
#define UNKNOWN_DECIMALS	3

#define LOG_INTERVAL_NS		(60 * NSEC_PER_SEC)

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

static int	seed_catalog(struct store *);

struct migration {
	const char *sql;
	int (*fill)(struct store *);	/* then this, if not NULL */
};

static const struct migration migrations[SCHEMA_VERSION] = {
	{ schema_v1, seed_catalog },
	{ schema_v2, NULL },
};

static const int64_t pow10_int[19] = {
	1LL, 10LL, 100LL, 1000LL, 10000LL, 100000LL, 1000000LL, 10000000LL,
	100000000LL, 1000000000LL, 10000000000LL, 100000000000LL,
	1000000000000LL, 10000000000000LL, 100000000000000LL,
	1000000000000000LL, 10000000000000000LL, 100000000000000000LL,
	1000000000000000000LL,
};

/* ---- SQLite plumbing shared with retention.c ---- */

void
store_warn_sqlite(struct store *st, const char *what)
{
	log_warnx("%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

int
store_exec(struct store *st, const char *what, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &err) == SQLITE_OK)
		return 0;
	log_warnx("%s: %s: %s", st->path, what, err != NULL ? err :
	    sqlite3_errmsg(st->db));
	sqlite3_free(err);
	return -1;
}

static int
prepare(struct store *st, const char *sql, sqlite3_stmt **out)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) == SQLITE_OK)
		return 0;
	store_warn_sqlite(st, "prepare");
	*out = NULL;
	return -1;
}

/* The first column of the single row sql returns, as an integer. */
static int
query_int(struct store *st, const char *sql, int64_t *out)
{
	sqlite3_stmt *s;
	int rc;

	if (prepare(st, sql, &s) == -1)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	else
		store_warn_sqlite(st, sql);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
store_pragma_int(sqlite3 *db, const char *name, int64_t *out)
{
	sqlite3_stmt *s;
	char sql[64];
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA %s", name);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
store_used_bytes(sqlite3 *db, uint64_t *out)
{
	int64_t pages, free_pages, page_size;

	if (store_pragma_int(db, "page_count", &pages) == -1 ||
	    store_pragma_int(db, "freelist_count", &free_pages) == -1 ||
	    store_pragma_int(db, "page_size", &page_size) == -1)
		return -1;
	*out = (uint64_t)(pages - free_pages) * (uint64_t)page_size;
	return 0;
}

/* Run one prepared statement that returns no rows; the SQLite result code. */
static int
step_once(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static int
tx_begin(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		(void)step_once(st->rollback);
	return step_once(st->begin);
}

static int
tx_commit(struct store *st)
{
	return step_once(st->commit);
}

static void
tx_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		(void)step_once(st->rollback);
}

/* ---- the metric catalog ---- */

static bool
plain_column_name(const char *key)
{
	static const char *const fixed[] = {
		SCHEMA_C_TS, SCHEMA_C_DEVICE, SCHEMA_C_INTERVAL, SCHEMA_C_SKEW,
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

	if (prepare(st, "SELECT 1 FROM " SCHEMA_T_METRICS
	    " WHERE col = ?1 COLLATE NOCASE", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, col, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		store_warn_sqlite(st, "catalog lookup");
		return -1;
	}
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
static int
catalog_insert(struct store *st, const struct metric_def *d)
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
	rc = store_exec(st, "add metric column", sql);
	sqlite3_free(sql);
	if (rc == -1 || prepare(st, "INSERT INTO " SCHEMA_T_METRICS
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
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		store_warn_sqlite(st, "add metric");
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * (Re)create sample_values: one UNION ALL arm per metric column, each a
 * plain filter on samples, so a ts_ns range on the view is pushed into
 * every arm and served by the primary key.  Dividing by the exact power of
 * ten gives the correctly rounded natural value of an integer.
 */
static int
view_rebuild(struct store *st)
{
	sqlite3_stmt *s;
	sqlite3_str *q;
	char *sql;
	int rc, arms = 0;

	if (prepare(st, "SELECT key, col, decimals FROM " SCHEMA_T_METRICS
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
		store_warn_sqlite(st, "read catalog");
		sqlite3_free(sql);
		return -1;
	}
	rc = store_exec(st, "create view " SCHEMA_V_VALUES, sql);
	sqlite3_free(sql);
	return rc;
}

static int
seed_catalog(struct store *st)
{
	for (size_t i = 0; i < metric_ndefs; i++)
		if (catalog_insert(st, &metric_defs[i]) == -1)
			return -1;
	return view_rebuild(st);
}

static void
catalog_free(struct store_catalog *cat)
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

static int
catalog_load(struct store *st, struct store_catalog *cat)
{
	sqlite3_stmt *s;
	int rc;

	memset(cat, 0, sizeof(*cat));
	if (prepare(st, "SELECT id, key, col, decimals FROM " SCHEMA_T_METRICS
	    " ORDER BY id", &s) == -1)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);

		if (id < 1 || id > 1000000 ||
		    catalog_add_col(cat, (int)id,
		    (const char *)sqlite3_column_text(s, 1),
		    (const char *)sqlite3_column_text(s, 2),
		    sqlite3_column_int(s, 3)) == -1) {
			rc = SQLITE_CORRUPT;
			break;
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE || catalog_index(cat) == -1) {
		log_warnx("%s: cannot load the metric catalog", st->path);
		catalog_free(cat);
		return -1;
	}
	return 0;
}

static const struct store_col *
catalog_find(const struct store_catalog *cat, const char *key)
{
	for (size_t i = 0; i < cat->n; i++)
		if (strcmp(cat->cols[i].key, key) == 0)
			return &cat->cols[i];
	return NULL;
}

/* INSERT into samples with the fixed columns, then cat's columns in order. */
static sqlite3_stmt *
insert_prepare(struct store *st, const struct store_catalog *cat)
{
	sqlite3_stmt *s = NULL;
	sqlite3_str *q;
	char *sql;
	size_t i;

	q = sqlite3_str_new(st->db);
	sqlite3_str_appendall(q, "INSERT INTO " SCHEMA_T_SAMPLES " ("
	    SCHEMA_C_TS ", " SCHEMA_C_DEVICE ", " SCHEMA_C_INTERVAL ", "
	    SCHEMA_C_SKEW);
	for (i = 0; i < cat->n; i++)
		sqlite3_str_appendf(q, ", \"%w\"", cat->cols[i].col);
	sqlite3_str_appendall(q, ") VALUES (?, ?, ?, ?");
	for (i = 0; i < cat->n; i++)
		sqlite3_str_appendall(q, ", ?");
	sqlite3_str_appendall(q, ")");
	sql = sqlite3_str_finish(q);
	if (sql != NULL)
		(void)prepare(st, sql, &s);
	sqlite3_free(sql);
	return s;
}

/* ---- opening, migrating ---- */

/* Settings that only a new, empty database can take. */
static int
configure_new(struct store *st)
{
	return store_exec(st, "configure new database",
	    "PRAGMA page_size = 4096; PRAGMA auto_vacuum = INCREMENTAL;");
}

static int
configure(struct store *st)
{
	char sql[256];
	sqlite3_stmt *s;
	bool wal = false;

	if (prepare(st, "PRAGMA journal_mode = WAL", &s) == -1)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		wal = sqlite3_stricmp((const char *)sqlite3_column_text(s, 0),
		    "wal") == 0;
	sqlite3_finalize(s);
	if (!wal) {
		store_warn_sqlite(st, "cannot switch to WAL mode");
		return -1;
	}
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = NORMAL; "
	    "PRAGMA cache_size = -%d; PRAGMA journal_size_limit = %d;",
	    CACHE_SIZE_KIB, JOURNAL_SIZE_LIMIT);
	return store_exec(st, "configure database", sql);
}

static int
migrate_step(struct store *st, int version)
{
	const struct migration *m = &migrations[version - 1];
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version);
	if (store_exec(st, "begin migration", "BEGIN IMMEDIATE") == -1)
		return -1;
	if (store_exec(st, "migrate schema", m->sql) == -1 ||
	    (m->fill != NULL && m->fill(st) == -1) ||
	    store_exec(st, "set schema version", sql) == -1 ||
	    store_exec(st, "commit migration", "COMMIT") == -1) {
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

	if (store_pragma_int(st->db, "user_version", version) == -1) {
		store_warn_sqlite(st, "read schema version");
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

static struct store *
store_new(const char *path, size_t max_pending)
{
	struct store *st;
	struct ratelimit rl = RATELIMIT_INIT(LOG_INTERVAL_NS, 3);

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	if ((st->path = strdup(path)) == NULL) {
		free(st);
		return NULL;
	}
	st->max_pending = max_pending > 0 ? max_pending : 1;
	st->rl_flush = st->rl_drop = st->rl_retention = rl;
	st->ret.phase = RET_AGE;
	st->ret.cursor = INT64_MIN;
	st->ret.chunk = RETENTION_CHUNK_INITIAL;
	return st;
}

static void
store_free(struct store *st)
{
	int rc;

	sqlite3_finalize(st->insert);
	sqlite3_finalize(st->begin);
	sqlite3_finalize(st->commit);
	sqlite3_finalize(st->rollback);
	catalog_free(&st->cat);
	if (st->db != NULL && (rc = sqlite3_close(st->db)) != SQLITE_OK)
		log_warnx("%s: close: %s", st->path, sqlite3_errstr(rc));
	free(st->rows);
	free(st->cells);
	free(st->kinds);
	free(st->devs);
	free(st->path);
	free(st);
}

/* Open the file and bring its schema to version to, refusing a newer one. */
static int
db_open(struct store *st, int to)
{
	int64_t version;
	int rc;

	rc = sqlite3_open_v2(st->path, &st->db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
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

static int
ingest_prepare(struct store *st)
{
	if (catalog_load(st, &st->cat) == -1 ||
	    prepare(st, "BEGIN IMMEDIATE", &st->begin) == -1 ||
	    prepare(st, "COMMIT", &st->commit) == -1 ||
	    prepare(st, "ROLLBACK", &st->rollback) == -1 ||
	    (st->insert = insert_prepare(st, &st->cat)) == NULL)
		return -1;
	st->stride = st->cat.n > 0 ? st->cat.n : 1;
	return 0;
}

int
store_open(const char *path, size_t max_pending, struct store **out)
{
	struct store *st;

	*out = NULL;
	if ((st = store_new(path, max_pending)) == NULL) {
		log_warn("%s: cannot open database", path);
		return -1;
	}
	if (db_open(st, SCHEMA_VERSION) == -1 || ingest_prepare(st) == -1) {
		store_free(st);
		return -1;
	}
	*out = st;
	return 0;
}

int
store_create_version(const char *path, int version)
{
	struct store *st;
	int rc;

	if (version < 1 || version > SCHEMA_VERSION ||
	    (st = store_new(path, 1)) == NULL)
		return -1;
	rc = db_open(st, version);
	store_free(st);
	return rc;
}

/* ---- buffering ---- */

/*
 * Reshape the buffer to cap rows of stride cells, keeping the buffered rows
 * in order.  stride never drops below the catalog's width.
 */
static int
pool_resize(struct store *st, size_t cap, size_t stride)
{
	struct pending_row *rows;
	union store_cell *cells;
	unsigned char *kinds;
	size_t i, from, to;

	if (cap == 0) {
		st->stride = stride;
		return 0;
	}
	rows = calloc(cap, sizeof(*rows));
	cells = calloc(cap * stride, sizeof(*cells));
	kinds = calloc(cap * stride, sizeof(*kinds));
	if (rows == NULL || cells == NULL || kinds == NULL) {
		free(rows);
		free(cells);
		free(kinds);
		return -1;
	}
	for (i = 0; i < st->n; i++) {
		from = (st->head + i) % st->cap;
		rows[i] = st->rows[from];
		for (to = 0; to < st->cat.n; to++) {
			cells[i * stride + to] = st->cells[from * st->stride + to];
			kinds[i * stride + to] = st->kinds[from * st->stride + to];
		}
	}
	free(st->rows);
	free(st->cells);
	free(st->kinds);
	st->rows = rows;
	st->cells = cells;
	st->kinds = kinds;
	st->cap = cap;
	st->stride = stride;
	st->head = 0;
	return 0;
}

static void
note_dropped(struct store *st)
{
	unsigned suppressed;

	st->rows_dropped++;
	if (ratelimit_pass(&st->rl_drop, now_monotonic_ns(), &suppressed))
		log_warnx("%s: buffer full (%zu rows) while writes fail: "
		    "dropping the oldest rows (%" PRIu64 " so far)", st->path,
		    st->max_pending, st->rows_dropped);
}

/* The index of a free row at the tail, making room as the contract says. */
static int
pool_reserve(struct store *st, size_t *k)
{
	size_t cap;

	if (st->n == st->cap && st->cap < st->max_pending) {
		cap = st->cap > 0 ? st->cap * 2 : POOL_INITIAL_ROWS;
		if (cap > st->max_pending)
			cap = st->max_pending;
		if (pool_resize(st, cap, st->stride) == -1 &&
		    ratelimit_pass(&st->rl_drop, now_monotonic_ns(), NULL))
			log_warn("%s: cannot grow the row buffer", st->path);
	}
	if (st->n == st->cap) {
		note_dropped(st);
		if (st->cap == 0)
			return -1;
		st->head = (st->head + 1) % st->cap;
		st->n--;
	}
	*k = (st->head + st->n) % st->cap;
	st->n++;
	return 0;
}

/* ts_ns made strictly increasing per device. */
static int64_t
device_ts(struct store *st, int device, int64_t ts_ns)
{
	struct device_last *d = NULL;
	size_t i;

	for (i = 0; i < st->ndevs; i++)
		if (st->devs[i].device == device)
			d = &st->devs[i];
	if (d == NULL) {
		if (st->ndevs == st->devs_cap) {
			size_t cap = st->devs_cap > 0 ? st->devs_cap * 2 : 16;

			d = reallocarray(st->devs, cap, sizeof(*d));
			if (d == NULL)
				return ts_ns;
			st->devs = d;
			st->devs_cap = cap;
		}
		d = &st->devs[st->ndevs++];
		d->device = device;
		d->ts_ns = ts_ns;
		return ts_ns;
	}
	if (ts_ns <= d->ts_ns && d->ts_ns < INT64_MAX) {
		log_debug("device %d: timestamp %" PRId64 " not after %" PRId64
		    "; stored as %" PRId64, device, ts_ns, d->ts_ns,
		    d->ts_ns + 1);
		ts_ns = d->ts_ns + 1;
	}
	d->ts_ns = ts_ns;
	return ts_ns;
}

static double
pow10_double(int e)
{
	double p = 1.0;

	while (e-- > 0)
		p *= 10.0;
	return p;
}

/* mant / 10^scale as the column stores it: scaled by 10^decimals. */
static enum cell_kind
cell_set(union store_cell *c, const struct store_value *v, int decimals)
{
	int e = decimals - v->scale;

	if (e >= 0) {
		if (e < 19 && !__builtin_mul_overflow(v->mant, pow10_int[e],
		    &c->i))
			return CELL_INT;
		c->d = (double)v->mant * pow10_double(e);
		return CELL_REAL;
	}
	if (-e < 19 && v->mant % pow10_int[-e] == 0) {
		c->i = v->mant / pow10_int[-e];
		return CELL_INT;
	}
	c->d = (double)v->mant / pow10_double(-e);
	return CELL_REAL;
}

void
store_append(struct store *st, const struct store_sample *s)
{
	struct pending_row *r;
	union store_cell *cells;
	unsigned char *kinds;
	size_t k, i;
	int id, slot;

	if (pool_reserve(st, &k) == -1)
		return;
	r = &st->rows[k];
	r->ts_ns = device_ts(st, s->device, s->ts_ns);
	r->device = s->device;
	r->interval_ms = s->interval_ms;
	r->have_skew = s->have_skew;
	r->skew_s = s->skew_s;
	cells = &st->cells[k * st->stride];
	kinds = &st->kinds[k * st->stride];
	memset(kinds, CELL_NULL, st->cat.n);
	for (i = 0; i < s->nvalues; i++) {
		id = s->metric[i];
		if (id < 0 || id > st->cat.max_id ||
		    (slot = st->cat.slot_of_id[id]) < 0 || !s->values[i].present)
			continue;
		kinds[slot] = (unsigned char)cell_set(&cells[slot],
		    &s->values[i], st->cat.cols[slot].decimals);
	}
	if (r->ts_ns > st->newest_ts_ns)
		st->newest_ts_ns = r->ts_ns;
}

/* ---- writing ---- */

static void
row_bind(struct store *st, size_t k)
{
	const struct pending_row *r = &st->rows[k];
	const union store_cell *cells = &st->cells[k * st->stride];
	const unsigned char *kinds = &st->kinds[k * st->stride];
	sqlite3_stmt *s = st->insert;

	sqlite3_bind_int64(s, 1, r->ts_ns);
	sqlite3_bind_int(s, 2, r->device);
	sqlite3_bind_int64(s, 3, r->interval_ms);
	if (r->have_skew)
		sqlite3_bind_int(s, 4, r->skew_s);
	else
		sqlite3_bind_null(s, 4);
	for (size_t j = 0; j < st->cat.n; j++) {
		int p = (int)j + 5;

		switch (kinds[j]) {
		case CELL_INT:
			sqlite3_bind_int64(s, p, cells[j].i);
			break;
		case CELL_REAL:
			sqlite3_bind_double(s, p, cells[j].d);
			break;
		default:
			sqlite3_bind_null(s, p);
			break;
		}
	}
}

/*
 * Insert every buffered row inside the open transaction.  A row whose key
 * is already stored (possible only across a restart with the clock set
 * back) is skipped and counted in *skipped rather than blocking the rest.
 * Returns an SQLite result code.
 */
static int
rows_write(struct store *st, size_t *skipped)
{
	int rc;

	*skipped = 0;
	for (size_t i = 0; i < st->n; i++) {
		row_bind(st, (st->head + i) % st->cap);
		rc = sqlite3_step(st->insert);
		sqlite3_reset(st->insert);
		if (rc == SQLITE_DONE)
			continue;
		if ((rc & 0xff) != SQLITE_CONSTRAINT)
			return rc;
		(*skipped)++;
	}
	return SQLITE_OK;
}

static void
rows_committed(struct store *st, size_t skipped)
{
	if (skipped > 0)
		log_warnx("%s: %zu rows duplicated stored rows and were "
		    "dropped", st->path, skipped);
	st->rows_written += st->n - skipped;
	st->rows_dropped += skipped;
	st->head = 0;
	st->n = 0;
}

static void
flush_failed(struct store *st)
{
	char err[256];
	unsigned suppressed;

	snprintf(err, sizeof(err), "%s", sqlite3_errmsg(st->db));
	tx_rollback(st);
	st->flushes_failed++;
	if (!ratelimit_pass(&st->rl_flush, now_monotonic_ns(), &suppressed))
		return;
	log_warnx("%s: cannot write %zu rows, keeping them for the next "
	    "flush: %s", st->path, st->n, err);
	if (suppressed > 0)
		log_warnx("%s: %u more failed flushes not logged", st->path,
		    suppressed);
}

int
store_flush(struct store *st)
{
	size_t skipped;

	if (st->n == 0)
		return 0;
	if (tx_begin(st) != SQLITE_OK || rows_write(st, &skipped) != SQLITE_OK ||
	    tx_commit(st) != SQLITE_OK) {
		flush_failed(st);
		return -1;
	}
	rows_committed(st, skipped);
	return 0;
}

/*
 * A new metric: write the buffered rows, add the column and catalog row,
 * rebuild the view, all in one transaction; only once it commits does the
 * store switch to the new catalog and insert statement.
 */
static int
metric_add(struct store *st, const char *key, const char *unit, int *id)
{
	const struct metric_def *known = metric_def_find(key);
	struct metric_def def = { key, unit != NULL ? unit : "", UNKNOWN_GROUP,
	    UNKNOWN_DECIMALS, true, "" };
	struct store_catalog cat = { 0 };
	sqlite3_stmt *ins = NULL;
	size_t skipped;

	if (known != NULL)
		def = *known;
	if (tx_begin(st) != SQLITE_OK || rows_write(st, &skipped) != SQLITE_OK) {
		store_warn_sqlite(st, "write buffered rows");
		goto fail;
	}
	if (catalog_insert(st, &def) == -1 || view_rebuild(st) == -1 ||
	    catalog_load(st, &cat) == -1 ||
	    (ins = insert_prepare(st, &cat)) == NULL)
		goto fail;
	if (cat.n > st->stride && pool_resize(st, st->cap, cat.n) == -1) {
		log_warn("%s: cannot widen the row buffer", st->path);
		goto fail;
	}
	if (tx_commit(st) != SQLITE_OK) {
		store_warn_sqlite(st, "commit new metric");
		goto fail;
	}
	rows_committed(st, skipped);
	sqlite3_finalize(st->insert);
	st->insert = ins;
	catalog_free(&st->cat);
	st->cat = cat;
	*id = st->cat.cols[st->cat.n - 1].id;
	log_info("%s: new metric %s", st->path, key);
	return 0;
fail:
	tx_rollback(st);
	sqlite3_finalize(ins);
	catalog_free(&cat);
	log_warnx("%s: cannot add metric %s", st->path, key);
	return -1;
}

int
store_metric(struct store *st, const char *key, const char *unit, int *id)
{
	const struct store_col *c = catalog_find(&st->cat, key);

	if (c != NULL) {
		*id = c->id;
		return 0;
	}
	return metric_add(st, key, unit, id);
}

/* ---- inventory ---- */

static bool
same_text(sqlite3_stmt *s, int col, const char *text)
{
	const char *v = (const char *)sqlite3_column_text(s, col);

	return v != NULL && strcmp(v, text) == 0;
}

int
store_device_map(struct store *st, int device, const char *metric_file,
    const char *bus_id, int64_t ts_ns)
{
	sqlite3_stmt *s;
	bool same;
	int rc;

	if (bus_id == NULL)
		bus_id = "";
	if (prepare(st, "SELECT metric_file, bus_id FROM " SCHEMA_T_DEVICE_MAP
	    " WHERE device = ?1 ORDER BY since_ns DESC LIMIT 1", &s) == -1)
		return -1;
	sqlite3_bind_int(s, 1, device);
	rc = sqlite3_step(s);
	same = rc == SQLITE_ROW && same_text(s, 0, metric_file) &&
	    same_text(s, 1, bus_id);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		store_warn_sqlite(st, "read device map");
		return -1;
	}
	if (same)
		return 0;
	if (prepare(st, "INSERT OR REPLACE INTO " SCHEMA_T_DEVICE_MAP
	    " (device, metric_file, bus_id, since_ns) VALUES (?1, ?2, ?3, ?4)",
	    &s) == -1)
		return -1;
	sqlite3_bind_int(s, 1, device);
	sqlite3_bind_text(s, 2, metric_file, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, bus_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, ts_ns);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		store_warn_sqlite(st, "write device map");
		return -1;
	}
	return 0;
}

static void
bind_text_or_null(sqlite3_stmt *s, int p, const char *text)
{
	if (text[0] != '\0')
		sqlite3_bind_text(s, p, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, p);
}

/* Unknown fields (numa -1, width 0, empty strings) are stored as NULL. */
int
store_card(struct store *st, const struct card *c, int64_t ts_ns)
{
	sqlite3_stmt *s;
	int rc;

	if (prepare(st, "INSERT INTO " SCHEMA_T_CARDS " (bus_id, function, "
	    "numa_node, driver, link_speed, link_width, first_seen_ns, "
	    "last_seen_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) "
	    "ON CONFLICT (bus_id) DO UPDATE SET function = excluded.function, "
	    "numa_node = excluded.numa_node, driver = excluded.driver, "
	    "link_speed = excluded.link_speed, "
	    "link_width = excluded.link_width, "
	    "last_seen_ns = excluded.last_seen_ns", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, c->bus_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, c->vf ? "vf" : "pf", -1, SQLITE_STATIC);
	if (c->numa_node >= 0)
		sqlite3_bind_int(s, 3, c->numa_node);
	else
		sqlite3_bind_null(s, 3);
	bind_text_or_null(s, 4, c->driver);
	bind_text_or_null(s, 5, c->link_speed);
	if (c->link_width > 0)
		sqlite3_bind_int(s, 6, c->link_width);
	else
		sqlite3_bind_null(s, 6);
	sqlite3_bind_int64(s, 7, ts_ns);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		store_warn_sqlite(st, "write card");
		return -1;
	}
	return 0;
}

/* ---- stats, closing ---- */

void
store_get_stats(struct store *st, struct store_stats *out)
{
	int64_t pages, page_size;

	memset(out, 0, sizeof(*out));
	out->rows_written = st->rows_written;
	out->rows_dropped = st->rows_dropped;
	out->rows_deleted = st->rows_deleted;
	out->flushes_failed = st->flushes_failed;
	out->pending = st->n;
	out->newest_ts_ns = st->newest_ts_ns;
	if (store_pragma_int(st->db, "page_count", &pages) == 0 &&
	    store_pragma_int(st->db, "page_size", &page_size) == 0)
		out->file_bytes = (uint64_t)pages * (uint64_t)page_size;
}

void
store_close(struct store *st)
{
	int rc;

	if (st == NULL)
		return;
	if (store_flush(st) == -1)
		log_warnx("%s: %zu buffered rows are lost", st->path, st->n);
	/* analysis_limit bounds the work ANALYZE may do on a large table */
	(void)store_exec(st, "optimize",
	    "PRAGMA analysis_limit = 400; PRAGMA optimize;");
	rc = sqlite3_wal_checkpoint_v2(st->db, NULL,
	    SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		store_warn_sqlite(st, "checkpoint");
	store_free(st);
}
