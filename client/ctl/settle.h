/*
 * settle: a reader's side of complete windows (spyremon-schema(5),
 * "COMPLETE WINDOWS").
 *
 * A window that has ended is complete once spyremond has committed every
 * sample that overlaps it and its summary; the windows table says so
 * (complete_ns), or says why it never will be (incomplete).  Right after
 * a window ends, its last samples may still be queued in the daemon.
 * Before a command reads an ended window, or a span that ends later than
 * the stored samples, it settles it: if the database does not say it is
 * complete, the command asks the daemon that writes this very file (the
 * sync request of spyremond(8)) to store it now and waits for the answer,
 * at most --wait; then it reads a fresh snapshot.  What cannot be made
 * complete (no daemon, another database, writes stalled past the wait, a
 * window its daemon never finished) is read as far as it goes: a message
 * names what is missing, and the command exits CLIENT_EXIT_INCOMPLETE.
 *
 * Databases before schema version 9 record no completeness: their windows
 * are read as they are, as before.
 */
#ifndef SPYREMON_SETTLE_H
#define SPYREMON_SETTLE_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct client;

/* --wait's default: long enough for a flush on a busy disk. */
#define SETTLE_WAIT_DEFAULT_NS	(10 * (int64_t)1000000000)

/*
 * Settle ended window id of db (opened by db_open from path; refreshed
 * to a new snapshot when the daemon stored more).  CLIENT_EXIT_OK when it
 * is complete, or open, or from before schema 9; CLIENT_EXIT_INCOMPLETE
 * after printing what is missing, with why it is incomplete in why (len
 * bytes; NULL: not wanted); CLIENT_EXIT_DATABASE on a read error.
 */
int settle_window(struct client *cl, sqlite3 *db, const char *path,
    int64_t id, char *why, size_t len);

/*
 * Wait, as settle_window does, for window id that the caller has just
 * ended to be complete, without reading the database (mark end --wait).
 * CLIENT_EXIT_PARTIAL, with the daemon's sentence on stderr, if it is
 * complete but part of its rows could not be read (a damaged page).
 */
int settle_ended(struct client *cl, int64_t id);

/*
 * Settle every window of db that has ended and is neither complete nor
 * known never to be (the windows list): OK, or CLIENT_EXIT_INCOMPLETE if
 * one stays so, after saying what is missing.
 */
int settle_pending(struct client *cl, sqlite3 *db, const char *path);

/*
 * Settle the span of samples that ends at through_ns: if a card whose
 * samples reach near it has none stamped at or after it, ask the daemon
 * for them (as settle_window).  Without a daemon for this database the
 * span is read as it is (CLIENT_EXIT_OK): a trace may simply run past the
 * samples, which the commands report themselves.
 */
int settle_span(struct client *cl, sqlite3 *db, const char *path,
    int64_t through_ns);

#endif
