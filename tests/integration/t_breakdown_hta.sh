#!/usr/bin/env bash
# spyremon export --trace DIR --breakdown --json against Holistic Trace
# Analysis 0.6.1's own figures (tests/data/hta/expected.json) on four of
# its test traces: integer and float µs, a base or none, an accelerator
# that is not a GPU (MTIA), the last step dropped or not; and on a folder
# of two ranks (two_ranks: one of those traces and another made rank 1
# by tests/tools/derive_rank.py), each rank reported on its own with the
# step names of both files counted together, as HTA counts them.  Per
# rank, HTA's idle, compute and non-compute shares within 0.1 percentage
# point and its times exact; per stream, host wait, launch gap and sync +
# unexplained HTA's host wait, kernel wait and other exactly
# (tests/tools/hta_compare.py).  No daemon: export reads a database of
# samples made by mksamples around each trace's span.
# Then --launch-gap: a larger gap moves other into launch gap and leaves
# host wait and the rank's temporal breakdown as they were.
source "$(dirname "$0")/lib.sh"

need python3
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"
DATA=$ROOT/tests/data/hta
COMPARE="python3 $ROOT/tests/tools/hta_compare.py $DATA/expected.json"

# samples of card 0 every 100 ms from 0.5 s before each trace's first
# event (tests/data/traces/README.md) to 6 s after it
python3 - >"$T/hta.samples" <<'PY'
for first in (1682725897226746880, 1767891117074372596,
              1712195495406752768, 1739836029603018756):
    for k in range(-5, 60):
        print("%d 0 100 pwr=50.0 busy=10" % (first + k * 100000000))
PY
"$MKSAMPLES" "$T/hta.db" <"$T/hta.samples" || fail "mksamples failed"
SPY="$CLIENT --db $T/hta.db"

# the rank 1 file is still its source, rank and time moved, and no more
python3 "$ROOT/tests/tools/derive_rank.py" --check \
	"$ROOT/tests/data/traces/kineto-absolute-int.json.gz" 1 29469598180006 \
	"$DATA/two_ranks/rank-1.sampled_rank-0.moved.pt.trace.json.gz" ||
	fail "two_ranks: the rank 1 file is not its derivation"

for d in trace_filter_rank0 mtia ns_resolution_trace amd_trace two_ranks; do
	$SPY export --trace "$DATA/$d" --breakdown --json >"$T/$d.json" 2>"$T/err" ||
		{ cat "$T/err" >&2; fail "export --breakdown of $d failed"; }
	$COMPARE "$d" "$T/$d.json" || fail "$d: not HTA's figures"
done

# the comparison fails when a rank's figures are another's, or a rank is
# missing: ranks 0 and 1 of two_ranks swapped, then rank 1 alone
python3 - "$T/two_ranks.json" "$T/swapped.json" "$T/alone.json" <<'PY' ||
import json, sys
a = json.load(open(sys.argv[1]))
# two traces, then the ranks' cards side by side (across_ranks)
assert isinstance(a, list) and len(a) == 3, "two_ranks: not two traces"
assert "across_ranks" in a.pop(), "two_ranks: no across_ranks last"
assert [t["hta"]["rank"] for t in a] == [0, 1], [t["hta"]["rank"] for t in a]
assert all(t["hta"]["step_names"] == 7 for t in a), "step names not shared"
a[0]["hta"]["rank"], a[1]["hta"]["rank"] = 1, 0
json.dump(a, open(sys.argv[2], "w"))
json.dump(a[0], open(sys.argv[3], "w"))
PY
	fail "two_ranks: not two ranks with 7 step names"
$COMPARE two_ranks "$T/swapped.json" >"$T/cmp" 2>&1 &&
	fail "two_ranks: swapped ranks pass as HTA's"
grep -q "rank 0 idle_us: HTA 10113, spyremon 321378" "$T/cmp" ||
	{ cat "$T/cmp" >&2; fail "two_ranks: swapped ranks not said"; }
$COMPARE two_ranks "$T/alone.json" >"$T/cmp" 2>&1 &&
	fail "two_ranks: one rank passes as both"
grep -q "ranks \\['1'\\], HTA's \\['0', '1'\\]" "$T/cmp" ||
	{ cat "$T/cmp" >&2; fail "two_ranks: the missing rank not said"; }

# the threshold: 1000 µs takes stream 25's 47865 µs of other in part
$SPY export --trace "$DATA/trace_filter_rank0" --breakdown --json \
	--launch-gap 1ms >"$T/gap.json" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "--launch-gap 1ms failed"; }
python3 - "$T/trace_filter_rank0.json" "$T/gap.json" <<'PY' || fail "--launch-gap"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert b["launch_gap_us"] == 1000 and a["launch_gap_us"] == 30, b["launch_gap_us"]
assert a["hta"]["idle_us"] == b["hta"]["idle_us"]
moved = 0
for x, y in zip(a["streams"], b["streams"]):
    assert x["stream"] == y["stream"] and x["host_wait_us"] == y["host_wait_us"], (x, y)
    assert abs(x["idle_us"] - y["idle_us"]) < 1e-6
    assert y["launch_gap_us"] >= x["launch_gap_us"]
    moved += y["launch_gap_us"] - x["launch_gap_us"]
assert moved > 0, "nothing moved to launch gap"
print("--launch-gap 1ms: %.3f µs of other became launch gap" % moved)
PY
exit 0
