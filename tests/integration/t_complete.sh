#!/usr/bin/env bash
# Right after the run: a window read at once after "mark end" is complete,
# every time, the way a script reads it (no wait, no polling of status).
#
# 50 runs (25 with flush_interval 1s and aiu-smi's rows stored as printed,
# 25 with flush_interval 2s and coarse 1 s rows outside windows): mark
# begin, a 0.3 to 0.7 s run, mark end, then at once export --window,
# summary --json, report, and export --trace --steps of a trace inside the
# window.  Each must exit 0, and after a clean stop the same commands on
# the finished database must give the same samples, energy and steps:
# nothing was read before it was stored.  In the first phase the stored
# rows are also checked against the simulator's stamp log.
#
# Then a writer held off by another process's BEGIN EXCLUSIVE right after
# mark end: --wait 1s exits 7 and names the missing span; --wait 20s waits
# and reads everything.  mark end --wait returns a complete window.  A
# window whose daemon was killed before it was complete reads as
# incomplete (7), also from a copy of the database, with no daemon.
source "$(dirname "$0")/lib.sh"

need python3
SPY="$CLIENT -c $T/spyremond.yaml"
RUNS=${COMPLETE_RUNS:-25}

# trace FILE BEGIN_NS END_NS: a Kineto trace of two steps inside the span
trace() {
	python3 - "$@" <<'EOF'
import json, sys
path, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
base = lo + 20_000_000
span_us = (hi - 20_000_000 - base) / 1000
ev = [{"ph": "X", "name": "ProfilerStep#%d" % k, "cat": "user_annotation",
       "ts": k * span_us / 2, "dur": span_us / 2, "pid": 1, "tid": 1}
      for k in range(2)]
json.dump({"schemaVersion": 1, "baseTimeNanoseconds": base,
           "traceEvents": ev}, open(path, "w"))
EOF
}

# reads DIR I: the readers of window run-I, right after it ended
reads() {
	local d=$1 i=$2
	$SPY export --window "run-$i" --output "$d/e$i.csv" 2>"$d/e$i.err" ||
		fail "run $i: export exited $?: $(cat "$d/e$i.err")"
	$SPY summary --window "run-$i" --json >"$d/s$i.json" 2>"$d/s$i.err" ||
		fail "run $i: summary exited $?: $(cat "$d/s$i.err")"
	$SPY report --window "run-$i" --output "$d/r$i" >/dev/null 2>"$d/r$i.err" ||
		fail "run $i: report exited $?: $(cat "$d/r$i.err")"
	$SPY export --trace "$T/trace$i.json" --steps --output "$d/st$i.csv" \
		2>"$d/st$i.err" || fail "run $i: export --steps exited $?: $(cat "$d/st$i.err")"
}

# phase FLUSH INTERVAL FIRST: RUNS runs from number FIRST on
phase() {
	local flush=$1 interval=$2 first=$3 i begin end
	FLUSH=$flush write_config 2 "$interval"
	sed -i 's/^  window_interval: .*/  window_interval: 100ms/' "$T/spyremond.yaml"
	rm -f "$DB" "$DB-wal" "$DB-shm" "$STAMPS"
	start_daemon
	wait_for 20 test -S "$T/control.sock" || fail "no control socket"
	wait_for 20 rows_at_least 4 || fail "no rows stored"
	for ((i = first; i < first + RUNS; i++)); do
		$SPY mark begin --tag "run-$i" >/dev/null || fail "mark begin"
		begin=$(date +%s%N)
		sleep "0.$((3 + i % 5))"
		end=$(date +%s%N)
		trace "$T/trace$i.json" "$begin" "$end"
		$SPY mark end >/dev/null || fail "mark end"
		reads "$T/now" "$i"
	done
	stop_daemon
}

mkdir -p "$T/now" "$T/later"
phase 1s 100ms 0
python3 "$ROOT/tests/integration/compare.py" "$DB" "$STAMPS" --min-rows 50 ||
	fail "the stored rows differ from the simulator's"
cp "$DB" "$T/phase1.db"
phase 2s 1s "$RUNS"

# the finished databases, read again: the same answers
for ((i = 0; i < 2 * RUNS; i++)); do
	db=$T/phase1.db
	[ "$i" -ge "$RUNS" ] && db=$DB
	SPY="$CLIENT --db $db -c $T/spyremond.yaml" reads "$T/later" "$i"
done
python3 - "$T" $((2 * RUNS)) <<'EOF' || fail "a read right after mark end missed samples"
import csv, json, sys
t, n = sys.argv[1], int(sys.argv[2])
rows = 0
for i in range(n):
    now = open("%s/now/e%d.csv" % (t, i)).read()
    later = open("%s/later/e%d.csv" % (t, i)).read()
    assert now == later, "run %d: export: %d rows at once, %d later" % (
        i, now.count("\n"), later.count("\n"))
    rows += now.count("\n") - 1
    a = json.load(open("%s/now/s%d.json" % (t, i)))
    b = json.load(open("%s/later/s%d.json" % (t, i)))
    ca, cb = a["cards"], b["cards"]
    assert len(ca) == 2, "run %d: %d cards" % (i, len(ca))
    for x, y in zip(ca, cb):
        assert x["energy_j"] is not None and x["energy_j"] > 0, (i, x)
        assert x["energy_j"] == y["energy_j"] and x["samples"] == y["samples"], (
            "run %d card %s: %s J from %d samples at once, %s J from %d later"
            % (i, x["card"], x["energy_j"], x["samples"], y["energy_j"],
               y["samples"]))
    for f in ("st%d.csv", "r%d/aiusmi.csv"):
        assert open(("%s/now/" + f) % (t, i)).read() == \
            open(("%s/later/" + f) % (t, i)).read(), "run %d: %s" % (i, f % i)
print("%d runs, %d rows: every read at once was complete" % (n, rows))
EOF

# ---- a writer held off right after mark end ----
FLUSH=1s write_config 2 100ms
rm -f "$DB" "$DB-wal" "$DB-shm"
start_daemon
wait_for 20 rows_at_least 4 || fail "no rows stored"
$SPY mark begin --tag held >/dev/null || fail "mark begin"
sleep 0.5
python3 - "$DB" "$T/locked" <<'EOF' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
db.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(10)
db.execute("COMMIT")
EOF
LOCKER=$!
wait_for 10 test -e "$T/locked" || fail "no lock"
$SPY mark end >/dev/null || fail "mark end while the database is locked"
rc=0
$SPY --wait 1s export --window held --output "$T/held.csv" 2>"$T/held.err" || rc=$?
[ "$rc" -eq 7 ] || fail "export with --wait 1s under the lock exited $rc, not 7: $(cat "$T/held.err")"
grep -q "window 1 'held' is incomplete: not all stored yet: " "$T/held.err" ||
	fail "no reason given: $(cat "$T/held.err")"
grep -Eq "card [01]: no samples after|no samples of the window are stored" "$T/held.err" ||
	fail "the missing span is not named: $(cat "$T/held.err")"
[ -f "$T/held.csv" ] || fail "export --wait 1s wrote nothing"
$SPY --wait 20s export --window held --output "$T/held2.csv" 2>"$T/held2.err" ||
	fail "export with --wait 20s exited $?: $(cat "$T/held2.err")"
wait "$LOCKER"
n=$(($(wc -l <"$T/held2.csv") - 1))
[ "$n" -ge 8 ] || fail "export after the lock: only $n rows"

# mark end --wait: complete when it returns
$SPY mark begin --tag waited >/dev/null || fail "mark begin"
sleep 0.3
$SPY mark end --wait 10s >/dev/null || fail "mark end --wait exited $?"
c=$(sqlite3 "file:$DB?mode=ro" "SELECT complete_ns IS NOT NULL FROM windows WHERE tag = 'waited'")
[ "$c" = 1 ] || fail "mark end --wait returned before the window was complete"

# ---- a daemon killed before its window was complete ----
# aiu-smi stopped (SIGSTOP) just before the end: the end is stored at
# once, but the row that covers it never comes
$SPY mark begin --tag killed >/dev/null || fail "mark begin"
sleep 0.3
sim=$(pgrep -P "$DPID" | head -n 1)
kill -STOP "$sim"
$SPY mark end >/dev/null || fail "mark end"
end_stored() {
	[ "$(sqlite3 "file:$DB?mode=ro" "SELECT end_ns IS NOT NULL FROM windows WHERE tag = 'killed'")" = 1 ]
}
wait_for 20 end_stored || fail "the end of 'killed' not stored within 20s"
sigkill_daemon killed
state=$(sqlite3 "file:$DB?mode=ro" "SELECT end_ns IS NOT NULL, complete_ns IS NULL FROM windows WHERE tag = 'killed'")
[ "$state" = "1|1" ] || fail "not an ended, unfinished window: $state"
cp "$DB" "$T/copy.db"
cp "$DB-wal" "$T/copy.db-wal"
rc=0
$CLIENT --db "$T/copy.db" --socket "$T/none.sock" summary --window killed \
	>/dev/null 2>"$T/k.err" || rc=$?
[ "$rc" -eq 7 ] || fail "a copy with an unfinished window: summary exited $rc, not 7: $(cat "$T/k.err")"
grep -q "is incomplete: cannot connect to $T/none.sock" "$T/k.err" ||
	fail "no daemon: no reason given: $(cat "$T/k.err")"
# the next daemon on it records that the window never will be complete
start_daemon
wait_for 20 log_has "never complete" || fail "the restarted daemon did not mark it"
rc=0
$SPY export --window killed --output "$T/k.csv" 2>"$T/k2.err" || rc=$?
[ "$rc" -eq 7 ] || fail "export of the unfinished window exited $rc, not 7"
grep -q "spyremond stopped before it had stored all of the window's samples" \
	"$T/k2.err" || fail "no reason: $(cat "$T/k2.err")"
stop_daemon
echo "ok"
