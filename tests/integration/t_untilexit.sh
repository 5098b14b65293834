#!/usr/bin/env bash
# mark begin --until-exit PID: the daemon watches PID with a pidfd and ends
# the window when it exits, also by SIGKILL, within 1 s of the exit and
# stamped at it, marked ended by exit.  A pid with no process is refused.
# A window whose process died while the daemon was down ends when it
# starts again.  The clock state of a fake unsynchronized clock (the
# adjtimex seam, SPYREMOND_TEST_CLOCK) is recorded and shown by summary.
# aiu-smi exiting inside a window is counted in the window's
# child_restarts and said in its summary.
source "$(dirname "$0")/lib.sh"

sql() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }

FLUSH=200ms write_config 1 100ms
SPYREMOND_TEST_CLOCK=unsync start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"

# a process to tie the window to; kill -9 it and time the end
sleep 300 &
VICTIM=$!
ID=$(spy mark begin --tag doomed --until-exit "$VICTIM") || fail "mark begin failed"
# the writer stores the window a moment after the reply
until_pid_is() { [ "$(sql "SELECT until_pid FROM windows WHERE id = $ID")" = "$1" ]; }
wait_for 10 until_pid_is "$VICTIM" || fail "until_pid not recorded"
sleep 0.5
KILL_NS=$(date +%s%N)
kill -KILL "$VICTIM"
wait "$VICTIM" 2>/dev/null || true
ended() { [ -n "$(sql "SELECT end_ns FROM windows WHERE id = $ID AND end_ns IS NOT NULL")" ]; }
wait_for 5 ended || fail "window $ID not ended within 5 s of its process's SIGKILL"
NOTICED_NS=$(date +%s%N)
END_NS=$(sql "SELECT end_ns FROM windows WHERE id = $ID")
[ "$(sql "SELECT ended_by FROM windows WHERE id = $ID")" = exit ] ||
	fail "ended_by is not exit"
[ "$(sql "SELECT auto_closed FROM windows WHERE id = $ID")" = 1 ] ||
	fail "an end by exit is not flagged auto_closed"
LAG=$((END_NS - KILL_NS))
echo "window ended $((LAG / 1000000)) ms after kill -9 (noticed by the test $(((NOTICED_NS - KILL_NS) / 1000000)) ms after)"
[ "$LAG" -ge 0 ] && [ "$LAG" -lt 1000000000 ] ||
	fail "the end is stamped $LAG ns after the kill, not within 1 s"
log_has "window $ID 'doomed' of uid .* ended: its process $VICTIM exited" ||
	fail "the end by exit was not logged"

# no such process: refused, nothing left open
sleep 0.1 &
GONE=$!
wait "$GONE"
if spy mark begin --tag never --until-exit "$GONE" 2>"$T/err"; then
	fail "a window tied to a dead pid was opened"
fi
grep -q "no process $GONE" "$T/err" || fail "dead pid: $(cat "$T/err")"
spy mark begin --tag x --until-exit 0 2>"$T/err" && fail "--until-exit 0 accepted"
grep -q "not a process ID" "$T/err" || fail "--until-exit 0: $(cat "$T/err")"

# the process dies while the daemon is down: the window ends at start
sleep 300 &
LATER=$!
ID2=$(spy mark begin --tag later --until-exit "$LATER") || fail "mark begin failed"
stop_daemon
kill -KILL "$LATER"
wait "$LATER" 2>/dev/null || true
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket after restart"
ended2() { [ -n "$(sql "SELECT end_ns FROM windows WHERE id = $ID2 AND end_ns IS NOT NULL")" ]; }
wait_for 10 ended2 || fail "window $ID2 still open after a restart without its process"
[ "$(sql "SELECT ended_by FROM windows WHERE id = $ID2")" = exit ] ||
	fail "window $ID2: ended_by is not exit"

# the clock flagged unsynchronized at begin (the fake) is stored and shown
[ "$(sql "SELECT clock_begin_synced FROM windows WHERE id = $ID")" = 0 ] ||
	fail "the unsynchronized clock was not recorded"
summarized() { [ -n "$(sql "SELECT summarized_ns FROM windows WHERE id = $ID AND summarized_ns IS NOT NULL")" ]; }
wait_for 10 summarized || fail "window $ID not summarized"
spy summary --window "$ID" >"$T/sum" || fail "summary failed"
grep -Eq "Host clock at the window's begin( and end)?: NOT synchronized" "$T/sum" ||
	fail "summary does not show the unsynchronized clock: $(cat "$T/sum")"
grep -q "ended by exit" "$T/sum" || fail "summary does not say ended by exit"

# aiu-smi restarted inside a window: counted, and said in the summary
stop_daemon
FLUSH=200ms write_config 1 100ms --exit-after 25
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket after the restart"
ID3=$(spy mark begin --tag restarts) || fail "mark begin failed"
wait_for 20 log_has "restarting" || sleep 5
sleep 3
spy mark end --tag restarts --wait 20s >/dev/null || fail "mark end --wait failed"
n=$(sql "SELECT child_restarts FROM windows WHERE id = $ID3")
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "child_restarts is '$n' after aiu-smi exited inside the window"
summarized3() { [ -n "$(sql "SELECT summarized_ns FROM windows WHERE id = $ID3 AND summarized_ns IS NOT NULL")" ]; }
wait_for 10 summarized3 || fail "window $ID3 not summarized"
spy summary --window "$ID3" >"$T/sum3" || fail "summary failed"
grep -q "aiu-smi was restarted $n time" "$T/sum3" || fail "summary does not say the restarts: $(cat "$T/sum3")"
echo "window $ID3: aiu-smi restarted $n time(s) inside it, said in the summary"
stop_daemon
exit 0
