#!/bin/bash
# Time from "spyremon capture" to its finished output directory, against
# the profiled stand-in (tests/tools/kineto_standin.py) or, with
# KPROG=PATH, a program linked with libkineto (bench/README.md, "capture.sh"
# says how that one was built), while spyremond samples 2 simulated cards
# at 100 ms.
#
#   make && bench/capture.sh [RUNS [INTERVAL_S [DURATION]]]   (defaults: 5 5 2s)
#   KPROG=/work/ext/kprog/kprog bench/capture.sh ...
#   REPORT=1 bench/capture.sh ...        (capture --report)
#
# The process polls every INTERVAL_S (ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS
# in the file KINETO_CONFIG names, as Kineto reads it).  Before each run a
# random pause of up to INTERVAL_S puts the command at a random point of
# the poll cycle.  Each run prints the total and its parts:
#   poll    from the command to the request being handed over (the
#           planned start minus warm-up, Kineto's tick and the margin);
#   lead    from there to the planned start (warm-up 0 + 1.25 s);
#   trace   the duration;
#   after   from the trace's end (as the trace gives it) to the command's
#           exit: the profiler's next tick, its writing of the trace, and
#           capture's copy, window end, merged trace and steps.csv (and
#           report).
# and the target: at most one poll interval plus warm-up, duration and 1 s.
set -euo pipefail
B=${B:-build}
runs=${1:-5}
interval=${2:-5}
duration=${3:-2s}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/$B
T=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-bench-capture.XXXXXX")
dpid= ppid=
cleanup() {
	[ -n "$ppid" ] && kill "$ppid" 2>/dev/null || true
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; then
		kill -TERM "$dpid"
		wait "$dpid" || true
	fi
	rm -rf "$T"
}
trap cleanup EXIT

[ -x "$BIN/spyremond" ] || { echo "bench: build first: make B=$B" >&2; exit 1; }

mkdir -p "$T/sys" "$T/kipc"
cat >"$T/conf.yaml" <<EOF
database: $T/db
socket: $T/sock
sysfs_root: $T/sys
source:
  command: ["$BIN/aiu-smi-sim", "--cards", "2", "--seed", "1"]
  interval: 100ms
  window_interval: 100ms
  metric_files: $T/metrics.%BUSID
EOF
echo "ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=$interval" >"$T/libkineto.conf"
"$BIN/spyremond" -c "$T/conf.yaml" 2>"$T/daemon.log" &
dpid=$!
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.1; done

export KINETO_USE_DAEMON=1 KINETO_IPC_SOCKET_DIR=$T/kipc KINETO_CONFIG=$T/libkineto.conf
if [ -n "${KPROG:-}" ]; then
	what="libkineto ($KPROG)"
	"$KPROG" 100000 >"$T/job.out" 2>"$T/job.log" &
	ppid=$!
else
	what="the stand-in"
	python3 "$ROOT/tests/tools/kineto_standin.py" --seconds 100000 \
		>"$T/job.out" 2>"$T/job.log" &
	ppid=$!
fi
unset KINETO_USE_DAEMON KINETO_IPC_SOCKET_DIR KINETO_CONFIG
sleep 2

dur_s=$(python3 -c 'import sys; s=sys.argv[1]; print(float(s[:-2])/1000 if s.endswith("ms") else float(s.rstrip("s")))' "$duration")
echo "capture of $what, poll interval ${interval}s, duration $duration${REPORT:+, --report}, $runs runs"
printf '%-4s %8s %8s %8s %8s %8s %8s\n' run total poll lead trace after target
for i in $(seq "$runs"); do
	sleep "$(python3 -c "import random; print(random.uniform(0, $interval))")"
	t0=$(date +%s%N)
	"$BIN/spyremon" -c "$T/conf.yaml" capture --pid "$ppid" --duration "$duration" \
		${REPORT:+--report} --output "$T/out-$i" >"$T/cap-$i.out" 2>"$T/cap-$i.err" ||
		{ echo "run $i failed:"; cat "$T/cap-$i.err"; echo "the job's log:";
		  grep -v "^ " "$T/job.log" | tail -n 12; exit 1; }
	t1=$(date +%s%N)
	start=$(sed -n 's/.*took the request: [0-9.]*s from \(.*\)$/\1/p' "$T/cap-$i.err")
	trace=$(ls "$T"/out-"$i"/*.pt.trace.json)
	end=$("$BIN/spyremon" trace info --json "$trace" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["end_ns"])')
	python3 - "$i" "$t0" "$t1" "$start" "$end" "$interval" "$dur_s" <<'EOF'
import datetime, sys
i, t0, t1, start, end, interval, dur = sys.argv[1:]
t0, t1, end = int(t0) / 1e9, int(t1) / 1e9, int(end) / 1e9
start = datetime.datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp()
lead = 1.25
served = start - lead
target = float(interval) + 0 + float(dur) + 1
print("%-4s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f%s" % (
    i, t1 - t0, served - t0, lead, end - start, t1 - end, target,
    "" if t1 - t0 <= target else "  over by %.3f" % (t1 - t0 - target)))
EOF
done
