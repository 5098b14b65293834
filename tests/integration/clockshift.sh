# Sourced after lib.sh by the tests that move the host clock: the daemon,
# the simulator it runs and the client see CLOCK_REALTIME moved by what
# $SHIFT holds (tests/tools/clockshift.c: an offset in ns, optionally a
# slew rate in ppm after it), reread whenever the file changes; the
# machine's clock is never touched.  $SHIFT starts at 0.
SHIM=$BIN/tests/clockshift.so
[ -f "$SHIM" ] || fail "$SHIM: build it first (make check does)"
SHIFT=$T/shift
echo 0 >"$SHIFT"

# under_shift CMD...: exec CMD under the shift (so that the daemon is the
# background job itself, which stop_daemon signals)
under_shift() {
	CLOCKSHIFT_FILE=$SHIFT LD_PRELOAD=$SHIM \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		exec "$@"
}
# start_shifted_daemon: start_daemon, under the shift
start_shifted_daemon() {
	(under_shift "$DAEMON" -v -c "$T/spyremond.yaml" >>"$DLOG" 2>&1) &
	DPID=$!
}
ctl() { (under_shift "$CLIENT" -c "$T/spyremond.yaml" "$@"); }
# steps_at_least N: status counts N steps of the host clock or more
steps_at_least() {
	ctl status --json 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin)["clock"]["steps"] >= int(sys.argv[1]) else 1)' "$1"
}
# more_rows N WHAT: wait for N more stored rows, or fail naming WHAT
more_rows() {
	local n
	n=$(rows_in_db)
	wait_for 30 rows_at_least $((n + $1)) || fail "no rows after $2"
}
