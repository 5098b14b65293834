#!/usr/bin/env python3
"""The stored rate around a profiling window, checked against the simulator.

  windowrate.py ctl SOCKET JSON
      send one request on the control socket; print "<send ns> <reply>"
  windowrate.py check DB STAMPS HEADER BEGIN_NS END_NS --fine-ms F
                      --coarse-ms C --pre-ms P
      check the stored series of a daemon whose child ran at F ms the whole
      time (source.pre_window > 0): see check() for what is checked

Every stored row is the aggregate of consecutive rows the simulator wrote
for that device (one row for a fine row): interval_ms / F of them.  Walking
the stored rows in order must consume the simulator's rows exactly, and
every stored value must be the exact decimal mean of its rows' values,
rounded half away from zero at their largest scale (peakmem: the maximum).
"""
import argparse
import socket
import sqlite3
import sys
import time
from decimal import Decimal, ROUND_HALF_UP

MAX_METRICS = {"peakmem"}
# rows are stamped as read, so a read the loaded machine delayed moves a
# stamp by tens of ms: two rows may overlap by up to 3/4 of the shorter
# interval (at least 50 ms); a coarse row left beside the fine rows that
# replaced it would overlap them by most of a second, several fine ones
OVERLAP_SLACK_NS = 50_000_000


def overlap_slack(a_ms, b_ms):
    return max(OVERLAP_SLACK_NS, min(a_ms, b_ms) * 750_000)


def ctl(path, request):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    sent = time.time_ns()
    s.sendall(request.encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    s.close()
    print(sent, reply.decode().strip())


def read_header(path):
    with open(path) as f:
        for line in f:
            if line.startswith("ID,"):
                return [c.split(" ")[0] for c in line.strip().split(",")[3:]]
    raise SystemExit(f"{path}: no header line")


def read_written(path, keys):
    """Per device, the rows the simulator wrote: (write ns, {key: Decimal})."""
    rows = {}
    with open(path) as f:
        for line in f:
            ns, dev, csv = line.rstrip("\n").split(" ", 2)
            cells = [c.strip() for c in csv.split(",")][3:]
            vals = {k: (None if c == "-" else Decimal(c))
                    for k, c in zip(keys, cells)}
            rows.setdefault(int(dev), []).append((int(ns), vals))
    return rows


def read_stored(path, keys):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cat = {k: (c, d) for k, c, d in
           db.execute("SELECT key, col, decimals FROM metrics")}
    cols = ", ".join(f'"{cat[k][0]}"' for k in keys)
    rows = {}
    for r in db.execute(f"SELECT ts_ns, device, interval_ms, {cols} FROM "
                        "samples ORDER BY device, ts_ns"):
        vals = {}
        for k, v in zip(keys, r[3:]):
            d = cat[k][1]
            if v is None:
                vals[k] = None
            elif isinstance(v, int) or float(v).is_integer():
                vals[k] = Decimal(int(v)).scaleb(-d)
            else:
                vals[k] = float(v) / 10 ** d
        rows.setdefault(r[1], []).append((r[0], r[2], vals))
    return rows


def aggregate(key, values):
    present = [v for v in values if v is not None]
    if not present:
        return None
    if key in MAX_METRICS:
        return max(present)
    scale = max(-v.as_tuple().exponent for v in present)
    # the sum is exact, and a quotient that is not exact is never a tie;
    # ROUND_HALF_UP rounds half away from zero
    return (sum(present) / len(present)).quantize(Decimal(1).scaleb(-scale),
                                                  ROUND_HALF_UP)


def same(stored, want):
    if want is None or stored is None:
        return stored is None and want is None
    if isinstance(stored, Decimal):
        return stored == want
    return abs(stored - float(want)) <= 1e-9 * max(1.0, abs(float(want)))


def walk(dev, stored, written, fine_ms, errors):
    """Consume the written rows along the stored ones; count the rows."""
    i = 0
    for ts, ms, vals in stored:
        n = ms // fine_ms
        if n * fine_ms != ms or n < 1:
            errors.append(f"device {dev}: ts={ts} interval {ms} ms is not "
                          f"a multiple of {fine_ms} ms")
            return
        part = written[i:i + n]
        if len(part) < n:
            errors.append(f"device {dev}: ts={ts} aggregates {n} rows, "
                          f"only {len(part)} were written")
            return
        i += n
        last_write = part[-1][0]
        if not 0 <= ts - last_write < 1_000_000_000:
            errors.append(f"device {dev}: ts={ts} is {(ts - last_write) / 1e6:.1f}"
                          f" ms from its last row's write")
        for k, v in vals.items():
            want = aggregate(k, [p[1][k] for p in part])
            if not same(v, want):
                errors.append(f"device {dev}: ts={ts} ({n} rows) {k}: "
                              f"stored {v}, want {want}")
    if i != len(written):
        errors.append(f"device {dev}: {len(written) - i} written rows "
                      "not accounted for")


def spacing_ok(rows, nominal_ms):
    """Stamps nominal_ms apart: the median within 10%, each within 70%."""
    gaps = sorted(b[0] - a[0] for a, b in zip(rows, rows[1:]))
    if not gaps:
        return True
    nominal = nominal_ms * 1_000_000
    return (abs(gaps[len(gaps) // 2] - nominal) <= nominal * 0.1 and
            nominal * 0.3 <= gaps[0] and gaps[-1] <= nominal * 1.7)


def check(args):
    keys = read_header(args.header)
    written = read_written(args.stamps, keys)
    stored = read_stored(args.db, keys)
    fine, coarse = args.fine_ms, args.coarse_ms
    begin, end = args.begin_ns, args.end_ns
    cut = begin - args.pre_ms * 1_000_000
    errors = []

    if sorted(stored) != sorted(written):
        errors.append(f"devices stored {sorted(stored)}, written "
                      f"{sorted(written)}")
    for dev, rows in sorted(stored.items()):
        walk(dev, rows, written.get(dev, []), fine, errors)
        for a, b in zip(rows, rows[1:]):
            start = b[0] - b[1] * 1_000_000
            if start < a[0] - overlap_slack(a[1], b[1]):
                errors.append(f"device {dev}: row ts={b[0]} ({b[1]} ms) "
                              f"overlaps the row at {a[0]}")
        # coarse rows up to the newest one at or before begin - pre, then
        # fine rows to the end, then coarse rows (the last may be partial)
        f = next((i for i, r in enumerate(rows) if r[1] == fine), len(rows))
        before = rows[:f]
        inside = [r for r in rows[f:] if r[0] <= end]
        after = [r for r in rows[f:] if r[0] > end]
        # the rows over the end, and the first that starts after it (no
        # later one can reach back over the end), are fine rows; coarse
        # rows follow (the last may be partial)
        if after and after[0][1] == fine and \
                after[0][0] - fine * 1_000_000 <= end:
            over = 0
            while after and after[0][1] == fine:
                r = after.pop(0)
                inside.append(r)
                over += 1
                if r[0] - r[1] * 1_000_000 >= end:
                    break
            if over > 3 or inside[-1][0] - inside[-1][1] * 1_000_000 < end:
                errors.append(f"device {dev}: {over} fine rows after the "
                              f"end, the last starting at "
                              f"{(inside[-1][0] - inside[-1][1] * 1_000_000 - end) / 1e6:+.0f} ms of it")
        else:
            errors.append(f"device {dev}: the end is not covered by a "
                          f"{fine} ms row")
        after = after[:-1]
        if len(before) < 3 or len(inside) < 20 or len(after) < 2:
            errors.append(f"device {dev}: {len(before)} rows before the "
                          f"fine ones, {len(inside)} fine to the end, "
                          f"{len(after)} after")
            continue
        if any(r[1] != coarse for r in before) or \
                not spacing_ok(before, coarse):
            errors.append(f"device {dev}: rows before the fine ones are not "
                          f"{coarse} ms apart: " + ", ".join(
                              f"{r[1]} ms at {(r[0] - begin) / 1e6:+.0f}"
                              for r in before))
        first = inside[0]
        start = first[0] - first[1] * 1_000_000
        if not cut - coarse * 1_000_000 - OVERLAP_SLACK_NS < start <= cut:
            errors.append(f"device {dev}: fine rows start at "
                          f"{(start - begin) / 1e6:+.0f} ms of begin, not "
                          f"within {coarse} ms before begin - pre")
        if any(r[1] != fine for r in inside) or \
                not spacing_ok(inside, fine):
            gaps = [(b[0] - a[0]) / 1e6 for a, b in zip(inside, inside[1:])]
            errors.append(f"device {dev}: rows from begin - pre to end are "
                          f"not {fine} ms apart: gaps {min(gaps):.0f} to "
                          f"{max(gaps):.0f} ms, median "
                          f"{sorted(gaps)[len(gaps) // 2]:.0f}")
        if any(r[1] != coarse for r in after) or \
                not spacing_ok(after, coarse):
            errors.append(f"device {dev}: rows after the end are not "
                          f"{coarse} ms apart: " + ", ".join(
                              f"{r[1]} ms at {(r[0] - end) / 1e6:+.0f}"
                              for r in after))
        if dev == 0:
            nxt = next(r for r in rows if r[0] > begin)
            print(f"device 0: fine rows cover from "
                  f"{(start - begin) / 1e6:+.0f} ms of "
                  f"begin; first fine row after begin at "
                  f"+{(nxt[0] - begin) / 1e6:.0f} ms; first coarse row "
                  f"after end at +{(after[0][0] - end) / 1e6:.0f} ms; "
                  f"{len(before)} / {len(inside)} / {len(after) + 1} rows "
                  f"before / within / after")
    for e in errors[:20]:
        print("ERROR:", e)
    if len(errors) > 20:
        print(f"... and {len(errors) - 20} more errors")
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("ctl")
    c.add_argument("socket")
    c.add_argument("request")
    k = sub.add_parser("check")
    k.add_argument("db")
    k.add_argument("stamps")
    k.add_argument("header")
    k.add_argument("begin_ns", type=int)
    k.add_argument("end_ns", type=int)
    k.add_argument("--fine-ms", type=int, required=True)
    k.add_argument("--coarse-ms", type=int, required=True)
    k.add_argument("--pre-ms", type=int, required=True)
    args = ap.parse_args()
    if args.cmd == "ctl":
        ctl(args.socket, args.request)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
