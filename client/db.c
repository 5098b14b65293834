/* db: the database, read-only (contract in db.h). */
#include "db.h"

#include <err.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bestsrc.h"
#include "client.h"
#include "regfile.h"
#include "schema.h"
#include "sql.h"

#define BUSY_TIMEOUT_MS		200	/* WAL readers wait only in recovery */
#define MAX_DECIMALS		18

struct db_devmap_entry {
	int device;
	int64_t since_ns;
	char *bus_id;
};

int
db_error(sqlite3 *db, const char *what)
{
	warnx("cannot read %s: %s", what, sqlite3_errmsg(db));
	return CLIENT_EXIT_DATABASE;
}

int
db_preparef(sqlite3 *db, sqlite3_stmt **out, const char *what,
    const char *fmt, ...)
{
	va_list ap;
	char *sql;
	int rc;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (sql == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	rc = sqlite3_prepare_v2(db, sql, -1, out, NULL);
	sqlite3_free(sql);
	return rc == SQLITE_OK ? CLIENT_EXIT_OK : db_error(db, what);
}

int
db_oldest_cover(sqlite3 *db, int64_t *from_ns, bool *found)
{
	sqlite3_stmt *s;
	int rc;

	*found = false;
	/* the primary key's first row: one seek */
	if (sqlite3_prepare_v2(db, "SELECT ts_ns - interval_ms * 1000000 FROM "
	    "samples ORDER BY ts_ns LIMIT 1", -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the samples");
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*from_ns = sqlite3_column_int64(s, 0);
		*found = true;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? CLIENT_EXIT_OK :
	    db_error(db, "the samples");
}

/*
 * "file:PATH?params" with the characters a URI gives meaning to escaped.
 * An absolute path gets an empty authority ("file:///..."), so one that
 * begins with "//" is not taken for a host.
 */
static char *
uri_for(const char *path, const char *params)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendall(s, path[0] == '/' ? "file://" : "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#' || *p <= 0x20 ||
		    *p >= 0x7f)
			sqlite3_str_appendf(s, "%%%02X", *p);
		else
			sqlite3_str_appendchar(s, 1, (char)*p);
	}
	sqlite3_str_appendf(s, "?%s", params);
	return sqlite3_str_finish(s);
}

/* Open with params and read the schema version; SQLite's result code. */
static int
try_open(const char *path, const char *params, sqlite3 **out, int *version)
{
	char *uri = uri_for(path, params);
	sqlite3_stmt *s = NULL;
	int rc;

	if (uri == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	/* one thread: no mutex around every sqlite3_column_* of an export */
	rc = sqlite3_open_v2(uri, out, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
	    SQLITE_OPEN_NOMUTEX, NULL);
	sqlite3_free(uri);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_busy_timeout(*out, BUSY_TIMEOUT_MS);
	if ((rc = sqlite3_exec(*out, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK ||
	    (rc = sqlite3_prepare_v2(*out, "PRAGMA user_version", -1, &s,
	    NULL)) != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*version = sqlite3_column_int(s, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(s);
	return rc;
}

/* True if the database has no -wal file, so no writer has it open. */
static bool
no_wal(const char *path)
{
	char wal[4096];

	snprintf(wal, sizeof(wal), "%s-wal", path);
	return access(wal, F_OK) == -1 && errno == ENOENT;
}

static int
check_version(const char *path, int version, sqlite3 *db)
{
	sqlite3_stmt *s;
	int tables = 0;

	if (version >= DB_MIN_VERSION && version <= SCHEMA_VERSION)
		return CLIENT_EXIT_OK;
	if (version > SCHEMA_VERSION) {
		warnx("%s: schema version %d is newer than this spyremon's %d",
		    path, version, SCHEMA_VERSION);
		return CLIENT_EXIT_DATABASE;
	}
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1,
	    &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		tables = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (version == 0 && tables == 0)
		warnx("%s: not a spyremon database (it is empty)", path);
	else if (version == 0)
		warnx("%s: not a spyremon database", path);
	else
		warnx("%s: schema version %d is older than %d; start "
		    "spyremond on it once to bring it up to date", path,
		    version, DB_MIN_VERSION);
	return CLIENT_EXIT_DATABASE;
}

int
db_open(const char *path, sqlite3 **out)
{
	struct stat sb;
	sqlite3 *db = NULL;
	char why[256];
	mode_t kind;
	int fd, rc, version = 0;

	*out = NULL;
	/*
	 * SQLite says only "unable to open database file", and its own open
	 * of a FIFO blocks for good: open it here first, without blocking,
	 * and go on only with a regular file (regfile.h).
	 */
	if ((fd = regfile_open(path, false, &sb, &kind, why, sizeof(why))) == -1) {
		if (kind == 0 && errno == EACCES)
			warnx("cannot open the database %s: %s: are you in "
			    "group spyremon?", path, why);
		else
			warnx("cannot open the database %s: %s", path, why);
		return CLIENT_EXIT_DATABASE;
	}
	close(fd);
	rc = try_open(path, "mode=ro", &db, &version);
	/*
	 * Reading a WAL database needs its -wal and -shm files; a reader
	 * that may not create them fails.  Without a -wal file nobody is
	 * writing, and the file can be read as it is.
	 */
	if (((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) &&
	    no_wal(path)) {
		sqlite3_close(db);
		db = NULL;
		rc = try_open(path, "immutable=1", &db, &version);
	}
	if (rc != SQLITE_OK) {
		warnx("cannot read the database %s: %s", path,
		    db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close(db);
		return CLIENT_EXIT_DATABASE;
	}
	if ((rc = check_version(path, version, db)) != CLIENT_EXIT_OK) {
		db_close(db);
		return rc;
	}
	*out = db;
	return CLIENT_EXIT_OK;
}

void
db_close(sqlite3 *db)
{
	if (db == NULL)
		return;
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
}

static char *
column_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	char *p = strdup(t != NULL ? (const char *)t : "");

	if (p == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	return p;
}

/* arr of n elements of size sz, grown by one zeroed element. */
static void *
grow(void *arr, size_t n, size_t sz)
{
	char *p;

	if ((p = reallocarray(arr, n + 1, sz)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	memset(p + n * sz, 0, sz);
	return p;
}

int
db_catalog_load(sqlite3 *db, struct db_catalog *cat)
{
	sqlite3_stmt *s;
	int rc;

	cat->m = NULL;
	cat->n = 0;
	if (sqlite3_prepare_v2(db, "SELECT key, unit, col, decimals, reliable "
	    "FROM " SCHEMA_T_METRICS " ORDER BY id", -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the metric catalog");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_metric *m;

		cat->m = grow(cat->m, cat->n, sizeof(*m));
		m = &cat->m[cat->n++];

		m->key = column_dup(s, 0);
		m->unit = column_dup(s, 1);
		m->col = column_dup(s, 2);
		m->decimals = sqlite3_column_int(s, 3);
		m->reliable = sqlite3_column_int(s, 4) != 0;
		if (m->decimals < 0 || m->decimals > MAX_DECIMALS) {
			warnx("the metric catalog gives %s %d decimals; "
			    "0 to %d are possible", m->key, m->decimals,
			    MAX_DECIMALS);
			sqlite3_finalize(s);
			return CLIENT_EXIT_DATABASE;
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? CLIENT_EXIT_OK :
	    db_error(db, "the metric catalog");
}

const struct db_metric *
db_catalog_find(const struct db_catalog *cat, const char *key)
{
	for (size_t i = 0; i < cat->n; i++)
		if (strcmp(cat->m[i].key, key) == 0)
			return &cat->m[i];
	return NULL;
}

void
db_catalog_free(struct db_catalog *cat)
{
	for (size_t i = 0; i < cat->n; i++) {
		free(cat->m[i].key);
		free(cat->m[i].unit);
		free(cat->m[i].col);
	}
	free(cat->m);
	cat->m = NULL;
	cat->n = 0;
}

int
db_devmap_load(sqlite3 *db, struct db_devmap *map)
{
	sqlite3_stmt *s;
	int rc;

	map->e = NULL;
	map->n = 0;
	if (sqlite3_prepare_v2(db, "SELECT device, since_ns, bus_id FROM "
	    SCHEMA_T_DEVICE_MAP " ORDER BY device, since_ns", -1, &s,
	    NULL) != SQLITE_OK)
		return db_error(db, "the device map");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_devmap_entry *e;

		map->e = grow(map->e, map->n, sizeof(*e));
		e = &map->e[map->n++];

		e->device = sqlite3_column_int(s, 0);
		e->since_ns = sqlite3_column_int64(s, 1);
		e->bus_id = column_dup(s, 2);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? CLIENT_EXIT_OK :
	    db_error(db, "the device map");
}

const char *
db_devmap_bus_id(const struct db_devmap *map, int device, int64_t ts_ns)
{
	const char *found = "";

	/* few entries: only changes are recorded */
	for (size_t i = 0; i < map->n; i++) {
		if (map->e[i].device != device)
			continue;
		if (map->e[i].since_ns > ts_ns)
			break;
		found = map->e[i].bus_id;
	}
	return found;
}

void
db_devmap_free(struct db_devmap *map)
{
	for (size_t i = 0; i < map->n; i++)
		free(map->e[i].bus_id);
	free(map->e);
	map->e = NULL;
	map->n = 0;
}

int
db_windows(sqlite3 *db, const struct db_window_filter *f,
    struct db_window **out, size_t *n)
{
	char sql[512];
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(sql, sizeof(sql), "SELECT id, tag, uid, pid, begin_ns, end_ns, "
	    "auto_closed, meta FROM " SCHEMA_T_WINDOWS " WHERE "
	    "(?1 IS NULL OR id = ?1) AND (?2 IS NULL OR tag = ?2) AND "
	    "(?3 IS NULL OR end_ns IS NULL OR end_ns >= ?3) "
	    "ORDER BY begin_ns %s, id %s", f->newest_first ? "DESC" : "ASC",
	    f->newest_first ? "DESC" : "ASC");
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the windows");
	if (f->by_id)
		sqlite3_bind_int64(s, 1, f->id);
	if (f->tag != NULL)
		sqlite3_bind_text(s, 2, f->tag, -1, SQLITE_STATIC);
	if (f->have_since)
		sqlite3_bind_int64(s, 3, f->since_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_window *w;

		*out = grow(*out, *n, sizeof(*w));
		w = &(*out)[(*n)++];

		w->id = sqlite3_column_int64(s, 0);
		w->tag = column_dup(s, 1);
		w->uid = (uint32_t)sqlite3_column_int64(s, 2);
		w->pid = sqlite3_column_int(s, 3);
		w->begin_ns = sqlite3_column_int64(s, 4);
		w->open = sqlite3_column_type(s, 5) == SQLITE_NULL;
		w->end_ns = w->open ? 0 : sqlite3_column_int64(s, 5);
		w->auto_closed = sqlite3_column_int(s, 6) != 0;
		w->meta = column_dup(s, 7);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_windows_free(*out, *n);
		*out = NULL;
		*n = 0;
		return db_error(db, "the windows");
	}
	return CLIENT_EXIT_OK;
}

void
db_windows_free(struct db_window *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(w[i].tag);
		free(w[i].meta);
	}
	free(w);
}

static int
cmp_range(const void *a, const void *b)
{
	const struct db_coarse_range *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->first_ns != y->first_ns)
		return x->first_ns < y->first_ns ? -1 : 1;
	return 0;
}

/* Sort c's runs and merge those of a device that overlap. */
static void
coarse_merge(struct db_coarse *c)
{
	size_t k = 0;

	if (c->n == 0)
		return;
	qsort(c->r, c->n, sizeof(*c->r), cmp_range);
	for (size_t i = 1; i < c->n; i++) {
		struct db_coarse_range *last = &c->r[k];

		if (c->r[i].device == last->device &&
		    c->r[i].first_ns <= last->last_ns) {
			if (c->r[i].last_ns > last->last_ns)
				last->last_ns = c->r[i].last_ns;
		} else
			c->r[++k] = c->r[i];
	}
	c->n = k + 1;
}

int
db_coarse_load(sqlite3 *db, int64_t lo_ns, int64_t hi_ns, struct db_coarse *c)
{
	sqlite3_stmt *s;
	int rc, version = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s,
	    NULL) != SQLITE_OK)
		return db_error(db, "the schema version");
	if (sqlite3_step(s) == SQLITE_ROW)
		version = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (version < 3)
		return CLIENT_EXIT_OK;
	if (sqlite3_prepare_v2(db, "SELECT device, first_ns, last_ns FROM "
	    SCHEMA_T_IMPORTS " WHERE coarse != 0 AND first_ns <= ?2 AND "
	    "last_ns >= ?1", -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the imports");
	sqlite3_bind_int64(s, 1, lo_ns);
	sqlite3_bind_int64(s, 2, hi_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_coarse_range *r;

		c->r = grow(c->r, c->n, sizeof(*r));
		r = &c->r[c->n++];
		r->device = sqlite3_column_int(s, 0);
		r->first_ns = sqlite3_column_int64(s, 1);
		r->last_ns = sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_error(db, "the imports");
	coarse_merge(c);
	return CLIENT_EXIT_OK;
}

size_t
db_key_search(size_t n, struct db_key (*key_at)(const void *ctx, size_t i),
    const void *ctx, struct db_key k, bool inclusive)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct db_key m = key_at(ctx, mid);

		if (m.device < k.device || (m.device == k.device &&
		    (m.ts_ns < k.ts_ns || (!inclusive && m.ts_ns == k.ts_ns))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct db_key
coarse_key(const void *ctx, size_t i)
{
	const struct db_coarse_range *r = &((const struct db_coarse *)ctx)->r[i];

	return (struct db_key){ r->device, r->first_ns };
}

bool
db_coarse_has(const struct db_coarse *c, int device, int64_t ts_ns)
{
	/* the last run at or before (device, ts_ns) */
	size_t lo = db_key_search(c->n, coarse_key, c,
	    (struct db_key){ device, ts_ns }, false);

	return lo > 0 && c->r[lo - 1].device == device &&
	    c->r[lo - 1].last_ns >= ts_ns;
}

void
db_coarse_free(struct db_coarse *c)
{
	free(c->r);
	c->r = NULL;
	c->n = 0;
}

int
db_count_samples(sqlite3 *db, int64_t lo_ns, int64_t hi_ns, int64_t *count)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM " SCHEMA_T_SAMPLES
	    " WHERE " DB_OVERLAPS_SQL, -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the samples");
	sqlite3_bind_int64(s, 1, lo_ns);
	sqlite3_bind_int64(s, 2, hi_ns);
	sqlite3_bind_int64(s, 3, hi_ns + DB_MAX_INTERVAL_NS);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*count = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? CLIENT_EXIT_OK : db_error(db, "the samples");
}

void
db_window_filter_name(struct db_window_filter *f, const char *name)
{
	char *end;

	if (*name >= '0' && *name <= '9') {
		errno = 0;
		f->id = strtoll(name, &end, 10);
		if (errno == 0 && *end == '\0') {
			f->by_id = true;
			return;
		}
	}
	f->by_id = false;
	f->tag = name;
}

sqlite3_stmt *
db_select_samples(sqlite3 *db, const struct db_metric *const *cols,
    size_t ncols, const char *device_sql, bool ordered)
{
	sqlite3_str *q = sqlite3_str_new(db);
	sqlite3_stmt *s = NULL;
	const char **names;
	struct bestsrc b;
	char *sql;

	if ((names = calloc(ncols > 0 ? ncols : 1, sizeof(*names))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < ncols; i++)
		names[i] = cols[i] != NULL ? cols[i]->col : NULL;
	if (bestsrc_init(db, &b, names, ncols) == -1) {
		free(names);
		sqlite3_free(sqlite3_str_finish(q));
		return NULL;
	}
	bestsrc_with(q, &b, DB_OVERLAPS_SQL);
	sqlite3_str_appendall(q, "SELECT " SCHEMA_C_TS ", " SCHEMA_C_DEVICE
	    ", " SCHEMA_C_INTERVAL);
	for (size_t i = 0; i < ncols; i++) {
		sqlite3_str_appendall(q, ", ");
		bestsrc_col(q, &b, i);
	}
	sqlite3_str_appendall(q, ", ");
	bestsrc_src(q, &b);
	sqlite3_str_appendall(q, ", ");
	bestsrc_row(q, &b);
	bestsrc_from(q, &b);
	sqlite3_str_appendf(q, " WHERE " DB_OVERLAPS_SQL "%s%s", device_sql,
	    ordered ? " ORDER BY " SCHEMA_C_TS ", " SCHEMA_C_DEVICE : "");
	free(names);
	if ((sql = sqlite3_str_finish(q)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		s = NULL;
	sqlite3_free(sql);
	return s;
}

int
db_smi_versions(sqlite3 *db, int64_t begin_ns, int64_t end_ns,
    struct db_smi_version **out, size_t *n, bool *recorded)
{
	struct db_smi_version *v = NULL, *grown;
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = sql_table_exists(db, SCHEMA_T_SMI_VERSIONS)) == -1)
		return db_error(db, "the schema");
	*recorded = rc == 1;
	if (!*recorded)
		return CLIENT_EXIT_OK;
	if (sqlite3_prepare_v2(db, "SELECT since_ns, version FROM "
	    SCHEMA_T_SMI_VERSIONS " WHERE since_ns <= ?2 AND since_ns >= "
	    "coalesce((SELECT max(since_ns) FROM " SCHEMA_T_SMI_VERSIONS
	    " WHERE since_ns <= ?1), ?1) ORDER BY since_ns", -1, &s, NULL) !=
	    SQLITE_OK)
		return db_error(db, SCHEMA_T_SMI_VERSIONS);
	sqlite3_bind_int64(s, 1, begin_ns);
	sqlite3_bind_int64(s, 2, end_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if ((grown = reallocarray(v, *n + 1, sizeof(*v))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		v = grown;
		v[*n].since_ns = sqlite3_column_int64(s, 0);
		if ((v[*n].version = column_dup(s, 1)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		(*n)++;
	}
	sqlite3_finalize(s);
	*out = v;
	if (rc != SQLITE_DONE) {
		db_smi_versions_free(v, *n);
		*out = NULL;
		*n = 0;
		return db_error(db, SCHEMA_T_SMI_VERSIONS);
	}
	return CLIENT_EXIT_OK;
}

void
db_smi_versions_free(struct db_smi_version *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].version);
	free(v);
}

int
db_host(sqlite3 *db, char **hostname, char **machine_id)
{
	sqlite3_stmt *s;
	int rc;

	*hostname = *machine_id = NULL;
	if ((rc = sql_table_exists(db, SCHEMA_T_HOST)) == -1)
		return db_error(db, "the schema");
	if (rc == 0)
		return CLIENT_EXIT_OK;
	if (sqlite3_prepare_v2(db, "SELECT hostname, machine_id FROM "
	    SCHEMA_T_HOST " WHERE id = 1", -1, &s, NULL) != SQLITE_OK)
		return db_error(db, SCHEMA_T_HOST);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*hostname = column_dup(s, 0);
		*machine_id = column_dup(s, 1);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? CLIENT_EXIT_OK :
	    db_error(db, SCHEMA_T_HOST);
}
