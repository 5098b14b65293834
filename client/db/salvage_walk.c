/* salvage_walk: samples from leaf pages no tree reaches (salvage_walk.h). */
#include "salvage_walk.h"

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define MIN_COLS	8		/* samples has more since version 1 */
#define MAX_DEVICE	65535
#define MAX_INTERVAL_MS	(24 * 3600 * 1000)

struct walk {
	struct salvage *s;
	const struct keyscan_lost *lost;
	size_t nlost;
	const struct walk_shape *shape;
	struct pw_value *v;
	sqlite3_stmt *ins;
	uint64_t taken;
};

static bool
int_in(const struct pw_value *v, int n, int col, int64_t lo, int64_t hi)
{
	return col >= 0 && col < n && v[col].type == SQLITE_INTEGER &&
	    v[col].i >= lo && v[col].i <= hi;
}

static bool
null_or_int(const struct pw_value *v, int n, int col)
{
	return col < 0 || col >= n || v[col].type == SQLITE_NULL ||
	    v[col].type == SQLITE_INTEGER;
}

bool
salvage_walk_plausible(const struct pw_value *v, int n,
    const struct walk_shape *sh)
{
	return n >= MIN_COLS && n <= sh->tcols &&
	    int_in(v, n, sh->ts, 1, INT64_MAX) &&
	    int_in(v, n, sh->device, 0, MAX_DEVICE) &&
	    int_in(v, n, sh->interval, 0, MAX_INTERVAL_MS) &&
	    null_or_int(v, n, sh->skew) && null_or_int(v, n, sh->src);
}

static bool
in_lost(const struct walk *w, int64_t ts)
{
	for (size_t i = 0; i < w->nlost; i++)
		if (ts >= w->lost[i].from && ts <= w->lost[i].to)
			return true;
	return false;
}

static void
bind(sqlite3_stmt *ins, int at, const struct pw_value *x)
{
	switch (x->type) {
	case SQLITE_INTEGER:
		sqlite3_bind_int64(ins, at, x->i);
		break;
	case SQLITE_FLOAT:
		sqlite3_bind_double(ins, at, x->d);
		break;
	case SQLITE_TEXT:
		sqlite3_bind_text(ins, at, (const char *)x->p, (int)x->n,
		    SQLITE_TRANSIENT);
		break;
	case SQLITE_BLOB:
		sqlite3_bind_blob(ins, at, x->p, (int)x->n, SQLITE_TRANSIENT);
		break;
	default:
		sqlite3_bind_null(ins, at);
	}
}

static void
cell(void *ctx, const unsigned char *rec, size_t len)
{
	struct walk *w = ctx;
	const struct salvage *s = w->s;
	int n = pagewalk_record(rec, len, w->v, w->shape->tcols);

	if (n < 0 || !salvage_walk_plausible(w->v, n, w->shape) ||
	    !in_lost(w, w->v[w->shape->ts].i))
		return;
	sqlite3_reset(w->ins);
	for (int p = 0; p < s->nsel; p++) {
		int col = s->sel_col[p];

		if (col >= 0 && col < n)
			bind(w->ins, p + 1, &w->v[col]);
		else
			sqlite3_bind_null(w->ins, p + 1);
	}
	if (sqlite3_step(w->ins) == SQLITE_DONE &&
	    sqlite3_changes(s->mem) > 0)
		w->taken++;
}

/* The in-memory table, as wide as the select list, and its insert. */
static int
make_table(struct salvage *s, sqlite3_stmt **ins)
{
	sqlite3_str *c = sqlite3_str_new(NULL), *v = sqlite3_str_new(NULL);
	char *cols, *vals, *sql;
	int rc;

	for (int p = 0; p < s->nsel; p++) {
		sqlite3_str_appendf(c, "%sc%d", p > 0 ? ", " : "", p);
		sqlite3_str_appendf(v, "%s?", p > 0 ? ", " : "");
	}
	cols = sqlite3_str_finish(c);
	vals = sqlite3_str_finish(v);
	sql = sqlite3_mprintf("CREATE TABLE r (%s, PRIMARY KEY (c0, c1)) "
	    "WITHOUT ROWID", cols);
	rc = sql != NULL && cols != NULL && vals != NULL &&
	    sqlite3_exec(s->mem, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	sqlite3_free(sql);
	if (rc == 0) {
		sql = sqlite3_mprintf("INSERT OR IGNORE INTO r VALUES (%s)",
		    vals);
		rc = sql != NULL && sqlite3_prepare_v2(s->mem, sql, -1, ins,
		    NULL) == SQLITE_OK ? 0 : -1;
		sqlite3_free(sql);
	}
	sqlite3_free(cols);
	sqlite3_free(vals);
	return rc;
}

/* Skip every page a tree reaches; false if dbstat cannot list them. */
static bool
skip_tree_pages(struct salvage *s, struct pagewalk_file *f)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->src, "SELECT pageno FROM dbstat", -1, &st,
	    NULL) != SQLITE_OK) {
		snprintf(s->walk_note, sizeof(s->walk_note), "no page walk: "
		    "dbstat: %s", sqlite3_errmsg(s->src));
		return false;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);

		if (p >= 1 && p <= f->pages)
			f->skip[p] = 1;
	}
	if (rc != SQLITE_DONE)
		snprintf(s->walk_note, sizeof(s->walk_note), "no page walk: "
		    "dbstat: %s", sqlite3_errmsg(s->src));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE;
}

int
salvage_walk(struct salvage *s, const struct keyscan_lost *lost,
    size_t nlost, const struct walk_shape *shape)
{
	struct walk w = { .s = s, .lost = lost, .nlost = nlost,
	    .shape = shape };
	struct pagewalk_file f;

	if (s->walk_path == NULL || nlost == 0 || s->nsel < 2)
		return 0;
	if (pagewalk_open(s->walk_path, &f) == -1) {
		snprintf(s->walk_note, sizeof(s->walk_note), "no page walk: "
		    "%s: %s", s->walk_path, strerror(errno));
		return 0;
	}
	if (!skip_tree_pages(s, &f)) {
		pagewalk_close(&f);
		return 0;
	}
	if ((w.v = calloc((size_t)shape->tcols, sizeof(*w.v))) == NULL ||
	    sqlite3_open(":memory:", &s->mem) != SQLITE_OK ||
	    make_table(s, &w.ins) == -1) {
		pagewalk_close(&f);
		free(w.v);
		return -1;
	}
	if (pagewalk_pages(&f, cell, &w) == -1)
		snprintf(s->walk_note, sizeof(s->walk_note), "the page walk "
		    "stopped: %s: %s", s->walk_path, strerror(errno));
	s->walked = true;
	sqlite3_finalize(w.ins);
	pagewalk_close(&f);
	free(w.v);
	if (sqlite3_prepare_v2(s->mem, "SELECT * FROM r ORDER BY c0, c1", -1,
	    &s->merge, NULL) != SQLITE_OK)
		return -1;
	s->merge_row = sqlite3_step(s->merge) == SQLITE_ROW;
	return 0;
}

void
salvage_walk_free(struct salvage *s)
{
	sqlite3_finalize(s->merge);
	s->merge = NULL;
	s->merge_row = false;
	if (s->mem != NULL)
		sqlite3_close(s->mem);
	s->mem = NULL;
}
