/*
 * windows_priv: the set of open windows as its files share it, and the
 * calls each offers the ones above it.  Bottom up: windows_table.c, the
 * set's bookkeeping (room, a window's fields, forgetting one, the log line
 * and the result of a change done); windows_ends.c, how a window ends
 * (closing one in the store and the set, and the ends nobody asks for:
 * windows.max_open's timer, the watched process's exit, the windows of a
 * daemon that died); windows.c, the begin and end requests and the set's
 * start and free.  Not for the rest of the daemon: windows.h is.
 */
#ifndef SPYREMON_WINDOWS_PRIV_H
#define SPYREMON_WINDOWS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "windows.h"
#include "windows_storing.h"

struct windows {
	sd_event *ev;		/* NULL in tests: no timer, no pidfd watch */
	struct store *st;
	windows_restarts_fn *restarts;
	void *restarts_arg;
	uint64_t max_open_ns;
	size_t open_per_uid, ending_per_uid;	/* windows_set_limits */
	windows_notify_fn *notify;
	void *arg;

	struct window *open;	/* n in use, cap allocated */
	size_t n, cap;

	/* windows ended and not complete yet, by uid (ending_per_uid) */
	struct windows_storing storing;

	sd_event_source *timer;	/* NULL without an event loop */
	bool expire_failed;	/* the store refused an auto-close: retry later */
	bool starting;		/* windows_start: ends now spanned the daemon's absence */
};

/* ---- windows_table.c ---- */

/* Room for one more open window; -1 if out of memory. */
int windows_table_reserve(struct windows *w);

/* Set win's identity and begin. */
void windows_table_fill(struct window *win, int64_t id, const char *tag,
    uint32_t uid, int32_t pid, int64_t begin_ns);

/* Free what win holds: its process watch (and pidfd) and its metadata. */
void windows_table_clear(struct window *win);

/*
 * Drop open window i from memory, telling the source if it was the last
 * (with its end stamp, end_ns).
 */
void windows_table_forget(struct windows *w, size_t i, int64_t end_ns);

/*
 * Log "window <id> '<tag>' <what>" at prio with the window's journal
 * fields; CLIENT_PID is the process that asked for the change, or the
 * window's own for an automatic one.
 */
void windows_table_log(int prio, const struct window *win, int32_t client_pid,
    const char *what);

/* res succeeded for win, ended at end_ns (0 for a begin). */
void windows_table_succeed(struct windows_result *res,
    const struct window *win, int64_t end_ns);

/* ---- windows_ends.c ---- */

/*
 * Close open window i at end_ns in the store, with meta_json (NULL: none)
 * merged into its metadata, then in memory; -1 if the store failed.  ender
 * and client_pid asked for it (the window's own for an automatic end);
 * res, if not NULL, gets the result.
 */
int windows_ends_close(struct windows *w, size_t i, int64_t end_ns,
    enum store_ended_by by, uint32_t ender, int32_t client_pid,
    const char *meta_json, struct windows_result *res);

/*
 * Watch win->until_pid: 0 if watched (or there is no event loop), -1 with
 * errno ESRCH if the process does not exist, other errno on failure.
 */
int windows_ends_watch(struct windows *w, struct window *win);

/* Point the timer at the next expiry, or at a retry of a failed one. */
void windows_ends_arm(struct windows *w, int64_t now_ns);

/* Add the timer to w->ev, for windows_ends_arm to aim or turn off at once;
 * sd_event's negative errno on failure. */
int windows_ends_timer_add(struct windows *w);

/*
 * The daemon before this one died (store_previous_daemon) with the loaded
 * windows open: nothing ended them, and nothing was sampled after its
 * last stored sample, so each ends there (at its begin if that is later).
 * One whose windows.max_open ran out before that sample is left to
 * windows_expire: that daemon would have closed it then.
 */
void windows_ends_orphans(struct windows *w);

/*
 * Watch the processes of the loaded windows again; those gone while the
 * daemon was not running end now.  (A pid reused since then by another
 * process keeps the window open until that one exits, or max_open.)
 */
void windows_ends_rewatch(struct windows *w, int64_t now_ns);

#endif
