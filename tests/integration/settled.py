#!/usr/bin/env python3
"""settled.py SOCKET: wait (up to 5 s) until spyremond has stored every
window change it answered, which its writer thread does in the background:
status's database.writer.queued_changes is 0.  Exit 1 if it never is."""
import sys
import time

from ctlclient import Conn

deadline = time.monotonic() + 5
while True:
    r = Conn(sys.argv[1]).ask({"v": 1, "cmd": "status"})
    if r["database"]["writer"]["queued_changes"] == 0:
        sys.exit(0)
    if time.monotonic() > deadline:
        sys.exit("window changes still queued after 5 s: %s" % r["database"])
    time.sleep(0.02)
