#!/bin/bash
# How long after "mark end" a window is complete: the time "spyremon mark
# end --wait 10s" takes, which returns once every sample that overlaps the
# window and its summary are stored, with the default rates (source.interval
# 1s, window_interval 100ms, pre_window 10s) on the simulator's 2 cards.
#
#   make && bench/complete.sh [windows]          (default: 20)
#   BASE_B=build-old bench/complete.sh ...   also times the daemon and
#                                            client of another build, each
#                                            window in turn
#
# Each window is open 0.3 s; after each end the script waits 0.5 s, as a
# script between two runs would.  Prints each build's median, p90 and
# largest time in ms, and the ratio of the medians.
set -euo pipefail
B=${B:-build}
n=${1:-20}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'pkill -KILL -f "$T/" 2>/dev/null || true; rm -rf "$T"' EXIT

builds=("$B")
[ -z "${BASE_B:-}" ] || builds+=("$BASE_B")

# start BUILD: a daemon of BUILD on its own database, socket and config
start() {
	local d=$T/$1
	mkdir -p "$d/sys"
	cat >"$d/conf.yaml" <<EOF
database: $d/db
socket: $d/sock
sysfs_root: $d/sys
source:
  command: ["$ROOT/$1/aiu-smi-sim", "--cards", "2", "--seed", "7"]
  metric_files: $d/metrics.%BUSID
EOF
	"$ROOT/$1/spyremond" -c "$d/conf.yaml" 2>"$d/log" &
	echo $! >"$d/pid"
}

for b in "${builds[@]}"; do
	start "$b"
done
sleep 3	# the first rows and the catalog are in
for ((i = 1; i <= n; i++)); do
	for b in "${builds[@]}"; do
		spy=("$ROOT/$b/spyremon" -c "$T/$b/conf.yaml")
		"${spy[@]}" mark begin --tag "w$i" >/dev/null
		sleep 0.3
		t0=$(date +%s%N)
		"${spy[@]}" mark end --wait 10s >/dev/null
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000)) >>"$T/$b.us"
		sleep 0.5
	done
done
for b in "${builds[@]}"; do
	kill -TERM "$(cat "$T/$b/pid")"
	wait "$(cat "$T/$b/pid")"
done

# times_ms FILE: median, p90 and largest of FILE's microseconds, in ms
times_ms() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		printf "%.0f %.0f %.0f\n", v[int((NR + 1) / 2)] / 1000,
		    v[int(NR * 0.9 + 0.5)] / 1000, v[NR] / 1000 }'
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %8s %8s %8s   (mark end --wait, ms, %d windows)\n' build median p90 max "$n"
for b in "${builds[@]}"; do
	read -r med p90 max < <(times_ms "$T/$b.us")
	printf '%-12s %8s %8s %8s\n' "$b" "$med" "$p90" "$max"
done
if [ -n "${BASE_B:-}" ]; then
	read -r a _ _ < <(times_ms "$T/$B.us")
	read -r z _ _ < <(times_ms "$T/$BASE_B.us")
	awk -v a="$a" -v z="$z" -v b="$B" -v base="$BASE_B" 'BEGIN {
		printf "median %s / %s = %.2f\n", b, base, a / z }'
fi
