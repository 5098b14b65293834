#!/usr/bin/env bash
# spyremon.profile() in a real torch.profiler run (Debian's python3-torch)
# against the daemon on the simulator, then spyremon report on its window
# with no option but --window and --output: every item of the
# methodology checklist is filled from what the run recorded (the
# reproducer, the key_averages() table, the trace and its iterations, the
# versions) but "expected against seen", which is filled too when
# expect= was given, and says met or NOT met.  --expect wins over the
# recorded expectation and is checked for sense; a reproducer changed
# after the run is not passed off as the run's.  The helper installs with
# pip from the tree into a virtual environment, offline.
source "$(dirname "$0")/lib.sh"

torch_python || { echo "$SKIP_WHY"; exit 77; }

FLUSH=200ms write_config 1 100ms --workload "file:$T/busy"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
SPY="$CLIENT -c $T/spyremond.yaml"

# the job a user would write; argv: TAG OUT [EXPECT]; $BASELINE=1 records
# the run as its workload's baseline
cat >"$T/job.py" <<'PY'
import os, sys, time
import torch
import spyremon

x = torch.randn(128, 128)
w = torch.randn(128, 128) / 128 ** 0.5
kw = {"expect": sys.argv[3]} if len(sys.argv) > 3 else {}
kw["baseline"] = os.environ.get("BASELINE") == "1"
with spyremon.profile(sys.argv[1], out=sys.argv[2], **kw) as p:
    for _ in range(p.steps):
        with p.step():
            end = time.monotonic() + 0.15
            while time.monotonic() < end:
                torch.relu(x @ w) @ w
print("window %d, %d steps, trace %s" % (p.id, p.steps, p.trace))
PY

# run_job TAG OUT [EXPECT]: the job while the card is busy, then the
# window stored
run_job() {
	touch "$T/busy"
	SPYREMON_SOCKET=$T/control.sock PYTHONPATH=$ROOT/contrib/python \
		"$PY" "$T/job.py" "$@" >"$T/job.out" 2>"$T/err" ||
		fail "the job failed: $(cat "$T/err")"
	rm -f "$T/busy"
	cat "$T/job.out"
	PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
		"$T/control.sock" || fail "the daemon did not store window $1"
}

# blanks DIR: the lines of DIR/report.md still TO FILL IN
blanks() {
	grep -n "TO FILL IN" "$1/report.md" || true
}

# ---- with an expectation: nothing left to fill in ----
run_job met "$T/met" 'step_ms <= 100000'
$SPY report --window met --output "$T/rmet" >"$T/out" 2>"$T/err" ||
	fail "report failed: $(cat "$T/err")"
[ -z "$(blanks "$T/rmet")" ] || fail "report.md of a profile() run with expect= has blanks:
$(blanks "$T/rmet")"
md=$T/rmet/report.md
grep -q '^- \[x\] \*\*Minimal reproducer:\*\* `reproducer.py`' "$md" ||
	fail "no reproducer: $(grep -n 'reproducer' "$md")"
cmp -s "$T/job.py" "$T/rmet/reproducer.py" || fail "reproducer.py is not the job's script"
cmp -s "$T/met/key_averages.txt" "$T/rmet/key_averages.txt" ||
	fail "key_averages.txt is not the run's table"
grep -q "Self CPU" "$md" || fail "the key_averages() table is not in report.md"
grep -q '^- \[x\] \*\*Iteration count:\*\* 5 active steps' "$md" ||
	fail "not 5 active steps: $(grep -n 'Iteration count' "$md")"
grep -q '^- \[x\] \*\*PyTorch version:\*\* `'"$("$PY" -c 'import torch; print(torch.__version__)')"'`' "$md" ||
	fail "no torch version: $(grep -n 'PyTorch version' "$md")"
grep -q '^- \[x\] \*\*Expected against seen:\*\* expected `step_ms<=100000` (window metadata); seen step_ms = .*: \*\*met\*\*' "$md" ||
	fail "expectation not stated as met: $(grep -n 'Expected' "$md")"
# the reproducer's block holds the script line for line
python3 - "$md" "$T/job.py" <<'PY' || fail "the Reproducer section is not the script"
import sys
md, script = open(sys.argv[1]).read(), open(sys.argv[2]).read()
block = md.split("### Reproducer\n\n```python\n", 1)[1].split("\n```\n", 1)[0]
sys.exit(0 if block + "\n" == script else 1)
PY
echo "with expect=: report.md has no blank; $(grep -c . "$md") lines"

grep -q '^- \[ \] \*\*Previous metric (for a regression):\*\* none: no `--baseline` was given, and no earlier window is recorded as the baseline of workload `met`' "$md" ||
	fail "no baseline not said: $(grep -n 'Previous metric' "$md")"

# ---- without one: only "expected against seen" is left; the previous
# metric is the run recorded as the workload's baseline ----
BASELINE=1 run_job plain "$T/plain-base"
base=$(sqlite3 "file:$DB?mode=ro" "SELECT max(id) FROM windows")
run_job plain "$T/plain"
$SPY report --window plain --output "$T/rplain" >/dev/null 2>"$T/err" ||
	fail "report failed: $(cat "$T/err")"
grep -q "^- \[x\] \*\*Previous metric:\*\* window $base 'plain', the newest recorded as the baseline of workload \`plain\`" "$T/rplain/report.md" ||
	fail "the recorded baseline is not the previous metric: $(grep -n 'Previous metric' "$T/rplain/report.md")"
grep -q '^## Against the baseline' "$T/rplain/report.md" || fail "no comparison with the baseline"
left=$(blanks "$T/rplain" | grep -v -e 'Expected against seen' -e '- Expected:' -e '- Seen:' || true)
[ -z "$left" ] || fail "blanks besides the expectation: $left"
[ "$(blanks "$T/rplain" | wc -l)" -eq 3 ] || fail "not the expectation's 3 blanks: $(blanks "$T/rplain")"

# --expect wins, and says what it saw
$SPY report --window plain --expect 'step_ms<1' --output "$T/rnot" >/dev/null 2>"$T/err" ||
	fail "report --expect failed: $(cat "$T/err")"
grep -q 'expected `step_ms<1` (--expect); seen step_ms = .*\*\*NOT met\*\*' "$T/rnot/report.md" ||
	fail "--expect not stated as NOT met: $(grep -n 'Expected' "$T/rnot/report.md")"
rc=0
$SPY report --window plain --expect 'speed<3' --output "$T/rbad" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "a bad --expect exited $rc, not 2"
grep -q "the metric 'speed' is not one of step_ms, step_j, energy_j" "$T/err" ||
	fail "a bad --expect: $(cat "$T/err")"
[ ! -e "$T/rbad" ] || fail "a refused report left $T/rbad"

# a reproducer changed after the run is not the run's
echo "# changed" >>"$T/plain/reproducer.py"
$SPY report --window plain --output "$T/rchanged" >/dev/null 2>"$T/err" ||
	fail "report failed: $(cat "$T/err")"
grep -q '^- \[ \] \*\*Minimal reproducer:\*\* \*\*TO FILL IN:\*\* `.*reproducer.py` is no longer the script of the run' \
	"$T/rchanged/report.md" || fail "a changed reproducer: $(grep -n 'reproducer' "$T/rchanged/report.md")"
[ ! -e "$T/rchanged/reproducer.py" ] || fail "a changed reproducer was copied"
stop_daemon

# the helper from the tree, with pip, into a virtual environment, offline
if "$PY" -m venv "$T/venv" >"$T/venv.log" 2>&1; then
	"$T/venv/bin/pip" install --no-index "$ROOT/contrib/python" >"$T/pip.log" 2>&1 ||
		{ cat "$T/pip.log"; fail "pip install contrib/python failed"; }
	"$T/venv/bin/python" -c 'import spyremon; spyremon.profile; print("pip: spyremon from", spyremon.__file__)' ||
		fail "the installed helper does not import"
	"$T/venv/bin/python" -c 'import spyremon; spyremon.profile("x", expect="fast")' 2>"$T/err" &&
		fail "profile(expect='fast') was taken"
	grep -q "is not 'METRIC OP NUMBER'" "$T/err" || fail "profile(expect='fast'): $(cat "$T/err")"
else
	fail "$PY -m venv failed (python3-venv missing?): $(cat "$T/venv.log")"
fi
exit 0
