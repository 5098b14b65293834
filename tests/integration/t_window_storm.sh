#!/usr/bin/env bash
# One member of group spyremon (user nobody) begins and ends windows as
# fast as the daemon answers, STORM_PAIRS times and for at least
# STORM_SECONDS (default 3000 and 5 s; the bench runs 100000 pairs,
# bench/README.md).  Past windows.max_ending_per_uid ended
# windows of that uid not yet stored, its begin is refused with "busy"
# until the writer has caught up; root's marks meanwhile are all answered
# and stored; samples keep being written; the daemon's peak resident
# memory stays under 64 MiB (not checked under ASan); a clean stop takes at most
# 2 s (times time_scale) and leaves every ended window complete.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

GROUP=spyremon
PY=/usr/bin/python3
PAIRS=${STORM_PAIRS:-3000}
SECONDS_MIN=${STORM_SECONDS:-5}
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root, to run the storm as another user"
	exit 77
fi
for tool in setpriv groupadd groupdel; do
	command -v $tool >/dev/null || { echo "SKIP: no $tool"; exit 77; }
done
getent passwd nobody >/dev/null && getent group nogroup >/dev/null ||
	{ echo "SKIP: no user nobody or group nogroup"; exit 77; }
CREATED_GROUP=
remove_group() {
	if [ -n "$CREATED_GROUP" ]; then
		groupdel "$GROUP" 2>/dev/null || true
	fi
}
trap 'rc=$?; set +e; remove_group; (exit $rc); cleanup' EXIT
if ! getent group "$GROUP" >/dev/null; then
	groupadd "$GROUP"
	CREATED_GROUP=1
fi
chmod 0711 "$T"
mkdir -m 0755 "$T/run"
SOCK=$T/run/control.sock
FLUSH=1s write_config 2 100ms
sed -i "s|^socket: .*|socket: $SOCK|" "$T/spyremond.yaml"
export PYTHONPATH=$ROOT/tests/integration
scale=$(time_scale)

start_daemon
wait_for 20 rows_at_least 20 || fail "no rows stored"
wait_for 20 test -S "$SOCK" || fail "no control socket"
rows_before=$(rows_in_db)
setpriv --reuid nobody --regid nogroup --groups "$GROUP" -- \
	"$PY" "$ROOT/tests/integration/storm.py" "$SOCK" "$PAIRS" "$SECONDS_MIN" >"$T/storm" &
storm=$!
# root's own marks during the storm: each answered, none refused
"$PY" - "$SOCK" "$T/storm_pid" >"$T/root" <<PY &
import json, os, sys, time
from ctlclient import Conn
c = Conn(sys.argv[1])
worst, n = 0.0, 0
while os.path.exists("/proc/$storm") and n < 100000:
    for cmd in ("begin", "end"):
        t = time.monotonic()
        r = c.ask({"v": 1, "cmd": cmd, "tag": "root-%d" % n})
        worst = max(worst, time.monotonic() - t)
        if not r["ok"]:
            sys.exit("root's %s refused: %s" % (cmd, r))
    n += 1
    time.sleep(0.05)
print(json.dumps({"pairs": n, "worst_ms": round(worst * 1000, 1)}))
PY
root=$!
wait $storm || fail "the storm's connection broke"
wait $root || fail "root's marks during the storm: $(cat "$T/root")"
rows_after=$(rows_in_db)
echo "storm: $(cat "$T/storm")"
echo "root during it: $(cat "$T/root")"
echo "rows stored during it: $((rows_after - rows_before))"
python3 - "$T/storm" <<'PY' || fail "the storm: see above"
import json, sys
s = json.load(open(sys.argv[1]))
if s["other"]:
    sys.exit("refusals other than busy: %d, first: %s" % (s["other"], s["first_other"]))
if s["busy"] == 0:
    sys.exit("no begin was refused with busy")
PY
[ "$rows_after" -gt "$rows_before" ] || fail "no samples written during the storm"
hwm_kib=$(awk '/^VmHWM/ { print $2 }' "/proc/$DPID/status")
echo "daemon peak RSS: $((hwm_kib / 1024)) MiB"
# ASan keeps freed memory in quarantine (256 MiB): no bound means anything there
[ "$scale" -gt 1 ] || [ "$hwm_kib" -le 65536 ] || fail "peak RSS $hwm_kib KiB over 65536 KiB"
t0=$(date +%s%N)
stop_daemon
stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "clean stop after the storm: $stop_ms ms"
[ "$stop_ms" -le $((2000 * scale)) ] || fail "the stop took $stop_ms ms"
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
left=$(q "SELECT count(*) FROM windows WHERE end_ns IS NOT NULL AND complete_ns IS NULL AND incomplete IS NULL")
[ "$left" = 0 ] || fail "$left ended windows neither complete nor marked incomplete"
echo "windows stored: $(q "SELECT count(*) FROM windows WHERE tag = 'storm'") of the storm," \
	"$(q "SELECT count(*) FROM windows WHERE tag LIKE 'root-%'") of root's"
exit 0
