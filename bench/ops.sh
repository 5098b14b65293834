#!/bin/bash
# The cost of "spyremon export --trace F --ops" against "--steps" on the
# same input: a one-hour trace of about 200 MB with device events, and a
# database of 8 cards sampled every 100 ms over it.
#
#   make B=build all build/tests/mksamples
#   bench/ops.sh [MEGABYTES]                        default 200
#
# Environment: B (build directory, default build); RUNS (timed runs per
# command, default 5, at least 3); BENCH_DIR (default $TMPDIR or /tmp);
# BASE_B (another build directory: its --ops is timed in the same run).
#
# bench/mkopstrace.py writes the trace (an hour of 1 s ProfilerSteps, each
# with K kernels, copies and collectives on each of 4 cards and a host
# launch before each, K chosen for MEGABYTES) and the samples, which
# tests/mksamples stores.  Both commands write CSV to /dev/null.  They
# run in turn, RUNS rounds after one that warms the page cache, so that
# other work on the machine falls on both alike (hyperfine would run all
# of one command's runs, then the other's); the medians of wall time and
# CPU time (user + system) are printed, and each command runs once more
# under GNU time for its peak RSS.  Everything made is removed at the end.
set -euo pipefail

B=${B:-build}
MB=${1:-200}
RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPY=$ROOT/$B/spyremon
MKSAMPLES=$ROOT/$B/tests/mksamples
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}

[ "$RUNS" -ge 3 ] || { echo "bench: RUNS must be at least 3" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench: needs python3" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (/usr/bin/time)" >&2; exit 1; }
[ -x "$SPY" ] && [ -x "$MKSAMPLES" ] ||
	{ echo "bench: first: make B=$B all $B/tests/mksamples" >&2; exit 1; }

W=$(mktemp -d "$DIR/spyremon-bench-ops.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
F=$W/hour.json

echo "making a ${MB} MB one-hour trace in $W"
echo "  $(python3 "$ROOT/bench/mkopstrace.py" "$F" "$MB" "$W/lines")"
"$MKSAMPLES" "$W/db" <"$W/lines"
echo "  database: $(grep -vc '^map' "$W/lines") samples of 8 cards," \
    "$(stat -c %s "$W/db") bytes"
rm -f "$W/lines"

DB="--db $W/db"
NAMES=(steps ops)
CMDS=(
	"$SPY export $DB --trace $F --steps --csv --output /dev/null"
	"$SPY export $DB --trace $F --ops --csv --output /dev/null"
)
if [ -n "${BASE_B:-}" ]; then
	NAMES+=(base_ops)
	CMDS+=("$ROOT/$BASE_B/spyremon export $DB --trace $F --ops --csv --output /dev/null")
fi
# the answer is whole: --ops' closure and --steps' rows
"$SPY" export $DB --trace "$F" --ops --csv --output "$W/ops.csv" 2>"$W/err"
grep "add up to each card's energy" "$W/err" | sed 's/^/  /'
echo "  --ops: $(grep -c '^op,' "$W/ops.csv") operators;" \
    "--steps: $("$SPY" export $DB --trace "$F" --steps --csv | wc -l) rows"

echo
echo "$RUNS rounds, the commands in turn in each; load average:" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RUNS" "${NAMES[@]}" -- "${CMDS[@]}" <<'PY'
import os, resource, statistics, subprocess, sys, time
runs = int(sys.argv[1])
sep = sys.argv.index("--")
names, cmds = sys.argv[2:sep], sys.argv[sep + 1:]
wall = {n: [] for n in names}
cpu = {n: [] for n in names}
rss = {n: 0 for n in names}
for r in range(runs + 1):           # round 0 warms the page cache
    for n, c in zip(names, cmds):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        subprocess.run(c + " 2>/dev/null", shell=True, check=True)
        t = time.monotonic() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rss[n] = max(rss[n], after.ru_maxrss)
        if r > 0:
            wall[n].append(t)
            cpu[n].append(after.ru_utime - before.ru_utime +
                          after.ru_stime - before.ru_stime)
print("%-10s %9s %9s %9s %10s" % ("", "wall", "min", "max", "CPU"))
for n in names:
    print("%-10s %8.2fs %8.2fs %8.2fs %9.2fs" % (
        n, statistics.median(wall[n]), min(wall[n]), max(wall[n]),
        statistics.median(cpu[n])))
print()
med = lambda d, n: statistics.median(d[n])
print("ops / steps: %.2fx wall, %.2fx CPU (target: at most 1.5x)"
      % (med(wall, "ops") / med(wall, "steps"),
         med(cpu, "ops") / med(cpu, "steps")))
if "base_ops" in wall:
    print("ops / base_ops: %.2fx wall, %.2fx CPU"
          % (med(wall, "ops") / med(wall, "base_ops"),
             med(cpu, "ops") / med(cpu, "base_ops")))
PY
for i in "${!NAMES[@]}"; do
	/usr/bin/time -f "${NAMES[$i]}: peak RSS %M KiB" bash -c \
	    "${CMDS[$i]} 2>/dev/null" >/dev/null
done
