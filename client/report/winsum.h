/*
 * winsum: one window with everything the summary, report and compare
 * commands say about it: the windows row (with how it ended, the clock's
 * sync state at both ends and the child's restarts, from schema 4 on),
 * its stored summary (summary.h) or, for a window not yet summarized,
 * one computed now and not stored, and the data-quality notes.
 *
 * Functions returning int give CLIENT_EXIT_OK, or another CLIENT_EXIT_*
 * after printing why.
 */
#ifndef SPYREMON_WINSUM_H
#define SPYREMON_WINSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "clocksync.h"
#include "db.h"
#include "summary.h"

struct winsum {
	struct db_window w;
	int64_t	 end_ns;		/* w.end_ns, or now while open (the last
					   sample if orphan) */
	bool	 orphan;		/* open, its daemon gone (orphan.h) */
	char	 ended_by[16];		/* "mark", "max_open", "exit", "" */
	int32_t	 until_pid;		/* 0 if none */
	struct clocksync clock_begin, clock_end;	/* known false if not recorded */
	bool	 restarts_known;
	int64_t	 restarts;
	struct summary s;
	bool	 live;			/* computed now, not stored */
	char	 why_live[96];		/* why, for a person */
	char	**notes;		/* data-quality notes, one sentence each */
	size_t	 nnotes;
	size_t	 clock_note;		/* the index of the note on the clock */
	int	 settled;		/* CLIENT_EXIT_OK, _INCOMPLETE (settle.h),
					   or _PARTIAL: part of its rows could
					   not be read (damage says so) */
	char	 damage[1536];		/* "about N rows of this window could
					   not be read (damaged store: ...)" */
};

/* Where a window is read from, to settle it first (settle.h). */
struct winsum_from {
	struct client *cl;
	const char *path;	/* the database's file */
};

/*
 * Load the window name means (an id, or the newest window with that tag,
 * saying so on stderr when several have it) and its summary, after
 * settling it (settle_window; a window that stays incomplete is loaded as
 * far as it goes, with a note, and out->settled says so).
 * idle_lookback_ns is used only for a summary computed now.
 */
int winsum_load(sqlite3 *db, const struct winsum_from *from,
    const char *name, int64_t idle_lookback_ns, struct winsum *out);

void winsum_free(struct winsum *ws);

/*
 * How long the window was open, as its summary measures it: its end less
 * its begin, or, for one a step of the host clock crossed, the time it
 * spent in each epoch of the clock together (db_window_pieces).
 */
int64_t winsum_duration(const struct winsum *ws);

/* The value of key in the window's metadata, or NULL. */
const char *winsum_meta(const struct winsum *ws, const char *key,
    char *buf, size_t len);

/*
 * The host clock's sync state over the window, in one sentence without
 * its subject: "at the window's begin and end: NOT synchronized (...).
 * Its samples cannot be lined up ...".  The notes hold it once, as
 * notes[clock_note], after "Host clock ".
 */
#define WINSUM_CLOCK_LEN	384
void winsum_clock(const struct winsum *ws, char *buf, size_t len);

/* Sums over the cards: energy in J, net energy (false if any card lacks it). */
double winsum_energy(const struct winsum *ws);
bool winsum_net_energy(const struct winsum *ws, double *out);

#endif
