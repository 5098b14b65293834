#!/bin/bash
# Direct reads of new-format metric files against aiu-smi's CSV, side by
# side: 8 cards x 100 Hz.
#
#   make && [WINDOW=1] bench/direct.sh [seconds] [runs]   (defaults: 30 s, 3 runs)
#
# Without WINDOW (the all-day case) no window is open: both ways sample at
# 10 ms and store 1 s aggregates.  With WINDOW=1 a window is open, so both
# store every row read (800 rows/s).
# Each run measures both ways, one after the other, on a fresh database:
#   csv     source.direct: off; the simulator prints CSV every 10 ms and the
#           daemon stores each row, stamped on arrival (today's pipeline);
#   direct  source.direct: auto; the simulator writes its 8 new-format
#           files every 10 ms (and CSV every 1 s, source.interval), and the
#           daemon reads each file every 10 ms (window_interval).
# For each: the daemon's and the simulator's CPU time (the scheduler's run time,
# bench/cpu.sh) over the measured seconds; the daemon's CPU per card read (direct:
# the reads status counts; csv: rows the simulator printed); the stamps: csv, the
# stored stamp minus the simulator's write time of the line; direct, the
# stored stamp minus the simulator's write time of the update (--file-log),
# and the read time (arrival_ns) minus the same.
set -euo pipefail
B=${B:-build}
secs=${1:-30}
runs=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
DPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

# shellcheck source=bench/cpu.sh
source "$ROOT/bench/cpu.sh"

# run_way WAY RUN: prints "daemon_cpu_s sim_cpu_s reads rows"
run_way() {
	local way=$1 run=$2 simargs direct spid d0 s0 r0 d1 s1 r1 n0 n1
	rm -rf "$T"/db* "$T"/stamps "$T"/files "$T"/metrics.* "$T"/sock
	if [ "$way" = direct ]; then
		simargs=', "--write-metric-files", "--metric-format", "new", "--file-interval", "0.01", "--file-log", "'$T/files'"'
		direct=auto
	else
		simargs=', "--stamp-log", "'$T/stamps'"'
		direct=off
	fi
	cat >"$T/conf.yaml" <<EOF2
database: $T/db
socket: $T/sock
sysfs_root: $T
source:
  command: ["$ROOT/$B/aiu-smi-sim", "--cards", "8", "--seed", "$run"$simargs]
  interval: 1s
  window_interval: 10ms
  metric_files: $T/metrics.%BUSID
  direct: $direct
EOF2
	"$ROOT/$B/spyremond" -c "$T/conf.yaml" 2>"$T/log.$way" &
	DPID=$!
	sleep 1
	if [ "${WINDOW:-0}" = 1 ]; then
		"$ROOT/$B/spyremon" -c "$T/conf.yaml" mark begin --tag bench >/dev/null
	fi
	sleep 3	# start-up: catalog work, and the child restarted at 1 s (direct)
	spid=$(pgrep -P "$DPID" | head -n 1)
	reads() {
		if [ "$way" = direct ]; then
			"$ROOT/$B/spyremon" -c "$T/conf.yaml" status --json |
				python3 -c 'import json,sys; print(sum(h.get("direct",{}).get("reads",0) for h in json.load(sys.stdin)["health"]))'
		else	# rows the simulator printed so far
			wc -l <"$T/stamps"
		fi
	}
	d0=$(cpu_s "$DPID"); s0=$(cpu_s "$spid"); n0=$(reads)
	sleep "$secs"
	d1=$(cpu_s "$DPID"); s1=$(cpu_s "$spid"); n1=$(reads)
	kill -TERM "$DPID"; wait "$DPID" || true
	DPID=
	echo "$d0 $d1 $s0 $s1 $((n1 - n0))"
}

stamps_csv() {	# p50 p99 of stored stamp - write time, in us (rows as written: WINDOW=1)
	local l
	l=$({ python3 "$ROOT/tests/integration/compare.py" "$T/db" "$T/stamps" 2>/dev/null || true; } |
		sed -n 's/.*latency p50 \([0-9.]*\) us, p99 \([0-9.]*\) us/\1 \2/p')
	echo "${l:-nan nan}"
}

stamps_direct() {	# p50 p99 of stamp - write, p50 p99 of arrival - write, us
	python3 - "$T/db" "$T/files" <<'EOF'
import sqlite3, sys
written = {}
for line in open(sys.argv[2]):
    ms, card, seq, pwr, torn, ns = map(int, line.split())
    written[(card, seq)] = ns
st, ar = [], []
for ts, dev, seq, arr in sqlite3.connect(sys.argv[1]).execute(
        "SELECT ts_ns, device, seq, arrival_ns FROM samples WHERE src = 1 "
        "AND seq IS NOT NULL"):
    w = written.get((dev, seq))
    if w is not None and abs(ts - w) < 10**9:
        st.append((ts - w) / 1000)
        ar.append((arr - w) / 1000)
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else float("nan")
def a99(v):
    return q([abs(x) for x in v], 0.99)
print("%.1f %.1f %.1f %.1f %.1f %d" % (q(st, .5), q(st, .99), a99(st), q(ar, .5), q(ar, .99), len(st)))
EOF
}

results=()
for run in $(seq 1 "$runs"); do
	set -- $(run_way csv "$run")
	csv_d=$(awk -v a="$1" -v b="$2" 'BEGIN { print b - a }')
	csv_s=$(awk -v a="$3" -v b="$4" 'BEGIN { print b - a }')
	csv_n=$5
	csv_lat=$(stamps_csv)
	set -- $(run_way direct "$run")
	dir_d=$(awk -v a="$1" -v b="$2" 'BEGIN { print b - a }')
	dir_s=$(awk -v a="$3" -v b="$4" 'BEGIN { print b - a }')
	dir_n=$5
	dir_lat=$(stamps_direct)
	line=$(awk -v cd="$csv_d" -v cs="$csv_s" -v cn="$csv_n" \
		-v dd="$dir_d" -v ds="$dir_s" -v dn="$dir_n" -v secs="$secs" \
		'BEGIN { printf "%.3f %.3f %.2f %.2f %.2f %.2f %.2f",
		  cd * 1e6 / cn, dd * 1e6 / dn,
		  100 * cd / secs, 100 * cs / secs, 100 * dd / secs, 100 * ds / secs,
		  (cd + cs) / (dd + ds) }')
	results+=("$line $csv_lat $dir_lat")
	set -- $line $csv_lat $dir_lat
	printf 'run %d: daemon CPU per card read: csv %.2f us, direct %.3f us;' "$run" "$1" "$2"
	printf ' %% of a core: csv daemon %.2f + sim %.2f, direct daemon %.2f + sim %.2f;' "$3" "$4" "$5" "$6"
	printf ' pipeline csv/direct %.2fx;' "$7"
	printf ' stamps: csv p50/p99 %s/%s us after write; direct stamp-write p50 %s p99 %s |p99| %s us, read-write p50 %s p99 %s us (%s rows)\n' \
		"$8" "$9" "${10}" "${11}" "${12}" "${13}" "${14}" "${15}"
done

median() {	# median of column $1 of the results
	printf '%s\n' "${results[@]}" | awk -v c="$1" '{ print $c }' | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "median of $runs runs of ${secs}s at 8 cards x 100 Hz:"
echo "  daemon CPU per card read: csv $(median 1) us, direct $(median 2) us"
echo "  % of a core: csv daemon $(median 3) + simulator $(median 4); direct daemon $(median 5) + simulator $(median 6)"
echo "  whole pipeline, csv / direct: $(median 7)x"
echo "  csv stamps after the write: p50 $(median 8) us, p99 $(median 9) us"
echo "  direct stamp minus write: p50 $(median 10) us, p99 $(median 11) us, p99 of |.| $(median 12) us; read minus write: p50 $(median 13) us, p99 $(median 14) us"
