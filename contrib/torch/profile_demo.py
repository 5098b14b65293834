#!/usr/bin/python3
"""A small torch.profiler job on the CPU, inside a spyremon window.

The profiler pattern of the torch-spyre methodology: a schedule of one
wait step, one warmup step and N active steps, each iteration wrapped in
record_function("iteration_<i>"), the Chrome trace written when the
profiler hands it over (on_trace_ready).  Each iteration is a few matrix
products sized so that it takes about --step-seconds on this CPU.

The window spans what the trace records.  Without Kineto (Debian's
python3-torch 1.13) the trace has no absolute time: its ts are
microseconds from the moment the profiler starts recording, which is the
first active step, not the start of the run.  So the window opens right
after the profiler has started recording, and closes when the trace is
handed over, before it is written; then

    spyremon export --trace OUT --align-window TAG --steps

puts the trace's first event at the window's begin, within the time of
one request to the daemon (about a millisecond).  The wait and warmup
steps run before the window.

usage: profile_demo.py [--tag TAG] [--out FILE] [--iterations N]
                       [--socket PATH] [--step-seconds S]

Prints one line: the window, the iterations the trace holds and where it
is.  Needs torch (Debian: apt-get install python3-torch) and spyremond's
socket ($SPYREMON_SOCKET, or --socket).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import spyremon  # noqa: E402
from jobargs import parse_args  # noqa: E402

try:
    import torch
    from torch.profiler import (ProfilerAction, ProfilerActivity, profile,
                                record_function, schedule)
except ImportError as e:
    sys.exit("profile_demo: cannot import torch (%s): on Debian, "
             "apt-get install python3-torch" % e)

WAIT, WARMUP = 1, 1
SIZE = 256              # the matrices are SIZE x SIZE float32


def layer(x, w1, w2):
    """Two matrix products with a ReLU between them: three aten ops."""
    return torch.relu(x @ w1) @ w2


def calibrate(x, w1, w2, seconds):
    """How many layer() calls take about seconds on this CPU."""
    layer(x, w1, w2)
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            layer(x, w1, w2)
        t = time.perf_counter() - t0
        if t >= 0.05 or n >= 1 << 16:
            break
        n *= 2
    return max(1, round(seconds * n / t))


def recording(prof):
    return prof.current_action in (ProfilerAction.RECORD,
                                   ProfilerAction.RECORD_AND_SAVE)


def main():
    a = parse_args("A torch.profiler job inside a "
                   "spyremon window.")
    torch.manual_seed(0)
    x = torch.randn(SIZE, SIZE)
    w1 = torch.randn(SIZE, SIZE) / SIZE ** 0.5
    w2 = torch.randn(SIZE, SIZE) / SIZE ** 0.5
    reps = calibrate(x, w1, w2, a.step_seconds)
    state = {"id": None, "ended": False, "t_end": None}

    def end_window():
        if state["id"] is not None and not state["ended"]:
            state["ended"] = True
            state["t_end"] = time.monotonic()
            spyremon.end(id=state["id"], socket=a.socket)

    def trace_ready(prof):
        # the trace ends here: end the window, then write the trace
        try:
            end_window()
        finally:
            prof.export_chrome_trace(a.out)

    total = WAIT + WARMUP + a.iterations
    t0 = None
    try:
        with profile(activities=[ProfilerActivity.CPU],
                     schedule=schedule(wait=WAIT, warmup=WARMUP,
                                       active=a.iterations, repeat=1),
                     on_trace_ready=trace_ready) as prof:
            for i in range(total):
                with record_function("iteration_%d" % i):
                    for _ in range(reps):
                        layer(x, w1, w2)
                prof.step()
                if state["id"] is None and recording(prof):
                    state["id"] = spyremon.begin(
                        a.tag, socket=a.socket, workload="torch-profile-demo",
                        torch=torch.__version__, iterations=a.iterations)
                    t0 = time.monotonic()
    finally:
        # the window never outlives the run, also when it failed
        try:
            end_window()
        except spyremon.SpyremonError as e:
            print("profile_demo: %s" % e, file=sys.stderr)
    secs = state["t_end"] - t0
    print("profile_demo: torch %s, window %d (%s), iterations %d..%d "
          "recorded, %.2f s each, trace %s"
          % (torch.__version__, state["id"], a.tag, WAIT + WARMUP, total - 1,
             secs / a.iterations, a.out))


if __name__ == "__main__":
    try:
        main()
    except spyremon.SpyremonError as e:
        sys.exit("profile_demo: %s" % e)
