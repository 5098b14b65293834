/*
 * report: "spyremon report --window TAG|ID [--trace FILE|DIR ...
 * [--align-window TAG|ID]] [--baseline TAG|ID] --output DIR": a directory
 * to attach to a GitHub issue as it is.  Several traces (a TensorBoard log
 * directory, or --trace again) are the ranks of the run: each has its
 * steps (runsteps.h), in report.md and steps.csv.
 *
 *   report.md        the torch-spyre methodology checklist, each item
 *                    filled from what is known (or a plain blank for a
 *                    person), the summary, the steps, the plots, the notes
 *                    on the data, and with --baseline the previous metric
 *   aiusmi.csv       the samples in aiu-smi's own CSV over the steps' span
 *                    (with a trace; else the window)
 *   steps.csv        export --steps' table (with a trace)
 *   power.png/.svg, temperature.png/.svg, bandwidth.png/.svg
 *   breakdown.png/.svg  with a trace: time by class per step and card
 *
 * The files are written in a new directory beside DIR and renamed to DIR
 * when all are complete: a failure leaves nothing behind.  DIR must not
 * exist, or be an empty directory.
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "compare.h"
#include "db.h"
#include "export.h"
#include "format.h"
#include "orphan.h"
#include "output.h"
#include "pragma.h"
#include "plot.h"
#include "report.h"
#include "report_ops.h"
#include "report_why.h"
#include "runsteps.h"
#include "steps.h"
#include "summarycmd.h"
#include "timeparse.h"
#include "version.h"
#include "winsum.h"

enum {
	OPT_WINDOW = CLIENT_OPT_FIRST_FREE, OPT_TRACE, OPT_ALIGN, OPT_BASELINE,
	OPT_OUTPUT, OPT_PARTIAL, OPT_EXPECT,
};

/* The rows of report.md's step table; steps.csv has them all. */
#define MD_MAX_STEPS	50

/*
 * A read of the samples for the report stopped at a damaged page: say so
 * unless the window's own note did, and exit with status 6.
 */
static void
damaged(struct report *r, sqlite3 *db)
{
	if (r->ws.settled != CLIENT_EXIT_PARTIAL)
		warnx("rows of the report's span could not be read (damaged "
		    "store: %s): %s; read up to there (exit status %d)",
		    sqlite3_db_filename(db, "main"), sqlite3_errmsg(db),
		    CLIENT_EXIT_PARTIAL);
	r->ws.settled = CLIENT_EXIT_PARTIAL;
}


/*
 * The line of metric k of card c: its points of the stream the metric
 * comes from, so that a card read from its file, whose rows of the two
 * streams interleave, draws each line unbroken by the other stream's
 * rows.  A card with rows of one stream (always so without direct reads)
 * uses its arrays as they are; otherwise *owned is set to memory to free.
 */
static void
series_line(const struct cardseries *c, int k, struct plot_line *l,
    double **owned)
{
	bool from_file = false;
	double *p;
	size_t n = 0;

	l->card = c->card;
	l->t0 = c->t0;
	l->t1 = c->t1;
	l->v = c->v[k];
	l->n = c->n;
	*owned = NULL;
	if (c->nfile == 0 || c->nfile == c->n)
		return;
	for (size_t i = 0; i < c->n && !from_file; i++)
		from_file = c->file[i] && isfinite(c->v[k][i]);
	if ((p = calloc(3 * c->n, sizeof(double))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < c->n; i++) {
		if ((c->file[i] != 0) != from_file)
			continue;
		p[n] = c->t0[i];
		p[c->n + n] = c->t1[i];
		p[2 * c->n + n] = c->v[k][i];
		n++;
	}
	l->t0 = p;
	l->t1 = p + c->n;
	l->v = p + 2 * c->n;
	l->n = n;
	*owned = p;
}

/* ---- the report ---- */

static FILE *
create(struct report *r, const char *name)
{
	char path[PATH_MAX + 32];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", r->tmp, name);
	if ((fp = fopen(path, "w")) == NULL)
		warn("%s", path);
	return fp;
}

static int
finish(FILE *fp, const struct report *r, const char *name)
{
	if (fflush(fp) == EOF || ferror(fp)) {
		warn("%s/%s", r->tmp, name);
		fclose(fp);
		return CLIENT_EXIT_FAILED;
	}
	if (fclose(fp) == EOF) {
		warn("%s/%s", r->tmp, name);
		return CLIENT_EXIT_FAILED;
	}
	return CLIENT_EXIT_OK;
}

/*
 * The window's pieces across the epochs of the host clock, which the
 * plots draw (db_window_pieces), and aiusmi.csv's: those, or the steps'
 * span in the trace's time as a piece per epoch (db_trace_pieces); r->lo
 * and r->hi their hull.
 */
static int
report_pieces(struct report *r)
{
	const struct db_piece *src;
	size_t n;
	int rc;

	if ((rc = db_window_pieces(r->db, &r->ws.w, r->ws.end_ns, &r->wpieces,
	    &r->nwpieces)) != CLIENT_EXIT_OK)
		return rc;
	src = r->wpieces;
	n = r->nwpieces;
	if (r->has_trace)
		n = db_trace_npieces(&r->rs.t[0].epochs);
	if ((r->apieces = calloc(n, sizeof(*r->apieces))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (r->has_trace) {
		/* the steps' span in the first trace's time: per epoch of
		 * the host clock, at its stamps */
		struct db_trace_piece *tp;

		if ((tp = calloc(n, sizeof(*tp))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		n = db_trace_pieces(&r->rs.t[0].epochs, r->rs.first_ns,
		    r->rs.last_ns, tp);
		for (size_t i = 0; i < n; i++)
			r->apieces[i] = (struct db_piece){ tp[i].lo_ns,
			    tp[i].hi_ns, tp[i].lo_ns, tp[i].epoch };
		free(tp);
	} else
		memcpy(r->apieces, src, n * sizeof(*src));
	r->napieces = n;
	r->lo = INT64_MAX;
	r->hi = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		if (r->apieces[i].from_ns < r->lo)
			r->lo = r->apieces[i].from_ns;
		if (r->apieces[i].hi_ns > r->hi)
			r->hi = r->apieces[i].hi_ns;
	}
	return CLIENT_EXIT_OK;
}

/*
 * The cards of aiusmi.csv's #MetricFiles block: over the steps' span in
 * the first trace's time, each epoch's rows only; else over the window.
 */
static int
first_cards(const struct report *r, sqlite3 *db, struct db_key **cards,
    size_t *n)
{
	if (r->has_trace)
		return db_trace_first_by_device(db, &r->rs.t[0].epochs,
		    r->rs.first_ns, r->rs.last_ns, "", cards, n);
	return db_first_by_device(db, r->lo, r->hi, -1, "", cards, n);
}

/*
 * aiusmi.csv from db, a connection of its own: it runs in a thread of its
 * own while the plots are drawn (see aiusmi_start).  It reads r->cat,
 * r->lo, r->hi and r->tmp, and writes only r->aiusmi_rows and
 * r->aiusmi_file_rows.  What aiu-smi -s prints, through export's writer:
 * its #MetricFiles block, its header with the columns it printed over the
 * span, one row per card per interval (pair.h).
 */
static int
write_aiusmi(struct report *r, sqlite3 *db)
{
	const struct db_metric **cols;
	struct export_writer w = { .format = EXPORT_AIUSMI };
	struct db_devmap map = { 0 };
	struct db_key *cards = NULL;
	bool *shown;
	sqlite3_stmt *s = NULL;
	int rc;

	if ((cols = calloc(r->cat.n + 1, sizeof(*cols))) == NULL ||
	    (shown = calloc(r->cat.n + 1, sizeof(*shown))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < r->cat.n; i++)
		cols[i] = &r->cat.m[i];
	w.cols = cols;
	w.ncols = r->cat.n;
	w.map = &map;
	w.shown = shown;
	if ((rc = db_devmap_load(db, &map)) != CLIENT_EXIT_OK ||
	    (rc = db_smi_printed(db, cols, r->cat.n, r->lo, r->hi, "",
	    shown)) != CLIENT_EXIT_OK ||
	    (rc = first_cards(r, db, &cards, &w.ncards)) != CLIENT_EXIT_OK)
		goto done;
	w.cards = cards;
	if ((s = db_select_samples(db, cols, r->cat.n, "", true)) == NULL) {
		rc = db_error(db, "the samples");
		goto done;
	}
	if ((w.out = create(r, "aiusmi.csv")) == NULL) {
		rc = CLIENT_EXIT_FAILED;
		goto done;
	}
	if (export_writer_init(&w) == -1)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if ((rc = export_coarse_span(db, &w, r->lo, r->hi, "")) ==
	    CLIENT_EXIT_OK)
		export_begin_span(&w, NULL, false, true);
	/* piece after piece, each of its epoch of the host clock */
	for (size_t i = 0; rc == CLIENT_EXIT_OK && i < r->napieces; i++) {
		const struct db_piece *p = &r->apieces[i];
		struct export_damage dmg;
		int64_t rows, file_rows;

		db_bind_epoch(s, p->epoch);
		rc = export_write_samples(&w, db, s, p->from_ns, p->hi_ns, 0,
		    "aiusmi.csv", &rows, &file_rows, &dmg);
		r->aiusmi_rows += rows;
		r->aiusmi_file_rows += file_rows;
		/* a damaged page: the rows around it, and exit status 6 */
		if (rc == CLIENT_EXIT_OK && dmg.damaged)
			damaged(r, db);
	}
	export_writer_free(&w);
	if (rc == CLIENT_EXIT_OK)
		rc = finish(w.out, r, "aiusmi.csv");
	else
		fclose(w.out);
done:
	sqlite3_finalize(s);
	db_devmap_free(&map);
	free(cards);
	free(shown);
	free(cols);
	return rc;
}

/*
 * steps.csv: export --steps' table of each trace; of several (the ranks
 * of a run), one table whose rows carry the host and the rank, as export
 * --steps over several traces writes it.
 */
static int
write_steps(struct report *r)
{
	struct steps_request rq = {
		.cat = &r->cat, .device_sql = "", .format = STEPS_CSV,
		.innermost = true, .tagged = r->rs.nt > 1,
	};
	char *host = NULL, *machine = NULL;
	int rc = CLIENT_EXIT_OK;

	if (rq.tagged && (rc = db_host(r->db, &host, &machine)) !=
	    CLIENT_EXIT_OK)
		return rc;
	rq.host = host != NULL ? host : "";
	if ((rq.out = create(r, "steps.csv")) == NULL)
		rc = CLIENT_EXIT_FAILED;
	for (size_t i = 0; i < r->rs.nt && rc == CLIENT_EXIT_OK; i++) {
		rq.t = &r->rs.t[i];
		rq.first = i == 0;
		rc = steps_report(r->db, &rq);
	}
	free(host);
	free(machine);
	if (rq.out == NULL)
		return rc;
	if (rc == CLIENT_EXIT_OK)
		return finish(rq.out, r, "steps.csv");
	fclose(rq.out);
	return rc;
}

/*
 * aiusmi.csv is the largest file, and shares nothing with the plots but
 * the catalog, which neither changes: it is written in a second thread on
 * a second read-only connection (a connection serves one thread: they are
 * opened SQLITE_OPEN_NOMUTEX), so that a second core draws the plots
 * meanwhile.  The two connections read snapshots of their own: the same
 * rows for an ended window, which the daemon no longer changes; for an
 * open one aiusmi.csv may hold a few rows that the plots do not.  export's
 * row writers keep the text of the last second in a static cache, so
 * nothing else exports rows until aiusmi_wait.
 */
struct aiusmi_job {
	struct report *r;
	const char *path;	/* the database */
	pthread_t thread;
	bool	 started;
	int	 rc;
};

static void *
aiusmi_run(void *arg)
{
	struct aiusmi_job *j = arg;
	sqlite3 *db;

	if ((j->rc = db_open(j->path, &db)) == CLIENT_EXIT_OK) {
		j->rc = write_aiusmi(j->r, db);
		db_close(db);
	}
	return NULL;
}

/* Start writing aiusmi.csv; where no thread can start, write it now. */
static void
aiusmi_start(struct aiusmi_job *j)
{
	if (pthread_create(&j->thread, NULL, aiusmi_run, j) == 0)
		j->started = true;
	else
		j->rc = write_aiusmi(j->r, j->r->db);
}

/* Wait for aiusmi.csv; its result. */
static int
aiusmi_wait(struct aiusmi_job *j)
{
	if (j->started) {
		pthread_join(j->thread, NULL);
		j->started = false;
	}
	return j->rc;
}

/* One chart of the metrics keys[0..n) as panels; skipped if none is known. */
static int
chart(struct report *r, const char *name, const char *title, const int *keys,
    const char *const *titles, const char *const *units, size_t n)
{
	struct plot_panel panels[4];
	struct plot_line *lines;
	double **owned;
	struct plot_chart c = { .title = title };
	double *sh0 = NULL, *sh1 = NULL, span;
	char png[PATH_MAX + 32], svg[PATH_MAX + 32], origin[FMT_BUFLEN];
	size_t np = 0;
	int rc;

	if ((lines = calloc(n * (r->ser.n + 1), sizeof(*lines))) == NULL ||
	    (owned = calloc(n * (r->ser.n + 1), sizeof(*owned))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t k = 0; k < n; k++) {
		struct plot_panel *p = &panels[np];

		if (!r->ser.has[keys[k]])
			continue;
		memset(p, 0, sizeof(*p));
		p->title = titles[k];
		p->unit = units[k];
		p->y_from_zero = keys[k] != S_GTEMP;
		p->lines = &lines[np * (r->ser.n + 1)];
		for (size_t i = 0; i < r->ser.n; i++) {
			size_t at = np * (r->ser.n + 1) + p->nlines++;

			series_line(&r->ser.c[i], keys[k], &lines[at],
			    &owned[at]);
		}
		np++;
	}
	if (np == 0) {
		free(lines);
		free(owned);
		return CLIENT_EXIT_OK;
	}
	span = (double)winsum_duration(&r->ws) / 1e9;
	c.x0 = -0.03 * span;
	c.x1 = span * 1.03;
	if (span <= 0) {
		c.x0 = -1;
		c.x1 = 1;
	}
	c.mark0 = 0;
	c.mark1 = span;
	format_time_utc(r->ws.w.begin_ns, origin, sizeof(origin));
	c.time_origin = origin;
	c.panels = panels;
	c.npanels = np;
	if (r->has_trace) {
		/*
		 * the first trace's steps (the ranks' would overlap), from
		 * the window's begin brought into that trace's time: the
		 * pieces the plots draw follow each other as the epochs do
		 * in it (db_trace_clock_load), whatever epoch it began in
		 */
		size_t first, ns = runsteps_of(&r->rs, 0, &first);
		int64_t origin_ns = db_trace_time(&r->rs.t[0].epochs,
		    r->ws.w.begin_ns, r->ws.w.begin_epoch);

		if ((sh0 = calloc(ns + 1, sizeof(double))) == NULL ||
		    (sh1 = calloc(ns + 1, sizeof(double))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		for (size_t i = 0; i < ns; i++) {
			const struct runstep *st = &r->rs.s[first + i];

			sh0[i] = (double)(st->start_ns - origin_ns) / 1e9;
			sh1[i] = sh0[i] + (double)st->dur_ns / 1e9;
		}
		c.shade0 = sh0;
		c.shade1 = sh1;
		c.nshade = ns;
	}
	snprintf(png, sizeof(png), "%s/%s.png", r->tmp, name);
	snprintf(svg, sizeof(svg), "%s/%s.svg", r->tmp, name);
	rc = plot_write(&c, png, svg) == 0 ? CLIENT_EXIT_OK : CLIENT_EXIT_FAILED;
	if (rc == CLIENT_EXIT_OK)
		snprintf(r->plots[r->nplots++], sizeof(r->plots[0]), "%s", name);
	free(sh0);
	free(sh1);
	for (size_t i = 0; i < n * (r->ser.n + 1); i++)
		free(owned[i]);
	free(owned);
	free(lines);
	return rc;
}

static int
write_plots(struct report *r)
{
	static const int pk[] = { S_PWR, S_BUSY };
	static const char *const pt[] = { "Power", "Busy" };
	static const char *const pu[] = { "W", "%" };
	static const int tk[] = { S_GTEMP };
	static const char *const tt[] = { "Temperature, gtemp" };
	static const char *const tu[] = { "C" };
	static const int bk[] = { S_RDMEM, S_WRMEM, S_RXPCI, S_TXPCI };
	static const char *const bt[] = {
		"Device memory read, rdmem", "Device memory write, wrmem",
		"PCIe receive, rxpci", "PCIe transmit, txpci",
	};
	static const char *const bu[] = { "GiB/s", "GiB/s", "GiB/s", "GiB/s" };
	char title[256];
	int rc;

	snprintf(title, sizeof(title), "Window %" PRId64 " '%s': power and busy",
	    r->ws.w.id, r->ws.w.tag);
	if ((rc = chart(r, "power", title, pk, pt, pu, 2)) != CLIENT_EXIT_OK)
		return rc;
	snprintf(title, sizeof(title), "Window %" PRId64 " '%s': temperature",
	    r->ws.w.id, r->ws.w.tag);
	if ((rc = chart(r, "temperature", title, tk, tt, tu, 1)) !=
	    CLIENT_EXIT_OK)
		return rc;
	snprintf(title, sizeof(title), "Window %" PRId64 " '%s': bandwidths",
	    r->ws.w.id, r->ws.w.tag);
	return chart(r, "bandwidth", title, bk, bt, bu, 4);
}

/*
 * What the run recorded of itself (runmeta.h), and its trace when no
 * --trace was given: the recorded one, placed at the window's begin if it
 * has no absolute time (*align then names the window, in idbuf).  A
 * recorded trace that cannot be read is said in the report, not fatal.
 */
static int
load_run(struct report *r, const char *expect, const char **align,
    char *idbuf, size_t idlen)
{
	char err[256];

	if (runmeta_load(&r->ws, expect, &r->run, err, sizeof(err)) == -1) {
		warnx("%s", err);
		return expect != NULL ? CLIENT_EXIT_USAGE : CLIENT_EXIT_FAILED;
	}
	if (r->traces.n > 0 || r->run.trace[0] == '\0')
		return CLIENT_EXIT_OK;
	if (access(r->run.trace, R_OK) == -1) {
		snprintf(r->trace_why, sizeof(r->trace_why), "the trace the "
		    "window names, %s, cannot be read: %s", r->run.trace,
		    strerror(errno));
		return CLIENT_EXIT_OK;
	}
	if (trace_list_add(&r->traces, "the window's trace", r->run.trace,
	    TRACELIST_MAX, stderr) != CLIENT_EXIT_OK)
		return CLIENT_EXIT_FAILED;
	if (r->run.trace_align_window) {
		snprintf(idbuf, idlen, "%" PRId64, r->ws.w.id);
		*align = idbuf;
	}
	return CLIENT_EXIT_OK;
}

/*
 * With no --baseline: the newest earlier window recorded as the baseline
 * of this window's workload (metadata baseline=true), if any; *baseline
 * then names it, in buf, and r->base_found says so.
 */
static int
find_baseline(struct report *r, char *buf, size_t len, const char **baseline)
{
	char workload[PROTO_META_VALUE_MAX + 1];
	int64_t id;
	int rc;

	if (winsum_meta(&r->ws, "workload", workload, sizeof(workload)) == NULL)
		return CLIENT_EXIT_OK;
	if ((rc = db_window_baseline(r->db, workload, r->ws.w.begin_ns, &id)) !=
	    0)
		return rc;
	if (id == 0)
		return CLIENT_EXIT_OK;
	snprintf(buf, len, "%" PRId64, id);
	*baseline = buf;
	r->base_found = true;
	return CLIENT_EXIT_OK;
}

/* name in r->tmp, holding f's text, if it was read. */
static int
write_run_copy(const struct report *r, const struct runfile *f,
    const char *name)
{
	char path[PATH_MAX + 32];
	FILE *fp;
	int rc = CLIENT_EXIT_OK;

	if (f->text == NULL)
		return CLIENT_EXIT_OK;
	snprintf(path, sizeof(path), "%s/%s", r->tmp, name);
	if ((fp = fopen(path, "w")) == NULL) {
		warn("%s", path);
		return CLIENT_EXIT_FAILED;
	}
	if (fwrite(f->text, 1, f->len, fp) != f->len || fflush(fp) == EOF) {
		warn("%s", path);
		rc = CLIENT_EXIT_FAILED;
	}
	if (fclose(fp) == EOF && rc == CLIENT_EXIT_OK) {
		warn("%s", path);
		rc = CLIENT_EXIT_FAILED;
	}
	return rc;
}

/* The reproducer (if it is the one recorded) and the profiler's table. */
static int
write_run_copies(struct report *r)
{
	int rc = CLIENT_EXIT_OK;

	if (runmeta_reproducer_ok(&r->run))
		rc = write_run_copy(r, &r->run.reproducer, "reproducer.py");
	if (rc == CLIENT_EXIT_OK)
		rc = write_run_copy(r, &r->run.table, "key_averages.txt");
	return rc;
}

struct report_opts {
	struct report r;
	const char *window, *align, *baseline, *expect;
	bool partial;
};

static int
report_option(void *opts, int ch, char *arg)
{
	struct report_opts *o = opts;

	switch (ch) {
	case OPT_WINDOW:
		o->window = arg;
		break;
	case OPT_TRACE:
		return trace_list_add(&o->r.traces, "--trace", arg,
		    TRACELIST_MAX, stderr);
	case OPT_ALIGN:
		o->align = arg;
		break;
	case OPT_BASELINE:
		o->baseline = arg;
		break;
	case OPT_OUTPUT:
		o->r.dir = arg;
		break;
	case OPT_PARTIAL:
		o->partial = true;
		break;
	case OPT_EXPECT:
		o->expect = arg;
		break;
	}
	return CLIENT_EXIT_OK;
}

static void
report_done(void *opts)
{
	trace_list_free(&((struct report_opts *)opts)->r.traces);
}

static int
report_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct report_opts *o = opts;
	struct report *r = &o->r;
	struct aiusmi_job job = { .r = r };
	struct winsum_from from;
	const char *window = o->window, *align = o->align;
	const char *baseline = o->baseline, *path;
	int64_t lookback;
	char idbuf[32], alignbuf[32], basebuf[32];
	int rc;

	(void)argc;
	(void)argv;
	r->cl = cl;
	cl->partial = o->partial;
	if (window == NULL || r->dir == NULL) {
		warnx("report needs --window and --output");
		rc = CLIENT_EXIT_USAGE;
		goto done;
	}
	if (align != NULL && r->traces.n == 0) {
		warnx("--align-window places a --trace");
		rc = CLIENT_EXIT_USAGE;
		goto done;
	}
	if ((path = client_database(cl)) == NULL) {
		rc = CLIENT_EXIT_FAILED;
		goto done;
	}
	job.path = path;
	lookback = summary_idle_lookback(cl);
	if ((rc = db_open(path, &r->db)) != CLIENT_EXIT_OK)
		goto done;
	from = (struct winsum_from){ .cl = cl, .path = path };
	if ((rc = winsum_load(r->db, &from, window, lookback, &r->ws)) !=
	    CLIENT_EXIT_OK)
		goto done;
	/* read by the clock's epochs, and a trace's samples too (target.h)
	 * where they are recorded */
	if (r->traces.n > 0 && stepped_check(cl, &r->ws.w, true) ==
	    CLIENT_EXIT_INCOMPLETE)
		r->ws.settled = CLIENT_EXIT_INCOMPLETE;
	if ((rc = load_run(r, o->expect, &align, alignbuf, sizeof(alignbuf))) !=
	    CLIENT_EXIT_OK)
		goto done;
	if (r->traces.n > 0) {
		if ((rc = runsteps_load(r->db, &r->traces, align, &r->rs)) !=
		    CLIENT_EXIT_OK)
			goto done;
		r->has_trace = true;
	}
	if (baseline == NULL && (rc = find_baseline(r, basebuf,
	    sizeof(basebuf), &baseline)) != CLIENT_EXIT_OK)
		goto done;
	if (baseline != NULL) {
		snprintf(idbuf, sizeof(idbuf), "%" PRId64, r->ws.w.id);
		if ((rc = compare_load(r->db, &from, baseline, idbuf, NULL, NULL,
		    false, lookback, 2.0, &r->cmp)) != CLIENT_EXIT_OK)
			goto done;
		r->has_base = true;
	}
	if ((rc = db_catalog_load(r->db, &r->cat)) != CLIENT_EXIT_OK ||
	    (rc = report_ops_load(r)) != CLIENT_EXIT_OK ||
	    (rc = report_why_load(r)) != CLIENT_EXIT_OK)
		goto done;
	if ((rc = report_pieces(r)) != CLIENT_EXIT_OK)
		goto done;
	if ((rc = output_dir_open(r->dir, r->tmp, sizeof(r->tmp))) !=
	    CLIENT_EXIT_OK)
		goto done;
	aiusmi_start(&job);
	if ((rc = report_series_load(r->db, &r->cat, r->wpieces,
	    r->nwpieces, winsum_duration(&r->ws) / 33 + 1, &r->ser)) !=
	    CLIENT_EXIT_OK)
		goto done;
	if ((r->has_trace && (rc = write_steps(r)) != CLIENT_EXIT_OK) ||
	    (rc = write_run_copies(r)) != CLIENT_EXIT_OK ||
	    (rc = write_plots(r)) != CLIENT_EXIT_OK ||
	    (rc = report_ops_plot(r)) != CLIENT_EXIT_OK ||
	    (rc = report_why_plot(r)) != CLIENT_EXIT_OK ||
	    (rc = aiusmi_wait(&job)) != CLIENT_EXIT_OK ||
	    (rc = report_write_md(r)) != CLIENT_EXIT_OK)
		goto done;
	rc = output_dir_publish(r->dir, r->tmp);
	if (r->ser.damaged)	/* the plots' read; after aiusmi.csv's job */
		damaged(r, r->db);
	if (rc == CLIENT_EXIT_OK && r->ws.settled != CLIENT_EXIT_OK)
		rc = r->ws.settled;	/* written, as far as it goes */
	if (rc == CLIENT_EXIT_OK || rc == CLIENT_EXIT_INCOMPLETE ||
	    rc == CLIENT_EXIT_PARTIAL)
		printf("%s: report.md, aiusmi.csv (%" PRId64 " rows)%s, %zu "
		    "plots\n", r->dir, r->aiusmi_rows, r->has_trace ?
		    ", steps.csv" : "", r->nplots + (r->ops_plot ? 1 : 0) +
		    (r->why_plot ? 1 : 0));
done:
	(void)aiusmi_wait(&job);
	if (r->nplots > 0 || r->ops_plot || r->why_plot)
		plot_done();
	output_dir_remove(r->tmp);
	report_series_free(&r->ser);
	free(r->wpieces);
	free(r->apieces);
	db_catalog_free(&r->cat);
	if (r->has_base)
		compare_free(&r->cmp);
	if (r->has_ops)
		ops_result_free(&r->ops);
	report_why_free(r);
	runsteps_free(&r->rs);
	runmeta_free(&r->run);
	winsum_free(&r->ws);
	db_close(r->db);
	return client_exit(cl, rc);
}

static const struct option report_longopts[] = {
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "align-window", required_argument, NULL, OPT_ALIGN },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "partial", no_argument, NULL, OPT_PARTIAL },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_spec report_cmd = {
	.name = "report",
	.usage =
	    "usage: spyremon report --window TAG|ID [--trace FILE|DIR ...\n"
	    "                       [--align-window TAG|ID]] [--baseline TAG|ID]\n"
	    "                       [--expect EXPR] --output DIR [--partial]\n"
	    "\n"
	    "Writes DIR (new, or empty): report.md with the torch-spyre methodology\n"
	    "checklist filled in, aiusmi.csv, steps.csv (with a trace), and plots of\n"
	    "power and busy, temperature and bandwidths as PNG and SVG; with a\n"
	    "trace, why it was slow: each step's time by class per card, with a\n"
	    "chart (breakdown.png, .svg).\n"
	    "\n"
	    "      --window TAG|ID        the window; a tag: the newest with it\n"
	    "      --trace FILE|DIR       the run's trace; again, or a TensorBoard\n"
	    "                             log DIR: its ranks\n"
	    "      --align-window TAG|ID  place the trace at this window's begin\n"
	    "      --baseline TAG|ID      compare with this window\n"
	    "      --expect EXPR          what was expected, e.g. 'step_ms<=120'\n"
	    "                             (step_ms, step_j, energy_j)\n"
	    "      --output DIR           where to write\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE) |
	    CMD_EXIT(CLIENT_EXIT_PARTIAL) | CMD_EXIT(CLIENT_EXIT_INCOMPLETE),
	.longopts = report_longopts,
	.operands = 0,
	.opts_size = sizeof(struct report_opts),
	.option = report_option,
	.run = report_run,
	.done = report_done,
};
