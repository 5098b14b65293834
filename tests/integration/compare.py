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
    ap.add_argument("--p99-between", metavar="FROM:TO", default=None,
                    help="also the latency p99 of rows written in [FROM, TO]")
    ap.add_argument("--max-p99-us", type=float, default=None,
                    help="fail if that p99 is above this many us")
    ap.add_argument("--baseline", metavar="FROM:TO", default=None,
                    help="the same figures for rows written in [FROM, TO]; "
                         "the limits above are raised to three times those, "
                         "so that a loaded machine is not taken for a stall")
    ap.add_argument("--max-gap-ns", type=int, default=None,
                    help="fail if a device's stored stamps in [FROM, TO] "
                         "are further apart than this")
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
    between = []
    lo, hi = (int(x) for x in args.p99_between.split(":")) if args.p99_between else (0, -1)
    stamps_between = collections.defaultdict(list)
    blo, bhi = (int(x) for x in args.baseline.split(":")) if args.baseline else (0, -1)
    base = []
    stamps_base = collections.defaultdict(list)
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
        if lo <= ns <= hi:
            between.append(ts - ns)
            stamps_between[dev].append(ts)
        if blo <= ns <= bhi:
            base.append(ts - ns)
            stamps_base[dev].append(ts)

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
    if args.p99_between:
        between.sort()
        if not between:
            errors.append("no row written in the --p99-between span")
        else:
            p99b = between[min(len(between) - 1, len(between) * 99 // 100)] / 1000
            gaps = [b - a for v in stamps_between.values() for a, b in zip(v, v[1:])]
            print(f"in [{lo}, {hi}]: {len(between)} rows, stamping latency "
                  f"p99 {p99b:.1f} us, max {between[-1] / 1000:.1f} us, "
                  f"largest gap {max(gaps, default=0) / 1e6:.1f} ms")
            max_p99, max_gap = args.max_p99_us, args.max_gap_ns
            if args.baseline and base:
                base.sort()
                p99base = base[min(len(base) - 1, len(base) * 99 // 100)] / 1000
                bgaps = [b - a for v in stamps_base.values() for a, b in zip(v, v[1:])]
                print(f"baseline [{blo}, {bhi}]: {len(base)} rows, stamping "
                      f"latency p99 {p99base:.1f} us, largest gap "
                      f"{max(bgaps, default=0) / 1e6:.1f} ms")
                # the span measured has one more busy process than the
                # baseline (an import: a core's worth), so on a loaded
                # 2-core host the loop waits for a CPU more often; a stall
                # on a lock shows as tens of ms and more, far past 3x.
                # The load of a busy machine comes and goes, and a 10 s
                # baseline's p99 may catch a quiet spell: 99 % of the rows
                # may then take as long as the baseline's slowest one (a
                # stall behind the writer is its lock's length, seconds)
                maxbase = base[-1] / 1000
                print(f"baseline stamping latency max {maxbase:.1f} us")
                if max_p99 is not None:
                    max_p99 = max(max_p99, 3 * p99base, maxbase)
                if max_gap is not None:
                    max_gap = max(max_gap, 3 * max(bgaps, default=0))
            if max_p99 is not None and p99b > max_p99:
                errors.append(f"stamping p99 {p99b:.1f} us > {max_p99:.1f} us")
            if max_gap is not None and max(gaps, default=0) > max_gap:
                errors.append(f"a gap of {max(gaps) / 1e6:.1f} ms between "
                              f"stored rows > {max_gap / 1e6:.1f} ms")
    for e in errors[:20]:
        print("ERROR:", e)
    if len(errors) > 20:
        print(f"... and {len(errors) - 20} more errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
