/*
 * windows: open profiling windows (contract in windows.h): the begin and
 * end requests, their rules, and the set's start and free.
 *
 * The open set is a small array in the order the windows were opened
 * (windows_table.c); every rule is a linear scan of it, which at
 * WINDOWS_MAX_OPEN entries is still a few microseconds.  The store is
 * written first and memory changed only once the store accepted the
 * change, so the two never disagree.  How a window ends, by a request or
 * by itself, is windows_ends.c's; its times against the host clock's
 * steps window_clock.c's; a window's metadata pairs and their JSON
 * window_meta.c's; the ended windows not complete yet, per uid,
 * windows_storing.c's.
 */
#include "windows_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "clocksync.h"
#include "log.h"
#include "timeparse.h"
#include "window_clock.h"
#include "window_meta.h"

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
	if (windows_table_reserve(w) == -1 ||
	    (json = window_meta_to_json(req->meta, req->nmeta)) == NULL) {
		log_warnx("begin window: out of memory");
		fail(res, PROTO_E_INTERNAL, "out of memory");
		return;
	}
	win.until_pid = req->until_pid;
	if (windows_ends_watch(w, &win) == -1) {
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
		windows_table_clear(&win);
		fail(res, PROTO_E_INTERNAL, "the database refused the window; "
		    "see the daemon's log");
		return;
	}
	windows_table_fill(&win, id, req->tag, req->uid, req->pid, begin_ns);
	window_clock_mark(&win, begin_ns);
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
	windows_table_log(LOG_INFO, &win, req->pid, what);
	windows_table_succeed(res, &win, 0);
	if (w->n == 1 && w->notify != NULL)
		w->notify(w->arg, true, win.begin_ns);
	windows_ends_arm(w, req->now_ns);
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
	rc = windows_ends_close(w, (size_t)i, req->at_ns > 0 ? req->at_ns :
	    req->now_ns, STORE_ENDED_MARK, req->uid, req->pid, json, res);
	free(json);
	if (rc == -1) {
		fail(res, PROTO_E_INTERNAL, "the database refused to end the "
		    "window; see the daemon's log");
		return;
	}
	windows_ends_arm(w, req->now_ns);
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

		if (windows_table_reserve(w) == -1) {
			log_warnx("open windows: out of memory");
			store_windows_free(sw, n);
			return -1;
		}
		windows_table_fill(&win, sw[i].id, sw[i].tag, sw[i].uid,
		    sw[i].pid, sw[i].begin_ns);
		window_meta_from_json(&win, sw[i].meta_json);
		win.until_pid = sw[i].until_pid;
		w->open[w->n++] = win;
	}
	store_windows_free(sw, n);
	return 0;
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
	windows_ends_orphans(w);
	windows_expire(w, now_ns);
	windows_ends_rewatch(w, now_ns);
	w->starting = false;
	if (store_windows_abandon(st) == -1) {
		windows_free(w);
		return -1;
	}
	/* armed, or turned off, by windows_ends_arm just below */
	if (ev != NULL && (r = windows_ends_timer_add(w)) < 0) {
		log_warnx("windows: timer: %s", strerror(-r));
		windows_free(w);
		return -1;
	}
	windows_ends_arm(w, now_ns);
	/* notify only now: nothing is told about windows closed while loading */
	w->notify = notify;
	w->arg = arg;
	if (w->n > 0 && notify != NULL)
		notify(arg, true, now_ns);
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
		windows_table_clear(&w->open[i]);
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
