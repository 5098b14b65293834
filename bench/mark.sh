#!/bin/bash
# Round-trip time of "mark begin" and "mark end" over the control socket,
# p50 and p99, while the daemon samples 8 cards at 100 Hz on the simulator.
#
#   make B=build bench && bench/mark.sh [PAIRS_RAW [PAIRS_CLI]]   (defaults: 1000 200)
#   (B=build-x bench/mark.sh for another build directory)
#
# source.interval and source.window_interval are both 10ms, so opening a
# window changes nothing else.  Three clients, one after the other:
#   (a) bench-markrtt (bench/markrtt.c): the raw protocol, one
#       connection per request as spyremon makes it; first PAIRS_RAW no-op
#       "hello" requests, the floor, then PAIRS_RAW begin/end pairs;
#   (b) the spyremon command, one process per request (fork+exec included),
#       PAIRS_CLI pairs, after PAIRS_CLI runs of "spyremon --version" (the
#       cost of starting the program at all);
#   (c) contrib/python/spyremon.py's request(), begin() and end() from one
#       python3 process, PAIRS_RAW of each.
# Then, for each of (a), (b) and (c), and for 2 s with no client before
# them, the rows stamped and the longest gap between two samples of card 0:
# sampling must keep its rate.
#
# MARKRTT=PATH times with another bench-markrtt (the default is $B's);
# RAW_ONLY=1 runs (a) alone (bench/mark_ab.sh, two builds side by side).
#
# CHECKPOINT=1 runs checkpoints all along: another process runs
# "PRAGMA wal_checkpoint(TRUNCATE)" on the database every 50 ms, which
# waits for and blocks the daemon's writes, as an import or a reader's
# checkpoint would.
set -euo pipefail
B=${B:-build}
pairs=${1:-1000}
cli_pairs=${2:-200}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $B in /*) BIN=$B ;; *) BIN=$ROOT/$B ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-bench-mark.XXXXXX")
dpid=
cleanup() {
	if [ -n "${cpid:-}" ]; then
		kill "$cpid" 2>/dev/null || true
		wait "$cpid" 2>/dev/null || true
	fi
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; then
		kill -TERM "$dpid"
		wait "$dpid" || true
	fi
	rm -rf "$T"
}
trap cleanup EXIT

MARKRTT=${MARKRTT:-$BIN/bench-markrtt}
[ -x "$BIN/spyremond" ] && [ -x "$MARKRTT" ] ||
	{ echo "bench: build first: make B=$B bench" >&2; exit 1; }

cat >"$T/conf.yaml" <<EOF
database: $T/db
socket: $T/sock
sysfs_root: $T
source:
  command: ["$BIN/aiu-smi-sim", "--cards", "8", "--seed", "1"]
  interval: 10ms
  window_interval: 10ms
  metric_files: $T/metrics.%BUSID
EOF
"$BIN/spyremond" -c "$T/conf.yaml" 2>"$T/log" &
dpid=$!

ns() { echo "${EPOCHREALTIME/./}000"; }
for _ in $(seq 50); do [ -S "$T/sock" ] && break; sleep 0.1; done
[ -S "$T/sock" ] || { cat "$T/log" >&2; echo "bench: no socket" >&2; exit 1; }
sleep 3	# start-up: the first header and catalog work are not steady state

cpid=
if [ "${CHECKPOINT:-0}" = 1 ]; then
	while :; do
		sqlite3 -cmd '.timeout 1000' "$T/db" 'PRAGMA wal_checkpoint(TRUNCATE)' \
			>/dev/null 2>&1 || true
		sleep 0.05
	done &
	cpid=$!
	echo "checkpoints: PRAGMA wal_checkpoint(TRUNCATE) every 50 ms from another process"
fi
echo "daemon: 8 cards, interval 10ms, window_interval 10ms; $(nproc) CPUs"
i0=$(ns)
sleep 2	# the same measures of sampling with no client, for comparison
i1=$(ns)
echo "(a) raw protocol, one connection per request (bench/markrtt.c):"
a0=$(ns)
"$MARKRTT" "$T/sock" "$pairs"
a1=$(ns)
if [ "${RAW_ONLY:-0}" = 1 ]; then
	exit 0
fi

echo "(b) spyremon mark begin/end, one process per request:"
b0=$(ns)
"$MARKRTT" -x "$BIN/spyremon" "$T/sock" "$cli_pairs"
b1=$(ns)

echo "(c) contrib/python/spyremon.py, in one python3 process:"
c0=$(ns)
PYTHONPATH=$ROOT/contrib/python python3 - "$T/sock" "$pairs" <<'EOF'
import sys, time
import spyremon

sock, n = sys.argv[1], int(sys.argv[2])

def pct(v, p):
    v = sorted(v)
    return v[max(0, -(-len(v) * p // 100) - 1)]

def show(name, v):
    print("py  %-9s n=%-5d p50 %8.1f us  p99 %8.1f us  mean %8.1f us  max %8.1f us"
          % (name, len(v), pct(v, 50), pct(v, 99), sum(v) / len(v), max(v)))

hello, begin, end = [], [], []
for _ in range(n):
    t = time.perf_counter()
    spyremon.request({"cmd": "hello"}, socket=sock)
    hello.append((time.perf_counter() - t) * 1e6)
for _ in range(n):
    t = time.perf_counter()
    wid = spyremon.begin("bench-rtt", commit="abc123", socket=sock)
    begin.append((time.perf_counter() - t) * 1e6)
    t = time.perf_counter()
    spyremon.end(id=wid, socket=sock)
    end.append((time.perf_counter() - t) * 1e6)
show("hello", hello)
show("begin", begin)
show("end", end)
EOF
c1=$(ns)
sleep 2	# the last rows are flushed

# sampling START_NS END_NS NAME: rows stamped in the span, longest gap of card 0
sampling() {
	sqlite3 "file:$T/db?mode=ro" "
	    SELECT count(*), (SELECT max(gap) FROM (SELECT ts_ns - lag(ts_ns)
	        OVER (ORDER BY ts_ns) AS gap FROM samples
	        WHERE device = 0 AND ts_ns BETWEEN $1 AND $2))
	    FROM samples WHERE ts_ns BETWEEN $1 AND $2" |
	awk -F'|' -v s="$((($2 - $1) / 1000))" -v n="$3" '{
	    printf "sampling during %s: %d rows in %.2f s = %.0f rows/s (800 expected); longest gap on card 0: %.1f ms\n",
	        n, $1, s / 1e6, $1 / (s / 1e6), $2 / 1e6 }'
}
sampling "$i0" "$i1" "2 s idle"
sampling "$a0" "$a1" "(a)"
sampling "$b0" "$b1" "(b)"
sampling "$c0" "$c1" "(c)"

windows=$(sqlite3 "file:$T/db?mode=ro" 'SELECT count(*) FROM windows WHERE end_ns IS NOT NULL')
echo "windows recorded and closed: $windows (expected $((2 * pairs + cli_pairs)))"
