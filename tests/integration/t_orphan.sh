#!/usr/bin/env bash
# A window whose daemon died.  While the daemon runs, an open window reads
# as open (exit 0).  Once the daemon is SIGKILLed, windows, export and
# summary each say the window was never ended, name the dead daemon and
# when it was last seen writing, and where the window's last sample is;
# they read it up to that sample and exit 7, or 0 with --partial (the same
# note on stderr); the duration read twice does not grow.  The next start
# ends the window at that last stored sample, ended_by daemon_gone, with
# the reason in end_note, and windows shows the fixed end and a duration
# that no longer grows.  A window left open by a clean stop (SIGTERM) is
# open again after the restart, as before.
source "$(dirname "$0")/lib.sh"

sql() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }

# run NAME EXPECTED ARGS...: spy ARGS into $T/NAME.out and .err; fails
# unless the exit status is EXPECTED
run() {
	local name=$1 want=$2 rc=0
	shift 2
	spy "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	[ "$rc" -eq "$want" ] ||
		fail "$*: exit status $rc, not $want: $(cat "$T/$name.err")"
}

# says NAME TEXT: the stderr of run NAME holds TEXT
says() {
	grep -qF -- "$2" "$T/$1.err" || fail "$1: no '$2' in: $(cat "$T/$1.err")"
}

# the time as spyremon prints it to the millisecond (fmt_time_ms)
ms_time() {
	python3 -c 'import sys, time; ns = int(sys.argv[1]); print(time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + ".%03dZ" % (ns // 10**6 % 1000))' "$1"
}

duration_of() {
	spy windows --tag "$1" --json --partial 2>/dev/null | jq -r '.[0].duration_ns'
}

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
ID=$(spy mark begin --tag doomed) || fail "mark begin failed"
BEGIN=$(window_begin_ns "$ID") || fail "window $ID not stored within 20s"
in_window() { [ "$(sql "SELECT count(*) FROM samples WHERE ts_ns > $BEGIN")" -ge 6 ]; }
wait_for 20 in_window || fail "no samples stored in the window"

# ---- the daemon runs: open, as before ----
run alive 0 windows --tag doomed
grep -q " open " "$T/alive.out" || fail "not open: $(cat "$T/alive.out")"
[ ! -s "$T/alive.err" ] || fail "a note while the daemon runs: $(cat "$T/alive.err")"
run alive_export 0 export --window doomed
says alive_export "still open; exporting up to now"

DEAD=$DPID
sigkill_daemon doomed
LAST=$(sql "SELECT max(ts_ns) FROM samples")
[ "$LAST" -gt "$BEGIN" ] || fail "no sample after the begin"
LAST_MS=$(ms_time "$LAST")
# (before the daemon table is read, which older builds lack)
run first 7 windows --tag doomed
SEEN=$(sql "SELECT alive_ns FROM daemon")
[ "$(sql "SELECT pid FROM daemon")" = "$DEAD" ] || fail "the daemon table does not name pid $DEAD"
[ "$SEEN" -ge "$LAST" ] || fail "alive_ns $SEEN is before the last sample $LAST"
SEEN_MS=$(ms_time "$SEEN")

# ---- the daemon is gone: each reader says so, exits 7, or 0 with --partial ----
for cmd in windows export summary; do
	case $cmd in
	windows) args=(windows --tag doomed) ;;
	export) args=(export --window doomed) ;;
	summary) args=(summary --window doomed) ;;
	esac
	run "$cmd" 7 "${args[@]}"
	run "$cmd-partial" 0 "${args[@]}" --partial
	for name in "$cmd" "$cmd-partial"; do
		says "$name" "window $ID 'doomed' was never ended"
		says "$name" "spyremond $DEAD that held it stopped without ending it (there is no process $DEAD)"
		says "$name" "last seen writing at $SEEN_MS"
		says "$name" "its last sample is at $LAST_MS"
	done
	says "$cmd" "exit status 7"
	says "$cmd-partial" "(--partial)"
	cmp -s "$T/$cmd.out" "$T/$cmd-partial.out" ||
		fail "$cmd: --partial wrote other data"
done
grep -q "never ended" "$T/windows.out" || fail "windows: $(cat "$T/windows.out")"
grep -q "never ended: its daemon is gone" "$T/summary.out" ||
	fail "summary: $(cat "$T/summary.out")"
# export: up to the last sample, not a row more
n=$(($(wc -l <"$T/export.out") - 1))
want=$(sql "SELECT count(*) FROM samples WHERE ts_ns > $BEGIN")
[ "$n" -ge "$want" ] || fail "export wrote $n rows, the window has $want"
# the duration is to the last sample, and does not grow
d1=$(duration_of doomed)
sleep 0.5
d2=$(duration_of doomed)
[ "$d1" = $((LAST - BEGIN)) ] || fail "duration $d1, not last sample - begin $((LAST - BEGIN))"
[ "$d1" = "$d2" ] || fail "the duration grew from $d1 to $d2"

# ---- the next start ends it at its last stored sample, and says why ----
start_daemon
ended() { [ -n "$(sql "SELECT end_ns FROM windows WHERE id = $ID AND end_ns IS NOT NULL")" ]; }
wait_for 20 ended || fail "window $ID still open after the restart"
wait_for 20 log_has "1 ended window is never complete" ||
	fail "the restarted daemon did not mark it never complete"
[ "$(sql "SELECT end_ns FROM windows WHERE id = $ID")" = "$LAST" ] ||
	fail "ended at $(sql "SELECT end_ns FROM windows WHERE id = $ID"), not the last sample $LAST"
[ "$(sql "SELECT ended_by FROM windows WHERE id = $ID")" = daemon_gone ] ||
	fail "ended_by is not daemon_gone"
note=$(sql "SELECT end_note FROM windows WHERE id = $ID")
case $note in
"daemon restart: spyremond $DEAD that held it was gone"*) ;;
*) fail "end_note: '$note'" ;;
esac
log_has "window $ID 'doomed' of uid .* ended at its last stored sample" ||
	fail "the end was not logged"
# more samples of the new daemon, so that a duration to now would grow
rows=$(rows_in_db)
run after 0 windows --tag doomed
wait_for 20 rows_at_least $((rows + 4)) || fail "the new daemon stores nothing"
run after2 0 windows --tag doomed
grep -q "$LAST_MS (daemon gone)" "$T/after.out" || fail "windows: $(cat "$T/after.out")"
cmp -s "$T/after.out" "$T/after2.out" ||
	fail "windows changed: $(cat "$T/after.out" "$T/after2.out")"
d3=$(duration_of doomed)
[ "$d3" = $((LAST - BEGIN)) ] || fail "duration after the restart $d3, not $((LAST - BEGIN))"
# summary names the reason
rc=0
spy summary --window doomed >"$T/sum.out" 2>/dev/null || rc=$?
grep -q "ended by daemon_gone" "$T/sum.out" || fail "summary: $(cat "$T/sum.out")"
grep -qF "Ended by daemon_gone: daemon restart: spyremond $DEAD" "$T/sum.out" ||
	fail "summary names no reason: $(cat "$T/sum.out")"

# ---- a clean stop leaves its window open for the next start ----
ID2=$(spy mark begin --tag kept) || fail "mark begin failed"
stop_daemon
[ -n "$(sql "SELECT stopped_ns FROM daemon")" ] || fail "no stopped_ns after a clean stop"
run kept 0 windows --tag kept
grep -q " open " "$T/kept.out" || fail "kept: $(cat "$T/kept.out")"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket after the restart"
wait_for 20 log_has "1 window is still open from before" || fail "kept: not loaded"
[ -z "$(sql "SELECT end_ns FROM windows WHERE id = $ID2")" ] ||
	fail "window $ID2 ended by a restart after a clean stop"
run kept2 0 windows --tag kept
grep -q " open " "$T/kept2.out" || fail "kept: $(cat "$T/kept2.out")"
stop_daemon
echo "ok: ended at the last sample, $(((LAST - BEGIN) / 1000000)) ms after the begin"
