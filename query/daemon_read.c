/*
 * daemon_read: the daemon table, read and judged (contracts in dbread.h).
 * The store reads it as the daemon starts, to learn whether the one
 * before it died; every reader, to learn whether an open window's daemon
 * is gone.
 */
#include "dbread.h"

#include <stdio.h>
#include <string.h>

#include "pragma.h"
#include "schema.h"

/* Column i of s into buf (len bytes), "" for NULL. */
static void
text_at(sqlite3_stmt *s, int i, char *buf, size_t len)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	snprintf(buf, len, "%s", t != NULL ? (const char *)t : "");
}

int
db_daemon_read(sqlite3 *db, struct db_daemon *out)
{
	sqlite3_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = sql_table_exists(db, SCHEMA_T_DAEMON)) != 1)
		return rc == 0 ? 0 : -1;
	if (sqlite3_prepare_v2(db, "SELECT pid, start_ticks, boot_id, pidns, "
	    "hostname, machine_id, started_ns, alive_ns, stopped_ns FROM "
	    SCHEMA_T_DAEMON " WHERE id = 1", -1, &s, NULL) != SQLITE_OK)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		out->recorded = true;
		out->id.pid = sqlite3_column_int(s, 0);
		out->id.start_ticks = sqlite3_column_int64(s, 1);
		text_at(s, 2, out->id.boot_id, sizeof(out->id.boot_id));
		out->id.pidns = (uint64_t)sqlite3_column_int64(s, 3);
		text_at(s, 4, out->id.hostname, sizeof(out->id.hostname));
		text_at(s, 5, out->id.machine_id, sizeof(out->id.machine_id));
		out->started_ns = sqlite3_column_int64(s, 6);
		out->alive_ns = sqlite3_column_int64(s, 7);
		out->stopped = sqlite3_column_type(s, 8) != SQLITE_NULL;
		out->stopped_ns = sqlite3_column_int64(s, 8);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

enum db_daemon_liveness
db_daemon_judge(const struct db_daemon *d, char *why, size_t len)
{
	struct daemonid here;

	why[0] = '\0';
	if (!d->recorded)
		return DB_DAEMON_RUNS;
	if (d->stopped)
		return DB_DAEMON_STOPPED;
	daemonid_self(&here);
	switch (daemonid_check(&d->id, &here, why, len)) {
	case DAEMONID_ALIVE:
		return DB_DAEMON_RUNS;
	case DAEMONID_GONE:
		return DB_DAEMON_DIED;
	case DAEMONID_UNKNOWN:
	default:
		return DB_DAEMON_UNKNOWN;
	}
}
