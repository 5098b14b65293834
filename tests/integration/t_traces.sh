#!/usr/bin/env bash
# "spyremon trace info" on every real trace in tests/data/traces agrees with
# the spans, event counts and step counts of that directory's README,
# which come from an independent reader; the legacy trace says it has no
# absolute time and names the fixes.  Cut and empty traces fail with a
# byte offset.
set -euo pipefail

B=${B:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLIENT=$ROOT/$B/spyremon
TRACES=$ROOT/tests/data/traces

[ -d "$TRACES" ] || { echo "FAIL: no real traces: $TRACES is missing" >&2; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is missing (sh mk/deps.sh installs it)" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-traces.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The README's table: file, first ns, last ns, events, step events.
REFERENCE="
kineto-base-relative-amd.json.gz 1739836029603018756 1739836029613175703 160 3
kineto-base-relative-cpu-only.json.gz 1721065959525586016 1721065960832503044 18 1
kineto-accelerator-mtia.json.gz 1767891117074372596 1767891117534038956 15982 0
kineto-absolute-int.json.gz 1682725897226746880 1682725900594090880 4811 2
kineto-absolute-float-ns-unit.json.gz 1712195495406752768 1712195496004644352 68656 5
"

# check_json FILE FIRST LAST EVENTS STEPS: the JSON on stdin agrees.
check_json() {
	python3 -c '
import json, sys
name, first, last, events, steps = sys.argv[1], *map(int, sys.argv[2:])
d = json.load(sys.stdin)
bad = []
for key, want in (("start_ns", first), ("end_ns", last)):
    got = d.get(key)
    if not isinstance(got, int) or abs(got - want) > 1000:
        bad.append("%s %r, want %d within 1 us" % (key, got, want))
if d.get("events") != events:
    bad.append("events %r, want %d" % (d.get("events"), events))
if len(d.get("steps", [])) != steps:
    bad.append("%d steps, want %d" % (len(d.get("steps", [])), steps))
for s in d.get("steps", []):
    if not (first - 1000 <= s["start_ns"] <= last + 1000) or s["dur_ns"] < 0:
        bad.append("step %r outside the span" % s)
if bad:
    sys.exit(name + ": " + "; ".join(bad))
print(name + ": ok")
' "$@"
}

checked=0
while read -r file first last events steps; do
	[ -n "$file" ] || continue
	[ -f "$TRACES/$file" ] || fail "$file is missing from $TRACES"
	"$CLIENT" trace info --json "$TRACES/$file" >"$T/out.json" ||
		fail "$file: trace info exited $?"
	check_json "$file" "$first" "$last" "$events" "$steps" <"$T/out.json"
	# the same bytes uncompressed, under a .gz name: content decides
	gzip -dc "$TRACES/$file" >"$T/plain.json.gz"
	"$CLIENT" trace info --json "$T/plain.json.gz" >"$T/plain.json"
	check_json "$file (uncompressed)" "$first" "$last" "$events" "$steps" \
	    <"$T/plain.json"
	grep -q '"compressed": false' "$T/plain.json" ||
		fail "$file uncompressed: not reported as plain"
	checked=$((checked + 1))
done <<<"$REFERENCE"
[ "$checked" -eq 5 ] || fail "checked $checked traces, want 5"

# The legacy trace: no absolute time, an explanation naming both fixes,
# and still exit 0, since its events and steps are worth showing.
legacy=$TRACES/legacy-autograd-no-epoch.json.gz
"$CLIENT" trace info --json "$legacy" >"$T/legacy.json" ||
	fail "legacy: trace info exited $?"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["start_ns"] is None and d["end_ns"] is None, d
why = d.get("explanation", "")
assert "--trace-start" in why and "--align-window" in why, why
assert d["dialect"] == "legacy-array", d["dialect"]
names = [s["name"] for s in d["steps"]]
assert any(n.startswith("iteration_") for n in names), names
' "$T/legacy.json" || fail "legacy: $(cat "$T/legacy.json")"
"$CLIENT" trace info "$legacy" >"$T/legacy.txt"
grep -q -- "--trace-start" "$T/legacy.txt" || fail "legacy text: no --trace-start"
grep -q -- "--align-window" "$T/legacy.txt" || fail "legacy text: no --align-window"
echo "legacy: ok"

# A different step pattern.
"$CLIENT" trace info --json --step-pattern 'iteration_[0-9]+' "$legacy" |
	python3 -c '
import json, sys
d = json.load(sys.stdin)
names = [s["name"] for s in d["steps"]]
assert names and all(n.startswith("iteration_") for n in names), names
' || fail "--step-pattern"
rc=0
"$CLIENT" trace info --step-pattern '(' "$legacy" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] || fail "a bad --step-pattern exited $rc, want 2"

# Cut traces: exit 1 with an offset in the right terms.
src=$TRACES/kineto-absolute-int.json.gz
gzip -dc "$src" >"$T/full.json"
head -c 100000 "$T/full.json" >"$T/cut.json"
rc=0
"$CLIENT" trace info "$T/cut.json" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || fail "cut plain trace exited $rc, want 1"
grep -q "at byte 100000" "$T/err" || fail "cut plain trace: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "cut plain trace wrote to stdout"

size=$(stat -c %s "$src")
head -c $((size / 2)) "$src" >"$T/cut.json.gz"
rc=0
"$CLIENT" trace info "$T/cut.json.gz" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || fail "cut gzip trace exited $rc, want 1"
grep -q "offset [0-9]* of the uncompressed stream" "$T/err" ||
	fail "cut gzip trace: $(cat "$T/err")"

: >"$T/empty.json"
rc=0
"$CLIENT" trace info "$T/empty.json" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || fail "empty trace exited $rc, want 1"
grep -q "empty" "$T/err" || fail "empty trace: $(cat "$T/err")"
echo "errors: ok"
