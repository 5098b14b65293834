# The stored rate follows the profiling windows, with the simulator
# sampling every 100 ms and rows stored every 1 s outside windows.
#
# With pre_window 3s: rows are 1 s apart before begin - 3 s, 100 ms apart
# from begin - 3 s (the ring's rows replaced the coarse rows there) through
# the first row that starts after the end, 1 s apart again after it; no
# two rows of a card overlap, and every stored value is the exact
# aggregate of the simulator's rows (windowrate.py).  With pre_window 0 the child is restarted at 100 ms on
# begin: the switch latency (begin request to the first 100 ms row) is
# printed, and every row is one the simulator wrote.
source "$(dirname "$0")/lib.sh"

WR=$ROOT/tests/integration/windowrate.py

# rate_config PRE_WINDOW: 2 cards, 1 s stored, 100 ms in windows
rate_config() {
	write_config 2 1s
	sed -i "s/^  window_interval: .*/  window_interval: 100ms\n  pre_window: $1/" \
		"$T/spyremond.yaml"
}

# ctl JSON: send a request; sets SENT (client clock, ns) and REPLY
ctl() {
	local out
	out=$(python3 "$WR" ctl "$T/control.sock" "$1") || fail "request $1"
	SENT=${out%% *}
	REPLY=${out#* }
	case $REPLY in *'"ok":true'*) ;; *) fail "$1: $REPLY" ;; esac
}

# field NAME: an integer field of REPLY
field() {
	printf '%s\n' "$REPLY" | python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"
}

daemon_answers() {
	python3 "$WR" ctl "$T/control.sock" '{"v":1,"cmd":"hello"}' >/dev/null 2>&1
}

rows_of() {
	sqlite3 -readonly "file:$DB?mode=ro" "SELECT count(*) FROM samples WHERE $1" 2>/dev/null || echo 0
}

coarse_rows_at_least() {
	[ "$(rows_of 'device = 0 AND interval_ms = 1000')" -ge "$1" ]
}

# rows_after MS NS: at least 2 rows of interval MS stamped after NS
rows_after() {
	[ "$(rows_of "interval_ms = $1 AND ts_ns > $2")" -ge 2 ]
}

"$SIM" --cards 1 -s -g A -d 0.01 --exit-after 1 "$T/none.%BUSID" \
	>"$T/header.csv" 2>/dev/null || true
grep -q '^ID,' "$T/header.csv" || fail "no header from the simulator"

# ---- pre_window 3s: the ring ----
rate_config 3s
FLUSH=100ms
start_daemon
wait_for 20 daemon_answers || fail "control socket does not answer"
wait_for 20 coarse_rows_at_least 7 || fail "no coarse rows"
ctl '{"v":1,"cmd":"begin","tag":"rate"}'
BEGIN=$(field begin_ns)
echo "begin: request to stamp $(( (BEGIN - SENT) / 1000 )) us"
sleep 3
ctl '{"v":1,"cmd":"end"}'
END=$(field end_ns)
sleep 3.5
stop_daemon
python3 "$WR" check "$DB" "$STAMPS" "$T/header.csv" "$BEGIN" "$END" \
	--fine-ms 100 --coarse-ms 1000 --pre-ms 3000 || fail "pre_window 3s"
log_has "fine-rate ring: 47 rows" || fail "ring depth not logged"

# ---- pre_window 0: a child restart per switch ----
DB=$T/restart.db
STAMPS=$T/restart.stamps
rate_config 0s
start_daemon
wait_for 20 daemon_answers || fail "control socket does not answer"
wait_for 20 coarse_rows_at_least 3 || fail "no rows at 1 s"
ctl '{"v":1,"cmd":"begin","tag":"rate"}'
BEGIN=$(field begin_ns)
BEGIN_SENT=$SENT
wait_for 10 rows_after 100 "$BEGIN" ||
	fail "the child did not switch to 100 ms"
sleep 2
ctl '{"v":1,"cmd":"end"}'
END=$(field end_ns)
wait_for 10 rows_after 1000 "$END" ||
	fail "the child did not switch back to 1 s"
stop_daemon
FIRST=$(sqlite3 "$DB" "SELECT min(ts_ns) FROM samples WHERE device = 0 AND interval_ms = 100")
BACK=$(sqlite3 "$DB" "SELECT min(ts_ns) FROM samples WHERE device = 0 AND interval_ms = 1000 AND ts_ns > $END")
LAST=$(sqlite3 "$DB" "SELECT max(ts_ns) FROM samples WHERE device = 0 AND ts_ns < $FIRST")
echo "restart switch: begin request to first 100 ms row $(( (FIRST - BEGIN_SENT) / 1000000 )) ms;" \
	"uncovered before it $(( (FIRST - 100000000 - LAST) / 1000000 )) ms;" \
	"end to first 1 s row $(( (BACK - END) / 1000000 )) ms"
[ "$FIRST" -gt "$BEGIN" ] || fail "a 100 ms row before begin without a ring"
# nothing at 100 ms is stored after the end but what was read before it
[ "$(rows_of "interval_ms = 100 AND ts_ns > $END + 200000000")" -eq 0 ] ||
	fail "100 ms rows long after the end"
python3 "$ROOT/tests/integration/compare.py" "$DB" "$STAMPS" --min-rows 20
exit 0
