#!/bin/sh
# The outputs that must be the same bytes on every architecture, from
# fixed inputs: a database that tests/tools/mksamples writes from the
# samples generated below (integer arithmetic only), the real profiler
# trace tests/data/traces/kineto-absolute-int.json.gz, and the reference
# metric files of tests/data/metricfiles.  mk/arch.sh runs it natively and
# on another architecture and compares every file with cmp.
#
#   sh tests/arch/outputs.sh BUILD-DIR OUT-DIR
#
# OUT-DIR gets: export.csv, export.jsonl, export-aiusmi.csv (the window);
# merged.json (the trace with counter tracks); steps.csv, steps.json;
# summary.json; import.csv (an aiu-smi log imported with --tz, exported);
# mf-little.txt, mf-big.txt (each reference file decoded in its order),
# mf-native.txt (the host's own order's file decoded as native, without
# the sequence numbers, in which the two reference files differ).
set -eu
B=$1
out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/.work
mkdir "$work"
# from the top of the tree, so that the trace's path, which steps --json
# and the merged trace name, is the same wherever the tree is
cd "$top"
spy=$top/$B/spyremon
data=tests/data
trace=$data/traces/kineto-absolute-int.json.gz

# 2 cards, 100 ms rows from 1682725890 s for 15 s; the trace runs from
# 1682725897.23 s to 1682725900.59 s, inside the window 896 s to 902 s.
awk 'BEGIN {
	print "map 0 0000:13:00.0"
	print "map 1 0000:14:00.0"
	for (i = 1; i <= 150; i++) {
		sec = 1682725890 + int(i / 10)
		ns = (i % 10) * 100000000
		for (c = 0; c < 2; c++) {
			p = 300 + (i * 37 + c * 111) % 400	# pwr, tenths of W
			g = 400 + (i * 3 + c * 7) % 90	# gtemp, tenths of C
			b = (i * 13 + c * 29) % 101	# busy, %
			printf "%d%09d %d 100 pwr=%d.%d gtemp=%d.%d busy=%d rdmem=%d wrmem=%d actmem=%d\n",
			    sec, ns, c, p / 10, p % 10, g / 10, g % 10, b,
			    (i * 1021) % 65536, (i * 517 + c) % 32768, 1000 + i * 3
		}
	}
	print "window fixed 1682725896000000000 1682725902000000000"
}' >"$work/samples.txt"
"$top/$B/tests/mksamples" "$work/db" <"$work/samples.txt"
db="--db $work/db"

$spy $db export --window fixed --format csv --output "$out/export.csv"
$spy $db export --window fixed --format jsonl --output "$out/export.jsonl"
$spy $db export --window fixed --format aiusmi --output "$out/export-aiusmi.csv"
$spy $db export --trace "$trace" --merge "$out/merged.json"
$spy $db export --trace "$trace" --steps --csv --output "$out/steps.csv"
$spy $db export --trace "$trace" --steps --json --output "$out/steps.json"
# computed_ns is when mksamples summed the window up: the one field that
# depends on the run, not on the inputs
$spy $db summary --window fixed --json |
	sed 's/"computed_ns": [0-9]*/"computed_ns": 0/' >"$out/summary.json"

# an aiu-smi log of whole-second local times across the start of daylight
# saving time in Europe/Berlin (01:59:59 CET, then 03:00:00 CEST)
awk 'BEGIN {
	print "ID,Date (YYYYMMDD),Time (HH:MM:SS),pwr W,gtemp C,busy %"
	for (i = 0; i < 20; i++)
		for (c = 0; c < 2; c++)
			printf "%d,20230326,%s,%d.%d,%d.%d,%d\n", c,
			    i < 10 ? sprintf("01:59:%02d", 50 + i) : sprintf("03:00:%02d", i - 10),
			    40 + i % 7, c, 45 + c, i % 10, (i * 7) % 101
}' >"$work/aiusmi.csv"
$spy --db "$work/import.db" import --tz Europe/Berlin "$work/aiusmi.csv" >/dev/null
$spy --db "$work/import.db" export --from 2023-03-25T00:00:00Z --to 2023-03-27T00:00:00Z \
	--format csv --output "$out/import.csv"

mf=$top/$B/tests/mfdump
"$mf" little "$data/metricfiles/reference-le.bin" >"$out/mf-little.txt"
"$mf" big "$data/metricfiles/reference-be.bin" >"$out/mf-big.txt"
if [ "$(printf '\001\000' | od -An -tu2 | tr -d ' ')" = 1 ]; then
	own=$data/metricfiles/reference-le.bin
else
	own=$data/metricfiles/reference-be.bin
fi
"$mf" native "$own" | sed 's/ seq [0-9]*//' >"$out/mf-native.txt"
rm -rf "$work"
