#!/bin/bash
# The cost of the best-source rule (query/bestsrc.c) to an export of a
# one-hour window, against a baseline spyremon built without it.
#
#   KEEP=1 bench/export.sh 2 1        (leaves DIR/small.db, 2 days at 1 Hz)
#   BASE=/path/to/old/spyremon bench/bestsrc.sh DIR [RUNS]
#
# From DIR/small.db (written by this tree's bench-mkdb: schema 7, no file
# rows) it makes three copies:
#   base.db  brought back to schema 6 (the index dropped), for BASE, which
#            reads no schema 7;
#   off.db   as written: no file row, so the rule is off (one probe of the
#            index) and the statement is the plain one;
#   file.db  plus one file row (src 1, pwr) 0.5 ms before each aiu-smi
#            row of the window's hour: every card read directly, the rule
#            on, twice the rows.
# Then, interleaved in each of RUNS rounds (default 9) after a warm-up:
#   base  BASE export --db base.db --window bench-hour --format csv
#   off   spyremon export --db off.db ... (this tree's)
#   file  spyremon export --db file.db ...
# timed by bench-runtime (wall, CPU), and once each under callgrind
# (instructions, the same from run to run).  Prints medians and ratios.
set -euo pipefail
B=${B:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPY=$ROOT/$B/spyremon
RT=$ROOT/$B/bench-runtime
DIR=${1:?usage: BASE=old-spyremon bench/bestsrc.sh DIR [RUNS]}
RUNS=${2:-9}
BASE=${BASE:?set BASE to a spyremon built without the rule}
W=$(mktemp -d "${TMPDIR:-/tmp}/bestsrc-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

cp "$DIR/small.db" "$W/off.db"
cp "$DIR/small.db" "$W/base.db"
sqlite3 "$W/base.db" "DROP INDEX IF EXISTS samples_file; PRAGMA user_version = 6;"
cp "$DIR/small.db" "$W/file.db"
read -r wb we < <(sqlite3 -separator ' ' "$W/off.db" \
	"SELECT begin_ns, end_ns FROM windows WHERE tag = 'bench-hour'")
sqlite3 "$W/file.db" "INSERT INTO samples (ts_ns, device, interval_ms, pwr, src)
	SELECT ts_ns - 500000, device, interval_ms, pwr, 1 FROM samples
	WHERE ts_ns > $wb AND ts_ns < $we + 1000000000"
for f in base off file; do
	echo "$f.db: $(sqlite3 "$W/$f.db" "PRAGMA user_version") schema," \
	    "$(sqlite3 "$W/$f.db" "SELECT count(*) FROM samples WHERE ts_ns > $wb AND ts_ns < $we + 1000000000") rows in the window"
done
"$BASE" --db "$W/base.db" export --window bench-hour --format csv >"$W/base.csv"
"$SPY" --db "$W/off.db" export --window bench-hour --format csv >"$W/off.csv"
cmp -s "$W/base.csv" "$W/off.csv" && echo "off: the same bytes as base" ||
	{ echo "off: output differs from base" >&2; exit 1; }

cmd() {
	case $1 in
	base) echo "$BASE --db $W/base.db export --window bench-hour --format csv" ;;
	off) echo "$SPY --db $W/off.db export --window bench-hour --format csv" ;;
	file) echo "$SPY --db $W/file.db export --window bench-hour --format csv" ;;
	esac
}
for r in $(seq 0 "$RUNS"); do
	for k in base off file; do
		read -r wall cpu rc < <($RT $(cmd $k) 2>&1 >/dev/null)
		[ "$r" -eq 0 ] || echo "$k $wall $cpu" >>"$W/times"
	done
done
python3 "$ROOT/bench/medians.py" "$W/times" base off:base file:base
if command -v valgrind >/dev/null && [ "${IR:-1}" != 0 ]; then
	echo "instructions (callgrind), millions:"
	for k in base off file; do
		valgrind --tool=callgrind --callgrind-out-file="$W/cg.$k" \
		    $(cmd $k) >/dev/null 2>"$W/cg.$k.err"
		ir=$(awk '/^summary:/ { print $2 }' "$W/cg.$k")
		echo "$k $(python3 -c "print('%.1f' % ($ir / 1e6))")"
	done
fi
