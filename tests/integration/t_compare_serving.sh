#!/usr/bin/env bash
# compare of two served windows: two "capture --vllm --load" runs on the
# stand-in vLLM server (tests/tools/vllm_standin.py, the cards busy while
# it generates, 10 ms per token), the same 8 requests of 25 and of 100
# generated tokens.  compare --json gives each window's counts and the
# energy per request and per generated token of each, equal to the
# summaries' (all cards' energy over the counts), with the change's 95 %
# interval from batch means: per request the longer answers cost more,
# the verdict "higher" and the interval above 0; the table says the same.
source "$(dirname "$0")/lib.sh"

need python3
spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
STANDIN=$ROOT/tests/tools/vllm_standin.py

FLUSH=200ms write_config 2 100ms --workload "file:$T/busy"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 10 || fail "no rows stored within 20s"

mkdir "$T/prof"
python3 "$STANDIN" --port-file "$T/srv.port" --profiler-dir "$T/prof" \
	--busy-file "$T/busy" --token-seconds 0.01 2>"$T/srv.log" &
SPID=$!
wait_for 30 test -s "$T/srv.port" || fail "the stand-in did not start"
URL=http://127.0.0.1:$(cat "$T/srv.port")

for o in 25 100; do
	spy capture --vllm "$URL" --profiler-dir "$T/prof" --load 8 \
		--prompt-tokens 10 --output-tokens $o --tag "serve$o" \
		--output "$T/out$o" 2>"$T/cap$o.err" >/dev/null ||
		fail "capture of $o tokens: $(cat "$T/cap$o.err")"
done
spy summary --window serve25 --json >"$T/s25.json" || fail "summary failed"
spy summary --window serve100 --json >"$T/s100.json" || fail "summary failed"
spy compare serve25 serve100 --json >"$T/cmp.json" || fail "compare --json failed"
spy compare serve25 serve100 >"$T/cmp.txt" || fail "compare failed"
sed -n '/^Serving/,/^Intervals/p' "$T/cmp.txt"
python3 - "$T/cmp.json" "$T/s25.json" "$T/s100.json" "$T/cmp.txt" <<'PY' || fail "compare's serving figures"
import json, sys
c = json.load(open(sys.argv[1]))["serving"]
s = [json.load(open(f))["serving"] for f in sys.argv[2:4]]
txt = open(sys.argv[4]).read()
assert c["base"]["state"] == c["new"]["state"] == "ok", c
assert (c["base"]["requests"], c["base"]["generation_tokens"]) == (8, 200), c
assert (c["new"]["requests"], c["new"]["generation_tokens"]) == (8, 800), c
assert c["base_batches"] >= 2 and c["new_batches"] >= 2, c
f = {x["figure"]: x for x in c["figures"]}
def close(a, b):
    assert abs(a - b) <= 1e-9 * abs(b), (a, b)
for key in ("per_request", "per_generation_token"):
    close(f[key]["base"], s[0][key]["j"])
    close(f[key]["new"], s[1][key]["j"])
    lo, hi = f[key]["change_ci95"]
    assert lo <= f[key]["change"] <= hi, f[key]
r = f["per_request"]
assert r["new"] > r["base"] and r["verdict"] == "higher", r
lo, hi = r["change_ci95"]
assert 0 < lo < hi, r
assert r["p"] < 0.05, r
line = "- energy per request: base %.6g J" % r["base"]
assert line in txt and ": higher" in txt and "95 % interval [+" in txt, txt
assert "batch means over" in txt, txt
PY
kill "$SPID"; wait "$SPID" 2>/dev/null || true
echo "PASS: t_compare_serving"
