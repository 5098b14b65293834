#!/usr/bin/env bash
# spyremon capture --vllm against the stand-in vLLM server
# (tests/tools/vllm_standin.py) with the real daemon on the simulator:
# with two workers and a slow flush, "capture --vllm URL --profiler-dir D
# --duration 4s --report" names on stderr the traces the workers wrote
# during the window, leaves them in D, writes each with the cards'
# counters merged in and report.md with the serving figures of the
# completions served during the window, exit 0; the window is ended.  A
# server without a profiler (start_profile 404) is exit 1 naming
# VLLM_TORCH_PROFILER_DIR, a flush longer than --stop-timeout is exit 1
# saying so, a server that does not answer is exit 1: no output and no
# window left open in each; SIGINT while profiling leaves no output and
# the window ends.
source "$(dirname "$0")/lib.sh"

need python3 curl
spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
STANDIN=$ROOT/tests/tools/vllm_standin.py

start_server() {
	local name=$1
	shift
	python3 "$STANDIN" --port-file "$T/$name.port" "$@" 2>"$T/$name.log" &
	SPID=$!
	wait_for 30 test -s "$T/$name.port" || fail "$name did not start"
	URL=http://127.0.0.1:$(cat "$T/$name.port")
}
open_windows() {
	sqlite3 -readonly "file:$DB?mode=ro" \
		'SELECT count(*) FROM windows WHERE end_ns IS NULL OR end_ns = 0'
}

one_open() { [ "$(open_windows)" = 1 ]; }

FLUSH=200ms write_config 2 100ms --workload "file:$T/busy"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 10 || fail "no rows stored within 20s"
touch "$T/busy"

mkdir "$T/prof"
start_server srv --profiler-dir "$T/prof" --workers 2 --flush-delay 1
touch -d '1 hour ago' "$T/prof/old_1.1.pt.trace.json.gz"	# not of the window
spy capture --vllm "$URL" --profiler-dir "$T/prof" --duration 4s \
	--output "$T/out" --report >"$T/cap.out" 2>"$T/cap.err" &
CAP=$!
# the load once the window is open: completions, their usage kept
wait_for 30 one_open || fail "no window opened"
for i in 1 2 3 4 5 6; do
	curl -sf -XPOST "$URL/v1/completions" \
		-d '{"prompt":"one two three four","max_tokens":9}' >>"$T/usage" ||
		fail "completion $i failed"
	echo >>"$T/usage"
done
rc=0; wait $CAP || rc=$?
[ $rc -eq 0 ] || fail "capture --vllm failed ($rc): $(cat "$T/cap.err")"
cat "$T/cap.out" "$T/cap.err"
[ "$(grep -c "the server wrote $T/prof/.*pt.trace.json.gz" "$T/cap.err")" = 2 ] ||
	fail "the two workers' traces not named on stderr"
grep -q old_1 "$T/cap.err" && fail "a trace from before the window taken"
[ "$(ls "$T/prof" | wc -l)" = 3 ] || fail "the profiler folder lost its traces"
[ "$(ls "$T/out"/*.merged.json | wc -l)" = 2 ] || fail "not two merged traces"
[ "$(ls "$T/out"/*.pt.trace.json.gz | wc -l)" = 2 ] || fail "not two traces"
[ "$(open_windows)" = 0 ] || fail "a window left open"
python3 - "$T/usage" "$T/out/report.md" "$T/out"/*.merged.json <<'PY' || fail "capture --vllm output"
import json, sys
usage = [json.loads(l)["usage"] for l in open(sys.argv[1]) if l.strip()]
pt = sum(u["prompt_tokens"] for u in usage)
gt = sum(u["completion_tokens"] for u in usage)
md = open(sys.argv[2]).read()
line = "- %d requests, %d prompt and %d generated tokens" % (len(usage), pt, gt)
assert "## Serving" in md and line in md, (line, md)
for m in sys.argv[3:]:
    ev = json.load(open(m))["traceEvents"]
    assert any(e.get("ph") == "C" for e in ev), m
    assert any(e.get("name", "").startswith("execute_model") for e in ev), m
PY

# interrupted while profiling: nothing left behind, the window ended
# (the program itself, not a subshell running it, gets the signal)
"$CLIENT" -c "$T/spyremond.yaml" capture --vllm "$URL" --profiler-dir "$T/prof" \
	--duration 60s --output "$T/int" 2>"$T/int.err" &
CAP=$!
wait_for 30 one_open || fail "interrupted: no window opened"
kill -INT $CAP
rc=0; wait $CAP || rc=$?
[ $rc -ne 0 ] || fail "interrupted: exit 0"
ls -d "$T"/int* 2>/dev/null | grep -v int.err && fail "interrupted: output left"
none_open() { [ "$(open_windows)" = 0 ]; }
wait_for 30 none_open || fail "interrupted: the window stayed open"

# profiling off: 404, exit 1, no output, no window open
kill "$SPID"; wait "$SPID" 2>/dev/null || true
start_server off
rc=0; spy capture --vllm "$URL" --profiler-dir "$T/prof" --duration 100ms \
	--output "$T/off" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "profiling off: exit $rc"
grep -q "404: the server has no profiler.*VLLM_TORCH_PROFILER_DIR" "$T/err" ||
	fail "profiling off: $(cat "$T/err")"
[ ! -e "$T/off" ] || fail "profiling off: an output written"
[ "$(open_windows)" = 0 ] || fail "profiling off: a window left open"

# a flush longer than --stop-timeout
kill "$SPID"; wait "$SPID" 2>/dev/null || true
start_server slow --profiler-dir "$T/prof" --flush-delay 30
rc=0; spy capture --vllm "$URL" --profiler-dir "$T/prof" --duration 100ms \
	--stop-timeout 1s --output "$T/slow" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "slow flush: exit $rc"
grep -q "stop_profile: no whole answer within 1000 ms" "$T/err" ||
	fail "slow flush: $(cat "$T/err")"
[ ! -e "$T/slow" ] || fail "slow flush: an output written"
[ "$(open_windows)" = 0 ] || fail "slow flush: a window left open"

# a server that does not answer: no window at all
kill "$SPID"; wait "$SPID" 2>/dev/null || true
n0=$(sqlite3 -readonly "file:$DB?mode=ro" 'SELECT count(*) FROM windows')
start_server mute --no-answer
rc=0; spy capture --vllm "$URL" --profiler-dir "$T/prof" --duration 100ms \
	--output "$T/mute" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "no answer: exit $rc"
[ "$(sqlite3 -readonly "file:$DB?mode=ro" 'SELECT count(*) FROM windows')" = "$n0" ] ||
	fail "no answer: a window opened"
[ ! -e "$T/mute" ] || fail "no answer: an output written"
kill "$SPID"; wait "$SPID" 2>/dev/null || true
echo "PASS: t_capture_vllm"
