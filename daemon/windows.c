/*
 * windows: open profiling windows (contract in windows.h).
 *
 * The open set is a small array in the order the windows were opened; every
 * rule is a linear scan of it, which at WINDOWS_MAX_OPEN entries is still a
 * few microseconds.  The store is written first and memory changed only
 * once the store accepted the change, so the two never disagree.  A
 * window's metadata pairs and their JSON are window_meta.c's; the ended
 * windows not complete yet, per uid, windows_storing.c's.
 */
#include "windows.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/epoll.h>
#include <syslog.h>
#include <unistd.h>
#include <errno.h>

#include "clockstep.h"
#include "clocksync.h"
#include "log.h"
#include "store.h"
#include "timeparse.h"
#include "window_json.h"
#include "window_meta.h"
#include "windows_storing.h"

#define TIMER_ACCURACY_USEC	1000

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
	bool starting;		/* windows_new: ends now spanned the daemon's absence */
};

/* ---- windows in memory ---- */

static void
window_clear(struct window *win)
{
	/* closes the pidfd too (sd_event_source_set_io_fd_own) */
	win->exit_src = sd_event_source_disable_unref(win->exit_src);
	window_meta_free(win);
}

static void
set_window_fields(struct window *win, int64_t id, const char *tag,
    uint32_t uid, int32_t pid, int64_t begin_ns)
{
	win->id = id;
	snprintf(win->tag, sizeof(win->tag), "%s", tag);
	win->uid = uid;
	win->pid = pid;
	win->begin_ns = begin_ns;
}

/* Room for one more open window; -1 if out of memory. */
static int
reserve(struct windows *w)
{
	struct window *grown;
	size_t cap;

	if (w->n < w->cap)
		return 0;
	cap = w->cap == 0 ? 8 : w->cap * 2;
	if ((grown = realloc(w->open, cap * sizeof(*grown))) == NULL)
		return -1;
	w->open = grown;
	w->cap = cap;
	return 0;
}

/* Drop open window i from memory, telling the source if it was the last. */
static void
forget(struct windows *w, size_t i)
{
	window_clear(&w->open[i]);
	memmove(&w->open[i], &w->open[i + 1], (w->n - i - 1) * sizeof(*w->open));
	if (--w->n == 0 && w->notify != NULL)
		w->notify(w->arg, false);
}

/*
 * When win has been open for max_open, by the host clock as it is now: its
 * begin moved by the steps of the clock seen since it began (a window
 * loaded at start counts them from then, the step back while no daemon
 * ran included), so that a step forward does not close it early, nor a
 * step back keep it open an hour longer.
 */
static int64_t
expiry_of(const struct windows *w, const struct window *win)
{
	struct clockstep_stats cs;
	int64_t begin;

	clockstep_get_stats(&cs);
	if (__builtin_add_overflow(win->begin_ns,
	    cs.net_ns - win->net_step_at_begin, &begin) ||
	    begin > INT64_MAX - (int64_t)w->max_open_ns)
		return INT64_MAX;
	return begin + (int64_t)w->max_open_ns;
}

/* ---- windows that end with a process ---- */

static void	mark_clocks(struct window *win, int64_t at_ns);
static int	close_window(struct windows *w, size_t i, int64_t end_ns,
		    enum store_ended_by by, uint32_t ender, int32_t client_pid,
		    const char *meta_json, struct windows_result *res);
static void	arm_timer(struct windows *w, int64_t now_ns);

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
		if (close_window(w, i, now, STORE_ENDED_EXIT, win->uid,
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
	arm_timer(w, now);
	return 0;
}

/*
 * Watch win->until_pid: 0 if watched (or there is no event loop), -1 with
 * errno ESRCH if the process does not exist, other errno on failure.
 */
static int
watch_exit(struct windows *w, struct window *win)
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

/* ---- logging ---- */

/*
 * Log "window <id> '<tag>' <what>" at prio with the window's journal
 * fields; CLIENT_PID is the process that asked for the change, or the
 * window's own for an automatic one.
 */
static void
log_window(int prio, const struct window *win, int32_t client_pid,
    const char *what)
{
	char f_id[40], f_tag[16 + PROTO_TAG_MAX], f_uid[32], f_pid[32];
	const char *const fields[] = { f_id, f_tag, f_uid, f_pid, NULL };

	snprintf(f_id, sizeof(f_id), "WINDOW_ID=%" PRId64, win->id);
	snprintf(f_tag, sizeof(f_tag), "WINDOW_TAG=%s", win->tag);
	snprintf(f_uid, sizeof(f_uid), "CLIENT_UID=%" PRIu32, win->uid);
	snprintf(f_pid, sizeof(f_pid), "CLIENT_PID=%" PRId32, client_pid);
	log_fields(prio, fields, "window %" PRId64 " '%s' %s", win->id, win->tag,
	    what);
}

/* ---- results ---- */

static void __attribute__((format(printf, 3, 4)))
fail(struct windows_result *res, const char *error, const char *fmt, ...)
{
	va_list ap;

	res->error = error;
	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
}

static void
succeed(struct windows_result *res, const struct window *win, int64_t end_ns)
{
	res->error = NULL;
	res->message[0] = '\0';
	res->elapsed_ns = 0;
	res->end_note[0] = '\0';
	res->id = win->id;
	snprintf(res->tag, sizeof(res->tag), "%s", win->tag);
	res->begin_ns = win->begin_ns;
	res->end_ns = end_ns;
}

/* ---- begin ---- */

/*
 * nmeta pairs of meta: at most PROTO_META_MAX, each valid, keys distinct;
 * else res says why.
 */
static bool
meta_valid(const char *const *meta, size_t nmeta, struct windows_result *res)
{
	const char *why;

	if (nmeta > PROTO_META_MAX) {
		fail(res, PROTO_E_BAD_META, "at most %d metadata pairs",
		    PROTO_META_MAX);
		return false;
	}
	for (size_t i = 0; i < nmeta; i++) {
		const char *key = meta[2 * i];

		if (!proto_meta_valid(key, meta[2 * i + 1], &why)) {
			fail(res, PROTO_E_BAD_META, "%s (key '%.64s')", why, key);
			return false;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(key, meta[2 * j]) == 0) {
				fail(res, PROTO_E_BAD_META, "metadata key '%s' "
				    "is given twice", key);
				return false;
			}
	}
	return true;
}

/* Apply begin's rules to req; true if it may go ahead, else res says why. */
static bool
begin_allowed(struct windows *w, const struct windows_begin_req *req,
    struct windows_result *res)
{
	const char *why;
	size_t mine = 0;

	if (!proto_tag_valid(req->tag, &why)) {
		fail(res, PROTO_E_BAD_TAG, "%s", why);
		return false;
	}
	if (!meta_valid(req->meta, req->nmeta, res))
		return false;
	for (size_t i = 0; i < w->n; i++) {
		if (w->open[i].uid != req->uid)
			continue;
		mine++;
		if (!req->same_tag && strcmp(w->open[i].tag, req->tag) == 0) {
			fail(res, PROTO_E_TAG_OPEN, "you already have window %"
			    PRId64 " open with tag '%s'; end it first, or open "
			    "another with same_tag and end each by id",
			    w->open[i].id, req->tag);
			return false;
		}
	}
	if (mine >= w->open_per_uid || w->n >= WINDOWS_MAX_OPEN) {
		fail(res, PROTO_E_TOO_MANY, "%s windows are open already; end "
		    "some first", mine >= w->open_per_uid ? "too many of your" :
		    "too many");
		return false;
	}
	if ((mine = windows_storing_count(&w->storing, w->st, req->uid)) >=
	    w->ending_per_uid) {
		fail(res, PROTO_E_BUSY, "%zu of your ended windows are still "
		    "being stored; begin again once they are", mine);
		return false;
	}
	if (req->at_ns > 0 && (req->at_ns < req->now_ns ||
	    req->at_ns - req->now_ns > WINDOWS_BEGIN_AHEAD_NS)) {
		fail(res, PROTO_E_BAD_TIME, "begin_ns is %.3fs %s the request's "
		    "arrival; a window may begin from then to %llds after",
		    (double)llabs(req->at_ns - req->now_ns) / 1e9,
		    req->at_ns < req->now_ns ? "before" : "after",
		    (long long)(WINDOWS_BEGIN_AHEAD_NS / 1000000000LL));
		return false;
	}
	return true;
}

void
windows_begin(struct windows *w, const struct windows_begin_req *req,
    struct windows_result *res)
{
	struct window win = { 0 };
	struct clocksync clock;
	char *json, what[80];
	int64_t id, begin_ns;
	int rc;

	if (!begin_allowed(w, req, res))
		return;
	if (reserve(w) == -1 ||
	    (json = window_meta_to_json(req->meta, req->nmeta)) == NULL) {
		log_warnx("begin window: out of memory");
		fail(res, PROTO_E_INTERNAL, "out of memory");
		return;
	}
	win.until_pid = req->until_pid;
	if (watch_exit(w, &win) == -1) {
		free(json);
		if (errno == ESRCH)
			fail(res, PROTO_E_NO_PROCESS, "there is no process %"
			    PRId32 " to end the window with", req->until_pid);
		else {
			log_warn("begin window: watch process %" PRId32,
			    req->until_pid);
			fail(res, PROTO_E_INTERNAL, "cannot watch process %"
			    PRId32 ": %s", req->until_pid, strerror(errno));
		}
		return;
	}
	begin_ns = req->at_ns > 0 ? req->at_ns : req->now_ns;
	clocksync_read(&clock);
	rc = store_window_begin(w->st, req->tag, req->uid, req->pid,
	    begin_ns, json, &clock, req->until_pid, &id);
	free(json);
	if (rc == -1) {
		window_clear(&win);
		fail(res, PROTO_E_INTERNAL, "the database refused the window; "
		    "see the daemon's log");
		return;
	}
	set_window_fields(&win, id, req->tag, req->uid, req->pid, begin_ns);
	mark_clocks(&win, begin_ns);
	if (w->restarts != NULL) {
		win.restarts_known = true;
		win.restarts_at_begin = w->restarts(w->restarts_arg);
	}
	if (window_meta_set(&win, req->meta, req->nmeta) == -1)
		log_warnx("window %" PRId64 ": meta kept only in the database: "
		    "out of memory", id);
	w->open[w->n++] = win;
	snprintf(what, sizeof(what), "begun by uid %" PRIu32 " (pid %" PRId32 ")",
	    req->uid, req->pid);
	log_window(LOG_INFO, &win, req->pid, what);
	succeed(res, &win, 0);
	if (w->n == 1 && w->notify != NULL)
		w->notify(w->arg, true);
	arm_timer(w, req->now_ns);
}

/* ---- end ---- */

/* Index of the caller's newest open window, or -1. */
static ssize_t
find_newest(const struct windows *w, uint32_t uid)
{
	ssize_t best = -1;

	for (size_t i = 0; i < w->n; i++)
		if (w->open[i].uid == uid &&
		    (best == -1 || w->open[i].id > w->open[best].id))
			best = (ssize_t)i;
	return best;
}

/* Index of the caller's one open window tagged tag, or -1 with res set. */
static ssize_t
find_by_tag(const struct windows *w, const struct windows_end_req *req,
    struct windows_result *res)
{
	char ids[128] = "";
	ssize_t found = -1;
	size_t count = 0, len = 0;

	for (size_t i = 0; i < w->n; i++) {
		if (w->open[i].uid != req->uid || strcmp(w->open[i].tag, req->tag) != 0)
			continue;
		if (count++ == 0)
			found = (ssize_t)i;
		if (len < sizeof(ids))
			len += (size_t)snprintf(ids + len, sizeof(ids) - len, "%s%"
			    PRId64, count > 1 ? ", " : "", w->open[i].id);
	}
	if (count == 0)
		fail(res, PROTO_E_NOT_OPEN, "you have no open window tagged '%s'",
		    req->tag);
	else if (count > 1)
		fail(res, PROTO_E_AMBIGUOUS, "you have %zu open windows tagged "
		    "'%s' (ids %s); end one by id", count, req->tag, ids);
	return count == 1 ? found : -1;
}

/* Why window id is not open, from the store. */
static void
explain_not_open(struct windows *w, int64_t id, struct windows_result *res)
{
	struct store_window *sw;
	char when[64];

	if (store_window_get(w->st, id, &sw) == -1) {
		fail(res, PROTO_E_INTERNAL, "cannot read window %" PRId64
		    "; see the daemon's log", id);
		return;
	}
	if (sw == NULL) {
		fail(res, PROTO_E_NOT_OPEN, "there is no window %" PRId64, id);
		return;
	}
	format_time_utc(sw->end_ns, when, sizeof(when));
	if (sw->end_ns == 0)	/* ended long ago: the store keeps no details */
		fail(res, PROTO_E_NOT_OPEN, "window %" PRId64 " has already "
		    "ended", id);
	else
		fail(res, PROTO_E_NOT_OPEN, "window %" PRId64 "%s%s%s has "
		    "already ended, at %s%s", id, sw->tag[0] != '\0' ? " '" : "",
		    sw->tag, sw->tag[0] != '\0' ? "'" : "", when, sw->auto_closed ?
		    " (closed automatically after windows.max_open)" : "");
	store_windows_free(sw, 1);
}

/* Index of open window id if the caller may end it, or -1 with res set. */
static ssize_t
find_by_id(struct windows *w, const struct windows_end_req *req,
    struct windows_result *res)
{
	for (size_t i = 0; i < w->n; i++) {
		if (w->open[i].id != req->id)
			continue;
		if (w->open[i].uid != req->uid && req->uid != 0) {
			fail(res, PROTO_E_NOT_OWNER, "window %" PRId64 " belongs to "
			    "uid %" PRIu32 "; only its owner or root may end it",
			    req->id, w->open[i].uid);
			return -1;
		}
		return (ssize_t)i;
	}
	explain_not_open(w, req->id, res);
	return -1;
}

/*
 * The monotonic clock at realtime at_ns (before or after now), and
 * the host clock steps so far, into win.
 */
static void
mark_clocks(struct window *win, int64_t at_ns)
{
	struct clockstep_stats cs;
	int64_t real;
	uint64_t mono;

	(void)clockstep_check();
	clockstep_get_stats(&cs);
	clockstep_read(&real, &mono);
	/* at_ns may be before now or, as capture's begins are, after it */
	win->begin_mono_ns = mono + (uint64_t)(at_ns - real);
	win->steps_at_begin = cs.steps;
	win->net_step_at_begin = cs.net_ns;
}

/*
 * How long win ran to realtime end_ns (before or after now): by
 * the monotonic clock if its begin's is known, else between its stamps;
 * with the sentence for its end_note in note ("" if no host clock step
 * crossed it).
 */
static int64_t
window_elapsed(const struct window *win, int64_t end_ns, char *note,
    size_t len)
{
	struct clockstep_stats cs;
	int64_t real, elapsed, net;
	uint64_t mono, steps;

	(void)clockstep_check();
	clockstep_get_stats(&cs);
	clockstep_read(&real, &mono);
	note[0] = '\0';
	steps = cs.steps - win->steps_at_begin;
	net = cs.net_ns - win->net_step_at_begin;
	/* loaded from the store at start: its stamps less the steps since */
	if (win->begin_mono_ns == 0)
		elapsed = end_ns - win->begin_ns - net;
	else
		elapsed = (int64_t)(mono - win->begin_mono_ns) +
		    (end_ns - real);
	if (elapsed < 0)
		elapsed = 0;
	/* after a step back its end may be stamped before its begin */
	if (steps > 0)
		snprintf(note, len, WINDOW_CLOCK_STEP_MARK " %s by %.3fs "
		    "while it was open (%" PRIu64 " step%s): it ran %.3fs by "
		    "the monotonic clock; its %s, stamped by the host clock, "
		    "%s %.3fs %s", net >= 0 ? "forward" : "back",
		    (double)llabs(net) / 1e9, steps, steps == 1 ? "" : "s",
		    (double)elapsed / 1e9, end_ns >= win->begin_ns ?
		    "begin and end" : "end", end_ns >= win->begin_ns ? "are" :
		    "is", (double)llabs(end_ns - win->begin_ns) / 1e9,
		    end_ns >= win->begin_ns ? "apart" : "before its begin");
	return elapsed;
}

/*
 * Close open window i at end_ns in the store, with meta_json (NULL: none)
 * merged into its metadata, then in memory; -1 if the store failed.
 */
static int
close_window(struct windows *w, size_t i, int64_t end_ns,
    enum store_ended_by by, uint32_t ender, int32_t client_pid,
    const char *meta_json, struct windows_result *res)
{
	struct window *win = &w->open[i];
	struct clocksync clock;
	char what[128], open_for[32], note[256];
	bool auto_closed = by != STORE_ENDED_MARK;
	int64_t elapsed = window_elapsed(win, end_ns, note, sizeof(note));

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
	log_window(auto_closed ? LOG_NOTICE : LOG_INFO, win, client_pid, what);
	if (res != NULL) {
		succeed(res, win, end_ns);
		res->elapsed_ns = elapsed;
		snprintf(res->end_note, sizeof(res->end_note), "%s", note);
	}
	forget(w, i);
	return 0;
}

/*
 * Whether req's metadata may be merged into win's: valid pairs, distinct
 * keys, none that win has from its begin; else res says why.
 */
static bool
end_meta_allowed(const struct window *win, const struct windows_end_req *req,
    struct windows_result *res)
{
	if (!meta_valid(req->meta, req->nmeta, res))
		return false;
	for (size_t i = 0; i < req->nmeta; i++) {
		const char *key = req->meta[2 * i];

		for (size_t j = 0; j < win->nmeta; j++)
			if (strcmp(key, win->meta[2 * j]) == 0) {
				fail(res, PROTO_E_BAD_META, "metadata key '%s' "
				    "is window %" PRId64 "'s already, from its "
				    "begin; an end may only add keys (the "
				    "window stays open)", key, win->id);
				return false;
			}
	}
	return true;
}

void
windows_end(struct windows *w, const struct windows_end_req *req,
    struct windows_result *res)
{
	char *json = NULL;
	ssize_t i;
	int rc;

	switch (req->by) {
	case WINDOWS_END_TAG:
		i = find_by_tag(w, req, res);
		break;
	case WINDOWS_END_ID:
		i = find_by_id(w, req, res);
		break;
	case WINDOWS_END_NEWEST:
	default:
		if ((i = find_newest(w, req->uid)) == -1)
			fail(res, PROTO_E_NOT_OPEN, "you have no open window");
		break;
	}
	if (i == -1)
		return;
	if (req->at_ns > 0 && req->at_ns > req->now_ns) {
		fail(res, PROTO_E_BAD_TIME, "end_ns is %.3fs after the request's "
		    "arrival; a window may end from its begin to then",
		    (double)(req->at_ns - req->now_ns) / 1e9);
		return;
	}
	if (req->at_ns > 0 && req->at_ns < w->open[i].begin_ns) {
		fail(res, PROTO_E_BAD_TIME, "end_ns is %.3fs before window %"
		    PRId64 " begins; a window may end from its begin to the "
		    "request's arrival", (double)(w->open[i].begin_ns -
		    req->at_ns) / 1e9, w->open[i].id);
		return;
	}
	if (!end_meta_allowed(&w->open[i], req, res))
		return;
	if (req->nmeta > 0 &&
	    (json = window_meta_to_json(req->meta, req->nmeta)) == NULL) {
		log_warnx("end window: out of memory");
		fail(res, PROTO_E_INTERNAL, "out of memory");
		return;
	}
	rc = close_window(w, (size_t)i, req->at_ns > 0 ? req->at_ns :
	    req->now_ns, STORE_ENDED_MARK, req->uid, req->pid, json, res);
	free(json);
	if (rc == -1) {
		fail(res, PROTO_E_INTERNAL, "the database refused to end the "
		    "window; see the daemon's log");
		return;
	}
	arm_timer(w, req->now_ns);
}

/* ---- automatic closing ---- */

size_t
windows_expire(struct windows *w, int64_t now_ns)
{
	size_t closed = 0;

	w->expire_failed = false;
	for (size_t i = 0; i < w->n;) {
		int64_t expiry = expiry_of(w, &w->open[i]);

		if (expiry > now_ns)
			i++;
		else if (close_window(w, i, expiry, STORE_ENDED_MAX_OPEN,
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
		if ((e = expiry_of(w, &w->open[i])) < next)
			next = e;
	return next;
}

/* Point the timer at the next expiry, or at a retry of a failed one. */
static void
arm_timer(struct windows *w, int64_t now_ns)
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
	arm_timer(w, now);
	return 0;
}

void
windows_clock_stepped(struct windows *w, int64_t now_ns)
{
	if (w != NULL)
		arm_timer(w, now_ns);
}

void
windows_set_max_open(struct windows *w, uint64_t max_open_ns, int64_t now_ns)
{
	w->max_open_ns = max_open_ns;
	windows_expire(w, now_ns);
	arm_timer(w, now_ns);
}

/* ---- the set ---- */

static int
load(struct windows *w)
{
	struct store_window *sw;
	size_t n;

	if (store_windows_open(w->st, &sw, &n) == -1)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct window win = { 0 };

		if (reserve(w) == -1) {
			log_warnx("open windows: out of memory");
			store_windows_free(sw, n);
			return -1;
		}
		set_window_fields(&win, sw[i].id, sw[i].tag, sw[i].uid, sw[i].pid,
		    sw[i].begin_ns);
		window_meta_from_json(&win, sw[i].meta_json);
		win.until_pid = sw[i].until_pid;
		w->open[w->n++] = win;
	}
	store_windows_free(sw, n);
	return 0;
}

/*
 * The daemon before this one died (store_previous_daemon) with the loaded
 * windows open: nothing ended them, and nothing was sampled after its
 * last stored sample, so each ends there (at its begin if that is later).
 * One whose windows.max_open ran out before that sample is left to
 * windows_expire: that daemon would have closed it then.
 */
static void
end_orphans(struct windows *w)
{
	struct store_prev_daemon prev;

	store_previous_daemon(w->st, &prev);
	if (!prev.died)
		return;
	for (size_t i = 0; i < w->n;) {
		struct window *win = &w->open[i];

		if (expiry_of(w, win) <= prev.last_sample_ns) {
			i++;
			continue;
		}
		if (close_window(w, i, prev.last_sample_ns,
		    STORE_ENDED_DAEMON_GONE, win->uid, win->pid, NULL, NULL) ==
		    0)
			continue;
		log_warnx("window %" PRId64 ": its daemon died, but the "
		    "database refused the end", win->id);
		i++;
	}
}

/*
 * Watch the processes of the loaded windows again; those gone while the
 * daemon was not running end now.  (A pid reused since then by another
 * process keeps the window open until that one exits, or max_open.)
 */
static void
rewatch(struct windows *w, int64_t now_ns)
{
	for (size_t i = 0; i < w->n;) {
		struct window *win = &w->open[i];

		if (win->until_pid > 0 && watch_exit(w, win) == -1) {
			if (errno == ESRCH && close_window(w, i, now_ns,
			    STORE_ENDED_EXIT, win->uid, win->until_pid,
			    NULL, NULL) == 0)
				continue;
			log_warn("window %" PRId64 ": watch process %" PRId32,
			    win->id, win->until_pid);
		}
		i++;
	}
}

void
windows_set_limits(struct windows *w, size_t open_per_uid,
    size_t ending_per_uid)
{
	w->open_per_uid = open_per_uid;
	w->ending_per_uid = ending_per_uid;
}

int
windows_start(sd_event *ev, struct store *st, uint64_t max_open_ns,
    int64_t now_ns, windows_notify_fn *notify, void *arg, struct windows **out)
{
	struct windows *w;
	int r;

	*out = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		log_warn("windows");
		return -1;
	}
	w->ev = ev;
	w->st = st;
	w->max_open_ns = max_open_ns;
	w->open_per_uid = WINDOWS_OPEN_PER_UID;
	w->ending_per_uid = WINDOWS_ENDING_PER_UID;
	if (load(w) == -1) {
		windows_free(w);
		return -1;
	}
	if (w->n > 0)
		log_info("%zu window%s still open from before", w->n,
		    w->n == 1 ? " is" : "s are");
	/* those ended now spanned the time the daemon was not running */
	w->starting = true;
	end_orphans(w);
	windows_expire(w, now_ns);
	rewatch(w, now_ns);
	w->starting = false;
	if (store_windows_abandon(st) == -1) {
		windows_free(w);
		return -1;
	}
	/* armed, or turned off, by arm_timer just below */
	if (ev != NULL && (r = sd_event_add_time(ev, &w->timer, CLOCK_REALTIME,
	    0, TIMER_ACCURACY_USEC, on_timer, w)) < 0) {
		log_warnx("windows: timer: %s", strerror(-r));
		windows_free(w);
		return -1;
	}
	arm_timer(w, now_ns);
	/* notify only now: nothing is told about windows closed while loading */
	w->notify = notify;
	w->arg = arg;
	if (w->n > 0 && notify != NULL)
		notify(arg, true);
	*out = w;
	return 0;
}

void
windows_set_restarts_fn(struct windows *w, windows_restarts_fn *fn, void *arg)
{
	w->restarts = fn;
	w->restarts_arg = arg;
}

void
windows_free(struct windows *w)
{
	if (w == NULL)
		return;
	sd_event_source_disable_unref(w->timer);
	for (size_t i = 0; i < w->n; i++)
		window_clear(&w->open[i]);
	free(w->open);
	windows_storing_free(&w->storing);
	free(w);
}

const struct window *
windows_list(const struct windows *w, size_t *n)
{
	*n = w->n;
	return w->open;
}
