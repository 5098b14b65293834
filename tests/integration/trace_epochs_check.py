#!/usr/bin/env python3
"""Check export's trace outputs against the stored samples across steps
of the host clock (t_clockstep_trace).

    trace_epochs_check.py DB TRACE merge MERGED [LO HI]
    trace_epochs_check.py DB TRACE steps STEPS.csv

Each stored sample of epoch k is placed in the trace's time at its stamp
less the sizes of the steps 1..k (the trace started in epoch 0).  merge:
each card's pwr counter track holds each sample overlapping the span
(the trace's, or LO..HI in its time) once, at the start of its interval
clipped into the trace's span, with its value, in increasing time, then one
final event.  steps: each step's energy per card is the integral of the
shifted samples' power over the step, and every step has samples of
every card (unshifted, the steps after the clock's step would have none).
"""
import json
import sqlite3
import sys
from fractions import Fraction

US = 1000


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def samples(path):
    db = sqlite3.connect(path)
    col, dec = db.execute("SELECT col, decimals FROM metrics "
                          "WHERE key = 'pwr'").fetchone()
    steps = db.execute("SELECT id, size_ns FROM clock_steps "
                       "ORDER BY id").fetchall()
    if not steps:
        fail("no step of the host clock recorded")
    cum, shift = 0, {0: 0}
    for sid, size in steps:
        cum += size
        shift[sid] = cum
    if db.execute("SELECT count(*) FROM samples WHERE src IS NOT NULL"
                  ).fetchone()[0]:
        fail("rows of metric files: the check expects aiu-smi's only")
    rows = []
    for ts, dev, iv, v, ep in db.execute(
            "SELECT ts_ns, device, interval_ms, %s, epoch FROM samples" % col):
        t = ts - shift[ep]
        val = None if v is None else Fraction(v) / 10 ** dec
        rows.append((t, dev, iv * 10 ** 6, val, ts, ep))
    rows.sort()
    return rows, len(steps)


def trace_span(path):
    tr = json.load(open(path))
    base = tr["baseTimeNanoseconds"]
    ev = [e for e in tr["traceEvents"] if e.get("ph") == "X"]
    lo = min(base + int(e["ts"] * US) for e in ev)
    hi = max(base + int((e["ts"] + e["dur"]) * US) for e in ev)
    steps = [(e["name"], base + int(e["ts"] * US), int(e["dur"] * US))
             for e in ev if e["name"].startswith("ProfilerStep#")]
    return base, lo, hi, steps


def check_merge(rows, base, lo, hi, merged, span):
    # the samples read: those overlapping the span; their times are
    # clipped into the trace's
    clo, chi = lo, hi
    if span:
        lo, hi = max(lo, span[0]), min(hi, span[1])
    m = json.load(open(merged))
    evs = m["traceEvents"] if isinstance(m, dict) else m
    pid_dev = {}
    for e in evs:
        if e.get("ph") == "M" and e.get("name") == "process_name" and \
                e["args"]["name"].startswith("Spyre "):
            pid_dev[e["pid"]] = int(e["args"]["name"].split()[1])
    if sorted(pid_dev.values()) != [0, 1]:
        fail("%s: cards %r, not 0 and 1" % (merged, pid_dev))
    for dev in (0, 1):
        pid = [p for p, d in pid_dev.items() if d == dev][0]
        got = [(Fraction(str(e["ts"])) * US + base,
                Fraction(str(list(e["args"].values())[0])))
               for e in evs if e.get("ph") == "C" and e.get("pid") == pid
               and e.get("name") == "pwr"]
        for a, b in zip(got, got[1:]):
            if b[0] <= a[0]:
                fail("%s: card %d's pwr track goes back at %s" %
                     (merged, dev, b[0]))
        # the model of merge_events.c: at the start of each interval,
        # clipped, never before the card's previous event
        want, last, final = [], None, None
        for t, d, iv, v, ts, ep in rows:
            if d != dev or not (t > lo and t - iv < hi):
                continue
            at = min(max(t - iv, clo), chi)
            if last is not None and at < last:
                at = last
            last = at
            final = max(min(t, chi), at)
            if v is None:
                continue
            if want and want[-1][0] == at:
                want[-1] = (at, v)
            else:
                want.append((at, v))
        if final is not None and want and final > want[-1][0]:
            want.append((final, want[-1][1]))
        if len(got) != len(want):
            fail("%s: card %d's pwr track has %d events, the %d stored "
                 "samples in the span call for %d" %
                 (merged, dev, len(got), sum(1 for r in rows if r[1] == dev
                  and r[0] > lo and r[0] - r[2] < hi), len(want)))
        for (gt, gv), (wt, wv) in zip(got, want):
            if abs(gt - wt) > US or abs(gv - wv) > Fraction(1, 10 ** 6):
                fail("%s: card %d: event (%s, %s), the samples give "
                     "(%s, %s)" % (merged, dev, gt, gv, wt, wv))
        print("card %d: %d counter events, each stored sample once" %
              (dev, len(got)))


def check_steps(rows, steps, csvpath):
    lines = open(csvpath).read().splitlines()
    head = lines[0].split(",")
    got = {}
    for ln in lines[1:]:
        c = dict(zip(head, ln.split(",")))
        if c["step"] == "total":
            continue
        got[(c["step"], int(c["device"]))] = c
    if len(got) != 2 * len(steps):
        fail("%s: %d rows, not 2 per step of %d" %
             (csvpath, len(got), len(steps)))
    for name, slo, dur in steps:
        shi = slo + dur
        for dev in (0, 1):
            c = got.get((name, dev))
            if c is None:
                fail("%s: no row of %s on card %d" % (csvpath, name, dev))
            if int(c["start_ns"]) != slo:
                fail("%s: %s starts at %s, not %d" %
                     (csvpath, name, c["start_ns"], slo))
            e, n = Fraction(0), 0
            for t, d, iv, v, ts, ep in rows:
                if d != dev or not (t > slo and t - iv < shi):
                    continue
                n += 1
                if v is not None:
                    e += v * Fraction(min(t, shi) - max(t - iv, slo), 10 ** 9)
            if n == 0 or c["samples"] in ("", "0"):
                fail("%s: %s on card %d has no samples (%s)" %
                     (csvpath, name, dev, c["samples"]))
            if int(c["samples"]) != n:
                fail("%s: %s on card %d counts %s samples, the shifted "
                     "samples give %d" % (csvpath, name, dev, c["samples"], n))
            if abs(Fraction(c["energy_J"]) - e) > Fraction(1, 10 ** 6):
                fail("%s: %s on card %d: %s J, the shifted samples give "
                     "%.9f J" % (csvpath, name, dev, c["energy_J"], float(e)))
    print("%d steps x 2 cards: energy and samples as the shifted samples "
          "give" % len(steps))


def main():
    rows, nsteps = samples(sys.argv[1])
    base, lo, hi, steps = trace_span(sys.argv[2])
    if sys.argv[3] == "merge":
        span = [int(x) for x in sys.argv[5:7]] if len(sys.argv) > 6 else None
        check_merge(rows, base, lo, hi, sys.argv[4], span)
    else:
        check_steps(rows, steps, sys.argv[4])


main()
