#!/usr/bin/env python3
"""Make a Kineto-shaped trace of an hour's run with device events, and the
samples for it, for bench/ops.sh.

usage: mkopstrace.py OUT.json MEGABYTES LINES

OUT.json spans one hour from 2025-01-01T00:00:10Z: a ProfilerStep#N
(user_annotation) every second, and in each step, on each of 4 cards, K
device events (kernels "gemm_N", "attention", "Memcpy HtoD", an
"ncclKernel_AllReduce"; cat kernel or gpu_memcpy, args device, stream,
correlation, some with flops) back to back with gaps, each launched by a
host cudaLaunchKernel (cuda_runtime) just before it.  K is chosen so
that the file holds about MEGABYTES * 10^6 bytes.  The events are
written as they are made, in time order.

LINES gets tests/tools/mksamples' input: 8 cards sampled every 100 ms
from 1 s before the trace to 1 s after, every metric of the catalog,
power between 25 and 75 W.  Prints K, the events and the bytes.
"""
import json
import sys

T0_NS = 1735689610 * 10**9          # 2025-01-01T00:00:10Z
HOUR_S = 3600
CARDS = 4
NAMES = [("gemm_%d" % i, "kernel") for i in range(12)] + [
    ("attention", "kernel"), ("Memcpy HtoD (Host -> Device)", "gpu_memcpy"),
    ("ncclKernel_AllReduce_RING_LL_Sum_float", "kernel")]
KEYS = ("hostcpu hostmem pwr gtemp busy rdmem wrmem rxpci txpci rdrdma "
        "wrrdma n_rdmem n_wrmem n_rxpci n_txpci rsvmem actmem peakmem "
        "pt_act").split()


def us(ns):
    """ns after the base (T0 - 5 s) as µs with three decimals"""
    rel = ns - (T0_NS - 5 * 10**9)
    return "%d.%03d" % (rel // 1000, rel % 1000)


def step_events(step, k):
    """The text of step's events, in order of start"""
    out = []
    lo = T0_NS + step * 10**9
    out.append('{"ph": "X", "cat": "user_annotation", "name": '
               '"ProfilerStep#%d", "pid": 4242, "tid": 1, "ts": %s, '
               '"dur": 1000000.000}' % (step, us(lo)))
    slot = 10**9 // k
    corr = step * k * CARDS
    for i in range(k):
        for card in range(CARDS):
            name, cat = NAMES[(i * 7 + card * 3 + step) % len(NAMES)]
            start = lo + i * slot + card * 137000 + 250000
            dur = slot * (3 + (i + card) % 5) // 10
            corr += 1
            out.append('{"ph": "X", "cat": "cuda_runtime", "name": '
                       '"cudaLaunchKernel", "pid": 4242, "tid": %d, '
                       '"ts": %s, "dur": 8.250, "args": {"stream": %d, '
                       '"correlation": %d}}'
                       % (2 + card, us(start - 200000), 7 + card, corr))
            args = '"device": %d, "stream": %d, "correlation": %d' % (
                card, 7 + card, corr)
            if cat == "kernel" and i % 2 == 0:
                args += ', "flops": %d' % (1000000 * (i + 1) * (card + 1))
            out.append('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, '
                       '"tid": %d, "ts": %s, "dur": %d.%03d, "args": {%s}}'
                       % (cat, json.dumps(name), card, 7 + card, us(start),
                          dur // 1000, dur % 1000, args))
    return out


def samples(path):
    step = 100 * 10**6
    t = T0_NS - 10**9
    k = 0
    with open(path, "w") as f:
        for dev in range(8):
            f.write("map %d 0000:%02x:00.0\n" % (dev, 0x13 + dev))
        while t - step < T0_NS + (HOUR_S + 1) * 10**9:
            for dev in range(8):
                vals = []
                for i, key in enumerate(KEYS):
                    if key == "pwr":
                        v = "%d.%d" % (25 + (k * 7 + dev * 5) % 50, k % 10)
                    else:
                        v = "%d.%d" % ((k * 7 + dev + i) % 100, k % 10)
                    vals.append("%s=%s" % (key, v))
                f.write("%d %d 100 %s\n" % (t + dev * 15000, dev,
                                            " ".join(vals)))
            t += step
            k += 1


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    out, goal, lines = sys.argv[1], float(sys.argv[2]) * 1e6, sys.argv[3]
    # bytes per step at k = 1, then k for the goal
    one = sum(len(e) + 2 for e in step_events(1, 2)) - \
        sum(len(e) + 2 for e in step_events(1, 1))
    k = max(1, int(goal / HOUR_S / one))
    n = 0
    with open(out, "w") as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [],\n'
                '"traceEvents": [\n')
        first = True
        for step in range(HOUR_S):
            ev = step_events(step, k)
            f.write(("" if first else ",\n") + ",\n".join(ev))
            first = False
            n += len(ev)
        f.write('\n],\n"displayTimeUnit": "ms", "baseTimeNanoseconds": '
                '%d}\n' % (T0_NS - 5 * 10**9))
        size = f.tell()
    samples(lines)
    print("%d device events per card per step, %d events, %d bytes"
          % (k, n, size))


if __name__ == "__main__":
    main()
