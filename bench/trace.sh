#!/bin/sh
# Throughput and peak RSS of "spyremon trace info" on a large trace, in one
# run, against yajl's json_verify (the parser's own ceiling), Python's
# json.load, and for the gzip file zcat and zlib's bare inflate (driven
# from Python in 1 MiB blocks: the ceiling of any zlib reader).
#
#   sh bench/trace.sh [BUILD_DIR [MEGABYTES]]     defaults: build 560
#
# The trace is made by bench/mktrace.py from a real one, under $TMPDIR
# (or /tmp), and removed at the end.  Each command runs 3 times, warm
# page cache; the medians are printed.  Needs json_verify (yajl-tools), GNU
# time and gzip: installed with apt-get when run as root, else named.
set -eu

B=${1:-build}
MB=${2:-560}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPY=$ROOT/$B/spyremon
SRC=${SRC:-$ROOT/tests/data/traces/kineto-absolute-float-ns-unit.json.gz}

missing=""
command -v json_verify >/dev/null || missing="$missing yajl-tools"
[ -x /usr/bin/time ] || missing="$missing time"
command -v gzip >/dev/null || missing="$missing gzip"
command -v python3 >/dev/null || missing="$missing python3"
if [ -n "$missing" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		echo "bench: installing:$missing" >&2
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2
	else
		echo "bench: missing packages; as root: apt-get install$missing" >&2
		exit 1
	fi
fi
[ -x "$SPY" ] || { echo "bench: build $SPY first (make B=$B)" >&2; exit 1; }
[ -f "$SRC" ] || { echo "bench: no source trace $SRC" >&2; exit 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
F=$W/big.json

echo "making a ${MB} MB trace from $(basename "$SRC") in $W"
made=$(python3 "$ROOT/bench/mktrace.py" "$SRC" "$F" "$MB")
echo "  $made"
gzip -c -6 "$F" >"$F.gz"
BYTES=$(stat -c %s "$F")
echo "  $BYTES bytes, $(stat -c %s "$F.gz") gzip-compressed"
cat "$F" "$F.gz" >/dev/null

# The reader must have read it right: every copy's timed events.
copies=$(echo "$made" | awk '{ print $2 }')
timed=$(echo "$made" | awk '{ print $6 }')
events=$("$SPY" trace info --json "$F" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])')
if [ "$events" -ne $((copies * timed)) ]; then
	echo "bench: trace info counted $events events, want $((copies * timed))" >&2
	exit 1
fi

median() {
	sort -n | sed -n 2p
}

# measure KEY STDIN COMMAND...: 3 runs; sets KEY_s (elapsed), KEY_cpu
# (user + system) and KEY_kib (peak RSS), medians each, and prints a row.
measure() {
	key=$1 in=$2
	shift 2
	: >"$W/runs"
	for _ in 1 2 3; do
		/usr/bin/time -f "%e %U %S %M" -o "$W/t" "$@" <"$in" >/dev/null
		cat "$W/t" >>"$W/runs"
	done
	secs=$(cut -d' ' -f1 "$W/runs" | median)
	cpu=$(awk '{ print $2 + $3 }' "$W/runs" | median)
	kib=$(cut -d' ' -f4 "$W/runs" | median)
	eval "${key}_s=$secs ${key}_cpu=$cpu ${key}_kib=$kib"
	awk -v k="$key" -v s="$secs" -v c="$cpu" -v m="$kib" -v b="$BYTES" 'BEGIN {
		printf "%-12s %8.2f s %9.1f MB/s %8.2f s %9.1f MiB\n", k, s,
		    b / 1e6 / s, c, m / 1024 }'
}

echo
echo "medians of 3; MB/s of uncompressed bytes; cpu is user + system"
printf "%-12s %10s %14s %10s %13s\n" "" "elapsed" "throughput" "cpu" "peak RSS"
measure spyremon /dev/null "$SPY" trace info "$F"
measure json_verify "$F" json_verify -q
measure json_load /dev/null python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$F"
measure spyremon_gz /dev/null "$SPY" trace info "$F.gz"
measure zcat /dev/null zcat "$F.gz"
measure zlib /dev/null python3 -c 'import sys, zlib
d = zlib.decompressobj(31)
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        while block:
            d.decompress(block, 1 << 20)
            block = d.unconsumed_tail' "$F.gz"

# shellcheck disable=SC2154
awk -v s="$spyremon_s" -v v="$json_verify_s" -v p="$json_load_s" \
    -v g="$spyremon_gz_s" -v z="$zcat_s" -v zl="$zlib_s" -v sc="$spyremon_cpu" \
    -v vc="$json_verify_cpu" -v pc="$json_load_cpu" -v m="$spyremon_kib" \
    -v mg="$spyremon_gz_kib" 'BEGIN {
	printf "\n%-26s %8s %8s\n", "ratio", "elapsed", "cpu"
	printf "%-26s %7.2fx %7.2fx  (target: at most 2x)\n",
	    "spyremon / json_verify", s / v, sc / vc
	printf "%-26s %7.1fx %7.1fx  (target: at least 10x)\n",
	    "json.load / spyremon", p / s, pc / sc
	printf "%-26s %7.1fx %7.1fx\n", "json.load / json_verify", p / v, pc / vc
	printf "%-26s %7.2fx\n", "spyremon_gz / zcat", g / z
	printf "%-26s %7.2fx\n", "spyremon_gz / zlib", g / zl
	printf "peak RSS: %.1f MiB plain, %.1f MiB gzip (target: at most 32 MiB)\n",
	    m / 1024, mg / 1024
}'
