#!/usr/bin/env bash
# spyremon export --breakdown and report over the ranks of one run: every
# rank's cards side by side, steps matched by name.  The two rank traces
# come from the Spyre device trace of four cards (flex-allreduce-tp4.json,
# begin and end pairs) by flex_ranks.py, a tensor-parallel run of
# four cards as two ranks of two: three steps are laid on the trace (the
# first ends while every card is busy, so busy time decides: card 2,
# whose first event starts the trace; in the second card 0 works to the
# end; in the last only card 0 works); rank 0's
# trace keeps the device events of cards 1 and 2, rank 1's those of cards
# 0 and 3, each a Kineto object with its distributedInfo rank; rank 1's
# clock runs 250.25 µs ahead (every ts of its trace, steps too, shifted);
# rank 0 has one step more (ProfilerStep#3, after the end).  So the
# straggler of a step is rank 0's card in one step and rank 1's in the
# others, whatever each trace's own clock.  ranks_check.py recomputes from
# the two trace files (independently of spyremon) each step's straggler,
# fastest and step-time spread across all four cards and their labels
# (r0c1 ...), the busy % and energy spreads from --steps, and the step
# left out, against --json and --csv; the table has the same.  The same
# four cards in one trace give the same stragglers.  With one --db per
# rank, the labels name the host first.  report's "Across cards" names the
# cross-rank straggler of each step as export does.
source "$(dirname "$0")/lib.sh"

need python3

flex_rank_run "$T/a.db"
cp "$T/a.db" "$T/b.db"

EX=("$CLIENT" --db "$T/a.db" export --trace "$T/r0.json" --trace "$T/r1.json"
	--trace-start $((BASE - FIRST_NS)))
for f in json csv table; do
	"${EX[@]}" --breakdown --$f >"$T/bd.$f" 2>"$T/bd.$f.err" ||
		fail "export --breakdown --$f failed: $(cat "$T/bd.$f.err")"
	grep -q "across the ranks: 1 step in some traces only, left out: ProfilerStep#3 (in r0)" \
		"$T/bd.$f.err" || fail "--$f does not name the step left out: $(cat "$T/bd.$f.err")"
done
"${EX[@]}" --steps --json >"$T/steps.json" 2>"$T/err" || fail "--steps failed: $(cat "$T/err")"
python3 "$ROOT/tests/integration/ranks_check.py" "$T/bd.json" "$T/steps.json" \
	"$T/bd.csv" "$T/r0.json" "$T/r1.json" >"$T/check.out" ||
	fail "the ranks' cards side by side"
cat "$T/check.out"
cat "$T/bd.table" | sed -n '/^Across the ranks/,$p'
python3 - "$T/bd.json" "$T/bd.table" <<'PY' || fail "the straggler across ranks by construction"
import json, sys
x = json.load(open(sys.argv[1]))[-1]["across_ranks"]
got = [(s["step"], s["straggler"]) for s in x["steps"]]
# by construction: step 0's straggler is rank 0's card 2 (busy from the
# trace's start), the others' rank 1's card 0 (the only one working to
# their end)
assert got == [("ProfilerStep#0", "r0c2"), ("ProfilerStep#1", "r1c0"),
               ("ProfilerStep#2", "r1c0")], got
table = open(sys.argv[2]).read()
for s, who in got:
    assert any(l.split()[:2] == [s, who] for l in table.splitlines()), (s, who)
assert "Straggler in 3 steps: r0c1 0, r0c2 1, r1c0 2, r1c3 0" in table, table
assert "Left out, in some traces only: 1 step: ProfilerStep#3 (in r0)" in table
PY

# the same four cards in one trace, on one clock: the same straggler,
# fastest and spread of each step (rank 1's clock shift changes nothing)
"$CLIENT" --db "$T/a.db" export --trace "$T/all.json" --trace-start $((BASE - FIRST_NS)) \
	--breakdown --json >"$T/all.bd.json" 2>"$T/err" || fail "one trace: $(cat "$T/err")"
python3 - "$T/all.bd.json" "$T/bd.json" <<'PY' || fail "one trace and two ranks disagree"
import json, sys
one = json.load(open(sys.argv[1]))["across_cards"]["steps"]
two = json.load(open(sys.argv[2]))[-1]["across_ranks"]["steps"]
card = lambda label: int(label.split("c")[1])
assert [(s["step"], s["straggler"], s["fastest"], s["step_time"]["spread_us"])
        for s in one] == \
    [(s["step"], card(s["straggler"]), card(s["fastest"]),
      s["step_time"]["spread_us"]) for s in two], (one, two)
PY

# one database per rank: the labels name the host first
"$CLIENT" --db "$T/a.db" --db "$T/b.db" export --trace "$T/r0.json" --trace "$T/r1.json" \
	--host-map "$T/r0.json=$T/a.db" --host-map "$T/r1.json=$T/b.db" \
	--trace-start $((BASE - FIRST_NS)) --breakdown --json >"$T/hosts.json" 2>"$T/err" ||
	fail "two databases: $(cat "$T/err")"
python3 - "$T/hosts.json" "$T/bd.json" <<'PY' || fail "the labels of two hosts"
import json, sys
x = json.load(open(sys.argv[1]))[-1]["across_ranks"]
one = json.load(open(sys.argv[2]))[-1]["across_ranks"]
hosts = {c["host"] for c in x["cards"]}
assert len(hosts) == 2, hosts
for c in x["cards"]:
    assert c["label"] == "%s:r%dc%d" % (c["host"], c["rank"], c["card"]), c
strip = lambda l: l.rsplit(":", 1)[1]
assert [strip(s["straggler"]) for s in x["steps"]] == \
    [s["straggler"] for s in one["steps"]], (x["steps"], one["steps"])
PY

# report: "Across cards" over both ranks' cards
"$CLIENT" --db "$T/a.db" report --window rk-run --trace "$T/r0.json" --trace "$T/r1.json" \
	--align-window rk-run --output "$T/rep" >"$T/out" 2>"$T/err" ||
	fail "report failed: $(cat "$T/err")"
sed -n '/^### Across cards/,/^### Evidence/p' "$T/rep/report.md"
python3 - "$T/rep/report.md" "$T/bd.json" <<'PY' || fail "report's Across cards"
import json, sys
md = open(sys.argv[1]).read()
x = json.load(open(sys.argv[2]))[-1]["across_ranks"]
sec = md.split("### Across cards\n", 1)[1].split("\n### ", 1)[0]
assert "The cards of all 2 traces" in sec, sec
assert "Left out, in some traces only: 1 step (ProfilerStep#3)" in sec, sec
rows = {}
for line in sec.splitlines():
    cells = [c.strip() for c in line.strip("|").split("|")]
    if len(cells) == 11 and cells[0].startswith("ProfilerStep#"):
        rows[cells[0]] = cells
assert sorted(rows) == [s["step"] for s in x["steps"]], rows
for s in x["steps"]:
    r = rows[s["step"]]
    assert (r[1], r[2]) == (s["straggler"], s["fastest"]), (r, s)
    assert r[5] == "%.3f" % (s["step_time"]["spread_us"] / 1000), (r, s)
assert "The straggler in 3 steps: r0c1 0, r0c2 1, r1c0 2, r1c3 0." in sec, sec
print("report: across cards over both ranks, as export gives it")
PY
exit 0
