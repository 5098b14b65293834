#!/usr/bin/env bash
# Damaged pages of the samples table never cost data silently.  A window
# is open while the daemon stores its rows; four leaf pages that hold them
# are overwritten with garbage at their computed offsets (page size from
# PRAGMA page_size, the table's leaves from dbstat).
#
# Stopped: the daemon is stopped, the pages damaged, the daemon started.
# status counts the damage; mark end --wait of the open window returns with
# the partial-data status (6) and says how many rows could not be read;
# summary, export, windows and report say the same with status 6 and never
# "no samples are stored"; an export to a file writes what could be read;
# a window opened after the damage completes with its rows.
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

# ---- the daemon stopped ----
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"
wait_for 20 rows_at_least 10 || fail "no rows"
id=$($SPY mark begin --tag stopped) || fail "mark begin"
begin=$(q "SELECT begin_ns FROM windows WHERE id = $id")
# enough rows that the window spans many leaf pages
wait_for 60 sh -c "[ \$(sqlite3 -readonly 'file:$DB?mode=ro' \
	'SELECT count(*) FROM samples WHERE ts_ns > $begin') -ge 600 ]" ||
	fail "too few rows in the window"
stop_daemon
end=$(q "SELECT max(ts_ns) FROM samples")
stored=$(q "SELECT count(*) FROM samples WHERE ts_ns > $begin")
pages=$(python3 "$TOOL" pages "$DB" "$begin" "$end" 4) || fail "pages: $pages"
python3 "$TOOL" damage "$DB" $pages >/dev/null
cp "$DB" "$T/damaged.db"
q "SELECT count(*) FROM samples WHERE ts_ns > $begin" >/dev/null 2>&1 &&
	fail "the damage does not show: pages $pages"
echo "stopped: window $id, $stored rows stored; pages $pages damaged"

: >"$DLOG"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket after the damage"
run $SPY mark end --id "$id" --wait 30s
expect_partial "mark end --wait"
echo "mark end --wait: $(tail -n 1 "$T/err")"
st=$($SPY status --json) || fail "status failed"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])["database"]
assert d["errors"] >= 1 and d["errors_damage"] >= 1, d
assert "malformed" in d["last_error"], d
' "$st" || fail "status does not count the damage: $st"
$SPY status | grep -q "database error" || fail "status text: $($SPY status)"

for cmd in "summary --window $id" "windows --tag stopped" \
	"report --window $id --output $T/report" "export --window $id"; do
	run $SPY $cmd
	expect_partial "$cmd"
	echo "$cmd: $(grep -- "$MARK" "$T/err" | head -n 1)"
done
# export: stdout holds the rows before and after the damage, no more
got=$(grep -c '^[0-9]' "$T/out" || true)
python3 -c 'import sqlite3, sys' || true
[ "$got" -gt 0 ] && [ "$got" -lt "$stored" ] ||
	fail "export wrote $got rows of the $stored stored"
run $SPY export --window "$id" --output "$T/export.csv"
expect_partial "export --output"
[ "$(grep -c '^[0-9]' "$T/export.csv")" -eq "$got" ] ||
	fail "export --output wrote another file than stdout"
echo "export: $got of the $stored rows stored could be read"

# a window opened after the damage completes with its rows
id2=$($SPY mark begin --tag after) || fail "mark begin after"
sleep 1
run $SPY mark end --id "$id2" --wait 30s
[ "$RC" -eq 0 ] || fail "the window after the damage: status $RC: $(cat "$T/err")"
got=$(q "SELECT count(*) FROM samples s JOIN windows w ON w.id = $id2
    WHERE s.ts_ns BETWEEN w.begin_ns AND w.end_ns")
[ "$got" -gt 0 ] || fail "the window after the damage has no rows"
stop_daemon
echo "stopped: window after the damage: $got rows"
