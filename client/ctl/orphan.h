/*
 * orphan: an open window whose daemon is gone.
 *
 * A window stays open in the database until the daemon that holds it
 * ends it.  If that daemon was killed, crashed or the host rebooted, no
 * one ever will until the next spyremond starts (spyremond(8)), and no
 * sample is stored after its last one.  Every reader of an open window
 * checks the daemon the database records (the daemon table,
 * spyremon-schema(5)): gone, the reader says that the window was never
 * ended, when its daemon was last seen writing and where its last sample
 * is, reads the window up to that sample, and exits
 * CLIENT_EXIT_INCOMPLETE, or 0 with --partial (client_exit).  A daemon
 * that runs, that stopped cleanly (its windows go on at its next start),
 * or that cannot be checked from here (another host: said so) leaves the
 * window read as open, up to now.
 */
#ifndef SPYREMON_ORPHAN_H
#define SPYREMON_ORPHAN_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

struct client;
struct db_window;

/*
 * Check open window w of db.  CLIENT_EXIT_OK if it is to be read as open
 * (*end_ns untouched); CLIENT_EXIT_INCOMPLETE after saying so on stderr
 * if its daemon is gone, with *end_ns the end to read it up to (its last
 * sample, or its begin if none is stored after it); CLIENT_EXIT_DATABASE
 * on a read error.  cl->partial only changes the words.
 */
int orphan_check(const struct client *cl, sqlite3 *db,
    const struct db_window *w, int64_t *end_ns);

/*
 * An ended window whose stamps are closer together than it ran by the
 * daemon's monotonic clock (its run_ns), by more than 250 ms (half the
 * least step) and a thousandth of the run (twice the most the kernel
 * slews): the host clock was stepped back while it was
 * open, so the samples after the step are stamped before its end, and
 * reading its stamps reads only part of it; with by_epochs (the caller
 * reads the window through db_window_pieces), a window whose epochs of
 * the host clock are recorded (schema 12) is read whole, and passes.
 * CLIENT_EXIT_INCOMPLETE after
 * saying so on stderr (cl->partial only changes the words), else
 * CLIENT_EXIT_OK.  Nothing is read: the window is read within its stamps.
 */
int stepped_check(const struct client *cl, const struct db_window *w,
    bool by_epochs);

#endif
