#!/bin/bash
# Daemon cost at 8 cards x 100 Hz: CPU time per stored row and RSS of the
# daemon process alone, with the simulator's CPU shown beside it, and the
# stamping latency (daemon stamp minus the simulator's write time).
#
#   make && bench/daemon.sh [seconds] [runs]      (defaults: 60 s, 3 runs)
#   BASE_B=build-old bench/daemon.sh ...   also runs the daemon of another
#                                          build (a baseline), run by run
#
# Prints one line per run and the medians.  Each run also measures a
# baseline: cat(1) reading the same simulator's output into /dev/null, the
# least any reader of that stream pays per row for being woken and
# reading, on this machine.
set -euo pipefail
B=${B:-build}
secs=${1:-60}
runs=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'pkill -KILL -f "$T/" 2>/dev/null || true; rm -rf "$T"' EXIT

# shellcheck source=bench/cpu.sh
source "$ROOT/bench/cpu.sh"

# measure BUILD RUN: one line of figures for the daemon of build dir BUILD
measure() {
	local build=$1 run=$2
	rm -f "$T"/db* "$T/stamps"
	cat >"$T/conf.yaml" <<EOF2
database: $T/db
socket: $T/sock
sysfs_root: $T
source:
  command: ["$ROOT/$build/aiu-smi-sim", "--cards", "8", "--seed", "$run", "--stamp-log", "$T/stamps"]
  interval: 10ms
  metric_files: $T/metrics.%BUSID
EOF2
	"$ROOT/$build/spyremond" -c "$T/conf.yaml" 2>"$T/log" &
	dpid=$!
	sleep 2	# start-up: the first header and catalog work are not steady state
	spid=$(pgrep -P "$dpid" | head -n 1)
	d0=$(cpu_s "$dpid"); s0=$(cpu_s "$spid")
	r0=$(sqlite3 "file:$T/db?mode=ro" 'SELECT count(*) FROM samples')
	sleep "$secs"
	d1=$(cpu_s "$dpid"); s1=$(cpu_s "$spid")
	hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$dpid/status")
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$dpid/status")
	kill -TERM "$dpid"; wait "$dpid"
	r1=$(sqlite3 "$T/db" "SELECT count(*) FROM samples")
	lat=$(python3 "$ROOT/tests/integration/compare.py" "$T/db" "$T/stamps" |
		sed -n 's/.*latency p50 \([0-9.]*\) us, p99 \([0-9.]*\) us/\1 \2/p')
	awk -v d0="$d0" -v d1="$d1" -v s0="$s0" -v s1="$s1" \
		-v rows=$((r1 - r0)) -v secs="$secs" -v hwm="$hwm" -v rss="$rss" -v lat="$lat" \
		'BEGIN { split(lat, l, " "); d = d1 - d0; s = s1 - s0;
		  printf "%.2f %.1f %.2f %.2f %d %.1f %.1f %.1f %.1f",
		  d * 1e6 / rows, rows / secs, 100 * d / secs, 100 * s / secs,
		  rows, rss / 1024, hwm / 1024, l[1], l[2] }'
}

report() {	# report LABEL RUN LINE
	set -- "$1" "$2" $3
	printf '%s run %d: daemon %.2f us CPU/row (%.2f%% of a core), simulator %.2f%% of a core; %d rows (%.0f rows/s); daemon RSS %.1f MiB (peak %.1f MiB); stamping latency p50 %.1f us, p99 %.1f us; baseline cat %.2f us CPU/row\n' \
		"$1" "$2" "$3" "$5" "$6" "$7" "$4" "$8" "$9" "${10}" "${11}" "${12}"
}

results=()
base_results=()
for run in $(seq 1 "$runs"); do
	# the baseline: a bare reader of the same stream, for as long
	"$ROOT/$B/aiu-smi-sim" --cards 8 --seed "$run" -s -d 0.01 2>/dev/null |
		cat >/dev/null &
	# $! is the pipeline's last process, this cat (pgrep would find any
	# user's newest cat on a shared machine, which may be gone at once)
	cpid=$!
	sleep 2
	c0=$(cpu_s "$cpid")
	sleep "$secs"
	c1=$(cpu_s "$cpid")
	pkill -f "aiu-smi-sim --cards 8 --seed $run -s -d 0.01" || true
	wait 2>/dev/null || true
	cat_us=$(awk -v c0="$c0" -v c1="$c1" -v secs="$secs" \
		'BEGIN { printf "%.2f", (c1 - c0) * 1e6 / (800 * secs) }')
	line="$(measure "$B" "$run") $cat_us"
	results+=("$line")
	report "$B" "$run" "$line"
	if [ -n "${BASE_B:-}" ]; then
		line="$(measure "$BASE_B" "$run") $cat_us"
		base_results+=("$line")
		report "$BASE_B" "$run" "$line"
	fi
done

median() {	# median of column $1 of the results (of base_results if $2)
	if [ -n "${2:-}" ]; then
		printf '%s\n' "${base_results[@]}"
	else
		printf '%s\n' "${results[@]}"
	fi | awk -v c="$1" '{ print $c }' | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "median of $runs runs of ${secs}s at 8 cards x 100 Hz:"
echo "  daemon CPU per row:    $(median 1) us    (target <= 6 us)"
echo "  baseline, cat reading the same stream: $(median 10) us per row"
echo "  daemon CPU:            $(median 3) % of a core;  simulator: $(median 4) % of a core"
echo "  daemon RSS peak:       $(median 7) MiB    (target <= 8 MiB)"
echo "  stamping latency:      p50 $(median 8) us, p99 $(median 9) us"
if [ -n "${BASE_B:-}" ]; then
	echo "baseline build $BASE_B, in the same runs:"
	echo "  daemon CPU per row:    $(median 1 base) us;  $B / $BASE_B = $(awk -v a="$(median 1)" -v b="$(median 1 base)" 'BEGIN { printf "%.2f", a / b }')"
	echo "  daemon RSS peak:       $(median 7 base) MiB"
	echo "  stamping latency:      p50 $(median 8 base) us, p99 $(median 9 base) us"
fi
