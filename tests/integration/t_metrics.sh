#!/usr/bin/env bash
# spyremon metrics against a live daemon on the simulator: every family
# with HELP/TYPE/UNIT, IBM's names and labels, values equal to the
# database's newest row with its stamp; a window's series only while it is
# open; energy and samples keep growing across a daemon restart; a stale
# card is left out, and so is a row stamped in the future;
# --output writes the textfile format (no timestamps)
# whole; --http answers GET and HEAD /metrics by the Accept header, 404,
# 405, 400, 414, 431 and 408 (read timeout), and a request over a real
# socket; a version 3 database (no host, no counters) is read without
# them.  promtool (Debian's prometheus package) checks the 0.0.4 text
# when it is installed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need python3
[ -x "$DAEMON" ] || fail "no $DAEMON; build it first"
SPY="$CLIENT -c $T/spyremond.yaml"
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"
wait_for 20 rows_at_least 20 || fail "no rows"

# ---- the exposition: families, labels, values from the newest row ----
$SPY metrics >"$T/om.txt" || fail "metrics failed"
python3 - "$T/om.txt" "$DB" <<'PY' || fail "OpenMetrics output is wrong"
import re, sqlite3, sys
text = open(sys.argv[1]).read()
lines = text.splitlines()
assert lines[-1] == "# EOF", "no # EOF"
fams = {}
for ln in lines:
    m = re.match(r"# (HELP|TYPE|UNIT) (\S+) ?(.*)", ln)
    if m:
        fams.setdefault(m.group(2), {})[m.group(1)] = m.group(3)
want = ["spyre_power_watts", "spyre_temperature_celsius", "spyre_busy_ratio",
        "spyre_read_memory_bytes", "spyre_write_memory_bytes",
        "spyre_rxpci_bytes", "spyre_txpci_bytes", "spyre_rdma_read_bytes",
        "spyre_rdma_write_bytes", "spyre_avg_memory_bytes",
        "spyre_peak_memory_bytes", "spyre_energy_joules",
        "spyremon_last_sample_timestamp_seconds", "spyremon_samples",
        "spyremon_child_restarts", "spyremon_rejected_lines",
        "spyremon_database_bytes", "spyremon_window_open"]
for f in want:
    assert f in fams and "HELP" in fams[f] and "TYPE" in fams[f], f
    unit = f.rsplit("_", 1)[1] if f.split("_")[-1] in (
        "watts", "celsius", "ratio", "bytes", "joules", "seconds") else None
    assert fams[f].get("UNIT") == unit, (f, fams[f])
assert fams["spyre_energy_joules"]["TYPE"] == "counter"
assert fams["spyremon_samples"]["TYPE"] == "counter"
# nothing unreliable: rsvmem and pt_act have no family
assert not any("rsv" in f or "pt_act" in f for f in fams)
samples = {}
for ln in lines:
    if ln.startswith("#"):
        continue
    m = re.match(r'(\w+)(?:\{(.*)\})? (\S+)(?: (\S+))?$', ln)
    assert m, ln
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
    samples.setdefault(m.group(1), []).append((labels, float(m.group(3)), m.group(4)))
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
pw = samples["spyre_power_watts"]
assert len(pw) == 2, pw
for labels, v, ts in pw:
    assert set(labels) == {"spyre", "type", "device"}, labels
    assert labels["type"] == "pf" and re.match(r"0000:1[34]:00\.0$", labels["spyre"])
    ms = int(ts.replace(".", ""))
    row = db.execute("SELECT pwr / 10.0, busy FROM samples WHERE device = ? AND "
                     "ts_ns / 1000000 = ?", (int(labels["device"]), ms)).fetchone()
    assert row is not None, ("no row at the stamp", labels, ts)
    assert abs(row[0] - v) < 1e-9, (row, v)
    bus = db.execute("SELECT bus_id FROM device_map WHERE device = ?",
                     (int(labels["device"]),)).fetchone()[0]
    assert bus == labels["spyre"]
for labels, v, ts in samples["spyre_busy_ratio"]:
    assert 0 <= v <= 1
e = {l["device"]: v for l, v, ts in samples["spyre_energy_joules_total"]}
assert len(e) == 2 and all(v > 0 for v in e.values()), e
n = samples["spyremon_samples_total"][0][1]
assert n >= 20, n
assert "spyremon_window_open" not in samples
print("ok", len(lines), "lines")
PY

# promtool, if Debian's prometheus package is installed, checks the 0.0.4 text
if command -v promtool >/dev/null; then
	$SPY metrics --format prometheus >"$T/prom.txt"
	promtool check metrics <"$T/prom.txt" >"$T/promtool.out" 2>&1 ||
		fail "promtool check metrics: $(cat "$T/promtool.out")"
else
	echo "note: promtool not installed, the 0.0.4 text is not checked by it"
fi

# ---- a window's series while it is open, gone after ----
$SPY mark begin --tag job-7 >/dev/null || fail "mark begin"
$SPY metrics | grep -q '^spyremon_window_open{tag="job-7",id="1"} 1$' ||
	fail "no spyremon_window_open for the open window"
$SPY mark end --tag job-7 >/dev/null || fail "mark end"
! $SPY metrics | grep -q '^spyremon_window_open{' ||
	fail "spyremon_window_open still there after the window ended"

# ---- the host the database was created on, in status and windows --json ----
$SPY status --json >"$T/status.json" || fail "status --json"
$SPY windows --json >"$T/windows.json" || fail "windows --json"
python3 - "$T/status.json" "$T/windows.json" <<'PY' || fail "no host in status or windows --json"
import json, socket, sys
mid = ""
try:
    mid = open("/etc/machine-id").read().strip()
except OSError:
    pass
st = json.load(open(sys.argv[1]))["database"]
assert st["hostname"] == socket.gethostname() and st["machine_id"] == mid, st
ws = json.load(open(sys.argv[2]))
assert ws and all(w["hostname"] == socket.gethostname() and w["machine_id"] == mid for w in ws), ws
PY

# ---- --output: the textfile collector's format, whole ----
$SPY metrics --output "$T/spyremon.prom" || fail "metrics --output failed"
[ -s "$T/spyremon.prom" ] || fail "no $T/spyremon.prom"
! grep -q '# EOF\|# UNIT' "$T/spyremon.prom" || fail "--output is not 0.0.4 text"
awk '!/^#/ && NF != 2 { bad = 1 } END { exit bad }' "$T/spyremon.prom" ||
	fail "--output has timestamps (the textfile collector refuses them)"
ls "$T" | grep -q 'spyremon\.prom\.' && fail "a temporary file was left behind"
if command -v promtool >/dev/null; then
	promtool check metrics <"$T/spyremon.prom" >/dev/null 2>&1 ||
		fail "promtool rejects the --output file"
fi
$SPY --db "$T/nonexistent.db" metrics --output "$T/spyremon.prom" 2>/dev/null &&
	fail "metrics --output on a missing database succeeded"
grep -q spyre_power_watts "$T/spyremon.prom" || fail "a failed run clobbered the file"

# ---- --http ----
http() { printf "$1" | $SPY metrics --http; }
http 'GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n\r\n' >"$T/h1" ||
	fail "--http GET failed"
head -1 "$T/h1" | grep -q '^HTTP/1.1 200 OK' || fail "GET: $(head -1 "$T/h1")"
grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$T/h1" ||
	fail "no OpenMetrics for an Accept that prefers it"
tail -1 "$T/h1" | grep -q '^# EOF$' || fail "body incomplete"
python3 - "$T/h1" <<'PY' || fail "Content-Length is wrong"
import sys
raw = open(sys.argv[1], "rb").read()
head, body = raw.split(b"\r\n\r\n", 1)
n = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0]
assert n == len(body), (n, len(body))
PY
http 'GET /metrics HTTP/1.0\r\n\r\n' >"$T/h2"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$T/h2" || fail "no 0.0.4 without Accept"
head -1 "$T/h2" | grep -q '^HTTP/1.0 200' || fail "HTTP/1.0 not answered in kind"
http 'HEAD /metrics HTTP/1.1\r\n\r\n' >"$T/h3"
grep -q '^# HELP' "$T/h3" && fail "HEAD sent a body"
grep -q '^Content-Length: [1-9]' "$T/h3" || fail "HEAD without Content-Length"
status() { http "$1" 2>/dev/null | head -1 | tr -d '\r'; }
[ "$(status 'GET /other HTTP/1.1\r\n\r\n')" = "HTTP/1.1 404 Not Found" ] || fail "no 404"
[ "$(status 'POST /metrics HTTP/1.1\r\n\r\n')" = "HTTP/1.1 405 Method Not Allowed" ] || fail "no 405"
[ "$(status 'garbage\r\n\r\n')" = "HTTP/1.1 400 Bad Request" ] || fail "no 400"
[ "$(status 'GET /metrics HTTP/3.0\r\n\r\n')" = "HTTP/1.1 505 HTTP Version Not Supported" ] || fail "no 505"
[ "$(status 'GET /metrics HTTP/1.9\r\n\r\n')" = "HTTP/1.1 505 HTTP Version Not Supported" ] ||
	fail "HTTP/1.9 is not refused with 505"
[ "$(status "GET /$(head -c 3000 /dev/zero | tr '\0' a) HTTP/1.1\r\n\r\n")" = "HTTP/1.1 414 URI Too Long" ] ||
	fail "no 414"
[ "$(status "GET /metrics HTTP/1.1\r\nX: $(head -c 9000 /dev/zero | tr '\0' a)\r\n\r\n")" = \
	"HTTP/1.1 431 Request Header Fields Too Large" ] || fail "no 431"
# a client that sends half a request and waits: 408 after the read timeout
t0=$(date +%s)
{ printf 'GET /metrics HTTP/1.1\r\n'; sleep 13; } | $SPY metrics --http >"$T/h408" 2>/dev/null || true
el=$(( $(date +%s) - t0 ))
head -1 "$T/h408" | grep -q '408 Request Timeout' || fail "no 408 for a stalled request"
[ "$el" -le 14 ] || fail "the 408 took ${el}s"

# ---- over a real socket: systemd-socket-activate --inetd, as a unit would ----
if command -v systemd-socket-activate >/dev/null; then
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	systemd-socket-activate --inetd -a -l "127.0.0.1:$port" \
		$SPY metrics --http >"$T/sa.log" 2>&1 &
	SAPID=$!
	wait_for 10 python3 -c "import socket; socket.create_connection(('127.0.0.1', $port)).close()" ||
		fail "socket activation did not listen"
	python3 - "$port" <<'PY' || fail "GET over a socket failed"
import sys, urllib.request
r = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10)
body = r.read().decode()
assert r.status == 200 and "spyre_power_watts{" in body, body[:200]
PY
	kill "$SAPID"; wait "$SAPID" 2>/dev/null || true
fi

# ---- counters across a restart; then a stale card is left out ----
before=$($SPY metrics | awk '/^spyre_energy_joules_total\{.*device="0"/ { print $2 }')
s_before=$($SPY metrics | awk '/^spyremon_samples_total/ { print $2 }')
stop_daemon
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket after restart"
sleep 1
after=$($SPY metrics | awk '/^spyre_energy_joules_total\{.*device="0"/ { print $2 }')
s_after=$($SPY metrics | awk '/^spyremon_samples_total/ { print $2 }')
python3 -c "import sys; a,b,c,d = map(float, sys.argv[1:]); assert b > a and d > c, (a,b,c,d)" \
	"$before" "$after" "$s_before" "$s_after" || fail "counters went back or stood still: energy $before -> $after, samples $s_before -> $s_after"
stop_daemon
sleep 1.6	# 3 intervals of 100 ms plus the 200 ms flush have passed
$SPY metrics >"$T/stale.txt"
grep -q '^spyre_power_watts{' "$T/stale.txt" && fail "a stale card is still exposed"
grep -q '^spyremon_last_sample_timestamp_seconds ' "$T/stale.txt" ||
	fail "no last-sample stamp once the cards are stale"

# ---- a row stamped a day ahead (a writer's clock off) is never published ----
cp "$DB" "$T/future.db"
python3 - "$T/future.db" <<'PY' || fail "cannot add a row from the future"
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("PRAGMA table_info(samples)")]
row = list(db.execute("SELECT * FROM samples WHERE device = 0 ORDER BY ts_ns DESC LIMIT 1").fetchone())
row[cols.index("ts_ns")] = time.time_ns() + 86400 * 10**9
row[cols.index("pwr")] = 99999
db.execute("INSERT INTO samples VALUES (%s)" % ",".join("?" * len(row)), row)
db.commit()
PY
$CLIENT --db "$T/future.db" metrics >"$T/future.txt" || fail "metrics on a database with a future row failed"
python3 - "$T/future.txt" <<'PY' || fail "a sample from the future was published: $(grep -E '^spyremon_last_sample|^spyre_power' "$T/future.txt")"
import sys, time
now = time.time()
for ln in open(sys.argv[1]):
    if ln.startswith("spyremon_last_sample_timestamp_seconds "):
        assert float(ln.split()[1]) <= now, ln
    assert not ln.startswith("spyre_power_watts{"), ln
    parts = ln.split()
    if not ln.startswith("#") and len(parts) == 3:
        assert float(parts[2]) <= now, ln
PY

# ---- a database of schema version 3 (before host and counters) ----
cp "$DB" "$T/v3.db"
sqlite3 "$T/v3.db" 'DROP TABLE counters; DROP TABLE host; PRAGMA user_version = 3;'
$CLIENT --db "$T/v3.db" metrics >"$T/v3.txt" || fail "metrics on a version 3 database failed"
grep -q '^spyremon_samples_total\|^spyre_energy_joules_total' "$T/v3.txt" &&
	fail "counters exposed from a database that has none"
grep -q '^# TYPE spyre_power_watts gauge' "$T/v3.txt" || fail "no families from a version 3 database"
$CLIENT --db "$T/v3.db" windows --json | python3 -c '
import json, sys
ws = json.load(sys.stdin)
assert ws and all(w["hostname"] is None and w["machine_id"] is None for w in ws), ws' ||
	fail "windows --json on a version 3 database does not say null for the host"
echo "ok"
