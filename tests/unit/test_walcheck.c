/*
 * Tests of walcheck.c on logs that SQLite itself wrote: a sound log, its
 * header damaged, a frame in the middle damaged (page or salts), the last
 * frame torn, frames of an earlier log left after a reset, no log at all.
 * Where damage is found, SQLite's own recovery of the copy is asked too:
 * it must keep exactly the commits walcheck says it keeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "tmpdb.h"
#include "walcheck.h"

#define ROWS		40	/* one commit each, after the table's own */
#define BLOB_BYTES	3000	/* a row spans pages: several frames a commit */
#define WAL_HEADER	32
#define FRAME_HEADER	24

struct fx {
	struct tmpdb live;	/* written by SQLite, held open */
	struct tmpdb copy;	/* its files copied while open, then damaged */
	sqlite3 *db;
	uint32_t page_size;
};

static void
exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static void
copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out;
	char buf[8192];
	size_t n;

	if (in == NULL) {
		unlink(to);
		return;
	}
	assert_non_null(out = fopen(to, "wb"));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* The live database's files as they are now, into the copy's folder. */
static void
snapshot(struct fx *f)
{
	char a[256], b[256];

	copy_file(f->live.path, f->copy.path);
	snprintf(a, sizeof(a), "%s-wal", f->live.path);
	snprintf(b, sizeof(b), "%s-wal", f->copy.path);
	copy_file(a, b);
}

/* Write ROWS commits into the live database, never checkpointed. */
static void
write_rows(struct fx *f, int rows)
{
	sqlite3_stmt *s;
	char blob[BLOB_BYTES];

	for (int i = 0; i < rows; i++) {
		memset(blob, 'a' + i % 26, sizeof(blob));
		assert_int_equal(sqlite3_prepare_v2(f->db,
		    "INSERT INTO t (v) VALUES (?)", -1, &s, NULL), SQLITE_OK);
		sqlite3_bind_blob(s, 1, blob, sizeof(blob), SQLITE_STATIC);
		assert_int_equal(sqlite3_step(s), SQLITE_DONE);
		sqlite3_finalize(s);
	}
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->live, "test_walcheck"), 0);
	assert_int_equal(tmpdb_make(&f->copy, "test_walcheck_copy"), 0);
	assert_int_equal(sqlite3_open(f->live.path, &f->db), SQLITE_OK);
	exec(f->db, "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; "
	    "PRAGMA wal_autocheckpoint = 0; "
	    "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
	f->page_size = 4096;
	write_rows(f, ROWS);
	snapshot(f);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	sqlite3_close(f->db);
	tmpdb_remove(&f->live);
	tmpdb_remove(&f->copy);
	free(f);
	return 0;
}

static char *
wal_of(const struct fx *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s-wal", f->copy.path);
	return buf;
}

/* Overwrite len bytes at off of the copy's log with garbage. */
static void
damage(const struct fx *f, long off, size_t len)
{
	char p[256];
	FILE *fp;

	assert_non_null(fp = fopen(wal_of(f, p, sizeof(p)), "r+b"));
	assert_int_equal(fseek(fp, off, SEEK_SET), 0);
	for (size_t i = 0; i < len; i++)
		fputc(0x5a ^ (int)i, fp);
	assert_int_equal(fclose(fp), 0);
}

static long
frame_at(const struct fx *f, uint64_t n)
{
	return WAL_HEADER + (long)(n - 1) * (FRAME_HEADER + (long)f->page_size);
}

/* The rows SQLite's recovery keeps from the copy (whose log it then
 * checkpoints and removes). */
static int64_t
recovered_rows(const struct fx *f)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t n = -1;

	assert_int_equal(sqlite3_open(f->copy.path, &db), SQLITE_OK);
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &s, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			n = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return n;
}

static void
test_sound_log(void **state)
{
	struct fx *f = *state;
	struct walcheck c;
	char line[256];

	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_CLEAN);
	assert_int_equal(c.page_size, f->page_size);
	/* the table's commit, then one a row */
	assert_int_equal(c.kept_commits, ROWS + 1);
	assert_int_equal(c.kept_frames, c.frames);
	assert_true(c.frames > 2 * ROWS);
	assert_int_equal(c.lost_frames, 0);
	walcheck_describe(&c, line, sizeof(line));
	assert_non_null(strstr(line, "sound"));
	assert_int_equal(recovered_rows(f), ROWS);
}

static void
test_header_damaged(void **state)
{
	struct fx *f = *state;
	struct walcheck c, before;
	char line[256];

	assert_int_equal(walcheck_db(f->copy.path, &before), 0);
	damage(f, 16, 8);	/* the salts: the checksum fails */
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_BAD_HEADER);
	assert_int_equal(c.lost_frames, before.frames);
	assert_int_equal(c.lost_commits, ROWS + 1);
	assert_int_equal(c.kept_commits, 0);
	walcheck_describe(&c, line, sizeof(line));
	assert_non_null(strstr(line, "header damaged"));
}

static void
test_magic_damaged(void **state)
{
	struct fx *f = *state;
	struct walcheck c;

	damage(f, 0, 4);
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_BAD_HEADER);
	assert_int_equal(c.page_size, 0);
}

static void
test_short_log(void **state)
{
	struct fx *f = *state;
	struct walcheck c;
	char p[256], line[256];

	assert_int_equal(truncate(wal_of(f, p, sizeof(p)), 20), 0);
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_BAD_HEADER);
	assert_int_equal(c.wal_bytes, 20);
	walcheck_describe(&c, line, sizeof(line));
	assert_non_null(strstr(line, "none of its 20 bytes can be recovered"));
}

/* The content of a frame in the middle: recovery stops there. */
static void
test_middle_frame_damaged(void **state)
{
	struct fx *f = *state;
	struct walcheck c, before;
	uint64_t mid;

	assert_int_equal(walcheck_db(f->copy.path, &before), 0);
	mid = before.frames / 2;
	damage(f, frame_at(f, mid) + FRAME_HEADER + 100, 16);
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_BAD_FRAME);
	assert_int_equal(c.bad_frame, mid);
	assert_true(c.kept_frames < mid);
	assert_true(c.kept_commits > 1 && c.kept_commits < ROWS + 1);
	assert_int_equal(c.kept_commits + c.lost_commits, ROWS + 1);
	assert_int_equal(c.kept_frames + c.lost_frames, before.frames);
	/* SQLite keeps what walcheck says, and silently drops the rest */
	assert_int_equal(recovered_rows(f), (int64_t)c.kept_commits - 1);
}

/* A frame's salts overwritten: it reads as another log's, still damage. */
static void
test_frame_salts_damaged(void **state)
{
	struct fx *f = *state;
	struct walcheck c, before;
	uint64_t n;

	assert_int_equal(walcheck_db(f->copy.path, &before), 0);
	n = before.frames / 3;
	damage(f, frame_at(f, n) + 8, 8);
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_BAD_FRAME);
	assert_int_equal(c.bad_frame, n);
	assert_int_equal(recovered_rows(f), (int64_t)c.kept_commits - 1);
}

/* The last frame torn: it was never committed; no damage. */
static void
test_last_frame_torn(void **state)
{
	struct fx *f = *state;
	struct walcheck c, before;

	assert_int_equal(walcheck_db(f->copy.path, &before), 0);
	damage(f, frame_at(f, before.frames) + FRAME_HEADER + 10, 16);
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_CLEAN);
	assert_int_equal(c.kept_commits, ROWS);
	assert_int_equal(c.lost_frames, 0);
	assert_int_equal(recovered_rows(f), ROWS - 1);
}

/*
 * After a checkpoint the next write starts the log over: the new frames
 * carry new salts and the older ones after them are an earlier log's,
 * which SQLite ignores and so must walcheck.
 */
static void
test_reset_leaves_old_frames(void **state)
{
	struct fx *f = *state;
	struct walcheck c;

	exec(f->db, "PRAGMA wal_checkpoint(PASSIVE)");
	write_rows(f, 1);
	snapshot(f);
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_CLEAN);
	assert_int_equal(c.kept_commits, 1);
	assert_true(c.frames > c.kept_frames);
	assert_int_equal(recovered_rows(f), ROWS + 1);
	/* one of the old frames damaged as well is still nothing lost
	 * (the copy again: SQLite's close above checkpointed it away) */
	snapshot(f);
	damage(f, frame_at(f, c.frames - 1) + FRAME_HEADER, 16);
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_CLEAN);
}

static void
test_no_log(void **state)
{
	struct fx *f = *state;
	struct walcheck c;
	char p[256];

	assert_int_equal(unlink(wal_of(f, p, sizeof(p))), 0);
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_CLEAN);
	assert_int_equal(c.wal_bytes, 0);
	assert_false(c.main_empty);
}

/* Never checkpointed, the main file is empty: the log is everything. */
static void
test_empty_main_bad_header(void **state)
{
	struct fx *f = *state;
	struct walcheck c;
	char line[256];

	assert_int_equal(truncate(f->copy.path, 0), 0);
	damage(f, 24, 4);	/* the header's checksum */
	assert_int_equal(walcheck_db(f->copy.path, &c), 0);
	assert_int_equal(c.verdict, WALCHECK_BAD_HEADER);
	assert_true(c.main_empty);
	walcheck_describe(&c, line, sizeof(line));
	assert_non_null(strstr(line, "the main file is empty"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sound_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_damaged, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_magic_damaged, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_short_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_middle_frame_damaged, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_frame_salts_damaged, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_last_frame_torn, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_reset_leaves_old_frames,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_main_bad_header,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
