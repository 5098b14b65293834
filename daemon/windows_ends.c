/*
 * windows_ends: how an open window ends (contracts in windows_priv.h and
 * windows.h): closing one, the store first and the set only once the
 * store accepted it, with its elapsed time, its note if a step of the host
 * clock crossed it, and its log line; and the ends nobody asks for:
 * windows.max_open's timer (CLOCK_REALTIME, so a step of the clock is
 * what may make it due), the exit of a process watched through its pidfd,
 * and at start the windows of a daemon that died and the processes gone
 * while none ran.
 */
#include "windows_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <syslog.h>
#include <unistd.h>

#include "clockstep.h"
#include "clocksync.h"
#include "log.h"
#include "timeparse.h"
#include "window_clock.h"

#define TIMER_ACCURACY_USEC	1000

/* ---- closing one ---- */

int
windows_ends_close(struct windows *w, size_t i, int64_t end_ns,
    enum store_ended_by by, uint32_t ender, int32_t client_pid,
    const char *meta_json, struct windows_result *res)
{
	struct window *win = &w->open[i];
	struct clocksync clock;
	char what[128], open_for[32], note[256];
	bool auto_closed = by != STORE_ENDED_MARK;
	int64_t elapsed = window_clock_elapsed(win, end_ns, note,
	    sizeof(note));

	/*
	 * Without a step, a clock slewed back must not give a window a
	 * negative length; after a step back its end is stamped by the new
	 * clock, in the epoch that readers read it in (end_epoch), and
	 * stays as it is.
	 */
	if (end_ns < win->begin_ns && note[0] == '\0')
		end_ns = win->begin_ns;
	clocksync_read(&clock);
	/* one that spanned the daemon's absence is never complete */
	if (store_window_end_meta(w->st, win->id, end_ns, by, &clock,
	    !w->starting, meta_json) == -1)
		return -1;
	if (note[0] != '\0') {
		log_warnx("window %" PRId64 ": %s", win->id, note);
		(void)store_window_add_note(w->st, win->id, note);
	}
	/* readers compare it with the stamps (a step of the clock) */
	if (win->begin_mono_ns != 0)
		(void)store_window_set_run(w->st, win->id, elapsed);
	windows_storing_add(&w->storing, win->uid, win->id);
	if (win->restarts_known && w->restarts != NULL)
		(void)store_window_set_restarts(w->st, win->id,
		    w->restarts(w->restarts_arg) - win->restarts_at_begin);
	if (by == STORE_ENDED_EXIT)
		snprintf(what, sizeof(what), "of uid %" PRIu32 " ended: its "
		    "process %" PRId32 " exited after %.3fs", win->uid,
		    win->until_pid, (double)elapsed / 1e9);
	else if (by == STORE_ENDED_DAEMON_GONE)
		snprintf(what, sizeof(what), "of uid %" PRIu32 " ended at its "
		    "last stored sample, %.3fs after its begin: the daemon "
		    "that held it died", win->uid,
		    (double)elapsed / 1e9);
	else if (auto_closed) {
		format_duration(w->max_open_ns, open_for, sizeof(open_for));
		snprintf(what, sizeof(what), "of uid %" PRIu32 " closed "
		    "automatically: open for windows.max_open (%s)", win->uid,
		    open_for);
	} else
		snprintf(what, sizeof(what), "of uid %" PRIu32 " ended by uid %"
		    PRIu32 " (pid %" PRId32 ") after %.3fs", win->uid, ender,
		    client_pid, (double)elapsed / 1e9);
	windows_table_log(auto_closed ? LOG_NOTICE : LOG_INFO, win, client_pid,
	    what);
	if (res != NULL) {
		windows_table_succeed(res, win, end_ns);
		res->elapsed_ns = elapsed;
		snprintf(res->end_note, sizeof(res->end_note), "%s", note);
	}
	windows_table_forget(w, i, end_ns);
	return 0;
}

/* ---- windows that end with a process ---- */

/* The process's pidfd became readable: it has exited.  End its window. */
static int
on_exit_of(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct windows *w = arg;
	int64_t now = now_realtime_ns();

	(void)fd;
	(void)revents;
	for (size_t i = 0; i < w->n; i++) {
		struct window *win = &w->open[i];

		if (win->exit_src != s)
			continue;
		if (windows_ends_close(w, i, now, STORE_ENDED_EXIT, win->uid,
		    win->until_pid, NULL, NULL) == -1) {
			/* stop the busy wake-ups; max_open still ends it */
			sd_event_source_set_enabled(s, SD_EVENT_OFF);
			log_warnx("window %" PRId64 ": process %" PRId32
			    " exited, but the database refused the end; "
			    "windows.max_open will end it", win->id,
			    win->until_pid);
		}
		break;
	}
	windows_ends_arm(w, now);
	return 0;
}

int
windows_ends_watch(struct windows *w, struct window *win)
{
	int fd, r;

	if (w->ev == NULL || win->until_pid <= 0)
		return 0;
	if ((fd = (int)syscall(SYS_pidfd_open, (pid_t)win->until_pid, 0)) ==
	    -1)
		return -1;
	if ((r = sd_event_add_io(w->ev, &win->exit_src, fd, EPOLLIN,
	    on_exit_of, w)) < 0) {
		close(fd);
		errno = -r;
		return -1;
	}
	sd_event_source_set_io_fd_own(win->exit_src, 1);
	return 0;
}

/* ---- automatic closing ---- */

size_t
windows_expire(struct windows *w, int64_t now_ns)
{
	size_t closed = 0;

	w->expire_failed = false;
	for (size_t i = 0; i < w->n;) {
		int64_t expiry = window_clock_expiry(&w->open[i],
		    w->max_open_ns);

		if (expiry > now_ns)
			i++;
		else if (windows_ends_close(w, i, expiry, STORE_ENDED_MAX_OPEN,
		    w->open[i].uid, w->open[i].pid, NULL, NULL) == 0)
			closed++;
		else {
			w->expire_failed = true;
			i++;
		}
	}
	return closed;
}

int64_t
windows_next_expiry(const struct windows *w)
{
	int64_t next = INT64_MAX, e;

	for (size_t i = 0; i < w->n; i++)
		if ((e = window_clock_expiry(&w->open[i], w->max_open_ns)) <
		    next)
			next = e;
	return next;
}

void
windows_ends_arm(struct windows *w, int64_t now_ns)
{
	int64_t next = windows_next_expiry(w);

	if (w->timer == NULL)
		return;
	if (next == INT64_MAX) {
		sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
		return;
	}
	if (w->expire_failed && next <= now_ns)
		next = now_ns + (int64_t)WINDOWS_RETRY_NS;
	sd_event_source_set_time(w->timer, next > 0 ? (uint64_t)next / 1000 : 0);
	sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT);
}

static int
on_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct windows *w = arg;
	int64_t now;

	(void)s;
	(void)usec;
	/* a step of the clock is what may have made the timer due */
	(void)clockstep_check();
	now = now_realtime_ns();
	windows_expire(w, now);
	windows_ends_arm(w, now);
	return 0;
}

int
windows_ends_timer_add(struct windows *w)
{
	return sd_event_add_time(w->ev, &w->timer, CLOCK_REALTIME, 0,
	    TIMER_ACCURACY_USEC, on_timer, w);
}

void
windows_clock_stepped(struct windows *w, int64_t now_ns)
{
	if (w != NULL)
		windows_ends_arm(w, now_ns);
}

void
windows_set_max_open(struct windows *w, uint64_t max_open_ns, int64_t now_ns)
{
	w->max_open_ns = max_open_ns;
	windows_expire(w, now_ns);
	windows_ends_arm(w, now_ns);
}

/* ---- at start ---- */

void
windows_ends_orphans(struct windows *w)
{
	struct store_prev_daemon prev;

	store_previous_daemon(w->st, &prev);
	if (!prev.died)
		return;
	for (size_t i = 0; i < w->n;) {
		struct window *win = &w->open[i];

		if (window_clock_expiry(win, w->max_open_ns) <=
		    prev.last_sample_ns) {
			i++;
			continue;
		}
		if (windows_ends_close(w, i, prev.last_sample_ns,
		    STORE_ENDED_DAEMON_GONE, win->uid, win->pid, NULL, NULL) ==
		    0)
			continue;
		log_warnx("window %" PRId64 ": its daemon died, but the "
		    "database refused the end", win->id);
		i++;
	}
}

void
windows_ends_rewatch(struct windows *w, int64_t now_ns)
{
	for (size_t i = 0; i < w->n;) {
		struct window *win = &w->open[i];

		if (win->until_pid > 0 && windows_ends_watch(w, win) == -1) {
			if (errno == ESRCH && windows_ends_close(w, i, now_ns,
			    STORE_ENDED_EXIT, win->uid, win->until_pid,
			    NULL, NULL) == 0)
				continue;
			log_warn("window %" PRId64 ": watch process %" PRId32,
			    win->id, win->until_pid);
		}
		i++;
	}
}
