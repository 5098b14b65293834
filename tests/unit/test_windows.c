/*
 * Tests of profiling windows: the windows table through storedb_window_*
 * on a real database (read back with plain SQL on a connection of its
 * own), and the rules of windows.c on top of it, over the daemon's store
 * and its writer thread (read back once it has stored what was asked): validation, one tag per user,
 * ending by newest, tag and id, ownership, restarts, automatic closing by
 * an injected clock and by the event loop's timer, and the open/closed
 * notifications.  Every test works on its own database in a fresh directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "metrics.h"
#include "proto.h"
#include "schema.h"
#include "storedb.h"
#include "timeparse.h"
#include "tmpdb.h"
#include "windows.h"

#define SEC		1000000000LL
#define T0		(1764670000LL * SEC)	/* December 2025 */
#define MINUTE		(60 * SEC)
#define HOUR		(3600 * SEC)
#define MAX_OPEN	(24 * HOUR)
#define ALICE		1000u
#define BOB		1001u

struct fx {
	struct tmpdb db;
	struct store *st;
	bool direct;		/* st is storedb_open's, not the daemon's */
	struct windows *w;
	int opened, closed;	/* notifications received */
	bool any_open;		/* the last one */
};

static void
on_notify(void *arg, bool any_open, int64_t at_ns)
{
	struct fx *f = arg;

	(void)at_ns;
	if (any_open)
		f->opened++;
	else
		f->closed++;
	f->any_open = any_open;
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->db, "test_windows"), 0);
	assert_int_equal(store_open(f->db.path, 100, &f->st), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	windows_free(f->w);
	if (f->direct)
		storedb_close(f->st);
	else
		store_close(f->st);
	assert_int_equal(tmpdb_remove(&f->db), 0);
	free(f);
	return 0;
}

static void
fx_start(struct fx *f, uint64_t max_open_ns, int64_t now_ns)
{
	assert_int_equal(windows_start(NULL, f->st, max_open_ns, now_ns,
	    on_notify, f, &f->w), 0);
}

/* Close and reopen the database and the window set, as a restart does. */
static void
fx_restart(struct fx *f, uint64_t max_open_ns, int64_t now_ns)
{
	windows_free(f->w);
	f->w = NULL;
	store_close(f->st);
	assert_int_equal(store_open(f->db.path, 100, &f->st), 0);
	fx_start(f, max_open_ns, now_ns);
}

/* The store on the caller's thread instead, for the store_window_* tests. */
static void
fx_direct(struct fx *f)
{
	store_close(f->st);
	assert_int_equal(storedb_open(f->db.path, 100, &f->st), 0);
	f->direct = true;
}

/* Wait until the writer thread has stored everything asked of it so far. */
static void
settle(const struct fx *f)
{
	struct pollfd p;
	uint64_t ticket;

	if (f->st == NULL || f->direct)
		return;
	assert_int_equal(store_sync(f->st, 0, &ticket), 0);
	p = (struct pollfd){ .fd = store_sync_fd(f->st), .events = POLLIN };
	while (store_sync_pending(f->st, ticket, NULL, 0, NULL)) {
		assert_int_equal(poll(&p, 1, 10000), 1);
		store_sync_ack(f->st);
	}
}

/* ---- plain SQL on a connection of its own, once the store has written ---- */

static int64_t
sql_int(const struct fx *f, const char *fmt, ...)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	char sql[512];
	va_list ap;
	int64_t v = -1;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	settle(f);
	assert_int_equal(sqlite3_open_v2(f->db.path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_type(s, 0) == SQLITE_NULL ? INT64_MIN :
		    sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static char *
sql_text(const struct fx *f, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	char *v = NULL;

	settle(f);
	assert_int_equal(sqlite3_open_v2(f->db.path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = strdup(sqlite3_column_type(s, 0) == SQLITE_NULL ? "(null)" :
		    (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static int64_t
count_windows(const struct fx *f)
{
	return sql_int(f, "SELECT count(*) FROM " SCHEMA_T_WINDOWS);
}

/* ---- requests ---- */

static struct windows_result
begin_meta(struct fx *f, uint32_t uid, const char *tag, bool same_tag,
    int64_t now, const char *const *meta, size_t nmeta)
{
	struct windows_begin_req req = { .tag = tag, .meta = meta,
	    .nmeta = nmeta, .same_tag = same_tag, .uid = uid,
	    .pid = (int32_t)uid + 7, .now_ns = now };
	struct windows_result res;

	memset(&res, 0xa5, sizeof(res));
	windows_begin(f->w, &req, &res);
	return res;
}

static struct windows_result
begin(struct fx *f, uint32_t uid, const char *tag, bool same_tag, int64_t now)
{
	return begin_meta(f, uid, tag, same_tag, now, NULL, 0);
}

/* Begin that must succeed; its id. */
static int64_t
begin_ok(struct fx *f, uint32_t uid, const char *tag, bool same_tag, int64_t now)
{
	struct windows_result r = begin(f, uid, tag, same_tag, now);

	if (r.error != NULL)
		fail_msg("begin '%s': %s: %s", tag, r.error, r.message);
	assert_int_equal(r.begin_ns, now);
	assert_string_equal(r.tag, tag);
	return r.id;
}

static struct windows_result
end(struct fx *f, uint32_t uid, enum windows_end_by by, const char *tag,
    int64_t id, int64_t now)
{
	struct windows_end_req req = { .by = by, .tag = tag, .id = id,
	    .uid = uid, .pid = 42, .now_ns = now };
	struct windows_result res;

	memset(&res, 0xa5, sizeof(res));
	windows_end(f->w, &req, &res);
	return res;
}

static void
assert_error(struct windows_result r, const char *code, const char *needle)
{
	if (r.error == NULL)
		fail_msg("want %s, got success", code);
	assert_string_equal(r.error, code);
	if (strstr(r.message, needle) == NULL)
		fail_msg("want \"%s\" in \"%s\"", needle, r.message);
}

static void
assert_ended(struct fx *f, struct windows_result r, int64_t id, int64_t end_ns)
{
	if (r.error != NULL)
		fail_msg("end %" PRId64 ": %s: %s", id, r.error, r.message);
	assert_int_equal(r.id, id);
	assert_int_equal(r.end_ns, end_ns);
	assert_int_equal(sql_int(f, "SELECT end_ns FROM windows WHERE id = %"
	    PRId64, id), end_ns);
	assert_int_equal(sql_int(f, "SELECT auto_closed FROM windows WHERE id = %"
	    PRId64, id), 0);
}

static bool
is_open(const struct fx *f, int64_t id)
{
	size_t n;
	const struct window *list = windows_list(f->w, &n);

	for (size_t i = 0; i < n; i++)
		if (list[i].id == id)
			return true;
	return false;
}

/* ---- storedb_window_* ---- */

static void
test_store_begin_end(void **state)
{
	struct fx *f = *state;
	struct store_window *w, *got;
	int64_t a, b;
	size_t n;

	fx_direct(f);
	assert_int_equal(storedb_window_begin(f->st, "run-a", 1000, 4242, T0,
	    "{\"commit\":\"abc\"}", NULL, 0, &a), 0);
	assert_int_equal(storedb_window_begin(f->st, "run-b", 0, 1, T0 + SEC,
	    NULL, NULL, 0, &b), 0);
	assert_true(a > 0 && b > a);
	/* on disk at once, seen by another connection */
	assert_int_equal(count_windows(f), 2);
	assert_int_equal(sql_int(f, "SELECT uid FROM windows WHERE id = %" PRId64, a), 1000);
	assert_int_equal(sql_int(f, "SELECT pid FROM windows WHERE id = %" PRId64, a), 4242);
	assert_int_equal(sql_int(f, "SELECT begin_ns FROM windows WHERE id = %" PRId64, a), T0);
	assert_int_equal(sql_int(f, "SELECT end_ns FROM windows WHERE id = %" PRId64, a), INT64_MIN);

	assert_int_equal(storedb_windows_open(f->st, &w, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(w[0].id, a);
	assert_string_equal(w[0].tag, "run-a");
	assert_int_equal(w[0].uid, 1000);
	assert_int_equal(w[0].pid, 4242);
	assert_int_equal(w[0].begin_ns, T0);
	assert_int_equal(w[0].end_ns, 0);
	assert_false(w[0].auto_closed);
	assert_string_equal(w[0].meta_json, "{\"commit\":\"abc\"}");
	assert_string_equal(w[1].meta_json, "{}");
	store_windows_free(w, n);

	assert_int_equal(storedb_window_end(f->st, a, T0 + 5 * SEC, STORE_ENDED_MARK, NULL), 0);
	assert_int_equal(storedb_window_end(f->st, b, T0 + 6 * SEC, STORE_ENDED_MAX_OPEN, NULL), 0);
	assert_int_equal(sql_int(f, "SELECT end_ns FROM windows WHERE id = %" PRId64, a),
	    T0 + 5 * SEC);
	assert_int_equal(sql_int(f, "SELECT auto_closed FROM windows WHERE id = %" PRId64, a), 0);
	assert_int_equal(sql_int(f, "SELECT auto_closed FROM windows WHERE id = %" PRId64, b), 1);
	assert_int_equal(storedb_windows_open(f->st, &w, &n), 0);
	assert_int_equal(n, 0);
	assert_null(w);

	/* a closed window cannot be closed again, nor a missing one */
	assert_int_equal(storedb_window_end(f->st, a, T0 + 9 * SEC, STORE_ENDED_MARK, NULL), -1);
	assert_int_equal(sql_int(f, "SELECT end_ns FROM windows WHERE id = %" PRId64, a),
	    T0 + 5 * SEC);
	assert_int_equal(storedb_window_end(f->st, b + 100, T0, STORE_ENDED_MARK, NULL), -1);

	assert_int_equal(storedb_window_get(f->st, b, &got), 0);
	assert_non_null(got);
	assert_int_equal(got->end_ns, T0 + 6 * SEC);
	assert_true(got->auto_closed);
	assert_string_equal(got->tag, "run-b");
	store_windows_free(got, 1);
	assert_int_equal(storedb_window_get(f->st, b + 100, &got), 0);
	assert_null(got);
}

static void
test_store_reopen(void **state)
{
	struct fx *f = *state;
	struct store_window *w;
	int64_t a, b;
	size_t n;

	fx_direct(f);
	assert_int_equal(storedb_window_begin(f->st, "x", 1, 2, T0 + SEC, "{}", NULL, 0, &a), 0);
	assert_int_equal(storedb_window_begin(f->st, "y", 3, 4, T0, "{}", NULL, 0, &b), 0);
	storedb_close(f->st);
	assert_int_equal(storedb_open(f->db.path, 100, &f->st), 0);
	assert_int_equal(storedb_windows_open(f->st, &w, &n), 0);
	/* oldest first, whatever the ids */
	assert_int_equal(n, 2);
	assert_int_equal(w[0].id, b);
	assert_int_equal(w[1].id, a);
	store_windows_free(w, n);
	assert_int_equal(storedb_window_end(f->st, a, T0 + 2 * SEC, STORE_ENDED_MARK, NULL), 0);
}

/* A window change commits alone and leaves the buffered sample rows buffered. */
static void
test_store_keeps_buffered_rows(void **state)
{
	struct fx *f = *state;
	struct store_value v = { .mant = 42, .scale = 0, .present = true };
	struct store_sample s = { .ts_ns = T0, .device = 0, .interval_ms = 100,
	    .nvalues = 1, .values = &v };
	struct store_stats stats;
	int metric;
	int64_t id;

	fx_direct(f);
	assert_int_equal(storedb_metric(f->st, "busy", "%", &metric), 0);
	s.metric = &metric;
	storedb_append(f->st, &s);
	assert_int_equal(storedb_window_begin(f->st, "t", 1, 1, T0, "{}", NULL, 0, &id), 0);
	storedb_get_stats(f->st, &stats);
	assert_int_equal(stats.pending, 1);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM samples"), 1);
	assert_int_equal(count_windows(f), 1);
}

static void
test_store_unreliable(void **state)
{
	struct fx *f = *state;
	char **keys;
	size_t n, want = 0;

	fx_direct(f);
	for (size_t i = 0; i < metric_ndefs; i++)
		want += !metric_defs[i].reliable;
	assert_true(want > 0);
	assert_int_equal(storedb_unreliable_metrics(f->st, &keys, &n), 0);
	assert_int_equal(n, want);
	for (size_t i = 0; i < n; i++) {
		const struct metric_def *d = metric_def_find(keys[i]);

		assert_non_null(d);
		assert_false(d->reliable);
	}
	store_strings_free(keys, n);
}

/* ---- windows.c: begin ---- */

static void
test_begin(void **state)
{
	struct fx *f = *state;
	static const char *const meta[] = { "commit", "abc123",
	    "workload", "llama-8b-bs4", "note", "caf\xc3\xa9 \"quoted\"" };
	struct windows_result r;
	const struct window *list;
	char *json;
	size_t n;

	fx_start(f, MAX_OPEN, T0);
	assert_int_equal(f->opened, 0);
	r = begin_meta(f, ALICE, "llama-bs4", false, T0 + 5, meta, 3);
	assert_null(r.error);
	assert_true(r.id > 0);
	assert_int_equal(r.begin_ns, T0 + 5);
	assert_int_equal(f->opened, 1);
	assert_true(f->any_open);
	assert_int_equal(sql_int(f, "SELECT begin_ns FROM windows WHERE id = %" PRId64,
	    r.id), T0 + 5);
	assert_int_equal(sql_int(f, "SELECT uid FROM windows WHERE id = %" PRId64,
	    r.id), ALICE);
	assert_int_equal(sql_int(f, "SELECT pid FROM windows WHERE id = %" PRId64,
	    r.id), ALICE + 7);
	json = sql_text(f, "SELECT meta FROM windows");
	assert_string_equal(json, "{\"commit\":\"abc123\",\"workload\":"
	    "\"llama-8b-bs4\",\"note\":\"caf\xc3\xa9 \\\"quoted\\\"\"}");
	free(json);
	assert_int_equal(sql_int(f, "SELECT json_extract(meta, '$.note') = "
	    "'caf\xc3\xa9 \"quoted\"' FROM windows"), 1);

	list = windows_list(f->w, &n);
	assert_int_equal(n, 1);
	assert_int_equal(list[0].nmeta, 3);
	assert_string_equal(list[0].meta[5], meta[5]);

	/* a second window does not notify again */
	begin_ok(f, BOB, "other", false, T0 + 6);
	assert_int_equal(f->opened, 1);
}

static void
test_begin_validation(void **state)
{
	struct fx *f = *state;
	char long_tag[PROTO_TAG_MAX + 2], long_value[PROTO_META_VALUE_MAX + 2];
	const char *many[2 * (PROTO_META_MAX + 1)];
	const char *pair[2];
	static const char *const dup[] = { "a", "1", "b", "2", "a", "3" };

	fx_start(f, MAX_OPEN, T0);
	assert_error(begin(f, ALICE, "", false, T0), PROTO_E_BAD_TAG, "empty");
	assert_error(begin(f, ALICE, "a b", false, T0), PROTO_E_BAD_TAG, "printable");
	assert_error(begin(f, ALICE, "tab\t", false, T0), PROTO_E_BAD_TAG, "printable");
	assert_error(begin(f, ALICE, "caf\xc3\xa9", false, T0), PROTO_E_BAD_TAG, "ASCII");
	memset(long_tag, 'x', sizeof(long_tag));
	long_tag[PROTO_TAG_MAX + 1] = '\0';
	assert_error(begin(f, ALICE, long_tag, false, T0), PROTO_E_BAD_TAG, "64");
	long_tag[PROTO_TAG_MAX] = '\0';
	begin_ok(f, ALICE, long_tag, false, T0);

	pair[0] = "bad key";
	pair[1] = "v";
	assert_error(begin_meta(f, ALICE, "m", false, T0, pair, 1),
	    PROTO_E_BAD_META, "bad key");
	pair[0] = "k";
	pair[1] = "line\nbreak";
	assert_error(begin_meta(f, ALICE, "m", false, T0, pair, 1),
	    PROTO_E_BAD_META, "control");
	memset(long_value, 'v', sizeof(long_value));
	long_value[PROTO_META_VALUE_MAX + 1] = '\0';
	pair[1] = long_value;
	assert_error(begin_meta(f, ALICE, "m", false, T0, pair, 1),
	    PROTO_E_BAD_META, "256");
	assert_error(begin_meta(f, ALICE, "m", false, T0, dup, 3),
	    PROTO_E_BAD_META, "'a' is given twice");
	for (size_t i = 0; i < PROTO_META_MAX + 1; i++) {
		char *k;

		assert_true(asprintf(&k, "k%zu", i) > 0);
		many[2 * i] = k;
		many[2 * i + 1] = "v";
	}
	assert_error(begin_meta(f, ALICE, "m", false, T0, many, PROTO_META_MAX + 1),
	    PROTO_E_BAD_META, "at most 32");
	/* exactly the maximum is fine */
	assert_null(begin_meta(f, ALICE, "m", false, T0, many, PROTO_META_MAX).error);
	for (size_t i = 0; i < PROTO_META_MAX + 1; i++)
		free((char *)(uintptr_t)many[2 * i]);

	/* nothing refused reached the database */
	assert_int_equal(count_windows(f), 2);
}

/* An end's metadata: merged into the window's; a key of its begin's refused. */
static void
test_end_meta(void **state)
{
	struct fx *f = *state;
	static const char *const bmeta[] = { "vllm.begin.requests", "3" };
	static const char *const clash[] = { "vllm.end.requests", "9",
	    "vllm.begin.requests", "4" };
	static const char *const twice[] = { "a", "1", "a", "2" };
	static const char *const emeta[] = { "vllm.end.requests", "9",
	    "note", "caf\xc3\xa9" };
	struct windows_end_req req = { .by = WINDOWS_END_ID, .uid = ALICE,
	    .pid = 42 };
	struct windows_result r;
	int64_t id;
	char *json;

	fx_start(f, MAX_OPEN, T0);
	r = begin_meta(f, ALICE, "serve", false, T0, bmeta, 1);
	assert_null(r.error);
	id = req.id = r.id;
	req.now_ns = T0 + SEC;
	req.meta = clash;
	req.nmeta = 2;
	windows_end(f->w, &req, &r);
	assert_error(r, PROTO_E_BAD_META, "'vllm.begin.requests' is window");
	assert_true(is_open(f, id));
	req.meta = twice;
	windows_end(f->w, &req, &r);
	assert_error(r, PROTO_E_BAD_META, "'a' is given twice");
	assert_true(is_open(f, id));
	req.meta = emeta;
	windows_end(f->w, &req, &r);
	assert_ended(f, r, id, T0 + SEC);
	json = sql_text(f, "SELECT meta FROM windows");
	assert_string_equal(json, "{\"vllm.begin.requests\":\"3\","
	    "\"vllm.end.requests\":\"9\",\"note\":\"caf\xc3\xa9\"}");
	free(json);

	/* an end without metadata leaves the begin's as they were */
	r = begin_meta(f, ALICE, "plain", false, T0 + 2 * SEC, bmeta, 1);
	assert_null(r.error);
	assert_ended(f, end(f, ALICE, WINDOWS_END_ID, NULL, r.id, T0 + 3 * SEC),
	    r.id, T0 + 3 * SEC);
	json = sql_text(f, "SELECT meta FROM windows WHERE tag = 'plain'");
	assert_string_equal(json, "{\"vllm.begin.requests\":\"3\"}");
	free(json);
}

static void
test_same_tag(void **state)
{
	struct fx *f = *state;
	int64_t a, b, c;

	fx_start(f, MAX_OPEN, T0);
	a = begin_ok(f, ALICE, "run", false, T0);
	assert_error(begin(f, ALICE, "run", false, T0 + 1), PROTO_E_TAG_OPEN,
	    "same_tag");
	/* another user's window with the same tag is independent */
	b = begin_ok(f, BOB, "run", false, T0 + 2);
	/* same_tag opens a second one; only ids tell them apart then */
	c = begin_ok(f, ALICE, "run", true, T0 + 3);
	assert_true(a != b && b != c && a != c);
	assert_error(end(f, ALICE, WINDOWS_END_TAG, "run", 0, T0 + 4),
	    PROTO_E_AMBIGUOUS, "2 open windows");
	assert_true(is_open(f, a) && is_open(f, c));
	assert_ended(f, end(f, ALICE, WINDOWS_END_ID, NULL, a, T0 + 5), a, T0 + 5);
	/* one left with the tag: by tag works again */
	assert_ended(f, end(f, ALICE, WINDOWS_END_TAG, "run", 0, T0 + 6), c, T0 + 6);
	assert_true(is_open(f, b));
	/* once ended, the tag is free again */
	begin_ok(f, ALICE, "run", false, T0 + 7);
}

/* ---- windows.c: end ---- */

static void
test_end_newest(void **state)
{
	struct fx *f = *state;
	int64_t outer, inner, bobs;

	fx_start(f, MAX_OPEN, T0);
	assert_error(end(f, ALICE, WINDOWS_END_NEWEST, NULL, 0, T0),
	    PROTO_E_NOT_OPEN, "no open window");
	outer = begin_ok(f, ALICE, "outer", false, T0);
	inner = begin_ok(f, ALICE, "inner", false, T0 + SEC);
	bobs = begin_ok(f, BOB, "bobs", false, T0 + 2 * SEC);
	/* Bob's newer window is not Alice's newest */
	assert_ended(f, end(f, ALICE, WINDOWS_END_NEWEST, NULL, 0, T0 + 3 * SEC),
	    inner, T0 + 3 * SEC);
	assert_ended(f, end(f, ALICE, WINDOWS_END_NEWEST, NULL, 0, T0 + 4 * SEC),
	    outer, T0 + 4 * SEC);
	assert_error(end(f, ALICE, WINDOWS_END_NEWEST, NULL, 0, T0 + 5 * SEC),
	    PROTO_E_NOT_OPEN, "no open window");
	assert_true(is_open(f, bobs));
}

static void
test_end_by_tag_and_id(void **state)
{
	struct fx *f = *state;
	struct windows_result r;
	int64_t a, b, c;

	fx_start(f, MAX_OPEN, T0);
	a = begin_ok(f, ALICE, "a", false, T0);
	b = begin_ok(f, BOB, "b", false, T0);
	c = begin_ok(f, BOB, "c", false, T0);
	assert_error(end(f, ALICE, WINDOWS_END_TAG, "b", 0, T0), PROTO_E_NOT_OPEN,
	    "no open window tagged 'b'");
	assert_error(end(f, ALICE, WINDOWS_END_ID, NULL, b, T0), PROTO_E_NOT_OWNER,
	    "belongs to uid 1001");
	assert_true(is_open(f, b));
	/* root may end anyone's window by id */
	assert_ended(f, end(f, 0, WINDOWS_END_ID, NULL, b, T0 + SEC), b, T0 + SEC);
	assert_ended(f, end(f, BOB, WINDOWS_END_TAG, "c", 0, T0 + 2 * SEC), c,
	    T0 + 2 * SEC);

	/* an id that has ended, and one that never was */
	r = end(f, BOB, WINDOWS_END_ID, NULL, c, T0 + 3 * SEC);
	/* the daemon's store remembers the end of the last windows ended */
	assert_error(r, PROTO_E_NOT_OPEN, "has already ended, at ");
	assert_error(end(f, BOB, WINDOWS_END_ID, NULL, c + 1000, T0),
	    PROTO_E_NOT_OPEN, "there is no window");
	assert_int_equal(sql_int(f, "SELECT end_ns FROM windows WHERE id = %" PRId64,
	    c), T0 + 2 * SEC);
	assert_ended(f, end(f, ALICE, WINDOWS_END_ID, NULL, a, T0 + 4 * SEC), a,
	    T0 + 4 * SEC);
}

static void
test_end_before_begin(void **state)
{
	struct fx *f = *state;
	int64_t a;

	fx_start(f, MAX_OPEN, T0);
	a = begin_ok(f, ALICE, "a", false, T0 + 10 * SEC);
	/* the clock stepped back: the window gets length 0, not a negative one */
	assert_ended(f, end(f, ALICE, WINDOWS_END_NEWEST, NULL, 0, T0), a,
	    T0 + 10 * SEC);
}

/*
 * begin_ns and end_ns: a window planned ahead (spyremon capture) begins at
 * the time asked, from the arrival to WINDOWS_BEGIN_AHEAD_NS after it,
 * and ends at a time from its begin to the arrival; anything else is
 * bad_time and changes nothing.
 */
static void
test_begin_end_at(void **state)
{
	struct fx *f = *state;
	struct windows_begin_req breq = { .tag = "planned", .uid = ALICE,
	    .pid = 9, .now_ns = T0 };
	struct windows_end_req ereq = { .by = WINDOWS_END_NEWEST, .uid = ALICE,
	    .pid = 9 };
	struct windows_result r;
	int64_t id;

	fx_start(f, MAX_OPEN, T0);

	/* before the arrival, and too far after it: refused, nothing opened */
	breq.at_ns = T0 - 1;
	windows_begin(f->w, &breq, &r);
	assert_error(r, PROTO_E_BAD_TIME, "before the request's arrival");
	breq.at_ns = T0 + WINDOWS_BEGIN_AHEAD_NS + 1;
	windows_begin(f->w, &breq, &r);
	assert_error(r, PROTO_E_BAD_TIME, "after the request's arrival");
	assert_int_equal(count_windows(f), 0);
	assert_int_equal(f->opened, 0);

	/* 2.5 s ahead: that is its begin, in memory and in the store */
	breq.at_ns = T0 + 2500 * 1000000LL;
	windows_begin(f->w, &breq, &r);
	assert_null(r.error);
	id = r.id;
	assert_int_equal(r.begin_ns, breq.at_ns);
	assert_int_equal(sql_int(f, "SELECT begin_ns FROM windows WHERE id = %"
	    PRId64, id), breq.at_ns);
	assert_int_equal(f->opened, 1);

	/* an end before the begin, or after the arrival: refused, still open */
	ereq.now_ns = T0 + 10 * SEC;
	ereq.at_ns = breq.at_ns - 1;
	windows_end(f->w, &ereq, &r);
	assert_error(r, PROTO_E_BAD_TIME, "before window");
	ereq.at_ns = ereq.now_ns + 1;
	windows_end(f->w, &ereq, &r);
	assert_error(r, PROTO_E_BAD_TIME, "after the request's arrival");
	assert_true(is_open(f, id));

	/* the end of a trace written since: that is its end */
	ereq.at_ns = T0 + 4500 * 1000000LL;
	windows_end(f->w, &ereq, &r);
	assert_ended(f, r, id, ereq.at_ns);
	assert_int_equal(sql_int(f, "SELECT begin_ns FROM windows WHERE id = %"
	    PRId64, id), breq.at_ns);

	/* begin_ns equal to the arrival, end_ns equal to the begin: allowed */
	breq.at_ns = T0 + 20 * SEC;
	breq.now_ns = T0 + 20 * SEC;
	windows_begin(f->w, &breq, &r);
	assert_null(r.error);
	ereq.now_ns = T0 + 21 * SEC;
	ereq.at_ns = T0 + 20 * SEC;
	windows_end(f->w, &ereq, &r);
	assert_ended(f, r, r.id, T0 + 20 * SEC);
}

static void
test_notifications(void **state)
{
	struct fx *f = *state;
	int64_t a, b;

	fx_start(f, MAX_OPEN, T0);
	a = begin_ok(f, ALICE, "a", false, T0);
	b = begin_ok(f, BOB, "b", false, T0);
	assert_int_equal(f->opened, 1);
	end(f, ALICE, WINDOWS_END_ID, NULL, a, T0 + 1);
	assert_int_equal(f->closed, 0);
	/* a refused end changes nothing */
	end(f, ALICE, WINDOWS_END_ID, NULL, b, T0 + 1);
	assert_int_equal(f->closed, 0);
	end(f, BOB, WINDOWS_END_ID, NULL, b, T0 + 2);
	assert_int_equal(f->closed, 1);
	assert_false(f->any_open);
	begin_ok(f, ALICE, "a", false, T0 + 3);
	assert_int_equal(f->opened, 2);
	assert_true(f->any_open);
}

static void
test_limit_per_user(void **state)
{
	struct fx *f = *state;
	char tag[16];

	fx_start(f, MAX_OPEN, T0);
	for (int i = 0; i < WINDOWS_OPEN_PER_UID; i++) {
		snprintf(tag, sizeof(tag), "t%d", i);
		begin_ok(f, ALICE, tag, false, T0 + i);
	}
	assert_error(begin(f, ALICE, "one-more", false, T0 + SEC),
	    PROTO_E_TOO_MANY, "too many of your");
	begin_ok(f, BOB, "one-more", false, T0 + SEC);
	end(f, ALICE, WINDOWS_END_NEWEST, NULL, 0, T0 + 2 * SEC);
	begin_ok(f, ALICE, "one-more", false, T0 + 3 * SEC);
}

/* windows.max_open_per_uid, set lower: Bob's third is refused, Alice's not. */
static void
test_limit_per_user_set(void **state)
{
	struct fx *f = *state;

	fx_start(f, MAX_OPEN, T0);
	windows_set_limits(f->w, 2, WINDOWS_ENDING_PER_UID);
	begin_ok(f, BOB, "a", false, T0);
	begin_ok(f, BOB, "b", false, T0 + 1);
	assert_error(begin(f, BOB, "c", false, T0 + 2), PROTO_E_TOO_MANY,
	    "too many of your");
	begin_ok(f, ALICE, "c", false, T0 + 3);
}

/* ---- restarts and automatic closing ---- */

static void
test_restart_keeps_open_windows(void **state)
{
	struct fx *f = *state;
	static const char *const meta[] = { "commit", "abc123" };
	const struct window *list;
	int64_t a, b, c;
	size_t n;

	fx_start(f, MAX_OPEN, T0);
	a = begin_meta(f, ALICE, "a", false, T0, meta, 1).id;
	b = begin_ok(f, BOB, "b", false, T0 + SEC);
	c = begin_ok(f, ALICE, "c", false, T0 + 2 * SEC);
	end(f, BOB, WINDOWS_END_ID, NULL, b, T0 + 3 * SEC);

	f->opened = 0;
	fx_restart(f, MAX_OPEN, T0 + MINUTE);
	/* windows open before the restart are open again, and say so */
	assert_int_equal(f->opened, 1);
	list = windows_list(f->w, &n);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].id, a);
	assert_int_equal(list[0].uid, ALICE);
	assert_int_equal(list[0].pid, ALICE + 7);
	assert_int_equal(list[0].begin_ns, T0);
	assert_string_equal(list[0].tag, "a");
	assert_int_equal(list[0].nmeta, 1);
	assert_string_equal(list[0].meta[0], "commit");
	assert_string_equal(list[0].meta[1], "abc123");
	assert_int_equal(list[1].id, c);
	/* the rules hold across it */
	assert_error(begin(f, ALICE, "a", false, T0 + MINUTE), PROTO_E_TAG_OPEN, "");
	assert_ended(f, end(f, ALICE, WINDOWS_END_NEWEST, NULL, 0, T0 + 2 * MINUTE),
	    c, T0 + 2 * MINUTE);
	assert_ended(f, end(f, ALICE, WINDOWS_END_ID, NULL, a, T0 + 3 * MINUTE),
	    a, T0 + 3 * MINUTE);
	assert_int_equal(f->closed, 1);
}

static void
assert_auto_closed(const struct fx *f, int64_t id, int64_t end_ns)
{
	assert_int_equal(sql_int(f, "SELECT end_ns FROM windows WHERE id = %" PRId64,
	    id), end_ns);
	assert_int_equal(sql_int(f, "SELECT auto_closed FROM windows WHERE id = %"
	    PRId64, id), 1);
	assert_false(is_open(f, id));
}

/*
 * Window id ended as the daemon started: it spanned the time the daemon
 * was not running, so it is marked incomplete, never complete.
 */
static void
assert_abandoned(const struct fx *f, int64_t id)
{
	char sql[128], *why;

	snprintf(sql, sizeof(sql), "SELECT incomplete FROM windows WHERE id = %"
	    PRId64, id);
	assert_non_null(why = sql_text(f, sql));
	assert_string_equal(why, STORE_WHY_ABANDONED);
	free(why);
	assert_int_equal(sql_int(f, "SELECT complete_ns FROM windows WHERE id = %"
	    PRId64, id), INT64_MIN);
}

static void
test_expire(void **state)
{
	struct fx *f = *state;
	struct windows_result r;
	int64_t a, b;

	fx_start(f, (uint64_t)HOUR, T0);
	a = begin_ok(f, ALICE, "a", false, T0);
	b = begin_ok(f, BOB, "b", false, T0 + 30 * MINUTE);
	assert_int_equal(windows_next_expiry(f->w), T0 + HOUR);
	assert_int_equal(windows_expire(f->w, T0 + HOUR - 1), 0);
	assert_true(is_open(f, a));
	assert_int_equal(windows_expire(f->w, T0 + HOUR), 1);
	/* ended at its time, not when the expiry ran */
	assert_auto_closed(f, a, T0 + HOUR);
	/* while running: complete once its samples (none here) are stored */
	assert_true(sql_int(f, "SELECT complete_ns FROM windows WHERE id = %"
	    PRId64, a) > 0);
	assert_int_equal(f->closed, 0);
	assert_int_equal(windows_next_expiry(f->w), T0 + 90 * MINUTE);
	/* late: still ends at begin + max_open */
	assert_int_equal(windows_expire(f->w, T0 + 5 * HOUR), 1);
	assert_auto_closed(f, b, T0 + 90 * MINUTE);
	assert_int_equal(f->closed, 1);
	assert_int_equal(windows_next_expiry(f->w), INT64_MAX);
	r = end(f, ALICE, WINDOWS_END_ID, NULL, a, T0 + 6 * HOUR);
	assert_error(r, PROTO_E_NOT_OPEN, "closed automatically");
}

static void
test_expire_at_start(void **state)
{
	struct fx *f = *state;
	int64_t old, recent;

	assert_int_equal(store_window_begin(f->st, "old", ALICE, 1, T0 - 2 * HOUR,
	    "{}", NULL, 0, &old), 0);
	assert_int_equal(store_window_begin(f->st, "recent", ALICE, 1,
	    T0 - 10 * MINUTE, "{}", NULL, 0, &recent), 0);
	fx_start(f, (uint64_t)HOUR, T0);
	assert_auto_closed(f, old, T0 - HOUR);
	assert_abandoned(f, old);
	assert_true(is_open(f, recent));
	assert_int_equal(f->opened, 1);
	assert_int_equal(f->closed, 0);
	fx_restart(f, (uint64_t)HOUR, T0 + HOUR);
	assert_auto_closed(f, recent, T0 + 50 * MINUTE);
	assert_abandoned(f, recent);
	/* nothing open after loading: no notification at all */
	assert_int_equal(f->opened, 1);
	assert_int_equal(f->closed, 0);
}

/* Write sql to the database on a connection of its own, the store closed. */
static void
sql_write(const struct fx *f, const char *sql)
{
	sqlite3 *db;
	char *err = NULL;

	assert_int_equal(sqlite3_open(f->db.path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
	sqlite3_close(db);
}

/*
 * The daemon that held windows died (its row not stopped cleanly, naming
 * a process that has exited): the next start ends each at the newest
 * sample stored, at its begin if that is later, by daemon_gone with the
 * reason, never complete; one whose max_open ran out before that sample
 * at its expiry instead.
 */
static void
test_restart_after_death(void **state)
{
	struct fx *f = *state;
	int64_t a, b, late, old;
	char sql[256], *text;
	pid_t dead;

	fx_start(f, (uint64_t)HOUR, T0);
	assert_int_equal(store_window_begin(f->st, "old", BOB, 1,
	    T0 - 2 * HOUR, "{}", NULL, 0, &old), 0);
	a = begin_ok(f, ALICE, "a", false, T0);
	b = begin_ok(f, BOB, "b", false, T0 + SEC);
	late = begin_ok(f, ALICE, "late", false, T0 + 10 * SEC);
	settle(f);
	windows_free(f->w);
	f->w = NULL;
	store_close(f->st);
	f->st = NULL;
	/* as if killed: no clean stop, and its pid names no process */
	if ((dead = fork()) == 0)
		_exit(0);
	assert_true(dead > 0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	snprintf(sql, sizeof(sql), "UPDATE daemon SET stopped_ns = NULL, "
	    "pid = %d; INSERT INTO samples (ts_ns, device, interval_ms) "
	    "VALUES (%" PRId64 ", 0, 100)", (int)dead, (int64_t)(T0 + 5 * SEC));
	sql_write(f, sql);
	assert_int_equal(store_open(f->db.path, 100, &f->st), 0);
	f->opened = 0;
	fx_start(f, (uint64_t)HOUR, T0 + MINUTE);
	assert_int_equal(f->opened, 0);
	assert_auto_closed(f, a, T0 + 5 * SEC);
	assert_auto_closed(f, b, T0 + 5 * SEC);
	assert_auto_closed(f, late, T0 + 10 * SEC);
	assert_auto_closed(f, old, T0 - HOUR);
	for (int i = 0; i < 4; i++)
		assert_abandoned(f, (int64_t[]){ a, b, late, old }[i]);
	snprintf(sql, sizeof(sql), "SELECT ended_by || ': ' || end_note FROM "
	    "windows WHERE id = %" PRId64, a);
	assert_non_null(text = sql_text(f, sql));
	snprintf(sql, sizeof(sql), "daemon_gone: daemon restart: spyremond %d "
	    "that held it was gone (there is no process %d)", (int)dead,
	    (int)dead);
	assert_memory_equal(text, sql, strlen(sql));
	free(text);
	assert_int_equal(sql_int(f, "SELECT count(*) FROM windows WHERE "
	    "ended_by = 'max_open' AND end_note IS NULL AND id = %" PRId64, old),
	    1);
	/* this daemon is recorded now, running */
	assert_int_equal(sql_int(f, "SELECT pid FROM daemon"), (int64_t)getpid());
	assert_int_equal(sql_int(f, "SELECT stopped_ns FROM daemon"), INT64_MIN);
}

static void
test_shorter_max_open(void **state)
{
	struct fx *f = *state;
	int64_t a, b;

	fx_start(f, MAX_OPEN, T0);
	a = begin_ok(f, ALICE, "a", false, T0);
	b = begin_ok(f, ALICE, "b", false, T0 + 2 * HOUR);
	windows_set_max_open(f->w, (uint64_t)HOUR, T0 + 150 * MINUTE);
	assert_auto_closed(f, a, T0 + HOUR);
	assert_true(is_open(f, b));
	assert_int_equal(windows_next_expiry(f->w), T0 + 3 * HOUR);
}

/* The event loop's CLOCK_REALTIME timer closes a window when its time is up. */
static void
test_timer(void **state)
{
	struct fx *f = *state;
	const uint64_t max_open = 300 * NSEC_PER_MSEC;
	struct windows_result r;
	sd_event *ev;
	int64_t now = now_realtime_ns(), deadline;

	assert_int_equal(sd_event_new(&ev), 0);
	assert_int_equal(windows_start(ev, f->st, max_open, now, on_notify, f,
	    &f->w), 0);
	r = begin(f, ALICE, "timed", false, now);
	assert_null(r.error);
	deadline = now + 5 * SEC;
	while (f->closed == 0 && now_realtime_ns() < deadline)
		assert_true(sd_event_run(ev, 100000) >= 0);
	assert_int_equal(f->closed, 1);
	/* not before its time, and soon after it */
	assert_true(now_realtime_ns() >= now + (int64_t)max_open);
	assert_true(now_realtime_ns() < now + (int64_t)max_open + 2 * SEC);
	assert_auto_closed(f, r.id, now + (int64_t)max_open);
	windows_free(f->w);
	f->w = NULL;
	sd_event_unref(ev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_begin_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_keeps_buffered_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_unreliable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin_validation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_meta, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_newest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_by_tag_and_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_before_begin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin_end_at, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notifications, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit_per_user_set, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_limit_per_user, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_keeps_open_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expire_at_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_after_death, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_shorter_max_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
