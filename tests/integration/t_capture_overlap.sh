#!/usr/bin/env bash
# A capture while the user has a window of their own open, with another
# tag and with the same tag: each capture opens and ends a window of its
# own (by id), over its trace's span, and the user's window stays open
# until the user ends it, holding the samples of the whole run.  The
# control protocol's begin_ns and end_ns, sent raw: a wrong type, a begin
# in the past or too far ahead, an end before the begin or after the
# request are refused; times in range are the window's.
source "$(dirname "$0")/lib.sh"

spy() { "$CLIENT" -c "$T/spyremond.yaml" "$@"; }
sql() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
STANDIN=$ROOT/tests/tools/kineto_standin.py
CHECK=$ROOT/tests/integration/capture_check.py

FLUSH=200ms write_config 1 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"

mkdir -p "$T/kipc"
env KINETO_USE_DAEMON=1 "KINETO_IPC_SOCKET_DIR=$T/kipc" ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1 \
	python3 "$STANDIN" --log-tag "$T/job" >"$T/job.out" 2>"$T/job.log" &
wait_for 30 grep -q '^pid ' "$T/job.out" || fail "the job did not start"
P=$(sed -n '1s/^pid //p' "$T/job.out")

MINE=$(spy mark begin --tag mine) || fail "mark begin failed"
spy capture --pid "$P" --duration 1s --tag nightly --output "$T/a" \
	>"$T/a.out" 2>"$T/a.err" || fail "capture beside an open window failed: $(cat "$T/a.err")"
spy capture --pid "$P" --duration 1s --tag mine --output "$T/b" \
	>"$T/b.out" 2>"$T/b.err" || fail "capture with the open window's tag failed: $(cat "$T/b.err")"
cat "$T/a.out" "$T/b.out"

[ -z "$(sql "SELECT end_ns FROM windows WHERE id = $MINE AND end_ns IS NOT NULL")" ] ||
	fail "a capture ended the user's window"
# (a capture asked again after a refusal, as a loaded host may make it,
# leaves the first window ended at its begin, spanning nothing)
[ "$(sql "SELECT count(*) FROM windows WHERE end_ns > begin_ns")" = 2 ] ||
	fail "not two ended capture windows"
spy windows --json >"$T/windows.json"
for out in a b; do
	tr=$(ls "$T/$out"/*_"$P".*.pt.trace.json) || fail "no trace in $out"
	spy trace info --json "$tr" >"$T/info-$out.json"
	wid=$(sed -n 's/^window \([0-9]*\) .*/\1/p' "$T/$out.out")
	[ -n "$wid" ] && [ "$wid" != "$MINE" ] || fail "capture $out reports window '$wid'"
	python3 -c 'import json,sys; w=[w for w in json.load(open(sys.argv[1])) if w["id"]==int(sys.argv[2])]; json.dump(w[0], open(sys.argv[3],"w"))' \
		"$T/windows.json" "$wid" "$T/win-$out.json"
	python3 "$CHECK" span "$T/win-$out.json" "$T/info-$out.json" --slack 100000000 ||
		fail "capture $out's window does not span its trace"
done
spy mark end --tag mine >/dev/null || fail "the user could not end their window by tag"
# the user's window holds both captures' spans at the fine rate
BEGIN_A=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["begin_ns"])' "$T/win-a.json")
END_B=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end_ns"])' "$T/win-b.json")
spy export --window "$MINE" --output "$T/mine.csv" || fail "export of the user's window"
python3 - "$T/mine.csv" "$BEGIN_A" "$END_B" <<'PY' || fail "the user's window lacks the captures' samples"
import csv, sys
lo, hi = int(sys.argv[2]), int(sys.argv[3])
ts = [int(r["epoch_ns"]) for r in csv.DictReader(open(sys.argv[1]))]
inside = [t for t in ts if lo <= t <= hi]
span = (hi - lo) / 1e9
print("%d samples of the user's window in the captures' %.1f s" % (len(inside), span))
assert len(inside) >= 0.8 * span / 0.1, "fewer than the fine rate gives"
PY
# the protocol's begin_ns and end_ns, as any client sends them
python3 - "$T/control.sock" <<'PY' || fail "begin_ns and end_ns over the socket"
import sys, time
sys.path.insert(0, "tests/integration")
from ctlclient import Conn
now = time.time_ns()
def ask(req):
    return Conn(sys.argv[1]).ask(dict(v=1, **req))
r = ask(dict(cmd="begin", tag="planned", begin_ns="soon"))
assert r["error"] == "bad_request" and "begin_ns" in r["message"], r
r = ask(dict(cmd="begin", tag="planned", begin_ns=now - 10**9))
assert r["error"] == "bad_time", r
r = ask(dict(cmd="begin", tag="planned", begin_ns=now + 2 * 3600 * 10**9))
assert r["error"] == "bad_time", r
begin = now + 300 * 10**6
r = ask(dict(cmd="begin", tag="planned", begin_ns=begin))
assert r["ok"] and r["begin_ns"] == begin, r
wid = r["id"]
time.sleep(0.6)
r = ask(dict(cmd="end", id=wid, end_ns=begin - 1))
assert r["error"] == "bad_time" and "before window" in r["message"], r
r = ask(dict(cmd="end", id=wid, end_ns=time.time_ns() + 10**9))
assert r["error"] == "bad_time" and "after the request" in r["message"], r
r = ask(dict(cmd="end", id=wid, end_ns=begin + 100 * 10**6))
assert r["ok"] and r["end_ns"] == begin + 100 * 10**6, r
print("begin_ns and end_ns: refused out of range, taken within it")
PY

kill "$P"
stop_daemon
exit 0
