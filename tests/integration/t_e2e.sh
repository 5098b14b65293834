#!/usr/bin/env bash
# The whole loop on the simulator, through the control socket, by two
# users: root and nobody (in group spyremon) open overlapping windows; the
# daemon records each caller's uid and pid; each window's export is exactly
# the rows that overlap it; the window interval is in force while a window
# is open and the coarse one otherwise; a user outside the group cannot
# connect and is told why; status and windows show it all; the Python
# context manager works for the unprivileged user too.
#
# Needs root (to run as nobody) and setpriv; creates group spyremon if it
# is missing, and removes it again.
source "$(dirname "$0")/lib.sh"

CHECK="python3 $ROOT/tests/integration/export_check.py"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null ||
    ! command -v groupadd >/dev/null; then
	echo "SKIP: needs root, setpriv and groupadd to run a client as nobody"
	exit 77
fi
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }

MADE_GROUP=
e2e_cleanup() {
	local rc=$?
	[ -n "$MADE_GROUP" ] && groupdel spyremon 2>/dev/null
	(exit $rc)
	cleanup
}
trap e2e_cleanup EXIT
if ! getent group spyremon >/dev/null; then
	groupadd --system spyremon || fail "cannot create group spyremon"
	MADE_GROUP=1
fi
GID=$(getent group spyremon | cut -d: -f3)
NOGROUP=$(id -g nobody)

# as_nobody [--outsider] COMMAND...: run as nobody, in group spyremon
# unless --outsider
as_nobody() {
	local groups="--groups $GID"
	if [ "$1" = --outsider ]; then
		groups=--clear-groups
		shift
	fi
	# shellcheck disable=SC2086
	setpriv --reuid nobody --regid "$NOGROUP" $groups "$@"
}

# "${RECORD[@]}" PIDFILE COMMAND...: exec COMMAND with its pid in PIDFILE
# shellcheck disable=SC2016
RECORD=(sh -c 'echo $$ >"$0"; exec "$@"')

sql() {
	sqlite3 "file:$DB?mode=ro" "$@"
}

FLUSH=200ms write_config 2 100ms
# coarse 500 ms outside windows, every 100 ms row inside, 1 s kept before
sed -i 's/^  interval: .*/  interval: 500ms/; s/^  window_interval: .*/  window_interval: 100ms/' \
	"$T/spyremond.yaml"
echo "  pre_window: 1s" >>"$T/spyremond.yaml"
chmod 0755 "$T"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
[ "$(stat -c %G:%a "$T/control.sock")" = spyremon:660 ] ||
	fail "socket is $(stat -c %G:%a "$T/control.sock"), not spyremon:660"
SPY="$CLIENT -c $T/spyremond.yaml"
sleep 3

# ---- an outsider cannot connect ----
rc=0
as_nobody --outsider $SPY mark begin --tag nope >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 3 ] || fail "an outsider's mark begin exited $rc, not 3"
grep -q "Permission denied: are you in group spyremon?" "$T/err" ||
	fail "outsider not told why: $(cat "$T/err")"

# ---- two overlapping windows from two users ----
mkdir -m 0777 "$T/pids"
"${RECORD[@]}" "$T/pids/a" $SPY mark begin --tag e2e-a --meta commit=abc123 >"$T/id.a" ||
	fail "root's mark begin failed"
sleep 1
as_nobody "${RECORD[@]}" "$T/pids/b" $SPY mark begin --tag e2e-b --meta user=nobody \
	>"$T/id.b" 2>"$T/err" || fail "nobody's mark begin failed: $(cat "$T/err")"
A=$(cat "$T/id.a")
B=$(cat "$T/id.b")
[[ "$A" =~ ^[0-9]+$ && "$B" =~ ^[0-9]+$ && "$A" != "$B" ]] ||
	fail "mark begin printed '$A' and '$B', not two ids"

# while both are open: status and the Python helper
$SPY status >"$T/status" || fail "status failed"
grep -q "^daemon: .*pid $DPID" "$T/status" || fail "status: no daemon pid: $(head -n 1 "$T/status")"
grep -q "^cards: .*rows stored every 100ms now (a window is open)$" "$T/status" ||
	fail "status: the window interval is not in force: $(grep cards "$T/status")"
grep -q "^windows:  2 open: e2e-a (id $A), e2e-b (id $B)$" "$T/status" ||
	fail "status: the open windows are not shown: $(grep windows "$T/status")"
grep -q "^0 *0000:13:00.0 " "$T/status" || fail "status: card not shown"
$SPY status -v >"$T/status-v" || fail "status -v failed"
grep -q "^sampling: *every 100ms now" "$T/status-v" ||
	fail "status -v: the window interval is not in force: $(grep sampling "$T/status-v")"
grep -q "^  $A e2e-a by root .*commit=abc123" "$T/status-v" || fail "status -v: window $A not shown"
grep -q "^  $B e2e-b by nobody " "$T/status-v" || fail "status -v: window $B not shown"
grep -q "^  0000:13:00.0 pf, NUMA node 0, link 16.0 GT/s PCIe x16" "$T/status-v" ||
	fail "status -v: card not shown"
$SPY status --json >"$T/status.json" || fail "status --json failed"
python3 - "$T/status.json" "$A" "$B" "$DPID" <<'EOF' || fail "status --json is wrong"
import json, sys
s = json.load(open(sys.argv[1]))
a, b, dpid = (int(x) for x in sys.argv[2:])
assert "ok" not in s
assert s["daemon"]["pid"] == dpid
assert s["sampling"]["interval_ns"] == 100000000, s["sampling"]
assert sorted(w["id"] for w in s["windows"]) == [a, b], s["windows"]
assert {w["uid"] for w in s["windows"]} == {0, 65534}
assert [c["bus_id"] for c in s["cards"]] == ["0000:13:00.0", "0000:14:00.0"]
assert set(s["unreliable"]) == {"rsvmem", "pt_act"}
EOF
as_nobody env SPYREMON_SOCKET="$T/control.sock" PYTHONPATH="$ROOT/contrib/python" \
	"$PY" -c '
import spyremon, time
with spyremon.window("e2e-py", step="1") as w:
    time.sleep(0.3)
print(w)' >"$T/id.py" 2>"$T/err" || fail "the Python helper failed as nobody: $(cat "$T/err")"

sleep 1
rc=0
as_nobody $SPY mark end --id "$A" >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "nobody ended root's window (exit $rc)"
$SPY mark end --id "$A" >"$T/end.a" || fail "root's mark end failed"
grep -Eq "^ended window $A \(e2e-a\): [0-9-]{10}T[0-9:.]{12}Z \.\. [0-9:.T-]+Z, [0-9.]+s$" "$T/end.a" ||
	fail "mark end printed: $(cat "$T/end.a")"
sleep 0.5
as_nobody $SPY mark end >"$T/end.b" 2>"$T/err" || fail "nobody's mark end failed: $(cat "$T/err")"
grep -q "^ended window $B (e2e-b)" "$T/end.b" || fail "nobody ended another window: $(cat "$T/end.b")"
rc=0
as_nobody $SPY mark end >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "ending with nothing open exited $rc, not 1"
grep -q "^spyremon: " "$T/err" || fail "no message for ending nothing"
stop_daemon

# ---- what the database recorded ----
read -r tag uid pid ba ea <<<"$(sql -separator ' ' "SELECT tag, uid, pid, begin_ns, end_ns FROM windows WHERE id = $A")"
[ "$tag $uid $pid" = "e2e-a 0 $(cat "$T/pids/a")" ] ||
	fail "window $A recorded as '$tag $uid $pid', not 'e2e-a 0 $(cat "$T/pids/a")'"
read -r tag uid pid bb eb <<<"$(sql -separator ' ' "SELECT tag, uid, pid, begin_ns, end_ns FROM windows WHERE id = $B")"
[ "$tag $uid $pid" = "e2e-b 65534 $(cat "$T/pids/b")" ] ||
	fail "window $B recorded as '$tag $uid $pid', not 'e2e-b 65534 $(cat "$T/pids/b")'"
[ "$bb" -gt "$ba" ] && [ "$bb" -lt "$ea" ] && [ "$eb" -gt "$ea" ] || fail "the windows do not overlap"
PYW=$(cat "$T/id.py")
[ "$(sql "SELECT uid FROM windows WHERE id = $PYW AND end_ns IS NOT NULL")" = 65534 ] ||
	fail "the Python window $PYW is not nobody's or not ended"

# ---- each window's export, by each user ----
$SPY export --window "$A" --output "$T/a.csv" || fail "export of $A failed"
$CHECK "$DB" csv "$T/a.csv" --span "$ba" "$ea" --min-rows 20
as_nobody $SPY export --window e2e-b --format jsonl >"$T/b.jsonl" 2>"$T/err" ||
	fail "nobody's export failed: $(cat "$T/err")"
$CHECK "$DB" jsonl "$T/b.jsonl" --span "$bb" "$eb" --window-ids "$B" --min-rows 10

# ---- the window interval was in force while a window was open ----
# every row inside the windows is a 100 ms row; well outside, 500 ms rows
# (each device's first and last row may be partial: start and stop)
fine=$(sql "SELECT count(*), sum(interval_ms = 100) FROM samples WHERE ts_ns > $ba AND ts_ns <= $eb")
[ "${fine%|*}" -ge 20 ] && [ "${fine%|*}" = "${fine#*|}" ] ||
	fail "rows inside the windows (count|at 100ms): $fine"
coarse=$(sql "SELECT count(*), sum(interval_ms >= 400) FROM samples s
	WHERE (ts_ns < $ba - 2000000000 OR ts_ns > $eb + 1000000000)
	AND ts_ns > (SELECT min(ts_ns) FROM samples WHERE device = s.device)
	AND ts_ns < (SELECT max(ts_ns) FROM samples WHERE device = s.device)")
[ "${coarse%|*}" -ge 4 ] && [ "${coarse%|*}" = "${coarse#*|}" ] ||
	fail "rows outside the windows (count|at about 500ms): $coarse; all rows:
$(sql "SELECT ts_ns - $ba, device, interval_ms FROM samples ORDER BY ts_ns")"

# ---- windows lists both users ----
$SPY windows >"$T/windows" || fail "windows failed"
grep -q "^$A  *e2e-a  *root .* commit=abc123$" "$T/windows" || fail "windows: $A: $(cat "$T/windows")"
grep -q "^$B  *e2e-b  *nobody .* user=nobody$" "$T/windows" || fail "windows: $B: $(cat "$T/windows")"
exit 0
