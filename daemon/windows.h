/*
 * windows: the open profiling windows and the rules for opening and closing
 * them.  Every change is written to the store at once (store_window_*), and
 * the set is loaded from it at start, so open windows survive a restart.
 *
 * Rules, each answered with a PROTO_E_* code on failure:
 *   begin  the tag must pass proto_tag_valid and each of at most
 *          PROTO_META_MAX metadata pairs proto_meta_valid, with distinct
 *          keys; a caller (uid) who already has an open window with that
 *          tag is refused (tag_open) unless same_tag is set.  At most
 *          windows.max_open_per_uid open per uid and WINDOWS_MAX_OPEN in
 *          all (too_many); at most windows.max_ending_per_uid of the
 *          uid's ended windows not complete yet (busy, below).
 *   end    by nothing: the caller's newest open window (the highest id);
 *          by tag: the caller's one open window with that tag (ambiguous
 *          if several); by id: that window if the caller owns it or is
 *          root (not_owner otherwise).  not_open when there is nothing to
 *          close, also for a window that has already ended.  An end may
 *          add at most PROTO_META_MAX metadata pairs (mark end's vLLM
 *          counters), each proto_meta_valid, with distinct keys, none of
 *          them a key the window has from its begin (bad_meta, and the
 *          window stays open); they are merged into the window's.
 *   at     a begin may name its time (at_ns) instead of the request's
 *          arrival: not before it, and at most WINDOWS_BEGIN_AHEAD_NS after
 *          (a trace planned to start then); an end may name a time from
 *          the window's begin to the arrival (the end of a trace already
 *          written).  Other times are refused (bad_time).
 * Windows of different users, and nested or overlapping ones, are
 * independent.  A window open for max_open is closed by the daemon with
 * end_ns = begin_ns + max_open and auto_closed set; its begin moved by the
 * steps of the host clock seen since it began (clockstep.h).
 *
 * A window begun with until_pid is watched through a pidfd (pidfd_open(2))
 * on the event loop: when that process exits, by any means, the window
 * ends at that moment, ended by "exit".  A process that is already gone at
 * begin is refused (no_process); one that is gone when the daemon starts
 * again ends its window at once.  Windows left open by a daemon that died
 * (killed, crashed, the host rebooted: store_previous_daemon) end as the
 * next one starts, at the last sample stored, ended by "daemon_gone".
 * Each begin and end records the host clock's sync state (clocksync.h).
 *
 * Times are CLOCK_REALTIME ns, the clock of the samples, passed in by the
 * caller: the request's arrival for begin and end (and the times they
 * name), the current time for windows_start and windows_expire.
 */
#ifndef SPYREMON_WINDOWS_H
#define SPYREMON_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "proto.h"

struct store;
struct windows;

#define WINDOWS_MAX_OPEN	4096
/*
 * The per-uid limits (windows_set_limits) until the config sets them: open
 * windows, and windows that have ended and are not complete yet (their
 * rows, summary and complete_ns still to be stored).  Past the second, that
 * uid's begin is refused with busy until the writer has caught up, so that
 * one caller cannot queue work for the writer without bound.
 */
#define WINDOWS_OPEN_PER_UID	256
#define WINDOWS_ENDING_PER_UID	64
/* An auto-close the store refused is tried again after this long. */
#define WINDOWS_RETRY_NS	(5ULL * 1000000000ULL)
/* How far after its request a window may be asked to begin (begin_ns). */
#define WINDOWS_BEGIN_AHEAD_NS	(3600LL * 1000000000LL)

struct window {
	int64_t id;
	char tag[PROTO_TAG_MAX + 1];
	uint32_t uid;
	int32_t pid;
	int64_t begin_ns;
	size_t nmeta;
	char **meta;		/* nmeta keys and values: key0, value0, key1, ... */
	int32_t until_pid;	/* ends when it exits; 0 if none */
	sd_event_source *exit_src;	/* its pidfd's watch, or NULL */
	bool restarts_known;	/* restarts_at_begin was counted here */
	unsigned restarts_at_begin;
	uint64_t begin_mono_ns;	/* CLOCK_MONOTONIC at begin_ns; 0: not known */
	uint64_t steps_at_begin;	/* host clock steps seen before it began */
	int64_t net_step_at_begin;	/* their sizes summed */
};

/* How many times the source's child has been restarted so far. */
typedef unsigned windows_restarts_fn(void *arg);

/*
 * Called with true when the first window opens, false when the last
 * closes; at_ns is that window's begin or end stamp (at windows_start,
 * the time it was given), so that the source changes rate at the
 * window's own edge, not when it hears of it.
 */
typedef void windows_notify_fn(void *arg, bool any_open, int64_t at_ns);

struct windows_begin_req {
	const char *tag;
	const char *const *meta;	/* nmeta key, value pairs as in struct window */
	size_t nmeta;
	bool same_tag;
	uint32_t uid;
	int32_t pid;
	int64_t now_ns;
	int64_t at_ns;			/* > 0: the begin asked for ("begin_ns") */
	int32_t until_pid;		/* > 0: end when this process exits */
};

enum windows_end_by { WINDOWS_END_NEWEST, WINDOWS_END_TAG, WINDOWS_END_ID };

struct windows_end_req {
	enum windows_end_by by;
	const char *tag;		/* WINDOWS_END_TAG */
	int64_t id;			/* WINDOWS_END_ID */
	uint32_t uid;
	int32_t pid;
	int64_t now_ns;
	int64_t at_ns;			/* > 0: the end asked for ("end_ns") */
	const char *const *meta;	/* nmeta pairs merged into the window's */
	size_t nmeta;
};

/* What a begin or end did: error is NULL on success, else a PROTO_E_* code. */
struct windows_result {
	const char *error;
	char message[256];		/* for a person, when error is set */
	int64_t id;
	char tag[PROTO_TAG_MAX + 1];
	int64_t begin_ns;
	int64_t end_ns;			/* end only */
	int64_t elapsed_ns;		/* end only: by the monotonic clock */
	char end_note[256];		/* end only: a host clock step crossed it */
};

/*
 * Load the open windows from st, end them all if the daemon that held
 * them died, close those already open for max_open_ns at now_ns, and call notify(arg, true) if any stay open.  With ev, a
 * CLOCK_REALTIME timer closes each window when its time is up; without
 * (tests), only windows_expire does.  st must outlive the set.  -1 (logged)
 * if the store cannot be read or the timer set up.
 */
int windows_start(sd_event *ev, struct store *st, uint64_t max_open_ns,
    int64_t now_ns, windows_notify_fn *notify, void *arg, struct windows **out);

/* Count the child's restarts inside each window with fn(arg). */
void windows_set_restarts_fn(struct windows *w, windows_restarts_fn *fn,
    void *arg);

/* NULL is a no-op.  Open windows stay open in the store. */
void windows_free(struct windows *w);

/* Set the per-uid limits: open windows, and ended ones not complete yet. */
void windows_set_limits(struct windows *w, size_t open_per_uid,
    size_t ending_per_uid);

/* The host clock was stepped (now_ns by the new clock): expiries move. */
void windows_clock_stepped(struct windows *w, int64_t now_ns);

/* Apply a new max_open at now_ns: close the windows already open that long. */
void windows_set_max_open(struct windows *w, uint64_t max_open_ns, int64_t now_ns);

void windows_begin(struct windows *w, const struct windows_begin_req *req,
    struct windows_result *res);

void windows_end(struct windows *w, const struct windows_end_req *req,
    struct windows_result *res);

/*
 * Close every window open for max_open at now_ns, logging a notice for
 * each; returns how many were closed.  The timer runs this.
 */
size_t windows_expire(struct windows *w, int64_t now_ns);

/* When the next window's time is up, or INT64_MAX if none is open. */
int64_t windows_next_expiry(const struct windows *w);

/* The open windows, oldest first; valid until the next change. */
const struct window *windows_list(const struct windows *w, size_t *n);

#endif
