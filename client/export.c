/*
 * export: the samples of windows, or of a span of time, from the database.
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
#include <unistd.h>

#include "client.h"
#include "export.h"
#include "format.h"
#include "output.h"
#include "schema.h"

#define OUT_BUFSIZE	(256 * 1024)
#define HELP_SHOWN	(-1)	/* parse_options printed --help */

enum {
	OPT_ALL = CLIENT_OPT_FIRST_FREE,
	OPT_FROM,
	OPT_TO,
	OPT_PAD,
};

struct options {
	const char *window;	/* --window: an id (all digits) or a tag */
	bool all;
	const char *from, *to;
	enum export_format format;
	const char *output;	/* NULL or "-": stdout */
	char *metrics;		/* --metrics, as given */
	char *devices;		/* --device, as given */
	int64_t pad_ns;
};

/* The span of one export: a window's, or --from/--to's (win NULL). */
struct span {
	const struct db_window *win;
	int64_t lo_ns, hi_ns;	/* before the pad */
};

static int
usage(FILE *fp, int code)
{
	fprintf(fp,
	    "usage: spyremon export --window TAG|ID [--all] [options]\n"
	    "       spyremon export --from TIME [--to TIME] [options]\n"
	    "options: [--format csv|aiusmi|jsonl] [--output FILE]\n"
	    "         [--metrics KEY,...] [--device ID,...] [--pad DURATION]\n"
	    "\n"
	    "Writes every sample whose interval overlaps the window (or the span\n"
	    "FROM..TO, TO defaulting to now), widened by the pad on both sides.\n"
	    "A TAG matching several windows means the newest, or with --all each.\n"
	    "TIME is ISO 8601, epoch ns, or a duration ago such as 10m.\n");
	return code;
}

/* Parse the command line into o; an exit status if it is not usable. */
static int
parse_options(struct client *cl, int argc, char *argv[], struct options *o)
{
	static const struct option longopts[] = {
		CLIENT_LONGOPTS,
		{ "window", required_argument, NULL, 'w' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "to", required_argument, NULL, OPT_TO },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "device", required_argument, NULL, 'd' },
		{ "pad", required_argument, NULL, OPT_PAD },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t pad;
	int ch;

	while ((ch = getopt_long(argc, argv, CLIENT_SHORTOPTS "w:f:o:m:d:",
	    longopts, NULL)) != -1) {
		if (client_common_option(cl, ch, optarg))
			continue;
		switch (ch) {
		case 'w':
			o->window = optarg;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case OPT_FROM:
			o->from = optarg;
			break;
		case OPT_TO:
			o->to = optarg;
			break;
		case 'f':
			if (export_format_parse(optarg, &o->format) == -1) {
				warnx("--format %s: say csv, aiusmi or jsonl",
				    optarg);
				return CLIENT_EXIT_USAGE;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'm':
			o->metrics = optarg;
			break;
		case 'd':
			o->devices = optarg;
			break;
		case OPT_PAD:
			if (parse_duration(optarg, &pad) == -1 ||
			    pad > (uint64_t)INT64_MAX / 4) {
				warnx("--pad %s: not a duration such as 2s",
				    optarg);
				return CLIENT_EXIT_USAGE;
			}
			o->pad_ns = (int64_t)pad;
			break;
		case 'h':
			return usage(stdout, HELP_SHOWN);
		default:
			return usage(stderr, CLIENT_EXIT_USAGE);
		}
	}
	if (optind != argc)
		return usage(stderr, CLIENT_EXIT_USAGE);
	if ((o->window == NULL) == (o->from == NULL)) {
		warnx("export takes --window or --from, one of them");
		return usage(stderr, CLIENT_EXIT_USAGE);
	}
	if ((o->all && o->window == NULL) || (o->to != NULL && o->from == NULL)) {
		warnx("%s goes with %s", o->all ? "--all" : "--to",
		    o->all ? "--window" : "--from");
		return usage(stderr, CLIENT_EXIT_USAGE);
	}
	return CLIENT_EXIT_OK;
}

/* A list of device IDs, "0,1", as SQL: " AND device IN (0,1)". */
static int
device_clause(const char *list, char *sql, size_t len)
{
	const char *p = list;
	size_t used;

	used = (size_t)snprintf(sql, len, " AND " SCHEMA_C_DEVICE " IN (");
	for (;;) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || *p == '-' || *p == '+' || errno != 0 ||
		    v > INT_MAX || (*end != ',' && *end != '\0') ||
		    used + 16 >= len) {
			warnx("--device %s: give device IDs such as 0,1", list);
			return CLIENT_EXIT_USAGE;
		}
		used += (size_t)snprintf(sql + used, len - used, "%s%ld",
		    p == list ? "" : ",", v);
		if (*end == '\0')
			break;
		p = end + 1;
	}
	snprintf(sql + used, len - used, ")");
	return CLIENT_EXIT_OK;
}

static void
list_known(const struct db_catalog *cat)
{
	fprintf(stderr, "spyremon: known metrics:");
	for (size_t i = 0; i < cat->n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", cat->m[i].key);
	fputc('\n', stderr);
}

/*
 * The metrics to write, in *cols: those of --metrics in the order given,
 * or the whole catalog in catalog order.
 */
static int
pick_metrics(const struct db_catalog *cat, char *list,
    const struct db_metric ***cols, size_t *n)
{
	const struct db_metric **c;
	char *key, *save = NULL;

	if ((c = calloc(cat->n + 1, sizeof(*c))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	*cols = c;
	*n = 0;
	if (list == NULL) {
		for (size_t i = 0; i < cat->n; i++)
			c[(*n)++] = &cat->m[i];
		return CLIENT_EXIT_OK;
	}
	for (key = strtok_r(list, ",", &save); key != NULL;
	    key = strtok_r(NULL, ",", &save)) {
		const struct db_metric *m = db_catalog_find(cat, key);

		if (m == NULL) {
			warnx("--metrics: unknown metric '%s'", key);
			list_known(cat);
			return CLIENT_EXIT_USAGE;
		}
		for (size_t i = 0; i < *n; i++) {
			if (c[i] == m) {
				warnx("--metrics: '%s' is listed twice", key);
				return CLIENT_EXIT_USAGE;
			}
		}
		c[(*n)++] = m;
	}
	if (*n == 0) {
		warnx("--metrics: name at least one metric");
		return CLIENT_EXIT_USAGE;
	}
	return CLIENT_EXIT_OK;
}

/* All digits: a window id. */
static bool
is_id(const char *s, int64_t *id)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*id = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* The windows --window names, oldest first, in *ws. */
static int
pick_windows(sqlite3 *db, const struct options *o, struct db_window **ws,
    size_t *n)
{
	struct db_window_filter f = { .newest_first = true };
	int rc;

	if (is_id(o->window, &f.id))
		f.by_id = true;
	else
		f.tag = o->window;
	if ((rc = db_windows(db, &f, ws, n)) != CLIENT_EXIT_OK)
		return rc;
	if (*n == 0) {
		if (f.by_id)
			warnx("no window %s", o->window);
		else
			warnx("no window is tagged '%s'", o->window);
		return CLIENT_EXIT_FAILED;
	}
	if (*n > 1 && !o->all) {
		fprintf(stderr, "spyremon: tag %s matches %zu windows; "
		    "exporting the newest (id %" PRId64 "); use --all for all\n",
		    o->window, *n, (*ws)[0].id);
		for (size_t i = 1; i < *n; i++) {
			free((*ws)[i].tag);
			free((*ws)[i].meta);
		}
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

static sqlite3_stmt *
prepare_select(sqlite3 *db, const struct db_metric *const *cols, size_t n,
    const char *device_sql)
{
	sqlite3_str *q = sqlite3_str_new(db);
	sqlite3_stmt *s = NULL;
	char *sql;

	sqlite3_str_appendall(q, "SELECT " SCHEMA_C_TS ", " SCHEMA_C_DEVICE
	    ", " SCHEMA_C_INTERVAL);
	for (size_t i = 0; i < n; i++)
		sqlite3_str_appendf(q, ", \"%w\"", cols[i]->col);
	sqlite3_str_appendf(q, " FROM " SCHEMA_T_SAMPLES " WHERE "
	    DB_OVERLAPS_SQL "%s ORDER BY " SCHEMA_C_TS ", " SCHEMA_C_DEVICE,
	    device_sql);
	if ((sql = sqlite3_str_finish(q)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		s = NULL;
	sqlite3_free(sql);
	return s;
}

/*
 * Write the rows of one span; *rows counts them.  A write error stops
 * the export at once.
 */
static int
export_span(sqlite3 *db, sqlite3_stmt *s, struct export_writer *w,
    const struct span *sp, const struct options *o, int64_t *rows)
{
	struct export_row r = { .stmt = s, .first_value = 3 };
	int64_t lo = sp->lo_ns - o->pad_ns, hi = sp->hi_ns + o->pad_ns;
	int rc;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, lo);
	sqlite3_bind_int64(s, 2, hi);
	sqlite3_bind_int64(s, 3, hi + DB_MAX_INTERVAL_NS);
	*rows = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		r.ts_ns = sqlite3_column_int64(s, 0);
		r.device = sqlite3_column_int(s, 1);
		r.interval_ms = sqlite3_column_int64(s, 2);
		export_write_row(w, &r, sp->win != NULL ? sp->win->id : 0);
		(*rows)++;
		if (ferror_unlocked(w->out)) {
			warn("%s", output_name(o->output));
			return CLIENT_EXIT_FAILED;
		}
	}
	return rc == SQLITE_DONE ? CLIENT_EXIT_OK : db_error(db, "the samples");
}

static void
note_empty(const struct span *sp)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN];

	fmt_time_ms(sp->lo_ns, b, sizeof(b));
	fmt_time_ms(sp->hi_ns, e, sizeof(e));
	if (sp->win != NULL)
		fprintf(stderr, "spyremon: no samples in window %" PRId64
		    " (%s), %s .. %s\n", sp->win->id, sp->win->tag, b, e);
	else
		fprintf(stderr, "spyremon: no samples in %s .. %s\n", b, e);
}

/* Write every span; the output is open. */
static int
write_spans(sqlite3 *db, sqlite3_stmt *s, struct export_writer *w,
    const struct span *spans, size_t n, const struct options *o)
{
	int64_t rows;
	int rc = CLIENT_EXIT_OK;

	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++) {
		export_begin_span(w, spans[i].win, o->all, i == 0);
		rc = export_span(db, s, w, &spans[i], o, &rows);
		if (rc == CLIENT_EXIT_OK && rows == 0)
			note_empty(&spans[i]);
	}
	return rc;
}

static int
bad_time(const char *opt, const char *arg)
{
	warnx("--%s %s: not a time (ISO 8601, epoch ns, or a duration ago "
	    "such as 10m)", opt, arg);
	return CLIENT_EXIT_USAGE;
}

/* The spans: one per window, or --from/--to's. */
static int
make_spans(const struct options *o, const struct db_window *ws, size_t nws,
    struct span **spans, size_t *n)
{
	int64_t now = now_realtime_ns();
	struct span *sp;

	*n = o->window != NULL ? nws : 1;
	if ((*spans = sp = calloc(*n, sizeof(*sp))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (o->window == NULL) {
		sp->hi_ns = now;
		if (client_parse_time(o->from, &sp->lo_ns) == -1)
			return bad_time("from", o->from);
		if (o->to != NULL && client_parse_time(o->to, &sp->hi_ns) == -1)
			return bad_time("to", o->to);
		if (sp->hi_ns < sp->lo_ns) {
			warnx("--to is before --from");
			return CLIENT_EXIT_USAGE;
		}
		return CLIENT_EXIT_OK;
	}
	for (size_t i = 0; i < nws; i++) {
		sp[i].win = &ws[i];
		sp[i].lo_ns = ws[i].begin_ns;
		sp[i].hi_ns = ws[i].open ? now : ws[i].end_ns;
		if (ws[i].open)
			fprintf(stderr, "spyremon: window %" PRId64 " (%s) is "
			    "still open; exporting up to now\n", ws[i].id,
			    ws[i].tag);
	}
	return CLIENT_EXIT_OK;
}

/* Select and write; everything the export needs is known. */
static int
run(sqlite3 *db, const struct options *o, struct export_writer *w,
    const struct span *spans, size_t nspans, const char *device_sql)
{
	sqlite3_stmt *s;
	int rc;

	if ((s = prepare_select(db, w->cols, w->ncols, device_sql)) == NULL)
		return db_error(db, "the samples");
	if ((w->out = output_open(o->output)) == NULL) {
		sqlite3_finalize(s);
		return CLIENT_EXIT_FAILED;
	}
	setvbuf(w->out, NULL, _IOFBF, OUT_BUFSIZE);
	if (export_writer_init(w) == -1)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	rc = write_spans(db, s, w, spans, nspans, o);
	export_writer_free(w);
	sqlite3_finalize(s);
	return output_close(w->out, o->output, rc);
}

int
cmd_export(struct client *cl, int argc, char *argv[])
{
	struct options o = { .format = EXPORT_CSV };
	struct export_writer w = { .format = EXPORT_CSV };
	struct db_catalog cat = { 0 };
	struct db_devmap map = { 0 };
	struct db_window *ws = NULL;
	struct span *spans = NULL;
	const struct db_metric **cols = NULL;
	size_t nws = 0, nspans = 0;
	char device_sql[1024] = "";
	const char *path;
	sqlite3 *db;
	int rc;

	if ((rc = parse_options(cl, argc, argv, &o)) != CLIENT_EXIT_OK)
		return rc == HELP_SHOWN ? CLIENT_EXIT_OK : rc;
	if (o.devices != NULL && (rc = device_clause(o.devices, device_sql,
	    sizeof(device_sql))) != CLIENT_EXIT_OK)
		return rc;
	if ((path = client_database(cl)) == NULL)
		return CLIENT_EXIT_FAILED;
	if ((rc = db_open(path, &db)) != CLIENT_EXIT_OK)
		return rc;
	if ((rc = db_catalog_load(db, &cat)) == CLIENT_EXIT_OK &&
	    (rc = db_devmap_load(db, &map)) == CLIENT_EXIT_OK &&
	    (rc = pick_metrics(&cat, o.metrics, &cols, &w.ncols)) ==
	    CLIENT_EXIT_OK &&
	    (o.window == NULL ||
	    (rc = pick_windows(db, &o, &ws, &nws)) == CLIENT_EXIT_OK) &&
	    (rc = make_spans(&o, ws, nws, &spans, &nspans)) == CLIENT_EXIT_OK) {
		w.format = o.format;
		w.cols = cols;
		w.map = &map;
		w.window_column = o.all;
		rc = run(db, &o, &w, spans, nspans, device_sql);
	}
	free(spans);
	db_windows_free(ws, nws);
	free(cols);
	db_devmap_free(&map);
	db_catalog_free(&cat);
	db_close(db);
	return rc;
}
