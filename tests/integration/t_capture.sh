#!/usr/bin/env bash
# spyremon capture against one profiled process (tests/tools/
# kineto_standin.py, which polls as libkineto does) with the real daemon on
# the simulator: "capture --pid P --duration 2s --output D --report" puts
# in D the trace, the trace with a counter track set per card and every
# original event unchanged, steps.csv and report.md, exit 0; the window
# spans the trace to within one sampling interval and records the pid,
# the trace id (the trace's own), the command and the host (and the torch
# the job has loaded, where a python here has torch); the trace is moved
# out of /tmp.  A second process on the same socket that was not
# asked for gets empty replies and traces nothing.  The same by iterations,
# through the abstract name "\0dynolog\0" (in a network namespace of its
# own, so that no other test or daemon shares the name), and a process
# whose KINETO_ONDEMAND_TRACE_DIR (set inside it) refuses /tmp, whose trace
# is found at Kineto's default path.
source "$(dirname "$0")/lib.sh"

spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
STANDIN=$ROOT/tests/tools/kineto_standin.py
CHECK=$ROOT/tests/integration/capture_check.py
INTERVAL_NS=100000000

# start_standin NAME [env...] -- [args...]: a stand-in, its pid in $PID_NAME
start_standin() {
	local name=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	env "${envs[@]}" python3 "$STANDIN" --log-tag "$T/$name" "$@" \
		>"$T/$name.out" 2>"$T/$name.log" &
	wait_for 30 grep -q '^pid ' "$T/$name.out" || fail "$name did not start"
	eval "PID_$name=$(sed -n '1s/^pid //p' "$T/$name.out")"
}

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 2 || fail "no row stored within 20s"

mkdir -p "$T/kipc"
KENV=(KINETO_USE_DAEMON=1 "KINETO_IPC_SOCKET_DIR=$T/kipc"
	ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1)
start_standin job "${KENV[@]}"
start_standin bystander "${KENV[@]}"
P=$PID_job

spy capture --pid "$P" --duration 2s --output "$T/out" --report \
	>"$T/cap.out" 2>"$T/cap.err" || fail "capture failed ($?): $(cat "$T/cap.err")"
cat "$T/cap.out" "$T/cap.err"

# the files
TRACE=$(ls "$T"/out/*_"$P".*.pt.trace.json) || fail "no trace in the output"
MERGED=${TRACE%.pt.trace.json}.merged.json
[ -f "$MERGED" ] || fail "no merged trace"
for f in steps.csv report.md aiusmi.csv power.png; do
	[ -f "$T/out/$f" ] || fail "no $f in the output"
done
ls "$T/out" | grep -q '\.tmp' && fail "a temporary file is left in the output"
ls /tmp/spyremon-capture-*_"$P".pt.trace.json 2>/dev/null &&
	fail "the trace was copied, not moved, out of /tmp"

# the window: its span is the trace's, its metadata the process's
spy windows --json >"$T/windows.json"
python3 - "$T/windows.json" "$T/win.json" <<'EOF' || fail "no capture window"
import json, sys
# (a first window spanning nothing: a refusal asked again, on a loaded host)
ws = [w for w in json.load(open(sys.argv[1])) if w["tag"].startswith("capture-")
      and w["end_ns"] != w["begin_ns"]]
assert len(ws) == 1 and not ws[0]["open"], ws
json.dump(ws[0], open(sys.argv[2], "w"))
EOF
WID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/win.json")
meta() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["meta"].get(sys.argv[2], ""))' "$T/win.json" "$1"; }
[ "$(meta pid)" = "$P" ] || fail "window meta pid is '$(meta pid)', not $P"
meta command | grep -q kineto_standin.py || fail "window meta command: $(meta command)"
[ "$(meta host)" = "$(hostname)" ] || fail "window meta host: $(meta host)"
TRACE_ID=$(meta trace_id)
[ -n "$TRACE_ID" ] || fail "no trace_id in the window's metadata"
python3 "$CHECK" trace "$TRACE" --trace-id "$TRACE_ID" --pid "$P" || fail "the trace"
spy trace info --json "$TRACE" >"$T/info.json" || fail "trace info"
python3 "$CHECK" span "$T/win.json" "$T/info.json" --slack $INTERVAL_NS ||
	fail "the window does not span the trace"
grep -q "^window $WID (capture-$P): " "$T/cap.out" || fail "capture does not name its window"
grep -q "answering the profiler's polls on $T/kipc/dynolog" "$T/cap.err" ||
	fail "capture does not say which socket it answers on"

# the merged trace: every original event unchanged, a counter set per card
python3 "$CHECK" merged "$TRACE" "$MERGED" 2 || fail "the merged trace"
python3 "$CHECK" steps "$T/out/steps.csv" 2 "$T/info.json" || fail "steps.csv"
grep -q "capture-$P" "$T/out/report.md" || fail "report.md does not name the window"
grep -q "attach \`$TRACE\`" "$T/out/report.md" || fail "report.md does not name the trace where it is"
grep -q '\.tmp-' "$T/out/report.md" && fail "report.md names a temporary directory"

# the bystander polled the same socket and was given nothing
grep -q "Received config" "$T/bystander.log" && fail "the bystander was given a request"
grep -q "Received config" "$T/job.log" || fail "the job's log shows no request"

# by iterations: 5 steps
spy capture --pid "$P" --iterations 5 --tag by-steps --output "$T/iter" \
	>"$T/iter.out" 2>"$T/iter.err" || fail "capture --iterations failed: $(cat "$T/iter.err")"
ITRACE=$(ls "$T"/iter/*_"$P".*.pt.trace.json) || fail "no trace by iterations"
n=$(spy trace info --json "$ITRACE" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["steps"]))')
[ "$n" -ge 4 ] && [ "$n" -le 5 ] || fail "a trace of 5 iterations has $n steps"
[ -f "$T/iter/steps.csv" ] || fail "no steps.csv by iterations"

# the abstract name, in a network namespace of its own
if unshare -n true 2>/dev/null; then
	unshare -n env KINETO_USE_DAEMON=1 ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1 \
		python3 "$STANDIN" --log-tag "$T/abs" >"$T/abs.out" 2>"$T/abs.log" &
	wait_for 30 grep -q '^pid ' "$T/abs.out" || fail "abs did not start"
	A=$(sed -n '1s/^pid //p' "$T/abs.out")
	nsenter --net=/proc/"$A"/ns/net "$CLIENT" -c "$T/spyremond.yaml" capture \
		--pid "$A" --duration 1s --output "$T/abs-out" >"$T/abs-cap.out" \
		2>"$T/abs-cap.err" || fail "capture over the abstract name failed: $(cat "$T/abs-cap.err")"
	ls "$T"/abs-out/*_"$A".*.merged.json >/dev/null || fail "no merged trace over the abstract name"
	grep -q "answering the profiler's polls on @dynolog@ (abstract)" "$T/abs-cap.err" ||
		fail "capture does not say it answers on the abstract name: $(cat "$T/abs-cap.err")"
	kill "$A"
else
	echo "no network namespaces here: the abstract name is not tried"
fi

# KINETO_ONDEMAND_TRACE_DIR, set inside the job, refuses /tmp: Kineto's default path
mkdir -p "$T/allowed"
start_standin strict "${KENV[@]}" -- --ondemand-dir "$T/allowed"
S=$PID_strict
spy capture --pid "$S" --duration 1s --output "$T/strict" >"$T/strict.out" \
	2>"$T/strict.err" || fail "capture of the strict job failed: $(cat "$T/strict.err")"
grep -q "Ignoring on-demand ACTIVITIES_LOG_FILE" "$T/strict.log" ||
	fail "the strict job took the path"
grep -q "wrote its trace to /tmp/libkineto_activities_$S.json" "$T/strict.err" ||
	fail "capture does not say where the trace was: $(cat "$T/strict.err")"
ls "$T"/strict/*_"$S".*.pt.trace.json >/dev/null || fail "the strict job's trace is not in the output"
[ -e "/tmp/libkineto_activities_$S.json" ] && fail "the default-path trace was left in /tmp"

# the window records the torch the job has loaded, where a python has one
TPY=
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import torch' 2>/dev/null; then TPY=$py; break; fi
done
if [ -n "$TPY" ]; then
	TV=$("$TPY" -c 'import torch; print(torch.__version__)')
	env "${KENV[@]}" "$TPY" "$STANDIN" --import-torch --log-tag "$T/torch" \
		>"$T/torch.out" 2>"$T/torch.log" &
	wait_for 60 grep -q '^pid ' "$T/torch.out" || fail "the torch job did not start"
	TP=$(sed -n '1s/^pid //p' "$T/torch.out")
	spy capture --pid "$TP" --duration 1s --tag with-torch --output "$T/torch-out" \
		>/dev/null 2>"$T/torch-cap.err" || fail "capture of the torch job: $(cat "$T/torch-cap.err")"
	got=$(spy windows --tag with-torch --json | python3 -c 'import json,sys; print([w for w in json.load(sys.stdin) if w["end_ns"] != w["begin_ns"]][0]["meta"].get("torch", ""))')
	[ "$got" = "$TV" ] || fail "window meta torch is '$got', not '$TV'"
	echo "the window records torch $got"
	kill "$TP"
else
	echo "no python here has torch: the torch metadata is not tried"
fi

kill "$PID_job" "$PID_bystander" "$S"
stop_daemon
exit 0
