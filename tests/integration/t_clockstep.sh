#!/bin/bash
# Steps of the host clock while the daemon runs: no sample lost, none
# misdated, every step seen, and windows a step crossed say so.
#
# The daemon and the simulator it runs (whose metric files and stamp log
# are stamped by its own realtime clock) run under tests/clockshift.so,
# which adds to CLOCK_REALTIME the offset in $T/shift, reread whenever the
# file changes; the machine's clock is never touched.  The steps: back
# 1 h with a window open, forward 1 h with none, back 2 s with a window
# open, forward 1 h with a window open, back 1 h with none.  After each
# the test waits for status to count it and for rows stamped after it.
# Checks:
#  - every metric-file update the simulator wrote (its file log) after
#    the first direct row is stored once, stamped at its own ms (or a few
#    ns later where that stamp was already stored), save updates the
#    reader counts as missed; status counts no stamp refused;
#  - every aiu-smi row of the stamp log is stored once, and all but the
#    rows written or read across a step are stamped within 2 s after it
#    was written (no hour of rows pushed after the step's stamp);
#  - status counts the five steps, and the log names each with its size;
#  - the energy counter holds the file rows' energy across the steps;
#  - each window a step crossed has an end_note naming the step, and
#    mark end prints the time it ran by the monotonic clock, not 0 s nor
#    an hour, and the note; windows and summary print the note;
#  - each metric-file row is of the clock epoch its writer stamped it in;
#  - summary and export of the windows steps back crossed exit 0 (their
#    epochs are recorded); without their epochs (as in a database before
#    schema 12) they are read within their stamps, said so, exit 7.
source "$(dirname "$0")/lib.sh"

SHIM=$BIN/tests/clockshift.so
[ -f "$SHIM" ] || fail "$SHIM: build it first (make check does)"
FLOG=$T/files.log
SHIFT=$T/shift
echo 0 >"$SHIFT"
write_config 2 50ms --write-metric-files --metric-format new \
	--file-interval 0.05 --file-log "$FLOG"
printf '  pre_window: 0s\n  direct: auto\n' >>"$T/spyremond.yaml"
FLUSH=100ms
# ASan (SAN=1 builds) must not refuse a library loaded before it
CLOCKSHIFT_FILE=$SHIFT LD_PRELOAD=$SHIM \
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	"$DAEMON" -v -c "$T/spyremond.yaml" >>"$DLOG" 2>&1 &
DPID=$!
# the client shares the host clock too (its requests carry expiry times)
ctl() {
	CLOCKSHIFT_FILE=$SHIFT LD_PRELOAD=$SHIM \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		"$CLIENT" -c "$T/spyremond.yaml" "$@"
}

direct_rows() {
	sqlite3 -readonly "file:$DB?mode=ro" \
	    "SELECT count(*) FROM samples WHERE src = 1" 2>/dev/null || echo 0
}
direct_rows_at_least() { [ "$(direct_rows)" -ge "$1" ]; }
steps_at_least() {
	ctl status --json 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin)["clock"]["steps"] >= int(sys.argv[1]) else 1)' "$1"
}
# step OFFSET_S N: set the offset, wait for the N-th step to be counted and
# for 20 more direct rows (both cards, 50 ms apart) and a sync after it
step() {
	local n
	echo "$(($1 * 1000000000))" >"$SHIFT.new"
	mv "$SHIFT.new" "$SHIFT"
	# (counted or not, the rows after the step are what the checks need)
	wait_for 30 steps_at_least "$2" || echo "status did not count step $2"
	n=$(direct_rows)
	wait_for 30 direct_rows_at_least $((n + 20)) ||
		echo "no direct rows after step $2"
}

wait_for 60 direct_rows_at_least 20 || fail "no direct rows"
ctl mark begin -t w1 >/dev/null || fail "mark begin w1"
wait_for 60 direct_rows_at_least 30 || fail "no direct rows in w1"
step -3600 1
ctl mark end -t w1 >"$T/end1.txt" || fail "mark end w1"
step 0 2
ctl mark begin -t w2 >/dev/null || fail "mark begin w2"
step -2 3
ctl mark end -t w2 >"$T/end2.txt" || fail "mark end w2"
ctl mark begin -t w3 >/dev/null || fail "mark begin w3"
step 3598 4
ctl mark end -t w3 >"$T/end3.txt" || fail "mark end w3"
step -2 5
# the simulator's clock now, a little before status counts the misses
CAPTURE_NS=$(($(date +%s%N) - 2000000000))
ctl status --json >"$T/status.json" || fail "status --json"
ctl status >"$T/status.txt" || fail "status"
ctl windows >"$T/windows.txt" 2>&1 || fail "windows"
stop_daemon

# every check is made, then the test fails if any did
ok=1
miss() { echo "FAIL: $*" >&2; ok=0; }
for s in "back by 3600.000s" "forward by 3600.000s" "back by 2.000s" \
	"forward by 3600.000s"; do
	log_has "stepped $s" || miss "the log does not say the clock was stepped $s"
done
grep -q "host clock: stepped 5 times" "$T/status.txt" ||
	miss "status does not show the steps: $(cat "$T/status.txt")"
grep -q "stepped back by 3600.000s" "$T/end1.txt" ||
	miss "mark end w1 does not say a step crossed it: $(cat "$T/end1.txt")"
grep -q "stepped back by 2.000s" "$T/end2.txt" ||
	miss "mark end w2 does not say a step crossed it: $(cat "$T/end2.txt")"
grep -q "stepped" "$T/windows.txt" ||
	miss "windows does not show the step notes: $(cat "$T/windows.txt")"
"$CLIENT" --db "$DB" summary --window w3 >"$T/summary3.txt" 2>&1 ||
	miss "summary of w3 failed: $(cat "$T/summary3.txt")"
# w1 and w2 were crossed by steps back: read whole by the clock's epochs
# (t_clockstep_window checks the rows), exit 0; a window of a database
# without epochs is read within its stamps, said so, exit 7 unless
# --partial: the same window with its epochs taken away
for w in w1 w2; do
	rc=0
	"$CLIENT" --db "$DB" summary --window $w >"$T/summary-$w.txt" 2>&1 || rc=$?
	[ $rc = 0 ] || miss "summary of $w exits $rc, not 0: $(cat "$T/summary-$w.txt")"
	rc=0
	"$CLIENT" --db "$DB" export --window $w -o "$T/$w.csv" 2>"$T/export-$w.txt" || rc=$?
	[ $rc = 0 ] || miss "export of $w exits $rc, not 0: $(cat "$T/export-$w.txt")"
done
cp "$DB" "$T/noepochs.db"
sqlite3 "$T/noepochs.db" "UPDATE windows SET begin_epoch = NULL, end_epoch = NULL" ||
	miss "cannot take the epochs away"
rc=0
"$CLIENT" --db "$T/noepochs.db" summary --window w1 >"$T/summary-old.txt" 2>&1 || rc=$?
[ $rc = 7 ] || miss "summary of w1 without epochs exits $rc, not 7: $(cat "$T/summary-old.txt")"
grep -q "the host clock was stepped back while it was open" "$T/summary-old.txt" ||
	miss "summary of w1 without epochs does not say a step back hid part of it: $(cat "$T/summary-old.txt")"
"$CLIENT" --db "$T/noepochs.db" summary --window w1 --partial >/dev/null 2>&1 ||
	miss "summary --partial of w1 without epochs does not exit 0"
rc=0
"$CLIENT" --db "$T/noepochs.db" export --window w1 -o "$T/old.csv" 2>"$T/export-old.txt" || rc=$?
[ $rc = 7 ] || miss "export of w1 without epochs exits $rc, not 7: $(cat "$T/export-old.txt")"
grep -q "stepped forward by 3600.000s" "$T/summary3.txt" ||
	miss "summary does not say a step crossed w3: $(cat "$T/summary3.txt")"
if grep -q "sample not stored\|were dropped" "$DLOG"; then
	grep "sample not stored\|were dropped" "$DLOG" | head -5
	miss "samples were refused or dropped"
fi

python3 - "$DB" "$FLOG" "$STAMPS" "$T/status.json" "$T/end3.txt" "$CAPTURE_NS" <<'PY' || miss "rows lost or misdated across the steps"
import collections, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ok = True
def bad(msg):
    global ok
    ok = False
    print("FAIL:", msg)

status = json.load(open(sys.argv[4]))
steps = status.get("clock", {}).get("steps")
if steps != 5:
    bad("status counts %s steps, not 5" % steps)
missed = refused = 0
for h in status.get("health", []):
    d = h.get("direct") or {}
    missed += d.get("missed_updates", 0)
    refused += d.get("clock_dropped", 0)
if refused:
    bad("status counts %d samples refused for their stamp" % refused)

# direct rows: (device, seq) -> stored ts; the file log's updates
stored = collections.defaultdict(list)
for ts, dev, seq in db.execute(
        "SELECT ts_ns, device, seq FROM samples WHERE src = 1"):
    stored[(dev, seq)].append(ts)
# the updates status's missed count covers: those before the last step,
# and after it, those written half a second before status was asked
# (later misses are not in its count)
capture = int(sys.argv[6])
log = [tuple(map(int, line.split()[:6])) for line in open(sys.argv[2])]
epoch = 0
for i in range(1, len(log)):
    if abs(log[i][5] - log[i - 1][5]) > 10**9:
        epoch = i
updates = [(card, seq, ms) for i, (ms, card, seq, _, _, written)
           in enumerate(log) if i < epoch or written < capture - 5 * 10**8]
first = {}
last = {}
for i, (card, seq, ms) in enumerate(updates):
    if (card, seq) in stored:
        first.setdefault(card, i)
        last[card] = i
missing = 0
for i, (card, seq, ms) in enumerate(updates):
    if card not in first or i <= first[card] or i > last[card]:
        continue
    ts = stored.get((card, seq))
    if ts is None:
        missing += 1
        continue
    if len(ts) != 1:
        bad("card %d seq %d stored %d times" % (card, seq, len(ts)))
    elif not 0 <= ts[0] - ms * 1000000 <= 1000:
        bad("card %d seq %d stamped %d, written at %d ms" % (card, seq, ts[0], ms))
if missing > missed:
    bad("%d metric-file updates not stored (the reader counts %d missed)"
        % (missing, missed))
if sum(1 for k in stored) < 100:
    bad("only %d direct rows" % len(stored))

# each direct row is of the clock's epoch its writer stamped it in: the
# steps before its write in the file log (a write a second or more off
# the one before), but at the lines next to a step
epoch_of = dict(((dev, seq), e) for dev, seq, e in db.execute(
    "SELECT device, seq, epoch FROM samples WHERE src = 1"))
jumps = [i for i in range(1, len(log)) if abs(log[i][5] - log[i - 1][5]) > 10**9]
if len(jumps) != 5:
    bad("the file log shows %d steps, not 5" % len(jumps))
wrong = 0
for i, (ms, card, seq, _, _, written) in enumerate(log):
    e = epoch_of.get((card, seq))
    if e is None or any(abs(i - j) <= 4 for j in jumps):
        continue
    if e != sum(1 for j in jumps if j <= i):
        wrong += 1
if wrong:
    bad("%d direct rows are not of the epoch of their stamp" % wrong)

# aiu-smi rows: each written row stored once, stamped just after its write
def sig(dev, vals):
    return (dev, tuple(sorted(round(float(v), 3) for v in vals)))
vals = collections.defaultdict(list)
for ts, dev, v in db.execute(
        "SELECT v.ts_ns, v.device, v.value FROM sample_values v JOIN samples s "
        "ON s.ts_ns = v.ts_ns AND s.device = v.device WHERE s.src IS NULL OR s.src = 0"):
    vals[(ts, dev)].append(v)
by_sig = collections.defaultdict(list)
for (ts, dev), vs in vals.items():
    by_sig[sig(dev, vs)].append(ts)
written = []
for line in open(sys.argv[3]):
    ns, dev, csv = line.rstrip("\n").split(" ", 2)
    cells = [c.strip() for c in csv.split(",")]
    written.append((int(ns), sig(int(dev), [c for c in cells[3:] if c != "-"])))
lastw = {}
for i, (ns, s) in enumerate(written):
    if s in by_sig:
        lastw[s[0]] = i
far = unstored = 0
for i, (ns, s) in enumerate(written):
    if i > lastw.get(s[0], -1):
        continue        # written as the daemon stopped
    ts = by_sig.get(s)
    if ts is None:
        unstored += 1
        continue
    if len(ts) != 1:
        bad("an aiu-smi row of device %d stored %d times" % (s[0], len(ts)))
    elif not 0 <= ts[0] - ns <= 2000000000:
        far += 1
if unstored:
    bad("%d aiu-smi rows written were not stored" % unstored)
# a row written before a step and read after it is stamped by the new clock
if far > 2 * 2 * 5:
    bad("%d aiu-smi rows stamped more than 2 s from their write" % far)

# the energy counter: it counts each card's file rows (the source it
# follows while the file is read) across every step, so it holds at least
# their integral but the rows read as a step is seen, and no more than
# the integral of both sources' rows
col, dec = db.execute("SELECT col, decimals FROM metrics WHERE key = 'pwr'").fetchone()
for dev, joules in db.execute(
        "SELECT device, value FROM counters WHERE name = 'energy_joules'"):
    def integral(where):
        return sum(p / 10 ** dec * ms / 1000 for p, ms in db.execute(
            "SELECT %s, interval_ms FROM samples WHERE device = ? AND %s "
            "IS NOT NULL AND %s" % (col, col, where), (dev,)))
    files = integral("src = 1")
    both = integral("1")
    print("card %d: energy counter %.3f J, file rows %.3f J, both sources %.3f J"
          % (dev, joules, files, both))
    if not files * 0.9 <= joules <= both + 1e-6:
        bad("card %d's energy counter %.3f J, its file rows' integral %.3f J, "
            "both sources' %.3f J" % (dev, joules, files, both))

# "ended window 3 (w3): BEGIN .. END, 1.234s" and the note
end3 = open(sys.argv[5]).read()
ran = float(end3.split("\n")[0].rsplit(", ", 1)[1].rstrip("s"))
if not 0 < ran < 600:
    bad("mark end says w3 ran %.3fs: %s" % (ran, end3))
if "stepped forward by 3600.000s" not in end3:
    bad("mark end says no step crossed w3: %s" % end3)
notes = dict(db.execute("SELECT tag, end_note FROM windows"))
for tag, want in (("w1", "back by 3600.000s"), ("w2", "back by 2.000s"),
                  ("w3", "forward by 3600.000s")):
    if want not in (notes.get(tag) or ""):
        bad("window %s's end_note %r does not say %s" % (tag, notes.get(tag), want))
sys.exit(0 if ok else 1)
PY
[ $ok = 1 ] || fail "a step of the host clock lost, misdated or hid something"
echo "PASS: t_clockstep"
