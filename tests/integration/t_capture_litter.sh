#!/usr/bin/env bash
# spyremon capture leaves nothing behind when it is interrupted, against a
# profiled process (tests/tools/kineto_standin.py) writing its traces to a
# folder of its own: SIGINT while tracing leaves no output and no
# temporary directory; SIGTERM once a trace is copied into the output
# being written, and SIGINT while the report is written, leave the output
# with what was complete and no temporary file in it or beside it.  What
# cannot be cleaned up at once is removed by the next capture, and only
# once the capture that left it is gone: the trace the job still wrote for
# an interrupted capture, and what SIGKILL left while tracing (an empty
# DIR.tmp-XXXXXX) and while the report was written (.report.tmp-XXXXXX
# inside the output).  Each interruption waits for what shows the capture
# is at that point, never for a time: while tracing, the job's log saying
# it began the trace; later, the file the capture writes (signal_at.py).
source "$(dirname "$0")/lib.sh"

STANDIN=$ROOT/tests/tools/kineto_standin.py
SIGNAL_AT=$ROOT/tests/integration/signal_at.py

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 2 || fail "no row stored within 20s"

mkdir -p "$T/kipc" "$T/traces" "$T/out"
env KINETO_USE_DAEMON=1 "KINETO_IPC_SOCKET_DIR=$T/kipc" \
	ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1 "KINETO_ONDEMAND_TRACE_DIR=$T/traces" \
	python3 "$STANDIN" --log-tag "$T/job" >"$T/job.out" 2>"$T/job.log" &
wait_for 30 grep -q '^pid ' "$T/job.out" || fail "the job did not start"
P=$(sed -n '1s/^pid //p' "$T/job.out")

# cap NAME ARGS...: a capture into $T/out/NAME in the background, its pid
# in $CPID, its messages in $T/NAME.err
cap() {
	local name=$1
	shift
	"$CLIENT" -c "$T/spyremond.yaml" capture --pid "$P" --output "$T/out/$name" \
		"$@" >"$T/$name.out" 2>"$T/$name.err" &
	CPID=$!
}
# said_by NAME PATTERN: some try of capture NAME said PATTERN (grep)
said_by() { cat "$T/$1.before.err" "$T/$1.err" 2>/dev/null | grep -q -- "$2"; }
# status: the exit status of $CPID, in $rc
status() { rc=0; wait "$CPID" || rc=$?; }
# the trace the job wrote (or writes) for capture $1
trace_for() { ls "$T"/traces/spyremon-capture-"$1"-*_"$P".pt.trace.json 2>/dev/null; }
# hidden DIR: the entries of DIR whose names begin with '.'
hidden() { ls -A "$1" | grep '^\.' || true; }
# took NAME: capture NAME sent the job its request.  That is not yet a
# trace: a reply that comes after the job's poll stopped reading waits for
# its next poll, and a request its profiler looks at after the planned
# start is dropped (the capture then asks again, if it is still running).
took() { wait_for 60 grep -q "process $P took the request" "$T/$1.err" ||
	fail "$1: the job never took the request: $(cat "$T/$1.err"); the job's log: $(tail -n 5 "$T/job.log")"; }
# tracing NAME: the job began the trace capture NAME ($CPID) asked for, as
# its log shows (the warm-up begun after the request naming that capture's
# file), so that it writes that trace whatever becomes of the capture
tracing() {
	took "$1"
	wait_for 60 awk -v file="spyremon-capture-$CPID-" '
		/ACTIVITIES_LOG_FILE=/ { mine = index($0, file) > 0 }
		mine && /Tracing starting in/ { begun = 1 }
		END { exit !begun }' "$T/job.log" ||
		fail "$1: the job never began the trace: $(cat "$T/$1.err")"
}
# at SIGNAL GLOB NAME ARGS...: a capture NAME sent SIGNAL once GLOB
# appears; tried again (a new capture) if it ended before, three times.
# A try that ended first may have done the cleaning a later check looks
# for: its messages are kept in $T/NAME.before.err (said_by NAME reads both).
at() {
	local sig=$1 glob=$2 name=$3 _
	shift 3
	: >"$T/$name.before.err"
	for _ in 1 2 3; do
		cap "$name" "$@"
		if python3 "$SIGNAL_AT" "$CPID" "$sig" "$glob"; then
			return 0
		fi
		wait "$CPID" || true
		cat "$T/$name.err" >>"$T/$name.before.err"
		rm -rf "$T/out/$name"
	done
	fail "$name: capture never reached $glob in three tries"
}

# SIGINT while tracing: no output, no temporary directory; the job still
# writes the trace it took the request for, which the next capture removes
cap int_tracing --duration 3s
tracing int_tracing
kill -INT "$CPID"
status
cat "$T/int_tracing.err"
[ "$rc" -eq 1 ] || fail "SIGINT while tracing: exit status $rc, not 1"
grep -q "interrupted" "$T/int_tracing.err" || fail "SIGINT while tracing: no message"
grep -q "took the request but" "$T/int_tracing.err" && fail "SIGINT while tracing: the job is said to have failed"
[ -e "$T/out/int_tracing" ] && fail "SIGINT while tracing: an output was left"
ls -d "$T"/out/int_tracing.tmp-* 2>/dev/null && fail "SIGINT while tracing: a temporary directory was left"
INT_PID=$CPID
wait_for 30 trace_for "$INT_PID" || fail "the job did not write the interrupted capture's trace"

# SIGKILL while tracing: an empty DIR.tmp-XXXXXX, and the job's trace
cap kill_tracing --duration 3s
tracing kill_tracing
kill -KILL "$CPID"
status
KILL_PID=$CPID
# the capture after the interrupted one removed the trace written for it
[ -z "$(trace_for "$INT_PID")" ] || fail "the interrupted capture's trace is still there"
grep -q "removed $T/traces/spyremon-capture-$INT_PID-.*, a trace written for capture $INT_PID, which is no longer running" \
	"$T/kill_tracing.err" || fail "the next capture does not say it removed the trace: $(cat "$T/kill_tracing.err")"
ls -d "$T"/out/kill_tracing.tmp-* >/dev/null 2>&1 ||
	fail "SIGKILL while tracing left no temporary directory: this case shows nothing"
wait_for 30 trace_for "$KILL_PID" || fail "the job did not write the killed capture's trace"

# SIGTERM once the trace is copied in, before the output is renamed into
# place: the output holds the trace, and nothing temporary is left
at TERM "$T/out/term_copied.tmp-*/*.pt.trace.json" term_copied --duration 1s
status
cat "$T/term_copied.err"
[ "$rc" -eq 143 ] || fail "SIGTERM while writing: exit status $rc, not 143 (killed by it)"
ls "$T"/out/term_copied/*_"$P".*.pt.trace.json >/dev/null ||
	fail "SIGTERM while writing: the trace is not in the output: $(ls -A "$T/out/term_copied" 2>&1)"
[ -z "$(hidden "$T/out/term_copied")" ] ||
	fail "SIGTERM while writing left $(hidden "$T/out/term_copied")"
ls -d "$T"/out/term_copied.tmp-* 2>/dev/null && fail "SIGTERM while writing left the temporary directory"
ls "$T"/out/term_copied | grep -E '\.(json|csv)\.[A-Za-z0-9]{6}$' && fail "SIGTERM while writing left an export's temporary file"
[ -z "$(trace_for "$CPID")" ] || fail "SIGTERM while writing left the job's trace: $(trace_for "$CPID")"

# SIGINT while the report is written: the output stays, without the
# report's temporary directory
at INT "$T/out/int_report/.report.tmp-*" int_report --duration 1s --report
status
cat "$T/int_report.err"
[ "$rc" -eq 130 ] || fail "SIGINT in the report: exit status $rc, not 130 (killed by it)"
ls "$T"/out/int_report/*_"$P".*.pt.trace.json >/dev/null ||
	fail "SIGINT in the report: the trace is not in the output"
[ -z "$(hidden "$T/out/int_report")" ] ||
	fail "SIGINT in the report left $(hidden "$T/out/int_report")"
[ -z "$(trace_for "$CPID")" ] || fail "SIGINT in the report left the job's trace"

# SIGKILL while the report is written: its temporary directory stays
at KILL "$T/out/kill_report/.report.tmp-*" kill_report --duration 1s --report
status
[ -n "$(hidden "$T/out/kill_report")" ] ||
	fail "SIGKILL in the report left nothing hidden: this case shows nothing"

# the next capture removes what the gone ones left, and says so
cap next --duration 1s
status
cat "$T/next.err"
[ "$rc" -eq 0 ] || fail "the next capture failed ($rc)"
[ -z "$(trace_for "$INT_PID")" ] || fail "the interrupted capture's trace is still there"
[ -z "$(trace_for "$KILL_PID")" ] || fail "the killed capture's trace is still there"
ls -d "$T"/out/*.tmp-* 2>/dev/null && fail "a temporary directory is still there"
[ -z "$(hidden "$T/out/kill_report")" ] ||
	fail "the killed report's $(hidden "$T/out/kill_report") is still there"
ls "$T"/out/kill_report/*_"$P".*.pt.trace.json >/dev/null ||
	fail "the killed capture's output lost its trace"
# each capture removed what the gone ones before it left, and said so
said_by term_copied "removed $T/out/kill_tracing.tmp-.*, the unfinished output of capture $KILL_PID, which is no longer running" ||
	fail "the next capture does not say it removed the directory: $(cat "$T/term_copied.before.err" "$T/term_copied.err")"
said_by term_copied "removed $T/traces/spyremon-capture-$KILL_PID-.*, a trace written for capture $KILL_PID" ||
	fail "the next capture does not say it removed the killed capture's trace"
grep -q "removed the temporary files in $T/out/kill_report, left by capture [0-9]*, which is no longer running" \
	"$T/next.err" || fail "the next capture does not say it cleaned the killed report's output"
[ -z "$(ls "$T/traces")" ] || fail "traces left: $(ls "$T/traces")"
[ -z "$(hidden "$T/out/next")" ] || fail "the finished capture left $(hidden "$T/out/next")"

kill "$P"
stop_daemon
exit 0
