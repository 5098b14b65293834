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
python3 - "$T/rep/breakdown.png" "$T/rep/breakdown.svg" <<'PY' || fail "breakdown.png/.svg"
import struct, sys, zlib
import xml.etree.ElementTree as ET
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h, depth, ctype = struct.unpack(">IIBB", b[16:26])
assert (w, h, depth, ctype) == (1200, 560, 8, 2), (w, h, depth, ctype)
# the pixels: coloured (not grey) pixels are the bars
pos, data = 8, b""
while pos < len(b):
    n, typ = struct.unpack(">I4s", b[pos:pos + 8])
    if typ == b"IDAT":
        data += b[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(data)
stride = 1 + 3 * w
prev = bytearray(3 * w)
coloured = 0
for y in range(h):
    f, row = raw[y * stride], bytearray(raw[y * stride + 1:(y + 1) * stride])
    assert f in (0, 2), f
    if f == 2:
        for i in range(len(row)):
            row[i] = (row[i] + prev[i]) & 255
    coloured += sum(1 for x in range(0, 3 * w, 3)
                    if max(row[x:x + 3]) - min(row[x:x + 3]) > 60)
    prev = row
assert coloured > 20000, coloured
root = ET.parse(sys.argv[2]).getroot()
assert root.tag.endswith("svg"), root.tag
PY

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
exit 0
