# Paths that someone else controls never block anyone.
#
# An unprivileged user (nobody) flips two of 8 cards' metric files between
# a regular file and a FIFO for FLIP_SECONDS (3 s; bench/fifoflip.sh runs
# 30 s), by rename(2), while the daemon reads the new-format files every
# 10 ms: every request (a hello every 50 ms, a begin and an end of a
# window every second) is answered within 50 ms (times
# time_scale under the sanitizers, and times the load average per CPU when
# that is above 1: on a host shared with other work the reply waits for
# its share of a CPU, flips or not; bench/fifoflip.sh gives the figures
# with the load), a FIFO left at a path is the card's
# state "not a file" in status (the reader's and the file's), a reload whose config path is now a FIFO
# is refused with the running config kept, and SIGTERM stops the daemon
# within 2 s.  Then, with the daemon stopped: spyremon --db FIFO, --db
# /dev/null and --output to a FIFO that no one reads each fail at once
# with a message that says what the path is; each is run under timeout, so
# that an open that blocks fails the test instead of hanging it.
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3	# not a per-user shim: it runs as nobody too
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root, to flip the files as another user"
	exit 77
fi
need setpriv
[ -x "$PY" ] || { echo "SKIP: no $PY"; exit 77; }
getent passwd nobody >/dev/null && getent group nogroup >/dev/null ||
	{ echo "SKIP: no user nobody or group nogroup"; exit 77; }

FLIP_SECONDS=${FLIP_SECONDS:-3}
SCALE=$(time_scale)
FLIP=$ROOT/tests/integration/fifoflip.py
export PYTHONPATH=$ROOT/tests/integration

# a metric-file folder that any user may write, as /tmp is
chmod 0711 "$T"
mkdir -m 0777 "$T/mf"
write_config 8 10ms --write-metric-files --metric-format new \
	--file-interval 0.01
sed -i "s|^  metric_files: .*|  metric_files: $T/mf/metrics.%BUSID|" \
	"$T/spyremond.yaml"
printf '  pre_window: 0s\n  direct: auto\n' >>"$T/spyremond.yaml"
FLUSH=100ms
start_daemon

F0=$T/mf/metrics.0000:13:00.0
F1=$T/mf/metrics.0000:14:00.0
direct_reading() {
	"$CLIENT" -c "$T/spyremond.yaml" status --json 2>/dev/null |
	    "$PY" -c 'import json, sys
st = json.load(sys.stdin)
sys.exit(0 if sum(1 for h in st["health"] if h["source"] == "file") == 8 else 1)'
}
wait_for 30 direct_reading || fail "the 8 cards are not read directly"

setpriv --reuid nobody --regid nogroup --clear-groups -- \
	"$PY" "$FLIP" swap "$FLIP_SECONDS" "$F0" "$F1" >"$T/flips.txt" &
FLIPPER=$!
"$PY" "$FLIP" marks "$FLIP_SECONDS" "$T/control.sock" >"$T/marks.txt" ||
	fail "marks during the flips: $(cat "$T/marks.txt")"
wait "$FLIPPER" || fail "the flips failed"
echo "$(cat "$T/flips.txt"), $(cat "$T/marks.txt")"
read -r _ flips <"$T/flips.txt"
read -r _ _ _ nmarks _ max_ms _ p99_ms <"$T/marks.txt"
[ "$nmarks" -gt 0 ] || fail "no mark"
[ "$flips" -gt 0 ] || fail "no flip"
bound=$(awk -v s="$SCALE" -v c="$(nproc)" '{ l = $1 / c; if (l < 1) l = 1
	printf "%d", 50 * s * l }' /proc/loadavg)
awk -v m="$max_ms" -v b="$bound" 'BEGIN { exit !(m <= b) }' ||
	fail "a reply took $max_ms ms during the flips (bound $bound ms)"
log_has "is a FIFO, not a regular file" ||
	fail "the daemon never said a metric file was a FIFO"

# both paths are FIFOs now: named as such in status
fifo_named() {
	"$CLIENT" -c "$T/spyremond.yaml" status --json 2>/dev/null |
	    "$PY" -c 'import json, sys
st = json.load(sys.stdin)
h = {h["device"]: h for h in st["health"]}
d = {i: h[i].get("direct") or {} for i in h}
sys.exit(0 if all(d.get(i, {}).get("state") == "not a file" and
    "is a FIFO" in (d[i].get("why") or "") and
    h[i].get("state") == "not a file" and
    "is a FIFO, not a regular file" in h[i].get("text", "")
    for i in (0, 1)) else 1)'
}
wait_for 10 fifo_named || fail "status does not name the FIFOs"
"$CLIENT" -c "$T/spyremond.yaml" status >"$T/status.txt" || fail "status failed"
grep -q "FIFO or a device" "$T/status.txt" &&
	grep -q "^note: the metric file path of .* holds a FIFO" "$T/status.txt" ||
	fail "status does not say a FIFO is there: $(cat "$T/status.txt")"

# a reload whose config path is now a FIFO: refused, the loop answers
cp "$T/spyremond.yaml" "$T/spyremond.yaml.kept"
rm "$T/spyremond.yaml"
mkfifo "$T/spyremond.yaml"
kill -HUP "$DPID"
timeout 10 "$PY" "$ROOT/tests/integration/ctlclient.py" "$T/control.sock" \
	'{"v":1,"cmd":"hello"}' >/dev/null ||
	fail "no answer after a reload from a FIFO"
wait_for 10 log_has "reload failed; keeping the running config" ||
	fail "the reload from a FIFO was not refused"
log_has "spyremond.yaml: cannot open: is a FIFO, not a regular file" ||
	fail "the reload's error does not say the config is a FIFO"
rm "$T/spyremond.yaml"
mv "$T/spyremond.yaml.kept" "$T/spyremond.yaml"

# SIGTERM: gone within 2 s (scaled)
t0=$(date +%s%N)
kill -TERM "$DPID"
wait_for $((5 * SCALE)) process_gone "$DPID" ||
	fail "the daemon did not stop on SIGTERM"
stop_ms=$((($(date +%s%N) - t0) / 1000000))
wait "$DPID" || fail "the daemon exited with status $? on SIGTERM"
DPID=
echo "stopped ${stop_ms} ms after SIGTERM"
[ "$stop_ms" -le $((2000 * SCALE)) ] ||
	fail "the daemon took $stop_ms ms to stop (bound $((2000 * SCALE)) ms)"

# the client: a FIFO or a device as --db, a FIFO no one reads as --output
mkfifo "$T/db.fifo"
expect_error() {	# WANT EXIT COMMAND...: fails at once with WANT on stderr
	local want=$1 code=$2 rc=0
	shift 2
	timeout 10 "$@" >"$T/out.txt" 2>"$T/err.txt" || rc=$?
	[ $rc -ne 124 ] || fail "$*: still blocked after 10 s"
	[ $rc -eq "$code" ] || fail "$*: exit $rc, not $code: $(cat "$T/err.txt")"
	grep -qF -- "$want" "$T/err.txt" ||
		fail "$*: no \"$want\" in: $(cat "$T/err.txt")"
}
expect_error "cannot open the database $T/db.fifo: is a FIFO, not a regular file" 4 \
	"$CLIENT" --db "$T/db.fifo" export --from 1h
expect_error "cannot open the database $T/db.fifo: is a FIFO" 4 \
	"$CLIENT" --db "$T/db.fifo" windows
expect_error "cannot open the database /dev/null: is a character device" 4 \
	"$CLIENT" --db /dev/null summary --window fifoflip
mkfifo "$T/out.fifo"
expect_error "$T/out.fifo: is a FIFO that no one is reading; nothing written" 1 \
	"$CLIENT" --db "$DB" export --from 1h --output "$T/out.fifo"
mkdir "$T/out.dir"
expect_error "$T/out.dir: is a directory; name a file to write" 1 \
	"$CLIENT" --db "$DB" export --from 1h --output "$T/out.dir"
# a FIFO that someone reads is written (a shell's >(...))
"$CLIENT" --db "$DB" export --from 1h --output >(wc -l >"$T/wc.txt") ||
	fail "export to a FIFO that is read failed"
exit 0
