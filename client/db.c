/* db: opening the database read-only (contract in db.h). */
#include "db.h"

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "regfile.h"
#include "schema.h"

#define BUSY_TIMEOUT_MS		200	/* WAL readers wait only in recovery */

/* a read that fails returns the status every command gives for it */
_Static_assert(DB_READ_FAILED == CLIENT_EXIT_DATABASE,
    "dbread.h and client.h disagree on a database that cannot be read");

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
