#!/usr/bin/env python3
"""Make a large Kineto-shaped trace of a job on one card, for the
breakdown's benchmark.

usage: mkbdtrace.py OUT.json MEGABYTES START_NS

Steps of 20 ms (ProfilerStep#N, cat user_annotation) one after another
from START_NS, each with 40 operators: an aten::mm (cpu_op) whose
cudaLaunchKernel (cuda_runtime) launches a 250 µs kernel on card 0
(pid 0, stream 7, args.device and args.stream) 20 µs later, the two
linked by a correlation id of their own, as Kineto links them; every
fourth with a 40 µs host-to-device copy (cudaMemcpyAsync, gpu_memcpy);
and a cudaDeviceSynchronize that ends the step.  ts are µs after
baseTimeNanoseconds with three decimals, as Kineto writes them.  Steps
are added until OUT holds at least MEGABYTES * 10^6 bytes; written as
made.  Prints the steps and events.
"""
import sys

STEP_US = 20000
OPS = 40


def main():
    out, mb, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    base = start - start % (7889238 * 10**9)
    t0 = (start - base) // 1000          # µs after the base
    want = mb * 10**6
    pid, tid = 4242, 4242
    corr = 0
    steps = events = 0
    with open(out, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [],\n'
                '  "distributedInfo": {"backend": "nccl", "rank": 0, '
                '"world_size": 1},\n  "traceEvents": [\n')
        size = 0
        first = True

        def ev(text):
            nonlocal first, size, events
            if not first:
                f.write(",\n")
            first = False
            f.write(text)
            size += len(text) + 2
            events += 1

        while size < want:
            s = t0 + steps * STEP_US
            ev('  {"ph": "X", "cat": "user_annotation", "name": '
               '"ProfilerStep#%d", "pid": %d, "tid": %d, "ts": %d.000, '
               '"dur": %d.000, "args": {"External id": %d}}'
               % (steps, pid, tid, s, STEP_US, steps))
            for k in range(OPS):
                h = s + 100 + k * 480
                corr += 1
                ev('  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", '
                   '"pid": %d, "tid": %d, "ts": %d.000, "dur": 300.000, '
                   '"args": {"External id": %d, "Sequence number": %d}}'
                   % (pid, tid, h, corr, k))
                ev('  {"ph": "X", "cat": "cuda_runtime", "name": '
                   '"cudaLaunchKernel", "pid": %d, "tid": %d, "ts": %d.500, '
                   '"dur": 8.000, "args": {"External id": %d, "cbid": 211, '
                   '"correlation": %d}}' % (pid, tid, h + 250, corr, corr))
                ev('  {"ph": "X", "cat": "kernel", "name": '
                   '"ampere_sgemm_128x64_nn", "pid": 0, "tid": 7, '
                   '"ts": %d.250, "dur": 250.000, "args": {"External id": '
                   '%d, "device": 0, "stream": 7, "correlation": %d, '
                   '"grid": [64, 1, 1], "block": [128, 1, 1]}}'
                   % (h + 278, corr, corr))
                if k % 4 == 3:
                    corr += 1
                    ev('  {"ph": "X", "cat": "cuda_runtime", "name": '
                       '"cudaMemcpyAsync", "pid": %d, "tid": %d, '
                       '"ts": %d.000, "dur": 6.000, "args": {"External id": '
                       '%d, "cbid": 41, "correlation": %d}}'
                       % (pid, tid, h + 270, corr, corr))
                    ev('  {"ph": "X", "cat": "gpu_memcpy", "name": '
                       '"Memcpy HtoD (Pageable -> Device)", "pid": 0, '
                       '"tid": 7, "ts": %d.000, "dur": 40.000, "args": '
                       '{"External id": %d, "device": 0, "stream": 7, '
                       '"correlation": %d, "bytes": 1048576}}'
                       % (h + 540, corr, corr))
            ev('  {"ph": "X", "cat": "cuda_runtime", "name": '
               '"cudaDeviceSynchronize", "pid": %d, "tid": %d, "ts": %d.000, '
               '"dur": 500.000, "args": {"External id": %d, "cbid": 165, '
               '"correlation": %d}}'
               % (pid, tid, s + STEP_US - 600, corr, corr + 1))
            corr += 1
            steps += 1
        f.write('\n  ],\n  "displayTimeUnit": "ms",\n'
                '  "baseTimeNanoseconds": %d\n}\n' % base)
    print("steps %d events %d" % (steps, events))


if __name__ == "__main__":
    main()
