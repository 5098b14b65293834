#!/usr/bin/env bash
# spyremon export --trace FILE --breakdown on the daemon and the
# simulator, as the demo's flow runs: a job (ops_job.py, t_ops') in a
# window on two cards writes a Kineto-shaped trace whose truth is known by
# construction: card 0 a 3 ms kernel every 10 ms, launched 0.5 ms before
# (correlation), and a 1 ms copy 1 ms after it; card 1 a 40 ms collective
# every 100 ms and a 350 ms kernel; four 500 ms steps.  Each card's and
# each step's classes add up to its span to the ns, the idle causes to the
# idle time, and every figure is the one the job's schedule gives (card
# 0's gaps before a kernel are host wait once the kernels carry their
# launch's correlation, unexplained without it; the gaps before a copy,
# with no launch and over 30 µs, unexplained).  The table and csv say the same.
# The counters as evidence: bandwidths as --steps has them, the
# temperature recomputed from the samples, PCIe against the link that
# the test's sysfs declares (card 0 8.0 GT/s x4, card 1 unknown), power
# against 75 W, each contradiction by the rules; and two cards moving
# data 80 % of two steps while memory and PCIe are quiet, contradicted
# against a known link and an unknown one.
# Then the Spyre device trace of four cards (flex-allreduce-tp4.json,
# begin and end pairs, no stream) over samples of mksamples: its classes,
# recomputed here from the trace by the rules of spyremon(1)'s
# "Breakdown", add up to each card's span exactly, its streams are its
# tracks.  The job's trace through a pipe gives the same (it is read once).
# Across cards (across_check.py): each step's straggler, fastest and
# spread of step time recomputed from the trace, the busy % and energy
# spreads from --steps, on the job's trace (card 0 straggles in every
# step, by its schedule) and on the Spyre trace with two steps laid on
# it; a trace of one card has none.  Last, the errors: no device events,
# --launch-gap without --breakdown, a bad --launch-gap, --breakdown with
# --ops.
source "$(dirname "$0")/lib.sh"

need python3 sqlite3

expect_rc() {
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "$* exited $rc, not $want"; }
}

# card 0's link 8.0 GT/s x4 (3.938 GB/s each way), card 1's unknown
SYSFS_LINKS="8.0 GT/s PCIe|4,Unknown|16" FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
SPY="$CLIENT -c $T/spyremond.yaml"

python3 "$ROOT/tests/integration/ops_job.py" "$T/control.sock" bd-run "$T/trace.json" ||
	fail "ops_job.py failed"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the daemon did not store window bd-run"
stop_daemon
# Kineto links a kernel to its launch by args.correlation: the job's
# kernels on card 0 get their launch's
python3 - "$T/trace.json" >"$T/corr.json" <<'PY' || fail "no linked trace"
import json, sys
d = json.load(open(sys.argv[1]))
n = 0
for e in d["traceEvents"]:
    if e.get("name") == "gemm":
        e["args"]["correlation"] = n
        n += 1
assert n == 200, n
json.dump(d, sys.stdout)
PY
TR=(--trace "$T/corr.json")

expect_rc 0 $SPY export --trace "$T/trace.json" --breakdown --json
python3 - "$T/out" <<'PY' || fail "without correlation, no host wait"
import json, sys
c = json.load(open(sys.argv[1]))["cards"][0]["idle_causes"]
assert c["host_wait_us"] == 0 and c["unexplained_us"] == 1195000, c
PY
expect_rc 0 $SPY export "${TR[@]}" --breakdown --json
cp "$T/out" "$T/bd.json"
# the trace is read once: a pipe gives the same breakdown
cat "$T/corr.json" | $SPY export --trace /dev/stdin --breakdown --json >"$T/pipe.json" ||
	fail "--breakdown from a pipe failed"
python3 - "$T/bd.json" "$T/pipe.json" <<'PY' || fail "a pipe's breakdown differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop("trace"), b.pop("trace")
assert a == b
PY
expect_rc 0 $SPY export "${TR[@]}" --breakdown --csv
cp "$T/out" "$T/bd.csv"
expect_rc 0 $SPY export "${TR[@]}" --breakdown --table
cp "$T/out" "$T/bd.table"
cat "$T/bd.table"
python3 - "$T/bd.json" "$T/bd.csv" "$T/bd.table" <<'PY' || fail "the job's breakdown"
import csv, json, sys
d = json.load(open(sys.argv[1]))
ns = lambda us: round(us * 1000)
CL = ("compute", "data_movement", "communication", "other", "idle")
IC = ("host_wait", "launch_gap", "sync", "unexplained")
def sums(w, what):
    assert sum(ns(w[c + "_us"]) for c in CL) == ns(w["span_us"]), (what, w)
    assert sum(ns(w["idle_causes"][c + "_us"]) for c in IC) == ns(w["idle_us"]), (what, w)
    assert abs(sum(w[c + "_pct"] for c in CL) - 100) < 1e-3, (what, w)
cards = {c["card"]: c for c in d["cards"]}
assert sorted(cards) == [0, 1], cards
for c in cards.values():
    sums(c, "card %d" % c["card"])
    assert [s["step"] for s in c["steps"]] == ["ProfilerStep#%d" % i for i in range(4)]
    for s in c["steps"]:
        sums(s, "card %d %s" % (c["card"], s["step"]))
        assert ns(s["span_us"]) == 500 * 10**6, s
MS = 10**6
def want(w, **kw):
    for k, v in kw.items():
        got = ns(w[k + "_us"]) if k + "_us" in w else ns(w["idle_causes"][k + "_us"])
        assert got == v * MS, (w.get("step", "total"), k, got, v * MS)
c0, c1 = cards[0], cards[1]
assert c0["events"] == 400 and c1["events"] == 17, (c0["events"], c1["events"])
want(c0, span=1995, compute=600, data_movement=200, communication=0, other=0,
     idle=1195, host_wait=995, launch_gap=0, sync=0, unexplained=200,
     comm_compute_overlap=0)
want(c1, span=1950, compute=350, communication=640, data_movement=0,
     idle=960, host_wait=0, unexplained=960)
want(c0["steps"][0], compute=150, data_movement=50, idle=300)
want(c1["steps"][0], communication=200, idle=300, unexplained=300)
want(c1["steps"][3], communication=40, compute=350, idle=110)
# the verdicts: card 0 waits on its host, card 1 idles, then computes
assert c0["verdict"] == "host-bound", c0["verdict_rule"]
assert c0["verdict_rule"] == "idle 59.9 % >= 50 %; host wait + launch gap 83.3 % of idle >= 50 %", c0["verdict_rule"]
assert [s["verdict"] for s in c0["steps"]] == ["host-bound"] * 4
assert c1["verdict"] == "mixed", c1["verdict_rule"]
assert [s["verdict"] for s in c1["steps"]] == ["idle"] * 3 + ["compute-bound"], \
    [s["verdict_rule"] for s in c1["steps"]]
assert c1["steps"][3]["verdict_rule"] == "compute 70.0 % >= 50 %"
streams = {(s["card"], s["stream"]): s for s in d["streams"]}
assert sorted(streams) == [(0, 7), (1, 9)], streams
# per stream, HTA's events: its launches name the stream and so are its
# device events, its last step is left out; the causes add up
for s in streams.values():
    assert sum(ns(s[c + "_us"]) for c in IC) == ns(s["idle_us"]), s
assert d["hta"]["last_step_dropped"] is True, d["hta"]
# the same figures in the csv
rows = list(csv.DictReader(open(sys.argv[2])))
card = {int(r["card"]): r for r in rows if r["section"] == "card"}
for k, c in cards.items():
    for f in CL:
        assert abs(float(card[k][f + "_us"]) - c[f + "_us"]) < 1e-6, (k, f)
    for f in IC:
        assert abs(float(card[k][f + "_us"]) - c["idle_causes"][f + "_us"]) < 1e-6
assert sum(r["section"] == "step" for r in rows) == 8
assert [r["verdict"] for r in rows if r["section"] == "card"] == ["host-bound", "mixed"]
assert sum(r["section"] == "stream" for r in rows) == 2
table = open(sys.argv[3]).read()
assert "Time by class" in table and "Idle time by stream" in table, table
line = [l.split() for l in table.splitlines() if l.split()[:2] == ["0", "total"]]
assert line and line[0][2] == "1995.000" and line[0][3] == "30.1", line
print("the job: every class and cause as its schedule gives them")
PY

# the counters of each step: --steps' figures, digit for digit
expect_rc 0 $SPY export "${TR[@]}" --steps --json
cp "$T/out" "$T/steps.json"
python3 - "$T/bd.json" "$T/out" "$T/bd.csv" <<'PY' || fail "the counters are not --steps'"
import csv, json, sys
bd, st = (json.load(open(p)) for p in sys.argv[1:3])
rows = {(r["step"], r["device"]): r for r in st["steps"]}
n = 0
for c in bd["cards"]:
    for s in c["steps"]:
        r, k = rows[(s["step"], c["card"])], s["counters"]
        assert k["samples"] == r["samples"], (k, r)
        assert abs(k["power_W"] - r["pwr_mean_W"]) < 1e-6, (k, r)
        assert abs(k["busy_pct"] - r["busy_mean_pct"]) < 1e-6, (k, r)
        assert abs(k["covered_pct"] - r["covered_ms"] / r["dur_ms"] * 100) < 1e-3, (k, r)
        n += 1
    assert c["counters"]["samples"] > 0 and c["counters"]["power_W"] > 0, c["counters"]
steps = [r for r in csv.DictReader(open(sys.argv[3])) if r["section"] == "step"]
for r in steps:
    w = next(s for s in next(c for c in bd["cards"] if c["card"] == int(r["card"]))["steps"]
             if s["step"] == r["step"])
    assert abs(float(r["power_W"]) - w["counters"]["power_W"]) < 1e-6, (r, w)
print("counters: %d steps' busy, power and coverage as --steps has them" % n)
PY

# the counters as evidence: bandwidths as --steps has them, the
# temperature recomputed from the stored samples, PCIe against the link
# the sysfs above declares (card 0: 8 GT/s x 4 lanes x 128/130 / 8 GB/s;
# card 1: unknown, so null), power against 75 W, and each span's
# contradiction by the rules of spyremon(1)
expect_rc 0 $SPY export "${TR[@]}" --breakdown --table
python3 - "$T/bd.json" "$T/steps.json" "$T/bd.csv" "$DB" "$T/out" <<'PY' || fail "the counters as evidence"
import csv, json, sqlite3, sys
bd, st = (json.load(open(p)) for p in sys.argv[1:3])
db = sqlite3.connect(sys.argv[4])
table = open(sys.argv[5]).read()
rows = {(r["step"], r["device"]): r for r in st["steps"]}
BW = ("mem_bw_rd_GiBps", "mem_bw_wr_GiBps", "pci_bw_rx_GiBps", "pci_bw_tx_GiBps")
LINK0 = 8.0 * 4 * 128 / 130 / 8
def tw_mean(dev, col, lo, hi):
    """a metric's mean over [lo, hi], each sample held over (ts - interval, ts]"""
    scale = {"gtemp": 10, "rdmem": 1000}[col]
    num = den = 0
    for ts, iv, v in db.execute('SELECT ts_ns, interval_ms, "%s" FROM samples '
                                'WHERE device = ? AND "%s" IS NOT NULL' % (col, col), (dev,)):
        a, b = max(ts - iv * 10**6, lo), min(ts, hi)
        if b > a:
            num += v / scale * (b - a)
            den += b - a
    return num / den
def rule(w, k):
    pct = lambda c: w[c + "_pct"]
    if k["busy_pct"] < 10 and pct("compute") >= 50:
        return True
    if k["busy_pct"] >= 50 and pct("idle") >= 90:
        return True
    mem = k["mem_bw_rd_GiBps"] + k["mem_bw_wr_GiBps"]
    if k["pci_link_GBps"] is None:
        quiet = k["pci_bw_rx_GiBps"] < 0.1 and k["pci_bw_tx_GiBps"] < 0.1
    else:
        quiet = k["pci_rx_pct_of_link"] < 1 and k["pci_tx_pct_of_link"] < 1
    return pct("data_movement") >= 50 and mem < 0.1 and quiet
csvrows = {(int(r["card"]), r["step"]): r for r in csv.DictReader(open(sys.argv[3]))
           if r["section"] in ("card", "step")}
n = 0
for c in bd["cards"]:
    link = LINK0 if c["card"] == 0 else None
    for s in c["steps"] + [dict(c, step="")]:
        k = s["counters"]
        if s["step"]:
            r = rows[(s["step"], c["card"])]
            for f in BW:
                assert abs(k[f] - r[f]) < 1e-9, (s["step"], f, k[f], r[f])
            lo = r["start_ns"]
            hi = lo + round(r["dur_ms"] * 10**6)
            assert abs(tw_mean(c["card"], "rdmem", lo, hi) - r["mem_bw_rd_GiBps"]) < 1e-6, r
            assert abs(tw_mean(c["card"], "gtemp", lo, hi) - k["gtemp_mean_C"]) < 1e-6, (s["step"], k)
        assert 20 < k["gtemp_mean_C"] < 100, k
        assert abs(k["power_pct_of_75W"] - 100 * k["power_W"] / 75) < 1e-9, k
        if link is None:
            assert k["pci_link_speed"] == "Unknown" and k["pci_link_width"] == 16, k
            assert k["pci_link_GBps"] is None and k["pci_rx_pct_of_link"] is None, k
            assert k["pci_tx_pct_of_link"] is None, k
        else:
            assert k["pci_link_speed"] == "8.0 GT/s PCIe" and k["pci_link_width"] == 4, k
            assert abs(k["pci_link_GBps"] - link) < 1e-12, k
            for d in ("rx", "tx"):
                want = k["pci_bw_%s_GiBps" % d] * 2**30 / (link * 1e9) * 100
                assert abs(k["pci_%s_pct_of_link" % d] - want) < 1e-9, (d, k, want)
        assert k["contradicts"] == rule(s, k), (c["card"], s["step"], k)
        assert (k["contradiction"] is None) == (not k["contradicts"]), k
        row = csvrows[(c["card"], s["step"])]
        for f in BW + ("power_pct_of_75W", "gtemp_mean_C", "pci_rx_pct_of_link"):
            if k[f] is None:
                assert row[f] == "", (f, row)
            else:
                assert abs(float(row[f]) - k[f]) <= 1e-6 * max(1, abs(k[f])), (f, row[f], k[f])
        assert row["pci_link_speed"] == k["pci_link_speed"], row
        assert row["contradicts"] == str(int(k["contradicts"])), row
        n += 1
assert n == 10, n
assert "PCIe links, per direction: card 0 8.0 GT/s PCIe x4, 3.938 GB/s; card 1 link unknown" in table, table
ev = [l.split() for l in table.split("The counters as evidence", 1)[1].splitlines()]
assert any(l[:2] == ["1", "total"] and l[6:8] == ["unknown", "unknown"] for l in ev), ev
print("evidence: %d spans' bandwidths, temperature, link and power as recomputed" % n)
PY

# across cards: card 0's work ends at 495 ms of each step (its last copy),
# card 1's at 445 ms (its fifth collective), at 455 ms in the last step
# (its long kernel): card 0 straggles in every step, by 50, 50, 50, 40 ms
python3 "$ROOT/tests/integration/across_check.py" "$T/corr.json" "$T/bd.json" \
	"$T/steps.json" "$T/bd.csv" >"$T/across.out" || fail "the job's cards side by side"
cat "$T/across.out"
python3 - "$T/bd.json" "$T/bd.table" <<'PY' || fail "the job's straggler by its schedule"
import json, sys
x = json.load(open(sys.argv[1]))["across_cards"]
MS = 1000
assert [s["straggler"] for s in x["steps"]] == [0] * 4, x["steps"]
assert [s["step_time"]["spread_us"] for s in x["steps"]] == [50 * MS] * 3 + [40 * MS]
assert [s["step_time"]["max_us"] for s in x["steps"]] == [495 * MS] * 4
assert x["run"]["mean_spread"]["step_time_us"] == 47.5 * MS, x["run"]
assert {r["card"]: r["steps"] for r in x["run"]["straggler_steps"]} == {0: 4, 1: 0}
assert all(s["busy_pct"] and s["energy_J"] for s in x["steps"]), x["steps"]
table = open(sys.argv[2]).read()
assert "Across cards, per step" in table, table
assert "Straggler in 4 steps: card 0 4, card 1 0; mean spread: step time 47.500 ms" in table
PY

# ---- the Spyre device trace, placed with --trace-start ----
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"
FLEX=$ROOT/tests/data/traces/flex-allreduce-tp4.json
BASE=1760000000000000000
FIRST_NS=2097962447132759
python3 - "$BASE" >"$T/flex.samples" <<'PY'
import sys
base, ms = int(sys.argv[1]), 1000000
for dev in range(4):
    for k in range(-20, 25):
        print("%d %d 1 pwr=60.0 busy=40" % (base + k * ms, dev))
PY
"$MKSAMPLES" "$T/flex.db" <"$T/flex.samples" || fail "mksamples failed"
expect_rc 0 "$CLIENT" --db "$T/flex.db" export --trace "$FLEX" \
	--trace-start $((BASE - FIRST_NS)) --breakdown --json
cp "$T/out" "$T/flex.json"
python3 - "$T/flex.json" "$FLEX" <<'PY' || fail "the Spyre trace's breakdown"
import json, sys
from decimal import Decimal
d = json.load(open(sys.argv[1]))
ev = json.load(open(sys.argv[2]), parse_float=Decimal)
COMM = ("nccl", "rccl", "hccl", "allreduce", "all_reduce", "allgather",
        "all_gather", "reducescatter", "reduce_scatter", "alltoall",
        "sendrecv", "rdma", "broadcast")
def cat(name):
    low = name.lower()
    if any(w in low for w in COMM):
        return "communication"
    if any(w in low for w in ("memcpy", "memset", "dma")):
        return "data_movement"
    if "Sync" in name or "stream wait" in low or "event_wait" in low:
        return "other"
    return "compute"
# pairs: an end closes the latest open begin of its card, track and name
open_, cards = {}, {}
for e in ev:
    k = (e["pid"], e["tid"], e["name"])
    t = int(e["ts"] * 1000)
    if e["ph"] == "B":
        open_.setdefault(k, []).append(t)
    else:
        cards.setdefault(e["pid"], []).append((open_[k].pop(), t, cat(e["name"]), e["tid"]))
ORDER = ("communication", "compute", "data_movement", "other")
got = {c["card"]: c for c in d["cards"]}
assert sorted(got) == sorted(cards), (sorted(got), sorted(cards))
for card, evs in cards.items():
    lo, hi = min(e[0] for e in evs), max(e[1] for e in evs)
    pts = sorted({lo, hi} | {e[0] for e in evs} | {e[1] for e in evs})
    want = dict.fromkeys(ORDER + ("idle",), 0)
    for a, b in zip(pts, pts[1:]):
        run = {e[2] for e in evs if e[0] <= a and e[1] >= b}
        want[next((c for c in ORDER if c in run), "idle")] += b - a
    c = got[card]
    assert round(c["span_us"] * 1000) == hi - lo, (card, c["span_us"], hi - lo)
    for k, v in want.items():
        assert round(c[k + "_us"] * 1000) == v, (card, k, c[k + "_us"], v)
    assert sum(round(c[k + "_us"] * 1000) for k in want) == hi - lo
    idle = sum(round(v * 1000) for k, v in c["idle_causes"].items() if k.endswith("_us"))
    assert idle == round(c["idle_us"] * 1000), (card, c["idle_causes"], c["idle_us"])
    assert c["events"] == len(evs), (card, c["events"], len(evs))
    tracks = len({e[3] for e in evs})
    assert sum(s["card"] == card for s in d["streams"]) == tracks, (card, tracks)
assert d["streams_from"] == "tid" and d["hta"] is None, d["streams_from"]
# no step: across cards has the cards, no step, and no mean spread
x = d["across_cards"]
assert x["steps"] == [] and x["run"]["mean_spread"]["step_time_us"] is None, x
print("flex: %d cards, each class as recomputed, adding up to the span" % len(cards))
PY
# its cards side by side over two steps laid on it (the second starting
# inside card 0's last add), over samples of a busy and power of their
# own per card
python3 - "$FLEX" "$BASE" "$T/flexsteps.json" "$T/flexsteps.samples" <<'PY'
import json, sys
from decimal import Decimal
ev = json.load(open(sys.argv[1]), parse_float=Decimal)
lo, hi = min(e["ts"] for e in ev), max(e["ts"] for e in ev)
mid = lo + Decimal("1000.5")
ev.append({"name": "ProfilerStep#0", "ph": "X", "cat": "user_annotation",
           "pid": 100, "tid": 1, "ts": lo, "dur": mid - lo})
ev.append({"name": "ProfilerStep#1", "ph": "X", "cat": "user_annotation",
           "pid": 100, "tid": 1, "ts": mid, "dur": hi - mid + 1})
class Exact(json.JSONEncoder):
    def default(self, o):
        return float(o) if isinstance(o, Decimal) else super().default(o)
json.dump(ev, open(sys.argv[3], "w"), cls=Exact)
with open(sys.argv[4], "w") as f:
    for dev in range(4):
        for k in range(-20, 25):
            f.write("%d %d 1 pwr=%d.0 busy=%d\n" % (int(sys.argv[2]) + k * 10**6,
                    dev, 50 + 5 * dev + k % 3, 10 + 20 * dev + k % 5))
PY
"$MKSAMPLES" "$T/flexsteps.db" <"$T/flexsteps.samples" || fail "mksamples failed"
FS=("$CLIENT" --db "$T/flexsteps.db" export --trace "$T/flexsteps.json"
	--trace-start $((BASE - FIRST_NS)))
expect_rc 0 "${FS[@]}" --breakdown --json
cp "$T/out" "$T/flexsteps.bd.json"
expect_rc 0 "${FS[@]}" --breakdown --csv
cp "$T/out" "$T/flexsteps.bd.csv"
expect_rc 0 "${FS[@]}" --steps --json
cp "$T/out" "$T/flexsteps.steps.json"
python3 "$ROOT/tests/integration/across_check.py" "$T/flexsteps.json" \
	"$T/flexsteps.bd.json" "$T/flexsteps.steps.json" "$T/flexsteps.bd.csv" ||
	fail "the Spyre trace's cards side by side"

# data movement the counters do not see: two cards copy 80 ms of each of
# two 100 ms steps; card 0's link is 16.0 GT/s x16 (in the inventory by
# its bus ID), card 1's unknown (mapped, no inventory row).  Step 0: no
# memory or PCIe traffic on either (both contradict); step 1: no memory
# traffic, PCIe rx 0.2 GiB/s, which is 0.68 % of card 0's link (it
# contradicts) but not under the 0.1 GiB/s that stands for an unknown
# link (card 1 agrees)
B2=1770000000000000000
python3 - "$B2" "$T/dm.json" "$T/dm.samples" <<'PY'
import json, sys
base = int(sys.argv[1])
# the steps from 10 ms (a ts of 0 is Kineto's clamped negative)
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i,
       "pid": 4242, "tid": 1, "ts": 10000.0 + 100000 * i, "dur": 100000.0}
      for i in range(2)]
for dev in range(2):
    for i in range(2):
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD",
                   "pid": dev, "tid": 7, "ts": 11000.0 + 100000 * i, "dur": 80000.0,
                   "args": {"device": dev, "stream": 7}})
json.dump({"traceEvents": ev, "baseTimeNanoseconds": base}, open(sys.argv[2], "w"))
with open(sys.argv[3], "w") as f:
    f.write("map 0 0000:13:00.0\nmap 1 0000:14:00.0\n")
    for dev in range(2):
        for k in range(-2, 23):
            rx = "0.2" if k > 11 else "0"
            f.write("%d %d 10 pwr=40.0 busy=30 gtemp=45.5 rdmem=0 wrmem=0 rxpci=%s txpci=0\n"
                    % (base + k * 10**7, dev, rx))
PY
"$MKSAMPLES" "$T/dm.db" <"$T/dm.samples" || fail "mksamples failed"
sqlite3 "$T/dm.db" "INSERT INTO cards (bus_id, function, link_speed, link_width, first_seen_ns, last_seen_ns) VALUES ('0000:13:00.0', 'pf', '16.0 GT/s PCIe', 16, 0, 0)" ||
	fail "no inventory row"
expect_rc 0 "$CLIENT" --db "$T/dm.db" export --trace "$T/dm.json" --breakdown --json
cp "$T/out" "$T/dm.bd.json"
expect_rc 0 "$CLIENT" --db "$T/dm.db" export --trace "$T/dm.json" --breakdown --table
python3 - "$T/dm.bd.json" "$T/out" <<'PY' || fail "data movement against quiet counters"
import json, sys
d = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read()
got = {}
for c in d["cards"]:
    for s in c["steps"]:
        k = s["counters"]
        assert s["data_movement_pct"] == 80, s
        got[(s["step"], c["card"])] = k["contradiction"]
        assert k["gtemp_mean_C"] == 45.5 and k["power_pct_of_75W"] == 40 / 75 * 100, k
want = {("ProfilerStep#0", 0), ("ProfilerStep#0", 1), ("ProfilerStep#1", 0)}
assert {w for w, v in got.items() if v} == want, got
assert got[("ProfilerStep#0", 0)] == ("the trace has data movement 80.0 % >= 50 % of "
    "the span while memory moves 0.000 GiB/s < 0.1 GiB/s and PCIe rx 0.00 %, tx "
    "0.00 % < 1 % of the link"), got
assert got[("ProfilerStep#1", 0)].endswith("PCIe rx 0.68 %, tx 0.00 % < 1 % of the link"), got
assert got[("ProfilerStep#0", 1)].endswith("PCIe rx 0.000, tx 0.000 GiB/s < 0.1 GiB/s "
    "(link unknown)"), got
assert "The counters contradict the trace in" in table, table
assert "  ProfilerStep#1, card 0: the trace has data movement 80.0 %" in table, table
print("data movement: contradicted where memory and PCIe are quiet, by the link")
PY

# one card: no across-cards rows, and null in the json
python3 - "$T/corr.json" >"$T/onecard.json" <<'PY' || fail "no one-card trace"
import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"]
                    if e.get("args", {}).get("device", 0) == 0]
json.dump(d, sys.stdout)
PY
expect_rc 0 $SPY export --trace "$T/onecard.json" --breakdown --json
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["across_cards"] is None and len(d["cards"]) == 1' \
	"$T/out" || fail "one card has across cards: $(head -c 300 "$T/out")"
expect_rc 0 $SPY export --trace "$T/onecard.json" --breakdown --csv
! grep -q "^across," "$T/out" || fail "one card has across rows"
expect_rc 0 $SPY export --trace "$T/onecard.json" --breakdown --table
! grep -q "Across cards" "$T/out" || fail "one card has an across block"

# ---- errors ----
grep -v '"cat": "kernel"\|"cat": "gpu_memcpy"' "$T/trace.json" >"$T/host.json"
expect_rc 1 $SPY export --trace "$T/host.json" --breakdown
grep -q "no device events" "$T/err" || fail "no device events: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a trace without device events wrote: $(cat "$T/out")"
expect_rc 2 $SPY export --trace "$T/trace.json" --ops --launch-gap 10us
grep -q -- "--launch-gap goes with --breakdown" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 $SPY export --trace "$T/trace.json" --breakdown --launch-gap soon
grep -q -- "--launch-gap: soon is not a duration" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 $SPY export --trace "$T/trace.json" --breakdown --ops
grep -q -- "--breakdown excludes --steps and --ops" "$T/err" || fail "$(cat "$T/err")"
exit 0
