/*
 * Tests of the schema's migrations from the layouts past builds wrote
 * under one version number (spyremon-schema(5), "Versions"), each built
 * here from the SQL of that build as git history has it: every one ends
 * with the tables of a new database and its rows kept; and a migration
 * that fails leaves the file as it was.  The files those builds' own
 * daemons wrote are migrated by t_migrate_old (tests/data/olddb/).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "schema.h"
#include "storedb.h"
#include "store_priv.h"
#include "tmpdb.h"

#define T0	1750000000000000000LL	/* June 2025, in ns */

struct fx {
	struct tmpdb db;	/* the file under test */
	struct tmpdb fresh;	/* a new database of this build */
	struct store *st;
};

/*
 * The main line's version 5 (83e6985 to ad824ee, and the direct reader's
 * branch before its version 6): version 4 was left empty for the window
 * summaries, made on another line, and version 5 added these.
 */
static const char main_v5[] =
	"CREATE TABLE host ("
	"id INTEGER PRIMARY KEY CHECK (id = 1), "
	"hostname TEXT NOT NULL, "
	"machine_id TEXT NOT NULL, "
	"created_ns INTEGER NOT NULL);\n"
	"CREATE TABLE counters ("
	"name TEXT NOT NULL, "
	"device INTEGER NOT NULL, "
	"value REAL NOT NULL, "
	"through_ns INTEGER NOT NULL, "
	"PRIMARY KEY (name, device)) WITHOUT ROWID;\n"
	"INSERT INTO host VALUES (1, 'h1', 'm1', 5);\n";

/* The direct reader's version 6 (172d6cc to 336a9fe), on main_v5. */
static const char direct_v6[] =
	"ALTER TABLE samples ADD COLUMN src INTEGER;\n"
	"ALTER TABLE samples ADD COLUMN seq INTEGER;\n"
	"ALTER TABLE samples ADD COLUMN arrival_ns INTEGER;\n";

/*
 * The first summaries' version 4 (34e5094 to f1987de): window_summary
 * without power_n and power_sd.
 */
static const char summaries_v4[] =
	"ALTER TABLE windows ADD COLUMN ended_by TEXT;\n"
	"ALTER TABLE windows ADD COLUMN until_pid INTEGER;\n"
	"ALTER TABLE windows ADD COLUMN summarized_ns INTEGER;\n"
	"ALTER TABLE windows ADD COLUMN clock_begin_synced INTEGER;\n"
	"ALTER TABLE windows ADD COLUMN clock_begin_est_us INTEGER;\n"
	"ALTER TABLE windows ADD COLUMN clock_begin_max_us INTEGER;\n"
	"ALTER TABLE windows ADD COLUMN clock_end_synced INTEGER;\n"
	"ALTER TABLE windows ADD COLUMN clock_end_est_us INTEGER;\n"
	"ALTER TABLE windows ADD COLUMN clock_end_max_us INTEGER;\n"
	"ALTER TABLE windows ADD COLUMN child_restarts INTEGER;\n"
	"CREATE TABLE window_summary ("
	"window_id INTEGER NOT NULL, "
	"device INTEGER NOT NULL, "
	"computed_ns INTEGER NOT NULL, "
	"begin_ns INTEGER NOT NULL, "
	"end_ns INTEGER NOT NULL, "
	"idle_lookback_ns INTEGER NOT NULL, "
	"samples INTEGER NOT NULL, "
	"covered_ns INTEGER NOT NULL, "
	"gaps INTEGER NOT NULL, "
	"gap_ns INTEGER NOT NULL, "
	"max_interval_ms INTEGER NOT NULL, "
	"busy_samples INTEGER NOT NULL, "
	"coarse_samples INTEGER NOT NULL, "
	"energy_j TEXT, "
	"power_mean REAL, power_min REAL, power_max REAL, power_p95 REAL, "
	"gtemp_max REAL, busy_mean REAL, actmem_peak REAL, peakmem_peak REAL, "
	"idle_w REAL, idle_samples INTEGER NOT NULL, net_energy_j REAL, "
	"zero_while_busy TEXT NOT NULL, "
	"unreliable TEXT NOT NULL, "
	"PRIMARY KEY (window_id, device)) WITHOUT ROWID;\n"
	"CREATE TABLE window_summary_bw ("
	"window_id INTEGER NOT NULL, "
	"device INTEGER NOT NULL, "
	"metric TEXT NOT NULL, "
	"mean REAL NOT NULL, "
	"max REAL NOT NULL, "
	"bytes REAL NOT NULL, "
	"PRIMARY KEY (window_id, device, metric)) WITHOUT ROWID;\n"
	"UPDATE windows SET ended_by = 'mark', summarized_ns = 9;\n"
	"INSERT INTO window_summary VALUES (1, 2, 9, 5, 8, 0, 3, 3, 0, 0, 100, "
	"1, 0, '0.75', 250.5, 249.0, 252.0, 251.9, 40.5, 12.5, 1.0, 2.0, "
	"NULL, 0, NULL, '', '');\n";

/* The aiu-smi version's branch's version 7 (f11ac5b to 72ae53a), on 6. */
static const char smiversion_v7[] =
	"CREATE TABLE smi_versions ("
	"since_ns INTEGER PRIMARY KEY, "
	"version TEXT NOT NULL);\n"
	"INSERT INTO smi_versions VALUES (7, 'aiu-smi 1.2');\n";

/* ---- helpers ---- */

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tmpdb_make(&f->db, "test_migrate"), 0);
	assert_int_equal(tmpdb_make(&f->fresh, "test_migrate"), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	storedb_close(f->st);
	assert_int_equal(tmpdb_remove(&f->db), 0);
	assert_int_equal(tmpdb_remove(&f->fresh), 0);
	free(f);
	return 0;
}

static sqlite3 *
db_open(const char *path)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	return db;
}

static void
db_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static int64_t
q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The text sql's single row gives, malloc'ed ("" for NULL). */
static char *
q_str(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	const unsigned char *t;
	char *v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	t = sqlite3_column_text(s, 0);
	assert_non_null(v = strdup(t != NULL ? (const char *)t : ""));
	sqlite3_finalize(s);
	return v;
}

/*
 * Every table's columns (but those of samples, whose metric columns
 * follow the catalog) and every index, in one string.
 */
static char *
layout_of(const char *path)
{
	sqlite3 *db = db_open(path);
	char *v = q_str(db, "SELECT group_concat(x, ';') FROM ("
	    "SELECT m.type || ' ' || m.name || coalesce(' ' || p.cid || ' ' "
	    "|| p.name || ' ' || p.type || ' ' || p.\"notnull\" || ' ' || "
	    "coalesce(p.dflt_value, '-') || ' ' || p.pk, '') AS x "
	    "FROM sqlite_master m LEFT JOIN pragma_table_info(m.name) p "
	    "ON m.type = 'table' WHERE m.name NOT IN ('samples', "
	    "'sqlite_stat1') ORDER BY m.name, p.cid)");

	sqlite3_close(db);
	return v;
}

/* The schema and every row of the fixed tables, with user_version. */
static char *
content_of(const char *path)
{
	sqlite3 *db = db_open(path);
	char *schema = q_str(db, "SELECT group_concat(x, ';') FROM ("
	    "SELECT type || name || tbl_name || coalesce(sql, '') AS x "
	    "FROM sqlite_master ORDER BY name)");
	char *rows = q_str(db, "SELECT (SELECT group_concat(quote(ts_ns) || "
	    "quote(device) || quote(pwr)) FROM samples) || '|' || "
	    "(SELECT group_concat(quote(id) || tag || begin_ns || "
	    "quote(end_ns)) FROM windows) || '|' || "
	    "(SELECT group_concat(hostname) FROM host)");
	char *v;

	assert_true(asprintf(&v, "%lld|%s|%s",
	    (long long)q_int(db, "PRAGMA user_version"), schema, rows) > 0);
	free(schema);
	free(rows);
	sqlite3_close(db);
	return v;
}

/*
 * A database at version base as this build makes it, with a sample and
 * an ended window, then sql run on it and user_version set to version:
 * the layout a past build wrote.
 */
static void
make_past(const char *path, int base, const char *sql, int version)
{
	char pragma[64];
	sqlite3 *db;

	assert_int_equal(store_create_version(path, base), 0);
	db = db_open(path);
	db_exec(db, "INSERT INTO samples (ts_ns, device, interval_ms, pwr) "
	    "VALUES (1750000000000000000, 2, 1000, 2675)");
	db_exec(db, "INSERT INTO windows (tag, uid, pid, begin_ns, end_ns) "
	    "VALUES ('w', 0, 1, 5, 8)");
	db_exec(db, sql);
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", version);
	db_exec(db, pragma);
	sqlite3_close(db);
}

/* Open path as the daemon does, and check it now has a new database's tables. */
static void
open_and_check(struct fx *f)
{
	char *want, *got;
	sqlite3 *db;

	assert_int_equal(storedb_open(f->fresh.path, 10, &f->st), 0);
	storedb_close(f->st);
	f->st = NULL;
	assert_int_equal(storedb_open(f->db.path, 10, &f->st), 0);
	want = layout_of(f->fresh.path);
	got = layout_of(f->db.path);
	assert_string_equal(got, want);
	free(want);
	free(got);
	db = db_open(f->db.path);
	assert_int_equal(q_int(db, "PRAGMA user_version"), SCHEMA_VERSION);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "ts_ns = 1750000000000000000 AND device = 2 AND pwr = 2675 AND "
	    "interval_ms = 1000"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM windows WHERE "
	    "id = 1 AND tag = 'w' AND begin_ns = 5 AND end_ns = 8"), 1);
	sqlite3_close(db);
}

/* ---- the past layouts ---- */

static void
test_main_v5(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;

	make_past(f->db.path, 3, main_v5, 5);
	open_and_check(f);
	db = db_open(f->db.path);
	/* version 4's columns, NULL for the old window; the host is kept */
	assert_int_equal(q_int(db, "SELECT count(*) FROM windows WHERE "
	    "summarized_ns IS NULL AND ended_by IS NULL AND "
	    "complete_ns IS NULL AND end_note IS NULL"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM host WHERE "
	    "hostname = 'h1' AND machine_id = 'm1' AND created_ns = 5"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM window_summary"), 0);
	sqlite3_close(db);
}

static void
test_direct_v6(void **state)
{
	struct fx *f = *state;
	char *sql;
	sqlite3 *db;

	assert_true(asprintf(&sql, "%s%s", main_v5, direct_v6) > 0);
	make_past(f->db.path, 3, sql, 6);
	free(sql);
	open_and_check(f);
	db = db_open(f->db.path);
	assert_int_equal(q_int(db, "SELECT count(*) FROM host"), 1);
	sqlite3_close(db);
}

static void
test_summaries_v5(void **state)
{
	struct fx *f = *state;
	char *sql;
	sqlite3 *db;

	assert_true(asprintf(&sql, "%s%s", summaries_v4, main_v5) > 0);
	make_past(f->db.path, 3, sql, 5);
	free(sql);
	open_and_check(f);
	db = db_open(f->db.path);
	/* the summary kept, its spread unknown; complete since summarized */
	assert_int_equal(q_int(db, "SELECT count(*) FROM window_summary WHERE "
	    "window_id = 1 AND device = 2 AND computed_ns = 9 AND "
	    "energy_j = '0.75' AND power_mean = 250.5 AND power_p95 = 251.9 "
	    "AND gtemp_max = 40.5 AND peakmem_peak = 2.0 AND idle_w IS NULL "
	    "AND power_n = 0 AND power_sd IS NULL"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM windows WHERE "
	    "ended_by = 'mark' AND summarized_ns = 9 AND complete_ns = 9"), 1);
	sqlite3_close(db);
}

static void
test_smiversion_v7(void **state)
{
	struct fx *f = *state;
	sqlite3 *db;

	make_past(f->db.path, 6, smiversion_v7, 7);
	open_and_check(f);
	db = db_open(f->db.path);
	assert_int_equal(q_int(db, "SELECT count(*) FROM smi_versions WHERE "
	    "since_ns = 7 AND version = 'aiu-smi 1.2'"), 1);
	sqlite3_close(db);
}

/* This build's own version 5 goes on migrating as it always did. */
static void
test_own_v5(void **state)
{
	struct fx *f = *state;

	make_past(f->db.path, 5, "", 5);
	open_and_check(f);
}

/*
 * Version 11 to 12: the rows already there are of epoch 0 (no step was
 * recorded before them) and the windows' epochs are not recorded; a step
 * starts epoch 1, recorded in clock_steps, which the rows stamped after
 * it and a window begun after it carry, and a store opened again goes on
 * from it.
 */
static void
test_epochs_v11(void **state)
{
	struct fx *f = *state;
	struct store_sample s = { .ts_ns = T0 - 5, .device = 2,
	    .interval_ms = 1000 };
	int64_t id;
	sqlite3 *db;

	make_past(f->db.path, 11, "", 11);
	open_and_check(f);
	assert_int_equal(store_clock_epoch(f->st), 0);
	db = db_open(f->db.path);
	assert_int_equal(q_int(db, "SELECT count(*) FROM samples WHERE "
	    "epoch = 0"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM windows WHERE "
	    "begin_epoch IS NULL AND end_epoch IS NULL"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM clock_steps"), 0);
	sqlite3_close(db);
	/* a step back of an hour: epoch 1 */
	assert_int_equal(store_clock_stepped(f->st, -3600 * 1000000000LL,
	    T0 - 10), 1);
	storedb_append(f->st, &s);
	assert_int_equal(storedb_flush(f->st), 0);
	assert_int_equal(storedb_window_begin(f->st, "after", 0, 1, T0 - 8,
	    NULL, NULL, 0, &id), 0);
	assert_int_equal(storedb_window_end(f->st, id, T0 - 2,
	    STORE_ENDED_MARK, NULL), 0);
	storedb_close(f->st);
	f->st = NULL;
	db = db_open(f->db.path);
	assert_int_equal(q_int(db, "SELECT count(*) FROM clock_steps WHERE "
	    "id = 1 AND at_ns = 1749999999999999990 AND "
	    "size_ns = -3600000000000"), 1);
	assert_int_equal(q_int(db, "SELECT epoch FROM samples WHERE "
	    "ts_ns = 1749999999999999995"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM windows WHERE "
	    "tag = 'after' AND begin_epoch = 1 AND end_epoch = 1"), 1);
	sqlite3_close(db);
	assert_int_equal(storedb_open(f->db.path, 10, &f->st), 0);
	assert_int_equal(store_clock_epoch(f->st), 1);
}

/* ---- failures ---- */

/*
 * A column the last migration adds is already there: every migration
 * before it ran in the same transaction, and the file is left as it was.
 */
static void
test_failed_leaves_file(void **state)
{
	struct fx *f = *state;
	char *before, *after, *sql;
	sqlite3 *db;

	assert_true(asprintf(&sql, "%sALTER TABLE windows ADD COLUMN end_note "
	    "TEXT;\n", main_v5) > 0);
	make_past(f->db.path, 3, sql, 5);
	free(sql);
	before = content_of(f->db.path);
	assert_int_equal(storedb_open(f->db.path, 10, &f->st), -1);
	assert_null(f->st);
	after = content_of(f->db.path);
	assert_string_equal(after, before);
	free(after);
	db = db_open(f->db.path);
	assert_int_equal(q_int(db, "PRAGMA user_version"), 5);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('window_summary', 'smi_versions', 'samples_file', "
	    "'daemon')"), 0);
	/* without the column, the same file migrates */
	db_exec(db, "ALTER TABLE windows DROP COLUMN end_note");
	sqlite3_close(db);
	open_and_check(f);
	free(before);
}

/* A version this build knows, whose file opens with no migration at all. */
static void
test_current_untouched(void **state)
{
	struct fx *f = *state;
	char *before, *after;

	assert_int_equal(store_create_version(f->db.path, SCHEMA_VERSION), 0);
	before = content_of(f->db.path);
	assert_int_equal(storedb_open(f->db.path, 10, &f->st), 0);
	after = content_of(f->db.path);
	assert_string_equal(after, before);
	free(before);
	free(after);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_main_v5, setup, teardown),
		cmocka_unit_test_setup_teardown(test_direct_v6, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_summaries_v5, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_smiversion_v7, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_own_v5, setup, teardown),
		cmocka_unit_test_setup_teardown(test_epochs_v11, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_failed_leaves_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_current_untouched, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
