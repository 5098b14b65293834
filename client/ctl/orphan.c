/* orphan: an open window whose daemon is gone (contract in orphan.h). */
#include "orphan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "client.h"
#include "db.h"
#include "format.h"

int
orphan_check(const struct client *cl, sqlite3 *db, const struct db_window *w,
    int64_t *end_ns)
{
	char why[256], seen[FMT_BUFLEN], last[FMT_BUFLEN], span[32], *tag;
	struct db_daemon d;
	int64_t newest = 0;

	if (!w->open)
		return CLIENT_EXIT_OK;
	if (db_daemon_read(db, &d) == -1)
		return db_error(db, "the daemon");
	switch (db_daemon_judge(&d, why, sizeof(why))) {
	case DB_DAEMON_DIED:
		break;
	case DB_DAEMON_UNKNOWN:
		tag = fmt_controls(w->tag, false);
		fprintf(stderr, "spyremon: window %" PRId64 " '%s' is open, "
		    "and whether spyremond %" PRId32 " that holds it still "
		    "runs cannot be checked here (%s): read as open\n", w->id,
		    tag, d.id.pid, why);
		free(tag);
		return CLIENT_EXIT_OK;
	case DB_DAEMON_RUNS:
	case DB_DAEMON_STOPPED:
	default:
		return CLIENT_EXIT_OK;
	}
	if (db_newest_stamp(db, INT64_MAX, &newest) != 0)
		return CLIENT_EXIT_DATABASE;
	*end_ns = newest > w->begin_ns ? newest : w->begin_ns;
	tag = fmt_controls(w->tag, false);
	fmt_time_ms(d.alive_ns, seen, sizeof(seen));
	fprintf(stderr, "spyremon: window %" PRId64 " '%s' was never ended: "
	    "spyremond %" PRId32 " that held it stopped without ending it (%s); "
	    "it was last seen writing at %s\n", w->id, tag, d.id.pid, why,
	    seen);
	if (newest > w->begin_ns) {
		fmt_time_ms(newest, last, sizeof(last));
		fmt_span(newest - w->begin_ns, span, sizeof(span));
		fprintf(stderr, "spyremon: window %" PRId64 " '%s': its last "
		    "sample is at %s, %s after its begin; read up to there",
		    w->id, tag, last, span);
	} else
		fprintf(stderr, "spyremon: window %" PRId64 " '%s': no sample "
		    "was stored after its begin", w->id, tag);
	if (cl->partial)
		fprintf(stderr, " (--partial)\n");
	else
		fprintf(stderr, " (exit status %d; --partial reads it with "
		    "exit status 0)\n", CLIENT_EXIT_INCOMPLETE);
	free(tag);
	return CLIENT_EXIT_INCOMPLETE;
}

int
stepped_check(const struct client *cl, const struct db_window *w,
    bool by_epochs)
{
	char ran[32], apart[32], *tag;
	int64_t span = w->end_ns - w->begin_ns, slack;

	/* with its epochs, a reader by them finds all of it */
	if (w->open || w->run_ns < 0 || (by_epochs && w->begin_epoch >= 0 &&
	    w->end_epoch >= 0))
		return CLIENT_EXIT_OK;
	/* half the least step, and twice what the kernel may slew */
	slack = 250000000 + w->run_ns / 1000;
	if (span >= w->run_ns - slack)
		return CLIENT_EXIT_OK;
	tag = fmt_controls(w->tag, false);
	fmt_span(w->run_ns, ran, sizeof(ran));
	fmt_span(span > 0 ? span : 0, apart, sizeof(apart));
	fprintf(stderr, "spyremon: window %" PRId64 " '%s' ran %s by the "
	    "daemon's monotonic clock, but its begin and end are %s apart: "
	    "the host clock was stepped back while it was open, and its "
	    "samples after the step are stamped before its end; read within "
	    "its stamps", w->id, tag, ran, apart);
	if (cl->partial)
		fprintf(stderr, " (--partial)\n");
	else
		fprintf(stderr, " (exit status %d; --partial reads it with "
		    "exit status 0)\n", CLIENT_EXIT_INCOMPLETE);
	free(tag);
	return CLIENT_EXIT_INCOMPLETE;
}
