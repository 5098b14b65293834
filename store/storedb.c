/*
 * storedb: the connection's side of the store (contract in storedb.h;
 * tables documented in spyremon-schema(5)): opening and closing, writing
 * the buffered rows (storebuf.c) in one transaction per flush, a
 * transaction held by the caller, new metrics, deletions, the device map
 * and the cards.  Import, the tools and the tests call these directly;
 * in the daemon only the writer thread does (writer.c), and the event
 * loop's calls (store.c) reach them through it.
 *
 * The schema and its migrations live in migrate.c, the metric catalog in
 * catalog.c.
 */
#include "store_priv.h"
#include "storedb.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inventory.h"
#include "metrics.h"
#include "schema.h"
#include "timeparse.h"

/*
 * Keys aiu-smi prints that metric_defs lacks are catalogued with group
 * "?", an empty description, reliable 1 and 3 decimals: 3 covers every
 * precision aiu-smi is known to print, and a value with more digits is
 * still stored exactly enough (as REAL).
 */
#define UNKNOWN_GROUP		'?'
#define UNKNOWN_DECIMALS	3

#define LOG_INTERVAL_NS		(60 * NSEC_PER_SEC)

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

/* ---- opening ---- */

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
	st->rl_flush = st->rl_drop = st->rl_retention = st->rl_sql = rl;
	st->ret.phase = RET_AGE;
	st->ret.cursor = INT64_MIN;
	st->ret.chunk = RETENTION_CHUNK_INITIAL;
	st->sync_min_through = INT64_MAX;
	store_buf_init(st);
	pthread_mutex_init(&st->mu, NULL);
	pthread_mutex_init(&st->dbmu, NULL);
	pthread_mutex_init(&st->errmu, NULL);
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
	store_catalog_free(&st->cat);
	store_counters_free(st);
	summary_idle_cache_clear(&st->idle);
	if (st->db != NULL && (rc = sqlite3_close(st->db)) != SQLITE_OK)
		log_warnx("%s: close: %s", st->path, sqlite3_errstr(rc));
	rowring_free(&st->pool);
	pthread_mutex_destroy(&st->mu);
	pthread_mutex_destroy(&st->dbmu);
	pthread_mutex_destroy(&st->errmu);
	free(st->devs);
	free(st->carried);
	free(st->path);
	free(st);
}

static int
ingest_prepare(struct store *st)
{
	if (store_catalog_load(st, &st->cat) == -1 ||
	    sql_prepare(st, "BEGIN IMMEDIATE", &st->begin) == -1 ||
	    sql_prepare(st, "COMMIT", &st->commit) == -1 ||
	    sql_prepare(st, "ROLLBACK", &st->rollback) == -1 ||
	    (st->insert = store_insert_prepare(st, &st->cat)) == NULL)
		return -1;
	return rowring_resize(&st->pool, st->pool.cap,
	    st->cat.n > 0 ? st->cat.n : 1);
}

static void note_file(struct store *st);

int
storedb_open(const char *path, size_t max_pending, struct store **out)
{
	struct store *st;

	*out = NULL;
	if ((st = store_new(path, max_pending)) == NULL) {
		log_warn("%s: cannot open database", path);
		return -1;
	}
	if (store_db_open(st, SCHEMA_VERSION) == -1 || ingest_prepare(st) == -1 ||
	    store_counters_load(st) == -1 ||
	    store_db_load_steps(st) == -1) {
		store_free(st);
		return -1;
	}
	/* the host clock's epoch goes on from the database's last */
	st->epoch = st->epoch_open = st->last_step.id;
	note_file(st);
	*out = st;
	return 0;
}

/*
 * Finish the old connection and open the database at st->path again,
 * created anew if it is gone, adopted if it is a spyremon database, left
 * alone otherwise; with every metric of the catalog in use (a key
 * metric_defs lacks is catalogued again as it was, its unit aside).  The
 * buffered rows stay unless the new catalog's columns differ, when they
 * are dropped and counted.  Called with st->mu and st->dbmu held.
 */
int
store_db_reopen(struct store *st, char *why, size_t len)
{
	struct store_catalog old = st->cat, cat = { 0 };
	bool same;
	int rc = -1;

	if (store_db_retire(st) == -1)
		return -1;
	if (store_path_check(st->path, why, len) == 1)
		return 1;
	memset(&st->cat, 0, sizeof(st->cat));
	if (store_db_open(st, SCHEMA_VERSION) == -1 ||
	    store_catalog_load(st, &cat) == -1)
		goto out;
	for (size_t i = 0; i < old.n; i++) {
		struct metric_def def = { old.cols[i].key, "", UNKNOWN_GROUP,
		    old.cols[i].decimals, true, "" };

		if (store_catalog_find(&cat, old.cols[i].key) != NULL)
			continue;
		if (sql_exec(st, "begin", "BEGIN IMMEDIATE") == -1 ||
		    store_catalog_insert(st, &def) == -1 ||
		    store_view_rebuild(st) == -1 ||
		    sql_exec(st, "commit new metric", "COMMIT") == -1) {
			(void)sql_exec(st, "rollback", "ROLLBACK");
			goto out;
		}
	}
	store_catalog_free(&cat);
	/* a file made anew names no daemon: this one writes it; and its
	 * epochs go on from the newest step known */
	if (ingest_prepare(st) == -1 || (st->daemon_recorded &&
	    store_db_daemon_record(st) == -1) || (st->last_step.id > 0 &&
	    store_db_clock_step(st, &st->last_step) == -1))
		goto out;
	same = st->cat.n == old.n;
	for (size_t i = 0; same && i < old.n; i++)
		same = strcmp(st->cat.cols[i].key, old.cols[i].key) == 0 &&
		    st->cat.cols[i].id == old.cols[i].id &&
		    st->cat.cols[i].decimals == old.cols[i].decimals;
	if (!same && st->pool.n > 0) {
		log_warnx("%s: the new catalog differs: %zu buffered rows "
		    "dropped", st->path, st->pool.n);
		st->rows_dropped += st->pool.n;
		rowring_clear(&st->pool);
	}
	note_file(st);
	store_catalog_free(&old);
	return 0;
out:
	/* nothing half-open stays: the next flush tries again from the
	 * catalog as it was */
	store_catalog_free(&cat);
	sqlite3_finalize(st->insert);
	sqlite3_finalize(st->begin);
	sqlite3_finalize(st->commit);
	sqlite3_finalize(st->rollback);
	st->insert = st->begin = st->commit = st->rollback = NULL;
	(void)sqlite3_close(st->db);
	st->db = NULL;
	store_catalog_free(&st->cat);
	st->cat = old;
	return rc;
}

int
store_create_version(const char *path, int version)
{
	struct store *st;
	int rc;

	if (version < 1 || version > SCHEMA_VERSION ||
	    (st = store_new(path, 1)) == NULL)
		return -1;
	rc = store_db_open(st, version);
	store_free(st);
	return rc;
}

/* Remember which file the database is, to notice it replaced. */
static void
note_file(struct store *st)
{
	struct stat sb;

	if (stat(st->path, &sb) == 0) {
		st->dev = sb.st_dev;
		st->ino = sb.st_ino;
	}
}

/* ---- writing ---- */

static void
row_bind(struct store *st, const struct rowring *ring, size_t k)
{
	const struct pending_row *r = rowring_row(ring, k);
	const union store_cell *cells = rowring_cells(ring, POOL_VALUES, k);
	const unsigned char *kinds = rowring_cells(ring, POOL_KINDS, k);
	sqlite3_stmt *s = st->insert;

	sqlite3_bind_int64(s, 1, r->ts_ns);
	sqlite3_bind_int(s, 2, r->device);
	sqlite3_bind_int64(s, 3, r->interval_ms);
	if (r->have_skew)
		sqlite3_bind_int(s, 4, r->skew_s);
	else
		sqlite3_bind_null(s, 4);
	if (r->src != SCHEMA_SRC_SMI)
		sqlite3_bind_int(s, 5, r->src);
	else
		sqlite3_bind_null(s, 5);
	if (r->have_seq)
		sqlite3_bind_int64(s, 6, r->seq);
	else
		sqlite3_bind_null(s, 6);
	if (r->arrival_ns != 0)
		sqlite3_bind_int64(s, 7, r->arrival_ns);
	else
		sqlite3_bind_null(s, 7);
	sqlite3_bind_int64(s, 8, r->epoch);
	for (size_t j = 0; j < st->cat.n; j++) {
		int at = (int)j + 9;

		switch (kinds[j]) {
		case CELL_INT:
			sqlite3_bind_int64(s, at, cells[j].i);
			break;
		case CELL_REAL:
			sqlite3_bind_double(s, at, cells[j].d);
			break;
		default:
			sqlite3_bind_null(s, at);
			break;
		}
	}
}

/* True if insert result rc says the row's key is already stored. */
static bool
key_taken(struct store *st, int rc)
{
	int ext = rc != SQLITE_CONSTRAINT ? rc : sqlite3_extended_errcode(st->db);

	return ext == SQLITE_CONSTRAINT_PRIMARYKEY ||
	    ext == SQLITE_CONSTRAINT_UNIQUE;
}

/*
 * The row just refused by st->insert for its key (ts_ns, device), stored
 * at the first free ns of the next STORE_NUDGE_MAX: SQLITE_DONE then
 * (counted, logged rate-limited), else the last step's result code.
 */
static int
insert_nudged(struct store *st, const struct pending_row *r)
{
	unsigned suppressed;
	int rc = SQLITE_CONSTRAINT;

	for (int64_t n = 1; n <= STORE_NUDGE_MAX && r->ts_ns <= INT64_MAX - n;
	    n++) {
		sqlite3_bind_int64(st->insert, 1, r->ts_ns + n);
		rc = sqlite3_step(st->insert);
		sqlite3_reset(st->insert);
		if ((rc & 0xff) != SQLITE_CONSTRAINT)
			break;
	}
	if (rc != SQLITE_DONE)
		return rc;
	__atomic_add_fetch(&st->rows_nudged, 1, __ATOMIC_RELAXED);
	if (ratelimit_pass(&st->rl_drop, now_monotonic_ns(), &suppressed))
		log_warnx("%s: device %d: a row stamped %" PRId64 " ns, a "
		    "stamp already stored (the host clock was set back), is "
		    "stored a few ns later", st->path, r->device, r->ts_ns);
	return rc;
}

/*
 * Insert every buffered row inside the open transaction.  A row whose key
 * is already stored (the host clock was set back, with the daemon running
 * or across a restart) is stored a few ns later (insert_nudged); one that
 * cannot be is skipped and counted in *skipped rather than blocking the
 * rest; inside a caller's transaction (storedb_tx_begin) it is named and
 * fails the write instead, since an import must not lose rows silently.
 * Then the counters that count them (counters.c) and the daemon's
 * liveness (store_daemon.c), in the same transaction.  Returns an SQLite
 * result code.
 */
static int
rows_write(struct store *st, const struct rowring *ring, size_t *skipped)
{
	const struct pending_row *r;
	int64_t now;
	size_t k;
	int rc;

	*skipped = 0;
	for (size_t i = 0; i < ring->n; i++) {
		k = rowring_at(ring, i);
		row_bind(st, ring, k);
		rc = sqlite3_step(st->insert);
		sqlite3_reset(st->insert);
		if (rc == SQLITE_DONE)
			continue;
		if ((rc & 0xff) != SQLITE_CONSTRAINT)
			return rc;
		if (!st->in_tx && key_taken(st, rc)) {
			rc = insert_nudged(st, rowring_row(ring, k));
			if (rc == SQLITE_DONE)
				continue;
			if ((rc & 0xff) != SQLITE_CONSTRAINT)
				return rc;
		}
		if (st->in_tx) {
			r = rowring_row(ring, k);
			log_warnx("%s: device %d at ts_ns %" PRId64 " is already "
			    "stored", st->path, r->device, r->ts_ns);
			return rc;
		}
		(*skipped)++;
	}
	now = now_realtime_ns();
	if ((rc = store_counters_write(st, ring, ring->n - *skipped, now)) !=
	    SQLITE_OK)
		return rc;
	return store_db_daemon_alive(st, now);
}

static void
rows_committed(struct store *st, size_t skipped)
{
	if (skipped > 0)
		log_warnx("%s: %zu rows duplicated stored rows and were "
		    "dropped", st->path, skipped);
	store_counters_committed(st);
	st->rows_written += st->pool.n - skipped;
	st->rows_dropped += skipped;
	rowring_clear(&st->pool);
}

static void
flush_failed(struct store *st)
{
	char err[256];
	unsigned suppressed;

	snprintf(err, sizeof(err), "%s", sqlite3_errmsg(st->db));
	sql_note(st, "write rows", sqlite3_extended_errcode(st->db), err);
	tx_rollback(st);
	st->flushes_failed++;
	if (!ratelimit_pass(&st->rl_flush, now_monotonic_ns(), &suppressed))
		return;
	log_warnx("%s: cannot write %zu rows, keeping them for the next "
	    "flush: %s", st->path, st->pool.n, err);
	if (suppressed > 0)
		log_warnx("%s: %u more failed flushes not logged", st->path,
		    suppressed);
}

/* storedb_flush inside the caller's transaction: any failure ends it. */
static int
flush_in_tx(struct store *st)
{
	size_t skipped;
	int rc;

	if ((rc = rows_write(st, &st->pool, &skipped)) != SQLITE_OK) {
		if ((rc & 0xff) != SQLITE_CONSTRAINT)
			sql_warn(st, "write rows");
		storedb_tx_rollback(st);
		return -1;
	}
	rows_committed(st, skipped);
	return 0;
}

void
storedb_append(struct store *st, const struct store_sample *s)
{
	int64_t ts_ns;

	(void)store_buf_append(st, s, &ts_ns);
}

int
storedb_flush(struct store *st)
{
	size_t skipped;

	if (st->pool.n == 0 && !store_counters_pending(st))
		return 0;
	if (st->in_tx)
		return flush_in_tx(st);
	if (tx_begin(st) != SQLITE_OK || rows_write(st, &st->pool, &skipped) != SQLITE_OK ||
	    tx_commit(st) != SQLITE_OK) {
		flush_failed(st);
		return -1;
	}
	rows_committed(st, skipped);
	return 0;
}

int
store_db_rows_write(struct store *st, const struct rowring *ring,
    size_t *skipped)
{
	unsigned suppressed;
	char err[256];

	if (tx_begin(st) == SQLITE_OK && rows_write(st, ring, skipped) ==
	    SQLITE_OK && tx_commit(st) == SQLITE_OK) {
		store_counters_committed(st);
		return 0;
	}
	store_counters_abandoned(st);
	snprintf(err, sizeof(err), "%s", sqlite3_errmsg(st->db));
	/* for status: the ROLLBACK clears SQLite's own record of it */
	st->err_code = sqlite3_extended_errcode(st->db);
	snprintf(st->err_msg, sizeof(st->err_msg), "%.80s", err);
	sql_note(st, "write rows", st->err_code, err);
	tx_rollback(st);
	if (ratelimit_pass(&st->rl_flush, now_monotonic_ns(), &suppressed))
		log_warnx("%s: cannot write %zu rows, keeping them for the next "
		    "flush: %s%s", st->path, ring->n, err, suppressed > 0 ?
		    " (more failures not logged)" : "");
	return -1;
}

/* ---- a transaction held by the caller ---- */

int
storedb_tx_begin(struct store *st)
{
	if (st->in_tx) {
		log_warnx("%s: a transaction is open already", st->path);
		return -1;
	}
	if (storedb_flush(st) == -1)
		return -1;
	if (tx_begin(st) != SQLITE_OK) {
		sql_warn(st, "begin transaction");
		tx_rollback(st);
		return -1;
	}
	st->in_tx = true;
	return 0;
}

int
storedb_tx_commit(struct store *st)
{
	if (!st->in_tx) {
		log_warnx("%s: no transaction is open", st->path);
		return -1;
	}
	if (storedb_flush(st) == -1)
		return -1;
	if (tx_commit(st) != SQLITE_OK) {
		sql_warn(st, "commit");
		storedb_tx_rollback(st);
		return -1;
	}
	st->in_tx = false;
	return 0;
}

void
storedb_tx_rollback(struct store *st)
{
	if (!st->in_tx)
		return;
	tx_rollback(st);
	st->in_tx = false;
	rowring_clear(&st->pool);
}

/* ---- replacing the newest rows ---- */

const char store_sql_delete_after[] =
	"DELETE FROM " SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_TS " > ?1 AND "
	SCHEMA_C_DEVICE " = ?2 AND " SCHEMA_C_SRC " IS ?3";

int
store_db_delete_after(struct store *st, int device, int src, int64_t after_ns)
{
	sqlite3_stmt *s;

	if (sql_prepare(st, store_sql_delete_after, &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, after_ns);
	sqlite3_bind_int(s, 2, device);
	if (src != SCHEMA_SRC_SMI)
		sqlite3_bind_int(s, 3, src);
	return sql_finish(st, s, sqlite3_step(s), "delete rows to replace");
}

int
storedb_delete_after_src(struct store *st, int device, int src,
    int64_t after_ns)
{
	if (store_db_delete_after(st, device, src, after_ns) == -1)
		return -1;
	store_buf_remove_after(st, device, src, after_ns);
	return 0;
}

int
storedb_delete_after(struct store *st, int device, int64_t after_ns)
{
	return storedb_delete_after_src(st, device, SCHEMA_SRC_SMI, after_ns);
}

/*
 * A new metric: write the buffered rows, add the column and catalog row,
 * rebuild the view, all in one transaction; only once it commits does the
 * store switch to the new catalog and insert statement.
 */
int
store_db_metric_add(struct store *st, const char *key, const char *unit, int *id)
{
	const struct metric_def *known = metric_def_find(key);
	struct metric_def def = { key, unit != NULL ? unit : "", UNKNOWN_GROUP,
	    UNKNOWN_DECIMALS, true, "" };
	struct store_catalog cat = { 0 };
	sqlite3_stmt *ins = NULL;
	size_t skipped;

	if (st->in_tx) {
		log_warnx("%s: cannot add metric %s inside a transaction",
		    st->path, key);
		return -1;
	}
	if (known != NULL)
		def = *known;
	if (tx_begin(st) != SQLITE_OK || rows_write(st, &st->pool, &skipped) != SQLITE_OK) {
		sql_warn(st, "write buffered rows");
		goto fail;
	}
	if (store_catalog_insert(st, &def) == -1 || store_view_rebuild(st) == -1 ||
	    store_catalog_load(st, &cat) == -1 ||
	    (ins = store_insert_prepare(st, &cat)) == NULL)
		goto fail;
	if (cat.n > st->pool.stride &&
	    rowring_resize(&st->pool, st->pool.cap, cat.n) == -1) {
		log_warn("%s: cannot widen the row buffer", st->path);
		goto fail;
	}
	if (tx_commit(st) != SQLITE_OK) {
		sql_warn(st, "commit new metric");
		goto fail;
	}
	rows_committed(st, skipped);
	sqlite3_finalize(st->insert);
	st->insert = ins;
	store_catalog_free(&st->cat);
	st->cat = cat;
	*id = st->cat.cols[st->cat.n - 1].id;
	log_info("%s: new metric %s", st->path, key);
	return 0;
fail:
	tx_rollback(st);
	sqlite3_finalize(ins);
	store_catalog_free(&cat);
	log_warnx("%s: cannot add metric %s", st->path, key);
	return -1;
}

int
storedb_metric(struct store *st, const char *key, const char *unit, int *id)
{
	const struct store_col *c = store_catalog_find(&st->cat, key);

	if (c == NULL)
		return store_db_metric_add(st, key, unit, id);
	*id = c->id;
	return 0;
}

int
storedb_metric_unit(struct store *st, const char *key, char *buf, size_t len)
{
	sqlite3_stmt *s;
	bool found;
	int rc;

	if (sql_prepare(st, "SELECT unit FROM " SCHEMA_T_METRICS
	    " WHERE key = ?1", &s) == -1)
		return -1;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	found = rc == SQLITE_ROW;
	if (found)
		snprintf(buf, len, "%s", sqlite3_column_text(s, 0) != NULL ?
		    (const char *)sqlite3_column_text(s, 0) : "");
	if (sql_finish_lookup(st, s, rc, "read a metric's unit") == -1)
		return -1;
	return found ? 1 : 0;
}

/* ---- inventory ---- */

static bool
same_text(sqlite3_stmt *s, int col, const char *text)
{
	const char *v = (const char *)sqlite3_column_text(s, col);

	return v != NULL && strcmp(v, text) == 0;
}

int
storedb_device_map(struct store *st, int device, const char *metric_file,
    const char *bus_id, int64_t ts_ns)
{
	sqlite3_stmt *s;
	bool same;
	int rc;

	if (bus_id == NULL)
		bus_id = "";
	/* the mapping in force at ts_ns: the newest one for the daemon */
	if (sql_prepare(st, "SELECT metric_file, bus_id FROM " SCHEMA_T_DEVICE_MAP
	    " WHERE device = ?1 AND since_ns <= ?2 ORDER BY since_ns DESC "
	    "LIMIT 1", &s) == -1)
		return -1;
	sqlite3_bind_int(s, 1, device);
	sqlite3_bind_int64(s, 2, ts_ns);
	rc = sqlite3_step(s);
	same = rc == SQLITE_ROW && same_text(s, 0, metric_file) &&
	    same_text(s, 1, bus_id);
	if (sql_finish_lookup(st, s, rc, "read device map") == -1)
		return -1;
	if (same)
		return 0;
	if (sql_prepare(st, "INSERT OR REPLACE INTO " SCHEMA_T_DEVICE_MAP
	    " (device, metric_file, bus_id, since_ns) VALUES (?1, ?2, ?3, ?4)",
	    &s) == -1)
		return -1;
	sqlite3_bind_int(s, 1, device);
	sqlite3_bind_text(s, 2, metric_file, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, bus_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, ts_ns);
	return sql_finish(st, s, sqlite3_step(s), "write device map");
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
storedb_card(struct store *st, const struct card *c, int64_t ts_ns)
{
	sqlite3_stmt *s;

	if (sql_prepare(st, "INSERT INTO " SCHEMA_T_CARDS " (bus_id, function, "
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
	return sql_finish(st, s, sqlite3_step(s), "write card");
}

/* ---- stats, closing ---- */

void
storedb_get_stats(struct store *st, struct store_stats *out)
{
	int64_t pages, page_size;

	memset(out, 0, sizeof(*out));
	out->rows_written = st->rows_written;
	out->rows_dropped = st->rows_dropped;
	out->rows_nudged = __atomic_load_n(&st->rows_nudged, __ATOMIC_RELAXED);
	out->rows_deleted = st->rows_deleted;
	out->flushes_failed = st->flushes_failed;
	out->pending = st->pool.n;
	out->newest_ts_ns = st->newest_ts_ns;
	store_errors_stats(st, out);
	if (sql_pragma_int(st->db, "page_count", &pages) == 0 &&
	    sql_pragma_int(st->db, "page_size", &page_size) == 0)
		out->file_bytes = (uint64_t)pages * (uint64_t)page_size;
}

void
storedb_close(struct store *st)
{
	int rc;

	if (st == NULL)
		return;
	if (st->db == NULL) {
		/* the path held another file: nothing is written into it */
		if (st->pool.n > 0)
			log_warnx("%s: %zu buffered rows are lost", st->path,
			    st->pool.n);
		store_free(st);
		return;
	}
	storedb_tx_rollback(st);
	if (storedb_flush(st) == -1)
		log_warnx("%s: %zu buffered rows are lost", st->path, st->pool.n);
	/* analysis_limit bounds the work ANALYZE may do on a large table */
	(void)sql_exec(st, "optimize",
	    "PRAGMA analysis_limit = 400; PRAGMA optimize;");
	rc = sqlite3_wal_checkpoint_v2(st->db, NULL,
	    SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		sql_warn(st, "checkpoint");
	store_free(st);
}
