/*
 * windows: list profiling windows from the database, with the number of
 * samples that cover each (those whose interval overlaps it, each card's
 * counted as summary counts them, db_count_samples) and the energy of all
 * cards from its stored summary ("-" until spyremond has summarized it;
 * "spyremon summary" computes one for such a window): a table for a
 * person on a terminal (table.h), the plain columns elsewhere, or CSV or
 * JSON.
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
#include "output.h"
#include "pragma.h"
#include "table.h"
#include "window_json.h"

enum { OPT_JSON = CLIENT_OPT_FIRST_FREE, OPT_CSV, OPT_TABLE, OPT_OUTPUT,
    OPT_PARTIAL };

/* How the windows are written: plain is the table of old, for pipes. */
enum wformat { WF_DEFAULT, WF_PLAIN, WF_TABLE, WF_CSV, WF_JSON };

/* The plain table's columns, as they always were. */
static const struct table_col plain_cols[] = {
	{ "ID", NULL, TABLE_LEFT }, { "TAG", NULL, TABLE_LEFT },
	{ "USER", NULL, TABLE_LEFT }, { "BEGIN", NULL, TABLE_LEFT },
	{ "END", NULL, TABLE_LEFT }, { "DURATION", NULL, TABLE_LEFT },
	{ "SAMPLES", NULL, TABLE_LEFT }, { "ENERGY_J", NULL, TABLE_LEFT },
	{ "META", NULL, TABLE_LEFT },
};

/* For a person: END as a time of day when on BEGIN's day, META cut. */
static const struct table_col human_cols[] = {
	{ "ID", NULL, TABLE_RIGHT }, { "TAG", NULL, TABLE_LEFT },
	{ "USER", NULL, TABLE_LEFT }, { "BEGIN", NULL, TABLE_LEFT },
	{ "END", NULL, TABLE_LEFT }, { "DURATION", NULL, TABLE_RIGHT },
	{ "SAMPLES", NULL, TABLE_RIGHT }, { "ENERGY", "J", TABLE_RIGHT },
	{ "META", NULL, TABLE_LEFT },
};

#define NCOLS	(sizeof(plain_cols) / sizeof(plain_cols[0]))

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

/* The row of window w in t, plain or for a person. */
static void
row_fill(struct table *t, bool human, const struct db_window *w,
    int64_t dur_ns, bool orphan, int64_t samples, bool have_energy,
    double energy)
{
	char buf[FMT_BUFLEN + 16], tm[FMT_BUFLEN], *s, *c;

	table_row(t);
	table_cellf(t, "%" PRId64, w->id);
	s = fmt_controls(w->tag, false);	/* shown, not obeyed */
	table_cell(t, s);
	free(s);
	fmt_user(w->uid, buf, sizeof(buf));
	table_cell(t, buf);
	fmt_time_ms(w->begin_ns, buf, sizeof(buf));
	table_cell(t, buf);
	if (w->open || !human || !fmt_same_utc_day(w->begin_ns, w->end_ns)) {
		end_cell(w, orphan, buf, sizeof(buf));
		table_cell(t, buf);
	} else {
		fmt_clock_ms(w->end_ns, tm, sizeof(tm));
		table_cellf(t, "%s%s", tm, strcmp(w->ended_by, "daemon_gone") ==
		    0 ? " (daemon gone)" : w->auto_closed ? " (auto)" : "");
	}
	fmt_span(dur_ns, buf, sizeof(buf));
	table_cell(t, buf);
	table_cellf(t, "%" PRId64, samples);
	if (!have_energy)
		table_cell(t, "-");
	else if (human) {
		table_sig(buf, sizeof(buf), energy);
		table_cell(t, buf);
	} else
		table_cellf(t, "%.3f", energy);
	s = meta_words(w->meta);
	c = fmt_controls(s, false);
	table_cell(t, c);
	free(c);
	free(s);
}

/* The database's host (null before schema version 5), for each window. */
struct host {
	char *hostname, *machine_id;
};

static void
gen_window(yajl_gen g, const struct db_window *w, int64_t dur_ns,
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
		.duration_ns = dur_ns, .samples = samples,
		.hostname = h->hostname, .machine_id = h->machine_id,
		.has_energy = have_energy, .energy_j = energy,
		.meta_json = w->meta, .meta_text_as_string = true,
	};

	fmt_user(w->uid, user, sizeof(user));
	window_json(g, &wj);
}

/* Window w as a csv row: the members of its JSON object, meta as JSON. */
static void
csv_window(FILE *fp, const struct db_window *w, int64_t dur_ns,
    int64_t samples, const struct host *h, bool have_energy, double energy)
{
	char buf[FMT_BUFLEN];

	fprintf(fp, "%" PRId64 ",", w->id);
	fmt_csv_cell(fp, w->tag);
	fmt_user(w->uid, buf, sizeof(buf));
	fprintf(fp, ",%" PRIu32 ",", w->uid);
	fmt_csv_cell(fp, buf);
	format_time_utc(w->begin_ns, buf, sizeof(buf));
	fprintf(fp, ",%" PRId32 ",%" PRId64 ",%s,", w->pid, w->begin_ns, buf);
	if (!w->open) {
		format_time_utc(w->end_ns, buf, sizeof(buf));
		fprintf(fp, "%" PRId64 ",%s", w->end_ns, buf);
	} else
		putc(',', fp);
	fprintf(fp, ",%d,%d,%" PRId64 ",%" PRId64 ",", w->open, w->auto_closed,
	    dur_ns, samples);
	if (have_energy)
		fprintf(fp, "%.17g", energy);
	putc(',', fp);
	fmt_csv_cell(fp, h->hostname != NULL ? h->hostname : "");
	putc(',', fp);
	fmt_csv_cell(fp, h->machine_id != NULL ? h->machine_id : "");
	putc(',', fp);
	fmt_csv_cell(fp, w->meta);
	putc('\n', fp);
}

/*
 * List ws into fp as fmt says, counting samples up to now for open
 * windows, up to the last sample for those whose daemon is gone (then
 * CLIENT_EXIT_INCOMPLETE after the list, orphan.h).  A window part of
 * whose rows could not be read (a damaged page) is listed with the
 * samples of its stored summary, said on stderr, and *damaged set.
 */
/* The samples of window id's stored summary, 0 if it has none. */
static int64_t
stored_samples(sqlite3 *db, int64_t id)
{
	struct summary sm;
	int64_t n = 0;
	bool found;

	if (summary_load(db, id, &sm, &found) == 0 && found)
		for (size_t i = 0; i < sm.ncards; i++)
			n += sm.cards[i].samples;
	summary_free(&sm);
	return n;
}

static int
list(const struct client *cl, sqlite3 *db, const char *path,
    const struct db_window *ws, size_t n, enum wformat fmt, FILE *fp,
    bool *damaged)
{
	char note[512];
	const char *s;
	int64_t now = now_realtime_ns(), samples, dur;
	struct table *t = NULL;
	yajl_gen g = NULL;
	struct host h = { NULL, NULL };
	int rc = CLIENT_EXIT_OK, orphaned = CLIENT_EXIT_OK;

	if ((fmt == WF_JSON || fmt == WF_CSV) && (rc = db_host(db,
	    &h.hostname, &h.machine_id)) != CLIENT_EXIT_OK)
		return rc;
	if (fmt == WF_JSON) {
		g = json_gen_new(true);
		yajl_gen_array_open(g);
	} else if (fmt == WF_CSV)
		fputs("id,tag,uid,user,pid,begin_ns,begin,end_ns,end,open,"
		    "auto_closed,duration_ns,samples,energy_j,hostname,"
		    "machine_id,meta\n", fp);
	else
		t = table_new(fmt == WF_TABLE ? human_cols : plain_cols, NCOLS);
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
		rc = CLIENT_EXIT_OK;	/* an orphan is listed; said after */
		dur = end - ws[i].begin_ns;
		/* its stamps' span is not how long it ran: say why */
		if (ws[i].end_note != NULL && (s = strstr(ws[i].end_note,
		    WINDOW_CLOCK_STEP_MARK)) != NULL)
			warnx("window %" PRId64 ": %.*s", ws[i].id,
			    (int)strcspn(s, ";"), s);
		if (summary_damage_find(ws[i].end_note, note, sizeof(note))) {
			/* part of its rows cannot be read: the stored count */
			samples = stored_samples(db, ws[i].id);
			warnx("window %" PRId64 ": %s", ws[i].id, note);
			*damaged = true;
		} else if (db_window_count(db, &ws[i], end, &samples,
		    &dur) != CLIENT_EXIT_OK) {
			/* by its pieces across steps of the host clock */
			if (!sql_is_damage(sqlite3_errcode(db))) {
				rc = CLIENT_EXIT_DATABASE;
				break;
			}
			samples = stored_samples(db, ws[i].id);
			warnx("window %" PRId64 ": rows " SUMMARY_DAMAGE_MARK
			    "%s)", ws[i].id, path);
			*damaged = true;
		}
		if (fmt == WF_JSON)
			gen_window(g, &ws[i], dur, samples, &h, have, energy);
		else if (fmt == WF_CSV)
			csv_window(fp, &ws[i], dur, samples, &h, have, energy);
		else
			row_fill(t, fmt == WF_TABLE, &ws[i], dur, orphan,
			    samples, have, energy);
	}
	if (rc == CLIENT_EXIT_OK && fmt == WF_JSON) {
		yajl_gen_array_close(g);
		json_gen_flush(g, fp);
	} else if (rc == CLIENT_EXIT_OK && fmt == WF_TABLE)
		table_write(t, fp, table_width());
	else if (rc == CLIENT_EXIT_OK && fmt == WF_PLAIN)
		table_write_plain(t, fp);
	if (g != NULL)
		yajl_gen_free(g);
	table_free(t);
	free(h.hostname);
	free(h.machine_id);
	return rc == CLIENT_EXIT_OK ? orphaned : rc;
}

struct windows_opts {
	struct db_window_filter f;
	enum wformat fmt;
	const char *output;
	bool partial;
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
	case OPT_CSV:
	case OPT_TABLE:
		if (o->fmt != WF_DEFAULT) {
			warnx("--json, --csv and --table exclude each other");
			return CLIENT_EXIT_USAGE;
		}
		o->fmt = ch == OPT_JSON ? WF_JSON : ch == OPT_CSV ? WF_CSV :
		    WF_TABLE;
		break;
	case OPT_OUTPUT:
		o->output = arg;
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
	enum wformat fmt = o->fmt;
	struct db_window *ws;
	const char *path;
	sqlite3 *db;
	FILE *fp;
	size_t n;
	int rc, settled;
	bool damaged = false;

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
	if ((rc = db_windows(db, &o->f, &ws, &n)) != CLIENT_EXIT_OK) {
		db_close(db);
		return rc;
	}
	if ((fp = output_open(o->output)) == NULL)
		rc = CLIENT_EXIT_FAILED;
	else {
		if (fmt == WF_DEFAULT)
			fmt = table_for_terminal(fp) ? WF_TABLE : WF_PLAIN;
		if (n == 0 && (fmt == WF_TABLE || fmt == WF_PLAIN))
			fprintf(stderr, "spyremon: no windows%s\n",
			    o->f.tag != NULL || o->f.have_since ? " match" : "");
		else
			rc = list(cl, db, path, ws, n, fmt, fp, &damaged);
		/* --partial keeps the output of a window whose daemon died */
		rc = output_close(fp, o->output, client_exit(cl, rc));
	}
	db_windows_free(ws, n);
	db_close(db);
	if (rc == CLIENT_EXIT_OK)
		rc = settled;
	/* rows that could not be read are not waited for: 6 whatever --partial */
	if ((rc == CLIENT_EXIT_OK || rc == CLIENT_EXIT_INCOMPLETE) && damaged)
		return CLIENT_EXIT_PARTIAL;
	return client_exit(cl, rc);
}

static const struct option windows_longopts[] = {
	{ "since", required_argument, NULL, 's' },
	{ "tag", required_argument, NULL, 't' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "table", no_argument, NULL, OPT_TABLE },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "partial", no_argument, NULL, OPT_PARTIAL },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_spec windows_cmd = {
	.name = "windows",
	.usage =
	    "usage: spyremon windows [--since TIME] [--tag TAG]\n"
	    "                        [--json | --csv | --table] [--output FILE]\n"
	    "                        [--partial]\n"
	    "\n"
	    "Lists the windows, oldest first.  TIME is ISO 8601, epoch ns, or\n"
	    "a duration ago such as 2h.\n"
	    "\n"
	    "  -s, --since TIME      only windows open at some time since TIME\n"
	    "  -t, --tag TAG         only windows with this tag\n"
	    "      --json            a JSON array instead of the table\n"
	    "      --csv             one CSV row per window, the JSON's members\n"
	    "      --table           the aligned table with units, on a pipe too\n"
	    "                        (the default on a terminal)\n"
	    "      --output FILE     write FILE, whole or not at all\n"
	    "      --partial         a window whose daemon died: listed to its\n"
	    "                        last sample, exit 0\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE) |
	    CMD_EXIT(CLIENT_EXIT_PARTIAL) | CMD_EXIT(CLIENT_EXIT_INCOMPLETE),
	.shortopts = "s:t:",
	.longopts = windows_longopts,
	.opts_size = sizeof(struct windows_opts),
	.option = windows_option,
	.run = windows_run,
};
