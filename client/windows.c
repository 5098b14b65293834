/*
 * windows: list profiling windows from the database, with the number of
 * samples that cover each (those whose interval overlaps it) and the
 * energy of all cards from its stored summary ("-" until spyremond has
 * summarized it; "spyremon summary" computes one for such a window).
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "orphan.h"
#include "settle.h"
#include "summary.h"
#include "db.h"
#include "format.h"
#include "json.h"
#include "window_json.h"

#define NCOLS	9

enum { OPT_JSON = CLIENT_OPT_FIRST_FREE, OPT_PARTIAL };

static const char *const col_names[NCOLS] = {
	"ID", "TAG", "USER", "BEGIN", "END", "DURATION", "SAMPLES", "ENERGY_J",
	"META",
};

/* One window as the table shows it; the last column is not padded. */
struct row {
	char *cell[NCOLS];
};


static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	return p;
}

/* The text of q, in memory that free(3) releases. */
static char *
str_finish(sqlite3_str *q)
{
	char *s, *p;

	if (sqlite3_str_errcode(q) != SQLITE_OK)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	/* NULL for an empty string too */
	s = sqlite3_str_finish(q);
	p = xstrdup(s != NULL ? s : "");
	sqlite3_free(s);
	return p;
}

/* Append s to q as one word: quoted, with \" and \\, if it must be. */
static void
append_word(sqlite3_str *q, const char *s)
{
	if (*s != '\0' && strpbrk(s, " \t\"\\") == NULL) {
		sqlite3_str_appendall(q, s);
		return;
	}
	sqlite3_str_appendchar(q, 1, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sqlite3_str_appendchar(q, 1, '\\');
		sqlite3_str_appendchar(q, 1, *s);
	}
	sqlite3_str_appendchar(q, 1, '"');
}

/* The metadata object as "key=value key=value", values quoted if needed. */
static char *
meta_words(const char *meta)
{
	yajl_val v = yajl_tree_parse(meta, NULL, 0);
	sqlite3_str *q = sqlite3_str_new(NULL);

	if (v == NULL || !YAJL_IS_OBJECT(v))
		sqlite3_str_appendall(q, meta);
	else {
		for (size_t i = 0; i < v->u.object.len; i++) {
			yajl_val x = v->u.object.values[i];

			if (i > 0)
				sqlite3_str_appendchar(q, 1, ' ');
			sqlite3_str_appendf(q, "%s=", v->u.object.keys[i]);
			if (YAJL_IS_STRING(x))
				append_word(q, x->u.string);
			else if (YAJL_IS_NUMBER(x))
				sqlite3_str_appendall(q, x->u.number.r);
			else
				sqlite3_str_appendall(q, "?");
		}
	}
	yajl_tree_free(v);
	return str_finish(q);
}

/*
 * The END cell: "open", "never ended" when its daemon is gone (orphan.h),
 * else the end, with why where the daemon ended it.
 */
static void
end_cell(const struct db_window *w, bool orphan, char *buf, size_t len)
{
	char t[FMT_BUFLEN];

	if (w->open) {
		snprintf(buf, len, "%s", orphan ? "never ended" : "open");
		return;
	}
	fmt_time_ms(w->end_ns, t, sizeof(t));
	snprintf(buf, len, "%s%s", t, strcmp(w->ended_by, "daemon_gone") == 0 ?
	    " (daemon gone)" : w->auto_closed ? " (auto)" : "");
}

static void
row_fill(struct row *r, const struct db_window *w, int64_t end_ns,
    bool orphan, int64_t samples, bool have_energy, double energy)
{
	char buf[FMT_BUFLEN + 16], *words;

	snprintf(buf, sizeof(buf), "%" PRId64, w->id);
	r->cell[0] = xstrdup(buf);
	r->cell[1] = fmt_controls(w->tag, false);	/* shown, not obeyed */
	fmt_user(w->uid, buf, sizeof(buf));
	r->cell[2] = xstrdup(buf);
	fmt_time_ms(w->begin_ns, buf, sizeof(buf));
	r->cell[3] = xstrdup(buf);
	end_cell(w, orphan, buf, sizeof(buf));
	r->cell[4] = xstrdup(buf);
	fmt_span(end_ns - w->begin_ns, buf, sizeof(buf));
	r->cell[5] = xstrdup(buf);
	snprintf(buf, sizeof(buf), "%" PRId64, samples);
	r->cell[6] = xstrdup(buf);
	if (have_energy)
		snprintf(buf, sizeof(buf), "%.3f", energy);
	else
		snprintf(buf, sizeof(buf), "-");
	r->cell[7] = xstrdup(buf);
	words = meta_words(w->meta);
	r->cell[8] = fmt_controls(words, false);
	free(words);
}

static void
print_table(struct row *rows, size_t n)
{
	size_t width[NCOLS];

	for (int c = 0; c < NCOLS; c++) {
		width[c] = strlen(col_names[c]);
		for (size_t i = 0; i < n; i++)
			if (strlen(rows[i].cell[c]) > width[c])
				width[c] = strlen(rows[i].cell[c]);
	}
	for (int c = 0; c < NCOLS - 1; c++)
		printf("%-*s  ", (int)width[c], col_names[c]);
	printf("%s\n", col_names[NCOLS - 1]);
	for (size_t i = 0; i < n; i++) {
		for (int c = 0; c < NCOLS - 1; c++)
			printf("%-*s  ", (int)width[c], rows[i].cell[c]);
		printf("%s\n", rows[i].cell[NCOLS - 1]);
	}
}

/* The database's host (null before schema version 5), for each window. */
struct host {
	char *hostname, *machine_id;
};

static void
gen_window(yajl_gen g, const struct db_window *w, int64_t end_ns,
    int64_t samples, const struct host *h, bool have_energy,
    double energy)
{
	char user[FMT_BUFLEN];
	struct window_json wj = {
		.members = WJ_OWNER | WJ_USER | WJ_TIMES | WJ_END | WJ_OPEN |
		    WJ_AUTO_CLOSED | WJ_COUNTS | WJ_HOST | WJ_ENERGY | WJ_META,
		.id = w->id, .tag = w->tag, .uid = w->uid, .user = user,
		.pid = w->pid, .begin_ns = w->begin_ns,
		.has_end = !w->open, .end_ns = w->end_ns,
		.open = w->open, .auto_closed = w->auto_closed,
		.duration_ns = end_ns - w->begin_ns, .samples = samples,
		.hostname = h->hostname, .machine_id = h->machine_id,
		.has_energy = have_energy, .energy_j = energy,
		.meta_json = w->meta, .meta_text_as_string = true,
	};

	fmt_user(w->uid, user, sizeof(user));
	window_json(g, &wj);
}

/*
 * List ws, counting samples up to now for open windows, up to the last
 * sample for those whose daemon is gone (then CLIENT_EXIT_INCOMPLETE
 * after the list, orphan.h).
 */
static int
list(const struct client *cl, sqlite3 *db, const struct db_window *ws,
    size_t n, bool json)
{
	int64_t now = now_realtime_ns(), samples;
	struct row *rows = NULL;
	yajl_gen g = NULL;
	struct host h = { NULL, NULL };
	int rc = CLIENT_EXIT_OK, orphaned = CLIENT_EXIT_OK;

	if (json && (rc = db_host(db, &h.hostname, &h.machine_id)) !=
	    CLIENT_EXIT_OK)
		return rc;
	if (json) {
		if ((g = json_gen_new(true)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		yajl_gen_array_open(g);
	} else if ((rows = calloc(n + 1, sizeof(*rows))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++) {
		int64_t end = ws[i].open ? now : ws[i].end_ns;
		double energy = 0;
		bool have = summary_stored_energy(db, ws[i].id, &energy);
		bool orphan;

		if ((rc = orphan_check(cl, db, &ws[i], &end)) ==
		    CLIENT_EXIT_INCOMPLETE)
			orphaned = rc;
		else if (rc != CLIENT_EXIT_OK)
			break;
		orphan = rc == CLIENT_EXIT_INCOMPLETE;
		if ((rc = db_count_samples(db, ws[i].begin_ns, end,
		    &samples)) != CLIENT_EXIT_OK)
			break;
		if (json)
			gen_window(g, &ws[i], end, samples, &h, have, energy);
		else
			row_fill(&rows[i], &ws[i], end, orphan, samples, have,
			    energy);
	}
	if (rc == CLIENT_EXIT_OK && json) {
		yajl_gen_array_close(g);
		json_gen_flush(g, stdout);
	} else if (rc == CLIENT_EXIT_OK)
		print_table(rows, n);
	if (g != NULL)
		yajl_gen_free(g);
	for (size_t i = 0; rows != NULL && i < n; i++)
		for (int c = 0; c < NCOLS; c++)
			free(rows[i].cell[c]);
	free(rows);
	free(h.hostname);
	free(h.machine_id);
	return rc == CLIENT_EXIT_OK ? orphaned : rc;
}

struct windows_opts {
	struct db_window_filter f;
	bool json, partial;
};

static int
windows_option(void *opts, int ch, char *arg)
{
	struct windows_opts *o = opts;

	switch (ch) {
	case 's':
		if (client_parse_time(arg, &o->f.since_ns) == -1) {
			warnx("--since %s: not a time (ISO 8601, epoch "
			    "ns, or a duration ago such as 2h)", arg);
			return CLIENT_EXIT_USAGE;
		}
		o->f.have_since = true;
		break;
	case 't':
		o->f.tag = arg;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_PARTIAL:
		o->partial = true;
		break;
	}
	return CLIENT_EXIT_OK;
}

static int
windows_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct windows_opts *o = opts;
	struct db_window *ws;
	const char *path;
	sqlite3 *db;
	size_t n;
	int rc, settled;

	(void)argc;
	(void)argv;
	cl->partial = o->partial;
	if ((path = client_database(cl)) == NULL)
		return CLIENT_EXIT_FAILED;
	if ((rc = db_open(path, &db)) != CLIENT_EXIT_OK)
		return rc;
	/* windows that just ended: their energy once it is stored */
	if ((settled = settle_pending(cl, db, path)) != CLIENT_EXIT_OK &&
	    settled != CLIENT_EXIT_INCOMPLETE) {
		db_close(db);
		return settled;
	}
	if ((rc = db_windows(db, &o->f, &ws, &n)) == CLIENT_EXIT_OK) {
		if (n == 0 && !o->json)
			fprintf(stderr, "spyremon: no windows%s\n",
			    o->f.tag != NULL || o->f.have_since ? " match" : "");
		else
			rc = list(cl, db, ws, n, o->json);
		db_windows_free(ws, n);
	}
	db_close(db);
	if (rc == CLIENT_EXIT_OK)
		rc = settled;
	return client_exit(cl, rc);
}

static const struct option windows_longopts[] = {
	{ "since", required_argument, NULL, 's' },
	{ "tag", required_argument, NULL, 't' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "partial", no_argument, NULL, OPT_PARTIAL },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_spec windows_cmd = {
	.name = "windows",
	.usage =
	    "usage: spyremon windows [--since TIME] [--tag TAG] [--json] "
	    "[--partial]\n"
	    "\n"
	    "Lists the windows, oldest first.  TIME is ISO 8601, epoch ns, or\n"
	    "a duration ago such as 2h.\n"
	    "\n"
	    "  -s, --since TIME      only windows open at some time since TIME\n"
	    "  -t, --tag TAG         only windows with this tag\n"
	    "      --json            a JSON array instead of the table\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE) | CMD_EXIT(CLIENT_EXIT_INCOMPLETE),
	.shortopts = "s:t:",
	.longopts = windows_longopts,
	.opts_size = sizeof(struct windows_opts),
	.option = windows_option,
	.run = windows_run,
};
