/*
 * db check: SQLite's integrity check of the database, read-only, in one
 * read transaction (so it runs beside spyremond), and what it means for a
 * person: intact, or which tables and indexes are damaged, how many of
 * their pages, and about how many rows are on those pages; and the state
 * of the write-ahead log as walcheck.h reads it.
 *
 * Pages are told to tables by SQLite's dbstat table, which walks every
 * b-tree and marks the pages it cannot read "corrupted"; a message of the
 * integrity check names a page, a tree's root or an index (intcheck.h).
 * Rows on a damaged page: the page count times the mean cells of the
 * tree's readable leaf pages (an estimate: the page itself cannot say).
 */
#include "dbtools.h"

#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "db.h"
#include "pragma.h"
#include "intcheck.h"
#include "json.h"
#include "walcheck.h"

#define MAX_MESSAGES	1000	/* integrity_check's limit */
#define TEXT_MESSAGES	10	/* shown without --json */

enum { OPT_JSON = CLIENT_OPT_FIRST_FREE };

struct check_opts {
	bool json;
};

/* A table or index of the database, and what the check found in it. */
struct object {
	char *name, *type;
	uint32_t root;
	uint64_t pages, leaves, leaf_cells;
	uint64_t damaged;	/* pages dbstat or a message found bad */
	bool named;		/* a message named it (an index's entries) */
};

struct check {
	const char *path;
	sqlite3 *db;
	int64_t page_size, page_count;
	int64_t listed;		/* pages dbstat lists: every tree reaches them */
	int64_t unreached;	/* pages neither reached, free nor SQLite's own */
	struct object *obj;
	size_t nobj;
	int32_t *owner;		/* page -> object, -1 unknown; page_count + 1 */
	bool have_dbstat;
	char dbstat_err[160];
	char **msgs;
	size_t nmsgs;
	uint32_t *unowned;	/* pages named by a message, no object's */
	size_t nunowned;
	struct walcheck wal;
	bool wal_read;
	char wal_line[512];
};

static struct object *
object_named(struct check *c, const char *name)
{
	for (size_t i = 0; i < c->nobj; i++)
		if (strcmp(c->obj[i].name, name) == 0)
			return &c->obj[i];
	return NULL;
}

static void
oom(void)
{
	errx(CLIENT_EXIT_FAILED, "out of memory");
}

/* The tables and indexes, from sqlite_master: -1 if it cannot be read. */
static int
read_objects(struct check *c)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(c->db, "SELECT name, type, rootpage FROM "
	    "sqlite_master WHERE rootpage > 0 ORDER BY rootpage", -1, &s,
	    NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct object *o;

		if ((o = reallocarray(c->obj, c->nobj + 1, sizeof(*o))) == NULL)
			oom();
		c->obj = o;
		o = &c->obj[c->nobj++];
		memset(o, 0, sizeof(*o));
		o->name = strdup((const char *)sqlite3_column_text(s, 0));
		o->type = strdup((const char *)sqlite3_column_text(s, 1));
		o->root = (uint32_t)sqlite3_column_int64(s, 2);
		if (o->name == NULL || o->type == NULL)
			oom();
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Pages that are in no tree by design: the free ones, the pointer maps of
 * an auto-vacuum database (page 2, then one every page_size/5 + 1 pages:
 * spyremon's files reserve no bytes at the end of a page), and the page
 * that holds the lock byte at 1 GiB.  What is left of the file is under
 * a damaged page; integrity_check says so for an undamaged file, so the
 * count is shown only beside its messages.
 */
static int64_t
sqlite_own_pages(struct check *c)
{
	int64_t free_pages = 0, vacuum = 0, n;

	(void)sql_pragma_int(c->db, "freelist_count", &free_pages);
	(void)sql_pragma_int(c->db, "auto_vacuum", &vacuum);
	n = free_pages;
	if (vacuum != 0 && c->page_count >= 2)
		n += (c->page_count - 2) / (c->page_size / 5 + 1) + 1;
	if (c->page_size > 0 && c->page_count >= 1073741824 / c->page_size + 1)
		n++;
	return n;
}

/* Every page's tree, through dbstat; false (and why) if it cannot. */
static void
read_pages(struct check *c)
{
	sqlite3_stmt *s;
	int rc;

	if ((c->owner = malloc(((size_t)c->page_count + 1) *
	    sizeof(*c->owner))) == NULL)
		oom();
	for (int64_t p = 0; p <= c->page_count; p++)
		c->owner[p] = -1;
	if (sqlite3_prepare_v2(c->db, "SELECT name, pageno, pagetype, ncell "
	    "FROM dbstat", -1, &s, NULL) != SQLITE_OK) {
		snprintf(c->dbstat_err, sizeof(c->dbstat_err), "%s",
		    sqlite3_errmsg(c->db));
		return;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		const char *type = (const char *)sqlite3_column_text(s, 2);
		int64_t page = sqlite3_column_int64(s, 1);
		struct object *o = name != NULL ? object_named(c, name) : NULL;

		if (page > 0 && page <= c->page_count)
			c->listed++;
		if (o == NULL || type == NULL)
			continue;
		if (page > 0 && page <= c->page_count)
			c->owner[page] = (int32_t)(o - c->obj);
		if (strcmp(type, "overflow") == 0)
			continue;
		o->pages++;
		if (strcmp(type, "corrupted") == 0)
			o->damaged++;
		else if (strcmp(type, "leaf") == 0) {
			o->leaves++;
			o->leaf_cells += (uint64_t)sqlite3_column_int64(s, 3);
		}
	}
	if (rc != SQLITE_DONE)
		snprintf(c->dbstat_err, sizeof(c->dbstat_err), "%s",
		    sqlite3_errmsg(c->db));
	else
		c->have_dbstat = true;
	sqlite3_finalize(s);
	if (c->have_dbstat)
		c->unreached = c->page_count - c->listed - sqlite_own_pages(c);
}

static void
add_msg(struct check *c, const char *m, size_t n)
{
	char **v;

	if ((v = reallocarray(c->msgs, c->nmsgs + 1, sizeof(*v))) == NULL ||
	    (v[c->nmsgs] = strndup(m, n)) == NULL)
		oom();
	c->msgs = v;
	c->nmsgs++;
}

/* The integrity check's messages; -1 if it could not run at all. */
static int
integrity(struct check *c)
{
	sqlite3_stmt *s;
	char sql[64];
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA integrity_check(%d)", MAX_MESSAGES);
	if (sqlite3_prepare_v2(c->db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 0);

		if (t == NULL || strcmp(t, "ok") == 0)
			continue;
		/* a row may hold several lines */
		for (const char *p = t; *p != '\0';) {
			size_t n = strcspn(p, "\n");
			char line[512];

			snprintf(line, sizeof(line), "%.*s", (int)n, p);
			if (n > 0 && !intcheck_is_header(line))
				add_msg(c, p, n);
			p += n;
			if (*p == '\n')
				p++;
		}
	}
	if (rc != SQLITE_DONE) {
		char m[300];

		snprintf(m, sizeof(m), "the check itself failed: %s",
		    sqlite3_errmsg(c->db));
		add_msg(c, m, strlen(m));
	}
	sqlite3_finalize(s);
	return 0;
}

/* Tell each message's page or index to its object. */
static void
attribute(struct check *c)
{
	for (size_t i = 0; i < c->nmsgs; i++) {
		struct intcheck_msg m;
		struct object *o = NULL;

		if (!intcheck_parse(c->msgs[i], &m))
			continue;
		if (m.index[0] != '\0' && (o = object_named(c, m.index)) != NULL) {
			o->named = true;
			continue;
		}
		if (m.tree != 0)
			for (size_t k = 0; k < c->nobj && o == NULL; k++)
				if (c->obj[k].root == m.tree)
					o = &c->obj[k];
		if (o == NULL && m.page > 0 && m.page <= c->page_count &&
		    c->owner[m.page] >= 0 && !m.unused)
			o = &c->obj[c->owner[m.page]];
		if (o != NULL) {
			/* dbstat counted the page if it could not read it */
			if (o->damaged == 0)
				o->damaged = 1;
			o->named = true;
		} else if (m.page > 0 && !m.unused) {
			/* a page never used is counted with the unreached */
			uint32_t *u = reallocarray(c->unowned, c->nunowned + 1,
			    sizeof(*u));

			if (u == NULL)
				oom();
			c->unowned = u;
			c->unowned[c->nunowned++] = m.page;
		}
	}
}

/* Rows on o's damaged pages, estimated; false if it cannot be said. */
static bool
rows_on_damaged(const struct object *o, uint64_t *rows)
{
	if (o->leaves == 0 || o->damaged == 0)
		return false;
	*rows = (o->damaged * o->leaf_cells + o->leaves / 2) / o->leaves;
	return true;
}

static bool
damaged_object(const struct object *o)
{
	return o->damaged > 0 || o->named;
}

static bool
wal_damaged(const struct check *c)
{
	return c->wal_read && c->wal.verdict != WALCHECK_CLEAN;
}

static const char *
wal_state(const struct check *c)
{
	if (!c->wal_read)
		return "unreadable";
	switch (c->wal.verdict) {
	case WALCHECK_BAD_HEADER:
		return "bad_header";
	case WALCHECK_BAD_FRAME:
		return "bad_frame";
	default:
		return c->wal.wal_bytes > 0 ? "clean" : "none";
	}
}

static void
print_text(const struct check *c, bool intact)
{
	uint64_t rows;

	printf("%s: %s (%" PRId64 " pages of %" PRId64 " bytes)\n", c->path,
	    intact ? "ok" : "DAMAGED", c->page_count, c->page_size);
	if (c->nmsgs == 0)
		printf("  integrity check: no problem found\n");
	else
		printf("  integrity check: %zu problem%s%s\n", c->nmsgs,
		    c->nmsgs == 1 ? "" : "s", c->nmsgs >= MAX_MESSAGES ?
		    " (it stops there)" : "");
	for (size_t i = 0; i < c->nmsgs && i < TEXT_MESSAGES; i++)
		printf("    %s\n", c->msgs[i]);
	if (c->nmsgs > TEXT_MESSAGES)
		printf("    ... %zu more (--json lists them all)\n",
		    c->nmsgs - TEXT_MESSAGES);
	for (size_t i = 0; i < c->nobj; i++) {
		const struct object *o = &c->obj[i];

		if (!damaged_object(o))
			continue;
		printf("  damaged %s %s: ", o->type, o->name);
		if (o->damaged > 0)
			printf("%" PRIu64 " of %" PRIu64 " pages", o->damaged,
			    o->pages);
		else
			printf("its entries do not match its table");
		if (rows_on_damaged(o, &rows))
			printf(", about %" PRIu64 " rows on them", rows);
		printf("\n");
	}
	if (c->nmsgs > 0 && c->unreached > 0)
		printf("  %" PRId64 " page%s that no table reaches any more, "
		    "under a damaged page\n    (db salvage reads the rows of "
		    "samples on them)\n", c->unreached,
		    c->unreached == 1 ? "" : "s");
	if (c->nunowned > 0)
		printf("  %zu damaged or stray page%s in no table\n",
		    c->nunowned, c->nunowned == 1 ? "" : "s");
	if (!c->have_dbstat && !intact)
		printf("  (pages not told to tables: dbstat: %s)\n",
		    c->dbstat_err);
	if (!c->wal_read)
		printf("  write-ahead log: cannot be read: %s\n", c->wal_line);
	else if (c->wal.wal_bytes == 0)
		printf("  write-ahead log: none\n");
	else
		printf("  %s\n", c->wal_line);
	if (wal_damaged(c))
		printf("  starting spyremond on it keeps the originals aside "
		    "first (spyremond(8), DAMAGED DATABASE)\n");
	if (!intact && (c->nmsgs > 0 || !wal_damaged(c)))
		printf("  \"spyremon db salvage %s NEW.db\" copies every row "
		    "that can still be read\n", c->path);
}

static void
print_json(const struct check *c, bool intact)
{
	yajl_gen g = json_gen_new(true);
	uint64_t rows = 0;

	yajl_gen_map_open(g);
	jsonw_put_str(g, "database", c->path);
	jsonw_put_bool(g, "intact", intact);
	jsonw_put_int(g, "page_size", c->page_size);
	jsonw_put_int(g, "pages", c->page_count);
	jsonw_str(g, "problems");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < c->nmsgs; i++)
		jsonw_str(g, c->msgs[i]);
	yajl_gen_array_close(g);
	jsonw_str(g, "damaged");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < c->nobj; i++) {
		const struct object *o = &c->obj[i];
		bool has = rows_on_damaged(o, &rows);

		if (!damaged_object(o))
			continue;
		yajl_gen_map_open(g);
		jsonw_put_str(g, "name", o->name);
		jsonw_put_str(g, "type", o->type);
		jsonw_put_uint(g, "pages", o->pages);
		jsonw_put_uint(g, "damaged_pages", o->damaged);
		jsonw_put_int_or_null(g, "rows_on_damaged_pages", has,
		    (int64_t)rows);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	jsonw_put_int_or_null(g, "pages_unreached", c->have_dbstat,
	    c->unreached);
	jsonw_str(g, "pages_in_no_table");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < c->nunowned; i++)
		yajl_gen_integer(g, c->unowned[i]);
	yajl_gen_array_close(g);
	jsonw_put_str_or_null(g, "dbstat_error", c->have_dbstat ? NULL :
	    c->dbstat_err);
	jsonw_str(g, "wal");
	yajl_gen_map_open(g);
	jsonw_put_str(g, "state", wal_state(c));
	jsonw_put_uint(g, "bytes", c->wal_read ? c->wal.wal_bytes : 0);
	jsonw_put_uint(g, "frames", c->wal_read ? c->wal.frames : 0);
	jsonw_put_str(g, "description", c->wal_line);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	json_gen_flush(g, stdout);
	yajl_gen_free(g);
}

static void
check_free(struct check *c)
{
	for (size_t i = 0; i < c->nobj; i++) {
		free(c->obj[i].name);
		free(c->obj[i].type);
	}
	free(c->obj);
	free(c->owner);
	for (size_t i = 0; i < c->nmsgs; i++)
		free(c->msgs[i]);
	free(c->msgs);
	free(c->unowned);
	db_close(c->db);
}

static int
check_run(struct client *cl, void *opts_, int argc, char *argv[])
{
	const struct check_opts *o = opts_;
	struct check c = { 0 };
	bool intact;
	int rc;

	(void)argc;
	(void)argv;
	if ((c.path = client_database(cl)) == NULL)
		return CLIENT_EXIT_FAILED;
	/* the log first: SQLite's own open would recover it */
	if (walcheck_db(c.path, &c.wal) == -1)
		snprintf(c.wal_line, sizeof(c.wal_line), "%s-wal: %s", c.path,
		    strerror(errno));
	else {
		c.wal_read = true;
		walcheck_describe(&c.wal, c.wal_line, sizeof(c.wal_line));
	}
	if ((rc = db_open(c.path, &c.db)) != CLIENT_EXIT_OK)
		return rc;
	if (sql_pragma_int(c.db, "page_size", &c.page_size) == -1 ||
	    sql_pragma_int(c.db, "page_count", &c.page_count) == -1 ||
	    read_objects(&c) == -1 || integrity(&c) == -1) {
		warnx("cannot check the database %s: %s", c.path,
		    sqlite3_errmsg(c.db));
		check_free(&c);
		return CLIENT_EXIT_DATABASE;
	}
	read_pages(&c);
	attribute(&c);
	intact = c.nmsgs == 0 && !wal_damaged(&c);
	for (size_t i = 0; i < c.nobj; i++)
		if (c.obj[i].damaged > 0)
			intact = false;
	if (o->json)
		print_json(&c, intact);
	else
		print_text(&c, intact);
	check_free(&c);
	return intact ? CLIENT_EXIT_OK : CLIENT_EXIT_DAMAGED;
}

static int
check_option(void *opts_, int ch, char *arg)
{
	struct check_opts *o = opts_;

	(void)arg;
	if (ch == OPT_JSON)
		o->json = true;
	return CLIENT_EXIT_OK;
}

static const struct option check_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_spec db_check_cmd = {
	.name = "db check",
	.usage =
	    "usage: spyremon db check [--db FILE] [--json]\n"
	    "\n"
	    "Run SQLite's integrity check on the database, read-only (it never\n"
	    "changes the file, and runs while spyremond writes it), and say\n"
	    "whether it is intact; if not, which tables and indexes are\n"
	    "damaged, how many of their pages, and about how many rows are on\n"
	    "them.  Also the state of the write-ahead log (-wal): none, sound,\n"
	    "or damaged, with what SQLite's recovery would drop.\n"
	    "\n"
	    "  --db FILE   the database (default: the config's)\n"
	    "  --json      the findings as one JSON object\n"
	    "\n"
	    "Exit 0: intact; 14: damaged (the file or its log); 4: it cannot be\n"
	    "read at all.\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE) |
	    CMD_EXIT(CLIENT_EXIT_DAMAGED),
	.longopts = check_longopts,
	.operands = 0,
	.opts_size = sizeof(struct check_opts),
	.option = check_option,
	.run = check_run,
};
