/*
 * store_daemon: the daemon table (schema version 10, spyremon-schema(5)):
 * which spyremond writes the database, that it is alive, that it stopped
 * cleanly; and, read as it starts, whether the one before it died with
 * windows open (contracts in store.h and store_priv.h).
 *
 * Only the daemon's store (store_open) records itself; import and the
 * tools write through storedb_open's and leave the table alone.  The row
 * is replaced at each start; alive_ns moves with every flush of rows, in
 * the flush's own transaction, so it costs no commit of its own.
 */
#include "store_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dbread.h"
#include "schema.h"
#include "timeparse.h"

int
store_db_daemon_record(struct store *st)
{
	const struct daemonid *me = &st->self;
	int64_t now = now_realtime_ns();
	sqlite3_stmt *s;

	if (sql_prepare(st, "INSERT OR REPLACE INTO " SCHEMA_T_DAEMON " (id, "
	    "pid, start_ticks, boot_id, pidns, hostname, machine_id, "
	    "started_ns, alive_ns, stopped_ns) VALUES (1, ?1, ?2, ?3, ?4, ?5, "
	    "?6, ?7, ?7, NULL)", &s) == -1)
		return -1;
	sqlite3_bind_int(s, 1, me->pid);
	sqlite3_bind_int64(s, 2, me->start_ticks);
	sqlite3_bind_text(s, 3, me->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, (int64_t)me->pidns);
	sqlite3_bind_text(s, 5, me->hostname, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, me->machine_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 7, now);
	if (sql_finish(st, s, sqlite3_step(s), "record the daemon") == -1)
		return -1;
	st->daemon_recorded = true;
	return 0;
}

/* Say in st->prev why the windows of the daemon before, which died, end. */
static void
prev_note(struct store *st, const struct db_daemon *d, const char *why)
{
	char alive[64];

	format_time_utc(d->alive_ns, alive, sizeof(alive));
	snprintf(st->prev.note, sizeof(st->prev.note), "daemon restart: "
	    "spyremond %" PRId32 " that held it was gone (%s), last seen "
	    "writing at %s; ended at the last stored sample", d->id.pid, why,
	    alive);
}

int
store_db_daemon_start(struct store *st)
{
	struct db_daemon d;
	char why[192];

	memset(&st->prev, 0, sizeof(st->prev));
	daemonid_self(&st->self);
	if (db_daemon_read(st->db, &d) == -1) {
		sql_warn(st, "read the daemon before");
		return -1;
	}
	switch (db_daemon_judge(&d, why, sizeof(why))) {
	case DB_DAEMON_DIED:
		st->prev.died = true;
		st->prev.pid = d.id.pid;
		st->prev.alive_ns = d.alive_ns;
		/* nothing of this daemon is written yet */
		if (db_newest_stamp(st->db, INT64_MAX,
		    &st->prev.last_sample_ns) != 0)
			return -1;
		prev_note(st, &d, why);
		log_warnx("%s: spyremond %" PRId32 " stopped without a clean "
		    "stop (%s)", st->path, d.id.pid, why);
		break;
	case DB_DAEMON_UNKNOWN:
		log_warnx("%s: spyremond %" PRId32 " did not stop cleanly, and "
		    "whether it still runs cannot be checked (%s); its open "
		    "windows stay open", st->path, d.id.pid, why);
		break;
	case DB_DAEMON_RUNS:
		if (d.recorded && d.id.pid != st->self.pid)
			log_warnx("%s: spyremond %" PRId32 " still runs and "
			    "may write it too", st->path, d.id.pid);
		break;
	case DB_DAEMON_STOPPED:
	default:
		break;
	}
	if (d.recorded)
		st->prev.last_write_ns = d.stopped && d.stopped_ns > d.alive_ns ?
		    d.stopped_ns : d.alive_ns;
	return store_db_daemon_record(st);
}

int
store_db_daemon_alive(struct store *st, int64_t now_ns)
{
	sqlite3_stmt *s;
	int rc;

	if (!st->daemon_recorded)
		return SQLITE_OK;
	if (sqlite3_prepare_v2(st->db, "UPDATE " SCHEMA_T_DAEMON " SET "
	    "alive_ns = ?1 WHERE id = 1 AND pid = ?2", -1, &s, NULL) !=
	    SQLITE_OK)
		return sqlite3_errcode(st->db);
	sqlite3_bind_int64(s, 1, now_ns);
	sqlite3_bind_int(s, 2, st->self.pid);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

void
store_db_daemon_stopped(struct store *st)
{
	int64_t now = now_realtime_ns();
	sqlite3_stmt *s;

	if (!st->daemon_recorded || st->db == NULL)
		return;
	if (sql_prepare(st, "UPDATE " SCHEMA_T_DAEMON " SET alive_ns = ?1, "
	    "stopped_ns = ?1 WHERE id = 1 AND pid = ?2", &s) == -1)
		return;
	sqlite3_bind_int64(s, 1, now);
	sqlite3_bind_int(s, 2, st->self.pid);
	(void)sql_finish(st, s, sqlite3_step(s), "record the clean stop");
}

void
store_previous_daemon(struct store *st, struct store_prev_daemon *out)
{
	/* written before the writer thread started, read-only since */
	*out = st->prev;
}
