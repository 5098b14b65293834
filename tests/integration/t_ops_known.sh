#!/usr/bin/env bash
# export --ops against a known answer: the simulator draws, on two cards,
# the power a schedule says (--power-schedule) and logs what it drew ms by
# ms (--power-log); a job (ops_known_job.py) runs in a window, its device
# events the schedule's spans, and writes their Kineto-shaped trace.
# Checks that operators plus idle are the cards' energy to 1e-9, that
# every operator is within its error bound of the truth (the logged power
# integrated over its calls), fast or slow, and that one whose calls last
# a sampling interval or more each, 10 or more in all, is within 2 % of
# it (docs/traces.md has the figures).
#   OPS_KNOWN_INTERVAL  the sampling interval (default 100ms; 1s, 10ms ...)
#   OPS_KNOWN_DIRECT=1  the daemon reads the simulator's metric files
#                       (source.direct), written every 10 ms (the
#                       interval is then 10ms)
source "$(dirname "$0")/lib.sh"

need python3 sqlite3
JOB="python3 $ROOT/tests/integration/ops_known_job.py"
IV=${OPS_KNOWN_INTERVAL:-100ms}
[ "${OPS_KNOWN_DIRECT:-0}" = 1 ] && IV=10ms
case $IV in
*ms) IV_MS=${IV%ms} ;;
*s) IV_MS=$((${IV%s} * 1000)) ;;
*) fail "OPS_KNOWN_INTERVAL: $IV is not Nms or Ns" ;;
esac

# the run starts once the daemon has stored rows for a while: 4 s, or
# three intervals, from now, whichever is later, scaled on a slow machine
lead_ms=$((4000 * $(time_scale)))
[ $lead_ms -ge $((3 * IV_MS)) ] || lead_ms=$((3 * IV_MS))
T0=$(( $(date +%s%N) / 1000000 * 1000000 + lead_ms * 1000000 ))
$JOB plan "$T0" "$IV_MS" "$T/schedule" || fail "ops_known_job.py plan failed"
SIMOPTS=(--workload idle --power-schedule "$T/schedule" --power-log "$T/power.log")
if [ "${OPS_KNOWN_DIRECT:-0}" = 1 ]; then
	FLUSH=200ms write_config 2 "$IV" "${SIMOPTS[@]}" --write-metric-files \
		--metric-format new --file-interval 0.01 --file-log "$T/files.log"
	printf '  pre_window: 0s\n  direct: auto\n' >>"$T/spyremond.yaml"
else
	FLUSH=200ms write_config 2 "$IV" "${SIMOPTS[@]}"
fi
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
SPY="$CLIENT -c $T/spyremond.yaml"

[ "$(date +%s%N)" -lt "$T0" ] || fail "the daemon started after the run's start"
$JOB run "$T/control.sock" known-run "$T0" "$IV_MS" $((2 * IV_MS + 300)) "$T/trace.json" ||
	fail "ops_known_job.py run failed"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the daemon did not store window known-run"
$SPY export --trace "$T/trace.json" --ops --csv >"$T/ops.csv" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "export --ops failed"; }
$SPY export --trace "$T/trace.json" --ops --table >"$T/ops.table" 2>/dev/null ||
	fail "export --ops --table failed"
stop_daemon
cat "$T/ops.table"
# when the simulator wrote each row: its stamp log, or for direct reads
# its file log's write times
WRITTEN=$STAMPS
if [ "${OPS_KNOWN_DIRECT:-0}" = 1 ]; then
	awk '{ print $6, $2 }' "$T/files.log" >"$T/written"
	WRITTEN=$T/written
fi
$JOB truth "$T0" "$IV_MS" "$T/power.log" "$T/ops.csv" "$DB" "$WRITTEN" ||
	fail "export --ops against the known power"
exit 0
