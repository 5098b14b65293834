/*
 * settle: a reader waits for a window to be complete, or says what is
 * missing (contract in settle.h).
 */
#include "settle.h"

#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yajl/yajl_gen.h>

#include "client.h"
#include "ctl.h"
#include "db.h"
#include "format.h"
#include "json.h"
#include "jsonw.h"
#include "proto.h"
#include "schema.h"
#include "timeparse.h"

/* An ended window's completeness as db's snapshot has it. */
struct state {
	bool found, ended, complete;
	bool known;		/* the schema records completeness (9 on) */
	char tag[PROTO_TAG_MAX + 1];
	int64_t begin_ns, end_ns;
	char incomplete[256];	/* why it never will be, "" if not said */
};

static int
read_state(sqlite3 *db, int64_t id, struct state *out)
{
	sqlite3_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(db, "SELECT tag, begin_ns, end_ns, "
	    SCHEMA_C_COMPLETE ", " SCHEMA_C_INCOMPLETE " FROM "
	    SCHEMA_T_WINDOWS " WHERE id = ?1", -1, &s, NULL) != SQLITE_OK) {
		/* before schema 9: no completeness recorded */
		out->found = out->ended = out->complete = true;
		return CLIENT_EXIT_OK;
	}
	out->known = true;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		out->found = true;
		snprintf(out->tag, sizeof(out->tag), "%s",
		    (const char *)sqlite3_column_text(s, 0));
		out->begin_ns = sqlite3_column_int64(s, 1);
		out->ended = sqlite3_column_type(s, 2) != SQLITE_NULL;
		out->end_ns = sqlite3_column_int64(s, 2);
		out->complete = sqlite3_column_type(s, 3) != SQLITE_NULL;
		if (sqlite3_column_type(s, 4) != SQLITE_NULL)
			snprintf(out->incomplete, sizeof(out->incomplete), "%s",
			    (const char *)sqlite3_column_text(s, 4));
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(db, "the window's state");
	return CLIENT_EXIT_OK;
}

/* End db's read transaction and begin another: the daemon stored more. */
static int
refresh(sqlite3 *db)
{
	if (sqlite3_exec(db, "COMMIT; BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(db, "a new snapshot");
	return CLIENT_EXIT_OK;
}

/* What the daemon said to a sync. */
enum answer {
	STORED,		/* all is stored (or the window is still open) */
	NOT_YET,	/* not within the wait: why says what is missing */
	NO_DAEMON,	/* none to ask, or it writes another database: why */
};

/*
 * Ask the daemon of cl to store what covers the window or the time, at
 * most --wait; path, if not NULL, is the database the caller reads, which
 * must be the daemon's.  With NOT_YET, *through_ns is the time it stores
 * through (a window's end), 0 if it did not say.
 */
static enum answer
ask(struct client *cl, const char *path, const char *key, int64_t value,
    char *why, size_t len, int64_t *through_ns)
{
	int64_t wait_ns = cl->wait_set ? cl->wait_ns : SETTLE_WAIT_DEFAULT_NS;
	int64_t wait_ms = wait_ns / (int64_t)NSEC_PER_MSEC;
	const char *socket, *code;
	struct stat sb;
	yajl_val reply = NULL;
	yajl_gen g;
	int rc;

	if (wait_ms > PROTO_MAX_WAIT_MS)
		wait_ms = PROTO_MAX_WAIT_MS;
	*through_ns = 0;
	if (path != NULL && stat(path, &sb) == -1) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return NO_DAEMON;
	}
	if ((socket = client_socket(cl)) == NULL) {
		snprintf(why, len, "no socket to ask spyremond on");
		return NO_DAEMON;
	}
	g = ctl_request_new("sync");
	jsonw_put_int(g, key, value);
	jsonw_put_int(g, "wait_ms", wait_ms);
	if (path != NULL) {
		jsonw_str(g, "db");
		yajl_gen_map_open(g);
		jsonw_put_int(g, "dev", (int64_t)sb.st_dev);
		jsonw_put_int(g, "ino", (int64_t)sb.st_ino);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	/* the daemon answers within wait_ms; the rest is the usual margin */
	rc = ctl_ask(socket, g, (int)wait_ms + CTL_TIMEOUT_MS, why, len,
	    &reply);
	yajl_gen_free(g);
	if (rc == CLIENT_EXIT_OK) {
		yajl_tree_free(reply);
		return STORED;
	}
	code = reply != NULL ? json_str(reply, "error") : NULL;
	if (code != NULL && strcmp(code, PROTO_E_INCOMPLETE) == 0) {
		(void)json_int(reply, "through_ns", through_ns);
		yajl_tree_free(reply);
		return NOT_YET;
	}
	if (code != NULL && strcmp(code, PROTO_E_OTHER_DB) == 0)
		snprintf(why, len, "no spyremond writes %s (the one on %s "
		    "writes another database)", path, socket);
	else if (code == NULL && rc == CLIENT_EXIT_DAEMON)
		snprintf(why + strlen(why), len - strlen(why), "; without "
		    "spyremond its last samples cannot be stored");
	yajl_tree_free(reply);
	/* an old daemon, a refusal: it cannot help this reader either */
	return NO_DAEMON;
}

/*
 * Say what of window id (in state st, ending at end_ns) db holds: for each
 * card, whether its samples reach the end, and where they stop if not.
 */
static void
say_missing(sqlite3 *db, int64_t id, const struct state *st, int64_t end_ns,
    const char *why)
{
	char end[64], last[64], span[32], *tag = fmt_controls(st->tag, false);
	sqlite3_stmt *s;
	bool any = false;

	fmt_time_ms(end_ns, end, sizeof(end));
	warnx("window %" PRId64 " '%s' is incomplete: %s", id, tag, why);
	free(tag);
	if (sqlite3_prepare_v2(db, "SELECT device, max(ts_ns) FROM "
	    SCHEMA_T_SAMPLES " WHERE ts_ns > ?1 AND ts_ns < ?3 GROUP BY device "
	    "ORDER BY device", -1, &s, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(s, 1, st->begin_ns);
	sqlite3_bind_int64(s, 3, end_ns + DB_MAX_INTERVAL_NS);
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t newest = sqlite3_column_int64(s, 1);

		any = true;
		if (newest >= end_ns)
			continue;
		fmt_time_ms(newest, last, sizeof(last));
		fmt_span(end_ns - newest, span, sizeof(span));
		fprintf(stderr, "spyremon: card %d: no samples after %s, %s "
		    "before the window's end %s\n", sqlite3_column_int(s, 0),
		    last, span, end);
	}
	sqlite3_finalize(s);
	if (!any)
		fprintf(stderr, "spyremon: no samples of the window are stored\n");
	fprintf(stderr, "spyremon: read as far as it goes (exit status %d)\n",
	    CLIENT_EXIT_INCOMPLETE);
}

int
settle_window(struct client *cl, sqlite3 *db, const char *path, int64_t id,
    char *why_out, size_t len)
{
	struct state st;
	char why[512];
	const char *reason;
	enum answer a;
	int64_t end_ns;
	int rc;

	if ((rc = read_state(db, id, &st)) != CLIENT_EXIT_OK)
		return rc;
	if (!st.found || !st.known || st.complete)
		return CLIENT_EXIT_OK;
	if (st.incomplete[0] != '\0') {
		say_missing(db, id, &st, st.end_ns, st.incomplete);
		if (why_out != NULL)
			snprintf(why_out, len, "%s", st.incomplete);
		return CLIENT_EXIT_INCOMPLETE;
	}
	/*
	 * Ended, or open as far as the file says: the daemon may have ended
	 * it with the writes held up, and only it knows.
	 */
	a = ask(cl, path, "window", id, why, sizeof(why), &end_ns);
	if (a == STORED && (rc = refresh(db)) != CLIENT_EXIT_OK)
		return rc;
	if (!st.ended && a == NO_DAEMON)
		return CLIENT_EXIT_OK;		/* open, with no one to end it */
	/* what it says now, whatever the answer: it may have made it */
	if ((rc = read_state(db, id, &st)) != CLIENT_EXIT_OK)
		return rc;
	if (st.complete || (!st.ended && a == STORED))
		return CLIENT_EXIT_OK;
	reason = st.incomplete[0] != '\0' ? st.incomplete :
	    why[0] != '\0' ? why : "spyremond has not stored it yet";
	say_missing(db, id, &st, st.ended ? st.end_ns : end_ns, reason);
	if (why_out != NULL)
		snprintf(why_out, len, "%s", reason);
	return CLIENT_EXIT_INCOMPLETE;
}

int
settle_ended(struct client *cl, int64_t id)
{
	char why[512];
	int64_t end_ns;

	if (ask(cl, NULL, "window", id, why, sizeof(why), &end_ns) == STORED)
		return CLIENT_EXIT_OK;
	warnx("window %" PRId64 " is not complete yet: %s (exit status %d)",
	    id, why, CLIENT_EXIT_INCOMPLETE);
	return CLIENT_EXIT_INCOMPLETE;
}

int
settle_pending(struct client *cl, sqlite3 *db, const char *path)
{
	sqlite3_stmt *s;
	int64_t ids[64];
	size_t n = 0;
	int rc, worst = CLIENT_EXIT_OK;

	/* before schema 9 the statement fails: nothing is pending then */
	if (sqlite3_prepare_v2(db, "SELECT id FROM " SCHEMA_T_WINDOWS
	    " WHERE end_ns IS NOT NULL AND " SCHEMA_C_COMPLETE " IS NULL AND "
	    SCHEMA_C_INCOMPLETE " IS NULL ORDER BY id DESC LIMIT 64", -1, &s,
	    NULL) != SQLITE_OK)
		return CLIENT_EXIT_OK;
	while (sqlite3_step(s) == SQLITE_ROW)
		ids[n++] = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	for (size_t i = 0; i < n; i++) {
		rc = settle_window(cl, db, path, ids[i], NULL, 0);
		if (rc == CLIENT_EXIT_INCOMPLETE)
			worst = rc;
		else if (rc != CLIENT_EXIT_OK)
			return rc;
	}
	return worst;
}

/*
 * True if some card whose samples reach within a few seconds of t has no
 * sample stamped at or after t in db: samples covering t may be queued.
 */
static bool
span_open(sqlite3 *db, int64_t t)
{
	sqlite3_stmt *s;
	bool open = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM (SELECT device, max(ts_ns) "
	    "AS newest, max(interval_ms) AS iv FROM " SCHEMA_T_SAMPLES
	    " WHERE ts_ns > ?1 - ?2 GROUP BY device) WHERE newest < ?1 AND "
	    "newest >= ?1 - 2 * iv * 1000000 - ?3 LIMIT 1", -1, &s,
	    NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(s, 1, t);
	sqlite3_bind_int64(s, 2, 2 * DB_MAX_INTERVAL_NS);
	sqlite3_bind_int64(s, 3, 2 * (int64_t)NSEC_PER_SEC);
	open = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return open;
}

int
settle_span(struct client *cl, sqlite3 *db, const char *path,
    int64_t through_ns)
{
	char why[512], at[64];
	enum answer a;
	int64_t t;

	if (!span_open(db, through_ns))
		return CLIENT_EXIT_OK;
	if ((a = ask(cl, path, "through_ns", through_ns, why, sizeof(why),
	    &t)) == STORED)
		return refresh(db);
	if (a == NO_DAEMON)
		return CLIENT_EXIT_OK;
	fmt_time_ms(through_ns, at, sizeof(at));
	warnx("the samples up to %s are not all stored: %s", at, why);
	fprintf(stderr, "spyremon: read as far as it goes (exit status %d)\n",
	    CLIENT_EXIT_INCOMPLETE);
	return CLIENT_EXIT_INCOMPLETE;
}
