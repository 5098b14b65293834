#!/bin/bash
# Throughput and peak RSS of "spyremon export --trace F --merge OUT" on a
# large trace, in one run, against the span-only export of the same trace
# (which reads it once, as the merge's first pass does), yajl's
# json_verify (the parser's own ceiling) and Python's json.load; then the
# merge with gzip in, out, and both.
#
#   make B=build all build/tests/mksamples
#   bench/merge.sh [MEGABYTES]                      default 560
#
# Environment: B (build directory, default build); RUNS (timed runs per
# command, default 3, at least 3); BENCH_DIR (default $TMPDIR or /tmp);
# SRC (the real trace to replicate); BASE_B (another build directory, a
# baseline: its merge and span-only export are timed in the same run).
#
# bench/mktrace.py replicates SRC's events, shifted, until the trace holds
# MEGABYTES * 10^6 bytes; gzip -6 compresses a copy.  tests/mksamples
# writes a database of 8 cards sampled every 100 ms, with every metric of
# the catalog, over the trace's span and 1 s beyond on each side.  Each
# command runs under hyperfine (--runs RUNS, no warm-up: the files are
# read once first, so the page cache is warm; the outputs are removed
# before each run) and once more under /usr/bin/time -v for its peak RSS.
# Before timing, the merged outputs are checked: valid JSON (json_verify),
# the input's bytes after the splice point unchanged (cmp), gzip intact.
# Everything made is removed at the end.
set -euo pipefail

B=${B:-build}
MB=${1:-560}
RUNS=${RUNS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SPY=$ROOT/$B/spyremon
MKSAMPLES=$ROOT/$B/tests/mksamples
SRC=${SRC:-$ROOT/tests/data/traces/kineto-absolute-float-ns-unit.json.gz}
DIR=${BENCH_DIR:-${TMPDIR:-/tmp}}

[ "$RUNS" -ge 3 ] || { echo "bench: RUNS must be at least 3" >&2; exit 1; }
for tool in hyperfine json_verify gzip python3 cmp; do
	command -v "$tool" >/dev/null ||
		{ echo "bench: needs $tool (packages: hyperfine yajl-tools" \
		    "gzip python3 diffutils)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (/usr/bin/time)" >&2; exit 1; }
[ -x "$SPY" ] && [ -x "$MKSAMPLES" ] ||
	{ echo "bench: first: make B=$B all $B/tests/mksamples" >&2; exit 1; }
[ -f "$SRC" ] || { echo "bench: no source trace $SRC" >&2; exit 1; }

W=$(mktemp -d "$DIR/spyremon-bench-merge.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
F=$W/big.json

echo "making a ${MB} MB trace from $(basename "$SRC") in $W"
echo "  $(python3 "$ROOT/bench/mktrace.py" "$SRC" "$F" "$MB")"
gzip -c -6 "$F" >"$F.gz"
BYTES=$(stat -c %s "$F")
echo "  $BYTES bytes, $(stat -c %s "$F.gz") gzip-compressed"

"$SPY" trace info --json "$F" >"$W/info.json"
python3 - "$W/info.json" >"$W/lines" <<'EOF'
import json, sys
info = json.load(open(sys.argv[1]))
keys = ("hostcpu hostmem pwr gtemp busy rdmem wrmem rxpci txpci rdrdma wrrdma "
        "n_rdmem n_wrmem n_rxpci n_txpci rsvmem actmem peakmem pt_act").split()
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
EOF
"$MKSAMPLES" "$W/db" <"$W/lines"
echo "  database: $(grep -vc '^map' "$W/lines") samples of 8 cards," \
    "$(stat -c %s "$W/db") bytes"

# The merged output must be valid JSON and the input with one block
# inserted: from the first byte where they differ, the input's remaining
# bytes end the output.
verify() {
	local out=$1 plain=$W/verify.json at
	if [ "${out%.gz}" != "$out" ]; then
		gzip -t "$out"
		gzip -dc "$out" >"$plain"
	else
		plain=$out
	fi
	json_verify -q <"$plain"
	at=$(cmp "$F" "$plain" | sed -n 's/.* byte \([0-9]*\),.*/\1/p' || true)
	[ -n "$at" ] || { echo "bench: $out: nothing inserted" >&2; exit 1; }
	at=$((BYTES - at + 1))
	cmp <(tail -c "$at" "$plain") <(tail -c "$at" "$F")
	echo "  $(basename "$out"): valid, original bytes unchanged," \
	    "$(($(stat -c %s "$plain") - BYTES)) bytes added"
	rm -f "$W/verify.json"
}

DB="--db $W/db"
"$SPY" export $DB --trace "$F" --merge "$W/out.json"
verify "$W/out.json"
"$SPY" export $DB --trace "$F.gz" --merge "$W/out.json.gz"
verify "$W/out.json.gz"
cat "$F" "$F.gz" >/dev/null

# The commands timed, in this order.  Before each run the outputs are
# removed, except keep.json: merge_replace writes over it, as a merge
# over an earlier output does (see bench/README.md for why that differs).
cp "$W/out.json" "$W/keep.json"
NAMES=(merge span_only json_verify json_load merge_gz_in merge_gz_out merge_gz_both
    merge_replace)
CMDS=(
	"$SPY export $DB --trace $F --merge $W/out.json"
	"$SPY export $DB --trace $F --format csv --output /dev/null"
	"json_verify -q < $F"
	"python3 -c 'import json; json.load(open(\"$F\"))'"
	"$SPY export $DB --trace $F.gz --merge $W/out.json"
	"$SPY export $DB --trace $F --merge $W/out.json.gz"
	"$SPY export $DB --trace $F.gz --merge $W/out.json.gz"
	"$SPY export $DB --trace $F --merge $W/keep.json"
)
if [ -n "${BASE_B:-}" ]; then
	BSPY=$ROOT/$BASE_B/spyremon
	NAMES+=(base_merge base_span_only)
	CMDS+=("$BSPY export $DB --trace $F --merge $W/out.json"
	    "$BSPY export $DB --trace $F --format csv --output /dev/null")
fi

echo
echo "hyperfine, $RUNS runs each; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
args=()
for i in "${!NAMES[@]}"; do
	args+=(-n "${NAMES[$i]}" "${CMDS[$i]}")
done
hyperfine --runs "$RUNS" --export-json "$W/times.json" --style basic \
    --prepare "rm -f $W/out.json $W/out.json.gz" "${args[@]}" >"$W/hyperfine.log"

for i in "${!NAMES[@]}"; do
	rm -f "$W/out.json" "$W/out.json.gz"
	/usr/bin/time -v bash -c "${CMDS[$i]}" 2>"$W/rss.$i" >/dev/null
	awk -F': ' '/Maximum resident set size/ { print $2 }' "$W/rss.$i" >"$W/kib.$i"
done

python3 - "$W/times.json" "$BYTES" "$W" "${NAMES[@]}" <<'EOF'
import json, sys
times, size, w, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
res = {r["command"]: r for r in json.load(open(times))["results"]}
med = {n: res[n]["median"] for n in names}
kib = {n: int(open("%s/kib.%d" % (w, i)).read()) for i, n in enumerate(names)}
print("%-14s %9s %9s %9s %10s %12s"
      % ("", "median", "min", "max", "MB/s", "peak RSS"))
for n in names:
    r = res[n]
    print("%-14s %8.2fs %8.2fs %8.2fs %10.1f %8.1f MiB"
          % (n, r["median"], r["min"], r["max"], size / 1e6 / r["median"],
             kib[n] / 1024))
print()
for a, b, note in (
        ("span_only", "json_verify", "target: at most 2x"),
        ("json_load", "merge", "target: at least 5x"),
        ("merge", "span_only", "the second pass's cost"),
        ("merge_gz_in", "merge", ""),
        ("merge_gz_out", "merge", ""),
        ("merge_gz_both", "merge", ""),
        ("merge_replace", "merge", "writing over an earlier output"),
        ("merge", "base_merge", "against the baseline build"),
        ("span_only", "base_span_only", "against the baseline build")):
    if a not in med or b not in med:
        continue
    print("%-24s %6.2fx  %s" % ("%s / %s" % (a, b), med[a] / med[b],
                                "(%s)" % note if note else ""))
worst = max(kib[n] for n in names if n.startswith(("merge", "span")))
print("peak RSS of spyremon: at most %.1f MiB (target: at most 32 MiB)"
      % (worst / 1024))
EOF
