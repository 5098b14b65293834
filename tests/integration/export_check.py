#!/usr/bin/env python3
"""Check a `spyremon export` against the database it was exported from.

The expected rows are computed here, from the database alone, by the rules
of spyremon(1): a row stamped t with interval d covers (t - d, t) and
belongs to the span (lo, hi) widened by pad when t > lo - pad and
t - d < hi + pad.  Values are compared with the sample_values view, each
metric of a card taken from one stream (its metric file's rows if the
card's newest file row in the span has the metric, else aiu-smi's), and a
card's two streams are paired into one sample per tick: each aiu-smi row
joins the newest file row of its card stamped at or before it, if less
than two of that row's intervals older and not joined already, before
the span too; the sample has the file row's stamp, and is written when
it overlaps the span.  With --by-source every row is a sample of its own.
In aiusmi, lines starting with '#' are skipped as comments, as for
aiu-smi's own output, but its #MetricFiles block is checked; the header
has the columns aiu-smi printed in the span (and those it always prints).

usage: export_check.py DB FORMAT FILE --span LO HI [--span LO HI ...]
           [--pad NS] [--metrics a,b] [--devices 0,1] [--window-ids 1,2]
           [--sim-header FILE] [--min-rows N] [--by-source] [--trace-ns]

Several --span give the windows of an --all export, in order.  With
--trace-ns, an export of a trace's samples: csv's trace_ns column before
epoch_ns and jsonl's trace_ns member give each row's time in the trace's,
which is its stamp in a database that records no step of the host clock
(the check refuses one that does).  Exits 1
with a message on the first difference.
"""
import argparse
import bisect
import csv
import json
import sqlite3
import sys
import time


def fail(msg):
    print("export_check: " + msg, file=sys.stderr)
    sys.exit(1)


def load_db(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    catalog = [(k, u, d) for k, u, d in db.execute(
        "SELECT key, unit, decimals FROM metrics ORDER BY id")]
    has_src = any(r[1] == "src" for r in db.execute("PRAGMA table_info(samples)"))
    samples = list(db.execute(
        "SELECT ts_ns, device, interval_ms, %s FROM samples ORDER BY ts_ns, device"
        % ("src IS NOT NULL" if has_src else "0")))
    values = {}
    for ts, dev, metric, value in db.execute(
            "SELECT ts_ns, device, metric, value FROM sample_values"):
        values.setdefault((ts, dev), {})[metric] = value
    devmap = list(db.execute(
        "SELECT device, since_ns, bus_id, metric_file FROM device_map ORDER BY since_ns"))
    always = {"hostcpu", "hostmem", "pwr", "gtemp", "busy"}
    db.close()
    return catalog, samples, values, devmap, always


def bus_id_at(devmap, device, ts, what=2):
    found = ""
    for m in devmap:
        if m[0] == device and m[1] <= ts:
            found = m[what]
    return found


class Sample:
    """One expected sample: its stamp, card, interval, values, streams."""
    def __init__(self, ts, dev, iv, vals, file_ts, smi_ts):
        self.ts, self.dev, self.iv, self.vals = ts, dev, iv, vals
        self.file_ts, self.smi_ts = file_ts, smi_ts

    def source(self):
        if self.file_ts and self.smi_ts:
            return "file+aiu-smi"
        return "file" if self.file_ts else "aiu-smi"


def expected_rows(samples, values, lo, hi, pad, devices, by_source):
    inspan = lambda ts, iv: ts > lo - pad and ts - iv * 1000000 < hi + pad
    # the rows before the span are read too, to be paired with those in
    # it as anywhere else (a file row joins aiu-smi rows at most two of
    # its intervals of at most 60 s later); their samples are not written
    rows = [(ts, dev, iv, f) for ts, dev, iv, f in samples
            if (devices is None or dev in devices)
            and (inspan(ts, iv) or
                 (not by_source and lo - pad - 120 * 10**9 < ts <= lo - pad))]
    # the best source: each card's newest file row in the span
    best = {}
    for ts, dev, iv, f in rows:
        if f and inspan(ts, iv):
            best[dev] = {k for k, v in values.get((ts, dev), {}).items() if v is not None}

    def vals(ts, dev, f):
        got = values.get((ts, dev), {})
        if dev not in best:
            return dict(got)
        return {k: v for k, v in got.items() if (k in best[dev]) == bool(f)}

    out = [Sample(ts, dev, iv, vals(ts, dev, f), ts if f else 0, 0 if f else ts)
           for ts, dev, iv, f in rows]
    if by_source:
        return out
    paired = []
    for dev in sorted(set(s.dev for s in out)):
        mine = [s for s in out if s.dev == dev]
        files = [s for s in mine if s.file_ts]
        stamps = [s.ts for s in files]
        for s in mine:
            if s.file_ts:
                paired.append(s)
                continue
            k = bisect.bisect_right(stamps, s.ts) - 1
            f = files[k] if k >= 0 else None
            if dev in best and f is not None and not f.smi_ts and \
                    s.ts < f.ts + 2 * f.iv * 1000000:
                f.smi_ts = s.ts
                for key, v in s.vals.items():
                    f.vals.setdefault(key, v)
            else:
                paired.append(s)
    paired = [s for s in paired if s.ts > lo - pad]
    paired.sort(key=lambda s: (s.ts, s.dev))
    return paired


def fixed(value, decimals):
    return "%.*f" % (decimals, value)


def check_value(where, key, cell, value, decimals, missing):
    """cell is what the export wrote; value the view's (None if NULL)."""
    if value is None:
        if cell != missing:
            fail("%s %s: %r for a missing value, not %r" % (where, key, cell, missing))
        return
    if cell == missing:
        fail("%s %s: missing, but the database has %r" % (where, key, value))
    if float(cell) != value:
        fail("%s %s: %r, but the database has %r" % (where, key, cell, value))


def check_csv(lines, spans, a, metrics, cat, devmap, nfile):
    reader = csv.reader(lines)
    header = next(reader)
    lead = ["epoch_ns", "time_utc", "device", "bus_id", "interval_ms"]
    if a.trace_ns:
        lead = ["trace_ns"] + lead
    if a.window_ids:
        lead = ["window"] + lead
    trail = ["source"] if nfile else []
    if header != lead + metrics + trail:
        fail("csv header %r, not %r" % (header, lead + metrics + trail))
    got = [r for r in reader]
    want = [(wid, row) for wid, rows in spans for row in rows]
    if len(got) != len(want):
        fail("csv has %d rows, not %d" % (len(got), len(want)))
    for cells, (wid, smp) in zip(got, want):
        ts, dev, iv = smp.ts, smp.dev, smp.iv
        if len(cells) != len(header):
            fail("csv row of %d cells under a header of %d" % (len(cells), len(header)))
        if a.window_ids:
            if int(cells[0]) != wid:
                fail("csv window %s, not %d" % (cells[0], wid))
            cells = cells[1:]
        if a.trace_ns:
            if int(cells[0]) != ts:
                fail("csv trace_ns %s for the stamp %d: no step of the host "
                     "clock moves it" % (cells[0], ts))
            cells = cells[1:]
        if (int(cells[0]), int(cells[2]), int(cells[4])) != (ts, dev, iv):
            fail("csv row %r, not %r" % (cells[:5], (ts, dev, iv)))
        t = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts // 10**9))
        if cells[1] != "%s.%09dZ" % (t, ts % 10**9):
            fail("csv time_utc %r for %d" % (cells[1], ts))
        if cells[3] != bus_id_at(devmap, dev, ts):
            fail("csv bus_id %r, not %r" % (cells[3], bus_id_at(devmap, dev, ts)))
        if trail and cells[-1] != smp.source():
            fail("csv %d/%d source %r, not %r" % (ts, dev, cells[-1], smp.source()))
        for key, cell in zip(metrics, cells[5:]):
            check_value("csv %d/%d" % (ts, dev), key, cell, smp.vals.get(key),
                        cat[key][1], "")
            if cell and cat[key][1] > 0 and len(cell.split(".")[1]) < cat[key][1]:
                fail("csv %s %r has fewer than %d decimals" % (key, cell, cat[key][1]))


def check_aiusmi(lines, spans, a, metrics, cat, devmap, spans_cards):
    """spans_cards: per span, the (device, first stamp) of its cards."""
    want_header = ["ID", "Date (YYYYMMDD)", "Time (HH:MM:SS)"] + [
        ("%s %s" % (k, cat[k][0])).strip() for k in metrics]
    rows, headers, block, blocks = [], 0, None, []
    for line in lines:
        # comment lines, as in aiu-smi's own output: only #MetricFiles'
        # block is checked, before each header
        if line == "#MetricFiles":
            block = []
            continue
        if line.startswith("#"):
            if block is not None and not line.startswith("#window ") and \
                    not line.startswith("#host ") and not line.startswith("#trace "):
                block.append(line)
            continue
        cells = next(csv.reader([line]))
        if cells and cells[0] == "ID":
            if cells != want_header:
                fail("aiusmi header %r, not %r" % (cells, want_header))
            if block is None:
                fail("aiusmi header without a #MetricFiles block before it")
            blocks.append(block)
            block = None
            headers += 1
            continue
        if len(cells) != len(want_header):
            fail("aiusmi row of %d cells under a header of %d: %r"
                 % (len(cells), len(want_header), line))
        rows.append(cells)
    if headers == 0:
        fail("aiusmi has no header")
    for block, cards in zip(blocks, spans_cards):
        want = ["# %d %s" % (d, bus_id_at(devmap, d, ts, 3) or "-") for d, ts in cards]
        if block != want:
            fail("aiusmi #MetricFiles %r, not %r" % (block, want))
    if a.sim_header:
        with open(a.sim_header) as f:
            sim = next(csv.reader([f.readline()]))
        if want_header != sim:
            fail("aiusmi header %r differs from aiu-smi's %r" % (want_header, sim))
    want = [row for _, rs in spans for row in rs]
    if len(rows) != len(want):
        fail("aiusmi has %d rows, not %d" % (len(rows), len(want)))
    for cells, smp in zip(rows, want):
        ts, dev = smp.ts, smp.dev
        if int(cells[0]) != dev:
            fail("aiusmi ID %s, not %d" % (cells[0], dev))
        lt = time.localtime(ts // 10**9)
        if cells[1] != time.strftime("%Y%m%d", lt) or \
                cells[2] != time.strftime("%H:%M:%S", lt):
            fail("aiusmi date/time %r %r for %d" % (cells[1], cells[2], ts))
        for key, cell in zip(metrics, cells[3:]):
            v = smp.vals.get(key)
            if v is None:
                if cell != "-":
                    fail("aiusmi %s: %r for a missing value" % (key, cell))
            elif cell != fixed(v, cat[key][1]):
                fail("aiusmi %s: %r, not %r" % (key, cell, fixed(v, cat[key][1])))


def check_jsonl(lines, spans, a, metrics, cat, devmap, nfile):
    want = [(wid, row) for wid, rows in spans for row in rows]
    if len(lines) != len(want):
        fail("jsonl has %d lines, not %d" % (len(lines), len(want)))
    for line, (wid, smp) in zip(lines, want):
        ts, dev, iv = smp.ts, smp.dev, smp.iv
        o = json.loads(line)
        if (o["ts_ns"], o["device"], o["interval_ms"]) != (ts, dev, iv):
            fail("jsonl row %r, not %r" % (line, (ts, dev, iv)))
        if a.trace_ns and o.get("trace_ns") != ts:
            fail("jsonl trace_ns %r for the stamp %d: no step of the host "
                 "clock moves it" % (o.get("trace_ns"), ts))
        if a.window_ids and o.get("window") != wid:
            fail("jsonl window %r, not %d" % (o.get("window"), wid))
        if o["bus_id"] != bus_id_at(devmap, dev, ts):
            fail("jsonl bus_id %r" % o["bus_id"])
        if o.get("source") != (smp.source() if nfile else None):
            fail("jsonl %d/%d source %r, not %r" % (ts, dev, o.get("source"), smp.source()))
        if list(o["values"]) != metrics:
            fail("jsonl keys %r, not %r" % (list(o["values"]), metrics))
        for key in metrics:
            v, got = smp.vals.get(key), o["values"][key]
            if v != got:
                fail("jsonl %d/%d %s: %r, but the database has %r" % (ts, dev, key, got, v))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("format", choices=["csv", "aiusmi", "jsonl"])
    p.add_argument("file")
    p.add_argument("--span", nargs=2, type=int, action="append", required=True)
    p.add_argument("--pad", type=int, default=0)
    p.add_argument("--metrics")
    p.add_argument("--devices")
    p.add_argument("--window-ids")
    p.add_argument("--sim-header")
    p.add_argument("--min-rows", type=int, default=1)
    p.add_argument("--by-source", action="store_true")
    p.add_argument("--trace-ns", action="store_true")
    a = p.parse_args()
    if a.trace_ns:
        db = sqlite3.connect(a.db)
        if db.execute("SELECT count(*) FROM sqlite_master WHERE name = "
                      "'clock_steps'").fetchone()[0] and db.execute(
                          "SELECT count(*) FROM clock_steps").fetchone()[0]:
            fail("%s records steps of the host clock: --trace-ns checks "
                 "trace_ns against the stamps only" % a.db)

    catalog, samples, values, devmap, always = load_db(a.db)
    cat = {k: (u, d) for k, u, d in catalog}
    devices = set(int(d) for d in a.devices.split(",")) if a.devices else None
    wids = [int(w) for w in a.window_ids.split(",")] if a.window_ids else [0] * len(a.span)
    a.window_ids = a.window_ids and wids
    spans = [(wid, expected_rows(samples, values, lo, hi, a.pad, devices, a.by_source))
             for wid, (lo, hi) in zip(wids, a.span)]
    inspan = [[(ts, dev, iv, f) for ts, dev, iv, f in samples
               if (devices is None or dev in devices)
               and ts > lo - a.pad and ts - iv * 1000000 < hi + a.pad]
              for lo, hi in a.span]
    nfile = sum(1 for rs in inspan for r in rs if r[3])
    if a.metrics:
        metrics = a.metrics.split(",")
    elif a.format == "aiusmi":
        # the columns aiu-smi printed: a value in one of its rows, or always
        printed = {k for rs in inspan for ts, dev, iv, f in rs if not f
                   for k, v in values.get((ts, dev), {}).items() if v is not None}
        metrics = [k for k, _, _ in catalog if k in printed or k in always]
    else:
        metrics = [k for k, _, _ in catalog]
    total = sum(len(r) for _, r in spans)
    if total < a.min_rows:
        fail("only %d rows expected; the test needs at least %d" % (total, a.min_rows))
    with open(a.file, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if a.format == "csv":
        check_csv(lines, spans, a, metrics, cat, devmap, nfile)
    elif a.format == "aiusmi":
        cards = []
        for rs in inspan:
            first = {}
            for ts, dev, iv, f in rs:
                first.setdefault(dev, ts)
            cards.append(sorted(first.items()))
        check_aiusmi(lines, spans, a, metrics, cat, devmap, cards)
    else:
        check_jsonl(lines, spans, a, metrics, cat, devmap, nfile)
    print("%s: %d rows as expected" % (a.format, total))


if __name__ == "__main__":
    main()
