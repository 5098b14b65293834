#!/bin/bash
# mark.sh's raw client, (a), against two builds side by side: ROUNDS rounds
# (default 5), each running BASE then B, each with a fresh daemon; then the
# median over the rounds of each build's p50 and p99 of begin and end, and
# the ratios B / BASE.
#
#   git worktree add /tmp/before REV && make -C /tmp/before B=build bench
#   make B=build bench
#   BASE=/tmp/before/build B=build bench/mark_ab.sh [PAIRS]     (default 1000)
#
# Both builds are timed with $B's bench-markrtt, so that the client is the
# same; it retries a begin refused with "busy" without timing the refusal
# and prints how many there were.
set -euo pipefail
B=${B:-build}
BASE=${BASE:?BASE=the build directory to compare against}
ROUNDS=${ROUNDS:-5}
pairs=${1:-1000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BASE in /*) ;; *) BASE=$PWD/$BASE ;; esac
[ -x "$BASE/spyremond" ] || { echo "bench: no $BASE/spyremond" >&2; exit 1; }
[ -x "$ROOT/$B/bench-markrtt" ] || { echo "bench: make B=$B bench first" >&2; exit 1; }
out=$(mktemp "${TMPDIR:-/tmp}/spyremon-mark-ab.XXXXXX")
trap 'rm -f "$out"' EXIT

rtt=$ROOT/$B/bench-markrtt
for r in $(seq "$ROUNDS"); do
	for which in base new; do
		b=$B; [ $which = base ] && b=$BASE
		B=$b MARKRTT=$rtt RAW_ONLY=1 \
			"$ROOT/bench/mark.sh" "$pairs" 1 |
			sed -n -e "s/^raw begins refused.*: /$which $r busy /p; t" -e "s/^raw /$which $r /p" >>"$out"
	done
	echo "round $r done" >&2
done
grep -E " (begin|end) " "$out"
python3 - "$out" <<'PY'
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    f = line.split()
    which, name = f[0], f[2]
    if name == "busy":
        v.setdefault((which, "busy"), []).append(int(f[3]))
        continue
    v.setdefault((which, name, "p50"), []).append(float(f[5]))
    v.setdefault((which, name, "p99"), []).append(float(f[8]))
med = lambda k: statistics.median(v[k])
print("median over %d rounds (us)      base      new   new/base" % len(v[("base", "end", "p99")]))
for name in ("hello", "begin", "end"):
    for p in ("p50", "p99"):
        b, n = med(("base", name, p)), med(("new", name, p))
        print("  %-5s %s             %8.1f %8.1f   %5.2f" % (name, p, b, n, n / b))
print("  begins refused busy, per round: base %s, new %s"
      % (v.get(("base", "busy")), v.get(("new", "busy"))))
PY
