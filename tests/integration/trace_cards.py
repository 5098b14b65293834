"""A trace's cards and steps as the breakdown's checks read them, by the
rules of spyremon(1)'s "Breakdown": the trace's rank (distributedInfo),
each card's device events (Kineto's kernel and gpu_memcpy events by
args.device, or the Spyre runtime's begin and end pairs by pid), each
ProfilerStep#N's window, and a card's step time and busy time in a step.
Shared by across_check.py, ranks_check.py and t_compare_breakdown.sh."""
import json
from decimal import Decimal


def ns(us):
    return int(Decimal(str(us)) * 1000)


def read_trace(path):
    """(rank or None, {card: [(start_ns, end_ns)]}, [(step, start_ns, end_ns)])
    of the trace at path, the steps by start."""
    d = json.load(open(path), parse_float=Decimal)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    rank = d.get("distributedInfo", {}).get("rank") if isinstance(d, dict) else None
    cards, steps, opened = {}, [], {}
    for e in ev:
        name = e.get("name", "")
        if e.get("ph") == "X" and name.startswith("ProfilerStep#"):
            steps.append((name, ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
        elif e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy"):
            cards.setdefault(e["args"]["device"], []).append(
                (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
        elif e.get("ph") == "B":
            opened.setdefault((e["pid"], e["tid"], name), []).append(ns(e["ts"]))
        elif e.get("ph") == "E":
            lo = opened[(e["pid"], e["tid"], name)].pop()
            cards.setdefault(e["pid"], []).append((lo, ns(e["ts"])))
    return rank, cards, sorted(steps, key=lambda s: s[1])


def in_step(evs, lo, hi):
    """A card's step time and busy time in [lo, hi)."""
    cut = sorted((max(a, lo), min(b, hi)) for a, b in evs if min(b, hi) > max(a, lo))
    end = max((b for _, b in cut), default=lo)
    busy, at = 0, lo
    for a, b in cut:
        a = max(a, at)
        if b > a:
            busy += b - a
            at = b
    return end - lo, busy
