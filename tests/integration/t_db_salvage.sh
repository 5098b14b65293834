#!/usr/bin/env bash
# spyremon db check and db salvage on a database the daemon wrote from the
# simulator, with three windows.  check runs beside the daemon and says
# ok (exit 0); salvage of the intact file keeps every row of every table.
# Then two leaf pages of samples, away from each other, are overwritten
# with garbage by plain file writes at their offsets (found through
# dbstat): check names the table and the pages (exit 14, and in --json);
# salvage (exit 14) saves every row but the ones on those pages (dbstat's
# cell counts), each exactly as it was, keeps the windows and their
# summaries, and its output opens with spyremon windows and export.  OUT
# that exists is refused, and nothing is left behind.  Last, the interior
# page above every leaf of samples is overwritten instead: SQL reads no
# sample, and the walk of the file's own leaf pages saves every row but
# the ones on that page.  And each file of a past layout (tests/data/olddb)
# is salvaged whole into this schema.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need sqlite3 python3
SPY="$CLIENT -c $T/spyremond.yaml"
q() { sqlite3 -readonly "file:$1?mode=ro" "$2"; }

# expect_rc RC COMMAND...: run COMMAND, which must exit RC; output in
# $T/out and $T/err
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] ||
		{ cat "$T/out" "$T/err" >&2; fail "$* exited $rc, not $want"; }
}

# every table but samples and metrics, as text, row by row
TABLES="windows window_summary window_summary_bw device_map cards host
counters smi_versions daemon imports"
dump_tables() {
	local t
	for t in $TABLES; do
		echo "== $t"
		q "$1" "SELECT * FROM $t ORDER BY 1, 2"
	done
	echo "== metrics"
	q "$1" "SELECT id, key, unit, grp, reliable, decimals, col FROM metrics ORDER BY id"
}
dump_samples() {
	q "$1" "SELECT * FROM samples ORDER BY ts_ns, device"
}

FLUSH=200ms write_config 4 50ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"
wait_for 20 rows_at_least 40 || fail "no rows"
for i in 1 2 3; do
	$SPY mark begin --tag "win$i" --meta "run=$i" >/dev/null ||
		fail "mark begin win$i"
	sleep 1
	$SPY mark end --tag "win$i" --wait 10s >/dev/null ||
		fail "window win$i did not complete"
done
# check beside the running daemon: read-only, the log in use
expect_rc 0 $SPY db check
grep -q ": ok (" "$T/out" || fail "check beside the daemon: $(cat "$T/out")"
wait_for 60 rows_at_least 1200 || fail "only $(rows_in_db) rows"
stop_daemon
[ ! -e "$DB-wal" ] || fail "the daemon left its log"

total=$(rows_in_db)
leaves=$(q "$DB" "SELECT count(*) FROM dbstat WHERE name = 'samples' AND pagetype = 'leaf'")
[ "$leaves" -ge 8 ] || fail "samples has only $leaves leaf pages"
echo "database: $total samples on $leaves leaf pages, 3 windows"

# ---- intact ----
expect_rc 0 $SPY db check --db "$DB"
grep -q "no problem found" "$T/out" || fail "check intact: $(cat "$T/out")"
grep -q "write-ahead log: none" "$T/out" || fail "check: log: $(cat "$T/out")"
expect_rc 0 $SPY db check --db "$DB" --json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["intact"] is True and d["problems"] == [] and d["damaged"] == [], d
assert d["wal"]["state"] == "none", d
assert d["pages_unreached"] == 0, d
' "$T/out" || fail "check --json intact: $(cat "$T/out")"
expect_rc 0 "$CLIENT" db salvage "$DB" "$T/whole.db"
[ "$(dump_samples "$T/whole.db" | md5sum)" = "$(dump_samples "$DB" | md5sum)" ] ||
	fail "salvage of the intact file changed samples"
diff <(dump_tables "$DB") <(dump_tables "$T/whole.db") >&2 ||
	fail "salvage of the intact file changed a table"
grep -q "samples *$total  0$" "$T/out" || fail "salvage report: $(cat "$T/out")"
[ ! -e "$T/whole.db.tmp" ] || fail "salvage left whole.db.tmp"
echo "intact: check 0, salvage kept all $total samples and every table"

# ---- damage: two leaf pages of samples, garbage at their offsets ----
cp "$DB" "$T/orig.db"
dump_samples "$DB" | sort >"$T/rows.before"
dump_tables "$DB" >"$T/tables.before"
ps=$(q "$DB" "PRAGMA page_size")
# the leaves in key order (dbstat's path under the one interior page):
# the one holding the middle of win2, and one two thirds in
[ "$(q "$DB" "SELECT count(*) FROM dbstat WHERE name = 'samples' AND
    pagetype = 'internal'")" -eq 1 ] || fail "samples is not two levels deep"
q "$DB" "SELECT pageno, ncell FROM dbstat WHERE name = 'samples' AND
    pagetype = 'leaf' ORDER BY path" >"$T/leaves"
rank=$(q "$DB" "SELECT count(*) FROM samples, windows WHERE tag = 'win2'
    AND ts_ns < (begin_ns + end_ns) / 2")
# in key order a leaf's rows, then the row on the interior page after it
a=$(awk -F'|' -v r="$rank" '!found && r < start + $2 { found = NR }
    { start += $2 + 1 } END { print found ? found : NR }' "$T/leaves")
b=$((2 * leaves / 3 + 1))
[ $((b - a)) -ge 2 ] || b=$((a + 2))
[ "$b" -lt "$leaves" ] || fail "no leaf to damage after leaf $a of $leaves"
pages="$(sed -n "${a}p" "$T/leaves" | cut -d'|' -f1) $(sed -n "${b}p" "$T/leaves" | cut -d'|' -f1)"
cells=$(( $(sed -n "${a}p" "$T/leaves" | cut -d'|' -f2) + $(sed -n "${b}p" "$T/leaves" | cut -d'|' -f2) ))
for p in $pages; do
	head -c "$ps" /dev/zero | tr '\0' '\377' |
		dd of="$DB" bs="$ps" seek=$((p - 1)) conv=notrunc status=none
done
echo "damaged samples pages $pages ($cells rows on them)"

cp "$DB" "$T/damaged.copy"
expect_rc 14 $SPY db check --db "$DB"
cmp -s "$DB" "$T/damaged.copy" || fail "check changed the database"
grep -q ": DAMAGED (" "$T/out" || fail "check: $(cat "$T/out")"
grep -q "damaged table samples: 2 of " "$T/out" || fail "check: $(cat "$T/out")"
cat "$T/out"
expect_rc 14 $SPY db check --db "$DB" --json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["intact"] is False and len(d["problems"]) >= 2, d
s = [o for o in d["damaged"] if o["name"] == "samples"]
assert len(s) == 1 and s[0]["damaged_pages"] == 2, d
assert s[0]["rows_on_damaged_pages"] > 0, d
' "$T/out" || fail "check --json damaged: $(cat "$T/out")"

expect_rc 14 "$CLIENT" db salvage "$DB" "$T/saved.db"
cat "$T/out"
[ -f "$T/saved.db" ] && [ ! -e "$T/saved.db.tmp" ] ||
	fail "salvage: $(ls "$T")"
saved=$(rows_in_db_of() { q "$1" 'SELECT count(*) FROM samples'; }; rows_in_db_of "$T/saved.db")
[ "$saved" -eq $((total - cells)) ] ||
	fail "salvage saved $saved samples, not $total - $cells"
# every row saved is a row of before, as it was
dump_samples "$T/saved.db" | sort >"$T/rows.after"
extra=$(comm -13 "$T/rows.before" "$T/rows.after" | wc -l)
[ "$extra" -eq 0 ] || fail "$extra saved rows differ from the original"
grep -q "samples *$saved  about [0-9]*, in 2 unreadable ranges; 2 damaged pages$" "$T/out" ||
	fail "salvage report: $(cat "$T/out")"
# the windows reported with samples lost: those whose span holds a row lost
comm -23 "$T/rows.before" "$T/rows.after" | cut -d'|' -f1 >"$T/lost.ts"
want=$(q "$T/saved.db" "SELECT id, begin_ns, coalesce(end_ns, 0) FROM windows" |
    python3 -c '
import sys
lost = [int(l) for l in open(sys.argv[1]) if l.strip()]
for line in sys.stdin:
    i, b, e = (int(x) for x in line.split("|"))
    if any(b <= t and (e == 0 or t <= e) for t in lost):
        print(i)
' "$T/lost.ts" | tr '\n' ' ')
got=$(sed -n '/^  windows whose samples are partly lost/,$p' "$T/out" | grep '^    [0-9]' |
    awk '{ print $1 }' | tr '\n' ' ')
[ -n "$want" ] || fail "the damage hit no window"
[ "$got" = "$want" ] || fail "windows with samples lost: reported '$got', truly '$want'"
# the windows, their metadata and summaries, and every other table
diff "$T/tables.before" <(dump_tables "$T/saved.db") >&2 ||
	fail "salvage changed a table other than samples"
echo "salvage: saved $saved of $total samples, lost exactly the $cells on the damaged pages; every other table whole"

# the salvaged database reads as any other
expect_rc 0 $SPY db check --db "$T/saved.db"
expect_rc 0 $SPY windows --db "$T/saved.db"
for i in 1 2 3; do
	grep -q "win$i" "$T/out" || fail "windows: no win$i: $(cat "$T/out")"
done
rc=0
$SPY export --db "$T/saved.db" --window win1 >"$T/export.csv" 2>"$T/err" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 6 ] || fail "export exited $rc: $(cat "$T/err")"
[ "$(wc -l <"$T/export.csv")" -gt 1 ] || fail "export of win1 is empty"

# ---- damage: the interior page above every leaf of samples ----
# SQL reaches no row of samples then; the walk of the file's own leaf
# pages finds every row but those on the interior page itself
cp "$T/orig.db" "$T/root.db"
root=$(q "$T/root.db" "SELECT rootpage FROM sqlite_master WHERE name = 'samples'")
rootcells=$(q "$T/root.db" "SELECT ncell FROM dbstat WHERE name = 'samples' AND path = '/'")
head -c "$ps" /dev/zero | tr '\0' '\377' |
	dd of="$T/root.db" bs="$ps" seek=$((root - 1)) conv=notrunc status=none
expect_rc 14 $SPY db check --db "$T/root.db"
grep -q "damaged table samples: 1 of 1 pages" "$T/out" || fail "check root: $(cat "$T/out")"
grep -q "^  $leaves pages that no table reaches any more" "$T/out" ||
	fail "check root: not the $leaves leaves unreached: $(cat "$T/out")"
expect_rc 14 "$CLIENT" db salvage --json "$T/root.db" "$T/root-saved.db"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [t for t in d["tables"] if t["name"] == "samples"][0]
assert s["saved"] == int(sys.argv[2]) - int(sys.argv[3]), s
assert s["saved_from_unreached_pages"] == s["saved"], s
assert s["lost_at_an_end"] is True, s
assert [w["id"] for w in d["windows_with_samples_lost"]] == [1, 2, 3], d
' "$T/out" "$total" "$rootcells" || fail "salvage --json, root damaged: $(cat "$T/out")"
dump_samples "$T/root-saved.db" | sort >"$T/rows.root"
[ "$(wc -l <"$T/rows.root")" -eq $((total - rootcells)) ] ||
	fail "root: saved $(wc -l <"$T/rows.root"), not $total - $rootcells"
extra=$(comm -13 "$T/rows.before" "$T/rows.root" | wc -l)
[ "$extra" -eq 0 ] || fail "root: $extra saved rows differ from the original"
diff "$T/tables.before" <(dump_tables "$T/root-saved.db") >&2 ||
	fail "salvage with the root damaged changed a table other than samples"
expect_rc 0 $SPY db check --db "$T/root-saved.db"
echo "root page damaged: SQL read no sample; the page walk saved $((total - rootcells)) of $total, lost the $rootcells on the interior page"

# a sound file with a log whose header is garbage: damaged too (14)
cp "$T/orig.db" "$T/wal.db"
head -c 8192 /dev/urandom >"$T/wal.db-wal"
cp "$T/wal.db-wal" "$T/wal.copy"
expect_rc 14 $SPY db check --db "$T/wal.db" --json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["intact"] is False and d["problems"] == [], d
assert d["wal"]["state"] == "bad_header", d
' "$T/out" || fail "check, log damaged: $(cat "$T/out")"
cmp -s "$T/wal.db-wal" "$T/wal.copy" || fail "check changed the log"
cmp -s "$T/wal.db" "$T/orig.db" || fail "check changed the database"

# ---- files of past layouts (tests/data/olddb): every row, as migrated ----
for gz in "$ROOT"/tests/data/olddb/*.db.gz; do
	name=$(basename "$gz" .db.gz)
	gunzip -c "$gz" >"$T/$name.db"
	expect_rc 0 "$CLIENT" db salvage "$T/$name.db" "$T/$name.out.db"
	for t in samples windows window_summary window_summary_bw device_map; do
		a=$(q "$T/$name.db" "SELECT count(*) FROM $t" 2>/dev/null || echo 0)
		b=$(q "$T/$name.out.db" "SELECT count(*) FROM $t")
		[ "$a" -eq "$b" ] || fail "$name: $t: $b rows salvaged of $a"
	done
	# a summary from before power_n was kept gets 0, as its migration
	if ! q "$T/$name.db" "SELECT power_n FROM window_summary" >/dev/null 2>&1 &&
	    [ "$(q "$T/$name.db" "SELECT count(*) FROM sqlite_master WHERE name = 'window_summary'")" -eq 1 ]; then
		[ "$(q "$T/$name.out.db" "SELECT count(*) FROM window_summary WHERE power_n != 0")" -eq 0 ] ||
			fail "$name: power_n of a summary without its spread"
	fi
	expect_rc 0 $SPY db check --db "$T/$name.out.db"
done
echo "past layouts: $(ls "$ROOT"/tests/data/olddb/*.db.gz | wc -l) files salvaged whole into this schema"

# OUT that exists is refused and left alone; a temporary file too
cp "$T/saved.db" "$T/copy.db"
expect_rc 1 "$CLIENT" db salvage "$DB" "$T/saved.db"
grep -q "exists" "$T/err" || fail "refusal: $(cat "$T/err")"
cmp -s "$T/saved.db" "$T/copy.db" || fail "an existing OUT was changed"
: >"$T/next.db.tmp"
expect_rc 1 "$CLIENT" db salvage "$DB" "$T/next.db"
[ ! -e "$T/next.db" ] || fail "salvage wrote next.db beside a stale next.db.tmp"
# a file that is no database cannot be read: 4
head -c 8192 /dev/urandom >"$T/junk.db"
expect_rc 4 $SPY db check --db "$T/junk.db"
expect_rc 4 "$CLIENT" db salvage "$T/junk.db" "$T/junk-out.db"
[ ! -e "$T/junk-out.db" ] && [ ! -e "$T/junk-out.db.tmp" ] ||
	fail "salvage of junk left a file"
echo "PASS: t_db_salvage"
