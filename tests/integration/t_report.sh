#!/usr/bin/env bash
# The report workflow on the simulator, as a user runs it: the demo's
# profiled job (real torch where it imports, else its stand-in) opens its
# window with the Python helper, which records where the run came from;
# the daemon summarizes the window when it ends; "report" writes every
# file (report.md naming each checklist item, aiusmi.csv, steps.csv, PNGs
# of the stated size with drawn pixels in the plot area, well-formed
# SVGs, and with the stand-in's trace, which has device events,
# breakdown.png and .svg); "compare" says "within noise" for two idle windows and "higher"
# for a busy one, whose energy fails --fail-on-regression; then retention
# deletes every sample and summary prints the same as before.
source "$(dirname "$0")/lib.sh"

need python3
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"
sql() { sqlite3 "file:$DB?mode=ro" "$@"; }
spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
summarized() {
	[ -n "$(sql "SELECT summarized_ns FROM windows WHERE tag = '$1' AND summarized_ns IS NOT NULL")" ]
}

FLUSH=200ms write_config 2 100ms --workload "file:$T/busy"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 4 || fail "no rows stored within 20s"
sleep 1

# ---- the demo's profiled job, its window opened by the Python helper ----
if "$PY" -c 'import torch' 2>/dev/null; then job=profile_demo.py; else job=fake_trace.py; fi
echo "job: $job"
touch "$T/busy"
(cd "$ROOT" && SPYREMON_SOCKET=$T/control.sock "$PY" "$ROOT/contrib/torch/$job" \
	--tag demo-run --iterations 4 --step-seconds 0.3 --out "$T/trace.json") \
	>"$T/job.out" 2>"$T/err" || fail "$job failed: $(cat "$T/err")"
rm -f "$T/busy"
cat "$T/job.out"
# the test reads the database with sqlite3 itself: one sync first
PYTHONPATH=$ROOT/tests/integration "$PY" "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the daemon did not store demo-run"
summarized demo-run || fail "demo-run was not summarized"
meta=$(sql "SELECT meta FROM windows WHERE tag = 'demo-run'")
for key in host command git_sha; do
	echo "$meta" | grep -q "\"$key\"" || fail "the helper did not record $key: $meta"
done

spy summary --window demo-run --json >"$T/before.json" || fail "summary --json failed"
spy summary --window demo-run >"$T/before.txt" || fail "summary failed"
cat "$T/before.txt"

# ---- aiu-smi's version, asked at the child's start ----
spy status >"$T/status" || fail "status failed"
grep -q '^aiu-smi: .* aiu-smi -v: aiu-smi-sim version [0-9.]* (simulated aiu-smi)$' "$T/status" ||
	fail "status does not show aiu-smi's version: $(cat "$T/status")"
[ "$(sql "SELECT count(*) FROM smi_versions")" = 1 ] ||
	fail "smi_versions: $(sql "SELECT * FROM smi_versions")"

# ---- the report ----
# The job's trace has absolute time (fake_trace.py, torch with Kineto), or
# none (torch without Kineto), when the window's begin places it.
ALIGN=()
CALIGN=()
if spy trace info "$T/trace.json" | grep -q '^start *unknown'; then
	ALIGN=(--align-window demo-run)
	CALIGN=(--align)
fi
spy report --window demo-run --trace "$T/trace.json" "${ALIGN[@]}" \
	--output "$T/rep" >"$T/out" 2>"$T/err" || fail "report failed: $(cat "$T/err")"
cat "$T/out"
JOB=$job PYTHONPATH=$ROOT/tests/integration python3 - "$T/rep" <<'EOF' ||
import os, re, sys
import xml.etree.ElementTree as ET
from pngread import png

d = sys.argv[1]
want = {"report.md", "aiusmi.csv", "steps.csv"}
for p in ("power", "temperature", "bandwidth"):
    want |= {p + ".png", p + ".svg"}
# the charts of why it was slow and of the energy by category: a trace
# with device events (fake_trace.py's)
if os.environ.get("JOB") == "fake_trace.py":
    want |= {"breakdown.png", "breakdown.svg", "energy_categories.png",
             "energy_categories.svg"}
assert set(os.listdir(d)) == want, sorted(os.listdir(d))
md = open(os.path.join(d, "report.md")).read()
for item in ("Minimal reproducer", "Iteration count", "PyTorch version",
             "torch-spyre version and commit SHA", "aiu-smi output covering at "
             "least one full active iteration", "spyre_trace.json",
             "prof.key_averages().table(...)", "Expected against seen",
             "Previous metric", "## Summary", "## Steps", "## Notes on the data",
             "## Environment", "host clock at the window's begin", "aiu-smi version"):
    assert item in md, item
assert "4 active steps" in md, md
# the daemon asked the simulator "-v" when it started it (sim/simopts.c)
assert re.search(r"^- aiu-smi version: `aiu-smi-sim version [0-9.]+ "
                 r"\(simulated aiu-smi\)` \(`aiu-smi -v`, since 20[0-9-]+T",
                 md, re.M), md
for p in ("power", "temperature", "bandwidth"):
    assert "(%s.png)" % p in md, p
aiusmi = open(os.path.join(d, "aiusmi.csv")).read().splitlines()
assert aiusmi[0].startswith("ID,Date") or aiusmi[0].startswith("#"), aiusmi[0]
assert len(aiusmi) > 8, len(aiusmi)
steps = open(os.path.join(d, "steps.csv")).read().splitlines()
assert steps[0].startswith("step,device,"), steps[0]

panels = {"power": 2, "temperature": 1, "bandwidth": 4}
for p, n in panels.items():
    w, h, bpp, rows = png(os.path.join(d, p + ".png"))
    # plot.h: width 1200, height 60 + 60 + 300 per panel
    assert (w, h) == (1200, 120 + 300 * n), (p, w, h)
    # coloured (not grey) pixels inside the first panel's plot area: the lines
    coloured = 0
    for y in range(60 + 31, 60 + 300 - 41):
        r = rows[y]
        for x in range(91, 1200 - 151):
            px = r[x * bpp:x * bpp + 3]
            if max(px) - min(px) > 60:
                coloured += 1
    assert coloured > 500, (p, coloured)
    root = ET.parse(os.path.join(d, p + ".svg")).getroot()
    assert root.tag.endswith("svg"), root.tag
    assert root.get("width").startswith("1200"), root.get("width")
print("report: every file, checklist items, plots of the right size with lines")
EOF
	fail "the report is wrong"
spy report --window demo-run --output "$T/rep" 2>"$T/err" && fail "report over a non-empty directory succeeded"
grep -q "not empty" "$T/err" || fail "non-empty directory: $(cat "$T/err")"
ls "$T" | grep -q 'rep\.tmp' && fail "a failed report left a directory behind"

# ---- compare: two idle windows, then a busy one ----
for w in idle-a idle-b busy-c; do
	[ "$w" = busy-c ] && touch "$T/busy"
	spy mark begin --tag "$w" >/dev/null || fail "mark begin $w"
	sleep 3
	spy mark end --tag "$w" >/dev/null || fail "mark end $w"
	rm -f "$T/busy"
	sleep 0.5
done
spy compare idle-a idle-b >"$T/cmp1" || fail "compare idle-a idle-b failed"
cat "$T/cmp1"
spy compare idle-a idle-b --json >"$T/cmp1.json" || fail "compare --json failed"
spy compare idle-a busy-c --json >"$T/cmp2.json" || fail "compare idle-a busy-c failed"
python3 - "$T/cmp1.json" "$T/cmp2.json" <<'EOF' || fail "compare's verdicts are wrong"
import json, sys
same, busy = (json.load(open(p)) for p in sys.argv[1:])
def verdicts(c):
    return {f["card"]: f["verdict"] for f in c["figures"] if f["figure"] == "power_mean"}
assert set(verdicts(same).values()) == {"within noise"}, verdicts(same)
assert set(verdicts(busy).values()) == {"higher"}, verdicts(busy)
for f in busy["figures"]:
    if f["figure"] == "power_mean":
        assert f["new"] > f["base"] and f["rel_change_pct"] > 2 and f["p"] < 0.05, f
assert busy["base"]["window"]["tag"] == "idle-a" and busy["new"]["window"]["tag"] == "busy-c"
print("compare: within noise, and higher")
EOF
rc=0
spy compare idle-a busy-c --fail-on-regression 5 >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 5 ] || fail "--fail-on-regression exited $rc, not 5"
grep -q "regression: energy of all cards rose" "$T/err" || fail "no regression said: $(cat "$T/err")"
spy compare idle-a idle-b --fail-on-regression 50 >/dev/null || fail "no regression, yet a failure"

# the job's trace against itself: its 4 steps
spy compare demo-run demo-run --trace-base "$T/trace.json" --trace-new "$T/trace.json" \
	"${CALIGN[@]}" --json >"$T/cmp3.json" || fail "compare with the job's trace failed"
# a trace without absolute time (the legacy one of tests/data/traces, 5
# iterations): compare places it only with --align
L=$ROOT/tests/data/traces/legacy-autograd-no-epoch.json.gz
spy compare demo-run demo-run --trace-base "$L" --trace-new "$L" \
	2>"$T/err" && fail "compare placed a trace without absolute time without --align"
spy compare demo-run demo-run --trace-base "$L" --trace-new "$L" \
	--align --json >"$T/cmp4.json" || fail "compare --align failed"
python3 - "$T/cmp3.json" "$T/cmp4.json" <<'EOF' || fail "compare with traces is wrong"
import json, sys
for path, n in zip(sys.argv[1:], (4, 5)):
    c = json.load(open(path))
    t = [f for f in c["figures"] if f["figure"] == "step_time"][0]
    assert t["verdict"] == "within noise" and t["base_n"] == n and t["base"] == t["new"], t
EOF

# ---- retention deletes every sample; the summary stays ----
stop_daemon
echo "retention $(( $(date +%s) * 1000000000 + 1000 * 3600 * 1000000000 )) 3600000000000 3600000000000" |
	"$MKSAMPLES" "$DB" || fail "retention failed"
[ "$(sql 'SELECT count(*) FROM samples')" = 0 ] || fail "retention left samples"
spy summary --window demo-run --json >"$T/after.json" || fail "summary after retention failed"
cmp -s "$T/before.json" "$T/after.json" || fail "summary changed: $(diff "$T/before.json" "$T/after.json")"
spy summary --window demo-run >"$T/after.txt"
cmp -s "$T/before.txt" "$T/after.txt" || fail "summary table changed"
echo "summary of demo-run unchanged after retention deleted every sample"
exit 0
