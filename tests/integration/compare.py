#!/usr/bin/env python3
"""Compare what the simulator wrote (its stamp log) with what the daemon stored.

The stamp log has one line per data row: "<write ns> <device> <csv row>".
A row is identified by its device and the multiset of its numeric cells,
which the simulator's workload makes unique enough in practice.

Checks:
  * every stored row is a row the simulator wrote, stored once (no garbage,
    no half row, no duplicate);
  * every written row is stored, except rows written after --lost-after ns
    or inside a --lost-window (rows a crash may lose);
  * per device, stored stamps increase in the order the rows were written;
  * the stamp is not before the write, nor seconds after it.
Prints the stamping latency (stamp minus write time) p50 and p99.
"""
import argparse
import collections
import sqlite3
import sys


def signature(device, values):
    return (device, tuple(sorted(round(float(v), 3) for v in values)))


def read_stamps(path):
    rows = []
    with open(path) as f:
        for line in f:
            ns, dev, csv = line.rstrip("\n").split(" ", 2)
            cells = [c.strip() for c in csv.split(",")]
            values = [c for c in cells[3:] if c != "-"]
            rows.append((int(ns), signature(int(dev), values)))
    return rows


def read_db(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cur = db.execute(
        "SELECT ts_ns, device, value FROM sample_values ORDER BY ts_ns, device")
    grouped = collections.OrderedDict()
    for ts, dev, value in cur:
        grouped.setdefault((ts, dev), []).append(value)
    # rows whose every metric is NULL have no sample_values row at all
    for ts, dev in db.execute("SELECT ts_ns, device FROM samples"):
        grouped.setdefault((ts, dev), [])
    rows = [(ts, signature(dev, vals)) for (ts, dev), vals in grouped.items()]
    rows.sort()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("stamps")
    ap.add_argument("--lost-after", type=int, default=None,
                    help="written rows after this ns may be missing")
    ap.add_argument("--lost-window", action="append", default=[],
                    metavar="FROM:TO",
                    help="written rows in [FROM, TO] ns may be missing")
    ap.add_argument("--min-rows", type=int, default=1)
    args = ap.parse_args()

    written = read_stamps(args.stamps)
    stored = read_db(args.db)
    errors = []

    # The same seed makes a restarted simulator repeat its values, so a
    # stored row is matched to the latest identical row written before it.
    by_sig = collections.defaultdict(list)
    for i, (ns, sig) in enumerate(written):
        by_sig[sig].append((ns, i))

    seen = set()
    last_index = {}
    latencies = []
    for ts, sig in stored:
        cands = [c for c in by_sig.get(sig, []) if c[0] <= ts]
        if not cands:
            errors.append(f"stored row not written by the simulator before "
                          f"ts={ts}: {sig}")
            continue
        ns, i = cands[-1]
        if ts - ns > 5_000_000_000:
            errors.append(f"row stamped {(ts - ns) / 1e9:.1f}s after its write: {sig}")
        if i in seen:
            errors.append(f"row stored twice: {sig}")
        seen.add(i)
        dev = sig[0]
        if dev in last_index and last_index[dev] > i:
            errors.append(f"device {dev}: stamps out of write order at ts={ts}")
        last_index[dev] = i
        latencies.append(ts - ns)

    missing = [(ns, sig) for i, (ns, sig) in enumerate(written) if i not in seen]
    windows = [tuple(int(x) for x in w.split(":")) for w in args.lost_window]
    if args.lost_after is not None:
        windows.append((args.lost_after + 1, 2**63))
    allowed = [m for m in missing
               if any(a <= m[0] <= b for a, b in windows)]
    for ns, sig in missing:
        if (ns, sig) not in allowed:
            errors.append(f"written row not stored: write_ns={ns} {sig}")

    if len(stored) < args.min_rows:
        errors.append(f"only {len(stored)} rows stored, expected >= {args.min_rows}")

    latencies.sort()
    if latencies:
        p50 = latencies[len(latencies) // 2] / 1000
        p99 = latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)] / 1000
        print(f"written {len(written)}, stored {len(stored)}, "
              f"lost (allowed) {len(allowed)}; stamping latency "
              f"p50 {p50:.1f} us, p99 {p99:.1f} us")
    for e in errors[:20]:
        print("ERROR:", e)
    if len(errors) > 20:
        print(f"... and {len(errors) - 20} more errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
