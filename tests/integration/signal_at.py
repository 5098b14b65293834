#!/usr/bin/env python3
"""signal_at.py PID SIGNAL GLOB [SECONDS]: send SIGNAL (INT, TERM, KILL)
to process PID as soon as a path matches GLOB, looking every 0.2 ms, for
the tests that interrupt a command at a given point of its work (a
temporary file it writes for a moment).  Exit 0 once sent; 1 if PID ended
first, or SECONDS (default 60) passed, so that the caller can try again."""
import glob
import os
import signal
import sys
import time


def running(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def main():
    pid, sig, pattern = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    limit = time.monotonic() + (float(sys.argv[4]) if len(sys.argv) > 4 else 60)
    signum = getattr(signal, "SIG" + sig)
    while time.monotonic() < limit and running(pid):
        hit = glob.glob(pattern)
        if hit:
            os.kill(pid, signum)
            print("SIG%s at %s" % (sig, hit[0]))
            return 0
        time.sleep(0.0002)
    print("process %d ended before %s appeared" % (pid, pattern))
    return 1


if __name__ == "__main__":
    sys.exit(main())
