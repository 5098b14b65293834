#!/bin/bash
# Export time of a one-hour window from a database of 30 days at 1 Hz from
# 8 cards, against a bare sqlite3 query selecting the same rows, and the
# same from a database ten times larger.
#
#   make B=build bench && bench/export.sh [DAYS [FACTOR]]   (defaults: 30 10)
#
# Environment: B (build directory, default build); BENCH_DIR (where the
# databases go, default $TMPDIR or /tmp); RUNS (timed runs, default 5);
# KEEP=1 keeps the databases.
#
# build/bench-mkdb (bench/mkdb.c) writes both databases through the store,
# each with the window "bench-hour" in its middle: DAYS days, then
# DAYS * FACTOR days.  Then, for both databases in turn within each round,
# it runs one warm-up round and RUNS timed ones of:
#   sqlite3  sqlite3 -csv DB "SELECT * FROM samples WHERE ts_ns BETWEEN a AND b"
#            where [a, b] are the first and last stamps the export writes
#   csv, jsonl, aiusmi
#            spyremon export --db DB --window bench-hour --format F
#   csv-file the same as csv with --output FILE, a regular file in BENCH_DIR
# Each writes to stdout redirected to /dev/null, except csv-file.  (Not
# "--output /dev/null": export writes a temporary file beside its --output
# and renames it over it.)  Wall-clock time from fork to exit.
# It checks that every command writes the same rows, then prints the
# medians, export / sqlite3, and large / small.
set -euo pipefail
B=${B:-build}
days=${1:-30}
factor=${2:-10}
runs=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/$B
SPY=$BIN/spyremon
MKDB=$BIN/bench-mkdb
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}
TAG=bench-hour
BYTES_PER_ROW=100	# measured: 92 with the 19 metrics of metric_defs

[ -x "$SPY" ] && [ -x "$MKDB" ] || { echo "bench: first: make B=$B bench" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench: needs sqlite3" >&2; exit 1; }

rows_small=$((days * 86400 * 8))
need=$((rows_small * (1 + factor) * BYTES_PER_ROW))
avail=$(($(df -Pk "$DIR" | awk 'NR == 2 { print $4 }') * 1024))
echo "databases: ~$((need >> 30)) GiB in $DIR, $((avail >> 30)) GiB free"
df -h "$DIR"
if [ $((need * 3 / 2)) -gt "$avail" ]; then
	echo "bench: not enough room for 1.5 x that; set BENCH_DIR or a smaller FACTOR" >&2
	exit 1
fi

W=$(mktemp -d "$DIR/spyremon-bench-export.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then
	trap 'echo "kept $W"' EXIT
else
	trap 'rm -rf "$W"' EXIT
fi

usec() { echo "${EPOCHREALTIME/./}"; }

# make_db NAME DAYS: generate, print what bench-mkdb says
make_db() {
	echo "== $1: $2 days at 1 Hz, 8 cards: $MKDB $W/$1.db $2"
	"$MKDB" "$W/$1.db" "$2" | tee "$W/$1.info" | sed 's/^/   /'
	awk '$1 == "seconds" && $2 > 600 {
		print "   generation took more than 10 minutes" }' "$W/$1.info"
}

# span NAME: "a b n", the first and last stamps the export selects, and the count
span() {
	local db=$W/$1.db lo hi
	read -r lo hi < <(sqlite3 -separator ' ' "$db" \
	    "SELECT begin_ns, end_ns FROM windows WHERE tag = '$TAG'")
	sqlite3 -separator ' ' "$db" "SELECT min(ts_ns), max(ts_ns), count(*)
	    FROM samples WHERE ts_ns > $lo AND ts_ns < $hi + 60000000000
	    AND ts_ns - interval_ms * 1000000 < $hi"
}

# run NAME KIND: the command of KIND on database NAME, output discarded
run() {
	local db=$W/$1.db
	case $2 in
	sqlite3)
		sqlite3 -csv "$db" "SELECT * FROM samples WHERE ts_ns BETWEEN ${A[$1]} AND ${Z[$1]}"
		;;
	csv-file)
		"$SPY" export --db "$db" --window "$TAG" --format csv --output "$W/out.csv"
		;;
	*)
		"$SPY" export --db "$db" --window "$TAG" --format "$2"
		;;
	esac
}

make_db small "$days"
make_db large "$((days * factor))"

kinds=(sqlite3 csv jsonl aiusmi "csv-file")
declare -A A Z N
for db in small large; do
	read -r a z n < <(span "$db")
	A[$db]=$a Z[$db]=$z N[$db]=$n
	echo "== $db: window $TAG selects $n rows, ts_ns $a .. $z"
	sqlite3 "$W/$db.db" "EXPLAIN QUERY PLAN SELECT * FROM samples
	    WHERE ts_ns > 1 AND ts_ns < 3 AND ts_ns - interval_ms * 1000000 < 2
	    ORDER BY ts_ns, device" | sed 's/^/   export plan: /'
	for k in "${kinds[@]}"; do
		case $k in
		sqlite3|jsonl) want=$n ;;
		*) want=$((n + 1)) ;;	# a header
		esac
		if [ "$k" = "csv-file" ]; then
			run "$db" "$k"
			got=$(wc -l <"$W/out.csv")
		else
			got=$(run "$db" "$k" 2>/dev/null | wc -l)
		fi
		[ "$got" -eq "$want" ] || { echo "bench: $k on $db wrote $got lines, not $want" >&2; exit 1; }
	done
done
echo "== every command writes the rows of the window; timing $runs runs after 1 warm-up"

for round in $(seq 0 "$runs"); do
	for db in small large; do
		for k in "${kinds[@]}"; do
			t0=$(usec)
			run "$db" "$k" >/dev/null 2>&1
			t1=$(usec)
			[ "$round" -eq 0 ] || echo "$(((t1 - t0)))" >>"$W/t.$db.$k"
		done
	done
done

median_ms() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'
}
all_ms() {
	awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1000 }' "$1"
}

printf '\nmedians of %d runs, ms (all runs in brackets)\n' "$runs"
declare -A M
for db in small large; do
	for k in "${kinds[@]}"; do
		f=$W/t.$db.$k
		M[$db.$k]=$(median_ms "$f")
		printf '%-5s %-8s %8s ms   [%s]\n' "$db" "$k" "${M[$db.$k]}" "$(all_ms "$f")"
	done
done
printf '\n%-8s %10s %10s %12s %12s %12s\n' format "small ms" "large ms" "small/sqlite" "large/sqlite" "large/small"
for k in "${kinds[@]}"; do
	awk -v k="$k" -v s="${M[small.$k]}" -v l="${M[large.$k]}" \
	    -v qs="${M[small.sqlite3]}" -v ql="${M[large.sqlite3]}" 'BEGIN {
		printf "%-8s %10.1f %10.1f %12.2f %12.2f %12.2f\n", k, s, l, s / qs, l / ql, l / s }'
done
echo "targets: export <= 2 x sqlite3 and <= 100 ms; large <= 1.2 x small"
ls -l "$W"/*.db | awk '{ printf "%s %.2f GiB\n", $NF, $5 / 2^30 }'
