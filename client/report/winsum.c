/*
 * winsum: a window, its summary and its data-quality notes (winsum.h).
 */
#include <err.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "client.h"
#include "format.h"
#include "orphan.h"
#include "pragma.h"
#include "settle.h"
#include "timeparse.h"
#include "winsum.h"

static void __attribute__((format(printf, 2, 3)))
note(struct winsum *ws, const char *fmt, ...)
{
	va_list ap;
	char *s, **p;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	va_end(ap);
	if ((p = realloc(ws->notes, (ws->nnotes + 1) * sizeof(*p))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	ws->notes = p;
	ws->notes[ws->nnotes++] = s;
}

/* The columns schema 4 added to windows; absent before. */
static int
load_facts(sqlite3 *db, struct winsum *ws)
{
	struct db_window_facts f;
	int rc;

	if ((rc = db_window_facts(db, ws->w.id, &f)) != CLIENT_EXIT_OK)
		return rc;
	if (!f.recorded)
		return CLIENT_EXIT_OK;
	memcpy(ws->ended_by, f.ended_by, sizeof(ws->ended_by));
	ws->until_pid = f.until_pid;
	ws->clock_begin = f.clock_begin;
	ws->clock_end = f.clock_end;
	ws->restarts_known = f.restarts_known;
	ws->restarts = f.restarts;
	return CLIENT_EXIT_OK;
}

/* Append card c's device to list (a sentence's "cards 0, 1"). */
static void
add_device(char *list, size_t len, int device)
{
	size_t n = strlen(list);

	snprintf(list + n, len - n, "%s%d", n > 0 ? ", " : "", device);
}

/* "a,b,c" as "a, b, c" in buf. */
static const char *
spaced(const char *cols, char *buf, size_t len)
{
	size_t n = 0;

	for (const char *p = cols; *p != '\0' && n + 3 < len; p++) {
		buf[n++] = *p;
		if (*p == ',')
			buf[n++] = ' ';
	}
	buf[n] = '\0';
	return buf;
}

/*
 * Said once: "at the window's begin and end: X" when both ends read alike
 * (an open window: its begin alone), else each end's.
 */
void
winsum_clock(const struct winsum *ws, char *buf, size_t len)
{
	const struct clocksync *b = &ws->clock_begin, *e = &ws->clock_end;
	char db[128], de[128];
	bool unsync = (b->known && !b->synced) ||
	    (!ws->w.open && e->known && !e->synced);
	size_t n;

	clocksync_describe(b, db, sizeof(db));
	clocksync_describe(e, de, sizeof(de));
	if (ws->w.open)
		n = (size_t)snprintf(buf, len, "at the window's begin: %s", db);
	else if (strcmp(db, de) == 0)
		n = (size_t)snprintf(buf, len, "at the window's begin and end: "
		    "%s", db);
	else
		n = (size_t)snprintf(buf, len, "at the window's begin: %s; at "
		    "its end: %s", db, de);
	if (n < len)
		snprintf(buf + n, len - n, ".%s", unsync ? "  Its samples cannot "
		    "be lined up with another host's, nor with a trace from "
		    "another host." : "");
}

/* The data-quality notes, in the order spyremon(1) lists them. */
static void
make_notes(struct winsum *ws)
{
	const struct summary *s = &ws->s;
	char devs[256], span[FMT_BUFLEN], list[128], clk[WINSUM_CLOCK_LEN];

	if (ws->live)
		note(ws, "This summary was computed now and is not stored: "
		    "%s.", ws->why_live);
	if (s->ncards == 0)
		note(ws, "No samples cover the window.");
	/* the same columns at 0 on several cards make one note */
	for (size_t i = 0; i < s->ncards; i++) {
		const char *cols = s->cards[i].zero_while_busy;
		bool first = true;

		if (*cols == '\0')
			continue;
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->cards[j].zero_while_busy, cols) == 0)
				first = false;
		if (!first)
			continue;
		devs[0] = '\0';
		for (size_t j = i; j < s->ncards; j++)
			if (strcmp(s->cards[j].zero_while_busy, cols) == 0)
				add_device(devs, sizeof(devs),
				    s->cards[j].device);
		note(ws, "%s stay%s at 0 on card%s %s while busy.  This is a known "
		    "aiu-smi limitation, not idle hardware: on torch-spyre the "
		    "data moves by asynchronous DMA, which these counters do "
		    "not see (torch-spyre #4514).", spaced(cols, list,
		    sizeof(list)),
		    strchr(cols, ',') != NULL ? "" : "s",
		    strchr(devs, ',') != NULL ? "s" : "", devs);
	}
	devs[0] = '\0';
	for (size_t i = 0; i < s->ncards; i++)
		if (s->cards[i].unreliable[0] != '\0' && devs[0] == '\0')
			snprintf(devs, sizeof(devs), "%s",
			    s->cards[i].unreliable);
	if (devs[0] != '\0')
		note(ws, "%s hold values but are unreliable on current aiu-smi "
		    "builds; they are left out of every figure.",
		    spaced(devs, list, sizeof(list)));
	for (size_t i = 0; i < s->ncards; i++) {
		const struct summary_card *c = &s->cards[i];

		if (c->bad_values > 0)
			note(ws, "Card %d: %" PRId64 " value%s that %s not a "
			    "finite number (text, a blob, an infinity: a "
			    "database written elsewhere) left out of every "
			    "figure; a row whose stamp or interval is not one "
			    "is left out whole.", c->device, c->bad_values,
			    c->bad_values == 1 ? "" : "s",
			    c->bad_values == 1 ? "is" : "are");
		if (c->coarse_samples > 0)
			note(ws, "Card %d: %" PRId64 " of %" PRId64 " samples "
			    "were imported from an aiu-smi log: whole-second "
			    "local stamps, so their times are uncertain by up "
			    "to 1 s.", c->device, c->coarse_samples,
			    c->samples);
		if (c->gaps > 0) {
			fmt_span(c->gap_ns, span, sizeof(span));
			note(ws, "Card %d: %" PRId64 " gap%s longer than two "
			    "intervals, %s in all; samples cover %.1f %% of "
			    "the window.", c->device, c->gaps,
			    c->gaps == 1 ? "" : "s", span,
			    winsum_duration(ws) > 0 ? 100.0 *
			    (double)c->covered_ns /
			    (double)winsum_duration(ws) : 0.0);
		}
	}
	if (ws->restarts_known && ws->restarts > 0)
		note(ws, "aiu-smi was restarted %" PRId64 " time%s inside the "
		    "window; each restart leaves a gap.", ws->restarts,
		    ws->restarts == 1 ? "" : "s");
	else if (!ws->restarts_known && !ws->w.open)
		note(ws, "Restarts of aiu-smi inside the window were not "
		    "recorded (a window from before schema 4, or one that "
		    "spanned a restart of spyremond).");
	winsum_clock(ws, clk, sizeof(clk));
	ws->clock_note = ws->nnotes;
	note(ws, "Host clock %s", clk);
}

int
winsum_load(sqlite3 *db, const struct winsum_from *from, const char *name,
    int64_t idle_lookback_ns, struct winsum *out)
{
	char why[256];
	struct db_window_filter f = { .newest_first = true };
	struct db_window *w;
	size_t n;
	bool found;
	int rc;

	memset(out, 0, sizeof(*out));
	db_window_filter_name(&f, name);
	if ((rc = db_windows(db, &f, &w, &n)) != CLIENT_EXIT_OK)
		return rc;
	if (n == 0) {
		warnx(f.by_id ? "no window %s" : "no window is tagged '%s'",
		    name);
		return CLIENT_EXIT_FAILED;
	}
	if (n > 1)
		fprintf(stderr, "spyremon: tag %s matches %zu windows; using "
		    "the newest (id %" PRId64 ")\n", name, n, w[0].id);
	/* settled, the window is read again: it may have ended since */
	out->settled = settle_window(from->cl, db, from->path, w[0].id, why,
	    sizeof(why));
	f = (struct db_window_filter){ .by_id = true, .id = w[0].id };
	db_windows_free(w, n);
	if (out->settled != CLIENT_EXIT_OK &&
	    out->settled != CLIENT_EXIT_INCOMPLETE)
		return out->settled;
	if ((rc = db_windows(db, &f, &w, &n)) != CLIENT_EXIT_OK)
		return rc;
	if (n != 1) {
		db_windows_free(w, n);
		return db_error(db, "the window, again");
	}
	out->w = w[0];
	/* a database from elsewhere may hold control characters: shown */
	out->w.tag = w[0].tag != NULL ? fmt_controls(w[0].tag, false) : NULL;
	out->w.meta = w[0].meta != NULL ? fmt_controls(w[0].meta, true) : NULL;
	out->w.end_note = w[0].end_note != NULL ?
	    fmt_controls(w[0].end_note, false) : NULL;
	db_windows_free(w, n);
	if (out->settled == CLIENT_EXIT_INCOMPLETE)
		note(out, "Not every sample of the window is stored: %s.", why);
	out->end_ns = out->w.open ? now_realtime_ns() : out->w.end_ns;
	/* open, with its daemon gone: up to its last sample (orphan.h) */
	if ((rc = orphan_check(from->cl, db, &out->w, &out->end_ns)) ==
	    CLIENT_EXIT_INCOMPLETE) {
		out->orphan = true;
		out->settled = rc;
		note(out, "The window was never ended: the daemon that held it "
		    "is gone; read up to its last sample.");
	} else if (rc != CLIENT_EXIT_OK)
		return rc;
	/* a step back while it was open: only part of it in its stamps */
	if (stepped_check(from->cl, &out->w, true) == CLIENT_EXIT_INCOMPLETE) {
		out->settled = CLIENT_EXIT_INCOMPLETE;
		note(out, "The host clock was stepped back while the window was "
		    "open: the samples after the step are stamped before its "
		    "end, and its figures cover only the part within its "
		    "stamps.");
	}
	if (out->w.end_note != NULL && out->w.end_note[0] != '\0')
		note(out, "Ended by %s: %s.", out->w.ended_by,
		    out->w.end_note);
	/* completed though part of its rows could not be read */
	if (summary_damage_find(out->w.end_note, out->damage,
	    sizeof(out->damage)))
		out->settled = CLIENT_EXIT_PARTIAL;
	if ((rc = load_facts(db, out)) != CLIENT_EXIT_OK)
		return rc;
	if (summary_load(db, out->w.id, &out->s, &found) == -1)
		return db_error(db, "the window's summary");
	if (!found) {
		out->live = true;
		snprintf(out->why_live, sizeof(out->why_live), "%s",
		    out->orphan ? "the window was never ended" :
		    out->w.open ? "the window is still open" :
		    !sql_column_exists(db, "windows", "summarized_ns") ?
		    "the database is from before summaries (schema 4)" :
		    "spyremond has not summarized the window yet");
		if (summary_compute(db, out->w.id, out->w.begin_ns,
		    out->end_ns, idle_lookback_ns, now_realtime_ns(),
		    &out->s) == -1)
			return db_error(db, "the window's samples");
		if (out->s.damaged) {
			summary_damage_note(&out->s, from->path != NULL ?
			    from->path : "?", out->damage, sizeof(out->damage));
			note(out, "%s.", out->damage);
			out->settled = CLIENT_EXIT_PARTIAL;
		}
	}
	if (out->settled == CLIENT_EXIT_PARTIAL)
		warnx("window %" PRId64 " '%s': %s (exit status %d)", out->w.id,
		    out->w.tag != NULL ? out->w.tag : "", out->damage,
		    CLIENT_EXIT_PARTIAL);
	make_notes(out);
	return CLIENT_EXIT_OK;
}

int64_t
winsum_duration(const struct winsum *ws)
{
	/* the summary's: the time of its pieces (summary.h) */
	if (ws->s.end_ns != 0 || ws->s.begin_ns != 0)
		return ws->s.end_ns - ws->s.begin_ns;
	return ws->end_ns > ws->w.begin_ns ? ws->end_ns - ws->w.begin_ns : 0;
}

void
winsum_free(struct winsum *ws)
{
	free(ws->w.tag);
	free(ws->w.meta);
	free(ws->w.end_note);
	summary_free(&ws->s);
	for (size_t i = 0; i < ws->nnotes; i++)
		free(ws->notes[i]);
	free(ws->notes);
	memset(ws, 0, sizeof(*ws));
}

const char *
winsum_meta(const struct winsum *ws, const char *key, char *buf, size_t len)
{
	yajl_val v = ws->w.meta != NULL ? yajl_tree_parse(ws->w.meta, NULL, 0) :
	    NULL;
	const char *path[] = { key, NULL };
	yajl_val x;
	const char *r = NULL;

	if (v == NULL)
		return NULL;
	if ((x = yajl_tree_get(v, path, yajl_t_string)) != NULL) {
		char *shown = fmt_controls(YAJL_GET_STRING(x), false);

		snprintf(buf, len, "%s", shown);
		free(shown);
		r = buf;
	}
	yajl_tree_free(v);
	return r;
}

double
winsum_energy(const struct winsum *ws)
{
	double e = 0;

	for (size_t i = 0; i < ws->s.ncards; i++)
		e += summary_energy(&ws->s.cards[i]);
	return e;
}

bool
winsum_net_energy(const struct winsum *ws, double *out)
{
	*out = 0;
	for (size_t i = 0; i < ws->s.ncards; i++) {
		if (!ws->s.cards[i].has_idle)
			return false;
		*out += ws->s.cards[i].net_energy_j;
	}
	return ws->s.ncards > 0;
}
