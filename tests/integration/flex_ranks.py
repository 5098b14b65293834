#!/usr/bin/env python3
"""flex_ranks.py FLEX R0 R1 ALL [DELAY_US]: two rank traces of one run
from the Spyre device trace of four cards (flex-allreduce-tp4.json, begin
and end pairs), for t_breakdown_ranks.sh, t_report_breakdown.sh and
t_compare_breakdown.sh: three steps laid on the trace (bounds at its
first event, 400 and 1000.5 µs later, and past its last); R0 keeps the
device events of cards 1 and 2 and one step more (ProfilerStep#3, after
the end), R1 those of cards 0 and 3 with its clock 250.25 µs ahead
(every ts shifted, steps too), each a Kineto object with its
distributedInfo rank; ALL the four cards and the three steps in one
trace as rank 0.  DELAY_US (default 0) starts every event of card 0 that
much later, its steps left where they are: a slower card 0."""
import json
import sys
from decimal import Decimal

ev = json.load(open(sys.argv[1]), parse_float=Decimal)
delay = Decimal(sys.argv[5]) if len(sys.argv) > 5 else Decimal(0)
ev = [dict(e, ts=e["ts"] + delay) if e["pid"] == 0 else e for e in ev]
lo, hi = min(e["ts"] for e in ev), max(e["ts"] for e in ev)
bounds = [lo, lo + Decimal("400"), lo + Decimal("1000.5"), hi + 1]
steps = [{"name": "ProfilerStep#%d" % i, "ph": "X", "cat": "user_annotation",
          "pid": 100, "tid": 1, "ts": a, "dur": b - a}
         for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
extra = {"name": "ProfilerStep#3", "ph": "X", "cat": "user_annotation",
         "pid": 100, "tid": 1, "ts": hi + 2, "dur": Decimal("10")}


class Exact(json.JSONEncoder):
    def default(self, o):
        return float(o) if isinstance(o, Decimal) else super().default(o)


def write(path, rank, events):
    json.dump({"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
               "traceEvents": events}, open(path, "w"), cls=Exact)


shift = Decimal("250.25")
write(sys.argv[2], 0, [e for e in ev if e["pid"] in (1, 2)] + steps + [extra])
write(sys.argv[3], 1, [dict(e, ts=e["ts"] + shift) for e in ev + steps
                       if e["pid"] in (0, 3, 100)])
write(sys.argv[4], 0, ev + steps)
