#!/bin/bash
# Fleet load: N daemons (default 20), each with its own simulator (8 cards
# every 100 ms) and database, each served by "spyremon metrics --http"
# through systemd-socket-activate --accept --inetd on its own loopback
# port, all scraped every second by one Prometheus.
#
#   make && bench/prometheus.sh [instances] [seconds]    (defaults: 20, 60)
#
# Two phases, side by side in one run: the daemons unscraped for SECONDS
# (the baseline), then scraped for SECONDS.  Prints, from Prometheus's own
# series: scrape_duration_seconds p50/p99/max over every scrape of every
# target, the scrapes stored, those missed (a gap of 2 s or more between
# two scrapes of a target) and those failed (up == 0); from /proc: the
# daemons' and
# simulators' CPU in both phases, and the exporter's (the per-connection
# spyremon processes, reaped by systemd-socket-activate).
set -euo pipefail
B=${B:-build}
n=${1:-20}
secs=${2:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; sleep 1; rm -rf "$T"' EXIT
tck=$(getconf CLK_TCK)
command -v prometheus >/dev/null || { echo "needs Debian's prometheus package"; exit 1; }

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

dpids=() apids=() ports=()
for i in $(seq 1 "$n"); do
	d=$T/i$i
	mkdir -p "$d"
	cat >"$d/conf.yaml" <<EOF2
database: $d/db
socket: $d/sock
sysfs_root: $d
source:
  command: ["$ROOT/$B/aiu-smi-sim", "--cards", "8", "--seed", "$i"]
  interval: 100ms
  window_interval: 100ms
  metric_files: $d/metrics.%BUSID
EOF2
	"$ROOT/$B/spyremond" -c "$d/conf.yaml" 2>"$d/log" &
	dpids+=($!); pids+=($!)
	p=$(free_port)
	ports+=("$p")
	systemd-socket-activate --accept --inetd -l "127.0.0.1:$p" \
		"$ROOT/$B/spyremon" -c "$d/conf.yaml" metrics --http 2>"$d/activate.log" &
	apids+=($!); pids+=($!)
done
sleep 3	# start-up

sims() { for d in "${dpids[@]}"; do pgrep -P "$d"; done; }
total_cpu() {	# sum over pids of own CPU (1) or their waited-for children's (2), in s
	local f=$1; shift
	cat $(printf '/proc/%s/stat ' "$@") |
		awk -v t="$tck" -v f="$f" '{ s += f == 1 ? $14 + $15 : $16 + $17 } END { print s / t }'
}
mapfile -t spids < <(sims)

# ---- baseline: collecting, not scraped ----
b0=$(date +%s.%N); d0=$(total_cpu 1 "${dpids[@]}"); s0=$(total_cpu 1 "${spids[@]}")
sleep "$secs"
d1=$(total_cpu 1 "${dpids[@]}"); s1=$(total_cpu 1 "${spids[@]}"); b1=$(date +%s.%N)

# ---- scraped every second by one Prometheus ----
pp=$(free_port)
{
	echo "global: { scrape_interval: 1s, scrape_timeout: 900ms }"
	echo "scrape_configs:"
	echo "  - job_name: spyremon"
	echo "    static_configs:"
	echo "      - targets: [$(printf '"127.0.0.1:%s",' "${ports[@]}" | sed 's/,$//')]"
} >"$T/prometheus.yml"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$pp" --log.level=warn 2>"$T/prometheus.log" &
ppid=$!; pids+=($ppid)
until python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$pp/-/ready', timeout=1)" 2>/dev/null; do sleep 0.2; done
# Prometheus applies new targets every 5 s: wait until every target is
# being scraped before the measured window starts
until [ "$(python3 -c "
import json, urllib.request
r = json.load(urllib.request.urlopen('http://127.0.0.1:$pp/api/v1/query?query=count(up)', timeout=2))
print(r['data']['result'][0]['value'][1] if r['data']['result'] else 0)" 2>/dev/null)" = "$n" ]; do
	sleep 0.5
done
sleep 1
t_start=$(date +%s.%N)
d2=$(total_cpu 1 "${dpids[@]}"); s2=$(total_cpu 1 "${spids[@]}"); a2=$(total_cpu 2 "${apids[@]}")
p2=$(total_cpu 1 "$ppid")
sleep "$secs"
d3=$(total_cpu 1 "${dpids[@]}"); s3=$(total_cpu 1 "${spids[@]}"); a3=$(total_cpu 2 "${apids[@]}")
p3=$(total_cpu 1 "$ppid")
t_end=$(date +%s.%N)
sleep 2	# the last scrapes land

python3 - "http://127.0.0.1:$pp" "$t_start" "$t_end" "$n" "$secs" \
	"$d0" "$d1" "$s0" "$s1" "$d2" "$d3" "$s2" "$s3" "$a2" "$a3" "$p2" "$p3" "$b0" "$b1" <<'PY'
import json, sys, urllib.parse, urllib.request
api, t0, t1, n = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
secs = float(sys.argv[19]) - float(sys.argv[18])	# the baseline's real length
d0, d1, s0, s1, d2, d3, s2, s3, a2, a3, p2, p3 = map(float, sys.argv[6:18])
def q(e):
    u = "%s/api/v1/query?%s" % (api, urllib.parse.urlencode({"query": e, "time": "%.3f" % t1}))
    return json.load(urllib.request.urlopen(u, timeout=30))["data"]["result"]
rng = "%ds" % round(t1 - t0)
dur, ups, down, gaps, targets = [], 0, 0, 0, 0
for s in q('scrape_duration_seconds{job="spyremon"}[%s]' % rng):
    dur += [float(v) for _, v in s["values"]]
for s in q('up{job="spyremon"}[%s]' % rng):
    targets += 1
    ts = [float(t) for t, _ in s["values"]]
    if __import__("os").environ.get("VERBOSE"):
        print(s["metric"]["instance"], [round(t - t0, 2) for t in ts])
    ups += sum(1 for _, v in s["values"] if v == "1")
    down += sum(1 for _, v in s["values"] if v != "1")
    # a scrape that did not happen leaves a gap of 2 s or more
    gaps += sum(round(b - a) - 1 for a, b in zip(ts, ts[1:]) if b - a > 1.5)
dur.sort()
pct = lambda p: dur[min(len(dur) - 1, int(p * len(dur)))]
expected = n * round(t1 - t0)
assert targets == n, "only %d of %d targets scraped" % (targets, n)
print("instances %d, 8 cards x 100 ms each, scraped every 1 s for %.0f s" % (n, t1 - t0))
print("scrape_duration_seconds over %d scrapes: p50 %.1f ms, p99 %.1f ms, max %.1f ms"
      % (len(dur), 1000 * pct(0.5), 1000 * pct(0.99), 1000 * dur[-1]))
print("scrapes: about %d expected (one per target per second), %d stored; "
      "missed (gaps of 2 s or more between a target's scrapes) %d; failed (up == 0) %d"
      % (expected, ups + down, gaps, down))
w = t1 - t0
print("daemons' CPU, all %d together: baseline %.2f %% of a core, scraped %.2f %% (ratio %.2f)"
      % (n, 100 * (d1 - d0) / secs, 100 * (d3 - d2) / w, ((d3 - d2) / w) / ((d1 - d0) / secs)))
print("simulators' CPU, all together: baseline %.2f %%, scraped %.2f %%"
      % (100 * (s1 - s0) / secs, 100 * (s3 - s2) / w))
print("exporter (spyremon metrics --http processes) CPU: %.2f %% of a core, %.2f ms per scrape"
      % (100 * (a3 - a2) / w, 1000 * (a3 - a2) / max(1, ups + down)))
print("prometheus CPU: %.2f %% of a core" % (100 * (p3 - p2) / w))
PY
