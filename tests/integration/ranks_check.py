#!/usr/bin/env python3
"""ranks_check.py BREAKDOWN.json STEPS.json BREAKDOWN.csv TRACE...: the
figures across the ranks' cards of export --breakdown (several traces, one
per rank) against the traces themselves and --steps, for
t_breakdown_ranks.sh.

From the traces alone, by the rules of spyremon(1)'s "Breakdown": each
trace's rank (distributedInfo), cards (the Spyre runtime's begin and end
pairs by pid, or Kineto's kernel and gpu_memcpy events by args.device)
and ProfilerStep#N windows; a card's label r<rank>c<card>; the steps that
every trace has, in the first trace's order, and those that some lack; per
step each card's step time (its own trace's step start to the end of its
last device event in the step) and busy time (the union of its events in
the step); the straggler (the longest step time, then the busiest, then
the earlier trace and lower card) and the fastest (the other end); the
spread of step time and its mean.  The busy % and energy spreads from
--steps' rows of each trace's steps and cards.  Checks the JSON's last
element (across_ranks) and the CSV's across_ranks rows; prints the
straggler of each step; exits non-zero on a difference.
"""
import csv
import json
import sys
from decimal import Decimal

from trace_cards import in_step, ns, read_trace


def ends(vals, order):
    """The cards at the low and high end of vals, the first in order on a tie."""
    lo = min(vals, key=lambda c: (vals[c], order.index(c)))
    hi = min(vals, key=lambda c: (-vals[c], order.index(c)))
    return lo, hi


def main():
    bd = json.load(open(sys.argv[1]))
    st = json.load(open(sys.argv[2]))
    rows_csv = list(csv.reader(open(sys.argv[3])))
    traces = [read_trace(p) for p in sys.argv[4:]]
    assert isinstance(bd, list) and len(bd) == len(traces) + 1, "not traces + 1"
    x = bd[-1]["across_ranks"]
    # the cards, in the traces' order, then card order; their labels
    cards = []                      # (label, trace, card)
    for i, (rank, cs, _) in enumerate(traces):
        for c in sorted(cs):
            cards.append(("r%dc%d" % (rank, c), i, c))
    order = [c[0] for c in cards]
    got_cards = [(c["label"], c["rank"], c["card"]) for c in x["cards"]]
    assert got_cards == [(l, traces[i][0], c) for l, i, c in cards], got_cards
    # the steps: every trace's, in the first's order; the others
    names = [set(s[0] for s in t[2]) for t in traces]
    common = [s[0] for s in traces[0][2] if all(s[0] in n for n in names)]
    partial = [s for s in dict.fromkeys(s[0] for t in traces for s in t[2])
               if s not in common]
    assert [s["step"] for s in x["steps"]] == common, (x["steps"], common)
    assert [p["step"] for p in x["partial_steps"]] == partial, x["partial_steps"]
    for p in x["partial_steps"]:
        want = ["r%d" % t[0] for t in traces if p["step"] in set(s[0] for s in t[2])]
        assert p["in"] == want, (p, want)
    assert x["run"]["partial_steps"] == len(partial), x["run"]
    counters = {}
    for i, el in enumerate(st[:len(traces)]):
        for r in el["steps"]:
            counters[(i, r["step"], r["device"])] = r
    count = dict.fromkeys(order, 0)
    spreads = []
    for name, got in zip(common, x["steps"]):
        fig = {}
        for label, i, c in cards:
            lo, hi = next((a, b) for n, a, b in traces[i][2] if n == name)
            fig[label] = in_step(traces[i][1][c], lo, hi)
        by = sorted(order, key=lambda l: (fig[l][0], fig[l][1], -order.index(l)))
        slow, fast = by[-1], by[0]
        count[slow] += 1
        assert (got["straggler"], got["fastest"]) == (slow, fast), (name, got, fig)
        t = got["step_time"]
        assert ns(t["max_us"]) == fig[slow][0] and t["max_card"] == slow, (name, t)
        assert ns(t["min_us"]) == fig[fast][0] and t["min_card"] == fast, (name, t)
        assert ns(t["spread_us"]) == fig[slow][0] - fig[fast][0], (name, t)
        spreads.append(fig[slow][0] - fig[fast][0])
        for key, col in (("busy_pct", "busy_mean_pct"), ("energy_J", "energy_J")):
            vals = {}
            for label, i, c in cards:
                r = counters.get((i, name, c))
                if r is not None and r.get(col) is not None:
                    vals[label] = r[col]
            r = got[key]
            if len(vals) < 2:
                assert r is None, (name, key, r)
                continue
            lo_c, hi_c = ends(vals, order)
            assert abs(r["min"] - vals[lo_c]) < 1e-6 and r["min_card"] == lo_c, (name, key, r, vals)
            assert abs(r["max"] - vals[hi_c]) < 1e-6 and r["max_card"] == hi_c, (name, key, r, vals)
            assert r["cards"] == len(vals), (name, key, r)
        print("%s: straggler %s, fastest %s, spread %.3f ms" %
              (name, slow, fast, spreads[-1] / 1e6))
    run = x["run"]
    assert run["steps"] == len(common), run
    assert {r["card"]: r["steps"] for r in run["straggler_steps"]} == count, (run, count)
    if spreads:
        mean = sum(spreads) / len(spreads) / 1000
        assert abs(run["mean_spread"]["step_time_us"] - mean) < 1e-3, (run, mean)
    # the csv: a row per common step, one per partial step, every row whole
    head = rows_csv[0]
    assert all(len(r) == len(head) for r in rows_csv), "a row of another width"
    rows = [dict(zip(head, r)) for r in rows_csv[1:]]
    across = [r for r in rows if r["section"] == "across_ranks"]
    assert [r["step"] for r in across] == common, across
    for r, got in zip(across, x["steps"]):
        label = got["straggler"]
        _, i, c = cards[order.index(label)]
        assert (r["straggler"], r["fastest"]) == (label, got["fastest"]), r
        assert (int(r["rank"]), int(r["card"])) == (traces[i][0], c), r
        assert r["step_time_max_card"] == label and r["step_time_min_card"] == got["fastest"], r
        assert Decimal(r["step_time_spread_us"]) == Decimal(str(got["step_time"]["spread_us"])), r
        assert r["start_us"] == "" and r["span_us"] == "", r
    assert [r["step"] for r in rows if r["section"] == "across_ranks_partial"] == partial
    print("across the ranks: %d cards, %d steps, %d in some traces only, "
          "straggler counts %s" % (len(cards), len(common), len(partial), count))


if __name__ == "__main__":
    main()
