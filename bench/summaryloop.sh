#!/bin/bash
# Does summarizing an ended window stall the daemon's event loop?  Each
# daemon starts on a copy of one database holding an ended, unsummarized
# one-hour window at 10 Hz from 8 cards (a day at 1 Hz around it, built by
# bench-mkdb -w 10).  Its first flush tick summarizes that window.  All the
# while one connection asks "hello" every 5 ms, and the round trips give
# the loop's answer time, p50, p99 and max, side by side for the baseline
# build and this one.
#
#   make B=build bench && BASE_B=/path/to/other/build bench/summaryloop.sh [SECONDS]
#
# Environment: B (this build, default build), BASE_B (the baseline build
# directory; omitted: only B), RUNS (runs per build, default 3).
set -euo pipefail
B=${B:-build}
secs=${1:-6}
runs=${RUNS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $B in /*) ;; *) B=$ROOT/$B ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-bench-sumloop.XXXXXX")
dpid=
cleanup() {
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; then
		kill -TERM "$dpid"
		wait "$dpid" || true
	fi
	rm -rf "$T"
}
trap cleanup EXIT

[ -x "$B/bench-mkdb" ] || { echo "bench: build first: make B=$B bench" >&2; exit 1; }
"$B/bench-mkdb" -w 10 "$T/live.db" 1 | sed 's/^/   /'

one() {	# one() BUILD LABEL
	local bin=$1 label=$2
	rm -f "$T"/db* "$T/sock"
	cp "$T/live.db" "$T/db"
	cat >"$T/conf.yaml" <<EOF
database: $T/db
socket: $T/sock
sysfs_root: $T
flush_interval: 1s
source:
  command: ["$bin/aiu-smi-sim", "--cards", "8", "--seed", "1"]
  interval: 100ms
  window_interval: 100ms
  metric_files: $T/metrics.%BUSID
EOF
	"$bin/spyremond" -c "$T/conf.yaml" 2>"$T/log" &
	dpid=$!
	for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.02; done
	[ -S "$T/sock" ] || { cat "$T/log" >&2; echo "bench: no socket" >&2; exit 1; }
	PYTHONPATH=$ROOT/tests/integration python3 - "$T/sock" "$secs" "$label" <<'EOF'
import sys, time
from ctlclient import Conn
c = Conn(sys.argv[1])
end = time.monotonic() + float(sys.argv[2])
rtt = []
while time.monotonic() < end:
    t0 = time.monotonic_ns()
    r = c.ask({"v": 1, "cmd": "hello"})
    rtt.append((time.monotonic_ns() - t0) / 1e6)
    assert r["ok"], r
    time.sleep(0.005)
rtt.sort()
print("%-9s hello round trips: %5d  p50 %6.2f ms  p99 %7.2f ms  max %7.2f ms  over 100 ms: %d"
      % (sys.argv[3], len(rtt), rtt[len(rtt) // 2], rtt[int(len(rtt) * 0.99)],
         rtt[-1], sum(1 for x in rtt if x > 100)))
EOF
	kill -TERM "$dpid"
	wait "$dpid" || true
	dpid=
	echo "          windows summarized: $(sqlite3 "$T/db" 'SELECT count(*) FROM window_summary')"
}

for i in $(seq "$runs"); do
	[ -n "${BASE_B:-}" ] && one "$BASE_B" baseline
	one "$B" this
done
