#!/usr/bin/env bash
# "spyremon export --trace": the samples whose intervals overlap a trace's
# span, for every real trace in tests/data/traces, checked against the
# spans of that directory's README (an independent reader); a trace
# without absolute time fails naming --trace-start and --align-window, and
# works with either; several traces keep their rank and host; a trace
# apart from every sample says how far and which way; corrupt, cut and
# empty traces fail with no output file left behind.
set -euo pipefail

B=${B:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLIENT=$ROOT/$B/spyremon
MKSAMPLES=$ROOT/$B/tests/mksamples
TRACES=$ROOT/tests/data/traces

[ -d "$TRACES" ] || { echo "FAIL: no real traces: $TRACES is missing" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-bytrace.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The README's table: file, first ns, last ns.
REFERENCE="
kineto-absolute-int.json.gz 1682725897226746880 1682725900594090880
kineto-absolute-float-ns-unit.json.gz 1712195495406752768 1712195496004644352
kineto-base-relative-cpu-only.json.gz 1721065959525586016 1721065960832503044
kineto-base-relative-amd.json.gz 1739836029603018756 1739836029613175703
kineto-accelerator-mtia.json.gz 1767891117074372596 1767891117534038956
"
LEGACY_START=1750000000000000000	# --trace-start for the legacy trace
INTERVAL_MS=10

# Samples every 10 ms on 2 cards from 1 s before to 1 s after each span
# (the legacy trace's at LEGACY_START), and a window over the legacy
# trace's first second, in time order.
python3 - "$INTERVAL_MS" "$LEGACY_START" >"$T/samples.txt" <<PY
import sys
step = int(sys.argv[1]) * 1000000
legacy = int(sys.argv[2])
spans = [tuple(map(int, l.split()[1:])) for l in """$REFERENCE""".split("\n") if l.strip()]
spans.append((legacy, legacy + 2000000000))
print("map 0 0000:13:00.0")
print("map 1 0000:14:00.0")
for first, last in sorted(spans):
    t = (first - 1000000000) // step * step
    n = 0
    while t <= last + 1000000000:
        for dev in (0, 1):
            print(t, dev, sys.argv[1], "pwr=%d.%d" % (30 + n % 40, n % 10), "busy=%d" % (n % 101))
        t += step
        n += 1
print("window legacy-run", legacy + 500000000, legacy + 3000000000)
PY
"$MKSAMPLES" "$T/db" <"$T/samples.txt" || fail "mksamples"
spyremon() { "$CLIENT" --db "$T/db" "$@"; }

# check_rows CSV FIRST LAST: the rows are exactly the samples whose interval
# (ts - 10 ms, ts] overlaps [FIRST, LAST], for both cards, and nothing else.
check_rows() {
	python3 - "$@" "$T/samples.txt" <<'PY'
import csv, sys
path, first, last, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
want = set()
for line in open(samples):
    f = line.split()
    if len(f) < 3 or not f[0].isdigit():
        continue
    ts, dev, iv = int(f[0]), int(f[1]), int(f[2]) * 1000000
    if ts > first and ts - iv < last:
        want.add((ts, dev))
got = [(int(r["epoch_ns"]), int(r["device"])) for r in csv.DictReader(open(path))]
if len(got) != len(set(got)):
    sys.exit("%s: rows repeat" % path)
if set(got) != want:
    sys.exit("%s: %d rows, want %d; extra %s; missing %s" % (path, len(got), len(want),
        sorted(set(got) - want)[:3], sorted(want - set(got))[:3]))
print("%s: %d rows ok" % (path.rsplit("/", 1)[-1], len(got)))
PY
}

echo "$REFERENCE" | while read -r f first last; do
	[ -n "$f" ] || continue
	spyremon export --trace "$TRACES/$f" --output "$T/$f.csv" ||
		fail "$f: export --trace failed"
	check_rows "$T/$f.csv" "$first" "$last" || fail "$f: wrong rows"
done

# --pad widens the span on both sides.
read -r f first last <<<"$(echo "$REFERENCE" | grep amd)"
spyremon export --trace "$TRACES/$f" --pad 35ms --output "$T/pad.csv" || fail "--pad"
check_rows "$T/pad.csv" $((first - 35000000)) $((last + 35000000)) || fail "--pad: wrong rows"

# The legacy trace has no absolute time: a clear error naming both fixes.
L=$TRACES/legacy-autograd-no-epoch.json.gz
if spyremon export --trace "$L" --output "$T/legacy.csv" 2>"$T/err"; then
	fail "legacy trace exported without a time"
fi
grep -q 'no absolute time' "$T/err" && grep -q -- '--trace-start' "$T/err" &&
	grep -q -- '--align-window' "$T/err" || fail "legacy error: $(cat "$T/err")"
[ ! -e "$T/legacy.csv" ] || fail "legacy error left an output file"
info=$(spyremon trace info "$L" --json)
read -r own_first own_last <<<"$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(d["first_ts_ns"], d["last_ts_ns"])' "$info")"
spyremon export --trace "$L" --trace-start "$LEGACY_START" --output "$T/legacy.csv" ||
	fail "legacy trace with --trace-start"
check_rows "$T/legacy.csv" $((LEGACY_START + own_first)) $((LEGACY_START + own_last)) ||
	fail "legacy trace with --trace-start: wrong rows"
spyremon export --trace "$L" --align-window legacy-run --output "$T/aligned.csv" ||
	fail "legacy trace with --align-window"
begin=$((LEGACY_START + 500000000))
check_rows "$T/aligned.csv" "$begin" $((begin + own_last - own_first)) ||
	fail "legacy trace with --align-window: wrong rows"
if spyremon export --trace "$L" --align-window no-such-tag 2>"$T/err"; then
	fail "--align-window of a missing window worked"
fi
grep -q 'no such window' "$T/err" || fail "missing window: $(cat "$T/err")"

# Several traces: each row says which trace (rank, host) it is for.
spyremon export --trace "$TRACES/kineto-base-relative-cpu-only.json.gz" \
	--trace "$TRACES/kineto-accelerator-mtia.json.gz" --output "$T/two.csv" ||
	fail "two traces"
python3 - "$T/two.csv" <<'PY' || fail "two traces: rank and host"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ranks = {(r["trace_rank"], r["trace_host"]) for r in rows}
want = {("34", ""), ("", "twshared38393.01.cco6.facebook.com")}
if ranks != want:
    sys.exit("rank/host %r, want %r" % (ranks, want))
PY
spyremon export --trace "$TRACES/kineto-base-relative-cpu-only.json.gz" \
	--trace "$TRACES/kineto-accelerator-mtia.json.gz" --format jsonl |
	python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert {r["rank"] for r in rows} == {34, None}, "jsonl ranks"
' || fail "two traces: jsonl rank"

# A trace apart from every sample: how far, and which way.
cat >"$T/late.json" <<'JSON'
{"baseTimeNanoseconds": 1800000000000000000, "traceEvents": [
 {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 10, "dur": 5}]}
JSON
if spyremon export --trace "$T/late.json" 2>"$T/err"; then fail "late trace exported"; fi
grep -q 'trace starts .* after the newest sample' "$T/err" || fail "late: $(cat "$T/err")"
cat >"$T/early.json" <<'JSON'
{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1600000000000000, "dur": 5}]}
JSON
if spyremon export --trace "$T/early.json" 2>"$T/err"; then fail "early trace exported"; fi
grep -q 'trace ends .* before the oldest sample' "$T/err" || fail "early: $(cat "$T/err")"
cat >"$T/gap.json" <<'JSON'
{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1730000000000000, "dur": 5}]}
JSON
if spyremon export --trace "$T/gap.json" 2>"$T/err"; then fail "trace in a gap exported"; fi
grep -q 'no samples during the trace' "$T/err" || fail "gap: $(cat "$T/err")"

# --window chooses the samples; a trace apart from it is a warning.
spyremon export --window legacy-run --trace "$TRACES/kineto-base-relative-amd.json.gz" \
	--output "$T/win.csv" 2>"$T/err" || fail "--window with --trace"
grep -q 'do not overlap' "$T/err" || fail "no warning for a trace apart from the window"
[ "$(wc -l <"$T/win.csv")" -gt 100 ] || fail "--window with --trace: too few rows"

# Events that all share one timestamp: the samples covering that instant.
cat >"$T/instant.json" <<'JSON'
{"baseTimeNanoseconds": 1739836029000000000, "traceEvents": [
 {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 605000.5, "dur": 0},
 {"ph": "i", "name": "b", "pid": 1, "tid": 1, "ts": 605000.5, "s": "t"}]}
JSON
spyremon export --trace "$T/instant.json" --output "$T/instant.csv" || fail "one-instant trace"
check_rows "$T/instant.csv" 1739836029605000500 1739836029605000500 || fail "one-instant trace rows"

# Cut, corrupt and empty traces: an error with the byte offset, no output.
head -c 60000 "$TRACES/kineto-accelerator-mtia.json.gz" >"$T/cut.json.gz"
{ zcat "$TRACES/kineto-base-relative-amd.json.gz" || true; } | head -c 3000 >"$T/cut.json"
printf '{"traceEvents": [{"ph": "X", "ts": 1, ]}' >"$T/corrupt.json"
: >"$T/empty.json"
for f in cut.json.gz cut.json corrupt.json empty.json; do
	if spyremon export --trace "$T/$f" --output "$T/$f.out" 2>"$T/err"; then
		fail "$f: exported"
	fi
	grep -q "$f" "$T/err" || fail "$f: the error does not name the file: $(cat "$T/err")"
	case $f in
	empty.json) grep -q -i 'empty' "$T/err" || fail "$f: $(cat "$T/err")" ;;
	*) grep -q -E '(byte|offset) [0-9]' "$T/err" || fail "$f: no byte offset: $(cat "$T/err")" ;;
	esac
	[ ! -e "$T/$f.out" ] || fail "$f: an output file was left"
	if ls "$T" | grep -q "$f.out"; then fail "$f: a temporary file was left"; fi
done

# Options that do not go together.
for args in "--trace x --from 1h" "--trace-start 0 --window w" "--trace a --merge o --merge-dir d" \
    "--trace a --trace-start 0 --align-window w" "--trace a --merge o --format jsonl" \
    "--host-map a=b --window w" "--trace a --host-map a" "--trace a --host-map =b"; do
	# shellcheck disable=SC2086
	if spyremon export $args 2>/dev/null; then fail "export $args worked"; fi
	# shellcheck disable=SC2086
	spyremon export $args 2>/dev/null || [ $? -eq 2 ] || fail "export $args: not a usage error"
done
echo "ok"
