#!/bin/bash
# Time of "spyremon export --trace F --breakdown" on a large trace against
# "--steps" on the same trace and database: both read the whole trace
# once; the breakdown also keeps every device event and host launch and
# classifies each card's time.
#
#   make B=build all build/tests/mksamples
#   bench/breakdown.sh [MEGABYTES]                 default 200
#
# Environment: B (build directory, default build); RUNS (timed runs per
# command, default 5, at least 3); BENCH_DIR (default $TMPDIR or /tmp);
# BASE_B (another build directory: its --breakdown is timed in the same
# run).
#
# bench/mkbdtrace.py writes a Kineto-shaped trace of MEGABYTES * 10^6
# bytes: 20 ms steps, each with 40 kernels on card 0 linked to their
# launches by correlation ids of their own, copies and a synchronisation;
# tests/mksamples writes a database of 8 cards sampled every 100 ms over
# the trace's span and 1 s beyond on each side.
# Each command runs under hyperfine (--runs RUNS, no warm-up: the trace is
# read once first, so the page cache is warm; output to /dev/null) and
# once more under /usr/bin/time -v for its peak RSS.  Before timing, the
# breakdown's JSON is checked: one card, every step, the classes adding up
# to each span.  Everything made is removed at the end.
set -euo pipefail

B=${B:-build}
MB=${1:-200}
RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPY=$ROOT/$B/spyremon
MKSAMPLES=$ROOT/$B/tests/mksamples
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}

[ "$RUNS" -ge 3 ] || { echo "bench: RUNS must be at least 3" >&2; exit 1; }
for tool in hyperfine python3; do
	command -v "$tool" >/dev/null ||
		{ echo "bench: needs $tool (packages: hyperfine python3)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (/usr/bin/time)" >&2; exit 1; }
[ -x "$SPY" ] && [ -x "$MKSAMPLES" ] ||
	{ echo "bench: first: make B=$B all $B/tests/mksamples" >&2; exit 1; }

W=$(mktemp -d "$DIR/spyremon-bench-breakdown.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
F=$W/big.json

echo "making a ${MB} MB trace in $W (bench/mkbdtrace.py)"
echo "  $(python3 "$ROOT/bench/mkbdtrace.py" "$F" "$MB" "$(date +%s%N)")"
BYTES=$(stat -c %s "$F")
echo "  $BYTES bytes"

"$SPY" trace info --json "$F" >"$W/info.json"
python3 - "$W/info.json" >"$W/lines" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
keys = "pwr busy gtemp rdmem wrmem".split()
for dev in range(8):
    print("map %d 0000:%02x:00.0" % (dev, 0x13 + dev))
step = 100 * 10**6
t = info["start_ns"] - 10**9
k = 0
while t - step < info["end_ns"] + 10**9:
    for dev in range(8):
        print("%d %d 100 %s" % (t + dev * 15000, dev, " ".join(
            "%s=%d.%d" % (key, (k * 7 + dev + i) % 100, k % 10)
            for i, key in enumerate(keys))))
    t += step
    k += 1
PY
"$MKSAMPLES" "$W/db" <"$W/lines"
echo "  database: $(grep -vc '^map' "$W/lines") samples of 8 cards"

DB="--db $W/db"
"$SPY" export $DB --trace "$F" --breakdown --json >"$W/bd.json"
python3 - "$W/bd.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ns = lambda us: round(us * 1000)
CL = ("compute", "data_movement", "communication", "other", "idle")
n = 0
for c in d["cards"]:
    for w in [c] + c["steps"]:
        assert sum(ns(w[k + "_us"]) for k in CL) == ns(w["span_us"]), w
        n += 1
print("  breakdown: %d cards, %d spans adding up; idle classified %.1f %%"
      % (len(d["cards"]), n, d["cards"][0]["idle_causes"]["classified_pct"]))
PY
cat "$F" >/dev/null

NAMES=(steps breakdown)
CMDS=(
	"$SPY export $DB --trace $F --steps --csv --output /dev/null"
	"$SPY export $DB --trace $F --breakdown --csv --output /dev/null"
)
if [ -n "${BASE_B:-}" ]; then
	NAMES+=(base_breakdown)
	CMDS+=("$ROOT/$BASE_B/spyremon export $DB --trace $F --breakdown --csv --output /dev/null")
fi

echo
echo "hyperfine, $RUNS runs each; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
args=()
for i in "${!NAMES[@]}"; do
	args+=(-n "${NAMES[$i]}" "${CMDS[$i]}")
done
hyperfine --runs "$RUNS" --export-json "$W/times.json" --style basic \
    "${args[@]}" >"$W/hyperfine.log"
for i in "${!NAMES[@]}"; do
	/usr/bin/time -v bash -c "${CMDS[$i]}" 2>"$W/rss.$i" >/dev/null
	awk -F': ' '/Maximum resident set size/ { print $2 }' "$W/rss.$i" >"$W/kib.$i"
done

python3 - "$W/times.json" "$BYTES" "$W" "${NAMES[@]}" <<'PY'
import json, sys
times, size, w, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
res = {r["command"]: r for r in json.load(open(times))["results"]}
med = {n: res[n]["median"] for n in names}
kib = {n: int(open("%s/kib.%d" % (w, i)).read()) for i, n in enumerate(names)}
print("%-15s %9s %9s %9s %10s %12s"
      % ("", "median", "min", "max", "MB/s", "peak RSS"))
for n in names:
    r = res[n]
    print("%-15s %8.2fs %8.2fs %8.2fs %10.1f %8.1f MiB"
          % (n, r["median"], r["min"], r["max"], size / 1e6 / r["median"],
             kib[n] / 1024))
print()
print("breakdown / steps %6.2fx  (target: at most 1.5x)"
      % (med["breakdown"] / med["steps"]))
if "base_breakdown" in med:
    print("breakdown / base_breakdown %6.2fx" % (med["breakdown"] / med["base_breakdown"]))
PY
