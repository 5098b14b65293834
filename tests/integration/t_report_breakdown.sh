#!/usr/bin/env bash
# report's "Why it was slow" on the daemon and the simulator: the job of
# t_breakdown (ops_job.py: card 0 a 3 ms kernel every 10 ms launched 0.5
# ms before, linked by correlation, and a 1 ms copy; card 1 collectives
# and a 350 ms kernel in the last step; four steps) on idle cards, so that
# the counters (mean busy near 0) contradict the trace where card 1
# computes 70 % of ProfilerStep#3 and nowhere else.  report.md has the
# section with the run's verdict and every step's per card, each share,
# verdict and rule as export --breakdown --json gives them, the counters
# as it gives them with power against 75 W, temperature, bandwidths and
# PCIe against the link of the test's sysfs, the one contradiction named,
# "Across cards" with each step's straggler and spreads as it gives them;
# breakdown.png is a PNG of the stated size with bars drawn, breakdown.svg
# well-formed SVG.  A trace without device events says so, with no chart.
# Two rank traces of one run (flex_ranks.py): the verdict table and the
# evidence have a row per step both have and card of either rank,
# labelled r<rank>c<card>, each its trace's export --breakdown; the run's
# verdict adds up all four cards; the chart has 12 bars (3 steps x 4).
source "$(dirname "$0")/lib.sh"

need python3 sqlite3

FLUSH=200ms write_config 2 100ms --workload idle
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
SPY="$CLIENT -c $T/spyremond.yaml"

python3 "$ROOT/tests/integration/ops_job.py" "$T/control.sock" bd-run "$T/trace.json" ||
	fail "ops_job.py failed"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the daemon did not store window bd-run"
python3 - "$T/trace.json" >"$T/corr.json" <<'PY' || fail "no linked trace"
import json, sys
d = json.load(open(sys.argv[1]))
n = 0
for e in d["traceEvents"]:
    if e.get("name") == "gemm":
        e["args"]["correlation"] = n
        n += 1
json.dump(d, sys.stdout)
PY

$SPY report --window bd-run --trace "$T/corr.json" --output "$T/rep" \
	>"$T/out" 2>"$T/err" || fail "report failed: $(cat "$T/err")"
cat "$T/out"
# three of the window, the energy by category and the breakdown
grep -q ', 5 plots$' "$T/out" || fail "report did not count its 5 plots: $(cat "$T/out")"
for f in power energy_categories breakdown; do
	[ -s "$T/rep/$f.png" ] && [ -s "$T/rep/$f.svg" ] || fail "no $f.png and .svg"
done
$SPY export --trace "$T/corr.json" --breakdown --json >"$T/bd.json" ||
	fail "export --breakdown failed"
sed -n '/^## Why it was slow/,/^## Plots/p' "$T/rep/report.md"
python3 - "$T/rep/report.md" "$T/bd.json" <<'PY' || fail "the section against export --breakdown"
import json, re, sys
md = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
sec = md.split("## Why it was slow\n", 1)[1].split("\n## ", 1)[0]
assert "\n## Why it was slow\n" in md
CL = ("compute", "data_movement", "communication", "other", "idle")
IC = ("host_wait", "launch_gap", "sync", "unexplained")
BW = ("mem_bw_rd_GiBps", "mem_bw_wr_GiBps", "pci_bw_rx_GiBps", "pci_bw_tx_GiBps")
rows = {}
evid = {}
for line in sec.splitlines():
    cells = [c.strip() for c in line.strip("|").split("|")]
    if len(cells) == 14 and cells[1].isdigit():
        rows[(cells[0], int(cells[1]))] = cells
    if len(cells) == 15 and cells[1].isdigit():
        evid[(cells[0], int(cells[1]))] = cells
f1 = lambda v: "%.1f" % v
flagged = []
n = 0
for c in d["cards"]:
    for w in c["steps"] + [dict(c, step="total")]:
        key = (w["step"], c["card"])
        r = rows[key]
        assert r[2] == "%.3f" % (w["span_us"] / 1000), (key, r)
        want = [f1(w[k + "_pct"]) for k in CL]
        want += [f1(100 * w["idle_causes"][k + "_us"] / w["span_us"]) for k in IC]
        assert r[3:12] == want, (key, r, want)
        assert r[12] == "**%s**" % w["verdict"] and r[13] == w["verdict_rule"], (key, r)
        e = evid[key]
        k = w["counters"]
        assert int(e[2]) == k["samples"] and e[3] == f1(k["covered_pct"]), (key, e, k)
        assert e[4] == f1(k["busy_pct"]) and e[5] == f1(k["power_W"]), (key, e, k)
        assert e[6] == "%.0f" % (100 * k["power_W"] / 75), (key, e)
        assert e[6] == "%.0f" % k["power_pct_of_75W"], (key, e, k)
        assert e[7] == f1(k["gtemp_mean_C"]), (key, e, k)
        assert e[8:12] == ["%.3f" % k[f] for f in BW], (key, e, k)
        # the sysfs of write_config: every link 16.0 GT/s x16
        assert k["pci_link_GBps"] == 16.0 * 16 * 128 / 130 / 8, k
        assert e[12:14] == ["%.2f" % k["pci_%s_pct_of_link" % d] for d in ("rx", "tx")], (key, e, k)
        bad = (k["busy_pct"] < 10 and w["compute_pct"] >= 50) or \
              (k["busy_pct"] >= 50 and w["idle_pct"] >= 90)
        assert (e[14] == "**contradicts**") == bad == k["contradicts"], (key, e)
        if bad:
            flagged.append(key)
        n += 1
assert len(rows) == n == 10 and len(evid) == n, (len(rows), len(evid), n)
assert flagged == [("ProfilerStep#3", 1)], flagged
assert "card 0 16.0 GT/s PCIe x16, 31.508 GB/s; card 1 16.0 GT/s PCIe x16, " \
    "31.508 GB/s.\n" in sec, sec
assert re.search(r"^- ProfilerStep#3, card 1: mean busy [0-9.]+ % < 10 % while "
                 r"the trace has compute 70\.0 % >= 50 % of the span$", sec, re.M), sec
# the run: every card's span added up
tot = [c for c in d["cards"]]
span = sum(c["span_us"] for c in tot)
idle = sum(c["idle_us"] for c in tot)
m = re.search(r"\*\*The run: ([a-z-]+)\*\* \(every card's span added up, "
              r"([0-9.]+) card-ms: .*\)\.  Idle time with a cause \(host wait, "
              r"launch gap, sync\): ([0-9.]+) % of ([0-9.]+) ms idle", sec)
assert m, sec
assert m.group(2) == "%.3f" % (span / 1000) and m.group(4) == "%.3f" % (idle / 1000), m.groups()
unexp = sum(c["idle_causes"]["unexplained_us"] for c in tot)
assert m.group(3) == f1(100 * (idle - unexp) / idle), m.groups()
assert "![Time by class per step and card](breakdown.png)" in sec
PY
PYTHONPATH=$ROOT/tests/integration python3 - "$T/rep/breakdown.png" "$T/rep/breakdown.svg" <<'PY' ||
import sys
import xml.etree.ElementTree as ET
from pngread import png
w, h, bpp, rows = png(sys.argv[1])
assert (w, h, bpp) == (1200, 560, 3), (w, h, bpp)
# the pixels: coloured (not grey) pixels are the bars
coloured = sum(1 for row in rows for x in range(0, 3 * w, 3)
               if max(row[x:x + 3]) - min(row[x:x + 3]) > 60)
assert coloured > 20000, coloured
root = ET.parse(sys.argv[2]).getroot()
assert root.tag.endswith("svg"), root.tag
PY
	fail "breakdown.png/.svg"

# across cards: each step's straggler, fastest card, step times and
# class as export --breakdown --json has them
python3 - "$T/rep/report.md" "$T/bd.json" <<'PY' || fail "the across-cards table against export --breakdown"
import json, sys
md = open(sys.argv[1]).read()
x = json.load(open(sys.argv[2]))["across_cards"]
sec = md.split("### Across cards\n", 1)[1].split("\n### ", 1)[0]
n = {r["card"]: r["steps"] for r in x["run"]["straggler_steps"]}
assert "The straggler in 4 steps: card 0 %d, card 1 %d." % (n[0], n[1]) in sec, sec
rows = [[c.strip() for c in l.strip("|").split("|")] for l in sec.splitlines()
        if l.startswith("| ProfilerStep#")]
assert len(rows) == len(x["steps"]) == 4, rows
for r, s in zip(rows, x["steps"]):
    t = s["step_time"]
    assert r[0] == s["step"] and int(r[1]) == s["straggler"] and int(r[2]) == s["fastest"], (r, s)
    assert r[3] == "%.3f" % (t["max_us"] / 1000) and r[5] == "%.3f" % (t["spread_us"] / 1000), (r, t)
    assert r[8] == "idle: " + s["differs_in"]["class"].replace("_", " "), (r, s)
print("across cards: %d steps as export --breakdown has them" % len(rows))
PY

# a trace with no device event: the section says so, no chart
python3 - "$T/trace.json" >"$T/host.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if e.get("pid") not in (0, 1)]
json.dump(d, sys.stdout)
PY
$SPY report --window bd-run --trace "$T/host.json" --output "$T/rep2" \
	>"$T/out" 2>"$T/err" || fail "report of a host-only trace failed: $(cat "$T/err")"
grep -q 'has no device event: no card.s time can be classified' "$T/rep2/report.md" ||
	fail "no word of the missing device events"
[ ! -e "$T/rep2/breakdown.png" ] || fail "a chart of no device event"
stop_daemon

# two rank traces of one run (flex_ranks.py, as t_breakdown_ranks): the
# verdict table, the chart and the evidence cover every rank's cards,
# each named r<rank>c<card>, over the steps both traces have; each row is
# its own trace's export --breakdown --json, the run's verdict adds up
# all four cards' spans, the chart has a bar per card per step
flex_rank_run "$T/rk.db"
"$CLIENT" --db "$T/rk.db" report --window rk-run --trace "$T/r0.json" --trace "$T/r1.json" \
	--align-window rk-run --output "$T/rep3" >"$T/out" 2>"$T/err" ||
	fail "report of two ranks failed: $(cat "$T/err")"
for r in 0 1; do
	"$CLIENT" --db "$T/rk.db" export --trace "$T/r$r.json" --align-window rk-run \
		--breakdown --json >"$T/rk$r.json" 2>"$T/err" ||
		fail "export --breakdown of rank $r failed: $(cat "$T/err")"
done
sed -n '/^## Why it was slow/,/^### Across cards/p' "$T/rep3/report.md"
python3 - "$T/rep3/report.md" "$T/r0.json" "$T/r1.json" "$T/rk0.json" "$T/rk1.json" <<'PY' ||
import json, re, sys
md = open(sys.argv[1]).read()
sec = md.split("## Why it was slow\n", 1)[1].split("\n## ", 1)[0]
traces = [json.load(open(p)) for p in sys.argv[2:4]]
bds = [json.load(open(p)) for p in sys.argv[4:6]]
# from the traces: each rank's cards (the pids of its begin and end pairs)
# and steps; the steps both have, in the first's order
labels, cards = [], []
for i, t in enumerate(traces):
    rank = t["distributedInfo"]["rank"]
    for c in sorted({e["pid"] for e in t["traceEvents"] if e.get("ph") == "B"}):
        labels.append("r%dc%d" % (rank, c))
        cards.append((i, c))
names = [[e["name"] for e in t["traceEvents"] if e.get("ph") == "X" and
          e["name"].startswith("ProfilerStep#")] for t in traces]
common = [n for n in names[0] if all(n in m for m in names)]
assert labels == ["r0c1", "r0c2", "r1c0", "r1c3"], labels
assert common == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"], common
f1 = lambda v: "%.1f" % v
CL = ("compute", "data_movement", "communication", "other", "idle")
IC = ("host_wait", "launch_gap", "sync", "unexplained")
def section(title):
    a = sec.split(title, 1)[1] if title else sec
    return a.split("\n### ", 1)[0]
verdicts, evid = {}, {}
for line in section("").splitlines():
    cells = [c.strip() for c in line.strip("|").split("|")]
    if len(cells) == 14 and cells[1] in labels:
        verdicts[(cells[0], cells[1])] = cells
for line in section("### Evidence from the counters\n").splitlines():
    cells = [c.strip() for c in line.strip("|").split("|")]
    if len(cells) == 15 and cells[1] in labels:
        evid[(cells[0], cells[1])] = cells
want = {(s, l) for s in common + ["total"] for l in labels}
assert set(verdicts) == want, sorted(set(verdicts) ^ want)
assert set(evid) == want, sorted(set(evid) ^ want)
span = idle = unexp = 0
for label, (i, c) in zip(labels, cards):
    card = next(x for x in bds[i]["cards"] if x["card"] == c)
    for w in [s for s in card["steps"] if s["step"] in common] + [dict(card, step="total")]:
        r = verdicts[(w["step"], label)]
        assert r[2] == "%.3f" % (w["span_us"] / 1000), (label, r, w)
        exp = [f1(w[k + "_pct"]) for k in CL]
        exp += [f1(100 * w["idle_causes"][k + "_us"] / w["span_us"]) for k in IC]
        assert r[3:12] == exp, (label, r, exp)
        assert r[12] == "**%s**" % w["verdict"], (label, r, w["verdict"])
        e, k = evid[(w["step"], label)], w["counters"]
        assert int(e[2]) == k["samples"] and e[4] == f1(k["busy_pct"]), (label, e, k)
        assert (e[14] == "**contradicts**") == k["contradicts"], (label, e, k)
    span += card["span_us"]
    idle += card["idle_us"]
    unexp += card["idle_causes"]["unexplained_us"]
    assert not any(s == "ProfilerStep#3" for s, _ in verdicts), "a step one rank lacks"
m = re.search(r"\*\*The run: ([a-z-]+)\*\* \(every card's span added up, "
              r"([0-9.]+) card-ms: .*\)\.  Idle time with a cause \(host wait, "
              r"launch gap, sync\): ([0-9.]+) % of ([0-9.]+) ms idle", sec)
assert m and m.group(2) == "%.3f" % (span / 1000), (m and m.groups(), span)
assert m.group(4) == "%.3f" % (idle / 1000), (m.groups(), idle)
assert "1 step that only some have left out" in sec, sec
assert "![Time by class per step and card](breakdown.png)" in sec
print("report of two ranks: %d verdict and %d evidence rows for %s" %
      (len(verdicts), len(evid), ", ".join(labels)))
PY
	fail "the two ranks' verdicts and evidence"
# the chart: a bar per card per step (3 steps of 4 cards), told apart
# along the row just above the x axis (the plot area's bottom, y 480)
PYTHONPATH=$ROOT/tests/integration python3 - "$T/rep3/breakdown.png" <<'PY' ||
import sys
from pngread import png
w, h, bpp, rows = png(sys.argv[1])
assert (w, h, bpp) == (1200, 560, 3), (w, h, bpp)
row = rows[478]
ink = [min(row[3 * x:3 * x + 3]) < 235 for x in range(92, 989)]
bars = sum(1 for i in range(1, len(ink)) if ink[i] and not ink[i - 1]) + ink[0]
assert bars == 12, bars
print("breakdown.png: %d bars above the axis" % bars)
PY
	fail "breakdown.png of two ranks"
exit 0
