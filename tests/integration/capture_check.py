#!/usr/bin/env python3
"""Checks of what `spyremon capture` wrote.

usage: capture_check.py merged IN OUT CARDS
       capture_check.py span WINDOW.json INFO.json [INFO.json ...] --slack NS
       capture_check.py steps STEPS.csv CARDS INFO.json [INFO.json ...]
       capture_check.py trace IN --trace-id ID [--pid PID]

"merged": OUT is IN with one block appended (merge_check.py's rule), IN's
events are OUT's after the new ones, equal and in order, and the new ones
are one process per card ("Spyre N ...", CARDS of them, on pids IN does
not use) with counter events of power and busy inside IN's span.

"span": the window (one object of `spyremon windows --json`) begins and
ends within --slack ns of the traces' span (`spyremon trace info --json`
of each): the earliest start and the latest end.

"steps": steps.csv has a row per step of each trace and card, with an
energy, and no others but the cards' totals.

"trace": IN is a trace shaped like Kineto's whose trace_id is ID (and
whose events carry PID).
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import merge_check  # noqa: E402


def fail(msg):
    print("capture_check: " + msg, file=sys.stderr)
    sys.exit(1)


def cmd_merged(args):
    a = merge_check.read_bytes(args.inp)
    b = merge_check.read_bytes(args.out)
    merge_check.check_bytes(a, b)
    din = merge_check.parse(a, args.inp)
    dout = merge_check.parse(b, args.out)
    ein = merge_check.events_of(din)
    eout = merge_check.events_of(dout)
    new = eout[len(ein):]
    if eout[:len(ein)] != ein:
        fail("the original events are not all in %s, unchanged, in order "
             "and at their indexes"
             % args.out)
    used = {e.get("pid") for e in ein}
    names = {}
    for e in new:
        if e.get("ph") not in ("M", "C") and not (
                e.get("ph") == "X" and e.get("cat") == "spyremon_energy"):
            fail("a new event is neither M nor C nor an energy slice: %r"
                 % e)
        if e.get("pid") in used:
            fail("a new event uses pid %r of the trace" % e.get("pid"))
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
    # each device event's energy has a process of its own (merge_ops.h)
    names = {p: n for p, n in names.items()
             if "energy per device event" not in n}
    cards = sorted(n for n in names.values() if n.startswith("Spyre "))
    if len(cards) != args.cards:
        fail("%d card processes (%s), not %d" % (len(cards), cards, args.cards))
    base = din.get("baseTimeNanoseconds", 0)
    ts = [merge_check.D(str(e["ts"])) * 1000 + base for e in ein
          if e.get("ph") != "M" and "ts" in e]
    lo, hi = min(ts), max(merge_check.D(str(e["ts"])) * 1000 + base +
                          merge_check.D(str(e.get("dur", 0))) * 1000
                          for e in ein if e.get("ph") != "M" and "ts" in e)
    for pid in names:
        tracks = {}
        for e in new:
            if e.get("pid") == pid and e.get("ph") == "C":
                t = merge_check.D(str(e["ts"])) * 1000 + base
                if t < lo - 1000 or t > hi + 1000:
                    fail("counter %s at %s, outside the trace's span %s..%s"
                         % (e["name"], t, lo, hi))
                tracks.setdefault(e["name"], 0)
                tracks[e["name"]] += 1
        if not any(k.startswith("pwr") for k in tracks) or \
                not any(k.startswith("busy") for k in tracks):
            fail("%s has no power or busy track: %s" % (names[pid], tracks))
    print("merged: %d original events unchanged, %d new on %d cards" % (
        len(ein), len(new), len(cards)))


def cmd_span(args):
    with open(args.window) as f:
        w = json.load(f)
    starts, ends = [], []
    for path in args.infos:
        with open(path) as f:
            info = json.load(f)
        starts.append(info["start_ns"])
        ends.append(info["end_ns"])
    db = w["begin_ns"] - min(starts)
    de = w["end_ns"] - max(ends)
    print("window %d: begins %+.3f ms, ends %+.3f ms from the traces' span"
          % (w["id"], db / 1e6, de / 1e6))
    if abs(db) > args.slack or abs(de) > args.slack:
        fail("window %d's span is more than %d ns from the traces'" % (
            w["id"], args.slack))


def cmd_steps(args):
    with open(args.steps) as f:
        rows = [r for r in csv.DictReader(f) if r["step"] != "total"]
    want = 0
    for path in args.infos:
        with open(path) as f:
            want += len(json.load(f)["steps"]) * args.cards
    if len(rows) != want:
        fail("%d rows in %s, not %d (steps x cards)" % (len(rows), args.steps,
                                                       want))
    for r in rows:
        if not r.get("energy_J"):
            fail("a step without an energy: %r" % r)
    print("steps: %d rows" % len(rows))


def cmd_trace(args):
    d = merge_check.parse(merge_check.read_bytes(args.inp), args.inp)
    for key in ("schemaVersion", "baseTimeNanoseconds", "traceEvents",
                "traceName"):
        if key not in d:
            fail("%s has no %s" % (args.inp, key))
    if d.get("trace_id") != args.trace_id:
        fail("%s: trace_id %r, not %r" % (args.inp, d.get("trace_id"),
                                          args.trace_id))
    ev = d["traceEvents"]
    if not any(e.get("name") == "Record Window End" for e in ev):
        fail("%s: no Record Window End" % args.inp)
    if args.pid and not any(e.get("pid") == args.pid for e in ev):
        fail("%s: no event of pid %d" % (args.inp, args.pid))
    print("trace: trace_id %s, %d events" % (args.trace_id, len(ev)))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("merged")
    p.add_argument("inp")
    p.add_argument("out")
    p.add_argument("cards", type=int)
    p = sub.add_parser("span")
    p.add_argument("window")
    p.add_argument("infos", nargs="+")
    p.add_argument("--slack", type=int, required=True)
    p = sub.add_parser("steps")
    p.add_argument("steps")
    p.add_argument("cards", type=int)
    p.add_argument("infos", nargs="+")
    p = sub.add_parser("trace")
    p.add_argument("inp")
    p.add_argument("--trace-id", required=True)
    p.add_argument("--pid", type=int, default=0)
    args = ap.parse_args()
    {"merged": cmd_merged, "span": cmd_span, "steps": cmd_steps,
     "trace": cmd_trace}[args.cmd](args)


if __name__ == "__main__":
    main()
