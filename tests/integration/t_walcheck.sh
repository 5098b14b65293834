#!/usr/bin/env bash
# A damaged write-ahead log never costs data silently.  The daemon writes a
# few windows on the simulator and is killed (SIGKILL), so the log holds
# every change; then (a) the log's header, (b) a frame in its middle is
# overwritten with garbage at its computed offset, and the daemon started
# again.  Each time: the originals are kept aside byte for byte (cmp with
# the files as damaged), the log says what was found and where the copies
# are, status and spyremon metrics count it, the rows up to the damage are
# still in the database, a new window completes with its rows, and the
# copies, with the damaged bytes put back, hold every row and window.
# Last, with on_damaged_database: refuse the daemon exits 6 and touches
# nothing.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is not installed"; exit 77; }
TOOL=$ROOT/tests/integration/walcheck_tool.py
SPY="$CLIENT -c $T/spyremond.yaml"
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

FLUSH=200ms write_config 2 100ms
# no scheduled checkpoint during the test: the log keeps every change
echo "checkpoint_interval: 1h" >>"$T/spyremond.yaml"

# record NAME: a fresh database with three windows, killed with its log full
record() {
	rm -f "$DB" "$DB-wal" "$DB-shm" "$DB".damaged-*
	start_daemon
	wait_for 20 test -S "$T/control.sock" || fail "$1: no control socket"
	wait_for 20 rows_at_least 10 || fail "$1: no rows"
	for i in 1 2 3; do
		$SPY mark begin --tag "$1-$i" >/dev/null || fail "$1: mark begin"
		sleep 0.3
		$SPY mark end --tag "$1-$i" --wait 10s >/dev/null ||
			fail "$1: window $i did not complete"
	done
	sigkill_daemon "$1"
	rm -rf "$T/before" "$T/orig" "$T/restored"
	mkdir "$T/before" "$T/orig" "$T/restored"
	cp "$DB" "$DB-wal" "$DB-shm" "$T/before/"
}

# check NAME WHAT [N]: damage the log, start, check all of the above
check() {
	local name=$1 what=$2 n=${3:-0} frames truth kept kept_rows got \
		newest bad st id
	frames=$(python3 "$TOOL" frames "$DB-wal")
	[ "$frames" -ge 20 ] || fail "$name: only $frames frames in the log"
	truth=$(python3 "$TOOL" count "$T/before/spyremon.db")
	[ "$(field windows <<<"$truth")" -ge 3 ] ||
		fail "$name: the log does not hold the windows: $truth"
	python3 "$TOOL" damage "$DB-wal" "$what" "$n"
	cp "$DB" "$DB-wal" "$DB-shm" "$T/orig/"
	# what SQLite's recovery keeps: the log cut before the damage
	if [ "$what" = frame ]; then
		kept=$(python3 "$TOOL" count "$T/orig/spyremon.db" --upto "$n")
	else
		kept=$(python3 "$TOOL" count "$T/orig/spyremon.db" --upto 1)
	fi
	kept_rows=$(field rows <<<"$kept")
	newest=$(field newest_ns <<<"$kept")
	[ "$what" = header ] || [ "$kept_rows" -gt 0 ] ||
		fail "$name: no rows before the damage to check"
	[ "$kept_rows" -lt "$(field rows <<<"$truth")" ] ||
		fail "$name: the damage costs nothing: $kept vs $truth"

	: >"$DLOG"
	start_daemon
	wait_for 20 test -S "$T/control.sock" || fail "$name: no control socket"
	wait_for 20 log_has "DAMAGED" || fail "$name: nothing logged"
	log_has "DAMAGED: write-ahead log $4" ||
		fail "$name: the log line does not say what: $(grep DAMAGED "$DLOG")"
	# the originals, byte for byte, beside the database
	bad=$(ls "$DB".damaged-* | grep -v -- '-wal$' | grep -v -- '-shm$')
	[ "$(wc -l <<<"$bad")" -eq 1 ] || fail "$name: copies: $bad"
	cmp "$bad" "$T/orig/spyremon.db" || fail "$name: main file not kept"
	cmp "$bad-wal" "$T/orig/spyremon.db-wal" || fail "$name: log not kept"
	cmp "$bad-shm" "$T/orig/spyremon.db-shm" || fail "$name: -shm not kept"
	log_has "kept as $bad" || fail "$name: the log line does not say where"
	# status and metrics count it
	st=$($SPY status --json) || fail "$name: status failed"
	python3 -c '
import json, sys
d = json.loads(sys.argv[3])["database"]
assert d["damaged_kept_aside"] == 1, d
assert d["damaged_kept_as"] == sys.argv[1], d
assert sys.argv[2] in d["damaged_found"], d
' "$bad" "$4" "$st" || fail "$name: status: $st"
	$SPY status | grep -q "DAMAGED AT START" || fail "$name: status text"
	wait_for 20 sh -c "$SPY metrics | grep -q '^spyremon_damaged_databases_total 1$'" ||
		fail "$name: metrics: $($SPY metrics | grep damaged)"
	# the rows up to the damage are still there
	got=$(q "SELECT count(*) FROM samples WHERE ts_ns <= ${newest:-0}")
	[ "$got" -eq "$kept_rows" ] ||
		fail "$name: $got rows up to the damage, $kept_rows recovered"
	# a new window completes with its rows
	id=$($SPY mark begin --tag "$name-after") || fail "$name: mark begin"
	sleep 0.3
	$SPY mark end --id "$id" --wait 10s >/dev/null ||
		fail "$name: the new window did not complete"
	got=$(q "SELECT count(*) FROM samples s JOIN windows w ON w.id = $id
	    WHERE s.ts_ns BETWEEN w.begin_ns AND w.end_ns")
	[ "$got" -gt 0 ] || fail "$name: the new window has no rows"
	stop_daemon
	# nothing dropped: the copies, the damaged bytes put back, hold it all
	cp "$bad" "$T/restored/spyremon.db"
	cp "$bad-wal" "$T/restored/spyremon.db-wal"
	python3 "$TOOL" restore "$T/restored/spyremon.db-wal" \
		"$T/before/spyremon.db-wal" "$what" "$n"
	got=$(python3 "$TOOL" count "$T/restored/spyremon.db")
	[ "$got" = "$truth" ] || fail "$name: the copies hold $got, not $truth"
	echo "$name: $frames frames; kept $kept_rows of $(field rows <<<"$truth") rows in the database; the copies hold all"
}

record header
check header header 0 "header damaged"

# a frame in the middle of the rows: the first half of the log is the
# schema and the catalog, so look from there for one with rows before it
record frame
frames=$(python3 "$TOOL" frames "$DB-wal")
n=$((frames / 2))
while [ "$(python3 "$TOOL" count "$DB" --upto "$n" | field rows)" -eq 0 ]; do
	n=$((n + 3))
	[ "$n" -lt $((frames - 10)) ] || fail "frame: no rows in the log's middle"
done
check frame frame "$n" "frame $n of"

# refuse: exit 6, nothing touched, no copy
record refuse
python3 "$TOOL" damage "$DB-wal" frame "$n"
cp "$DB" "$DB-wal" "$DB-shm" "$T/orig/"
echo "on_damaged_database: refuse" >>"$T/spyremond.yaml"
rc=0
"$DAEMON" -c "$T/spyremond.yaml" >>"$DLOG" 2>&1 || rc=$?
[ "$rc" -eq 6 ] || fail "refuse: exit status $rc, not 6"
for s in "" -wal -shm; do
	cmp "$DB$s" "$T/orig/spyremon.db$s" || fail "refuse: $DB$s touched"
done
! ls "$DB".damaged-* >/dev/null 2>&1 || fail "refuse: a copy was made"
log_has "not opened, nothing touched (on_damaged_database: refuse)" ||
	fail "refuse: not logged"
echo "refuse: exit 6, nothing touched"
exit 0
