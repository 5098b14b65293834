#!/usr/bin/env bash
# spyremon capture --vllm URL --load N against the stand-in vLLM server
# (tests/tools/vllm_standin.py), the real daemon on the simulator, the
# cards busy while the stand-in generates (its --busy-file is the
# simulator's workload file): one command sends N completions, 3 at a
# time, while the server is profiled, and yields the merged traces and
# report.md whose serving section counts the N requests and their tokens
# exactly (N * P prompt, N * O generated: ignore_eos) with the energy
# per generated token; the one window holds the begin's, the end's and
# the load's metadata.  A server that refuses completions (503), a
# request past --load-timeout and a model the server does not serve are
# each exit 1 with a clear message, no output and no window left open
# (none opened for the unknown model).
source "$(dirname "$0")/lib.sh"

need python3
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
stop_server() { kill "$SPID"; wait "$SPID" 2>/dev/null || true; }
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
open_windows() { q 'SELECT count(*) FROM windows WHERE end_ns IS NULL OR end_ns = 0'; }
none_open() { [ "$(open_windows)" = 0 ]; }

FLUSH=200ms write_config 2 100ms --workload "file:$T/busy"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 10 || fail "no rows stored within 20s"

mkdir "$T/prof"
start_server srv --profiler-dir "$T/prof" --busy-file "$T/busy" \
	--token-seconds 0.004 --model granite-test
spy capture --vllm "$URL" --profiler-dir "$T/prof" --load 12 \
	--prompt-tokens 16 --output-tokens 25 --concurrency 3 \
	--output "$T/out" --report --tag load25 >"$T/cap.out" 2>"$T/cap.err" ||
	fail "capture --load failed: $(cat "$T/cap.err")"
cat "$T/cap.err"
grep -q "12 completion requests of model granite-test answered: 192 prompt and 300 generated tokens" \
	"$T/cap.err" || fail "the load's count not said"
[ "$(ls "$T/out"/*.merged.json | wc -l)" = 1 ] || fail "no merged trace"
grep -q -- "- 12 requests, 192 prompt and 300 generated tokens" "$T/out/report.md" ||
	fail "report.md: $(grep -A8 '## Serving' "$T/out/report.md")"
grep -q -- "- energy per generated token: [0-9.e-]* J" "$T/out/report.md" ||
	fail "report.md has no energy per generated token"
none_open || fail "a window left open"
[ "$(q "SELECT count(*) FROM windows WHERE tag = 'vllm-end'")" = 0 ] ||
	fail "the end's readings kept apart"
python3 - "$(q "SELECT meta FROM windows WHERE tag = 'load25'")" <<'PY' || fail "the window's metadata"
import json, sys
m = json.loads(sys.argv[1])
assert m["vllm.load.requests"] == "12" and m["vllm.load.output_tokens"] == "25", m
assert m["vllm.load.concurrency"] == "3" and m["vllm.load.model"] == "granite-test", m
assert float(m["vllm.end.requests"]) - float(m["vllm.begin.requests"]) == 12, m
assert float(m["vllm.end.generation_tokens"]) - float(m["vllm.begin.generation_tokens"]) == 300, m
PY

# an unknown model: said with the ones served, no window opened
n0=$(q 'SELECT count(*) FROM windows')
rc=0; spy capture --vllm "$URL" --profiler-dir "$T/prof" --load 2 --model nope \
	--output "$T/unk" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "unknown model: exit $rc"
grep -q "does not serve model 'nope' (it serves: granite-test); no window opened" "$T/err" ||
	fail "unknown model: $(cat "$T/err")"
[ "$(q 'SELECT count(*) FROM windows')" = "$n0" ] || fail "unknown model: a window opened"
[ ! -e "$T/unk" ] || fail "unknown model: an output written"
stop_server

# completions refused: the status and the server's words, no output
start_server refusing --profiler-dir "$T/prof" --fail-completions 503
rc=0; spy capture --vllm "$URL" --profiler-dir "$T/prof" --load 4 --concurrency 2 \
	--output "$T/ref" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "refused: exit $rc"
grep -q "4 of 4 completion requests failed.*The first: request [0-9]: .*/v1/completions: HTTP status 503: .*the engine is not running" \
	"$T/err" || fail "refused: $(cat "$T/err")"
[ ! -e "$T/ref" ] || fail "refused: an output written"
wait_for 30 none_open || fail "refused: a window left open"
stop_server

# a request past --load-timeout
start_server slow --profiler-dir "$T/prof" --completion-delay 5
rc=0; spy capture --vllm "$URL" --profiler-dir "$T/prof" --load 1 --load-timeout 500ms \
	--output "$T/slow" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "timed out: exit $rc"
grep -q "1 of 1 completion requests failed.*/v1/completions: no whole answer within 500 ms" \
	"$T/err" || fail "timed out: $(cat "$T/err")"
[ ! -e "$T/slow" ] || fail "timed out: an output written"
wait_for 30 none_open || fail "timed out: a window left open"
stop_server
echo "PASS: t_capture_vllm_load"
