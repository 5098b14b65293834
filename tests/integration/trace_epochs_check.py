#!/usr/bin/env python3
"""Check export's trace outputs against the stored samples across steps
of the host clock (t_clockstep_trace).

    trace_epochs_check.py DB TRACE merge MERGED [LO HI]
    trace_epochs_check.py DB TRACE steps STEPS.csv
    trace_epochs_check.py DB TRACE samples OUT.csv|OUT.jsonl
    trace_epochs_check.py DB TRACE plot CHART.svg TAG NPANELS

Each stored sample of epoch k is placed in the trace's time at its stamp
less the sizes of the steps 1..k (the trace started in epoch 0).  merge:
each card's pwr counter track holds each sample overlapping the span
(the trace's, or LO..HI in its time) once, at the start of its interval
clipped into the trace's span, with its value, in increasing time, then one
final event.  steps: each step's energy per card is the integral of the
shifted samples' power over the step, and every step has samples of
every card (unshifted, the steps after the clock's step would have none).
samples: export --trace's rows (csv or jsonl) are the stored samples
overlapping the trace's span in its time, each once, with its stored stamp
(epoch_ns, ts_ns) and its place in the trace's time (trace_ns), in
increasing trace time.  plot: report's chart of window TAG shades each of
the trace's steps that falls in the chart's time (the window's, from its
begin in the trace's time, 3 % wider each side) once in each of its
NPANELS panels.
"""
import csv
import re
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


def check_samples(rows, lo, hi, path):
    want = {(ts, d): (t, v) for t, d, iv, v, ts, ep in rows
            if t > lo and t - iv < hi}
    if path.endswith(".jsonl"):
        got = [(o["trace_ns"], o["ts_ns"], o["device"],
                o["values"].get("pwr")) for o in
               (json.loads(l) for l in open(path))]
    else:
        got = [(int(r["trace_ns"]), int(r["epoch_ns"]), int(r["device"]),
                r["pwr"] or None) for r in csv.DictReader(open(path))]
    seen = set()
    last, last_dev = None, {}
    for t, ts, d, v in got:
        if (ts, d) in seen:
            fail("%s: the sample %d of card %d is written twice" %
                 (path, ts, d))
        seen.add((ts, d))
        if (ts, d) not in want:
            fail("%s: the sample %d of card %d does not overlap the trace "
                 "in its time" % (path, ts, d))
        wt, wv = want[(ts, d)]
        if t != wt:
            fail("%s: the sample %d of card %d at %d in the trace's time, "
                 "its epoch places it at %d" % (path, ts, d, t, wt))
        if (v is None) != (wv is None) or (
                v is not None and Fraction(str(v)) != wv):
            fail("%s: the sample %d of card %d: pwr %s, stored %s" %
                 (path, ts, d, v, wv))
        if last is not None and t < last:
            fail("%s: trace_ns goes back at %d" % (path, t))
        if d in last_dev and t <= last_dev[d]:
            fail("%s: card %d's trace_ns goes back at %d" % (path, d, t))
        last, last_dev[d] = t, t
    if len(seen) != len(want):
        miss = sorted(set(want) - seen)
        fail("%s: %d rows, the trace's span holds %d stored samples; "
             "missing %s" % (path, len(seen), len(want), miss[:3]))
    eps = sorted({ep for t, d, iv, v, ts, ep in rows if (ts, d) in seen})
    print("%s: %d rows, each stored sample once, epochs %s" %
          (path.rsplit("/", 1)[-1], len(seen), eps))


def check_plot(dbpath, steps, svg, tag, npanels):
    db = sqlite3.connect(dbpath)
    b, e, be, ee = db.execute("SELECT begin_ns, end_ns, begin_epoch, "
                              "end_epoch FROM windows WHERE tag = ?",
                              (tag,)).fetchone()
    if be != ee:
        fail("window %s spans epochs %d..%d: the check wants one" %
             (tag, be, ee))
    shift = {0: 0}
    cum = 0
    for sid, size in db.execute("SELECT id, size_ns FROM clock_steps "
                                "ORDER BY id"):
        cum += size
        shift[sid] = cum
    # the window's begin in the trace's time (the trace began in epoch 0)
    origin = b - shift[be]
    span = Fraction(e - b, 10 ** 9)
    x0, x1 = -Fraction(3, 100) * span, span * Fraction(103, 100)
    want = 0
    for name, slo, dur in steps:
        a = Fraction(slo - origin, 10 ** 9)
        if min(a + Fraction(dur, 10 ** 9), x1) > max(a, x0):
            want += 1
    if want == 0:
        fail("no step of the trace falls in window %s: a test of nothing" %
             tag)
    text = open(svg).read()
    # the shades' greys: alpha 0.24 and 0.12 (plot.c), no other fill's
    got = len(re.findall(r"fill:rgb\(5[45][.0-9]*%,5[45][.0-9]*%,"
                         r"5[45][.0-9]*%\);fill-opacity:0\.(?:24|12);", text))
    if got != want * npanels:
        fail("%s: %d steps shaded, the trace's steps in window %s's time "
             "give %d in each of %d panels" % (svg, got, tag, want, npanels))
    print("%s: %d steps shaded in each of %d panels, as the trace's clock "
          "places them" % (svg.rsplit("/", 1)[-1], want, npanels))


def main():
    rows, nsteps = samples(sys.argv[1])
    base, lo, hi, steps = trace_span(sys.argv[2])
    if sys.argv[3] == "merge":
        span = [int(x) for x in sys.argv[5:7]] if len(sys.argv) > 6 else None
        check_merge(rows, base, lo, hi, sys.argv[4], span)
    elif sys.argv[3] == "samples":
        check_samples(rows, lo, hi, sys.argv[4])
    elif sys.argv[3] == "plot":
        check_plot(sys.argv[1], steps, sys.argv[4], sys.argv[5],
                   int(sys.argv[6]))
    else:
        check_steps(rows, steps, sys.argv[4])


main()
