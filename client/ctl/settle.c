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
#include "timeparse.h"

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
	STORED_DAMAGED,	/* complete, but part of its rows could not be
			   read (a damaged page): why says how many */
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
		const char *partial = json_str(reply, "partial");

		if (partial != NULL)
			snprintf(why, len, "%s", partial);
		yajl_tree_free(reply);
		return partial != NULL ? STORED_DAMAGED : STORED;
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
say_missing(sqlite3 *db, int64_t id, const struct db_window_state *st, int64_t end_ns,
    const char *why, bool partial)
{
	char end[64], last[64], span[32], *tag = fmt_controls(st->tag, false);
	struct db_key *nw;
	bool any = false;
	size_t n;

	fmt_time_ms(end_ns, end, sizeof(end));
	warnx("window %" PRId64 " '%s' is incomplete: %s", id, tag, why);
	free(tag);
	if (db_newest_by_device(db, st->begin_ns, end_ns, &nw, &n) == -1) {
		fprintf(stderr, "spyremon: the window's samples cannot be "
		    "read: %s\n", sqlite3_errmsg(db));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t newest = nw[i].ts_ns;

		any = true;
		if (newest >= end_ns)
			continue;
		fmt_time_ms(newest, last, sizeof(last));
		fmt_span(end_ns - newest, span, sizeof(span));
		fprintf(stderr, "spyremon: card %d: no samples after %s, %s "
		    "before the window's end %s\n", nw[i].device, last, span,
		    end);
	}
	free(nw);
	if (!any)
		fprintf(stderr, "spyremon: no samples of the window are stored\n");
	if (partial)
		fprintf(stderr, "spyremon: read as far as it goes "
		    "(--partial)\n");
	else
		fprintf(stderr, "spyremon: read as far as it goes (exit "
		    "status %d)\n", CLIENT_EXIT_INCOMPLETE);
}

int
settle_window(struct client *cl, sqlite3 *db, const char *path, int64_t id,
    char *why_out, size_t len)
{
	struct db_window_state st;
	char why[512];
	const char *reason;
	enum answer a;
	int64_t end_ns;
	int rc;

	if ((rc = db_window_state(db, id, &st)) != CLIENT_EXIT_OK)
		return rc;
	if (!st.found || !st.known || st.complete)
		return CLIENT_EXIT_OK;
	if (st.incomplete[0] != '\0') {
		say_missing(db, id, &st, st.end_ns, st.incomplete,
		    cl->partial);
		if (why_out != NULL)
			snprintf(why_out, len, "%s", st.incomplete);
		return CLIENT_EXIT_INCOMPLETE;
	}
	/*
	 * Ended, or open as far as the file says: the daemon may have ended
	 * it with the writes held up, and only it knows.
	 */
	/* a window cut by damage is complete: its readers say so (end_note) */
	if ((a = ask(cl, path, "window", id, why, sizeof(why), &end_ns)) ==
	    STORED_DAMAGED)
		a = STORED;
	if (a == STORED && (rc = refresh(db)) != CLIENT_EXIT_OK)
		return rc;
	if (!st.ended && a == NO_DAEMON)
		return CLIENT_EXIT_OK;		/* open, with no one to end it */
	/* what it says now, whatever the answer: it may have made it */
	if ((rc = db_window_state(db, id, &st)) != CLIENT_EXIT_OK)
		return rc;
	if (st.complete || (!st.ended && a == STORED))
		return CLIENT_EXIT_OK;
	reason = st.incomplete[0] != '\0' ? st.incomplete :
	    why[0] != '\0' ? why : "spyremond has not stored it yet";
	say_missing(db, id, &st, st.ended ? st.end_ns : end_ns, reason,
	    cl->partial);
	if (why_out != NULL)
		snprintf(why_out, len, "%s", reason);
	return CLIENT_EXIT_INCOMPLETE;
}

int
settle_ended(struct client *cl, int64_t id)
{
	char why[512];
	int64_t end_ns;

	switch (ask(cl, NULL, "window", id, why, sizeof(why), &end_ns)) {
	case STORED:
		return CLIENT_EXIT_OK;
	case STORED_DAMAGED:
		warnx("window %" PRId64 " is complete, but %s (exit status %d)",
		    id, why, CLIENT_EXIT_PARTIAL);
		return CLIENT_EXIT_PARTIAL;
	default:
		break;
	}
	warnx("window %" PRId64 " is not complete yet: %s (exit status %d)",
	    id, why, CLIENT_EXIT_INCOMPLETE);
	return CLIENT_EXIT_INCOMPLETE;
}

int
settle_pending(struct client *cl, sqlite3 *db, const char *path)
{
	int64_t ids[64];
	size_t n;
	int rc, worst = CLIENT_EXIT_OK;

	n = db_windows_pending(db, ids, sizeof(ids) / sizeof(ids[0]));
	for (size_t i = 0; i < n; i++) {
		rc = settle_window(cl, db, path, ids[i], NULL, 0);
		if (rc == CLIENT_EXIT_INCOMPLETE)
			worst = rc;
		else if (rc != CLIENT_EXIT_OK)
			return rc;
	}
	return worst;
}

int
settle_span(struct client *cl, sqlite3 *db, const char *path,
    int64_t through_ns)
{
	char why[512], at[64];
	enum answer a;
	int64_t t;

	if (!db_span_open(db, through_ns))
		return CLIENT_EXIT_OK;
	if ((a = ask(cl, path, "through_ns", through_ns, why, sizeof(why),
	    &t)) == STORED || a == STORED_DAMAGED)
		return refresh(db);
	if (a == NO_DAEMON)
		return CLIENT_EXIT_OK;
	fmt_time_ms(through_ns, at, sizeof(at));
	warnx("the samples up to %s are not all stored: %s", at, why);
	if (cl->partial)
		fprintf(stderr, "spyremon: read as far as it goes "
		    "(--partial)\n");
	else
		fprintf(stderr, "spyremon: read as far as it goes (exit "
		    "status %d)\n", CLIENT_EXIT_INCOMPLETE);
	return CLIENT_EXIT_INCOMPLETE;
}
