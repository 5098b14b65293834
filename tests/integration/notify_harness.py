#!/usr/bin/env python3
"""Plays systemd's part of the sd_notify protocol against spyremond.

usage: notify_harness.py DAEMON CONFIG DATABASE LOG WORKDIR

Binds a NOTIFY_SOCKET in WORKDIR, starts DAEMON -v -c CONFIG the way
systemd starts a Type=notify service with WatchdogSec=2s (NOTIFY_SOCKET,
WATCHDOG_USEC and WATCHDOG_PID set to the daemon's own pid, standard error
to LOG), then checks readiness, status, the watchdog, three kinds of
reload, a stopped process and the final stop.  CONFIG must sample every
100ms ("  interval: 100ms"); it is rewritten during the run.  Exits 0 when
every check passed, 1 at the first that failed.
"""
import os
import re
import signal
import socket
import sqlite3
import struct
import sys
import time

WATCHDOG_USEC = 2_000_000
PERIOD = WATCHDOG_USEC / 1e6
# sd-event pings between 1/2 and 3/4 of the period after the last ping;
# allow scheduling jitter on top, still well inside the period itself
MAX_WATCHDOG_GAP = 0.75 * PERIOD + 0.25


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)
    print("ok:", what, flush=True)


class NotifySocket:
    """The receiving end of sd_notify; remembers every field with its sender."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        # the kernel attaches the sender's pid, as systemd uses it for NotifyAccess=
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.path = path
        self.fields = []    # (monotonic arrival, sender pid, "KEY=value")

    def receive(self, seconds):
        """Collect datagrams for this many seconds."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                data, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(12))
            except socket.timeout:
                return
            now = time.monotonic()
            pid = None
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = struct.unpack("iII", payload[:12])[0]
            for line in data.decode(errors="replace").split("\n"):
                if line:
                    self.fields.append((now, pid, line))

    def wait_for(self, field, seconds, start):
        """Index of the first field equal to field (or starting with it, if
        it ends in '=') at index >= start, waiting up to seconds; None if none."""
        deadline = time.monotonic() + seconds
        while True:
            for i in range(start, len(self.fields)):
                f = self.fields[i][2]
                if f == field or (field.endswith("=") and f.startswith(field)):
                    return i
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.receive(min(left, 0.1))

    def count(self, field, start=0, end=None):
        return sum(1 for _, _, f in self.fields[start:end] if f == field)

    def times(self, field, start=0):
        return [t for t, _, f in self.fields[start:] if f == field]


class Daemon:
    def __init__(self, argv, env, log):
        self.status = None
        logfd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        pid = os.fork()
        if pid == 0:
            try:
                env = dict(env, WATCHDOG_PID=str(os.getpid()))
                os.dup2(logfd, 1)
                os.dup2(logfd, 2)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        os.close(logfd)
        self.pid = pid

    def signal(self, sig):
        os.kill(self.pid, sig)

    def wait(self, seconds):
        """Exit status, or None if still running after seconds."""
        deadline = time.monotonic() + seconds
        while self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
        return self.status

    def state(self):
        """The process state letter from /proc (R, S, T, ...)."""
        with open(f"/proc/{self.pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]

    def kill(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGCONT)
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.wait(10)


class Run:
    def __init__(self, daemon_path, config, database, log, workdir):
        self.config = config
        self.database = database
        self.log = log
        self.notify = NotifySocket(os.path.join(workdir, "notify.sock"))
        env = dict(os.environ, NOTIFY_SOCKET=self.notify.path,
                   WATCHDOG_USEC=str(WATCHDOG_USEC))
        # stderr must go to LOG, not to a journal the test runner may have
        env.pop("JOURNAL_STREAM", None)
        env.pop("WATCHDOG_PID", None)
        self.daemon = Daemon([daemon_path, "-v", "-c", config], env, log)

    # ---- what the daemon left behind ----

    def log_text(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def child_starts(self):
        return len(re.findall(r"started \S+ \(pid \d+\) every ", self.log_text()))

    def rows(self, interval_ms):
        try:
            db = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=2)
            try:
                return db.execute("SELECT count(*) FROM samples WHERE interval_ms = ?",
                                  (interval_ms,)).fetchone()[0]
            finally:
                db.close()
        except sqlite3.OperationalError:
            return 0

    def rows_grow(self, interval_ms, seconds):
        """True if rows of interval_ms are added within seconds."""
        before = self.rows(interval_ms)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.notify.receive(0.2)
            if self.rows(interval_ms) > before:
                return True
        return False

    def set_interval(self, value):
        """Set source.interval, and window_interval with it, so that the
        child samples at value and every row it prints is stored."""
        with open(self.config) as f:
            text = f.read()
        text, n = re.subn(r"^  (window_)?interval: .*$",
                          lambda m: f"  {m.group(1) or ''}interval: {value}",
                          text, flags=re.M)
        if n != 2:
            raise Failed(f"cannot set the interval in {self.config}")
        with open(self.config, "w") as f:
            f.write(text)

    def reload(self, what):
        """SIGHUP; RELOADING=1 then READY=1 must follow."""
        start = len(self.notify.fields)
        self.daemon.signal(signal.SIGHUP)
        i = self.notify.wait_for("RELOADING=1", 5, start)
        check(i is not None, f"{what}: RELOADING=1 after SIGHUP")
        j = self.notify.wait_for("READY=1", 10, i + 1)
        check(j is not None, f"{what}: READY=1 after RELOADING=1")

    # ---- the checks, in order ----

    def start(self):
        i = self.notify.wait_for("READY=1", 20, 0)
        check(i is not None, "READY=1 at start")
        self.ready_at = self.notify.fields[i][0]
        self.notify.receive(3.5)
        check(self.notify.count("READY=1") == 1,
              "READY=1 exactly once before any reload")
        check(self.notify.wait_for("STATUS=", 0, 0) is not None, "a STATUS= line")

    def watchdog(self):
        pings = [t for t in self.notify.times("WATCHDOG=1") if t >= self.ready_at]
        gaps = [b - a for a, b in zip([self.ready_at] + pings, pings)]
        print(f"watchdog gaps after READY=1: {', '.join(f'{g:.2f}' for g in gaps)}")
        check(len(pings) >= 3, f"WATCHDOG=1 repeatedly ({len(pings)} in 3.5s)")
        check(max(gaps) <= MAX_WATCHDOG_GAP,
              f"WATCHDOG=1 at most {MAX_WATCHDOG_GAP:.2f}s apart "
              f"(longest {max(gaps):.2f}s, WATCHDOG_USEC {WATCHDOG_USEC})")

    def reload_unchanged(self):
        starts = self.child_starts()
        self.reload("unchanged config")
        self.notify.receive(1)
        check(self.child_starts() == starts,
              "unchanged config: aiu-smi is not restarted")

    def reload_interval(self):
        self.set_interval("200ms")
        self.reload("interval 200ms")
        deadline = time.monotonic() + 10
        while "every 0.2s" not in self.log_text() and time.monotonic() < deadline:
            self.notify.receive(0.2)
        check(re.search(r"started \S+ \(pid \d+\) every 0\.2s", self.log_text()),
              "interval 200ms: aiu-smi restarted with -d 0.2")
        check(self.rows_grow(200, 10), "interval 200ms: rows of 200ms arrive")

    def reload_invalid(self):
        self.set_interval("fast")
        starts = self.child_starts()
        self.reload("invalid config")
        text = self.log_text()
        check("reload failed; keeping the running config" in text,
              "invalid config: the reload is refused")
        check(re.search(r"spyremond\.yaml:\d+:\d+: source\.interval: 'fast'", text),
              "invalid config: the error is logged with file:line:col")
        check(self.rows_grow(200, 10), "invalid config: rows of 200ms keep arriving")
        check(self.child_starts() == starts,
              "invalid config: aiu-smi is not restarted")

    def stopped_process(self):
        self.daemon.signal(signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while self.daemon.state() != "T":
            if time.monotonic() > deadline:
                raise Failed("the daemon did not stop on SIGSTOP")
            time.sleep(0.01)
        # whatever was sent before the stop took effect is still queued
        self.notify.receive(0.2)
        start = len(self.notify.fields)
        stopped_at = time.monotonic()
        self.notify.receive(3)
        silent = time.monotonic() - stopped_at
        check(self.notify.count("WATCHDOG=1", start) == 0,
              f"no WATCHDOG=1 while the daemon is stopped ({silent:.1f}s, "
              f"longer than the {PERIOD:.0f}s period)")
        start = len(self.notify.fields)
        self.daemon.signal(signal.SIGCONT)
        check(self.notify.wait_for("WATCHDOG=1", MAX_WATCHDOG_GAP, start) is not None,
              "WATCHDOG=1 resumes after SIGCONT")

    def stop(self):
        start = len(self.notify.fields)
        self.daemon.signal(signal.SIGTERM)
        check(self.notify.wait_for("STOPPING=1", 5, start) is not None,
              "STOPPING=1 on SIGTERM")
        status = self.daemon.wait(20)
        check(status == 0, f"exit status 0 on SIGTERM (got {status})")

    def senders(self):
        others = {pid for _, pid, _ in self.notify.fields if pid != self.daemon.pid}
        check(not others, "every notification comes from the main process "
              "(NotifyAccess=main would drop the others)")
        check(self.notify.count("READY=1") == 4,
              "READY=1 once at start and once per reload")


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    run = Run(*sys.argv[1:])
    try:
        run.start()
        run.watchdog()
        run.reload_unchanged()
        run.reload_interval()
        run.reload_invalid()
        run.stopped_process()
        run.stop()
        run.senders()
    except Failed as e:
        print("FAIL:", e, file=sys.stderr)
        print("notifications:", file=sys.stderr)
        for t, pid, f in run.notify.fields[-40:]:
            print(f"  {t:.3f} [{pid}] {f}", file=sys.stderr)
        return 1
    finally:
        run.daemon.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
