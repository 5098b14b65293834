#!/usr/bin/env bash
# spyremon export --trace FILE --ops on the daemon and the simulator: a
# job (ops_job.py) runs in a window on two cards sampled every 100 ms and
# writes a Kineto-shaped trace with device events (kernels, a copy, a
# collective, one kernel longer than several samples) and host events.
# ops_check.py recomputes every operator's energy from the stored power
# (export -m pwr) and checks that operators plus idle add up to the
# cards' energy to 1e-9, that the cards' energy is --steps' total digit
# for digit, and that the table, csv and json agree.  Then the errors: a
# trace without device events, --ops without --trace, with --steps, and
# --json without --steps or --ops.
source "$(dirname "$0")/lib.sh"

need python3 sqlite3
CHECK="python3 $ROOT/tests/integration/ops_check.py"

# expect_rc RC COMMAND...: run COMMAND, which must exit RC; stdout in
# $T/out, stderr in $T/err
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "$* exited $rc, not $want"; }
}

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
SPY="$CLIENT -c $T/spyremond.yaml"

python3 "$ROOT/tests/integration/ops_job.py" "$T/control.sock" ops-run "$T/trace.json" ||
	fail "ops_job.py failed"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the daemon did not store window ops-run"
TR=(--trace "$T/trace.json")

expect_rc 0 $SPY export "${TR[@]}" --ops --csv
cp "$T/out" "$T/ops.csv"
grep -q "^spyremon: operators and idle add up to each card's energy" "$T/err" ||
	fail "no closure note: $(cat "$T/err")"
grep -q "operators are estimates: .*ERROR bounds each" "$T/err" ||
	fail "no note of the estimates: $(cat "$T/err")"
head -n 1 "$T/ops.csv" | grep -q '^section,name,category,card,calls,device_ms,time_pct,energy_J,energy_pct,net_J,mean_W,error_J,basis,flops,TOPS,TOPS_per_W,samples,interval_ms,covered_ms,device_span_ms,idle_ms,idle_J,host_only_ms,host_only_J,idle_W,closure$' ||
	fail "csv header: $(head -n 1 "$T/ops.csv")"
expect_rc 0 $SPY export "${TR[@]}" --ops --json
cp "$T/out" "$T/ops.json"
expect_rc 0 $SPY export "${TR[@]}" --ops --table
cp "$T/out" "$T/ops.table"
grep -q '^operators and idle add up' "$T/ops.table" || fail "table: no closure footnote"
expect_rc 0 $SPY export "${TR[@]}" --steps --json
cp "$T/out" "$T/steps.json"
# the samples, with a margin, for the recomputation
expect_rc 0 $SPY export "${TR[@]}" -m pwr --pad 1s
cp "$T/out" "$T/samples.csv"
$CHECK "$T/trace.json" "$T/samples.csv" "$T/ops.csv" "$T/ops.json" \
	"$T/ops.table" "$T/steps.json"
cat "$T/ops.table"

# the default on a pipe is csv; --output writes the file
expect_rc 0 $SPY export "${TR[@]}" --ops
cmp -s "$T/out" "$T/ops.csv" || fail "the default on a pipe is not the csv"
expect_rc 0 $SPY export "${TR[@]}" --ops --csv --output "$T/o.csv"
[ ! -s "$T/out" ] && cmp -s "$T/o.csv" "$T/ops.csv" || fail "--output differs"
# --device keeps one card: the other's events are left out, and said so
expect_rc 0 $SPY export "${TR[@]}" --ops --csv --device 0
grep -q '^card,card 0,' "$T/out" && ! grep -q '^card,card 1,' "$T/out" ||
	fail "--device 0: $(grep '^card' "$T/out")"
grep -q "device events on a card without samples in the span (the first: card 1)" "$T/err" ||
	fail "--device 0: no note of card 1's events: $(cat "$T/err")"

# ---- errors ----
grep -v '"cat": "kernel"\|"cat": "gpu_memcpy"' "$T/trace.json" >"$T/host.json"
expect_rc 1 $SPY export --trace "$T/host.json" --ops
grep -q "no device events" "$T/err" || fail "no device events: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a trace without device events wrote: $(cat "$T/out")"
expect_rc 2 $SPY export --window ops-run --ops
grep -q -- "--ops goes with --trace" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 $SPY export "${TR[@]}" --ops --steps
grep -q -- "--steps and --ops exclude each other" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 $SPY export "${TR[@]}" --json
grep -q -- "--json goes with --steps or --ops" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 $SPY export --trace /dev/stdin --ops </dev/null
grep -q -- "--ops reads the trace twice" "$T/err" || fail "$(cat "$T/err")"

stop_daemon
exit 0
