#!/usr/bin/env python3
"""across_check.py TRACE BREAKDOWN.json STEPS.json [BREAKDOWN.csv]: the
"across cards" figures of export --breakdown against the trace itself and
--steps, for t_breakdown.sh.

From the trace alone, by the rule of spyremon(1)'s "Breakdown": each
card's device events (Kineto's kernel and gpu_memcpy events by
args.device, or the Spyre runtime's begin and end pairs by pid), each
ProfilerStep#N's window, a card's step time (the step's start to the end
of its last device event in it), its busy time (the union of its events
in the step), the straggler (the longest step time, then the busiest,
then the lower card) and the fastest (the other end), the spread of step
time.  The busy % and energy spreads from --steps' rows of the same steps
and cards; the class that makes the difference from the breakdown's own
per-card classes (checked against the schedule by t_breakdown.sh).
Prints the straggler of each step; exits non-zero on a difference.
"""
import csv
import json
import sys
from decimal import Decimal

from trace_cards import in_step, ns, read_trace


CLASSES = ("compute", "data_movement", "communication", "other")
CAUSES = ("host_wait", "launch_gap", "sync", "unexplained")


def class_us(w, k):
    return w[k + "_us"] if k in CLASSES else w["idle_causes"][k + "_us"]


def main():
    _, cards, steps = read_trace(sys.argv[1])
    bd = json.load(open(sys.argv[2]))
    st = json.load(open(sys.argv[3]))
    rows = {(r["step"], r["device"]): r for r in st["steps"]}
    windows = {c["card"]: {s["step"]: s for s in c["steps"]} for c in bd["cards"]}
    x = bd["across_cards"]
    assert x is not None and len(cards) >= 2, "no across_cards"
    assert [s["step"] for s in x["steps"]] == [s[0] for s in steps], \
        ([s["step"] for s in x["steps"]], steps)
    count = dict.fromkeys(cards, 0)
    spreads = []
    for (name, lo, hi), got in zip(steps, x["steps"]):
        fig = {c: in_step(evs, lo, hi) for c, evs in cards.items()}
        order = sorted(fig, key=lambda c: (fig[c][0], fig[c][1], -c))
        slow, fast = order[-1], order[0]
        count[slow] += 1
        assert (got["straggler"], got["fastest"]) == (slow, fast), (name, got, fig)
        t = got["step_time"]
        assert ns(t["max_us"]) == fig[slow][0] and t["max_card"] == slow, (name, t)
        assert ns(t["min_us"]) == fig[fast][0] and t["min_card"] == fast, (name, t)
        assert ns(t["spread_us"]) == fig[slow][0] - fig[fast][0], (name, t)
        spreads.append(fig[slow][0] - fig[fast][0])
        for key, col in (("busy_pct", "busy_mean_pct"), ("energy_J", "energy_J")):
            vals = {c: rows[(name, c)][col] for c in cards
                    if (name, c) in rows and rows[(name, c)].get(col) is not None}
            r = got[key]
            if len(vals) < 2:
                assert r is None, (name, key, r)
                continue
            lo_c = min(vals, key=lambda c: (vals[c], c))
            hi_c = min(vals, key=lambda c: (-vals[c], c))
            assert abs(r["min"] - vals[lo_c]) < 1e-6 and r["min_card"] == lo_c, (name, key, r, vals)
            assert abs(r["max"] - vals[hi_c]) < 1e-6 and r["max_card"] == hi_c, (name, key, r, vals)
            assert abs(r["spread"] - (vals[hi_c] - vals[lo_c])) < 1e-6, (name, key, r)
        ws, wf = windows[slow][name], windows[fast][name]
        diffs = [(class_us(ws, k) - class_us(wf, k), -i, k)
                 for i, k in enumerate(CLASSES + CAUSES)]
        best = max(diffs)
        if best[0] <= 0:
            assert got["differs_in"] is None, (name, got["differs_in"])
        else:
            d = got["differs_in"]
            assert d["class"] == best[2], (name, d, diffs)
            assert d["straggler_us"] == class_us(ws, best[2]), (name, d)
            assert d["fastest_us"] == class_us(wf, best[2]), (name, d)
        print("%s: straggler card %d, fastest card %d, spread %.3f ms" %
              (name, slow, fast, spreads[-1] / 1e6))
    run = x["run"]
    assert run["steps"] == len(steps), run
    assert {r["card"]: r["steps"] for r in run["straggler_steps"]} == count, (run, count)
    if spreads:
        mean = sum(spreads) / len(spreads) / 1000
        assert abs(run["mean_spread"]["step_time_us"] - mean) < 1e-3, (run, mean)
    if len(sys.argv) > 4:
        across = [r for r in csv.DictReader(open(sys.argv[4])) if r["section"] == "across"]
        assert len(across) == len(steps), across
        for r, got in zip(across, x["steps"]):
            assert r["step"] == got["step"] and int(r["straggler"]) == got["straggler"], (r, got)
            assert int(r["card"]) == got["straggler"] and int(r["fastest"]) == got["fastest"]
            assert Decimal(r["step_time_spread_us"]) == Decimal(str(got["step_time"]["spread_us"])), r
            assert r["differs_in"] == (got["differs_in"] or {}).get("class", ""), r
            if got["energy_J"] is not None:
                assert abs(float(r["energy_spread_J"]) - got["energy_J"]["spread"]) < 1e-6, r
    print("across cards: %d steps, straggler counts %s" % (len(steps), count))


if __name__ == "__main__":
    main()
