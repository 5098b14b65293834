#!/usr/bin/env python3
"""ops_known_job.py: a profiled run whose power is known, for
t_ops_known.sh.

  ops_known_job.py plan T0_NS INTERVAL_MS SCHEDULE
      writes the simulator's --power-schedule: the power each device event
      of the run draws, on its card, from T0_NS (epoch ns) on.
  ops_known_job.py run SOCKET TAG T0_NS INTERVAL_MS PAD_MS TRACE
      inside window TAG, waits until the run's last event has ended and
      PAD_MS more, then writes the Kineto-shaped trace of the same events
      (cat kernel or gpu_memcpy, args.device, a host cudaLaunchKernel
      before each, ProfilerStep spans).
  ops_known_job.py truth T0_NS INTERVAL_MS POWER_LOG OPS_CSV DB STAMPS
      checks export --ops' csv against the simulator's --power-log (the
      power each card drew, ms by ms): operators plus idle are the cards'
      energy to 1e-9, and each slow operator's energy is within its
      error_J of the truth, plus the 0.05 W rounding of a printed pwr over
      its device time and, for each change of power, the largest lag of
      a stored stamp behind the simulator's (STAMPS, its --stamp-log) at
      75 W; an operator whose calls last an interval or more each, 10 or
      more in all, is within 2 % of the truth too (plus the same rounding
      and lag); prints one line per operator.

The run, in ms from T0 (no two events of a card overlap, so the truth of
an operator is the plain integral of its card's power over its calls), in
two parts.  Fast, changing within a sample: on card 0 "gemm", 3 ms at
68 W every 10 ms for 1 s, each followed by a 1 ms "Memcpy HtoD" at 35 W;
on card 1 a 40 ms "ncclKernel_AllReduce" at 50 W every 100 ms for 2 s,
then "attention", 30 ms at 65 W every 250 ms.  Slow, in whole intervals I
of the sampling: on card 0, from 2000 + 3I, two "conv" of 3I at 58 W 3I
apart, then after 3I a "long_kernel" of 10I at 72 W: each change of power
shows in a whole sample on either side.  Outside the events a card draws
its idle power (the simulator's).  Every operator must be within its
bound; one whose calls last an interval or more each, 10 or more in
all, within 2 % too.
"""
import csv
import json
import os
import sys
import time

MS = 1000000


def events(iv):
    """(name, cat, card, lo_ms, dur_ms, watts, flops or None), for
    sampling every iv ms"""
    ev = []
    for i in range(100):
        ev.append(("gemm", "kernel", 0, 10 * i, 3, 68.0, 6e9))
        ev.append(("Memcpy HtoD (Host -> Device)", "gpu_memcpy", 0,
                   10 * i + 4, 1, 35.0, None))
    slow = 2000 + 3 * iv
    for k in range(2):
        ev.append(("conv", "kernel", 0, slow + 6 * k * iv, 3 * iv, 58.0,
                   4e10))
    ev.append(("long_kernel", "kernel", 0, slow + 12 * iv, 10 * iv, 72.0,
               None))
    for i in range(20):
        ev.append(("ncclKernel_AllReduce_RING_LL_Sum_float", "kernel", 1,
                   5 + 100 * i, 40, 50.0, None))
    for i in range(6):
        ev.append(("attention", "kernel", 1, 2050 + 250 * i, 30, 65.0, 2e9))
    return ev


def end_ms(iv):
    return max(lo + d for _, _, _, lo, d, _, _ in events(iv))


def plan(t0, iv, path):
    with open(path + ".tmp", "w") as f:
        f.write("# card start_ns end_ns watts\n")
        for _, _, card, lo, d, w, _ in events(iv):
            f.write("%d %d %d %.1f\n" % (card, t0 + lo * MS,
                                         t0 + (lo + d) * MS, w))
    os.replace(path + ".tmp", path)


def us(base, ns):
    rel = ns - base
    return "%d.%03d" % (rel // 1000, rel % 1000)


def write_trace(t0, iv, out):
    base = t0 - 5 * 1000000000
    lines = []

    def x(name, cat, pid, tid, lo, dur, args=None):
        e = '{"ph": "X", "cat": %s, "name": %s, "pid": %d, "tid": %d, ' \
            '"ts": %s, "dur": %d.%03d' % (json.dumps(cat), json.dumps(name),
                                         pid, tid, us(base, lo),
                                         dur // 1000, dur % 1000)
        if args is not None:
            e += ', "args": %s' % json.dumps(args)
        lines.append(e + "}")

    for i, (name, cat, card, lo, d, _, flops) in enumerate(events(iv)):
        lo_ns = t0 + lo * MS
        x("cudaLaunchKernel", "cuda_runtime", 4242, 1, lo_ns - MS // 4,
          MS // 8, {"stream": 7 + card, "correlation": i})
        args = {"device": card, "stream": 7 + card}
        if flops is not None:
            args["flops"] = flops
        x(name, cat, card, 7 + card, lo_ns, d * MS, args)
    step = end_ms(iv) // 4 + 1
    for i in range(4):
        x("ProfilerStep#%d" % i, "user_annotation", 4242, 1,
          t0 + i * step * MS, step * MS)
    with open(out + ".tmp", "w") as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [],\n'
                '"traceEvents": [\n' + ",\n".join(lines) + "\n],\n"
                '"displayTimeUnit": "ms", "baseTimeNanoseconds": %d}\n'
                % base)
    os.replace(out + ".tmp", out)


def run(sock, tag, t0, iv, pad_ms, out):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "..", "contrib", "python"))
    import spyremon
    try:
        with spyremon.window(tag, socket=sock):
            while time.time_ns() < t0 + (end_ms(iv) + pad_ms) * MS:
                time.sleep(0.05)
    except spyremon.SpyremonError as e:
        sys.exit("ops_known_job: %s" % e)
    write_trace(t0, iv, out)


def stamp_lag_ns(db_path, stamps_path, t0, iv):
    """The largest distance between a stored row's stamp and the time the
    simulator wrote it (its --stamp-log), over the run: the samples'
    intervals are off the simulator's by that much, an error the bound
    does not hold (it trusts the stamps)."""
    import bisect
    import sqlite3
    written = {}
    for line in open(stamps_path):
        ns, card = line.split()[:2]
        written.setdefault(int(card), []).append(int(ns))
    for v in written.values():
        v.sort()
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    lag = 0
    for ts, card in db.execute(
            "SELECT ts_ns, device FROM samples WHERE ts_ns BETWEEN ? AND ?",
            (t0 - iv * MS, t0 + (end_ms(iv) + 2 * iv) * MS)):
        w = written.get(card, [])
        i = bisect.bisect_left(w, ts)
        near = [abs(ts - w[j]) for j in (i - 1, i) if 0 <= j < len(w)]
        if near:
            lag = max(lag, min(near))
    return lag


def truth(t0, log_path, csv_path, interval_ms, lag_ns):
    iv = interval_ms
    power = {}      # (card, ms) -> W
    for line in open(log_path):
        ms, card, w = line.split()
        power[(int(card), int(ms))] = float(w)
    true_j = {}
    for name, _, card, lo, d, _, _ in events(iv):
        t = t0 // MS + lo
        missing = [m for m in range(t, t + d) if (card, m) not in power]
        if missing:
            sys.exit("ops_known_job: no logged power of card %d at ms %d"
                     % (card, missing[0]))
        true_j[name] = true_j.get(name, 0.0) + sum(
            power[(card, m)] for m in range(t, t + d)) / 1000.0
    rows = list(csv.DictReader(open(csv_path)))
    ops = {r["name"]: r for r in rows if r["section"] == "op"}
    cards = [r for r in rows if r["section"] == "card"]
    idle = [r for r in rows if r["section"] == "category"
            and r["name"] == "idle"][0]
    if set(ops) != set(true_j):
        sys.exit("ops_known_job: operators %s, not %s"
                 % (sorted(ops), sorted(true_j)))
    total = sum(float(r["energy_J"]) for r in cards)
    parts = sum(float(r["energy_J"]) for r in ops.values()) + \
        float(idle["energy_J"])
    closure = abs(parts - total) / total
    if closure > 1e-9:
        sys.exit("ops_known_job: operators and idle %.12g J, cards %.12g J"
                 % (parts, total))
    bad = []
    print("%-40s %10s %10s %10s %10s %8s %s" % ("operator", "true_J", "J",
          "error_J", "bound_J", "err_%", "in bound"))
    for name in sorted(true_j):
        r = ops[name]
        got, bound = float(r["energy_J"]), float(r["error_J"])
        # a printed pwr is rounded to 0.1 W: 0.05 W over the time the
        # samples give the operator, its device time; and each call's two
        # changes of power may sit off by the stamps' lag, at up to 75 W
        rounding = 0.05 * float(r["device_ms"]) / 1000.0
        lag = 2 * int(r["calls"]) * lag_ns / 1e9 * 75.0
        err = got - true_j[name]
        inside = abs(err) <= bound + rounding
        inside_lag = abs(err) <= bound + rounding + lag
        # calls of a sample or more, 10 samples or more in all
        long_op = float(r["device_ms"]) >= 10 * iv and min(
            d for n, _, _, _, d, _, _ in events(iv) if n == name) >= iv
        close = abs(err) <= 0.02 * true_j[name] + rounding + lag
        print("%-40s %10.4f %10.4f %10.4f %10.4f %8.2f %s%s" % (
            name, true_j[name], got, err, bound,
            100 * err / true_j[name], "yes" if inside else "NO",
            "" if not long_op else " (2 %%: %s)" % ("yes" if close
                                                   else "NO")))
        if not inside_lag:
            bad.append(name)
        if long_op and not close:
            bad.append(name + " (over 2 %)")
    print("closure %.1e, stamps up to %.3f ms off" % (closure, lag_ns / 1e6))
    if bad:
        sys.exit("ops_known_job: outside their bound: %s" % ", ".join(bad))



def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    a = sys.argv[2:]
    if mode == "plan" and len(a) == 3:
        plan(int(a[0]), int(a[1]), a[2])
    elif mode == "run" and len(a) == 6:
        run(a[0], a[1], int(a[2]), int(a[3]), int(a[4]), a[5])
    elif mode == "truth" and len(a) == 6:
        truth(int(a[0]), a[2], a[3], int(a[1]),
              stamp_lag_ns(a[4], a[5], int(a[0]), int(a[1])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
