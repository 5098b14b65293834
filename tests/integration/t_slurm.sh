#!/usr/bin/env bash
# contrib/slurm against a live daemon, run as slurmd runs them (with the
# Slurm environment variables set): the prolog opens window slurm-<jobid>
# with the job's name, user, node list and step; a second prolog of the
# same job (a requeue) leaves one open window; the epilog ends it; and
# neither script ever exits non-zero (a failing prolog drains a node):
# not with the daemon stopped, not without SLURM_JOB_ID.  A job whose
# name holds control characters, a C1 control, a byte that is not UTF-8
# and shell syntax, whose user name and node list are longer than a
# metadata value may be, still gets its window: the name escaped (and run
# as nothing), the others cut at a character within 256 bytes, and the
# metadata saying which fields were escaped and which cut.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need python3
PROLOG=$ROOT/contrib/slurm/spyremon-prolog
EPILOG=$ROOT/contrib/slurm/spyremon-epilog
SPY="$CLIENT -c $T/spyremond.yaml"

write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"

slurm() {
	env SLURM_JOB_ID=4711 SLURM_JOB_NAME=llama-train SLURM_JOB_USER=alice \
		SLURM_JOB_NODELIST='node[01-04]' SLURM_STEP_ID=0 \
		SPYREMON="$CLIENT" SPYREMON_OPTS="-c $T/spyremond.yaml" "$@"
}

slurm sh "$PROLOG" 2>"$T/prolog.err" || fail "the prolog failed"
$SPY windows --json >"$T/w1.json"
python3 - "$T/w1.json" <<'PY' || fail "no window with the job's metadata: $(cat "$T/prolog.err")"
import json, sys
ws = [w for w in json.load(open(sys.argv[1])) if w["tag"] == "slurm-4711"]
assert len(ws) == 1 and ws[0]["open"], ws
m = ws[0]["meta"]
assert m == {"slurm_job_id": "4711", "job_name": "llama-train", "user": "alice",
             "nodes": "node[01-04]", "step": "0"}, m
PY
$SPY metrics | grep -q '^spyremon_window_open{tag="slurm-4711",' ||
	fail "the job's window is not in the metrics"

# a requeued job runs the prolog again: still one open window
slurm sh "$PROLOG" 2>/dev/null || fail "the second prolog failed"
n=$($SPY windows --json | python3 -c 'import json,sys; print(sum(1 for w in json.load(sys.stdin) if w["tag"] == "slurm-4711" and w["open"]))')
[ "$n" = 1 ] || fail "$n open windows slurm-4711 after a second prolog"

sleep 0.5
slurm sh "$EPILOG" 2>"$T/epilog.err" || fail "the epilog failed"
grep -q 'ended window' "$T/epilog.err" || fail "the epilog did not log the end: $(cat "$T/epilog.err")"
n=$($SPY windows --json | python3 -c 'import json,sys; print(sum(1 for w in json.load(sys.stdin) if w["tag"] == "slurm-4711" and w["open"]))')
[ "$n" = 0 ] || fail "window slurm-4711 still open after the epilog"
$SPY export --window slurm-4711 --format csv >"$T/job.csv" 2>/dev/null ||
	fail "export of the job's window failed"
[ "$(wc -l <"$T/job.csv")" -gt 2 ] || fail "no samples in the job's window"

# odd values: escaped, cut, never run, and still a window
odd_name=$'train\tbig\\run\e[1m$(touch '"$T"'/ran)`touch '"$T"'/ran2`'$'\x7f\xc2\x9b\xff'
odd_user=a$(python3 -c 'print("\u00e9" * 200)')
odd_nodes=$(python3 -c 'print("node[" + ",".join("%04d" % i for i in range(200)) + "]")')
env SLURM_JOB_ID=4712 SLURM_JOB_NAME="$odd_name" SLURM_JOB_USER="$odd_user" \
	SLURM_JOB_NODELIST="$odd_nodes" SLURM_STEP_ID=0 \
	SPYREMON="$CLIENT" SPYREMON_OPTS="-c $T/spyremond.yaml" \
	sh "$PROLOG" 2>"$T/odd.err" || fail "the prolog failed on odd values"
$SPY windows --json >"$T/w2.json"
python3 - "$T/w2.json" "$T" "$odd_nodes" <<'PY' || fail "odd values: $(cat "$T/odd.err")"
import json, sys
ws = [w for w in json.load(open(sys.argv[1])) if w["tag"] == "slurm-4712"]
assert len(ws) == 1 and ws[0]["open"], ("no window slurm-4712", ws)
t = sys.argv[2]
want = {
    "slurm_job_id": "4712",
    "job_name": "train\\x09big\\\\run\\x1b[1m$(touch %s/ran)`touch %s/ran2`"
                "\\x7f\\xc2\\x9b\\xff" % (t, t),
    # 1 + 2 * 127 bytes: the next character would not fit in 256
    "user": "a" + "\u00e9" * 127,
    "nodes": sys.argv[3][:256],
    "step": "0",
    "escaped": "job_name",
    "truncated": "user,nodes",
}
m = ws[0]["meta"]
for k in set(want) | set(m):
    assert m.get(k) == want.get(k), (k, m.get(k), want.get(k))
PY
[ -e "$T/ran" ] || [ -e "$T/ran2" ] && fail "the prolog ran a command from the job's name"
slurm_odd_end() { env SLURM_JOB_ID=4712 SPYREMON="$CLIENT" SPYREMON_OPTS="-c $T/spyremond.yaml" sh "$EPILOG"; }
slurm_odd_end 2>/dev/null || fail "the epilog of the odd job failed"

# never fail: nothing to end, no daemon, no job id
slurm sh "$EPILOG" 2>"$T/e2.err" || fail "an epilog with nothing to end failed"
grep -q 'cannot end window slurm-4711' "$T/e2.err" || fail "the epilog did not say why"
stop_daemon
slurm sh "$PROLOG" 2>"$T/p3.err" || fail "the prolog failed with the daemon stopped"
grep -q 'cannot open window slurm-4711' "$T/p3.err" || fail "the prolog did not say why"
env -u SLURM_JOB_ID sh "$PROLOG" 2>/dev/null || fail "the prolog failed without SLURM_JOB_ID"
env -u SLURM_JOB_ID sh "$EPILOG" 2>/dev/null || fail "the epilog failed without SLURM_JOB_ID"
echo ok
