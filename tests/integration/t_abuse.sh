#!/usr/bin/env bash
# Clients cannot disturb sampling: while the daemon samples 2 cards every
# 50ms, abuse.py throws 200 concurrent clients, a silent one, 1 MiB of
# garbage (twice), a request cut off halfway and 65 connections at its
# control socket.  Every check of abuse.py must pass, the daemon must still
# answer, and no two consecutive samples of a card during the abuse may be
# more than 150ms apart (two intervals and some slack).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need python3
[ -x "$DAEMON" ] || fail "no $DAEMON; build it first"
export PYTHONPATH=$ROOT/tests/integration
SOCK=$T/control.sock
MAX_GAP_MS=150

daemon_answers() {
	python3 "$ROOT/tests/integration/ctlclient.py" "$SOCK" \
		'{"v":1,"cmd":"hello"}' >/dev/null 2>&1
}

write_config 2 50ms
# one rate throughout: no window is opened, and none should matter here
grep -q '^  window_interval: 50ms$' "$T/spyremond.yaml" ||
	echo "  window_interval: 50ms" >>"$T/spyremond.yaml"
start_daemon
wait_for 20 daemon_answers || fail "the daemon does not answer on $SOCK"
# let sampling settle before the abuse begins
wait_for 20 rows_at_least 40 || fail "no samples"

python3 "$ROOT/tests/integration/abuse.py" "$SOCK" "$T/period" ||
	fail "abuse.py failed"
read -r START END <"$T/period"

kill -0 "$DPID" 2>/dev/null || fail "the daemon died"
daemon_answers || fail "the daemon does not answer after the abuse"
# the last rows of the period reach the database within a flush
sleep 2
stop_daemon

sqlite3 -readonly "file:$DB?mode=ro" "
	SELECT device, count(*), max(gap) / 1000000, avg(gap) / 1000000.0 FROM (
		SELECT device, ts_ns - lag(ts_ns) OVER (PARTITION BY device
		    ORDER BY ts_ns) AS gap
		FROM samples WHERE ts_ns BETWEEN $START AND $END)
	WHERE gap IS NOT NULL GROUP BY device" >"$T/gaps"
[ "$(wc -l <"$T/gaps")" -eq 2 ] || fail "samples of 2 cards expected: $(cat "$T/gaps")"
while IFS='|' read -r dev n max_ms avg_ms; do
	echo "figures: device $dev: $n gaps during $(((END - START) / 1000000)) ms" \
		"of abuse, largest ${max_ms} ms, mean ${avg_ms} ms"
	[ "$max_ms" -le $MAX_GAP_MS ] ||
		fail "device $dev: a gap of ${max_ms} ms between samples during the abuse"
done <"$T/gaps"
echo "ok"
