#!/usr/bin/env python3
"""Swap metric files for FIFOs while marks are timed, for t_paths.sh and
bench/fifoflip.sh.

  fifoflip.py swap SECONDS PATH...
      (run as an unprivileged user) for SECONDS, turn each PATH in turn
      into a FIFO and back into a regular file (a copy of what it held at
      the start), each by rename(2) over it, so that a reader that stat()s
      a regular file may open a FIFO; a round of all PATHs every 1 ms (a
      busier loop only takes the CPU the daemon needs, on a small host);
      ends with a FIFO at every PATH.  Prints "flips N".
  fifoflip.py marks SECONDS SOCKET
      for SECONDS, on one connection, a hello every 50 ms and a begin and
      an end of window "fifoflip" every second (more windows would time
      the summaries of a window storm, not the reader), each reply timed
      from the send to the whole reply line.  Prints "replies N marks M
      max_ms X p99_ms Y" (over every reply); exit 1 if a reply is not ok
      or does not come within 10 s.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def swap(seconds, paths):
    saved = {}
    for p in paths:
        with open(p, "rb") as f:
            saved[p] = f.read()
    flips = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for p in paths:
            tmp = "%s.flip%d" % (p, os.getpid())
            os.mkfifo(tmp, 0o644)
            os.rename(tmp, p)
            with open(tmp, "wb") as f:
                f.write(saved[p])
            os.rename(tmp, p)
            flips += 1
        time.sleep(0.001)
    for p in paths:
        tmp = "%s.flip%d" % (p, os.getpid())
        os.mkfifo(tmp, 0o644)
        os.rename(tmp, p)
    print("flips %d" % flips)
    return 0


def marks(seconds, sock):
    import ctlclient

    conn = ctlclient.Conn(sock, timeout=10.0)
    rtts = []
    nmarks = 0
    end = time.monotonic() + seconds
    cycle = 0
    while time.monotonic() < end:
        reqs = [{"v": 1, "cmd": "hello"}]
        if cycle % 20 == 0:
            reqs += [{"v": 1, "cmd": "begin", "tag": "fifoflip"},
                     {"v": 1, "cmd": "end", "tag": "fifoflip"}]
        for req in reqs:
            t0 = time.monotonic()
            r = conn.ask(req)
            rtts.append(time.monotonic() - t0)
            if r.get("ok") is not True:
                print("%s: %s" % (req["cmd"], r))
                return 1
            nmarks += req["cmd"] != "hello"
        cycle += 1
        time.sleep(0.05)
    rtts.sort()
    p99 = rtts[min(len(rtts) - 1, int(len(rtts) * 0.99))]
    print("replies %d marks %d max_ms %.1f p99_ms %.1f" % (
        len(rtts), nmarks, rtts[-1] * 1e3, p99 * 1e3))
    return 0


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "swap":
        return swap(float(argv[2]), argv[3:])
    if argv[1] == "marks":
        return marks(float(argv[2]), argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
