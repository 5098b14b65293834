#!/bin/bash
# Summary and report of a one-hour window sampled at 100 ms from 8 cards
# (28 800 rows per card), in a database of DAYS days at 1 Hz around it,
# against reading the window's rows with export as a baseline.
#
#   make B=build bench && bench/summary.sh [DAYS]      (default 1)
#   BASE_B=/path/to/other/build bench/summary.sh       (with a baseline)
#
# Environment: B (build directory, default build); BASE_B (a baseline
# build directory: its report is timed in the same rounds, and its
# aiusmi.csv and report.md compared with this build's; the databases are
# then made by its bench-mkdb and mksamples, so that both builds read
# them whatever their schema versions); BENCH_DIR (default
# $TMPDIR or /tmp); RUNS (timed runs, default 5); KEEP=1 keeps the
# databases.
#
# build/bench-mkdb -w 10 (bench/mkdb.c) writes the database through the
# store with the window "bench-hour" at 10 Hz; the window is not summarized
# (live.db).  A copy is summarized as spyremond does it, by
# build/tests/mksamples on empty input, which calls
# store_windows_summarize_due (stored.db).  Then one warm-up round and RUNS
# timed ones of:
#   export        spyremon export --window bench-hour --format csv (the rows)
#   summary       spyremon summary on stored.db: the stored summary
#   summary-live  spyremon summary on live.db: computed from the samples,
#                 the same code the daemon runs when the window ends
#   report        spyremon report --output DIR on stored.db: report.md,
#                 aiusmi.csv and the three plots as PNG and SVG
#   report-base   the same with BASE_B's spyremon, when BASE_B is set
# each timed by build/bench-runtime (wall clock from fork to exit, and the
# CPU time of the process).  Prints the medians and the ratios to export.
set -euo pipefail
B=${B:-build}
days=${1:-1}
runs=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/$B
SPY=$BIN/spyremon
if [ -n "${BASE_B:-}" ]; then
	case $BASE_B in /*) ;; *) BASE_B=$ROOT/$BASE_B ;; esac
	[ -x "$BASE_B/spyremon" ] || { echo "bench: no $BASE_B/spyremon" >&2; exit 1; }
fi
MKDB=${BASE_B:-$BIN}/bench-mkdb
MKSAMPLES=${BASE_B:-$BIN}/tests/mksamples
RT=$BIN/bench-runtime
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}
TAG=bench-hour

[ -x "$SPY" ] && [ -x "$MKDB" ] && [ -x "$RT" ] && [ -x "$MKSAMPLES" ] ||
	{ echo "bench: first: make B=$B bench check (for tests/mksamples)" >&2; exit 1; }
W=$(mktemp -d "$DIR/spyremon-bench-summary.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then trap 'echo "kept $W"' EXIT; else trap 'rm -rf "$W"' EXIT; fi

echo "== $days days at 1 Hz, 8 cards, window $TAG at 10 Hz: $MKDB -w 10 $W/live.db $days"
"$MKDB" -w 10 "$W/live.db" "$days" | sed 's/^/   /'
cp "$W/live.db" "$W/stored.db"
t0=$(date +%s%N)
"$MKSAMPLES" "$W/stored.db" </dev/null
echo "   summarized in $(( ($(date +%s%N) - t0) / 1000000 )) ms (mksamples: open, store_windows_summarize_due, close)"
n=$(sqlite3 "$W/stored.db" "SELECT sum(samples) FROM window_summary")
echo "   the summary counts $n samples in the window"
[ "$n" -ge $((8 * 36000)) ] || { echo "bench: expected at least 288000 samples" >&2; exit 1; }

cmd() {
	case $1 in
	export)	CMD=("$SPY" export --db "$W/stored.db" --window "$TAG" --format csv) ;;
	summary) CMD=("$SPY" summary --db "$W/stored.db" --window "$TAG") ;;
	summary-live) CMD=("$SPY" summary --db "$W/live.db" --window "$TAG") ;;
	report)	rm -rf "$W/rep"
		CMD=("$SPY" report --db "$W/stored.db" --window "$TAG" --output "$W/rep") ;;
	report-base) rm -rf "$W/rep-base"
		CMD=("$BASE_B/spyremon" report --db "$W/stored.db" --window "$TAG" --output "$W/rep-base") ;;
	esac
}
kinds=(export summary summary-live report)
[ -z "${BASE_B:-}" ] || kinds+=(report-base)
"$SPY" summary --db "$W/live.db" --window "$TAG" | grep -q "computed now" ||
	{ echo "bench: live.db's summary is not computed on the spot" >&2; exit 1; }
"$SPY" summary --db "$W/stored.db" --window "$TAG" | grep -q "computed now" &&
	{ echo "bench: stored.db has no stored summary" >&2; exit 1; }
echo "== $runs timed runs after 1 warm-up; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 0 "$runs"); do
	for k in "${kinds[@]}"; do
		cmd "$k"
		read -r wall cpu rc < <("$RT" "${CMD[@]}" 2>&1 >/dev/null)
		[ "$rc" -eq 0 ] || { echo "bench: $k: exit $rc" >&2; exit 1; }
		[ "$round" -eq 0 ] || echo "$wall $cpu" >>"$W/t.$k"
	done
done
echo "   load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
ls -l "$W/rep" | sed 's/^/   report: /'
if [ -n "${BASE_B:-}" ]; then
	# the same files; report.md differs only in the time it was made, and
	# in why the aiu-smi version is not known (the baseline does not say)
	cmp "$W/rep/aiusmi.csv" "$W/rep-base/aiusmi.csv" ||
	    { echo "bench: aiusmi.csv differs from the baseline's" >&2; exit 1; }
	diff <(grep -v -e ', reported ' -e '^- aiu-smi version: ' "$W/rep/report.md") \
	    <(grep -v -e ', reported ' -e '^- aiu-smi version: ' "$W/rep-base/report.md") >&2 ||
	    { echo "bench: report.md differs from the baseline's" >&2; exit 1; }
	ls -l "$W/rep-base" | grep -E '\.(png|svg)$' | sed 's/^/   baseline: /'
	echo "   aiusmi.csv and report.md: the same as the baseline's"
fi

median_ms() {
	awk -v c="$2" '{ print $c }' "$1" | sort -n |
	    awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'
}
all_ms() {
	awk -v c="$2" '{ printf "%s%.0f", (NR > 1 ? " " : ""), $c / 1000 }' "$1"
}
printf '\nmedians of %d runs, ms (every run in brackets); ratio to export\n' "$runs"
printf '%-13s %8s %-28s %8s %-28s %8s %8s\n' kind wall "" cpu "" "wall/ex" "cpu/ex"
ew=$(median_ms "$W/t.export" 1)
ec=$(median_ms "$W/t.export" 2)
for k in "${kinds[@]}"; do
	w=$(median_ms "$W/t.$k" 1)
	c=$(median_ms "$W/t.$k" 2)
	printf '%-13s %8s %-28s %8s %-28s %8.2f %8.2f\n' "$k" "$w" "[$(all_ms "$W/t.$k" 1)]" \
	    "$c" "[$(all_ms "$W/t.$k" 2)]" "$(awk -v a="$w" -v b="$ew" 'BEGIN { print a / b }')" \
	    "$(awk -v a="$c" -v b="$ec" 'BEGIN { print a / b }')"
done
if [ -n "${BASE_B:-}" ]; then
	printf 'report / report-base: wall %.2f, cpu %.2f\n' \
	    "$(awk -v a="$(median_ms "$W/t.report" 1)" -v b="$(median_ms "$W/t.report-base" 1)" 'BEGIN { print a / b }')" \
	    "$(awk -v a="$(median_ms "$W/t.report" 2)" -v b="$(median_ms "$W/t.report-base" 2)" 'BEGIN { print a / b }')"
fi
echo "targets: summary <= 50 ms; report with plots <= 1 s"
