#!/bin/sh
# The main job on a host without a card: the whole profiling loop on the
# aiu-smi simulator, with a real torch.profiler trace when torch is there.
#   1. start spyremond, collecting from aiu-smi-sim (4 cards): cards 0 to
#      2 write their metric files in the new format, which spyremond reads
#      itself, card 3 in the old one, which only aiu-smi reads;
#   2. run a profiled job while the simulated cards are busy: with torch
#      (contrib/torch/profile_demo.py) if /usr/bin/python3 can import it,
#      else contrib/torch/fake_trace.py, which runs the same schedule and
#      writes the trace Kineto writes; either runs inside a window from
#      before its first profiled step to after its last, and writes
#      demo/trace.json;
#   3. show spyremon status: where each card's values come from;
#   4. stop spyremond (SIGTERM) and wait for it: every sample is stored,
#      and what follows reads the database alone;
#   5. export the window's samples;
#   6. line the trace up with the samples: the energy per step;
#   7. and the trace with the telemetry merged in as counter tracks;
#   8. spyremon windows, with the window's energy;
#   9. spyremon report of the window with the trace, and where each file is.
#   sh mk/demo.sh [build-dir]
#   DEMO_ITERATIONS=N: profiled steps (default 6); DEMO_FAKE=1: fake_trace.py
#   even where torch is installed
set -eu
B=${1:-build}
iters=${DEMO_ITERATIONS:-6}
top=$(pwd)
dir=$top/demo
mkdir -p "$dir"
rm -rf "$dir"/spyremon.db* "$dir/busy" "$dir/control.sock" "$dir"/trace*.json \
	"$dir"/trace*.json.gz "$dir/steps.csv" "$dir/report"

# a simulated PCI tree with the 4 cards the simulator reports
sh "$top/mk/fakesysfs.sh" "$dir/sys" 4

cat >"$dir/spyremond.yaml" <<EOF2
# written by mk/demo.sh: the simulator stands in for aiu-smi, and demo/sys
# for the PCI devices in /sys; its cards 0 to 2 write new-format metric
# files, card 3 the old format
database: $dir/spyremon.db
socket: $dir/control.sock
sysfs_root: $dir/sys
source:
  command: ["$top/$B/aiu-smi-sim", "--cards", "4", "--workload", "file:$dir/busy", "--write-metric-files", "--metric-format", "new", "--old-format-cards", "3"]
  interval: 1s
  window_interval: 100ms
  pre_window: 3s
  metric_files: $dir/metrics.%BUSID
EOF2
spyremon() { "$top/$B/spyremon" -c "$dir/spyremond.yaml" "$@"; }

echo "demo: 1. spyremond collecting from aiu-smi-sim (4 cards; 1 s rows, 100 ms in windows)"
echo "        cards 0 to 2 write new-format metric files, which spyremond reads itself;"
echo "        card 3 writes the old format, which only aiu-smi reads"
"$top/$B/spyremond" -c "$dir/spyremond.yaml" 2>"$dir/spyremond.log" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
i=0
until [ -S "$dir/control.sock" ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 4		# idle samples before the run: the summary's idle power

py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ -z "${DEMO_FAKE:-}" ] && "$py" -c 'import torch' 2>/dev/null; then
	job=profile_demo.py
	echo "demo: 2. a torch.profiler job on the CPU ($job), $iters profiled steps"
else
	job=fake_trace.py
	if [ -n "${DEMO_FAKE:-}" ]; then
		echo "demo: 2. DEMO_FAKE is set:"
	else
		echo "demo: 2. torch is not installed for $py (apt-get install python3-torch):"
	fi
	echo "        $job runs the same schedule and writes the trace Kineto writes;"
	echo "        $iters profiled steps"
fi
echo "        inside window demo-run, while the simulated cards are busy"
touch "$dir/busy"
SPYREMON_SOCKET=$dir/control.sock "$py" "$top/contrib/torch/$job" \
	--tag demo-run --iterations "$iters" --step-seconds 0.4 \
	--out "$dir/trace.json" >"$dir/job.out"
rm -f "$dir/busy"
sed 's/^/        /' "$dir/job.out"
rm -f "$dir/job.out"

echo
echo "demo: 3. spyremon status"
spyremon status | sed 's/^/    /'
echo
echo "demo: 4. spyremond stopped (SIGTERM): every sample it took is stored;"
echo "        what follows reads the database, and needs no daemon"
kill -TERM $pid
wait $pid
trap - EXIT

echo "demo: 5. spyremon export --window demo-run (csv, aiu-smi's CSV, jsonl)"
spyremon export --window demo-run --format csv --output "$dir/window.csv"
spyremon export --window demo-run --format aiusmi --output "$dir/window-aiusmi.csv"
spyremon export --window demo-run --format jsonl --output "$dir/window.jsonl"

# A trace of torch without Kineto (Debian's python3-torch) has no absolute
# time: profile_demo.py then opens the window as recording starts, and the
# window's begin places the trace.
align=
if spyremon trace info "$dir/trace.json" | grep -q '^start *unknown'; then
	align="--align-window demo-run"
	echo "demo: 6. spyremon export --trace demo/trace.json $align --steps"
	echo "        the trace has no absolute time (torch without Kineto): its first"
	echo "        event goes at the window's begin"
else
	echo "demo: 6. spyremon export --trace demo/trace.json --steps"
	echo "        the trace has absolute time (baseTimeNanoseconds), on the samples' clock"
fi
echo "        each iteration_N is a step (the ProfilerStep#N around each is left out)"
steps() {
	# shellcheck disable=SC2086
	spyremon export --trace "$dir/trace.json" $align --steps "$@"
}
steps --table		# the table for a person, also when piped to a log
steps --csv --output "$dir/steps.csv" 2>/dev/null
echo "demo: 7. spyremon export --trace demo/trace.json${align:+ $align} --merge demo/trace-merged.json"
# shellcheck disable=SC2086
spyremon export --trace "$dir/trace.json" $align --merge "$dir/trace-merged.json"
echo
echo "demo: 8. spyremon windows"
spyremon windows --table | sed 's/^/    /'
echo
echo "demo: 9. spyremon report --window demo-run --trace demo/trace.json${align:+ $align} --output demo/report"
# shellcheck disable=SC2086
spyremon report --window demo-run --trace "$dir/trace.json" $align \
	--output "$dir/report" | sed 's/^/    /'
echo "    demo/report/report.md:"
sed 's/^/    | /' "$dir/report/report.md"
echo
echo "demo: files"
echo "  database        $dir/spyremon.db   (sqlite3; see spyremon-schema(5))"
echo "  window, csv     $dir/window.csv"
echo "  window, aiu-smi $dir/window-aiusmi.csv"
echo "  window, jsonl   $dir/window.jsonl"
echo "  trace           $dir/trace.json   (by contrib/torch/$job)"
echo "  steps, csv      $dir/steps.csv"
echo "  merged trace    $dir/trace-merged.json"
echo "                  open it in https://ui.perfetto.dev (Open trace file): the"
echo "                  profiler's events, and the cards' telemetry as counter tracks"
echo "  report          $dir/report/   (report.md, aiusmi.csv, steps.csv, plots as PNG and SVG;"
echo "                  with fake_trace.py's kernels, why it was slow and breakdown.png)"
echo "  daemon log      $dir/spyremond.log"
