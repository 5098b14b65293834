#!/usr/bin/python3
"""A small torch.profiler job on the CPU, inside a spyremon window.

The profiler pattern of the torch-spyre methodology: a schedule of one
wait step, one warmup step and N active steps, each iteration wrapped in
record_function("iteration_<i>"), the Chrome trace written when the
profiler hands it over (on_trace_ready); then one more iteration, which the
profiler no longer records, as a run goes on past the steps it profiles.
Each iteration repeats a few matrix products until --step-seconds have
passed (by the monotonic clock), however fast or busy the CPU is.

The window brackets the profiled steps and ends after the last iteration,
when the profiler has stopped: that iteration keeps it open past the last
step's end by more than a fine sampling interval, so that the samples
covering that end are fine ones.  Where it opens depends on the trace:

 - torch with Kineto (any pip wheel of torch 2) writes absolute times
   (baseTimeNanoseconds): the window opens before the profiler starts, and
   "spyremon export --trace OUT --steps" places the trace by its own
   clock;
 - without Kineto (Debian's python3-torch 1.13) the trace is a bare array
   whose ts are microseconds from the moment the profiler starts
   recording, the first active step: the window opens right then, its
   metadata gathered beforehand so that the begin is one request to the
   daemon (about a millisecond), and

       spyremon export --trace OUT --align-window TAG --steps

   puts the trace's first event at the window's begin.

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


def iterate(x, w1, w2, seconds):
    """layer() again and again until seconds have passed on the monotonic
    clock: an iteration lasts --step-seconds (plus one call) whatever the
    CPU's speed or load.  A call count calibrated up front was not enough:
    on a machine whose speed changed after the calibration the iterations
    ended in 0.17 s instead of 0.3 s, and the trace then spanned fewer
    samples than the run was meant to."""
    deadline = time.monotonic() + seconds
    while True:
        layer(x, w1, w2)
        if time.monotonic() >= deadline:
            return


def recording(prof):
    return prof.current_action in (ProfilerAction.RECORD,
                                   ProfilerAction.RECORD_AND_SAVE)


def kineto():
    """Whether this torch's profiler writes Kineto traces (absolute time)."""
    available = getattr(torch.autograd, "kineto_available", None)
    return bool(available and available())


def main():
    a = parse_args("A torch.profiler job inside a "
                   "spyremon window.")
    torch.manual_seed(0)
    x = torch.randn(SIZE, SIZE)
    w1 = torch.randn(SIZE, SIZE) / SIZE ** 0.5
    w2 = torch.randn(SIZE, SIZE) / SIZE ** 0.5
    absolute = kineto()
    # gathered now: the begin is then one request, not a git subprocess
    meta = spyremon.collect()
    meta.update(workload="torch-profile-demo", iterations=a.iterations)
    wid = None

    def open_window():
        return spyremon.begin(a.tag, meta=meta, socket=a.socket, record=())

    def trace_ready(prof):
        prof.export_chrome_trace(a.out)

    active = range(WAIT + WARMUP, WAIT + WARMUP + a.iterations)
    total = WAIT + WARMUP + a.iterations + 1
    t0 = t1 = None
    try:
        if absolute:
            wid = open_window()
        with profile(activities=[ProfilerActivity.CPU],
                     schedule=schedule(wait=WAIT, warmup=WARMUP,
                                       active=a.iterations, repeat=1),
                     on_trace_ready=trace_ready) as prof:
            for i in range(total):
                with record_function("iteration_%d" % i):
                    iterate(x, w1, w2, a.step_seconds)
                prof.step()
                if t0 is None and recording(prof):
                    if wid is None:
                        wid = open_window()
                    t0 = time.monotonic()
                if i == active[-1]:
                    t1 = time.monotonic()
    finally:
        # the window never outlives the run, also when it failed
        if wid is not None:
            try:
                spyremon.end(id=wid, socket=a.socket)
            except spyremon.SpyremonError as e:
                print("profile_demo: %s" % e, file=sys.stderr)
    print("profile_demo: torch %s (%s), window %d (%s), iterations %d..%d "
          "recorded, %.2f s each, trace %s"
          % (torch.__version__, "Kineto: absolute time" if absolute else
             "no Kineto: no absolute time", wid, a.tag, active.start,
             active[-1], (t1 - t0) / a.iterations, a.out))


if __name__ == "__main__":
    try:
        main()
    except spyremon.SpyremonError as e:
        sys.exit("profile_demo: %s" % e)
