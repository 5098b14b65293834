#!/bin/bash
# windows.max_open across a step of the host clock: a window is closed
# after it has been open that long, not when the clock jumps past its
# begin plus max_open.  The daemon runs under tests/clockshift.so (see
# t_clockstep), with max_open at 60 s; a window is begun, the clock steps
# forward 1 h, and the config is reloaded, which checks every window
# against max_open at once.  The window must stay open (it has been open
# a few seconds), end by mark end, and not be flagged auto_closed.
source "$(dirname "$0")/lib.sh"

need python3
source "$(dirname "$0")/clockshift.sh"
FLUSH=100ms write_config 1 100ms
printf 'windows:\n  max_open: 60s\n' >>"$T/spyremond.yaml"

start_shifted_daemon
reloads_above() { [ "$(grep -c '^spyremond: reloaded$' "$DLOG")" -gt "$1" ]; }
w1_open() {
	ctl windows --tag w1 --json | python3 -c '
import json, sys
w = [w for w in json.load(sys.stdin) if w["tag"] == "w1"]
sys.exit(0 if len(w) == 1 and w[0]["end_ns"] is None else 1)'
}

wait_for 30 test -S "$T/control.sock" || fail "no control socket"
wait_for 30 rows_at_least 5 || fail "no rows"
ctl mark begin -t w1 >/dev/null || fail "mark begin w1"
echo "$((3600 * 1000000000))" >"$SHIFT.new"
mv "$SHIFT.new" "$SHIFT"
wait_for 30 steps_at_least 1 || fail "the daemon did not see the step"
kill -HUP "$DPID"
wait_for 30 reloads_above 0 || fail "no reload"
w1_open || fail "w1 was closed by the step: $(ctl windows --tag w1 2>&1; grep 'w1\|window 1' "$DLOG")"
ctl mark end -t w1 >"$T/end.txt" || fail "mark end w1: $(cat "$T/end.txt")"
grep -q "stepped forward by 3600" "$T/end.txt" ||
	fail "mark end does not say the step crossed w1: $(cat "$T/end.txt")"
ctl windows --tag w1 --json | python3 -c '
import json, sys
w = json.load(sys.stdin)[0]
sys.exit(0 if not w["auto_closed"] else 1)' || fail "w1 is flagged auto_closed"
stop_daemon
echo "PASS: t_clockstep_maxopen"
