#!/usr/bin/env bash
# Databases written by past builds (tests/data/olddb/, each made once by
# that build's own daemon, client and simulator; README.md there) are
# migrated to this build's schema: the daemon started on each brings it
# to SCHEMA_VERSION with every table and column a new database has, keeps
# every row it held (samples, windows, summaries, imports, the catalog,
# the host) value for value, and goes on storing; "spyremon import"
# migrates a copy the same way, and a window exports as it did before.
# The readers list, summarize and export the windows of each file as the
# old build left it, read-only.  A migration that fails (a column the file should not have)
# leaves the file exactly as it was, at its own version, and the daemon
# exits 3; without that column the same file migrates.
source "$(dirname "$0")/lib.sh"
need sqlite3 gzip

DATA=$ROOT/tests/data/olddb
SCHEMA=$(sed -n 's/^#define SCHEMA_VERSION \([0-9]*\).*/\1/p' "$ROOT/query/schema.h")

q() {
	sqlite3 "file:$1?mode=ro" "$2"
}

spy() {
	"$CLIENT" -c "$T/spyremond.yaml" "$@"
}

# A log of devices 4 and 5 to import; and a new database of this build,
# whose tables the migrated ones must equal.
"$SIM" -s -d 1 --cards 6 -i 4,5 --exit-after 4 -f "$T/log45.csv" ||
	fail "simulator failed"
rows45=$(grep -c '^[0-9]' "$T/log45.csv")
"$CLIENT" import --tz UTC --db "$T/new.db" "$T/log45.csv" >/dev/null ||
	fail "import into a new database failed"

# layout DB: every table's columns (but samples', whose metric columns
# follow the catalog) and every index, as this build reads them
layout() {
	q "$1" "SELECT m.type, m.name, p.cid, p.name, p.type, p.\"notnull\",
		p.dflt_value, p.pk
	    FROM sqlite_master m LEFT JOIN pragma_table_info(m.name) p
		ON m.type = 'table'
	    WHERE m.name NOT IN ('samples', 'sqlite_stat1')
	    ORDER BY m.name, p.cid"
}
layout "$T/new.db" >"$T/layout.new"

# kept OLD NEW TABLE [COLUMN]: every row of OLD's TABLE is in NEW's, in
# the columns OLD had (but COLUMN), value for value; prints the number of
# OLD's rows
kept() {
	local old=$1 new=$2 t=$3 but=${4:-} cols missing
	cols=$(q "$old" "SELECT group_concat('\"' || name || '\"', ', ')
	    FROM pragma_table_info('$t') WHERE name != '$but'")
	missing=$(sqlite3 "file:$new?mode=ro" "ATTACH 'file:$old?mode=ro' AS old;
	    SELECT count(*) FROM (SELECT $cols FROM old.\"$t\"
	    EXCEPT SELECT $cols FROM main.\"$t\")") || fail "$t: cannot compare"
	[ "$missing" -eq 0 ] || fail "$new: $missing rows of $t were not kept"
	q "$old" "SELECT count(*) FROM \"$t\""
}

# check_migrated NAME OLD NEW: NEW has this build's version and tables and
# kept every row of OLD; one line of what was kept
check_migrated() {
	local name=$1 old=$2 new=$3 t rows windows summaries
	[ "$(q "$new" 'PRAGMA user_version')" -eq "$SCHEMA" ] ||
		fail "$name: schema version $(q "$new" 'PRAGMA user_version')"
	layout "$new" >"$T/layout.$name"
	diff "$T/layout.new" "$T/layout.$name" >&2 ||
		fail "$name: tables differ from a new database's"
	for t in metrics device_map imports host window_summary_bw smi_versions; do
		if [ "$(q "$old" "SELECT count(*) FROM sqlite_master WHERE name = '$t'")" -eq 1 ]; then
			kept "$old" "$new" "$t" >/dev/null
		fi
	done
	rows=$(kept "$old" "$new" samples)
	# the daemon summarizes a window left unsummarized as it starts
	windows=$(kept "$old" "$new" windows summarized_ns)
	if [ "$(q "$old" "SELECT count(*) FROM pragma_table_info('windows')
	    WHERE name = 'summarized_ns'")" -eq 1 ]; then
		[ "$(sqlite3 "file:$new?mode=ro" "ATTACH 'file:$old?mode=ro' AS old;
		    SELECT count(*) FROM (SELECT id, summarized_ns FROM old.windows
		    WHERE summarized_ns IS NOT NULL
		    EXCEPT SELECT id, summarized_ns FROM main.windows)")" -eq 0 ] ||
			fail "$name: a window's summarized_ns changed"
	fi
	summaries=0
	if [ "$(q "$old" "SELECT count(*) FROM sqlite_master WHERE name = 'window_summary'")" -eq 1 ]; then
		summaries=$(kept "$old" "$new" window_summary)
	fi
	# a card's last_seen_ns moves while the daemon runs
	[ "$(sqlite3 "file:$new?mode=ro" "ATTACH 'file:$old?mode=ro' AS old;
	    SELECT count(*) FROM (SELECT bus_id, first_seen_ns FROM old.cards
	    EXCEPT SELECT bus_id, first_seen_ns FROM main.cards)")" -eq 0 ] ||
		fail "$name: cards lost"
	echo "$name: $rows of $rows rows, $windows of $windows windows, $summaries of $summaries summaries kept"
}

# the daemon's config on DB, keeping every sample (the fixtures' stamps
# are of the day they were made)
config_on() {
	DB=$1
	FLUSH=200ms write_config 2 100ms
	printf 'retention:\n  max_age: 20000d\n  windows_max_age: 20000d\n' >>"$T/spyremond.yaml"
}

n=0
for gz in "$DATA"/*.db.gz; do
	name=$(basename "$gz" .db.gz)
	old=$T/$name.old.db
	gzip -dc "$gz" >"$old"
	n=$((n + 1))
	before=$(q "$old" 'SELECT count(*) FROM samples')

	# ---- the readers, on the file as the old build left it ----
	cp "$old" "$T/$name.ro.db"
	chmod 0444 "$T/$name.ro.db"
	"$CLIENT" --db "$T/$name.ro.db" windows --json >"$T/windows.json" ||
		fail "$name: windows of the old file failed"
	grep -q '"fixture-a"' "$T/windows.json" && grep -q '"fixture-b"' "$T/windows.json" ||
		fail "$name: windows of the old file lacks its windows"
	"$CLIENT" --db "$T/$name.ro.db" summary --partial --window fixture-a >/dev/null ||
		fail "$name: no summary of the old file's window"
	"$CLIENT" --db "$T/$name.ro.db" export --partial --window fixture-b >"$T/export.old" ||
		fail "$name: export of the old file's window failed"
	[ "$(grep -c '^[0-9]' "$T/export.old")" -gt 0 ] || fail "$name: nothing exported"

	# ---- the daemon ----
	cp "$old" "$T/$name.db"
	config_on "$T/$name.db"
	start_daemon
	wait_for 30 rows_at_least $((before + 10)) ||
		fail "$name: the daemon stored no rows ($(tail -n 3 "$DLOG"))"
	spy windows --json >"$T/windows.json" || fail "$name: windows failed"
	grep -q '"fixture-a"' "$T/windows.json" && grep -q '"fixture-b"' "$T/windows.json" ||
		fail "$name: windows lacks the old windows: $(cat "$T/windows.json")"
	spy summary --partial --window fixture-a >"$T/summary.txt" ||
		fail "$name: no summary of an old window"
	stop_daemon
	log_has "$T/$name.db: schema migrated from version" ||
		fail "$name: the daemon did not say it migrated"
	check_migrated "$name" "$old" "$T/$name.db"

	# ---- spyremon import, with no daemon ----
	cp "$old" "$T/$name.imp.db"
	"$CLIENT" import --tz UTC --db "$T/$name.imp.db" "$T/log45.csv" >/dev/null ||
		fail "$name: import into it failed"
	check_migrated "$name (import)" "$old" "$T/$name.imp.db" >/dev/null
	"$CLIENT" --db "$T/$name.imp.db" export --partial --window fixture-b 2>/dev/null >"$T/export.new" ||
		fail "$name: export of the migrated window failed"
	cmp -s "$T/export.old" "$T/export.new" ||
		fail "$name: the window exports otherwise once migrated: $(diff "$T/export.old" "$T/export.new" | head -n 5)"
	[ "$(q "$T/$name.imp.db" 'SELECT count(*) FROM samples WHERE device IN (4, 5)')" -eq "$rows45" ] ||
		fail "$name: the import's rows are not there"
	: >"$DLOG"
done
[ "$n" -ge 4 ] || fail "only $n fixtures in $DATA"

# ---- a migration that fails leaves the file as it was ----
# windows.end_note is version 10's: the file gets every earlier
# migration, then that one fails on the column it already has.
old=$T/failing.db
gzip -dc "$DATA/schema5-main.db.gz" >"$old"
sqlite3 "$old" 'ALTER TABLE windows ADD COLUMN end_note TEXT' >/dev/null
snapshot() {
	q "$1" 'PRAGMA user_version'
	sqlite3 "file:$1?mode=ro" .dump
}
snapshot "$old" >"$T/before.dump"
config_on "$old"
rc=0
"$DAEMON" -c "$T/spyremond.yaml" >>"$DLOG" 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "the daemon exited $rc on a failing migration, not 3"
log_has "cannot migrate the schema to version 10" || fail "no message naming the migration"
log_has "left as it was, at schema version 5" || fail "no message that the file is unchanged"
snapshot "$old" >"$T/after.dump"
diff "$T/before.dump" "$T/after.dump" >&2 || fail "a failed migration changed the file"
[ "$(head -n 1 "$T/after.dump")" -eq 5 ] || fail "not at version 5 after the failure"
# the same file without that column migrates
sqlite3 "$old" 'ALTER TABLE windows DROP COLUMN end_note' >/dev/null
cp "$old" "$T/failing.old.db"
: >"$DLOG"
start_daemon
wait_for 30 rows_at_least $(($(q "$T/failing.old.db" 'SELECT count(*) FROM samples') + 10)) ||
	fail "the daemon stored no rows after the column was dropped"
stop_daemon
check_migrated "failed, then fixed" "$T/failing.old.db" "$old" >/dev/null
echo "PASS: t_migrate_old"
