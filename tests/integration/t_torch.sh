#!/usr/bin/env bash
# A real torch.profiler run (Debian's python3-torch, built without Kineto:
# a bare-array trace with no absolute time) against the daemon on the
# simulator, through contrib/torch/profile_demo.py: the profiled iterations
# are the active ones of the schedule; trace info says the trace has no
# absolute time; export by the trace refuses to guess its clock, and with
# --align-window (or the equivalent --trace-start) writes the samples that
# overlap its span, a per-step table whose energies are those of the
# stored power, and a merged trace that keeps every original event.
# contrib/torch/fake_trace.py, the stand-in without torch, goes first: its
# trace is laid out as the real Kineto trace in tests/data/traces, has
# absolute time, and goes through the same checks on its own clock, with
# no alignment; its kernels, linked to their launches by correlation,
# leave 90 % or more of the card's idle time classified (host-bound).  Either job's window opens before its first profiled step
# and ends more than a fine interval (100 ms) after its last.
#
# Installs python3-torch with apt-get when it is missing and we are root;
# skips when torch still cannot be imported.
source "$(dirname "$0")/lib.sh"

CHECK="python3 $ROOT/tests/integration/torch_check.py"
EXPORT_CHECK="python3 $ROOT/tests/integration/export_check.py"
ITER=4		# active iterations; one wait and one warmup come first
WAIT_WARMUP=2

sql() {
	sqlite3 "file:$DB?mode=ro" "$@"
}


# run_job SCRIPT TAG: run contrib/torch/SCRIPT inside window TAG while the
# card is busy, writing $T/TAG.json; the checks read the database with
# sqlite3 themselves, so what the daemon has is stored first (one sync).
run_job() {
	local script=$1 tag=$2 wend
	touch "$T/busy"
	SPYREMON_SOCKET=$T/control.sock "$PY" "$ROOT/contrib/torch/$script" \
		--tag "$tag" --iterations $ITER --step-seconds 0.3 --out "$T/$tag.json" \
		>"$T/job.out" 2>"$T/err" || fail "$script failed: $(cat "$T/err")"
	rm -f "$T/busy"
	cat "$T/job.out"
	PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
		"$T/control.sock" || fail "the daemon did not store window $tag"
	wend=$(sql "SELECT end_ns FROM windows WHERE tag = '$tag'")
	[ -n "$wend" ] || fail "window $tag is missing or still open"
}

# check_job TAG: the checks above, on the trace and window of run_job TAG
check_job() {
	local tag=$1 trace=$T/$1.json wid begin first last got want n rc
	wid=$(sql "SELECT id FROM windows WHERE tag = '$tag'")
	begin=$(sql "SELECT begin_ns FROM windows WHERE id = $wid")

	# the trace holds the active iterations, and only those
	want=$(seq $WAIT_WARMUP $((WAIT_WARMUP + ITER - 1)) | sed 's/^/iteration_/' | paste -sd ' ')
	got=$(python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
print(" ".join(e["name"] for e in (d if isinstance(d, list) else d["traceEvents"])
               if re.fullmatch(r"iteration_[0-9]+", e.get("name", ""))))' "$trace")
	[ "$got" = "$want" ] || fail "$tag: the trace holds '$got', not the active '$want'"

	# trace info: absolute time, or none for a bare array
	$SPY trace info "$trace" --json >"$T/info.json" || fail "trace info --json failed"
	$CHECK info "$trace" "$T/info.json"

	local align clock
	if grep -q '"start_ns": null' "$T/info.json"; then
		# export by the trace: never a guessed clock
		rc=0
		$SPY export --trace "$trace" >/dev/null 2>"$T/err" || rc=$?
		[ $rc -ne 0 ] || fail "export of a trace without absolute time nor alignment succeeded"
		grep -q -- "--align-window" "$T/err" || fail "not told how to align: $(cat "$T/err")"

		# the samples overlapping the trace, placed at the window's begin
		read -r first last <<<"$($CHECK span "$trace")"
		$SPY export --trace "$trace" --align-window "$tag" --format csv \
			--output "$T/span.csv" || fail "export --trace --align-window failed"
		$EXPORT_CHECK "$DB" csv "$T/span.csv" --trace-ns --span "$begin" $((begin + last - first)) \
			--min-rows $((ITER * 2))
		align=(--trace "$trace" --align-window "$wid")
		clock=$wid
	else
		# the samples overlapping the trace, on its own clock
		$CHECK kineto "$trace" "$ROOT/tests/data/traces/kineto-base-relative-amd.json.gz"
		read -r first last <<<"$($CHECK abs-span "$trace")"
		$SPY export --trace "$trace" --format csv --output "$T/span.csv" ||
			fail "export --trace of a trace with absolute time failed"
		$EXPORT_CHECK "$DB" csv "$T/span.csv" --trace-ns --span "$first" "$last" \
			--min-rows $((ITER * 2))
		align=(--trace "$trace")
		clock=-
	fi
	# the window brackets the profiled steps, and stays open past the
	# last one's end for more than a fine interval
	$CHECK bracket "$trace" "$DB" "$wid" 100

	# the per-step table: ProfilerStep#N encloses iteration_N, and by
	# default the inner one is the step: one row per profiled iteration
	$SPY export "${align[@]}" --steps --json >"$T/it.json" || fail "--steps --json failed"
	$SPY export "${align[@]}" --steps --csv --output "$T/it.csv" ||
		fail "--steps --csv failed"
	$CHECK steps "$trace" "$DB" "$clock" "$T/it.json" "$T/it.csv" 'iteration_[0-9]+'
	# a pattern given is taken as it is: both kinds of step
	local both=(--step-pattern 'ProfilerStep#[0-9]+|iteration_[0-9]+')
	$SPY export "${align[@]}" "${both[@]}" --steps --json >"$T/all.json" ||
		fail "--steps --json --step-pattern failed"
	$SPY export "${align[@]}" "${both[@]}" --steps --csv >"$T/all.csv" ||
		fail "--steps --csv --step-pattern failed"
	$CHECK steps "$trace" "$DB" "$clock" "$T/all.json" "$T/all.csv" \
		'ProfilerStep#[0-9]+|iteration_[0-9]+'
	cat "$T/it.csv"
	n=$(grep -c '^iteration_' "$T/it.csv" || true)
	[ "$n" -eq $ITER ] || fail "$n iteration rows in the CSV, not $ITER"
	grep -q '^total,' "$T/it.csv" || fail "no total row in the CSV"

	if [ "$clock" != - ]; then
		# --trace-start at the time of ts = 0 places the trace just as well
		$SPY export --trace "$trace" --trace-start $((begin - first)) \
			--steps --json >"$T/start.json" || fail "export --trace-start --steps failed"
		cmp -s "$T/it.json" "$T/start.json" ||
			fail "--trace-start and --align-window differ: $(diff "$T/it.json" "$T/start.json" | head)"
	fi

	# the merged trace, plain and compressed
	$SPY export "${align[@]}" --merge "$T/merged.json" 2>"$T/err" ||
		fail "export --merge failed: $(cat "$T/err")"
	$CHECK merge "$trace" "$T/merged.json"
	$SPY export "${align[@]}" --merge "$T/merged.json.gz" 2>"$T/err" ||
		fail "export --merge .gz failed: $(cat "$T/err")"
	$CHECK merge "$trace" "$T/merged.json.gz"
}

# ---- torch, installed if need be ----
TORCH=yes
torch_python || TORCH=

FLUSH=200ms write_config 1 100ms --workload "file:$T/busy"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
SPY="$CLIENT -c $T/spyremond.yaml"

# ---- the stand-in without torch, then torch ----
run_job fake_trace.py fake-e2e
check_job fake-e2e
# the stand-in's kernels carry their launch's correlation, as Kineto's do:
# 90 % or more of its card's idle time has a cause (docs/traces.md)
$SPY export --trace "$T/fake-e2e.json" --breakdown --json >"$T/bd.json" ||
	fail "export --breakdown of the stand-in's trace failed"
python3 - "$T/bd.json" <<'EOF' || fail "the stand-in's idle time is not classified"
import json, sys
d = json.load(open(sys.argv[1]))
assert [c["card"] for c in d["cards"]] == [0], d["cards"]
c = d["cards"][0]
idle, unexp = c["idle_us"], c["idle_causes"]["unexplained_us"]
share = 100 * (idle - unexp) / idle
print("fake_trace.py: %.1f %% of %.3f ms idle classified (host wait %.3f ms), %s"
      % (share, idle / 1000, c["idle_causes"]["host_wait_us"] / 1000, c["verdict"]))
assert share >= 90 and c["verdict"] == "host-bound", (share, c["verdict"])
EOF
if [ -z "$TORCH" ]; then
	stop_daemon
	echo "SKIP: fake_trace.py passed; $SKIP_WHY"
	exit 77
fi
"$PY" -c 'import torch; print("torch", torch.__version__)'
run_job profile_demo.py torch-e2e
check_job torch-e2e
stop_daemon
exit 0
