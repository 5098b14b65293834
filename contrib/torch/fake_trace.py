#!/usr/bin/python3
"""profile_demo.py without torch: the same run and the same kind of trace.

For hosts where torch cannot be imported.  It runs the same schedule (one
wait, one warmup, N active iterations), keeping the CPU busy for about
--step-seconds per iteration, and writes the trace that Debian's torch 1.13
(built without Kineto) would write for it: a bare JSON array of X events,
ts and dur in integer microseconds from the moment recording starts, with
ProfilerStep#<i-1> around iteration_<i> (torch 1.13 names each step after
the one before it) and aten op events inside.  Every time in it is
measured, not made up, so the trace's durations are those of the run.

The window opens when recording starts and closes when the last active
iteration ends, as in profile_demo.py, so --align-window lines the trace
up with the samples.  Standard library only.

usage: fake_trace.py [--tag TAG] [--out FILE] [--iterations N]
                     [--socket PATH] [--step-seconds S]
"""

import gzip
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import spyremon  # noqa: E402
from jobargs import parse_args  # noqa: E402

WAIT, WARMUP = 1, 1
LAYERS = 3              # per iteration: aten::linear (aten::t, aten::addmm), aten::relu


class Recorder:
    """X events on a clock that starts at zero(), in order of their start."""

    def __init__(self):
        self.t0 = None
        self.events = []

    def zero(self):
        self.t0 = time.perf_counter_ns()

    def span(self, name):
        return _Span(self, name)


class _Span:
    def __init__(self, rec, name):
        self.rec = rec
        self.ev = None
        self.name = name

    def __enter__(self):
        if self.rec.t0 is not None:
            self.ev = {"name": self.name, "ph": "X",
                       "ts": (time.perf_counter_ns() - self.rec.t0) // 1000,
                       "dur": 0, "tid": 1, "pid": "CPU functions", "args": {}}
            self.rec.events.append(self.ev)
        return self

    def __exit__(self, *exc):
        if self.ev is not None:
            end = (time.perf_counter_ns() - self.rec.t0) // 1000
            self.ev["dur"] = end - self.ev["ts"]
        return False


def spin(seconds):
    """Keep the CPU busy for seconds."""
    deadline = time.perf_counter() + seconds
    x = 1
    while time.perf_counter() < deadline:
        for _ in range(1000):
            x = (x * 1103515245 + 12345) & 0x7fffffff
    return x


def iteration(rec, i, seconds):
    share = seconds / LAYERS
    with rec.span("iteration_%d" % i):
        for _ in range(LAYERS):
            with rec.span("aten::linear"):
                with rec.span("aten::t"):
                    spin(share * 0.01)
                with rec.span("aten::addmm"):
                    spin(share * 0.89)
            with rec.span("aten::relu"):
                spin(share * 0.1)


def write_trace(path, events):
    opener = gzip.open if path.endswith(".gz") else open
    tmp = path + ".tmp"
    with opener(tmp, "wt") as f:
        json.dump(events, f)
    os.replace(tmp, path)


def main():
    a = parse_args("A profiled run without torch, "
                   "inside a spyremon window.")
    rec = Recorder()
    total = WAIT + WARMUP + a.iterations
    wid = None
    try:
        for i in range(WAIT + WARMUP):
            iteration(rec, i, a.step_seconds)
        rec.zero()
        t0 = time.monotonic()
        for i in range(WAIT + WARMUP, total):
            with rec.span("ProfilerStep#%d" % (i - 1)):
                if wid is None:
                    wid = spyremon.begin(a.tag, socket=a.socket,
                                         workload="fake-profile-demo",
                                         iterations=a.iterations)
                iteration(rec, i, a.step_seconds)
        secs = time.monotonic() - t0
    except BaseException:
        # the window never outlives the run, also when it failed
        if wid is not None:
            try:
                spyremon.end(id=wid, socket=a.socket)
            except spyremon.SpyremonError:
                pass
        raise
    spyremon.end(id=wid, socket=a.socket)
    write_trace(a.out, rec.events)
    print("fake_trace: no torch, window %d (%s), iterations %d..%d "
          "recorded, %.2f s each, trace %s"
          % (wid, a.tag, WAIT + WARMUP, total - 1, secs / a.iterations, a.out))


if __name__ == "__main__":
    try:
        main()
    except spyremon.SpyremonError as e:
        sys.exit("fake_trace: %s" % e)
