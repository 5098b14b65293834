# Shared by the integration tests: a scratch directory, a fake sysfs, a
# config pointing the daemon at the simulator, and start/stop helpers.
# Source it from a test run with "bash"; B names the build directory.

set -euo pipefail

B=${B:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$ROOT/$B
SIM=$BIN/aiu-smi-sim
DAEMON=$BIN/spyremond
CLIENT=$BIN/spyremon
T=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-test.XXXXXX")
DB=$T/spyremon.db
STAMPS=$T/stamps.log
DLOG=$T/daemon.log
DPID=

cleanup() {
	local rc=$?
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		kill -KILL "$DPID" 2>/dev/null || true
	fi
	pkill -KILL -f "$T/" 2>/dev/null || true
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -f "$DLOG" ]; then
		echo "--- daemon log (last 40 lines) ---"
		tail -n 40 "$DLOG"
	fi
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
	exit $rc
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# need PROGRAM...: fail unless each is on PATH.  A missing program is for
# the user to install (sh mk/deps.sh does), never a reason to skip.
need() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || fail "$p is missing (sh mk/deps.sh installs it)"
	done
}

# make_sysfs N: a fake sysfs with N Spyre PFs and one unrelated device.
# Each PF's PCIe link is 16.0 GT/s x16, or, with SYSFS_LINKS set to
# "SPEED|WIDTH,..." (such as "8.0 GT/s PCIe|4,Unknown|0"), the i-th item's
# for PF i (those past the list keep the default).
make_sysfs() {
	local n=$1 i dev links=() link
	IFS=, read -r -a links <<<"${SYSFS_LINKS:-}"
	mkdir -p "$T/sys/bus/pci/devices" "$T/sys/bus/pci/drivers/aiu"
	for ((i = 0; i < n; i++)); do
		dev=$T/sys/bus/pci/devices/$(printf '0000:%02x:00.0' $((0x13 + i)))
		mkdir -p "$dev"
		echo 0x1014 >"$dev/vendor"
		echo 0x06a7 >"$dev/device"
		echo $((i % 2)) >"$dev/numa_node"
		link=${links[i]:-16.0 GT/s PCIe|16}
		echo "${link%|*}" >"$dev/current_link_speed"
		echo "${link##*|}" >"$dev/current_link_width"
		ln -sfn ../../drivers/aiu "$dev/driver"
	done
	dev=$T/sys/bus/pci/devices/0000:00:1f.0
	mkdir -p "$dev"
	echo 0x8086 >"$dev/vendor"
	echo 0x1234 >"$dev/device"
}

# write_config CARDS INTERVAL [extra simulator options...]: window_interval
# is INTERVAL too, so every row the simulator prints is stored as printed.
write_config() {
	local cards=$1 interval=$2 arg
	shift 2
	make_sysfs "$cards"
	{
		echo "database: $DB"
		echo "socket: $T/control.sock"
		echo "flush_interval: ${FLUSH:-1s}"
		echo "sysfs_root: $T/sys"
		echo "source:"
		printf '  command: ["%s", "--cards", "%s", "--seed", "7", "--stamp-log", "%s"' \
			"$SIM" "$cards" "$STAMPS"
		for arg in "$@"; do printf ', "%s"' "$arg"; done
		echo "]"
		echo "  interval: $interval"
		echo "  window_interval: $interval"
		echo "  metric_files: $T/metrics.%BUSID"
		# more top-level sections, whole, from the test
		[ -z "${CONFIG_EXTRA:-}" ] || printf '%s\n' "$CONFIG_EXTRA"
	} >"$T/spyremond.yaml"
}

start_daemon() {
	"$DAEMON" -v -c "$T/spyremond.yaml" >>"$DLOG" 2>&1 &
	DPID=$!
}

# stop_daemon: SIGTERM and wait; fails unless the exit status is 0.
stop_daemon() {
	local rc=0
	kill -TERM "$DPID"
	wait "$DPID" || rc=$?
	DPID=
	[ $rc -eq 0 ] || fail "daemon exited with status $rc on SIGTERM"
}

rows_in_db() {
	sqlite3 -readonly "file:$DB?mode=ro" 'SELECT count(*) FROM samples' 2>/dev/null || echo 0
}

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 10; i++)); do
		if "$@"; then return 0; fi
		sleep 0.1
	done
	return 1
}

rows_at_least() {
	[ "$(rows_in_db)" -ge "$1" ]
}

# window_stored ID: the database file holds window ID
window_stored() {
	[ -n "$(sqlite3 -readonly "file:$DB?mode=ro" \
		"SELECT 1 FROM windows WHERE id = $1" 2>/dev/null)" ]
}

# window_begin_ns ID: window ID's begin stamp, once the writer has stored
# the window (a moment after mark begin answers, later if the database is
# busy); fails if that takes over 20 s.
window_begin_ns() {
	wait_for 20 window_stored "$1" &&
		sqlite3 -readonly "file:$DB?mode=ro" \
			"SELECT begin_ns FROM windows WHERE id = $1"
}

# time_scale and emulated (scale.sh)
source "$(dirname "${BASH_SOURCE[0]}")/scale.sh"

# sigkill_daemon RUN: SIGKILL the daemon; the simulator it ran must go with
# it (the kernel's SIGTERM when its parent dies).  KILL_NS is the kill's time.
sigkill_daemon() {
	local sim
	sim=$(pgrep -P "$DPID" | head -n 1)
	KILL_NS=$(date +%s%N)
	kill -KILL "$DPID"
	wait "$DPID" 2>/dev/null || true
	DPID=
	[ -n "$sim" ] || fail "run $1: no simulator running"
	# one stopped by the test (t_complete) gets its SIGTERM when it runs
	# again: the kernel ends a stopped process on a signal it does not
	# handle, but under qemu-user the emulator handles every signal itself
	kill -CONT "$sim" 2>/dev/null || true
	# a timing bound, so it stretches: under qemu-user the simulator's exit
	# runs translated, behind everything else the machine is doing
	wait_for $((5 * $(time_scale))) process_gone "$sim" ||
		fail "run $1: simulator orphaned"
}

# start_loaded_daemon: 8 cards every 10 ms, flushed every 500 ms, then 10 s
# of undisturbed sampling whose span (BASE, "FROM:TO" in ns) is the
# baseline that compare.py --baseline measures this machine's load by.
# BASELINE_BUSY=1: one CPU-bound process at normal priority runs beside
# the baseline, for a test whose span measured has one more (an import's
# write transaction), so that the two are measured on the same load.
start_loaded_daemon() {
	local from busy=
	FLUSH=500ms write_config 8 10ms
	start_daemon
	wait_for 20 rows_at_least 400 || fail "no rows stored"
	if [ -n "${BASELINE_BUSY:-}" ]; then
		# its command line names $T, so that cleanup kills it too
		sh -c 'while :; do :; done' "$T/baseline-busy" &
		busy=$!
	fi
	from=$(date +%s%N)
	sleep 10
	BASE="$from:$(date +%s%N)"
	[ -z "$busy" ] || kill "$busy"
}

# flex_rank_run DB: a run of two ranks, from the flex trace of four cards
# (flex_ranks.py): $T/r0.json and $T/r1.json (two cards each) and
# $T/all.json (the four in one trace), and DB with 45 ms of samples of
# each card's power and busy (its own levels) around window rk-run, the
# 20 ms from BASE on.  Sets BASE, and FIRST_NS, the traces' first event's
# time (so --trace-start $((BASE - FIRST_NS)) puts it at BASE).
flex_rank_run() {
	local mksamples=$BIN/tests/mksamples
	[ -x "$mksamples" ] || fail "no $mksamples: run make check"
	BASE=1760000000000000000
	FIRST_NS=2097962447132759
	python3 "$ROOT/tests/integration/flex_ranks.py" \
		"$ROOT/tests/data/traces/flex-allreduce-tp4.json" \
		"$T/r0.json" "$T/r1.json" "$T/all.json" || fail "no rank traces"
	python3 - "$BASE" >"$T/samples" <<'PY'
import sys
base = int(sys.argv[1])
for dev in range(4):
    for k in range(-20, 25):
        print("%d %d 1 pwr=%d.0 busy=%d" % (base + k * 10**6, dev,
              50 + 5 * dev + k % 3, 10 + 20 * dev + k % 5))
print("window rk-run %d %d" % (base, base + 20 * 10**6))
PY
	"$mksamples" "$1" <"$T/samples" || fail "mksamples failed"
}

# process_gone PID: true once PID has exited (a zombie counts as gone).
process_gone() {
	[ ! -e "/proc/$1" ] || awk '{ exit !($3 == "Z") }' "/proc/$1/stat" 2>/dev/null
}

log_has() {
	grep -q -- "$1" "$DLOG"
}

# torch_python: set PY to a python3 that imports torch, installing Debian's
# python3-torch (mk/deps.sh) if it is missing and we are root.  Returns 1
# with SKIP_WHY set when only root could install it; fails the test if
# the install fails.
torch_python() {
	local t0
	PY=/usr/bin/python3
	[ -x "$PY" ] || PY=$(command -v python3)
	SKIP_WHY=
	"$PY" -c 'import torch' 2>/dev/null && return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		SKIP_WHY="$PY cannot import torch, and only root can apt-get install python3-torch"
		return 1
	fi
	echo "installing python3-torch for $PY"
	t0=$(date +%s)
	sh "$ROOT/mk/deps.sh" --packages python3-torch >"$T/apt.log" 2>&1 || true
	[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
	if "$PY" -c 'import torch' 2>>"$T/apt.log"; then
		echo "installed python3-torch in $(($(date +%s) - t0))s"
		return 0
	fi
	echo "--- mk/deps.sh --packages python3-torch (last lines) ---"
	tail -n 5 "$T/apt.log"
	fail "$PY cannot import torch, and installing python3-torch failed (see above)"
}
