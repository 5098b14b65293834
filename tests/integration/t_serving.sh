#!/usr/bin/env bash
# Serving figures over a vLLM server (tests/tools/vllm_standin.py), with
# the real daemon on the simulator: a window begun with "mark begin --vllm
# URL" and ended with "mark end" over a load of N completions gives, in
# summary --json, --table and report.md, the exact request and token
# counts the server answered, and energy per request, per generated token
# and per 1,000 tokens equal to the stored window energy (gross and net
# of idle) over those counts; a server restarted within a window (its
# counters back to zero, or past their old values) is said and gives no
# figure; a server that refuses or does not answer is a clear error (exit
# 1) and opens no window; mark end with the server gone ends the window,
# exit 1, naming why.
source "$(dirname "$0")/lib.sh"

need python3 curl
spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
STANDIN=$ROOT/tests/tools/vllm_standin.py

# start_server NAME [args...]: a stand-in, its pid in SPID, URL in URL
start_server() {
	local name=$1
	shift
	rm -f "$T/$name.port"
	python3 "$STANDIN" --port-file "$T/$name.port" "$@" 2>"$T/$name.log" &
	SPID=$!
	wait_for 30 test -s "$T/$name.port" || fail "$name did not start"
	URL=http://127.0.0.1:$(cat "$T/$name.port")
}

# load N WORDS MAX: N completions; their usage summed into $T/usage
load() {
	local i prompt
	prompt=$(python3 -c "print(' '.join(['w'] * $2))")
	for ((i = 0; i < $1; i++)); do
		curl -sf -XPOST "$URL/v1/completions" \
			-H 'Content-Type: application/json' \
			-d "{\"prompt\":\"$prompt\",\"max_tokens\":$3}" \
			>>"$T/usage" || fail "completion $i failed"
		echo >>"$T/usage"
	done
}

windows_count() {
	sqlite3 -readonly "file:$DB?mode=ro" 'SELECT count(*) FROM windows'
}

# the cards idle (busy 0, for the idle power) until $T/busy exists
FLUSH=200ms write_config 2 100ms --workload "file:$T/busy"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 10 || fail "no rows stored within 20s"
touch "$T/busy"

# 1. a load of completions
start_server srv
: >"$T/usage"
load 2 1 1		# before the window: not counted
spy mark begin --tag serve --vllm "$URL" >"$T/id" || fail "mark begin --vllm failed"
: >"$T/usage"
load 3 7 20
load 4 12 5
sleep 1			# some samples in the window
spy mark end --wait 20s >/dev/null || fail "mark end failed"
spy summary --window serve --json >"$T/sum.json" || fail "summary --json failed"
spy summary --window serve --table >"$T/sum.txt" || fail "summary failed"
spy report --window serve --output "$T/rep" >/dev/null || fail "report failed"
python3 - "$T/usage" "$T/sum.json" "$T/sum.txt" "$T/rep/report.md" <<'PY' || fail "serving figures"
import json, sys
usage = [json.loads(l)["usage"] for l in open(sys.argv[1]) if l.strip()]
s = json.load(open(sys.argv[2]))
sv = s["serving"]
req, pt = len(usage), sum(u["prompt_tokens"] for u in usage)
gt = sum(u["completion_tokens"] for u in usage)
assert (req, pt, gt) == (7, 3 * 7 + 4 * 12, 3 * 20 + 4 * 5), (req, pt, gt)
assert sv["state"] == "ok", sv
assert (sv["requests"], sv["prompt_tokens"], sv["generation_tokens"]) == \
    (req, pt, gt), sv
# recomputed from the stored summary: the cards' energy over the counts
e = sum(float(c["energy_j"]) for c in s["cards"])
net = sum(c["net_energy_j"] for c in s["cards"])
assert e > 0 and net < e, (e, net)
def close(a, b):
    assert abs(a - b) <= 1e-9 * abs(b), (a, b)
close(sv["per_generation_token"]["j"], e / gt)
close(sv["per_generation_token"]["net_j"], net / gt)
close(sv["per_request"]["j"], e / req)
close(sv["per_request"]["net_j"], net / req)
close(sv["per_1000_tokens"]["j"], e / (pt + gt) * 1000)
dur = s["window"]["end_ns"] - s["window"]["begin_ns"]
close(sv["generation_tokens_per_s"], gt / (dur / 1e9))
txt = open(sys.argv[3]).read()
assert "7 requests, %d prompt and %d generated tokens" % (pt, gt) in txt, txt
assert "energy per generated token: %.6g J, net of idle %.6g J" % \
    (e / gt, net / gt) in txt, txt
md = open(sys.argv[4]).read()
assert "## Serving" in md and "- 7 requests, %d prompt" % pt in md, md
PY
grep -A6 '^Serving' "$T/sum.txt"

# one window: the end's readings merged into its metadata by the end
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
[ "$(q "SELECT count(*) FROM windows WHERE tag = 'vllm-end'")" = 0 ] ||
	fail "a second window holds the end's readings"
[ "$(q "SELECT json_extract(meta, '\$.\"vllm.end.requests\"') -
	json_extract(meta, '\$.\"vllm.begin.requests\"') FROM windows
	WHERE tag = 'serve'")" = 7 ] || fail "the end's readings not in the window's metadata"
# a database written before: the end's readings in a window tagged
# vllm-end naming it, read the same
sqlite3 -readonly "file:$DB?mode=ro" ".backup '$T/old.db'"
sqlite3 "$T/old.db" "INSERT INTO windows (tag, uid, pid, begin_ns, end_ns, meta,
	complete_ns) SELECT 'vllm-end', uid, pid, end_ns, end_ns, json_object(
	'vllm.window', CAST(id AS TEXT), 'vllm.url', json_extract(meta, '\$.\"vllm.url\"'),
	'vllm.end.requests', json_extract(meta, '\$.\"vllm.end.requests\"'),
	'vllm.end.prompt_tokens', json_extract(meta, '\$.\"vllm.end.prompt_tokens\"'),
	'vllm.end.generation_tokens', json_extract(meta, '\$.\"vllm.end.generation_tokens\"'),
	'vllm.end.created', json_extract(meta, '\$.\"vllm.end.created\"')), complete_ns
	FROM windows WHERE tag = 'serve';
	UPDATE windows SET meta = json_remove(meta, '\$.\"vllm.end.requests\"',
	'\$.\"vllm.end.prompt_tokens\"', '\$.\"vllm.end.generation_tokens\"',
	'\$.\"vllm.end.created\"') WHERE tag = 'serve'"
"$CLIENT" --db "$T/old.db" summary --window serve --json >"$T/old.json" ||
	fail "summary of a database written before failed"
python3 - "$T/sum.json" "$T/old.json" <<'PY' || fail "the old layout reads differently"
import json, sys
a, b = (json.load(open(f))["serving"] for f in sys.argv[1:])
assert a == b and a["state"] == "ok", (a, b)
PY

# an end's metadata may not change the begin's: refused, the window open
python3 - "$T/control.sock" <<'PY' || fail "end metadata"
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
def ask(req):
    req["v"] = 1
    f.write(json.dumps(req) + "\n"); f.flush()
    return json.loads(f.readline())
r = ask({"cmd": "begin", "tag": "em", "meta": {"k": "1"}})
assert r["ok"], r
wid = r["id"]
r = ask({"cmd": "end", "id": wid, "meta": {"j": "2", "k": "3"}})
assert not r["ok"] and r["error"] == "bad_meta", r
assert "'k' is window %d's already" % wid in r["message"], r
st = ask({"cmd": "status"})
assert any(w["id"] == wid for w in st["windows"]), "the window was ended"
r = ask({"cmd": "end", "id": wid, "meta": {"j": "2"}})
assert r["ok"], r
PY
[ "$(q "SELECT meta FROM windows WHERE tag = 'em'")" = '{"k":"1","j":"2"}' ] ||
	fail "the end's metadata not merged: $(q "SELECT meta FROM windows WHERE tag = 'em'")"

# 2. a restart within the window, counters back to zero: said, no figure
PORT=$(cat "$T/srv.port")
spy mark begin --tag restart --vllm "$URL" >/dev/null || fail "mark begin failed"
load 2 3 4
kill "$SPID"; wait "$SPID" 2>/dev/null || true
start_server srv2 --port "$PORT"
load 1 3 4
spy mark end --wait 20s >/dev/null || fail "mark end failed"
spy summary --window restart --json >"$T/r.json" || fail "summary failed"
spy summary --window restart >"$T/r.txt" || fail "summary failed"
python3 - "$T/r.json" <<'PY' || fail "restart not said"
import json, sys
sv = json.load(open(sys.argv[1]))["serving"]
assert sv["state"] == "restarted" and "went backwards" in sv["note"], sv
assert "per_request" not in sv and "requests" not in sv, sv
PY
grep -q "the server restarted" "$T/r.txt" || fail "summary does not say the restart"
grep -q "energy per" "$T/r.txt" && fail "a figure given over a restart"

# a restart that served more than before: seen by its counters' start
spy mark begin --tag restart2 --vllm "$URL" >/dev/null || fail "mark begin failed"
kill "$SPID"; wait "$SPID" 2>/dev/null || true
sleep 0.01
start_server srv3 --port "$PORT"
load 3 3 4
spy mark end --wait 20s >/dev/null || fail "mark end failed"
spy summary --window restart2 --json >"$T/r2.json" || fail "summary failed"
python3 - "$T/r2.json" <<'PY' || fail "restart by start time not said"
import json, sys
sv = json.load(open(sys.argv[1]))["serving"]
assert sv["state"] == "restarted" and "anew" in sv["note"], sv
PY

# 3. a server that refuses or does not answer: exit 1, no window
n0=$(windows_count)
kill "$SPID"; wait "$SPID" 2>/dev/null || true
start_server down --refuse
rc=0; spy mark begin --tag gone --vllm "$URL" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "refused: exit $rc, not 1"
grep -q "cannot read the server's counters, no window opened: .*refused" "$T/err" ||
	fail "refused: $(cat "$T/err")"
kill "$SPID"; wait "$SPID" 2>/dev/null || true
start_server mute --no-answer
rc=0; spy mark begin --tag mute --vllm "$URL" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "no answer: exit $rc, not 1"
grep -q "without an answer" "$T/err" || fail "no answer: $(cat "$T/err")"
kill "$SPID"; wait "$SPID" 2>/dev/null || true
rc=0; spy mark begin --tag bad --vllm "ftp://x" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "bad URL: exit $rc, not 2"
[ "$(windows_count)" = "$n0" ] || fail "a window was opened for a server that does not answer"

# 4. the server gone at the end: the window ends, exit 1, said
start_server srv4
spy mark begin --tag lost --vllm "$URL" >/dev/null || fail "mark begin failed"
kill "$SPID"; wait "$SPID" 2>/dev/null || true
rc=0; spy mark end 2>"$T/err" >/dev/null || rc=$?
[ $rc -eq 1 ] || fail "end with the server gone: exit $rc"
grep -q "ended, but the vLLM server's counters at its end could not be read" "$T/err" ||
	fail "end with the server gone: $(cat "$T/err")"
spy summary --window lost --json >"$T/l.json" || fail "summary failed"
grep -q '"state": "no_end"' "$T/l.json" || fail "no_end not said: $(cat "$T/l.json")"
echo "PASS: t_serving"
