#!/usr/bin/python3
"""profile_demo.py without torch: the same run and the trace Kineto writes.

For hosts where torch cannot be imported.  It runs the same schedule as
profile_demo.py (one wait, one warmup, N active iterations, then one more
that the profiler no longer records), keeping the CPU busy for about
--step-seconds per iteration, and writes the trace that torch.profiler
with Kineto (any pip wheel of torch 2) writes for the active steps: a JSON
object with the header members Kineto writes (schemaVersion,
deviceProperties, distributedInfo as for a job of one rank, record_shapes,
trace_id) and
traceEvents, then traceName, displayTimeUnit and baseTimeNanoseconds.
Every event's ts is its CLOCK_REALTIME time less baseTimeNanoseconds, in
microseconds with three decimals, as Kineto writes it (its base is the
start of the current quarter of an average Gregorian year, 7889238 s);
dur likewise.  ProfilerStep#<i> is around iteration_<i> (record_function,
cat user_annotation), with aten op events (cat cpu_op) inside, the
process and thread metadata, the "PyTorch Profiler (0)" span of the
recording and its start and end instants.  Every host time in it is
measured, not made up, so the trace's durations are those of the run.
As on a host with a card, each aten::addmm and aten::relu launches a
kernel (cudaLaunchKernel, cat cuda_runtime, measured) that runs on card 0
(pid 0, stream 7, cat kernel), the two linked by args.correlation as
Kineto links them; the card is modelled (the only times not measured):
it starts a kernel 5 µs after its launch returns, or when the one before
ends, and runs it for 40 % of its op's time on the host, so that it
waits for the host between kernels (export --breakdown: host-bound,
its idle time host wait).

The window opens before the profiler starts and ends after the run, so it
brackets every profiled step: the trace has absolute time and needs no
alignment (spyremon export --trace OUT --steps).  The iteration after the
profiled ones keeps the window open past the last step's end by more than
a fine sampling interval, so that the samples covering that end are
fine ones.  Standard library only.

usage: fake_trace.py [--tag TAG] [--out FILE] [--iterations N]
                     [--socket PATH] [--step-seconds S]
"""

import gzip
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import spyremon  # noqa: E402
from jobargs import parse_args  # noqa: E402

WAIT, WARMUP = 1, 1
LAUNCH_SECONDS = 10e-6          # the host's time in cudaLaunchKernel
LAUNCH_LATENCY_NS = 5000        # from the call's return to the kernel's start
DEVICE_SHARE = 0.4              # a kernel's time, of its op's time on the host
LAYERS = 3              # per iteration: aten::linear (aten::t, aten::addmm), aten::relu
BASE_PERIOD_NS = 7889238 * 1000000000   # Kineto's base: 365.2425 / 4 days


class Recorder:
    """Kineto's view of the run: X events with absolute times, only while
    recording, each with Kineto's External id and Ev Idx."""

    def __init__(self):
        # one reading of each clock: perf_counter_ns steps, time_ns places
        self.wall0 = time.time_ns()
        self.perf0 = time.perf_counter_ns()
        self.base = self.wall0 // BASE_PERIOD_NS * BASE_PERIOD_NS
        self.pid = os.getpid()
        self.tid = threading.get_native_id()
        self.recording = False
        self.start = self.stop = None
        self.events = []
        self.card_free = 0      # when the modelled card ends its last kernel
        self.correlation = 0

    def now(self):
        """CLOCK_REALTIME ns, as Kineto converts its clock to."""
        return self.wall0 + time.perf_counter_ns() - self.perf0

    def begin(self):
        self.recording = True
        self.start = self.now()

    def end(self):
        self.recording = False
        self.stop = self.now()

    def span(self, name, cat):
        return _Span(self, name, cat)

    def launch(self, kernel, device_seconds):
        """An asynchronous kernel launch, as Kineto records one on a host
        with a card: the runtime call (measured) and the kernel on card 0,
        stream 7, linked by their correlation id.  The card is modelled:
        it starts the kernel LAUNCH_LATENCY_NS after the call returns, or
        when its previous kernel ends, and runs it for device_seconds."""
        if not self.recording:
            return
        self.correlation += 1
        t0 = self.now()
        spin(LAUNCH_SECONDS)
        t1 = self.now()
        self.events.append({"name": "cudaLaunchKernel", "cat": "cuda_runtime",
                            "start": t0, "end": t1,
                            "correlation": self.correlation})
        k0 = max(t1 + LAUNCH_LATENCY_NS, self.card_free)
        self.card_free = k0 + int(device_seconds * 1e9)
        self.events.append({"name": kernel, "cat": "kernel", "start": k0,
                            "end": self.card_free,
                            "correlation": self.correlation})


class _Span:
    def __init__(self, rec, name, cat):
        self.rec, self.name, self.cat, self.ev = rec, name, cat, None

    def __enter__(self):
        if self.rec.recording:
            self.ev = {"name": self.name, "cat": self.cat,
                       "start": self.rec.now(), "end": None}
            self.rec.events.append(self.ev)
        return self

    def __exit__(self, *exc):
        if self.ev is not None:
            self.ev["end"] = self.rec.now()
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
    with rec.span("iteration_%d" % i, "user_annotation"):
        for _ in range(LAYERS):
            with rec.span("aten::linear", "cpu_op"):
                with rec.span("aten::t", "cpu_op"):
                    spin(share * 0.01)
                with rec.span("aten::addmm", "cpu_op"):
                    rec.launch("sgemm_128x64_nn", share * 0.89 * DEVICE_SHARE)
                    spin(share * 0.89)
            with rec.span("aten::relu", "cpu_op"):
                rec.launch("elementwise_kernel_relu", share * 0.1 * DEVICE_SHARE)
                spin(share * 0.1)


def us(rec, t_ns):
    """Kineto's ts: microseconds after the base, three decimals, exact."""
    rel = t_ns - rec.base
    return "%d.%03d" % (rel // 1000, rel % 1000)


def kineto_json(rec, path):
    """The trace as Kineto lays it out, with its times written exactly."""
    lines = []

    def event(fields, ts_ns, dur_ns=None, args=None):
        head = ", ".join("%s: %s" % (json.dumps(k), json.dumps(v))
                         for k, v in fields)
        text = "  {\n    %s, \"ts\": %s" % (head, us(rec, ts_ns))
        if dur_ns is not None:
            text += ", \"dur\": %d.%03d" % (dur_ns // 1000, dur_ns % 1000)
        if args is not None:
            text += ",\n    \"args\": %s" % json.dumps(args)
        lines.append(text + "\n  }")

    # Kineto's order: the CPU events by their start, then the metadata
    for n, e in enumerate(sorted(rec.events, key=lambda e: e["start"])):
        pid, tid = rec.pid, rec.tid
        args = {"External id": n + 1, "Record function id": 0, "Ev Idx": n}
        if e["cat"] == "cuda_runtime":
            args = {"External id": n + 1, "cbid": 211,
                    "correlation": e["correlation"], "stream": "0x7"}
        elif e["cat"] == "kernel":
            pid, tid = 0, 7
            args = {"External id": n + 1, "device": 0, "stream": 7,
                    "correlation": e["correlation"], "kind": "Dispatch Kernel"}
        event([("ph", "X"), ("cat", e["cat"]), ("name", e["name"]),
               ("pid", pid), ("tid", tid)], e["start"],
              e["end"] - e["start"], args)
    for name, args in (("process_name", {"name": "python3"}),
                       ("process_labels", {"labels": "GPU 0"}),
                       ("process_sort_index", {"sort_index": 5000000})):
        event([("name", name), ("ph", "M"), ("pid", 0), ("tid", 0)],
              rec.start, args=args)
    for name, args in (("thread_name", {"name": "stream 7 "}),
                       ("thread_sort_index", {"sort_index": 7})):
        event([("name", name), ("ph", "M"), ("pid", 0), ("tid", 7)],
              rec.start, args=args)
    for name, args in (("process_name", {"name": "python3"}),
                       ("process_labels", {"labels": "CPU"}),
                       ("process_sort_index", {"sort_index": rec.pid})):
        event([("name", name), ("ph", "M"), ("pid", rec.pid), ("tid", 0)],
              rec.start, args=args)
    for name, args in (("thread_name", {"name": "thread %d (python3)" % rec.tid}),
                       ("thread_sort_index", {"sort_index": rec.tid})):
        event([("name", name), ("ph", "M"), ("pid", rec.pid),
               ("tid", rec.tid)], rec.start, args=args)
    event([("ph", "X"), ("cat", "Trace"), ("pid", "Spans"),
           ("tid", "PyTorch Profiler"), ("name", "PyTorch Profiler (0)")],
          rec.start, rec.stop - rec.start, {"Op count": 0})
    event([("name", "process_sort_index"), ("ph", "M"), ("pid", "Spans"),
           ("tid", 0)], rec.start, args={"sort_index": 536870912})
    event([("name", "Iteration Start: PyTorch Profiler"), ("ph", "i"),
           ("s", "g"), ("pid", "Traces"), ("tid", "Trace PyTorch Profiler")],
          rec.start)
    event([("name", "Record Window End"), ("ph", "i"), ("s", "g"),
           ("pid", ""), ("tid", "")], rec.stop)
    header = [
        ("schemaVersion", 1),
        ("deviceProperties", []),
        # a job of one rank, as torch.distributed with gloo describes it
        ("distributedInfo", {"backend": "gloo", "rank": 0, "world_size": 1,
                             "pg_count": 1, "pg_config": [
                                 {"pg_name": "0", "pg_desc": "default_pg",
                                  "backend_config": "cpu:gloo", "pg_size": 1,
                                  "ranks": [0]}]}),
        ("record_shapes", 0),
        ("trace_id", "%032X" % random.getrandbits(128)),
    ]
    text = "{\n"
    text += "".join("  %s: %s,\n" % (json.dumps(k), json.dumps(v))
                    for k, v in header)
    text += "  \"traceEvents\": [\n" + ",\n".join(lines) + "\n  ],\n"
    text += "  \"traceName\": %s,\n" % json.dumps(path)
    text += "  \"displayTimeUnit\": \"ms\",\n"
    text += "  \"baseTimeNanoseconds\": %d\n}\n" % rec.base
    return text


def write_trace(rec, path):
    opener = gzip.open if path.endswith(".gz") else open
    tmp = path + ".tmp"
    with opener(tmp, "wt") as f:
        f.write(kineto_json(rec, path))
    os.replace(tmp, path)


def main():
    a = parse_args("A profiled run without torch, "
                   "inside a spyremon window.")
    rec = Recorder()
    active = range(WAIT + WARMUP, WAIT + WARMUP + a.iterations)
    total = WAIT + WARMUP + a.iterations + 1
    with spyremon.window(a.tag, socket=a.socket, workload="fake-profile-demo",
                         iterations=a.iterations) as wid:
        for i in range(total):
            if i == active.start:
                rec.begin()
            with rec.span("ProfilerStep#%d" % i, "user_annotation"):
                iteration(rec, i, a.step_seconds)
            if i == active[-1]:
                # the trace is handed over: on_trace_ready writes it
                rec.end()
                write_trace(rec, a.out)
    secs = (rec.stop - rec.start) / 1e9
    print("fake_trace: without torch, window %d (%s), iterations %d..%d "
          "recorded (Kineto's trace format), %.2f s each, trace %s"
          % (wid, a.tag, active.start, active[-1], secs / a.iterations, a.out))


if __name__ == "__main__":
    try:
        main()
    except spyremon.SpyremonError as e:
        sys.exit("fake_trace: %s" % e)
