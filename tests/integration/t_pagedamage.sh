#!/usr/bin/env bash
# Damaged pages of the samples table never cost data silently.  A window
# is open while the daemon stores its rows; four leaf pages that hold them
# are overwritten with garbage at their computed offsets (page size from
# PRAGMA page_size, the table's leaves from dbstat), (1) with the daemon
# stopped, then started again, (2) under the running daemon.  Each time:
# the daemon finds the damage within a few check intervals
# (checkpoint_interval, 1 s here), keeps the file aside byte for byte and
# goes on in a fresh database; status and metrics count it; mark end
# --wait of the open window returns with the partial-data status (6) and
# says which rows could not be read; summary, export, windows and report
# say the same with status 6 and never "no samples are stored", from the
# fresh database and from the copy, and so does compare; an export to a
# file writes what stdout gets; a window opened after the damage completes
# with its rows.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need python3 sqlite3
TOOL=$ROOT/tests/integration/pagedamage.py
SPY="$CLIENT -c $T/spyremond.yaml"
MARK="could not be read (damaged store: "
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }

FLUSH=200ms write_config 2 100ms
echo "checkpoint_interval: 1s" >>"$T/spyremond.yaml"

# run CMD...: its status into RC, its stderr into $T/err, stdout into $T/out
run() {
	RC=0
	"$@" >"$T/out" 2>"$T/err" || RC=$?
}

# expect_partial WHAT: RC is 6 and stderr names the damage, not "no samples"
expect_partial() {
	[ "$RC" -eq 6 ] || fail "$1: exit status $RC, not 6: $(cat "$T/err")"
	grep -q -- "$MARK" "$T/err" || fail "$1: no damage message: $(cat "$T/err")"
	! grep -q "no samples" "$T/err" || fail "$1: says no samples: $(cat "$T/err")"
}

damaged_running() {
	$SPY status --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)["database"]
sys.exit(0 if d.get("damaged_while_running") else 1)'
}

# record NAME: a fresh database, a window open over 600 rows; ID, BEGIN
record() {
	rm -f "$DB" "$DB-wal" "$DB-shm" "$DB".damaged-*
	: >"$DLOG"
	start_daemon
	wait_for 20 test -S "$T/control.sock" || fail "$1: no control socket"
	wait_for 20 rows_at_least 10 || fail "$1: no rows"
	ID=$($SPY mark begin --tag "$1") || fail "$1: mark begin"
	BEGIN=$(window_begin_ns "$ID") || fail "$1: window $ID not stored"
	wait_for 90 sh -c "[ \$(sqlite3 -readonly 'file:$DB?mode=ro' \
		'SELECT count(*) FROM samples WHERE ts_ns > $BEGIN') -ge 600 ]" ||
		fail "$1: too few rows in the window"
}

# damage NAME: four leaf pages of the window's rows; PAGES, OFFS, STORED
damage() {
	local end
	end=$(q "SELECT max(ts_ns) FROM samples")
	STORED=$(q "SELECT count(*) FROM samples WHERE ts_ns > $BEGIN")
	PAGES=$(python3 "$TOOL" pages "$DB" "$BEGIN" "$end" 4) ||
		fail "$1: pages: $PAGES"
	OFFS=$(python3 "$TOOL" damage "$DB" $PAGES)
	cp "$DB" "$T/$1.damaged"
	echo "$1: window $ID, $STORED rows stored; pages $PAGES damaged"
}

# check NAME: everything the header says, once the damage is found
check() {
	local name=$1 kept got id2 off len st
	run $SPY mark end --id "$ID" --wait 60s
	expect_partial "$name: mark end --wait"
	echo "$name: mark end --wait: $(tail -n 1 "$T/err")"
	wait_for 20 damaged_running || fail "$name: status does not say DAMAGED"
	st=$($SPY status --json) || fail "$name: status failed"
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])["database"]
assert d["errors"] >= 1 and d["errors_damage"] >= 1, d
assert d["damaged_kept_aside"] == 1 and d["damaged_while_running"], d
assert "malformed" in d["damaged_found"], d
' "$st" || fail "$name: status: $st"
	$SPY status | grep -q "DAMAGED WHILE RUNNING" ||
		fail "$name: status text: $($SPY status)"
	wait_for 20 sh -c "$SPY metrics | grep -q '^spyremon_damaged_databases_total 1$'" ||
		fail "$name: metrics: $($SPY metrics | grep damaged)"
	# the original, kept byte for byte: the damaged pages as written
	kept=$(ls "$DB".damaged-* | grep -v -- '-wal$' | grep -v -- '-shm$')
	[ "$(wc -l <<<"$kept")" -eq 1 ] || fail "$name: copies: $kept"
	while read -r off len; do
		cmp -s -i "$off:$off" -n "$len" "$kept" "$T/$name.damaged" ||
			fail "$name: the page at $off is not kept as damaged"
	done <<<"$OFFS"
	log_has "kept as $kept" || fail "$name: the log does not say where"
	# the readers: of the fresh database, then of the copy
	for db in "" "--db $kept"; do
		for cmd in "summary --window $ID" "windows --tag $name" \
			"report --window $ID --output $T/report-$name${db:+-copy}" \
			"export --window $ID"; do
			# shellcheck disable=SC2086
			run $SPY $db $cmd
			expect_partial "$name: $db $cmd"
			echo "$name: ${db:+(the copy) }$cmd: $(grep -- "$MARK" "$T/err" | head -n 1)"
		done
		# export: a file gets what stdout got
		cp "$T/out" "$T/stdout.csv"
		# shellcheck disable=SC2086
		run $SPY $db export --window "$ID" --output "$T/export.csv"
		expect_partial "$name: $db export --output"
		cmp -s "$T/export.csv" "$T/stdout.csv" ||
			fail "$name: export --output wrote another file than stdout"
	done
	got=$(grep -c '^[0-9]' "$T/stdout.csv" || true)
	[ "$got" -gt 0 ] && [ "$got" -lt "$STORED" ] ||
		fail "$name: the copy's export has $got rows of the $STORED stored"
	# a window opened after the damage completes with its rows
	id2=$($SPY mark begin --tag "$name-after") || fail "$name: mark begin after"
	sleep 1
	run $SPY mark end --id "$id2" --wait 30s
	[ "$RC" -eq 0 ] || fail "$name: the window after: status $RC: $(cat "$T/err")"
	got=$(q "SELECT count(*) FROM samples s JOIN windows w ON w.id = $id2
	    WHERE s.ts_ns BETWEEN w.begin_ns AND w.end_ns")
	[ "$got" -gt 0 ] || fail "$name: the window after the damage has no rows"
	echo "$name: the window after the damage: $got rows"
	run $SPY compare "$ID" "$id2"
	expect_partial "$name: compare"
	stop_daemon
}

# (1) the daemon stopped
record stopped
stop_daemon
damage stopped
q "SELECT count(*) FROM samples WHERE ts_ns > $BEGIN" >/dev/null 2>&1 &&
	fail "stopped: the damage does not show: pages $PAGES"
: >"$DLOG"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "stopped: no control socket"
check stopped

# (2) under the running daemon: the pages checkpointed, none in the log
record running
sleep 3
damage running
t0=$(date +%s%N)
wait_for 60 damaged_running || fail "running: the damage is never noticed"
t1=$(date +%s%N)
echo "running: found $(( (t1 - t0) / 1000000 )) ms after the damage (checks every 1 s)"
check running
