#!/usr/bin/env python3
"""Check a `spyremon export` against the database it was exported from.

The expected rows are computed here, from the database alone, by the rule
of spyremon(1): a sample stamped t with interval d covers (t - d, t) and
belongs to the span (lo, hi) widened by pad when t > lo - pad and
t - d < hi + pad.  Values are compared with the sample_values view.

usage: export_check.py DB FORMAT FILE --span LO HI [--span LO HI ...]
           [--pad NS] [--metrics a,b] [--devices 0,1] [--window-ids 1,2]
           [--sim-header FILE] [--min-rows N]

Several --span give the windows of an --all export, in order.  Exits 1
with a message on the first difference.
"""
import argparse
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
    samples = list(db.execute(
        "SELECT ts_ns, device, interval_ms FROM samples ORDER BY ts_ns, device"))
    values = {}
    for ts, dev, metric, value in db.execute(
            "SELECT ts_ns, device, metric, value FROM sample_values"):
        values.setdefault((ts, dev), {})[metric] = value
    devmap = list(db.execute(
        "SELECT device, since_ns, bus_id FROM device_map ORDER BY since_ns"))
    db.close()
    return catalog, samples, values, devmap


def bus_id_at(devmap, device, ts):
    found = ""
    for dev, since, bus in devmap:
        if dev == device and since <= ts:
            found = bus
    return found


def expected_rows(samples, lo, hi, pad, devices):
    rows = []
    for ts, dev, iv in samples:
        if devices is not None and dev not in devices:
            continue
        if ts > lo - pad and ts - iv * 1000000 < hi + pad:
            rows.append((ts, dev, iv))
    return rows


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


def check_csv(lines, spans, a, metrics, cat, values, devmap):
    reader = csv.reader(lines)
    header = next(reader)
    lead = ["epoch_ns", "time_utc", "device", "bus_id", "interval_ms"]
    if a.window_ids:
        lead = ["window"] + lead
    if header != lead + metrics:
        fail("csv header %r, not %r" % (header, lead + metrics))
    got = [r for r in reader]
    want = [(wid, row) for wid, rows in spans for row in rows]
    if len(got) != len(want):
        fail("csv has %d rows, not %d" % (len(got), len(want)))
    for cells, (wid, (ts, dev, iv)) in zip(got, want):
        if a.window_ids:
            if int(cells[0]) != wid:
                fail("csv window %s, not %d" % (cells[0], wid))
            cells = cells[1:]
        if (int(cells[0]), int(cells[2]), int(cells[4])) != (ts, dev, iv):
            fail("csv row %r, not %r" % (cells[:5], (ts, dev, iv)))
        t = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts // 10**9))
        if cells[1] != "%s.%09dZ" % (t, ts % 10**9):
            fail("csv time_utc %r for %d" % (cells[1], ts))
        if cells[3] != bus_id_at(devmap, dev, ts):
            fail("csv bus_id %r, not %r" % (cells[3], bus_id_at(devmap, dev, ts)))
        vals = values.get((ts, dev), {})
        for key, cell in zip(metrics, cells[5:]):
            check_value("csv %d/%d" % (ts, dev), key, cell, vals.get(key),
                        cat[key][1], "")
            if cell and cat[key][1] > 0 and len(cell.split(".")[1]) < cat[key][1]:
                fail("csv %s %r has fewer than %d decimals" % (key, cell, cat[key][1]))


def check_aiusmi(lines, spans, a, metrics, cat, values):
    text = [l for l in lines if not l.startswith("#window ")]
    reader = csv.reader(text)
    want_header = ["ID", "Date (YYYYMMDD)", "Time (HH:MM:SS)"] + [
        ("%s %s" % (k, cat[k][0])).strip() for k in metrics]
    rows = []
    for cells in reader:
        if cells and cells[0] == "ID":
            if cells != want_header:
                fail("aiusmi header %r, not %r" % (cells, want_header))
            continue
        rows.append(cells)
    if a.sim_header:
        with open(a.sim_header) as f:
            sim = next(csv.reader([f.readline()]))
        if want_header != sim:
            fail("aiusmi header %r differs from aiu-smi's %r" % (want_header, sim))
    want = [row for _, rs in spans for row in rs]
    if len(rows) != len(want):
        fail("aiusmi has %d rows, not %d" % (len(rows), len(want)))
    for cells, (ts, dev, iv) in zip(rows, want):
        if int(cells[0]) != dev:
            fail("aiusmi ID %s, not %d" % (cells[0], dev))
        lt = time.localtime(ts // 10**9)
        if cells[1] != time.strftime("%Y%m%d", lt) or \
                cells[2] != time.strftime("%H:%M:%S", lt):
            fail("aiusmi date/time %r %r for %d" % (cells[1], cells[2], ts))
        vals = values.get((ts, dev), {})
        for key, cell in zip(metrics, cells[3:]):
            v = vals.get(key)
            if v is None:
                if cell != "-":
                    fail("aiusmi %s: %r for a missing value" % (key, cell))
            elif cell != fixed(v, cat[key][1]):
                fail("aiusmi %s: %r, not %r" % (key, cell, fixed(v, cat[key][1])))


def check_jsonl(lines, spans, a, metrics, cat, values, devmap):
    want = [(wid, row) for wid, rows in spans for row in rows]
    if len(lines) != len(want):
        fail("jsonl has %d lines, not %d" % (len(lines), len(want)))
    for line, (wid, (ts, dev, iv)) in zip(lines, want):
        o = json.loads(line)
        if (o["ts_ns"], o["device"], o["interval_ms"]) != (ts, dev, iv):
            fail("jsonl row %r, not %r" % (line, (ts, dev, iv)))
        if a.window_ids and o.get("window") != wid:
            fail("jsonl window %r, not %d" % (o.get("window"), wid))
        if o["bus_id"] != bus_id_at(devmap, dev, ts):
            fail("jsonl bus_id %r" % o["bus_id"])
        if list(o["values"]) != metrics:
            fail("jsonl keys %r, not %r" % (list(o["values"]), metrics))
        vals = values.get((ts, dev), {})
        for key in metrics:
            v, got = vals.get(key), o["values"][key]
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
    a = p.parse_args()

    catalog, samples, values, devmap = load_db(a.db)
    cat = {k: (u, d) for k, u, d in catalog}
    metrics = a.metrics.split(",") if a.metrics else [k for k, _, _ in catalog]
    devices = set(int(d) for d in a.devices.split(",")) if a.devices else None
    wids = [int(w) for w in a.window_ids.split(",")] if a.window_ids else [0] * len(a.span)
    a.window_ids = a.window_ids and wids
    spans = [(wid, expected_rows(samples, lo, hi, a.pad, devices))
             for wid, (lo, hi) in zip(wids, a.span)]
    total = sum(len(r) for _, r in spans)
    if total < a.min_rows:
        fail("only %d rows expected; the test needs at least %d" % (total, a.min_rows))
    with open(a.file, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if a.format == "csv":
        check_csv(lines, spans, a, metrics, cat, values, devmap)
    elif a.format == "aiusmi":
        check_aiusmi(lines, spans, a, metrics, cat, values)
    else:
        check_jsonl(lines, spans, a, metrics, cat, values, devmap)
    print("%s: %d rows as expected" % (a.format, total))


if __name__ == "__main__":
    main()
