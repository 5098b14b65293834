/*
 * db: opening spyremond's database read-only (spyremon-schema(5)); what
 * is read from it once open is query/'s (dbread.h, included here).
 *
 * The database is opened read-only through a URI, so members of group
 * spyremon can read it by its file modes, and a copy from another host can
 * be read too.  In WAL mode readers never block the daemon's writes nor
 * wait for them; everything a command reads comes from one read
 * transaction, one consistent snapshot.
 *
 * Functions returning int give CLIENT_EXIT_OK, or CLIENT_EXIT_DATABASE
 * after printing the error.
 */
#ifndef SPYREMON_DB_H
#define SPYREMON_DB_H

#include <sqlite3.h>

#include "dbread.h"

/*
 * The oldest schema version the client reads: version 3 only added the
 * imports table, and a version 2 database simply has no coarse samples.
 */
#define DB_MIN_VERSION		2

/*
 * Open path read-only and start a read transaction.  A database in WAL
 * mode whose -wal file is absent (the daemon is not running) and whose
 * directory the caller cannot write is opened as immutable instead.
 * Databases that are not spyremon's, or of a schema version before
 * DB_MIN_VERSION or after this build's, are refused.
 */
int db_open(const char *path, sqlite3 **out);

/* End the transaction and close; NULL is a no-op. */
void db_close(sqlite3 *db);

#endif
