#!/usr/bin/env bash
# compare --trace-base --trace-new, where the time went: two runs of
# ops_job.py (t_breakdown's job) in windows on the simulator, the new
# one's copies on card 0 made about twice as long (each step's copies
# vary a little in both, so that each class has a spread to test).  Per
# class, each run's mean per step is export --breakdown --json's, all
# cards summed, over its steps; data movement grew by 50 ms a step, with
# its interval above 0, and grew most; idle shrank as much, but varies
# from step to step (card 1's long kernel in the last) so much that its
# interval holds 0, as does compute's, unchanged; other, 0 in every step,
# has no interval.  The table says the same, and the class that grew most.
# Across cards, two runs of two rank traces each (flex_ranks.py, the new
# one's card 0 later): each run's mean step-time spread, the change with
# Welch's interval and the straggler most often, recomputed from the
# traces.
source "$(dirname "$0")/lib.sh"

need python3 sqlite3

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
SPY="$CLIENT -c $T/spyremond.yaml"

for run in base new; do
	python3 "$ROOT/tests/integration/ops_job.py" "$T/control.sock" \
		"bd-$run" "$T/$run-job.json" || fail "ops_job.py failed"
done
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the daemon did not store the windows"
# each copy's length: 1 ms and up in the base run, 2 ms and up in the new
for run in base new; do
	python3 - "$T/$run-job.json" "$run" >"$T/$run.json" <<'PY' || fail "no $run trace"
import json, sys
d = json.load(open(sys.argv[1]))
long = 1000 if sys.argv[2] == "base" else 2000
n = 0
for e in d["traceEvents"]:
    if e.get("name", "").startswith("Memcpy"):
        e["dur"] = long + 50 * (n % 7)
        n += 1
assert n == 200, n
json.dump(d, sys.stdout)
PY
done

$SPY compare bd-base bd-new --trace-base "$T/base.json" --trace-new "$T/new.json" \
	--json >"$T/cmp.json" 2>"$T/err" || fail "compare --json failed: $(cat "$T/err")"
$SPY compare bd-base bd-new --trace-base "$T/base.json" --trace-new "$T/new.json" \
	>"$T/cmp.txt" 2>"$T/err" || fail "compare failed: $(cat "$T/err")"
sed -n '/^Where the time went/,/^Grew most/p' "$T/cmp.txt"
for run in base new; do
	$SPY export --trace "$T/$run.json" --breakdown --json >"$T/$run-bd.json" ||
		fail "export --breakdown of $run failed"
done
python3 - "$T/cmp.json" "$T/base-bd.json" "$T/new-bd.json" "$T/cmp.txt" <<'PY' || fail "the breakdown's comparison"
import json, sys
b = json.load(open(sys.argv[1]))["breakdown"]
rows = {c["class"]: c for c in b["classes"]}
KEYS = ("compute", "data_movement", "communication", "other", "idle")
CAUSES = ("host_wait", "launch_gap", "sync", "unexplained")
def per_step(path):
    d = json.load(open(path))
    steps = {}
    for c in d["cards"]:
        for s in c["steps"]:
            t = steps.setdefault(s["step"], dict.fromkeys(KEYS + CAUSES, 0))
            for k in KEYS:
                t[k] += s[k + "_us"] / 1000
            for k in CAUSES:
                t[k] += s["idle_causes"][k + "_us"] / 1000
    return list(steps.values())
base, new = per_step(sys.argv[2]), per_step(sys.argv[3])
assert b["base_steps"] == len(base) == 4 and b["new_steps"] == len(new) == 4, b
mean = lambda xs: sum(xs) / len(xs)
for k in KEYS + CAUSES:
    r = rows[k]
    for side, vals in (("base", base), ("new", new)):
        want = mean([s[k] for s in vals])
        assert abs(r[side + "_ms"] - want) < 1e-6, (k, side, r, want)
    assert abs(r["change_ms"] - (r["new_ms"] - r["base_ms"])) < 1e-9, r
dm, idle = rows["data_movement"], rows["idle"]
assert dm["change_ms"] > 40 and dm["change_lo_ms"] > 0, dm
assert dm["change_lo_ms"] < dm["change_ms"] < dm["change_hi_ms"], dm
assert abs(dm["change_ms"] + idle["change_ms"]) < 1e-6, (dm, idle)
# idle and compute vary from step to step (card 1's long kernel in the last)
assert idle["change_lo_ms"] < 0 < idle["change_hi_ms"], idle
cp = rows["compute"]
assert cp["change_ms"] == 0 and cp["change_lo_ms"] < 0 < cp["change_hi_ms"], cp
assert rows["other"]["change_lo_ms"] is None, rows["other"]
assert b["grew_most"] == "data_movement", b
txt = open(sys.argv[4]).read()
line = [l for l in txt.splitlines() if l.startswith("data movement ")][0]
assert "%+.3f" % dm["change_ms"] in line and "[%.3f, %.3f]" % (dm["change_lo_ms"], dm["change_hi_ms"]) in line, line
assert "Grew most: data movement, %+.3f ms per step." % dm["change_ms"] in txt, txt
PY
stop_daemon

# across cards: two runs of two ranks each (flex_ranks.py), the new one's
# card 0 (rank 1's) starting its work 150 µs later.  From the traces
# alone (ranks_check.py's reading): each step both ranks have, every
# card's step time, the spread and the straggler; each run's mean spread,
# its sd, the card that was the straggler most often, and Welch's
# interval of the change (the t quantile by bisection on the t density
# integrated numerically), against --json and the table.  The single-
# trace runs above: cards named cN, and the change of their spreads.
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"
FLEX=$ROOT/tests/data/traces/flex-allreduce-tp4.json
BASE=1760000000000000000
python3 "$ROOT/tests/integration/flex_ranks.py" "$FLEX" "$T/b0.json" "$T/b1.json" \
	"$T/ball.json" || fail "no base rank traces"
python3 "$ROOT/tests/integration/flex_ranks.py" "$FLEX" "$T/n0.json" "$T/n1.json" \
	"$T/nall.json" 150 || fail "no new rank traces"
python3 - "$BASE" >"$T/samples" <<'PY'
import sys
base = int(sys.argv[1])
for dev in range(4):
    for k in range(0, 45):
        print("%d %d 1 pwr=%d.0 busy=50" % (base + k * 10**6, dev, 50 + k % 3))
print("window rk-base %d %d" % (base, base + 20 * 10**6))
print("window rk-new %d %d" % (base + 22 * 10**6, base + 42 * 10**6))
PY
"$MKSAMPLES" "$T/rk.db" <"$T/samples" || fail "mksamples failed"
CMP=("$CLIENT" --db "$T/rk.db" compare rk-base rk-new --align
	--trace-base "$T/b0.json" --trace-base "$T/b1.json"
	--trace-new "$T/n0.json" --trace-new "$T/n1.json")
"${CMP[@]}" --json >"$T/rk.json" 2>"$T/err" || fail "compare --json of ranks: $(cat "$T/err")"
"${CMP[@]}" >"$T/rk.txt" 2>"$T/err" || fail "compare of ranks: $(cat "$T/err")"
sed -n '/^Across cards/,/^Spread change/p' "$T/rk.txt"
PYTHONPATH=$ROOT/tests/integration python3 - "$T/rk.json" "$T/rk.txt" \
	"$T/b0.json" "$T/b1.json" "$T/n0.json" "$T/n1.json" "$T/cmp.json" <<'PY' ||
import json, math, sys
from ranks_check import read_trace, in_step

def run(paths):
    traces = [read_trace(p) for p in paths]
    cards = [("r%dc%d" % (t[0], c), i, c) for i, t in enumerate(traces) for c in sorted(t[1])]
    order = [c[0] for c in cards]
    names = [set(s[0] for s in t[2]) for t in traces]
    common = [s[0] for s in traces[0][2] if all(s[0] in n for n in names)]
    count, spreads = dict.fromkeys(order, 0), []
    for name in common:
        fig = {}
        for label, i, c in cards:
            lo, hi = next((a, b) for n, a, b in traces[i][2] if n == name)
            fig[label] = in_step(traces[i][1][c], lo, hi)
        by = sorted(order, key=lambda l: (fig[l][0], fig[l][1], -order.index(l)))
        count[by[-1]] += 1
        spreads.append((fig[by[-1]][0] - fig[by[0]][0]) / 1e6)
    most = max(order, key=lambda l: (count[l], -order.index(l)))
    return len(cards), spreads, most, count[most]

def mean_sd(v):
    m = sum(v) / len(v)
    return m, math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))

def t_cdf(t, df):
    # the density integrated from 0 by Simpson's rule, 2000 panels
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    f = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)
    n, h = 2000, abs(t) / 2000
    s = f(0) + f(abs(t)) + sum((4 if k % 2 else 2) * f(k * h) for k in range(1, n))
    half = s * h / 3
    return 0.5 + half if t >= 0 else 0.5 - half

def t975(df):
    lo, hi = 0.0, 100.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < 0.975 else (lo, mid)
    return (lo + hi) / 2

x = json.load(open(sys.argv[1]))["breakdown"]["across_cards"]
txt = open(sys.argv[2]).read()
sides = {"base": run(sys.argv[3:5]), "new": run(sys.argv[5:7])}
for key, (ncards, spreads, most, nmost) in sides.items():
    g = x[key]
    m, sd = mean_sd(spreads)
    assert g["cards"] == ncards == 4 and g["steps"] == len(spreads) == 3, (key, g)
    assert abs(g["spread_ms"] - m) < 1e-9 and abs(g["spread_sd_ms"] - sd) < 1e-9, (key, g, m, sd)
    assert (g["straggler_most"], g["straggler_most_steps"]) == (most, nmost), (key, g, most, nmost)
    line = [l for l in txt.splitlines() if l.startswith(key + " ")]
    assert len(line) == 1 and line[0].split()[1:5] == ["4", "3", "%.3f" % m, "%.3f" % sd], line
    assert line[0].endswith("%s (%d of 3 steps)" % (most, nmost)), line
    print("%s: spreads %s ms, straggler most often %s (%d)" %
          (key, ["%.3f" % v for v in spreads], most, nmost))
(mb, sb), (mn, sn) = mean_sd(sides["base"][1]), mean_sd(sides["new"][1])
vb, vn = sb * sb / 3, sn * sn / 3
df = (vb + vn) ** 2 / (vb * vb / 2 + vn * vn / 2)
half = t975(df) * math.sqrt(vb + vn)
assert abs(x["spread_change_ms"] - (mn - mb)) < 1e-9, x
assert abs(x["spread_change_lo_ms"] - (mn - mb - half)) < 1e-6, (x, half)
assert abs(x["spread_change_hi_ms"] - (mn - mb + half)) < 1e-6, (x, half)
assert "Spread change: %+.3f ms per step, 95 %% interval [%.3f, %.3f]" % (
    mn - mb, mn - mb - half, mn - mb + half) in txt, txt
# by construction: the later card 0 widens the spread of the first step
assert mn > mb and sides["new"][1][0] > sides["base"][1][0], sides
# the single-trace runs above: card numbers, both sides
one = json.load(open(sys.argv[7]))["breakdown"]["across_cards"]
assert one["base"]["cards"] == one["new"]["cards"] == 2, one
assert one["base"]["straggler_most"] in ("c0", "c1"), one
assert abs(one["spread_change_ms"] - (one["new"]["spread_ms"] - one["base"]["spread_ms"])) < 1e-9, one
print("across cards: spread change %+.3f ms [%.3f, %.3f]" % (mn - mb, mn - mb - half, mn - mb + half))
PY
	fail "the across-cards comparison"
exit 0
