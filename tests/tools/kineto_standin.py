#!/usr/bin/env python3
"""A stand-in for a PyTorch process whose profiler library, Kineto, polls a
local daemon for trace requests (KINETO_USE_DAEMON=1), for the tests of
spyremon capture on hosts without torch.

It follows libkineto (pytorch/kineto: IpcFabricConfigClient.cpp,
ConfigLoader.cpp, Config.cpp, AsyncActivityProfilerHandler.cpp,
GenericActivityProfiler.cpp, output_json.cpp; the ipcfabric headers of
dynolog it vendors) as read from its public sources, and was checked
against libkineto itself (bench/README.md, "capture.sh"):

- The socket: AF_UNIX SOCK_DGRAM.  It binds "\\0dynoconfigclient<uuid4>\\0"
  and sends to "\\0dynolog\\0", the trailing NUL counted in the address
  length; with KINETO_IPC_SOCKET_DIR set, both are files in that folder
  (DIR/dynoconfigclient<uuid4>, DIR/dynolog).  A reply from anywhere else
  is refused.
- A datagram: struct { size_t size; char type[32]; } and size bytes.  A
  poll is type "req" with struct { int type; int n; int64_t jobid;
  int32_t pids[n]; }: type 2 (ACTIVITIES) when it can take a trace, 0
  while one is under way (warm-up, tracing, writing); jobid is
  SLURM_JOB_ID or 0; pids is itself, then its ancestors up to, not
  including, PID 1, at most 11 in all.
- Polls: the config thread polls at its start and then every
  ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS (5 s; from the file KINETO_CONFIG
  names, as Kineto reads it, or from the environment variable of that
  name, this stand-in's shortcut), counted from the start of the last
  poll.  A send that finds no daemon is retried 10 times after 10 ms
  doubling (10.23 s in all) when the name is abstract (ECONNREFUSED);
  a missing socket file fails at once.  After sending it tries to read a
  reply 9 times, 10 ms apart, the first at once; a reply that comes later
  stays queued and is read at the next poll that reaches the daemon, as
  the reply to that one.
- The reply: "req" with the config text, KEY=VALUE lines; size 0 is
  nothing to do.  ACTIVITIES_LOG_FILE is taken only under
  KINETO_ONDEMAND_TRACE_DIR (default /tmp/) and without "..", else the
  trace goes to /tmp/libkineto_activities_<pid>.json; _<pid> is inserted
  before .pt.trace.json, else before .json.  PROFILE_START_TIME (epoch
  ms) more than 10 s in the past stops the parse (the keys after it are
  lost, the start stays unset); 0 or unset means the parse time + warm-up
  + 2 s.  ACTIVITIES_DURATION_MSECS (default 500), _SECS,
  ACTIVITIES_WARMUP_PERIOD_SECS (default 5), PROFILE_START_ITERATION,
  PROFILE_START_ITERATION_ROUNDUP, ACTIVITIES_ITERATIONS,
  ACTIVITIES_WARMUP_ITERATIONS, REQUEST_TRACE_ID.
- Taking a request: refused while a trace is under way ("profiler busy")
  or another request waits.  A timed request is looked at by the profiler
  thread once a second (kControllerIntervalMsecs), its ticks starting a
  second after the thread: at the first tick within a second of start
  minus warm-up it starts the warm-up, unless start is in the past or
  closer than the warm-up ("Not starting tracing"), which drops it.  The
  trace starts at the tick woken at the start, ends at the one woken at
  the end, and is written at the next tick, a second later.  A request
  by iterations starts at the next step (rounded up), and ends after
  ACTIVITIES_ITERATIONS steps.
- The trace: Kineto's JSON (schemaVersion, deviceProperties, trace_id,
  host_name, displayTimeUnit, baseTimeNanoseconds floored to Kineto's
  3-month unit, traceEvents with ts in relative us and three decimals,
  traceName), with a "PyTorch Profiler (0)" span over the trace, a
  ProfilerStep#N annotation per step begun and ended inside it, and
  "Record Window End"; written to FILE.tmp, then renamed to FILE.

Options: --children N runs a launcher that starts N profiled children
(with RANK and WORLD_SIZE), --stagger-ms apart (so that they poll at
different points of the interval), and does not poll itself; --step-ms, the
length of a step; --seconds, how long to run; --own-trace AT:DUR, a trace
of the process's own (torch.profiler) from AT s for DUR s, during which
it polls busy; --ondemand-dir DIR sets KINETO_ONDEMAND_TRACE_DIR from
inside the process, as a job's own code may; --log-tag, ignored, marks
the command line for a test to find it by; --import-torch imports torch
(where the python running it has it), as a job has it mapped.  It prints "pid N" for
itself and each child, and logs what Kineto logs to stderr.
"""

import argparse
import errno
import json
import os
import re
import signal
import socket
import struct
import sys
import threading
import time
import uuid

TICK = 1.0                  # Kineto's kControllerIntervalMsecs
MAX_REQUEST_AGE = 10.0      # a start further in the past fails the parse
TRIMONTH_NS = 7889238 * 10**9
HEADER = struct.Struct("=Q32s")
REQ = struct.Struct("=iiq")
ACTIVITIES = 2


def log(level, msg):
    sys.stderr.write("%s:%s %d %s\n" % (
        level, time.strftime("%H:%M:%S"), os.getpid(), msg))
    sys.stderr.flush()


def now_ns():
    return time.time_ns()


def dur(ns):
    """ns as Kineto writes ts and dur: us with three decimals."""
    us, frac = divmod(ns, 1000)
    return "%d.%03d" % (us, frac)


def ancestors():
    """Itself, then its ancestors up to (not including) PID 1: at most 11."""
    pids = []
    pid = os.getpid()
    for i in range(11):
        if i > 0 and pid <= 1:
            break
        pids.append(pid)
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
            pid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def poll_interval():
    val = os.environ.get("ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS")
    path = os.environ.get("KINETO_CONFIG", "/etc/libkineto.conf")
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                if k.strip() == "ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS":
                    val = v.strip()
    except OSError:
        pass
    try:
        return max(1, int(val)) if val else 5
    except ValueError:
        return 5


class Config:
    """One on-demand config, parsed as Config::parse does."""

    def __init__(self):
        self.parsed_at = time.time()
        self.log_file = "/tmp/libkineto_activities_%d.json" % os.getpid()
        self.start = 0.0                # epoch s; 0: unset
        self.duration = 0.5
        self.warmup = 5.0
        self.start_iter = -1
        self.roundup = -1
        self.iterations = 0
        self.warmup_iters = 0
        self.trace_id = ""

    def by_iterations(self):
        return self.start_iter >= 0 and self.iterations > 0

    def parse(self, text):
        allowed = os.environ.get("KINETO_ONDEMAND_TRACE_DIR") or "/tmp/"
        if not allowed.endswith("/"):
            allowed += "/"
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            kv = [p.strip() for p in line.split("=")]
            if len(kv) != 2:
                log("ERROR", "Invalid config line: %s" % line)
                return False
            key, val = kv
            try:
                self.option(key, val, allowed)
            except ValueError as e:
                log("ERROR", "Failed to parse config: %s ; line: %s" % (e, line))
                return False
        self.validate()
        return True

    def option(self, key, val, allowed):
        if key == "ACTIVITIES_LOG_FILE":
            if not val.startswith(allowed) or ".." in val:
                log("WARNING", "Ignoring on-demand ACTIVITIES_LOG_FILE outside "
                    "allowed directory %s: %s (trace will use the default "
                    "path)" % (allowed, val))
                return
            pid = os.getpid()
            if ".pt.trace.json" in val:
                val = val.replace(".pt.trace.json", "_%d.pt.trace.json" % pid, 1)
            elif ".json" in val:
                val = val.replace(".json", "_%d.json" % pid, 1)
            self.log_file = val
        elif key == "PROFILE_START_TIME":
            ms = int(val)
            if ms != 0 and time.time() - ms / 1000.0 > MAX_REQUEST_AGE:
                raise ValueError("Invalid PROFILE_START_TIME: start time is "
                                 "more than 10s in the past")
            self.start = ms / 1000.0
        elif key == "ACTIVITIES_DURATION_MSECS":
            self.duration = int(val) / 1000.0
        elif key == "ACTIVITIES_DURATION_SECS":
            self.duration = float(int(val))
        elif key == "ACTIVITIES_WARMUP_PERIOD_SECS":
            self.warmup = float(int(val))
        elif key == "PROFILE_START_ITERATION":
            self.start_iter = int(val)
        elif key == "PROFILE_START_ITERATION_ROUNDUP":
            self.roundup = int(val)
        elif key == "ACTIVITIES_ITERATIONS":
            self.iterations = int(val)
        elif key == "ACTIVITIES_WARMUP_ITERATIONS":
            self.warmup_iters = int(val)
        elif key == "REQUEST_TRACE_ID":
            self.trace_id = val
        else:
            log("WARNING", "Unrecognized config line: %s=%s" % (key, val))

    def validate(self):
        if self.start == 0:
            self.start = self.parsed_at + self.warmup + 2 * TICK
        if self.roundup == 0:
            self.roundup = -1
        if self.roundup > 0 and self.start_iter < 0:
            self.start_iter = 0


class Profiler:
    """The async handler and the profiler, reduced to what a capture sees."""

    WAIT, WARMUP, COLLECT, PROCESS = "wait", "warmup", "collect", "process"

    def __init__(self):
        self.lock = threading.RLock()
        self.state = self.WAIT
        self.pending = None
        self.cfg = None
        self.thread = None
        self.iteration = -1
        self.steps = []             # (n, t0_ns, t1_ns) of the trace
        self.start_ns = self.end_ns = 0
        self.end_iter = 0
        self.base_ns = now_ns() // TRIMONTH_NS * TRIMONTH_NS
        self.own_until = 0.0

    def active(self):
        return self.state != self.WAIT or time.time() < self.own_until

    # -- requests from the daemon (the config thread) --

    def accept(self, cfg):
        with self.lock:
            if self.active():
                log("WARNING", "Ignored request - profiler busy")
                return
            if cfg.by_iterations() and self.iteration < 0:
                # Kineto: a duration-based fallback for a job with no steps yet
                log("INFO", "Config with duration-based profiling, ignoring "
                    "iteration count requirement")
                cfg.start_iter = -1
            if self.pending is not None:
                log("WARNING", "Ignored request - another profile request "
                    "is pending.")
                return
            self.pending = cfg
            if self.thread is None:
                self.thread = threading.Thread(target=self.loop, daemon=True)
                self.thread.start()

    def own_trace(self, duration):
        """A synchronous trace of the job's own: it cancels a pending request."""
        with self.lock:
            if self.pending is not None:
                log("ERROR", "Cancelling current trace request in order to "
                    "start higher priority synchronous request")
                self.pending = None
            self.own_until = time.time() + duration

    def configure(self, now):
        cfg, self.pending = self.pending, None
        if not cfg.by_iterations():
            if cfg.start < now:
                log("WARNING", "Not starting tracing - start timestamp is in "
                    "the past. Time difference (ms): %d" %
                    ((now - cfg.start) * 1000))
                log("WARNING", "Trace request could not start at the "
                    "scheduled time")
                return
            if cfg.start - now < cfg.warmup:
                log("WARNING", "Not starting tracing - insufficient time for "
                    "warmup. Time to warmup (ms): %d" %
                    ((cfg.start - now) * 1000))
                log("WARNING", "Trace request could not start at the "
                    "scheduled time")
                return
        self.cfg = cfg
        self.steps = []
        self.state = self.WARMUP
        log("INFO", "Tracing starting in %ds" % max(0, cfg.start - now))

    # -- the profiler thread: a tick a second --

    def loop(self):
        wake = time.time() + TICK
        while True:
            now = time.time()
            while now < wake:
                time.sleep(wake - now)
                now = time.time()
            with self.lock:
                cfg = self.pending
                if (cfg is not None and self.state == self.WAIT and
                        not cfg.by_iterations() and
                        now + TICK >= cfg.start - cfg.warmup):
                    log("INFO", "Received on-demand activity trace request "
                        "by profile timestamp = %d" % (cfg.start * 1e9))
                    self.configure(now)
            while wake < now:
                wake += TICK
            with self.lock:
                if self.state != self.WAIT:
                    wake = self.run_step(now, wake, -1)

    def run_step(self, now, wake, iteration):
        cfg = self.cfg
        by_iter = cfg.by_iterations()
        if self.state == self.WARMUP:
            if by_iter and iteration >= 0:
                done = iteration >= cfg.start_iter
            else:
                done = not by_iter and iteration < 0 and now >= cfg.start
            if done:
                if not by_iter and now > cfg.start + 0.010:
                    log("INFO", "Tracing started %d ms late!" %
                        ((now - cfg.start) * 1000))
                else:
                    log("INFO", "Tracing started")
                self.start_ns = int(now * 1e9)
                self.end_iter = cfg.start_iter + cfg.iterations
                self.state = self.COLLECT
                if not by_iter and wake > cfg.start + cfg.duration:
                    wake = cfg.start + cfg.duration
            elif not by_iter and wake > cfg.start:
                wake = cfg.start
        elif self.state == self.COLLECT:
            if by_iter:
                done = iteration >= 0 and iteration >= self.end_iter
            else:
                done = iteration < 0 and now >= cfg.start + cfg.duration
            if done:
                log("INFO", "Tracing complete.")
                self.end_ns = int(now * 1e9)
                self.state = self.PROCESS
            elif (not by_iter and now < cfg.start + cfg.duration and
                  cfg.start + cfg.duration < wake):
                wake = cfg.start + cfg.duration
        elif self.state == self.PROCESS and iteration < 0:
            self.write_trace()
            self.state = self.WAIT
        return wake

    # -- the job's own thread --

    def step(self, n, t0, t1):
        with self.lock:
            if self.state == self.COLLECT and t0 >= self.start_ns:
                self.steps.append((n, t0, t1))
            self.iteration += 1
            it = self.iteration
            cfg = self.pending
            if (cfg is not None and self.state == self.WAIT and
                    cfg.by_iterations() and self.activate_iteration(cfg, it)):
                self.configure(time.time())
            if self.state in (self.WARMUP, self.COLLECT):
                self.run_step(time.time(), time.time() + TICK, it)

    def activate_iteration(self, cfg, it):
        root = cfg.start_iter - cfg.warmup_iters
        if it < root:
            return False
        if it > root:
            start = it + cfg.warmup_iters
            if cfg.roundup > 0:
                rem = start % cfg.roundup
                start += 0 if rem == 0 else cfg.roundup - rem
                cfg.start_iter = start
                return it == cfg.start_iter - cfg.warmup_iters
            cfg.start_iter = start
        return True

    # -- the trace, as ChromeTraceLogger writes it --

    def rel(self, ns):
        """A time as ts: us from the base, three decimals."""
        return dur(ns - self.base_ns)

    def write_trace(self):
        cfg = self.cfg
        pid = os.getpid()
        tid = threading.get_native_id()
        events = []
        for n, t0, t1 in self.steps:
            if t1 <= self.end_ns:
                events.append(
                    '{"ph": "X", "cat": "user_annotation", "name": '
                    '"ProfilerStep#%d", "pid": %d, "tid": %d, "ts": %s, '
                    '"dur": %s, "args": {"External id": %d}}' % (
                        n, pid, tid, self.rel(t0), dur(t1 - t0), n))
        span = self.end_ns - self.start_ns
        events.append(
            '{"ph": "X", "cat": "Trace", "ts": %s, "dur": %s, "pid": "Spans", '
            '"tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", '
            '"args": {"Op count": 0}}' % (
                self.rel(self.start_ns), dur(span)))
        events.append(
            '{"name": "process_sort_index", "ph": "M", "ts": %s, "pid": '
            '"Spans", "tid": 0, "args": {"sort_index": 536870912}}' %
            self.rel(self.start_ns))
        events.append(
            '{"name": "Iteration Start: PyTorch Profiler", "ph": "i", '
            '"s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler", '
            '"ts": %s}' % self.rel(self.start_ns))
        events.append(
            '{"name": "process_name", "ph": "M", "ts": %s, "pid": %d, '
            '"tid": 0, "args": {"name": "python3"}}' % (
                self.rel(self.start_ns), pid))
        events.append(
            '{"ph": "i", "cat": "", "s": "g", "name": "Record Window End", '
            '"pid": "", "tid": "", "ts": %s}' % self.rel(self.end_ns))
        head = ['"schemaVersion": 1', '"deviceProperties": []']
        if cfg.trace_id:
            head.append('"trace_id": %s' % json.dumps(cfg.trace_id))
        head.append('"host_name": %s' % json.dumps(socket.gethostname()))
        rank = os.environ.get("RANK")
        if rank is not None:
            head.append('"distributedInfo": {"backend": "gloo", "rank": %d, '
                        '"world_size": %d}' % (
                            int(rank), int(os.environ.get("WORLD_SIZE", 1))))
        head.append('"displayTimeUnit": "ms"')
        head.append('"baseTimeNanoseconds": %d' % self.base_ns)
        text = ("{\n  " + ",\n  ".join(head) + ',\n  "traceEvents": [\n  ' +
                ",\n  ".join(events) + '\n  ],\n  "traceName": %s\n}\n' %
                json.dumps(cfg.log_file))
        tmp = cfg.log_file + ".tmp"
        try:
            with open(tmp, "w") as f:
                f.write(text)
            log("INFO", "Chrome Trace written to %s" % cfg.log_file)
            try:
                os.remove(cfg.log_file)
            except OSError:
                pass
            os.rename(tmp, cfg.log_file)
            log("INFO", "Renamed the trace file to %s" % cfg.log_file)
        except OSError as e:
            log("ERROR", "Failed to write %s: %s" % (cfg.log_file, e))


class ConfigClient:
    """IpcFabricConfigClient and the ConfigLoader's poll thread."""

    def __init__(self, profiler):
        self.profiler = profiler
        self.dir = os.environ.get("KINETO_IPC_SOCKET_DIR") or None
        self.name = "dynoconfigclient" + str(uuid.uuid4())
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self.sock.bind(self.address(self.name))
        if self.dir:
            os.chmod(os.path.join(self.dir, self.name), 0o666)
        jobid = os.environ.get("SLURM_JOB_ID")
        self.jobid = int(jobid) if jobid else 0
        self.pids = ancestors()

    def address(self, name):
        if self.dir:
            return os.path.join(self.dir, name)
        return b"\0" + name.encode() + b"\0"

    def sync_send(self, data):
        sleep = 0.010
        for i in range(11):
            try:
                self.sock.sendto(data, self.address("dynolog"))
                return True
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.ECONNREFUSED):
                    log("ERROR", "Error when sync_send(): %s" % e.strerror)
                    return False
            if i == 10:
                break
            time.sleep(sleep)
            sleep *= 2
        return False

    def recv(self):
        try:
            data, addr = self.sock.recvfrom(65536)
        except BlockingIOError:
            return None
        if self.dir:
            if not isinstance(addr, str) or not addr.startswith(self.dir + "/"):
                log("FATAL", "Unexpected socket name: %r" % addr)
                os._exit(134)
        elif not isinstance(addr, bytes) or not addr.startswith(b"\0"):
            log("FATAL", "Expected abstract socket, got %r" % addr)
            os._exit(134)
        if len(data) < HEADER.size:
            return b""
        size, _ = HEADER.unpack_from(data)
        return data[HEADER.size:HEADER.size + size]

    def poll(self):
        typ = 0 if self.profiler.active() else ACTIVITIES
        payload = REQ.pack(typ, len(self.pids), self.jobid) + struct.pack(
            "=%di" % len(self.pids), *self.pids)
        msg = HEADER.pack(len(payload), b"req") + payload
        if not self.sync_send(msg):
            return
        # poll_recv(9, 10 ms): a read at once, then one every 10 ms
        for _ in range(9):
            text = self.recv()
            if text is not None:
                if text:
                    self.configure(text.decode("utf-8", "replace"))
                return
            time.sleep(0.010)

    def configure(self, text):
        log("INFO", "Received config from dyno:\n%s" % text)
        cfg = Config()
        cfg.parse(text)
        self.profiler.accept(cfg)

    def loop(self):
        interval = poll_interval()
        while True:
            started = time.time()
            self.poll()
            delay = started + interval - time.time()
            if delay > 0:
                time.sleep(delay)


def profiled(args):
    prof = Profiler()
    if args.ondemand_dir:
        os.environ["KINETO_ONDEMAND_TRACE_DIR"] = args.ondemand_dir
    if os.environ.get("KINETO_USE_DAEMON") is not None:
        client = ConfigClient(prof)
        threading.Thread(target=client.loop, daemon=True).start()
    own = None
    if args.own_trace:
        at, dur = (float(x) for x in args.own_trace.split(":"))
        own = (time.time() + at, dur)
    end = time.time() + args.seconds
    n = 0
    while time.time() < end:
        t0 = now_ns()
        time.sleep(args.step_ms / 1000.0)
        t1 = now_ns()
        if own is not None and time.time() >= own[0]:
            prof.own_trace(own[1])
            own = None
        prof.step(n, t0, t1)
        n += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--children", type=int, default=0)
    ap.add_argument("--stagger-ms", type=int, default=0)
    ap.add_argument("--step-ms", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--own-trace", default=None)
    ap.add_argument("--ondemand-dir", default=None)
    ap.add_argument("--log-tag", default=None,
                    help="ignored: a mark for finding the process")
    ap.add_argument("--import-torch", action="store_true")
    args = ap.parse_args()
    if args.import_torch:
        import torch  # noqa: F401  (mapped, as a real job has it)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print("pid %d" % os.getpid(), flush=True)
    if args.children == 0:
        profiled(args)
        return
    kids = []
    for rank in range(args.children):
        if rank > 0:
            time.sleep(args.stagger_ms / 1000.0)
        pid = os.fork()
        if pid == 0:
            os.environ["RANK"] = str(rank)
            os.environ["WORLD_SIZE"] = str(args.children)
            try:
                profiled(args)
            finally:
                os._exit(0)
        kids.append(pid)
        print("pid %d" % pid, flush=True)

    def stop(*_):
        for k in kids:
            os.kill(k, signal.SIGTERM)
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    for k in kids:
        os.waitpid(k, 0)


if __name__ == "__main__":
    main()
