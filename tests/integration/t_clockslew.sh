#!/bin/bash
# A slewed host clock (adjtime(3), an NTP daemon's correction: up to
# 500 ppm) is not a step: only the stamps change.
#
# The daemon and its simulator run under tests/clockshift.so in its slew
# mode (a rate after the offset, see tests/tools/clockshift.c): +500 ppm
# for the first window, then -500 ppm for the second.  Each window is
# begun, held for 40 rows and ended with --wait.  Checks:
#  - clock_steps is empty, status counts no step and no stamp refused,
#    the log says nothing of a step, and no window has a step's note;
#  - every row the simulator wrote (its stamp log) is stored, once: the
#    rows stored equal the rows written, but those written as the daemon
#    stopped;
#  - each window's duration (windows --json) is the time it ran by the
#    monotonic clock within a sampling interval (50 ms) and 500 ppm.
source "$(dirname "$0")/lib.sh"

need python3 sqlite3
source "$(dirname "$0")/clockshift.sh"
echo "0 500" >"$SHIFT"
FLUSH=100ms write_config 2 50ms

start_shifted_daemon
# the shim's offset now: the file's offset, and its rate since its mtime
slew_ns() {
	python3 - "$SHIFT" <<'PY'
import os, sys, time
ns, ppm = map(int, open(sys.argv[1]).read().split())
print(ns + (time.time_ns() - os.stat(sys.argv[1]).st_mtime_ns) * ppm // 10**6)
PY
}

wait_for 30 test -S "$T/control.sock" || fail "no control socket"
wait_for 30 rows_at_least 20 || fail "no rows"
ctl mark begin -t w1 >/dev/null || fail "mark begin w1"
more_rows 40 "w1's begin"
ctl mark end -t w1 --wait 30s >/dev/null || fail "mark end w1"
S1=$(slew_ns)
# the other way, from the offset reached
echo "$S1 -500" >"$SHIFT.new"
mv "$SHIFT.new" "$SHIFT"
ctl mark begin -t w2 >/dev/null || fail "mark begin w2"
more_rows 40 "w2's begin"
ctl mark end -t w2 --wait 30s >/dev/null || fail "mark end w2"
S2=$(slew_ns)
ctl status --json >"$T/status.json" || fail "status --json"
more_rows 10 "w2's end"
stop_daemon
"$CLIENT" --db "$DB" windows --json >"$T/windows.json" || fail "windows --json"
echo "slewed by $S1 ns, then back to $S2 ns"

ok=1
miss() { echo "FAIL: $*" >&2; ok=0; }
! grep -q "stepped" "$DLOG" || miss "the daemon saw a step: $(grep stepped "$DLOG")"
python3 - "$DB" "$STAMPS" "$T/status.json" "$T/windows.json" "$S1" "$S2" <<'PY' ||
import collections, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ok = True
def bad(msg):
    global ok
    ok = False
    print("FAIL:", msg)

# the slew went on, one way then back (500 ppm: 0.5 ms a second)
s1, s2 = int(sys.argv[5]), int(sys.argv[6])
if not s1 > 10**5 or not s2 < s1:
    bad("the shim slewed by %d ns, then to %d ns" % (s1, s2))
steps = db.execute("SELECT count(*) FROM clock_steps").fetchone()[0]
if steps:
    bad("clock_steps holds %d steps" % steps)
status = json.load(open(sys.argv[3]))
if status.get("clock", {}).get("steps") != 0:
    bad("status counts %r steps" % status.get("clock", {}).get("steps"))
refused = sum((h.get("direct") or {}).get("clock_dropped", 0)
              for h in status.get("health", []))
if refused:
    bad("status counts %d samples refused for their stamp" % refused)
epochs = db.execute("SELECT DISTINCT epoch FROM samples").fetchall()
if epochs != [(0,)]:
    bad("the samples are of epochs %r, not 0 only" % epochs)

# rows stored = rows written: each stamp-log line, by its values, stored
# once, but those written as the daemon stopped (after the last stored)
def sig(dev, vals):
    return (dev, tuple(sorted(round(float(v), 3) for v in vals)))
vals = collections.defaultdict(list)
for ts, dev, v in db.execute("SELECT ts_ns, device, value FROM sample_values"):
    vals[(ts, dev)].append(v)
stored = collections.Counter(sig(dev, vs) for (ts, dev), vs in vals.items())
written = []
for line in open(sys.argv[2]):
    ns, dev, text = line.rstrip("\n").split(" ", 2)
    cells = [c.strip() for c in text.split(",")]
    written.append(sig(int(dev), [c for c in cells[3:] if c != "-"]))
last = max(i for i, s in enumerate(written) if s in stored)
want = collections.Counter(written[:last + 1])
nrows = db.execute("SELECT count(*) FROM samples").fetchone()[0]
print("%d rows written (before the stop), %d stored" % (last + 1, nrows))
lost = sum((want - stored).values())
twice = sum(1 for s, n in stored.items() if n > 1)
if lost:
    bad("%d rows written are not stored" % lost)
if twice:
    bad("%d rows are stored more than once" % twice)
if nrows != last + 1:
    bad("%d rows stored, %d written" % (nrows, last + 1))

for w in json.load(open(sys.argv[4])):
    run, note = db.execute("SELECT run_ns, end_note FROM windows WHERE tag = ?",
                           (w["tag"],)).fetchone()
    tol = 50 * 10**6 + run * 500 // 10**6
    print("%s: duration %.6f s, ran %.6f s" % (w["tag"], w["duration_ns"] / 1e9,
                                             run / 1e9))
    if abs(w["duration_ns"] - run) > tol:
        bad("%s lasted %d ns by windows, it ran %d ns" % (w["tag"],
            w["duration_ns"], run))
    if note and "stepped" in note:
        bad("%s has a step's note: %s" % (w["tag"], note))
sys.exit(0 if ok else 1)
PY
	miss "the slew misled the daemon"
[ $ok = 1 ] || fail "a slewed host clock was read as more than new stamps"
echo "PASS: t_clockslew"
