#!/usr/bin/env python3
"""Check the output of "spyremon export --trace FILE --steps" against the
samples it was made from.

    steps_check.py SAMPLES OUT csv|json [--span LO HI]
        [--step NAME START_NS DUR_NS]... [--devices 0,1]

SAMPLES is the input given to mksamples ("TS_NS DEVICE INTERVAL_MS
KEY=VALUE ..."): the values are taken as written there, as exact fractions,
not read back from the database.  Every row is recomputed independently:
a sample stamped t with interval d holds its value over (t - d, t]; it
belongs to a span [lo, hi] when t > lo and t - d < hi; the energy is the
sum of value x overlap, the means that sum over the overlap of the values
present.  Energy, maxima, counts and durations must be exact; means, which
are rounded, to 1e-9 relative.

With --step, the step rows must be exactly those steps (in order of start)
times each card; without, the steps are taken from the output and only
their values are checked.  The total rows cover --span, or without it
the span of the first total row (all must agree).
"""
import argparse
import csv
import json
import sys
from fractions import Fraction

MS = 1000000
METRICS = {
    "pwr_mean_W": "pwr", "busy_mean_pct": "busy",
    "mem_bw_rd_GiBps": "rdmem", "mem_bw_wr_GiBps": "wrmem",
    "pci_bw_rx_GiBps": "rxpci", "pci_bw_tx_GiBps": "txpci",
}


def fail(msg):
    print("steps_check: " + msg, file=sys.stderr)
    sys.exit(1)


def read_samples(path):
    rows = []
    for line in open(path):
        w = line.split()
        if not w or w[0].startswith("#") or w[0] in ("window", "map"):
            continue
        vals = {}
        for kv in w[3:]:
            k, v = kv.split("=", 1)
            vals[k] = None if v == "-" else Fraction(v)
        rows.append((int(w[0]), int(w[1]), int(w[2]) * MS, vals))
    return rows


def expected(samples, dev, lo, hi):
    """The values of card dev over [lo, hi], as fractions or None."""
    sel = [s for s in samples if s[1] == dev and s[0] > lo and s[0] - s[2] < hi]
    e = {"samples": len(sel), "under": False}
    if not sel:
        return e
    e["interval_ms"] = Fraction(max(s[2] for s in sel), MS)
    e["under"] = hi - lo < max(s[2] for s in sel)
    for col, key in METRICS.items():
        num, cov, mx = Fraction(0), 0, None
        for ts, _, d, vals in sel:
            v = vals.get(key)
            if v is None:
                continue
            ov = max(0, min(hi, ts) - max(lo, ts - d))
            num += v * ov
            cov += ov
            mx = v if mx is None or v > mx else mx
        e[col] = num / cov if cov > 0 else None
        if key == "pwr":
            e["covered_ms"] = Fraction(cov, MS) if mx is not None else None
            e["energy_J"] = num / 10**9 if mx is not None else None
            e["pwr_max_W"] = mx
    return e


def read_output(path, fmt):
    """Rows as dicts of text ('' for empty), steps first, then totals."""
    if fmt == "csv":
        with open(path, newline="") as f:
            r = csv.reader(f)
            head = next(r)
            if head[0] != "step":
                fail("csv header starts with %r, not step" % head[0])
            rows = [dict(zip(head, x)) for x in r]
        steps = [x for x in rows if x["step"] != "total"]
        totals = [x for x in rows if x["step"] == "total"]
        if rows[len(steps):] != totals:
            fail("the total rows are not last")
        return steps, totals, "1", "0"
    doc = json.load(open(path), parse_float=str, parse_int=str)
    for k in ("trace", "steps", "total"):
        if k not in doc:
            fail("no %r in the json" % k)

    def text(row):
        out = {}
        for k, v in row.items():
            out[k] = "" if v is None else v if isinstance(v, str) else \
                ("true" if v is True else "false" if v is False else str(v))
        return out
    return [text(x) for x in doc["steps"]], [text(x) for x in doc["total"]], \
        "true", "false"


def check_row(row, e, where, yes, no):
    if int(row["samples"]) != e["samples"]:
        fail("%s: samples %s, want %d" % (where, row["samples"], e["samples"]))
    if row["undersampled"] != (yes if e["under"] else no):
        fail("%s: undersampled %s, want %s" % (where, row["undersampled"], e["under"]))
    if e["samples"] == 0:
        for k in ["interval_ms", "covered_ms", "energy_J", "pwr_max_W"] + list(METRICS):
            if row[k] != "":
                fail("%s: no samples, yet %s is %r" % (where, k, row[k]))
        return
    for k in ("interval_ms", "covered_ms", "energy_J", "pwr_max_W"):
        want, got = e[k], row[k]
        if want is None:
            if got != "":
                fail("%s: %s is %r, want empty" % (where, k, got))
            continue
        if got == "":
            fail("%s: %s is empty, want %s" % (where, k, float(want)))
        g = Fraction(got)
        if k == "energy_J" and abs(g - want) > abs(want) * Fraction(1, 10**9):
            fail("%s: energy %s J, want %s to 1e-9" % (where, got, float(want)))
        if g != want:
            fail("%s: %s is %s, want exactly %s" % (where, k, got, want))
    for k in METRICS:
        want, got = e[k], row[k]
        if want is None:
            if got != "":
                fail("%s: %s is %r, want empty" % (where, k, got))
            continue
        if got == "" or abs(Fraction(got) - want) > max(1, abs(want)) * Fraction(1, 10**9):
            fail("%s: %s is %r, want %.12g" % (where, k, got, float(want)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("samples")
    ap.add_argument("out")
    ap.add_argument("format", choices=("csv", "json"))
    ap.add_argument("--span", nargs=2, type=int)
    ap.add_argument("--step", nargs=3, action="append", default=[])
    ap.add_argument("--devices")
    a = ap.parse_args()

    samples = read_samples(a.samples)
    steps, totals, yes, no = read_output(a.out, a.format)
    if a.span is not None:
        lo, hi = a.span
    elif totals:
        lo = int(totals[0]["start_ns"])
        hi = lo + int(Fraction(totals[0]["dur_ms"]) * MS)
    else:
        fail("no total rows")
    devs = sorted({s[1] for s in samples if s[0] > lo and s[0] - s[2] < hi})
    if a.devices is not None:
        devs = [d for d in devs if d in {int(x) for x in a.devices.split(",")}]
    if a.step:
        want = sorted(((int(s), int(d), n) for n, s, d in a.step),
                      key=lambda x: x[0])
    else:
        want = []
        for r in steps[::max(1, len(devs))]:
            dur = Fraction(r["dur_ms"]) * MS
            if dur.denominator != 1:
                fail("dur_ms %s is not whole ns" % r["dur_ms"])
            want.append((int(r["start_ns"]), int(dur), r["step"]))
    if len(steps) != len(want) * len(devs):
        fail("%d step rows, want %d steps x %d cards" % (len(steps), len(want), len(devs)))
    for i, (start, dur, name) in enumerate(want):
        for j, dev in enumerate(devs):
            row = steps[i * len(devs) + j]
            where = "%s on card %d" % (name, dev)
            if row["step"] != name or int(row["device"]) != dev:
                fail("row %d is %s on %s, want %s" % (i * len(devs) + j,
                     row["step"], row["device"], where))
            if int(row["start_ns"]) != start or Fraction(row["dur_ms"]) * MS != dur:
                fail("%s: starts %s for %s ms, want %d for %d ns" % (where,
                     row["start_ns"], row["dur_ms"], start, dur))
            check_row(row, expected(samples, dev, start, start + dur), where, yes, no)
    if [int(t["device"]) for t in totals] != devs:
        fail("total rows for cards %s, want %s" % ([t["device"] for t in totals], devs))
    for t, dev in zip(totals, devs):
        if int(t["start_ns"]) != lo or Fraction(t["dur_ms"]) * MS != hi - lo:
            fail("total on card %d spans %s + %s ms, want %d .. %d" % (dev,
                 t["start_ns"], t["dur_ms"], lo, hi))
        check_row(t, expected(samples, dev, lo, hi), "total on card %d" % dev, yes, no)
    print("checked %d step rows and %d total rows" % (len(steps), len(totals)))


main()
