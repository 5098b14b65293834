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
exit 0
