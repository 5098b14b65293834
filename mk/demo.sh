#!/bin/sh
# The main job on a host without a card: the whole profiling loop on the
# aiu-smi simulator.
#   1. start spyremond, collecting from aiu-smi-sim (4 cards);
#   2. open a profiling window with spyremon mark begin;
#   3. run a short workload, during which the simulated cards are busy;
#   4. close the window with spyremon mark end;
#   5. export the window's samples, and show what was stored.
#   sh mk/demo.sh [build-dir]        (DEMO_SECONDS=N: workload length, default 8)
set -eu
B=${1:-build}
secs=${DEMO_SECONDS:-8}
top=$(pwd)
dir=$top/demo
mkdir -p "$dir"
rm -f "$dir"/spyremon.db* "$dir/busy" "$dir/control.sock"

# a simulated PCI tree with the 4 cards the simulator reports
for i in 0 1 2 3; do
	dev=$dir/sys/bus/pci/devices/0000:1$((3 + i)):00.0
	mkdir -p "$dev"
	echo 0x1014 >"$dev/vendor"
	echo 0x06a7 >"$dev/device"
	echo $((i / 2)) >"$dev/numa_node"
	echo "16.0 GT/s PCIe" >"$dev/current_link_speed"
	echo 16 >"$dev/current_link_width"
done

cat >"$dir/spyremond.yaml" <<EOF2
# written by mk/demo.sh: the simulator stands in for aiu-smi, and demo/sys
# for the PCI devices in /sys
database: $dir/spyremon.db
socket: $dir/control.sock
sysfs_root: $dir/sys
source:
  command: ["$top/$B/aiu-smi-sim", "--cards", "4", "--workload", "file:$dir/busy", "--write-metric-files"]
  interval: 1s
  window_interval: 100ms
  pre_window: 3s
  metric_files: $dir/metrics.%BUSID
EOF2
spyremon() { "$top/$B/spyremon" -c "$dir/spyremond.yaml" "$@"; }

echo "demo: 1. spyremond collecting from aiu-smi-sim (4 cards; 1 s rows, 100 ms in windows)"
"$top/$B/spyremond" -c "$dir/spyremond.yaml" 2>"$dir/spyremond.log" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
i=0
until [ -S "$dir/control.sock" ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 4		# some idle samples before the run

echo "demo: 2. spyremon mark begin --tag demo-run --meta workload=demo"
id=$(spyremon mark begin --tag demo-run --meta workload=demo \
	--meta commit="$(git rev-parse --short HEAD 2>/dev/null || echo none)")
echo "        window $id is open"

echo "demo: 3. a ${secs}s workload: the simulated cards are busy"
touch "$dir/busy"
sleep "$secs"
rm -f "$dir/busy"

echo "demo: 4. spyremon mark end"
spyremon mark end --id "$id" | sed 's/^/        /'
sleep 2

echo "demo: 5. spyremon export --window $id"
spyremon export --window "$id" --format csv --output "$dir/window.csv"
spyremon export --window "$id" --format aiusmi --output "$dir/window-aiusmi.csv"
spyremon export --window "$id" --format jsonl --output "$dir/window.jsonl"
echo
spyremon status | sed 's/^/    /'
echo
spyremon windows | sed 's/^/    /'
kill -TERM $pid
wait $pid
trap - EXIT
echo
echo "== power and busy per card, inside the window =="
sqlite3 -header -column "$dir/spyremon.db" "
	SELECT device, metric, round(min(value), 1) AS min,
	       round(avg(value), 1) AS mean, round(max(value), 1) AS max
	FROM sample_values, windows w
	WHERE w.id = $id AND metric IN ('pwr', 'busy')
	  AND ts_ns BETWEEN w.begin_ns AND w.end_ns
	GROUP BY device, metric ORDER BY device, metric"
echo
echo "demo: files"
echo "  database        $dir/spyremon.db   (sqlite3; see spyremon-schema(5))"
echo "  window, csv     $dir/window.csv"
echo "  window, aiu-smi $dir/window-aiusmi.csv"
echo "  window, jsonl   $dir/window.jsonl"
echo "  daemon log      $dir/spyremond.log"
