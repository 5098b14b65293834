#!/usr/bin/env python3
"""ops_job.py SOCKET TAG OUT: a profiled run's trace with device events,
made against the running daemon, for t_ops.sh.

Inside window TAG (opened and ended through the Python helper), for about
two seconds of wall-clock time, it writes the trace Kineto would write of
a job on two cards: on card 0 (args.device 0, pid 0) a 3 ms kernel "gemm"
(cat kernel, args.flops) every 10 ms, each followed by a 1 ms "Memcpy
HtoD" (gpu_memcpy); on card 1 a 40 ms "ncclKernel_AllReduce" every 100 ms
and one 350 ms "long_kernel", longer than several samples; the host's
cudaLaunchKernel (cuda_runtime, with a stream in its args, as Kineto
writes it) before each, four ProfilerStep#N spans, and an aten::mm
cpu_op.  No event of a card overlaps another of the same card, so each
operator's energy is the plain integral of power over its calls.  Times
are CLOCK_REALTIME, ts relative to baseTimeNanoseconds in µs with three
decimals, exactly.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "contrib", "python"))
import spyremon  # noqa: E402

MS = 1000000


def us(base, ns):
    rel = ns - base
    return "%d.%03d" % (rel // 1000, rel % 1000)


def main():
    sock, tag, out = sys.argv[1:4]
    events = []

    def x(name, cat, pid, tid, lo, dur, args=None):
        events.append((name, cat, pid, tid, lo, dur, args))

    with spyremon.window(tag, socket=sock):
        # samples on both sides of the span first: a neighbour each
        time.sleep(0.3)
        t0 = time.time_ns()
        base = t0 - 5 * 1000000000
        for i in range(200):
            lo = t0 + i * 10 * MS
            x("cudaLaunchKernel", "cuda_runtime", 4242, 1, lo - MS // 2,
              MS // 4, {"stream": 7, "correlation": i})
            x("gemm", "kernel", 0, 7, lo, 3 * MS,
              {"device": 0, "stream": 7, "flops": 6e9})
            x("Memcpy HtoD (Host -> Device)", "gpu_memcpy", 0, 7,
              lo + 4 * MS, MS, {"device": 0, "stream": 7, "bytes": 4096})
        for i in range(16):
            x("ncclKernel_AllReduce_RING_LL_Sum_float", "kernel", 1, 9,
              t0 + 5 * MS + i * 100 * MS, 40 * MS, {"device": 1, "stream": 9})
        x("long_kernel", "kernel", 1, 9, t0 + 1605 * MS, 350 * MS,
          {"device": 1, "stream": 9})
        for i in range(4):
            x("ProfilerStep#%d" % i, "user_annotation", 4242, 1,
              t0 + i * 500 * MS, 500 * MS)
        x("aten::mm", "cpu_op", 4242, 1, t0 + 100 * MS, 200 * MS)
        end = t0 + 2000 * MS
        while time.time_ns() < end + 300 * MS:
            time.sleep(0.05)
    lines = []
    for name, cat, pid, tid, lo, dur, args in events:
        e = '{"ph": "X", "cat": %s, "name": %s, "pid": %d, "tid": %d, ' \
            '"ts": %s, "dur": %d.%03d' % (json.dumps(cat), json.dumps(name),
                                         pid, tid, us(base, lo),
                                         dur // 1000, dur % 1000)
        if args is not None:
            e += ', "args": %s' % json.dumps(args)
        lines.append(e + "}")
    lines.append('{"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, '
                 '"args": {"labels": "GPU 0"}}')
    with open(out + ".tmp", "w") as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [],\n'
                '"traceEvents": [\n' + ",\n".join(lines) + "\n],\n"
                '"displayTimeUnit": "ms", "baseTimeNanoseconds": %d}\n'
                % base)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    try:
        main()
    except spyremon.SpyremonError as e:
        sys.exit("ops_job: %s" % e)
