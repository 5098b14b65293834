#!/usr/bin/env bash
# "spyremon export --trace IN --merge OUT --breakdown-track" on real
# traces: one with a base, three-decimal µs and steps that overlap
# (kineto-base-relative-amd), one of whole µs (kineto-absolute-int), and
# the Spyre device trace without steps (flex-allreduce-tp4.json, its card
# spans then), each against a database of two cards (merge_check.py
# samples).  From OUT alone, bdtrack_check.py checks that the track's
# slices of each card and step tile the step (no overlap, no gap, its
# span to IN's unit) and per class and idle cause add up to
# "export --breakdown --json"'s figures within 1 µs; merge_check.py that
# every original event is OUT's, unchanged, and the counter tracks are
# as without the track.  With --breakdown in the same command the
# breakdown is the one it gives alone; without --breakdown-track no
# slice of it is written; and the refusals: --merge-as hta, no --merge,
# several traces into one file.
set -euo pipefail

B=${B:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLIENT=$ROOT/$B/spyremon
MKSAMPLES=$ROOT/$B/tests/mksamples
CHECK=$ROOT/tests/integration/merge_check.py
TRACK=$ROOT/tests/integration/bdtrack_check.py
TRACES=$ROOT/tests/data/traces
# the flex trace has no absolute time: its first ts placed at BASE
BASE=1760000000000000000
FLEX_FIRST_NS=2097962447132759

command -v python3 >/dev/null || { echo "FAIL: python3 is missing (sh mk/deps.sh installs it)" >&2; exit 1; }
if [ ! -x "$MKSAMPLES" ]; then
	echo "SKIP: $MKSAMPLES is not built (make check builds it)"
	exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-mergebd.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# run DIR WHAT COMMAND...: the command must exit 0; stdout in DIR/WHAT.
run() {
	local dir=$1 what=$2
	shift 2
	"$@" >"$dir/$what" 2>"$dir/stderr" ||
		fail "$*: exited $?: $(cat "$dir/stderr")"
}

# refuse MESSAGE COMMAND...: the command must exit 2 saying MESSAGE.
refuse() {
	local msg=$1 rc=0
	shift
	"$@" >"$T/refused.out" 2>"$T/refused.err" || rc=$?
	[ "$rc" -eq 2 ] || fail "$*: exited $rc, not 2: $(cat "$T/refused.err")"
	grep -qF -- "$msg" "$T/refused.err" ||
		fail "$*: does not say '$msg': $(cat "$T/refused.err")"
}

for trace in "$TRACES/kineto-base-relative-amd.json.gz" \
    "$TRACES/kineto-absolute-int.json.gz" "$TRACES/flex-allreduce-tp4.json"; do
	name=$(basename "${trace%%.json*}")
	dir=$T/$name
	mkdir -p "$dir"
	opts=()
	case $name in
	flex-*) opts=(--trace-start $((BASE - FLEX_FIRST_NS))) ;;
	esac
	"$CLIENT" trace info --json "$trace" >"$dir/info.json" ||
		fail "$name: trace info exited $?"
	python3 "$CHECK" samples "$dir/info.json" "${opts[@]}" >"$dir/lines"
	"$MKSAMPLES" "$dir/db" <"$dir/lines" || fail "mksamples failed"
	SPY=("$CLIENT" export --db "$dir/db" --trace "$trace" "${opts[@]}")

	run "$dir" bd.json "${SPY[@]}" --breakdown --json
	run "$dir" stdout "${SPY[@]}" --merge "$dir/out.json" --breakdown-track
	grep -q "slices of the breakdown's classes" "$dir/stderr" ||
		fail "$name: the summary does not count the track: $(cat "$dir/stderr")"
	python3 "$TRACK" "$trace" "$dir/out.json" "$dir/bd.json" ||
		fail "$name: the track"
	python3 "$CHECK" check "$trace" "$dir/out.json" "$dir/info.json" \
	    "$dir/lines" --metrics pwr,busy,rdmem "${opts[@]}" ||
		fail "$name: the merged trace"
	echo "$name: ok"
done

# --launch-gap and --breakdown in the same command, gzip out
dir=$T/kineto-absolute-int
trace=$TRACES/kineto-absolute-int.json.gz
SPY=("$CLIENT" export --db "$dir/db" --trace "$trace")
run "$dir" gap.json "${SPY[@]}" --breakdown --json --launch-gap 3000
run "$dir" both.json "${SPY[@]}" --merge "$dir/gap.json.gz" \
    --breakdown-track --breakdown --json --launch-gap 3000 --quiet
python3 - "$dir/gap.json" "$dir/both.json" "$dir/bd.json" <<'PY' || fail "--breakdown beside the track"
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:4])
assert a == b, "--breakdown with --breakdown-track differs from alone"
# a launch gap of 3 ms takes gaps the default left unexplained: the
# track must follow it
lg = lambda d: sum(s["idle_causes"]["launch_gap_us"] for k in d["cards"] for s in k["steps"])
assert lg(a) > lg(c) + 100000, (lg(a), lg(c))
PY
python3 "$TRACK" "$trace" "$dir/gap.json.gz" "$dir/gap.json" ||
	fail "the track with --launch-gap 3000"

# without --breakdown-track, the merge has no track
run "$dir" stdout "${SPY[@]}" --merge "$dir/plain.json"
! grep -q spyremon_breakdown "$dir/plain.json" ||
	fail "a merge without --breakdown-track wrote the track"

# the refusals
refuse "--breakdown-track is for trace viewers" "${SPY[@]}" \
    --merge "$T/no.json" --merge-as hta --breakdown-track
refuse "--breakdown-track goes with --merge or --merge-dir" "${SPY[@]}" \
    --breakdown-track
refuse "--breakdown-track: one merged trace per trace" "${SPY[@]}" \
    --trace "$TRACES/kineto-absolute-int.json.gz" --merge "$T/no.json" \
    --breakdown-track
[ ! -e "$T/no.json" ] || fail "a refused merge wrote its output"
echo "refusals: ok"
exit 0
