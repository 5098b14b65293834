/*
 * store_windows: the windows table of profiling windows, and the catalog's
 * unreliable metrics, on the connection (contracts in storedb.h and
 * store_priv.h; the daemon's writer thread runs them for store.h's calls).
 *
 * A window change is rare and must outlive a crash of the daemon, so each
 * is one statement in its own BEGIN IMMEDIATE ... COMMIT, written when it
 * happens.  With WAL and synchronous=NORMAL a commit survives the daemon's
 * crash at once and a power loss from the next checkpoint on, like the
 * samples around it.  The store's buffered sample rows live in memory and
 * are written in their own transactions by store_flush; the event loop
 * never runs a window change while one of those is open, and a change
 * refuses to run inside any open transaction rather than commit it.
 * Statements are prepared per call: these calls are rare, and a statement
 * left prepared would keep store_close from closing the connection.
 */
#include "store_priv.h"

#include <stdlib.h>
#include <string.h>

#include "clocksync.h"
#include "dbread.h"
#include "schema.h"

static sqlite3_stmt *
prepare(struct store *st, const char *sql)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		sql_warn(st, "prepare");
		return NULL;
	}
	return s;
}

/*
 * Run the bound statement s (consumed) alone in an immediate transaction;
 * *changes receives the rows it changed.  SQLite's result code.
 */
static int
run_alone(struct store *st, sqlite3_stmt *s, const char *what, int *changes)
{
	int rc;

	*changes = 0;
	if (!sqlite3_get_autocommit(st->db)) {
		log_warnx("%s: %s: a transaction is already open", st->path, what);
		sqlite3_finalize(s);
		return SQLITE_MISUSE;
	}
	if ((rc = sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) !=
	    SQLITE_OK) {
		sql_warn(st, what);
		sqlite3_finalize(s);
		return rc;
	}
	if ((rc = sqlite3_step(s)) == SQLITE_DONE) {
		*changes = sqlite3_changes(st->db);
		rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	}
	if (rc != SQLITE_OK)
		sql_warn(st, what);
	sqlite3_finalize(s);
	if (rc != SQLITE_OK && !sqlite3_get_autocommit(st->db))
		(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* Bind c (NULL or unknown: NULLs) to parameters i, i + 1, i + 2. */
static void
bind_clock(sqlite3_stmt *s, int i, const struct clocksync *c)
{
	if (c == NULL || !c->known) {
		sqlite3_bind_null(s, i);
		sqlite3_bind_null(s, i + 1);
		sqlite3_bind_null(s, i + 2);
		return;
	}
	sqlite3_bind_int(s, i, c->synced);
	sqlite3_bind_int64(s, i + 1, c->est_error_us);
	sqlite3_bind_int64(s, i + 2, c->max_error_us);
}

int
store_db_window_insert(struct store *st, const struct store_window *win,
    const struct clocksync *clock, unsigned restarts)
{
	sqlite3_stmt *s;
	int changes;

	s = prepare(st, "INSERT INTO " SCHEMA_T_WINDOWS
	    " (id, tag, uid, pid, begin_ns, meta, clock_begin_synced, "
	    "clock_begin_est_us, clock_begin_max_us, until_pid, child_restarts, "
	    SCHEMA_C_BEGIN_EPOCH ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	if (s == NULL)
		return -1;
	if (win->id > 0)
		sqlite3_bind_int64(s, 1, win->id);
	else
		sqlite3_bind_null(s, 1);	/* the next id */
	sqlite3_bind_text(s, 2, win->tag, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, win->uid);
	sqlite3_bind_int64(s, 4, win->pid);
	sqlite3_bind_int64(s, 5, win->begin_ns);
	sqlite3_bind_text(s, 6, win->meta_json != NULL ? win->meta_json : "{}",
	    -1, SQLITE_STATIC);
	bind_clock(s, 7, clock);
	if (win->until_pid > 0)
		sqlite3_bind_int(s, 10, win->until_pid);
	else
		sqlite3_bind_null(s, 10);
	if (restarts > 0)
		sqlite3_bind_int64(s, 11, restarts);
	else
		sqlite3_bind_null(s, 11);
	if (win->begin_epoch >= 0)
		sqlite3_bind_int64(s, 12, win->begin_epoch);
	else
		sqlite3_bind_null(s, 12);
	return run_alone(st, s, "begin window", &changes) == SQLITE_OK ? 0 : -1;
}

int
store_db_window_begin_state(struct store *st, int64_t id,
    struct clocksync *clock, unsigned *restarts)
{
	sqlite3_stmt *s;
	int rc;

	*clock = (struct clocksync){ 0 };
	*restarts = 0;
	if ((s = prepare(st, "SELECT clock_begin_synced, clock_begin_est_us, "
	    "clock_begin_max_us, child_restarts FROM " SCHEMA_T_WINDOWS
	    " WHERE id = ?")) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		clock->known = sqlite3_column_type(s, 0) != SQLITE_NULL;
		clock->synced = sqlite3_column_int(s, 0) != 0;
		clock->est_error_us = sqlite3_column_int64(s, 1);
		clock->max_error_us = sqlite3_column_int64(s, 2);
		if (sqlite3_column_int64(s, 3) > 0)
			*restarts = (unsigned)sqlite3_column_int64(s, 3);
	}
	return sql_finish_lookup(st, s, rc, "open window's begin");
}

int
store_db_max_window_id(struct store *st, int64_t *id)
{
	sqlite3_stmt *s;
	int rc;

	*id = 0;
	if ((s = prepare(st, "SELECT coalesce(max(id), 0) FROM "
	    SCHEMA_T_WINDOWS)) == NULL)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	else
		sql_warn(st, "highest window id");
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
storedb_window_begin(struct store *st, const char *tag, uint32_t uid,
    int32_t pid, int64_t begin_ns, const char *meta_json,
    const struct clocksync *clock, int32_t until_pid, int64_t *id)
{
	struct store_window win = { .uid = uid, .pid = pid,
	    .begin_ns = begin_ns, .until_pid = until_pid,
	    .begin_epoch = st->epoch, .end_epoch = -1 };
	int rc = -1;

	/* id 0: the INSERT takes the next one */
	if ((win.tag = strdup(tag)) == NULL || (win.meta_json =
	    strdup(meta_json != NULL ? meta_json : "{}")) == NULL)
		log_warnx("%s: begin window: out of memory", st->path);
	else if ((rc = store_db_window_insert(st, &win, clock, 0)) == 0)
		*id = sqlite3_last_insert_rowid(st->db);
	free(win.tag);
	free(win.meta_json);
	return rc;
}

int
storedb_window_end(struct store *st, int64_t id, int64_t end_ns,
    enum store_ended_by by, const struct clocksync *clock)
{
	return storedb_window_end_meta(st, id, end_ns, by, clock, NULL);
}

int
storedb_window_end_meta(struct store *st, int64_t id, int64_t end_ns,
    enum store_ended_by by, const struct clocksync *clock,
    const char *meta_json)
{
	struct store_window win = { .id = id, .end_ns = end_ns,
	    .end_epoch = by == STORE_ENDED_DAEMON_GONE ? st->epoch_open :
	    st->epoch };

	return store_db_window_end(st, &win, by, clock, meta_json);
}

int
store_db_window_end(struct store *st, const struct store_window *win,
    enum store_ended_by by, const struct clocksync *clock,
    const char *meta_json)
{
	static const char *const names[] = {
		[STORE_ENDED_MARK] = "mark",
		[STORE_ENDED_MAX_OPEN] = "max_open",
		[STORE_ENDED_EXIT] = "exit",
		[STORE_ENDED_DAEMON_GONE] = "daemon_gone",
	};
	sqlite3_stmt *s;
	int changes;

	s = prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET end_ns = ?, "
	    "auto_closed = ?, ended_by = ?, clock_end_synced = ?, "
	    "clock_end_est_us = ?, clock_end_max_us = ?, " SCHEMA_C_END_NOTE
	    " = ?, meta = CASE WHEN ?9 IS NULL THEN meta ELSE "
	    "json_patch(meta, ?9) END, " SCHEMA_C_END_EPOCH " = ?10 "
	    "WHERE id = ?8 AND end_ns IS NULL");
	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, win->end_ns);
	sqlite3_bind_int(s, 2, by != STORE_ENDED_MARK);
	sqlite3_bind_text(s, 3, names[by], -1, SQLITE_STATIC);
	bind_clock(s, 4, clock);
	if (by == STORE_ENDED_DAEMON_GONE)
		sqlite3_bind_text(s, 7, st->prev.note, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 7);
	sqlite3_bind_int64(s, 8, win->id);
	if (meta_json != NULL)
		sqlite3_bind_text(s, 9, meta_json, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 9);
	if (win->end_epoch >= 0)
		sqlite3_bind_int64(s, 10, win->end_epoch);
	else
		sqlite3_bind_null(s, 10);
	if (run_alone(st, s, "end window", &changes) != SQLITE_OK)
		return -1;
	if (changes != 1) {
		log_warnx("%s: end window: window %lld is not open", st->path,
		    (long long)win->id);
		return -1;
	}
	return 0;
}

int
store_db_clock_step(struct store *st, const struct store_epoch_step *c)
{
	sqlite3_stmt *s;
	int changes;

	s = prepare(st, "INSERT OR REPLACE INTO " SCHEMA_T_CLOCK_STEPS
	    " (id, at_ns, size_ns, mono_ns) VALUES (?, ?, ?, ?)");
	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->id);
	sqlite3_bind_int64(s, 2, c->at_ns);
	sqlite3_bind_int64(s, 3, c->size_ns);
	sqlite3_bind_int64(s, 4, c->mono_ns);
	return run_alone(st, s, "record a step of the host clock", &changes) ==
	    SQLITE_OK ? 0 : -1;
}

int
store_db_load_steps(struct store *st)
{
	sqlite3_stmt *s;
	size_t n = 0;
	int rc;

	st->last_step = (struct store_epoch_step){ 0 };
	if ((s = prepare(st, "SELECT id, at_ns, size_ns, mono_ns FROM "
	    SCHEMA_T_CLOCK_STEPS " ORDER BY id DESC LIMIT ?")) == NULL)
		return -1;
	sqlite3_bind_int(s, 1, STORE_CLOCK_STEPS);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == 0)
			st->last_step = (struct store_epoch_step){
			    sqlite3_column_int64(s, 0),
			    sqlite3_column_int64(s, 1),
			    sqlite3_column_int64(s, 2),
			    sqlite3_column_int64(s, 3) };
		/* newest first here: the array is oldest first */
		st->clock_steps[STORE_CLOCK_STEPS - 1 - n++] =
		    (struct store_clock_step){ .size_ns =
		    sqlite3_column_int64(s, 2), .at_ns =
		    sqlite3_column_int64(s, 1) };
	}
	memmove(st->clock_steps, st->clock_steps + STORE_CLOCK_STEPS - n,
	    n * sizeof(st->clock_steps[0]));
	st->nclock_steps = n;
	return sql_finish(st, s, rc, "the host clock's steps");
}

int
storedb_window_set_restarts(struct store *st, int64_t id, unsigned restarts)
{
	sqlite3_stmt *s;
	int changes;

	s = prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET child_restarts = ? "
	    "WHERE id = ?");
	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, restarts);
	sqlite3_bind_int64(s, 2, id);
	return run_alone(st, s, "window restarts", &changes) == SQLITE_OK ?
	    0 : -1;
}

int
storedb_window_set_run(struct store *st, int64_t id, int64_t run_ns)
{
	sqlite3_stmt *s;
	int changes;

	s = prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET " SCHEMA_C_RUN
	    " = ? WHERE id = ?");
	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, run_ns);
	sqlite3_bind_int64(s, 2, id);
	return run_alone(st, s, "window run", &changes) == SQLITE_OK ? 0 : -1;
}

int
storedb_window_add_note(struct store *st, int64_t id, const char *note)
{
	sqlite3_stmt *s;
	int changes;

	s = prepare(st, "UPDATE " SCHEMA_T_WINDOWS " SET " SCHEMA_C_END_NOTE
	    " = CASE WHEN " SCHEMA_C_END_NOTE " IS NULL OR " SCHEMA_C_END_NOTE
	    " = '' THEN ?1 ELSE " SCHEMA_C_END_NOTE " || '; ' || ?1 END "
	    "WHERE id = ?2 AND (" SCHEMA_C_END_NOTE " IS NULL OR instr("
	    SCHEMA_C_END_NOTE ", ?1) = 0)");
	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, note, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, id);
	return run_alone(st, s, "window note", &changes) == SQLITE_OK ?
	    0 : -1;
}

static char *
column_strdup(sqlite3_stmt *s, int col)
{
	const unsigned char *text = sqlite3_column_text(s, col);

	return strdup(text != NULL ? (const char *)text : "");
}

/*
 * Move what query/ read into the store's windows: w[i] takes r[i]'s
 * strings, and r is freed.
 */
static void
windows_take(struct store_window *w, struct db_window *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		w[i] = (struct store_window){
			.id = r[i].id, .tag = r[i].tag, .uid = r[i].uid,
			.pid = r[i].pid, .begin_ns = r[i].begin_ns,
			.end_ns = r[i].end_ns, .auto_closed = r[i].auto_closed,
			.meta_json = r[i].meta, .until_pid = r[i].until_pid,
			.begin_epoch = r[i].begin_epoch,
			.end_epoch = r[i].end_epoch,
		};
		r[i].tag = r[i].meta = NULL;
	}
	db_windows_free(r, n);
}

/*
 * The windows f selects through query/'s reader, into *out; what failed
 * is logged naming what.  0 or -1.
 */
static int
windows_read(struct store *st, const struct db_window_filter *f,
    const char *what, struct store_window **out, size_t *n)
{
	struct db_window *r;
	size_t count;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = db_windows_read(st->db, f, &r, &count)) != 0) {
		if (rc == -1)
			sql_warn(st, "prepare");
		else if (rc == -2)
			log_warnx("%s: %s: out of memory", st->path, what);
		else
			sql_warn(st, what);
		return -1;
	}
	if (count > 0 && (*out = calloc(count, sizeof(**out))) == NULL) {
		log_warnx("%s: %s: out of memory", st->path, what);
		db_windows_free(r, count);
		return -1;
	}
	windows_take(*out, r, count);
	*n = count;
	return 0;
}

int
storedb_windows_open(struct store *st, struct store_window **out, size_t *n)
{
	struct db_window_filter f = { .open_only = true };

	return windows_read(st, &f, "open windows", out, n);
}

int
storedb_window_get(struct store *st, int64_t id, struct store_window **out)
{
	struct db_window_filter f = { .by_id = true, .id = id };
	size_t n;

	return windows_read(st, &f, "find window", out, &n);
}

void
store_windows_free(struct store_window *w, size_t n)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(w[i].tag);
		free(w[i].meta_json);
	}
	free(w);
}

int
storedb_unreliable_metrics(struct store *st, char ***keys, size_t *n)
{
	char **k = NULL, **grown;
	size_t count = 0, cap = 0;
	sqlite3_stmt *s;
	int rc;

	*keys = NULL;
	*n = 0;
	s = prepare(st, "SELECT key FROM " SCHEMA_T_METRICS
	    " WHERE reliable = 0 ORDER BY id");
	if (s == NULL)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (count == cap) {
			cap = cap == 0 ? 8 : cap * 2;
			if ((grown = realloc(k, cap * sizeof(*k))) == NULL)
				break;
			k = grown;
		}
		if ((k[count] = column_strdup(s, 0)) == NULL)
			break;
		count++;
	}
	if (rc != SQLITE_DONE) {
		if (rc == SQLITE_ROW)
			log_warnx("%s: unreliable metrics: out of memory", st->path);
		else
			sql_warn(st, "unreliable metrics");
		sqlite3_finalize(s);
		store_strings_free(k, count);
		return -1;
	}
	sqlite3_finalize(s);
	*keys = k;
	*n = count;
	return 0;
}

void
store_strings_free(char **strings, size_t n)
{
	if (strings == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(strings[i]);
	free(strings);
}
