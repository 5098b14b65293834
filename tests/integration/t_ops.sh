#!/usr/bin/env bash
# spyremon export --trace FILE --ops on the daemon and the simulator: a
# job (ops_job.py) runs in a window on two cards sampled every 100 ms and
# writes a Kineto-shaped trace with device events (kernels, a copy, a
# collective, one kernel longer than several samples) and host events.
# ops_check.py recomputes every operator's energy from the stored power
# (export -m pwr) and checks that operators plus idle add up to the
# cards' energy to 1e-9, that the cards' energy is --steps' total digit
# for digit, and that the table, csv and json agree.  Then the errors: a
# trace without device events, --ops without --trace, with --steps, and
# --json without --steps or --ops.  Last, a Spyre device trace of four
# cards (tests/data/traces/flex-allreduce-tp4.json: begin and end pairs
# with the cards' cycle stamps) over samples of mksamples: its 28 pairs
# are the operators' calls, and operators plus idle are each card's
# energy, recomputed here.
source "$(dirname "$0")/lib.sh"

need python3 sqlite3
CHECK="python3 $ROOT/tests/integration/ops_check.py"

# expect_rc RC COMMAND...: run COMMAND, which must exit RC; stdout in
# $T/out, stderr in $T/err
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "$* exited $rc, not $want"; }
}

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
SPY="$CLIENT -c $T/spyremond.yaml"

python3 "$ROOT/tests/integration/ops_job.py" "$T/control.sock" ops-run "$T/trace.json" ||
	fail "ops_job.py failed"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the daemon did not store window ops-run"
TR=(--trace "$T/trace.json")

expect_rc 0 $SPY export "${TR[@]}" --ops --csv
cp "$T/out" "$T/ops.csv"
grep -q "^spyremon: operators and idle add up to each card's energy" "$T/err" ||
	fail "no closure note: $(cat "$T/err")"
grep -q "operators are estimates: .*ERROR bounds each" "$T/err" ||
	fail "no note of the estimates: $(cat "$T/err")"
head -n 1 "$T/ops.csv" | grep -q '^section,name,category,card,calls,device_ms,time_pct,energy_J,energy_pct,net_J,mean_W,error_J,basis,flops,TOPS,TOPS_per_W,samples,interval_ms,covered_ms,device_span_ms,idle_ms,idle_J,host_only_ms,host_only_J,idle_W,closure,counter_J,counter_calls,counter_J_per_count,counter_residual_J,counter_residual_rel,counter_intervals,counter_backwards,floor_W,ceiling_W$' ||
	fail "csv header: $(head -n 1 "$T/ops.csv")"
expect_rc 0 $SPY export "${TR[@]}" --ops --json
cp "$T/out" "$T/ops.json"
expect_rc 0 $SPY export "${TR[@]}" --ops --table
cp "$T/out" "$T/ops.table"
grep -q '^operators and idle add up' "$T/ops.table" || fail "table: no closure footnote"
expect_rc 0 $SPY export "${TR[@]}" --steps --json
cp "$T/out" "$T/steps.json"
# the samples, with a margin, for the recomputation
expect_rc 0 $SPY export "${TR[@]}" -m pwr --pad 1s
cp "$T/out" "$T/samples.csv"
$CHECK "$T/trace.json" "$T/samples.csv" "$T/ops.csv" "$T/ops.json" \
	"$T/ops.table" "$T/steps.json"
cat "$T/ops.table"

# the default on a pipe is csv; --output writes the file
expect_rc 0 $SPY export "${TR[@]}" --ops
cmp -s "$T/out" "$T/ops.csv" || fail "the default on a pipe is not the csv"
expect_rc 0 $SPY export "${TR[@]}" --ops --csv --output "$T/o.csv"
[ ! -s "$T/out" ] && cmp -s "$T/o.csv" "$T/ops.csv" || fail "--output differs"
# --device keeps one card: the other's events are left out, and said so
expect_rc 0 $SPY export "${TR[@]}" --ops --csv --device 0
grep -q '^card,card 0,' "$T/out" && ! grep -q '^card,card 1,' "$T/out" ||
	fail "--device 0: $(grep '^card' "$T/out")"
grep -q "device events on a card without samples in the span (the first: card 1)" "$T/err" ||
	fail "--device 0: no note of card 1's events: $(cat "$T/err")"

# ---- --merge: each device event's energy on a slice of its own ----
expect_rc 0 $SPY export "${TR[@]}" --merge "$T/merged.json"
python3 - "$T/trace.json" "$T/merged.json" "$T/ops.csv" <<'PY' || fail "--merge's energy slices"
import csv, json, sys
orig = open(sys.argv[1], "rb").read()
merged = open(sys.argv[2], "rb").read()
# every byte of the original's events is there, as it was
end = orig.rindex(b"}", 0, orig.rindex(b"]", 0, orig.rindex(b"displayTimeUnit"))) + 1
if merged[:end] != orig[:end]:
    sys.exit("the original's events are not the merged trace's first bytes")
o, m = json.loads(orig), json.loads(merged)
n = len(o["traceEvents"])
if m["traceEvents"][:n] != o["traceEvents"]:
    sys.exit("the original's events changed")
dev = [e for e in o["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy")]
new = m["traceEvents"][n:]
sl = [e for e in new if e.get("cat") == "spyremon_energy"]
names = {e["pid"]: e["args"]["name"] for e in new
         if e.get("ph") == "M" and e["name"] == "process_name"}
pids = {e["pid"] for e in sl}
if not pids or any("energy per device event" not in names.get(p, "")
                   for p in pids):
    sys.exit("energy slices outside an energy process: %s" % names)
if pids & {e.get("pid") for e in o["traceEvents"]}:
    sys.exit("an energy process takes a pid of the trace")
# named "energy", the device event's name in args (merge_ops.c)
if any(e["name"] != "energy" for e in sl):
    sys.exit("an energy slice not named energy: %s" % sl)
key = lambda e: (e["name"], float(e["ts"]), float(e["dur"]))
if sorted(key(dict(e, name=e["args"]["event"])) for e in sl) != sorted(map(key, dev)):
    sys.exit("%d slices do not mirror the %d device events" % (len(sl), len(dev)))
ops = {r["name"]: float(r["energy_J"]) for r in csv.DictReader(
    open(sys.argv[3])) if r["section"] == "op"}
for name, want in ops.items():
    got = sum(e["args"]["energy_J"] for e in sl if e["args"]["event"] == name)
    if abs(got - want) > 1e-7 * max(want, 1e-9):
        sys.exit("%s: slices %.9g J, export --ops %.9g J" % (name, got, want))
for e in sl:
    w = e["args"]["energy_J"] / (float(e["dur"]) / 1e6)
    if e["dur"] and abs(e["args"]["mean_W"] - w) > 1e-6 * w:
        sys.exit("mean_W %s of %s" % (e["args"]["mean_W"], e))
# a lane's slices never overlap
lanes = {}
for e in sl:
    lanes.setdefault((e["pid"], e["tid"]), []).append(
        (float(e["ts"]), float(e["ts"]) + float(e["dur"])))
for v in lanes.values():
    v.sort()
    if any(a[1] > b[0] + 1e-3 for a, b in zip(v, v[1:])):
        sys.exit("overlapping slices on one lane")
print("merge: %d energy slices, the operators' sums as export --ops" % len(sl))
PY

# ---- report's "Where the energy went": export --ops' figures ----
expect_rc 0 $SPY report --window ops-run "${TR[@]}" --output "$T/rep"
python3 - "$T/rep/report.md" "$T/ops.csv" <<'PY' || fail "report's operators are not export --ops'"
import csv, sys
md = open(sys.argv[1]).read()
sec = md.split("## Where the energy went\n", 1)[1].split("\n## ", 1)[0]
rows = [l.split("|")[1:-1] for l in sec.splitlines() if l.startswith("| `")]
got = [(r[0].strip().strip("`"), int(r[2]), r[4].strip()) for r in rows]
ops = [r for r in csv.DictReader(open(sys.argv[2])) if r["section"] == "op"]
ops.sort(key=lambda r: -float(r["energy_J"]))
want = [(r["name"], int(r["calls"]), "%.3f" % float(r["energy_J"]))
        for r in ops[:10]]
if got != want:
    sys.exit("report: %s\nexport --ops: %s" % (got, want))
print("report: the %d operators that took the most energy, as export --ops has them" % len(got))
PY
# the chart of each card's energy by category: a PNG and an SVG, in the
# section; the PNG's size and colour type from its header, the SVG parsed
python3 - "$T/rep" <<'PY' || fail "report's chart of the categories"
import struct, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
md = open(d + "/report.md").read()
sec = md.split("## Where the energy went\n", 1)[1].split("\n## ", 1)[0]
if "](energy_categories.png)" not in sec or "(energy_categories.svg)" not in sec:
    sys.exit("the section does not show energy_categories.png and .svg")
png = open(d + "/energy_categories.png", "rb").read()
if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR" or \
        not png.endswith(b"IEND\xaeB`\x82"):
    sys.exit("energy_categories.png is not a PNG")
w, h, depth, ctype = struct.unpack(">IIBB", png[16:26])
if (w, h, depth, ctype) != (640, 520, 8, 2):
    sys.exit("energy_categories.png: %dx%d, depth %d, type %d" % (w, h, depth, ctype))
svg = ET.parse(d + "/energy_categories.svg").getroot()
if svg.tag != "{http://www.w3.org/2000/svg}svg" or svg.get("width") not in ("640", "640pt"):
    sys.exit("energy_categories.svg: %s width %s" % (svg.tag, svg.get("width")))
print("report: energy_categories.png (%dx%d) and .svg" % (w, h))
PY
grep -v '"cat": "kernel"\|"cat": "gpu_memcpy"' "$T/trace.json" >"$T/host.json"
expect_rc 0 $SPY report --window ops-run --trace "$T/host.json" --output "$T/rep-host"
grep -q "host.json\` has no device event" "$T/rep-host/report.md" ||
	fail "a report of a trace without device events: $(grep -A2 'Where the energy' "$T/rep-host/report.md")"

# ---- compare per operator: a second run of the same job ----
python3 "$ROOT/tests/integration/ops_job.py" "$T/control.sock" ops-run2 "$T/trace2.json" ||
	fail "ops_job.py failed (second run)"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the daemon did not store window ops-run2"
expect_rc 0 $SPY export --trace "$T/trace2.json" --ops --csv
cp "$T/out" "$T/ops2.csv"
expect_rc 0 $SPY compare ops-run ops-run2 --trace-base "$T/trace.json" \
	--trace-new "$T/trace2.json" --json
cp "$T/out" "$T/compare.json"
expect_rc 0 $SPY compare ops-run ops-run2 --trace-base "$T/trace.json" \
	--trace-new "$T/trace2.json"
grep -q "^Operators, the greatest changes of energy first" "$T/out" ||
	fail "compare: no operators: $(cat "$T/out")"
python3 - "$T/compare.json" "$T/ops.csv" "$T/ops2.csv" <<'PY' || fail "compare's operators are not export --ops'"
import csv, json, sys
ops = json.load(open(sys.argv[1]))["operators"]
side = [{r["name"]: r for r in csv.DictReader(open(p)) if r["section"] == "op"}
        for p in sys.argv[2:4]]
names = set(side[0]) | set(side[1])
assert len(ops) == min(10, len(names)), (len(ops), names)
close = lambda a, b: abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-12)
for o in ops:
    for k, key in ((0, "base"), (1, "new")):
        r = side[k].get(o["name"])
        want_j = float(r["energy_J"]) if r else 0.0
        want_e = float(r["error_J"]) if r else 0.0
        want_ms = float(r["device_ms"]) if r else 0.0
        assert close(o[key + "_J"], want_j), (o, key, want_j)
        assert close(o[key + "_error_J"], want_e), (o, key, want_e)
        assert close(o[key + "_device_ms"], want_ms), (o, key, want_ms)
        assert o[key + "_calls"] == (int(r["calls"]) if r else 0), o
    d = o["new_J"] - o["base_J"]
    b = o["base_error_J"] + o["new_error_J"]
    assert close(o["change_J"], d) and close(o["change_lo_J"], d - b) and \
        close(o["change_hi_J"], d + b), o
changes = [abs(o["change_J"]) for o in ops]
assert changes == sorted(changes, reverse=True), changes
print("compare: %d operators, by change, each as export --ops has it" % len(ops))
PY

# ---- errors ----
expect_rc 1 $SPY export --trace "$T/host.json" --ops
grep -q "no device events" "$T/err" || fail "no device events: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a trace without device events wrote: $(cat "$T/out")"
expect_rc 2 $SPY export --window ops-run --ops
grep -q -- "--ops goes with --trace" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 $SPY export "${TR[@]}" --ops --steps
grep -q -- "--steps and --ops exclude each other" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 $SPY export "${TR[@]}" --json
grep -q -- "--json goes with --steps, --ops or --breakdown" "$T/err" || fail "$(cat "$T/err")"
# --ops takes the events from the one read of the trace: a pipe will do,
# and gives the file's answer; --merge reads twice
cat "$T/trace.json" | $SPY export --trace /dev/stdin --ops --csv \
    >"$T/pipe.csv" 2>"$T/err" || fail "--ops of a pipe: $(cat "$T/err")"
cmp -s "$T/pipe.csv" "$T/ops.csv" || fail "--ops of a pipe differs from the file's"
# a kernel at ts 0 under the trace's base is one Kineto clamped: left
# out, as the reader's tally leaves it, though its base is read after it
python3 - "$T/trace.json" "$T/clamped.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "baseTimeNanoseconds" in d
d["traceEvents"].insert(0, {"ph": "X", "cat": "kernel", "name": "clamped",
                            "pid": 0, "tid": 7, "ts": 0, "dur": 5000,
                            "args": {"device": 0, "stream": 7}})
json.dump(d, open(sys.argv[2], "w"))
PY
expect_rc 0 $SPY export --trace "$T/clamped.json" --ops --csv
cmp -s "$T/out" "$T/ops.csv" ||
	fail "a kernel at ts 0 under a base counted: $(grep clamped "$T/out")"
rc=0
cat "$T/trace.json" | $SPY export --trace /dev/stdin --merge "$T/m.json" \
    >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--merge reads the trace twice" "$T/err" ||
	fail "--merge of a pipe exited $rc: $(cat "$T/err")"

stop_daemon

# ---- a Spyre device trace, placed with --trace-start ----
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"
FLEX=$ROOT/tests/data/traces/flex-allreduce-tp4.json
BASE=1760000000000000000
FIRST_NS=2097962447132759	# its first event's ts, in ns
python3 - "$BASE" >"$T/flex.samples" <<'PY'
import sys
base, ms = int(sys.argv[1]), 1000000
for dev in range(4):
    for k in range(-20, 25):
        print("%d %d 1 pwr=%.1f busy=%d" % (base + k * ms + 250000, dev,
              60 + 3 * dev + (k * 7) % 11, 0 if k < -10 else 40))
PY
"$MKSAMPLES" "$T/flex.db" <"$T/flex.samples" || fail "mksamples failed"
expect_rc 0 "$CLIENT" --db "$T/flex.db" export --trace "$FLEX" \
	--trace-start $((BASE - FIRST_NS)) --ops --csv
python3 - "$T/out" "$T/flex.samples" "$FLEX" "$BASE" <<'PY' || fail "the Spyre trace's operators"
import csv, json, sys
from decimal import Decimal
rows = list(csv.DictReader(open(sys.argv[1])))
ev = json.load(open(sys.argv[3]), parse_float=Decimal)
base = int(sys.argv[4])
t0 = min(e["ts"] for e in ev)
ns = lambda ts: base + int((ts - t0) * 1000)
lo, hi = ns(min(e["ts"] for e in ev)), ns(max(e["ts"] for e in ev))
ops = [r for r in rows if r["section"] == "op"]
cards = {int(r["card"]): r for r in rows if r["section"] == "card"}
cats = {r["name"]: r for r in rows if r["section"] == "category"}
assert sum(int(r["calls"]) for r in ops) == 28, ops
assert sorted(cards) == [0, 1, 2, 3], cards
assert [int(cards[c]["calls"]) for c in range(4)] == [4, 7, 7, 10], cards
assert int(cats["communication"]["calls"]) == 20 and int(cats["compute"]["calls"]) == 8, cats
calls = {}
for e in ev:
    calls.setdefault(e["name"], 0)
    calls[e["name"]] += e["ph"] == "B"
assert {r["name"]: int(r["calls"]) for r in ops} == calls
for c, r in cards.items():
    want = 0.0
    for line in open(sys.argv[2]):
        ts, dev, ival, pwr = line.split()[:4]
        if int(dev) != c:
            continue
        s1 = int(ts)
        s0 = s1 - int(ival) * 1000000
        want += float(pwr[4:]) * max(0, min(s1, hi) - max(s0, lo)) / 1e9
    got = float(r["energy_J"])
    assert abs(got - want) <= 1e-9 * want, (c, got, want)
    assert float(r["closure"]) <= 1e-9, r
total = sum(float(r["energy_J"]) for r in cards.values())
parts = sum(float(r["energy_J"]) for r in ops) + float(cats["idle"]["energy_J"])
assert abs(parts - total) <= 1e-9 * total, (parts, total)
assert all(r["basis"] == "estimate" for r in ops), ops
print("flex: 28 pairs on 4 cards, closure %.1e" % (abs(parts - total) / total))

# the cards' charge counters (attr Power, 32 bits, wrapping), recomputed:
# one reading per pair, in TS1 order; the increment to the next reading
# is the opening call's, left out where it goes backwards (2^31 or more),
# at the same cycle, or ends before it begins; joules per count by least
# squares through the origin against the samples' energy over each
# interval (each power held over its 1 ms)
samples = {}
for line in open(sys.argv[2]):
    ts, dev, ival, pwr = line.split()[:4]
    samples.setdefault(int(dev), []).append(
        (int(ts) - int(ival) * 1000000, int(ts), float(pwr[4:])))
def sampled(c, lo, hi):
    return sum(p * max(0, min(b, hi) - max(a, lo))
               for a, b, p in samples[c]) / 1e9
order = []
for e in ev:
    if e["name"] not in order:
        order.append(e["name"])
reads = {}
for e in ev:
    if e["ph"] == "B":
        a = e["attr"]
        reads.setdefault(e["pid"], []).append(
            (int(a["TS1"]), order.index(e["name"]), int(a["Power"]),
             ns(e["ts"]), e["name"]))
counter_j = {}
for c, rs in reads.items():
    rs.sort()
    iv, back = [], 0
    for (c1, _, p1, t1, name), (c2, _, p2, t2, _) in zip(rs, rs[1:]):
        n = (p2 - p1) % 2**32
        if n >= 2**31:
            back += 1
        elif c2 != c1 and t2 > t1:
            iv.append((n, sampled(c, t1, t2), name))
    r = cards[c]
    assert int(r["counter_backwards"] or 0) == back, (c, r, back)
    if not iv:
        assert r["counter_J_per_count"] == "" and r["counter_intervals"] == "0", r
        continue
    k = sum(x * y for x, y, _ in iv) / sum(x * x for x, _, _ in iv)
    res = (sum((y - k * x) ** 2 for x, y, _ in iv) / len(iv)) ** 0.5
    rms = (sum(y * y for _, y, _ in iv) / len(iv)) ** 0.5
    assert int(r["counter_intervals"]) == len(iv), (c, r, iv)
    assert abs(float(r["counter_J_per_count"]) - k) <= 1e-9 * k, (c, r, k)
    assert abs(float(r["counter_residual_J"]) - res) <= 1e-9 * rms, (c, r, res)
    assert abs(float(r["counter_residual_rel"]) - res / rms) <= 1e-9, (c, r)
    for x, _, name in iv:
        counter_j[name] = counter_j.get(name, 0.0) + k * x
    print("flex: card %d's counter: %.6g J per count over %d intervals, "
          "residual %.3g J (%.1f %%), %d backwards" % (c, k, len(iv), res,
          100 * res / rms, back))
for r in ops:
    want = counter_j.get(r["name"], 0.0)
    got = float(r["counter_J"] or 0)
    assert abs(got - want) <= 1e-9 * max(want, 1e-15), (r["name"], got, want)
print("flex: each operator's energy by the counters, as recomputed")
PY
exit 0
