#!/bin/sh
# make stress: the long forms of the tests that try the daemon the way a
# hostile or unlucky host would (spyremond(8), "Limits"), each the same
# script as in make check with a larger count, run one after the other:
#   t_paths         a metric file flipped between a file and a FIFO by an
#                   unprivileged user for STRESS_FLIP_SECONDS (default 30)
#   t_window_storm  one member's STRESS_STORM_PAIRS begin/end pairs
#                   (default 100000)
#   t_backlog       STRESS_BACKLOG_WINDOWS windows left without summaries
#                   (default 50000)
#   t_db_replaced   STRESS_REPLACED_RUNS runs (default 5)
# Each prints its figures (replies, peak memory, stop time); a failure
# stops here with its output.  As root, like make check.
set -eu
B=${1:-build}
run() {
	name=$1; shift
	echo "== $name $*"
	start=$(date +%s)
	if ! out=$(env "$@" B="$B" bash "tests/integration/$name.sh" 2>&1); then
		echo "$out" | sed 's/^/    | /'
		echo "stress: $name failed" >&2
		exit 1
	fi
	echo "$out" | grep -v '^spyremon' | tail -n 8 | sed 's/^/    /'
	echo "    ($(($(date +%s) - start)) s)"
}
run t_paths FLIP_SECONDS="${STRESS_FLIP_SECONDS:-30}"
run t_window_storm STORM_PAIRS="${STRESS_STORM_PAIRS:-100000}" STORM_SECONDS=5
run t_backlog BACKLOG_WINDOWS="${STRESS_BACKLOG_WINDOWS:-50000}"
i=1
while [ "$i" -le "${STRESS_REPLACED_RUNS:-5}" ]; do
	run t_db_replaced RUN="$i"
	i=$((i + 1))
done
echo "stress: all passed"
