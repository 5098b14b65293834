#!/bin/bash
# Trace-based outputs across a step of the host clock: a torch.profiler
# trace's stamps follow the clock as it was at its start, so export
# places each stored sample at its stamp less the steps recorded after
# the trace's epoch up to the sample's.  The daemon and simulator run
# under tests/clockshift.so (see t_clockstep); a trace's clock starts
# with the host clock and runs on by this test's monotonic readings.
# Three times, the clock stepped back 1 h, forward 1 h, then back 2 s
# (the trace starting more than 2 s before it), while window w1 was
# open, window w2 opening after the step, the trace spanning the whole
# run.  Checks (trace_epochs_check.py, from the outputs and the samples
# table):
#  - export --trace --merge exits 0; each card's pwr track holds each
#    stored sample overlapping the trace once, at its place in the
#    trace's time, the tracks' times increasing; so does --merge with
#    --window w1, over w1's span brought into the trace's time;
#  - export --trace --steps exits 0 (with and without --window w1, which
#    a crossed window used to refuse with exit 7): each step's energy per
#    card is the integral of the shifted samples' power over it, and
#    every step, before the clock's step and after it, has samples;
#  - export --trace (csv and jsonl) exits 0 and writes each stored sample
#    overlapping the trace in its time once, in increasing trace time,
#    its stored stamp in epoch_ns (ts_ns) and its place in trace_ns;
#  - --merge lists only the cards with samples in the span of each
#    epoch: a card whose only row at an epoch's stamps is of another
#    epoch (added to a copy of the database) gets no process;
#  - report --window w2 --trace shades each of the trace's steps in w2's
#    time once per panel: w2 began in the epoch after the trace's;
#  - a trace that starts in the 2 s the step back showed twice is refused,
#    exit 1, naming both epochs.
source "$(dirname "$0")/lib.sh"

need python3
source "$(dirname "$0")/clockshift.sh"
CHECK="python3 $ROOT/tests/integration/trace_epochs_check.py"

# the host clock (unshifted: the trace's clock at its start) and the
# monotonic clock, in ns
clocks() {
	python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_REALTIME), time.clock_gettime_ns(time.CLOCK_MONOTONIC))'
}

# run_case NAME SHIFT_NS [PRE_S]: PRE_S seconds more between the trace's
# start and the step
run_case() {
	local name=$1 shift_ns=$2 pre=${3:-0} r0 m0 r m1 rc
	DB=$T/$name.db
	STAMPS=$T/$name.stamps
	echo 0 >"$SHIFT"
	FLUSH=100ms write_config 2 50ms
	start_shifted_daemon
	wait_for 30 test -S "$T/control.sock" || fail "$name: no control socket"
	wait_for 30 rows_at_least 20 || fail "$name: no rows"
	read -r r0 m0 < <(clocks)
	sleep 0.3
	ctl mark begin -t w1 >/dev/null || fail "$name: mark begin w1"
	more_rows 40 "the begin"
	sleep "$pre"
	echo "$shift_ns" >"$SHIFT.new"
	mv "$SHIFT.new" "$SHIFT"
	wait_for 30 steps_at_least 1 || fail "$name: the daemon did not see the step"
	more_rows 40 "the step"
	ctl mark begin -t w2 >/dev/null || fail "$name: mark begin w2"
	more_rows 10 "w2's begin"
	ctl mark end -t w1 --wait 30s >"$T/end.txt" ||
		fail "$name: mark end w1: $(cat "$T/end.txt")"
	more_rows 40 "w1's end"
	ctl mark end -t w2 --wait 30s >"$T/end.txt" ||
		fail "$name: mark end w2: $(cat "$T/end.txt")"
	sleep 0.3
	read -r r m1 < <(clocks)
	more_rows 20 "the end"
	stop_daemon
	rm -f "$T/control.sock"

	# the trace: 250 ms steps from 1 ms after r0 on (a ts of 0 is no
	# time), by the monotonic clock
	python3 - "$r0" "$m0" "$m1" >"$T/$name.trace.json" <<'PY'
import json, sys
r0, m0, m1 = (int(x) for x in sys.argv[1:4])
span_us = (m1 - m0) // 1000
ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
      {"ph": "X", "name": "train", "cat": "user_annotation", "ts": 1000,
       "dur": span_us - 1000, "pid": 1, "tid": 1}]
k, t = 0, 1000
while t + 250000 <= span_us:
    ev.append({"ph": "X", "name": "ProfilerStep#%d" % k,
               "cat": "user_annotation", "ts": t, "dur": 250000,
               "pid": 1, "tid": 2})
    k, t = k + 1, t + 250000
json.dump({"schemaVersion": 1, "baseTimeNanoseconds": r0,
           "traceEvents": ev}, sys.stdout)
PY
	local tr=$T/$name.trace.json
	for args in "" "--window w1"; do
		rc=0
		# shellcheck disable=SC2086
		"$CLIENT" --db "$DB" export $args --trace "$tr" \
			--merge "$T/$name.merged.json" >"$T/out" 2>"$T/err" || rc=$?
		[ $rc = 0 ] || fail "$name: export $args --merge exits $rc: $(cat "$T/err")"
		span=()
		if [ -n "$args" ]; then
			# w1's begin and end in the trace's time: its end less the step
			read -r -a span < <(python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
b, e, be, ee = db.execute("SELECT begin_ns, end_ns, begin_epoch, end_epoch "
                          "FROM windows WHERE tag = 'w1'").fetchone()
cum = {0: 0}
c = 0
for i, s in db.execute("SELECT id, size_ns FROM clock_steps ORDER BY id"):
    c += s
    cum[i] = c
print(b - cum[be], e - cum[ee])
PY
)
		fi
		$CHECK "$DB" "$tr" merge "$T/$name.merged.json" "${span[@]}" ||
			fail "$name: export $args --merge"
		rc=0
		# shellcheck disable=SC2086
		"$CLIENT" --db "$DB" export $args --trace "$tr" --steps --csv \
			>"$T/$name.steps.csv" 2>"$T/err" || rc=$?
		[ $rc = 0 ] || fail "$name: export $args --steps exits $rc: $(cat "$T/err")"
		grep -q "crossed by a step" "$T/err" &&
			fail "$name: export $args --steps says it read part of w1: $(cat "$T/err")"
		$CHECK "$DB" "$tr" steps "$T/$name.steps.csv" ||
			fail "$name: export $args --steps"
	done
	for fmt in csv jsonl; do
		rc=0
		"$CLIENT" --db "$DB" export --trace "$tr" --format $fmt \
			>"$T/$name.samples.$fmt" 2>"$T/err" || rc=$?
		[ $rc = 0 ] || fail "$name: export --trace --format $fmt exits $rc: $(cat "$T/err")"
		$CHECK "$DB" "$tr" samples "$T/$name.samples.$fmt" ||
			fail "$name: export --trace --format $fmt"
	done
	rm -rf "$T/$name.report"
	"$CLIENT" --db "$DB" report --window w2 --trace "$tr" \
		--output "$T/$name.report" >"$T/out" 2>"$T/err" ||
		fail "$name: report --window w2 --trace exits $?: $(cat "$T/err")"
	$CHECK "$DB" "$tr" plot "$T/$name.report/power.svg" w2 2 ||
		fail "$name: report's steps over w2"
}

# another_epoch NAME: a copy of NAME's database with a row of card 7 of
# epoch 0 at the stamp that epoch 1 shows at the middle of the trace
# (the trace starting in epoch 0); with a step of an hour it is out of
# the trace's span in its time, so --merge must give card 7 no process
another_epoch() {
	local name=$1
	cp "$T/$name.db" "$T/$name.card7.db"
	python3 - "$T/$name.card7.db" "$T/$name.trace.json" <<'PY' ||
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tr = json.load(open(sys.argv[2]))
ev = [e for e in tr["traceEvents"] if e.get("ph") == "X"]
mid = tr["baseTimeNanoseconds"] + int(sum(
    (min(e["ts"] for e in ev), max(e["ts"] + e["dur"] for e in ev))) * 500)
size = db.execute("SELECT size_ns FROM clock_steps WHERE id = 1").fetchone()[0]
cols = [r[1] for r in db.execute("PRAGMA table_info(samples)")]
sel = ", ".join({"ts_ns": str(mid + size), "device": "7", "epoch": "0"}.get(c, c)
                for c in cols)
db.execute("INSERT INTO samples (%s) SELECT %s FROM samples WHERE device = 0 "
           "AND epoch = 0 LIMIT 1" % (", ".join(cols), sel))
db.commit()
PY
		fail "$name: the row of card 7"
	"$CLIENT" --db "$T/$name.card7.db" export --trace "$T/$name.trace.json" \
		--merge "$T/$name.card7.json" >"$T/out" 2>"$T/err" ||
		fail "$name: export --merge with card 7 exits $?: $(cat "$T/err")"
	$CHECK "$T/$name.card7.db" "$T/$name.trace.json" merge \
		"$T/$name.card7.json" || fail "$name: --merge with card 7's row"
}

# refused NAME: a trace that starts 1 s after the step back of 2 s, a time
# the clock showed in epoch 0 and again in epoch 1, cannot be placed
refused() {
	local name=$1 at rc=0
	at=$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(
    "SELECT at_ns FROM clock_steps WHERE id = 1").fetchone()[0])' "$T/$name.db")
	cat >"$T/$name.amb.json" <<TRACE
{"schemaVersion": 1, "baseTimeNanoseconds": $((at + 1000000000)),
 "traceEvents": [{"ph": "X", "name": "ProfilerStep#0", "cat": "user_annotation",
  "ts": 1000, "dur": 200000, "pid": 1, "tid": 1}]}
TRACE
	"$CLIENT" --db "$T/$name.db" export --trace "$T/$name.amb.json" \
		>"$T/out" 2>"$T/err" || rc=$?
	[ $rc = 1 ] || fail "$name: a trace in the doubled 2 s: exit $rc, want 1: $(cat "$T/err")"
	for word in "cannot be placed" "in epoch 0" "in epoch 1" "stepped back by" \
		"its samples cannot be lined up"; do
		grep -q "$word" "$T/err" ||
			fail "$name: the refusal does not say '$word': $(cat "$T/err")"
	done
	echo "$name: a trace in the doubled stretch refused: $(head -n 1 "$T/err")"
}

run_case back "$((-3600 * 1000000000))"
another_epoch back
run_case forward "$((3600 * 1000000000))"
another_epoch forward
run_case back2s "$((-2 * 1000000000))" 3
refused back2s
echo "PASS: t_clockstep_trace"
