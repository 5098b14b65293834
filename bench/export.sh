#!/bin/bash
# Export time of a one-hour window from a database of 30 days at 1 Hz from
# 8 cards, against a bare sqlite3 query selecting the same rows, and the
# same from a database ten times larger.
#
#   make B=build bench && bench/export.sh [DAYS [FACTOR]]   (defaults: 30 10)
#
# Environment: B (build directory, default build); BENCH_DIR (where the
# databases go, default $TMPDIR or /tmp); RUNS (timed runs, default 5);
# KEEP=1 keeps the databases; REUSE=DIR times the small.db and large.db
# that a KEEP=1 run left in DIR instead of making new ones (DAYS and FACTOR
# are then ignored); SPY=PATH times another spyremon; BASE_SPY=PATH times
# a baseline spyremon (the build before a change) beside it, in the same
# rounds, as the kinds base-csv, base-jsonl and base-aiusmi, and prints
# each run's ratio of the two.
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
# Each writes to stdout, /dev/null, except csv-file.  build/bench-runtime
# (bench/runtime.c) times each: wall clock from fork to exit, and the CPU
# time (user + system) of the process, which a busy machine disturbs less.
# It checks first that every command writes the rows of the window, then
# prints the medians, export / sqlite3, and large / small.  Last, unless
# IR=0 or valgrind is missing, it counts the instructions each command
# executes, once, under valgrind --tool=callgrind: a measure of the work
# done that, unlike times on a shared machine, does not vary from run to
# run, so it shows whether the work grows with the database.
set -euo pipefail
B=${B:-build}
days=${1:-30}
factor=${2:-10}
runs=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/$B
SPY=${SPY:-$BIN/spyremon}
MKDB=$BIN/bench-mkdb
RT=$BIN/bench-runtime
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}
TAG=bench-hour
BYTES_PER_ROW=100	# measured: 92 with the 19 metrics of metric_defs

[ -x "$SPY" ] && [ -x "$MKDB" ] && [ -x "$RT" ] ||
	{ echo "bench: first: make B=$B bench" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench: needs sqlite3" >&2; exit 1; }

if [ -n "${REUSE:-}" ]; then
	W=$REUSE
	echo "databases: reused from $W"
else
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
fi
if [ -n "${REUSE:-}" ]; then
	trap 'rm -f "$W"/out.csv "$W"/t.*' EXIT
elif [ "${KEEP:-}" = 1 ]; then
	trap 'rm -f "$W"/out.csv "$W"/t.*; echo "kept $W"' EXIT
else
	trap 'rm -rf "$W"' EXIT
fi
rm -f "$W"/t.*

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

# cmd NAME KIND: the command line of KIND on database NAME, in CMD
cmd() {
	local db=$W/$1.db
	case $2 in
	sqlite3)
		CMD=(sqlite3 -csv "$db" "SELECT * FROM samples WHERE ts_ns BETWEEN ${A[$1]} AND ${Z[$1]}") ;;
	csv-file)
		CMD=("$SPY" export --db "$db" --window "$TAG" --format csv --output "$W/out.csv") ;;
	base-*)
		CMD=("$BASE_SPY" export --db "$db" --window "$TAG" --format "${2#base-}") ;;
	*)
		CMD=("$SPY" export --db "$db" --window "$TAG" --format "$2") ;;
	esac
}

if [ -z "${REUSE:-}" ]; then
	make_db small "$days"
	make_db large "$((days * factor))"
fi

kinds=(sqlite3 csv jsonl aiusmi csv-file)
[ -z "${BASE_SPY:-}" ] || kinds+=(base-csv base-jsonl base-aiusmi)
declare -A A Z I
for db in small large; do
	read -r a z n < <(span "$db")
	A[$db]=$a Z[$db]=$z
	echo "== $db: $(awk '$1 == "rows" { print $2 }' "$W/$db.info") rows," \
	    "$(du -h "$W/$db.db" | cut -f1); window $TAG selects $n rows, ts_ns $a .. $z"
	sqlite3 "$W/$db.db" "EXPLAIN QUERY PLAN SELECT * FROM samples
	    WHERE ts_ns > 1 AND ts_ns < 3 AND ts_ns - interval_ms * 1000000 < 2
	    ORDER BY ts_ns, device" | sed 's/^/   export plan: /'
	for k in "${kinds[@]}"; do
		case $k in
		sqlite3|jsonl|base-jsonl) want=$n ;;
		*) want=$((n + 1)) ;;	# a header
		esac
		cmd "$db" "$k"
		if [ "$k" = csv-file ]; then
			"${CMD[@]}"
			got=$(wc -l <"$W/out.csv")
		else
			got=$("${CMD[@]}" 2>/dev/null | wc -l)
		fi
		[ "$got" -eq "$want" ] || { echo "bench: $k on $db wrote $got lines, not $want" >&2; exit 1; }
	done
done
echo "== every command writes the rows of the window; $runs timed runs after 1 warm-up"
echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

for round in $(seq 0 "$runs"); do
	for db in small large; do
		for k in "${kinds[@]}"; do
			cmd "$db" "$k"
			read -r wall cpu rc < <("$RT" "${CMD[@]}" 2>&1 >/dev/null)
			[ "$rc" -eq 0 ] || { echo "bench: $k on $db: exit $rc" >&2; exit 1; }
			[ "$round" -eq 0 ] || echo "$wall $cpu" >>"$W/t.$db.$k"
		done
	done
done
echo "   load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

median_ms() {	# median of column $2 of file $1, us -> ms
	awk -v c="$2" '{ print $c }' "$1" | sort -n |
	    awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'
}
all_ms() {
	awk -v c="$2" '{ printf "%s%.0f", (NR > 1 ? " " : ""), $c / 1000 }' "$1"
}

printf '\nmedians of %d runs, ms (every run in brackets)\n' "$runs"
printf '%-5s %-8s %8s %-32s %8s %s\n' db kind wall "" cpu ""
declare -A MW MC
for db in small large; do
	for k in "${kinds[@]}"; do
		f=$W/t.$db.$k
		MW[$db.$k]=$(median_ms "$f" 1)
		MC[$db.$k]=$(median_ms "$f" 2)
		printf '%-5s %-8s %8s %-32s %8s %s\n' "$db" "$k" "${MW[$db.$k]}" \
		    "[$(all_ms "$f" 1)]" "${MC[$db.$k]}" "[$(all_ms "$f" 2)]"
	done
done
printf '\n%-8s %-5s %10s %10s %13s %13s %12s\n' kind time "small ms" "large ms" \
    "small/sqlite3" "large/sqlite3" "large/small"
for k in "${kinds[@]}"; do
	for t in wall cpu; do
		if [ $t = wall ]; then
			s=${MW[small.$k]} l=${MW[large.$k]} qs=${MW[small.sqlite3]} ql=${MW[large.sqlite3]}
		else
			s=${MC[small.$k]} l=${MC[large.$k]} qs=${MC[small.sqlite3]} ql=${MC[large.sqlite3]}
		fi
		awk -v k="$k" -v t="$t" -v s="$s" -v l="$l" -v qs="$qs" -v ql="$ql" 'BEGIN {
			printf "%-8s %-5s %10.1f %10.1f %13.2f %13.2f %12.2f\n",
			    k, t, s, l, s / qs, l / ql, l / s }'
	done
done
echo "targets: export <= 2 x sqlite3 and <= 100 ms; large <= 1.2 x small"

if [ -n "${BASE_SPY:-}" ]; then
	printf '\n%s / %s, run by run in the same rounds (CPU time; wall in brackets)\n' \
	    "$SPY" "$BASE_SPY"
	for db in small large; do
		for k in csv jsonl aiusmi; do
			paste -d ' ' "$W/t.$db.$k" "$W/t.$db.base-$k" |
			    awk '{ printf "%.2f %.2f\n", $2 / $4, $1 / $3 }' >"$W/t.ratio"
			printf '%-5s %-6s median %s [%s]  runs %s  [%s]\n' "$db" "$k" \
			    "$(cut -d' ' -f1 "$W/t.ratio" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
			    "$(cut -d' ' -f2 "$W/t.ratio" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
			    "$(cut -d' ' -f1 "$W/t.ratio" | paste -sd ' ')" \
			    "$(cut -d' ' -f2 "$W/t.ratio" | paste -sd ' ')"
		done
	done
fi

if [ "${IR:-1}" = 0 ] || ! command -v valgrind >/dev/null; then
	exit 0
fi
printf '\ninstructions executed (valgrind --tool=callgrind), millions\n'
printf '%-8s %10s %10s %12s\n' kind small large large/small
ir_kinds=(sqlite3 csv jsonl aiusmi)
[ -z "${BASE_SPY:-}" ] || ir_kinds+=(base-csv base-jsonl base-aiusmi)
for k in "${ir_kinds[@]}"; do
	for db in small large; do
		cmd "$db" "$k"
		I[$db]=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		    "${CMD[@]}" 2>&1 >/dev/null | awk '/Collected/ { print $NF }')
		I[$k.$db]=${I[$db]}
	done
	awk -v k="$k" -v s="${I[small]}" -v l="${I[large]}" 'BEGIN {
		printf "%-8s %10.1f %10.1f %12.3f\n", k, s / 1e6, l / 1e6, l / s }'
done
if [ -n "${BASE_SPY:-}" ]; then
	printf '%-8s %10s %10s   (this spyremon / the baseline)\n' ratio small large
	for k in csv jsonl aiusmi; do
		awk -v k="$k" -v s="${I[$k.small]}" -v l="${I[$k.large]}" \
		    -v bs="${I[base-$k.small]}" -v bl="${I[base-$k.large]}" 'BEGIN {
			printf "%-8s %10.4f %10.4f\n", k, s / bs, l / bl }'
	done
fi
