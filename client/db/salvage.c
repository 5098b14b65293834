/*
 * db salvage: every row of a damaged database that can still be read,
 * copied into a new database OUT that the store creates with this
 * build's schema (salvage_copy.h says how each table is read and
 * written).  OUT is written as OUT.tmp and linked into place only once
 * complete and closed, never over a file that exists; a salvage that
 * fails or is interrupted removes OUT.tmp and its side files.
 *
 * The rows are read through SQL, by ranges of each table's key, skipping
 * the ranges SQLite cannot read (keyscan.h); for samples, the rows in
 * those ranges are then looked for on the file's own pages that no tree
 * reaches (salvage_walk.h), when there is no -wal file to make the main
 * file's pages stale.
 */
#include "dbtools.h"

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "db.h"
#include "json.h"
#include "output.h"
#include "salvage_copy.h"
#include "storedb.h"
#include "walcheck.h"

enum { OPT_JSON = CLIENT_OPT_FIRST_FREE };

struct salvage_opts {
	bool json;
};

/* rows buffered by the store between the copy's flushes, and some room */
#define PENDING_ROWS	8192

/* OUT.tmp and its side files, removed on failure and at a signal */
static char tmp_paths[3][PATH_MAX];

static void
remove_tmp(void)
{
	for (int i = 0; i < 3; i++)
		if (tmp_paths[i][0] != '\0')
			(void)unlink(tmp_paths[i]);
}

static bool
exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 || errno != ENOENT;
}

/* Set the temporary names; CLIENT_EXIT_OK, or why not. */
static int
claim_out(const char *out)
{
	static const char *const side[3] = { ".tmp", ".tmp-wal", ".tmp-shm" };

	if (exists(out)) {
		warnx("%s: exists; salvage writes a new database only", out);
		return CLIENT_EXIT_FAILED;
	}
	for (int i = 0; i < 3; i++) {
		if ((size_t)snprintf(tmp_paths[i], sizeof(tmp_paths[i]), "%s%s",
		    out, side[i]) >= sizeof(tmp_paths[i])) {
			warnx("%s: name too long", out);
			return CLIENT_EXIT_FAILED;
		}
		if (exists(tmp_paths[i])) {
			warnx("%s: exists, from an earlier salvage that did not "
			    "end?  Remove it first", tmp_paths[i]);
			memset(tmp_paths, 0, sizeof(tmp_paths));
			return CLIENT_EXIT_FAILED;
		}
	}
	return CLIENT_EXIT_OK;
}

/* Link OUT.tmp to OUT (never over a file) and drop the temporary name. */
static int
publish(const char *out)
{
	int dfd;
	char dir[PATH_MAX], *slash;

	if (access(tmp_paths[1], F_OK) == 0) {
		warnx("%s: the log was not emptied when the database closed",
		    tmp_paths[1]);
		return CLIENT_EXIT_FAILED;
	}
	if (link(tmp_paths[0], out) == -1) {
		warn("%s", out);
		return CLIENT_EXIT_FAILED;
	}
	(void)unlink(tmp_paths[0]);
	memset(tmp_paths, 0, sizeof(tmp_paths));
	snprintf(dir, sizeof(dir), "%s", out);
	if ((slash = strrchr(dir, '/')) != NULL)
		slash[slash == dir ? 1 : 0] = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(dfd);
		close(dfd);
	}
	return CLIENT_EXIT_OK;
}

static bool
anything_lost(const struct salvage *s)
{
	for (size_t i = 0; i < s->nt; i++)
		if (s->t[i].failed || s->t[i].ranges > 0 ||
		    s->t[i].dropped_cols > 0)
			return true;
	return false;
}

static void
report(const struct salvage *s, const char *from, const char *out)
{
	size_t partly = 0;

	printf("salvaged %s into %s\n", from, out);
	printf("  %-17s %8s  %s\n", "table", "saved", "lost");
	for (size_t i = 0; i < s->nt; i++) {
		const struct salvage_table *t = &s->t[i];

		if (!t->present) {
			printf("  %-17s %8s  (not in the database)\n", t->name,
			    "-");
			continue;
		}
		printf("  %-17s %8" PRIu64 "  ", t->name, t->saved);
		if (t->failed)
			printf("the rest: %s", t->err);
		else if (t->ranges == 0)
			printf("0");
		else if (t->lost_unknown && t->lost == 0)
			printf("unknown, in %zu unreadable range%s (one reaches "
			    "an end of the table)", t->ranges,
			    t->ranges == 1 ? "" : "s");
		else
			printf("about %" PRIu64 "%s, in %zu unreadable range%s",
			    t->lost, t->lost_unknown ? " and more at an end "
			    "of the table" : "", t->ranges,
			    t->ranges == 1 ? "" : "s");
		if (t->damaged_pages > 0)
			printf("; %" PRId64 " damaged page%s", t->damaged_pages,
			    t->damaged_pages == 1 ? "" : "s");
		if (t->dropped_cols > 0)
			printf("; %zu column%s dropped", t->dropped_cols,
			    t->dropped_cols == 1 ? "" : "s");
		printf("\n");
	}
	for (size_t i = 0; i < s->ndropped; i++)
		printf("  samples column %s: no metric in the catalog, not "
		    "copied\n", s->dropped[i]);
	if (s->walked)
		printf("  samples read from pages that no tree reaches: %"
		    PRIu64 "\n", s->recovered);
	if (s->walk_note[0] != '\0' && s->nlost > 0)
		printf("  %s\n", s->walk_note);
	for (size_t i = 0; i < s->nwin; i++)
		if (s->win[i].samples_lost)
			partly++;
	if (partly == 0)
		return;
	printf("  windows whose samples are partly lost: %zu (their "
	    "summaries are kept as\n    computed before the damage%s)\n",
	    partly, s->recovered > 0 ? "; the page walk may have found "
	    "some of\n    those samples" : "");
	for (size_t i = 0; i < s->nwin; i++)
		if (s->win[i].samples_lost)
			printf("    %" PRId64 " %s\n", s->win[i].id,
			    s->win[i].tag != NULL ? s->win[i].tag : "");
}

static void
report_json(const struct salvage *s, const char *from, const char *out)
{
	yajl_gen g = json_gen_new(true);

	yajl_gen_map_open(g);
	jsonw_put_str(g, "database", from);
	jsonw_put_str(g, "out", out);
	jsonw_str(g, "tables");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < s->nt; i++) {
		const struct salvage_table *t = &s->t[i];

		yajl_gen_map_open(g);
		jsonw_put_str(g, "name", t->name);
		jsonw_put_bool(g, "present", t->present);
		jsonw_put_uint(g, "saved", t->saved);
		jsonw_put_uint(g, "saved_from_unreached_pages", t->recovered);
		jsonw_put_uint(g, "lost_estimate", t->lost);
		jsonw_put_uint(g, "unreadable_ranges", t->ranges);
		jsonw_put_int_or_null(g, "damaged_pages", t->damaged_pages >= 0,
		    t->damaged_pages);
		jsonw_put_bool(g, "lost_at_an_end", t->lost_unknown);
		jsonw_put_uint(g, "dropped_columns", t->dropped_cols);
		jsonw_put_str_or_null(g, "error", t->failed ? t->err : NULL);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	jsonw_str(g, "dropped_sample_columns");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < s->ndropped; i++)
		jsonw_str(g, s->dropped[i]);
	yajl_gen_array_close(g);
	jsonw_str(g, "windows_with_samples_lost");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < s->nwin; i++) {
		if (!s->win[i].samples_lost)
			continue;
		yajl_gen_map_open(g);
		jsonw_put_int(g, "id", s->win[i].id);
		jsonw_put_str_or_null(g, "tag", s->win[i].tag);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	json_gen_flush(g, stdout);
	yajl_gen_free(g);
}

/* The copy itself, into the open store; CLIENT_EXIT_OK or FAILED. */
static int
copy_all(struct salvage *s)
{
	if (salvage_metrics(s) == -1 || storedb_tx_begin(s->dst) == -1)
		return CLIENT_EXIT_FAILED;
	if (salvage_samples(s) == -1 || salvage_tables(s) == -1) {
		storedb_tx_rollback(s->dst);
		return CLIENT_EXIT_FAILED;
	}
	return storedb_tx_commit(s->dst) == -1 ? CLIENT_EXIT_FAILED :
	    CLIENT_EXIT_OK;
}

static int
salvage_run(struct client *cl, void *opts_, int argc, char *argv[])
{
	const struct salvage_opts *o = opts_;
	const char *from = argv[0], *out = argv[1];
	struct salvage s = { 0 };
	struct walcheck wc = { 0 };
	char line[512];
	int rc;

	(void)cl;
	(void)argc;
	if ((rc = claim_out(out)) != CLIENT_EXIT_OK)
		return rc;
	if (walcheck_db(from, &wc) == -1)
		snprintf(s.walk_note, sizeof(s.walk_note), "no page walk: "
		    "%s-wal: %s", from, strerror(errno));
	else if (wc.wal_bytes > 0 || wc.main_empty)
		/* the log holds pages newer than the file's own */
		snprintf(s.walk_note, sizeof(s.walk_note), "no page walk: "
		    "the database has a -wal file");
	else
		s.walk_path = from;
	if (wc.verdict != WALCHECK_CLEAN) {
		walcheck_describe(&wc, line, sizeof(line));
		warnx("%s: %s; what SQLite reads is salvaged", from, line);
	}
	if ((rc = db_open(from, &s.src)) != CLIENT_EXIT_OK) {
		memset(tmp_paths, 0, sizeof(tmp_paths));
		return rc;
	}
	output_at_signal(remove_tmp);
	if (storedb_open(tmp_paths[0], PENDING_ROWS, &s.dst) == -1) {
		warnx("%s: cannot create the new database", tmp_paths[0]);
		rc = CLIENT_EXIT_FAILED;
	} else
		rc = copy_all(&s);
	storedb_close(s.dst);
	db_close(s.src);
	if (rc == CLIENT_EXIT_OK)
		rc = publish(out);
	if (rc != CLIENT_EXIT_OK) {
		remove_tmp();
		warnx("%s: not written", out);
	} else {
		salvage_windows_mark(&s);
		if (o->json)
			report_json(&s, from, out);
		else
			report(&s, from, out);
		if (anything_lost(&s))
			rc = CLIENT_EXIT_DAMAGED;
	}
	salvage_free(&s);
	return rc;
}

static int
salvage_option(void *opts_, int ch, char *arg)
{
	struct salvage_opts *o = opts_;

	(void)arg;
	if (ch == OPT_JSON)
		o->json = true;
	return CLIENT_EXIT_OK;
}

static const struct option salvage_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_spec db_salvage_cmd = {
	.name = "db salvage",
	.usage =
	    "usage: spyremon db salvage [--json] DAMAGED OUT\n"
	    "\n"
	    "Copy every row of the database DAMAGED that can still be read\n"
	    "into a new database OUT, written with this spyremon's schema:\n"
	    "samples, windows with their metadata and summaries, the metric\n"
	    "catalog, device map, cards, host, counters and the rest.  Each\n"
	    "table is read by ranges of its key, skipping the ranges SQLite\n"
	    "cannot read, so a damaged page costs the rows on it; samples\n"
	    "under a damaged interior page are read from the file's own pages\n"
	    "(only without a -wal file: stop spyremond first).  DAMAGED is only\n"
	    "read.  OUT must not exist; it is written as OUT.tmp and renamed\n"
	    "when complete.  Prints the rows saved per table and an estimate\n"
	    "of those lost, and the windows whose samples are partly lost.\n"
	    "\n"
	    "  --json      the counts as one JSON object\n"
	    "\n"
	    "Exit 0: every row copied; 14: OUT written, but rows were lost;\n"
	    "4: DAMAGED cannot be read at all; 1: OUT not written.\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE) |
	    CMD_EXIT(CLIENT_EXIT_DAMAGED),
	.longopts = salvage_longopts,
	.operands = 2,
	.opts_size = sizeof(struct salvage_opts),
	.option = salvage_option,
	.run = salvage_run,
};
