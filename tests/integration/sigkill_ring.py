#!/usr/bin/env python3
"""The stored series of a ring-mode daemon killed with SIGKILL at KILL_NS...

  sigkill_ring.py DB --flush-ns F --coarse-ms C --fine-ms W
                  --end END [--scale N] KILL_NS...

Per device, in stamp order (a row covers [ts - interval_ms, ts]):
  * before each kill, the newest stored row is no older than one flush
    interval plus one coarse interval plus scheduling slack: a kill loses
    at most the rows of one flush interval;
  * no coarse row overlaps the rows before it by more than half its
    interval (a coarse row kept beside the fine rows that replaced it, or
    a ring flushed twice, would);
  * two rows that no kill separates follow each other within the later
    row's interval plus slack: nothing lost while the daemon ran;
  * the windows tagged ring are ended: each but the last by the restart
    after the kill that left it open (daemon_gone), at the newest row
    stored before that kill; the last by a mark, at END;
  * rows inside the windows (from 200 ms after the begin to 200 ms before
    the end, times --scale) are fine rows.
Prints the rows, kills and the largest lag seen; exits 1 on a failure.
"""
import argparse
import bisect
import sqlite3
import sys

# scheduling on a shared machine, times --scale (lib.sh's time_scale:
# sanitizers, emulation)
SLACK_NS = 150_000_000
# rows are stamped as read, and the child's rows arrive in bursts: a row's
# interval may overlap the row before by up to about one fine interval
OVERLAP_NS = 50_000_000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("kills", nargs="+", type=int)
    ap.add_argument("--flush-ns", type=int, required=True)
    ap.add_argument("--coarse-ms", type=int, required=True)
    ap.add_argument("--fine-ms", type=int, required=True)
    ap.add_argument("--end", type=int, required=True)
    ap.add_argument("--scale", type=int, default=1)
    a = ap.parse_args()
    slack = SLACK_NS * a.scale
    # bursts grow with the scale too, but a coarse row kept beside the fine
    # rows it replaced overlaps them by about its whole interval: the bound
    # stays under 90 % of it
    overlap = min(OVERLAP_NS * a.scale, a.coarse_ms * 900_000)
    kills = sorted(a.kills)
    db = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    errors = []

    windows = db.execute("SELECT begin_ns, end_ns, ended_by FROM windows "
                         "WHERE tag = 'ring' ORDER BY id").fetchall()
    if not windows:
        sys.exit("no window tagged ring")
    for k, (b, e, by) in enumerate(windows):
        last = k == len(windows) - 1
        if last:
            if (e, by) != (a.end, "mark"):
                errors.append(f"the last window: ended at {e} by {by}, not at {a.end} by mark")
            continue
        kill = next((x for x in kills if x > b), None)
        newest = db.execute("SELECT max(ts_ns) FROM samples WHERE ts_ns < ?",
                            (kill,)).fetchone()[0] if kill else None
        if by != "daemon_gone" or e != newest:
            errors.append(f"window begun at {b}: ended at {e} by {by}, not by "
                          f"daemon_gone at the newest row before the kill, {newest}")

    devices = [d for (d,) in db.execute("SELECT DISTINCT device FROM samples ORDER BY 1")]
    if not devices:
        sys.exit("no rows")
    total = 0
    worst_lag = 0
    for dev in devices:
        rows = db.execute("SELECT ts_ns, interval_ms FROM samples WHERE device = ? "
                          "ORDER BY ts_ns", (dev,)).fetchall()
        total += len(rows)
        ts = [r[0] for r in rows]
        # nothing older than a flush interval lost at a kill
        for k in kills[:-1] if len(kills) > 1 else kills:
            i = bisect.bisect_left(ts, k)
            if i == 0:
                errors.append(f"device {dev}: no row before the kill at {k}")
                continue
            lag = k - ts[i - 1]
            worst_lag = max(worst_lag, lag)
            if lag > a.flush_ns + a.coarse_ms * 1_000_000 + slack:
                errors.append(f"device {dev}: newest row {lag / 1e6:.0f} ms "
                              f"before the kill at {k}")
        for (t0, i0), (t1, i1) in zip(rows, rows[1:]):
            # fine rows come in bursts and may touch; a coarse row left
            # beside the fine rows that replaced it covers most of them
            if i1 == a.coarse_ms and t1 - i1 * 1_000_000 < t0 - overlap:
                errors.append(f"device {dev}: row at {t1} ({i1} ms) overlaps "
                              f"the row at {t0} by {(t0 - (t1 - i1 * 1_000_000)) / 1e6:.1f} ms")
            killed = any(t0 < k <= t1 for k in kills)
            if not killed and t1 - t0 > i1 * 1_000_000 + slack:
                errors.append(f"device {dev}: {(t1 - t0) / 1e6:.0f} ms between "
                              f"rows at {t0} and {t1} with no kill between")
        # inside the windows: fine rows
        edge = 200_000_000 * a.scale
        inside = [(t, i) for t, i in rows
                  if any(b + edge < t < e - edge for b, e, _ in windows)]
        coarse = [t for t, i in inside if i != a.fine_ms]
        if not inside:
            errors.append(f"device {dev}: no row inside the windows")
        elif coarse:
            errors.append(f"device {dev}: {len(coarse)} rows inside a "
                          f"window not at {a.fine_ms} ms, first at {coarse[0]}")
    print(f"{total} rows of {len(devices)} devices, {len(kills)} kills, "
          f"newest row before a kill at most {worst_lag / 1e6:.0f} ms old")
    for e in errors[:20]:
        print("FAIL:", e)
    sys.exit(1 if errors else 0)


main()
