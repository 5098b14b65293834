#!/usr/bin/env bash
# spyremon capture with spyremond stopped: the trace is still taken and
# moved into the output, which holds nothing else (no window, merged
# trace, steps.csv or report, even with --report), and capture says so
# and exits with status 3.
source "$(dirname "$0")/lib.sh"

spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
STANDIN=$ROOT/tests/tools/kineto_standin.py

write_config 1 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
stop_daemon

mkdir -p "$T/kipc"
env KINETO_USE_DAEMON=1 "KINETO_IPC_SOCKET_DIR=$T/kipc" ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1 \
	python3 "$STANDIN" --log-tag "$T/job" >"$T/job.out" 2>"$T/job.log" &
wait_for 30 grep -q '^pid ' "$T/job.out" || fail "the job did not start"
P=$(sed -n '1s/^pid //p' "$T/job.out")

rc=0
spy capture --pid "$P" --duration 1s --report --output "$T/out" >"$T/cap.out" \
	2>"$T/cap.err" || rc=$?
cat "$T/cap.out" "$T/cap.err"
[ "$rc" -eq 3 ] || fail "exit status $rc, not 3"
grep -q "spyremond does not answer: taking the trace without the cards' telemetry" \
	"$T/cap.err" || fail "capture does not say it has no telemetry"
grep -q "exit status 3 says so" "$T/cap.err" || fail "capture does not explain its status"
ls "$T"/out/*_"$P".*.pt.trace.json >/dev/null || fail "no trace in the output"
[ "$(ls "$T/out" | wc -l)" -eq 1 ] || fail "more than the trace in the output: $(ls "$T/out")"
grep -q "Renamed the trace file" "$T/job.log" || fail "the job wrote no trace"
kill "$P"
exit 0
