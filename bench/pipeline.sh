#!/bin/bash
# What aiu-smi itself costs at the two rates the daemon can run it at, so
# that the whole pipeline can be compared with and without direct reads.
#
#   make && bench/pipeline.sh [seconds] [runs]      (defaults: 20 s, 3 runs)
#
# aiu-smi is a Python program; the simulator that stands in for it in every
# other benchmark is C, and costs far less.  Here a Python stand-in
# (bench/aiusmi_standin.py: it reads each card's new-format file whole,
# decodes it with struct as the reference reader does, and prints a CSV row
# per card, unbuffered; it does less than aiu-smi, so aiu-smi costs at
# least this) reads the 8 files that the simulator updates every 10 ms:
#   today   the stand-in at -d 0.01, as spyremond runs aiu-smi without
#           direct reads (the ring's rate);
#   direct  the stand-in at -d 1, as it runs beside direct reads (interval).
# Each run measures the simulator writing the files (the runtime's part,
# the same in both), then each stand-in, one after the other, as CPU time
# (the scheduler's ns, all threads) over the measured seconds.
# Add the daemon's own share from bench/direct.sh to get the pipeline.
set -euo pipefail
B=${B:-build}
secs=${1:-20}
runs=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
SIM=
cleanup() {
	[ -n "$SIM" ] && { kill -KILL "$SIM"; wait "$SIM"; } 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

# shellcheck source=bench/cpu.sh
source "$ROOT/bench/cpu.sh"

# share PID: percent of a core PID uses over $secs, after 2 s of start-up
share() {
	local a b
	sleep 2
	a=$(cpu_s "$1"); sleep "$secs"; b=$(cpu_s "$1")
	awk -v a="$a" -v b="$b" -v s="$secs" 'BEGIN { printf "%.2f", 100 * (b - a) / s }'
}

"$ROOT/$B/aiu-smi-sim" --cards 8 --seed 1 -s -d 1 --write-metric-files \
	--metric-format new --file-interval 0.01 "$T/metrics.%BUSID" \
	>/dev/null 2>&1 &
SIM=$!
sleep 1
files=("$T"/metrics.*)
[ "${#files[@]}" -eq 8 ] || { echo "the simulator wrote ${#files[@]} files, not 8" >&2; exit 1; }

today=() direct=() writer=()
for run in $(seq 1 "$runs"); do
	writer+=("$(share "$SIM")")
	for delay in 0.01 1; do
		python3 "$ROOT/bench/aiusmi_standin.py" "$delay" "${files[@]}" >"$T/out" &
		p=$!
		s=$(share "$p")
		kill "$p"; wait "$p" 2>/dev/null || true
		rows=$(($(wc -l <"$T/out") - 1))
		if [ "$delay" = 0.01 ]; then today+=("$s"); else direct+=("$s"); fi
		printf 'run %d: stand-in at -d %s: %s%% of a core (%d rows)\n' \
			"$run" "$delay" "$s" "$rows"
	done
	printf 'run %d: the simulator writing 8 files every 10 ms: %s%% of a core\n' \
		"$run" "${writer[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf 'median of %d runs of %d s: stand-in at -d 0.01 %s%%, at -d 1 %s%% of a core; the writer %s%%\n' \
	"$runs" "$secs" "$(median "${today[@]}")" "$(median "${direct[@]}")" "$(median "${writer[@]}")"
