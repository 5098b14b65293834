#!/usr/bin/env bash
# spyremon capture --pid LAUNCHER: a launcher (which does not poll) with 4
# profiled children, started 300 ms apart as torchrun starts ranks, so that
# they poll at points of the interval of their own: every child is asked,
# all trace the same planned span, and the output has one trace and one merged
# trace per rank, steps.csv with every rank's steps, and one window over
# the four spans.  --max-processes 2 asks two of them only.
source "$(dirname "$0")/lib.sh"

spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
STANDIN=$ROOT/tests/tools/kineto_standin.py
CHECK=$ROOT/tests/integration/capture_check.py

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 2 || fail "no row stored within 20s"

mkdir -p "$T/kipc"
env KINETO_USE_DAEMON=1 "KINETO_IPC_SOCKET_DIR=$T/kipc" \
	ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1 python3 "$STANDIN" --children 4 \
	--stagger-ms 300 --log-tag "$T/launcher" >"$T/launcher.out" 2>"$T/launcher.log" &
started() { [ "$(grep -c '^pid ' "$T/launcher.out")" -eq 5 ]; }
wait_for 30 started || fail "the launcher did not start 4 children"
L=$(sed -n '1s/^pid //p' "$T/launcher.out")
KIDS=$(sed -n '2,$s/^pid //p' "$T/launcher.out")

spy capture --pid "$L" --duration 2s --output "$T/out" >"$T/cap.out" \
	2>"$T/cap.err" || fail "capture failed ($?): $(cat "$T/cap.err")"
cat "$T/cap.out" "$T/cap.err"

spy windows --json >"$T/windows.json"
python3 -c 'import json,sys; w=[w for w in json.load(open(sys.argv[1])) if w["tag"]=="capture-'"$L"'"]; assert len(w)==1; json.dump(w[0], open(sys.argv[2],"w"))' \
	"$T/windows.json" "$T/win.json" || fail "no one window for the capture"
infos=()
for k in $KIDS; do
	tr=$(ls "$T"/out/*_"$k".*.pt.trace.json) || fail "no trace of rank process $k"
	[ -f "${tr%.pt.trace.json}.merged.json" ] || fail "no merged trace of process $k"
	python3 "$CHECK" merged "$tr" "${tr%.pt.trace.json}.merged.json" 2 ||
		fail "process $k's merged trace"
	spy trace info --json "$tr" >"$T/info-$k.json" || fail "trace info of $k"
	infos+=("$T/info-$k.json")
done
ls "$T"/out/*_"$L".*.pt.trace.json 2>/dev/null && fail "the launcher, which does not poll, has a trace"
[ "$(ls "$T"/out/*.pt.trace.json | wc -l)" -eq 4 ] || fail "not 4 traces"
python3 "$CHECK" span "$T/win.json" "${infos[@]}" --slack 100000000 ||
	fail "the window does not span the four traces"
# the same planned start: the four traces begin within 100 ms of each other
python3 - "${infos[@]}" <<'EOF' || fail "the ranks did not trace the same span"
import json, sys
s = [json.load(open(p))["start_ns"] for p in sys.argv[1:]]
print("rank starts spread %.3f ms" % ((max(s) - min(s)) / 1e6))
assert max(s) - min(s) < 100e6
EOF
python3 "$CHECK" steps "$T/out/steps.csv" 2 "${infos[@]}" || fail "steps.csv of four ranks"
[ "$(cut -d, -f2 "$T/out/steps.csv" | sed 1d | sort -u | tr '\n' ' ')" = "0 1 2 3 " ] ||
	fail "steps.csv does not give ranks 0 to 3: $(head -2 "$T/out/steps.csv")"

# --max-processes 2: two of the four
spy capture --pid "$L" --duration 1s --max-processes 2 --output "$T/two" \
	>"$T/two.out" 2>"$T/two.err" || fail "capture --max-processes 2 failed: $(cat "$T/two.err")"
[ "$(ls "$T"/two/*.pt.trace.json | wc -l)" -eq 2 ] || fail "--max-processes 2 did not give 2 traces"

kill "$L"
stop_daemon
exit 0
