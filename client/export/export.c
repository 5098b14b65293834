/*
 * export: the samples of windows, of a span of time or of profiler traces,
 * from the database; with traces, also the merged trace (merge.h) and the
 * per-step table (steps.h).
 *
 * Everything is read in one read transaction (db.h), with one query per
 * span over a range of the samples table's primary key, in key order; the
 * wide table is read directly, not the sample_values view, and values are
 * written as they are read, so memory does not grow with the export.
 *
 * With --output the text is written whole or not at all (output.h).
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "cmd.h"
#include "export.h"
#include "export_priv.h"
#include "format.h"
#include "hosts.h"
#include "orphan.h"
#include "output.h"
#include "pragma.h"
#include "schema.h"
#include "settle.h"
#include "breakdown_out.h"
#include "opsenergy.h"
#include "summary.h"
#include "target.h"

#define OUT_BUFSIZE	(256 * 1024)

/*
 * The windows --window names in src's database, oldest first.  With
 * several databases, a message names the database (path).  again: the
 * messages were given already.
 */
static int
pick_windows(struct source *src, const char *path, const struct options *o,
    bool again)
{
	struct db_window_filter f = { .newest_first = true };
	struct db_window **ws = &src->ws;
	size_t *n = &src->nws;
	char in[PATH_MAX + 8] = "";
	int rc;

	if (path != NULL)
		snprintf(in, sizeof(in), "%s: ", path);
	db_window_filter_name(&f, o->window);
	if ((rc = db_windows(src->db, &f, ws, n)) != CLIENT_EXIT_OK)
		return rc;
	if (*n == 0) {
		if (f.by_id)
			warnx("%sno window %s", in, o->window);
		else
			warnx("%sno window is tagged '%s'", in, o->window);
		return CLIENT_EXIT_FAILED;
	}
	if (*n > 1 && !o->all) {
		if (!again)
			fprintf(stderr, "spyremon: %stag %s matches %zu "
			    "windows; exporting the newest (id %" PRId64 "); "
			    "use --all for all\n", in, o->window, *n,
			    (*ws)[0].id);
		for (size_t i = 1; i < *n; i++)
			db_window_clear(&(*ws)[i]);
		*n = 1;
	}
	/* newest first, so that [0] was the newest; now oldest first */
	for (size_t i = 0; i < *n / 2; i++) {
		struct db_window t = (*ws)[i];

		(*ws)[i] = (*ws)[*n - 1 - i];
		(*ws)[*n - 1 - i] = t;
	}
	return CLIENT_EXIT_OK;
}

/*
 * The metrics of the first database, looked up by key in src's: a key
 * another database lacks is an error naming both.
 */
static int
map_metrics(const struct job *j, struct source *src, const char *path)
{
	const struct source *first = &j->src[0];

	if ((src->cols = calloc(j->ncols + 1, sizeof(*src->cols))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < j->ncols; i++) {
		const char *key = first->cols[i]->key;

		if ((src->cols[i] = db_catalog_find(&src->cat, key)) == NULL) {
			warnx("%s: no metric '%s', which %s has: choose the "
			    "metrics with --metrics", path, key,
			    j->hs.dbs[0].path);
			return CLIENT_EXIT_FAILED;
		}
	}
	return CLIENT_EXIT_OK;
}

/*
 * Settle src's windows (settle.h), then read them again: a window the
 * file showed open or not yet complete may have ended or been stored.
 */
static int
settle_windows(struct job *j, struct source *src, const char *path)
{
	int rc;

	for (size_t i = 0; i < src->nws; i++) {
		rc = settle_window(j->cl, src->db, src->path, src->ws[i].id,
		    NULL, 0);
		if (rc == CLIENT_EXIT_INCOMPLETE)
			j->settled = rc;
		else if (rc != CLIENT_EXIT_OK)
			return rc;
	}
	db_windows_free(src->ws, src->nws);
	src->ws = NULL;
	src->nws = 0;
	return pick_windows(src, path, j->o, true);
}

/* Open every database and read its catalog, devices, metrics, windows. */
static int
open_sources(struct job *j, const char *const *paths, size_t n)
{
	const struct options *o = j->o;
	int rc;

	if ((j->src = calloc(n, sizeof(*j->src))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	j->nsrc = n;
	j->multi = n > 1;
	if ((rc = hosts_open(paths, n, &j->hs)) != CLIENT_EXIT_OK)
		return rc;
	if (j->multi)
		hosts_note_names(j->hs.dbs, n, stderr);
	for (size_t i = 0; i < n; i++) {
		struct source *src = &j->src[i];
		const char *path = j->multi ? paths[i] : NULL;

		src->db = j->hs.db[i];
		src->path = paths[i];
		if (j->multi)
			src->host = hosts_name(j->hs.dbs, n, i);
		if ((rc = db_catalog_load(src->db, &src->cat)) !=
		    CLIENT_EXIT_OK ||
		    (rc = db_devmap_load(src->db, &src->map)) != CLIENT_EXIT_OK)
			return rc;
		if (i == 0)
			rc = export_pick_metrics(&src->cat, o->metrics,
			    (o->merge != NULL || o->merge_dir != NULL) &&
			    !o->include_unreliable, &src->cols, &j->ncols);
		else
			rc = map_metrics(j, src, paths[i]);
		if (rc != CLIENT_EXIT_OK)
			return rc;
		if (o->window != NULL &&
		    (rc = pick_windows(src, path, o, false)) != CLIENT_EXIT_OK)
			return rc;
		if (o->window != NULL &&
		    (rc = settle_windows(j, src, path)) != CLIENT_EXIT_OK)
			return rc;
	}
	return CLIENT_EXIT_OK;
}

static void
close_sources(struct job *j)
{
	for (size_t i = 0; i < j->nsrc; i++) {
		struct source *src = &j->src[i];

		sqlite3_finalize(src->s);
		db_windows_free(src->ws, src->nws);
		free(src->cols);
		db_devmap_free(&src->map);
		db_catalog_free(&src->cat);
		db_coarse_free(&src->coarse);
	}
	free(j->src);
	hosts_close(&j->hs);
}

/*
 * The read of sp's rows stopped at a damaged page after from_ns and could
 * go on from after to_ns (0: nothing after it could be read): say about
 * how many rows of the cards seen (devs, a bit per device, every ival_ms)
 * could not be read, and mark the export partial.
 */
static void
note_damage(struct export_writer *w, const struct span *sp,
    const struct source *src, int64_t from_ns, int64_t to_ns,
    int64_t ival_ms, uint64_t devs)
{
	char what[64];
	int ncards = __builtin_popcountll(devs);

	w->damaged = true;
	if (sp->win != NULL)
		snprintf(what, sizeof(what), "this window");
	else
		snprintf(what, sizeof(what), "the span");
	if (to_ns > from_ns && ival_ms > 0 && ncards > 0)
		fprintf(stderr, "spyremon: about %" PRId64 " rows of %s could "
		    "not be read (damaged store: %s): %s; exit status %d says "
		    "so\n", (int64_t)ncards * ((to_ns - from_ns - 1) /
		    (ival_ms * 1000000)), what, src->path,
		    sqlite3_errmsg(src->db), CLIENT_EXIT_PARTIAL);
	else
		fprintf(stderr, "spyremon: rows of %s could not be read "
		    "(damaged store: %s): %s; exit status %d says so\n", what,
		    src->path, sqlite3_errmsg(src->db), CLIENT_EXIT_PARTIAL);
}

/*
 * The stamps sp's rows are read at, pad_ns wider on each side, in *out
 * (free it): a trace's span as a piece per epoch of the host clock it
 * reaches (db_trace_pieces: each sample read once, the pieces in the
 * trace's time one after another), else the span itself in its epoch.
 * How many.
 */
static size_t
span_pieces(const struct span *sp, int64_t pad_ns, struct db_trace_piece **out)
{
	const struct db_trace_clock *c = sp->trace != NULL ?
	    &sp->trace->epochs : NULL;

	if ((*out = calloc(db_trace_npieces(c), sizeof(**out))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (c != NULL)
		return db_trace_pieces(c, sp->lo_ns - pad_ns, sp->hi_ns + pad_ns,
		    *out);
	(*out)[0] = (struct db_trace_piece){ sp->lo_ns - pad_ns,
	    sp->hi_ns + pad_ns, sp->epoch, 0 };
	return 1;
}

/*
 * Write the rows of one span, piece after piece (span_pieces); *rows
 * counts them.  A write error stops the export at once.  A damaged page
 * is read around (note_damage): the rows before it and after it are
 * written.
 */
static int
export_span(struct export_writer *w, const struct span *sp,
    const struct options *o, int64_t *rows)
{
	struct export_damage dmg;
	struct db_trace_piece *p;
	int64_t nfile, n;
	size_t np = span_pieces(sp, o->pad_ns, &p);
	int rc = CLIENT_EXIT_OK;

	*rows = 0;
	for (size_t i = 0; i < np && rc == CLIENT_EXIT_OK; i++) {
		db_bind_epoch(sp->src->s, p[i].epoch);
		w->trace_shift_ns = p[i].shift_ns;
		rc = export_write_samples(w, sp->src->db, sp->src->s,
		    p[i].lo_ns, p[i].hi_ns, sp->win != NULL ? sp->win->id : 0,
		    output_name(o->output), &n, &nfile, &dmg);
		*rows += n;
		if (rc == CLIENT_EXIT_OK && dmg.damaged)
			note_damage(w, sp, sp->src, dmg.from_ns, dmg.to_ns,
			    dmg.interval_ms, dmg.devs);
	}
	w->trace_shift_ns = 0;
	free(p);
	return rc;
}

/*
 * The cards of sp and each one's first stamp, by device, in *cards
 * (free it): aiusmi's #MetricFiles block.  A trace's, of each epoch its
 * span reaches, that epoch's rows only.
 */
static int
span_cards(const struct job *j, const struct span *sp, struct db_key **cards,
    size_t *n)
{
	int64_t pad = j->o->pad_ns;

	if (sp->trace != NULL)
		return db_trace_first_by_device(sp->src->db, &sp->trace->epochs,
		    sp->lo_ns - pad, sp->hi_ns + pad, j->device_sql, cards, n);
	return db_first_by_device(sp->src->db, sp->lo_ns - pad,
	    sp->hi_ns + pad, sp->epoch, j->device_sql, cards, n);
}

static void
note_empty(const struct span *sp)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN], in[HOSTS_NAME_MAX + 16] = "";

	fmt_time_ms(sp->lo_ns, b, sizeof(b));
	fmt_time_ms(sp->hi_ns, e, sizeof(e));
	if (sp->src->host != NULL)
		snprintf(in, sizeof(in), " of host %s", sp->src->host);
	if (sp->win != NULL)
		fprintf(stderr, "spyremon: no samples%s in window %" PRId64
		    " (%s), %s .. %s\n", in, sp->win->id, sp->win->tag, b, e);
	else
		fprintf(stderr, "spyremon: no samples%s in %s .. %s\n", in, b,
		    e);
}

/* Write every span; the output is open. */
static int
write_spans(struct job *j, struct export_writer *w)
{
	const struct options *o = j->o;
	int64_t rows, win_rows = 0;
	int rc = CLIENT_EXIT_OK;

	w->trace.on = o->traces.n > 1 && o->window == NULL;
	for (size_t i = 0; i < j->nspans && rc == CLIENT_EXIT_OK; i++) {
		const struct span *sp = &j->spans[i];
		struct db_key *cards = NULL;
		size_t ncards = 0;
		/* a window's later pieces go on from its first */
		bool more = i > 0 && sp->win != NULL &&
		    j->spans[i - 1].win == sp->win;
		bool last = i + 1 == j->nspans || sp->win == NULL ||
		    j->spans[i + 1].win != sp->win;

		if (w->format == EXPORT_AIUSMI && (rc = span_cards(j, sp,
		    &cards, &ncards)) != CLIENT_EXIT_OK)
			break;
		w->cards = cards;
		w->ncards = ncards;

		if (w->trace.on) {
			w->trace.path = sp->trace->path;
			w->trace.has_rank = sp->trace->info.has_rank;
			w->trace.rank = sp->trace->info.rank;
			w->trace.host = sp->trace->host;
		}
		w->cols = sp->src->cols;
		w->map = &sp->src->map;
		w->coarse = sp->src->coarse;
		w->host = sp->src->host;
		if (!more)
			export_begin_span(w, sp->win, o->all, i == 0);
		free(cards);
		w->cards = NULL;
		w->ncards = 0;
		rc = export_span(w, sp, o, &rows);
		win_rows = more ? win_rows + rows : rows;
		/* none stored, unless a damaged page cost them (said) */
		if (rc == CLIENT_EXIT_OK && last && win_rows == 0 &&
		    (sp->win == NULL ||
		    !summary_damage_find(sp->win->end_note, NULL, 0)))
			note_empty(sp);
	}
	memset(&w->coarse, 0, sizeof(w->coarse));
	return rc;
}

static int
bad_time(const char *opt, const char *arg)
{
	warnx("--%s %s: not a time (ISO 8601, epoch ns, or a duration ago "
	    "such as 10m)", opt, arg);
	return CLIENT_EXIT_USAGE;
}

/* Say so when a trace and the window chosen for its samples are apart. */
static void
warn_apart(const struct trace_target *t, const struct span *win)
{
	char gap[FMT_BUFLEN];

	if (t->end_ns < win->lo_ns) {
		fmt_span(win->lo_ns - t->end_ns, gap, sizeof(gap));
		fprintf(stderr, "spyremon: warning: %s ends %s before window "
		    "%" PRId64 " (%s) begins: they do not overlap\n", t->path,
		    gap, win->win->id, win->win->tag);
	} else if (t->start_ns > win->hi_ns) {
		fmt_span(t->start_ns - win->hi_ns, gap, sizeof(gap));
		fprintf(stderr, "spyremon: warning: %s starts %s after window "
		    "%" PRId64 " (%s) ends: they do not overlap\n", t->path,
		    gap, win->win->id, win->win->tag);
	}
}

/* A new span of src, any epoch; j->spans grows (pointers into it do not
 * outlive make_spans). */
static struct span *
add_span(struct job *j, struct source *src)
{
	struct span *sp;

	if (j->nspans == j->spans_cap) {
		j->spans_cap = j->spans_cap == 0 ? 8 : 2 * j->spans_cap;
		if ((sp = reallocarray(j->spans, j->spans_cap,
		    sizeof(*j->spans))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		j->spans = sp;
	}
	sp = &j->spans[j->nspans++];
	*sp = (struct span){ .src = src, .epoch = -1 };
	return sp;
}

/* Whether the export derives from traces (--merge, --steps, ...). */
static bool
derived(const struct options *o)
{
	return o->merge != NULL || o->merge_dir != NULL || o->steps ||
	    o->ops || o->breakdown;
}

/*
 * The spans: one per trace, else per database one per window or
 * --from/--to's.  A trace that no sample of its database overlaps is an
 * error, unless a window chooses the samples.
 */
static int
make_spans(struct job *j)
{
	const struct options *o = j->o;
	int64_t now = now_realtime_ns(), lo, hi;
	size_t n = o->window == NULL && o->traces.n > 0 ? o->traces.n : 0;
	struct span *sp;
	int rc;

	for (size_t k = 0; k < j->nsrc && n == 0; k++)
		n += o->window != NULL ? j->src[k].nws : 1;
	if ((j->spans = calloc(n + j->nsrc, sizeof(*j->spans))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	j->spans_cap = n + j->nsrc;
	if (o->window == NULL && o->traces.n > 0) {
		for (size_t i = 0; i < o->traces.n; i++) {
			struct source *src = &j->src[j->which[i]];

			if ((rc = trace_target_check_samples(src->db, &j->ts[i],
			    o->pad_ns)) != CLIENT_EXIT_OK)
				return rc;
			sp = add_span(j, src);
			sp->trace = &j->ts[i];
			sp->lo_ns = j->ts[i].start_ns;
			sp->hi_ns = j->ts[i].end_ns;
		}
		return CLIENT_EXIT_OK;
	}
	if (o->window == NULL) {
		hi = now;
		if (client_parse_time(o->from, &lo) == -1)
			return bad_time("from", o->from);
		if (o->to != NULL && client_parse_time(o->to, &hi) == -1)
			return bad_time("to", o->to);
		if (hi < lo) {
			warnx("--to is before --from");
			return CLIENT_EXIT_USAGE;
		}
		for (size_t k = 0; k < j->nsrc; k++) {
			sp = add_span(j, &j->src[k]);
			sp->lo_ns = lo;
			sp->hi_ns = hi;
		}
		return CLIENT_EXIT_OK;
	}
	for (size_t k = 0; k < j->nsrc; k++) {
		struct source *src = &j->src[k];

		for (size_t i = 0; i < src->nws; i++) {
			const struct db_window *w = &src->ws[i];
			struct db_piece *p;
			size_t np;
			int64_t end = w->open ? now : w->end_ns;

			/* its daemon gone: up to its last sample (orphan.h) */
			if ((rc = orphan_check(j->cl, src->db, w,
			    &end)) == CLIENT_EXIT_INCOMPLETE)
				j->settled = rc;
			else if (rc != CLIENT_EXIT_OK)
				return rc;
			else if (stepped_check(j->cl, w, true) ==
			    CLIENT_EXIT_INCOMPLETE)
				j->settled = CLIENT_EXIT_INCOMPLETE;
			else if (w->open)
				fprintf(stderr, "spyremon: window %" PRId64
				    " (%s) is still open; exporting up to "
				    "now\n", w->id, w->tag);
			/* a piece per epoch of the host clock it spans */
			if ((rc = db_window_pieces(src->db, w, end, &p,
			    &np)) != 0)
				return rc;
			for (size_t q = 0; q < np; q++) {
				sp = add_span(j, src);
				sp->win = w;
				sp->lo_ns = p[q].from_ns;
				sp->hi_ns = p[q].hi_ns;
				sp->epoch = p[q].epoch;
			}
			free(p);
			sp = &j->spans[j->nspans - 1];
			for (size_t t = 0; t < o->traces.n; t++)
				if (j->which[t] == k)
					warn_apart(&j->ts[t], sp);
		}
	}
	return CLIENT_EXIT_OK;
}

/*
 * Settle the spans of traces and of --from/--to (settle.h; the windows
 * were settled as they were picked): their end may be later than the
 * samples stored yet.
 */
static int
settle_spans(struct job *j)
{
	int rc;

	for (size_t i = 0; i < j->nspans; i++) {
		const struct span *sp = &j->spans[i];

		int64_t end = sp->hi_ns + j->o->pad_ns, epoch;

		if (sp->win != NULL)
			continue;
		/* a trace's end, as the host clock stamps it then */
		if (sp->trace != NULL)
			end = db_trace_stamp(&sp->trace->epochs, end, &epoch);
		rc = settle_span(j->cl, sp->src->db, sp->src->path, end);
		if (rc == CLIENT_EXIT_INCOMPLETE)
			j->settled = rc;
		else if (rc != CLIENT_EXIT_OK)
			return rc;
	}
	return CLIENT_EXIT_OK;
}

/*
 * A window begun before the oldest sample left has lost the samples from
 * its begin on: retention deletes the oldest first (past windows_max_age,
 * or to keep the file under max_size), and a window only exists while the
 * daemon samples.  Say which span of which window is gone; true if any.
 * DELETED_SLACK_NS allows for a daemon whose child had not printed its
 * first row yet when the window began.
 */
#define DELETED_SLACK_NS	(2 * (int64_t)NSEC_PER_SEC)
static int
note_deleted(const struct job *j, bool *partial)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN], note[1536];
	int64_t oldest;
	bool found;
	int rc;

	*partial = false;
	for (size_t i = 0; i < j->nspans; i++) {
		const struct span *sp = &j->spans[i];
		int64_t gone_to;

		if (sp->win == NULL ||
		    (i > 0 && j->spans[i - 1].win == sp->win))
			continue;
		/* rows a damaged page cost (the window's end_note says) */
		if (summary_damage_find(sp->win->end_note, note,
		    sizeof(note))) {
			fprintf(stderr, "spyremon: window %" PRId64 " (%s): "
			    "%s; exit status %d says so\n", sp->win->id,
			    sp->win->tag, note, CLIENT_EXIT_PARTIAL);
			*partial = true;
			continue;	/* not retention's doing */
		}
		if ((rc = db_oldest_cover(sp->src->db, &oldest, &found)) !=
		    CLIENT_EXIT_OK)
			return rc;
		if (!found || oldest - DELETED_SLACK_NS <= sp->lo_ns)
			continue;
		gone_to = oldest < sp->hi_ns ? oldest : sp->hi_ns;
		fmt_time_ms(sp->lo_ns, b, sizeof(b));
		fmt_time_ms(gone_to, e, sizeof(e));
		fprintf(stderr, "spyremon: window %" PRId64 " (%s): the samples "
		    "from %s to %s%s were deleted by retention "
		    "(retention.max_size or windows_max_age); exit status %d "
		    "says so\n", sp->win->id, sp->win->tag, b, e,
		    gone_to == sp->hi_ns ? " (all of it)" : "",
		    CLIENT_EXIT_PARTIAL);
		*partial = true;
	}
	return CLIENT_EXIT_OK;
}

/*
 * aiusmi without --metrics: the columns aiu-smi printed over any span, in
 * *shown (to be freed).
 */
static int
aiusmi_columns(struct job *j, bool **shown)
{
	const struct options *o = j->o;
	int rc = CLIENT_EXIT_OK;

	if ((*shown = calloc(j->ncols + 1, sizeof(**shown))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < j->nspans && rc == CLIENT_EXIT_OK; i++) {
		const struct span *sp = &j->spans[i];
		struct db_trace_piece *p;
		size_t np = span_pieces(sp, o->pad_ns, &p);

		for (size_t k = 0; k < np && rc == CLIENT_EXIT_OK; k++)
			rc = db_smi_printed(sp->src->db, sp->src->cols,
			    j->ncols, p[k].lo_ns, p[k].hi_ns, j->device_sql,
			    *shown);
		free(p);
	}
	return rc;
}

/* Select and write the samples of the spans. */
static int
run_samples(struct job *j, struct export_writer *w)
{
	const struct options *o = j->o;
	bool *shown = NULL;
	int rc = CLIENT_EXIT_OK;

	if (o->format == EXPORT_AIUSMI && o->metrics == NULL &&
	    (rc = aiusmi_columns(j, &shown)) == CLIENT_EXIT_OK)
		w->shown = shown;
	for (size_t k = 0; k < j->nsrc && rc == CLIENT_EXIT_OK; k++)
		if ((j->src[k].s = db_select_samples(j->src[k].db,
		    j->src[k].cols, j->ncols, j->device_sql, true)) == NULL)
			rc = db_error(j->src[k].db, "the samples");
	if (rc == CLIENT_EXIT_OK && (w->out = output_open(o->output)) == NULL)
		rc = CLIENT_EXIT_FAILED;
	if (rc != CLIENT_EXIT_OK) {
		w->shown = NULL;
		free(shown);
		return rc;
	}
	setvbuf(w->out, NULL, _IOFBF, OUT_BUFSIZE);
	w->cols = j->src[0].cols;
	w->trace_time = o->window == NULL && o->traces.n > 0;
	if (export_writer_init(w) == -1)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	/* imported coarse samples are counted first: the header says so */
	for (size_t k = 0; k < j->nsrc && rc == CLIENT_EXIT_OK; k++) {
		for (size_t i = 0; i < j->nspans && rc == CLIENT_EXIT_OK; i++) {
			struct db_trace_piece *p;
			size_t np;

			if (j->spans[i].src != &j->src[k])
				continue;
			np = span_pieces(&j->spans[i], o->pad_ns, &p);
			for (size_t q = 0; q < np && rc == CLIENT_EXIT_OK; q++)
				rc = export_coarse_span(j->src[k].db, w,
				    p[q].lo_ns, p[q].hi_ns, j->device_sql);
			free(p);
		}
		j->src[k].coarse = w->coarse;
		memset(&w->coarse, 0, sizeof(w->coarse));
	}
	if (rc == CLIENT_EXIT_OK)
		rc = write_spans(j, w);
	export_writer_free(w);
	w->shown = NULL;
	free(shown);
	return output_close(w->out, o->output, rc);
}

/* A trace's events for --ops (or a merge's slices) and --breakdown both. */
struct event_sinks {
	struct ops_events *ops;
	struct bd_trace *bt;
};

static void
both_on_event(const struct trace_event *ev, void *arg)
{
	const struct event_sinks *k = arg;

	ops_events_on_event(ev, k->ops);
	bd_trace_event(ev, k->bt);
}

/* Read every --trace, choose its database (hosts.h), and place it there. */
static int
load_traces(struct job *j)
{
	const struct options *o = j->o;
	struct hosts_trace *ht;
	struct stat sb;
	int rc = CLIENT_EXIT_OK;

	if (o->traces.n == 0)
		return CLIENT_EXIT_OK;
	for (size_t i = 0; i < o->traces.n; i++)
		if ((o->merge != NULL || o->merge_dir != NULL) &&
		    stat(o->traces.paths[i], &sb) == 0 &&
		    !S_ISREG(sb.st_mode)) {
			warnx("%s: --merge reads the trace twice (once for its "
			    "span, once to copy it), so it must be a file, not "
			    "a pipe", o->traces.paths[i]);
			return CLIENT_EXIT_USAGE;
		}
	if ((j->ts = calloc(o->traces.n, sizeof(*j->ts))) == NULL ||
	    (j->which = calloc(o->traces.n, sizeof(*j->which))) == NULL ||
	    (j->evs = calloc(o->traces.n, sizeof(*j->evs))) == NULL ||
	    (ht = calloc(o->traces.n, sizeof(*ht))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	/* --breakdown and its track take the events in the same pass */
	if (o->breakdown || o->breakdown_track) {
		j->bt = breakdown_new(o->traces.n);
		for (size_t i = 0; o->breakdown_track && i < o->traces.n; i++)
			bd_trace_keep_pieces(j->bt[i]);
		if ((j->sinks = calloc(o->traces.n, sizeof(*j->sinks))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	for (size_t i = 0; i < o->traces.n && rc == CLIENT_EXIT_OK; i++) {
		struct trace_clock_options co = o->clock;

		/*
		 * --ops and a merge's energy slices (one trace per output)
		 * take the device events from this read, not another, and
		 * so does --breakdown
		 */
		if (o->ops || o->merge_dir != NULL || (o->merge != NULL &&
		    o->traces.n == 1)) {
			j->evs[i] = ops_events_new(o->ops);
			co.on_event = ops_events_on_event;
			co.arg = j->evs[i];
		}
		if (j->bt != NULL && co.on_event != NULL) {
			j->sinks[i] = (struct event_sinks){ j->evs[i], j->bt[i] };
			co.on_event = both_on_event;
			co.arg = &j->sinks[i];
		} else if (j->bt != NULL) {
			co.on_event = bd_trace_event;
			co.arg = j->bt[i];
		}
		rc = trace_target_read(o->traces.paths[i], &co, &j->ts[i]);
		ht[i].path = o->traces.paths[i];
		ht[i].host = j->ts[i].host;
		ht[i].has_rank = j->ts[i].info.has_rank;
		ht[i].rank = j->ts[i].info.rank;
	}
	if (rc == CLIENT_EXIT_OK && hosts_match(ht, o->traces.n, j->hs.dbs,
	    j->nsrc, o->maps, o->nmaps, j->which, stderr) == -1)
		rc = CLIENT_EXIT_USAGE;
	free(ht);
	for (size_t i = 0; i < o->traces.n && rc == CLIENT_EXIT_OK; i++)
		rc = trace_target_place(j->src[j->which[i]].db, &o->clock,
		    &j->ts[i]);
	return rc;
}

/* The export that the options o ask for. */
static int
run(struct client *cl, const struct options *o)
{
	struct export_writer w = { .format = EXPORT_CSV };
	struct job j = { .o = o, .cl = cl };
	const char *const *paths;
	size_t npaths;
	int rc;

	if (o->devices != NULL && (rc = export_device_clause(o->devices,
	    j.device_sql, sizeof(j.device_sql))) != CLIENT_EXIT_OK)
		return rc;
	if (client_databases(cl, &paths, &npaths) == -1)
		return CLIENT_EXIT_FAILED;
	if ((rc = open_sources(&j, paths, npaths)) == CLIENT_EXIT_OK &&
	    (rc = load_traces(&j)) == CLIENT_EXIT_OK &&
	    (rc = make_spans(&j)) == CLIENT_EXIT_OK) {
		bool partial = false;

		w.format = o->format;
		w.by_source = o->by_source;
		w.ncols = j.ncols;
		w.window_column = o->all;
		rc = settle_spans(&j);
		if (rc == CLIENT_EXIT_OK && o->window != NULL)
			rc = note_deleted(&j, &partial);
		if (rc == CLIENT_EXIT_OK && derived(o))
			rc = export_run_derived(&j);
		else if (rc == CLIENT_EXIT_OK)
			rc = run_samples(&j, &w);
		if (rc == CLIENT_EXIT_OK && (partial || w.damaged))
			rc = CLIENT_EXIT_PARTIAL;
		else if (rc == CLIENT_EXIT_OK)
			rc = j.settled;
	}
	free(j.spans);
	for (size_t i = 0; j.ts != NULL && i < o->traces.n; i++) {
		trace_target_free(&j.ts[i]);
		ops_events_free(j.evs[i]);
	}
	free(j.evs);
	free(j.sinks);
	free(j.ts);
	breakdown_free(j.bt, o->traces.n);
	free(j.which);
	close_sources(&j);
	return rc;
}

static int
export_run(struct client *cl, void *opts, int argc, char *argv[])
{
	int rc;

	(void)argc;
	(void)argv;
	if ((rc = export_check_options(opts)) != CLIENT_EXIT_OK)
		return rc;
	cl->partial = ((const struct options *)opts)->partial;
	return client_exit(cl, run(cl, opts));
}

static void
export_done(void *opts)
{
	trace_list_free(&((struct options *)opts)->traces);
}

static const struct options export_cmd_defaults = {
	.format = EXPORT_CSV,
	.steps_format = -1,
	.merge_as = -1,
	.launch_gap_ns = -1,
};

const struct cmd_spec export_cmd = {
	.name = "export",
	.usage = export_usage,
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE) |
	    CMD_EXIT(CLIENT_EXIT_PARTIAL) | CMD_EXIT(CLIENT_EXIT_INCOMPLETE),
	.shortopts = "w:f:o:m:d:q",
	.longopts = export_longopts,
	.opts_size = sizeof(struct options),
	.defaults = &export_cmd_defaults,
	.option = export_option,
	.run = export_run,
	.done = export_done,
};
