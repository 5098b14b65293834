#!/usr/bin/env bash
# spyremon capture where dynolog already holds Kineto's daemon socket
# (tests/tools/dynolog_standin.py, on a socket folder and a TCP port of
# 127.0.0.1 of its own): capture says so, hands the request to dynolog over
# TCP as "dyno gputrace" does, and gets the trace, the window and the
# merged trace as on its own path.  A process dynolog has not heard from is
# "never polled" (10); a name held by something that is not dynolog, with
# nothing on the port, is a failure (1) that says what holds it.  An
# endpoint whose answer names a process that is not the target or one it
# started (PID 1, an unrelated sleep, one that does not exist) is not
# believed: exit 13, the process named, no window, no output.
source "$(dirname "$0")/lib.sh"

spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
STANDIN=$ROOT/tests/tools/kineto_standin.py
DYNO=$ROOT/tests/tools/dynolog_standin.py
CHECK=$ROOT/tests/integration/capture_check.py

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 2 || fail "no row stored within 20s"

mkdir -p "$T/kipc"
python3 "$DYNO" --socket-dir "$T/kipc" --log-tag "$T/dyno" >"$T/dyno.out" 2>"$T/dyno.log" &
wait_for 30 grep -q '^port ' "$T/dyno.out" || fail "the dynolog stand-in did not start"
PORT=$(sed -n 's/^port //p' "$T/dyno.out")

env KINETO_USE_DAEMON=1 "KINETO_IPC_SOCKET_DIR=$T/kipc" ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1 \
	python3 "$STANDIN" --log-tag "$T/job" >"$T/job.out" 2>"$T/job.log" &
wait_for 30 grep -q '^pid ' "$T/job.out" || fail "the job did not start"
P=$(sed -n '1s/^pid //p' "$T/job.out")
wait_for 20 grep -q "registered process ($P" "$T/dyno.log" || fail "the job never polled dynolog"

spy capture --pid "$P" --duration 2s --dynolog-port "$PORT" --output "$T/out" \
	>"$T/cap.out" 2>"$T/cap.err" || fail "capture through dynolog failed ($?): $(cat "$T/cap.err")"
cat "$T/cap.out" "$T/cap.err"
grep -q "$T/kipc/dynolog is held by another daemon: asking dynolog on 127.0.0.1:$PORT" \
	"$T/cap.err" || fail "capture does not say it went through dynolog"
grep -q '"fn": "setKinetOnDemandRequest"' "$T/dyno.log" || fail "dynolog got no request"
grep -q "REQUEST_TRACE_ID=" "$T/job.log" || fail "the job did not get dynolog's config"
TRACE=$(ls "$T"/out/*_"$P".*.pt.trace.json) || fail "no trace in the output"
python3 "$CHECK" merged "$TRACE" "${TRACE%.pt.trace.json}.merged.json" 2 || fail "the merged trace"
spy windows --json >"$T/windows.json"
python3 -c 'import json,sys; w=[w for w in json.load(open(sys.argv[1])) if w["tag"]=="capture-'"$P"'"]; assert len(w)==1 and w[0]["meta"]["capture"]=="dynolog"; json.dump(w[0], open(sys.argv[2],"w"))' \
	"$T/windows.json" "$T/win.json" || fail "no window of the dynolog capture"
spy trace info --json "$TRACE" >"$T/info.json"
python3 "$CHECK" span "$T/win.json" "$T/info.json" --slack 100000000 ||
	fail "the window does not span the trace"

# a process dynolog does not know
sleep 300 &
QUIET=$!
rc=0
spy capture --pid "$QUIET" --socket-dir "$T/kipc" --dynolog-port "$PORT" --output "$T/none" \
	>"$T/none.out" 2>"$T/none.err" || rc=$?
cat "$T/none.err"
[ "$rc" -eq 10 ] || fail "unknown to dynolog: exit status $rc, not 10"
grep -q "dynolog has had no poll for trace requests from process $QUIET.*KINETO_USE_DAEMON=1" "$T/none.err" || fail "unknown to dynolog: $(cat "$T/none.err")"
kill "$QUIET"

# an endpoint answering for another process: start_liar NAME PID puts its
# port in $PORT_NAME and holds the name in $T/NAME
start_liar() {
	mkdir -p "$T/$1"
	python3 "$DYNO" --socket-dir "$T/$1" --answer-for "$2" --log-tag "$T/$1" \
		>"$T/$1.out" 2>"$T/$1.log" &
	wait_for 30 grep -q '^port ' "$T/$1.out" || fail "the $1 stand-in did not start"
	eval "PORT_$1=$(sed -n 's/^port //p' "$T/$1.out")"
}
sleep 300 &
OTHER=$!
start_liar liar_init 1
start_liar liar_other "$OTHER"
start_liar liar_gone 2147483646
nwin() { spy windows --json | python3 -c 'import json,sys; print(sum(1 for w in json.load(sys.stdin) if w["tag"] == sys.argv[1]))' "capture-$P"; }
before=$(nwin)
for liar in liar_init liar_other liar_gone; do
	port=$(eval echo "\$PORT_$liar")
	rc=0
	timeout 120 "$CLIENT" -c "$T/spyremond.yaml" capture --pid "$P" \
		--socket-dir "$T/$liar" --dynolog-port "$port" --output "$T/$liar.dir" \
		>"$T/$liar.cap.out" 2>"$T/$liar.cap.err" || rc=$?
	cat "$T/$liar.cap.err"
	[ "$rc" -eq 13 ] || fail "$liar: exit status $rc, not 13"
	case $liar in
	liar_init) what="process 1 (.*), which is neither process $P nor a process it started" ;;
	liar_other) what="process $OTHER (sleep 300), which is neither process $P nor a process it started" ;;
	liar_gone) what="process 2147483646, which does not exist, not for process $P or a process it started" ;;
	esac
	grep -q "dynolog on 127.0.0.1:$port answered for $what: not using its answer" \
		"$T/$liar.cap.err" || fail "$liar: $(cat "$T/$liar.cap.err")"
	[ "$(nwin)" = "$before" ] || fail "$liar: a window was opened"
	[ -e "$T/$liar.dir" ] && fail "$liar: an output directory was left"
	ls -d "$T/$liar.dir".tmp-* 2>/dev/null && fail "$liar: a temporary directory was left"
done
kill "$OTHER"

# the name held, nothing on the port: a closed port of this host
CLOSED=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rc=0
spy capture --pid "$P" --dynolog-port "$CLOSED" --output "$T/closed" \
	>"$T/closed.out" 2>"$T/closed.err" || rc=$?
cat "$T/closed.err"
[ "$rc" -eq 1 ] || fail "nothing on the port: exit status $rc, not 1"
grep -q "is held by another process, and dynolog does not answer on 127.0.0.1:$CLOSED" \
	"$T/closed.err" || fail "nothing on the port: $(cat "$T/closed.err")"
[ -e "$T/closed" ] && fail "nothing on the port: an output directory was left"

kill "$P"
stop_daemon
exit 0
