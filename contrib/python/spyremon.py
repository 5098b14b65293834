"""Mark profiling windows in spyremond's Spyre telemetry from Python.

spyremond samples the host's Spyre cards continuously.  A *window* tags a
span of that timeline, so that its samples can be exported later with
``spyremon export --window TAG``.  The daemon stamps the window with its
own clock (the clock of the samples) and records the caller's user and
process; this module sends only the tag and free-form metadata.

It needs nothing beyond the standard library and speaks the daemon's
control-socket protocol (spyremond(8)): one JSON object per line each way.
The socket is ``$SPYREMON_SOCKET`` or, by default,
``/run/spyremond/control.sock``; the caller must be in group ``spyremon``.

A window around a block of code; it is ended even if the block raises, and
the block's exception is then raised again::

    import spyremon

    with spyremon.window("llama-bs4", commit="abc123", workload="llama-8b"):
        run_benchmark()

By hand, with metadata keys that are not Python names::

    wid = spyremon.begin("step-100", meta={"build.date": "2026-11-30"})
    ...
    spyremon.end(id=wid)

With torch.profiler, ending the window when the trace is ready, after the
trace handler has run, so the window covers the whole profiled run::

    import torch
    import spyremon

    wid = spyremon.begin("resnet-prof", commit="abc123")
    with torch.profiler.profile(
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
            on_trace_ready=spyremon.on_trace_ready(
                torch.profiler.tensorboard_trace_handler("./log"), id=wid),
    ) as prof:
        for step in range(5):
            train_step()
            prof.step()

Then, in a shell::

    spyremon export --window resnet-prof --format jsonl --output resnet.jsonl

By default a window records where it came from, as metadata: the torch
version, the torch-spyre version (and its git commit when installed from a
checkout), the git commit of the current directory's repository, the
command line and the host name (see RECORD; pass record=() or a subset to
turn them off, and your own meta always wins).  It is also tied to the
calling process: if the process dies, even by SIGKILL, spyremond ends the
window at that moment (until_exit=False turns this off)::

    spyremon.begin("run", record=("torch", "host"), until_exit=False)

A whole profiled run, as torch-spyre's performance methodology asks for
it: the profiler's schedule (wait=1, warmup=2, active=5 by default),
record_function per iteration, the window over the active steps, and
what a report needs recorded with it (the script, the profiler's table,
the trace, the expectation)::

    with spyremon.profile("llama-bs4", expect="step_ms<=120") as p:
        for _ in range(p.steps):
            with p.step():
                run_one_iteration()

Then ``spyremon report --window llama-bs4 --output report`` fills the
checklist from what was recorded.

Errors raise SpyremonError, whose ``code`` is the daemon's error code (for
example ``"not_open"`` or ``"tag_open"``, see spyremond(8)) or, when the
daemon cannot be reached, ``"unreachable"``; ``message`` says what happened.
"""

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket as _socket
import subprocess
import sys

__all__ = ["SpyremonError", "begin", "end", "sync", "status", "window",
           "on_trace_ready", "profile", "request", "collect",
           "DEFAULT_SOCKET", "RECORD"]

DEFAULT_SOCKET = "/run/spyremond/control.sock"
PROTO_VERSION = 1
TIMEOUT = 5.0           # seconds, for connecting, sending and the reply
MAX_REPLY = 4 << 20     # bytes of one reply line
META_VALUE_MAX = 256    # bytes of a metadata value (proto.h)

# What a window records by default, each a metadata key of the same name:
#   torch            torch.__version__ (the installed version, without
#                    importing torch when it is not imported yet)
#   torch_spyre      the torch-spyre version, where it is installed
#   torch_spyre_sha  its git commit, when installed from a checkout
#   git_sha          the commit of the current directory's git repository
#   command          the command line (sys.argv), cut to 256 bytes
#   host             the host name
RECORD = ("torch", "torch_spyre", "torch_spyre_sha", "git_sha", "command",
          "host")


class SpyremonError(Exception):
    """A request failed: code is the daemon's error code or "unreachable"."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self):
        return self.message


def socket_path(path=None):
    """The socket to use: path, else $SPYREMON_SOCKET, else the default."""
    return path or os.environ.get("SPYREMON_SOCKET") or DEFAULT_SOCKET


def _connect(path, timeout):
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
    except (FileNotFoundError, ConnectionRefusedError) as e:
        s.close()
        raise SpyremonError("unreachable", "cannot connect to %s: %s: is "
                            "spyremond running?" % (path, e.strerror)) from None
    except PermissionError as e:
        s.close()
        raise SpyremonError("unreachable", "cannot connect to %s: %s: are "
                            "you in group spyremon?" % (path, e.strerror)) from None
    except OSError as e:
        s.close()
        raise SpyremonError("unreachable", "cannot connect to %s: %s"
                            % (path, e.strerror or e)) from None
    return s


def _read_line(s, path):
    buf = bytearray()
    while b"\n" not in buf:
        if len(buf) > MAX_REPLY:
            raise SpyremonError("unreachable", "%s: the reply is too long" % path)
        chunk = s.recv(65536)
        if not chunk:
            raise SpyremonError("unreachable", "%s: spyremond closed the "
                                "connection without answering" % path)
        buf += chunk
    return bytes(buf[:buf.index(b"\n")])


def request(obj, socket=None, timeout=TIMEOUT):
    """Send one request object ("v" is added) and return the reply object.

    Raises SpyremonError if the daemon cannot be reached, does not answer
    within timeout seconds, or answers "ok": false.
    """
    path = socket_path(socket)
    msg = dict(obj)
    msg.setdefault("v", PROTO_VERSION)
    data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False)
    with _connect(path, timeout) as s:
        try:
            s.sendall(data.encode("utf-8") + b"\n")
            line = _read_line(s, path)
        except _socket.timeout:
            raise SpyremonError("unreachable", "%s: spyremond did not answer "
                                "within %g s" % (path, timeout)) from None
        except OSError as e:
            raise SpyremonError("unreachable", "%s: %s"
                                % (path, e.strerror or e)) from None
    try:
        reply = json.loads(line.decode("utf-8"))
    except ValueError:
        raise SpyremonError("bad_reply", "%s: the reply is not JSON" % path) from None
    if not isinstance(reply, dict) or "ok" not in reply:
        raise SpyremonError("bad_reply", "%s: the reply is not a reply object" % path)
    if not reply["ok"]:
        code = reply.get("error", "error")
        raise SpyremonError(code, reply.get("message", code))
    return reply


def _clean(value):
    """value as a metadata value: no control characters, at most
    META_VALUE_MAX bytes of UTF-8."""
    v = re.sub(r"[\x00-\x1f\x7f]", " ", str(value))
    b = v.encode("utf-8")[:META_VALUE_MAX]
    return b.decode("utf-8", "ignore")


def _git_sha(path):
    """The commit checked out in path's git repository, or None."""
    try:
        r = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"],
                           capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = r.stdout.strip()
    return sha if r.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def _dist_version(*names):
    try:
        from importlib import metadata
    except ImportError:
        return None
    for n in names:
        try:
            return metadata.version(n)
        except Exception:
            continue
    return None


def _torch_spyre_sha():
    """torch-spyre's commit: from pip's record of a VCS install, else from
    the git checkout its package lies in."""
    try:
        from importlib import metadata
        for n in ("torch-spyre", "torch_spyre"):
            try:
                d = metadata.distribution(n)
            except Exception:
                continue
            url = d.read_text("direct_url.json")
            if url:
                sha = json.loads(url).get("vcs_info", {}).get("commit_id")
                if sha:
                    return sha
    except Exception:
        pass
    try:
        import importlib.util
        spec = importlib.util.find_spec("torch_spyre")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return _git_sha(os.path.dirname(os.path.abspath(spec.origin)))


def collect(record=RECORD):
    """The metadata that record names (see RECORD), those that are known."""
    m = {}
    want = set(record or ())
    unknown = want - set(RECORD)
    if unknown:
        raise ValueError("record: unknown item(s) %s; known: %s"
                         % (", ".join(sorted(unknown)), ", ".join(RECORD)))
    if "torch" in want:
        t = sys.modules.get("torch")
        v = getattr(t, "__version__", None) if t else _dist_version("torch")
        if v:
            m["torch"] = str(v)
    if "torch_spyre" in want:
        v = _dist_version("torch-spyre", "torch_spyre")
        if v:
            m["torch_spyre"] = v
    if "torch_spyre_sha" in want:
        v = _torch_spyre_sha()
        if v:
            m["torch_spyre_sha"] = v
    if "git_sha" in want:
        v = _git_sha(os.getcwd())
        if v:
            m["git_sha"] = v
    if "command" in want and sys.argv and any(sys.argv):
        m["command"] = " ".join(sys.argv)
    if "host" in want:
        m["host"] = _socket.gethostname()
    return {k: _clean(v) for k, v in m.items()}


def begin(tag, meta=None, same_tag=False, socket=None, until_exit=True,
          record=RECORD, **kw):
    """Open a window tagged tag and return its id.

    Metadata come from collect(record) (by default everything RECORD
    names), then meta (a dict) and keyword arguments, which win; all are
    converted to strings.  same_tag allows a second open window with a tag
    the caller already has open; such windows must be ended by id.
    until_exit ties the window to a process, which ends it by exiting:
    True for this process, a pid for another, False for none.
    """
    m = collect(record)
    for k, v in list((meta or {}).items()) + list(kw.items()):
        m[str(k)] = str(v)
    req = {"cmd": "begin", "tag": tag, "meta": m, "same_tag": bool(same_tag)}
    if until_exit is True:
        req["until_pid"] = os.getpid()
    elif until_exit:
        req["until_pid"] = int(until_exit)
    reply = request(req, socket=socket)
    return reply["id"]


def end(id=None, tag=None, socket=None, wait=None):
    """Close window id, or the caller's open window tagged tag, or else
    the caller's newest open window.  Returns the reply: id, tag,
    begin_ns and end_ns.

    With wait (seconds), return only once every sample of the window is
    stored, as "spyremon mark end --wait" does; SpyremonError "incomplete"
    if that takes longer.  Without it the window is complete a moment
    later, and "spyremon export" and the other readers wait for that
    themselves."""
    if id is not None and tag is not None:
        raise ValueError("end takes id or tag, not both")
    req = {"cmd": "end"}
    if id is not None:
        req["id"] = int(id)
    elif tag is not None:
        req["tag"] = tag
    reply = request(req, socket=socket)
    if wait is not None:
        sync(reply["id"], wait, socket=socket)
    return reply


def sync(id, wait, socket=None):
    """Wait at most wait seconds for every sample of ended window id to
    be stored (the daemon's sync request).  SpyremonError "incomplete",
    whose message says what is missing, if it is not by then."""
    request({"cmd": "sync", "window": int(id),
             "wait_ms": int(max(0, min(wait, 600)) * 1000)},
            socket=socket, timeout=min(wait, 600) + TIMEOUT)


def status(socket=None):
    """The daemon's status reply as a dict (see spyremon status --json)."""
    reply = request({"cmd": "status"}, socket=socket)
    reply.pop("ok", None)
    return reply


@contextlib.contextmanager
def window(tag, meta=None, same_tag=False, socket=None, until_exit=True,
           record=RECORD, wait=None, **kw):
    """A window open while the with-block runs; yields its id.

    The window is ended when the block ends, also when it raises; the
    block's exception is raised again, unchanged, even if ending fails.
    until_exit and record are as for begin; wait as for end (after a
    block that raised, the window is not waited for).
    """
    wid = begin(tag, meta=meta, same_tag=same_tag, socket=socket,
                until_exit=until_exit, record=record, **kw)
    try:
        yield wid
    except BaseException:
        try:
            end(id=wid, socket=socket)
        except SpyremonError:
            pass
        raise
    end(id=wid, socket=socket, wait=wait)


def on_trace_ready(handler=None, id=None, tag=None, socket=None):
    """Wrap a torch.profiler on_trace_ready handler so that the window
    (id, or tag, or else the caller's newest) is ended once the handler
    has run, also when it raises.  Only the first trace ends the window;
    later ones, with a repeating schedule, only run the handler."""
    state = {"ended": False}

    def end_once():
        if not state["ended"]:
            state["ended"] = True
            end(id=id, tag=tag, socket=socket)

    def ready(prof):
        try:
            if handler is not None:
                handler(prof)
        except BaseException:
            try:
                end_once()
            except SpyremonError:
                pass
            raise
        end_once()

    return ready


class profile:
    """A torch.profiler run whose active steps are a spyremon window.

    profile(tag, out=None, wait=1, warmup=2, active=5, expect=None,
            meta=None, socket=None, script=None, sort_by=...,
            row_limit=20, record=RECORD, baseline=False, **profiler_kw)

    A context manager.  Inside it, run p.steps iterations, each inside
    ``with p.step():``, which wraps it in record_function("iteration_<i>")
    and advances the profiler's schedule (wait, warmup, active, repeat=1:
    the methodology page's by default).  The window opens as the first
    active step starts and ends once the profiler has written the trace,
    just after the last active step.

    Everything goes into the directory out (default
    ``spyremon-profile-<tag>``, made if missing): ``trace.json``, the
    Chrome trace; ``reproducer.py``, a copy of the script (script, else
    sys.argv[0]); ``key_averages.txt``, the text of
    ``prof.key_averages().table(sort_by=sort_by, row_limit=row_limit)``.
    The window records, besides collect(record): workload (the tag unless
    meta says otherwise), iterations, schedule, script, reproducer and
    reproducer_sha256, key_averages, trace (and trace_align=window when
    this torch's trace has no absolute time), and expect, a statement such
    as "step_ms<=120" (step_ms, step_j, energy_j) that the report checks,
    and baseline=true with baseline=True: the run later reports of the
    same workload compare with when no --baseline is given.  torch_spyre
    is "none" when torch-spyre is not installed.
    The activities are the CPU's and, where this torch has it,
    PrivateUse1's (the Spyre device's); profiler_kw go to
    torch.profiler.profile.
    """

    def __init__(self, tag, out=None, wait=1, warmup=2, active=5,
                 expect=None, meta=None, socket=None, script=None,
                 sort_by="self_cpu_time_total", row_limit=20, record=RECORD,
                 baseline=False, **profiler_kw):
        if min(wait, warmup) < 0 or active < 1:
            raise ValueError("profile: wait and warmup >= 0, active >= 1")
        if expect is not None and not re.fullmatch(
                r"\s*(step_ms|step_j|energy_j)\s*(<=|<|>=|>)\s*"
                r"[-+0-9.eE]+\s*", str(expect)):
            raise ValueError("profile: expect %r is not 'METRIC OP NUMBER' "
                             "(step_ms, step_j, energy_j; <=, <, >=, >)"
                             % (expect,))
        self.tag = tag
        self.out = os.path.abspath(out or "spyremon-profile-%s" % tag)
        self.wait, self.warmup, self.active = wait, warmup, active
        self.steps = wait + warmup + active
        self.expect = expect
        self.baseline = baseline
        self.socket = socket
        self.script = script or (sys.argv[0] if sys.argv else None)
        self.sort_by, self.row_limit = sort_by, row_limit
        self._meta = dict(meta or {})
        self._record = record
        self._kw = profiler_kw
        self.window = None      # the window's id while it is open
        self.id = None          # the window's id, once opened
        self._i = 0
        self._prof = None
        self._wmeta = None

    @property
    def trace(self):
        return os.path.join(self.out, "trace.json")

    def _prepare(self, torch):
        """The output directory, the reproducer and the window's metadata."""
        os.makedirs(self.out, exist_ok=True)
        m = collect(self._record)
        if "torch_spyre" in (self._record or ()) and "torch_spyre" not in m:
            try:
                import importlib.util
                found = importlib.util.find_spec("torch_spyre") is not None
            except (ImportError, ValueError):
                found = False
            # said, so that a report need not ask
            m["torch_spyre"] = "unknown" if found else "none"
        if self.baseline:
            m["baseline"] = "true"
        m.update(workload=self.tag, iterations=str(self.active),
                 schedule="wait=%d,warmup=%d,active=%d,repeat=1"
                 % (self.wait, self.warmup, self.active),
                 trace=self.trace,
                 key_averages=os.path.join(self.out, "key_averages.txt"))
        if self.script and os.path.isfile(self.script):
            copy = os.path.join(self.out, "reproducer.py")
            shutil.copyfile(self.script, copy)
            with open(copy, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            m.update(script=os.path.abspath(self.script), reproducer=copy,
                     reproducer_sha256=digest)
        available = getattr(torch.autograd, "kineto_available", None)
        if not (available and available()):
            # a bare array: times from the first active step's start
            m["trace_align"] = "window"
        if self.expect is not None:
            m["expect"] = str(self.expect).strip()
        for k, v in self._meta.items():
            m[str(k)] = str(v)
        self._wmeta = {k: _clean(v) for k, v in m.items()}

    def __enter__(self):
        try:
            import torch
            from torch.profiler import ProfilerActivity, schedule
        except ImportError as e:
            raise SpyremonError("no_torch", "profile() needs torch: %s" % e) from None
        self._prepare(torch)
        acts = [ProfilerActivity.CPU]
        if getattr(ProfilerActivity, "PrivateUse1", None) is not None:
            acts.append(ProfilerActivity.PrivateUse1)
        kw = dict(self._kw)
        kw.setdefault("activities", acts)
        self._prof = torch.profiler.profile(
            schedule=schedule(wait=self.wait, warmup=self.warmup,
                              active=self.active, repeat=1),
            on_trace_ready=self._ready, **kw)
        self._prof.__enter__()
        return self

    def _ready(self, prof):
        prof.export_chrome_trace(self.trace)
        self._end()

    def _end(self):
        if self.window is not None:
            wid, self.window = self.window, None
            end(id=wid, socket=self.socket)

    @contextlib.contextmanager
    def step(self):
        """One iteration: record_function("iteration_<i>"), then the
        profiler's step.  The window opens as the first active one starts."""
        from torch.profiler import record_function
        if self._prof is None:
            raise RuntimeError("profile.step() outside its with-block")
        if self._i == self.wait + self.warmup and self.window is None:
            self.window = self.id = begin(self.tag, meta=self._wmeta,
                                          record=(), socket=self.socket)
        with record_function("iteration_%d" % self._i):
            yield self._i
        self._i += 1
        self._prof.step()

    def __exit__(self, etype, evalue, tb):
        try:
            self._prof.__exit__(etype, evalue, tb)
        finally:
            try:
                self._end()     # a run cut short: the window still ends
            except SpyremonError:
                if etype is None:
                    raise
        if etype is None:
            table = self._prof.key_averages().table(
                sort_by=self.sort_by, row_limit=self.row_limit)
            with open(os.path.join(self.out, "key_averages.txt"), "w") as f:
                f.write(table + "\n")
        return False
