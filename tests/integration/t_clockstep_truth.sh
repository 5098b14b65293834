#!/bin/bash
# A window a step of the host clock crossed lasts, and holds the energy
# of, the time it was open by the monotonic clock: back 1 h, forward 1 h
# and back 2 s.
#
# The daemon and its simulator run under tests/clockshift.so (t_clockstep
# says how), aiu-smi's rows only, 50 ms apart; the simulator draws a
# constant power per card (--power-schedule: 150 W and 90 W over all
# time, whatever the clock says).  Windows w1, w2 and w3 are each begun,
# crossed by one step (back 1 h, forward 1 h, back 2 s) and ended with
# --wait.  The truth of each is the time it ran by the daemon's monotonic
# clock (windows.run_ns, itself within the test's own monotonic reading
# around its begin and end) and that time times each card's power.
# Checks, per window, within one sampling interval:
#  - windows --json's duration_ns equals its run time;
#  - summary --window --json's energy_j of each card equals its power
#    times that run time.
source "$(dirname "$0")/lib.sh"

need python3
source "$(dirname "$0")/clockshift.sh"
IV_MS=50
# card start_ns end_ns watts: all of time, whatever the clock reads
printf '0 0 4000000000000000000 150\n1 0 4000000000000000000 90\n' \
	>"$T/schedule"
FLUSH=100ms write_config 2 ${IV_MS}ms --workload idle \
	--power-schedule "$T/schedule"

start_shifted_daemon
mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }
MONO=$T/mono.txt
# window TAG OFFSET_S N: w begun, the clock set to OFFSET_S (the N-th
# step), w ended once rows follow the step
window() {
	echo "$1 begin $(mono_ns)" >>"$MONO"
	ctl mark begin -t "$1" >/dev/null || fail "mark begin $1"
	more_rows 20 "$1's begin"
	[ -n "$2" ] || more_rows 20 "$1's middle"
	[ -n "$2" ] || { end_window "$1"; return; }
	echo "$(($2 * 1000000000))" >"$SHIFT.new"
	mv "$SHIFT.new" "$SHIFT"
	wait_for 30 steps_at_least "$3" || fail "the daemon did not see step $3"
	more_rows 20 "step $3"
	end_window "$1"
}
end_window() {
	ctl mark end -t "$1" --wait 30s >"$T/end-$1.txt" ||
		fail "mark end $1: $(cat "$T/end-$1.txt")"
	echo "$1 end $(mono_ns)" >>"$MONO"
	more_rows 10 "$1's end"
}

wait_for 30 test -S "$T/control.sock" || fail "no control socket"
wait_for 30 rows_at_least 20 || fail "no rows"
window w0 ""
window w1 -3600 1
window w2 0 2
window w3 -2 3
stop_daemon

for w in w0 w1 w2 w3; do
	rc=0
	"$CLIENT" --db "$DB" summary --window $w --json >"$T/summary-$w.json" \
		2>"$T/summary-$w.txt" || rc=$?
	[ $rc = 0 ] || fail "summary of $w exits $rc: $(cat "$T/summary-$w.txt")"
done
"$CLIENT" --db "$DB" windows --json >"$T/windows.json" || fail "windows --json"

python3 - "$DB" "$MONO" "$T/windows.json" "$T" "$IV_MS" <<'PY' || fail "a window a step crossed is misread"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
iv_ns = int(sys.argv[5]) * 10**6
watts = {0: 150.0, 1: 90.0}
ok = True
def bad(msg):
    global ok
    ok = False
    print("FAIL:", msg)

mono = {}
for line in open(sys.argv[2]):
    tag, what, ns = line.split()
    mono[(tag, what)] = int(ns)
steps = [s for (s,) in db.execute("SELECT size_ns FROM clock_steps ORDER BY id")]
want = [-3600 * 10**9, 3600 * 10**9, -2 * 10**9]
if len(steps) != 3 or any(abs(a - b) > 10**8 for a, b in zip(steps, want)):
    bad("clock_steps holds %r, not steps of -3600 s, +3600 s and -2 s" % steps)
windows = dict((w["tag"], w) for w in json.load(open(sys.argv[3])))
for tag in ("w0", "w1", "w2", "w3"):
    run, be, ee = db.execute("SELECT run_ns, begin_epoch, end_epoch FROM "
                             "windows WHERE tag = ?", (tag,)).fetchone()
    outer = mono[(tag, "end")] - mono[(tag, "begin")]
    print("%s: epochs %d..%d, ran %.3f s (the test saw %.3f s around it)"
          % (tag, be, ee, run / 1e9, outer / 1e9))
    if ee != be + (tag != "w0"):
        bad("%s's epochs are %d..%d: no step crossed it" % (tag, be, ee))
    if not 0 < run <= outer:
        bad("%s ran %d ns by the daemon's monotonic clock, the test saw "
            "%d ns around it" % (tag, run, outer))
    dur = windows[tag]["duration_ns"]
    print("  windows: duration %.3f s" % (dur / 1e9))
    if abs(dur - run) > iv_ns:
        bad("windows says %s lasted %.3f s, it ran %.3f s"
            % (tag, dur / 1e9, run / 1e9))
    s = json.load(open("%s/summary-%s.json" % (sys.argv[4], tag)))
    cards = s.get("cards") or s.get("summary", {}).get("cards") or []
    if sorted(c.get("card") for c in cards) != [0, 1]:
        bad("summary of %s has cards %r" % (tag, [c.get("card") for c in cards]))
    for c in cards:
        truth = watts[c["card"]] * run / 1e9
        got = c.get("energy_j")
        print("  card %d: energy %s J, %g W x run time %.3f J"
              % (c["card"], got, watts[c["card"]], truth))
        if got is None or abs(got - truth) > watts[c["card"]] * iv_ns / 1e9:
            bad("summary says card %d drew %s J in %s, %g W x %.3f s is "
                "%.3f J" % (c["card"], got, tag, watts[c["card"]], run / 1e9,
                            truth))
sys.exit(0 if ok else 1)
PY
echo "PASS: t_clockstep_truth"
