#!/usr/bin/env bash
# A real Prometheus scrapes "spyremon metrics --http", served through
# systemd-socket-activate --accept --inetd (socket activation without PID
# 1) on loopback, every second for 15 s while the daemon collects from the
# simulator; then its HTTP API's answers are compared with the database
# (prom_check.py): spyre_power_watts has the database's values at the
# database's stamps, and increase(spyre_energy_joules_total[10s]) is within
# 1 % of the database's energy.  Every panel of the Grafana dashboard, if
# there is one, must return data from the same Prometheus.
#
# Installs Debian's prometheus package when it is missing and we are root;
# skips, saying why, only when it cannot be installed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need python3
command -v systemd-socket-activate >/dev/null ||
	{ echo "SKIP: no systemd-socket-activate (Debian's systemd package)"; exit 77; }
if ! command -v prometheus >/dev/null; then
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		echo "SKIP: prometheus is not installed, and only root can apt-get install it"
		exit 77
	fi
	echo "installing prometheus"
	sh "$ROOT/mk/deps.sh" --packages prometheus >"$T/apt.log" 2>&1 ||
		{ tail -n 5 "$T/apt.log"; fail "mk/deps.sh --packages prometheus failed (see above)"; }
fi

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
EXPORTER_PORT=$(free_port)
PROM_PORT=$(free_port)
API=http://127.0.0.1:$PROM_PORT

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 rows_at_least 4 || fail "no rows"
# an open window, for spyremon_window_open and the dashboard's annotations
"$CLIENT" -c "$T/spyremond.yaml" mark begin --tag prom-test >/dev/null ||
	fail "mark begin"

# the endpoint, as spyremon-metrics.socket would serve it, on loopback only
systemd-socket-activate --accept --inetd -l "127.0.0.1:$EXPORTER_PORT" \
	"$CLIENT" -c "$T/spyremond.yaml" metrics --http >"$T/activate.log" 2>&1 &
echo $! >"$T/activate.pid"

cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: spyremon
    static_configs:
      - targets: ["127.0.0.1:$EXPORTER_PORT"]
YML
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn \
	>"$T/prometheus.log" 2>&1 &
echo $! >"$T/prometheus.pid"
stop_all() {
	kill "$(cat "$T/prometheus.pid")" "$(cat "$T/activate.pid")" 2>/dev/null || true
}
trap 'rc=$?; stop_all; set +e; (exit $rc); cleanup' EXIT

ready() { python3 -c "import urllib.request; urllib.request.urlopen('$API/-/ready', timeout=2)" 2>/dev/null; }
wait_for 30 ready || { cat "$T/prometheus.log"; fail "Prometheus did not get ready"; }
echo "scraping for 15 s"
sleep 15

# the scrapes themselves: all up, none failed
python3 - "$API" <<'PY' || fail "scrapes failed"
import json, sys, urllib.request, urllib.parse
def q(e):
    u = "%s/api/v1/query?%s" % (sys.argv[1], urllib.parse.urlencode({"query": e}))
    return json.load(urllib.request.urlopen(u, timeout=10))["data"]["result"]
up = q('up{job="spyremon"}[15s]')[0]["values"]
assert len(up) >= 10 and all(v == "1" for _, v in up), up
d = [float(v) for _, v in q('scrape_duration_seconds{job="spyremon"}[15s]')[0]["values"]]
print("scrapes: %d, all up; duration median %.1f ms, max %.1f ms"
      % (len(up), 1000 * sorted(d)[len(d) // 2], 1000 * max(d)))
PY
python3 "$ROOT/tests/integration/prom_check.py" "$API" "$DB" "$(date +%s.%N)" ||
	fail "Prometheus's answers do not match the database"

DASH=$ROOT/contrib/grafana/spyremon.json
if [ -f "$DASH" ]; then
	python3 "$ROOT/tests/integration/dashboard_check.py" "$API" "$DASH" ||
		fail "a dashboard panel returns no data"
fi
echo ok
