#!/bin/sh
# The main job on a host without a card: run spyremond on the aiu-smi
# simulator for a while, stop it cleanly, and show what it stored.
#   sh mk/demo.sh [build-dir]      (DEMO_SECONDS=N to run longer)
set -eu
B=${1:-build}
secs=${DEMO_SECONDS:-15}
dir=$(pwd)/demo
mkdir -p "$dir"
rm -f "$dir/spyremon.db" "$dir/spyremon.db-wal" "$dir/spyremon.db-shm"

cat >"$dir/spyremond.yaml" <<EOF2
# written by mk/demo.sh: the simulator stands in for aiu-smi
database: $dir/spyremon.db
socket: $dir/control.sock
source:
  command: ["$(pwd)/$B/aiu-smi-sim", "--cards", "4", "--workload", "cycle"]
  interval: 200ms
  metric_files: $dir/metrics.%BUSID
EOF2

echo "demo: spyremond collecting from aiu-smi-sim (4 cards, every 200ms) for ${secs}s"
"$B/spyremond" -c "$dir/spyremond.yaml" 2>"$dir/spyremond.log" &
pid=$!
sleep "$secs"
kill -TERM "$pid"
wait "$pid"
echo "demo: stopped; log in $dir/spyremond.log"
echo

q() { sqlite3 -header -column "$dir/spyremon.db" "$1"; }
echo "== rows per card =="
q "SELECT device, count(*) AS rows,
          datetime(min(ts_ns) / 1000000000, 'unixepoch') AS first_utc,
          datetime(max(ts_ns) / 1000000000, 'unixepoch') AS last_utc
   FROM samples GROUP BY device"
echo
echo "== power and busy per card =="
q "SELECT device, metric, round(min(value), 1) AS min, round(avg(value), 1) AS mean,
          round(max(value), 1) AS max
   FROM sample_values WHERE metric IN ('pwr', 'busy', 'gtemp')
   GROUP BY device, metric ORDER BY device, metric"
echo
echo "== the newest sample of card 0, in natural units =="
q "SELECT v.metric, v.value, m.unit, CASE m.reliable WHEN 0 THEN 'unreliable' ELSE '' END AS note
   FROM sample_values v JOIN metrics m ON m.key = v.metric
   WHERE v.device = 0 AND v.ts_ns = (SELECT max(ts_ns) FROM samples WHERE device = 0)"
echo
echo "demo: database $dir/spyremon.db; explore it with:"
echo "  sqlite3 $dir/spyremon.db 'SELECT * FROM sample_values LIMIT 10'"
