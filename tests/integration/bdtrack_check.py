#!/usr/bin/env python3
"""The check of `spyremon export --merge OUT --breakdown-track`.

usage: bdtrack_check.py IN OUT BREAKDOWN.json

Reads the merged trace OUT (plain or gzip) alone for the track and
fails with a message on the first difference from what spyremon(1)
says of it, against BREAKDOWN.json, the same trace's
`export --breakdown --json`:

- OUT's events past IN's count (IN read only for that count) hold one
  process "spyremon breakdown", a thread "Spyre N classes" per card of
  the breakdown (more, "Spyre N classes K", for steps that overlap), and
  X events of cat spyremon_breakdown on those threads only;
- each slice is named after a class ("compute", "data movement",
  "communication", "other", "idle: host wait", "idle: launch gap",
  "idle: sync", "idle: unexplained"), has args step, a positive dur, and
  a ts and dur in IN's type (integer, or IN's decimals);
- on each thread the slices do not overlap; the slices of one step (a
  run of slices with its name that touch end to start) begin at the
  step's start and end at its end, rounded to IN's unit, so that they
  tile it, and neighbours differ in class;
- every step of every card in BREAKDOWN.json (or each card's span,
  "total", when the trace has no steps) has its slices, and per class
  and per idle cause they add up to its figures within 1 µs.
"""
import decimal
import gzip
import json
import sys

D = decimal.Decimal
CLASSES = {"compute": "compute_us", "data movement": "data_movement_us",
           "communication": "communication_us", "other": "other_us"}
CAUSES = {"idle: host wait": "host_wait_us",
          "idle: launch gap": "launch_gap_us", "idle: sync": "sync_us",
          "idle: unexplained": "unexplained_us"}


def fail(msg):
    print("bdtrack_check: " + msg, file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data, parse_float=D)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def main():
    ev_in, ev_out = load(sys.argv[1]), load(sys.argv[2])
    bd = json.load(open(sys.argv[3]), parse_float=D)
    new = ev_out[len(ev_in):]
    # IN's unit: whole µs, or its most decimals
    dec = 0
    for e in ev_in:
        ts = e.get("ts") if isinstance(e, dict) else None
        if isinstance(ts, D):
            dec = max(dec, -ts.as_tuple().exponent)
    unit = D(1).scaleb(-dec)
    procs = [e for e in new if e.get("ph") == "M" and
             e["name"] == "process_name" and
             e["args"]["name"].split(" \u00b7 ")[0] == "spyremon breakdown"]
    if len(procs) != 1:
        fail("%d processes named spyremon breakdown" % len(procs))
    pid = procs[0]["pid"]
    threads = {}
    for e in new:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            if e["pid"] != pid:
                fail("thread_name on pid %r" % e["pid"])
            f = e["args"]["name"].split(" ")
            if len(f) not in (3, 4) or f[0] != "Spyre" or f[2] != "classes":
                fail("thread name %r" % e["args"]["name"])
            threads[e["tid"]] = int(f[1])
    slices = {}
    for e in new:
        if e.get("cat") != "spyremon_breakdown":
            continue
        if e.get("ph") != "X" or e.get("pid") != pid or \
                e.get("tid") not in threads:
            fail("slice off the track: %r" % e)
        if e["name"] not in CLASSES and e["name"] not in CAUSES:
            fail("slice named %r" % e["name"])
        for k in ("ts", "dur"):
            x = e[k]
            if dec == 0 and not isinstance(x, int):
                fail("%s %r is not whole µs, as IN's" % (k, x))
            if dec > 0 and (not isinstance(x, D) or
                            x.as_tuple().exponent != -dec):
                fail("%s %r has not IN's %d decimals" % (k, x, dec))
        if e["dur"] <= 0:
            fail("slice of dur %r" % e["dur"])
        slices.setdefault(e["tid"], []).append(e)
    if bd["cards"] and set(threads.values()) != set(c["card"] for c in bd["cards"]):
        fail("threads of cards %s, breakdown's %s" % (
            sorted(set(threads.values())), [c["card"] for c in bd["cards"]]))
    # per thread: no overlap; runs of one step that touch are its slices
    steps = {}
    for tid, sl in slices.items():
        sl.sort(key=lambda e: e["ts"])
        for a, b in zip(sl, sl[1:]):
            if b["ts"] < a["ts"] + a["dur"]:
                fail("thread %d: %r overlaps %r" % (tid, a, b))
        run = []
        for e in sl + [None]:
            if run and (e is None or e["args"]["step"] != run[-1]["args"]["step"]
                        or e["ts"] != run[-1]["ts"] + run[-1]["dur"]):
                key = (threads[tid], run[0]["args"]["step"], run[0]["ts"])
                if key in steps:
                    fail("two runs of slices for %s" % (key,))
                steps[key] = run
                run = []
            if e is not None:
                run.append(e)
    half = unit / 2
    n = 0
    for c in bd["cards"]:
        windows = c["steps"] if bd["cards"][0]["steps"] else \
            [dict(c, step="total")]
        for w in windows:
            lo, hi = w["start_us"], w["start_us"] + w["span_us"]
            if hi <= lo:
                continue
            near = [k for k in steps if k[0] == c["card"] and
                    k[1] == w["step"] and abs(k[2] - lo) <= half]
            if len(near) != 1:
                fail("card %d %s at %s: %d runs of slices" % (
                    c["card"], w["step"], lo, len(near)))
            run = steps.pop(near[0])
            end = run[-1]["ts"] + run[-1]["dur"]
            if abs(end - hi) > half:
                fail("card %d %s: slices end at %s, the step at %s" % (
                    c["card"], w["step"], end, hi))
            for a, b in zip(run, run[1:]):
                if a["name"] == b["name"]:
                    fail("card %d %s: two slices of %s touch" % (
                        c["card"], w["step"], a["name"]))
            got = {}
            for e in run:
                got[e["name"]] = got.get(e["name"], 0) + e["dur"]
            for name, key in list(CLASSES.items()) + list(CAUSES.items()):
                want = w[key] if key in w else w["idle_causes"][key]
                if abs(got.get(name, 0) - want) > 1:
                    fail("card %d %s: %s %s µs, --breakdown %s" % (
                        c["card"], w["step"], name, got.get(name, 0), want))
            idle = sum(v for k, v in got.items() if k in CAUSES)
            if abs(idle - w["idle_us"]) > 1:
                fail("card %d %s: idle %s, --breakdown %s" % (
                    c["card"], w["step"], idle, w["idle_us"]))
            n += 1
    if steps:
        fail("slices of no step of the breakdown: %s" % sorted(steps)[:4])
    print("ok: %d windows of %d cards tiled, %d slices" % (
        n, len(bd["cards"]), sum(len(v) for v in slices.values())))


if __name__ == "__main__":
    main()
