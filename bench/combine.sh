#!/bin/bash
# Two ranks' large traces with two hosts' databases: the combined trace
# ("export --trace A --trace B --merge OUT") against one merged trace per
# rank ("--merge-dir DIR", two merges in one command) in one run, with
# each one's peak RSS.
#
#   make B=build all build/tests/mksamples
#   bench/combine.sh [MEGABYTES]                    default 100, per rank
#
# Environment: B (build directory, default build); RUNS (timed runs per
# command, default 5, at least 3); BENCH_DIR (default $TMPDIR or /tmp).
#
# bench/mktrace.py replicates the events of
# tests/data/traces/kineto-absolute-float-ns-unit.json.gz, shifted, until
# the trace holds MEGABYTES * 10^6 bytes; the second rank is a copy.
# tests/mksamples writes two databases (8 cards every 100 ms over the
# trace's span and 1 s beyond), which name the same host here, so the
# ranks are mapped by --db path.  Before timing, the combined output must
# be valid JSON (json_verify) holding every event of both ranks.
set -euo pipefail

B=${B:-build}
MB=${1:-100}
RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPY=$ROOT/$B/spyremon
MKSAMPLES=$ROOT/$B/tests/mksamples
SRC=$ROOT/tests/data/traces/kineto-absolute-float-ns-unit.json.gz
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}

[ "$RUNS" -ge 3 ] || { echo "bench: RUNS must be at least 3" >&2; exit 1; }
for tool in hyperfine json_verify python3; do
	command -v "$tool" >/dev/null ||
		{ echo "bench: needs $tool (packages: hyperfine yajl-tools python3)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (/usr/bin/time)" >&2; exit 1; }
[ -x "$SPY" ] && [ -x "$MKSAMPLES" ] ||
	{ echo "bench: first: make B=$B all $B/tests/mksamples" >&2; exit 1; }

W=$(mktemp -d "$DIR/spyremon-bench-combine.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
mkdir "$W/dir"
echo "making a ${MB} MB trace per rank in $W"
echo "  $(python3 "$ROOT/bench/mktrace.py" "$SRC" "$W/r0.json" "$MB")"
cp "$W/r0.json" "$W/r1.json"
"$SPY" trace info --json "$W/r0.json" >"$W/info.json"
python3 - "$W/info.json" >"$W/lines" <<'EOF'
import json, sys
info = json.load(open(sys.argv[1]))
for dev in range(8):
    print("map %d 0000:%02x:00.0" % (dev, 0x13 + dev))
step, t, k = 100 * 10**6, info["start_ns"] - 10**9, 0
while t - step < info["end_ns"] + 10**9:
    for dev in range(8):
        print("%d %d 100 pwr=%d.%d busy=%d rdmem=%d.%d" % (t + dev * 15000, dev,
              40 + (k + dev) % 60, k % 10, (k * 7) % 101, k % 20, dev))
    t += step
    k += 1
EOF
"$MKSAMPLES" "$W/a.db" <"$W/lines"
"$MKSAMPLES" "$W/b.db" <"$W/lines"
MAP="--host-map r0.json=$W/a.db --host-map r1.json=$W/b.db"
ARGS="--db $W/a.db --db $W/b.db export --trace $W/r0.json --trace $W/r1.json $MAP"

# shellcheck disable=SC2086
"$SPY" $ARGS --merge "$W/comb.json" 2>/dev/null
json_verify -q <"$W/comb.json"
python3 - "$W/r0.json" "$W/comb.json" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
# the ranks' process_sort_index events are replaced, one per process
n = sum(1 for e in ev if e.get("name") != "process_sort_index")
c = json.load(open(sys.argv[2]))
m = sum(1 for r in c["spyremonRanks"] for e in c["traceEvents"]
        if r["pids"][0] <= e.get("pid", -1) <= r["pids"][1]
        and e.get("name") != "process_sort_index")
print("  combined: valid, %d events in all, %d of the ranks' (%d each)"
      % (len(c["traceEvents"]), m, n))
if m < 2 * n:
    sys.exit("bench: the combined trace lacks events (%d of %d)" % (m, 2 * n))
EOF
cat "$W/r0.json" "$W/r1.json" >/dev/null

echo
echo "hyperfine, $RUNS runs each; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine --runs "$RUNS" --export-json "$W/times.json" --style basic \
    --prepare "rm -f $W/comb.json $W/dir/r0.json $W/dir/r1.json" \
    -n merge_dir "$SPY $ARGS --merge-dir $W/dir" \
    -n combined "$SPY $ARGS --merge $W/comb.json" >"$W/hyperfine.log"
python3 - "$W/times.json" "$W/r0.json" <<'EOF'
import json, os, statistics, sys
t = {r["command"]: statistics.median(r["times"]) for r in json.load(open(sys.argv[1]))["results"]}
mb = 2 * os.path.getsize(sys.argv[2]) / 1e6
for k, v in t.items():
    print("%-10s median %.2f s, %.0f MB/s of both traces" % (k, v, mb / v))
print("combined / merge_dir: %.2fx" % (t["combined"] / t["merge_dir"]))
EOF
for mode in "--merge-dir $W/dir" "--merge $W/comb.json"; do
	rm -f "$W/comb.json" "$W/dir/"*
	# shellcheck disable=SC2086
	/usr/bin/time -f "%M" -o "$W/rss" "$SPY" $ARGS $mode 2>/dev/null
	echo "peak RSS ${mode%% *}: $(( $(cat "$W/rss") / 1024 )) MiB"
done
