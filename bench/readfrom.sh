#!/bin/bash
# The cost of pairing a span's first rows with the file rows before it
# (pair_read_from, query/pair.c) to a paired export, against a baseline
# spyremon built before it, which read each span from its begin.
#
#   make B=build bench build/tests/mksamples
#   BASE=/path/to/old/spyremon bench/readfrom.sh [RUNS]
#
# The database: 8 cards read from both streams for one hour at 100 ms, a
# file row at 51.55 ms into each tick and aiu-smi's row 61.18 ms after it
# (576 000 rows, written through the store by mksamples for its schema,
# then by SQL), with a window 'hour' over the whole of it and 360 windows
# 'short' of 1 s, one every 10 s, each beginning between a file row and
# the aiu-smi row that joins it: the case the change is for, at every
# window.  Then, interleaved in each of RUNS rounds (default 9) after a
# warm-up, both programs export, each as --format aiusmi:
#   hour   --window hour          one span of 288 000 samples
#   short  --window short --all   360 spans of 10 samples per card
# timed by bench-runtime (wall, CPU), and once each under callgrind
# (instructions, the same from run to run).  It also counts the rows each
# writes without power ("-"): the rows the baseline wrote alone.
set -euo pipefail
B=${B:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPY=$ROOT/$B/spyremon
RT=$ROOT/$B/bench-runtime
MK=$ROOT/$B/tests/mksamples
RUNS=${1:-9}
BASE=${BASE:?set BASE to a spyremon built before pair_read_from}
W=$(mktemp -d "${TMPDIR:-/tmp}/readfrom-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

T0=1760000000000000000
python3 - "$T0" >"$W/lines" <<'EOF'
import sys
t0, s = int(sys.argv[1]), 10**9
print("file %d 0 100 pwr=1.0" % (t0 - 48450000))
print("%d 0 100 pwr=1.0 busy=1" % (t0 + 12730000))
print("window hour %d %d" % (t0, t0 + 3600 * s))
for k in range(360):
    print("window short %d %d" % (t0 + k * 10 * s + s // 2, t0 + k * 10 * s + 3 * s // 2))
EOF
"$MK" "$W/db" <"$W/lines"
sqlite3 "$W/db" "DELETE FROM samples;
WITH RECURSIVE k(n) AS (SELECT -2 UNION ALL SELECT n + 1 FROM k WHERE n < 36001),
d(dev) AS (SELECT 0 UNION ALL SELECT dev + 1 FROM d WHERE dev < 7)
INSERT INTO samples (ts_ns, device, interval_ms, pwr, src)
	SELECT $T0 + n * 100000000 + 51550000, dev, 100, 500 + (n % 50) + dev, 1 FROM k, d;
WITH RECURSIVE k(n) AS (SELECT -2 UNION ALL SELECT n + 1 FROM k WHERE n < 36001),
d(dev) AS (SELECT 0 UNION ALL SELECT dev + 1 FROM d WHERE dev < 7)
INSERT INTO samples (ts_ns, device, interval_ms, pwr, busy, src)
	SELECT $T0 + n * 100000000 + 112730000, dev, 100, 9990, n % 100, NULL FROM k, d;"
echo "database: $(sqlite3 "$W/db" "SELECT count(*) FROM samples") rows," \
    "$(sqlite3 "$W/db" "SELECT count(*) FROM windows") windows"

cmd() {	# PROGRAM KIND
	case $2 in
	hour) echo "$1 --db $W/db export --window hour --format aiusmi" ;;
	short) echo "$1 --db $W/db export --window short --all --format aiusmi" ;;
	esac
}
for k in hour short; do
	for p in base new; do
		prog=$SPY
		[ $p = base ] && prog=$BASE
		$(cmd "$prog" $k) >"$W/$p.$k.csv" 2>/dev/null
		echo "$p $k: $(grep -c '^[0-9]' "$W/$p.$k.csv") rows, $(awk -F, \
		    '/^[0-9]/ && $6 == "-"' "$W/$p.$k.csv" | wc -l) without power"
	done
done

for r in $(seq 0 "$RUNS"); do
	for k in hour short; do
		for p in base new; do
			prog=$SPY
			[ $p = base ] && prog=$BASE
			read -r wall cpu rc < <($RT $(cmd "$prog" $k) 2>&1 >/dev/null)
			[ "$r" -eq 0 ] || echo "$p.$k $wall $cpu" >>"$W/times"
		done
	done
done
python3 "$ROOT/bench/medians.py" "$W/times" base.hour new.hour:base.hour \
	base.short new.short:base.short
if command -v valgrind >/dev/null && [ "${IR:-1}" != 0 ]; then
	echo "instructions (callgrind), millions:"
	for k in hour short; do
		for p in base new; do
			prog=$SPY
			[ $p = base ] && prog=$BASE
			valgrind --tool=callgrind --callgrind-out-file="$W/cg.$p.$k" \
			    $(cmd "$prog" $k) >/dev/null 2>"$W/cg.$p.$k.err"
			ir=$(awk '/^summary:/ { print $2 }' "$W/cg.$p.$k")
			echo "$p.$k $(python3 -c "print('%.1f' % ($ir / 1e6))")"
		done
	done
fi
