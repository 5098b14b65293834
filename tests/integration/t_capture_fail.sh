#!/usr/bin/env bash
# Each way spyremon capture fails, with its message and exit status
# (spyremon(1), EXIT STATUS), and no output directory left behind when
# there is no trace: no such process (8); another user's process, for a
# user who is not root (9); a process that never polls, not started with
# KINETO_USE_DAEMON (10, naming the variable); a process whose profiler
# stays busy with a trace of its own (11); one stopped until after the
# planned start, twice, which refuses it and then the request asked again
# (11); one that traces but cannot write its
# trace (12); one killed while tracing (12).
source "$(dirname "$0")/lib.sh"

spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
STANDIN=$ROOT/tests/tools/kineto_standin.py

# expect STATUS NEEDLE NAME capture-args...: capture fails so, and says so
expect() {
	local want=$1 needle=$2 name=$3 rc=0
	shift 3
	spy capture "$@" --output "$T/out-$name" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	cat "$T/$name.err"
	[ "$rc" -eq "$want" ] || fail "$name: exit status $rc, not $want: $(cat "$T/$name.err")"
	grep -q -- "$needle" "$T/$name.err" || fail "$name: no '$needle' in: $(cat "$T/$name.err")"
	[ -e "$T/out-$name" ] && fail "$name: an output directory was left"
	ls -d "$T"/out-"$name".tmp-* 2>/dev/null && fail "$name: a temporary directory was left"
	return 0
}

# start_standin NAME [env...] -- [args...]: a stand-in, its pid in $PID_NAME
start_standin() {
	local name=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	env "${envs[@]}" python3 "$STANDIN" --log-tag "$T/$name" "$@" \
		>"$T/$name.out" 2>"$T/$name.log" &
	wait_for 30 grep -q '^pid ' "$T/$name.out" || fail "$name did not start"
	eval "PID_$name=$(sed -n '1s/^pid //p' "$T/$name.out")"
}

FLUSH=200ms write_config 1 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
mkdir -p "$T/kipc"
KENV=(KINETO_USE_DAEMON=1 "KINETO_IPC_SOCKET_DIR=$T/kipc"
	ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1)

# no such process
sleep 0.1 &
GONE=$!
wait "$GONE"
expect 8 "there is no process $GONE" gone --pid "$GONE"

# not yours: nobody may not capture root's process
sleep 300 &
ROOTS=$!
chmod 755 "$T"
rc=0
setpriv --reuid nobody --regid nogroup --clear-groups "$CLIENT" --socket "$T/control.sock" \
	capture --pid "$ROOTS" --output "$T/out-nobody" >"$T/nobody.out" 2>"$T/nobody.err" || rc=$?
cat "$T/nobody.err"
[ "$rc" -eq 9 ] || fail "not yours: exit status $rc, not 9"
grep -q "process $ROOTS belongs to uid 0: only root may capture another user's process" \
	"$T/nobody.err" || fail "not yours: $(cat "$T/nobody.err")"
kill "$ROOTS"

# never polls: KINETO_USE_DAEMON is not set
start_standin nodaemon "KINETO_IPC_SOCKET_DIR=$T/kipc" ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1
expect 10 "start the job with KINETO_USE_DAEMON=1" nodaemon --pid "$PID_nodaemon" --wait 3s
grep -q "did not poll for a trace request within 3.000s" "$T/nodaemon.err" ||
	fail "never polls: the wait is not named"

# busy the whole wait with a trace of its own (torch.profiler)
start_standin busy "${KENV[@]}" -- --own-trace 0:600
expect 11 "busy with a trace of its own" busy --pid "$PID_busy" --wait 3s

# refused: the process is stopped from just after it takes the request
# until after the planned start, so that the profiler's look at the
# request finds the start in the past (as on a host that swaps); capture
# asks once more, and the same again is a refusal
start_standin late "${KENV[@]}"
spy capture --pid "$PID_late" --duration 2s --output "$T/out-late" \
	>"$T/late-cap.out" 2>"$T/late.err" &
CAP=$!
# stop_past N: after the Nth request, stop the job until past its start
stop_past() {
	local start
	configs() { [ "$(grep -c "Received config" "$T/late.log")" -ge "$1" ]; }
	wait_for 20 configs "$1" || fail "late: no request $1"
	kill -STOP "$PID_late"
	start=$(sed -n 's/.*: [0-9.]*s from \(.*\)$/\1/p' "$T/late.err" | sed -n "$1p")
	[ -n "$start" ] || fail "late: capture did not say planned start $1"
	sleep "$(python3 -c 'import sys, time, datetime; t = datetime.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00")).timestamp(); print(max(0, t - time.time() + 0.3))' "$start")"
	kill -CONT "$PID_late"
}
stop_past 1
stop_past 2
rc=0
wait "$CAP" || rc=$?
cat "$T/late.err"
[ "$rc" -eq 11 ] || fail "late: exit status $rc, not 11"
grep -q "did not start the trace (its profiler looked at the request too late); asking again" \
	"$T/late.err" || fail "late: capture did not ask again"
grep -q "took the request but did not start the trace: it was idle after the planned start, twice" \
	"$T/late.err" || fail "late: $(cat "$T/late.err")"
wait_for 5 grep -q "Not starting tracing - start timestamp is in the past" "$T/late.log" ||
	fail "refused: the stand-in did not refuse"
[ -e "$T/out-late" ] && fail "late: an output directory was left"

# no trace: it may write only under a folder that does not exist
start_standin nowrite "${KENV[@]}" "KINETO_ONDEMAND_TRACE_DIR=$T/missing"
expect 12 "took the request but traced (it polled busy), but wrote no trace" nowrite \
	--pid "$PID_nowrite" --duration 1s
grep -q "(asked for $T/missing/" "$T/nowrite.err" || fail "no trace: the path is not named"

# no trace: killed while tracing
start_standin killed "${KENV[@]}"
spy capture --pid "$PID_killed" --duration 5s --output "$T/out-killed" \
	>"$T/killed.out" 2>"$T/killed.err" &
CAP=$!
wait_for 20 grep -q "took the request" "$T/killed.err" || fail "killed: no request taken"
wait_for 20 grep -q "Tracing started" "$T/killed.log" || fail "killed: no trace started"
kill -KILL "$PID_killed"
rc=0
wait "$CAP" || rc=$?
cat "$T/killed.err"
[ "$rc" -eq 12 ] || fail "killed: exit status $rc, not 12"
grep -q "exited before its trace was written" "$T/killed.err" || fail "killed: $(cat "$T/killed.err")"
[ -e "$T/out-killed" ] && fail "killed: an output directory was left"

# every window a failed capture opened has ended
[ "$(sqlite3 -readonly "file:$DB?mode=ro" 'SELECT count(*) FROM windows WHERE end_ns IS NULL')" = 0 ] ||
	fail "a failed capture left its window open"

kill "$PID_nodaemon" "$PID_busy" "$PID_late" "$PID_nowrite" 2>/dev/null || true
stop_daemon
exit 0
