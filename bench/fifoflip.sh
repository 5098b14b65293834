#!/bin/bash
# A metric file flipped between a regular file and a FIFO by an
# unprivileged user, the long form of tests/integration/t_paths.sh.
#
#   make && bench/fifoflip.sh [seconds] [runs]     (defaults: 30 s, 3 runs; as root)
#
# Each run is t_paths.sh with FLIP_SECONDS=seconds: nobody flips two of 8
# cards' metric files (read directly every 10 ms) by rename(2) as fast as
# it can, while a begin and an end of a window are sent every 50 ms and
# each reply is timed; then a reload from a FIFO, SIGTERM (timed), and the
# client's --db and --output FIFO checks.  Prints each run's flips, marks,
# the slowest and the 99th percentile reply, and the stop time.
set -euo pipefail
B=${B:-build}
secs=${1:-30}
runs=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
for ((r = 1; r <= runs; r++)); do
	out=$(FLIP_SECONDS=$secs B=$B bash tests/integration/t_paths.sh 2>&1) || {
		echo "run $r FAILED:"
		echo "$out"
		exit 1
	}
	echo "run $r: $(echo "$out" | tr '\n' ' ') load $(cut -d' ' -f1 /proc/loadavg)"
done
